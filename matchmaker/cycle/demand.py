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

from collections import Counter
from operator import attrgetter
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
_SUBMITTER, _STATUS = attrgetter("submitter"), attrgetter("status")


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
    the records of the last call only (they are the pool's: it keeps no ad alive).

    With it each submitter's count of idle and running records is kept, and its total of
    the weights that are whole numbers; a simulation tells it how its queue changed from
    one cycle's list of records to the next (:meth:`tell`: the records that left and those
    that joined), so that a call costs what changed, not the queue's length.  A sum of
    whole numbers below 2**53 is exact in any order, so such a total is the very float the
    sum in job order gives; while any counted record's weight is not such a number (or
    is an expression, evaluated in every call in job order), the sums run in job order."""

    def __init__(self) -> None:
        self.known: dict[Job, Known] = {}
        self._jobs: Optional[list[Job]] = None  # the list the tallies below are of (held)
        # How many records of the list are of each (submitter, status, what is known), as
        # those put in less those taken out, counted at C speed; and what they sum to (see
        # _sums), once asked for.
        self._in: Counter[tuple[str, int, Known]] = Counter()
        self._out: Counter[tuple[str, int, Known]] = Counter()
        self._sums: Optional[tuple[dict[str, tuple[int, int]], dict[str, int], bool]] = None
        self._told: Optional[list[Job]] = None  # the last list told
        # (list told before, list told, records that left, records that joined), not yet applied
        self._change: Optional[tuple[list[Job], list[Job], list[Job], list[Job]]] = None

    def tell(self, jobs: list[Job], left: list[Job], joined: list[Job]) -> None:
        """``jobs`` is the list told last time less the records ``left`` and with the records
        ``joined`` (each with as many copies as taken out or put in)."""
        before, self._told = self._told, jobs
        self._change = None if before is None else (before, jobs, left, joined)

    def counts(self, jobs: list[Job]) -> dict[str, tuple[int, int]]:
        """``Pool(..., jobs).submitter_counts()`` (in no particular order)."""
        return dict(self._current(jobs)[0])

    def demand(self, jobs: list[Job], submitters: Mapping[str, Any], weighted: bool) -> dict[str, float]:
        """:func:`job_demand` of ``jobs``."""
        counts, whole, odd = self._current(jobs)
        if not weighted:
            return {name: float(sum(c)) if (c := counts.get(name)) else 0.0 for name in submitters}
        if odd:
            return _in_order(jobs, submitters, self.known)
        return {name: float(whole.get(name, 0)) for name in submitters}

    def _current(self, jobs: list[Job]) -> tuple[dict[str, tuple[int, int]], dict[str, int], bool]:
        """Bring the tallies to ``jobs`` (by the change told, when it leads from the list they
        are of to this one, else by a pass over every record) and give what they sum to:
        each submitter's (idle, running) records (every submitter with a record), its total
        of whole weights, and whether any counted weight is not whole below 2**53 (or is
        evaluated) or a total reaches 2**53."""
        if jobs is not self._jobs or self._sums is None:
            change, self._change = self._change, None
            if change is None or change[0] is not self._jobs or change[1] is not jobs or not self._apply(change):
                self._rebuild(jobs)
            self._sums = self._summed()
        return self._sums

    def _rebuild(self, jobs: list[Job]) -> None:
        get = self.known.get
        ws = [w if (w := get(job)) is not None else _known(job) for job in jobs]
        self.known = dict(zip(jobs, ws))
        self._in, self._out = Counter(zip(map(_SUBMITTER, jobs), map(_STATUS, jobs), ws)), Counter()
        # A record listed twice cannot be taken out by its key: no change is applied then.
        self._jobs = jobs if len(self.known) == len(jobs) else None

    def _apply(self, change: tuple[list[Job], list[Job], list[Job], list[Job]]) -> bool:
        """Put in the records that joined, then take out those that left; False (the
        tallies then stale) when a record joins that is there already or one leaves that
        is not."""
        _, jobs, left, joined = change
        known = self.known
        n = len(known)
        ws = list(map(_known, joined))
        known.update(zip(joined, ws))
        if len(known) != n + len(joined):
            return False
        try:
            gone = list(map(known.pop, left))
        except KeyError:
            return False
        self._in.update(zip(map(_SUBMITTER, joined), map(_STATUS, joined), ws))
        self._out.update(zip(map(_SUBMITTER, left), map(_STATUS, left), gone))
        self._jobs = jobs
        return True

    def _summed(self) -> tuple[dict[str, tuple[int, int]], dict[str, int], bool]:
        net = self._in
        net.subtract(self._out)
        self._in, self._out = Counter({k: v for k, v in net.items() if v}), Counter()
        counts: dict[str, list[int]] = {}
        whole: dict[str, int] = {}
        odd = False
        for (name, status, w), n in self._in.items():
            c = counts.get(name)
            if c is None:
                c = counts[name] = [0, 0]
            if status == IDLE:
                c[0] += n
            elif status == RUNNING:
                c[1] += n
            if w is _SKIP:
                continue
            if type(w) is float and w < _EXACT and w.is_integer():
                whole[name] = whole.get(name, 0) + n * int(w)
            else:
                odd = True
        odd = odd or any(v >= _EXACT for v in whole.values())
        return {name: (c[0], c[1]) for name, c in counts.items()}, whole, odd


_EXACT = 2.0**53  # whole numbers below it, and their sums below it, are exact doubles


def _in_order(jobs: list[Job], submitters: Mapping[str, Any], known: dict[Job, Known]) -> dict[str, float]:
    """Each submitter's weights summed in job order, ``known`` holding every record's."""
    out = {name: 0.0 for name in submitters}
    for job in jobs:
        w = known[job]
        if w is not _SKIP:
            name = job.submitter
            if name in out:
                out[name] += w if type(w) is float else _evaluated(job.ad)
    return out


def job_demand(
    pool: Pool, submitters: Mapping[str, Any], weighted: bool, memory: Optional[JobWeights] = None
) -> dict[str, float]:
    """Each submitter's idle plus running jobs, weighted by ``RequestCpus`` when ``weighted``
    (NEGOTIATOR_USE_WEIGHTED_DEMAND), summed in job order; ``memory`` keeps what it read of
    each job record for the next call."""
    if memory is not None:
        return memory.demand(pool.jobs, submitters, weighted)
    out = {name: 0.0 for name in submitters}
    if not weighted:
        for job in pool.jobs:
            if job.status in _COUNTED and job.submitter in out:
                out[job.submitter] += 1.0
        return out
    return _in_order(pool.jobs, submitters, {job: _known(job) for job in pool.jobs})


__all__ = ["JobWeights", "job_demand"]
