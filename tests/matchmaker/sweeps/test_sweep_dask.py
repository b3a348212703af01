"""Sweeps on real Dask processes: a LocalCluster of two worker processes, and a ``dask
scheduler`` with two ``dask worker`` processes started by hand.

The reference for every variant is ``matchmaker simulate`` run alone on it: the base
configuration with the variant's knobs appended, its seed and its factors.  A sweep's rows
must equal that run's ``series.json`` rows exactly, however the variants were spread over
the workers, whether a worker died under them and whether the sweep was resumed.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from support import ROOT  # noqa: E402

from matchmaker.cli import main  # noqa: E402
from matchmaker.sweeps import sweep  # noqa: E402
from matchmaker.sweeps.worker import Outcome  # noqa: E402

EXAMPLES = ROOT / "examples" / "simulate"
CONFIG = EXAMPLES / "fair-share" / "negotiator.config"
SLOTS = EXAMPLES / "slots.ad"
START = 1700000000
DURATION, INTERVAL = "12h", "2h"

pytestmark = pytest.mark.slow  # real processes: about a minute for the file on two busy cores


@pytest.fixture(scope="module")
def client():
    """Two single-threaded worker processes, as the embedded default makes on two cores."""
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Job files whose run times draw random(), so the seed changes the rows; and a second stream."""
    d = tmp_path_factory.mktemp("inputs")
    base = (EXAMPLES / "fair-share" / "jobs.ad").read_text()
    (d / "jobs.ad").write_text(base.replace("SimJobDuration = 300", "SimJobDuration = 1800 + random(7200)"))
    (d / "burst.ad").write_text(
        base.replace("SimJobDuration = 300", "SimJobDuration = 600 + random(600)").replace(
            "QDate = 1700172800", "QDate = 1700014400"
        )
    )
    return d


def simulate_alone(tmp: Path, jobs: Path, knobs: dict, seed, factors: dict) -> list:
    """``matchmaker simulate`` on one variant: its knobs appended to the configuration."""
    tmp.mkdir(parents=True, exist_ok=True)
    config = tmp / "variant.config"
    config.write_text(CONFIG.read_text() + "".join(f"\n{k} = {v}" for k, v in knobs.items()) + "\n")
    args = [
        "simulate",
        "--config",
        str(config),
        "--slots",
        str(SLOTS),
        "--jobs",
        str(jobs),
        "--start",
        str(START),
        "--duration",
        DURATION,
        "--interval",
        INTERVAL,
        "--out",
        str(tmp / "out"),
        "--no-progress",
    ]
    if seed is not None:
        args += ["--seed", str(seed)]
    for name, value in factors.items():
        args += ["--setfactor", name, str(value)]
    out, err = io.StringIO(), io.StringIO()
    assert main(args, out, err) == 0, err.getvalue()
    return json.loads((tmp / "out" / "series.json").read_text())["rows"]


def reference(tmp: Path, inputs: Path, o: Outcome) -> list:
    v = o.variant
    jobs = Path(v.jobs) if v.jobs else inputs / "jobs.ad"
    return simulate_alone(tmp / o.key, jobs, {k.name: k.text for k in v.knobs}, v.seed, dict(v.factors))


SWEEP = """\
[axes]
seed = [1, 2]

[[variant]]
name = "condor"
PRIORITY_HALFLIFE = 3600

[[variant]]
name = "condor-day"

[[variant]]
name = "slurm"
MATCHMAKER_PRIORITY_POLICY = "slurm"

[[variant]]
name = "bob-factor-3"
setfactor = {"bob@example.org" = 3}
jobs = "burst.ad"
"""


def run(inputs: Path, sweep_text: str, **kw) -> object:
    (inputs / "sweep.toml").write_text(sweep_text)
    return sweep(
        CONFIG,
        SLOTS,
        inputs / "jobs.ad",
        sweep_file=inputs / "sweep.toml",
        start=START,
        duration=12 * 3600,
        interval=7200,
        **kw,
    )


def test_every_variant_equals_simulate_run_alone(client, inputs, tmp_path):
    result = run(inputs, SWEEP, client=client, out=tmp_path / "out")
    assert len(result) == 8 and not result.failed
    by_name = {o.variant.name: o for o in result}
    assert by_name["condor seed=1"].rows != by_name["condor seed=2"].rows
    assert by_name["condor seed=1"].rows != by_name["condor-day seed=1"].rows
    for o in result:
        assert json.loads(json.dumps(o.rows)) == reference(tmp_path / "ref", inputs, o), o.variant.name
    # the pool was read at most once per worker and job file, not once per variant
    assert sum(o.load_seconds > 0 for o in result) <= 2 * 2
    # the tidy table: the variant's parameters, then its rows as they are
    table = result.rows()
    mine = [r for r in table if r["variant"] == "bob-factor-3 seed=2"]
    assert mine[0]["setfactor"] == "bob@example.org=3" and mine[0]["seed"] == 2
    assert mine[0]["MATCHMAKER_PRIORITY_POLICY"] is None
    assert [{k: r[k] for k in o.rows[0]} for r in mine] == by_name[mine[0]["variant"]].rows
    pq = pytest.importorskip("pyarrow.parquet")
    assert pq.read_table(tmp_path / "out" / "rows.parquet").to_pylist() == table


def test_a_failing_variant_is_reported_and_the_others_complete(client, inputs, tmp_path):
    """A policy name that does not exist fails when its configuration is built; a factor for a
    name the store does not know fails inside the worker."""
    text = (
        SWEEP.replace('"bob@example.org" = 3', '"nobody" = 3') + '\n[[variant]]\nname = "typo"\n'
        'MATCHMAKER_PRIORITY_POLICY = "slrum"\n'
    )
    result = run(inputs, text, client=client, out=tmp_path / "out")
    failed = {o.variant.name.split()[0]: o for o in result.failed}
    assert set(failed) == {"typo", "bob-factor-3"} and len(result.failed) == 4 and len(result.finished) == 6
    assert all(o.status == 1 for o in result.failed)
    assert f"{inputs / 'sweep.toml'}:22: config: MATCHMAKER_PRIORITY_POLICY: 'slrum'" in failed["typo"].error
    assert "'nobody' is neither user@domain" in failed["bob-factor-3"].error
    with open(tmp_path / "out" / "variants.csv", newline="") as fh:
        lines = list(csv.DictReader(fh))
    assert [line["status"] for line in lines] == ["0"] * 6 + ["1"] * 4
    assert len(list((tmp_path / "out" / "parts").glob("*.json"))) == 6


def test_an_interrupted_sweep_keeps_its_parts_and_resumes(client, inputs, tmp_path):
    out = tmp_path / "out"
    seen: list[str] = []

    def stop_after_three(o, done, total):
        seen.append(o.key)
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(inputs, SWEEP, client=client, out=out, progress=stop_after_three)
    kept = {p.name: p.stat().st_mtime_ns for p in (out / "parts").glob("*.json")}
    assert len(kept) == 3 and not (out / "rows.parquet").exists()
    replayed: list[str] = []
    result = run(
        inputs, SWEEP, client=client, out=out, resume=True, progress=lambda o, done, total: replayed.append(o.key)
    )
    assert not result.failed, [(o.variant.name, o.error) for o in result.failed]
    assert sorted(replayed[:3]) == sorted(seen) and len(replayed) == 8
    assert {p.name: p.stat().st_mtime_ns for p in (out / "parts").glob("*.json") if p.name in kept} == kept
    for o in result:
        assert json.loads(json.dumps(o.rows)) == reference(tmp_path / "ref", inputs, o), o.variant.name


def test_a_worker_killed_mid_sweep_changes_nothing(client, inputs, tmp_path):
    """After the first variant finishes, the worker process busy with another one is killed
    (SIGKILL); its variant is run again elsewhere and every variant's rows still equal the
    reference."""
    pids = client.run(os.getpid)
    killed: list[int] = []

    def kill_a_busy_worker(o, done, total):
        if killed:
            return
        busy = [addr for addr, keys in client.processing().items() if keys]
        assert busy, "no variant left running to interrupt"
        killed.append(pids[busy[0]])
        os.kill(pids[busy[0]], signal.SIGKILL)

    result = run(inputs, SWEEP.replace("seed = [1, 2]", "seed = [1, 2, 3]"), client=client, progress=kill_a_busy_worker)
    assert killed and len(result) == 12 and not result.failed
    for o in result:
        assert json.loads(json.dumps(o.rows)) == reference(tmp_path / "ref", inputs, o), o.variant.name


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cli_on_a_scheduler_and_workers_started_by_hand(inputs, tmp_path):
    """``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1, the CLI given
    ``--scheduler``; the workers see none of the client's files (they run elsewhere)."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    work = tmp_path / "workers"
    work.mkdir()
    dask = [sys.executable, "-m", "dask"]
    procs = [
        subprocess.Popen(
            dask + ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            cwd=work,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    dask
                    + [
                        "worker",
                        address,
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--host",
                        "127.0.0.1",
                        "--local-directory",
                        str(work),
                    ],
                    cwd=work,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        deadline = time.monotonic() + 120
        while True:
            try:
                with distributed.Client(address, timeout="5s") as c:
                    c.wait_for_workers(2, timeout=60)
                break
            except (OSError, TimeoutError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        out, err = io.StringIO(), io.StringIO()
        rc = main(
            [
                "sweep",
                "--config",
                str(CONFIG),
                "--slots",
                str(SLOTS),
                "--jobs",
                str(inputs / "jobs.ad"),
                "--start",
                str(START),
                "--duration",
                DURATION,
                "--interval",
                INTERVAL,
                "--vary",
                "PRIORITY_HALFLIFE=3600,604800",
                "--vary",
                "seed=4,5",
                "--scheduler",
                address,
                "--out",
                str(tmp_path / "out"),
                "--no-progress",
                "--json",
            ],
            out,
            err,
        )
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
    assert rc == 0, err.getvalue()
    doc = json.loads(out.getvalue())
    assert [v["name"] for v in doc["variants"]] == [
        f"PRIORITY_HALFLIFE={h} seed={s}" for h in (3600, 604800) for s in (4, 5)
    ]
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(tmp_path / "out" / "rows.parquet").to_pylist()
    for h in (3600, 604800):
        for s in (4, 5):
            rows = [
                {k: v for k, v in r.items() if k not in ("variant", "PRIORITY_HALFLIFE", "seed")}
                for r in table
                if r["variant"] == f"PRIORITY_HALFLIFE={h} seed={s}"
            ]
            assert rows == simulate_alone(
                tmp_path / f"ref-{h}-{s}", inputs / "jobs.ad", {"PRIORITY_HALFLIFE": h}, s, {}
            )
