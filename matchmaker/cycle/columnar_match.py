"""The candidate list of one request computed over all slots at once (``MATCHMAKER_COLUMNAR``).

:meth:`matchmaker.cycle.matching.Matcher.build` hands its work here when the knob is
on.  The slots of the cycle become an :class:`~classad.columnar.AdTable` (built
once per cycle: the annotated slot copies do not change during a cycle; in a
simulation carried from the last cycle, :mod:`.table_carry`), and for
each request the job's Requirements and Rank, the slots' Requirements, Rank and
CurrentRank and the PREEMPTION_* / NEGOTIATOR_*_JOB_RANK knobs are evaluated as
columns with the request as the fixed ad.  The filtering of candidate slots (docs/negotiation.md: slot states,
submitter limits, PREEMPTION_REQUIREMENTS) runs on arrays and the candidates are
ordered on the same key as the scalar path, as far as the negotiator reads them: the
first few are found with ``numpy.partition`` and sorted, the whole list only when one
past them is asked for (a request usually takes one of thousands of candidates); the
candidate objects are only made when the negotiator asks for them.

A row dropped anyway need not be tested: an only-Rank build (the submitter past its
limit) finds the claimed slots whose Rank beats their CurrentRank first and tests both
Requirements on those alone.  Nor need a row be picked: while most slots are still
available, a full build evaluates both Requirements over every row and keeps the
available rows where both are true.  Evaluating on fewer or more rows, or in another
order, is exact only while nothing evaluated draws random numbers (:mod:`.draws`);
otherwise the build takes its stages in order over the available rows.

Everything is evaluated when the list is built, as the scalar path does, so
values that change during the cycle (``ResourcesInUseBy*``, the request's
ephemeral attributes) are read at the same moment.  A build whose ranks contain
NaN (where Python's sort and ``lexsort`` disagree) is left to the scalar path.
"""

from __future__ import annotations

import math
from functools import partial
from itertools import repeat
from operator import attrgetter
from typing import Any, Callable, Hashable, Optional, Protocol, Sequence, TypeVar

import numpy as np

from classad import ast
from classad.columnar import (
    AdTable,
    attribute_true,
    evaluate_attribute,
    evaluate_column,
    expression_true,
    knob_rank_single,
    rank_array,
)
from classad.columnar.column import K_ERROR, K_OTHER, Column
from classad.columnar.compile import SPECIAL_NAMES
from classad.columnar.table import HOLDS_EXPR, HOLDS_LITERAL, HOLDS_NOTHING
from classad.values import FLT_MAX

from ..config.settings import MatchPolicy
from ..pool.concurrency import ConcurrencyLimits, parse_limits
from .build_reuse import ByReads, Found, FoundBuilds, RequestForms, shape_token, snapshot, token
from .candidates import NO_PREEMPTION, PRIO_PREEMPTION, RANK_PREEMPTION, Budget, Candidate, CandidateList, permits
from .draws import DrawCheck
from .ephemeral import NegotiationAd
from .evaluator import (
    J_LIMITS,
    S_POST,
    S_PRANK,
    S_PRE,
    S_RANK,
    EachAlone,
    Evaluator,
    SlotClass,
    SlotEntry,
    is_true,
)
from .row_results import RowResults, at as rows_of, kept_form, nan_free
from .table_carry import TableLine

# The slot attributes a candidate-list build tests before the sort keys.
_ROW_TESTS = ("requirements", "rank", "currentrank")
# How many preemption tables :meth:`SlotTable.rank_rows` and :meth:`SlotTable.rank_only`
# keep what they made of at most (a cycle makes about one per submitter).
_RANK_ROWS = 64
# A slot rank over every row is evaluated only on the rows holding an expression when at
# most this share of the rows do (see SlotTable.rank_base).
_BASE_SHARE = 4
# Both Requirements are evaluated over every row when at least one row in this many is
# still available (see _RequestColumns.both_requirements_whole).
_WHOLE = 2
# What the slot table reads of each entry and of its slot record (its ad and name).
_FIELDS = attrgetter("index", "ad", "alive", "remote", "claimed_idle", "weight", "slot.ad", "slot.name")
# The job attributes a build evaluates against the slots (its ConcurrencyLimits aside,
# which are evaluated pair by pair on the candidates).
_JOB_TESTS = ("requirements", "rank")


class SlotTable:
    """The cycle's slots as columns, and which of them are still available."""

    _draws: Optional[DrawCheck] = None  # made on first use (see :meth:`may_draw`)
    _found: Optional[FoundBuilds] = None  # made on first use (see :attr:`found`)
    _drawing: Optional[ByReads] = None  # the answers of :meth:`may_draw` (made on first use)
    _results: Optional[RowResults] = None  # made on first use (see :attr:`results`)
    _heaviest: Optional[float] = None  # see :attr:`heaviest`
    _rank_rows: Optional[dict[int, tuple[Any, Any]]] = None  # see :meth:`rank_rows` (made on first use)
    _rank_tables: Optional[dict[int, tuple[Any, Any]]] = None  # see :meth:`rank_only` (made on first use)
    _rank_bases: Optional[dict[str, Any]] = None  # see :meth:`rank_base` (made on first use)
    _live: Optional[np.ndarray] = None  # see :meth:`live_rows` (made on first use, dropped by :meth:`sync`)
    _live_claimed: Optional[np.ndarray] = None  # likewise, the claimed ones

    def __init__(self, classes: Sequence[SlotClass], line: Optional[TableLine] = None) -> None:
        rows = None
        if type(classes) is EachAlone and not classes.made:
            entries = list(classes.entries)  # each its own class: the classes' entries in order
            rows = classes.rows
        else:
            entries = [e for c in classes for e in c.entries]
        n = len(entries)
        if rows is not None and rows.fresh:  # gathered as the entries were made (each alive)
            _, ads, remotes, idle, weight, sources, names = rows.fields()
            index = rows.index()
            alive: Optional[list] = None  # each alive
        else:  # what the table reads of each entry, in one pass (the entries lie all over memory)
            fields = map(list, zip(*map(_FIELDS, entries))) if n else ([] for _ in range(8))
            index_, ads, alive, remotes, idle, weight, sources, names = fields
            index = np.array(index_, dtype=np.int64)
        increasing = n < 2 or bool((index[1:] > index[:-1]).all())
        if not increasing:  # in slot order (usually so already)
            order = np.argsort(index, kind="stable").tolist()
            entries, index = [entries[i] for i in order], index[order]
            ads, remotes, idle, weight, sources, names = (
                [x[i] for i in order] for x in (ads, remotes, idle, weight, sources, names)
            )
            alive = None if alive is None else [alive[i] for i in order]
        self.entries: list[SlotEntry] = entries
        self.table = AdTable(ads) if line is None else line.table_of(ads, sources, names)
        # Each entry's row: found by its index when the indexes are distinct (they increase
        # along the rows), else by the entry's identity (made on first use).
        self._row_of: Optional[dict[int, int]] = None
        self._by_index = increasing or bool((index[1:] > index[:-1]).all())
        self.alive = np.ones(n, dtype=bool) if alive is None else np.array(alive, dtype=bool)
        self.claimed_idle = np.array(idle, dtype=bool)
        self.weight = np.array(weight, dtype=np.float64)
        self.index = index
        # Each remote user's code, in the order of their first slot.
        codes = {name: code for code, name in enumerate(u for u in dict.fromkeys(remotes) if u is not None)}
        self.remote = np.fromiter(map(codes.get, remotes, repeat(-1)), np.int64, n)
        self.claimed = self.remote >= 0  # (a remote user is coded from 0)
        self.remote_names = codes
        self.remote_eups: Optional[np.ndarray] = None
        self.handed_out: list[SlotEntry] = []  # candidates given to the negotiator since the last build

    def sync(self) -> None:
        """Mark the slots matched since the last build (only handed-out candidates can be)."""
        dead = [e for e in self.handed_out if not e.alive]
        self.handed_out.clear()
        if not dead:
            return
        self._live = self._live_claimed = None
        if self._by_index:
            self.alive[np.searchsorted(self.index, [e.index for e in dead])] = False
            return
        if self._row_of is None:
            self._row_of = dict(zip(map(id, self.entries), range(len(self.entries))))
        for e in dead:
            self.alive[self._row_of[id(e)]] = False

    def live_rows(self, claimed: bool = False) -> np.ndarray:
        """The rows of the slots still available (``claimed``: of those, the claimed ones),
        ascending: found once between two builds that saw a slot matched (:meth:`sync`).
        Not to be modified."""
        if claimed:
            if self._live_claimed is None:
                self._live_claimed = (self.alive & self.claimed).nonzero()[0]
            return self._live_claimed
        if self._live is None:
            self._live = self.alive.nonzero()[0]
        return self._live

    def may_draw(
        self,
        req: NegotiationAd,
        knobs: Sequence[Optional[ast.Node]] = (),
        job: Sequence[str] = ("requirements",),
        rows: Sequence[str] = _ROW_TESTS,
        forms: Optional[RequestForms] = None,
    ) -> bool:
        """Whether the slots' attributes ``rows`` (by default the slot Requirements, Rank
        and CurrentRank), the job's attributes ``job`` (its Requirements) or the knob
        expressions ``knobs`` could draw random numbers for ``req`` (:mod:`.draws`).  The
        answer depends on the request only through the names the analysis looks up in it:
        it is remembered for the cycle by what the analysis can tell apart of their values:
        whether each is there and, unless it is a literal (which reads and calls nothing),
        which expression it is (:func:`~.build_reuse.shape_token`).  ``forms``: the
        request as the build's lookups read it (:class:`~.build_reuse.RequestForms`)."""
        if self._draws is None:
            self._draws, self._drawing = DrawCheck(self.table), ByReads(shape_token)
        assert self._drawing is not None
        source: Any = req if forms is None else forms
        plain = source.plain
        key = (tuple(map(id, knobs)), tuple(job), tuple(rows), *(shape_token(plain(n)) for n in job))
        known, answer = self._drawing.get(key, source)
        if known:
            return bool(answer)
        outer, log = req.reads, list[str]()
        req.reads = log
        try:
            answer = self._draws.may_draw(req, rows, job, [k for k in knobs if k is not None])
        finally:
            req.reads = outer
        if outer is not None:
            outer.extend(log)
        self._drawing.put(key, req, log, answer)
        return bool(answer)

    @property
    def distinct(self) -> bool:
        """Whether the rows' slot indexes are all different (they then increase along the rows)."""
        return self._by_index

    @property
    def found(self) -> FoundBuilds:
        """The builds of this cycle stored for reuse (:mod:`.build_reuse`)."""
        if self._found is None:
            self._found = FoundBuilds()
        return self._found

    @property
    def heaviest(self) -> float:
        """The largest slot weight of the table (NaN when one is; -inf for no slots)."""
        if self._heaviest is None:
            self._heaviest = float(self.weight.max()) if len(self.weight) else -math.inf
        return self._heaviest

    @property
    def results(self) -> RowResults:
        """The arrays over every row kept for this cycle's builds (:mod:`.row_results`)."""
        if self._results is None:
            self._results = RowResults()
        return self._results

    def rank_only(self, full: tuple[Optional[np.ndarray], ...]) -> tuple[Optional[np.ndarray], ...]:
        """The preemption tables of an only-Rank build made of ``full``, a build's of the same
        request that may preempt by priority (:func:`_rank_only`): made once per tables of
        the cycle, so that :meth:`rank_rows` knows them again."""
        if self._rank_tables is None:
            self._rank_tables = {}
        return _once_per(self._rank_tables, full, lambda: _rank_only(full, self.claimed))

    def rank_rows(self, whole: tuple[Optional[np.ndarray], ...]) -> np.ndarray:
        """The claimed rows an only-Rank build's preemption tables ``whole`` keep (their Rank
        beats their CurrentRank) or find an error in (see :meth:`_RequestColumns.claimed_table`),
        available or not: made once per tables of the cycle."""
        if self._rank_rows is None:
            self._rank_rows = {}
        return _once_per(self._rank_rows, whole, lambda: np.nonzero(self.claimed & _either(whole[1], whole[3]))[0])

    def rank_base(self, attr: str) -> Optional[tuple[np.ndarray, ...]]:
        """For a slot rank ``attr`` (Rank or CurrentRank) over every row: the rows whose
        ``attr`` is an expression, and the rank and error arrays of the first request it
        was computed for (:meth:`keep_rank_base`), right for every request on the other
        rows (a literal or nothing, which read nothing of a request); None when not known
        yet, or when more than one row in :data:`_BASE_SHARE` holds an expression."""
        bases = self._rank_bases
        return None if bases is None else bases.get(attr)

    def keep_rank_base(self, attr: str, rank: np.ndarray, error: np.ndarray) -> None:
        """Keep :meth:`rank_base` of ``attr`` (once) from ``rank`` and ``error``, computed over every row."""
        if self._rank_bases is None:
            self._rank_bases = {}
        if attr in self._rank_bases:
            return
        col = self.table.column_unwatched(attr)
        at = np.flatnonzero((col.holds == HOLDS_EXPR) | (col.values.kind == K_OTHER))
        worth = _BASE_SHARE * len(at) <= len(rank)
        self._rank_bases[attr] = (at, rank.copy(), error.copy()) if worth else None

    def eups(self, eup_of: Any) -> np.ndarray:
        """The EUP of each claimed slot's current user (frozen for the cycle)."""
        if self.remote_eups is None:
            by_code = {code: float(eup_of(name)) for name, code in self.remote_names.items()}
            self.remote_eups = np.array([by_code.get(c, math.inf) for c in self.remote.tolist()])
        return self.remote_eups


class LazyCandidates:
    """The sorted candidates, made into :class:`~matchmaker.cycle.candidates.Candidate` objects on demand.

    The order is found as far as it is asked for: a negotiator takes the first few of
    thousands of candidates, so the first :data:`HEAD` are sorted alone
    (:func:`head_order`) and the whole list only when one past them is asked for."""

    def __init__(self, slots: SlotTable, rows: np.ndarray, states: np.ndarray, keys: list[np.ndarray]) -> None:
        self.slots, self.rows, self.states, self.keys = slots, rows, states, keys
        # The order keys (the first the most significant): the four rank keys and the state.
        self._by = [keys[0], keys[1], keys[2], -states, keys[3]]
        self._order = head_order(self._by, HEAD)
        self._made: dict[int, Any] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> Any:
        c = self._made.get(i)
        if c is None:
            if i >= len(self._order):
                self._order = candidate_order(self._by)
            p = int(self._order[i])
            r = int(self.rows[p])
            e = self.slots.entries[r]
            key = tuple(float(k[p]) for k in self.keys[:3]) + (
                -int(self.states[p]),
                float(self.keys[3][p]),
                int(self.slots.index[r]),
            )
            c = self._made[i] = Candidate(e, int(self.states[p]), key)
        self.slots.handed_out.append(c.entry)
        return c


# How many candidates are ordered before any is asked for.
HEAD = 32


class MatcherParts(Protocol):
    """What the columnar build reads of the cycle's :class:`~matchmaker.cycle.matching.Matcher`."""

    ev: Evaluator
    policy: MatchPolicy
    limits: ConcurrencyLimits
    eup_of: Callable[[str], float]
    columnar_slots: Optional[tuple[Sequence[SlotClass], SlotTable]]
    table_line: Optional[TableLine]


def _slots(matcher: MatcherParts, classes: Sequence[SlotClass]) -> SlotTable:
    cached = matcher.columnar_slots
    if cached is None or cached[0] is not classes:
        cached = matcher.columnar_slots = (classes, SlotTable(classes, matcher.table_line))
    return cached[1]


def table_of(matcher: MatcherParts, ads: Sequence[Any]) -> Optional[AdTable]:
    """The matcher's slot table if its rows are exactly ``ads`` (the same objects, in
    order), so that other evaluations over those slots share its columns and results."""
    cached = matcher.columnar_slots
    if cached is None:
        return None
    table = cached[1].table
    if table.n != len(ads) or any(a is not b for a, b in zip(table.ads, ads)):
        return None
    return table


def build(
    matcher: MatcherParts,
    req: NegotiationAd,
    autocluster: int,
    submitter: str,
    classes: Sequence[SlotClass],
    only_rank: bool,
    budget: Budget,
    static_limits: bool,
) -> Optional[CandidateList]:
    """The candidate list of ``req`` (as ``Matcher.build``), or None to let the scalar path do it.

    Five stages over the rows of the available slots: both Requirements, the preemption
    state of claimed slots, the submitter's limits, concurrency limits, and the sort key.
    The first two and the sort keys are what an earlier build of the cycle found, when
    one for the same autocluster read the same values of its request (:mod:`.build_reuse`)."""
    slots = _slots(matcher, classes)
    slots.sync()
    key = (autocluster, submitter, only_rank)
    forms = RequestForms(req)
    found = slots.found.find(key, forms)
    if found is not None:
        out = _RequestColumns(matcher, req, slots, CandidateList(autocluster, only_rank, []), forms).finish(
            found, key, budget, static_limits
        )
        if out is not _AFRESH:
            return out  # type: ignore[return-value]
    run = _RequestColumns(matcher, req, slots, CandidateList(autocluster, only_rank, []), forms)
    return run.first(key, submitter, only_rank, budget, static_limits)


# What :meth:`_RequestColumns.finish` answers when the list must be made afresh.
_AFRESH = object()
# Up to how many positions :func:`candidate_order` sorts on every key.
_SORT_ALL = 512


def candidate_order(keys: list[np.ndarray]) -> np.ndarray:
    """The positions sorted ascending by ``keys`` (the first the most significant), ties
    left in position order -- the slot list order, as the rows are ascending.  Keys that
    are the same on every row order nothing and are left out of the (stable) sort, unless
    there are few positions (up to :data:`_SORT_ALL`: sorting on them costs less than
    finding them)."""
    if keys and len(keys[0]) <= _SORT_ALL:
        return np.lexsort(keys[::-1])
    varying = [k for k in keys if len(k) > 1 and k.min() != k.max()]
    if not varying:
        return np.arange(len(keys[0]) if keys else 0)
    if len(varying) == 1:
        return np.argsort(varying[0], kind="stable")
    return np.lexsort(varying[::-1])


def head_order(keys: list[np.ndarray], k: int) -> np.ndarray:
    """At least the first ``k`` positions of :func:`candidate_order` (all of it when that is
    as cheap): the positions whose first varying key is at most the ``k``-th smallest
    value of it, which come before every other position, sorted."""
    n = len(keys[0]) if keys else 0
    if n <= 4 * k:
        return candidate_order(keys)
    # The keys before the first varying one order nothing; those after it are looked at
    # only on the positions it leaves.
    lead = next((i for i, key in enumerate(keys) if key.min() != key.max()), None)
    if lead is None:
        return np.arange(n)
    near = smallest_positions(keys[lead], k)
    if len(near) > n // 2:
        return candidate_order(keys[lead:])
    return near[candidate_order([key.take(near) for key in keys[lead:]])]


def smallest_positions(values: np.ndarray, k: int) -> np.ndarray:
    """The positions (ascending) of the values at most the ``k``-th smallest of ``values``
    (``np.partition(values, k - 1)[k - 1]``), found among the positions of the values at
    most a guess: a value of an evenly spaced sample, past about three times ``k``'s share
    of it.  When at least ``k`` values are at most the guess, the ``k`` smallest are all
    among them, and so are the positions wanted; else (ties, an unlucky sample) every
    value is partitioned."""
    n = len(values)
    if n > 32 * k:
        step = n // (8 * k)
        sample = np.sort(values[::step])
        guess = sample[min(len(sample) - 1, -(-3 * k * len(sample) // n))]
        at = (values <= guess).nonzero()[0]
        if len(at) >= k:
            below = values.take(at)
            return at.compress(below <= np.partition(below, k - 1)[k - 1])
    return (values <= np.partition(values, k - 1)[k - 1]).nonzero()[0]


class _RequestColumns:
    """One request's evaluations over the slot table, and the candidate list being filled."""

    def __init__(
        self,
        matcher: MatcherParts,
        req: NegotiationAd,
        slots: SlotTable,
        out: CandidateList,
        forms: Optional[RequestForms] = None,
    ) -> None:
        self.matcher, self.req, self.slots, self.out = matcher, req, slots, out
        # The request as the lookups of kept results read it (read once per name a build).
        self.forms = RequestForms(req) if forms is None else forms
        self.policy = matcher.policy
        self.table, self.state = slots.table, matcher.ev.state
        self.refused = _NO_ROWS  # the rows PREEMPTION_REQUIREMENTS refused
        self.log: list[str] = []  # the names the stages looked up in the request
        self.intact = True  # whether the log saw every lookup (and nothing read live usage)
        self.composing = False  # computing the preemption tests over every row (see :meth:`claimed_table`)
        self.marked = False  # whether the last :meth:`shared` result was taken of arrays marked free of NaN

    def knobs(self) -> tuple[Optional[ast.Node], ...]:
        """The knob expressions a build may evaluate over the slots."""
        pol = self.policy
        return (pol.preemption_requirements, pol.pre_job_rank, pol.post_job_rank, pol.preemption_rank)

    def recorded(self, stage: Callable[..., Any], *args: Any) -> Any:
        """``stage(*args)``, the names it looks up in the request added to :attr:`log`;
        :attr:`intact` cleared when something else took the request's log meanwhile or
        the stage called a function whose value changes within the cycle."""
        req, st = self.req, self.state
        saved = req.reads
        req.reads, st.volatile = self.log, False
        try:
            return stage(*args)
        finally:
            self.intact = self.intact and req.reads is self.log and not st.volatile
            req.reads = saved

    def candidates(self, submitter: str, only_rank: bool) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """The rows both Requirements and the preemption tests keep, their preemption states,
        and the rows whose slot Rank is an error (docs/negotiation.md, candidate slots)."""
        slots = self.slots
        if only_rank and not slots.may_draw(self.req, (), ("requirements",), _ROW_TESTS, self.forms):
            return self.rank_preemptions(submitter)
        rows = slots.live_rows(only_rank)
        if not only_rank and _WHOLE * len(rows) >= self.table.n and len(rows):
            if not slots.may_draw(self.req, (), ("requirements",), ("requirements",), self.forms):
                return self.preemption_whole(self.both_requirements_mask(), submitter)
        return self.preemption_states(self.both_requirements(rows), submitter, only_rank)

    def first(
        self, key: tuple, submitter: str, only_rank: bool, budget: Budget, static_limits: bool
    ) -> Optional[CandidateList]:
        """The list made stage after stage, each on the rows the last one left, as the
        scalar path evaluates them; what the stages found per row is kept for a later
        build of the cycle (:mod:`.build_reuse`) when none of them drew a random number or
        read a value that changes within the cycle."""
        st = self.state
        taint = st.taint
        rows, state, rank_errors = self.recorded(self.candidates, submitter, only_rank)
        if len(rows):
            at = self.within_submitter_limits(rows, state, budget)
            if not static_limits:
                ok = self.within_concurrency_limits(rows[at])
                if ok is not None:
                    at = at[ok]
            # The positions left, ascending and distinct: all of them when as many (mostly).
            left, left_state = (rows, state) if len(at) == len(rows) else (rows[at], state[at])
            keys, errors, marks = self.recorded(self.rank_keys, left, left_state)
        else:  # no candidate: no limit refuses one, and no key is computed
            at, keys, errors = _NO_ROWS, [np.zeros(0) for _ in range(4)], [np.zeros(0, dtype=bool) for _ in range(3)]
            marks = [True] * 4
            left, left_state = rows, state
        if self.intact and st.taint == taint:
            found = Found.known_at(rows, state, at, keys, errors, rank_errors, self.refused, marks)
            found.reads = snapshot(self.forms, self.log)
            self.slots.found.store(key, found)
        return self.listed(left, left_state, rank_errors, keys, errors, marks)

    def finish(self, found: Found, key: tuple, budget: Budget, static_limits: bool) -> Any:
        """The list of ``found``'s rows still available that the submitter's limits and the
        concurrency limits leave, with the flags a build over those rows sets; ``_AFRESH``
        (and ``found`` forgotten) when rows whose sort keys were never needed are now
        candidates and computing them could draw random numbers."""
        alive = self.slots.alive
        live = np.nonzero(alive[found.rows])[0]
        rows, state = found.rows[live], found.state[live]
        refused = found.refused  # positions, or a mask over every row
        self.out.no_preemption_req = bool((alive & refused).any() if refused.dtype == bool else alive[refused].any())
        at = live[self.within_submitter_limits(rows, state, budget)]
        missing = at[~found.known[at]]
        if len(missing) and not self.fill_keys(found, missing, key):
            return _AFRESH
        if not static_limits:
            ok = self.within_concurrency_limits(found.rows[at])
            if ok is not None:
                at = at[ok]
        keys, errors = [k[at] for k in found.keys], [e[at] for e in found.errors]
        rank_errors = found.rank_errors[alive[found.rank_errors]].tolist()
        return self.listed(found.rows[at], found.state[at], rank_errors, keys, errors, found.marks)

    def fill_keys(self, found: Found, missing: np.ndarray, key: tuple) -> bool:
        """The sort keys of ``found``'s positions ``missing`` computed for this request, and
        what that read of it added to ``found``'s reads (the request gives the first build's
        values to all the others); False when that could draw random numbers."""
        req, st, stored = self.req, self.state, self.slots.found
        if self.slots.may_draw(req, self.knobs(), _JOB_TESTS, _ROW_TESTS, self.forms):
            stored.drop(key)
            return False
        taint = st.taint
        keys, errors, marks = self.recorded(self.rank_keys, found.rows[missing], found.state[missing])
        found.put_keys(missing, keys, errors, marks)
        if not (self.intact and st.taint == taint):
            stored.drop(key)  # right for this request, not to be taken by another
        else:
            found.add_reads(snapshot(self.forms, self.log))
        return True

    def job_side(self, attr: str, at: np.ndarray) -> Column:
        return evaluate_attribute(
            self.table, attr, row_side="target", other=self.req, state=self.state, rows=at, shared=True
        )

    def slot_side(self, attr: str, at: np.ndarray) -> Column:
        return evaluate_attribute(self.table, attr, row_side="my", other=self.req, state=self.state, rows=at)

    def job_true(self, attr: str, at: np.ndarray) -> np.ndarray:
        """``true_mask(self.job_side(attr, at))``, without the column when a shared result holds it."""
        return attribute_true(
            self.table, attr, row_side="target", other=self.req, state=self.state, rows=at, shared=True
        )

    def slot_true(self, attr: str, at: np.ndarray) -> np.ndarray:
        """``true_mask(self.slot_side(attr, at))``, without the column when a shared result holds it."""
        return attribute_true(self.table, attr, row_side="my", other=self.req, state=self.state, rows=at)

    def knob(self, node: ast.Node, at: np.ndarray, shared: bool = True) -> Column:
        """A knob expression in the slots' scope on the rows ``at``; ``shared`` through the
        table's memo (computed over every row and kept by what it read of the request)."""
        return evaluate_column(
            node, self.table, row_side="my", other=self.req, state=self.state, rows=at, shared=shared
        )

    def slot_rank(self, attr: str, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The slots' ``attr`` (Rank or CurrentRank) on the rows ``at`` as a rank, and where
        it is an error."""

        rank, error = self.shared(
            ("slot", attr),
            at,
            partial(self.slot_rank_of, attr),
            lambda: self.slots.may_draw(self.req, (), (), (attr,), self.forms),
            nested=True,
        )
        return rank, error

    def knob_rank(self, node: ast.Node, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A knob rank (PRE/POST_JOB_RANK, PREEMPTION_RANK) on the rows ``at`` negated, as
        sorted, in single precision (which holds each of its values bit for bit: sorting
        them orders as their doubles would, and each is the same number), and where it is
        an error."""

        def compute(rows: np.ndarray) -> tuple[np.ndarray, ...]:
            col = self.knob(node, rows)
            return -knob_rank_single(col), col.kind == K_ERROR

        def whole() -> tuple[np.ndarray, ...]:  # the rank kept in single precision, made so
            return self.knob_rank_whole(node)

        rank, error = self.shared(
            ("knob", id(node)),
            at,
            compute,
            lambda: self.slots.may_draw(self.req, (node,), (), (), self.forms),
            whole=whole,
            widen=False,
        )
        return rank, error

    def knob_rank_whole(self, node: ast.Node) -> tuple[np.ndarray, np.ndarray]:
        """A knob rank over every row in single precision, negated, and where it is an error.  Once
        computed so in the cycle, only the rows whose value may depend on the request are
        evaluated again, the others taken from then (:func:`_request_split`): those where
        an attribute it names is an expression, and those lacking a name it names (looked up
        in the request) unless this request and the first hold the same literal under that
        name (or both lack it), which is read of the request as the evaluation would read
        it; computed afresh over every row when the knob's shape does not allow telling them
        apart.  (Kept per request in the table's memo instead, a knob reading the slots' Rank
        has one result per owner, each brought up to date from cycle to cycle over every
        changed row: more work than the rows that read the request.)"""
        bases = self.slots.results.bases
        base = bases.get(("knob", id(node)))
        if base is not None and base[0] is node and base[1] is not None:
            at, missing, rank, error = base[1:]
            plain, alone = self.forms.plain, self.req.parent is None  # else a name may come of its parent
            lacking = [rows for lname, form, rows in missing if not (alone and _same_literal(plain(lname), form))]
            if lacking:
                at = np.union1d(at, np.concatenate(lacking))
            rank, error = rank.copy(), error.copy()
            if len(at):
                col = self.knob(node, at, shared=False)
                rank[at], error[at] = -knob_rank_single(col), col.kind == K_ERROR
            return rank, error
        col = self.knob(node, self.table.all_rows)
        rank, error = -knob_rank_single(col), col.kind == K_ERROR
        if base is None or base[0] is not node:
            split = _request_split(node, self.table)
            if split is None:
                bases[("knob", id(node))] = (node, None)
            else:
                at, absent = split
                form = self.forms.form if self.req.parent is None else lambda _: _NEVER
                missing = tuple((lname, form(lname), rows) for lname, rows in absent)
                bases[("knob", id(node))] = (node, at, missing, rank.copy(), error.copy())
        return rank, error

    def knob_true(self, node: ast.Node, at: np.ndarray) -> np.ndarray:
        """Where a knob (PREEMPTION_REQUIREMENTS) is true on the rows ``at``.  Not through the
        table's memo: what it reads (the clock, the submitter's priority, the claims'
        priorities) differs from cycle to cycle, and within one the preemption tests that
        read it are kept per submitter (:meth:`claimed_whole`)."""
        return self.shared(
            ("true", id(node)),
            at,
            lambda rows: (self.knob_truth(node, rows),),
            lambda: self.slots.may_draw(self.req, (node,), (), (), self.forms),
        )[0]

    def knob_truth(self, node: ast.Node, at: np.ndarray) -> np.ndarray:
        """``true_mask(self.knob(node, at, shared=False))``, without the column where the
        knob is an ``&&`` chain (see :func:`~classad.columnar.expression_true`)."""
        return expression_true(node, self.table, row_side="my", other=self.req, state=self.state, rows=at)

    def job_rank(self, at: np.ndarray) -> np.ndarray:
        """The job's Rank on the rows ``at``, as a rank negated, as sorted (in single
        precision when kept so: see :func:`~.row_results.kept_form`)."""
        return self.shared(
            ("job", "rank"),
            at,
            lambda rows: (-rank_array(self.job_side("rank", rows)),),
            lambda: self.slots.may_draw(self.req, (), ("rank",), (), self.forms),
            widen=False,
        )[0]

    def shared(
        self,
        key: Hashable,
        at: np.ndarray,
        compute: Callable[[np.ndarray], tuple[np.ndarray, ...]],
        may_draw: Callable[[], bool],
        nested: bool = False,
        whole: Optional[Callable[[], tuple[np.ndarray, ...]]] = None,
        widen: bool = True,
    ) -> tuple[np.ndarray, ...]:
        """``compute(at)``: the rows ``at`` of what an earlier build of the cycle computed
        over every row for a request giving the same values to what it read, or computed
        so now and kept for later builds when that cannot draw random numbers
        (:mod:`.row_results`), else computed on ``at`` alone (so too while the preemption
        tests are computed over every row, what they make of it being kept instead --
        unless ``nested``: the slots' Rank and CurrentRank, which the preemption tests of
        every submitter read alike).  ``whole``: ``compute`` over every row made nearer
        its kept form (see :meth:`every_row`).  :attr:`marked` tells whether the arrays
        were taken of kept arrays that hold no NaN (:func:`~.row_results.nan_free`).
        ``widen``: False to take kept single-precision reals as they are (see
        :func:`~.row_results.at`)."""
        kept = self.slots.results
        arrays = kept.get(key, self.forms)
        if arrays is None and (nested or not self.composing) and kept.worth(key) and not may_draw():
            arrays = self.every_row(key, compute, whole)
        if arrays is None:
            self.marked = False
            return compute(at)
        self.marked = nan_free(arrays)
        return rows_of(arrays, at, widen)

    def every_row(
        self,
        key: Hashable,
        compute: Callable[[np.ndarray], tuple[np.ndarray, ...]],
        whole: Optional[Callable[[], tuple[np.ndarray, ...]]] = None,
    ) -> tuple[Optional[np.ndarray], ...]:
        """``compute`` over every row (in :func:`~.row_results.kept_form`), kept under ``key``
        with what it read of the request when it drew no random number and read no value
        that changes within the cycle; what it read added to the request's log.  ``whole``,
        when given, is called instead: it evaluates as ``compute`` does and makes the same
        arrays, or the same in the form they are kept in (a rank in single precision)."""
        req, st = self.req, self.state
        outer, log = req.reads, list[str]()
        volatile, taint = st.volatile, st.taint
        req.reads, st.volatile = log, False
        try:
            arrays = compute(self.table.all_rows) if whole is None else whole()
        finally:
            clean = req.reads is log and not st.volatile and st.taint == taint
            self.intact = self.intact and req.reads is log
            st.volatile = volatile or st.volatile
            req.reads = outer
            if outer is not None:
                outer.extend(log)
        out = kept_form(arrays)
        if clean:
            self.slots.results.put(key, req, log, out)
        return out

    def both_requirements(self, rows: np.ndarray) -> np.ndarray:
        """The rows whose slot both Requirements accept (the job's first, as the scalar path asks them).

        The rows are kept with ``compress``, which gives what a boolean index gives at
        less cost on masks of thousands of rows (a quarter less on a steady cycle's)."""
        if len(rows):
            rows = rows.compress(self.job_true("requirements", rows))
        if len(rows):
            rows = rows.compress(self.slot_true("requirements", rows))
        return rows

    def both_requirements_whole(self) -> np.ndarray:
        """:meth:`both_requirements` of the slots still available, each Requirements
        evaluated over every row and the three masks combined (no rows picked from any
        array, which costs more than evaluating the few rows not asked for): exact only
        when neither Requirements can draw a random number (see :meth:`candidates`)."""
        return self.both_requirements_mask().nonzero()[0]

    def both_requirements_mask(self) -> np.ndarray:
        """:meth:`both_requirements_whole` as a mask over every row (a new array)."""
        every = self.table.all_rows
        ok = self.job_true("requirements", every) & self.slot_true("requirements", every)
        ok &= self.slots.alive
        return ok

    def rank_preemptions(self, submitter: str) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """:meth:`preemption_states` of an only-Rank build, which keeps just the claimed
        slots whose Rank for the request is better than their CurrentRank: those are found
        first, and both Requirements then run on them and on the slots whose Rank is an
        error (reported when both Requirements hold, as :meth:`preemption_states` does)."""
        slots = self.slots
        claimed = slots.alive & slots.claimed
        if self.policy.skip_claimed_idle:
            claimed &= ~slots.claimed_idle
        rank_errors: list[int] = []
        rows = _NO_ROWS
        if claimed.any():
            whole = self.claimed_whole(submitter, True)
            if whole is None:
                rows = np.nonzero(claimed)[0]
                rank, error = self.slot_rank("rank", rows)
                better = rank > self.slot_rank("currentrank", rows)[0]
            else:  # only the claimed rows it keeps (their Rank is better) or whose Rank is an error
                rows = slots.rank_rows(whole)
                rows = rows[claimed[rows]]
                better, error = rows_of((whole[1], whole[3]), rows)
            look = np.nonzero(better | error)[0]
            if len(look):
                passed = look[np.isin(rows[look], self.both_requirements(rows[look]))]
                rank_errors = rows[passed[error[passed]]].tolist()
                rows = rows[passed[better[passed]]]
            else:
                rows = _NO_ROWS
        return rows, np.full(len(rows), RANK_PREEMPTION, dtype=np.int8), rank_errors

    def preemption_states(
        self, rows: np.ndarray, submitter: str, only_rank: bool
    ) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """The rows the preemption tests keep, their preemption states, and the rows whose
        slot Rank is an error (docs/negotiation.md, candidate slots)."""
        slots = self.slots
        claimed = slots.claimed.take(rows)
        if self.policy.skip_claimed_idle:
            keep = ~(claimed & slots.claimed_idle[rows])
            rows, claimed = rows[keep], claimed[keep]
        if not claimed.any():
            return rows, np.full(len(rows), NO_PREEMPTION, dtype=np.int8), []
        whole = self.claimed_whole(submitter, only_rank)
        if whole is None:
            return self.claimed_rows_states(rows, claimed, submitter, only_rank)
        # Picked with take and compress (half the cost of indexing with a mask here).
        states, kept, refusals, errors = whole
        if refusals is not None:
            self.note_refused(rows.compress(refusals.take(rows)))
        rank_errors = rows.compress(errors.take(rows)).tolist() if errors is not None else []
        rows = rows.compress(kept.take(rows)) if kept is not None else _NO_ROWS
        return rows, states.take(rows), rank_errors  # type: ignore[union-attr]

    def preemption_whole(self, ok: np.ndarray, submitter: str) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """:meth:`preemption_states` of a full build's rows ``ok`` marks (a mask over every
        row, its own: written into), the tables over every row (:meth:`claimed_whole`)
        combined with it element by element rather than picked at each row (a steady 10k
        build keeps ~10,000 of ~18,000 rows: a gather of each table at those costs more)."""
        slots = self.slots
        if self.policy.skip_claimed_idle:
            ok &= ~(slots.claimed & slots.claimed_idle)
        if not (ok & slots.claimed).any():
            rows = ok.nonzero()[0]
            return rows, np.full(len(rows), NO_PREEMPTION, dtype=np.int8), []
        whole = self.claimed_whole(submitter, False)
        if whole is None:
            rows = ok.nonzero()[0]
            return self.claimed_rows_states(rows, slots.claimed.take(rows), submitter, False)
        states, kept, refusals, errors = whole
        if refusals is not None:  # kept as a mask (its positions cost ~10x more to find)
            self.note_refused(ok & refusals, refusals_mask=True)
        rank_errors = (ok & errors).nonzero()[0].tolist() if errors is not None else []
        if kept is None:
            return _NO_ROWS, states.take(_NO_ROWS), rank_errors  # type: ignore[union-attr]
        ok &= kept
        rows = ok.nonzero()[0]
        return rows, states.take(rows), rank_errors  # type: ignore[union-attr]

    def claimed_rows_states(
        self, rows: np.ndarray, claimed: np.ndarray, submitter: str, only_rank: bool
    ) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """:meth:`preemption_states` of ``rows`` (``claimed``: which of them are claimed)
        when the preemption tables cannot be made over every row: the tests evaluated on
        the claimed rows alone."""
        cpos = np.nonzero(claimed)[0]
        crow = rows[cpos]
        cstate, ckeep, refused, error = self.claimed_rows_table(crow, submitter, only_rank)
        state = np.full(len(rows), NO_PREEMPTION, dtype=np.int8)
        keep = np.ones(len(rows), dtype=bool)
        state[cpos], keep[cpos] = cstate, ckeep
        self.note_refused(crow[refused])
        return rows[keep], state[keep], crow[error].tolist()

    def note_refused(self, refused: np.ndarray, refusals_mask: bool = False) -> None:
        """Note the rows PREEMPTION_REQUIREMENTS refused (if any: the list's flag is set):
        their positions, or with ``refusals_mask`` a mask over every row."""
        if refused.any() if refusals_mask else len(refused):
            self.out.no_preemption_req = True
            self.refused = refused

    def claimed_whole(self, submitter: str, only_rank: bool) -> Optional[tuple[Optional[np.ndarray], ...]]:
        """:meth:`claimed_table` for this request, submitter and mode, found in or kept for
        the cycle (:mod:`.row_results`; an only-Rank build's does not depend on the
        submitter, and is also made of the submitter's other table for the request, see
        :func:`_rank_only`); None when computing it over every row could draw random numbers."""
        key = ("claimed", "" if only_rank else submitter, only_rank)
        kept = self.slots.results
        arrays = kept.get(key, self.forms)
        if arrays is not None:
            return arrays
        if only_rank:
            full = kept.get(("claimed", submitter, False), self.forms)
            if full is not None:
                return self.slots.rank_only(full)
        prereq = None if only_rank else self.policy.preemption_requirements
        if not kept.worth(key) or self.slots.may_draw(self.req, (prereq,), (), ("rank", "currentrank"), self.forms):
            return None
        return self.every_row(key, lambda rows: self.claimed_table(rows, submitter, only_rank))

    def claimed_table(self, rows: np.ndarray, submitter: str, only_rank: bool) -> tuple[np.ndarray, ...]:
        """Over every row (``rows``): the preemption state, whether the slot stays a
        candidate, whether PREEMPTION_REQUIREMENTS refused it and whether its Rank is an
        error (:meth:`claimed_masks` of the claimed rows; the others are kept, without
        preemption)."""
        n = len(rows)
        claimed = self.slots.claimed[rows]
        if not claimed.any():
            none = np.zeros(n, dtype=bool)
            return np.full(n, NO_PREEMPTION, dtype=np.int8), ~none, none, none
        self.composing = True
        try:
            return self.claimed_masks(rows, self.rank_masks(rows, claimed), submitter, only_rank)
        finally:
            self.composing = False

    def claimed_rows_table(self, crow: np.ndarray, submitter: str, only_rank: bool) -> tuple[np.ndarray, ...]:
        """:meth:`claimed_table` on the claimed rows ``crow`` alone (when it cannot be made
        over every row): the same tests, evaluated on those rows only."""
        return self.claimed_masks(crow, self.rank_masks(crow, np.ones(len(crow), dtype=bool)), submitter, only_rank)

    def rank_masks(self, rows: np.ndarray, claimed: np.ndarray) -> tuple[np.ndarray, ...]:
        """Of ``rows`` (where ``claimed`` holds the claimed ones): the claimed rows whose
        Rank beats their CurrentRank, the other claimed rows, the rows whose Rank is at
        least their CurrentRank and the claimed rows whose Rank is an error -- what the
        preemption tests find of the slots' ranks, the same for every submitter.  The
        ranks are found as :meth:`slot_rank` finds them (kept for the cycle, computed over
        every row and kept) or else computed on ``rows`` here (over every row, that costs
        less than picking the claimed rows of each column; nothing they evaluate draws
        there: see :meth:`claimed_whole`; what they read of the request is logged); the
        masks over every row are made once per pair of kept ranks."""
        kept, n = self.slots.results, len(rows)
        whole = rows is self.table.all_rows
        found: list[tuple[Optional[np.ndarray], ...]] = []
        fresh = False  # whether a rank was computed here (not kept)
        for attr in ("rank", "currentrank"):
            key = ("slot", attr)
            arrays = kept.get(key, self.forms)
            if arrays is None and kept.worth(key) and not self.slots.may_draw(self.req, (), (), (attr,), self.forms):
                arrays = self.every_row(key, partial(self.slot_rank_of, attr))
            if arrays is None:  # only the claimed rows' ranks are read of it
                fresh, arrays = True, self.slot_rank_of(attr, rows, claimed if whole else None)
            elif not whole:
                arrays = rows_of(arrays, rows)
            found.append(arrays)
        (rank, error), (current, _) = found
        assert rank is not None and current is not None

        def make() -> tuple[np.ndarray, ...]:
            better = claimed & (rank > current)
            errors = claimed & error if error is not None else np.zeros(n, dtype=bool)
            return better, claimed & ~better, rank >= current, errors

        return kept.derived((*found, rows, self.slots.claimed), make) if whole and not fresh else make()

    def slot_rank_of(self, attr: str, rows: np.ndarray, among: Optional[np.ndarray] = None) -> tuple[np.ndarray, ...]:
        """The slots' ``attr`` (Rank or CurrentRank) on ``rows`` as a rank, and where it is
        an error.  Over every row, once it was computed so in the cycle, only the rows
        holding an expression are evaluated, the others taken from then
        (:meth:`SlotTable.rank_base`: a literal reads nothing and draws nothing); with
        ``among`` (a mask over every row), only those of them it marks, the others left
        as the base holds them (for a caller that reads no other row, and only when
        nothing there can draw: see :meth:`rank_masks`)."""
        slots = self.slots
        every = rows is self.table.all_rows
        if every:
            base = slots.rank_base(attr)
            if base is not None:
                at, rank, error = base
                if among is not None:
                    at = at.compress(among.take(at))
                col = self.slot_side(attr, at)
                rank, error = rank.copy(), error.copy()
                rank[at], error[at] = rank_array(col), col.kind == K_ERROR
                return rank, error
        col = self.slot_side(attr, rows)
        rank, error = rank_array(col), col.kind == K_ERROR
        if every:
            slots.keep_rank_base(attr, rank, error)
        return rank, error

    def claimed_masks(
        self, rows: np.ndarray, ranks: tuple[np.ndarray, ...], submitter: str, only_rank: bool
    ) -> tuple[np.ndarray, ...]:
        """:meth:`claimed_table` made of :meth:`rank_masks` with a few operations over every
        row (or of the rows ``rows``): the preemption tests in the scalar build's order
        (machine Rank; then the submitter's own claims, a better EUP,
        PREEMPTION_REQUIREMENTS evaluated on the rows still left, a Rank not below the
        CurrentRank)."""
        slots, pol = self.slots, self.policy
        better, claimed_rest, same, error = ranks
        whole = rows is self.table.all_rows
        n = len(rows)
        rest = claimed_rest  # the claimed rows not preempted by Rank that the tests still keep
        refused = np.zeros(n, dtype=bool)
        if only_rank:
            rest = refused
        else:
            own = slots.remote_names.get(submitter)
            if own is not None:
                rest = rest & ((slots.remote if whole else slots.remote[rows]) != own)
        if pol.preemption_needs_better_eup and rest.any():
            eup_of = self.matcher.eup_of
            rest = rest & (eup_of(submitter) < slots.eups(eup_of)[rows])
        prereq = pol.preemption_requirements
        if prereq is not None and rest.any():
            if type(prereq) is ast.Literal:
                passed = np.full(n, is_true(prereq.value))
            else:  # on the rows left alone (over every row costs more)
                passed = np.zeros(n, dtype=bool)
                at = np.nonzero(rest)[0]
                passed[at] = self.knob_true(prereq, rows[at])
            refused = rest & ~passed
            rest = rest & passed
        prio = rest & same
        # The states as a sum: ``better`` and ``prio`` never share a row (``rest`` is
        # within ``claimed_rest``), cheaper than writing each mask's rows.
        state = NO_PREEMPTION - (NO_PREEMPTION - RANK_PREEMPTION) * better.view(np.int8)
        state -= (NO_PREEMPTION - PRIO_PREEMPTION) * prio.view(np.int8)
        return state, ~claimed_rest | prio, refused, error

    def within_submitter_limits(self, rows: np.ndarray, state: np.ndarray, budget: Budget) -> np.ndarray:
        """The positions of ``rows`` the submitter's limits leave (RANK preemption is not
        limited): all of them when both limits permit the heaviest slot of the table (a
        sum rounds monotonically, so they permit every lighter one)."""
        heaviest = self.slots.heaviest
        if permits(budget.used, budget.lim, heaviest) and permits(
            budget.used_unclaimed, budget.lim_unclaimed, heaviest
        ):
            return np.arange(len(rows))
        w = self.slots.weight[rows]
        prio_ok = (budget.used + w <= budget.lim) | (budget.used <= 0 and budget.lim > 0)
        free_ok = (budget.used_unclaimed + w <= budget.lim_unclaimed) | (
            budget.used_unclaimed <= 0 and budget.lim_unclaimed > 0
        )
        limited = ((state == PRIO_PREEMPTION) & ~prio_ok) | ((state == NO_PREEMPTION) & ~free_ok)
        if limited.any():
            self.out.limited = True
        return np.nonzero(~limited)[0]

    def within_concurrency_limits(self, rows: np.ndarray) -> Optional[np.ndarray]:
        """Which of ``rows`` leave the request's concurrency limits room (a limit that reads
        the slot is evaluated per slot); None when the request names no limits."""
        if self.req.get_node("concurrencylimits") is None or not len(rows):
            return None
        ok = np.ones(len(rows), dtype=bool)
        ev = self.matcher.ev
        ev.use_request(self.req)
        for p, r in enumerate(rows.tolist()):
            v = ev.value(self.slots.entries[r], J_LIMITS)
            full = self.matcher.limits.exhausted(parse_limits(v)) if type(v) is str else []
            if full:
                self.out.concurrency.extend(full)
                ok[p] = False
        return ok

    def rank_keys(self, rows: np.ndarray, state: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray], list[bool]]:
        """The four rank keys of docs/negotiation.md (candidate slots) of ``rows``, negated
        for an ascending sort, where PRE_JOB_RANK, POST_JOB_RANK and PREEMPTION_RANK are an
        error, and which keys are known to hold no NaN (constants, or taken of kept arrays
        marked so: see :meth:`shared`).  The knob ranks' keys are in single precision (see
        :meth:`knob_rank`), the job's Rank's in single precision when kept so."""
        pol, n = self.policy, len(rows)
        keys: list[np.ndarray] = []
        errors: list[np.ndarray] = []
        marks: list[bool] = []
        for node in (pol.pre_job_rank, pol.post_job_rank):
            if node is None or n == 0:
                keys.append(np.full(n, math.inf))
                errors.append(np.zeros(n, dtype=bool))
                marks.append(True)
            else:
                rank, error = self.knob_rank(node, rows)
                keys.append(rank)
                errors.append(error)
                marks.append(self.marked)
        if pol.ignore_job_ranks or n == 0:
            job_key, job_marked = -np.zeros(n), True
        else:
            job_key = self.job_rank(rows)
            job_marked = self.marked
        perr = np.zeros(n, dtype=bool)
        preempting = np.nonzero(state != NO_PREEMPTION)[0]
        prank_marked = True
        if not len(preempting):
            prank = np.full(n, FLT_MAX)
        elif pol.preemption_rank is None:
            prank = np.full(n, FLT_MAX)
            prank[preempting] = math.inf
        else:
            prank = np.full(n, FLT_MAX, dtype=np.float32)  # FLT_MAX: a single-precision number
            prank[preempting], perr[preempting] = self.knob_rank(pol.preemption_rank, rows[preempting])
            prank_marked = self.marked
        marks = [marks[0], job_marked, marks[1], prank_marked]
        return [keys[0], job_key, keys[1], prank], [errors[0], errors[1], perr], marks

    def listed(
        self,
        rows: np.ndarray,
        state: np.ndarray,
        rank_errors: list[int],
        keys: list[np.ndarray],
        errors: list,
        marks: Sequence[bool],
    ) -> Optional[CandidateList]:
        """The candidate list of ``rows`` ordered on ``keys``; None when a key is NaN (the
        scalar path orders those; ``marks``: the keys known to hold none, not looked at).
        The errors met are reported by the scalar evaluator, so that the same slots are
        named (it reports an error once per distinct set of values read): the slots whose
        Rank is an error, then the knob ranks' errors (``errors``)."""
        for k, marked in zip(keys, marks):
            if not marked and len(k) and np.isnan(k.min()):  # the minimum is NaN when any value is
                return None
        warn: list[tuple[int, int]] = [(r, S_RANK) for r in rank_errors]
        for kind, err in zip((S_PRE, S_POST, S_PRANK), errors):
            if err.any():
                warn.extend((r, kind) for r in rows[err].tolist())
        ev, entries = self.matcher.ev, self.slots.entries
        for r, kind in warn:
            e = entries[r]
            if kind == S_RANK:
                e = next((x for x in e.cls.entries if x.alive), e) if e.cls is not None else e
            ev.value(e, kind)
        self.out.items = LazyCandidates(self.slots, rows, state, keys)  # type: ignore[assignment]
        return self.out


_NO_ROWS = np.zeros(0, dtype=np.int64)


def _rank_only(full: tuple[Optional[np.ndarray], ...], claimed: np.ndarray) -> tuple[Optional[np.ndarray], ...]:
    """The preemption tables of an only-Rank build (:meth:`_RequestColumns.claimed_table`), made
    of those of a build of the same request that may preempt by priority: the claimed rows
    it preempts by Rank are those whose Rank beats their CurrentRank, the only ones an
    only-Rank build keeps; no row is refused, and the rows whose Rank is an error are the same."""
    better = full[0] == RANK_PREEMPTION  # type: ignore[operator]
    state = np.where(better, RANK_PREEMPTION, NO_PREEMPTION).astype(np.int8)
    return state, ~claimed | better, None, full[3]


def _request_rows(node: Any, table: AdTable) -> Optional[np.ndarray]:
    """The rows (ascending) on which ``node``, evaluated in the rows' scope, may read the
    request: those where an attribute it names (unscoped or ``MY.x``) is an expression, a
    list or ad, or missing (then looked up in the request).  On the other rows it is made of
    the row's literal values alone, the same for every request, and draws nothing.  None
    when ``node`` holds anything but literals, such names, operators and conditionals (a
    function call, ``TARGET.x``, a special name)."""
    split = _request_split(node, table)
    if split is None:
        return None
    at, lacking = split
    return np.union1d(at, np.concatenate([rows for _, rows in lacking])) if lacking else at


def _request_split(node: Any, table: AdTable) -> Optional[tuple[np.ndarray, tuple[tuple[str, np.ndarray], ...]]]:
    """:func:`_request_rows` in two parts: the rows where an attribute ``node`` names is an
    expression, a list or an ad (which may read anything of the request), and for each
    name it names, the further rows that lack it: on those it reads the request's value of
    that name alone (a literal there is the value, the same for every request holding it;
    an expression may read more), and else only what the row holds.  None as there."""
    missing: dict[str, np.ndarray] = {}
    free = _request_free(node, table, missing)
    if free is None:
        return None
    at = _NO_ROWS if free is True else np.flatnonzero(~free)
    lacking = []
    for lname, absent in missing.items():
        rows = np.flatnonzero(absent if free is True else absent & free)
        if len(rows):
            lacking.append((lname, rows))
    return at, tuple(lacking)


# A stored form no other is the same literal as (see :func:`_same_literal`).
_NEVER = object()


def _same_literal(a: Any, b: Any) -> bool:
    """Whether two stored forms of a request's attribute (:func:`~.build_reuse.stored_form`)
    are both absent, or the same literal (a node, even the same one, may read more of the
    request: never the same)."""
    if a is None or b is None:
        return a is None and b is None
    ta, tb = token(a), token(b)
    return ta[0] != "node" and ta == tb  # type: ignore[index]


def _request_free(node: Any, table: AdTable, missing: dict[str, np.ndarray]) -> Any:
    """:func:`_request_split`'s work: True (every row), a mask of the rows on which ``node``
    reads nothing of the request but what rows lacking a name read of it (those gathered
    in ``missing`` by name), or None (not known)."""
    t = type(node)
    if t is ast.Literal:
        return True
    if t is ast.Select:
        base = node.base
        if type(base) is not ast.AttrRef or base.absolute or base.lname != "my":
            return None
        if not bool((table.column_unwatched("my").holds == HOLDS_NOTHING).all()):
            return None  # a row's own attribute named MY
        lname = node.lname
    elif t is ast.AttrRef:
        if node.absolute:
            return None
        lname = node.lname
    else:
        kids: Any
        if t is ast.Binary or t is ast.Elvis:
            kids = (node.left, node.right)
        elif t is ast.Unary:
            kids = (node.operand,)
        elif t is ast.Paren:
            kids = (node.inner,)
        elif t is ast.Conditional:
            kids = (node.cond, node.then, node.other)
        else:
            return None
        free: Any = True
        for kid in kids:
            got = _request_free(kid, table, missing)
            if got is None:
                return None
            if got is not True:
                free = got if free is True else free & got
        return free
    if lname in SPECIAL_NAMES:
        return None
    col = table.column_unwatched(lname)
    holds = col.holds
    absent = holds == HOLDS_NOTHING
    if absent.any():
        missing[lname] = absent
    return ((holds == HOLDS_LITERAL) & (col.values.kind != K_OTHER)) | absent


def _either(a: Optional[np.ndarray], b: Optional[np.ndarray]) -> Any:
    """``a | b`` of two masks in :func:`~.row_results.kept_form` (None: no row set)."""
    if a is None or b is None:
        return False if a is None and b is None else a if b is None else b
    return a | b


__all__ = [
    "HEAD",
    "LazyCandidates",
    "MatcherParts",
    "SlotTable",
    "build",
    "candidate_order",
    "head_order",
    "smallest_positions",
    "table_of",
]


_Made = TypeVar("_Made")


def _once_per(known: dict[int, tuple[Any, Any]], key: Any, make: Callable[[], _Made]) -> _Made:
    """``make()`` made once per object ``key`` (held in ``known`` by identity, with ``key``
    itself so that its id is not reused; ``known`` emptied at ``_RANK_ROWS`` entries)."""
    hit = known.get(id(key))
    if hit is not None and hit[0] is key:
        return hit[1]  # type: ignore[no-any-return]
    if len(known) >= _RANK_ROWS:
        known.clear()
    made = make()
    known[id(key)] = (key, made)
    return made
