"""``AdTable``: a sequence of ClassAds seen column by column.

For each attribute name asked for, the table extracts once what every row's
ad holds under it: a literal value (typed, in a :class:`Column`), nothing, or an
expression node.  Expression nodes are shared between ads that hold the same
text, so the rows holding expressions are grouped by node identity and each
distinct node is evaluated once for its whole group.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

import numpy as np

from .. import ast
from ..values import ERROR, UNDEFINED
from .column import (
    K_BOOL,
    K_ERROR,
    K_INT,
    K_OTHER,
    K_REAL,
    K_STR,
    K_UNDEF,
    Column,
    StringPool,
)
from .memo import SharedMemo

# What a row holds under a name.
HOLDS_LITERAL, HOLDS_NOTHING, HOLDS_EXPR = 0, 1, 2


class AttrColumn:
    """One attribute over the table: literal values, and which rows hold what."""

    __slots__ = ("values", "holds", "group", "nodes", "all_literal", "any_missing", "one_expr")

    def __init__(self, values: Column, holds: np.ndarray, group: np.ndarray, nodes: list) -> None:
        self.values = values  # literal rows' values (others: Undefined)
        self.holds = holds  # HOLDS_* per row
        self.group = group  # index into ``nodes`` for expression rows, else -1
        self.nodes = nodes  # the distinct expression nodes
        self.all_literal = not nodes and not bool((holds == HOLDS_NOTHING).any())
        self.any_missing = bool((holds == HOLDS_NOTHING).any())
        # Every row holds the same expression (a pool's Requirements, say).
        self.one_expr = len(nodes) == 1 and bool((holds == HOLDS_EXPR).all())


_PLAIN = frozenset({bool, int, float, str})


def _one_kind(stored: list, t: type, n: int, pool: StringPool) -> Optional[AttrColumn]:
    """The column of an attribute every row holds as a plain value of type ``t`` (or no
    row holds), filled with whole-array operations; None for any other case."""
    values = Column.empty(n, pool)
    holds = np.zeros(n, np.int8)
    try:
        if t is int or t is bool:
            values.i[:] = stored
            values.kind[:] = K_INT if t is int else K_BOOL
        elif t is float:
            values.f[:] = stored
            values.kind[:] = K_REAL
        elif t is str:
            values.s[:] = list(map(pool.code, stored))
            values.kind[:] = K_STR
        elif t is type(None):
            holds[:] = HOLDS_NOTHING
        else:
            return None
    except OverflowError:  # an int beyond 64 bits: the general path decides
        return None
    return AttrColumn(values, holds, np.full(n, -1, np.int32), [])


class AdTable:
    """The rows are ``ads`` (top-level ClassAds); columns are built on first use."""

    def __init__(self, ads: Sequence[Any], names: Iterable[str] = ()) -> None:
        self.ads = list(ads)
        self.n = len(self.ads)
        self.pool = StringPool()
        self.all_rows = np.arange(self.n, dtype=np.intp)
        self._columns: dict[str, AttrColumn] = {}
        self.nested = any(ad.parent is not None for ad in self.ads)
        self._ids: Optional[frozenset[int]] = None
        self._shared: Optional[SharedMemo] = None
        self.row_only: Any = None  # the row-only sub-expressions (classad.columnar.rowonly), made on first use
        for name in names:
            self.column(name.lower())

    def contains_ad(self, ad: Any) -> bool:
        """Whether ``ad`` (the very object) is one of the rows."""
        if self._ids is None:
            self._ids = frozenset(id(a) for a in self.ads)
        return id(ad) in self._ids

    def shared_memo(self) -> SharedMemo:
        """Row-attribute results shared by every evaluation over this table (the rows
        must not change while the table is in use, as for its columns)."""
        if self._shared is None:
            self._shared = SharedMemo(self.n)
        return self._shared

    def column(self, lname: str) -> AttrColumn:
        """The attribute ``lname`` (lower-case) over every row."""
        col = self._columns.get(lname)
        if col is None:
            col = self._columns[lname] = self._extract(lname)
        return col

    def _extract(self, lname: str) -> AttrColumn:
        n, pool = self.n, self.pool
        stored = [ad.plain(lname) for ad in self.ads]
        kinds = set(map(type, stored))
        if len(kinds) == 1:
            same = _one_kind(stored, kinds.pop(), n, pool)
            if same is not None:
                return same
        values = Column.empty(n, pool)
        kind, iv, fv, sv = values.kind, values.i, values.f, values.s
        holds = np.zeros(n, np.int8)
        group = np.full(n, -1, np.int32)
        nodes: list = []
        node_ids: dict[int, int] = {}
        obj: Optional[np.ndarray] = None
        literal = ast.Literal
        for r, v in enumerate(stored):
            if v is None:
                holds[r] = HOLDS_NOTHING
                continue
            t = type(v)
            if t is literal:  # Undefined, Error, a time, a list...
                v = v.value  # type: ignore[union-attr]
                t = type(v)
            elif t not in _PLAIN:
                holds[r] = HOLDS_EXPR
                g = node_ids.get(id(v))
                if g is None:
                    g = node_ids[id(v)] = len(nodes)
                    nodes.append(v)
                group[r] = g
                continue
            if t is bool:
                kind[r] = K_BOOL
                iv[r] = v
            elif t is int:
                kind[r] = K_INT
                iv[r] = v
            elif t is float:
                kind[r] = K_REAL
                fv[r] = v
            elif t is str:
                kind[r] = K_STR
                sv[r] = pool.code(v)  # type: ignore[arg-type]
            elif v is UNDEFINED:
                kind[r] = K_UNDEF
            elif v is ERROR:
                kind[r] = K_ERROR
            else:
                kind[r] = K_OTHER
                if obj is None:
                    obj = np.empty(n, dtype=object)
                obj[r] = v
        values.o = obj
        return AttrColumn(values, holds, group, nodes)


__all__ = ["AdTable", "AttrColumn", "HOLDS_EXPR", "HOLDS_LITERAL", "HOLDS_NOTHING"]
