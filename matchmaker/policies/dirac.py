"""DIRAC: TaskQueue priorities from group shares, and the lottery that picks one.

A group's share (``JobShare``, default 1000) goes to the group as one entity when it
has ``JobSharing``, else is split evenly between its owners with waiting work.  An
entity's share is divided among its TaskQueues in proportion to each queue's mean
job priority (after the 0/10 hack), floored at 0.001.  Selection is a weighted
lottery: each queue draws ``u / P`` with ``u`` uniform and the smallest key wins.
The optional WMSHistory corrector rescales shares by recent usage.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Optional

from ..config.policy_params import DEFAULT_SHARE

NAME = "dirac"
BETTER = "higher"
MIN_TQ_PRIORITY = 0.001


@dataclass(frozen=True)
class TaskQueue:
    """One TaskQueue: its owner, group, job priorities and the key sites are ignored in."""

    name: str
    owner: str
    group: str
    priorities: tuple[float, ...]
    site_free_key: Optional[str] = None  # identical keys (sites aside) share their priority sum


@dataclass(frozen=True)
class Slice:
    """One corrector time slice: its (unnormalised) weight and maximum correction."""

    weight: float = 1.0
    max_correction: float = 3.0


def real_priority(p: float) -> float:
    """The job priority hack: 0 -> 1e-5 (background), 10 and above -> 1e6, else int(p)."""
    r = min(max(float(int(p)), 0.001), 10.0)
    if r == 0.001:
        return 1e-5
    if r == 10.0:
        return 1e6
    return r


def tq_weight(priorities: Sequence[float], mode: str = "avg") -> float:
    """A TaskQueue's raw weight: the mean (DIRAC's code) or the sum (its docs) of real priorities."""
    real = [real_priority(p) for p in priorities]
    if not real:
        return 0.0
    return sum(real) / len(real) if mode == "avg" else sum(real)


def tq_priorities(
    tqs: Sequence[TaskQueue],
    shares: Mapping[str, float],
    job_sharing: frozenset[str] = frozenset(),
    mode: str = "avg",
    default_share: float = DEFAULT_SHARE,
    owner_factor: Optional[Mapping[tuple[str, str], float]] = None,
    weights: Optional[Mapping[str, float]] = None,
) -> dict[str, float]:
    """``P_t`` for every TaskQueue (see the module docstring); ``owner_factor`` is the
    in-group corrector's factor per (group, owner); ``weights`` gives the queues' raw
    weights directly (else they come from their job priorities)."""
    entities: dict[tuple[str, str], list[TaskQueue]] = {}
    owners: dict[str, set[str]] = {}
    for t in tqs:
        owners.setdefault(t.group, set()).add(t.owner)
        key = (t.group, "" if t.group in job_sharing else t.owner)
        entities.setdefault(key, []).append(t)
    out: dict[str, float] = {}
    for (group, owner), members in entities.items():
        share = shares.get(group, default_share)
        if group not in job_sharing:
            share /= len(owners[group])
            if owner_factor is not None:
                share *= owner_factor.get((group, owner), 1.0)
        w = {t.name: weights[t.name] if weights is not None else tq_weight(t.priorities, mode) for t in members}
        total = sum(w.values())
        for t in members:
            out[t.name] = max(share * w[t.name] / total, MIN_TQ_PRIORITY) if total > 0 else MIN_TQ_PRIORITY
        by_key: dict[str, float] = {}
        for t in members:
            if t.site_free_key is not None:
                by_key[t.site_free_key] = by_key.get(t.site_free_key, 0.0) + out[t.name]
        for t in members:
            if t.site_free_key is not None:
                out[t.name] = by_key[t.site_free_key]
    return out


def lottery_keys(priorities: Sequence[float], draws: Sequence[float]) -> list[float]:
    """The lottery keys ``u / P`` for given uniform draws."""
    return [u / p for u, p in zip(draws, priorities)]


def lottery_order(names: Sequence[str], priorities: Mapping[str, float], rng: random.Random) -> list[str]:
    """The order the lottery tries the queues in (smallest ``u / P`` first)."""
    keys = {n: rng.random() / priorities[n] for n in names}
    return sorted(names, key=lambda n: (keys[n], n))


def level_draw(levels: Mapping[int, int], rng: random.Random) -> int:
    """The job priority level ``TaskQueueDB`` draws inside a TaskQueue: every job row gets
    the key ``RAND() / RealPriority`` and the smallest key's ``Priority`` wins.

    ``levels`` maps each ``Priority`` to its number of jobs.  The smallest of ``m``
    uniform draws is drawn at once, as ``1 - V ** (1/m)`` with ``V`` uniform (the same
    distribution), so a level of ``m`` jobs costs one draw, not ``m``.  Levels draw in
    ascending order, so the result does not depend on the order of ``levels``."""
    keys = {
        level: (1.0 - rng.random() ** (1.0 / levels[level])) / real_priority(level)
        for level in sorted(levels)
        if levels[level] > 0
    }
    return min(keys, key=lambda level: keys[level])


def window_averages(samples: Mapping[str, Sequence[float]], now: float, span: float) -> dict[str, float]:
    """The average running-job count of each entity over ``[now - span, now]``.

    ``samples`` holds per entity ``(time, count, time, count, ...)``, one pair per cycle.
    Every entity is divided by the same number, the cycles within the span (DIRAC's
    report divides by the number of bins in the span), so a cycle without an entity's
    sample counts as zero for it."""
    cycles: set[float] = set()
    sums: dict[str, float] = {}
    for entity, pairs in samples.items():
        sums[entity] = 0.0
        for i in range(0, len(pairs) - 1, 2):
            if now - span <= pairs[i] <= now:
                cycles.add(pairs[i])
                sums[entity] += pairs[i + 1]
    return {e: total / len(cycles) if cycles else 0.0 for e, total in sums.items()}


def first_probability(ps: Sequence[float], i: int, steps: int = 20000) -> float:
    """Exact chance that queue ``i`` wins the lottery: integral of ``P_i * prod_j (1 - P_j t)+``."""
    upper = 1.0 / ps[i]
    h = upper / steps
    total = 0.0
    for k in range(steps + 1):
        t = k * h
        f = ps[i]
        for j, pj in enumerate(ps):
            if j != i:
                f *= max(0.0, 1.0 - pj * t)
        total += f * (0.5 if k in (0, steps) else 1.0)
    return total * h


def correction(
    shares: Mapping[str, float],
    slices: Sequence[tuple[Slice, Mapping[str, float]]],
    max_global: float = 3.0,
    compat: bool = False,
) -> dict[str, float]:
    """The WMSHistory corrector's factor per entity: per slice, the weighted ratio of
    share to usage clamped to ``[1/m, m]``; summed, then clamped to ``[1/M, M]``.

    An entity missing from a slice's usage gets ``m`` times the slice weight
    (``compat``: ``m`` unweighted, as DIRAC's code does); a slice with no usage is skipped."""
    s_total = sum(shares.values())
    w_total = sum(s.weight for s, _u in slices) or 1.0
    out: dict[str, float] = {}
    for e, share in shares.items():
        parts: list[float] = []
        for sl, usage in slices:
            u_total = sum(usage.get(x, 0.0) for x in shares)
            if u_total <= 0:
                continue
            w, m = sl.weight / w_total, sl.max_correction
            if usage.get(e, 0.0) <= 0:
                parts.append(m if compat else w * m)
                continue
            expected = share / s_total if s_total > 0 else 0.0
            used = usage[e] / u_total  # 0 only by underflow: then as far below its share as can be
            ratio = expected / used if used > 0 else math.inf
            parts.append(w * min(max(ratio, 1.0 / m), m))
        out[e] = min(max(sum(parts), 1.0 / max_global), max_global) if parts else 1.0
    return out


__all__ = [
    "BETTER",
    "DEFAULT_SHARE",
    "NAME",
    "Slice",
    "TaskQueue",
    "correction",
    "first_probability",
    "level_draw",
    "lottery_keys",
    "lottery_order",
    "real_priority",
    "tq_priorities",
    "tq_weight",
    "window_averages",
]
