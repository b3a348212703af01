"""One negotiation cycle: submitters, pie slices, pie spins (spec §1.3-§1.6).

Phases, each a function or method over plain data:

1. :meth:`Cycle.__init__` -- pool sizes over *all* slot ads, current usage from
   the claimed slots, the trimmed and annotated slot list, autoclusters and each
   submitter's request queue, EUPs frozen for the cycle.
2. :func:`negotiate_with_group` -- the pie engine: per spin, each submitter's
   slice ``(1/EUP) / sum(1/EUP) * total - usage``, submitters in EUP order,
   spinning until a spin neither uses pie nor retires a submitter.  Without
   groups it runs once after the floor round (§1.4); with ``GROUP_NAMES`` the
   group-quota loop of :mod:`matchmaker.group_cycle` calls it once per group
   pass with ``group_quota`` and ``group_name``.
3. :func:`negotiate_submitter` -- one submitter's session: requests in queue
   order, the submitter limit with the round-up-once rule, RANK-only preemption
   past the limit in spin 1, autocluster skipping after a rejection.

:func:`negotiate` is the entry point.  Its settings come from
:mod:`matchmaker.settings`; jobs the accounting-group map refused at submit time
(``Pool.refused``) are reported first among the rejected requests.  Time budgets
(NEGOTIATOR_MAX_TIME_*) are not modelled: library code has no clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, Mapping, Optional, Sequence

from classad import ast
from classad.ad import ClassAd
from classad.evaluate import evaluate_top
from classad.values import truthiness

from .autocluster import Autoclusters, Queue, build_queues, decisive_names, significant_attributes
from .ephemeral import (ROOT_GROUP, GroupContext, GroupView, LiveUsage, MatchState, Priorities, StaticPriorities,
                        annotate_for, annotate_slot, refresh_request)
from .evaluator import Evaluator, SlotEntry, group_slots
from .group_cycle import GroupSummary, negotiate_groups
from .groupmap import group_of_submitter
from .matching import NO_PREEMPTION, REASONS, Budget, CandidateList, Matcher
from .pool import (IDLE, Pool, Slot, claimed_limits, error_rank_slots, error_rank_warning, limits_reason, pool_size,
                   slot_weight, usage_by_customer)
from .settings import Settings, group_tree_from_knobs

INF = math.inf
FLT_MAX = 3.4028234663852886e38
DONE, RESUME = "done", "resume"


# ---- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    """One match: the job, its submitter, the slot, why the slot was available, whom it preempts.

    With groups, ``group`` is the submitter's group and ``negotiating_group`` /
    ``autoregroup`` say in which pass the match was made: what the claim then publishes
    as ``RemoteGroup``, ``RemoteNegotiatingGroup`` and ``RemoteAutoregroup`` (spec §1.9)."""

    job: str
    submitter: str
    slot: str
    reason: str                    # "no-preemption" | "rank" | "priority"
    preempted: Optional[str]
    weight: float = 1.0
    group: Optional[str] = None
    negotiating_group: str = ROOT_GROUP
    autoregroup: bool = False


@dataclass(frozen=True)
class SubmitterSummary:
    """A submitter's EUP, its pie slice at the first spin (``inf`` when unlimited), matches made."""

    name: str
    eup: float
    limit: float
    matched: int


@dataclass(frozen=True)
class Rejection:
    """A request that got no slot, with HTCondor's rejection text (spec §1.14)."""

    job: str
    reason: str


@dataclass
class CycleResult:
    """Everything one cycle decided."""

    matches: list[Match]
    submitters: list[SubmitterSummary]
    rejected: list[Rejection]
    warnings: list[str]
    usage: dict[str, float]
    spins: int = 0
    groups: list[GroupSummary] = field(default_factory=list)    # group quotas only, in group order

    @property
    def group_quotas(self) -> dict[str, float]:
        """Each group's effective quota of the last allocation round (empty without groups)."""
        return {g.name: g.quota for g in self.groups}


# ---- the cycle ------------------------------------------------------------------------------------


@dataclass(eq=False)
class SubmitterState:
    """A submitter during the cycle."""

    name: str
    eup: float
    floor: float
    ceiling: float
    queue: Queue
    idle: int
    running: int
    share: float = 0.0
    limit: float = 0.0
    starvation: float = 0.0
    matched: int = 0


class Cycle:
    """State shared by the phases of one negotiation cycle."""

    def __init__(self, pool: Pool, settings: Settings, priorities: Priorities, now: float, *,
                 usage: Optional[Mapping[str, float]] = None,
                 group_of: Optional[Callable[[str], str]] = None, groups: Optional[GroupView] = None) -> None:
        self.settings, self.priorities, self.now, self.groups = settings, priorities, now, groups
        pol = settings.policy
        # Weights follow this cycle's settings, whatever the pool was loaded with.
        slots = [replace(s, weight=slot_weight(s.ad, use_slot_weights=settings.use_slot_weights,
                                               slot_weight_expr=settings.slot_weight_expr,
                                               force=settings.force_slot_weight))
                 for s in pool.slots if self._accepts(settings.slot_constraint, s.ad)]
        size = pool_size(slots, use_slot_weights=settings.use_slot_weights,
                         constraint=settings.poolsize_constraint)
        self.pool_weight, self.min_weight, self.effective_pool = size.weighted, size.min_weight, size.effective
        self.usage = LiveUsage(usage_by_customer(slots) if usage is None else usage, group_of)
        self.limits = claimed_limits(slots, settings.concurrency_capacity)
        self.state = MatchState(self.usage, now)
        self.evaluator = Evaluator(self.state, pol)
        self.matcher = Matcher(self.evaluator, self.limits, priorities.eup)
        entries = [self._entry(s) for s in slots if self._keep(s)]
        self.queues = self._queues(pool, slots)
        # The slot classes serve the scalar matcher; the columnar one evaluates every slot anyway.
        names = decisive_names([e.ad for e in entries], [j.ad for j in pool.jobs if j.status == IDLE]) \
            if entries and not pol.columnar else None
        self.classes = group_slots(entries, names)
        self._available = len(entries)
        self.submitters = self._submitters(pool)
        self.matches: list[Match] = []
        self._rejected: dict[str, str] = {}
        self._matched_jobs: set[str] = set()
        self.pie_left = 0.0
        self.spins = 0
        self.refused = list(pool.refused)
        bad_rank = error_rank_slots(slots)
        self.warnings = list(pool.warnings) + [error_rank_warning(s) for s in bad_rank]
        self.evaluator.quiet = {s.index for s in bad_rank}    # reported once, here

    def _accepts(self, constraint: Optional[ast.Node], ad: ClassAd) -> bool:
        if constraint is None:
            return True
        return truthiness(evaluate_top(constraint, ad, MatchState(None, self.now))) is True

    def _keep(self, s: Slot) -> bool:
        """The trim of spec §1.3."""
        cp = self.settings.policy.consider_preemption
        ad, st = s.ad, MatchState(None, self.now)
        if cp and not self.settings.consider_early_preemption:
            v = ad.evaluate("RetirementTimeRemaining", state=st)
            if type(v) in (int, float) and v > 0:
                return False
        if not cp and s.state in ("claimed", "preempting") and not s.partitionable:
            return False
        if s.partitionable and s.state == "claimed" and ad.evaluate("WantMatching", state=st) is False:
            return False
        return True

    def _entry(self, s: Slot) -> SlotEntry:
        st, pr = self.settings, self.priorities
        cp = st.policy.consider_preemption
        ad = annotate_slot(s, now=self.now, eup_of=pr.eup, floor_of=pr.floor, consider_preemption=cp,
                           cross_slot_prios=st.cross_slot_prios, resource_prefix=st.resource_prefix,
                           slot_weight_expr=st.slot_weight_expr, force_slot_weight=st.force_slot_weight,
                           groups=self.groups)
        activity = s.ad.evaluate("Activity", state=MatchState(None, self.now))
        idle = s.state == "claimed" and type(activity) is str and activity.lower() == "idle"
        return SlotEntry(s, ad, s.remote if cp else None, claimed_idle=idle)

    def _queues(self, pool: Pool, slots: Sequence[Slot]) -> dict[str, Queue]:
        st, pol = self.settings, self.settings.policy
        sig = significant_attributes(
            (s.ad for s in slots),
            (pol.preemption_requirements, pol.preemption_rank, pol.pre_job_rank, pol.post_job_rank,
             st.job_constraint),
            add=st.add_significant, remove=st.remove_significant, remove_regex=st.remove_significant_regex)
        acs = Autoclusters(sig, fixed=st.significant_attributes, remove=st.remove_significant,
                           every_job_alone=st.negotiate_all_jobs_in_cluster)
        return build_queues(pool.jobs, acs, by_qdate=st.job_order_by_qdate, job_constraint=st.job_constraint)

    def _submitters(self, pool: Pool) -> list[SubmitterState]:
        out = []
        pr = self.priorities
        for name, (idle_count, running) in sorted(pool.submitter_counts().items()):
            queue = self.queues.get(name) or Queue(name)
            idle = queue.idle
            if idle + running <= 0:
                continue
            if self.settings.submitter_constraint is not None:
                ad = ClassAd({"Name": name, "IdleJobs": idle, "RunningJobs": running})
                if not self._accepts(self.settings.submitter_constraint, ad):
                    continue
            out.append(SubmitterState(name, pr.eup(name), pr.floor(name), pr.ceiling(name), queue, idle, running))
        return out

    # ---- what the phases call --------------------------------------------------------------

    def slots_left(self) -> bool:
        """Whether any slot is still available."""
        return self._available > 0

    def commit(self, s: SubmitterState, run: Any, cand: Any, req: ClassAd, budget: Budget,
               context: Optional[GroupContext] = None) -> None:
        """Record a match: the slot leaves the cycle, usage and limits are charged at once."""
        e = cand.entry
        slot, cost = e.slot, e.slot.weight
        job = run.current()
        run.next += 1
        s.idle -= 1
        s.matched += 1
        e.alive = False
        e.cls.dead += 1
        self._available -= 1
        preempted = e.remote if cand.state != NO_PREEMPTION else None
        if preempted is not None and slot.charged:
            self.usage.remove(slot.customer, cost)       # AddMatch ends the previous claim
        self.usage.add(s.name, cost)
        self.limits.charge(self.matcher.matched_limits(req, e))
        budget.used += cost
        if e.remote is None:
            budget.used_unclaimed += cost
        self.pie_left -= cost
        self._matched_jobs.add(job.id)
        self._rejected.pop(job.id, None)
        grouped = context is not None and context.quotas is not None
        self.matches.append(Match(job.id, s.name, slot.name, REASONS[cand.state], preempted, cost,
                                  self.usage.group_of(s.name) if grouped else None,
                                  context.negotiating_group if context else ROOT_GROUP,
                                  bool(context and context.autoregroup)))

    def reject(self, job_id: str, reason: str) -> None:
        """Record a rejected request (the last reason wins)."""
        self._rejected.pop(job_id, None)
        self._rejected[job_id] = reason

    def find(self, req: ClassAd, autocluster: int, s: SubmitterState, only_rank: bool, budget: Budget,
             cache: list) -> tuple[Any, str, bool]:
        """The best candidate for ``req``, else ``(None, reason, limited)``: ``limited`` says
        whether the submitter limit turned any slot away.  ``cache`` holds the match list."""
        m, pol = self.matcher, self.settings.policy
        static = m.request_limits(req)
        if static:
            full = self.limits.exhausted(static)
            if full:
                return None, limits_reason(full), False
        cl: Optional[CandidateList] = cache[0]
        if cl is not None and cl.autocluster == autocluster and cl.only_rank == only_rank:
            cand, rebuild = m.pop(cl, req, s.name, budget)
            if cand is not None:
                return cand, "", False
            if not rebuild:
                return None, cl.reason(), cl.limited
        cl = m.build(req, autocluster, s.name, self.classes, only_rank, budget, static is not None)
        cache[0] = cl if pol.matchlist_caching else None
        cand, _ = m.pop(cl, req, s.name, budget)
        return (cand, "", False) if cand is not None else (None, cl.reason(), cl.limited)

    def result(self, order: Sequence[SubmitterState], groups: Sequence[GroupSummary] = ()) -> CycleResult:
        """The cycle's outcome; requests refused at submit time come first among the rejected."""
        subs = [SubmitterSummary(s.name, s.eup, s.limit, s.matched) for s in order]
        rejected = [Rejection(j, r) for j, r in self.refused] + \
            [Rejection(j, r) for j, r in self._rejected.items() if j not in self._matched_jobs]
        warnings = self.warnings + list(self.evaluator.warnings.values())
        return CycleResult(self.matches, subs, rejected, warnings, dict(self.usage.user), self.spins, list(groups))


# ---- the pie ---------------------------------------------------------------------------------------


def pie_shares(eups: Mapping[str, float]) -> dict[str, float]:
    """Each submitter's fraction of the pie: ``(1/EUP) / sum(1/EUP)``, computed as HTCondor
    does (``maxP / (EUP * sum(maxP / EUP))``) over distinct names."""
    if not eups:
        return {}
    max_eup = max(eups.values())
    z = sum(max_eup / e for e in eups.values())
    return {name: max_eup / (e * z) for name, e in eups.items()}


def pie_slices(eups: Mapping[str, float], total: float,
               usage: Optional[Mapping[str, float]] = None) -> dict[str, float]:
    """Each submitter's limit for a spin: ``share * total - usage``, never below 0."""
    usage = usage or {}
    return {n: max(0.0, sh * total - usage.get(n, 0.0)) for n, sh in pie_shares(eups).items()}


def _limits(cycle: Cycle, s: SubmitterState, share: float, total: float, floor_round: bool,
            group_quota: float, group_usage_at_start: float, grouped: bool) -> tuple[float, float]:
    """``submitter_limit`` of spec §1.5: (limit, unclaimed limit)."""
    usage = cycle.usage.of(s.name)
    lim = INF if cycle.settings.ignore_user_priorities else max(0.0, share * total - usage)
    lim_unclaimed = lim
    if grouped:
        lim_unclaimed = min(lim_unclaimed, max(0.0, group_quota - group_usage_at_start))
    if not cycle.settings.policy.consider_preemption:
        lim = lim_unclaimed
    if floor_round:
        lim = min(s.floor, lim)
    return lim, lim_unclaimed


def submitter_order_key(s: SubmitterState) -> tuple:
    """Spin-1 order: EUP, then starvation, then name (for HTCondor's LastHeardFrom hash)."""
    return (s.eup, s.starvation, s.name)


def negotiate_with_group(cycle: Cycle, submitters: Sequence[SubmitterState], *, floor_round: bool = False,
                         group_quota: float = INF, group_name: Optional[str] = None,
                         context: Optional[GroupContext] = None) -> list[SubmitterState]:
    """Spin the pie for ``submitters`` (spec §1.5); returns them in spin-1 order.

    ``group_quota`` caps the weight the call may hand out and ``group_name`` names the
    group whose usage counts against it (None: uncapped, as without groups or in the
    autoregroup root pass); ``context`` says what the requests learn about groups.
    """
    cp = cycle.settings.policy.consider_preemption
    subs = list(submitters)
    order: list[SubmitterState] = []
    grouped = group_name is not None
    spin = 0
    while True:
        spin += 1
        cycle.spins += 1
        ignore_limit = spin == 1 and cp
        group_usage = cycle.usage.of_group(group_name) if grouped else 0.0
        if grouped and not ignore_limit and group_usage >= group_quota:
            break
        if not cp:
            subs = [s for s in subs if s.idle > 0]
        if not subs:
            break
        shares = pie_shares({s.name: s.eup for s in subs})
        total = min(cycle.pool_weight, group_quota)
        pie_left = 0.0
        for s in subs:
            lim, _ = _limits(cycle, s, shares[s.name], total, floor_round, group_quota, group_usage, grouped)
            usage = cycle.usage.of(s.name)
            s.starvation = usage / (usage + lim) if usage + lim > 0 else FLT_MAX
            pie_left += lim
        if not cp and pie_left <= 0:
            break
        if spin == 1:
            subs.sort(key=submitter_order_key)
            order = list(subs)
        cycle.pie_left = pie_left
        pie_orig, n_orig = pie_left, len(subs)
        for s in list(subs):
            if grouped and not ignore_limit and \
                    cycle.usage.of_group(group_name) >= group_quota:  # type: ignore[arg-type]
                break
            share = shares[s.name]
            lim, lim_unclaimed = _limits(cycle, s, share, total, floor_round, group_quota, group_usage, grouped)
            if spin == 1:
                s.share, s.limit = share, (INF if cycle.settings.ignore_user_priorities else share * total)
            lim = min(lim, cycle.pie_left)
            ceiling = s.ceiling
            ceil_left = INF if ceiling < 0 else max(0.0, ceiling - int(cycle.usage.of(s.name)))
            if s.idle == 0:
                result = DONE
            elif spin > 1 and (lim < cycle.min_weight or cycle.pie_left < cycle.min_weight):
                result = RESUME
            elif ceil_left == 0 or ceil_left < cycle.min_weight:
                result = DONE
            else:
                result = negotiate_submitter(cycle, s, lim, lim_unclaimed, ceil_left, ignore_limit, context)
            if result == DONE:
                subs.remove(s)
        if not (cycle.pie_left < pie_orig or len(subs) < n_orig) or not subs or floor_round \
                or not cycle.slots_left():
            break
    return order


def negotiate_submitter(cycle: Cycle, s: SubmitterState, lim: float, lim_unclaimed: float, ceil_left: float,
                        ignore_limit: bool, context: Optional[GroupContext] = None) -> str:
    """One submitter's session (spec §1.6); returns DONE or RESUME."""
    st, pol = cycle.settings, cycle.settings.policy
    budget = Budget(lim, lim_unclaimed)
    limited = False
    rejected: set[int] = set()
    cache: list = [None]
    for run in s.queue.runs:
        if run.remaining == 0 or run.autocluster in rejected:
            continue
        req = None
        while run.remaining > 0:
            only_rank = False
            if budget.used >= budget.lim:
                if not ignore_limit:
                    return RESUME
                only_rank = True
            if budget.used >= ceil_left:
                return RESUME
            if req is None:
                req = annotate_for(run.current().ad, s.name, s.eup, cycle.usage, context)
            else:
                refresh_request(req, cycle.usage.of(s.name), cycle.usage.of_group(cycle.usage.group_of(s.name)))
            cand, reason, by_limit = cycle.find(req, run.autocluster, s, only_rank, budget, cache)
            if cand is None:
                cycle.reject(run.current().id, reason)
                rejected.add(run.autocluster)
                limited = limited or by_limit
                if limited and not pol.consider_preemption and not st.use_slot_weights:
                    return RESUME
                break
            cycle.commit(s, run, cand, req, budget, context)
    return RESUME if budget.used >= budget.lim or limited else DONE


def negotiate(pool: Pool, settings: Settings, priorities: Priorities, now: float, *,
              usage: Optional[Mapping[str, float]] = None,
              previous_quotas: Optional[Mapping[str, float]] = None) -> CycleResult:
    """Run one cycle (spec §1.4): without groups the floor round, then the pie; with
    ``settings.group_tree`` the group-quota rounds, one pie per group pass.

    ``usage`` is each submitter's weighted usage at cycle start (default: the claimed
    slots); ``previous_quotas`` is the last cycle's quota table, the source of the slots'
    ``RemoteGroupQuota`` (absent, as on HTCondor's first cycle, when None)."""
    tree = settings.group_tree
    if tree is None:
        cycle = Cycle(pool, settings, priorities, now, usage=usage)
        below = [s for s in cycle.submitters if s.floor > 0 and cycle.usage.of(s.name) < s.floor]
        if below:
            negotiate_with_group(cycle, below, floor_round=True)
        order = negotiate_with_group(cycle, cycle.submitters)
        return cycle.result(order)
    group_of = partial(group_of_submitter, tree=tree)
    cycle = Cycle(pool, settings, priorities, now, usage=usage, group_of=group_of,
                  groups=GroupView(group_of, previous_quotas))
    return negotiate_groups(cycle, pool, pie=negotiate_with_group)


__all__ = [
    "DONE", "RESUME", "Cycle", "CycleResult", "GroupContext", "GroupSummary", "Match", "Priorities", "Rejection",
    "Settings", "StaticPriorities", "SubmitterState", "SubmitterSummary", "group_tree_from_knobs", "negotiate",
    "negotiate_submitter", "negotiate_with_group", "pie_shares", "pie_slices", "submitter_order_key",
]
