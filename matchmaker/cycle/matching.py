"""Finding and ranking the candidate slots for one request (docs/negotiation.md, candidate slots and concurrency limits).

A slot is a candidate when both Requirements hold in the two-ad context (job
as MY, slot as TARGET and the reverse).  A claimed slot is a candidate only for
preemption: by machine RANK (the slot prefers this job over its current one),
or by priority (another submitter holds it, PREEMPTION_REQUIREMENTS holds and
the machine RANK does not get worse).  Candidates are sorted descending by
``(PRE_JOB_RANK, job Rank, POST_JOB_RANK, state, PREEMPTION_RANK)`` -- the knob
ranks in single precision, as HTCondor compares them, state ``NO_PREEMPTION >
RANK > PRIO`` -- then by slot list order.

The values compared come from :class:`matchmaker.cycle.evaluator.Evaluator`, which
memoizes every pair evaluation; a :class:`CandidateList` is HTCondor's match
list, kept per (autocluster, RANK-only) and consumed in order.
"""

from __future__ import annotations

import math
from operator import attrgetter
from typing import Any, Callable, Optional, Sequence

from classad import ast
from classad.ad import ClassAd
from classad.evaluate import evaluate_top
from classad.values import FLT_MAX

from ..pool.concurrency import ConcurrencyLimits, parse_limits
from ..pool.partition import give_back, machine_resources
from .candidates import (
    NO_PREEMPTION,
    PRIO_PREEMPTION,
    RANK_PREEMPTION,
    Budget,
    Candidate,
    CandidateList,
    permits,
)
from .columnar_match import SlotTable, build as build_columnar
from .cp_lists import ConsumptionLists
from .ephemeral import NegotiationAd
from .evaluator import (
    J_LIMITS,
    J_RANK,
    J_REQ,
    S_CURRENT,
    S_POST,
    S_PRANK,
    S_PRE,
    S_PREQ,
    S_RANK,
    S_REQ,
    Evaluator,
    SlotClass,
    SlotEntry,
    is_true,
)
from .table_carry import TableLine


class Matcher:
    """Builds and serves candidate lists for the requests of one cycle."""

    def __init__(self, evaluator: Evaluator, limits: ConcurrencyLimits, eup_of: Callable[[str], float]) -> None:
        self.ev = evaluator
        self.policy = evaluator.policy
        self.limits = limits
        self.eup_of = eup_of
        # Partitionable slots with a consumption policy: evaluated afresh for every list
        # (their resources change as they are matched), and what a match would cost.
        self.cp_entries: list[SlotEntry] = []
        self.cp_cost: Callable[[SlotEntry, NegotiationAd], Optional[float]] = lambda _e, _r: None
        # What the builds found of them, kept between builds (cycle.cp_lists).
        self.cp_lists: Optional[ConsumptionLists] = None
        # ALLOW_PSLOT_PREEMPTION: each partitionable slot's claimed dynamic slots, and the
        # weight of an ad (the cost of a match on a pslot with the dynamic slots it preempts).
        self.children: dict[int, list[SlotEntry]] = {}
        self._pslot_entries: list[SlotEntry] = []
        self.weight_of: Callable[[ClassAd], float] = lambda _ad: 1.0
        # The columnar engine's slot table of this cycle, with the slot classes it was built from.
        self.columnar_slots: Optional[tuple[Sequence[SlotClass], SlotTable]] = None
        # In a simulation: the slot table of the last cycle, which this cycle's continues.
        self.table_line: Optional[TableLine] = None

    def request_limits(self, req: NegotiationAd) -> Optional[list[tuple[str, float]]]:
        """The request's limits when ``ConcurrencyLimits`` is a plain string, else None."""
        node = req.get_node("concurrencylimits")
        if node is None:
            return None
        st = self.ev.state
        st.my, st.target = req, None
        v = evaluate_top(node, req, st)
        return parse_limits(v) if type(v) is str else None

    def build(
        self,
        req: NegotiationAd,
        autocluster: int,
        submitter: str,
        classes: Sequence[SlotClass],
        only_rank: bool,
        budget: Budget,
        static_limits: bool,
    ) -> CandidateList:
        """All candidates for ``req`` among the available slots, sorted (docs/negotiation.md, candidate slots)."""
        self.ev.use_request(req)
        out = None
        if self.policy.columnar:
            out = build_columnar(self, req, autocluster, submitter, classes, only_rank, budget, static_limits)
        if out is None:
            out = self._scan(req, autocluster, submitter, classes, only_rank, budget, static_limits)
        if self.cp_entries and not only_rank:
            if self.cp_lists is not None:
                self._add_consumption_kept(out, req, autocluster, budget, static_limits)
            else:
                self._add_consumption(out, req, budget, static_limits)
        if self.children:
            self._add_pslot_preemption(out, req, submitter, only_rank, budget)
        return out

    def _add_pslot_preemption(
        self, out: CandidateList, req: NegotiationAd, submitter: str, only_rank: bool, budget: Budget
    ) -> None:
        """``ALLOW_PSLOT_PREEMPTION``: a partitionable slot the job does not fit becomes a
        candidate when preempting some of its dynamic slots would make room (see
        :meth:`_pslot_plan`); merged into ``out`` in candidate order."""
        extra = []
        for e in self._pslot_entries:
            if not e.alive or (self.ev.value(e, J_REQ) and self.ev.value(e, S_REQ)):
                continue  # gone, or a candidate (or not) as it stands
            plan = self._pslot_plan(e, req, submitter, only_rank)
            if plan is None:
                continue
            state, victims, cost = plan
            if state == PRIO_PREEMPTION and not permits(budget.used, budget.lim, cost):
                out.limited = True
                continue
            extra.append(Candidate(e, state, self._key(e, state), tuple(victims), cost))
        if extra:
            _merge(out, extra)

    def _pslot_plan(
        self, e: SlotEntry, req: NegotiationAd, submitter: str, only_rank: bool
    ) -> Optional[tuple[int, list[SlotEntry], float]]:
        """The dynamic slots of ``e`` to preempt for ``req``, lowest ``CurrentRank`` first, while
        it is at most the slot's Rank for the job: a lower one by machine Rank, an equal one by
        priority (another submitter's, ``PREEMPTION_REQUIREMENTS`` true on it), until the
        pslot with their resources added matches.  None when no such set exists."""
        ev, pol = self.ev, self.policy
        rank = ev.value(e, S_RANK)
        kids = sorted(
            (d for d in self.children.get(e.index, ()) if d.alive), key=lambda d: (ev.value(d, S_CURRENT), d.index)
        )
        merged = ClassAd(e.ad)
        resources = machine_resources(e.ad)
        victims: list[SlotEntry] = []
        state = RANK_PREEMPTION
        for d in kids:
            current = ev.value(d, S_CURRENT)
            if current > rank:  # type: ignore[operator]
                break
            if current == rank:
                if only_rank or d.remote == submitter:
                    continue
                prereq = pol.preemption_requirements
                if prereq is not None and not ev.value(d, S_PREQ):
                    continue
                state = PRIO_PREEMPTION
            victims.append(d)
            merged = give_back(merged, d.ad, resources)
            if _both_match(req, merged, ev.state):
                return state, victims, self.weight_of(merged)
        return None

    def _add_consumption(self, out: CandidateList, req: NegotiationAd, budget: Budget, static_limits: bool) -> None:
        """Merge the consumption-policy slots that can take ``req`` into ``out``: each once
        its consumption fits what is left and both Requirements hold (docs/negotiation.md,
        consumption policies)."""
        ev = self.ev
        check_expr_limits = not static_limits and req.get_node("concurrencylimits") is not None
        extra = []
        for e in self.cp_entries:
            if not e.alive:
                continue
            cost = self.cp_cost(e, req)
            if cost is None or not ev.value(e, J_REQ) or not ev.value(e, S_REQ):
                continue
            if not self._cp_admits(out, e, cost, budget, check_expr_limits):
                continue
            extra.append(Candidate(e, NO_PREEMPTION, self._key(e, NO_PREEMPTION)))
        if extra:
            _merge(out, extra)

    def _cp_admits(
        self, out: CandidateList, e: SlotEntry, cost: float, budget: Budget, check_expr_limits: bool
    ) -> bool:
        """Whether consumption-policy slot ``e``, at ``cost``, passes the budget of unclaimed
        slots and the request's concurrency limits; what stopped it is noted in ``out``."""
        e.cost = cost
        if not permits(budget.used_unclaimed, budget.lim_unclaimed, cost):
            out.limited = True
            return False
        if check_expr_limits:
            v = self.ev.value(e, J_LIMITS)
            full = self.limits.exhausted(parse_limits(v)) if type(v) is str else []
            if full:
                out.concurrency.extend(full)
                return False
        return True

    def _add_consumption_kept(
        self, out: CandidateList, req: NegotiationAd, autocluster: int, budget: Budget, static_limits: bool
    ) -> None:
        """:meth:`_add_consumption`, taking what an earlier build of the cycle found of each
        slot for a request like ``req`` (:mod:`.cp_lists`) and testing only the others."""
        lists = self.cp_lists
        assert lists is not None
        ev = self.ev
        check_expr_limits = not static_limits and req.get_node("concurrencylimits") is not None
        lists.begin(req)
        found = lists.found(req, autocluster)
        versions, f_versions, f_costs, f_cands = lists.versions, found.versions, found.costs, found.cands
        extra = []
        for i, e in enumerate(lists.entries):
            if not e.alive:
                continue
            if not lists.steady(i):
                # A slot whose copy or weight can draw is tested as :meth:`_add_consumption`
                # tests it, so that it takes as many numbers from the run's source.
                cost = self.cp_cost(e, req)
                if cost is None or not ev.value(e, J_REQ) or not ev.value(e, S_REQ):
                    continue
                kept = False
            elif f_versions[i] == versions[i]:
                cost = f_costs[i]
                kept = True
            else:
                cost, kept = self._cp_found(found, i, e, req)
            if cost is None:
                continue
            if not self._cp_admits(out, e, cost, budget, check_expr_limits):
                continue
            cand = f_cands[i] if kept else None
            if cand is None:
                reads: list[str] = []
                key, steady = self._key_reads(e, reads)
                cand = Candidate(e, NO_PREEMPTION, key)
                if kept and steady:
                    found.note(req, reads)
                    f_cands[i] = cand
            extra.append(cand)
        if extra:
            _merge(out, extra)

    def _cp_found(self, found: Any, i: int, e: SlotEntry, req: NegotiationAd) -> tuple[Optional[float], bool]:
        """What :meth:`_add_consumption` finds of slot ``i`` (``e``) for ``req``: the cost of a
        match, None when it is not a candidate; kept in ``found`` (and True) when it may be."""
        ev, lists = self.ev, self.cp_lists
        assert lists is not None
        reads: list[str] = []
        cost, steady = lists.cost(i, req, reads)
        if cost is not None:
            ok, steady_j = ev.value_reads(e, J_REQ, reads)
            steady = steady and steady_j
            if not ok:
                cost = None
            else:
                ok, steady_s = ev.value_reads(e, S_REQ, reads)
                steady = steady and steady_s
                if not ok:
                    cost = None
        if not steady:
            return cost, False
        found.note(req, reads)
        found.versions[i], found.costs[i], found.cands[i] = lists.versions[i], cost, None
        return cost, True

    def _key_reads(self, e: SlotEntry, reads: list) -> tuple[tuple, bool]:
        """:meth:`_key` of a candidate in state ``NO_PREEMPTION``, the request's names its
        values depend on added to ``reads``, and whether it may be kept."""
        ev, pol = self.ev, self.policy
        steady = True
        pre: Any = -math.inf
        post: Any = -math.inf
        rank: Any = 0.0
        if pol.pre_job_rank is not None:
            pre, ok = ev.value_reads(e, S_PRE, reads)
            steady = steady and ok
        if pol.post_job_rank is not None:
            post, ok = ev.value_reads(e, S_POST, reads)
            steady = steady and ok
        if not pol.ignore_job_ranks:
            rank, ok = ev.value_reads(e, J_RANK, reads)
            steady = steady and ok
        return (-pre, -rank, -post, -NO_PREEMPTION, FLT_MAX, e.index), steady

    def _scan(
        self,
        req: NegotiationAd,
        autocluster: int,
        submitter: str,
        classes: Sequence[SlotClass],
        only_rank: bool,
        budget: Budget,
        static_limits: bool,
    ) -> CandidateList:
        """The candidate list evaluated pair by pair (through the memo and the slot classes)."""
        ev, pol = self.ev, self.policy
        out = CandidateList(autocluster, only_rank, [])
        items = out.items
        prereq = pol.preemption_requirements
        prereq_const = is_true(prereq.value) if type(prereq) is ast.Literal else None  # the default False
        check_expr_limits = not static_limits and req.get_node("concurrencylimits") is not None
        submitter_eup = self.eup_of(submitter) if pol.preemption_needs_better_eup else 0.0
        for cls in classes:
            if only_rank and not cls.claimed:
                continue
            rep = cls.representative()
            if rep is None or not ev.value(rep, J_REQ) or not ev.value(rep, S_REQ):
                continue
            rank_better: Optional[bool] = None
            for e in cls.claimed if only_rank else cls.entries:
                if not e.alive:
                    continue
                remote = e.remote
                state = NO_PREEMPTION
                if remote is not None:
                    if pol.skip_claimed_idle and e.claimed_idle:
                        continue
                    if rank_better is None:  # the same for the whole class
                        rank, current = ev.value(rep, S_RANK), ev.value(rep, S_CURRENT)
                        rank_better, rank_same = rank > current, rank >= current  # type: ignore[operator]
                    if rank_better:
                        state = RANK_PREEMPTION
                    elif only_rank or remote == submitter:
                        continue
                    else:
                        if pol.preemption_needs_better_eup and not submitter_eup < self.eup_of(remote):
                            continue
                        if prereq is not None and not (
                            prereq_const if prereq_const is not None else ev.value(e, S_PREQ)
                        ):
                            out.no_preemption_req = True
                            continue
                        if not rank_same:
                            continue
                        state = PRIO_PREEMPTION
                elif only_rank:
                    continue
                if (
                    state == PRIO_PREEMPTION
                    and not permits(budget.used, budget.lim, e.weight)
                    or state == NO_PREEMPTION
                    and not permits(budget.used_unclaimed, budget.lim_unclaimed, e.weight)
                ):
                    out.limited = True
                    continue
                if check_expr_limits:
                    v = ev.value(e, J_LIMITS)
                    full = self.limits.exhausted(parse_limits(v)) if type(v) is str else []
                    if full:
                        out.concurrency.extend(full)
                        continue
                items.append(Candidate(e, state, self._key(e, state)))
        items.sort(key=attrgetter("key"))
        return out

    def _key(self, e: SlotEntry, state: int) -> tuple:
        """The ascending sort key of a candidate (the values of ``sort_key``, converted once)."""
        ev, pol = self.ev, self.policy
        pre = ev.value(e, S_PRE) if pol.pre_job_rank is not None else -math.inf
        post = ev.value(e, S_POST) if pol.post_job_rank is not None else -math.inf
        rank = 0.0 if pol.ignore_job_ranks else ev.value(e, J_RANK)
        prank: object
        if state == NO_PREEMPTION:
            prank = -FLT_MAX
        elif pol.preemption_rank is None:
            prank = -math.inf
        else:
            prank = ev.value(e, S_PRANK)
        return (-pre, -rank, -post, -state, -prank, e.index)  # type: ignore[operator]

    def pop(
        self, cands: CandidateList, req: NegotiationAd, submitter: str, budget: Budget
    ) -> tuple[Optional[Candidate], bool]:
        """The next candidate that still passes the limit tests; ``(None, True)`` asks the
        caller to rebuild the list (a non-stable PREEMPTION_* value changed)."""
        ev, pol = self.ev, self.policy
        ev.use_request(req)
        static = self.request_limits(req)
        items = cands.items
        while cands.pos < len(items):
            c = items[cands.pos]
            cands.pos += 1
            e = c.entry
            if not e.alive:
                continue
            if (
                c.state == PRIO_PREEMPTION
                and not pol.preemption_requirements_stable
                and pol.preemption_requirements is not None
                and not ev.fresh(e, S_PREQ)
            ):
                return None, True
            if (
                c.state != NO_PREEMPTION
                and not pol.preemption_rank_stable
                and pol.preemption_rank is not None
                and -ev.fresh(e, S_PRANK) != c.key[4]  # type: ignore[operator]
            ):
                return None, True
            cost = c.cost if c.cost is not None else e.cost if e.cp is not None else e.weight
            if (
                c.state == PRIO_PREEMPTION
                and not permits(budget.used, budget.lim, cost)
                or c.state == NO_PREEMPTION
                and not permits(budget.used_unclaimed, budget.lim_unclaimed, cost)
            ):
                cands.limited = True
                continue
            limits = static
            if limits is None and req.get_node("concurrencylimits") is not None:
                v = ev.value(e, J_LIMITS)
                limits = parse_limits(v) if type(v) is str else None
            if limits:
                full = self.limits.exhausted(limits)
                if full:
                    cands.concurrency.extend(full)
                    continue
            return c, False
        return None, False

    def set_partitionable(self, pslots: list[SlotEntry], children: dict[int, list[SlotEntry]]) -> None:
        """The partitionable slots (without a consumption policy) and their dynamic slots, for
        ``ALLOW_PSLOT_PREEMPTION``."""
        self._pslot_entries = pslots
        self.children = children

    def matched_limits(self, req: NegotiationAd, e: SlotEntry) -> list[tuple[str, float]]:
        """The limits a match of ``req`` on ``e`` holds (for the counters)."""
        static = self.request_limits(req)
        if static is not None:
            return static
        if req.get_node("concurrencylimits") is None:
            return []
        self.ev.use_request(req)
        v = self.ev.value(e, J_LIMITS)
        return parse_limits(v) if type(v) is str else []


def _merge(out: CandidateList, extra: list[Candidate]) -> None:
    """Merge ``extra`` into the candidates of ``out`` not yet offered, in candidate order."""
    items = out.items
    merged = [items[i] for i in range(out.pos, len(items))] + extra
    merged.sort(key=attrgetter("key"))
    out.items, out.pos = merged, 0


def _both_match(req: NegotiationAd, slot: ClassAd, state: Any) -> bool:
    """Both Requirements true between the request and a slot ad built for the test."""
    for my, target in ((req, slot), (slot, req)):
        node = my.get_node("requirements")
        if node is None:
            return False
        state.my, state.target = my, target
        if not is_true(evaluate_top(node, my, state)):
            return False
    return True


__all__ = ["Matcher"]
