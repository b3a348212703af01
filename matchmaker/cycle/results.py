"""What one negotiation cycle decided: matches, rejections, per-submitter and per-group lines.

Plain frozen records, built by :mod:`matchmaker.cycle.state` at the end of a cycle and
read by the CLI, the accountant session and the tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .ephemeral import ROOT_GROUP


@dataclass(frozen=True)
class GroupSummary:
    """One group's line of the cycle's quota table (the last allocation round's values, and
    the group's allocation in every round)."""

    name: str
    quota: float  # effective quota (GroupQuota)
    config_quota: float  # GROUP_QUOTA_<g>, or the GROUP_QUOTA_DYNAMIC_<g> fraction
    is_static: bool
    subtree_quota: float
    surplus: str  # "no", "ByQuota" (GROUP_ACCEPT_SURPLUS) or "Regroup" (GROUP_AUTOREGROUP)
    requested: float  # demand at cycle start: running + idle jobs of its submitters
    allocated: float  # GroupResourcesAllocated
    usage: float  # weighted usage of the group node when the cycle ended
    sort_key: float  # GROUP_SORT_EXPR value (FLT_MAX when it failed)
    order: int  # place in the last round's negotiation order, from 1
    matched: int  # matches its submitters made in this cycle
    allocated_by_round: tuple[float, ...] = ()  # GroupResourcesAllocated of each round, in order


@dataclass(frozen=True)
class Preemption:
    """What allowed a match to end another claim: the claim's job and user, both priorities,
    and the slot's Rank for the running job (``CurrentRank``) and for the new one."""

    job: Optional[str]  # the running job's JobId, when the slot ad names it
    user: str  # whose claim ends (RemoteUser / AccountingGroup)
    remote_user_prio: float  # RemoteUserPrio: the claim holder's EUP
    submitter_user_prio: float  # SubmitterUserPrio: the new match's EUP
    rank_before: float  # the slot's CurrentRank
    rank_after: float  # the slot's Rank for the new job


@dataclass(frozen=True)
class Match:
    """One match: the job, its submitter, the slot, why the slot was available, whom it preempts.

    With groups, ``group`` is the submitter's group and ``negotiating_group`` /
    ``autoregroup`` say in which pass the match was made: what the claim then publishes
    as ``RemoteGroup``, ``RemoteNegotiatingGroup`` and ``RemoteAutoregroup`` (docs/negotiation.md, what a match does)."""

    job: str
    submitter: str
    slot: str
    reason: str  # "no-preemption" | "rank" | "priority"
    preempted: Optional[str]
    weight: float = 1.0
    group: Optional[str] = None
    negotiating_group: str = ROOT_GROUP
    autoregroup: bool = False
    preemption: Optional[Preemption] = None  # set when ``preempted`` is
    preempted_slots: tuple[str, ...] = ()  # dynamic slots a partitionable slot's match preempts


@dataclass(frozen=True)
class SubmitterSummary:
    """A submitter's EUP, its pie slice at the first spin (``inf`` when unlimited), matches
    made, and its limit in each spin it took part in, in order (its slice less its usage,
    at most what was left of the pie; a spin whose limit is below the smallest slot
    weight is skipped for that submitter)."""

    name: str
    eup: float
    limit: float
    matched: int
    spin_limits: tuple[float, ...] = ()


@dataclass(frozen=True)
class Rejection:
    """A request that got no slot: HTCondor's rejection text (docs/negotiation.md, rejection reasons), the mechanism
    that decided (a short keyword, see :mod:`matchmaker.cycle.explain`) and a sentence
    naming it with the knob and the numbers."""

    job: str
    reason: str
    mechanism: str = ""
    explanation: str = ""


@dataclass
class CycleResult:
    """Everything one cycle decided."""

    matches: list[Match]
    submitters: list[SubmitterSummary]
    rejected: list[Rejection]
    warnings: list[str]
    usage: dict[str, float]
    spins: int = 0
    groups: list[GroupSummary] = field(default_factory=list)  # group quotas only, in group order
    history: list[Rejection] = field(default_factory=list)  # every rejection in order, incl. later matched

    @property
    def group_quotas(self) -> dict[str, float]:
        """Each group's effective quota of the last allocation round (empty without groups)."""
        return {g.name: g.quota for g in self.groups}


__all__ = ["CycleResult", "GroupSummary", "Match", "Preemption", "Rejection", "SubmitterSummary"]
