"""LSF fair share: a share account's dynamic priority, its decay and the dispatch walk.

``dynamic_priority = shares / max(D, floor)`` where ``D`` weighs the account's decayed
CPU hours, run hours, job slots (``1 + slots``) and the optional terms (historical and
committed run time, forwarded slots, the fair-share adjustment, GPU hours); larger is
served first.  Usage is decayed continuously: an hour used ``a`` hours ago counts
``0.1 ** (a / HIST_HOURS)`` (:func:`tenth_after`, :func:`decayed_hours`).  After every dispatch the winner's slots grow by the job's slots and
its priority is recomputed, so accounts alternate (:func:`dispatch_sequence`).  With a
share tree, each level picks the sibling with the highest priority and descends
(:func:`pick_leaf`); a group's usage is the sum over its members.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Optional

from ..config.policy_params import GPU_TERMS, LsfParams

NAME = "lsf"
BETTER = "higher"


@dataclass(frozen=True)
class LsfUsage:
    """One share account's inputs; times are hours, GPU times GPU-hours (hours x GPUs)."""

    cpu_hours: float = 0.0  # decayed
    run_hours: float = 0.0  # running jobs (decayed with run_time_decay)
    hist_run_hours: float = 0.0  # finished jobs, decayed (used with enable_hist_run_time)
    committed_run_hours: float = 0.0  # run_hours plus what the running jobs' run limits still commit
    job_slots: float = 0.0  # reserved + in use
    fwd_job_slots: float = 0.0
    fairshare_adjustment: float = 0.0
    gpu_run_hours: float = 0.0  # running jobs: hours x physical GPUs
    hist_gpu_run_hours: float = 0.0  # finished jobs, decayed (used with enable_gpu_hist_run_time)


def tenth_after(age_hours: float, hist_hours: float = 5.0) -> float:
    """LSF's decay weight: an hour of use counts 0.1 hour after ``hist_hours`` hours (0: none)."""
    if hist_hours <= 0:
        return 1.0
    return 0.1 ** (age_hours / hist_hours)


def decayed_hours(hours: float, hist_hours: float = 5.0) -> float:
    """The decayed weight of ``hours`` of use that ended now: the integral of
    :func:`tenth_after` over ages 0 to ``hours`` (``hours`` itself when ``hist_hours`` is 0)."""
    if hours <= 0:
        return 0.0
    if hist_hours <= 0:
        return hours
    return hist_hours / math.log(10.0) * (1.0 - 0.1 ** (hours / hist_hours))


def memory_adjustment(
    job_slots: float, used_memory: float, used_slots: float, slot_memory: float, threshold: float
) -> float:
    """The example ``libfairshareadjust`` plug-in:
    ``(1 + slots) * ((used_memory / used_slots) / (slot_memory * THRESHOLD))`` (0 without started jobs)."""
    if used_slots <= 0 or slot_memory <= 0 or threshold <= 0:
        return 0.0
    return (1.0 + job_slots) * ((used_memory / used_slots) / (slot_memory * threshold))


def denominator(u: LsfUsage, p: LsfParams = LsfParams()) -> float:
    """``D``, the weighted usage of an account (before the floor and the GPU term)."""
    hist = u.hist_run_hours if p.enable_hist_run_time else 0.0
    return (
        u.cpu_hours * p.cpu_time_factor
        + (hist + u.run_hours) * p.run_time_factor
        + (u.committed_run_hours - u.run_hours) * p.committed_run_time_factor
        + (1.0 + u.job_slots) * p.run_job_factor
        + (1.0 + u.fwd_job_slots) * p.fwd_job_factor
        + u.fairshare_adjustment * p.fairshare_adjustment_factor
    )


def gpu_term(u: LsfUsage, p: LsfParams = LsfParams()) -> float:
    """``(historical_gpu_run_time + gpu_run_time) * ngpus_physical * GPU_RUN_TIME_FACTOR``,
    the hours already multiplied by the GPUs in :class:`LsfUsage`."""
    hist = u.hist_gpu_run_hours if p.enable_gpu_hist_run_time else 0.0
    return (hist + u.gpu_run_hours) * p.gpu_run_time_factor


def dynamic_priority(shares: float, u: LsfUsage, p: LsfParams = LsfParams()) -> float:
    """``shares / max(D, floor)``, with the GPU term in the denominator or added (``p.gpu_term``)."""
    gpu = gpu_term(u, p)
    d = denominator(u, p)
    if p.gpu_term == "additive":
        return shares / max(d, p.floor) + gpu
    return shares / max(d + gpu, p.floor)


def dispatch_sequence(
    accounts: Mapping[str, tuple[float, LsfUsage]],
    pending: Mapping[str, int],
    n: int,
    p: LsfParams = LsfParams(),
    slots_per_job: float = 1.0,
) -> list[str]:
    """The first ``n`` dispatches: the highest priority with pending work wins, then its
    ``job_slots`` grows by ``slots_per_job`` (new jobs have run time 0). Ties: by name."""
    state = {a: u for a, (_s, u) in accounts.items()}
    left = dict(pending)
    out: list[str] = []
    for _ in range(n):
        ready = [a for a in sorted(state) if left.get(a, 0) > 0]
        if not ready:
            break
        best = max(ready, key=lambda a: dynamic_priority(accounts[a][0], state[a], p))
        out.append(best)
        left[best] -= 1
        state[best] = replace(state[best], job_slots=state[best].job_slots + slots_per_job)
    return out


def add_usage(a: LsfUsage, b: LsfUsage) -> LsfUsage:
    """The usage of a group holding ``a`` and ``b`` (every field summed)."""
    return LsfUsage(*(x + y for x, y in zip(_fields(a), _fields(b))))


def _fields(u: LsfUsage) -> tuple[float, ...]:
    return (
        u.cpu_hours,
        u.run_hours,
        u.hist_run_hours,
        u.committed_run_hours,
        u.job_slots,
        u.fwd_job_slots,
        u.fairshare_adjustment,
        u.gpu_run_hours,
        u.hist_gpu_run_hours,
    )


def pick_leaf(
    children: Mapping[str, Sequence[str]],
    shares: Mapping[str, float],
    usage: Mapping[str, LsfUsage],
    ready: set[str],
    p: LsfParams = LsfParams(),
    root: str = "",
    priority: Optional[Callable[[str, LsfUsage], float]] = None,
) -> Optional[str]:
    """The account the top-down walk reaches: at each level the child with the highest
    priority among those with a ready leaf below; a group's usage sums its members'.
    ``priority(node, usage)`` replaces the built-in formula when given."""
    if priority is None:

        def priority(node: str, u: LsfUsage) -> float:
            return dynamic_priority(shares.get(node, p.default_shares), u, p)

    def total(node: str) -> LsfUsage:
        u = usage.get(node, LsfUsage())
        for c in children.get(node, ()):
            u = add_usage(u, total(c))
        return u

    def has_ready(node: str) -> bool:
        return node in ready or any(has_ready(c) for c in children.get(node, ()))

    node = root
    while children.get(node):
        live = [c for c in children[node] if has_ready(c)]
        if not live:
            return None
        node = max(sorted(live), key=lambda c: priority(c, total(c)))
    return node if node in ready else None


__all__ = [
    "BETTER",
    "GPU_TERMS",
    "NAME",
    "LsfParams",
    "LsfUsage",
    "add_usage",
    "decayed_hours",
    "denominator",
    "dispatch_sequence",
    "dynamic_priority",
    "gpu_term",
    "memory_adjustment",
    "pick_leaf",
    "tenth_after",
]
