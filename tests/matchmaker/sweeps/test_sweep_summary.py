"""The per-variant summary: Jain's index, targets, waits; figures computed by hand.

No cluster is needed: the summary is a pure function of one simulation's rows and waits.
"""

from __future__ import annotations

import pytest

import matchmaker
from classad import ParserType, parseAds
from matchmaker.config.knobs import Knobs
from matchmaker.sweeps.summary import jain, jain_by_cycle, summarise, targets

START = 1700000000.0


def ads(text: str) -> list:
    return list(parseAds(text, ParserType.Old))


def test_jain_by_hand():
    """(1+1)^2 / (2 * (1+1)) = 1; (1+0)^2 / (2 * 1) = 1/2; (3+1)^2 / (2 * (9+1)) = 16/20."""
    assert jain([1.0, 1.0]) == 1.0
    assert jain([1.0, 0.0]) == 0.5
    assert jain([3.0, 1.0]) == pytest.approx(0.8)
    assert jain([]) is None and jain([0.0, 0.0]) is None


def test_targets_follow_inverse_factors():
    """Factors 1 and 2: 1/1 : 1/2, so 2/3 and 1/3."""
    t = targets({"a": 1.0, "b": 2.0})
    assert t["a"] == pytest.approx(2 / 3) and t["b"] == pytest.approx(1 / 3)


def row(cycle, kind, name, usage, running=1, idle=0, rup=1.0, eup=1.0, share=0.0, preempted=0):
    return dict(
        cycle=cycle,
        hours=cycle,
        kind=kind,
        name=name,
        group=None,
        running=running,
        idle=idle,
        usage=usage,
        rup=rup,
        eup=eup,
        share=share,
        preempted=preempted,
    )


def test_jain_over_time_compares_shares_with_targets():
    """Cycle 0: a holds 2 of 3 claimed slots and b 1; factors 1 and 2 give targets 2/3 and 1/3,
    so both are at exactly their target: index 1.  Cycle 1: a holds 3, b 0 with a job idle:
    x = (1/(2/3), 0) = (1.5, 0), index 1.5^2 / (2 * 2.25) = 1/2.  Cycle 2: b has no jobs, so only
    a counts: index 1.  Cycle 3: nothing claimed: undefined."""
    rows = [
        row(0, "submitter", "a", 2),
        row(0, "submitter", "b", 1, rup=1, eup=2),
        row(1, "submitter", "a", 3),
        row(1, "submitter", "b", 0, running=0, idle=1, rup=1, eup=2),
        row(2, "submitter", "a", 3),
        row(2, "submitter", "b", 0, running=0, rup=1, eup=2),
        row(3, "submitter", "a", 0, running=0, idle=1),
        row(3, "submitter", "b", 0, running=0, idle=1),
    ]
    assert [j for _, _, j in jain_by_cycle(rows)] == [pytest.approx(1.0), pytest.approx(0.5), 1.0, None]


def test_waits_of_a_one_slot_pool():
    """One slot, two jobs of one hour, both queued at the start, cycles every half hour.
    Cycle 0 starts job 0 (waited 0 s); it ends at 3600, so the cycle at 3600 starts job 1,
    which waited 3600 s.  Mean 1800 s; 95th percentile by linear interpolation between
    0 and 3600: 0.95 * 3600 = 3420 s.  Cycles run at 0, 1800, 3600, 5400 and 7200; the slot
    is claimed after the first four and released at 7200 when job 1 ends: utilisation 4/5."""
    slots = ads('Name = "slot1@node"\nCpus = 1\nState = "Unclaimed"\nRequirements = true\nRank = 0\n')
    jobs = ads(
        "".join(
            f'ClusterId = 1\nProcId = {p}\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
            f"QDate = {START:.0f}\nRequirements = true\nSimJobDuration = 3600\n\n"
            for p in range(2)
        )
    )
    loaded = matchmaker.load_ads(Knobs.from_string("NEGOTIATOR_INTERVAL = 1800"), slots, jobs)
    sim = matchmaker.simulate(loaded, start=START, duration=7200)
    assert sorted(w for j in sim.jobs for w in j.waits) == [0.0, 3600.0]
    waits = [(j.submitter, w) for j in sim.jobs for w in j.waits]
    pool, alice = summarise(sim.rows, waits, {})
    assert pool["kind"] == "pool" and alice["name"] == "alice@example.org"
    assert pool["wait_mean"] == 1800.0 and pool["wait_p95"] == pytest.approx(3420.0)
    assert pool["starts"] == 2 and pool["never_started"] == 0
    assert pool["utilisation"] == pytest.approx(4 / 5)
    assert alice["share"] == 1.0 and alice["target"] == 1.0 and alice["share_vs_target"] == 1.0
    assert pool["jain_mean"] == 1.0


def test_a_requeued_job_waits_from_the_end_of_its_run():
    """A job of 1000 s that repeats once, cycles every 1800 s: it starts at 0 (wait 0), ends at
    1000, is idle from then and starts again at the cycle at 1800: wait 800 s."""
    slots = ads('Name = "slot1@node"\nCpus = 1\nState = "Unclaimed"\nRequirements = true\nRank = 0\n')
    jobs = ads(
        f'ClusterId = 1\nProcId = 0\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
        f"QDate = {START:.0f}\nRequirements = true\nSimJobDuration = 1000\nSimJobRepeat = 1\n"
    )
    loaded = matchmaker.load_ads(Knobs.from_string("NEGOTIATOR_INTERVAL = 1800"), slots, jobs)
    sim = matchmaker.simulate(loaded, start=START, duration=3600)
    assert sim.jobs[0].waits == (0.0, 800.0)


def one_slot_outcomes() -> list:
    """Two finished variants (the one-slot pool at two intervals) and a failed one."""
    from matchmaker.sweeps.spec import Setting, Variant
    from matchmaker.sweeps.worker import Outcome

    slots = ads('Name = "slot1@node"\nCpus = 1\nState = "Unclaimed"\nRequirements = true\nRank = 0\n')
    jobs = ads(
        "".join(
            f'ClusterId = 1\nProcId = {p}\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
            f"QDate = {START:.0f}\nRequirements = true\nSimJobDuration = 3600\n\n"
            for p in range(2)
        )
    )
    out = []
    for interval in (1800, 3600):
        sim = matchmaker.simulate(
            matchmaker.load_ads(Knobs.from_string(""), slots, jobs), start=START, duration=7200, interval=interval
        )
        v = Variant(f"i={interval}", (Setting("NEGOTIATOR_INTERVAL", str(interval), "s.toml", 1),))
        out.append(
            Outcome(f"k{interval}", v, rows=sim.rows, waits=[(j.submitter, w) for j in sim.jobs for w in j.waits])
        )
    out.append(Outcome("bad", Variant("bad", (), (), 3), status=1, error="s.toml:2: config: no"))
    return out


def test_tables_are_csv_without_pyarrow(tmp_path, monkeypatch):
    """The tidy table's CSV: a header of variant, the parameters, simulate's columns; one line
    per row of the finished variants (5 cycles + 3 cycles, two principals each: 16 lines)."""
    import csv
    import sys

    from matchmaker.simulate import COLUMNS
    from matchmaker.sweeps import SweepResult, write_tables

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    result = SweepResult(one_slot_outcomes())
    files = write_tables(result, tmp_path)
    assert [f.name for f in files] == ["rows.csv", "summary.csv", "variants.csv"]
    with open(tmp_path / "rows.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["variant", "NEGOTIATOR_INTERVAL", "seed", *COLUMNS]
    assert len(rows) == 16 and rows[0]["variant"] == "i=1800" and rows[-1]["NEGOTIATOR_INTERVAL"] == "3600"
    with open(tmp_path / "variants.csv", newline="") as fh:
        lines = list(csv.DictReader(fh))
    assert [(v["variant"], v["status"], v["error"], v["seed"]) for v in lines] == [
        ("i=1800", "0", "", ""),
        ("i=3600", "0", "", ""),
        ("bad", "1", "s.toml:2: config: no", "3"),
    ]


def test_frames_and_figures(tmp_path):
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    from matchmaker.sweeps import SweepResult
    from matchmaker.sweeps.plots import write_plots

    result = SweepResult(one_slot_outcomes())
    frame, summary = result.to_frame(), result.summary()
    assert len(frame) == 16 and list(frame["variant"].unique()) == ["i=1800", "i=3600"]
    assert list(summary[summary["kind"] == "pool"]["wait_mean"]) == [1800.0, 1800.0]
    for path in write_plots(result, tmp_path):
        assert path.stat().st_size > 0
