"""Some rows of a table, once per fixed ad: one evaluation standing for several.

A shared result (:mod:`classad.columnar.memo`) is kept per set of values read of the
fixed ad: a slot's ``START`` once per job owner, say.  When the table is carried to
its next generation every one of those results has the same rows to compute again,
and computing them once per owner costs the same walk of the expression each time.
:class:`StackedRows` lays those rows out once per owner, one after the other, as the
rows of a table of their own, so that one walk computes them all, each copy with its
owner's values read of the fixed ad (:class:`~classad.columnar.compile.Run` keeps the
link from a copy to its fixed ad's values).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .generations import ANY
from .table import AdTable, AttrColumn


class StackedRows:
    """The rows ``at`` of ``table``, ``copies`` times over: row ``j * len(at) + i`` is row
    ``at[i]`` in copy ``j``.  It answers what an evaluation asks of a table (columns, the
    string pool, the attributes read) and is never carried, shared or read ad by ad."""

    nested = True  # no shared results nor row-only values of its own
    row_only = None
    ads = ()

    def __init__(self, table: AdTable, at: np.ndarray, copies: int) -> None:
        self.table = table
        self.width = len(at)
        self.base = np.tile(at, copies)
        self.n = len(self.base)
        self.all_rows = np.arange(self.n, dtype=np.intp)
        self.pool = table.pool
        self.watch: list[set] = []
        self._columns: dict[str, AttrColumn] = {}

    def copy_of(self, rows: np.ndarray) -> np.ndarray:
        """Which copy each of ``rows`` belongs to."""
        return rows // self.width  # type: ignore[no-any-return]

    def column(self, lname: str) -> AttrColumn:
        """The attribute ``lname`` over the stacked rows (the table's column, picked)."""
        for names in self.watch:
            names.add(lname)
        col = self._columns.get(lname)
        if col is None:
            whole = self.table.column_unwatched(lname)
            base = self.base
            col = AttrColumn(whole.values.take(base), whole.holds[base], whole.group[base], whole.nodes)
            col.variants = whole.variants
            self._columns[lname] = col
        return col

    def read_any(self) -> None:
        for names in self.watch:
            names.add(ANY)

    def owns(self, col: Any) -> bool:
        return any(col is c.values for c in self._columns.values())


__all__ = ["StackedRows"]
