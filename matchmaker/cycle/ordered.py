"""A cycle under another batch system's priority policy: the policy orders, matching matches.

Instead of the pie spin, :func:`negotiate_ordered` asks the policy's runner
(:mod:`matchmaker.policies.runners`) for the next pending job again and again; each
job's request carries the policy's numbers as attributes and is matched by the same
machinery as always (Requirements both ways, Rank, the negotiator's job ranks,
concurrency limits, RANK preemption).  A matched job is reported to the runner,
which may re-order what is left (LSF); a job that finds no slot is rejected with its
reason, the rest of its autocluster is skipped (they ask for the same), and the
walk goes on.  There are no submitter limits: the policy's order is
the whole allocation.  Group quotas are not applied under these policies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..policies.jobs import Pending, PoolShape, Runner
from ..pool.ads import RUNNING, Job, Pool
from .ephemeral import annotate_for
from .explain import PRIORITY_POLICY, explain_rejection
from .matching import Budget
from .state import Cycle, SubmitterState


@dataclass
class _One:
    """One job as the run :meth:`Cycle.commit` expects."""

    job: Job
    next: int = 0

    def current(self) -> Job:
        return self.job


def pool_cpus(pool: Pool) -> float:
    """The pool's CPUs (each slot's ``Cpus``, 1 when absent)."""
    total = 0.0
    for s in pool.slots:
        v = s.ad.evaluate("Cpus")
        total += float(v) if type(v) in (int, float) else 1.0
    return total


def pool_shape(pool: Pool) -> PoolShape:
    """The pool's CPUs, its machines (the distinct ``Machine`` of the slots; a slot without
    one, the part of its name after ``@``), its memory (``Memory``, MB) and disk (``Disk``, KiB)."""
    machines = set()
    memory = disk = 0.0
    for s in pool.slots:
        v = s.ad.evaluate("Machine")
        machines.add(v if type(v) is str else s.name.rpartition("@")[2])
        m, d = s.ad.evaluate("Memory"), s.ad.evaluate("Disk")
        memory += float(m) if type(m) in (int, float) else 0.0
        disk += float(d) if type(d) in (int, float) else 0.0
    return PoolShape(pool_cpus(pool), float(len(machines)), memory, disk)


def negotiate_ordered(cycle: Cycle, pool: Pool, runner: Runner, ledger: Mapping[str, Any]) -> list[SubmitterState]:
    """Match jobs in the runner's order until none is left or no slot is; returns the
    submitters in the order they were first served."""
    by_name = {s.name: s for s in cycle.submitters}
    pending = [
        Pending(job, run.autocluster) for s in cycle.submitters for run in s.queue.runs for job in run.jobs[run.next :]
    ]
    running = [j for j in pool.jobs if j.status == RUNNING]
    runner.begin_cycle(cycle.now, pending, running, ledger, pool_shape(pool))
    for job_id, why in runner.refused():
        cycle.reject(job_id, "refused by the priority policy", PRIORITY_POLICY, why)
    caches: dict[tuple[str, int], list] = {}
    order: list[SubmitterState] = []
    dead: set[tuple[str, int]] = set()
    while cycle.slots_left():
        item = runner.pick()
        if item is None:
            break
        job, s = item.job, by_name[item.job.submitter]
        if (s.name, item.autocluster) in dead:
            continue
        if s not in order:
            order.append(s)
        req = annotate_for(job.ad, s.name, s.eup, cycle.usage, None)
        req.update(runner.attributes(job))
        budget = Budget(math.inf, math.inf)
        cache = caches.setdefault((s.name, item.autocluster), [None])
        cand, reason, _ = cycle.find(req, item.autocluster, s, False, budget, cache)
        if cand is None:
            cycle.reject(
                job.id,
                reason,
                *(
                    explain_rejection(
                        cycle, s, req, reason, only_rank=False, budget=budget, autocluster=item.autocluster
                    )
                    if cycle.explains
                    else ()
                ),
            )
            dead.add((s.name, item.autocluster))  # its other jobs ask the same: skip them
            runner.on_reject(item)
            continue
        cycle.commit(s, _One(job), cand, req, budget)
        runner.on_match(job)
    return order + [s for s in cycle.submitters if s not in order]


def ordered_cycle(
    pool: Pool,
    settings: Any,
    priorities: Any,
    now: float,
    runner: Any,
    ledger: Mapping[str, Any],
    usage: Any = None,
    progress: Any = None,
    carry: Any = None,
    explain: bool = True,
) -> Any:
    """One whole cycle under ``runner``'s order (see the module docstring); ``explain``: as
    :func:`matchmaker.cycle.negotiator.negotiate`'s."""
    cycle = Cycle(pool, settings, priorities, now, usage=usage, progress=progress, carry=carry, explain=explain)
    if settings.group_tree is not None:
        cycle.warnings.append(
            f"GROUP_NAMES: group quotas are not applied under MATCHMAKER_PRIORITY_POLICY = {runner.name}"
        )
    order = negotiate_ordered(cycle, pool, runner, ledger)
    result = cycle.result(order)
    cycle.close()
    return result


__all__ = ["negotiate_ordered", "ordered_cycle", "pool_cpus", "pool_shape"]
