"""Pair evaluation: the expressions the matchmaker evaluates per (request, slot), memoized.

For one request and one slot the matchmaker may need ten values: the slot's
Requirements, Rank and CurrentRank and the PREEMPTION_REQUIREMENTS,
NEGOTIATOR_PRE_JOB_RANK, NEGOTIATOR_POST_JOB_RANK and PREEMPTION_RANK knobs (the
slot as MY), and the job's Requirements, Rank and ConcurrencyLimits (the job as
MY).  :class:`Evaluator` returns each already converted to what the candidate
sort compares (docs/negotiation.md, candidate slots): a bool for the tests, a number for the ranks (the knob
ranks in single precision, as HTCondor compares them; -inf when not a number).

Speed without changing results: (1) every evaluation is memoized on what it
*read* -- the names it looked up in either ad and the values they had -- so any
pair agreeing on those reuses the result; (2) slots that agree on every name the
match tests can read (``autocluster.decisive_names``) form a :class:`SlotClass`
whose Requirements and Rank tests run once per request.  Anything that called
``ResourcesInUseBy*`` (its value changes as matches are made) is never memoized.
"""

from __future__ import annotations

import math
import struct
from itertools import compress
from operator import attrgetter
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from classad import ast
from classad.evaluate import eval_attribute, evaluate_top
from classad.values import ERROR, FLT_MAX, UNDEFINED, truthiness

from ..config.settings import MatchPolicy
from ..pool.ads import Slot
from .ephemeral import MatchState, NegotiationAd

_F32 = struct.Struct("f")
_MISS = object()
# The expressions evaluated per (request, slot): slot-side ones (the slot as MY) first,
# then job-side ones (the request as MY).
(S_REQ, S_RANK, S_CURRENT, S_PREQ, S_PRE, S_POST, S_PRANK, J_REQ, J_RANK, J_LIMITS) = range(10)
_KINDS = 10
_ATTR_OF = {
    S_REQ: "requirements",
    S_RANK: "rank",
    S_CURRENT: "currentrank",
    J_REQ: "requirements",
    J_RANK: "rank",
    J_LIMITS: "concurrencylimits",
}
_LABELS = {
    S_RANK: "Rank",
    S_PRE: "NEGOTIATOR_PRE_JOB_RANK",
    S_POST: "NEGOTIATOR_POST_JOB_RANK",
    S_PRANK: "PREEMPTION_RANK",
}


def float32(x: float) -> float:
    """``x`` rounded to single precision, as C's ``(float)x`` (overflow gives infinity)."""
    if x != x or math.isinf(x):
        return x
    if abs(x) > FLT_MAX:
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


def is_true(v: object) -> bool:
    """Whether a value counts as true (a test passes)."""
    return truthiness(v) is True


def _rank_or_zero(v: object) -> float:
    return rank_value(v) or 0.0


def _knob_rank(v: object) -> float:
    """A PRE/POST/PREEMPTION rank as compared: single precision; -inf when not a number
    (HTCondor's -DBL_MAX, which no finite rank can reach)."""
    r = rank_value(v)
    return -math.inf if r is None else float32(r)


_CONVERT = {
    S_REQ: is_true,
    J_REQ: is_true,
    S_PREQ: is_true,
    S_RANK: _rank_or_zero,
    S_CURRENT: _rank_or_zero,
    J_RANK: _rank_or_zero,
    S_PRE: _knob_rank,
    S_POST: _knob_rank,
    S_PRANK: _knob_rank,
    J_LIMITS: lambda v: v,
}  # how each kind's raw value is used


# ---- the knobs ----------------------------------------------------------------------------


# ---- per-cycle slot entries and the memoizing evaluator ---------------------------------


class SlotEntry:
    """A slot as the cycle sees it: its annotated copy, and its values of memo keys."""

    __slots__ = ("slot", "ad", "remote", "claimed_idle", "alive", "keys", "weight", "index", "cls", "cp", "cost")

    def __init__(self, slot: Slot, ad: NegotiationAd, remote: Optional[str], claimed_idle: bool = False) -> None:
        self.slot, self.ad, self.remote, self.claimed_idle = slot, ad, remote, claimed_idle
        self.alive = True
        self.keys: dict = {}  # names tuple -> this slot's values for them
        self.weight = slot.weight  # the cost of matching this slot
        self.index = slot.index
        self.cls: Optional[SlotClass] = None
        self.cp: Optional[tuple[str, ...]] = None  # the resources of a consumption policy
        self.cost = self.weight  # what a match costs: under a consumption policy, per request


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


class SlotRows:
    """What the columnar slot table reads of each of a list of new entries, gathered by
    the cycle while it made them (the entries lie all over memory, their records too):
    per entry its slot's index, its copy, its remote user, whether it is claimed and
    idle, its slot's weight, slot ad and name.  ``fresh`` says that no entry changed
    since (each is alive and costs its slot's weight); the cycle clears it on its first
    match, and the table then reads the entries themselves."""

    __slots__ = ("rows", "fresh", "_fields", "_index")

    def __init__(self, rows: list[tuple[int, NegotiationAd, Optional[str], bool, Any, Any, Any]]) -> None:
        self.rows = rows
        self.fresh = True
        self._fields: Optional[list[list]] = None
        self._index: Optional[np.ndarray] = None

    def fields(self) -> list[list]:
        """The rows as seven lists, one per field (made once: the rows lie all over memory)."""
        if self._fields is None:
            self._fields = list(map(list, zip(*self.rows))) if self.rows else [[] for _ in range(7)]
        return self._fields

    def index(self) -> np.ndarray:
        """The slots' indexes (int64), made once."""
        if self._index is None:
            self._index = np.array(self.fields()[0], dtype=np.int64)
        return self._index

    def distinct(self) -> bool:
        """Whether each slot index is listed once: at once when they increase along the rows
        (as they do but for duplicated indexes), else by a set of them."""
        index = self.index()
        if len(index) < 2 or bool((index[1:] > index[:-1]).all()):
            return True
        return len(set(self.fields()[0])) == len(index)

    def only(self, kept: Sequence[bool]) -> "SlotRows":
        """The rows where ``kept`` holds (the list of entries ``kept`` picks)."""
        return SlotRows(list(compress(self.rows, kept)))


class EachAlone(Sequence[SlotClass]):
    """The classes of slots that each form their own (:func:`group_slots` without names,
    every index once), made only when first read: the columnar matcher reads the entries
    in order (:attr:`entries`) and no class; until then each entry's ``cls`` is None.
    ``rows``, if known, is what the slot table reads of the entries (:class:`SlotRows`)."""

    def __init__(self, entries: Sequence[SlotEntry], rows: Optional[SlotRows] = None) -> None:
        self.entries = list(entries)
        self.rows = rows
        self._classes: Optional[list[SlotClass]] = None

    @property
    def made(self) -> bool:
        """Whether the classes were made (and each entry's ``cls`` set)."""
        return self._classes is not None

    def _made(self) -> list[SlotClass]:
        if self._classes is None:
            self._classes = group_slots(self.entries, None)
        return self._classes

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, i: Any) -> Any:
        return self._made()[i]

    def __iter__(self) -> Iterator[SlotClass]:
        return iter(self._made())


def each_alone(entries: Sequence[SlotEntry], rows: Optional[SlotRows] = None) -> Sequence[SlotClass]:
    """``group_slots(entries, None)``, its classes made on first use when each index is
    listed once (:class:`EachAlone`); ``rows``, if given, what the table reads of the
    entries (:class:`SlotRows`, their indexes read there)."""
    if len(set(map(_INDEX, entries))) == len(entries) if rows is None else rows.distinct():
        return EachAlone(entries, rows)
    return group_slots(entries, None)


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


_INDEX = attrgetter("index")


def _value_key(node: Optional[ast.Node]) -> object:
    if node is None:
        return None
    if type(node) is ast.Literal:
        v = node.value
        t = type(v)
        if t is bool or t is int or t is float or t is str:
            return (t, v)
    return id(node)  # trees are shared and kept alive by the ads for the whole cycle


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
        self.quiet: set[int] = set()  # slots already reported (their Rank is an error)
        self.evaluations = 0
        self._names: dict[tuple, tuple] = {}
        self._memo: list[list] = [[] for _ in range(_KINDS)]
        self._req: Optional[NegotiationAd] = None
        self._req_keys: dict = {}
        self._knob_nodes = {
            S_PREQ: policy.preemption_requirements,
            S_PRE: policy.pre_job_rank,
            S_POST: policy.post_job_rank,
            S_PRANK: policy.preemption_rank,
        }

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

    def value_reads(self, entry: SlotEntry, kind: int, reads: list) -> tuple[object, bool]:
        """:meth:`value`, the request's names it depends on added to ``reads`` (those of
        the memo table that held it, or those the evaluation read), and whether it may be
        kept for any request giving those names the same values, with the slot as it is
        (False when the evaluation was volatile or drew: then it was not memoized either)."""
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
                reads.extend(req_names)
                return v, True
        st = self.state
        taint = st.taint
        v = self._evaluate(entry, kind, reads=reads)
        return v, not st.volatile and st.taint == taint

    def fresh(self, entry: SlotEntry, kind: int) -> object:
        """Evaluate again without the memo (for the PREEMPTION_*_STABLE = false checks)."""
        return self._evaluate(entry, kind, store=False)

    def _evaluate(self, entry: SlotEntry, kind: int, store: bool = True, reads: Optional[list] = None) -> object:
        st, req, slot_ad = self.state, self._req, entry.ad
        self.evaluations += 1
        if kind >= J_REQ:
            st.my, st.target = req, slot_ad
        else:
            st.my, st.target = slot_ad, req
        st.volatile = False
        taint = st.taint  # random() (and other path-dependent values) bump it: never stored
        slot_reads: list = []
        req_reads: list = []
        slot_ad.reads, req.reads = slot_reads, req_reads  # type: ignore[union-attr]
        try:
            attr = _ATTR_OF.get(kind)
            if attr is None:
                raw = evaluate_top(self._knob_nodes[kind], slot_ad, st)  # type: ignore[arg-type]
            else:
                raw = _attr(req if kind >= J_REQ else slot_ad, attr, st)  # type: ignore[arg-type]
        finally:
            slot_ad.reads = req.reads = None  # type: ignore[union-attr]
        if reads is not None:
            reads.extend(req_reads)
        if raw is ERROR and kind in _LABELS:
            self._warn_error(entry.slot, _LABELS[kind])
        v = _CONVERT[kind](raw)
        if store and not st.volatile and st.taint == taint:
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
            self.warnings[key] = (
                f"{slot.source}: warning: slot {slot.name}: {what} evaluates to error; "
                f"treated as {'0' if what == 'Rank' else 'the lowest rank'}"
            )


def _attr(ad: NegotiationAd, lname: str, st: MatchState) -> object:
    node = ad.get_node(lname)
    if node is None:
        return UNDEFINED
    try:
        return eval_attribute(ad, lname, node, st)
    except RecursionError:
        return ERROR


__all__ = [
    "J_LIMITS",
    "J_RANK",
    "J_REQ",
    "S_CURRENT",
    "S_POST",
    "S_PRANK",
    "S_PRE",
    "S_PREQ",
    "S_RANK",
    "S_REQ",
    "Evaluator",
    "SlotClass",
    "SlotEntry",
    "float32",
    "group_slots",
    "is_true",
    "rank_value",
]
