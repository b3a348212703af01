"""Finding and ranking the candidate slots for one request (spec §1.8, §1.13).

A slot is a candidate when both Requirements hold in the two-ad context (job
as MY, slot as TARGET and the reverse).  A claimed slot is a candidate only for
preemption: by machine RANK (the slot prefers this job over its current one),
or by priority (another submitter holds it, PREEMPTION_REQUIREMENTS holds and
the machine RANK does not get worse).  Candidates are sorted descending by
``(PRE_JOB_RANK, job Rank, POST_JOB_RANK, state, PREEMPTION_RANK)`` -- the knob
ranks in single precision, as HTCondor compares them, state ``NO_PREEMPTION >
RANK > PRIO`` -- then by slot list order.

Speed without changing results: (1) every pair evaluation is memoized on what
it *read* -- the names it looked up in either ad and the values they had -- so
any pair agreeing on those reuses the result; (2) slots that agree on every name
the match tests can read (``autocluster.decisive_names``) form a class whose
Requirements and Rank tests run once per request.  Anything that called
``ResourcesInUseBy*`` is never memoized.
"""

from __future__ import annotations

import math
import struct
from operator import attrgetter
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from classad import ast
from classad.evaluate import eval_attribute, evaluate_top
from classad.values import ERROR, UNDEFINED, truthiness

from .ephemeral import MatchState, NegotiationAd
from .pool import ConcurrencyLimits, Slot, parse_limits

NO_PREEMPTION, RANK_PREEMPTION, PRIO_PREEMPTION = 2, 1, 0
REASONS = {NO_PREEMPTION: "no-preemption", RANK_PREEMPTION: "rank", PRIO_PREEMPTION: "priority"}
NO_MATCH = "no match found"
SUBMITTER_LIMIT = "submitter limit exceeded"
PREEMPTION_REQ_FALSE = "PREEMPTION_REQUIREMENTS == False"

_F32 = struct.Struct("f")
_FLT_MAX = 3.4028234663852886e38
_MISS = object()
# The expressions evaluated per (request, slot): slot-side ones (the slot as MY) first,
# then job-side ones (the request as MY).
(_S_REQ, _S_RANK, _S_CURRENT, _S_PREQ, _S_PRE, _S_POST, _S_PRANK,
 _J_REQ, _J_RANK, _J_LIMITS) = range(10)
_KINDS = 10
_ATTR_OF = {_S_REQ: "requirements", _S_RANK: "rank", _S_CURRENT: "currentrank",
            _J_REQ: "requirements", _J_RANK: "rank", _J_LIMITS: "concurrencylimits"}
_LABELS = {_S_RANK: "Rank", _S_PRE: "NEGOTIATOR_PRE_JOB_RANK", _S_POST: "NEGOTIATOR_POST_JOB_RANK",
           _S_PRANK: "PREEMPTION_RANK"}


def float32(x: float) -> float:
    """``x`` rounded to single precision, as C's ``(float)x`` (overflow gives infinity)."""
    if x != x or math.isinf(x):
        return x
    if abs(x) > _FLT_MAX:
        return math.copysign(math.inf, x)
    return _F32.unpack(_F32.pack(x))[0]


def rank_value(v: object) -> Optional[float]:
    """A number for a rank: int, real, or bool as 0/1; None for anything else."""
    t = type(v)
    if t is float or t is int:
        return float(v)  # type: ignore[arg-type]
    if t is bool:
        return 1.0 if v else 0.0
    return None


def _is_true(v: object) -> bool:
    return truthiness(v) is True


def _rank_or_zero(v: object) -> float:
    return rank_value(v) or 0.0


def _knob_rank(v: object) -> float:
    """A PRE/POST/PREEMPTION rank as compared: single precision; -inf when not a number
    (HTCondor's -DBL_MAX, which no finite rank can reach)."""
    r = rank_value(v)
    return -math.inf if r is None else float32(r)


_CONVERT = {_S_REQ: _is_true, _J_REQ: _is_true, _S_PREQ: _is_true, _S_RANK: _rank_or_zero,
            _S_CURRENT: _rank_or_zero, _J_RANK: _rank_or_zero, _S_PRE: _knob_rank, _S_POST: _knob_rank,
            _S_PRANK: _knob_rank, _J_LIMITS: lambda v: v}   # how each kind's raw value is used


def permits(used: float, allowed: float, cost: float) -> bool:
    """The submitter-limit test with HTCondor's round-up-once rule (spec §1.6)."""
    return used + cost <= allowed or (used <= 0 and allowed > 0)


# ---- settings ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchPolicy:
    """The knobs that shape candidate selection."""

    consider_preemption: bool = True
    preemption_requirements: Optional[ast.Node] = None
    preemption_rank: Optional[ast.Node] = None
    pre_job_rank: Optional[ast.Node] = None
    post_job_rank: Optional[ast.Node] = None
    ignore_job_ranks: bool = False
    matchlist_caching: bool = True
    preemption_requirements_stable: bool = True
    preemption_rank_stable: bool = True
    # The manual's behaviour where it differs from the code (spec §1.15); off = the code.
    preemption_needs_better_eup: bool = False
    skip_claimed_idle: bool = False


# ---- per-cycle slot entries and the memoizing evaluator ---------------------------------


class SlotEntry:
    """A slot as the cycle sees it: its annotated copy, and its values of memo keys."""

    __slots__ = ("slot", "ad", "remote", "claimed_idle", "alive", "keys", "weight", "index", "cls")

    def __init__(self, slot: Slot, ad: NegotiationAd, remote: Optional[str], claimed_idle: bool = False) -> None:
        self.slot, self.ad, self.remote, self.claimed_idle = slot, ad, remote, claimed_idle
        self.alive = True
        self.keys: dict = {}              # names tuple -> this slot's values for them
        self.weight = slot.weight         # the cost of matching this slot
        self.index = slot.index
        self.cls: Optional[SlotClass] = None


class SlotClass:
    """Slots that agree on every name the match tests can read (see ``decisive_names``):
    Requirements both ways, the slot's Rank and CurrentRank are evaluated once per class."""

    __slots__ = ("entries", "claimed", "dead")

    def __init__(self) -> None:
        self.entries: list[SlotEntry] = []
        self.claimed: list[SlotEntry] = []
        self.dead = 0

    def representative(self) -> Optional[SlotEntry]:
        """Any slot of the class still available."""
        if self.dead * 2 > len(self.entries):
            self.entries = [e for e in self.entries if e.alive]
            self.claimed = [e for e in self.claimed if e.alive]
            self.dead = 0
        for e in self.entries:
            if e.alive:
                return e
        return None


def group_slots(entries: Sequence[SlotEntry], names: Optional[frozenset[str]]) -> list[SlotClass]:
    """Partition ``entries`` by their values of ``names`` (each slot alone when None)."""
    classes: dict[object, SlotClass] = {}
    order = sorted(names) if names is not None else None
    for e in entries:
        key = e.index if order is None else tuple(_value_key(e.ad.get_node(n)) for n in order)
        cls = classes.get(key)
        if cls is None:
            cls = classes[key] = SlotClass()
        cls.entries.append(e)
        if e.remote is not None:
            cls.claimed.append(e)
        e.cls = cls
    return list(classes.values())


def _value_key(node: Optional[ast.Node]) -> object:
    if node is None:
        return None
    if type(node) is ast.Literal:
        v = node.value
        t = type(v)
        if t is bool or t is int or t is float or t is str:
            return (t, v)
    return id(node)    # trees are shared and kept alive by the ads for the whole cycle


def _key(ad: NegotiationAd, names: tuple, cache: dict) -> tuple:
    key = cache.get(names)
    if key is None:
        get = ad.get_node
        key = cache[names] = tuple(_value_key(get(n)) for n in names)
    return key


class Evaluator:
    """Evaluates the pair expressions of one cycle, memoizing on what was read.

    One table per expression kind, shared by all slots and requests: an entry
    records which names an evaluation read from the slot and from the request,
    and maps the values those names had to the result.  Same names with the
    same values means the same evaluation, so any pair of ads that agrees on
    them reuses the result.
    """

    def __init__(self, state: MatchState, policy: MatchPolicy) -> None:
        self.state = state
        self.policy = policy
        self.warnings: dict[tuple, str] = {}
        self.quiet: set[int] = set()        # slots already reported (their Rank is an error)
        self.evaluations = 0
        self._names: dict[tuple, tuple] = {}
        self._memo: list[list] = [[] for _ in range(_KINDS)]
        self._req: Optional[NegotiationAd] = None
        self._req_keys: dict = {}
        self._knob_nodes = {_S_PREQ: policy.preemption_requirements, _S_PRE: policy.pre_job_rank,
                            _S_POST: policy.post_job_rank, _S_PRANK: policy.preemption_rank}

    def use_request(self, req: NegotiationAd) -> None:
        """Start evaluating for ``req`` (its values may have changed since last time)."""
        self._req = req
        self._req_keys = {}

    def value(self, entry: SlotEntry, kind: int) -> object:
        """Expression ``kind`` for the current request and ``entry``'s slot, already
        converted: a bool for the tests, a float for the ranks (see ``_convert``)."""
        slot_keys, req_keys = entry.keys, self._req_keys
        for slot_names, req_names, table in self._memo[kind]:
            sk = slot_keys.get(slot_names)
            if sk is None:
                sk = _key(entry.ad, slot_names, slot_keys)
            rk = req_keys.get(req_names)
            if rk is None:
                rk = _key(self._req, req_names, req_keys)  # type: ignore[arg-type]
            v = table.get((sk, rk), _MISS)
            if v is not _MISS:
                return v
        return self._evaluate(entry, kind)

    def fresh(self, entry: SlotEntry, kind: int) -> object:
        """Evaluate again without the memo (for the PREEMPTION_*_STABLE = false checks)."""
        return self._evaluate(entry, kind, store=False)

    def _evaluate(self, entry: SlotEntry, kind: int, store: bool = True) -> object:
        st, req, slot_ad = self.state, self._req, entry.ad
        self.evaluations += 1
        if kind >= _J_REQ:
            st.my, st.target = req, slot_ad
        else:
            st.my, st.target = slot_ad, req
        st.volatile = False
        slot_reads: list = []
        req_reads: list = []
        slot_ad.reads, req.reads = slot_reads, req_reads  # type: ignore[union-attr]
        try:
            attr = _ATTR_OF.get(kind)
            if attr is None:
                raw = evaluate_top(self._knob_nodes[kind], slot_ad, st)  # type: ignore[arg-type]
            else:
                raw = _attr(req if kind >= _J_REQ else slot_ad, attr, st)  # type: ignore[arg-type]
        finally:
            slot_ad.reads = req.reads = None  # type: ignore[union-attr]
        if raw is ERROR and kind in _LABELS:
            self._warn_error(entry.slot, _LABELS[kind])
        v = _CONVERT[kind](raw)
        if store and not st.volatile:
            sn = self._intern(slot_reads)
            rn = self._intern(req_reads)
            key = (_key(slot_ad, sn, entry.keys), _key(req, rn, self._req_keys))  # type: ignore[arg-type]
            memo = self._memo[kind]
            for slot_names, req_names, table in memo:
                if slot_names is sn and req_names is rn:
                    table[key] = v
                    break
            else:
                memo.append((sn, rn, {key: v}))
        return v

    def _intern(self, reads: list) -> tuple:
        names = tuple(dict.fromkeys(reads))
        return self._names.setdefault(names, names)

    def _warn_error(self, slot: Slot, what: str) -> None:
        key = (slot.index, what)
        if key not in self.warnings and slot.index not in self.quiet:
            self.warnings[key] = (f"{slot.source}: warning: slot {slot.name}: {what} evaluates to error; "
                                  f"treated as {'0' if what == 'Rank' else 'the lowest rank'}")


def _attr(ad: NegotiationAd, lname: str, st: MatchState) -> object:
    node = ad.get_node(lname)
    if node is None:
        return UNDEFINED
    try:
        return eval_attribute(ad, lname, node, st)
    except RecursionError:
        return ERROR


# ---- candidates ------------------------------------------------------------------------------


@dataclass
class Budget:
    """What this submitter may still take in this spin (spec §1.6)."""

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


@dataclass(eq=False)
class CandidateList:
    """The sorted candidates of one request, consumed in order (HTCondor's match list)."""

    autocluster: int
    only_rank: bool
    items: list[Candidate]
    pos: int = 0
    no_preemption_req: bool = False     # some slot was refused by PREEMPTION_REQUIREMENTS
    limited: bool = False               # some slot was refused by the submitter limit
    concurrency: list[str] = field(default_factory=list)

    def reason(self) -> str:
        """Why nothing could be offered, in HTCondor's order of precedence (spec §1.14)."""
        if self.concurrency:
            return limits_reason(sorted(set(self.concurrency)))
        if self.no_preemption_req:
            return PREEMPTION_REQ_FALSE
        if self.limited:
            return SUBMITTER_LIMIT
        return NO_MATCH


class Matcher:
    """Builds and serves candidate lists for the requests of one cycle."""

    def __init__(self, evaluator: Evaluator, limits: ConcurrencyLimits,
                 eup_of: Callable[[str], float]) -> None:
        self.ev = evaluator
        self.policy = evaluator.policy
        self.limits = limits
        self.eup_of = eup_of

    def request_limits(self, req: NegotiationAd) -> Optional[list[tuple[str, float]]]:
        """The request's limits when ``ConcurrencyLimits`` is a plain string, else None."""
        node = req.get_node("concurrencylimits")
        if node is None:
            return None
        st = self.ev.state
        st.my, st.target = req, None
        v = evaluate_top(node, req, st)
        return parse_limits(v) if type(v) is str else None

    def build(self, req: NegotiationAd, autocluster: int, submitter: str, classes: Sequence[SlotClass],
              only_rank: bool, budget: Budget, static_limits: bool) -> CandidateList:
        """All candidates for ``req`` among the available slots, sorted (spec §1.8)."""
        ev, pol = self.ev, self.policy
        ev.use_request(req)
        out = CandidateList(autocluster, only_rank, [])
        items = out.items
        prereq = pol.preemption_requirements
        prereq_const = _is_true(prereq.value) if type(prereq) is ast.Literal else None  # the default False
        check_expr_limits = not static_limits and req.get_node("concurrencylimits") is not None
        submitter_eup = self.eup_of(submitter) if pol.preemption_needs_better_eup else 0.0
        for cls in classes:
            if only_rank and not cls.claimed:
                continue
            rep = cls.representative()
            if rep is None or not ev.value(rep, _J_REQ) or not ev.value(rep, _S_REQ):
                continue
            rank_better: Optional[bool] = None
            for e in (cls.claimed if only_rank else cls.entries):
                if not e.alive:
                    continue
                remote = e.remote
                state = NO_PREEMPTION
                if remote is not None:
                    if pol.skip_claimed_idle and e.claimed_idle:
                        continue
                    if rank_better is None:     # the same for the whole class
                        rank, current = ev.value(rep, _S_RANK), ev.value(rep, _S_CURRENT)
                        rank_better, rank_same = rank > current, rank >= current  # type: ignore[operator]
                    if rank_better:
                        state = RANK_PREEMPTION
                    elif only_rank or remote == submitter:
                        continue
                    else:
                        if pol.preemption_needs_better_eup and not submitter_eup < self.eup_of(remote):
                            continue
                        if prereq is not None and not (prereq_const if prereq_const is not None
                                                       else ev.value(e, _S_PREQ)):
                            out.no_preemption_req = True
                            continue
                        if not rank_same:
                            continue
                        state = PRIO_PREEMPTION
                elif only_rank:
                    continue
                if state == PRIO_PREEMPTION and not permits(budget.used, budget.lim, e.weight) or \
                        state == NO_PREEMPTION and not permits(budget.used_unclaimed, budget.lim_unclaimed,
                                                              e.weight):
                    out.limited = True
                    continue
                if check_expr_limits:
                    v = ev.value(e, _J_LIMITS)
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
        pre = ev.value(e, _S_PRE) if pol.pre_job_rank is not None else -math.inf
        post = ev.value(e, _S_POST) if pol.post_job_rank is not None else -math.inf
        rank = 0.0 if pol.ignore_job_ranks else ev.value(e, _J_RANK)
        if state == NO_PREEMPTION:
            prank = -_FLT_MAX
        elif pol.preemption_rank is None:
            prank = -math.inf
        else:
            prank = ev.value(e, _S_PRANK)
        return (-pre, -rank, -post, -state, -prank, e.index)  # type: ignore[operator]

    def pop(self, cands: CandidateList, req: NegotiationAd, submitter: str, budget: Budget
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
            if c.state == PRIO_PREEMPTION and not pol.preemption_requirements_stable and \
                    pol.preemption_requirements is not None and \
                    not ev.fresh(e, _S_PREQ):
                return None, True
            if c.state != NO_PREEMPTION and not pol.preemption_rank_stable and \
                    pol.preemption_rank is not None and \
                    -ev.fresh(e, _S_PRANK) != c.key[4]:  # type: ignore[operator]
                return None, True
            if c.state == PRIO_PREEMPTION and not permits(budget.used, budget.lim, e.weight) or \
                    c.state == NO_PREEMPTION and not permits(budget.used_unclaimed, budget.lim_unclaimed,
                                                            e.weight):
                cands.limited = True
                continue
            limits = static
            if limits is None and req.get_node("concurrencylimits") is not None:
                v = ev.value(e, _J_LIMITS)
                limits = parse_limits(v) if type(v) is str else None
            if limits:
                full = self.limits.exhausted(limits)
                if full:
                    cands.concurrency.extend(full)
                    continue
            return c, False
        return None, False

    def matched_limits(self, req: NegotiationAd, e: SlotEntry) -> list[tuple[str, float]]:
        """The limits a match of ``req`` on ``e`` holds (for the counters)."""
        static = self.request_limits(req)
        if static is not None:
            return static
        if req.get_node("concurrencylimits") is None:
            return []
        self.ev.use_request(req)
        v = self.ev.value(e, _J_LIMITS)
        return parse_limits(v) if type(v) is str else []


def sort_key(pre: float, rank: float, post: float, state: int, prank: float, index: int) -> tuple:
    """The candidate order of spec §1.8 as an ascending key: PRE_JOB_RANK, job Rank,
    POST_JOB_RANK, preemption state and PREEMPTION_RANK descending (the knob ranks
    compared in single precision, as HTCondor does), then slot list order."""
    return (-float32(pre), -rank, -float32(post), -state, -float32(prank), index)


__all__ = [
    "NO_MATCH", "NO_PREEMPTION", "PREEMPTION_REQ_FALSE", "PRIO_PREEMPTION", "RANK_PREEMPTION", "REASONS",
    "SUBMITTER_LIMIT", "Budget", "Candidate", "CandidateList", "Evaluator",
    "MatchPolicy", "Matcher", "SlotClass", "SlotEntry", "group_slots", "float32", "permits",
    "rank_value", "sort_key",
]
