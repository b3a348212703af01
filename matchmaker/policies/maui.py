"""Maui: a job's start priority as weighted, capped components, with the clip at 1.

``Priority = sum_C CW_C * cap_C(sum_S SW_S * cap_S(value_S))`` over the service,
target, credential, fair-share and resource components; then the clip to 1 (unless
negative priorities are enabled), the ceiling 1e9 and the system-priority override.
Idle jobs are sorted by it, highest first.  Fair share compares decayed usage in
``FSINTERVAL`` buckets with per-credential targets (suffix ``+`` floor, ``-``
ceiling, ``^``/``%`` none).  Credentials (``USERCFG[john]``, ``GROUPCFG[DEFAULT]``, ...)
are looked up by the job's own user, group, account, QOS and class, with the
``DEFAULT`` entry of each kind for whoever has no value of their own (:meth:`MauiParams.cred`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

NAME = "maui"
BETTER = "higher"
MAX_PRIO_VAL = 1e9
XFACTOR_FORMS = ("code", "manual")
COMPONENTS = ("SERV", "TARG", "CRED", "ATTR", "FS", "RES", "USAGE")
CRED_KINDS = ("USER", "GROUP", "ACCOUNT", "QOS", "CLASS")
# What each credential kind may set (QTTARGET in seconds after parsing, FSTARGET as text).
CRED_ATTRS = {
    "USER": ("PRIORITY", "FSTARGET", "QTTARGET", "XFTARGET"),
    "GROUP": ("PRIORITY", "FSTARGET"),
    "ACCOUNT": ("PRIORITY", "FSTARGET"),
    "CLASS": ("PRIORITY", "FSTARGET"),
    "QOS": ("PRIORITY", "FSTARGET", "QTWEIGHT", "XFWEIGHT", "QTTARGET", "XFTARGET"),
}
DEFAULT = "DEFAULT"


@dataclass(frozen=True)
class MauiParams:
    """``maui.cfg`` weights and caps with Maui's defaults (0 cap = none)."""

    weights: Mapping[str, float] = field(default_factory=dict)  # component -> weight (default 1)
    subweights: Mapping[str, float] = field(default_factory=dict)  # subcomponent -> weight (QUEUETIME 1, else 0)
    caps: Mapping[str, float] = field(default_factory=dict)  # component or subcomponent -> cap
    xfminwclimit: float = 120.0
    xfactor_form: str = "code"
    enable_neg_job_priority: bool = False
    reject_neg_prio_jobs: bool = False
    fs_policy: str = "NONE"  # NONE, DEDICATEDPS, ...; a trailing % = percent-based
    fs_interval: float = 43200.0
    fs_depth: int = 8
    fs_decay: float = 1.0
    creds: Mapping[tuple[str, str, str], Any] = field(default_factory=dict)  # (KIND, NAME, ATTR) -> value

    def cred(self, kind: str, name: Optional[str], attr: str = "PRIORITY") -> Any:
        """``<KIND>CFG[name] <attr>=``, else the ``DEFAULT`` entry's (None when neither is
        set, or the job has no credential of this kind).  A ``PRIORITY`` of 0 falls back
        too, except for QOS (Maui's code)."""
        if not name:
            return None
        own = self.creds.get((kind, name.upper(), attr))
        if own is None or (attr == "PRIORITY" and own == 0 and kind != "QOS"):
            fallback = self.creds.get((kind, DEFAULT, attr))
            return fallback if fallback is not None else own
        return own

    def weight(self, comp: str) -> float:
        return self.weights.get(comp, 1.0)

    def subweight(self, sub: str) -> float:
        return self.subweights.get(sub, 1.0 if sub == "QUEUETIME" else 0.0)


def parse_time(text: str) -> float:
    """Seconds of a Maui time value, ``[[[DD:]HH:]MM:]SS`` (``4:00:00`` is four hours) or a
    plain number of seconds; ``ValueError`` on anything else or a negative time."""
    parts = text.strip().split(":")
    if not 1 <= len(parts) <= 4 or not all(re.fullmatch(r"\d+(\.\d*)?", p) for p in parts):
        raise ValueError(f"{text.strip()!r} is not a Maui time ([[[DD:]HH:]MM:]SS or seconds)")
    seconds = 0.0
    for unit, part in zip((1, 60, 3600, 86400), reversed(parts)):
        seconds += unit * float(part)
    return seconds


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
    "parse_time",
    "start_priority",
    "target_term",
    "xfactor",
]
