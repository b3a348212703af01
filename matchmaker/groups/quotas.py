"""Hierarchical group quotas (docs/negotiation.md, group quotas): group tree, quota assignment,
surplus sharing, integer remainder rounds, strict caps, group order, allocation rounds.
Who belongs to which group lives in `matchmaker.groups.membership`.

Design: HTCondor keeps the working values on the tree nodes and interleaves this math with
the negotiation loop.  Here the tree is immutable (built once per reconfig) and each phase
maps plain data to plain data, so the worked examples of docs/negotiation.md (worked examples) are plain asserts.  The
allocation rounds need the pie engine and take it as a callback (`run_rounds(negotiate=)`).
The arithmetic follows the reference step by step (operation order, left-to-right sums,
`floor`, C's truncating int conversion of the group limit): example 7.8 hinges on it.
"""

from __future__ import annotations

import math
import operator
import string
import sys
from collections import deque
from dataclasses import dataclass, replace
from functools import reduce
from typing import Callable, Collection, Iterable, Mapping, Optional

from classad.values import FLT_MAX

ROOT = "<none>"
_ROOT_SORT = 3.4e38  # the default GROUP_SORT_EXPR's value for <none> ...
_ZERO_QUOTA_SORT = 3.3e38  # ... and for a group whose quota is 0
_NO_RR_TIME = sys.float_info.max  # rr time of a subtree that wants nothing
_INT_MAX = 2**31 - 1
_FOLD = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def fold(name: str) -> str:
    """Fold case the way the reference compares group names (strcasecmp: ASCII only)."""
    return name.translate(_FOLD)


def _add(values: Iterable[float]) -> float:
    """Plain left-to-right float sum, as the reference accumulates (`sum` may compensate)."""
    return reduce(operator.add, values, 0.0)


@dataclass(frozen=True)
class GroupConfig:
    """One GROUP_NAMES entry and its GROUP_*_<g> knobs; None means "not set"."""

    name: str
    static_quota: Optional[float] = None  # GROUP_QUOTA_<g>: absolute weight, wins over dynamic
    dynamic_quota: Optional[float] = None  # GROUP_QUOTA_DYNAMIC_<g>: fraction of the parent
    accept_surplus: bool = False  # GROUP_ACCEPT_SURPLUS[_<g>]
    autoregroup: bool = False  # GROUP_AUTOREGROUP[_<g>]
    prio_factor: Optional[float] = None  # GROUP_PRIO_FACTOR_<g>: default factor of members


@dataclass(frozen=True)
class GroupNode:
    """A group as the tree holds it: configuration resolved, links by canonical name."""

    name: str
    parent: Optional[str]
    children: tuple[str, ...]
    config_quota: float
    is_static: bool
    accept_surplus: bool
    autoregroup: bool
    prio_factor: Optional[float]


@dataclass(frozen=True, eq=False)
class GroupTree:
    """The immutable group tree; `order` is breadth-first from the root, siblings sorted
    case-insensitively (the reference's presentation order, the last tie-breaker)."""

    nodes: Mapping[str, GroupNode]
    order: tuple[str, ...]
    warnings: tuple[str, ...]
    by_fold: Mapping[str, str]

    def lookup(self, name: str) -> Optional[str]:
        """Canonical spelling of a configured group name (case-insensitive), else None."""
        return self.by_fold.get(fold(name))

    @property
    def autoregroup(self) -> bool:
        """True when any group autoregroups (docs/negotiation.md, autoregroup: the root then runs last, uncapped)."""
        return self.nodes[ROOT].autoregroup


def build_tree(configs: Iterable[GroupConfig]) -> GroupTree:
    """Build the tree under the implicit root `<none>`.  Bad entries (reserved name, empty
    component, duplicate, missing parent) are skipped and listed in `tree.warnings`."""
    warnings: list[str] = []
    # Sorting case-insensitively puts every parent before its children; of two spellings
    # of one name the first listed is kept (list position is the tie-breaker).
    entries = [c for _, c in sorted(enumerate(configs), key=lambda p: (fold(p[1].name), p[0]))]
    by_fold = {fold(ROOT): ROOT}
    kids: dict[str, list[str]] = {ROOT: []}
    made: dict[str, GroupNode] = {}
    for cfg in entries:
        name, parts = cfg.name, cfg.name.split(".")
        parent = ROOT if len(parts) == 1 else by_fold.get(fold(".".join(parts[:-1])))
        problem = (
            "uses the root group's reserved name"
            if fold(parts[0]) == fold(ROOT)
            else "has an empty component"
            if "" in parts
            else "is a duplicate"
            if fold(name) in by_fold
            else "has no configured parent"
            if parent is None
            else None
        )
        if problem or parent is None:
            warnings.append(f"group name {name!r} {problem}; ignored")
            continue
        if cfg.static_quota is not None and cfg.static_quota >= 0:
            quota, is_static = float(cfg.static_quota), True
        elif cfg.dynamic_quota is not None and cfg.dynamic_quota >= 0:
            quota, is_static = float(cfg.dynamic_quota), False
        else:
            warnings.append(f"no usable quota for group {name!r}; defaulting to dynamic 0")
            quota, is_static = 0.0, False
        by_fold[fold(name)] = name
        kids[parent].append(name)
        kids[name] = []
        made[name] = GroupNode(name, parent, (), quota, is_static, cfg.accept_surplus, cfg.autoregroup, cfg.prio_factor)
    # The root always accepts surplus; its autoregroup flag means "autoregroup anywhere".
    made[ROOT] = GroupNode(ROOT, None, (), 0.0, False, True, any(n.autoregroup for n in made.values()), None)
    nodes = {name: replace(node, children=tuple(kids[name])) for name, node in made.items()}
    order: list[str] = []
    queue = deque([ROOT])
    while queue:
        order.append(queue.popleft())
        queue.extend(kids[order[-1]])
    return GroupTree(nodes, tuple(order), tuple(warnings), by_fold)


def _per_group(tree: GroupTree, values: Mapping[str, float]) -> dict[str, float]:
    """Per-group values by canonical name, zero where absent.  Names that are not groups
    are ignored: the reference reads only the accountant records of configured groups."""
    out = {name: 0.0 for name in tree.order}
    for name, value in values.items():
        if (found := tree.lookup(name)) is not None:
            out[found] += float(value)
    return out


@dataclass(frozen=True)
class Quotas:
    """Result of quota assignment: a group's own quota (what its direct submitters may
    use) and its subtree quota (what its whole subtree received from its parent)."""

    quota: Mapping[str, float]
    subtree_quota: Mapping[str, float]


def assign_quotas(tree: GroupTree, pool_size: float, allow_oversubscription: bool = True) -> Quotas:
    """`hgq_assign_quotas` (docs/negotiation.md, quota assignment).  Static children take their configured share
    first, scaled down proportionally only without oversubscription; dynamic children
    split the rest, normalised only if their fractions sum past 1; nothing scales up."""
    quota = {name: 0.0 for name in tree.order}
    subtree = dict(quota)

    def assign(name: str, q: float) -> None:
        if q <= 0:
            return  # this whole subtree keeps quota 0
        subtree[name] = q
        children = [tree.nodes[c] for c in tree.nodes[name].children]
        s_sum = _add(c.config_quota for c in children if c.is_static)
        d_sum = _add(c.config_quota for c in children if not c.is_static)
        s_avail = s_sum if allow_oversubscription else min(s_sum, q)
        d_avail = max(0.0, q - s_avail)
        s_norm = s_sum if s_sum > 0 else 1.0  # all-zero static quotas: avoid 0/0
        d_norm = max(d_sum, 1.0)
        given = 0.0
        for child in children:
            share = max(0.0, child.config_quota * ((s_avail / s_norm) if child.is_static else (d_avail / d_norm)))
            assign(child.name, share)
            given += share
        # With oversubscription an interior group keeps its whole subtree quota as its own;
        # the root never does, or every unused slot would be counted twice as surplus.
        own = q if allow_oversubscription and name != ROOT else q - given
        quota[name] = max(own, 0.0)

    assign(ROOT, float(pool_size))
    return Quotas(quota, subtree)


@dataclass(frozen=True)
class Allocation:
    """One allocation round's outcome (docs/negotiation.md, allocation rounds)."""

    quota: Mapping[str, float]  # effective quota (GroupQuota); root = pool under autoregroup
    allocated: Mapping[str, float]  # GroupResourcesAllocated: quota share plus surplus
    unmet: Mapping[str, float]  # demand left without allocation
    surplus: float  # surplus that no group could take
    round_robin: frozenset[str]  # groups the integer remainder round robin served


@dataclass(slots=True)
class _Work:
    """Mutable per-group scratch values of one allocation pass."""

    quota: float
    subtree_quota: float
    requested: float
    rr_time: float
    allocated: float = 0.0
    subtree_requested: float = 0.0
    subtree_rr_time: float = 0.0
    rr: bool = False


def allocate(
    tree: GroupTree,
    quotas: Quotas,
    demand: Mapping[str, float],
    *,
    weighted_slots: bool = True,
    rr_times: Optional[Mapping[str, float]] = None,
    pool_size: Optional[float] = None,
) -> Allocation:
    """Fair share with bottom-up surplus, then (unweighted slots only) integer remainder
    recovery.  With `pool_size` and autoregroup the root's quota and allocation become the
    whole pool afterwards, as in the reference."""
    allocator = _Allocator(tree, quotas, demand, rr_times or {})
    left = allocator.fairshare(ROOT)
    if not weighted_slots:
        left += allocator.recover(ROOT)
    w = allocator.w
    quota = {name: w[name].quota for name in tree.order}
    allocated = {name: w[name].allocated for name in tree.order}
    if tree.autoregroup and pool_size is not None:
        quota[ROOT] = allocated[ROOT] = float(pool_size)
    return Allocation(
        quota,
        allocated,
        {name: w[name].requested for name in tree.order},
        left,
        frozenset(name for name in tree.order if w[name].rr),
    )


class _Allocator:
    """The steps of :func:`allocate` over one tree's working figures (``w``, by group):
    fair share with surplus passed up and shared out (:meth:`fairshare`,
    :meth:`share_surplus`), then the integer remainder recovered and handed out round-robin
    (:meth:`recover`, :meth:`round_robin`)."""

    def __init__(
        self, tree: GroupTree, quotas: Quotas, demand: Mapping[str, float], rr_times: Mapping[str, float]
    ) -> None:
        self.tree = tree
        rr = _per_group(tree, rr_times)
        self.w = {
            name: _Work(quotas.quota.get(name, 0.0), quotas.subtree_quota.get(name, 0.0), 0.0, rr[name])
            for name in tree.order
        }
        for name, amount in _per_group(tree, demand).items():
            self.w[name].requested = amount
        self.accept = {name: node.accept_surplus for name, node in tree.nodes.items()}

    def members(self, name: str) -> list[tuple[str, float, float]]:
        """(name, weight, want) of the children, then the node as an accepting child."""
        w, accept = self.w, self.accept
        rows = [
            (c, w[c].subtree_quota, w[c].subtree_requested if accept[c] else 0.0)
            for c in self.tree.nodes[name].children
        ]
        rows.append((name, w[name].quota, w[name].requested))
        return [(n, q, d if d > 0 else 0.0) for n, q, d in rows]

    # ---- fair share and surplus ---------------------------------------------------------

    def fairshare(self, name: str) -> float:
        """Give ``name``'s subtree what its quotas cover; returns the surplus passed up."""
        node = self.w[name]
        node.allocated = min(node.requested, node.quota)
        node.requested -= node.allocated
        node.subtree_requested = node.requested
        surplus = node.quota - node.allocated  # unused quota of any group is surplus
        children = self.tree.nodes[name].children
        for child in children:
            surplus += self.fairshare(child)
            if self.accept[child]:
                node.subtree_requested += self.w[child].subtree_requested
        return self.share_surplus(name, surplus) if children else surplus

    def share_surplus(self, name: str, surplus: float) -> float:
        """Share ``surplus`` among ``name``'s accepting children and itself; returns what is left."""
        if surplus <= 0:
            return 0.0
        outstanding = self.w[name].subtree_requested
        if outstanding <= 0:
            return surplus
        rows = self.members(name)
        want = [r[2] for r in rows]
        give = [0.0] * len(rows)
        if surplus >= outstanding:
            give, want = want, give
            surplus -= outstanding
            outstanding = 0.0
        else:
            surplus, outstanding = _spread(rows, want, give, surplus, outstanding)
        for (child, _, _), amount in zip(rows[:-1], give):
            if amount > 0:
                self.share_surplus(child, amount)
        self.w[name].allocated += give[-1]
        self.w[name].requested -= give[-1]
        self.w[name].subtree_requested = outstanding
        return surplus

    # ---- remainder recovery and round robin --------------------------------------------

    def recover(self, name: str) -> float:
        """Round each allocation to a whole number; returns the fractions gathered as surplus."""
        w = self.w
        node = w[name]
        frac = node.allocated - math.floor(node.allocated)
        node.allocated = math.floor(0.5 + (node.allocated - frac))
        node.requested = math.floor(0.5 + (node.requested + frac))
        node.subtree_requested = node.requested
        node.subtree_rr_time = node.rr_time if node.requested > 0 else _NO_RR_TIME
        surplus = frac
        children = self.tree.nodes[name].children
        for child in children:
            surplus += self.recover(child)
            if self.accept[child]:
                node.subtree_requested += w[child].subtree_requested
                if w[child].subtree_requested > 0:
                    node.subtree_rr_time = min(node.subtree_rr_time, w[child].subtree_rr_time)
        return self.round_robin(name, surplus) if children else surplus

    def round_robin(self, name: str, surplus: float) -> float:
        """Hand whole slots of ``surplus`` out round-robin, longest-unserved subtree first."""
        w = self.w
        node = w[name]
        outstanding: float = math.floor(node.subtree_requested)
        node.subtree_requested = outstanding
        if outstanding <= 0 or surplus < 1:
            return surplus
        rows = self.members(name)
        rr_time = [w[c].subtree_rr_time for c, _, _ in rows[:-1]] + [node.rr_time]
        want = [r[2] for r in rows]
        give = [0.0] * len(rows)
        # Longest-unserved subtree first, then larger quota, then larger demand; list
        # position (children in tree order, the node last) breaks the remaining ties.
        order = sorted(range(len(rows)), key=lambda i: (rr_time[i], -rows[i][1], -rows[i][2], i))
        waiting = sum(1 for x in want if x > 0)
        while surplus >= 1 and outstanding > 0 and waiting > 0:
            step = max(1.0, math.floor(surplus / waiting))
            waiting, handed = 0, 0.0
            for i in order:
                if want[i] > 0:
                    a = min(want[i], step)
                    give[i] += a
                    want[i] -= a
                    handed += a
                    surplus -= a
                    outstanding -= a
                    w[rows[i][0]].rr = True
                    waiting += want[i] > 0
                    if surplus < step:
                        break
            if handed < 1:
                break
        for (child, _, _), amount in zip(rows[:-1], give):
            if amount > 0:
                self.round_robin(child, amount)
        node.allocated += give[-1]
        node.requested -= give[-1]
        node.subtree_requested = outstanding
        return surplus


def _spread(
    rows: list[tuple[str, float, float]], want: list[float], give: list[float], surplus: float, outstanding: float
) -> tuple[float, float]:
    """Spread a ``surplus`` smaller than what is wanted over ``rows``: weighted by quota
    first, then in equal shares, each capped at what it wants (``want`` and ``give`` are
    updated in place).  Returns the surplus and outstanding demand left."""
    for by_quota in (True, False):  # quota-weighted first, then equal shares
        weights = [r[1] if by_quota else 1.0 for r in rows]
        while surplus > 0:
            total = _add(weights[i] for i, x in enumerate(want) if x > 0)
            if total <= 0:
                break
            uncapped, handed = True, 0.0
            for i, wanted in enumerate(want):
                if wanted > 0:
                    a = surplus * (weights[i] / total)
                    if a > wanted:
                        a, uncapped = wanted, False
                    give[i] += a
                    want[i] -= a
                    handed += a
            surplus -= handed
            outstanding -= handed
            if uncapped or surplus < 0:
                surplus = 0.0  # float jitter: an uncapped pass spent it all
    return surplus, outstanding


@dataclass(frozen=True)
class GroupStats:
    """GROUP_SORT_EXPR's view: AccountingGroup, GroupQuota, GroupResources{Allocated,InUse}."""

    name: str
    quota: float
    allocated: float
    usage: float


SortKey = Callable[[GroupStats], Optional[float]]


def starvation_key(stats: GroupStats) -> float:
    """The default GROUP_SORT_EXPR: usage/quota, quota-0 groups late, `<none>` last."""
    if stats.name == ROOT:
        return _ROOT_SORT
    return stats.usage / stats.quota if stats.quota > 0 else _ZERO_QUOTA_SORT


def group_order(
    tree: GroupTree, allocation: Allocation, usage: Mapping[str, float], sort_key: Optional[SortKey] = None
) -> list[str]:
    """Negotiation order: ascending sort value (None or NaN -> FLT_MAX), the root forced
    last under autoregroup, ties kept in breadth-first tree order."""
    key_of = sort_key or starvation_key
    in_use = _per_group(tree, usage)
    keyed = []
    for index, name in enumerate(tree.order):
        value = key_of(GroupStats(name, allocation.quota[name], allocation.allocated[name], in_use[name]))
        value = FLT_MAX if value is None or math.isnan(value) else float(value)
        keyed.append(((int(tree.autoregroup and name == ROOT), value, index), name))
    return [name for _, name in sorted(keyed)]


def subtree_usage(tree: GroupTree, usage: Mapping[str, float]) -> dict[str, float]:
    """Own usage plus all descendants' usage, per group."""
    total = _per_group(tree, usage)
    for name in reversed(tree.order[1:]):
        parent = tree.nodes[name].parent
        assert parent is not None  # only the root has none, and it is order[0]
        total[parent] += total[name]
    return total


def strict_cap(
    tree: GroupTree, quotas: Quotas, group: str, slots: float, group_usage: float, live_usage: Mapping[str, float]
) -> float:
    """NEGOTIATOR_STRICT_ENFORCE_QUOTA: cap the growth `slots - group_usage` by the room
    left under every non-accepting group on the way to the root (its configured static
    quota, or its subtree quota if dynamic, minus its subtree's live usage)."""
    in_subtree = subtree_usage(tree, live_usage)
    extra = slots - group_usage
    name = tree.lookup(group)
    while name is not None:
        node = tree.nodes[name]
        if not node.accept_surplus:
            cap = node.config_quota if node.is_static else quotas.subtree_quota[name]
            extra = min(extra, max(0.0, cap - in_subtree[name]))
        name = node.parent
    return group_usage + extra


@dataclass(frozen=True)
class GroupPass:
    """One call of the pie engine for one group."""

    round: int  # allocation round, from 1
    group: str  # whose submitters negotiate (root: plus autoregroup members)
    limit: int  # group quota handed to the pie (truncated, like the reference)
    negotiate_as: Optional[str]  # group whose usage the pie caps; None = the autoregroup root pass


@dataclass(frozen=True)
class RoundRecord:
    """What one allocation round computed and the usage it left."""

    allocation: Allocation
    order: tuple[str, ...]
    maxdelta: float
    usage_after: Mapping[str, float]


@dataclass(frozen=True)
class RoundsResult:
    """All rounds of one cycle, every pie call in order, and the updated rr times."""

    rounds: tuple[RoundRecord, ...]
    passes: tuple[GroupPass, ...]
    rr_times: Mapping[str, float]


def run_rounds(
    tree: GroupTree,
    quotas: Quotas,
    demand: Mapping[str, float],
    usage: Mapping[str, float],
    negotiate: Callable[[GroupPass], Mapping[str, float]],
    *,
    pool_size: float,
    groups_with_submitters: Collection[str],
    weighted_slots: bool = True,
    consider_preemption: bool = True,
    strict_enforce: bool = True,
    max_rounds: int = 3,
    round_robin_rate: float = 1e100,
    sort_key: Optional[SortKey] = None,
    rr_times: Optional[Mapping[str, float]] = None,
    now: float = 0.0,
    on_round: Optional[Callable[[int, Allocation, tuple[str, ...]], None]] = None,
) -> RoundsResult:
    """`hgq_negotiate_all` (docs/negotiation.md, allocation rounds): allocate, order, hand each group its limit in
    round-robin steps, then re-allocate what was not used, up to `max_rounds` times.
    `negotiate(pass)` runs the floor round and the pie for that group and returns every
    group's weighted usage afterwards; `on_round(round, allocation, order)` hears each
    round's quotas before its passes (requests carry them as `SubmitterGroupQuota`)."""
    requested = _per_group(tree, demand)
    at_start = _per_group(tree, usage)  # refreshed only between rounds, like the reference
    live = dict(at_start)
    rr_state = _per_group(tree, rr_times or {})
    active = {g for g in map(tree.lookup, groups_with_submitters) if g is not None}
    if any(tree.nodes[g].autoregroup for g in active):
        active.add(ROOT)
    any_accepts = any(tree.nodes[g].accept_surplus for g in tree.order[1:])
    records: list[RoundRecord] = []
    passes: list[GroupPass] = []
    for round_no in range(1, max(1, max_rounds) + 1):
        alloc = allocate(tree, quotas, requested, weighted_slots=weighted_slots, rr_times=rr_state, pool_size=pool_size)
        if tree.autoregroup:  # the reference leaves the pool-sized root quota in place
            quotas = Quotas({**quotas.quota, ROOT: float(pool_size)}, quotas.subtree_quota)
        goal = alloc.allocated if any_accepts else alloc.quota
        allocated_total = _add(alloc.allocated[g] for g in tree.order)
        maxdelta = max(max(0.0, goal[g] - at_start[g]) for g in tree.order)
        order = group_order(tree, alloc, at_start, sort_key)
        if on_round is not None:
            on_round(round_no, alloc, tuple(order))
        n = 0.0
        while True:
            n = min(n + max(1.0, round_robin_rate), maxdelta)  # the knob's floor is 1
            # maxdelta 0 with a positive delta is 0/0 in the reference (a NaN limit that
            # matches nothing); a fraction of 0 gives the same "no new slots".
            fraction = n / maxdelta if maxdelta > 0 else 0.0
            for name in order:
                have, got = at_start[name], alloc.allocated[name]
                if got <= 0 or (have >= got and not consider_preemption) or name not in active:
                    continue
                target = max(got, alloc.quota[name])
                delta = max(0.0, target - have)
                slots = min(have + delta * fraction if delta > 0 else target, target)
                if not weighted_slots:
                    slots = math.floor(slots)
                if strict_enforce:
                    slots = strict_cap(tree, quotas, name, slots, have, live)
                limit = int(max(-_INT_MAX - 1, min(float(_INT_MAX), slots)))  # C's (int)
                passes.append(GroupPass(round_no, name, limit, None if tree.autoregroup and name == ROOT else name))
                live = _per_group(tree, negotiate(passes[-1]))
            if n >= maxdelta:
                break
        used_total = 0.0
        for name in tree.order:
            at_start[name] = live[name]
            used_total += min(live[name], alloc.allocated[name])
            # Allocation a group could not use goes back to the pool for the next round.
            got = alloc.allocated[name]
            requested[name] = live[name] if live[name] < got else alloc.unmet[name] + got
        records.append(RoundRecord(alloc, tuple(order), maxdelta, dict(live)))
        if used_total >= allocated_total:
            break
    for name in tree.order:
        if name in records[-1].allocation.round_robin or requested[name] <= 0:
            rr_state[name] = now
    return RoundsResult(tuple(records), tuple(passes), rr_state)
