"""A candidate-list build made again in the same cycle reuses what the first one found per row.

Within one cycle the list of one request's autocluster is often built more than once: a
submitter's queue alternates between autoclusters while the match-list cache holds one
list, and a later spin or group pass asks again.  Between two such builds little that the
build reads can change:

* the rows of the cycle's slot table only leave it (a matched slot is gone for the rest of
  the cycle; a slot whose ad changes as it is matched, a partitionable slot with a
  consumption policy, is kept out of the table and evaluated pair by pair every time);
* the submitter's budget and the concurrency limits' counts change with every match;
* the request's usage attributes (``SubmitterUserResourcesInUse`` ...) change, and the next
  request of the autocluster is another job's ad.

So what the first build found per row -- the rows where both Requirements hold and the
preemption tests keep the slot, each one's preemption state, the rows
``PREEMPTION_REQUIREMENTS`` refused, the rows whose Rank is an error and the sort keys
with their errors (of the rows its limits left it; a later build computes those of the
rows its own limits now leave, and adds what that read to what is compared) -- is stored
with the values the build read of the request (every name it looked up, through
:attr:`NegotiationAd.reads`).  A later build of the same autocluster, submitter and mode
whose request gives the same values to those names takes it: it keeps the rows still
available and runs only the stages that can differ (the submitter's limits, the
concurrency limits) again.  The ranks of the cycle (EUPs, the policy) are frozen for the
cycle, so they need no check.

A build is stored only when it drew no random number (evaluating the same expressions
with the same values on fewer rows then draws none either) and called no function whose
value changes during the cycle (``ResourcesInUseBy*``); sort keys are computed for more
rows only when nothing they evaluate can draw (:mod:`.draws`), else the list is made
afresh.  The stored builds of a cycle are bounded in bytes, the least recently used
dropped first.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Optional

import numpy as np

from classad import ast
from classad.values import ERROR, UNDEFINED

# The bytes of stored builds one cycle keeps at most.
BUDGET = 32 * 1024 * 1024

_SAME = (int, bool, str)


@dataclass(eq=False)
class Found:
    """What one build found per row, in ascending row order (positions align)."""

    rows: np.ndarray  # the rows that stay candidates once the preemption tests are passed
    state: np.ndarray  # their preemption states
    keys: list[np.ndarray]  # their four rank keys (negated, as sorted), where known
    errors: list[np.ndarray]  # where PRE_JOB_RANK, POST_JOB_RANK, PREEMPTION_RANK are an error
    known: np.ndarray  # where the keys and errors were computed (a build computes them
    # only for the rows its limits leave)
    rank_errors: np.ndarray  # the rows (candidates or not) whose slot Rank is an error
    refused: np.ndarray  # the rows PREEMPTION_REQUIREMENTS refused: positions, or a mask over every row
    reads: tuple[tuple[str, Any], ...] = ()  # what the build read of the request: (name, value)
    spread: bool = False  # keys, errors are those of the positions ``known`` (an array of them)
    marks: list[bool] = field(default_factory=lambda: [False] * 4)  # the keys known to hold no NaN

    @classmethod
    def known_at(
        cls,
        rows: np.ndarray,
        state: np.ndarray,
        at: np.ndarray,
        keys: list[np.ndarray],
        errors: list[np.ndarray],
        rank_errors: list[int],
        refused: np.ndarray,
        marks: list[bool],
    ) -> Found:
        """The candidates ``rows``, with the keys and errors of the positions ``at`` (laid
        out over all of them when first needed: most builds are never made again), and
        which keys are known to hold no NaN."""
        found = cls(rows, state, keys, errors, at, np.array(rank_errors, dtype=np.int64), refused)
        found.spread = True
        found.marks = list(marks)
        return found

    def laid_out(self) -> Found:
        """Itself, its keys and errors laid out over every position (see :meth:`known_at`)."""
        if self.spread:
            n, at = len(self.rows), self.known
            keys, errors = self.keys, self.errors
            self.keys = [np.zeros(n) for _ in keys]
            self.errors = [np.zeros(n, dtype=bool) for _ in errors]
            self.known = np.zeros(n, dtype=bool)
            self.spread = False
            self.put_keys(at, keys, errors, self.marks)
        return self

    def put_keys(self, at: np.ndarray, keys: list[np.ndarray], errors: list[np.ndarray], marks: list[bool]) -> None:
        """Record the keys and errors of the positions ``at``, and which of those keys are
        known to hold no NaN (a key stays marked only while every part of it is)."""
        self.marks = [a and b for a, b in zip(self.marks, marks)]
        for whole, part in zip(self.keys, keys):
            whole[at] = part
        for whole, part in zip(self.errors, errors):
            whole[at] = part
        self.known[at] = True

    def add_reads(self, reads: tuple[tuple[str, Any], ...]) -> None:
        """Add the names of ``reads`` not read before (a later build computed more keys)."""
        names = {n for n, _ in self.reads}
        self.reads += tuple((n, v) for n, v in reads if n not in names)

    @property
    def nbytes(self) -> int:
        """The bytes its arrays hold."""
        arrays = [self.rows, self.state, self.known, self.rank_errors, self.refused, *self.keys, *self.errors]
        return sum(a.nbytes for a in arrays)


def stored_form(req: Any, lname: str) -> Any:
    """The request's value of ``lname`` as compared: its bare value when it is a plain
    literal, else its node (None when it has no such attribute); read without being logged."""
    reads = req.reads
    req.reads = None
    try:
        return req.plain(lname)
    finally:
        req.reads = reads


def same_value(a: Any, b: Any) -> bool:
    """Whether two stored forms evaluate alike: the same node, or equal plain values of one
    type (reals compared bit for bit, so ``-0.0`` and ``0.0`` differ)."""
    if a is b:
        return True
    t = type(a)
    if t is not type(b):
        return False
    if t in _SAME:
        return bool(a == b)
    if t is float:
        return bool(a.hex() == b.hex())
    if t is ast.Literal:
        return (a.value is UNDEFINED and b.value is UNDEFINED) or (a.value is ERROR and b.value is ERROR)
    return False


def token(value: Any) -> Hashable:
    """A hashable form of a stored form, equal for two that :func:`same_value` holds alike
    (a node stands for itself: keep it alive while the token is kept)."""
    t = type(value)
    if t is float:
        return (float, value.hex())
    if t in _SAME:
        return (t, value)
    if t is ast.Literal and (value.value is UNDEFINED or value.value is ERROR):
        return (ast.Literal, id(value.value))
    return ("node", id(value))


# What :func:`shape_token` gives every plain literal value.
_LITERAL = ("literal",)


def shape_token(value: Any) -> Hashable:
    """A token that tells apart only what an analysis of the expressions a request holds
    can see (:mod:`.draws`): no attribute (None), a literal of any value (one token: a
    literal reads and calls nothing), or an expression (itself, as in :func:`token`)."""
    if value is None:
        return None
    t = type(value)
    if t in _SAME or t is float or t is ast.Literal:
        return _LITERAL
    return ("node", id(value))


# How many sets of names one key of :class:`ByReads` keeps results for.
_SHAPES = 32


class ByReads:
    """Results computed from a request, found again for a request that gives the same
    values to every name the computation read of it (one cycle's: the rest of what the
    computation read does not change within the cycle).  ``alike`` is the :func:`token`
    of a value, or a coarser one for a computation that cannot tell some values apart
    (see :func:`shape_token`)."""

    def __init__(self, alike: Callable[[Any], Hashable] = token) -> None:
        self._shapes: dict[Hashable, list[tuple[str, ...]]] = {}
        self._results: dict[tuple, tuple[tuple, Any]] = {}
        self._token = alike

    def get(self, key: Hashable, req: Any) -> tuple[bool, Any]:
        """``(True, result)`` for a request that gives the same values as one stored under
        ``key``, else ``(False, None)``.  The names compared are read through ``req``, so
        a log of its reads sees them."""
        shapes = self._shapes.get(key)
        if shapes is None:
            return False, None
        plain, alike, results = req.plain, self._token, self._results
        for names in shapes:
            hit = results.get((key, names, tuple([alike(plain(n)) for n in names])))
            if hit is not None:
                return True, hit[1]
        return False, None

    def put(self, key: Hashable, req: Any, read: list[str], result: Any) -> bool:
        """Keep ``result``, computed from ``req`` reading the names ``read`` (False when
        ``key`` has too many sets of names already, and nothing is kept)."""
        names = tuple(dict.fromkeys(read))
        shapes = self._shapes.setdefault(key, [])
        if names not in shapes:
            if len(shapes) >= _SHAPES:
                return False
            shapes.append(names)
        values = tuple(stored_form(req, n) for n in names)
        self._results[(key, names, tuple(map(self._token, values)))] = (values, result)
        return True


def snapshot(req: Any, names: list[str]) -> tuple[tuple[str, Any], ...]:
    """``(name, value)`` for each distinct name of ``names`` (the reads of a build);
    ``req`` a request or its :class:`RequestForms`."""
    if type(req) is RequestForms:
        form = req.form
        return tuple((n, form(n)) for n in dict.fromkeys(names))
    return tuple((n, stored_form(req, n)) for n in dict.fromkeys(names))


class RequestForms:
    """A request as the lookups of one build read it: each attribute's stored form
    (:func:`stored_form`) found once -- nothing changes the request while its list is
    built -- and each read logged as the request logs it (:meth:`plain`), so that the
    dozen names a build's ~30 lookups compare are each read once."""

    __slots__ = ("req", "_forms")

    def __init__(self, req: Any) -> None:
        self.req = req
        self._forms: dict[str, Any] = {}

    def plain(self, lname: str) -> Any:
        """The request's ``plain(lname)``, the name added to the request's log as it adds it."""
        forms = self._forms
        if lname in forms:
            reads = self.req.reads
            if reads is not None:
                reads.append(lname)
            return forms[lname]
        value = forms[lname] = self.req.plain(lname)
        return value

    def form(self, lname: str) -> Any:
        """:func:`stored_form` of ``lname`` (not logged)."""
        forms = self._forms
        if lname in forms:
            return forms[lname]
        value = forms[lname] = stored_form(self.req, lname)
        return value


@dataclass
class FoundBuilds:
    """The stored builds over one cycle's slot table, by (autocluster, submitter, only-Rank)."""

    budget: int = BUDGET
    size: int = 0
    hits: int = 0
    _by: OrderedDict = field(default_factory=OrderedDict)

    def find(self, key: Hashable, req: Any) -> Optional[Found]:
        """The build stored under ``key`` when ``req`` gives the values it read."""
        kept = self._by.get(key)
        if kept is None:
            return None
        found: Found = kept[0]
        if type(req) is RequestForms:
            plain = req.form
        else:
            plain = req.plain if req.reads is None else lambda lname: stored_form(req, lname)
        for lname, value in found.reads:
            if not same_value(plain(lname), value):
                return None
        self._by.move_to_end(key)
        self.hits += 1
        return found.laid_out()

    def drop(self, key: Hashable) -> None:
        """Forget what is stored under ``key``."""
        kept = self._by.pop(key, None)
        if kept is not None:
            self.size -= kept[1]

    def store(self, key: Hashable, found: Found) -> None:
        """Keep ``found`` under ``key`` (replacing what was there), within the budget (its
        size counted as stored: laid out, it holds at most a few times more)."""
        self.drop(key)
        size = found.nbytes
        if size > self.budget:
            return
        self._by[key] = (found, size)
        self.size += size
        while self.size > self.budget:
            _, (_, dropped) = self._by.popitem(last=False)
            self.size -= dropped


__all__ = [
    "BUDGET",
    "ByReads",
    "Found",
    "FoundBuilds",
    "RequestForms",
    "same_value",
    "shape_token",
    "snapshot",
    "stored_form",
    "token",
]
