"""Attribute values shared between evaluations over one table, keyed by what they read.

A matchmaker evaluates the same slot expressions (``Requirements``, ``Rank``...)
over the same table once per request.  The value of a row attribute depends on
the rows and on the few things it reads of the fixed ad (``TARGET.Owner``,
``TARGET.RequestMemory``...): evaluation is deterministic, so two requests that
agree on every value read give the same column.  A :class:`Reads` records those
values while an attribute is evaluated; :class:`SharedMemo` keeps the resulting
column under them and hands it to later evaluations whose fixed ad gives the
same values.

A read is a key (which attribute of the fixed ad, or the clock) and a token of
its value (the type and exact value, so ``1``, ``1.0`` and ``true`` differ).
Anything the walk cannot account for -- a scalar fallback, a value that is a list
or an ad, a fixed-side value that differs per row -- makes the evaluation
unshareable.  Results are computed and kept for every row of the table, whichever
rows were asked for, so that any later subset can be served.  They are kept packed
(:class:`~classad.columnar.column.Packed`: a boolean column costs a bit per row).
Memory is bounded: past a byte budget the least recently used columns are dropped,
each attribute keeping at most a quarter of the budget.

Each result also remembers the generation of the table it was computed over and the row
attributes it read (:mod:`classad.columnar.generations`), so that a table carried to its
successor keeps its results and computes again only the rows where one of those changed.
"""

from __future__ import annotations

from collections import OrderedDict
from itertools import repeat
from typing import Any, Hashable, Optional

import numpy as np

from .. import ast
from ..values import ERROR, UNDEFINED, ListValue
from .column import Column, Const, Packed

# The fixed ad does not hold the attribute.
ABSENT = ("absent",)

# Default byte budget of one table's shared results.
DEFAULT_BUDGET = 32 * 1024 * 1024

# Lookups of a cheap expression's key before its stored results are judged (SharedMemo.served).
DIRECT_AFTER = 64


def token(value: Any) -> Optional[Hashable]:
    """A hashable token equal only for values that evaluate identically; None for a
    value the memo does not compare (lists, ads, times)."""
    t = type(value)
    if t is float:
        return (float, value.hex())
    if t is int or t is bool or t is str:
        return (t, value)
    if value is UNDEFINED or value is ERROR:
        return value
    return None


class Reads:
    """The fixed-ad values one evaluation depended on."""

    __slots__ = ("keys", "shareable")

    def __init__(self) -> None:
        self.keys: dict[Hashable, Hashable] = {}
        self.shareable = True

    def note(self, key: Hashable, tok: Optional[Hashable]) -> None:
        if tok is None:
            self.shareable = False
        else:
            self.keys[key] = tok


def _argument_token(value: Any, lists: bool) -> Optional[Hashable]:
    """A token of a function argument: :func:`token`, or for a list of literal values
    (when ``lists``) the tuple of its elements' tokens; None when not comparable."""
    if type(value) is ListValue:
        if not lists:
            return None
        nodes = value.nodes
        if nodes is None:
            items = value._values or ()
        elif all(type(n) is ast.Literal for n in nodes):
            items = [n.value for n in nodes]
        else:
            return None
        out = []
        for item in items:
            tok = token(item)
            if tok is None:
                return None
            out.append(tok)
        return ("list", tuple(out))
    return token(value)


class CallResults:
    """Results of calls of functions whose value depends on their argument values alone,
    by the function and its arguments' tokens: a pure function called again and again
    with the same values (``member(TARGET.Owner, {...})`` for every request of an owner,
    cycle after cycle) is answered from here.  Only plain results (numbers, strings,
    booleans, Undefined, Error) are kept; past ``limit`` calls the store starts afresh."""

    __slots__ = ("results", "limit", "_lists", "_list_numbers", "_numbered", "_literal")

    def __init__(self, limit: int = 1 << 16) -> None:
        self.results: dict[tuple, Any] = {}
        self.limit = limit
        # id(list) -> (the list, its token): a list of literals is read again and again.
        self._lists: dict[int, tuple[Any, Optional[Hashable]]] = {}
        # A list's elements' tokens -> a number standing for them in the keys of ``results``
        # (a short key hashes fast; a long list's token would be hashed at every call).  A
        # number is never given to two tokens, even after this is forgotten.
        self._list_numbers: dict[Hashable, int] = {}
        self._numbered = 0
        self._literal: dict[int, tuple[Any, bool]] = {}  # id(list) -> (the list, of literals?)

    def calls(self, entry: Any, ctx: Any, args: list, rows: list[int]) -> list:
        """``entry.impl`` called with the arguments ``args`` (each a :class:`Const` or a
        :class:`Column`) taken at each of ``rows``, remembered by the values' tokens."""
        lists = getattr(entry.impl, "__module__", "") == "classad.functions.lists"
        name = entry.name.lower()
        n = len(rows)
        values: list[list] = []  # each argument's value at each row
        tokens: list[list] = []  # and its token (None: not comparable)
        for a in args:
            if type(a) is Const:
                values.append([a.value] * n)
                tokens.append([self._token(a.value, lists)] * n)
            else:
                got = a.values_at(rows)
                values.append(got)
                tokens.append([self._token(v, lists) for v in got])
        results = self.results
        out = []
        each = zip(zip(*values), zip(*tokens)) if args else repeat(((), ()), n)
        for vals, toks in each:
            if any(t is None for t in toks):
                out.append(entry.impl(ctx, *vals))
                continue
            k = (name, *toks)
            got = results.get(k, _MISSING)
            if got is _MISSING:
                got = self._remembered(k, entry.impl(ctx, *vals))
            out.append(got)
        return out

    def _remembered(self, key: tuple, got: Any) -> Any:
        """``got``, the result of the call ``key`` names, kept under ``key`` when it has a
        token (everything kept is dropped at :attr:`limit` entries)."""
        if token(got) is not None:
            results = self.results
            if len(results) >= self.limit:
                results.clear()
                self._lists.clear()
            results[key] = got
        return got

    def on_lists(self, entry: Any, ctx: Any, args: list, at: int, lists: list, test: Any) -> Optional[list]:
        """``entry.impl`` called with the constant arguments ``args`` (each a :class:`Const`)
        but at position ``at``, where each of ``lists`` (distinct list objects) goes in turn,
        remembered as :meth:`calls` remembers them (the same keys); None, before calling
        anything more, when the function does not read lists by their elements, a constant
        is not comparable, or a list is not one of literals (``test``)."""
        if getattr(entry.impl, "__module__", "") != "classad.functions.lists":
            return None
        values = [a.value for a in args]
        toks = [self._token(v, True) for v in values]
        if any(t is None for j, t in enumerate(toks) if j != at):
            return None
        name = entry.name.lower()
        before, after = tuple(toks[:at]), tuple(toks[at + 1 :])
        results = self.results
        out = []
        for lst in lists:
            tok = self._list_token(lst) if self.literal_list(lst, test) else None
            if tok is None:
                return None
            k = (name, *before, tok, *after)
            got = results.get(k, _MISSING)
            if got is _MISSING:
                values[at] = lst
                got = self._remembered(k, entry.impl(ctx, *values))
            out.append(got)
        return out

    def argument_token(self, value: Any) -> Optional[Hashable]:
        """The token of a list function's argument, as :meth:`calls` keys it."""
        return self._token(value, True)

    def literal_list(self, value: Any, test: Any) -> bool:
        """``test(value)`` (is it a list of literals?), remembered for the object."""
        seen = self._literal.get(id(value))
        if seen is None or seen[0] is not value:
            if len(self._literal) >= self.limit:
                self._literal.clear()
            seen = self._literal[id(value)] = (value, bool(test(value)))
        return seen[1]

    def _token(self, value: Any, lists: bool) -> Optional[Hashable]:
        return self._list_token(value) if lists and type(value) is ListValue else _argument_token(value, False)

    def _list_token(self, value: ListValue) -> Optional[Hashable]:
        seen = self._lists.get(id(value))
        if seen is not None and seen[0] is value:
            return seen[1]
        tok = _argument_token(value, True)
        if tok is not None:
            numbers = self._list_numbers
            number = numbers.get(tok)
            if number is None:
                if len(numbers) >= self.limit:
                    numbers.clear()
                number = numbers[tok] = self._numbered
                self._numbered += 1
            tok = ("list", number)
        if len(self._lists) >= self.limit:
            self._lists.clear()
        self._lists[id(value)] = (value, tok)
        return tok


_MISSING = object()


class MemoEntry:
    """One column of results over every row, the read values it holds for, the
    generation of the table's rows it was computed over and the row attributes it read."""

    __slots__ = ("packed", "keys", "tokens", "generation", "deps", "rowmap", "asked")

    def __init__(self, packed: Packed, keys: tuple, tokens: tuple, generation: int, deps: frozenset) -> None:
        self.packed, self.keys, self.tokens = packed, keys, tokens
        self.generation, self.deps = generation, deps
        # Each row's position in ``packed`` once the rows moved (None: the same rows).
        self.rowmap: Optional[np.ndarray] = None
        # The last generation of the table in which a run asked for these results.
        self.asked = generation

    def column(self, rows: Optional[Any] = None) -> Column:
        """The results as a new column: every row, or the rows at positions ``rows``."""
        m = self.rowmap
        if m is not None:
            rows = m if rows is None else m[rows]
        return self.packed.unpack(rows)

    def bits_at(self, rows: Optional[np.ndarray]) -> Optional[np.ndarray]:
        """For results that are all booleans: each row's bit (see :meth:`Packed.bits_at`),
        of every row or of the rows at positions ``rows``; None for any other results."""
        m = self.rowmap
        if m is not None:
            rows = m if rows is None else m.take(rows)
        return self.packed.bits_at(rows)

    def moved(self, rows: np.ndarray, generation: int) -> None:
        """The rows moved (``rows[i]``: the row of the stored generation that row ``i`` holds,
        none of them new) and nothing the results read changed.  ``rows`` is kept, not
        copied (the table's history hands the same array to every result it moves alike)."""
        m = self.rowmap
        self.rowmap = rows if m is None else m[rows]
        self.generation = generation


def _shape(reads: Reads, before: Optional[MemoEntry]) -> tuple[tuple, tuple]:
    """The read keys in their stored order and the tokens read for them: ``before``'s,
    when ``reads`` read the same keys and got the same tokens."""
    got = reads.keys
    if before is not None and len(got) == len(before.keys):
        if all(got.get(k, _MISSING) == t for k, t in zip(before.keys, before.tokens)):
            return before.keys, before.tokens
    keys = tuple(sorted(got, key=repr))
    return keys, tuple(got[k] for k in keys)


class SharedMemo:
    """Per-table store: (attribute, active set, strict, no fixed ad) -> results by read values.

    Each key keeps its own least-recently-used list, at most a quarter of the budget,
    so that an attribute whose reads rarely repeat (a slot's ``Requirements`` reading
    every request's size) cannot push out one whose reads do (its ``START`` reading
    only the owner)."""

    def __init__(self, n_rows: int, budget: int = DEFAULT_BUDGET) -> None:
        self.n = n_rows
        self.budget = budget
        self.per_key = budget // 4
        # key -> the distinct read-key tuples seen for it (usually one or two)
        self.shapes: dict[Hashable, list[tuple]] = {}
        self.entries: dict[Hashable, OrderedDict[tuple, MemoEntry]] = {}
        self.key_bytes: dict[Hashable, int] = {}
        self.nbytes = 0
        self.hits = self.misses = 0
        self.as_is = 0  # hits of a result of the table's current generation
        # Keys whose evaluation could not be shared once (a scalar fallback, a list read from
        # the fixed ad): later runs compute just the rows they need instead of every row.
        self.unshareable: set[Hashable] = set()
        # Keys whose results could not be brought up to date for several fixed ads at once
        # (classad.columnar.compile.Run._stacked_parts): each is brought by its own run.
        self.unstacked: set[Hashable] = set()
        # Keys whose last such walk found most of its rows reading values of the fixed ads
        # that differ between the results: the next walk lays every row out for each result
        # at once, not the first result's rows and then the others' where they may differ.
        self.stacked_whole: set[Hashable] = set()
        # Results of value-only function calls (shared by every evaluation over the table).
        self.calls = CallResults()
        # Expressions keyed by identity are kept alive here, so that their ids stay theirs.
        self._pinned: dict[int, Any] = {}
        # id(node) -> (node, verdict): whether an expression may be evaluated ahead of need
        # (classad.columnar.compile.Run._simple).
        self.simple: dict[int, tuple[Any, bool]] = {}
        # id(node) -> (node, verdict): whether a row expression only combines other attributes
        # (classad.columnar.compile.Run._combines; such attributes are not stored here).
        self.combines: dict[int, tuple[Any, bool]] = {}
        # id(node) -> (node, verdict): whether an expression is cheap to evaluate afresh
        # (classad.columnar.compile.Run._plain).
        self.plain: dict[int, tuple[Any, bool]] = {}
        # id(node) -> [node, runs]: combinations that failed to evaluate as one boolean array
        # in every run since they first did (classad.columnar.compile.Run._fused).
        self.unfused: dict[int, list] = {}
        # id(node) -> how a fixed ad's ``&&`` chain is evaluated on every row of the table's
        # current generation (classad.columnar.compile.Run._conjunction_plan).
        self.conjunctions: dict[int, Any] = {}
        # id(node) -> how a rows' ``&&`` chain is evaluated on the table's current generation
        # (classad.columnar.compile.Run._row_chain_plan).
        self.row_chains: dict[int, Any] = {}
        # Keys of cheap expressions: how often a run looked one up, and how often a stored
        # result served it as it was (not brought to a new generation, not computed).
        self.lookups: dict[Hashable, list[int]] = {}
        # Cheap keys whose stored results seldom serve a run as they are: computed for each
        # run on the rows it asks for, and no longer stored.
        self.direct: set[Hashable] = set()

    def served(self, key: Hashable, found: bool) -> None:
        """Count one lookup of the cheap expression ``key`` (``found``: a stored result
        served it as it was); once ``DIRECT_AFTER`` lookups found one in fewer than half of
        them, ``key`` is computed for each run and its stored results are forgotten."""
        seen = self.lookups.get(key)
        if seen is None:
            seen = self.lookups[key] = [0, 0]
        seen[0] += 1
        seen[1] += found
        if seen[0] >= DIRECT_AFTER and 2 * seen[1] < seen[0]:
            self.direct.add(key)
            for stored in list(self.entries.get(key, {}).values()):
                self.drop(key, stored)

    def worth_bringing(self, key: Hashable) -> bool:
        """Whether a stored result of the cheap expression ``key`` made for an older
        generation of the table is brought up to date for a lookup (else the lookup computes
        it, as for a direct key): not when the lookups so far found a result as it was in
        fewer than half of them (bringing one costs several computations, which pays only
        when later lookups find it as it is)."""
        seen = self.lookups.get(key)
        return seen is None or 2 * seen[1] >= seen[0]

    def pin(self, node: Any) -> None:
        """Keep ``node`` alive as long as this memo (its results are keyed by ``id(node)``)."""
        self._pinned.setdefault(id(node), node)

    def shapes_of(self, key: Hashable) -> list[tuple]:
        return self.shapes.get(key, [])

    def find(self, key: Hashable, keys: tuple, tokens: tuple) -> Optional[MemoEntry]:
        lru = self.entries.get(key)
        if lru is None:
            return None
        got = lru.get((keys, tokens))
        if got is not None:
            lru.move_to_end((keys, tokens))
        return got

    def store(
        self,
        key: Hashable,
        reads: Reads,
        values: Column | Packed,
        generation: int = 0,
        deps: frozenset = frozenset(),
        before: Optional[MemoEntry] = None,
    ) -> Optional[MemoEntry]:
        """Keep ``values`` (one per row of the table, whose generation is ``generation``;
        computed reading the row attributes ``deps``; a column, or one packed already)
        under the values ``reads`` recorded, and return the entry (None: not kept, the
        reads cannot be shared).  ``before``: an older result of the same reads, perhaps."""
        if not reads.shareable:
            self.unshareable.add(key)
            return None
        keys, tokens = _shape(reads, before)
        shapes = self.shapes.setdefault(key, [])
        if keys not in shapes:
            shapes.append(keys)
        lru = self.entries.setdefault(key, OrderedDict())
        old = lru.pop((keys, tokens), None)
        if old is not None:
            self._forget(key, old)
        stored = MemoEntry(values if isinstance(values, Packed) else Packed(values), keys, tokens, generation, deps)
        if before is not None:
            stored.asked = before.asked
        lru[(keys, tokens)] = stored
        self.key_bytes[key] = self.key_bytes.get(key, 0) + stored.packed.nbytes
        self.nbytes += stored.packed.nbytes
        while self.key_bytes[key] > self.per_key and len(lru) > 1:
            self._forget(key, lru.popitem(last=False)[1])
        while self.nbytes > self.budget:
            biggest = max(self.key_bytes, key=self.key_bytes.__getitem__)
            victims = self.entries[biggest]
            if not victims:
                break
            self._forget(biggest, victims.popitem(last=False)[1])
        return stored

    def drop(self, key: Hashable, stored: MemoEntry) -> None:
        """Forget one stored result of ``key``."""
        lru = self.entries.get(key)
        if lru is not None and lru.pop((stored.keys, stored.tokens), None) is not None:
            self._forget(key, stored)

    def _forget(self, key: Hashable, stored: MemoEntry) -> None:
        self.key_bytes[key] -= stored.packed.nbytes
        self.nbytes -= stored.packed.nbytes


__all__ = ["ABSENT", "CallResults", "DEFAULT_BUDGET", "DIRECT_AFTER", "Reads", "SharedMemo", "MemoEntry", "token"]
