"""HTCondor's own model as a policy: RUP decays toward the slots in use, EUP = RUP x factor.

A thin, named view of :mod:`matchmaker.accounting.priority_math`, which the default
cycle (the pie spin) already applies; smaller EUP is served first.
"""

from __future__ import annotations

from ..accounting.priority_math import decay_factor, effective_priority, updated_priority

NAME = "htcondor"
BETTER = "lower"


def rup_after(rup: float, in_use: float, dt: float, halflife: float = 86400.0) -> float:
    """The real user priority after ``dt`` seconds with ``in_use`` weighted slots claimed."""
    return updated_priority(rup, in_use, dt, halflife)


def eup(rup: float, factor: float) -> float:
    """The effective user priority (smaller is better)."""
    return effective_priority(rup, factor)


__all__ = ["BETTER", "NAME", "decay_factor", "eup", "rup_after"]
