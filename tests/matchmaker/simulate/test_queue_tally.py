"""What a simulation keeps of its queue from cycle to cycle: each queued job's record in
queue order (``Timeline.records``), and each submitter's idle and running records and
weighted demand (:class:`~matchmaker.cycle.demand.JobWeights`), brought up to date from
the records that left the queue and those that joined it (``Timeline.changes``).

In every cycle of random runs (group quotas, weighted demand or not, requests of whole
and of fractional cpus, one too large for exact sums, and requests that draw) the kept
records must be those of the queued jobs, the kept counts those a pass over the pool's
jobs gives (``Pool.submitter_counts``) and the kept demand the very floats
:func:`~matchmaker.cycle.demand.job_demand` sums in job order without a memory (the
draws of the two made alike); and the run must be the rebuild's.
"""

from __future__ import annotations

import re
from operator import attrgetter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_incremental import configs, job_texts, simulate, slot_texts

from classad.evaluate import draws_undone
from matchmaker.cycle.demand import JobWeights, job_demand
from matchmaker.pool.ads import Pool
from matchmaker.simulate import loop

_RECORD = attrgetter("record")
_demand, _counts, _rebuild, _pool = JobWeights.demand, JobWeights.counts, JobWeights._rebuild, loop._Run.pool


def _checked(seen: dict[str, int]) -> pytest.MonkeyPatch:
    def demand(self: JobWeights, jobs: list, submitters: Any, weighted: bool) -> dict[str, float]:
        with draws_undone():  # the fresh sums draw what the kept ones then draw again
            fresh = job_demand(Pool([], jobs), submitters, weighted)
        got = _demand(self, jobs, submitters, weighted)
        assert list(map(repr, got.items())) == list(map(repr, fresh.items()))
        seen["demand"] += 1
        return got

    def counts(self: JobWeights, jobs: list) -> dict[str, tuple[int, int]]:
        got = _counts(self, jobs)
        assert got == Pool([], jobs).submitter_counts()
        seen["counts"] += 1
        return got

    def rebuild(self: JobWeights, jobs: list) -> None:
        seen["rebuilds"] += 1
        _rebuild(self, jobs)

    def pool(self: Any, first: bool) -> Pool:
        queued = list(map(_RECORD, self.timeline.queued))
        assert len(queued) == len(self.timeline.records)
        assert all(map(lambda a, b: a is b, queued, self.timeline.records))
        return _pool(self, first)

    patch = pytest.MonkeyPatch()
    patch.setattr(JobWeights, "demand", demand)
    patch.setattr(JobWeights, "counts", counts)
    patch.setattr(JobWeights, "_rebuild", rebuild)
    patch.setattr(loop._Run, "pool", pool)
    return patch


@st.composite
def grouped_configs(draw: Any) -> str:
    config = draw(configs().filter(lambda c: "GROUP_NAMES" in c))
    return config + f"NEGOTIATOR_USE_WEIGHTED_DEMAND = {str(draw(st.booleans())).lower()}\n"


@st.composite
def odd_job_texts(draw: Any) -> str:
    """Jobs of :func:`job_texts`, with some requests of 1 cpu made another size: a half (not a
    whole number), 1e16 (too large for sums exact in any order), 3."""
    texts = draw(job_texts())
    return re.sub(
        r"RequestCpus = 1\n",
        lambda _: f"RequestCpus = {draw(st.sampled_from(('1', '1', '0.5', '1e16', '3')))}\n",
        texts,
    )


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grouped_configs(), slot_texts(), odd_job_texts(), st.integers(3, 7), st.integers(0, 3))
def test_the_kept_queue_is_the_queue(config: str, slots: str, jobs: str, cycles: int, seed: int) -> None:
    seen = {"demand": 0, "counts": 0, "rebuilds": 0}
    patch = _checked(seen)
    try:
        run = simulate(config, slots, jobs, True, cycles, seed)
    finally:
        patch.undo()
    assert seen["counts"] >= cycles - 1
    assert seen["rebuilds"] == 1  # the first cycle's; every later one follows the changes
    assert run == simulate(config, slots, jobs, False, cycles, seed)
