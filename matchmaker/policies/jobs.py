"""What a policy sees of the pool: job attributes read safely, and the runner protocol.

A :class:`Runner` is made fresh for every cycle (:func:`matchmaker.policies.runners.
make_runner`).  The cycle calls :meth:`Runner.begin_cycle` once with every pending job, then
repeatedly :meth:`Runner.pick` for the next one to try, :meth:`Runner.on_match` after a
match and :meth:`Runner.attributes` for the numbers put on the job's request ad.
:meth:`Runner.report` gives the breakdown rows ``userprio`` shows, and
:meth:`Runner.ledger` the usage to keep for the next cycle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from classad.ad import ClassAd
from classad.evaluate import evaluate_top, new_state

from ..pool.ads import Job


@dataclass(frozen=True)
class Pending:
    """An idle job offered to the policy, with its autocluster (request class)."""

    job: Job
    autocluster: int


@dataclass(frozen=True)
class PoolShape:
    """The size of the pool a cycle runs on: its CPUs, machines (nodes), memory and disk."""

    cpus: float
    nodes: float
    memory: float = 0.0  # MB
    disk: float = 0.0  # KiB, as slot ads give Disk


@dataclass(frozen=True)
class Ledger:
    """Stored usage per entity: a decayed value and, for Maui, its buckets; ``updated`` = time."""

    value: float = 0.0
    buckets: tuple[float, ...] = ()
    updated: float = 0.0


def number(ad: ClassAd, name: str, now: float, default: float = 0.0) -> float:
    """A numeric attribute of ``ad`` (``default`` when missing or not a number)."""
    v = ad.evaluate(name, state=new_state(ad, clock=lambda: now))
    if type(v) in (int, float) and v == v:
        return float(v)
    return default


def text(ad: ClassAd, name: str, now: float) -> Optional[str]:
    """A string attribute of ``ad`` (None when missing or not a string)."""
    v = ad.evaluate(name, state=new_state(ad, clock=lambda: now))
    return v if type(v) is str else None


def evaluate_number(expr: Any, attrs: Mapping[str, Any], now: float) -> Optional[float]:
    """``expr`` evaluated in an ad of ``attrs`` (None when it is not a number)."""
    ad = ClassAd(dict(attrs))
    v = evaluate_top(expr, ad, new_state(ad, clock=lambda: now))
    if type(v) in (int, float) and v == v:
        return float(v)
    return None


def cpus(job: Job, now: float) -> float:
    """Slots a job takes: its ``RequestCpus`` (1 when absent)."""
    return max(number(job.ad, "RequestCpus", now, 1.0), 0.0)


def wall_seconds(job: Job, now: float) -> float:
    """How long a running job has run in its current run: ``now - JobCurrentStartDate``
    (the schedd stamps it at every start), else ``RemoteWallClockTime`` (an ad that gives
    the run time itself), else ``now - EnteredCurrentStatus``.  A schedd's
    ``RemoteWallClockTime`` counts only the runs that ended (``condor_submit`` writes 0.0
    and the schedd adds a run when it ends), so it is not read when the run's start is known."""
    began = number(job.ad, "JobCurrentStartDate", now, -1.0)
    if began > 0:
        return max(0.0, now - began)
    w = number(job.ad, "RemoteWallClockTime", now, -1.0)
    if w >= 0:
        return w
    entered = number(job.ad, "EnteredCurrentStatus", now, now)
    return max(0.0, now - entered)


def cpu_seconds(job: Job, now: float) -> Optional[float]:
    """CPU time a job reports, ``RemoteUserCpu + RemoteSysCpu``; None when the ad has
    neither counter."""
    user = number(job.ad, "RemoteUserCpu", now, -1.0)
    system = number(job.ad, "RemoteSysCpu", now, -1.0)
    if user < 0 and system < 0:
        return None
    return max(user, 0.0) + max(system, 0.0)


def slot_seconds(running: Sequence[Job], since: Mapping[str, Ledger], now: float) -> dict[str, float]:
    """Slot-seconds each submitter's running jobs used since its last ledger update."""
    out: dict[str, float] = {}
    for j in running:
        out[j.submitter] = out.get(j.submitter, 0.0) + cpus(j, now) * seconds_since(j, since, now)
    return out


def seconds_since(job: Job, since: Mapping[str, Ledger], now: float) -> float:
    """How long a running job ran since its submitter's last ledger update (all of its
    run when the submitter has none)."""
    old = since.get(job.submitter)
    wall = wall_seconds(job, now)
    return min(max(0.0, now - old.updated), wall) if old is not None else wall


def stamp(running: Sequence[Job], old: Mapping[str, Ledger]) -> set[str]:
    """The entities a ledger update covers: the stored ones and every running job's submitter."""
    return {j.submitter for j in running} | set(old)


def user_of(job: Job, now: float) -> str:
    """The user who owns a job, whatever it is charged to: its ``User`` before ``@``, else
    its ``Owner``, else the submitter's last dotted part before ``@``."""
    user = text(job.ad, "User", now)
    if user:
        return user.partition("@")[0]
    owner = text(job.ad, "Owner", now)
    return owner if owner else job.submitter.partition("@")[0].rpartition(".")[2]


def group_of(job: Job, now: float) -> Optional[str]:
    """The accounting group of a job (``AcctGroup``, else the part of ``AccountingGroup``
    before its last dot), None without one."""
    g = text(job.ad, "AcctGroup", now)
    if g:
        return g
    ag = text(job.ad, "AccountingGroup", now)
    if ag and "." in ag:
        return ag.rpartition(".")[0]
    return None


class Runner:
    """The interface the cycle uses; see the module docstring."""

    name = "base"

    def begin_cycle(
        self,
        now: float,
        pending: Sequence[Pending],
        running: Sequence[Job],
        ledger: Mapping[str, Ledger],
        pool: PoolShape,
    ) -> None:
        raise NotImplementedError

    def pick(self) -> Optional[Pending]:
        """The next pending job to try (each is handed out once); None when none is left."""
        raise NotImplementedError

    def refused(self) -> list[tuple[str, str]]:
        """Jobs the policy will not start this cycle, as (job id, why); Maui's
        ``REJECTNEGPRIOJOBS`` fills it, the other models start every job they order."""
        return []

    def on_match(self, job: Job) -> None:
        """Feedback after ``job`` was matched (LSF recomputes; others need nothing)."""

    def on_reject(self, item: Pending) -> None:
        """``item`` found no slot: the cycle skips the rest of its autocluster."""

    def attributes(self, job: Job) -> dict[str, Any]:
        """Attributes put on the job's request ad before matching."""
        return {}

    def report(self) -> list[dict[str, Any]]:
        """The breakdown rows for ``userprio`` (one per entity)."""
        return []

    def ledger(self, now: float, running: Sequence[Job], old: Mapping[str, Ledger]) -> dict[str, Ledger]:
        """The usage to store after a cycle at ``now`` (the model's decay applied)."""
        return dict(old)


__all__ = [
    "Ledger",
    "Pending",
    "PoolShape",
    "Runner",
    "SortedRunner",
    "cpu_seconds",
    "cpus",
    "evaluate_number",
    "group_of",
    "number",
    "seconds_since",
    "slot_seconds",
    "stamp",
    "text",
    "user_of",
    "wall_seconds",
]


class SortedRunner(Runner):
    """A runner whose order is fixed at the start of the cycle: a sort by :meth:`key`."""

    def key(self, item: Pending) -> tuple:
        raise NotImplementedError

    def sort(self, pending: Sequence[Pending]) -> None:
        self._queue = sorted(pending, key=self.key, reverse=True)

    def pick(self) -> Optional[Pending]:
        return self._queue.pop() if self._queue else None
