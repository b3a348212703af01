"""DIRAC in the cycle: TaskQueues, their priorities, the lottery and the share corrector.

A TaskQueue is (owner, group, autocluster): the jobs of one owner and group with the
same requirements.  Every pick recomputes the TaskQueue priorities over the queues that
still have pending jobs (an emptied queue's share goes to its entity's other queues)
and draws the lottery with the seeded generator.  Inside the winning queue it does what
``TaskQueueDB`` does: every job draws ``RAND() / RealPriority`` and the smallest draw's
``Priority`` level wins (:func:`dirac.level_draw`); one of that level's 50 lowest job
ids is then taken at random.

With ``DIRAC_ENABLE_SHARES_CORRECTION`` the group shares are first rescaled by the
WMSHistory corrector: the store keeps, per group, the number of running jobs seen at
each cycle; each slice of ``DIRAC_CORRECTION_SLICES`` averages those counts over its
whole time span (:func:`dirac.window_averages`: a cycle in which a group ran nothing
counts as zero) and compares the group's part of the running jobs with its part of
the shares.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from ..config.policy_params import PolicyConfig
from ..pool.ads import Job
from . import dirac
from .jobs import Ledger, Pending, Runner, group_of, number

# TaskQueueDB.matchAndGetJob fetches this many of the drawn level's lowest job ids and
# takes one of them at random (its numJobsPerTry).
JOBS_PER_TRY = 50


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
        """TaskQueue priorities over the queues that still hold jobs (``self.weights``)."""
        tqs = [dirac.TaskQueue(t, *self.meta[t], ()) for t in self.weights]
        shares = {g: self.cfg.dirac_share(g) * self.factor.get(g, 1.0) for g in {t.group for t in tqs}}
        return dirac.tq_priorities(tqs, shares, self.cfg.dirac_job_sharing, weights=self.weights)

    def _weigh(self, tq: str) -> None:
        """Set the queue's weight, the mean (or sum) of its jobs' real priorities; an
        emptied queue leaves the lottery."""
        levels = self.levels[tq]
        n = sum(len(q) for q in levels.values())
        total = sum(dirac.real_priority(p) * len(q) for p, q in levels.items())
        if n == 0:
            self.weights.pop(tq, None)
        else:
            self.weights[tq] = total / n if self.cfg.dirac_consolidation == "avg" else total

    def begin_cycle(self, now, pending, running, ledger, pool) -> None:
        self.now = now
        self.rng = random.Random(f"{self.cfg.dirac_seed}:{now!r}")
        self.levels: dict[str, dict[int, list[Pending]]] = {}
        self.meta: dict[str, tuple[str, str]] = {}
        for item in pending:
            tq = self._tq(item)
            level = int(number(item.job.ad, "DiracPriority", now, 1.0))
            self.levels.setdefault(tq, {}).setdefault(level, []).append(item)
            self.meta[tq] = (item.job.submitter, self._group(item.job))
        self.weights: dict[str, float] = {}
        for tq, levels in self.levels.items():
            for jobs in levels.values():
                jobs.sort(key=lambda p: (p.job.cluster, p.job.proc))
            self._weigh(tq)
        if self.cfg.dirac_correction:
            groups = sorted({g for _o, g in self.meta.values()})
            shares = {g: self.cfg.dirac_share(g) for g in groups}
            history = {g: h.buckets for g, h in ledger.items()}
            slices = [
                (dirac.Slice(w, m), {g: u for g, u in dirac.window_averages(history, now, span).items() if g in shares})
                for span, w, m in self.cfg.dirac_slices
            ]
            self.factor = dirac.correction(shares, slices, self.cfg.dirac_max_global_correction, self.cfg.dirac_compat)
        self.prio = self._priorities()
        self.first = dict(self.prio)

    def pick(self) -> Optional[Pending]:
        if not self.prio:
            return None
        tq = dirac.lottery_order(sorted(self.prio), self.prio, self.rng)[0]
        levels = self.levels[tq]
        jobs = levels[dirac.level_draw({p: len(q) for p, q in levels.items()}, self.rng)]
        item = jobs.pop(self.rng.randrange(min(JOBS_PER_TRY, len(jobs))))
        before = self.weights[tq]
        self._weigh(tq)
        if self.weights.get(tq) != before:
            self.prio = self._priorities()
        return item

    def on_reject(self, item: Pending) -> None:
        """A TaskQueue whose job found no slot leaves the lottery (a pilot would not match it)."""
        self.levels.pop(self._tq(item), None)
        self.weights.pop(self._tq(item), None)
        self.prio = self._priorities()

    def attributes(self, job) -> dict[str, Any]:
        return {}

    def report(self) -> list[dict[str, Any]]:
        rows = []
        for tq, p in self.first.items():
            owner, group, ac = tq.split("|")
            rows.append(
                {
                    "name": tq,
                    "owner": owner,
                    "group": group,
                    "autocluster": int(ac),
                    "correction": self.factor.get(group, 1.0),
                    "priority": p,
                }
            )
        return sorted(rows, key=lambda r: (-r["priority"], r["name"]))

    def ledger(self, now: float, running: Sequence[Job], old: Mapping[str, Ledger]) -> dict[str, Ledger]:
        """Per group, the running-job count of every cycle within the longest slice (a
        group known before and running nothing now gets a 0)."""
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
            kept = [x for i in range(0, len(samples) - 1, 2) if now - samples[i] <= span for x in samples[i : i + 2]]
            out[g] = Ledger(counts.get(g, 0.0), tuple(kept), now)
        return out


__all__ = ["JOBS_PER_TRY", "DiracRunner"]
