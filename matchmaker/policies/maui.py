"""Maui: a job's start priority as weighted, capped components, with the clip at 1.

``Priority = sum_C CW_C * cap_C(sum_S SW_S * cap_S(value_S))`` over the service,
target, credential, fair-share and resource components; then the clip to 1 (unless
negative priorities are enabled), the ceiling 1e9 and the system-priority override.
Idle jobs are sorted by it, highest first.  Fair share compares decayed usage in
``FSINTERVAL`` buckets with per-credential targets (suffix ``+`` floor, ``-``
ceiling, ``^``/``%`` none).  Credentials (``USERCFG[john]``, ``GROUPCFG[DEFAULT]``, ...)
are looked up by the job's own user, group, account, QOS and class, with the
``DEFAULT`` entry of each kind for whoever has no value of their own (:meth:`MauiParams.cred`).
The parameters (:class:`MauiParams`) are read from the ``MAUI_*`` knobs by
:mod:`matchmaker.config.maui_settings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Optional

from ..config.policy_params import CRED_ATTRS, DEFAULT, XFACTOR_FORMS, MauiParams

NAME = "maui"
BETTER = "higher"
MAX_PRIO_VAL = 1e9
COMPONENTS = ("SERV", "TARG", "CRED", "ATTR", "FS", "RES", "USAGE")
CRED_KINDS = ("USER", "GROUP", "ACCOUNT", "QOS", "CLASS")


def cap(value: float, limit: Optional[float]) -> float:
    """Maui's cap: an upper bound only, and only when positive."""
    return min(value, limit) if limit is not None and limit > 0 else value


def xfactor(queue_s: float, wclimit_s: float, xfminwclimit: float = 120.0, form: str = "code") -> float:
    """The expansion factor: ``(queue + WCLimit) / max(XFMINWCLIMIT, WCLimit)`` (code) or
    ``1 + queue / max(XFMINWCLIMIT, WCLimit)`` (manual)."""
    div = max(xfminwclimit, wclimit_s)
    if div <= 0:
        return 1.0
    return 1.0 + queue_s / div if form == "manual" else (queue_s + wclimit_s) / div


def bucket_usage(buckets: Sequence[float], decay: float = 1.0, depth: Optional[int] = None) -> float:
    """Effective usage of FSINTERVAL buckets (index 0 = current, undecayed)."""
    n = len(buckets) if depth is None else min(depth, len(buckets))
    return sum(buckets[i] * decay**i for i in range(n))


def fs_delta(target: Optional[str], usage: float, total: float, percent_policy: bool = False) -> float:
    """One credential's fair-share subfactor: target minus usage percent, shaped by the
    target's suffix; 0 without a target or without any usage in the partition."""
    if not target or total <= 0:
        return 0.0
    suffix = target[-1] if target[-1] in "+-^%" else ""
    value = float(target[:-1] if suffix else target)
    if suffix in ("^", "%"):
        return 0.0
    pct = 100.0 * usage / total
    if percent_policy:
        d = 1.0 - pct / value if value else 0.0
    else:
        d = value - pct
    if suffix == "+":
        return max(d, 0.0)
    if suffix == "-":
        return min(d, 0.0)
    return d


def component(values: Mapping[str, float], p: MauiParams, comp: str) -> float:
    """``cap_C(sum_S SW_S * cap_S(value_S))`` for one component's subcomponent values."""
    inner = sum(p.subweight(s) * cap(v, p.caps.get(s)) for s, v in values.items())
    return cap(inner, p.caps.get(comp))


def start_priority(
    subvalues: Mapping[str, Mapping[str, float]], p: MauiParams = MauiParams(), system_prio: float = 0.0
) -> float:
    """The job's start priority from ``{component: {subcomponent: value}}``."""
    total = sum(p.weight(c) * component(v, p, c) for c, v in subvalues.items() if c not in ("ATTR", "USAGE"))
    return finish(total, p, system_prio)


def finish(total: float, p: MauiParams, system_prio: float = 0.0) -> float:
    """The clip at 1 (unless negatives are enabled), the 1e9 ceiling, the system priority."""
    if not (p.enable_neg_job_priority or p.reject_neg_prio_jobs):
        total = max(total, 1.0)
    total = min(total, MAX_PRIO_VAL)
    if system_prio > 0:
        total = MAX_PRIO_VAL + system_prio
    return total


def target_term(target_s: float, current_s: float) -> float:
    """TARGETQUEUETIME / TARGETXFACTOR: ``max(1e-4, target - current) ** -2`` (0 without target)."""
    if target_s <= 0:
        return 0.0
    return max(1e-4, target_s - current_s) ** -2


__all__ = [
    "BETTER",
    "COMPONENTS",
    "CRED_ATTRS",
    "CRED_KINDS",
    "DEFAULT",
    "MAX_PRIO_VAL",
    "NAME",
    "XFACTOR_FORMS",
    "MauiParams",
    "bucket_usage",
    "cap",
    "component",
    "finish",
    "fs_delta",
    "start_priority",
    "target_term",
    "xfactor",
]
