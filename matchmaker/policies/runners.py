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

from dataclasses import replace
from typing import Any

from . import maui
from .dirac_runner import DiracRunner
from .jobs import (
    Ledger,
    Pending,
    Runner,
    SortedRunner,
    cpus,
    evaluate_number,
    group_of,
    number,
    slot_seconds as _slot_seconds,
    stamp as _stamp,
    text,
)
from .lsf_runner import LsfRunner
from .params import PolicyConfig, maui_target
from .slurm_runner import SlurmRunner


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
        for a in _stamp(running, old):
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
