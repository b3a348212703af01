"""Why does this slot reject everything: the slot-side report of ``matchmaker analyze``.

For one slot, over the idle jobs' autoclusters (one request per autocluster, as the
cycle negotiates them): the slot's Requirements clause by clause with the requests each
clause accepts alone and in turn, which clause rejects the most requests, which
requests both sides accept, and what the cycle did with the slot -- the job it took
next, or why it was left alone (not considered, or no request it accepts was matched).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..pool.ads import Job
from .clauses import ClauseCount, accepts, count_clauses, evaluator, first_failures
from .partitionable import slot_lines
from .pool_view import PoolView


@dataclass
class SlotReport:
    """Everything ``analyze --slot`` says about one slot."""

    slot: str
    considered: bool  # kept by the cycle's trim and NEGOTIATOR_SLOT_CONSTRAINT
    requests: int  # autoclusters (one request each) of idle jobs
    jobs: int  # idle jobs behind them
    clauses: list[ClauseCount]
    slot_accepts: list[str]  # first job of each request the slot's Requirements accept
    both_ways: list[str]  # ... that also accept the slot
    rejections: list[tuple[str, int]]  # slot clause -> requests it decided, most first
    next_job: Optional[str]  # the job the cycle matched to it
    verdict: str
    notes: list[str] = field(default_factory=list)


def _requests(view: PoolView) -> list[tuple[Job, int]]:
    """(first job, jobs in the autocluster) per autocluster of each submitter's queue."""
    out: list[tuple[Job, int]] = []
    for queue in view.start.queues.values():
        index: dict[int, int] = {}
        for run in queue.runs:
            if run.autocluster in index:
                job, n = out[index[run.autocluster]]
                out[index[run.autocluster]] = (job, n + len(run.jobs))
            else:
                index[run.autocluster] = len(out)
                out.append((run.jobs[0], len(run.jobs)))
    return out


def analyze_slot(view: PoolView, name: str) -> SlotReport:
    """The report for the slot called ``name``; ``KeyError`` when there is none."""
    slot = next((s for s in view.pool.slots if s.name == name), None)
    if slot is None:
        raise KeyError(name)
    entry = next((e for e in view.start.entries if e.slot.name == name), None)
    ad = entry.ad if entry is not None else slot.ad
    ev = evaluator(view.start.usage, view.now)
    requests = _requests(view)
    reqs = [view.request(j) for j, _ in requests]
    clauses = count_clauses(ad, reqs, ev)
    mine = [i for i, r in enumerate(reqs) if accepts(ad, r, ev)]
    both = [i for i in mine if accepts(reqs[i], ad, ev)]
    fails: dict[str, list[int]] = {}
    for i, r in enumerate(reqs):
        for text, _ in first_failures([ad], r, ev).items():
            fails.setdefault(text, []).append(i)
    m = view.match_on(name)
    if m is not None:
        verdict = f"takes job {m.job} of {m.submitter} ({m.reason})"
    elif entry is None:
        verdict = (
            "not considered by the cycle (claimed with NEGOTIATOR_CONSIDER_PREEMPTION = false, retiring, "
            "or outside NEGOTIATOR_SLOT_CONSTRAINT)"
        )
    elif not both:
        verdict = "no idle request satisfies both its Requirements and the slot's"
    else:
        firsts = ", ".join(requests[i][0].id for i in both[:5])
        verdict = (
            f"accepts {len(both)} request(s) both ways (jobs {firsts}) but the cycle matched none of "
            "them here (see analyze --job for each)"
        )
    report = SlotReport(
        name,
        entry is not None,
        len(requests),
        sum(n for _, n in requests),
        clauses,
        [requests[i][0].id for i in mine],
        [requests[i][0].id for i in both],
        sorted(((t, len(p)) for t, p in fails.items()), key=lambda x: -x[1]),
        m.job if m is not None else None,
        verdict,
    )
    report.notes = [f"{c.text} is undefined for {c.undefined} request(s)" for c in clauses if c.undefined] + [
        f"{c.text} is an error for {c.error} request(s)" for c in clauses if c.error
    ]
    if ad.get_node("Requirements") is None:
        report.notes.append("the slot has no Requirements: it matches no job")
    report.notes += slot_lines(view, slot, [j for j, _ in requests])
    return report


__all__ = ["SlotReport", "analyze_slot"]
