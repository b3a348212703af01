"""The accountant store under concurrent commands, bad clocks, bad edits and kills:
an edit is kept or refused, never lost; a committed cycle is never half-written.

Commands run in this process (``run_matchmaker``); only the kills and the concurrent
writers start real processes."""

from __future__ import annotations

import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import ROOT, Ran, run_matchmaker as mm

from matchmaker.accounting.reports import admin
from matchmaker.accounting.store import Accountant, QuotaRecord
from matchmaker.errors import StateError

EXAMPLE = ROOT / "examples" / "negotiator"
NOW = 1700000000


def negotiate_args(db: Path, now: object) -> list[object]:
    return [
        "negotiate",
        "--config",
        EXAMPLE / "negotiator.config",
        "--slots",
        EXAMPLE / "slots.ads",
        "--jobs",
        EXAMPLE / "jobs.ads",
        "--state",
        db,
        f"--now={now}",
    ]


def one_error(proc: Ran, *words: str) -> None:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
    for w in words:
        assert w in proc.stderr, proc.stderr


# ---- lost updates --------------------------------------------------------------------------


def assert_nothing_stored(db: Path) -> None:
    """The refused command left no store, or a store holding no usage, claims or clock."""
    if not db.exists():
        return
    with sqlite3.connect(db) as conn:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table in ("customers", "claims", "group_quotas", "policy_usage", "policy_report"):
            if table in tables:
                assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == (0,), table
        if "meta" in tables:
            assert conn.execute("SELECT COUNT(*) FROM meta WHERE key = 'last_update_time'").fetchone() == (0,)


STORES = {
    "clock": lambda a: a.update_priorities(NOW),
    "record": lambda a: a.set_factor("u@d", 2.0),
    "claim": lambda a: a.add_match("u@d", "slot1@node", 1.0, NOW),
    "quotas": lambda a: a.set_group_quotas([QuotaRecord("group_a", quota=4.0)]),
    "policy": lambda a: a.set_policy_state("slurm", {"u@d": (1.0, (), NOW)}, NOW, [{"name": "u@d"}]),
}


@pytest.mark.parametrize("what", sorted(STORES))
def test_the_store_check_fails_on_whatever_a_command_could_store(tmp_path, what):
    """``assert_nothing_stored`` passes on a new, empty store and fails once any one kind
    of state was committed: the refusal tests below rely on it."""
    db = tmp_path / "a.db"
    Accountant.load(db).close()
    assert_nothing_stored(db)
    acct = Accountant.load(db)
    with acct.transaction():
        STORES[what](acct)
    acct.close()
    with pytest.raises(AssertionError):
        assert_nothing_stored(db)


def test_an_edit_made_during_a_cycle_is_not_overwritten(tmp_path):
    """The cycle read the store before the edit and commits after it: the cycle is refused
    with a clear error and the edit stays."""
    db = tmp_path / "a.db"
    cycle, editor = Accountant.load(db), Accountant.load(db)
    try:
        with pytest.raises(StateError, match="changed while this command ran"):
            with cycle.transaction():
                cycle.update_priorities(100.0)
                cycle.set_priority("u@d", 5.0)
                editor.set_factor("u@d", 7.0)  # another command commits meanwhile
        assert Accountant.load(db).get("u@d").factor == 7.0
        # the refused command's next attempt sees the edit and succeeds
        with cycle.transaction():
            cycle.set_priority("u@d", 5.0)
        fresh = Accountant.load(db)
        assert (fresh.get("u@d").factor, fresh.get("u@d").priority) == (7.0, 5.0)
    finally:
        cycle.close()
        editor.close()


def test_a_long_lived_accountant_sees_other_commits(tmp_path):
    db = tmp_path / "a.db"
    first, second = Accountant.load(db), Accountant.load(db)
    second.set_factor("v@d", 3.0)
    with first.transaction():
        first.set_priority("u@d", 2.0)
    assert first.get("v@d").factor == 3.0
    first.close()
    second.close()


# ---- clocks --------------------------------------------------------------------------------


def usage_error(proc: Ran, *words: str) -> None:
    """A command-line mistake: one line, status 2 (docs/cli.md)."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("matchmaker negotiate: command-line error:"), proc.stderr
    for w in words:
        assert w in proc.stderr, proc.stderr


@pytest.mark.parametrize("now", ["inf", "-inf", "nan", "soon"])
def test_a_non_finite_or_bad_time_is_refused_and_nothing_is_stored(tmp_path, now):
    db = tmp_path / "a.db"
    usage_error(mm(*negotiate_args(db, now)), "--now")
    assert_nothing_stored(db)


@pytest.mark.parametrize("now", ["1e300", "-5", "1.7e12"])
def test_a_time_outside_the_calendar_is_refused(tmp_path, now):
    """A stray exponent or a millisecond timestamp would be charged as usage and stored."""
    db = tmp_path / "a.db"
    usage_error(mm(*negotiate_args(db, now)), "outside")
    assert_nothing_stored(db)


def test_the_clock_may_not_go_back(tmp_path):
    db = tmp_path / "a.db"
    assert mm(*negotiate_args(db, NOW)).returncode == 0
    before = mm("userprio", "--state", db, "--json").stdout
    one_error(mm(*negotiate_args(db, NOW - 1000)), str(NOW - 1000), str(NOW), "earlier")
    assert mm("userprio", "--state", db, "--json").stdout == before
    assert mm(*negotiate_args(db, NOW - 1000), "--allow-clock-skew").returncode == 0


# ---- userprio edits ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def after_one_cycle(tmp_path_factory) -> Path:
    """A store after one cycle of the example pool (each test edits a copy)."""
    db = tmp_path_factory.mktemp("state") / "a.db"
    assert mm(*negotiate_args(db, NOW)).returncode == 0
    return db


@pytest.mark.parametrize(
    "edit, name, value, words",
    [
        ("--setfactor", "alice@example.org", "0", ["at least 1"]),
        ("--setfactor", "alice@example.org", "-1", ["at least 1"]),
        ("--setfactor", "alice@example.org", "nan", ["finite"]),
        ("--setprio", "alice@example.org", "0", ["greater than 0"]),
        ("--setprio", "alice", "5", ["user@domain"]),
        ("--setfactor", "@", "5", ["user@domain"]),
        ("--setfactor", "alice@", "5", ["user@domain"]),
        ("--setfactor", "a@b@c", "5", ["user@domain"]),
        ("--setfactor", "al\x7fice@example.org", "5", ["not a submitter"]),
        ("--setaccum", "alice@example.org", "-5", ["negative"]),
        ("--setceiling", "alice@example.org", "-2", ["-1 for none"]),
    ],
)
def test_bad_edits_are_refused_and_change_nothing(after_one_cycle, tmp_path, edit, name, value, words):
    db = shutil.copy(after_one_cycle, tmp_path / "a.db")
    before = mm("userprio", "--state", db, "--json").stdout
    one_error(mm("userprio", "--state", db, "--setfactor", "bob@example.org", "4", edit, name, value), *words)
    assert mm("userprio", "--state", db, "--json").stdout == before


def test_edits_create_the_state_on_first_use(tmp_path):
    """As condor_userprio can set factors on a fresh negotiator, before any cycle."""
    db = tmp_path / "new.db"
    proc = mm(
        "userprio",
        "--state",
        db,
        "--setfactor",
        "alice@example.org",
        "10",
        "--setfloor",
        "alice@example.org",
        "2",
        "--setceiling",
        "alice@example.org",
        "8",
    )
    assert proc.returncode == 0, proc.stderr
    acct = Accountant.load(db)
    c = acct.get("alice@example.org")
    assert (c.factor, c.floor, c.ceiling) == (10.0, 2.0, 8.0)
    acct.close()
    # showing a missing store without edits is still an error, and creates nothing
    one_error(mm("userprio", "--state", tmp_path / "none.db"), "no such accountant database")
    assert not (tmp_path / "none.db").exists()


def test_every_edit_option_has_help():
    out = mm("userprio", "--help").stdout
    for option in (
        "--setprio",
        "--setfactor",
        "--setaccum",
        "--setbegin",
        "--setlast",
        "--setfloor",
        "--setceiling",
        "--resetusage",
        "--delete",
        "--json",
    ):
        line = next(line for line in out.splitlines() if line.strip().startswith(option))
        rest = out[out.index(line) + len(line) :].split("\n", 1)[0] + line.split(option, 1)[1]
        assert len(rest.split()) > 2 or "NAME" in line, (option, out)


def test_admin_refuses_what_condor_userprio_refuses(tmp_path):
    with Accountant.load(tmp_path / "a.db") as acct:
        for edit, value in (("setfactor", "0.5"), ("setprio", "-3"), ("setfactor", "inf")):
            with pytest.raises(ValueError):
                admin(acct, edit, "u@d", value)
        assert acct.get("u@d") is None
        with pytest.raises(ValueError, match="user@domain"):
            admin(acct, "setfactor", "nodomain", "2")


# ---- kills ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_killed_cycle_leaves_a_usable_store(tmp_path):
    """kill -9 at random moments of first and later cycles: afterwards the store opens, and
    holds either nothing or a whole committed cycle."""
    rng = random.Random(7)
    for trial in range(6):
        db = tmp_path / f"k{trial}.db"
        if trial % 2:
            assert mm(*negotiate_args(db, NOW)).returncode == 0
        proc = subprocess.Popen(
            [sys.executable, "-m", "matchmaker.cli", *map(str, negotiate_args(db, NOW + 60))],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.0, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        shown = mm("userprio", "--state", db, "--json")
        if db.exists() and db.stat().st_size > 0:
            assert shown.returncode == 0, shown.stderr
            assert mm(*negotiate_args(db, NOW + 120)).returncode == 0


# ---- concurrent writers ----------------------------------------------------------------------


@pytest.mark.slow
def test_concurrent_commands_keep_every_acknowledged_edit(tmp_path):
    """Cycles and edits run as separate processes at the same time: every command either
    succeeds or fails with one clear line, and every edit that reported success is in the
    store afterwards."""
    db = tmp_path / "a.db"
    assert mm(*negotiate_args(db, NOW)).returncode == 0
    base = [sys.executable, "-m", "matchmaker.cli"]
    procs = []
    for round_ in range(3):
        now = NOW + 60 * (round_ + 1)
        procs.append(
            (
                "cycle",
                None,
                subprocess.Popen(
                    [*base, *map(str, negotiate_args(db, now))],
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        )
        for k in range(3):
            name, factor = f"writer{round_}{k}@example.org", float(2 + k)
            cmd = [*base, "userprio", "--state", str(db), "--setfactor", name, str(factor)]
            procs.append(
                (
                    "edit",
                    (name, factor),
                    subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
                )
            )
    acknowledged = []
    for _kind, edit, p in procs:
        out, err = p.communicate(timeout=120)
        assert "Traceback" not in err, err
        if p.returncode == 0:
            if edit is not None:
                acknowledged.append(edit)
        else:
            assert p.returncode == 1 and len(err.splitlines()) == 1, err
            assert "changed while this command ran" in err or "locked" in err or "earlier than" in err, err
    store = Accountant.load(db)
    try:
        for name, factor in acknowledged:
            assert store.get(name) is not None and store.get(name).factor == factor, name
    finally:
        store.close()
