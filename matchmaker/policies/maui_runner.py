"""Maui in the cycle: each idle job's start priority from its credentials, requests and wait.

Every idle job gets its start priority once (:func:`maui.start_priority`); jobs are tried
highest first, then by ``QDate``, ``ClusterId``, ``ProcId``.  With
``MAUI_REJECTNEGPRIOJOBS`` a job whose priority is below 0 is not tried at all.

A job's credentials, each looked up with the ``DEFAULT`` entry of its kind as fallback:

* user -- its ``User`` before ``@`` (else ``Owner``), whatever group or account it is
  charged to;
* group -- its accounting group (``AcctGroup``, else ``AccountingGroup`` before the last dot);
* account -- its ``Account``; QOS -- its ``Qos``; class -- its ``Class``.

Its resources: ``MachineCount`` nodes (1 when absent), ``RequestCpus``, ``RequestMemory``
(MB) and ``RequestDisk`` (KiB) per node, ``WallClockLimit`` (seconds).  Fair share keeps
slot-seconds per credential (``USER:john``, ``GROUP:physics``, ...) in ``FSINTERVAL``
buckets; the partition's total is the sum over users.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Optional

from ..config.policy_params import PolicyConfig
from ..pool.ads import Job
from . import maui
from .jobs import (
    Ledger,
    Pending,
    PoolShape,
    SortedRunner,
    cpus,
    evaluate_number,
    group_of,
    number,
    text,
    user_of,
    wall_seconds,
)

# What MATCHMAKER_POLICY_PRIORITY_EXPR (and the request ad) sees of each Maui subcomponent.
MAUI_ATTRS = {
    "QUEUETIME": "MauiQueueMinutes",
    "XFACTOR": "MauiXFactor",
    "TARGETQUEUETIME": "MauiTargetQueueTime",
    "TARGETXFACTOR": "MauiTargetXFactor",
    "USER": "MauiUserPriority",
    "GROUP": "MauiGroupPriority",
    "ACCOUNT": "MauiAccountPriority",
    "QOS": "MauiQosPriority",
    "CLASS": "MauiClassPriority",
    "FSUSER": "MauiFSUserDelta",
    "FSGROUP": "MauiFSGroupDelta",
    "FSACCOUNT": "MauiFSAccountDelta",
    "FSQOS": "MauiFSQosDelta",
    "FSCLASS": "MauiFSClassDelta",
    "NODE": "MauiNodes",
    "PROC": "MauiProcs",
    "MEM": "MauiMemory",
    "DISK": "MauiDisk",
    "PS": "MauiProcSeconds",
    "PE": "MauiProcEquivalents",
    "WALLTIME": "MauiWallTime",
    "UJOB": "MauiUserJobs",
    "UPROC": "MauiUserProcs",
}


def credentials(job: Job, now: float) -> dict[str, Optional[str]]:
    """The job's user, group, account, QOS and class (None: it has none of that kind)."""
    return {
        "USER": user_of(job, now),
        "GROUP": group_of(job, now),
        "ACCOUNT": text(job.ad, "Account", now),
        "QOS": text(job.ad, "Qos", now),
        "CLASS": text(job.ad, "Class", now),
    }


def ledger_key(kind: str, name: str) -> str:
    """The ledger entry of one credential: ``USER:john``."""
    return f"{kind}:{name}"


def resources(job: Job, now: float, pool: PoolShape) -> dict[str, float]:
    """The RES subcomponents a job requests (the user's running totals are added later)."""
    nodes = max(number(job.ad, "MachineCount", now, 1.0), 1.0)
    procs = cpus(job, now) * nodes
    memory = max(number(job.ad, "RequestMemory", now), 0.0) * nodes
    disk_kib = max(number(job.ad, "RequestDisk", now), 0.0) * nodes
    wclimit = max(number(job.ad, "WallClockLimit", now), 0.0)
    shares = [
        procs / pool.cpus if pool.cpus > 0 else 0.0,
        memory / pool.memory if pool.memory > 0 else 0.0,
        disk_kib / pool.disk if pool.disk > 0 else 0.0,
    ]
    return {
        "NODE": nodes,
        "PROC": procs,
        "MEM": memory,
        "DISK": disk_kib / 1024.0,
        "PS": procs * wclimit,
        "PE": max(shares) * pool.cpus,
        "WALLTIME": wclimit,
    }


def _shifted(h: Ledger, now: float, p: maui.MauiParams) -> tuple[float, ...]:
    """The buckets of ``h`` as seen at ``now``: shifted by the intervals that ended."""
    steps = int(now // p.fs_interval) - int(h.updated // p.fs_interval)
    if steps <= 0:
        return h.buckets
    return ((0.0,) * steps + h.buckets)[: p.fs_depth]


class MauiRunner(SortedRunner):
    name = "maui"

    def __init__(self, cfg: PolicyConfig) -> None:
        self.cfg, self.p = cfg, cfg.maui
        self.prio: dict[str, float] = {}
        self.parts: dict[str, dict[str, dict[str, float]]] = {}
        self.values: dict[str, dict[str, float]] = {}
        self._refused: list[tuple[str, str]] = []

    def begin_cycle(self, now, pending, running, ledger, pool) -> None:
        self.now = now
        self.use = {
            a: maui.bucket_usage(_shifted(h, now, self.p), self.p.fs_decay, self.p.fs_depth) for a, h in ledger.items()
        }
        self.total = sum(v for a, v in self.use.items() if a.startswith("USER:"))
        self.ujob: dict[str, float] = {}
        self.uproc: dict[str, float] = {}
        for j in running:
            u = user_of(j, now)
            self.ujob[u] = self.ujob.get(u, 0.0) + 1
            self.uproc[u] = self.uproc.get(u, 0.0) + cpus(j, now)
        for item in pending:
            self._rate(item.job, pool)
        refuse = self.p.reject_neg_prio_jobs
        self._refused = [
            (item.job.id, f"MAUI_REJECTNEGPRIOJOBS: its start priority {self.prio[item.job.id]:g} is below 0")
            for item in pending
            if refuse and self.prio[item.job.id] < 0
        ]
        self.sort([item for item in pending if not (refuse and self.prio[item.job.id] < 0)])

    def refused(self) -> list[tuple[str, str]]:
        return list(self._refused)

    def _values(self, j: Job, creds: dict[str, Optional[str]], pool: PoolShape) -> dict[str, dict[str, float]]:
        """Every subcomponent's value for job ``j``, by component."""
        p, now = self.p, self.now
        queue_s = max(0.0, now - number(j.ad, "QDate", now, now))
        res = resources(j, now, pool)
        xf = maui.xfactor(queue_s, res["WALLTIME"], p.xfminwclimit, p.xfactor_form)

        def target(attr: str) -> float:
            qos = p.cred("QOS", creds["QOS"], attr)
            return float(qos if qos is not None else p.cred("USER", creds["USER"], attr) or 0.0)

        user = creds["USER"] or ""
        res.update(UJOB=self.ujob.get(user, 0.0), UPROC=self.uproc.get(user, 0.0))
        values = {
            "SERV": {"QUEUETIME": queue_s / 60.0, "XFACTOR": xf},
            "TARG": {
                "TARGETQUEUETIME": maui.target_term(target("QTTARGET"), queue_s),
                "TARGETXFACTOR": maui.target_term(target("XFTARGET"), xf),
            },
            "CRED": {kind: float(p.cred(kind, name) or 0.0) for kind, name in creds.items()},
            "RES": res,
        }
        if p.fs_policy.rstrip("%") != "NONE":
            percent = p.fs_policy.endswith("%")
            values["FS"] = {
                f"FS{kind}": maui.fs_delta(
                    p.cred(kind, name, "FSTARGET"), self.use.get(ledger_key(kind, name), 0.0), self.total, percent
                )
                if name
                else 0.0
                for kind, name in creds.items()
            }
        return values

    def _rate(self, j: Job, pool: PoolShape) -> None:
        """The start priority of ``j`` and its breakdown."""
        creds = credentials(j, self.now)
        values = self._values(j, creds, pool)
        p = self.p
        qt, xf = p.cred("QOS", creds["QOS"], "QTWEIGHT"), p.cred("QOS", creds["QOS"], "XFWEIGHT")
        if qt is not None or xf is not None:
            sub = dict(p.subweights)
            sub["QUEUETIME"] = p.subweight("QUEUETIME") + (qt or 0.0)
            sub["XFACTOR"] = p.subweight("XFACTOR") + (xf or 0.0)
            p = replace(p, subweights=sub)
        self.parts[j.id] = {c: {"weighted": p.weight(c) * maui.component(v, p, c)} | v for c, v in values.items()}
        system = number(j.ad, "MauiSystemPriority", self.now)
        self.values[j.id] = {MAUI_ATTRS[sub]: v for comp in values.values() for sub, v in comp.items()}
        if self.cfg.priority_expr is not None:
            v = evaluate_number(self.cfg.priority_expr, self.values[j.id], self.now)
            self.prio[j.id] = maui.finish(v if v is not None else 0.0, p, system)
        else:
            self.prio[j.id] = maui.start_priority(values, p, system)

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

    def ledger(self, now: float, running: Sequence[Job], old: Mapping[str, Ledger]) -> dict[str, Ledger]:
        used: dict[str, float] = {}
        for j in running:
            creds = credentials(j, now)
            since = old.get(ledger_key("USER", creds["USER"] or ""))
            wall = wall_seconds(j, now)
            dt = min(max(0.0, now - since.updated), wall) if since is not None else wall
            for kind, name in creds.items():
                if name:
                    key = ledger_key(kind, name)
                    used[key] = used.get(key, 0.0) + cpus(j, now) * dt
        out = {}
        for a in set(used) | set(old):
            h = old.get(a, Ledger(updated=now))
            b = list(_shifted(h, now, self.p)) or [0.0]
            b[0] += used.get(a, 0.0)
            out[a] = Ledger(b[0], tuple(b[: self.p.fs_depth]), now)
        return out


__all__ = ["MAUI_ATTRS", "MauiRunner", "credentials", "ledger_key", "resources"]
