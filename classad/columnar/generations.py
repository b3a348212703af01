"""How the rows of a table moved and changed from one generation to the next.

A table can be carried to a successor over a new list of ads
(:meth:`~classad.columnar.table.AdTable.follow`) when most rows are the same ads as
before: the slots of a simulation's next cycle.  Each :class:`Step` records, for every
row of the new generation, the row of the previous one it continues (-1 for a new row),
the rows that may differ in any attribute, and for each attribute the rows whose entry
may differ.  A result stored over the rows of an older generation (a shared memo entry,
a row-only value) is brought to the current one by :meth:`History.bring`: which stored
row each current row reads, and which rows must be computed again because an attribute
their value read may have changed there.  What a value read is its *dependencies*: the
attribute names (lower-case) whose columns the evaluation touched, or :data:`ANY` when
it read the ads some other way (the scalar evaluator's fallback reads whatever it needs).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

# A dependency on every attribute of a row.
ANY = "*any*"

# Steps kept: a result older than this many generations is dropped rather than brought up to date.
DEFAULT_DEPTH = 16


class Step:
    """From one generation to the next: where each new row comes from, what changed."""

    __slots__ = ("before", "source", "dirty", "changed", "touched")

    def __init__(self, before: int, source: np.ndarray, dirty: np.ndarray, changed: dict[str, np.ndarray]) -> None:
        self.before = before  # rows of the previous generation
        self.source = source  # new row -> previous row, -1 for a new row
        self.dirty = dirty | (source < 0)  # rows that may differ in every attribute
        self.changed = changed  # attribute -> rows whose entry may differ (beyond ``dirty``)
        touched = self.dirty.copy()
        for rows in changed.values():
            touched |= rows
        self.touched = touched  # rows that may differ in some attribute

    def stale(self, deps: frozenset) -> np.ndarray:
        """The new rows where a value that read the attributes ``deps`` may differ."""
        if ANY in deps:
            return self.touched
        out = self.dirty
        for name in deps:
            rows = self.changed.get(name)
            if rows is not None:
                out = out | rows
        return out


class History:
    """The last steps of a line of tables, numbered by generation."""

    def __init__(self, depth: int = DEFAULT_DEPTH) -> None:
        self.depth = depth
        self.steps: list[Step] = []
        self.first = 0  # the generation the oldest kept step starts from
        self._brought: dict[tuple[int, frozenset], Any] = {}  # bring()'s answers since the last step
        self._moved: dict[int, Optional[np.ndarray]] = {}  # generation -> its rows' row map
        self._stale: dict[tuple[int, frozenset], Optional[np.ndarray]] = {}  # by the deps that changed
        self._positions: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id(stale mask) -> (it, positions)
        self._clipped: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id(row map) -> (it, clipped)

    @property
    def generation(self) -> int:
        """The current generation (0 for a table never carried)."""
        return self.first + len(self.steps)

    def add(self, step: Step) -> None:
        self._brought = {}
        self._clipped = {}
        self._moved = {}
        self._stale = {}
        self._positions = {}
        self.steps.append(step)
        if len(self.steps) > self.depth:
            del self.steps[0]
            self.first += 1

    def bring(self, generation: int, deps: frozenset) -> Optional[tuple[Optional[np.ndarray], Optional[np.ndarray]]]:
        """For a result stored at ``generation`` that read ``deps``: ``(rows, stale)``, the
        stored row each current row reads (None: the same rows) and the current rows to
        compute again (None: none); None when the result is too old to bring (or a
        generation between had no rows: nothing would be kept).  The arrays are shared
        by the results that ask the same: never to be written."""
        if generation < self.first:
            return None
        key = (generation, deps)
        if key in self._brought:
            return self._brought[key]  # type: ignore[no-any-return]
        out = self._bring(generation, deps)
        self._brought[key] = out
        return out

    def clipped(self, rows: Optional[np.ndarray]) -> Optional[np.ndarray]:
        """A row map of :meth:`bring` with its new rows (-1) pointing at row 0 (they are
        computed again), made once for every result brought with the same map."""
        if rows is None:
            return None
        seen = self._clipped.get(id(rows))
        if seen is not None and seen[0] is rows:
            return seen[1]
        out = np.maximum(rows, 0)
        self._clipped[id(rows)] = (rows, out)
        return out

    def positions(self, stale: np.ndarray) -> np.ndarray:
        """The positions of a stale mask of :meth:`bring`, found once for every result
        brought with the same mask: one array shared by them, read-only."""
        seen = self._positions.get(id(stale))
        if seen is None or seen[0] is not stale:
            at = np.nonzero(stale)[0]
            at.flags.writeable = False
            seen = self._positions[id(stale)] = (stale, at)
        return seen[1]

    def _bring(self, generation: int, deps: frozenset) -> Optional[tuple[Optional[np.ndarray], Optional[np.ndarray]]]:
        steps = self.steps[generation - self.first :]
        if any(step.before == 0 for step in steps):
            return None
        # The row map depends on the generation alone, the stale rows on the names read
        # that changed somewhere on the way (usually none: only the rows that are new).
        if generation not in self._moved:
            self._moved[generation] = self._rows_since(steps)
        changed = frozenset(d for d in deps if d == ANY or any(d in step.changed for step in steps))
        key = (generation, changed)
        if key not in self._stale:
            self._stale[key] = self._stale_since(steps, changed)
        return self._moved[generation], self._stale[key]

    @staticmethod
    def _rows_since(steps: list[Step]) -> Optional[np.ndarray]:
        rows: Optional[np.ndarray] = None
        for step in steps:
            src = step.source
            rows = src.copy() if rows is None else np.where(src >= 0, rows[np.maximum(src, 0)], -1)
        return rows

    @staticmethod
    def _stale_since(steps: list[Step], deps: frozenset) -> Optional[np.ndarray]:
        stale: Optional[np.ndarray] = None
        for step in steps:
            fresh = step.stale(deps)
            stale = fresh if stale is None else stale[np.maximum(step.source, 0)] | fresh
        if stale is not None and not stale.any():
            stale = None
        return stale


__all__ = ["ANY", "DEFAULT_DEPTH", "History", "Step"]
