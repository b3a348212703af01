"""The columnar slot table carried from one cycle of a simulation to the next.

A cycle's table rows are its slots' annotated copies (:class:`NegotiationAd`).  A copy is
its slot ad (never modified: a slot whose ad changes gets a new ad object) plus what the
cycle adds (``RemoteUserPrio``, ``Requirements`` from ``NegotiatorRequirements``...).  A
simulation keeps each copy for the next cycle and rewrites its added entries in place
when they change (:mod:`matchmaker.cycle.slot_carry`), and says which (:meth:`TableLine.note`);
a copy made anew holds the same entries as last cycle's copy of the same slot ad wherever
the added entries are the same.  :class:`TableLine` finds, for each new row, last cycle's
row of its copy or of its slot ad and the added entries that differ, and hands that to
:meth:`classad.columnar.AdTable.follow`, which re-reads only those rows and keeps the
shared results (see docs/architecture.md, the columnar engine).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from classad import ast
from classad.columnar import AdTable

from .ephemeral import NegotiationAd

# Carried tables are made afresh past this many interned strings (the pool only grows).
_POOL_LIMIT = 2_000_000


class TableLine:
    """The last table of a run of cycles, with each row's slot ad, and the copies rewritten
    in place since (:meth:`note`)."""

    def __init__(self) -> None:
        self.table: Optional[AdTable] = None
        self._sources: list[Any] = []
        # id(copy) -> (copy, lower-case names rewritten in place, None for anything)
        self._notes: dict[int, tuple[Any, Optional[tuple[str, ...]]]] = {}

    def note(self, copy: Any, names: Optional[tuple[str, ...]]) -> None:
        """Say that the entries ``names`` of ``copy`` (an annotated copy, maybe a row of the
        last table) were rewritten in place; None: the copy may differ anywhere."""
        hit = self._notes.get(id(copy))
        if hit is not None and hit[0] is copy:
            names = None if names is None or hit[1] is None else hit[1] + names
        self._notes[id(copy)] = (copy, names)

    def table_of(self, ads: Sequence[Any], sources: Sequence[Any]) -> AdTable:
        """The table of ``ads`` (this cycle's annotated copies of the slot ads ``sources``),
        continuing the last one where the rows are the same."""
        old = self.table
        if old is None or len(old.pool.strings) > _POOL_LIMIT:
            table = AdTable(ads)
        else:
            table = old.follow(ads, *self._changes(ads, sources))
        self.table = table
        self._sources = list(sources)
        self._notes = {}
        return table

    def _changes(
        self, ads: Sequence[Any], sources: Sequence[Any]
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """What :meth:`AdTable.follow` needs: each row's row last time, the rows to read
        again whole, and the rows whose added entry under a name differs.  A row whose copy
        is a row of the last table holds what it held but the names noted; a new copy of a
        slot ad of the last table is compared with that row's copy, unless that was noted."""
        assert self.table is not None
        n, old, notes = len(ads), self.table.ads, self._notes
        row_of_copy = {id(ad): r for r, ad in enumerate(old)}
        row_of: Optional[dict[int, int]] = None
        source = np.full(n, -1, np.int64)
        dirty = np.zeros(n, bool)
        touched: dict[str, list[int]] = {}
        used: set[int] = set()
        for i, ad in enumerate(ads):
            r = row_of_copy.get(id(ad))
            if r is not None:
                hit = notes.get(id(ad))
                if r in used or (hit is not None and hit[1] is None):
                    dirty[i] = True
                    continue
                used.add(r)
                source[i] = r
                for name in hit[1] if hit is not None else ():  # type: ignore[union-attr]
                    touched.setdefault(name, []).append(i)
                continue
            if row_of is None:
                row_of = {id(src): r for r, src in enumerate(self._sources)}
            src = sources[i]
            r = row_of.get(id(src))
            if r is None or r in used or id(old[r]) in notes:
                dirty[i] = True
                continue
            before, after = _added(old[r], self._sources[r]), _added(ad, src)
            if before is None or after is None:
                dirty[i] = True
                continue
            used.add(r)
            source[i] = r
            for name in _differing(before, after):
                touched.setdefault(name, []).append(i)
        changed = {}
        for name, rows in touched.items():
            mask = np.zeros(n, bool)
            mask[rows] = True
            changed[name] = mask
        return source, dirty, changed


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
