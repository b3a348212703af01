"""What a carried cycle decides of a compacted slot ad by the literals it stores
(matchmaker.cycle.state, Cycle._decide): whether the trim keeps the slot and whether a
claimed one is idle, found again for the ads of one variant that store the same values.

The expected values are the rebuild's (no carry) on random compacted pools (the
strategies of test_incremental: trims and activities by literals, by expressions that
read the clock and by draws; claims, splits and releases rewrite the ads between
cycles), and a by-hand pool whose ads share one variant but differ in their state and
activity.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_incremental import START, _ads, configs, job_texts, slot_texts

from classad.evaluate import seeded_random
from classad.layout import SharedAttrs
from matchmaker.api import pool_options, settings_from
from matchmaker.config.knobs import Knobs
from matchmaker.cycle import state
from matchmaker.cycle.session import open_accountant
from matchmaker.pool.ads import pool_from_ads
from matchmaker.simulate.loop import run_simulation


def _simulate(config: str, slots: str, jobs: str, incremental: bool, cycles: int, seed: int) -> tuple:
    """The simulation's outputs, its slot ads compacted (as a pool read from a dump is)."""
    knobs = Knobs.from_string(config + f"SIMULATE_INCREMENTAL = {str(incremental).lower()}\n")
    s = settings_from(knobs)
    with seeded_random(seed):
        pool = pool_from_ads([ad.compact() for ad in _ads(slots)], _ads(jobs), **pool_options(s))
    acct = open_accountant(":memory:", s)
    sim = run_simulation(
        pool, s, acct, start=START, duration=(cycles - 1) * 300, interval=300, job_duration=900, seed=seed
    )
    return sim.rows, sim.jobs, [dataclasses.astuple(x) for x in sim.spans], sim.warnings, acct.customers()


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), job_texts(), st.integers(2, 5), st.integers(0, 3))
def test_compacted_pools_carried_equal_rebuild(config: str, slots: str, jobs: str, cycles: int, seed: int) -> None:
    assert _simulate(config, slots, jobs, True, cycles, seed) == _simulate(config, slots, jobs, False, cycles, seed)


def _slot(name: str, state_: str, activity: str) -> str:
    return (
        f'Name = "{name}"\nCpus = 1\nMemory = 1024\nDisk = 100000\nState = "{state_}"\nActivity = "{activity}"\n'
        'RemoteUser = "alice@x"\nRemoteOwner = "alice@x"\nRequirements = TARGET.RequestCpus <= MY.Cpus\n'
        "Rank = 0\nStart = true\n"
    )


def test_ads_of_one_variant_are_decided_by_their_own_literals(monkeypatch: Any) -> None:
    """Four slots whose ads share one variant (the same names, each keeping its State and
    Activity): claimed and busy, claimed and idle, claimed and busy again, unclaimed and
    idle.  The cycle decides each as the rebuild does -- only the second is claimed and
    idle -- though the third ad is decided by what the first one's values gave (one
    decision made for each of the others, none for the third)."""
    texts = [_slot("t", "Owner", "Unknown")]  # the layout's template: the others keep their own values
    texts += [_slot("a", "Claimed", "Busy"), _slot("b", "Claimed", "Idle"), _slot("c", "Claimed", "Busy")]
    texts += [_slot("d", "Unclaimed", "Idle")]
    ads = [ad.compact(equal_values=False) for ad in _ads("\n".join(texts))][1:]
    assert all(type(ad._attrs) is SharedAttrs for ad in ads)
    assert len({id(tuple.__getitem__(ad._attrs, 0)) for ad in ads}) == 1
    s = settings_from(Knobs.from_string("SIMULATE_INCREMENTAL = true\n"))
    pool = pool_from_ads(ads, [], **pool_options(s))
    made: list = []
    decide = state.Cycle._decide

    def counting(self: Any, slot: Any, p: Any) -> None:
        before = {k: dict(v[1]) for k, v in self.carry.slots.decided.items()}
        decide(self, slot, p)
        after = {k: dict(v[1]) for k, v in self.carry.slots.decided.items()}
        made.append(sum(map(len, after.values())) - sum(map(len, before.values())))

    monkeypatch.setattr(state.Cycle, "_decide", counting)
    idle: list = []
    cycle = state.Cycle.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        cycle(self, *args, **kwargs)
        idle.append([(e.slot.name, e.claimed_idle) for e in self.entries])

    monkeypatch.setattr(state.Cycle, "__init__", init)
    acct = open_accountant(":memory:", s)
    run_simulation(pool, s, acct, start=START, duration=0, interval=300, job_duration=900, seed=0)
    assert idle == [[("a", False), ("b", True), ("c", False), ("d", False)]]
    assert made == [1, 1, 0, 1]
