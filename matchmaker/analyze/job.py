"""Why does this job (not) run: the job-side report of ``matchmaker analyze``.

For one idle job, over the slots the cycle considered (the trimmed, annotated pool):

1. its Requirements clause by clause -- slots each clause accepts alone, the running
   count, Undefined/Error counts (:mod:`matchmaker.analyze.clauses`);
2. of the slots its Requirements accept, how many slots' own Requirements accept it,
   and which slot clause rejects it most often;
3. of the slots both sides accept, why each is or is not available at cycle start
   (claims and the preemption rules, :func:`matchmaker.cycle.explain.slot_availability`),
   and which were matched to other jobs during the cycle;
4. the verdict: what the cycle did with the job, naming the mechanism and its numbers,
   with every earlier refusal of the same cycle;
5. one-number suggestions (:mod:`matchmaker.analyze.suggest`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional

from classad.ad import ClassAd

from ..cycle.explain import (
    ALREADY_MATCHED,
    REQUIREMENTS,
    Context,
    slot_availability,
)
from ..pool.ads import IDLE, Job
from ..pool.concurrency import parse_limits
from .clauses import ClauseCount, accepts, count_clauses, evaluator, first_failures
from .partitionable import fit_lines, leftover_lines
from .pool_view import PoolView
from .suggest import Suggestion, suggest

MATCHED, REJECTED, NOT_REACHED, NOT_IDLE, REFUSED = "matched", "rejected", "not-reached", "not-idle", "refused"


@dataclass
class JobReport:
    """Everything ``analyze --job`` says about one job."""

    job: str
    submitter: str
    autocluster: Optional[int]
    slots_total: int  # slot ads in the pool
    slots_considered: int  # after the cycle's trim and NEGOTIATOR_SLOT_CONSTRAINT
    clauses: list[ClauseCount]
    job_accepts: int  # slots the job's Requirements accept
    slot_accepts: int  # of those, slots whose Requirements accept the job
    slot_rejections: list[tuple[str, int]]  # slot clause -> how many it decided, most first
    availability: dict[str, int]  # both-ways slots by availability at cycle start
    matched_elsewhere: list[str]  # both-ways slots the cycle gave to other jobs
    outcome: str  # MATCHED, REJECTED, NOT_REACHED, NOT_IDLE, REFUSED
    mechanism: str  # of the final rejection ("" when matched)
    verdict: str
    history: list[str] = field(default_factory=list)  # earlier refusals, "mechanism: explanation"
    suggestions: list[Suggestion] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # Undefined / Error findings
    context: list[str] = field(default_factory=list)  # the submitter's slice, group quota, limits
    partitionable: list[str] = field(default_factory=list)  # fit in each partitionable slot, leftovers

    @property
    def both_ways(self) -> int:
        """Slots both Requirements accept (the final running count, then the slots' side)."""
        return self.slot_accepts


def analyze_job(view: PoolView, job_id: str) -> JobReport:
    """The report for job ``job_id``; ``KeyError`` when the pool has no such job."""
    job = view.job(job_id)
    refused = dict(view.pool.refused)
    if job is None:
        if job_id in refused:
            return _refused(view, job_id, refused[job_id])
        raise KeyError(job_id)
    start = view.start
    entries = start.entries
    req = view.request(job)
    ev = evaluator(start.usage, view.now)
    ads = [e.ad for e in entries]
    clauses = count_clauses(req, ads, ev)
    by_job = [e for e in entries if accepts(req, e.ad, ev)]
    both = [e for e in by_job if accepts(e.ad, req, ev)]
    fails = first_failures([e.ad for e in by_job], req, ev)
    ctx = Context(
        job.submitter,
        view.priorities.eup(job.submitter),
        view.priorities.eup,
        start.settings.policy,
        start.usage,
        view.now,
    )
    availability: dict[str, int] = {}
    for e in both:
        why = slot_availability(ctx, e, req)
        availability[why] = availability.get(why, 0) + 1
    others = [e.slot.name for e in both if (m := view.match_on(e.slot.name)) is not None and m.job != job_id]
    outcome, mechanism, verdict = _verdict(view, job, lambda: len(both))
    report = JobReport(
        job_id,
        job.submitter,
        _autocluster(view, job),
        len(view.pool.slots),
        len(entries),
        clauses,
        len(by_job),
        len(both),
        sorted(((t, len(p)) for t, p in fails.items()), key=lambda x: -x[1]),
        availability,
        others,
        outcome,
        mechanism,
        verdict,
    )
    report.history = [f"{r.mechanism}: {r.explanation}" for r in view.history(job_id)]
    if outcome != MATCHED:
        report.suggestions = suggest(req, ads, ev)
    report.notes = [
        f"{c.text} is undefined on {c.undefined} slot{'s' if c.undefined != 1 else ''}" for c in clauses if c.undefined
    ] + [f"{c.text} is an error on {c.error} slot{'s' if c.error != 1 else ''}" for c in clauses if c.error]
    if req.get_node("Requirements") is None:
        report.notes.append("the job has no Requirements: it matches no slot")
    report.context = _context(view, job, req)
    report.partitionable = fit_lines(view, job) + leftover_lines(view, job)
    return report


def _context(view: PoolView, job: Job, req: ClassAd) -> list[str]:
    """The numbers the limits compare: the submitter's slice, its group's quota, the
    concurrency limits the job asks for."""
    out = []
    sub = next((x for x in view.result.submitters if x.name == job.submitter), None)
    if sub is not None:
        limit = "unlimited" if math.isinf(sub.limit) else f"{sub.limit:.6g}"
        out.append(
            f"submitter {sub.name}: EUP {sub.eup:.2f}, pie slice in spin 1 {limit}, {sub.matched} matched this cycle"
        )
    if view.result.groups:
        group = view.start.usage.group_of(job.submitter)
        g = next((x for x in view.result.groups if x.name == group), None)
        if g is not None:
            out.append(
                f"group {g.name}: quota {g.quota:.2f}, allocated {g.allocated:.2f}, requested "
                f"{g.requested:g}, in use at the end {g.usage:g}, accepts surplus: {g.surplus}"
            )
    v = req.evaluate("ConcurrencyLimits")
    if type(v) is str:
        limits = view.start.limits
        for name, amount in parse_limits(v):
            out.append(
                f"concurrency limit {name}: asks {amount:g}, {limits.count.get(name, 0.0):g} in use at "
                f"cycle start, capacity {float(limits.capacity(name)):g}"
            )
    return out


def analyze_submitter(view: PoolView, name: str) -> list[JobReport]:
    """One report per autocluster of ``name``'s idle jobs (its first job), in queue order."""
    queue = view.start.queues.get(name)
    if queue is None:
        raise KeyError(name)
    seen: set[int] = set()
    out = []
    for run in queue.runs:
        if run.autocluster not in seen:
            seen.add(run.autocluster)
            out.append(analyze_job(view, run.jobs[0].id))
    return out


def _autocluster(view: PoolView, job: Job) -> Optional[int]:
    queue = view.start.queues.get(job.submitter)
    for run in queue.runs if queue else ():
        if any(j.id == job.id for j in run.jobs):
            return run.autocluster
    return None


def decided_by(view: PoolView, job: Job) -> tuple[str, str, str]:
    """(outcome, mechanism, sentence) of what the cycle did with ``job``, as the verdict of
    :func:`analyze_job` says it (the slots both sides accept are counted only if needed)."""

    def both() -> int:
        req = view.request(job)
        ev = evaluator(view.start.usage, view.now)
        return sum(accepts(req, e.ad, ev) and accepts(e.ad, req, ev) for e in view.start.entries)

    return _verdict(view, job, both)


def _verdict(view: PoolView, job: Job, both: Callable[[], int]) -> tuple[str, str, str]:
    """(outcome, mechanism, sentence) of what the cycle did with ``job``; ``both()`` counts
    the slots both sides accept."""
    m = view.match_of(job.id)
    if m is not None:
        text = f"matched {m.slot} ({m.reason})"
        if m.preemption is not None:
            p = m.preemption
            who = f"job {p.job} of {p.user}" if p.job else f"the claim of {p.user}"
            text += (
                f", preempting {who} (RemoteUserPrio {p.remote_user_prio:.10g}, SubmitterUserPrio "
                f"{p.submitter_user_prio:.10g}, slot Rank {p.rank_before:.10g} -> {p.rank_after:.10g})"
            )
        return MATCHED, "", text
    if job.status != IDLE:
        return NOT_IDLE, "", f"not idle (JobStatus {job.status}): the cycle does not negotiate for it"
    r = view.rejection(job.id)
    if r is not None:
        return REJECTED, r.mechanism, f"rejected, decided by {r.mechanism or 'the matcher'}: {r.explanation}"
    ac = _autocluster(view, job)
    queue = view.start.queues.get(job.submitter)
    for run in queue.runs if queue else ():
        if run.autocluster != ac:
            continue
        for other in run.jobs:
            rr = view.rejection(other.id)
            if rr is not None:
                return (
                    NOT_REACHED,
                    rr.mechanism,
                    f"not tried: job {other.id} of the same autocluster was "
                    f"rejected first ({rr.mechanism}: {rr.explanation})",
                )
    if both() == 0:
        return NOT_REACHED, REQUIREMENTS, "not tried, and no slot satisfies both Requirements"
    return (
        NOT_REACHED,
        "",
        f"not tried this cycle: {job.submitter} stopped before reaching it (its pie slice or ceiling was used up)",
    )


def _refused(view: PoolView, job_id: str, reason: str) -> JobReport:
    return JobReport(
        job_id,
        "",
        None,
        len(view.pool.slots),
        len(view.start.entries),
        [],
        0,
        0,
        [],
        {},
        [],
        REFUSED,
        "accounting-group-map",
        reason,
    )


__all__ = [
    "ALREADY_MATCHED",
    "MATCHED",
    "NOT_IDLE",
    "NOT_REACHED",
    "REFUSED",
    "REJECTED",
    "JobReport",
    "analyze_job",
    "analyze_submitter",
    "decided_by",
]
