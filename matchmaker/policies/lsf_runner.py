"""LSF fair share in the cycle: share accounts, their usage, the dispatch walk, ``bhpart -r`` rows.

Share accounts are submitters; with accounting groups (``physics.hep.alice@d``) the
dotted prefixes form the share tree, walked top down.  The account with the highest
dynamic priority that still has pending work goes first, its jobs in queue order; each
match adds the job's slots (and the run time its limit commits) and recomputes.

Where each term of ``D`` comes from (docs/policies.md has the sources):

* ``cpu_time`` -- stored, decayed CPU hours: a job's ``RemoteUserCpu + RemoteSysCpu``
  spread evenly over its run, or its wall time times its slots when the ad has neither.
* ``run_time`` -- the running jobs' wall hours (:func:`~.jobs.wall_seconds`) times slots;
  decayed as it was used with ``LSF_RUN_TIME_DECAY``.
* ``historical_run_time`` -- the stored decayed run hours of every job minus those of
  the jobs still running: what finished (or was preempted) jobs ran.
* ``committed_run_time`` -- a running job with a run limit (``WallClockLimit`` seconds,
  else ``LSF_RUNLIMIT``) commits its whole limit; a job without one commits only what it ran.
* ``fairshare_adjustment`` -- the memory plug-in over the running jobs' ``MemoryUsage``
  (else ``RequestMemory``) and the pool's memory per CPU.
* GPU hours -- the jobs' ``RequestGPUs`` times their wall hours.

The ledger keeps per account the decayed CPU hours (``value``) and, in ``buckets``, the
decayed run hours and GPU-hours of all its jobs, each brought to the time of update.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Optional

from ..config.policy_params import PolicyConfig
from ..pool.ads import Job
from . import lsf
from .jobs import (
    Ledger,
    Pending,
    Runner,
    cpu_seconds,
    cpus,
    evaluate_number,
    number,
    seconds_since,
    stamp,
    wall_seconds,
)

RUN, GPU = 0, 1  # positions in a ledger's buckets


def gpus(job: Job, now: float) -> float:
    """Physical GPUs a job holds: its ``RequestGPUs`` (0 when absent)."""
    return max(number(job.ad, "RequestGPUs", now), 0.0)


def run_limit_hours(job: Job, now: float, p: lsf.LsfParams) -> float:
    """The run limit a job committed: ``WallClockLimit`` (seconds), else the queue's
    ``LSF_RUNLIMIT``; 0 when neither is set."""
    limit = number(job.ad, "WallClockLimit", now)
    return limit / 3600.0 if limit > 0 else p.run_limit_hours


def used_memory(job: Job, now: float) -> float:
    """Memory (MB) a started job uses: ``MemoryUsage``, else its ``RequestMemory``."""
    used = number(job.ad, "MemoryUsage", now, -1.0)
    return used if used >= 0 else max(number(job.ad, "RequestMemory", now), 0.0)


def _bucket(h: Ledger, i: int) -> float:
    return h.buckets[i] if len(h.buckets) > i else 0.0


class LsfRunner(Runner):
    name = "lsf"

    def __init__(self, cfg: PolicyConfig) -> None:
        self.p, self.expr = cfg.lsf, cfg.priority_expr
        self.usage: dict[str, lsf.LsfUsage] = {}
        self.memory: dict[str, tuple[float, float]] = {}  # account -> (used memory, used slots)
        self.slot_memory = 0.0
        self.now = 0.0

    def shares(self, account: str) -> float:
        s = self.p.shares
        return s.get(account, s.get(account.partition("@")[0], self.p.default_shares))

    def begin_cycle(self, now, pending, running, ledger, pool) -> None:
        self.now = now
        self.slot_memory = pool.memory / pool.cpus if pool.cpus > 0 else 0.0
        self.queues: dict[str, deque[Pending]] = {}
        for item in pending:
            self.queues.setdefault(item.job.submitter, deque()).append(item)
        accounts = {p.job.submitter for p in pending} | {j.submitter for j in running} | set(ledger)
        self.tree = any("." in a.partition("@")[0] for a in accounts)
        mine: dict[str, list[Job]] = {}
        for j in running:
            mine.setdefault(j.submitter, []).append(j)
        for a in sorted(accounts):
            self.usage[a] = self._account_usage(a, ledger.get(a), mine.get(a, []))

    def _width(self, job: Job) -> float:
        return cpus(job, self.now) if self.p.run_time_times_slots else 1.0

    def _account_usage(self, account: str, hist: Optional[Ledger], jobs: Sequence[Job]) -> lsf.LsfUsage:
        """An account's :class:`~.lsf.LsfUsage` at the start of the cycle."""
        p, now = self.p, self.now
        h = hist if hist is not None else Ledger(updated=now)
        d = lsf.tenth_after(max(0.0, now - h.updated) / 3600.0, p.hist_hours)
        run = run_decayed = committed = gpu = gpu_decayed = slots = memory = 0.0
        for j in jobs:
            wall_h = wall_seconds(j, now) / 3600.0
            k = lsf.decayed_hours(wall_h, p.hist_hours)
            width, g = self._width(j), gpus(j, now)
            run += (k if p.run_time_decay else wall_h) * width
            run_decayed += k * width
            gpu += (k if p.run_time_decay else wall_h) * g
            gpu_decayed += k * g
            limit = run_limit_hours(j, now, p)
            committed += max(0.0, limit - wall_h) * width if limit > 0 else 0.0
            slots += cpus(j, now)
            memory += used_memory(j, now)
        self.memory[account] = (memory, slots)
        return lsf.LsfUsage(
            cpu_hours=h.value * d,
            run_hours=run,
            hist_run_hours=max(0.0, _bucket(h, RUN) * d - run_decayed),
            committed_run_hours=run + committed,
            job_slots=slots,
            fairshare_adjustment=self._adjustment(account, slots),
            gpu_run_hours=gpu,
            hist_gpu_run_hours=max(0.0, _bucket(h, GPU) * d - gpu_decayed),
        )

    def _adjustment(self, account: str, job_slots: float) -> float:
        used, used_slots = self.memory.get(account, (0.0, 0.0))
        return lsf.memory_adjustment(job_slots, used, used_slots, self.slot_memory, self.p.adjustment_threshold)

    def account_attributes(self, account: str) -> dict[str, float]:
        """What ``MATCHMAKER_POLICY_PRIORITY_EXPR`` sees of an account."""
        return self._attributes(account, self.usage.get(account, lsf.LsfUsage()))

    def _attributes(self, node: str, u: lsf.LsfUsage) -> dict[str, float]:
        return {
            "LsfShares": self.shares(node),
            "LsfCpuHours": u.cpu_hours,
            "LsfRunHours": u.run_hours,
            "LsfHistRunHours": u.hist_run_hours,
            "LsfJobSlots": u.job_slots,
            "LsfCommittedRunHours": u.committed_run_hours - u.run_hours,
            "LsfFairshareAdjustment": u.fairshare_adjustment,
            "LsfGpuRunHours": u.gpu_run_hours,
            "LsfHistGpuRunHours": u.hist_gpu_run_hours,
        }

    def node_priority(self, node: str, u: lsf.LsfUsage) -> float:
        """The dynamic priority of an account or tree node with usage ``u``."""
        if self.expr is not None:
            v = evaluate_number(self.expr, self._attributes(node, u), self.now)
            return v if v is not None else 0.0
        return lsf.dynamic_priority(self.shares(node), u, self.p)

    def priority(self, account: str) -> float:
        return self.node_priority(account, self.usage.get(account, lsf.LsfUsage()))

    def pick(self) -> Optional[Pending]:
        ready = {a for a, q in self.queues.items() if q}
        if not ready:
            return None
        if self.tree:
            leaf = lsf.pick_leaf(
                self._children(ready | set(self.usage)), {}, self.usage, ready, self.p, priority=self.node_priority
            )
            best = leaf if leaf is not None else max(sorted(ready), key=self.priority)
        else:
            best = max(sorted(ready), key=self.priority)
        return self.queues[best].popleft()

    def _children(self, accounts: set[str]) -> dict[str, list[str]]:
        """The share tree over ``accounts``: accounting-group prefixes (``group_a.sub.user@d``)
        are its inner nodes, ``""`` its root."""
        children: dict[str, list[str]] = {}
        for account in sorted(accounts):
            parts = account.partition("@")[0].split(".")
            parent = ""
            for depth in range(1, len(parts)):
                node = ".".join(parts[:depth])
                if node not in children.setdefault(parent, []):
                    children[parent].append(node)
                parent = node
            if account not in children.setdefault(parent, []):
                children[parent].append(account)
        return children

    def on_match(self, job) -> None:
        a = job.submitter
        u = self.usage.get(a, lsf.LsfUsage())
        committed = run_limit_hours(job, self.now, self.p) * self._width(job)
        slots = u.job_slots + cpus(job, self.now)
        self.usage[a] = replace(
            u,
            job_slots=slots,
            committed_run_hours=u.committed_run_hours + committed,
            fairshare_adjustment=self._adjustment(a, slots),
        )

    def attributes(self, job) -> dict[str, Any]:
        return {**self.account_attributes(job.submitter), "LsfDynamicPriority": self.priority(job.submitter)}

    def report(self) -> list[dict[str, Any]]:
        """``bhpart -r``: each level of the share tree (``/`` first, then each group's
        members under ``/group/``), best priority first within a level."""
        children = self._children(set(self.usage)) if self.tree else {"": sorted(self.usage)}
        rows: list[dict[str, Any]] = []

        def total(node: str) -> lsf.LsfUsage:
            u = self.usage.get(node, lsf.LsfUsage())
            for c in children.get(node, ()):
                u = lsf.add_usage(u, total(c))
            return u

        def level(node: str, path: str) -> None:
            kids = [(c, total(c)) for c in children.get(node, ())]
            ranked = sorted(((-self.node_priority(c, u), c, u) for c, u in kids), key=lambda t: (t[0], t[1]))
            for neg, c, u in ranked:
                rows.append(
                    {
                        "parent": path,
                        "name": c,
                        "shares": self.shares(c),
                        "priority": -neg,
                        "started": u.job_slots,
                        "cpu_hours": u.cpu_hours,
                        "run_hours": u.run_hours,
                        "hist_run_hours": u.hist_run_hours,
                        "adjust": u.fairshare_adjustment,
                    }
                )
            for _neg, c, _u in ranked:
                if children.get(c):
                    level(c, f"{path}{c.rpartition('.')[2]}/")

        level("", "/")
        return rows

    def ledger(self, now: float, running: Sequence[Job], old: Mapping[str, Ledger]) -> dict[str, Ledger]:
        self.now = now
        add: dict[str, list[float]] = {}
        for j in running:
            piece = lsf.decayed_hours(seconds_since(j, old, now) / 3600.0, self.p.hist_hours)
            cpu, wall = cpu_seconds(j, now), wall_seconds(j, now)
            rate = cpus(j, now) if cpu is None else (cpu / wall if wall > 0 else 0.0)
            acc = add.setdefault(j.submitter, [0.0, 0.0, 0.0])
            acc[0] += rate * piece
            acc[1] += self._width(j) * piece
            acc[2] += gpus(j, now) * piece
        out = {}
        for a in stamp(running, old):
            h = old.get(a, Ledger(updated=now))
            d = lsf.tenth_after(max(0.0, now - h.updated) / 3600.0, self.p.hist_hours)
            cpu_h, run_h, gpu_h = add.get(a, (0.0, 0.0, 0.0))
            out[a] = Ledger(h.value * d + cpu_h, (_bucket(h, RUN) * d + run_h, _bucket(h, GPU) * d + gpu_h), now)
        return out


__all__ = ["LsfRunner", "gpus", "run_limit_hours", "used_memory"]
