"""``matchmaker simulate`` from the command line: the same series as the Python API, the
files it writes, no progress bar when stderr is not a terminal, and one-line errors.
Commands run in this process; one bad-input case runs as a real process, end to end."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
from support import ROOT, Ran, Terminal, run_matchmaker

import matchmaker

EXAMPLES = ROOT / "examples" / "simulate"
START = 1700000000


def simulate_cli(scenario: str, *extra: object) -> Ran:
    d = EXAMPLES / scenario
    args = [
        "simulate",
        "--config",
        d / "negotiator.config",
        "--slots",
        EXAMPLES / "slots.ad",
        "--jobs",
        d / "jobs.ad",
        "--start",
        START,
        *extra,
    ]
    return run_matchmaker(*args)


def test_cli_and_api_give_the_same_series(tmp_path):
    proc = simulate_cli(
        "fair-share",
        "--duration",
        "60h",
        "--interval",
        "2h",
        "--setfactor",
        "bob@example.org",
        "2",
        "--out",
        tmp_path,
        "--seed",
        "5",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # not a terminal: no progress bar
    doc = json.loads((tmp_path / "series.json").read_text())
    d = EXAMPLES / "fair-share"
    sim = matchmaker.simulate(
        matchmaker.load(d / "negotiator.config", EXAMPLES / "slots.ad", d / "jobs.ad"),
        start=START,
        duration=60 * 3600,
        interval=7200,
        seed=5,
        factors={"bob@example.org": 2},
    )
    assert doc["rows"] == json.loads(json.dumps(sim.rows))
    assert doc["meta"] == json.loads(json.dumps(sim.meta()))
    with open(tmp_path / "series.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(sim.rows)
    assert [float(r["rup"] or "nan") for r in rows if r["kind"] == "submitter"] == [
        r["rup"] for r in sim.rows if r["kind"] == "submitter"
    ]
    assert "alice@example.org" in proc.stdout and "bob@example.org" in proc.stdout


def test_cli_json_summary_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    proc = simulate_cli(
        "rup-growth", "--duration", "48h", "--interval", "1h", "--json", "--plot", "--out", tmp_path / "out"
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    final = {r["name"]: r for r in doc["final"]}
    assert final["alice@example.org"]["rup"] == pytest.approx(75.125, rel=1e-12)
    assert doc["meta"]["cycles"] == 49
    for name in ("priorities.png", "running.png", "shares.png", "series.csv", "series.json"):
        assert (tmp_path / "out" / name).stat().st_size > 0


def test_interval_defaults_to_negotiator_interval():
    proc = simulate_cli("rup-growth", "--duration", "1h", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["meta"]["interval"] == 300


@pytest.mark.parametrize(
    "extra, status, text",
    [
        (("--duration", "two days"), 2, "not a time span"),
        (("--duration", "1h", "--interval", "0"), 2, "longer than zero"),
        (("--duration", "1h", "--plot"), 2, "--plot needs --out"),
        (("--duration", "1h", "--setfactor", "bob", "x"), 2, "not a finite number"),
        (("--duration", "1h", "--start", "1e20"), 2, "outside 0 .. 253402300799"),
    ],
)
def test_bad_options(extra, status, text):
    """Command-line mistakes: one line naming the subcommand, status 2 (docs/cli.md)."""
    proc = simulate_cli("rup-growth", *extra)
    assert proc.returncode == status
    assert text in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("matchmaker simulate: command-line error:")


def test_bad_ad_file_names_file_and_line(tmp_path):
    """End to end, as a real process: one line on stderr, status 1, no traceback."""
    bad = tmp_path / "jobs.ad"
    bad.write_text('ClusterId = 1\nOwner = "x"\nRequirements = (true\n')
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "matchmaker.cli",
            "simulate",
            "--config",
            str(EXAMPLES / "rup-growth" / "negotiator.config"),
            "--slots",
            str(EXAMPLES / "slots.ad"),
            "--jobs",
            str(bad),
            "--duration",
            "1h",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"matchmaker: {bad}:") and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_progress_bar_on_a_terminal(monkeypatch):
    """The bar shows once a run has taken a second (the clock is faked: a second per reading)."""
    import io

    from matchmaker.cli import main, simulate as command

    ticks = iter(range(10**6))
    monkeypatch.setattr(command.time, "monotonic", lambda: float(next(ticks)))
    d = EXAMPLES / "rup-growth"
    argv = [
        "simulate",
        "--config",
        str(d / "negotiator.config"),
        "--slots",
        str(EXAMPLES / "slots.ad"),
        "--jobs",
        str(d / "jobs.ad"),
        "--start",
        str(START),
        "--duration",
        "3h",
        "--interval",
        "1h",
    ]
    err, out = Terminal(), io.StringIO()
    assert main(argv, out=out, err=err) == 0
    assert "cycles" in "".join(err.parts)
    quiet = Terminal()
    assert main([*argv, "--no-progress"], out=io.StringIO(), err=quiet) == 0
    assert quiet.parts == []


def test_state_database_is_kept(tmp_path):
    db = tmp_path / "prio.db"
    proc = simulate_cli("grow-decay", "--duration", "24h", "--interval", "6h", "--state", db)
    assert proc.returncode == 0, proc.stderr
    shown = run_matchmaker("userprio", "--state", db, "--json")
    assert shown.returncode == 0, shown.stderr
    assert "alice@example.org" in shown.stdout and "50.25" in shown.stdout


@pytest.mark.parametrize(
    "extra, words",
    [
        (("--setfactor", "bob@example.org", "-1"), "at least 1"),
        (("--setfactor", "bob", "5"), "neither user@domain"),
        (("--duration", "99999999999h"), "outside"),
        (("--duration", "200000h", "--interval", "1m"), "cycles; at most"),
    ],
)
def test_refused_runs_end_at_once_with_one_line(extra, words):
    """A bad factor is refused as ``userprio`` refuses it; a run that would never end is
    refused before the first cycle."""
    args = extra if "--duration" in extra else (*extra, "--duration", "1h")
    proc = simulate_cli("fair-share", *args)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert words in proc.stderr, proc.stderr
