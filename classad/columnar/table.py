"""``AdTable``: a sequence of ClassAds seen column by column.

For each attribute name asked for, the table extracts once what every row's
ad holds under it: a literal value (typed, in a :class:`Column`), nothing, or an
expression node.  Expression nodes are shared between ads that hold the same
text, so the rows holding expressions are grouped by node identity and each
distinct node is evaluated once for its whole group.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Iterable, Mapping, Optional, Sequence

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
    kinds as kinds_of,
)
from .generations import ANY, History, Step
from .memo import SharedMemo
from .ops import compare_number_bools

# What a row holds under a name.
HOLDS_LITERAL, HOLDS_NOTHING, HOLDS_EXPR = 0, 1, 2


class AttrColumn:
    """One attribute over the table: literal values, and which rows hold what."""

    __slots__ = (
        "values",
        "holds",
        "group",
        "nodes",
        "all_literal",
        "any_missing",
        "held_nowhere",
        "one_expr",
        "kind",
        "variants",
    )

    def __init__(self, values: Column, holds: np.ndarray, group: np.ndarray, nodes: list) -> None:
        self.values = values  # literal rows' values (others: Undefined)
        self.holds = holds  # HOLDS_* per row
        self.group = group  # index into ``nodes`` for expression rows, else -1
        self.nodes = nodes  # the distinct expression nodes
        nothing = holds == HOLDS_NOTHING
        self.any_missing = bool(nothing.any())
        self.all_literal = not nodes and not self.any_missing
        self.held_nowhere = bool(nothing.all())  # no row holds the attribute (or there are no rows)
        # Every row holds the same expression (a pool's Requirements, say).
        self.one_expr = len(nodes) == 1 and bool((holds == HOLDS_EXPR).all())
        # The kind of every value when they all have one (-1 otherwise).
        kinds = values.kind
        first = int(kinds[0]) if len(kinds) else -1
        self.kind = first if first >= 0 and not bool((kinds != first).any()) else -1
        values.uni = self.kind
        # The families of ``nodes`` (classad.columnar.families), found on first use.
        self.variants: Any = None

    def take(self, rows: np.ndarray) -> Column:
        """The values at positions ``rows``, as a new column.  A column of one kind gathers
        only its payload (the others are zero in every row, as extraction leaves them)."""
        k, v = self.kind, self.values
        if k < 0 or v.o is not None:
            return v.take(rows)
        n = len(rows)
        return Column(
            kinds_of(n, k),
            v.i.take(rows) if k == K_INT or k == K_BOOL else np.zeros(n, np.int64),
            v.f.take(rows) if k == K_REAL else None,
            v.s.take(rows) if k == K_STR else None,
            None,
            v.pool,
            k,
        )


_PLAIN = frozenset({bool, int, float, str})


def _one_kind(stored: Sequence[Any], t: type, n: int, pool: StringPool) -> Optional[AttrColumn]:
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


def _extract(ads: Sequence[Any], lname: str, pool: StringPool) -> AttrColumn:
    """The column of ``lname`` over ``ads``."""
    return _column_of([ad.plain(lname) for ad in ads], pool)


def _column_of(stored: Sequence[Any], pool: StringPool) -> AttrColumn:
    """The column of rows holding the plain forms ``stored`` (see ``ClassAd.plain``)."""
    n = len(stored)
    kinds = set(map(type, stored))
    if len(kinds) == 1:
        same = _one_kind(stored, next(iter(kinds)), n, pool)
        if same is not None:
            return same
    if ast.Literal not in kinds:
        return _by_type(stored, pool)
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


# The types of a plain form a column stores by whole-array writes (see _by_type).
_NONE, _BOOL, _INT, _REAL, _STR, _EXPR = range(6)
_TYPE_CODE = {type(None): _NONE, bool: _BOOL, int: _INT, float: _REAL, str: _STR}


def _by_type(stored: Sequence[Any], pool: StringPool) -> AttrColumn:
    """:func:`_column_of` of plain forms none of which is an :class:`~classad.ast.Literal`
    (Undefined, Error, a list...): the rows of each type are written at once, the strings
    interned in row order and the expressions numbered in order of their first row, as
    the row-by-row loop does."""
    n = len(stored)
    code = np.fromiter(map(_TYPE_CODE.get, map(type, stored), repeat(_EXPR)), np.int8, n)
    values = Column.empty(n, pool)
    holds = np.zeros(n, np.int8)
    group = np.full(n, -1, np.int32)
    nodes: list = []
    pick = stored.__getitem__
    for c in np.unique(code).tolist():
        rows = np.flatnonzero(code == c)
        if c == _NONE:
            holds[rows] = HOLDS_NOTHING
            continue
        got = stored if len(rows) == n else list(map(pick, rows.tolist()))
        if c == _EXPR:
            holds[rows] = HOLDS_EXPR
            first = dict(zip(map(id, got), got))  # each node by its id, in order of its first row
            nodes = list(first.values())
            if len(first) == 1:
                group[rows] = 0
            else:
                number = dict(zip(first, range(len(first))))
                group[rows] = np.fromiter(map(number.__getitem__, map(id, got)), np.int32, len(got))
        elif c == _STR:
            values.kind[rows] = K_STR
            values.s[rows] = list(map(pool.code, got))
        elif c == _REAL:
            values.kind[rows] = K_REAL
            values.f[rows] = got
        else:
            values.kind[rows] = K_BOOL if c == _BOOL else K_INT
            values.i[rows] = got
    return AttrColumn(values, holds, group, nodes)


# A comparison of a column with a number, as its mirror image (``3 < x`` is ``x > 3``).
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
# How many comparisons a table keeps at most (each a boolean per row) before it starts over.
_COMPARED_MAX = 1024


class AdTable:
    """The rows are ``ads`` (top-level ClassAds); columns are built on first use."""

    def __init__(self, ads: Sequence[Any], names: Iterable[str] = ()) -> None:
        self.ads = list(ads)
        self.n = len(self.ads)
        self.pool = StringPool()
        self.all_rows = np.arange(self.n, dtype=np.intp)
        self._columns: dict[str, AttrColumn] = {}
        self.nested = any(ad.parent is not None for ad in self.ads)
        self._ids: Optional[set[int]] = None  # the rows' ids (see contains_ad), made on first use
        self._shared: Optional[SharedMemo] = None
        self.row_only: Any = None  # the row-only sub-expressions (classad.columnar.rowonly), made on first use
        # The line of tables this one continues (:meth:`follow`), and the sets of attribute
        # names being recorded as read (the dependencies of a value being computed).
        self.history = History()
        self.watch: list[set] = []
        # The ids of the columns' values (each kept as long as the table), and the
        # comparisons of those with a number made so far (see :meth:`number_bools`).
        self._owned: set[int] = set()
        self._compared: dict[tuple, np.ndarray] = {}
        for name in names:
            self.column(name.lower())

    @property
    def generation(self) -> int:
        """How many tables this one continues (see :mod:`classad.columnar.generations`)."""
        return self.history.generation

    def contains_ad(self, ad: Any) -> bool:
        """Whether ``ad`` (the very object) is one of the rows."""
        if self._ids is None:
            self._ids = set(map(id, self.ads))
        return id(ad) in self._ids

    def shared_memo(self) -> SharedMemo:
        """Row-attribute results shared by every evaluation over this table (the rows
        must not change while the table is in use, as for its columns)."""
        if self._shared is None:
            self._shared = SharedMemo(self.n)
        return self._shared

    def column(self, lname: str) -> AttrColumn:
        """The attribute ``lname`` (lower-case) over every row."""
        for names in self.watch:
            names.add(lname)
        col = self._columns.get(lname)
        if col is None:
            col = self._columns[lname] = _extract(self.ads, lname, self.pool)
            self._owned.add(id(col.values))
        return col

    def column_unwatched(self, lname: str) -> AttrColumn:
        """:meth:`column`, not noted as read by the values being computed."""
        col = self._columns.get(lname)
        if col is None:
            col = self._columns[lname] = _extract(self.ads, lname, self.pool)
            self._owned.add(id(col.values))
        return col

    def number_bools(self, op: str, col: Column, value: Any, swapped: bool) -> Optional[np.ndarray]:
        """:func:`~.ops.compare_number_bools` of ``col``; of one of the table's own columns
        (:meth:`column`'s values, which stay as they are while the table is in use), kept
        for the table's later comparisons of it with an equal number of the same type (the
        builds of a cycle compare the slots' ``Memory``, ``Disk`` and ``Cpus`` with a
        hundred or so distinct request sizes some 1,400 times; ``value op x`` is kept as
        ``x op' value``, the same booleans).  A kept array is read-only: callers that
        write into a result copy it first."""
        key = (id(col), _MIRRORED[op] if swapped else op, type(value), value)
        got = self._compared.get(key)
        if got is not None:
            return got
        out = compare_number_bools(op, col, value, swapped)
        if out is not None and id(col) in self._owned:
            if len(self._compared) >= _COMPARED_MAX:
                self._compared.clear()
            out.flags.writeable = False
            self._compared[key] = out
        return out

    def owns(self, col: Any) -> bool:
        """Whether ``col`` is one of the table's own columns (never to be handed out)."""
        return any(col is c.values for c in self._columns.values())

    def read_any(self) -> None:
        """Note that the value being computed read the rows' ads in some other way."""
        for names in self.watch:
            names.add(ANY)

    def follow(
        self,
        ads: Sequence[Any],
        source: np.ndarray,
        dirty: np.ndarray,
        changed: dict[str, np.ndarray],
        given: Optional[Mapping[str, tuple[np.ndarray, np.ndarray, Sequence[Any]]]] = None,
        ids: Optional[tuple[np.ndarray, np.ndarray]] = None,
    ) -> "AdTable":
        """The table of ``ads``, continuing this one: ``source[i]`` is the row of this table
        that new row ``i`` holds again (-1 for a new ad), ``dirty`` marks the rows that may
        differ in every attribute, and ``changed[name]`` the further rows whose attribute
        ``name`` (lower-case) may differ.  Every other row must hold the same entry under
        every name as its source row.  ``given[name]``, if any, is ``(rows, which, values)``:
        rows of ``changed[name]`` (each once), each holding ``values[which[k]]`` there (as
        ``ClassAd.plain`` gives it), so those are not read; rows given a number, a boolean
        or nothing are written by value, a few values for many rows.  The new table re-reads only the rows that changed
        and keeps this table's string pool, shared results and row-only values, which it
        brings up to date on use; this table must not be used afterwards.  ``ids``, if
        given, is ``(left, joined)``: the ids (uint64) of this table's rows that are not
        rows of the new one, and of the new rows that are not rows of this one; the set of
        the rows' ids (:meth:`contains_ad`), if made, then passes on with only those
        changes."""
        new = AdTable(ads)
        if ids is not None and self._ids is not None:
            rows_ids, self._ids = self._ids, None  # (this table makes its own again if asked)
            rows_ids.difference_update(ids[0].tolist())
            rows_ids.update(ids[1].tolist())
            new._ids = rows_ids
        if new.nested or self.nested:
            return new
        dirty = dirty | (source < 0)
        masks = {name: rows & ~dirty for name, rows in changed.items() if name in self._columns}
        new.pool = self.pool
        read = _read_rows([new.ads[r] for r in np.flatnonzero(dirty).tolist()], tuple(self._columns))
        for (name, col), dirty_read in zip(self._columns.items(), read):
            extra = masks.get(name)
            redo = dirty | extra if extra is not None else dirty
            got = given.get(name) if given else None
            patch = None
            if got is not None and all(map(_patchable, got[2])):
                rows, which, values = got
                kept = ~dirty[rows]  # dirty rows are read whole
                patch = (rows[kept], which[kept], values)
                redo = redo.copy()
                redo[patch[0]] = False
                got = None
            known = _with_extra(name, dirty_read, dirty, redo, new.ads, got)
            carried = new._columns[name] = _carry_column(name, col, new.ads, source, redo, self.pool, known, patch)
            new._owned.add(id(carried.values))
        new.history = self.history
        new.history.add(Step(self.n, source, dirty, {k: m for k, m in masks.items() if m.any()}))
        new._shared = self._shared
        if new._shared is not None:
            new._shared.n = new.n
        if self.row_only is not None:
            new.row_only = self.row_only.moved_to(new, _structure_changed(self._columns, new._columns))
        return new


def _read_rows(ads: list, names: tuple[str, ...]) -> list[Sequence[Any]]:
    """The plain forms of ``names`` in ``ads``, one sequence per name (an ad with a bulk
    ``plains`` reader gives each row's in one call)."""
    if not ads:
        return [()] * len(names)
    rows = [ad.plains(names) if hasattr(ad, "plains") else [ad.plain(k) for k in names] for ad in ads]
    return list(zip(*rows))


def _with_extra(
    lname: str,
    dirty_read: Sequence[Any],
    dirty: np.ndarray,
    redo: np.ndarray,
    ads: list,
    given: Optional[tuple[np.ndarray, np.ndarray, Sequence[Any]]] = None,
) -> Sequence[Any]:
    """The plain forms of ``lname`` in the ``redo`` rows, in row order: ``dirty_read`` for
    the ``dirty`` rows (which ``redo`` includes), ``given`` (rows of ``redo``, the value of
    each, the values: see :meth:`AdTable.follow`) for the others it names, the rest read
    one by one."""
    again = np.flatnonzero(redo)
    if len(again) == len(dirty_read):
        return dirty_read
    was_dirty = dirty[again]
    out = np.empty(len(again), dtype=object)
    out[was_dirty] = np.fromiter(dirty_read, dtype=object, count=len(dirty_read))
    todo = ~was_dirty
    if given is not None:
        rows, which, values = given
        kept = ~dirty[rows]
        at = np.searchsorted(again, rows[kept])
        each = np.empty(len(values), dtype=object)
        for k, value in enumerate(values):
            each[k : k + 1].fill(value)  # fill: the value as it is, even a sequence
        out[at] = each[which[kept]]
        todo[at] = False
    others = again[todo].tolist()
    out[todo] = np.fromiter((ads[r].plain(lname) for r in others), dtype=object, count=len(others))
    return out.tolist()  # type: ignore[no-any-return]


def _carry_column(
    lname: str,
    col: AttrColumn,
    ads: list,
    source: np.ndarray,
    redo: np.ndarray,
    pool: StringPool,
    known: Optional[Sequence[Any]] = None,
    patch: Optional[tuple[np.ndarray, np.ndarray, Sequence[Any]]] = None,
) -> AttrColumn:
    """Column ``lname`` (``col`` before) over the new rows: kept rows read their source
    row, ``redo`` rows are read again (``known``: their plain forms of ``lname``, if read),
    and ``patch`` rows (none of ``redo``; ``(rows, which, values)``: each row holds the
    number, boolean or nothing ``values[which[k]]``) are written by value."""
    again = np.flatnonzero(redo)
    if known is None:
        known = [ads[r].plain(lname) for r in again.tolist()]
    if len(again) == len(ads):  # every row read again (none patched): the column of what they hold
        part = _column_of(known, pool)
        values, holds, group, nodes = part.values, part.holds, part.group, part.nodes
    else:
        src = source.copy()
        src[again] = 0  # a kept row's stands in (the rows read again are written over)
        values = col.values.take(src)
        holds = col.holds.take(src)
        group = col.group.take(src)
        nodes = list(col.nodes)
        if len(again):
            part = _column_of(known, pool)
            values.put(again, part.values)
            if part.values.o is None and values.o is not None:
                values.o[again] = None
            holds[again] = part.holds
            group[again] = -1
            if part.nodes:
                index = {id(node): g for g, node in enumerate(nodes)}
                for node in part.nodes:
                    if id(node) not in index:
                        index[id(node)] = len(nodes)
                        nodes.append(node)
                remap = np.array([index[id(node)] for node in part.nodes], np.int32)
                at = part.group >= 0
                group[again[at]] = remap[part.group[at]]
        if patch is not None and len(patch[0]):
            rows, which, written = patch
            each = _column_of(list(written), pool)  # no string, no expression: nothing interned or numbered
            values.put(rows, each.values.take(which))
            holds[rows] = each.holds[which]
            group[rows] = -1
    out = AttrColumn(values, holds, *_first_seen(group, nodes))
    if col.variants is not None and len(out.nodes) == len(col.nodes):
        if all(x is y for x, y in zip(out.nodes, col.nodes)):
            out.variants = col.variants  # found from the nodes alone: the same families
    return out


def _patchable(value: Any) -> bool:
    """Whether ``value`` (a plain form) is a number, a boolean or nothing: what a column
    holds of it does not depend on the other rows (no string interned, no node numbered)."""
    t = type(value)
    return t is float or t is bool or value is None or (t is int and -(2**63) <= value < 2**63)


def _first_seen(group: np.ndarray, nodes: list) -> tuple[np.ndarray, list]:
    """The expression groups renumbered in order of their first row, unused nodes dropped
    (as a table built afresh numbers them)."""
    at = np.flatnonzero(group >= 0)
    if not len(at):
        return group, []
    seq = group[at]
    if seq[0] == 0:  # numbered so already when each row's group is at most one past those before it
        top = np.maximum.accumulate(seq)
        if int(top[-1]) == len(nodes) - 1 and bool((seq[1:] <= top[:-1] + 1).all()):
            return group, nodes
    used, first = np.unique(seq, return_index=True)
    order = used[np.argsort(first, kind="stable")]
    if len(order) == len(nodes) and bool((order == np.arange(len(nodes))).all()):
        return group, nodes
    remap = np.full(len(nodes), -1, np.int32)
    remap[order] = np.arange(len(order), dtype=np.int32)
    group = group.copy()
    group[at] = remap[group[at]]
    return group, [nodes[g] for g in order.tolist()]


def _structure_changed(old: dict[str, AttrColumn], new: dict[str, AttrColumn]) -> bool:
    """Whether some column's rows now miss it, or hold other expressions, than before
    (what the row-only analysis of :mod:`classad.columnar.rowonly` depends on)."""
    for name, a in old.items():
        b = new[name]
        if a.any_missing != b.any_missing or len(a.nodes) != len(b.nodes):
            return True
        if any(x is not y for x, y in zip(a.nodes, b.nodes)):
            return True
        if bool((a.holds == HOLDS_NOTHING).all()) != bool((b.holds == HOLDS_NOTHING).all()):
            return True
    return False


__all__ = ["AdTable", "AttrColumn", "HOLDS_EXPR", "HOLDS_LITERAL", "HOLDS_NOTHING"]
