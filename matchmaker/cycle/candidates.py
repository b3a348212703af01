"""Candidate slots for one request: their order, the submitter's budget, rejection texts.

Shared by the scalar matcher (:mod:`.matching`) and the columnar one
(:mod:`.columnar_match`), which both produce a :class:`CandidateList` sorted by
:func:`sort_key`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..pool.concurrency import limits_reason
from .evaluator import SlotEntry, float32

NO_PREEMPTION, RANK_PREEMPTION, PRIO_PREEMPTION = 2, 1, 0
REASONS = {NO_PREEMPTION: "no-preemption", RANK_PREEMPTION: "rank", PRIO_PREEMPTION: "priority"}
NO_MATCH = "no match found"
SUBMITTER_LIMIT = "submitter limit exceeded"
PREEMPTION_REQ_FALSE = "PREEMPTION_REQUIREMENTS == False"


def permits(used: float, allowed: float, cost: float) -> bool:
    """The submitter-limit test with HTCondor's round-up-once rule (docs/negotiation.md, one submitter's session)."""
    return used + cost <= allowed or (used <= 0 and allowed > 0)


# ---- candidates ------------------------------------------------------------------------------


@dataclass
class Budget:
    """What this submitter may still take in this spin (docs/negotiation.md, one submitter's session)."""

    lim: float
    lim_unclaimed: float
    used: float = 0.0
    used_unclaimed: float = 0.0


@dataclass(eq=False)
class Candidate:
    """A slot that can take the request, with its sort key (smaller sorts first)."""

    entry: SlotEntry
    state: int
    key: tuple
    preempts: tuple = ()  # pslot preemption: the dynamic slots' entries it ends
    cost: Optional[float] = None  # what the match costs, when not the slot's weight


@dataclass(eq=False)
class CandidateList:
    """The sorted candidates of one request, consumed in order (HTCondor's match list)."""

    autocluster: int
    only_rank: bool
    items: list[Candidate]
    pos: int = 0
    no_preemption_req: bool = False  # some slot was refused by PREEMPTION_REQUIREMENTS
    limited: bool = False  # some slot was refused by the submitter limit
    concurrency: list[str] = field(default_factory=list)
    version: int = 0  # the cycle's consumption count when the list was built

    def reason(self) -> str:
        """Why nothing could be offered, in HTCondor's order of precedence (docs/negotiation.md, rejection reasons)."""
        if self.concurrency:
            return limits_reason(sorted(set(self.concurrency)))
        if self.no_preemption_req:
            return PREEMPTION_REQ_FALSE
        if self.limited:
            return SUBMITTER_LIMIT
        return NO_MATCH


def sort_key(pre: float, rank: float, post: float, state: int, prank: float, index: int) -> tuple:
    """The candidate order of docs/negotiation.md (candidate slots) as an ascending key: PRE_JOB_RANK, job Rank,
    POST_JOB_RANK, preemption state and PREEMPTION_RANK descending (the knob ranks
    compared in single precision, as HTCondor does), then slot list order."""
    return (-float32(pre), -rank, -float32(post), -state, -float32(prank), index)


__all__ = [
    "NO_MATCH",
    "NO_PREEMPTION",
    "PREEMPTION_REQ_FALSE",
    "PRIO_PREEMPTION",
    "RANK_PREEMPTION",
    "REASONS",
    "SUBMITTER_LIMIT",
    "Budget",
    "Candidate",
    "CandidateList",
    "permits",
    "sort_key",
]
