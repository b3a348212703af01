"""``simulate`` under stress: a rerun that would move the store's clock back is refused, a
run's output files are replaced together (stale ones removed), and a failure at any write
point leaves the store and the previous outputs byte-identical, with no half-written file
under a final name (docs/reliability.md, the clock rule and a simulation's outputs)."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import pytest
from support import run_matchmaker as run

import matchmaker
from matchmaker.accounting.store import Accountant
from matchmaker.errors import OutputError, StateError
from matchmaker.simulate import outputs as outputs_module
from matchmaker.simulate.atomic import write_atomically

T = 1_700_000_000
HOUR = 3600


@pytest.fixture
def pool(tmp_path: Path) -> dict[str, Path]:
    """4 one-core slots and 4 jobs of alice's that run 10 h,
    so a run of d hours charges 4 x d slot-hours (every job matched at the first cycle)."""
    d = tmp_path / "pool"
    d.mkdir()
    (d / "neg.config").write_text("PRIORITY_HALFLIFE = 86400\nDEFAULT_PRIO_FACTOR = 1\nNEGOTIATOR_INTERVAL = 3600\n")
    (d / "slots.ads").write_text("".join(f'Name = "s{i}"\nCpus = 1\nRequirements = true\n\n' for i in range(4)))
    (d / "jobs.ads").write_text(
        "".join(
            f'ClusterId = 1\nProcId = {i}\nOwner = "alice"\nUser = "alice@d"\nJobStatus = 1\nRequestCpus = 1\n'
            f"Requirements = true\nQDate = 0\nSimJobDuration = 36000\n\n"
            for i in range(4)
        )
    )
    return {"config": d / "neg.config", "slots": d / "slots.ads", "jobs": d / "jobs.ads"}


def simulate(pool: dict[str, Path], *extra: object) -> tuple[int, str, str]:
    return run(
        "simulate",
        "--config",
        pool["config"],
        "--slots",
        pool["slots"],
        "--jobs",
        pool["jobs"],
        "--interval",
        "1h",
        "--no-progress",
        *extra,
    )


def snapshot(*paths: Path) -> dict[str, bytes]:
    """Every file under ``paths`` (recursively, hidden ones too) with its bytes."""
    files: dict[str, bytes] = {}
    for p in paths:
        if p.is_file():
            files[str(p)] = p.read_bytes()
        elif p.is_dir():
            files.update({str(f): f.read_bytes() for f in sorted(p.rglob("*")) if f.is_file()})
    return files


def one_line(result: tuple[int, str, str], *words: str) -> str:
    status, _out, err = result
    assert status == 1, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "please report" not in err, err
    for w in words:
        assert w in err, err
    return err


def usage_hours(db: Path) -> float:
    with Accountant.load(db, read_only=True) as a:
        return a.get("alice@d").weighted_accumulated_usage / HOUR


# ---- the clock rule ----------------------------------------------------------------------------


def test_a_rerun_cannot_move_the_clock_back(tmp_path, pool):
    """Issue case 1: 4 h then the same start with 1 h.  The first run charges 4 jobs x 4 h
    = 16 slot-hours (cycles at T .. T+4h, all four matched at T); the rerun is refused with
    one line, the store and the outputs stay byte-identical."""
    db, out = tmp_path / "S.db", tmp_path / "out"
    assert simulate(pool, "--state", db, "--start", T, "--duration", "4h", "--out", out)[0] == 0
    assert usage_hours(db) == pytest.approx(16.0)
    before = snapshot(db, out)
    one_line(
        simulate(pool, "--state", db, "--start", T, "--duration", "1h", "--out", out),
        "earlier than the accountant's last update",
    )
    assert snapshot(db, out) == before
    # continuing from where the store stands is accepted and charges only the new hours
    assert simulate(pool, "--state", db, "--start", T + 4 * HOUR, "--duration", "1h")[0] == 0
    assert usage_hours(db) == pytest.approx(20.0)
    with Accountant.load(db, read_only=True) as a:
        assert a.last_update_time == T + 5 * HOUR


def test_clock_skew_is_an_explicit_choice(tmp_path, pool):
    """--allow-clock-skew runs anyway: the interval restarts at T (nothing charged for the
    step back) and the hour T .. T+1h is charged again: 16 + 4 = 20 slot-hours."""
    db = tmp_path / "S.db"
    assert simulate(pool, "--state", db, "--start", T, "--duration", "4h")[0] == 0
    assert simulate(pool, "--state", db, "--start", T, "--duration", "1h", "--allow-clock-skew")[0] == 0
    assert usage_hours(db) == pytest.approx(20.0)


def test_a_fresh_state_starts_over(tmp_path, pool):
    """--fresh-state: the 1 h rerun starts from an empty store (alice's factor 3 set in
    between is gone) and leaves exactly its own result: 4 jobs x 1 h = 4 slot-hours, the
    clock at T+1h."""
    db = tmp_path / "S.db"
    assert simulate(pool, "--state", db, "--start", T, "--duration", "4h")[0] == 0
    assert run("userprio", "--state", db, "--setfactor", "carol@d", "3")[0] == 0
    assert simulate(pool, "--state", db, "--start", T, "--duration", "1h", "--fresh-state")[0] == 0
    assert usage_hours(db) == pytest.approx(4.0)
    with Accountant.load(db, read_only=True) as a:
        assert a.last_update_time == T + HOUR and a.get("carol@d") is None
    before = db.read_bytes()
    status, _, err = simulate(
        pool, "--state", db, "--start", T, "--duration", "1h", "--fresh-state", "--allow-clock-skew"
    )  # a usage error: the two contradict each other
    assert status == 2 and err.count("\n") == 1 and db.read_bytes() == before


def test_the_clock_is_checked_before_the_first_cycle(tmp_path, pool, monkeypatch):
    db = tmp_path / "S.db"
    assert simulate(pool, "--state", db, "--start", T, "--duration", "2h")[0] == 0
    import matchmaker.api as api

    def no_cycles(*args, **kwargs):
        raise AssertionError("a cycle ran")

    monkeypatch.setattr(api, "run_simulation", no_cycles)
    one_line(simulate(pool, "--state", db, "--start", T + HOUR, "--duration", "5h"), "earlier")


# ---- the set of files --------------------------------------------------------------------------


def test_stale_plots_are_removed_and_the_set_is_replaced(tmp_path, pool):
    out = tmp_path / "out"
    (out / "notes").mkdir(parents=True)
    (out / "notes" / "mine.txt").write_text("the user's own file\n")
    (out / "README").write_text("also the user's\n")
    assert simulate(pool, "--start", T, "--duration", "1h", "--out", out, "--plot")[0] == 0
    assert {p.name for p in out.iterdir()} == {
        "notes",
        "README",
        "series.csv",
        "series.json",
        "priorities.png",
        "running.png",
        "shares.png",
    }
    assert simulate(pool, "--start", T, "--duration", "2h", "--out", out)[0] == 0
    assert {p.name for p in out.iterdir()} == {"notes", "README", "series.csv", "series.json"}
    assert (out / "notes" / "mine.txt").read_text() == "the user's own file\n"
    assert '"duration": 7200' in (out / "series.json").read_text()


def test_out_is_checked_before_simulating(tmp_path, pool):
    """A file where the directory should be, or one inside such a path: refused at once, no
    store created."""
    (tmp_path / "file").write_text("x")
    db = tmp_path / "new.db"
    for out in (tmp_path / "file", tmp_path / "file" / "sub"):
        one_line(
            simulate(pool, "--state", db, "--start", T, "--duration", "1h", "--out", out), "output:", "not a directory"
        )
        assert not db.exists()


def test_too_little_space_is_refused_before_simulating(tmp_path, pool, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10**9, 10**9 - 1000, 1000))
    db = tmp_path / "new.db"
    one_line(
        simulate(pool, "--state", db, "--start", T, "--duration", "1h", "--out", tmp_path / "out"),
        "MB are needed",
        "MB are free",
    )
    assert not db.exists() and not (tmp_path / "out").exists()


# ---- fault injection ---------------------------------------------------------------------------


class Faults:
    """Counts calls at the write points (creating a temporary file or directory, opening a
    file to write, flushing to disk, renaming) and makes the ``fail_at``-th one fail with
    ENOSPC.  A file that fails is cut short as on a full disk: its third write (or its
    flush, if it has fewer) writes half of its text and fails."""

    def __init__(self, fail_at: int | None) -> None:
        self.fail_at, self.calls = fail_at, 0

    def hit(self) -> bool:
        self.calls += 1
        return self.calls == self.fail_at

    def wrap(self, fn):
        def wrapper(*args, **kwargs):
            if self.hit():
                raise OSError(errno.ENOSPC, "No space left on device")
            return fn(*args, **kwargs)

        return wrapper

    def fdopen(self, real):
        faults = self

        class ShortWriter:
            def __init__(self, fh, doomed: bool) -> None:
                self._fh, self._doomed, self._writes = fh, doomed, 0

            def write(self, text: str) -> int:
                self._writes += 1
                if self._doomed and self._writes == 3:
                    self._fail(text)
                return self._fh.write(text)

            def flush(self) -> None:
                if self._doomed:
                    self._fail("")
                self._fh.flush()

            def _fail(self, text: str) -> None:
                self._fh.write(text[: len(text) // 2])
                self._fh.flush()
                self._doomed = False
                raise OSError(errno.ENOSPC, "No space left on device")

            def __getattr__(self, name):
                return getattr(self._fh, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self._fh.close()

        return lambda *a, **k: ShortWriter(real(*a, **k), faults.hit())


def install(monkeypatch, faults: Faults) -> None:
    monkeypatch.setattr(outputs_module.os, "replace", faults.wrap(os.replace))
    monkeypatch.setattr(outputs_module.os, "fsync", faults.wrap(os.fsync))
    monkeypatch.setattr(outputs_module.os, "fdopen", faults.fdopen(os.fdopen))
    monkeypatch.setattr(outputs_module.tempfile, "mkstemp", faults.wrap(tempfile.mkstemp))
    monkeypatch.setattr(outputs_module.tempfile, "mkdtemp", faults.wrap(tempfile.mkdtemp))


def test_a_failure_at_any_write_point_leaves_everything_as_it_was(tmp_path, pool, monkeypatch):
    """First a successful run (2 h), then a 3 h run whose k-th write point fails, for every k
    the 3 h run reaches: the store and the outputs are byte-identical to what they were, no
    temporary or staging file is left, and the error names the file and the reason.  The
    count then grows until a run succeeds, and that run's files are the 3 h run's."""
    db, out = tmp_path / "S.db", tmp_path / "out"
    assert simulate(pool, "--state", db, "--start", T, "--duration", "2h", "--out", out)[0] == 0
    before = snapshot(db, out)
    k = 0
    while True:
        k += 1
        faults = Faults(k)
        with monkeypatch.context() as m:
            install(m, faults)
            result = simulate(pool, "--state", db, "--start", T + 2 * HOUR, "--duration", "3h", "--out", out)
        if faults.calls < k:  # the k-th write point was never reached: the run succeeded
            assert result[0] == 0, result[2]
            break
        err = one_line(result, "No space left on device")
        assert f"{out}{os.sep}series." in err or f"{out}:" in err, err
        assert snapshot(db, out) == before, f"write point {k}: {err}"
    # 14 write points were each made to fail: the probe of --out, the staging directory, per
    # file a temporary name, its opening, its flush to disk and its rename (8), then the two
    # previous files set aside and the two new ones moved in; the 15th run reached them all.
    assert k == 15, k
    assert '"duration": 10800' in (out / "series.json").read_text()
    assert sorted(p.name for p in out.iterdir()) == ["series.csv", "series.json"]
    assert usage_hours(db) == pytest.approx(4 * 5)


def test_a_failed_plot_keeps_the_previous_set(tmp_path, pool, monkeypatch):
    """Drawing the second figure fails: the previous run's series and plots stay, and so does
    the store."""
    db, out = tmp_path / "S.db", tmp_path / "out"
    assert simulate(pool, "--state", db, "--start", T, "--duration", "1h", "--out", out, "--plot")[0] == 0
    before = snapshot(db, out)
    from matchmaker.simulate import plots

    real = plots.save_figure
    calls = []

    def failing_save(fig, ax, path):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.EIO, "Input/output error", str(path))
        return real(fig, ax, path)

    monkeypatch.setattr(plots, "save_figure", failing_save)
    one_line(
        simulate(pool, "--state", db, "--start", T + HOUR, "--duration", "1h", "--out", out, "--plot"),
        f"{out}{os.sep}running.png: output: cannot write: Input/output error",
    )
    assert snapshot(db, out) == before


def test_a_store_that_cannot_be_committed_keeps_the_previous_outputs(tmp_path, pool):
    """Another command edits the store while the simulation runs: the run's commit is
    refused, so its outputs are taken back and the previous ones restored; the store holds
    the other command's edit and nothing of the run."""
    db, out = tmp_path / "S.db", tmp_path / "out"
    assert simulate(pool, "--state", db, "--start", T, "--duration", "1h", "--out", out)[0] == 0
    outputs_before = snapshot(out)
    loaded = matchmaker.load(pool["config"], pool["slots"], pool["jobs"])

    def edit_meanwhile(done: int, total: int) -> None:
        if done == 1:
            with Accountant.load(db) as other:
                other.set_factor("bob@d", 3.0)

    with pytest.raises(StateError, match="changed while this command ran"):
        matchmaker.simulate(
            loaded, start=T + HOUR, duration=2 * HOUR, interval=HOUR, state=db, out=out, progress=edit_meanwhile
        )
    assert snapshot(out) == outputs_before
    with Accountant.load(db, read_only=True) as a:
        assert a.get("bob@d").factor == 3.0 and a.last_update_time == T + HOUR


def test_an_interrupted_run_writes_nothing(tmp_path, pool):
    db, out = tmp_path / "S.db", tmp_path / "out"
    assert simulate(pool, "--state", db, "--start", T, "--duration", "1h", "--out", out)[0] == 0
    before = snapshot(db, out)
    loaded = matchmaker.load(pool["config"], pool["slots"], pool["jobs"])

    def interrupt(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        matchmaker.simulate(
            loaded, start=T + HOUR, duration=3 * HOUR, interval=HOUR, state=db, out=out, progress=interrupt
        )
    assert snapshot(db, out) == before


@pytest.mark.parametrize("fail_at", [2, 3, 5])  # the staging directory, a temporary file, its flush
def test_a_new_directory_is_not_left_behind_by_a_failed_run(tmp_path, pool, monkeypatch, fail_at):
    out = tmp_path / "a" / "b"
    with monkeypatch.context() as m:
        install(m, Faults(fail_at))
        one_line(simulate(pool, "--start", T, "--duration", "1h", "--out", out), "No space left")
    assert not (tmp_path / "a").exists()


def test_write_atomically_names_the_file(tmp_path, monkeypatch):
    target = tmp_path / "x.csv"
    target.write_text("old\n")
    with monkeypatch.context() as m:
        install(m, Faults(2))  # mkstemp passes, the write fails half-way
        with pytest.raises(OutputError) as info:
            write_atomically(target, lambda fh: fh.write("new text\n"))
    assert info.value.file == str(target) and "No space left" in info.value.message
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["x.csv"]


def test_a_new_file_gets_the_usual_permissions(tmp_path):
    """Written through a temporary file (mkstemp makes 0600), the result has the mode open()
    gives a new file: 0666 less the umask."""
    mask = os.umask(0o022)
    try:
        write_atomically(tmp_path / "x.csv", lambda fh: fh.write("a\n"))
    finally:
        os.umask(mask)
    assert (tmp_path / "x.csv").stat().st_mode & 0o777 == 0o644


def test_an_interrupt_during_the_swap_puts_the_previous_files_back(tmp_path, pool, monkeypatch):
    """Ctrl-C between two renames of the swap (the third: after both old files were set
    aside): the previous files are back under their names, the store untouched."""
    db, out = tmp_path / "S.db", tmp_path / "out"
    assert simulate(pool, "--state", db, "--start", T, "--duration", "1h", "--out", out)[0] == 0
    before = snapshot(db, out)
    loaded = matchmaker.load(pool["config"], pool["slots"], pool["jobs"])
    real, calls = os.replace, []

    def interrupted_replace(src, dst):
        calls.append(dst)
        if len(calls) == 5:  # two temporary files renamed, two old files aside, then Ctrl-C
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(outputs_module.os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        matchmaker.simulate(loaded, start=T + HOUR, duration=HOUR, interval=HOUR, state=db, out=out)
    monkeypatch.undo()
    assert snapshot(db, out) == before
