"""Explained results: which mechanism decided a rejection, and what allowed a preemption.

HTCondor's rejection texts (docs/negotiation.md, rejection reasons) are short and sometimes misleading: a request
turned away because its submitter's slice, or its group's quota, was used up is reported
as "no match found" when the only search left (preemption by machine Rank) came back
empty.  The cycle keeps that text in ``Rejection.reason`` and adds, from this module, a
*mechanism* keyword and a plain sentence naming the knob and the numbers:

=========================  ==============================================================
``requirements``           no available slot satisfies both Requirements
``unavailable``            slots accept it, but every one is claimed and not preemptible
``preemption-requirements``  PREEMPTION_REQUIREMENTS refused the claimed slots it could take
``submitter-limit``        the submitter's pie slice (its share of the pool) was used up
``group-quota``            the submitter's group reached its quota (or an ancestor's cap)
``concurrency-limit``      a concurrency limit the job asks for is exhausted
``accounting-group-map``   refused at submit time by the accounting-group map
=========================  ==============================================================

Explaining a rejection asks the matcher's memoizing evaluator again for the pair tests,
once per slot class, so it costs little next to the search it explains; the analyze
reports (:mod:`matchmaker.analyze`) evaluate the same tests independently, with the
language's evaluator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, is_, is_not
from typing import Optional, Protocol

import numpy as np

from classad.ad import ClassAd
from classad.ast import Node
from classad.columnar import AdTable, evaluate_attribute, true_mask
from classad.evaluate import draws_undone, eval_attribute, evaluate_top
from classad.values import ERROR, UNDEFINED, truthiness

from ..config.settings import MatchPolicy, Settings
from ..groups.quotas import GroupTree
from ..pool.concurrency import ConcurrencyLimits, parse_limits
from .candidates import Budget
from .columnar_match import MatcherParts, SlotTable, table_of
from .ephemeral import LiveUsage, MatchState, NegotiationAd, Priorities
from .evaluator import J_REQ, S_CURRENT, S_PREQ, S_RANK, S_REQ, Evaluator, SlotEntry
from .matching import Matcher
from .results import Match, Preemption

_KINDS = {"rank": S_RANK, "current": S_CURRENT, "preq": S_PREQ}
REQUIREMENTS, UNAVAILABLE, PREEMPTION_REQUIREMENTS = "requirements", "unavailable", "preemption-requirements"
SUBMITTER_LIMIT, GROUP_QUOTA, CONCURRENCY_LIMIT = "submitter-limit", "group-quota", "concurrency-limit"
GROUP_MAP = "accounting-group-map"
PRIORITY_POLICY = "priority-policy"

# Why a slot both sides accept was still not a candidate (see :func:`slot_availability`).
AVAILABLE = "available"
RANK_PREEMPTIBLE = "preemptible by machine Rank"
PRIO_PREEMPTIBLE = "preemptible by priority"
ALREADY_MATCHED = "already matched this cycle"
TOO_LITTLE_LEFT = "partitionable, too little left for it (consumption policy)"
SAME_SUBMITTER = "claimed by the same submitter"
CLAIMED_IDLE = "claimed and idle (MATCHMAKER_SKIP_CLAIMED_IDLE = true)"
ONLY_RANK = "claimed, machine Rank not better (the submitter is past its limit: only Rank preemption)"
BETTER_PRIO = "claimed by a submitter with a better priority (MATCHMAKER_PREEMPTION_NEEDS_BETTER_EUP = true)"
PREQ_FALSE = "claimed, PREEMPTION_REQUIREMENTS false"
RANK_WORSE = "claimed, machine Rank worse for this job than for the running one"
NOT_PREEMPTIBLE = "claimed, not preemptible by it (machine Rank not better, priority preemption not allowed)"
EXAMINE = 16  # claims examined one by one per explained rejection
TAKEABLE = (AVAILABLE, RANK_PREEMPTIBLE, PRIO_PREEMPTIBLE)


def _state(usage: Optional[LiveUsage], now: float, my: ClassAd, target: Optional[ClassAd]) -> MatchState:
    st = MatchState(usage, now)
    st.my, st.target = my, target
    return st


def attribute(ad: ClassAd, name: str, target: Optional[ClassAd], usage: Optional[LiveUsage], now: float) -> object:
    """``ad.name`` evaluated with ``ad`` as MY and ``target`` as TARGET (Undefined if absent)."""
    node = ad.get_node(name)
    if node is None:
        return UNDEFINED
    try:
        return eval_attribute(ad, name.lower(), node, _state(usage, now, ad, target))
    except RecursionError:
        return ERROR


def knob_value(node: Node, slot: ClassAd, req: ClassAd, usage: Optional[LiveUsage], now: float) -> object:
    """A slot-side knob expression (PREEMPTION_REQUIREMENTS, ...) for the pair."""
    return evaluate_top(node, slot, _state(usage, now, slot, req))


def number(v: object) -> float:
    """A rank as the matcher uses it: numbers and booleans, anything else 0."""
    if type(v) in (int, float):
        return float(v)  # type: ignore[arg-type]
    if type(v) is bool:
        return 1.0 if v else 0.0
    return 0.0


def both_accept(req: ClassAd, slot: ClassAd, usage: Optional[LiveUsage], now: float) -> bool:
    """Whether the job's and the slot's Requirements both hold for the pair."""
    return (
        truthiness(attribute(req, "Requirements", slot, usage, now)) is True
        and truthiness(attribute(slot, "Requirements", req, usage, now)) is True
    )


@dataclass(frozen=True)
class Context:
    """What :func:`slot_availability` needs to know about the request and the cycle."""

    submitter: str
    submitter_eup: float
    eup_of: Callable[[str], float]
    policy: MatchPolicy
    usage: Optional[LiveUsage]
    now: float
    only_rank: bool = False


def direct_values(ctx: Context, req: ClassAd) -> Callable[[str, SlotEntry], object]:
    """``values(name, entry)`` for :func:`slot_availability` by plain evaluation: the slot's
    ``rank`` and ``current`` (numbers) and ``preq`` (PREEMPTION_REQUIREMENTS, a bool)."""

    def values(name: str, entry: SlotEntry) -> object:
        if name == "preq":
            node = ctx.policy.preemption_requirements  # asked only when it is set
            return node is None or truthiness(knob_value(node, entry.ad, req, ctx.usage, ctx.now)) is True
        return number(attribute(entry.ad, "Rank" if name == "rank" else "CurrentRank", req, ctx.usage, ctx.now))

    return values


def slot_availability(
    ctx: Context, entry: SlotEntry, req: ClassAd, values: Optional[Callable[[str, SlotEntry], object]] = None
) -> str:
    """Why ``entry`` (a slot both sides accept) is or is not a candidate for ``req``: the
    matcher's preemption tests (docs/negotiation.md, candidate slots), without the submitter limit and concurrency
    limits, which the caller reports separately.  ``values`` supplies the slot's Rank,
    CurrentRank and PREEMPTION_REQUIREMENTS (default: :func:`direct_values`)."""
    if not entry.alive:
        return ALREADY_MATCHED
    if entry.remote is None:
        return ONLY_RANK if ctx.only_rank else AVAILABLE
    return _claimed_availability(ctx, entry, req, values)


def _claimed_availability(
    ctx: Context, entry: SlotEntry, req: ClassAd, values: Optional[Callable[[str, SlotEntry], object]] = None
) -> str:
    remote, pol = entry.remote, ctx.policy
    assert remote is not None  # a claimed slot
    if pol.skip_claimed_idle and entry.claimed_idle:
        return CLAIMED_IDLE
    get = values or direct_values(ctx, req)
    rank, current = get("rank", entry), get("current", entry)
    if rank > current:  # type: ignore[operator]
        return RANK_PREEMPTIBLE
    if ctx.only_rank:
        return ONLY_RANK
    if remote == ctx.submitter:
        return SAME_SUBMITTER
    if pol.preemption_needs_better_eup and not ctx.submitter_eup < ctx.eup_of(remote):
        return BETTER_PRIO
    if pol.preemption_requirements is not None and not get("preq", entry):
        return PREQ_FALSE
    if rank < current:  # type: ignore[operator]
        return RANK_WORSE
    return PRIO_PREEMPTIBLE


def preemption(
    entry: SlotEntry,
    req: ClassAd,
    submitter_eup: float,
    eup_of: Callable[[str], float],
    usage: Optional[LiveUsage],
    now: float,
) -> Preemption:
    """What allowed a match on a claimed slot: the job and user it ends and the values compared."""
    ad, remote = entry.ad, entry.remote
    assert remote is not None  # only a claim is preempted
    job = attribute(ad, "JobId", None, usage, now)
    return Preemption(
        job if type(job) is str else None,
        remote,
        float(eup_of(remote)),
        float(submitter_eup),
        number(attribute(ad, "CurrentRank", req, usage, now)),
        number(attribute(ad, "Rank", req, usage, now)),
    )


# ---- rejections ------------------------------------------------------------------------------


def concurrency_text(names: Sequence[str], limits: ConcurrencyLimits, req: ClassAd) -> str:
    """Which limits are full, with their counters and capacities."""
    asked = {}
    v = req.evaluate("ConcurrencyLimits")
    if type(v) is str:
        asked = dict(parse_limits(v))
    parts = []
    for name in names:
        used, cap = limits.count.get(name, 0.0), float(limits.capacity(name))
        parts.append(
            f"{name}: {used:g} in use + {asked.get(name, 1.0):g} asked > capacity {cap:g} ({name.upper()}_LIMIT)"
        )
    return "concurrency limit reached: " + "; ".join(parts)


def group_cap_text(
    settings: Settings, usage: LiveUsage, group: str, pass_limit: float, quotas: Optional[Mapping[str, float]]
) -> str:
    """Why a group pass could hand out no more: the group at its limit, naming the cap."""
    tree = settings.group_tree
    in_use = usage.of_group(group)
    quota = (quotas or {}).get(group)
    q = f" (effective quota {quota:.2f})" if quota is not None else ""
    text = f"group {group} is at its limit of {pass_limit:g} for this pass{q}, with {in_use:g} in use"
    if tree is None or group not in tree.nodes:
        return text
    if settings.strict_enforce_quota:
        subtree = _subtree_usage(tree, usage)
        name: Optional[str] = group
        while name is not None:
            node = tree.nodes[name]
            if not node.accept_surplus and name != group:
                cap = node.config_quota if node.is_static else None
                if cap is not None and subtree[name] >= cap:
                    return (
                        f"{text}: ancestor {name} does not accept surplus and its subtree uses "
                        f"{subtree[name]:g} of its quota {cap:g} (NEGOTIATOR_STRICT_ENFORCE_QUOTA = true, "
                        f"GROUP_ACCEPT_SURPLUS_{name} = false)"
                    )
            name = node.parent
    over = "true" if settings.allow_quota_oversubscription else "false"
    surplus = "true" if tree.nodes[group].accept_surplus else "false"
    return f"{text} (GROUP_ACCEPT_SURPLUS_{group} = {surplus}, NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION = {over})"


def _subtree_usage(tree: GroupTree, usage: LiveUsage) -> dict[str, float]:
    out = {name: usage.of_group(name) for name in tree.order}
    for name in reversed(tree.order):
        parent = tree.nodes[name].parent
        if parent is not None:
            out[parent] += out[name]
    return out


def limit_text(name: str, used: float, lim: float, eup: float, only_rank: bool, ceiling: bool = False) -> str:
    """The submitter-limit sentence."""
    what = "SUBMITTER_CEILING" if ceiling else f"pie slice at EUP {eup:.2f}"
    head = f"submitter limit reached: {name} has taken {used:g} this spin of its limit {lim:.6g} ({what})"
    if only_rank:
        head += "; past its limit only preemption by machine Rank is tried, and no slot prefers this job"
    return head


def unavailable_text(counts: dict[str, int]) -> str:
    """``"3 slots accept it; unavailable: 2 claimed by ..., 1 already matched this cycle"``."""
    total = sum(counts.values())
    parts = ", ".join(f"{n} {why}" for why, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{total} slot{'s' if total != 1 else ''} accept it, none can take it now: {parts}"


class _Index:
    """The cycle's slots grouped by the matcher's slot classes (slots that agree on every
    name the match tests read; each slot alone without classes), claimed slots further
    by (claim holder, claimed-idle), with matched slots counted as the cycle goes."""

    def __init__(self, entries: Sequence[SlotEntry], slots: Optional[SlotTable] = None) -> None:
        self.consumption: list[SlotEntry] = [e for e in entries if e.cp is not None]
        kept = [e for e in entries if e.cp is None] if self.consumption else list(entries)
        # Each slot name's group and claim bucket (see catch_up): by name in where, or when
        # every slot is its own group, by name its group in alone, its bucket in bucket_at.
        self.where: dict[str, tuple[int, Optional[tuple]]] = {}
        self.alone: Optional[dict[str, int]] = None
        self.bucket_at = np.zeros(0, dtype=np.intp)
        table: Optional[AdTable] = None
        if (
            slots is not None
            and slots.distinct
            and len(slots.entries) == len(kept)
            and all(map(is_, slots.entries, kept))
        ):
            # The columnar matcher's slot table holds these very entries in this order, each
            # slot of its own class (distinct indexes): its arrays say which are claimed, by
            # whom, and its table is theirs.
            self._each_alone(kept, slots)
            table = slots.table
        else:
            classes = list(map(_CLS, kept))
            keys = (
                list(map(id, classes))
                if None not in classes
                else [id(e if c is None else c) for e, c in zip(kept, classes)]
            )
            if len(set(keys)) == len(keys):
                self._each_alone(kept)  # the columnar matcher's classes: the same, without a step per slot
            else:
                self._grouped(kept)
        self.table: Optional[AdTable] = table  # the representatives, for the columnar engine
        self.seen = 0
        # (submitter, autocluster) -> the groups both sides accept, as a bit per group
        self.accepting: dict[tuple, np.ndarray] = {}
        self.dead_free = np.zeros(len(self.reps), dtype=np.int64)
        self.dead_all = np.zeros(len(self.reps), dtype=np.int64)
        self.b_dead = np.zeros(len(self.b_first), dtype=np.int64)

    def _each_alone(self, kept: list[SlotEntry], slots: Optional[SlotTable] = None) -> None:
        """The index when every slot is a group of its own (what :meth:`_grouped` makes
        then: a bucket per claimed slot, in slot order), made with C-speed maps, or from
        the arrays of ``slots`` when its rows are ``kept``."""
        n = len(kept)
        self.reps = kept
        self.alone = dict(zip(map(_NAME, map(_SLOT, kept)), range(n)))
        self.b_index: dict[tuple[int, tuple], int] = {}
        if slots is not None:
            at = np.flatnonzero(slots.claimed)
            self.b_group = at.astype(np.intp)
            self.free_count = (~slots.claimed).astype(np.int64)
            # The table codes the claim holders in the order of their first slot, as here.
            self.holder_code: dict[str, int] = dict(slots.remote_names)
            self.b_holder = slots.remote[at].astype(np.intp)
            self.b_idle = slots.claimed_idle[at]
            claimed: list[int] = at.tolist()
            self.b_first = list(map(kept.__getitem__, claimed))
        else:
            remotes = list(map(_REMOTE, kept))
            claimed = list(compress(range(n), map(is_not, remotes, repeat(None))))
            first = list(map(kept.__getitem__, claimed))
            holders = list(map(remotes.__getitem__, claimed))
            self.free_count = np.fromiter(map(is_, remotes, repeat(None)), dtype=np.int64, count=n)
            self.holder_code = {h: code for code, h in enumerate(dict.fromkeys(holders))}
            self.b_group = np.array(claimed, dtype=np.intp)
            self.b_holder = np.fromiter(map(self.holder_code.__getitem__, holders), dtype=np.intp, count=len(claimed))
            self.b_idle = np.fromiter(map(_CLAIMED_IDLE, first), dtype=bool, count=len(claimed))
            self.b_first = first
        self.bucket_at = np.full(n, -1, dtype=np.intp)
        self.bucket_at[self.b_group] = np.arange(len(claimed), dtype=np.intp)
        self.b_size = np.ones(len(claimed), dtype=np.int64)

    def _grouped(self, kept: list[SlotEntry]) -> None:
        by: dict[int, int] = {}
        reps: list[SlotEntry] = []
        free: list[int] = []  # unclaimed slots per group
        # (group, (remote, idle)) -> the group's claimed slots of that bucket, in the order made
        buckets: dict[tuple[int, tuple], list[SlotEntry]] = {}
        where: dict[str, tuple[int, Optional[tuple]]] = {}
        for e in kept:
            cls = e.cls
            key = id(e) if cls is None else id(cls)
            g = by.get(key)
            if g is None:
                g = by[key] = len(reps)
                reps.append(e)
                free.append(0)
            remote = e.remote
            if remote is None:
                free[g] += 1
                where[e.slot.name] = (g, None)
                continue
            bucket = (remote, e.claimed_idle)
            members = buckets.get((g, bucket))
            if members is None:
                buckets[(g, bucket)] = [e]
            else:
                members.append(e)
            where[e.slot.name] = (g, bucket)
        self.reps, self.where = reps, where
        # The counts as arrays over the groups, for sums over many groups at once.
        self.free_count = np.array(free, dtype=np.int64)
        # Every (group, claim bucket) in group order, each group's buckets in the order they
        # were made, as arrays, so a rejection counts thousands of claims without a loop.
        flat = sorted(buckets.items(), key=_group_of)  # stable: the buckets' order is kept
        self.holder_code = {}
        self.b_index = {gb: i for i, (gb, _) in enumerate(flat)}
        self.b_group = np.array([g for (g, _), _ in flat], dtype=np.intp)
        self.b_holder = np.array(
            [self.holder_code.setdefault(b[0], len(self.holder_code)) for (_, b), _ in flat], dtype=np.intp
        )
        self.b_idle = np.array([bool(b[1]) for (_, b), _ in flat], dtype=bool)
        self.b_size = np.array([len(m) for _, m in flat], dtype=np.int64)
        self.b_first = [m[0] for _, m in flat]

    def place(self, name: str) -> Optional[tuple[int, Optional[tuple]]]:
        """Slot ``name``'s group and claim bucket (its holder and whether it is claimed and
        idle; None for an unclaimed slot), None for a slot not indexed."""
        if self.alone is None:
            return self.where.get(name)
        g = self.alone.get(name)
        if g is None:
            return None
        e = self.reps[g]
        return g, None if self.bucket_at[g] < 0 else (e.remote, e.claimed_idle)

    def catch_up(self, matches: Sequence[Match]) -> None:
        """Count the matches made since the last call."""
        if self.alone is not None:
            self._catch_up_alone(matches)
            return
        for m in matches[self.seen :]:
            place = self.where.get(m.slot)
            if place is not None:
                g, bucket = place
                self.dead_all[g] += 1
                if bucket is None:
                    self.dead_free[g] += 1
                else:
                    self.b_dead[self.b_index[(g, bucket)]] += 1
        self.seen = len(matches)

    def _catch_up_alone(self, matches: Sequence[Match]) -> None:
        """:meth:`catch_up` when every slot is its own group."""
        assert self.alone is not None
        for m in matches[self.seen :]:
            g = self.alone.get(m.slot)
            if g is not None:
                self.dead_all[g] += 1
                b = self.bucket_at[g]
                if b < 0:
                    self.dead_free[g] += 1
                else:
                    self.b_dead[b] += 1
        self.seen = len(matches)


# What the index reads of each slot entry.
_CLS, _REMOTE, _SLOT, _NAME = attrgetter("cls"), attrgetter("remote"), attrgetter("slot"), attrgetter("name")
_CLAIMED_IDLE = attrgetter("claimed_idle")


def _group_of(item: tuple[tuple[int, tuple], list[SlotEntry]]) -> int:
    return item[0][0]


class Submitter(Protocol):
    """What a rejection's explanation reads of its submitter (``state.SubmitterState``)."""

    @property
    def name(self) -> str: ...
    @property
    def eup(self) -> float: ...


class RunningCycle(Protocol):
    """What a rejection's explanation reads of the running cycle (``state.Cycle``), which
    keeps the slot groups it builds on the first rejection in ``explain_groups``."""

    explain_groups: Optional["_Index"]

    @property
    def entries(self) -> Sequence[SlotEntry]: ...
    @property
    def matches(self) -> Sequence[Match]: ...
    @property
    def evaluator(self) -> Evaluator: ...
    @property
    def matcher(self) -> Matcher: ...
    @property
    def priorities(self) -> Priorities: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def usage(self) -> LiveUsage: ...
    @property
    def limits(self) -> ConcurrencyLimits: ...
    @property
    def now(self) -> float: ...
    @property
    def pass_cap(self) -> tuple[Optional[str], float, Optional[Mapping[str, float]]]: ...


def _accepting_columnar(index: "_Index", req: ClassAd, state: MatchState, matcher: MatcherParts) -> np.ndarray:
    """The groups whose representative slot and ``req`` accept each other, both
    Requirements evaluated over all representatives at once (the columnar engine gives
    the scalar evaluator's answers).  When every slot is its own group, the matcher's
    slot table is used, with the results its match lists have already computed."""
    if index.table is None:
        ads = [rep.ad for rep in index.reps]
        index.table = table_of(matcher, ads) or AdTable(ads)
    job_ok = true_mask(evaluate_attribute(index.table, "requirements", row_side="target", other=req, state=state))
    rows = np.flatnonzero(job_ok)
    if not len(rows):
        return rows
    slot_ok = true_mask(
        evaluate_attribute(index.table, "requirements", row_side="my", other=req, state=state, rows=rows)
    )
    return rows[slot_ok]


def _availability(cycle: RunningCycle, s: Submitter, req: NegotiationAd, autocluster: Optional[int]) -> dict[str, int]:
    """The slots both sides accept, counted by :func:`slot_availability`.  The matcher's
    memoizing evaluator answers the pair tests once per slot class and autocluster, the
    preemption tests once per class and claim holder, for at most ``EXAMINE`` of those
    (a large pool's other claims are counted as :data:`NOT_PREEMPTIBLE`)."""
    index = cycle.explain_groups
    if index is None:
        made = cycle.matcher.columnar_slots  # the columnar matcher's slot table, if made
        index = cycle.explain_groups = _Index(cycle.entries, made[1] if made is not None else None)
    index.catch_up(cycle.matches)
    ev = cycle.evaluator
    ev.use_request(req)
    ctx = Context(s.name, s.eup, cycle.priorities.eup, cycle.settings.policy, cycle.usage, cycle.now)

    def values(name: str, entry: SlotEntry) -> object:
        return ev.value(entry, _KINDS[name])

    counts: dict[str, int] = {}

    def add(why: str, n: int) -> None:
        if n > 0:
            counts[why] = counts.get(why, 0) + n

    key = (s.name, autocluster)
    n_groups = len(index.reps)
    bits = index.accepting.get(key) if autocluster is not None else None
    if bits is not None:
        accepting = np.unpackbits(bits, count=n_groups).view(bool)
    else:
        accepting = np.zeros(n_groups, dtype=bool)
        if cycle.settings.policy.columnar:
            accepting[_accepting_columnar(index, req, ev.state, cycle.matcher)] = True
        else:
            accepting[[g for g, rep in enumerate(index.reps) if ev.value(rep, J_REQ) and ev.value(rep, S_REQ)]] = True
        if autocluster is not None:
            index.accepting[key] = np.packbits(accepting)
    for e in index.consumption:
        if ev.value(e, J_REQ) and ev.value(e, S_REQ):
            add(AVAILABLE if cycle.matcher.cp_cost(e, req) is not None else TOO_LITTLE_LEFT, 1)
    add(ALREADY_MATCHED, int(index.dead_all[accepting].sum()))
    add(AVAILABLE, int((index.free_count[accepting] - index.dead_free[accepting]).sum()))
    # The claims of the accepting groups, in group order: the submitter's own busy ones,
    # then the first EXAMINE others examined one by one, the rest not preemptible.
    sel = np.flatnonzero(accepting[index.b_group])
    alive = index.b_size[sel] - index.b_dead[sel]
    sel, alive = sel[alive > 0], alive[alive > 0]
    own = (index.b_holder[sel] == index.holder_code.get(s.name, -1)) & ~index.b_idle[sel]
    add(SAME_SUBMITTER, int(alive[own].sum()))
    others, others_alive = sel[~own], alive[~own]
    for i, n in zip(others[:EXAMINE].tolist(), others_alive[:EXAMINE].tolist()):
        add(_claimed_availability(ctx, index.b_first[i], req, values), n)
    add(NOT_PREEMPTIBLE, int(others_alive[EXAMINE:].sum()))
    return counts


def explain_rejection(
    cycle: RunningCycle,
    s: Submitter,
    req: NegotiationAd,
    reason: str,
    *,
    only_rank: bool,
    budget: Budget,
    autocluster: Optional[int] = None,
) -> tuple[str, str]:
    """(mechanism, sentence) for a request the cycle rejected with HTCondor's ``reason``.

    ``cycle`` is the running :class:`~matchmaker.cycle.state.Cycle` (its ``pass_cap`` says
    which group pass is running), ``s`` the submitter, ``budget`` its spin budget.  The
    evaluations it makes leave the random sources as they were: explaining never changes
    what the rest of the cycle draws, so never a match."""
    with draws_undone(cycle.evaluator.state.random):
        if reason.startswith("concurrency limit "):
            names = reason[len("concurrency limit ") : -len(" reached")].split(", ")
            return CONCURRENCY_LIMIT, concurrency_text(names, cycle.limits, req)
        group, group_limit, quotas = cycle.pass_cap
        if reason == "submitter limit exceeded" or only_rank:
            if group is not None and cycle.usage.of_group(group) >= group_limit:
                text = group_cap_text(cycle.settings, cycle.usage, group, group_limit, quotas)
                if only_rank:
                    text += "; only preemption by machine Rank is tried, and no slot prefers this job"
                return GROUP_QUOTA, text
            return SUBMITTER_LIMIT, limit_text(s.name, budget.used, budget.lim, s.eup, only_rank)
        counts = _availability(cycle, s, req, autocluster)
        if reason == "PREEMPTION_REQUIREMENTS == False":
            return (
                PREEMPTION_REQUIREMENTS,
                "PREEMPTION_REQUIREMENTS is false for the claimed slots it could "
                "preempt by priority; " + unavailable_text(counts),
            )
        if not counts:
            return (
                REQUIREMENTS,
                f"no match found: none of the {len(cycle.entries)} slots considered satisfies "
                "both the job's and the slot's Requirements",
            )
        return UNAVAILABLE, "no match found: " + unavailable_text(counts)


__all__ = [
    "ALREADY_MATCHED",
    "AVAILABLE",
    "CONCURRENCY_LIMIT",
    "GROUP_MAP",
    "GROUP_QUOTA",
    "PREEMPTION_REQUIREMENTS",
    "PRIO_PREEMPTIBLE",
    "RANK_PREEMPTIBLE",
    "REQUIREMENTS",
    "SUBMITTER_LIMIT",
    "TAKEABLE",
    "UNAVAILABLE",
    "Context",
    "attribute",
    "both_accept",
    "concurrency_text",
    "explain_rejection",
    "group_cap_text",
    "knob_value",
    "limit_text",
    "number",
    "preemption",
    "slot_availability",
    "unavailable_text",
]
