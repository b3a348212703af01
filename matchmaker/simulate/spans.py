"""The claim spans of a simulation: which principal held which slot, with what weight, when.

A run keeps one span per claim for its whole length (some 450,000 a simulated day at
10,000 slots), so :class:`ClaimSpans` keeps them as columns: the slot and customer names
as numbers into a table of the names, the numbers in arrays of doubles.  Reading one
gives a :class:`ClaimSpan` made afresh (a copy: changing it changes nothing kept).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union, overload

import numpy as np


@dataclass(slots=True)
class ClaimSpan:
    """A slot claimed by one principal from ``start`` to ``end`` (None: still claimed)."""

    slot: str
    customer: str
    weight: float
    start: float
    end: Optional[float] = None

    def charge(self, until: float) -> float:
        """Weighted slot-seconds of the claim up to ``until``."""
        end = self.end if self.end is not None else until
        return self.weight * max(0.0, min(end, until) - self.start)


class _Numbers:
    """A column of numbers: Python floats in an array of doubles, None at the places of
    ``missing``.  Any other value (an ``int``, say) turns it into a list that keeps
    every value as it was given."""

    __slots__ = ("values", "missing")

    def __init__(self) -> None:
        self.values: Union[array, list[Any]] = array("d")
        self.missing: set[int] = set()

    def append(self, v: Any) -> None:
        values = self.values
        if type(values) is array:
            if type(v) is float:
                values.append(v)
                return
            if v is None:
                self.missing.add(len(values))
                values.append(math.nan)
                return
            self.values = values = self.as_list()
            self.missing = set()
        values.append(v)

    def as_list(self) -> list[Any]:
        """Every value, None at the missing places."""
        out = list(self.values)
        for k in self.missing:
            out[k] = None
        return out

    def __getitem__(self, k: int) -> Any:
        return None if k in self.missing else self.values[k]

    def doubles(self) -> Optional[np.ndarray]:
        """The values as a numpy array when they are all floats (None otherwise)."""
        if type(self.values) is not array or self.missing:
            return None
        return np.frombuffer(self.values, dtype=np.float64)

    def taken(self, order: np.ndarray) -> "_Numbers":
        """The values at the places ``order``, in that order."""
        out = _Numbers()
        values = self.values
        if type(values) is array:
            out.values = array("d", np.frombuffer(values, dtype=np.float64)[order].tobytes())
            if self.missing:  # the new place of each old one
                place = np.empty(len(values), dtype=np.intp)
                place[order] = np.arange(len(order))
                out.missing = {int(place[k]) for k in self.missing}
        else:
            out.values = [values[k] for k in order.tolist()]
        return out


class ClaimSpans(Sequence[ClaimSpan]):
    """A sequence of :class:`ClaimSpan` kept as columns (see the module docstring)."""

    __slots__ = ("_names", "_number", "_slot", "_customer", "_weight", "_start", "_end")

    def __init__(self, spans: Iterable[ClaimSpan] = ()) -> None:
        self._names: list[str] = []  # each name once, numbered by its place
        self._number: dict[str, int] = {}
        self._slot, self._customer = array("i"), array("i")
        self._weight, self._start, self._end = _Numbers(), _Numbers(), _Numbers()
        for span in spans:
            self.append(span)

    def _name(self, name: str) -> int:
        k = self._number.get(name)
        if k is None:
            k = self._number[name] = len(self._names)
            self._names.append(name)
        return k

    def append(self, span: ClaimSpan) -> None:
        """Keep ``span`` (its values as they are now) at the end."""
        self._slot.append(self._name(span.slot))
        self._customer.append(self._name(span.customer))
        self._weight.append(span.weight)
        self._start.append(span.start)
        self._end.append(span.end)

    def __len__(self) -> int:
        return len(self._slot)

    @overload
    def __getitem__(self, k: int) -> ClaimSpan: ...

    @overload
    def __getitem__(self, k: slice) -> list[ClaimSpan]: ...

    def __getitem__(self, k: Union[int, slice]) -> Union[ClaimSpan, list[ClaimSpan]]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        n = len(self._slot)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("claim span index out of range")
        names = self._names
        return ClaimSpan(names[self._slot[k]], names[self._customer[k]], self._weight[k], self._start[k], self._end[k])

    def __iter__(self) -> Iterator[ClaimSpan]:
        return map(self.__getitem__, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ClaimSpans):
            return len(self) == len(other) and all(map(ClaimSpan.__eq__, self, other))
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ClaimSpans({list(self)!r})"

    def by_start(self) -> "ClaimSpans":
        """The spans ordered by ``(start, slot)``, those equal in both in their order here
        (what ``sorted(spans, key=lambda s: (s.start, s.slot))`` gives)."""
        order = self._start_order()
        out = ClaimSpans()
        out._names, out._number = self._names, self._number
        out._slot = array("i", np.frombuffer(self._slot, dtype=np.intc)[order].tobytes())
        out._customer = array("i", np.frombuffer(self._customer, dtype=np.intc)[order].tobytes())
        out._weight, out._start, out._end = (c.taken(order) for c in (self._weight, self._start, self._end))
        return out

    def _start_order(self) -> np.ndarray:
        """The places of the spans in ``(start, slot)`` order, stable."""
        n, names = len(self), self._names
        starts = self._start.doubles()
        if starts is None or bool(np.isnan(starts).any()):  # not all floats: Python compares them
            slot, start = self._slot, self._start
            return np.array(sorted(range(n), key=lambda k: (start[k], names[slot[k]])), dtype=np.intp)
        rank = np.empty(len(names), dtype=np.intp)  # each name's place in string order
        rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
        return np.lexsort((rank[np.frombuffer(self._slot, dtype=np.intc)], starts))


__all__ = ["ClaimSpan", "ClaimSpans"]
