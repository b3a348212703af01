"""What a carried cycle decides of a compacted slot ad by the literals it stores
(matchmaker.cycle.state, Cycle._decide) tells apart values Python calls equal but the
trim does not: ``RetirementTimeRemaining = true`` is not a number (the slot stays), ``1``
and ``1.0`` are (the slot is trimmed: it is retiring); ``WantMatching = 0`` is not
``false`` (a claimed partitionable slot stays).  The ads of each case share one variant,
so a decision found by a key that lost the values' types would be taken for the wrong ad.
Expected: by hand, and the rebuild (no carry)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from test_incremental import START, _ads

from classad.layout import SharedAttrs
from matchmaker.api import pool_options, settings_from
from matchmaker.config.knobs import Knobs
from matchmaker.cycle import state
from matchmaker.cycle.session import open_accountant
from matchmaker.pool.ads import pool_from_ads
from matchmaker.simulate.loop import run_simulation


def _slot(name: str, extra: str) -> str:
    return (
        f'Name = "{name}"\nCpus = 1\nMemory = 1024\nDisk = 100000\nState = "Unclaimed"\nActivity = "Idle"\n'
        f"Requirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\n{extra}\n"
    )


def _pslot(name: str, want: str) -> str:
    return (
        f'Name = "{name}"\nCpus = 4\nMemory = 4096\nDisk = 100000\nState = "Claimed"\nActivity = "Busy"\n'
        'RemoteUser = "bob@x"\nRemoteOwner = "bob@x"\nPartitionableSlot = true\nTotalSlotCpus = 4\n'
        f"Requirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\nWantMatching = {want}\n"
    )


# (template, then the slots sharing one variant, and the slots the trim keeps, by hand)
CASES = {
    "retirement": (
        [_slot("t", "RetirementTimeRemaining = 0")]
        + [_slot(n, f"RetirementTimeRemaining = {v}") for n, v in (("a", "1"), ("b", "true"), ("c", "1.0"))]
        + [_slot("d", 'RetirementTimeRemaining = "1"'), _slot("e", "RetirementTimeRemaining = true")],
        ["b", "d", "e"],
    ),
    "want matching": (
        [_pslot("t", "true")] + [_pslot(n, v) for n, v in (("a", "false"), ("b", "0"), ("c", "false"))],
        ["b"],
    ),
}


def _run(texts: list[str], incremental: bool, monkeypatch: Any) -> tuple[list, tuple]:
    """The names of the slots the first cycle keeps (its entries), and the run's outputs."""
    ads = [ad.compact(equal_values=False) for ad in _ads("\n".join(texts))][1:]
    assert all(type(ad._attrs) is SharedAttrs for ad in ads)
    assert len({id(tuple.__getitem__(ad._attrs, 0)) for ad in ads}) == 1
    jobs = "".join(
        f'ClusterId = 1\nProcId = {p}\nOwner = "alice"\nUser = "alice@x"\nJobStatus = 1\nRequestCpus = 1\n'
        f"RequestMemory = 512\nRequirements = true\nQDate = {START - 60}\nSimJobDuration = 5000\n\n"
        for p in range(len(ads))
    )
    s = settings_from(Knobs.from_string(f"SIMULATE_INCREMENTAL = {str(incremental).lower()}\n"))
    pool = pool_from_ads(ads, _ads(jobs), **pool_options(s))
    kept: list = []
    cycle = state.Cycle.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        cycle(self, *args, **kwargs)
        kept.append(sorted({e.slot.name for e in self.entries}))

    monkeypatch.setattr(state.Cycle, "__init__", init)
    acct = open_accountant(":memory:", s)
    sim = run_simulation(pool, s, acct, start=START, duration=0, interval=300, job_duration=900, seed=0)
    monkeypatch.setattr(state.Cycle, "__init__", cycle)
    return kept, (sim.rows, sim.jobs, [dataclasses.astuple(x) for x in sim.spans], sim.warnings)


@pytest.mark.parametrize("case", sorted(CASES))
def test_decisions_by_literals_tell_their_types_apart(case: str, monkeypatch: Any) -> None:
    texts, expected = CASES[case]
    kept, carried = _run(texts, True, monkeypatch)
    assert kept == [expected]
    assert (kept, carried) == _run(texts, False, monkeypatch)
