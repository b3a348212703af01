"""LSF fair share: a share account's dynamic priority, its decay and the dispatch walk.

``dynamic_priority = shares / max(D, floor)`` where ``D`` weighs the account's decayed
CPU hours, run hours, job slots (``1 + slots``) and the optional terms; larger is
served first.  After every dispatch the winner's slots grow by the job's slots and
its priority is recomputed, so accounts alternate (:func:`dispatch_sequence`).  With a
share tree, each level picks the sibling with the highest priority and descends
(:func:`pick_leaf`); a group's usage is the sum over its members.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Optional

NAME = "lsf"
BETTER = "higher"
GPU_TERMS = ("denominator", "additive")


@dataclass(frozen=True)
class LsfParams:
    """``lsb.params`` factors with LSF's defaults; ``floor`` and ``gpu_term`` are our choices."""

    cpu_time_factor: float = 0.7
    run_time_factor: float = 0.7
    run_job_factor: float = 3.0
    committed_run_time_factor: float = 0.0
    fwd_job_factor: float = 0.0
    fairshare_adjustment_factor: float = 0.0
    gpu_run_time_factor: float = 0.0
    hist_hours: float = 5.0
    run_time_decay: bool = False
    enable_hist_run_time: bool = False
    floor: float = 0.01
    gpu_term: str = "denominator"
    run_time_times_slots: bool = True
    default_shares: float = 1.0
    shares: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class LsfUsage:
    """One share account's inputs; times are hours."""

    cpu_hours: float = 0.0            # decayed
    run_hours: float = 0.0            # running jobs
    hist_run_hours: float = 0.0       # finished jobs, decayed (used with enable_hist_run_time)
    committed_run_hours: float = 0.0
    job_slots: float = 0.0            # reserved + in use
    fwd_job_slots: float = 0.0
    fairshare_adjustment: float = 0.0
    gpu_run_hours: float = 0.0        # (historical + running) GPU hours
    ngpus: float = 0.0


def tenth_after(age_hours: float, hist_hours: float = 5.0) -> float:
    """LSF's decay weight: an hour of use counts 0.1 hour after ``hist_hours`` hours (0: none)."""
    if hist_hours <= 0:
        return 1.0
    return 0.1 ** (age_hours / hist_hours)


def denominator(u: LsfUsage, p: LsfParams = LsfParams()) -> float:
    """``D``, the weighted usage of an account (before the floor and the GPU term)."""
    hist = u.hist_run_hours if p.enable_hist_run_time else 0.0
    return (u.cpu_hours * p.cpu_time_factor
            + (hist + u.run_hours) * p.run_time_factor
            + (u.committed_run_hours - u.run_hours) * p.committed_run_time_factor
            + (1.0 + u.job_slots) * p.run_job_factor
            + (1.0 + u.fwd_job_slots) * p.fwd_job_factor
            + u.fairshare_adjustment * p.fairshare_adjustment_factor)


def dynamic_priority(shares: float, u: LsfUsage, p: LsfParams = LsfParams()) -> float:
    """``shares / max(D, floor)``, with the GPU term in the denominator or added (``p.gpu_term``)."""
    gpu = u.gpu_run_hours * u.ngpus * p.gpu_run_time_factor
    d = denominator(u, p)
    if p.gpu_term == "additive":
        return shares / max(d, p.floor) + gpu
    return shares / max(d + gpu, p.floor)


def dispatch_sequence(accounts: Mapping[str, tuple[float, LsfUsage]], pending: Mapping[str, int], n: int,
                      p: LsfParams = LsfParams(), slots_per_job: float = 1.0) -> list[str]:
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
    return (u.cpu_hours, u.run_hours, u.hist_run_hours, u.committed_run_hours, u.job_slots, u.fwd_job_slots,
            u.fairshare_adjustment, u.gpu_run_hours, u.ngpus)


def pick_leaf(children: Mapping[str, Sequence[str]], shares: Mapping[str, float], usage: Mapping[str, LsfUsage],
              ready: set[str], p: LsfParams = LsfParams(), root: str = "",
              priority: Optional[Callable[[str, LsfUsage], float]] = None) -> Optional[str]:
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


__all__ = ["BETTER", "GPU_TERMS", "NAME", "LsfParams", "LsfUsage", "add_usage", "denominator", "dispatch_sequence",
           "dynamic_priority", "pick_leaf", "tenth_after"]
