"""A submitter's idle jobs as the leftovers of its partitionable slots go through them.

After a cycle the schedd offers what is left of each partitionable slot a submitter was
matched to to all its idle jobs, in order (:mod:`matchmaker.cycle.claims`).  With a
backlog (thousands of idle jobs, thousands of matches a cycle) going through the whole
list once per matched slot is most of a cycle, and nearly every job is passed over at
once: its request, known from an earlier slot, does not fit what is left.  This list
keeps, for each list of resources, the requests known so far as columns, so the jobs of
one slot ad that could not start there are found in one comparison of arrays and only
the others are gone through one by one.

A job is *passed over* by an ad of literal resources, without anything evaluated, when it
names a concurrency limit as a literal while limits are considered, or when its request
is known and does not fit what the ad has left (a request larger in some resource than
what is left, compared as the claims compare them).  A request is known once the claims
computed it (:meth:`IdleJobs.note`): never computed here, since computing it may evaluate
an expression that draws a random number; or, with the carry, when the submitter's list of
the last cycle knew it for the same job ad, computed from literals on a slot ad of the same
values as the one first reaching the job this cycle (see :meth:`IdleJobs._take`).  Nor, with its request known and its limits
known without a slot, when its ``Requirements`` are known false against the ad: the
verdict of a job whose tree and the literal values it reads are those of another job's
(:func:`~matchmaker.cycle.verdicts.job_key`, the job's *class*), when the ad refused that
job (:meth:`IdleJobs.refuse`).
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter
from typing import Iterator, Optional

import numpy as np

from ..pool.ads import Job
from .verdicts import job_key

_EXACT = 2.0**53  # numbers below this in size compare the same as float64


class IdleJobs:
    """``jobs`` (one submitter's idle jobs in the schedd's order), which are still idle, and
    each one's ``limits``: the concurrency limits it names as a string (then it never starts
    on leftovers), ``per_slot`` when they are to be evaluated against each slot, else None."""

    def __init__(
        self,
        jobs: list[Job],
        limits: list[object],
        per_slot: object,
        prior: Optional[IdleJobs] = None,
        asked: Optional[dict[tuple[str, ...], dict[str, dict[str, float]]]] = None,
    ) -> None:
        self.jobs = jobs
        self.ids = [j.id for j in jobs]
        self.limits = limits
        self.idle = [True] * len(jobs)  # per place; a job started on leftovers is no longer
        self._idle = np.ones(len(jobs), dtype=bool)
        self._named = np.fromiter((type(v) is str for v in limits), dtype=bool, count=len(jobs))
        self._evaluated = np.fromiter((v is per_slot for v in limits), dtype=bool, count=len(jobs))
        # By list of resources: the known requests (one column per resource) and which are known.
        self._requests: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}
        # Per place, the class of its job's Requirements verdicts (0: none, or not known yet),
        # and the key of each class (class 1 is the first key); per class, the ad that last
        # refused it (by the number of its stops, see :meth:`stops`; 0 is none).
        self._class = np.zeros(len(jobs), dtype=np.intp)
        self._class_of: list[Optional[tuple[int, Optional[tuple]]]] = [None] * len(jobs)
        self._learned = np.zeros(len(jobs), dtype=bool)
        self._classes: dict[tuple, int] = {}
        self._refused = np.zeros(len(jobs) + 1, dtype=np.int64)
        self._ad = 0
        self._refusals = 0  # (how many refusals were made: a walk's stops read the new ones)
        # Per list of resources, what the next cycle's list may take (see :meth:`_take`): each
        # place's request and the number of the slot values it was computed with (-1: none).
        self._kept: dict[tuple[str, ...], tuple[np.ndarray, list[Optional[dict[str, float]]]]] = {}
        # The places whose request was taken from the last cycle's list and not asked since
        # (by list of resources), and the numbers of slot values those were computed with.
        self._taken: dict[tuple[str, ...], np.ndarray] = {}
        self._taken_codes: dict[tuple[str, ...], set[int]] = {}
        # Per list of resources, the places below which a walk of this cycle reached (see :meth:`reach`).
        self._reached: dict[tuple[str, ...], int] = {}
        self._where: Optional[dict[int, int]] = None
        if prior is not None and prior.jobs and jobs:
            self._take(prior, asked or {})

    def started(self, k: int) -> None:
        """The job at place ``k`` started."""
        self.idle[k] = False
        self._idle[k] = False

    def note(self, resources: tuple[str, ...], k: int, request: dict[str, float], code: Optional[int] = None) -> None:
        """The job at place ``k`` requests ``request`` of ``resources`` (in that order);
        ``code``: the number of the slot values it was computed with when the same job ad
        asks the same on any slot of that number (the next cycle's list may take it)."""
        known = self._requests.get(resources)
        if known is None:
            known = self._requests[resources] = (
                np.zeros((len(resources), len(self.jobs))),
                np.zeros(len(self.jobs), dtype=bool),
            )
        values, have = known
        if have[k]:
            return
        row = tuple(request.values())
        if tuple(request) != resources or not all(_exact(v) for v in row):
            return  # compared only one by one
        values[:, k] = row
        have[k] = True
        if code is not None:
            kept = self._kept.get(resources)
            if kept is None:
                kept = self._kept[resources] = (np.full(len(self.jobs), -1, dtype=np.int64), [None] * len(self.jobs))
            kept[0][k] = code
            kept[1][k] = request

    # ---- requests taken from the last cycle's list -----------------------------------------------
    #
    # A job's request is computed at the first slot ad that reaches it in a cycle (once per
    # job and list of resources, docs/differences.md N15a).  The same job ad on a slot ad of
    # the same values under what the request reads (its number, Carried.request_code) asks
    # the same, so last cycle's request stands wherever the ad first reaching the job this
    # cycle has that number: the walks then pass over the job without computing it.  A walk
    # reading an ad of another number first drops the taken requests of the places no walk
    # reached yet (they are computed there as by the rebuild); one reached already keeps its
    # request for the cycle (:meth:`taken`).

    def _take(self, prior: IdleJobs, asked: dict[tuple[str, ...], dict[str, dict[str, float]]]) -> None:
        """Take the requests ``prior`` (the submitter's list of the last cycle) kept for the
        same job ads, but for the jobs whose request this cycle asked already (``asked``: by
        list of resources, the job ids; the claims' refused matches)."""
        where = prior._where
        if where is None:
            where = prior._where = dict(zip(map(id, map(_AD, prior.jobs)), range(len(prior.jobs))))
        n = len(self.jobs)
        old = np.fromiter(map(where.get, map(id, map(_AD, self.jobs)), repeat(-1)), dtype=np.intp, count=n)
        found = old >= 0
        if not found.any():
            return
        pick = np.where(found, old, 0)
        picked = pick.tolist()
        for resources, (codes, rows) in prior._kept.items():
            code = np.where(found, codes[pick], -1)
            ids = asked.get(resources)
            if ids:
                code[np.fromiter(map(ids.__contains__, self.ids), dtype=bool, count=n)] = -1
            keep = code >= 0
            if not keep.any():
                continue
            values = prior._requests[resources][0][:, pick]
            self._requests[resources] = (values, keep.copy())
            self._kept[resources] = (code, [rows[i] for i in picked])
            self._taken[resources] = keep
            self._taken_codes[resources] = set(np.unique(code[keep]).tolist())

    def carries(self, resources: tuple[str, ...]) -> bool:
        """Whether requests taken from the last cycle's list stand for ``resources``."""
        return resources in self._taken

    def reach(self, resources: tuple[str, ...], k: int, code: Optional[int]) -> None:
        """A walk at place ``k`` reads a slot ad whose values under what a request reads have
        number ``code`` (None: not literals): the places it may reach first (from ``k`` and
        those no walk reached yet on) lose the taken requests computed with other values."""
        codes = self._taken_codes.get(resources)
        if not codes or codes == {code}:
            return
        start = max(k, self._reached.get(resources, 0))
        taken = self._taken[resources]
        kept = self._kept[resources][0]
        drop = taken[start:] & (kept[start:] != (-1 if code is None else code))
        at = np.flatnonzero(drop) + start
        if len(at):
            taken[at] = False
            kept[at] = -1
            self._requests[resources][1][at] = False

    def walked(self, resources: tuple[str, ...], begin: int, end: int) -> None:
        """A walk for ``resources`` reached every place from ``begin`` to below ``end`` (the
        places before ``begin`` no walk reached hold jobs started: none is asked again)."""
        reached = self._reached.get(resources, 0)
        if reached < end and (begin <= reached or not self._idle[reached:begin].any()):
            self._reached[resources] = end

    def taken(self, resources: tuple[str, ...], k: int) -> Optional[dict[str, float]]:
        """The request of the job at place ``k`` taken from the last cycle's list (fixed for
        this cycle once a walk reached it), None when there is none."""
        taken = self._taken.get(resources)
        if taken is None or not taken[k]:
            return None
        return dict(self._kept[resources][1][k])  # type: ignore[arg-type]

    def requirements_class(self, k: int) -> tuple[int, Optional[tuple]]:
        """The class of the job at place ``k`` and its :func:`~matchmaker.cycle.verdicts.job_key`
        (``(0, None)`` when its verdicts are not shared, or it has no ``Requirements``):
        found once per job."""
        known = self._class_of[k]
        if known is None:
            ad = self.jobs[k].ad
            node = ad.get_node("Requirements")
            key = None if node is None else job_key(node, ad)
            c = 0 if key is None else self._classes.setdefault(key, len(self._classes) + 1)
            known = self._class_of[k] = (c, key)
            self._class[k] = c
            self._learned[k] = True
        return known

    def refuse(self, c: int) -> None:
        """The ad of the last :meth:`stops` refuses the jobs of class ``c``: its stops from
        then on pass over the jobs of that class whose request is known and whose limits
        need no slot."""
        if c:
            self._refused[c] = self._ad
            self._refusals += 1

    def stops(self, resources: tuple[str, ...], start: int, left: dict[str, float]) -> Optional[Iterator[int]]:
        """The places from ``start`` on of the idle jobs not passed over by an ad that has
        ``left`` of ``resources`` (literals), in order; None when ``left`` does not compare
        exactly.  Found a block at a time: a walk mostly takes one of the first few."""
        room = [left.get(r, 0) for r in resources]
        self._ad += 1  # (a new ad: no class refused yet)
        if not all(_exact(v) for v in room):
            return None
        return self._stops(self._requests.get(resources), start, room)

    def _stops(self, known: Optional[tuple[np.ndarray, np.ndarray]], start: int, room: list[float]) -> Iterator[int]:
        n, size, ad, before = len(self.jobs), _BLOCK, self._ad, self._refusals
        if start < n and self._first_stop(known, start, room):
            yield start  # (found without arrays: a walk mostly starts the first job it reaches)
            start += 1
        while start < n:
            end = min(n, start + size)
            stop = self._idle[start:end] & ~self._named[start:end]
            if known is not None:
                values, have = known
                passable = have[start:end] & ~self._evaluated[start:end]  # (passed over with nothing evaluated)
                for column, most in zip(values, room):
                    stop &= ~((column[start:end] > most) & passable)
                if self._refusals != before:  # the ad refused classes: pass over their jobs
                    at = np.flatnonzero(stop & passable) + start
                    for k in at[~self._learned[at]].tolist():
                        self.requirements_class(k)
                    stop &= ~((self._refused[self._class[start:end]] == ad) & passable)
            refused = self._refusals
            for k in (np.flatnonzero(stop) + start).tolist():
                yield k
                if self._refusals != refused:  # a class refused at k: the block after k found again
                    start, size = k + 1, _BLOCK
                    break
            else:
                start, size = end, size * 4

    def _first_stop(self, known: Optional[tuple[np.ndarray, np.ndarray]], k: int, room: list[float]) -> bool:
        """Whether place ``k`` is a stop of a new ad (one that refused no class yet): the
        test of :meth:`_stops` for one place."""
        if not self.idle[k] or self._named[k]:
            return False
        if known is None:
            return True
        values, have = known
        if not have[k] or self._evaluated[k]:
            return True
        return not any(v > most for v, most in zip(values[:, k].tolist(), room))


_AD = attrgetter("ad")
_BLOCK = 64  # places in the first block of a walk's stops (each next block four times larger)


def _exact(v: object) -> bool:
    """Whether ``v`` is a number that compares the same as a float64."""
    return type(v) is float or type(v) is int and -_EXACT < v < _EXACT  # type: ignore[operator]


__all__ = ["IdleJobs"]
