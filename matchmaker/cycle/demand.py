"""Each submitter's demand for the group quotas: its idle and running jobs, weighted.

Under ``NEGOTIATOR_USE_WEIGHTED_DEMAND`` a job counts for its ``RequestCpus`` (the
schedd's default job weight), evaluated in the job ad alone; a value that is not a
positive number (Undefined, Error, a string, zero or less) counts as 1.0.  With the
knob off every job counts 1.0 (docs/negotiation.md, allocation rounds).

A simulation asks this of a queue of which only a few jobs change between two cycles,
and the pool's ads are never changed in place: :class:`JobWeights` remembers the
weight of each ad whose ``RequestCpus`` is a plain literal (or absent) by the ad's
identity, so a cycle reads only the ads it has not seen.  An expression is evaluated
again in every call, in job order, as without the memory (it may draw random numbers).
The totals are summed in job order either way, so they are the same to the last bit.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Union

from classad.ad import ClassAd

from ..pool.ads import IDLE, RUNNING, Job, Pool
from .ephemeral import MatchState

_COUNTED = frozenset((IDLE, RUNNING))  # the JobStatus values that count as demand
_REQUEST_CPUS = "requestcpus"
# What is known of a job record: its weight, that it does not count (_SKIP), or that
# its RequestCpus is an expression, evaluated in every call (_EVALUATE).
_SKIP, _EVALUATE = "skip", "evaluate"
Known = Union[float, str]


def _weight(value: object) -> float:
    """A job's weight from its ``RequestCpus`` value: a positive number, else 1.0."""
    return float(value) if type(value) in (int, float) and value > 0 else 1.0  # type: ignore[operator,arg-type]


def _known(job: Job) -> Known:
    """What :func:`job_demand` needs of ``job`` in every call: :data:`_SKIP` when its status
    does not count, else its weight when its ``RequestCpus`` is a plain literal or absent
    (Undefined), else :data:`_EVALUATE`."""
    if job.status not in _COUNTED:
        return _SKIP
    stored = job.ad.plain(_REQUEST_CPUS)
    if stored is None:
        return 1.0
    if type(stored) in (bool, int, float, str):
        return _weight(stored)
    return _EVALUATE


def _evaluated(ad: ClassAd) -> float:
    return _weight(ad.evaluate("RequestCpus", state=MatchState(None, 0.0)))


class JobWeights:
    """What :func:`job_demand` needs of each job record (:func:`_known`), kept by the record
    from one call to the next: a record's ad, submitter and status are never changed (a
    changed job gets a new record), and a pool's ads are never changed in place.  Holds
    the records of the last call only (they are the pool's: it keeps no ad alive)."""

    def __init__(self) -> None:
        self.known: dict[Job, Known] = {}


def job_demand(
    pool: Pool, submitters: Mapping[str, Any], weighted: bool, memory: Optional[JobWeights] = None
) -> dict[str, float]:
    """Each submitter's idle plus running jobs, weighted by ``RequestCpus`` when ``weighted``
    (NEGOTIATOR_USE_WEIGHTED_DEMAND), summed in job order; ``memory`` keeps what it read of
    each job record for the next call."""
    out = {name: 0.0 for name in submitters}
    jobs = pool.jobs
    if not weighted:
        for job in jobs:
            if job.status in _COUNTED and job.submitter in out:
                out[job.submitter] += 1.0
        return out
    known: dict[Job, Known] = memory.known if memory is not None else {}
    get = known.get
    kept: dict[Job, Known] = {}
    for job in jobs:
        w = get(job)
        if w is None:
            w = _known(job)
        kept[job] = w
        if w is not _SKIP:
            name = job.submitter
            if name in out:
                out[name] += w if type(w) is float else _evaluated(job.ad)
    if memory is not None:
        memory.known = kept
    return out


__all__ = ["JobWeights", "job_demand"]
