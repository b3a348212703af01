"""Slurm multifactor priority with the Fair Tree fair-share factor.

A job's priority is the weighted sum of factors in [0, 1] (age, fair share, QOS,
partition, job size) minus its nice value, floored at 1 and truncated to an
integer.  Fair Tree ranks user associations by walking the account tree depth
first, siblings by Level Fairshare ``LF = S / U`` highest first; ``fs = rank / N``.
Usage decays by ``D = 1 - 0.693 / half_life`` per second.  The parameters
(:class:`SlurmParams`, times in seconds) are read from the ``SLURM_*`` knobs by
:mod:`matchmaker.config.policy_settings`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from ..config.policy_params import SlurmParams

NAME = "slurm"
BETTER = "higher"
MAX_PRIORITY = 2**32 - 1


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
    """The Fair Tree factor ``rank / N`` of every user association under ``root``.

    Siblings are visited by Level Fairshare, highest first, users before accounts on
    equal LF; an account is descended into where it stands.  Ties, as Slurm's Fair Tree
    page states them: sibling users with equal LF share a rank; sibling accounts with
    equal LF have their children merged into one list before descending; a user with
    the same LF as a sibling account shares its rank with that account's highest
    ranked user.  A tie uses up the ranks after it (4, 3, 3, 1).  The result does not
    depend on the order of ``children``."""
    users = _count_users(root)
    lf: dict[int, float] = {}
    _level_fairshares(root, lf)
    out: dict[str, float] = {}
    rank = rnt = users

    def walk(nodes: Sequence[Assoc], starts_tied: bool) -> None:
        nonlocal rank, rnt
        order = sorted(nodes, key=lambda c: (-lf[id(c)], not c.is_user))
        prev: Optional[float] = None
        i = 0
        while i < len(order):
            node = order[i]
            value = lf[id(node)]
            tied = starts_tied if i == 0 else value == prev
            if node.is_user:
                if not tied:
                    rank = rnt
                out[node.name] = rank / users
                rnt -= 1
                i += 1
            else:
                j = i + 1
                while j < len(order) and not order[j].is_user and lf[id(order[j])] == value:
                    j += 1
                walk([child for account in order[i:j] for child in account.children], tied)
                i = j
            prev = value

    walk(root.children, False)
    return out


def _level_fairshares(node: Assoc, out: dict[int, float]) -> None:
    """LF of every association below ``node``, each among its own siblings (keyed by id)."""
    total = node.total()
    for child in node.children:
        out[id(child)] = level_fairshare(child, node.children, total)
        _level_fairshares(child, out)


def _count_users(node: Assoc) -> int:
    return sum(1 if c.is_user else _count_users(c) for c in node.children)


def job_size_factor(
    nodes: float,
    cpus: float,
    pool_nodes: float,
    pool_cpus: float,
    favor_small: bool = False,
    relative_to_time: bool = False,
    limit_minutes: Optional[float] = None,
) -> float:
    """The job size factor in [0, 1].

    By default the mean of the node and CPU fractions, ``(n/N + c/C) / 2``: the job asking
    for the whole machine gets 1.0.  Favouring small jobs mirrors it,
    ``1 - ((n-1)/N + (c-1)/C) / 2``, so the single node (and single CPU) job gets 1.0.
    With ``limit_minutes`` (``PriorityFlags=SMALL_RELATIVE_TO_TIME``; None there means
    no limit) the size is ``max(n*C/N, c) / limit / C`` (``1 -`` that when favouring
    small jobs); a job without a limit has size 0."""
    if pool_nodes <= 0 or pool_cpus <= 0:
        return 0.0
    if relative_to_time:
        size = max(nodes * pool_cpus / pool_nodes, cpus) / limit_minutes / pool_cpus if limit_minutes else 0.0
        value = 1.0 - size if favor_small else size
    elif favor_small:
        value = 1.0 - ((nodes - 1) / pool_nodes + (cpus - 1) / pool_cpus) / 2
    else:
        value = (nodes / pool_nodes + cpus / pool_cpus) / 2
    return min(1.0, max(0.0, value))


def qos_factor(priority: float, highest: float) -> float:
    """A QOS priority normalised to the highest priority of all configured QOS (0 without one)."""
    return priority / highest if highest > 0 else 0.0


def age_factor(eligible_s_ago: float, max_age: float = 604800.0) -> float:
    """``min(1, age / PriorityMaxAge)`` (0 for a job not yet eligible)."""
    return min(1.0, max(0.0, eligible_s_ago) / max_age) if max_age > 0 else 0.0


def job_priority(
    p: SlurmParams,
    *,
    age: float = 0.0,
    fairshare: float = 0.0,
    qos: float = 0.0,
    partition: float = 0.0,
    jobsize: float = 0.0,
    nice: float = 0.0,
) -> float:
    """The job priority from its factors; floored at 1, truncated and capped at 2^32-1."""
    prio = (
        p.weight_age * age
        + p.weight_fairshare * fairshare
        + p.weight_qos * qos
        + p.weight_partition * partition
        + p.weight_jobsize * jobsize
        - nice
    )
    return finish(prio, p)


def finish(prio: float, p: SlurmParams = SlurmParams()) -> float:
    """Slurm's post-processing: at least 1, truncated to an integer, at most 2^32-1."""
    prio = max(prio, 1.0)
    if p.truncate:
        prio = float(math.floor(prio))
    return min(prio, float(MAX_PRIORITY))


__all__ = [
    "BETTER",
    "MAX_PRIORITY",
    "NAME",
    "Assoc",
    "SlurmParams",
    "age_factor",
    "decay_per_second",
    "decayed",
    "fair_tree",
    "finish",
    "interval_usage",
    "job_priority",
    "job_size_factor",
    "level_fairshare",
    "qos_factor",
]
