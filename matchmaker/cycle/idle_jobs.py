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
an expression that draws a random number.
"""

from __future__ import annotations

from typing import Iterator, Optional

import numpy as np

from ..pool.ads import Job

_EXACT = 2.0**53  # numbers below this in size compare the same as float64


class IdleJobs:
    """``jobs`` (one submitter's idle jobs in the schedd's order), which are still idle, and
    each one's ``limits``: the concurrency limits it names as a string (then it never starts
    on leftovers), ``per_slot`` when they are to be evaluated against each slot, else None."""

    def __init__(self, jobs: list[Job], limits: list[object], per_slot: object) -> None:
        self.jobs = jobs
        self.ids = [j.id for j in jobs]
        self.limits = limits
        self.idle = [True] * len(jobs)  # per place; a job started on leftovers is no longer
        self._idle = np.ones(len(jobs), dtype=bool)
        self._named = np.fromiter((type(v) is str for v in limits), dtype=bool, count=len(jobs))
        self._evaluated = np.fromiter((v is per_slot for v in limits), dtype=bool, count=len(jobs))
        # By list of resources: the known requests (one column per resource) and which are known.
        self._requests: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}

    def started(self, k: int) -> None:
        """The job at place ``k`` started."""
        self.idle[k] = False
        self._idle[k] = False

    def note(self, resources: tuple[str, ...], k: int, request: dict[str, float]) -> None:
        """The job at place ``k`` requests ``request`` of ``resources`` (in that order)."""
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

    def stops(self, resources: tuple[str, ...], start: int, left: dict[str, float]) -> Optional[Iterator[int]]:
        """The places from ``start`` on of the idle jobs not passed over by an ad that has
        ``left`` of ``resources`` (literals), in order; None when ``left`` does not compare
        exactly.  Found a block at a time: a walk mostly takes one of the first few."""
        room = [left.get(r, 0) for r in resources]
        if not all(_exact(v) for v in room):
            return None
        return self._stops(self._requests.get(resources), start, room)

    def _stops(self, known: Optional[tuple[np.ndarray, np.ndarray]], start: int, room: list[float]) -> Iterator[int]:
        n, size = len(self.jobs), _BLOCK
        while start < n:
            end = min(n, start + size)
            stop = self._idle[start:end] & ~self._named[start:end]
            if known is not None and room:
                values, have = known
                big = values[0, start:end] > room[0]
                for column, most in zip(values[1:], room[1:]):
                    big |= column[start:end] > most
                stop &= ~(big & have[start:end] & ~self._evaluated[start:end])
            yield from (np.flatnonzero(stop) + start).tolist()
            start, size = end, size * 4


_BLOCK = 64  # places in the first block of a walk's stops (each next block four times larger)


def _exact(v: object) -> bool:
    """Whether ``v`` is a number that compares the same as a float64."""
    return type(v) is float or type(v) is int and -_EXACT < v < _EXACT  # type: ignore[operator]


__all__ = ["IdleJobs"]
