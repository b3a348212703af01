"""Where the claims look for a new dynamic slot's name, carried from cycle to cycle.

A partitionable slot ``slot1@host`` names its dynamic slots ``slot1_<n>@host`` with the
lowest free number.  The loop keeps, per partitionable slot, a number below which every
such name is taken (``_Run.free_from``): the claims raise it as they take names and
empty it when a slot went away, a release lowers it to the number it frees.  Whenever
the claims start, every name below each kept number must be a slot of the pool, and the
run must be the one in which the claims look from 1 each time, and the rebuild's.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_incremental import (
    busy_pool,
    configs,
    dynamic_slot_texts,
    job_texts,
    running_job_texts,
    simulate,
    slot_texts,
)

from matchmaker.pool.partition import child_name
from matchmaker.simulate import loop


def _checking(kept: list[int]) -> Any:
    claims = loop.claim_matches

    def checked(pool: Any, *args: Any, free_from: Any = None, **kw: Any) -> Any:
        names = {s.name for s in pool.slots}
        for parent, below in free_from.items():
            assert all(child_name(parent, n) in names for n in range(1, below))
            kept.append(below)
        return claims(pool, *args, free_from=free_from, **kw)

    return checked


def _from_one(pool: Any, *args: Any, free_from: Any = None, **kw: Any) -> Any:
    free_from.clear()
    return loop_claims(pool, *args, free_from=free_from, **kw)


loop_claims = loop.claim_matches


def _run(config: str, slots: str, jobs: str, cycles: int, seed: int) -> list[int]:
    kept: list[int] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop, "claim_matches", _checking(kept))
        told = simulate(config, slots, jobs, True, cycles, seed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop, "claim_matches", _from_one)
        assert told == simulate(config, slots, jobs, True, cycles, seed)
    assert told == simulate(config, slots, jobs, False, cycles, seed)
    return kept


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), dynamic_slot_texts(), job_texts(), st.integers(3, 6), st.integers(0, 3))
def test_every_name_below_a_kept_number_is_taken(
    config: str, slots: str, dynamic: str, jobs: str, cycles: int, seed: int
) -> None:
    """Random pools of test_incremental, with dynamic slots at the start (some released,
    some preempted with ``ALLOW_PSLOT_PREEMPTION``)."""
    _run(config, slots + dynamic, jobs + running_job_texts(dynamic), cycles, seed)


def test_a_busy_run_carries_numbers_above_one() -> None:
    """The busy pool: its partitionable slot takes names and gives them back over six
    cycles, and the claims start from a carried number above 1 at least once."""
    config, slots, jobs = busy_pool()
    assert max(_run(config, slots, jobs, 6, 1), default=0) > 1
