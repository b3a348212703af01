"""User-priority math (docs/negotiation.md, user priorities) as pure functions over plain numbers.

Nothing here reads a clock or a database: every time is passed in, so the worked
examples of docs/negotiation.md (example 7.4 and example 7.5) are plain asserts and Hypothesis can drive the functions
directly.  :mod:`matchmaker.accounting.store` is the store that applies them to records.

* RUP update: ``π(t) = β·π(t−δt) + (1−β)·ρ``, ``β = 0.5^(δt/h)``, never below 0.5.
  With constant usage this is exact for any spacing of updates.
* Charging: a match that starts (or ends) inside an update interval moves
  "uncharged time" so the next update charges only the part actually used.
* EUP = max(RUP, 0.5) × priority factor; a principal without a stored factor gets
  one by the rules of :func:`default_prio_factor`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

MIN_PRIORITY = 0.5  # every RUP starts here and never goes below it

# The ranges of the numbers a user may give the accountant (docs/reliability.md, number
# checks); beyond them a product (EUP = RUP x factor) or a sum of usage would overflow or
# stop meaning anything.
MAX_TIME = 253_402_300_799.0  # a time: the end of the year 9999 (UTC), as HTCondor's dates
MAX_FACTOR = 1e30  # a priority factor (NICE_USER_PRIO_FACTOR is 1e10)
MAX_AMOUNT = 1e15  # a priority, a floor or ceiling (weighted slots), an accumulated usage
NONE_GROUP = "<none>"  # the root of the group tree


def decay_factor(dt: float, halflife: float) -> float:
    """β = 0.5^(Δt/h): the weight the old RUP keeps after ``dt`` seconds."""
    return 0.5 ** (dt / halflife)


def updated_priority(rup: float, recent: float, dt: float, halflife: float) -> float:
    """RUP after ``dt`` seconds of average usage ``recent``: max(0.5, β·RUP + (1−β)·recent).

    A stored RUP below 0.5 (or 0, "never set") counts as 0.5.  With constant usage this
    is exact for any spacing of updates: RUP(t) = ρ + (RUP0 − ρ)·0.5^(t/h).
    """
    beta = decay_factor(dt, halflife)
    return max(MIN_PRIORITY, max(rup, MIN_PRIORITY) * beta + recent * (1.0 - beta))


def recent_usage(weighted_in_use: float, weighted_uncharged: float, dt: float, hier_in_use: float = 0.0) -> float:
    """Average weighted usage over the last ``dt`` seconds (a group uses its subtree's)."""
    if hier_in_use > 0:
        return hier_in_use
    return weighted_in_use + weighted_uncharged / dt


def match_start_charge(weight: float, start: float, last_update: float) -> float:
    """Uncharged-time change when a match starts at ``start``: the slice before it is not used."""
    return -(start - last_update) * weight


def match_end_charge(weight: float, end: float, last_update: float) -> float:
    """Uncharged-time change when a match ends at ``end``: everything since the last update.

    This also cancels the negative charge of a match that started after the last update,
    so a match that starts and ends within one interval is charged exactly its duration.
    (HTCondor adds ``end - max(start, last_update)``, which under-charges such a match by
    ``start - last_update``; listed in the differences document.)
    """
    return (end - last_update) * weight


def effective_priority(rup: float, factor: float) -> float:
    """EUP = max(RUP, 0.5) × priority factor (smaller is better)."""
    return max(rup, MIN_PRIORITY) * factor


def submitter_domain(name: str) -> str:
    """The domain of ``user@domain`` (text after the last ``@``; empty if none)."""
    return name.rpartition("@")[2] if "@" in name else ""


def group_ancestors(group: Optional[str]) -> list[str]:
    """``a.b.c`` -> ``[a.b.c, a.b, a]``; the root ``<none>`` has none."""
    if not group or group == NONE_GROUP:
        return []
    parts = group.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


@dataclass(frozen=True)
class FactorPolicy:
    """The configured defaults a new principal's priority factor comes from (docs/negotiation.md, priority factors and EUP)."""

    default: float = 1000.0  # DEFAULT_PRIO_FACTOR
    nice_user: float = 1e10  # NICE_USER_PRIO_FACTOR
    remote: float = 1e7  # REMOTE_PRIO_FACTOR
    local_domain: str = ""  # ACCOUNTANT_LOCAL_DOMAIN; empty: everyone is local
    nice_prefix: str = "nice-user"  # NICE_USER_ACCOUNTING_GROUP_NAME
    # name -> GROUP_PRIO_FACTOR of the name's assigned group (None/0: unset); from the groups module
    group_factor: Optional[Callable[[str], Optional[float]]] = None


def default_prio_factor(name: str, policy: FactorPolicy) -> float:
    """Factor for a principal with none stored: nice user > group factor > remote > default."""
    if name.startswith(policy.nice_prefix):
        return policy.nice_user
    group = policy.group_factor(name) if policy.group_factor is not None else None
    if group:
        return group
    if policy.local_domain and submitter_domain(name) != policy.local_domain:
        return policy.remote
    return policy.default


def resolve_prio_factor(stored: float, name: str, policy: FactorPolicy) -> float:
    """The stored factor if it is set (≥ 1), else the default for ``name``."""
    return stored if stored >= 1.0 else default_prio_factor(name, policy)


__all__ = [
    "MIN_PRIORITY",
    "NONE_GROUP",
    "FactorPolicy",
    "decay_factor",
    "default_prio_factor",
    "effective_priority",
    "group_ancestors",
    "match_end_charge",
    "match_start_charge",
    "recent_usage",
    "resolve_prio_factor",
    "submitter_domain",
    "updated_priority",
]
