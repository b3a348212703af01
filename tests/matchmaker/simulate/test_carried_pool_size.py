"""The pool size kept by place (SlotCarry.pool_size) is the one computed afresh.

A simulation keeps each slot's weight and count (its cores for a partitionable slot)
by its place in the cycle's list of slots, a slot taken again from the last cycle
giving what it gave then; only the slots made anew are read.  Each cycle's carried
size is checked against :func:`~matchmaker.pool.ads.pool_size` over the cycle's slots,
on a busy fixed run (claims, splits, give-backs and dynamic slots leaving, so places
shift), on the same run with weights that are not whole numbers (the sums taken in
slot order), and on random pools and policies.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_incremental import busy_pool, configs, job_texts, simulate, simulate_patched, slot_texts

from matchmaker.cycle.slot_carry import SlotCarry
from matchmaker.pool.ads import pool_size


def _exact(x: Any) -> tuple:
    return (type(x), repr(x))


def _checked_run(config: str, slots: str, jobs: str, cycles: int, seed: int) -> tuple[tuple, list[bool]]:
    """The incremental run's outputs with every carried pool size checked against a fresh
    one, and for each cycle whether it took some slots' parts again by place."""
    original = SlotCarry.pool_size
    by_place: list[bool] = []

    def spy(self: SlotCarry, records: list, use_slot_weights: bool, memo: Any) -> Any:
        kept = self.last("pool_size") is not None and len(self._others) < len(records)
        got = original(self, records, use_slot_weights, memo)
        want = pool_size(records, use_slot_weights=use_slot_weights, memo=memo)
        for a, b in ((got.weighted, want.weighted), (got.min_weight, want.min_weight), (got.effective, want.effective)):
            assert _exact(a) == _exact(b)
        by_place.append(kept)
        return got

    out = simulate_patched([(SlotCarry, "pool_size", spy)], config, slots, jobs, cycles, seed)
    return out, by_place


@pytest.mark.parametrize("weight", [None, "Cpus * 0.3", "Cpus - 1"])
def test_a_busy_run_sizes_the_pool_as_afresh(weight: Any) -> None:
    config, slots, jobs = busy_pool()
    if weight is not None:
        slots = slots.replace("Rank = 0\n", f"Rank = 0\nSlotWeight = {weight}\n")
    out, by_place = _checked_run(config, slots, jobs, 12, 5)
    assert out == simulate(config, slots, jobs, False, 12, 5)
    assert sum(by_place) >= (8 if weight != "Cpus * 0.3" else 0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), job_texts(), st.integers(2, 6), st.integers(0, 3))
def test_random_runs_size_the_pool_as_afresh(config: str, slots: str, jobs: str, cycles: int, seed: int) -> None:
    out, _ = _checked_run(config, slots, jobs, cycles, seed)
    assert out == simulate(config, slots, jobs, False, cycles, seed)
