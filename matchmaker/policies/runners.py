"""The four models as the cycle's runners: order of jobs, attributes, reports, usage kept.

* LSF -- share accounts are submitters; the account with the highest dynamic
  priority that still has pending work goes first, its jobs in queue order; each
  match adds the job's slots and recomputes.  CPU time is the stored slot-hours,
  decayed to one tenth after ``LSF_HIST_HOURS``.
* Maui -- every idle job gets its start priority once; jobs are tried highest first
  (then QDate, ClusterId, ProcId).  Fair share compares the user's bucketed usage
  with ``MAUI_USERCFG_<u>_FSTARGET``.
* DIRAC -- in :mod:`.dirac_runner`.
* Slurm -- in :mod:`.slurm_runner`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Optional

from ..pool.ads import Job
from . import lsf, maui
from .dirac_runner import DiracRunner
from .jobs import Ledger, Pending, Runner, SortedRunner, cpus, evaluate_number, group_of, number, text, wall_seconds
from .params import PolicyConfig, maui_target
from .slurm_runner import SlurmRunner


def _slot_seconds(running: Sequence[Job], since: Mapping[str, Ledger], now: float) -> dict[str, float]:
    """Slot-seconds each submitter's running jobs used since its last ledger update."""
    out: dict[str, float] = {}
    for j in running:
        old = since.get(j.submitter)
        wall = wall_seconds(j, now)
        dt = min(max(0.0, now - old.updated), wall) if old is not None else wall
        out[j.submitter] = out.get(j.submitter, 0.0) + cpus(j, now) * dt
    return out


def _stamp(running: Sequence[Job], old: Mapping[str, Ledger], now: float) -> set[str]:
    return {j.submitter for j in running} | set(old)


class LsfRunner(Runner):
    name = "lsf"

    def __init__(self, cfg: PolicyConfig) -> None:
        self.p, self.expr = cfg.lsf, cfg.priority_expr
        self.usage: dict[str, lsf.LsfUsage] = {}
        self.now = 0.0

    def shares(self, account: str) -> float:
        s = self.p.shares
        return s.get(account, s.get(account.partition("@")[0], self.p.default_shares))

    def begin_cycle(self, now, pending, running, ledger, pool_cpus) -> None:
        self.now = now
        self.queues: dict[str, deque[Pending]] = {}
        for item in pending:
            self.queues.setdefault(item.job.submitter, deque()).append(item)
        accounts = {p.job.submitter for p in pending} | {j.submitter for j in running} | set(ledger)
        self.tree = any("." in a.partition("@")[0] for a in accounts)
        for a in sorted(accounts):
            mine = [j for j in running if j.submitter == a]
            hist = ledger.get(a, Ledger())
            age_h = max(0.0, now - hist.updated) / 3600.0
            self.usage[a] = lsf.LsfUsage(
                cpu_hours=hist.value * lsf.tenth_after(age_h, self.p.hist_hours),
                run_hours=sum(wall_seconds(j, now) / 3600.0 * (cpus(j, now) if self.p.run_time_times_slots else 1)
                              for j in mine),
                job_slots=sum(cpus(j, now) for j in mine))

    def account_attributes(self, account: str) -> dict[str, float]:
        """What ``MATCHMAKER_POLICY_PRIORITY_EXPR`` sees of an account."""
        u = self.usage.get(account, lsf.LsfUsage())
        return {"LsfShares": self.shares(account), "LsfCpuHours": u.cpu_hours, "LsfRunHours": u.run_hours,
                "LsfHistRunHours": u.hist_run_hours, "LsfJobSlots": u.job_slots}

    def priority(self, account: str) -> float:
        if self.expr is not None:
            v = evaluate_number(self.expr, self.account_attributes(account), self.now)
            return v if v is not None else 0.0
        return lsf.dynamic_priority(self.shares(account), self.usage.get(account, lsf.LsfUsage()), self.p)

    def pick(self) -> Optional[Pending]:
        ready = {a for a, q in self.queues.items() if q}
        if not ready:
            return None
        if self.tree:
            best = self._walk(ready)
        else:
            best = max(sorted(ready), key=self.priority)
        return self.queues[best].popleft()

    def _walk(self, ready: set[str]) -> str:
        """The hierarchical pick: accounting-group prefixes (``group_a.sub.user@d``) are
        the share tree, walked top down by :func:`lsf.pick_leaf`."""
        children: dict[str, list[str]] = {}
        for account in sorted(ready | set(self.usage)):
            parts = account.partition("@")[0].split(".")
            parent = ""
            for depth in range(1, len(parts)):
                node = ".".join(parts[:depth])
                if node not in children.setdefault(parent, []):
                    children[parent].append(node)
                parent = node
            if account not in children.setdefault(parent, []):
                children[parent].append(account)

        def priority(node: str, u: lsf.LsfUsage) -> float:
            if self.expr is not None:
                attrs = {"LsfShares": self.shares(node), "LsfCpuHours": u.cpu_hours, "LsfRunHours": u.run_hours,
                         "LsfHistRunHours": u.hist_run_hours, "LsfJobSlots": u.job_slots}
                v = evaluate_number(self.expr, attrs, self.now)
                return v if v is not None else 0.0
            return lsf.dynamic_priority(self.shares(node), u, self.p)

        leaf = lsf.pick_leaf(children, {}, self.usage, ready, self.p, priority=priority)
        return leaf if leaf is not None else max(sorted(ready), key=self.priority)

    def on_match(self, job) -> None:
        u = self.usage.get(job.submitter, lsf.LsfUsage())
        self.usage[job.submitter] = replace(u, job_slots=u.job_slots + cpus(job, self.now))

    def attributes(self, job) -> dict[str, Any]:
        return {**self.account_attributes(job.submitter), "LsfDynamicPriority": self.priority(job.submitter)}

    def report(self) -> list[dict[str, Any]]:
        rows = [{"name": a, "shares": self.shares(a), "priority": self.priority(a), "started": u.job_slots,
                 "cpu_hours": u.cpu_hours, "run_hours": u.run_hours} for a, u in self.usage.items()]
        return sorted(rows, key=lambda r: (-r["priority"], r["name"]))

    def ledger(self, now, running, old) -> dict[str, Ledger]:
        used = _slot_seconds(running, old, now)
        out = {}
        for a in _stamp(running, old, now):
            h = old.get(a, Ledger(updated=now))
            decayed = h.value * lsf.tenth_after(max(0.0, now - h.updated) / 3600.0, self.p.hist_hours)
            out[a] = Ledger(decayed + used.get(a, 0.0) / 3600.0, updated=now)
        return out


class MauiRunner(SortedRunner):
    name = "maui"

    def __init__(self, cfg: PolicyConfig) -> None:
        self.cfg, self.p = cfg, cfg.maui
        self.prio: dict[str, float] = {}
        self.parts: dict[str, dict[str, dict[str, float]]] = {}
        self.values: dict[str, dict[str, float]] = {}

    def begin_cycle(self, now, pending, running, ledger, pool_cpus) -> None:
        self.now = now
        fs_on = self.p.fs_policy.rstrip("%") != "NONE"
        use = {a: maui.bucket_usage(_shifted(h, now, self.p), self.p.fs_decay, self.p.fs_depth)
               for a, h in ledger.items()}
        total = sum(use.values())
        ujob: dict[str, float] = {}
        uproc: dict[str, float] = {}
        for j in running:
            ujob[j.submitter] = ujob.get(j.submitter, 0.0) + 1
            uproc[j.submitter] = uproc.get(j.submitter, 0.0) + cpus(j, now)
        for item in pending:
            j = item.job
            queue_s = max(0.0, now - number(j.ad, "QDate", now, now))
            wc = number(j.ad, "WallClockLimit", now)
            qos = text(j.ad, "Qos", now)
            group = group_of(j, now)
            xf = maui.xfactor(queue_s, wc, self.p.xfminwclimit, self.p.xfactor_form)
            values = {"SERV": {"QUEUETIME": queue_s / 60.0, "XFACTOR": xf},
                      "TARG": {"TARGETQUEUETIME": maui.target_term(self.cfg.maui_cred("QOS", qos, "QTTARGET") or 0.0,
                                                                   queue_s) if qos else 0.0,
                               "TARGETXFACTOR": maui.target_term(self.cfg.maui_cred("QOS", qos, "XFTARGET") or 0.0,
                                                                 xf) if qos else 0.0},
                      "CRED": {"USER": self.cfg.maui_cred("USER", j.submitter) or 0.0,
                               "GROUP": (self.cfg.maui_cred("GROUP", group) or 0.0) if group else 0.0,
                               "QOS": (self.cfg.maui_cred("QOS", qos) or 0.0) if qos else 0.0},
                      "RES": {"PROC": cpus(j, now), "MEM": number(j.ad, "RequestMemory", now),
                              "WALLTIME": wc, "UJOB": ujob.get(j.submitter, 0.0),
                              "UPROC": uproc.get(j.submitter, 0.0)}}
            if fs_on:
                target = maui_target(self.cfg, "USER", j.submitter)
                values["FS"] = {"FSUSER": maui.fs_delta(target, use.get(j.submitter, 0.0), total,
                                                        self.p.fs_policy.endswith("%"))}
            p = self.p
            if qos:
                sub = dict(p.subweights)
                sub["QUEUETIME"] = p.subweight("QUEUETIME") + (self.cfg.maui_cred("QOS", qos, "QTWEIGHT") or 0.0)
                sub["XFACTOR"] = p.subweight("XFACTOR") + (self.cfg.maui_cred("QOS", qos, "XFWEIGHT") or 0.0)
                p = replace(p, subweights=sub)
            self.parts[j.id] = {c: {"weighted": p.weight(c) * maui.component(v, p, c)} | v for c, v in values.items()}
            system = number(j.ad, "MauiSystemPriority", now)
            self.values[j.id] = {MAUI_ATTRS[sub]: v for comp in values.values() for sub, v in comp.items()}
            if self.cfg.priority_expr is not None:
                v = evaluate_number(self.cfg.priority_expr, self.values[j.id], now)
                self.prio[j.id] = maui.finish(v if v is not None else 0.0, p, system)
            else:
                self.prio[j.id] = maui.start_priority(values, p, system)
        self.sort(pending)

    def key(self, item: Pending) -> tuple:
        j = item.job
        return (-self.prio[j.id], number(j.ad, "QDate", self.now), j.cluster, j.proc)

    def attributes(self, job) -> dict[str, Any]:
        parts = self.parts.get(job.id, {})
        out: dict[str, Any] = {"MauiStartPriority": self.prio.get(job.id, 1.0), **self.values.get(job.id, {})}
        out.update({f"Maui{c.title()}Priority": v["weighted"] for c, v in parts.items()})
        return out

    def report(self) -> list[dict[str, Any]]:
        rows = []
        for jid, prio in self.prio.items():
            row: dict[str, Any] = {"name": jid, "priority": prio}
            row.update({c.lower(): v["weighted"] for c, v in self.parts[jid].items()})
            rows.append(row)
        return sorted(rows, key=lambda r: -r["priority"])

    def ledger(self, now, running, old) -> dict[str, Ledger]:
        used = _slot_seconds(running, old, now)
        out = {}
        for a in _stamp(running, old, now):
            h = old.get(a, Ledger(updated=now))
            b = list(_shifted(h, now, self.p)) or [0.0]
            b[0] += used.get(a, 0.0)
            out[a] = Ledger(b[0], tuple(b[: self.p.fs_depth]), now)
        return out


# What MATCHMAKER_POLICY_PRIORITY_EXPR (and the request ad) sees of each Maui subcomponent.
MAUI_ATTRS = {"QUEUETIME": "MauiQueueMinutes", "XFACTOR": "MauiXFactor", "TARGETQUEUETIME": "MauiTargetQueueTime",
              "TARGETXFACTOR": "MauiTargetXFactor", "USER": "MauiUserPriority",
              "GROUP": "MauiGroupPriority", "QOS": "MauiQosPriority", "FSUSER": "MauiFSUserDelta",
              "PROC": "MauiProcs", "MEM": "MauiMemory", "WALLTIME": "MauiWallTime", "UJOB": "MauiUserJobs",
              "UPROC": "MauiUserProcs"}


def _shifted(h: Ledger, now: float, p: maui.MauiParams) -> tuple[float, ...]:
    """The buckets of ``h`` as seen at ``now``: shifted by the intervals that ended."""
    steps = int(now // p.fs_interval) - int(h.updated // p.fs_interval)
    if steps <= 0:
        return h.buckets
    return ((0.0,) * steps + h.buckets)[: p.fs_depth]


RUNNERS = {"lsf": LsfRunner, "maui": MauiRunner, "dirac": DiracRunner, "slurm": SlurmRunner}


def make_runner(cfg: PolicyConfig) -> Runner:
    """A fresh runner for one cycle under ``cfg`` (not for ``htcondor``: the pie spin)."""
    return RUNNERS[cfg.name](cfg)


__all__ = ["RUNNERS", "DiracRunner", "LsfRunner", "MauiRunner", "SlurmRunner", "make_runner"]
