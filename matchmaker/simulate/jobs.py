"""The simulated queue: when each job arrives, how long it runs, where it runs.

A job's life in a simulation is *pending* (its ``QDate`` is still in the future),
*idle*, *running* on one slot, and finally *done*.  Two job-ad attributes steer it:

* ``SimJobDuration`` -- seconds of run time, evaluated in the job ad each time the
  job starts (so ``3600 + random(600)`` draws a new length per run, from the
  simulation's seeded random source); missing or not a non-negative number: the
  simulation's default duration.
* ``SimJobRepeat`` -- how many more times the job runs after it completes (it goes
  straight back to idle, like a user who resubmits at once); negative: forever.
  Absent or 0: the job is done after one run.

A preempted job goes back to idle and starts over (vanilla-universe jobs keep no
progress).  A job is charged to its submitter only through its slot's claim.
"""

from __future__ import annotations

import bisect
import heapq
import random
from dataclasses import dataclass
from typing import Optional

from classad.ad import ClassAd
from classad.evaluate import evaluate_top, new_state

from ..pool.ads import IDLE, RUNNING, Job
from ..pool.partition import with_values

DURATION_ATTR = "SimJobDuration"
REPEAT_ATTR = "SimJobRepeat"
PENDING, QUEUED_IDLE, QUEUED_RUNNING, DONE = "pending", "idle", "running", "done"


@dataclass(eq=False, slots=True)
class SimJob:
    """One job's simulated life; ``record`` is its current pool record (status and ad); a
    done job's is usually the record it was read with (see ``_Run.before_cycle``)."""

    record: Job
    arrival: float
    phase: str
    repeats_left: int
    began: Optional[float] = None  # when the current run started
    end: Optional[float] = None  # when the current run completes
    slot: Optional[str] = None  # where it runs
    runs: int = 0  # runs completed
    starts: int = 0
    preemptions: int = 0
    idle_since: Optional[float] = None  # when it last became idle (None: running since the start)
    waits: tuple[float, ...] = ()  # seconds idle before each start
    seq: int = 0  # its place in the queue (see Timeline)

    def __post_init__(self) -> None:
        if self.phase != QUEUED_RUNNING and self.idle_since is None:
            self.idle_since = self.arrival

    def started(self, t: float) -> None:
        """The job starts at ``t``: its wait since it became idle is recorded."""
        if self.idle_since is not None:
            self.waits = (*self.waits, t - self.idle_since)
        self.idle_since = None

    @property
    def id(self) -> str:
        """``ClusterId.ProcId``."""
        return self.record.id

    @property
    def submitter(self) -> str:
        """The accounting principal the job is charged to."""
        return self.record.submitter


class DurationSource:
    """Evaluates ``SimJobDuration`` with the simulation's clock and seeded random source."""

    def __init__(self, default: float, seed: Optional[int]) -> None:
        self.default = float(default)
        self.rng = random.Random(seed)
        self.warnings: list[str] = []
        self._warned: set[str] = set()

    def duration(self, job: Job, now: float) -> float:
        """Seconds the job runs when started at ``now``."""
        node = job.ad.get_node(DURATION_ATTR)
        if node is None:
            return self.default
        value = evaluate_top(node, job.ad, new_state(job.ad, clock=lambda: now, rng=self.rng))
        if type(value) in (int, float) and value >= 0 and value == value and value != float("inf"):
            return float(value)
        if job.id not in self._warned:
            self._warned.add(job.id)
            self.warnings.append(
                f"{job.source}: warning: job {job.id}: {DURATION_ATTR} is not a non-negative "
                f"number; it runs for the default {self.default:g} s"
            )
        return self.default


class Timeline:
    """The jobs of a simulated queue by what happens to them next: running jobs by the end
    of their run, pending ones by arrival; the queued ones (idle or running) in queue
    order, and how many jobs each submitter has in each phase.  Kept up to date as jobs
    change phase (:meth:`move`), so that a cycle costs what changed, not the queue's length:
    the queued jobs' records too, in the same order (:attr:`records`), with the records that
    left that list and those that joined it since :meth:`changes` was last asked."""

    def __init__(self, jobs: list[SimJob]) -> None:
        self.jobs = jobs
        self._ends: list[tuple[float, int, int, SimJob]] = []  # (end, seq, starts, job): a heap
        self._arrivals: list[SimJob] = []
        self._next = 0  # the first pending job of _arrivals that has not arrived
        self._queued_seq: list[int] = []
        self.queued: list[SimJob] = []  # in queue order
        self.counts: dict[str, dict[str, int]] = {}
        for k, j in enumerate(jobs):
            j.seq = k
            self._count(j, 1)
            if j.phase in _QUEUED:
                self._queued_seq.append(k)
                self.queued.append(j)
        self.records: list[Job] = [j.record for j in self.queued]  # each queued job's record
        self._left: list[Job] = []
        self._joined: list[Job] = []
        self._arrivals = sorted((j for j in jobs if j.phase == PENDING), key=_arrival_key)

    def _count(self, job: SimJob, n: int) -> None:
        by_phase = self.counts.get(job.submitter)
        if by_phase is None:
            by_phase = self.counts[job.submitter] = dict.fromkeys((QUEUED_RUNNING, QUEUED_IDLE, PENDING, DONE), 0)
        by_phase[job.phase] += n

    def runs_until(self, job: SimJob) -> None:
        """``job`` started a run that ends at ``job.end``."""
        assert job.end is not None
        heapq.heappush(self._ends, (job.end, job.seq, job.starts, job))

    def due(self, t: float) -> list[SimJob]:
        """The running jobs whose run ended by ``t`` and the pending jobs that arrived by
        ``t``, in queue order."""
        out: list[SimJob] = []
        ends = self._ends
        while ends and ends[0][0] <= t:
            end, _, starts, job = heapq.heappop(ends)
            if job.phase == QUEUED_RUNNING and job.end == end and job.starts == starts:
                out.append(job)  # not preempted (or started again) since
        arrivals = self._arrivals
        while self._next < len(arrivals) and arrivals[self._next].arrival <= t:
            out.append(arrivals[self._next])
            self._next += 1
        out.sort(key=_seq)
        return out

    def place(self, job: SimJob) -> Optional[int]:
        """Where ``job`` is in :attr:`queued` (None when it is not queued)."""
        if job.phase not in _QUEUED:
            return None
        at = bisect.bisect_left(self._queued_seq, job.seq)
        return at if at < len(self.queued) and self.queued[at] is job else None

    def move(self, job: SimJob, phase: str, record: Optional[Job] = None) -> None:
        """Put ``job`` in ``phase`` (and its record to ``record``, if given)."""
        self._count(job, -1)
        was = job.phase in _QUEUED
        old = job.record
        job.phase = phase
        if record is not None:
            job.record = record
        self._count(job, 1)
        now = phase in _QUEUED
        new = job.record
        if was != now:
            at = bisect.bisect_left(self._queued_seq, job.seq)
            if now:
                self._queued_seq.insert(at, job.seq)
                self.queued.insert(at, job)
                self.records.insert(at, new)
                self._joined.append(new)
            else:
                del self._queued_seq[at], self.queued[at], self.records[at]
                self._left.append(old)
        elif now and new is not old:
            self.records[bisect.bisect_left(self._queued_seq, job.seq)] = new
            self._left.append(old)
            self._joined.append(new)

    def changes(self) -> tuple[list[Job], list[Job]]:
        """The records that left :attr:`records` and those that joined it since the last
        call (or since the start), each as many times as it did."""
        out = self._left, self._joined
        self._left, self._joined = [], []
        return out


_QUEUED = (QUEUED_IDLE, QUEUED_RUNNING)
_PLAIN = (bool, int, float, str)


def _seq(job: SimJob) -> int:
    return job.seq


def _arrival_key(job: SimJob) -> tuple[float, int]:
    return (job.arrival, job.seq)


def _number(ad: ClassAd, attr: str, now: float) -> Optional[float]:
    stored = ad.plain(attr.lower())  # a plain literal is its value: nothing to evaluate
    if stored is None or type(stored) in _PLAIN:
        t = type(stored)
        return float(stored) if (t is int or t is float) and stored == stored else None  # type: ignore[arg-type]
    node = ad.get_node(attr)
    if node is None:
        return None
    value = evaluate_top(node, ad, new_state(ad, clock=lambda: now))
    return float(value) if type(value) in (int, float) and value == value else None


def initial_jobs(records: list[Job], start: float) -> list[SimJob]:
    """The simulated queue at ``start``: idle and running jobs of the input (held, removed
    and completed ones take no part); a ``QDate`` after ``start`` makes an idle job pending."""
    out = []
    for rec in records:
        if rec.status not in (IDLE, RUNNING):
            continue
        qdate = _number(rec.ad, "QDate", start)
        repeat = _number(rec.ad, REPEAT_ATTR, start)
        repeats = int(repeat) if repeat is not None and abs(repeat) < 2**31 else 0
        if rec.status == IDLE and qdate is not None and qdate > start:
            out.append(SimJob(rec, qdate, PENDING, repeats))
        else:
            phase = QUEUED_RUNNING if rec.status == RUNNING else QUEUED_IDLE
            out.append(SimJob(rec, start, phase, repeats))
    return out


def job_start_date(job: SimJob, start: float) -> float:
    """When a job that was already running at ``start`` began (``JobCurrentStartDate``)."""
    began = _number(job.record.ad, "JobCurrentStartDate", start)
    return began if began is not None and began <= start else start


_RUN_ATTRS = ("RemoteHost", "JobCurrentStartDate")


def idle_record(job: Job, now: float) -> Job:
    """The job's record back in the queue, idle since ``now`` (``EnteredCurrentStatus``, in
    whole seconds as the schedd stamps it), without its run's attributes."""
    values: dict[str, object] = {"JobStatus": IDLE, "EnteredCurrentStatus": int(now)}
    ad = with_values(job.ad, values, deleted=_RUN_ATTRS)
    return job.with_ad(ad, IDLE)


__all__ = [
    "DONE",
    "DURATION_ATTR",
    "PENDING",
    "QUEUED_IDLE",
    "QUEUED_RUNNING",
    "REPEAT_ATTR",
    "DurationSource",
    "SimJob",
    "Timeline",
    "idle_record",
    "initial_jobs",
    "job_start_date",
]
