"""Slurm in the cycle: the association tree, Fair Tree, and each job's multifactor priority.

The association tree comes from the submitter names, as accounting groups spell them:
``physics.hep.alice@d`` is the user association ``physics.hep.alice@d`` under the
account ``physics.hep`` under ``physics`` under the root; a submitter without a dot
sits directly under the root.  Every association is ranked, whether it has jobs now
or not: the submitters of the pending and running jobs, those with stored usage, and
those named in ``SLURM_ASSOCIATIONS``.  Every idle job then gets its integer priority
(:func:`slurm.job_priority`) and jobs are tried by priority, then ``QDate``, then id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..config.policy_params import PolicyConfig
from ..pool.ads import Job
from . import slurm
from .jobs import Ledger, Pending, SortedRunner, cpus, evaluate_number, number, slot_seconds, stamp, text

# What MATCHMAKER_POLICY_PRIORITY_EXPR (and the request ad) sees of each Slurm factor.
SLURM_ATTRS = {
    "age": "SlurmAgeFactor",
    "fairshare": "FairShareFactor",
    "qos": "SlurmQosFactor",
    "jobsize": "SlurmJobSizeFactor",
    "nice": "Nice",
}


def account_path(submitter: str) -> list[str]:
    """The accounts above a user association, outermost first: ``a.b.u@d`` -> ``[a, a.b]``."""
    parts = submitter.partition("@")[0].split(".")
    return [".".join(parts[:depth]) for depth in range(1, len(parts))]


def association_tree(usage: Mapping[str, float], shares: Any) -> slurm.Assoc:
    """The tree of the user associations in ``usage`` (submitter -> decayed usage), each
    association's shares from ``shares(name)``."""
    root = slurm.Assoc("root")
    accounts: dict[str, slurm.Assoc] = {}
    for user in sorted(usage):
        parent = root
        for name in account_path(user):
            if name not in accounts:
                accounts[name] = slurm.Assoc(name, shares(name))
                parent.children.append(accounts[name])
            parent = accounts[name]
        parent.children.append(slurm.Assoc(user, shares(user), usage[user], is_user=True))
    return root


class SlurmRunner(SortedRunner):
    name = "slurm"

    def __init__(self, cfg: PolicyConfig) -> None:
        self.cfg, self.p = cfg, cfg.slurm
        self.prio: dict[str, float] = {}
        self.factors: dict[str, dict[str, float]] = {}

    def usage(self, now: float, users: Iterable[str], ledger: Mapping[str, Ledger]) -> dict[str, float]:
        """Every known user association's usage decayed to ``now`` (0 without history)."""
        out = dict.fromkeys(users, 0.0)
        for user, h in ledger.items():
            out[user] = slurm.decayed(h.value, max(0.0, now - h.updated), self.p.decay_half_life)
        return out

    def begin_cycle(self, now, pending, running, ledger, pool) -> None:
        self.now = now
        users = {p.job.submitter for p in pending} | {j.submitter for j in running} | set(self.p.associations)
        self.fs = slurm.fair_tree(association_tree(self.usage(now, users, ledger), self.cfg.slurm_shares))
        highest = self.p.highest_qos()
        for item in pending:
            j = item.job
            f = {
                "age": slurm.age_factor(now - number(j.ad, "QDate", now, now), self.p.max_age),
                "fairshare": self.fs.get(j.submitter, 0.0),
                "qos": slurm.qos_factor(self.cfg.slurm_qos(text(j.ad, "Qos", now) or ""), highest),
                "jobsize": self.job_size(j, pool),
                "nice": number(j.ad, "Nice", now),
            }
            self.factors[j.id] = f
            if self.cfg.priority_expr is not None:
                v = evaluate_number(self.cfg.priority_expr, {SLURM_ATTRS[k]: v for k, v in f.items()}, now)
                self.prio[j.id] = slurm.finish(v if v is not None else 0.0, self.p)
            else:
                self.prio[j.id] = slurm.job_priority(self.p, **f)
        self.sort(pending)

    def job_size(self, job: Job, pool: Any) -> float:
        """The job size factor: one node (an HTCondor job runs on one machine), its
        ``RequestCpus``, and with ``SMALL_RELATIVE_TO_TIME`` its ``WallClockLimit``."""
        limit = number(job.ad, "WallClockLimit", self.now) / 60.0
        return slurm.job_size_factor(
            1.0,
            cpus(job, self.now),
            pool.nodes,
            pool.cpus,
            self.p.favor_small,
            self.p.relative_to_time,
            limit if limit > 0 else None,
        )

    def key(self, item: Pending) -> tuple:
        j = item.job
        return (-self.prio[j.id], number(j.ad, "QDate", self.now), j.cluster, j.proc)

    def attributes(self, job) -> dict[str, Any]:
        f = self.factors.get(job.id, {})
        return {"SlurmPriority": self.prio.get(job.id, 1.0), **{SLURM_ATTRS[k]: v for k, v in f.items()}}

    def report(self) -> list[dict[str, Any]]:
        rows = [
            {"name": jid, "priority": self.prio[jid], **{k: v for k, v in f.items()}} for jid, f in self.factors.items()
        ]
        return sorted(rows, key=lambda r: -r["priority"])

    def ledger(self, now, running, old) -> dict[str, Ledger]:
        """Slot-seconds of the running jobs since the last update, decayed with the rest
        by the whole interval, as Slurm decays new usage."""
        used = slot_seconds(running, old, now)
        out = {}
        for a in stamp(running, old):
            h = old.get(a, Ledger(updated=now))
            d = slurm.decay_per_second(self.p.decay_half_life) ** max(0.0, now - h.updated)
            out[a] = Ledger(h.value * d + used.get(a, 0.0) * d, updated=now)
        return out


__all__ = ["SLURM_ATTRS", "SlurmRunner", "account_path", "association_tree"]
