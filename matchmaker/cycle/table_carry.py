"""The columnar slot table carried from one cycle of a simulation to the next.

A cycle's table rows are its slots' annotated copies (:class:`NegotiationAd`).  A copy is
its slot ad (never modified: a slot whose ad changes gets a new ad object) plus what the
cycle adds (``RemoteUserPrio``, ``Requirements`` from ``NegotiatorRequirements``...).  A
simulation keeps each copy for the next cycle and rewrites its added entries in place
when they change (:mod:`matchmaker.cycle.slot_carry`), and says which (:meth:`TableLine.note`);
a copy made anew holds the same entries as last cycle's copy of the same slot ad wherever
the added entries are the same.  A slot whose ad was rewritten (a claim, a release) keeps
most values of its old ad.  :class:`TableLine` finds, for each new row, last cycle's row
of its copy, of its slot ad or of its slot's name, and the entries that differ (added
ones, or the slot ads' values compared one by one), and hands that to
:meth:`classad.columnar.AdTable.follow`, which re-reads only those rows and keeps the
shared results (see docs/architecture.md, the columnar engine).
"""

from __future__ import annotations

import math
from itertools import compress
from operator import is_not, itemgetter
from typing import Any, Callable, Optional, Sequence

import numpy as np

from classad import ast
from classad.columnar import AdTable
from classad.layout import Layout, SharedAttrs, Variant, plain_form, plain_of

from .ephemeral import NegotiationAd

# Carried tables are made afresh past this many interned strings (the pool only grows).
_POOL_LIMIT = 2_000_000
_item = tuple.__getitem__  # a compacted ad's storage read as the tuple it is
_ALL = slice(None)
_OWN = slice(1, None)  # the values such an ad keeps itself
_BARE = (bool, int, float, str)
# What the ads of two layouts have in common (see _pair_plan), by the layouts' ids; how
# to read every value of an ad of a variant (see _full) and the names of its own places
# (see _own_names), by the variant's id.  A variant is never held (a cache must not keep
# alive a variant no ad holds, see classad.layout, Layout._recycled): what it is known by
# is its tuple of places, which is its own object (held, so no other variant can have it).
_PLANS: dict[tuple[int, int], tuple[Layout, Layout, Any]] = {}
_FULL: dict[int, tuple[tuple[int, ...], Any, tuple]] = {}
_OWN_NAMES: dict[int, tuple[tuple[int, ...], tuple[str, ...]]] = {}
_TEMPLATES: dict[int, tuple[Layout, tuple]] = {}  # see _plain_template
_PLAN_LIMIT = 4096


class TableLine:
    """The last table of a run of cycles, with each row's slot ad and slot name, and the
    copies rewritten in place since (:meth:`note`)."""

    def __init__(self) -> None:
        self.table: Optional[AdTable] = None
        self._sources: list[Any] = []
        self._names: list[Any] = []
        self._row_of: Optional[_Ids] = None  # the rows of table by their copies' ids, if known
        # id(copy) -> (copy, lower-case names rewritten in place, None for anything)
        self._notes: dict[int, tuple[Any, Optional[tuple[str, ...]]]] = {}
        self._bulk: list[tuple[Any, tuple[str, ...], Optional[tuple]]] = []  # see note_all

    def note(self, copy: Any, names: Optional[tuple[str, ...]]) -> None:
        """Say that the entries ``names`` of ``copy`` (an annotated copy, maybe a row of the
        last table) were rewritten in place; None: the copy may differ anywhere."""
        hit = self._notes.get(id(copy))
        if hit is not None and hit[0] is copy:
            names = None if names is None or hit[1] is None else hit[1] + names
        self._notes[id(copy)] = (copy, names)

    def note_all(self, copies: list[Any], names: tuple[str, ...], values: Optional[tuple] = None) -> None:
        """:meth:`note` for each of ``copies`` (the list is kept: not to be changed), all
        rewritten in the same ``names``; ``values``, if given, what each copy now holds
        under each name (``ClassAd.plain``), so that the table need not read them."""
        self._bulk.append((copies, names, values))

    def note_ids(self, ids: np.ndarray, names: tuple[str, ...], values: Optional[tuple] = None) -> None:
        """:meth:`note_all` of the copies whose ids are ``ids`` (uint64): those of a list of
        copies one table of entries serves (copies of last cycle that left the pool too)."""
        self._bulk.append((ids, names, values))

    def table_of(self, ads: Sequence[Any], sources: Sequence[Any], names: Optional[Sequence[Any]] = None) -> AdTable:
        """The table of ``ads`` (this cycle's annotated copies of the slot ads ``sources``,
        of the slots ``names``), continuing the last one where the rows are the same."""
        old = self.table
        if old is None or len(old.pool.strings) > _POOL_LIMIT:
            table, row_of = AdTable(ads), None
        else:
            source, dirty, changed, given, row_of, ids = self._changes(ads, sources, names)
            table = old.follow(ads, source, dirty, changed, given, ids)
        self.table, self._row_of = table, row_of
        self._sources = list(sources)
        self._names = list(names) if names is not None else []
        self._notes, self._bulk = {}, []
        return table

    def _changes(
        self, ads: Sequence[Any], sources: Sequence[Any], names: Optional[Sequence[Any]]
    ) -> tuple[
        np.ndarray,
        np.ndarray,
        dict[str, np.ndarray],
        dict[str, tuple[np.ndarray, np.ndarray, tuple]],
        "_Ids",
        tuple[np.ndarray, np.ndarray],
    ]:
        """What :meth:`AdTable.follow` needs: each row's row last time, the rows to read
        again whole, the rows whose entry under a name may differ and the values known of
        some (see :meth:`_noted_all`), and each new row by its copy's id, for next time;
        and the ids of the copies that leave the rows and of those that join them (each
        found by the rows holding the same copy, at C speed).
        A row whose copy is a row of the last table
        holds what it held but the names noted; any other copy is compared with last
        time's row of its slot (by name, else by slot ad; see :func:`_row_changes`),
        unless that row's copy was noted."""
        assert self.table is not None
        n, old = len(ads), self.table.ads
        mine = _Ids(np.fromiter(map(id, ads), np.uint64, n))
        last = self._row_of if self._row_of is not None else _Ids(np.fromiter(map(id, old), np.uint64, len(old)))
        rows = last.rows_of(mine)
        joined = mine.ids[rows < 0]  # copies not rows of the last table
        hit = np.zeros(len(old), bool)
        hit[rows[rows >= 0]] = True
        left = last.ids[~hit]  # (a copy listed twice before may still be a row: kept)
        left = left[mine.find(left) < 0]
        dirty = np.zeros(n, bool)
        if not mine.unique:  # a copy listed twice: its later rows are read again whole
            again = mine.find(mine.ids) != np.arange(n)
            rows[again], dirty[again] = -1, True
        touched: dict[str, list[int]] = {}
        notes = list(self._notes.values())
        found = mine.find(np.fromiter((id(copy) for copy, _ in notes), np.uint64, len(notes))).tolist()
        for (copy, noted), i in zip(notes, found):
            if i < 0 or rows[i] < 0 or ads[i] is not copy:
                continue
            if noted is None:
                rows[i], dirty[i] = -1, True
            else:
                for name in noted:
                    touched.setdefault(name, []).append(i)
        changed, given, noted_rows = self._noted_all(mine, last, rows)
        rest = np.flatnonzero((rows < 0) & ~dirty).tolist()
        if rest:
            taken = np.zeros(len(old), bool) if noted_rows is None else noted_rows  # noted: not what it read
            taken[rows[rows >= 0]] = True
            self._match(ads, sources, names, rest, rows, dirty, touched, taken)
        for name, at in touched.items():
            mask = changed.get(name)
            if mask is None:
                mask = changed[name] = np.zeros(n, bool)
            mask[at] = True
            known = given.get(name)
            if known is not None:  # a row also noted alone is read
                alone = np.zeros(n, bool)
                alone[at] = True
                kept = ~alone[known[0]]
                given[name] = (known[0][kept], known[1][kept], known[2])
        return rows, dirty, changed, given, mine, (left, joined)

    def _noted_all(
        self, mine: "_Ids", last: "_Ids", rows: np.ndarray
    ) -> tuple[dict[str, np.ndarray], dict[str, tuple[np.ndarray, np.ndarray, tuple]], Optional[np.ndarray]]:
        """The rows (of ``mine``) of the copies noted together (:meth:`note_all`) that
        continue a row of the last table (``last``), under each name noted, as masks, found
        at C speed; under each name whose rows were all noted with their values, once each,
        those rows and their values (see :func:`_given`); and the last table's rows whose
        copies were noted (None: none was)."""
        changed: dict[str, np.ndarray] = {}
        known: dict[str, Optional[list[tuple[np.ndarray, Any]]]] = {}
        lengths = [len(copies) for copies, _, _ in self._bulk]
        if not lengths:
            return changed, {}, None
        noted = _Ids(
            np.concatenate(
                [c if type(c) is np.ndarray else np.fromiter(map(id, c), np.uint64, len(c)) for c, _, _ in self._bulk]
            )
        )
        found = np.split(mine.find_all(noted), np.cumsum(lengths)[:-1].tolist())
        for (_, names, values), at in zip(self._bulk, found):
            at = at[at >= 0]
            at = at[rows[at] >= 0]
            for k, name in enumerate(names):
                mask = changed.get(name)
                if mask is None:
                    mask = changed[name] = np.zeros(len(rows), bool)
                    known[name] = []
                elif mask[at].any():
                    known[name] = None  # a row noted twice (cycles without a table): read
                parts = known[name]
                if parts is not None:
                    if values is None:
                        known[name] = None
                    else:
                        parts.append((at, values[k]))
                mask[at] = True
        return changed, {name: _given(parts) for name, parts in known.items() if parts}, noted.find_all(last) >= 0

    def _match(
        self,
        ads: Sequence[Any],
        sources: Sequence[Any],
        names: Optional[Sequence[Any]],
        rest: list[int],
        rows: np.ndarray,
        dirty: np.ndarray,
        touched: dict[str, list[int]],
        taken: np.ndarray,
    ) -> None:
        """Find last time's row of each new copy at ``rest`` (by its slot's name when the
        names are known, else by its slot ad), not ``taken`` by another row, and the names
        whose entries differ, into ``rows`` and ``touched``; a copy without such a row is
        read again whole (``dirty``).  Only the rows not ``taken`` yet are looked up by
        name (most rows continue by their copies: a dict of every name would cost more
        than the few rows looked up)."""
        assert self.table is not None
        old, notes, before_src = self.table.ads, self._notes, self._sources
        free = np.flatnonzero(~taken).tolist()  # in row order: a name listed twice finds its last free row
        if names is not None:
            keys, row_of = names, dict(zip(map(self._names.__getitem__, free), free))
        else:
            keys, row_of = list(map(id, sources)), dict(zip(map(id, map(before_src.__getitem__, free)), free))
        for i in rest:
            r = row_of.get(keys[i])
            if r is None or taken[r] or id(old[r]) in notes:
                dirty[i] = True
                continue
            differ = _row_changes(old[r], before_src[r], ads[i], sources[i])
            if differ is None:
                dirty[i] = True
                continue
            taken[r] = True
            rows[i] = r
            for name in differ:
                touched.setdefault(name, []).append(i)


class _Ids:
    """The rows of a list of objects, found by the objects' ids at C speed: ``ids`` (each
    row's object's id), sorted once (in row order where an id is listed twice)."""

    __slots__ = ("ids", "keys", "at", "unique")

    def __init__(self, ids: np.ndarray) -> None:
        order = np.argsort(ids)
        keys = ids[order]
        self.unique = len(keys) < 2 or not bool((keys[1:] == keys[:-1]).any())
        if not self.unique:
            order = np.argsort(ids, kind="stable")
            keys = ids[order]
        self.ids, self.keys, self.at = ids, keys, order

    def find(self, ids: np.ndarray) -> np.ndarray:
        """The row of each of ``ids`` (int64; its first row when it is listed twice), -1
        where it is not listed."""
        order = np.argsort(ids)
        return self._found(ids[order], order, False)

    def find_all(self, other: "_Ids") -> np.ndarray:
        """:meth:`find` of every row's object of ``other``."""
        return self._found(other.keys, other.at, False)

    def rows_of(self, other: "_Ids") -> np.ndarray:
        """The row of each row's object of ``other`` here (its last row when it is listed
        twice), -1 where it is not listed."""
        return self._found(other.keys, other.at, True)

    def _found(self, wanted: np.ndarray, order: np.ndarray, last: bool) -> np.ndarray:
        """The rows of the ids ``wanted`` (sorted: searched in one sweep), in the order
        ``order`` (each id's place in the answer)."""
        out = np.full(len(wanted), -1, np.int64)
        if not len(wanted) or not len(self.keys):
            return out
        pos = np.searchsorted(self.keys, wanted, "right" if last else "left")
        if last:
            pos -= 1
        np.clip(pos, 0, len(self.keys) - 1, out=pos)
        hit = self.keys[pos] == wanted
        out[order[hit]] = self.at[pos[hit]]
        return out


def _given(parts: list[tuple[np.ndarray, Any]]) -> tuple[np.ndarray, np.ndarray, tuple]:
    """From lists of rows that hold one value each: the rows, the list each row is of, and
    the value of each list (as :meth:`classad.columnar.AdTable.follow` takes them)."""
    rows = np.concatenate([at for at, _ in parts])
    which = np.repeat(np.arange(len(parts)), [len(at) for at, _ in parts])
    return rows, which, tuple(value for _, value in parts)


def _row_changes(before: Any, before_src: Any, after: Any, after_src: Any) -> Optional[list[str]]:
    """The names whose entries may differ between the copy ``before`` of the slot ad
    ``before_src`` and the copy ``after`` of ``after_src``: in what the copies add, or in
    the slot ads; None when either is not such a copy (it is read again whole)."""
    added_before, added_after = _added(before, before_src), _added(after, after_src)
    if added_before is None or added_after is None:
        return None
    out = [] if added_before is added_after else _differing(added_before, added_after)
    if before_src is not after_src:
        a, b = before_src._attrs, after_src._attrs
        if type(a) is SharedAttrs and type(b) is SharedAttrs and _item(a, 0) is _item(b, 0):
            _values_differing(_own_names(_item(a, 0)), _item(a, _OWN), _item(b, _OWN), out)  # most rewrites
        else:
            out += _stored_differing(a, b)
    return out


def _added(ad: Any, source: Any) -> Optional[dict]:
    """What the copy ``ad`` holds beyond its slot ad ``source`` (lower-case name -> entry),
    None when it is not such a copy (then its row is read again whole)."""
    if type(ad) is not NegotiationAd:
        return None
    attrs: Any = ad._attrs
    base = source._attrs
    if attrs.base is not base and (type(base) is not dict or len(attrs.base) != len(base)):
        return None
    return attrs.own  # type: ignore[no-any-return]


def _differing(before: dict, after: dict) -> list[str]:
    """The names whose entry differs between two copies' added entries."""
    if before is after:
        return []
    if before.keys() == after.keys():
        return [
            name
            for name, entry in after.items()
            if before[name] is not entry and not same_entry(before[name][1], entry[1])
        ]
    out = [name for name, entry in after.items() if name not in before or not same_entry(before[name][1], entry[1])]
    out.extend(name for name in before if name not in after)
    return out


def _stored_differing(a: Any, b: Any) -> list[str]:
    """The lower-case names whose stored values (:meth:`SharedAttrs.plain`) may differ
    between two slot ads' storages ``a`` and ``b``: names only one holds, and values not
    the same (:func:`_same_stored`).  Two compacted ads are compared value by value at C
    speed (only their own values when they keep the same places, else every value, see
    :func:`_full` and :func:`_pair_plan`); only values not the very same object are
    looked at one by one."""
    if a is b:
        return []
    if type(a) is not SharedAttrs or type(b) is not SharedAttrs:
        keys = dict.fromkeys(a.keys())
        keys.update(dict.fromkeys(b.keys()))
        return [k for k in keys if k not in a or k not in b or not _same_stored(plain_of(a, k), plain_of(b, k))]
    va, vb = _item(a, 0), _item(b, 0)
    out: list[str] = []
    if va is vb:  # the same places kept: the template's values are the same too
        names, xa, xb = _own_names(va), _item(a, _OWN), _item(b, _OWN)
    elif va.layout is vb.layout:
        names, xa, xb = va.layout.keys, _full(va, a), _full(vb, b)
    else:
        names, only, get_a, get_b = _pair_plan(va.layout, vb.layout)
        out.extend(only)
        xa, xb = get_a(_full(va, a)), get_b(_full(vb, b))
    _values_differing(names, xa, xb, out)
    return out


def _values_differing(names: Sequence[str], xa: tuple, xb: tuple, out: list[str]) -> None:
    """Append to ``out`` the ``names`` whose values in ``xa`` and ``xb`` (one per name, in
    order) are not the same (:func:`_same_stored`), found at C speed but for the values
    not the very same object."""
    for k in compress(range(len(xa)), map(is_not, xa, xb)):
        x, y = xa[k], xb[k]
        t = type(x)  # _same_stored, inlined (~2.6k values a steady 10k cycle)
        if (
            t is not type(y)
            or t not in _BARE
            or x != y
            or (t is float and math.copysign(1.0, x) != math.copysign(1.0, y))
        ):
            out.append(names[k])


def _own_names(variant: Variant) -> tuple[str, ...]:
    """The names of the places the ads of ``variant`` keep themselves, in the order of
    their values (remembered per variant)."""
    hit = _OWN_NAMES.get(id(variant))
    if hit is None or hit[0] is not variant.source:
        if len(_OWN_NAMES) > _PLAN_LIMIT:
            _OWN_NAMES.clear()
        hit = _OWN_NAMES[id(variant)] = (
            variant.source,
            tuple(map(variant.layout.keys.__getitem__, variant.own_places)),
        )
    return hit[1]


def _full(variant: Variant, attrs: SharedAttrs) -> tuple:
    """The stored value of an ad of ``variant`` (its storage ``attrs``) at each place of
    its layout, in place order, gathered at C speed (the getter remembered per variant)."""
    hit = _FULL.get(id(variant))
    if hit is None or hit[0] is not variant.source:
        template = _plain_template(variant.layout)
        base = 1 + len(variant.own_places)  # the template's values follow the ad's own ones
        getter = _getter([s if s else base + p for p, s in enumerate(variant.source)])
        if len(_FULL) > _PLAN_LIMIT:
            _FULL.clear()
        hit = _FULL[id(variant)] = (variant.source, getter, template)
    return hit[1](_item(attrs, _ALL) + hit[2])  # type: ignore[no-any-return]


def _plain_template(layout: Layout) -> tuple:
    """The plain forms of ``layout``'s template values, in place order (remembered per
    layout: the variants of a layout come and go, ~130 new ones a steady 10k cycle)."""
    hit = _TEMPLATES.get(id(layout))
    if hit is None or hit[0] is not layout:
        if len(_TEMPLATES) > _PLAN_LIMIT:
            _TEMPLATES.clear()
        hit = _TEMPLATES[id(layout)] = (layout, tuple(map(plain_form, layout.template)))
    return hit[1]


def _pair_plan(la: Layout, lb: Layout) -> tuple[tuple[str, ...], list[str], Any, Any]:
    """For ads of the layouts ``la`` and ``lb``: the names both hold, the names only one
    holds, and the getters of the values of those both hold from each one's
    :func:`_full` values.  Remembered per pair."""
    key = (id(la), id(lb))
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is la and hit[1] is lb:
        return hit[2]  # type: ignore[no-any-return]
    common = [k for k in la.keys if k in lb.place]
    only = [k for k in la.keys if k not in lb.place] + [k for k in lb.keys if k not in la.place]
    plan = (
        tuple(common),
        only,
        _getter([la.place[k] for k in common]),
        _getter([lb.place[k] for k in common]),
    )
    if len(_PLANS) > _PLAN_LIMIT:
        _PLANS.clear()
    _PLANS[key] = (la, lb, plan)
    return plan


def _getter(at: list[int]) -> Callable[[tuple], tuple]:
    """A function giving the items at ``at`` of a tuple, as a tuple."""
    if len(at) == 1:
        (i,) = at
        return lambda t: (t[i],)
    if not at:
        return lambda t: ()
    return itemgetter(*at)  # type: ignore[return-value]


def _same_stored(x: Any, y: Any) -> bool:
    """Whether two stored values give a column the same row: the same object, or plain
    literals of the same type and value (a float to the bit, its sign too)."""
    if x is y:
        return True
    t = type(x)
    if t is not type(y) or t not in _BARE:
        return False
    if t is float:
        return bool(x == y) and math.copysign(1.0, x) == math.copysign(1.0, y)
    return bool(x == y)


def same_entry(x: Any, y: Any) -> bool:
    """Whether two entries' nodes give a column the same row: the same node, or literals
    of the same type and value (a float to the bit)."""
    if x is y:
        return True
    if type(x) is not ast.Literal or type(y) is not ast.Literal:
        return False
    u, v = x.value, y.value
    if u is v:
        return True
    t = type(u)
    if t is not type(v) or t not in (bool, int, float, str):
        return False
    if t is float:
        return u == v and math.copysign(1.0, u) == math.copysign(1.0, v)
    return bool(u == v)


__all__ = ["TableLine", "same_entry"]
