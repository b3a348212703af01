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
unshareable.  Results are kept for the rows evaluated so far; other rows are
computed when asked for and added only if they read nothing new.  Memory is
bounded: the least recently used columns are dropped past a byte budget.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Hashable, Optional

import numpy as np

from ..values import ERROR, UNDEFINED
from .column import Column

# The fixed ad does not hold the attribute.
ABSENT = ("absent",)

# Bytes per row of a stored column (kind, int, real and string payloads).
_ROW_BYTES = 25

# Default byte budget of one table's shared results.
DEFAULT_BUDGET = 64 * 1024 * 1024


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


class _Stored:
    """One column of results, the rows it covers, and the read values it holds for."""

    __slots__ = ("column", "done", "keys", "tokens")

    def __init__(self, column: Column, done: np.ndarray, keys: tuple, tokens: tuple) -> None:
        self.column, self.done, self.keys, self.tokens = column, done, keys, tokens


class SharedMemo:
    """Per-table store: (attribute, active set, strict, no fixed ad) -> results by read values.

    Each key keeps its own least-recently-used list, at most a quarter of the budget,
    so that an attribute whose reads rarely repeat (a slot's ``Requirements`` reading
    every request's size) cannot push out one whose reads do (its ``START`` reading
    only the owner)."""

    def __init__(self, n_rows: int, budget: int = DEFAULT_BUDGET) -> None:
        self.n = n_rows
        self.capacity = max(4, budget // max(1, n_rows * _ROW_BYTES))
        self.per_key = max(1, self.capacity // 4)
        # key -> the distinct read-key tuples seen for it (usually one or two)
        self.shapes: dict[Hashable, list[tuple]] = {}
        self.entries: dict[Hashable, OrderedDict[tuple, _Stored]] = {}
        self.size = 0
        self.hits = self.misses = 0

    def shapes_of(self, key: Hashable) -> list[tuple]:
        return self.shapes.get(key, [])

    def find(self, key: Hashable, keys: tuple, tokens: tuple) -> Optional[_Stored]:
        lru = self.entries.get(key)
        if lru is None:
            return None
        got = lru.get((keys, tokens))
        if got is not None:
            lru.move_to_end((keys, tokens))
        return got

    def store(self, key: Hashable, reads: Reads, rows: np.ndarray, values: Column) -> None:
        """Keep ``values`` (on ``rows``) under the values ``reads`` recorded."""
        if not reads.shareable:
            return
        keys = tuple(sorted(reads.keys, key=repr))
        tokens = tuple(reads.keys[k] for k in keys)
        shapes = self.shapes.setdefault(key, [])
        if keys not in shapes:
            shapes.append(keys)
        if len(rows) == self.n:
            full = values.copy()
            done = np.ones(self.n, dtype=bool)
        else:
            full = Column.empty(self.n, values.pool)
            full.put(rows, values)
            done = np.zeros(self.n, dtype=bool)
            done[rows] = True
        lru = self.entries.setdefault(key, OrderedDict())
        if (keys, tokens) not in lru:
            self.size += 1
        lru[(keys, tokens)] = _Stored(full, done, keys, tokens)
        if len(lru) > self.per_key:
            lru.popitem(last=False)
            self.size -= 1
        while self.size > self.capacity:
            biggest = max(self.entries.values(), key=len)
            biggest.popitem(last=False)
            self.size -= 1

    def extend(self, stored: _Stored, reads: Reads, rows: np.ndarray, values: Column) -> None:
        """Add rows computed later, if they read nothing the stored results do not."""
        if not reads.shareable:
            return
        have = dict(zip(stored.keys, stored.tokens))
        if any(have.get(k, ABSENT_MISSING) != t for k, t in reads.keys.items()):
            return
        stored.column.put(rows, values)
        stored.done[rows] = True


# Sentinel distinct from every token.
ABSENT_MISSING = ("not-read",)


__all__ = ["ABSENT", "DEFAULT_BUDGET", "Reads", "SharedMemo", "token"]
