"""The group-quota loop of one negotiation cycle (docs/negotiation.md, floor round and dispatch and group quotas), on top of the pie engine.

With ``GROUP_NAMES`` set, a cycle does not spin one pie over every submitter:
:func:`matchmaker.groups.quotas.run_rounds` assigns quotas, shares surplus, orders the
groups by ``GROUP_SORT_EXPR`` and hands each group, round after round, a
(truncated) limit; each such *pass* runs the floor round and the pie over that
group's submitters.  This module connects the two halves:

* what the group math needs from the pool -- per-group demand (running plus idle
  jobs, weighted by ``RequestCpus`` under ``NEGOTIATOR_USE_WEIGHTED_DEMAND``), the
  live per-group usage after each pass, and the ``GROUP_SORT_EXPR`` value of each
  group's ad (``AccountingGroup``, ``GroupQuota``, ``GroupResourcesInUse``,
  ``GroupResourcesAllocated``, the attributes docs/negotiation.md (allocation rounds) lists);
* what a pass tells the pie and its requests -- the group to cap
  (``SubmitterNegotiatingGroup``; none in the autoregroup root pass), whether it is
  that root pass (``SubmitterAutoregroup``), and the current round's quotas
  (``SubmitterGroupQuota``);
* the cycle's quota table (:class:`GroupSummary`, one per group, from the last
  round), which the CLI prints and stores so the next cycle can publish
  ``RemoteGroupQuota`` in slot ads (docs/negotiation.md, on slots).

The pie engine is passed in (``pie=``), the same shape as ``run_rounds(negotiate=)``,
so this module sits beside :mod:`matchmaker.cycle.negotiator` rather than under it.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Optional

from classad.ad import ClassAd
from classad.evaluate import evaluate_top

from ..groups.membership import group_demand, group_of_submitter, negotiating_members
from ..groups.quotas import (
    FLT_MAX,
    Allocation,
    GroupPass,
    GroupStats,
    GroupTree,
    Quotas,
    SortKey,
    assign_quotas,
    run_rounds,
    starvation_key,
)
from ..pool.ads import Pool
from .demand import job_demand
from .ephemeral import ROOT_GROUP, GroupContext, MatchState
from .results import CycleResult, GroupSummary
from .state import Cycle, SubmitterState


def group_sort_key(expr: Any, now: float) -> SortKey:
    """``GROUP_SORT_EXPR`` as a key function over one group's ad; a value that is not a
    number gives None, which the ordering puts last (FLT_MAX).  None: starvation order."""
    if expr is None:
        return starvation_key

    def key(stats: GroupStats) -> Optional[float]:
        ad = ClassAd(
            {
                "AccountingGroup": stats.name,
                "GroupQuota": stats.quota,
                "GroupResourcesAllocated": stats.allocated,
                "GroupResourcesInUse": stats.usage,
            }
        )
        v = evaluate_top(expr, ad, MatchState(None, now))
        return float(v) if type(v) in (int, float) else None

    return key


def surplus_label(tree: GroupTree, name: str) -> str:
    """The "Use Surplus" column of ``condor_userprio -quotas``."""
    node = tree.nodes[name]
    return "Regroup" if node.autoregroup else "ByQuota" if node.accept_surplus else "no"


class _Rounds:
    """What the allocation rounds report back: the latest round's quotas, order and keys."""

    def __init__(self, tree: GroupTree, quotas: Quotas, sort_key: SortKey, usage_of: Callable[[str], float]) -> None:
        self.tree, self.sort_key, self.usage_of = tree, sort_key, usage_of
        self.quota: dict[str, float] = dict(quotas.quota)  # SubmitterGroupQuota of the current round
        self.allocation: Optional[Allocation] = None
        self.order: tuple[str, ...] = tree.order
        self.keys: dict[str, float] = {}
        self.allocated: dict[str, list[float]] = {name: [] for name in tree.order}  # per round

    def __call__(self, _round: int, alloc: Allocation, order: tuple[str, ...]) -> None:
        self.quota.clear()
        self.quota.update(alloc.quota)
        self.allocation, self.order = alloc, order
        for name in self.tree.order:
            self.allocated[name].append(alloc.allocated[name])
        for name in self.tree.order:
            value = self.sort_key(GroupStats(name, alloc.quota[name], alloc.allocated[name], self.usage_of(name)))
            self.keys[name] = FLT_MAX if value is None or math.isnan(value) else float(value)


def negotiate_groups(cycle: Cycle, pool: Pool, *, pie: Callable[..., list[SubmitterState]]) -> CycleResult:
    """Hierarchical group quotas (docs/negotiation.md, allocation rounds) for a cycle built with the group tree: the
    rounds of ``groups.run_rounds``, each pass running the floor round and ``pie`` (the
    pie engine, :func:`matchmaker.cycle.pie.negotiate_with_group`) for its group."""
    settings, now = cycle.settings, cycle.now
    tree = settings.group_tree
    assert tree is not None
    weighted = settings.use_slot_weights
    total = cycle.pool_weight if weighted else cycle.effective_pool
    quotas = assign_quotas(tree, total, settings.allow_quota_oversubscription)
    for s in cycle.submitters:
        if "@" not in s.name:
            cycle.warnings.append(
                f"warning: submitter {s.name} has no @domain (set UID_DOMAIN); "
                "with group quotas it is not negotiated for"
            )
    by_name = {s.name: s for s in cycle.submitters}
    members = negotiating_members(tree, by_name)
    memory = cycle.carry.job_weights if cycle.carry is not None else None
    demand = group_demand(tree, job_demand(pool, by_name, settings.use_weighted_demand, memory).items())
    rounds = _Rounds(tree, quotas, group_sort_key(settings.group_sort_expr, now), cycle.usage.of_group)
    order: list[SubmitterState] = []

    def run_pass(p: GroupPass) -> Mapping[str, float]:
        subs = [by_name[n] for n in members[p.group]]
        root_pass = tree.autoregroup and p.negotiate_as is None
        ctx = GroupContext(p.negotiate_as or ROOT_GROUP, root_pass, rounds.quota)
        below = [s for s in subs if s.floor > 0 and cycle.usage.of(s.name) < s.floor]
        if below:
            pie(cycle, below, floor_round=True, group_quota=p.limit, group_name=p.negotiate_as, context=ctx)
        seen = {s.name for s in order}
        order.extend(
            s
            for s in pie(cycle, subs, group_quota=p.limit, group_name=p.negotiate_as, context=ctx)
            if s.name not in seen
        )
        return dict(cycle.usage.group)

    run_rounds(
        tree,
        quotas,
        demand,
        dict(cycle.usage.group),
        run_pass,
        pool_size=total,
        groups_with_submitters={group_of_submitter(n, tree) for n in by_name},
        weighted_slots=weighted,
        consider_preemption=settings.policy.consider_preemption,
        strict_enforce=settings.strict_enforce_quota,
        max_rounds=settings.max_allocation_rounds,
        round_robin_rate=settings.round_robin_rate,
        sort_key=rounds.sort_key,
        now=now,
        on_round=rounds,
    )
    matched: dict[str, int] = {}
    for m in cycle.matches:
        g = group_of_submitter(m.submitter, tree)
        matched[g] = matched.get(g, 0) + 1
    alloc = rounds.allocation
    summaries = [
        GroupSummary(
            name,
            rounds.quota[name],
            tree.nodes[name].config_quota,
            tree.nodes[name].is_static,
            quotas.subtree_quota[name],
            surplus_label(tree, name),
            demand[name],
            alloc.allocated[name] if alloc is not None else 0.0,
            cycle.usage.of_group(name),
            rounds.keys.get(name, 0.0),
            position,
            matched.get(name, 0),
            tuple(rounds.allocated.get(name, ())),
        )
        for position, name in enumerate(rounds.order, 1)
    ]
    return cycle.result(order + [s for s in cycle.submitters if s not in order], summaries)


__all__ = ["GroupSummary", "group_sort_key", "negotiate_groups", "surplus_label"]
