"""The idle jobs the loop counts for the claims' leftovers.

The loop tells the claims how many of the pool's jobs are idle records of each submitter
(``_Run._idle_count``, from the timeline's counts); the leftovers of a submitter whose
idle jobs all started in the claims then look for none.  Whenever the claims start, each
count must be the number of idle records of that submitter in the pool they are given,
and the run must be the one in which the claims are told nothing, and the rebuild's.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_incremental import (
    START,
    busy_pool,
    configs,
    dynamic_slot_texts,
    job_texts,
    running_job_texts,
    simulate,
    slot_texts,
)

from matchmaker.cycle import claims
from matchmaker.pool.ads import IDLE
from matchmaker.simulate import loop

loop_claims = loop.claim_matches


def _checking(told: list[int]) -> Any:
    def checked(pool: Any, *args: Any, idle_count: Any = None, **kw: Any) -> Any:
        if idle_count is not None:
            idle = Counter(j.submitter for j in pool.jobs if j.status == IDLE)
            for submitter in {j.submitter for j in pool.jobs} | {"nobody@example.org"}:
                assert idle_count(submitter) == idle[submitter]
            told.append(sum(idle.values()))
        return loop_claims(pool, *args, idle_count=idle_count, **kw)

    return checked


def _untold(pool: Any, *args: Any, idle_count: Any = None, **kw: Any) -> Any:
    return loop_claims(pool, *args, **kw)


def _run(config: str, slots: str, jobs: str, cycles: int, seed: int) -> list[int]:
    told: list[int] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop, "claim_matches", _checking(told))
        run = simulate(config, slots, jobs, True, cycles, seed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop, "claim_matches", _untold)
        assert run == simulate(config, slots, jobs, True, cycles, seed)
    assert run == simulate(config, slots, jobs, False, cycles, seed)
    return told


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), dynamic_slot_texts(), job_texts(), st.integers(3, 6), st.integers(0, 3))
def test_the_counts_are_the_idle_records_and_the_run_is_the_untold_one(
    config: str, slots: str, dynamic: str, jobs: str, cycles: int, seed: int
) -> None:
    """Random pools of test_incremental, with dynamic slots at the start (some released,
    some preempted with ``ALLOW_PSLOT_PREEMPTION``)."""
    _run(config, slots + dynamic, jobs + running_job_texts(dynamic), cycles, seed)


def test_a_busy_run_skips_leftovers_and_starts_some() -> None:
    """The busy pool with every job queued at the start (jobs that run again and again,
    preemption): the claims are told counts in every cycle, and the leftovers both look
    for jobs and skip the submitters whose idle jobs all started."""
    config, slots, jobs = busy_pool()
    jobs = re.sub(r"QDate = \d+", f"QDate = {START}", jobs)  # every job at once: a backlog first
    looked, skipped = [0], [0]
    leftovers = claims._Claims.leftovers

    def counted(self: Any, m: Any) -> None:
        if self.idle_count is not None:
            looks = self.idle_count(m.submitter) != self._started_idle.get(m.submitter, 0)
            (looked if looks else skipped)[0] += 1
        leftovers(self, m)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(claims._Claims, "leftovers", counted)
        assert len(_run(config, slots, jobs, 8, 1)) == 8
    assert looked[0] > 0 and skipped[0] > 0
