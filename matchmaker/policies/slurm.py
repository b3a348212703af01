"""Slurm multifactor priority with the Fair Tree fair-share factor.

A job's priority is the weighted sum of factors in [0, 1] (age, fair share, QOS,
partition, job size) minus its nice value, floored at 1 and truncated to an
integer.  Fair Tree ranks user associations by walking the account tree depth
first, siblings by Level Fairshare ``LF = S / U`` highest first; ``fs = rank / N``.
Usage decays by ``D = 1 - 0.693 / half_life`` per second.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

NAME = "slurm"
BETTER = "higher"
MAX_PRIORITY = 2 ** 32 - 1


@dataclass(frozen=True)
class SlurmParams:
    """``slurm.conf`` priority weights (0 by default), max age and decay half-life."""

    weight_age: float = 0.0
    weight_fairshare: float = 0.0
    weight_qos: float = 0.0
    weight_partition: float = 0.0
    weight_jobsize: float = 0.0
    max_age: float = 604800.0
    decay_half_life: float = 604800.0
    favor_small: bool = False
    truncate: bool = True
    shares: Mapping[str, float] = field(default_factory=dict)
    qos_priority: Mapping[str, float] = field(default_factory=dict)


def decay_per_second(half_life: float) -> float:
    """Slurm's per-second factor ``1 - 0.693 / half_life`` (1 when decay is off)."""
    return 1.0 if half_life <= 0 else 1.0 - 0.693 / half_life


def decayed(usage: float, seconds: float, half_life: float) -> float:
    """``usage`` after ``seconds`` of compounding decay."""
    return usage * decay_per_second(half_life) ** seconds


def interval_usage(billing: float, seconds: float, half_life: float) -> float:
    """New usage of a job billed ``billing`` TRES over one interval (decayed by all of it)."""
    return seconds * billing * decay_per_second(half_life) ** seconds


@dataclass
class Assoc:
    """A node of the association tree: an account (with children) or a user."""

    name: str
    shares: float = 1.0
    usage: float = 0.0
    children: list["Assoc"] = field(default_factory=list)
    is_user: bool = False

    def total(self) -> float:
        return self.usage + sum(c.total() for c in self.children)


def level_fairshare(node: Assoc, siblings: Sequence[Assoc], parent_usage: float) -> float:
    """``LF = S / U`` among siblings: 0 without shares, infinity without usage."""
    s_total = sum(s.shares for s in siblings)
    s = node.shares / s_total if s_total > 0 else 0.0
    if s == 0:
        return 0.0
    u = node.total() / parent_usage if parent_usage > 0 else 0.0
    return math.inf if u == 0 else s / u


def fair_tree(root: Assoc) -> dict[str, float]:
    """The Fair Tree factor of every user: ranks handed out in a depth-first walk,
    siblings by LF highest first (users before accounts on ties, then by name); tied
    users share a rank."""
    users = _count_users(root)
    out: dict[str, float] = {}
    rank = rnt = users
    prev_lf = None

    def walk(node: Assoc) -> None:
        nonlocal rank, rnt, prev_lf
        total = node.total()
        kids = [(level_fairshare(c, node.children, total), c) for c in node.children]
        kids.sort(key=lambda x: (-x[0], not x[1].is_user, x[1].name))
        prev_lf = None
        for lf, c in kids:
            if c.is_user:
                if prev_lf is None or lf != prev_lf:
                    rank = rnt
                out[c.name] = rank / users if users else 0.0
                rnt -= 1
                prev_lf = lf
            else:
                walk(c)
                prev_lf = None

    walk(root)
    return out


def _count_users(node: Assoc) -> int:
    return sum(1 if c.is_user else _count_users(c) for c in node.children)


def age_factor(eligible_s_ago: float, max_age: float = 604800.0) -> float:
    """``min(1, age / PriorityMaxAge)`` (0 for a job not yet eligible)."""
    return min(1.0, max(0.0, eligible_s_ago) / max_age) if max_age > 0 else 0.0


def job_priority(p: SlurmParams, *, age: float = 0.0, fairshare: float = 0.0, qos: float = 0.0,
                 partition: float = 0.0, jobsize: float = 0.0, nice: float = 0.0) -> float:
    """The job priority from its factors; floored at 1, truncated and capped at 2^32-1."""
    prio = (p.weight_age * age + p.weight_fairshare * fairshare + p.weight_qos * qos
            + p.weight_partition * partition + p.weight_jobsize * jobsize - nice)
    return finish(prio, p)


def finish(prio: float, p: SlurmParams = SlurmParams()) -> float:
    """Slurm's post-processing: at least 1, truncated to an integer, at most 2^32-1."""
    prio = max(prio, 1.0)
    if p.truncate:
        prio = float(math.floor(prio))
    return min(prio, float(MAX_PRIORITY))


__all__ = ["BETTER", "MAX_PRIORITY", "NAME", "Assoc", "SlurmParams", "age_factor", "decay_per_second", "decayed",
           "fair_tree", "finish", "interval_usage", "job_priority", "level_fairshare"]
