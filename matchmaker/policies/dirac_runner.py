"""DIRAC in the cycle: TaskQueues, their priorities, the lottery and the share corrector.

A TaskQueue is (owner, group, autocluster): the jobs of one owner and group with the
same requirements.  Every pick recomputes the TaskQueue priorities over the queues that
still have pending jobs (an emptied queue's share goes to its entity's other queues),
draws the lottery with the seeded generator, then draws one job-priority level inside
the winning queue and takes its lowest job id.

With ``DIRAC_ENABLE_SHARES_CORRECTION`` the group shares are first rescaled by the
WMSHistory corrector: the store keeps, per group, the number of running jobs seen at
each cycle; each slice of ``DIRAC_CORRECTION_SLICES`` averages those samples over its
time span (a box window) and compares the group's part of the running jobs with its
part of the shares.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from ..pool.ads import Job
from . import dirac
from .jobs import Ledger, Pending, Runner, group_of, number
from .params import PolicyConfig


def window_average(samples: Sequence[float], now: float, span: float) -> float:
    """Mean running count of ``(time, count, time, count, ...)`` samples younger than ``span``."""
    counts = [samples[i + 1] for i in range(0, len(samples) - 1, 2) if now - samples[i] < span]
    return sum(counts) / len(counts) if counts else 0.0


class DiracRunner(Runner):
    name = "dirac"

    def __init__(self, cfg: PolicyConfig) -> None:
        self.cfg = cfg
        self.prio: dict[str, float] = {}
        self.factor: dict[str, float] = {}
        self.now = 0.0

    def _tq(self, item: Pending) -> str:
        return f"{item.job.submitter}|{self._group(item.job)}|{item.autocluster}"

    def _group(self, job: Job) -> str:
        return group_of(job, self.now) or self.cfg.dirac_default_group

    def _priorities(self) -> dict[str, float]:
        """TaskQueue priorities over the queues that still hold jobs."""
        live = [t for t, levels in self.levels.items() if any(levels.values())]
        tqs = [dirac.TaskQueue(t, *self.meta[t], ()) for t in live]
        weights = {t: self._weight(t) for t in live}
        shares = {g: self.cfg.dirac_share(g) * self.factor.get(g, 1.0) for g in {t.group for t in tqs}}
        return dirac.tq_priorities(tqs, shares, self.cfg.dirac_job_sharing, weights=weights)

    def _weight(self, tq: str) -> float:
        levels = self.levels[tq]
        n = sum(len(q) for q in levels.values())
        total = sum(r * len(q) for r, q in levels.items())
        return total / n if self.cfg.dirac_consolidation == "avg" and n else total

    def begin_cycle(self, now, pending, running, ledger, pool_cpus) -> None:
        self.now = now
        self.rng = random.Random(f"{self.cfg.dirac_seed}:{now!r}")
        self.levels: dict[str, dict[float, deque[Pending]]] = {}
        self.meta: dict[str, tuple[str, str]] = {}
        for item in pending:
            tq = self._tq(item)
            real = dirac.real_priority(number(item.job.ad, "DiracPriority", now, 1.0))
            self.levels.setdefault(tq, {}).setdefault(real, deque()).append(item)
            self.meta[tq] = (item.job.submitter, self._group(item.job))
        if self.cfg.dirac_correction:
            groups = sorted({g for _o, g in self.meta.values()})
            shares = {g: self.cfg.dirac_share(g) for g in groups}
            slices = [(dirac.Slice(w, m), {g: window_average(ledger[g].buckets, now, span)
                                           for g in groups if g in ledger})
                      for span, w, m in self.cfg.dirac_slices]
            self.factor = dirac.correction(shares, slices, self.cfg.dirac_max_global_correction,
                                           self.cfg.dirac_compat)
        self.prio = self._priorities()
        self.first = dict(self.prio)
        self.stale = False

    def pick(self) -> Optional[Pending]:
        if self.stale:
            self.prio = self._priorities()
            self.stale = False
        if not self.prio:
            return None
        tq = dirac.lottery_order(sorted(self.prio), self.prio, self.rng)[0]
        levels = self.levels[tq]
        level = min(sorted(r for r, q in levels.items() if q), key=lambda r: self.rng.random() / r)
        item = levels[level].popleft()
        # an emptied queue moves its entity's share; with mixed job priorities the mean
        # weight moves too; otherwise the priorities stand
        self.stale = not any(levels.values()) or len([q for q in levels.values() if q]) > 1 or not levels[level]
        return item

    def on_reject(self, item: Pending) -> None:
        """A TaskQueue whose job found no slot leaves the lottery (a pilot would not match it)."""
        self.levels.pop(self._tq(item), None)
        self.stale = True

    def attributes(self, job) -> dict[str, Any]:
        return {}

    def report(self) -> list[dict[str, Any]]:
        rows = []
        for tq, p in self.first.items():
            owner, group, ac = tq.split("|")
            rows.append({"name": tq, "owner": owner, "group": group, "autocluster": int(ac),
                         "correction": self.factor.get(group, 1.0), "priority": p})
        return sorted(rows, key=lambda r: (-r["priority"], r["name"]))

    def ledger(self, now: float, running: Sequence[Job], old: Mapping[str, Ledger]) -> dict[str, Ledger]:
        """Per group, the running-job count of every cycle within the longest slice."""
        if not self.cfg.dirac_correction:
            return dict(old)
        self.now = now
        counts: dict[str, float] = {}
        for j in running:
            g = self._group(j)
            counts[g] = counts.get(g, 0.0) + 1
        span = max((s for s, _w, _m in self.cfg.dirac_slices), default=0.0)
        out = {}
        for g in sorted(set(old) | set(counts)):
            samples = list(old[g].buckets) if g in old else []
            samples += [now, counts.get(g, 0.0)]
            kept = [x for i in range(0, len(samples) - 1, 2) if now - samples[i] < span
                    for x in samples[i:i + 2]]
            out[g] = Ledger(counts.get(g, 0.0), tuple(kept), now)
        return out


__all__ = ["DiracRunner", "window_average"]
