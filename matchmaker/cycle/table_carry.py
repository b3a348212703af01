"""The columnar slot table carried from one cycle of a simulation to the next.

A cycle's table rows are its slots' annotated copies (:class:`NegotiationAd`), made anew
each cycle.  A copy is its slot ad (never modified: a slot whose ad changes gets a new
ad object) plus what the cycle adds (``RemoteUserPrio``, ``Requirements`` from
``NegotiatorRequirements``...).  So a row holds the same entries as last cycle's row of the
same slot ad wherever the added entries are the same; :class:`TableLine` finds, for each
new row, last cycle's row of its slot ad and the added entries that differ, and hands that
to :meth:`classad.columnar.AdTable.follow`, which re-reads only those rows and keeps the
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
    """The last table of a run of cycles, with each row's slot ad and added entries."""

    def __init__(self) -> None:
        self.table: Optional[AdTable] = None
        self._sources: list[Any] = []
        self._added: list[Optional[dict]] = []

    def table_of(self, ads: Sequence[Any], sources: Sequence[Any]) -> AdTable:
        """The table of ``ads`` (this cycle's annotated copies of the slot ads ``sources``),
        continuing the last one where the rows are the same."""
        old = self.table
        added = [_added(ad, src) for ad, src in zip(ads, sources)]
        if old is None or len(old.pool.strings) > _POOL_LIMIT:
            table = AdTable(ads)
        else:
            table = old.follow(ads, *self._changes(sources, added))
        self.table = table
        self._sources = list(sources)
        self._added = added
        return table

    def _changes(
        self, sources: Sequence[Any], added: list[Optional[dict]]
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """What :meth:`AdTable.follow` needs: each row's row last cycle, the rows to read
        again whole, and the rows whose added entry under a name differs."""
        n = len(sources)
        row_of = {id(src): r for r, src in enumerate(self._sources)}
        before_of = self._added
        source = np.full(n, -1, np.int64)
        dirty = np.zeros(n, bool)
        touched: dict[str, list[int]] = {}
        used: set[int] = set()
        for i, src in enumerate(sources):
            r = row_of.get(id(src))
            after = added[i]
            before = None if r is None or r in used else before_of[r]
            if before is None or after is None or r is None:
                dirty[i] = True
                continue
            used.add(r)
            source[i] = r
            if before is after:
                continue
            if before.keys() == after.keys():
                for name, entry in after.items():
                    old = before[name]
                    if old is not entry and old[1] is not entry[1] and not _same(old[1], entry[1]):
                        touched.setdefault(name, []).append(i)
            else:
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
    out = [name for name, entry in after.items() if name not in before or not _same(before[name][1], entry[1])]
    out.extend(name for name in before if name not in after)
    return out


def _same(x: Any, y: Any) -> bool:
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


__all__ = ["TableLine"]
