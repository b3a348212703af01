"""Results over every row of a cycle's slot table, shared by the builds of many requests.

A candidate-list build (:mod:`.columnar_match`) evaluates some expressions over the slots
that read little or nothing of the request: the slots' ``Rank`` and ``CurrentRank``,
``PREEMPTION_REQUIREMENTS`` (often the submitter's priority alone),
``NEGOTIATOR_PRE_JOB_RANK``, ``NEGOTIATOR_POST_JOB_RANK``, ``PREEMPTION_RANK``, and the
job's ``Rank`` (one expression for many jobs).  What a build makes of one of them -- a
rank per row, where it is an error, where it is true; for the preemption tests of the
claimed slots, which read the first three, each row's preemption state, whether it stays
a candidate, whether PREEMPTION_REQUIREMENTS refused it and whether its Rank is an error,
per submitter and mode, made of the slots' ranks kept for every submitter alike -- is
computed for every row of the
table and kept for the cycle with the values it read of the request (every name it looked
up, through :attr:`~matchmaker.cycle.ephemeral.NegotiationAd.reads`); a later build whose
request gives the same values to those names takes its rows of the arrays instead of
evaluating again.  Within a cycle the table's rows do not change (they only leave it) and
the rest of what the expressions read (the slots' frozen priorities, the cycle's clock) is
fixed, as for :mod:`.build_reuse`.

An expression is evaluated on rows its build did not ask for only when that cannot draw a
random number (:mod:`.draws`); its arrays are kept only when the evaluation drew none and
called no function whose value changes during the cycle (``ResourcesInUseBy*``).  The
arrays of a cycle are bounded in bytes, the bound growing with the rows of a large table
(a table's arrays each hold every row; a submitter's preemption tests alone take ~4 bytes
a row): once it is reached, builds evaluate on their own rows, as they would without this.  Ranks are kept in single precision where
that holds them exactly.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Optional, TypeVar

import numpy as np

from .build_reuse import ByReads

# The bytes of arrays one cycle keeps at most, or more for a table of many rows ...
BUDGET = 8 * 1024 * 1024
# ... this many bytes a row (a 60,000-slot backlog keeps ~20 MiB: ~50 submitters' preemption
# tests, ~40 knob ranks; a 16,000-row cycle stays within BUDGET).
PER_ROW = 512
# How many arrays of one kind are kept before they must have been taken again as often.
_TRIAL = 8
# How many results made of kept arrays (:meth:`RowResults.derived`) are held at most.
_DERIVED = 64

_Made = TypeVar("_Made")


class RowResults:
    """One cycle's arrays over every slot row, by what they compute and what they read."""

    def __init__(self, budget: int = BUDGET, per_row: int = PER_ROW) -> None:
        self.budget = budget  # grows to ``per_row`` bytes a row with the first arrays kept
        self.per_row = per_row
        self.size = 0
        self.hits = 0
        self._by = ByReads()
        self._kept: dict[Hashable, int] = {}  # per key: how many arrays were kept
        self._taken: dict[Hashable, int] = {}  # per key: how many times they were taken
        self._derived: dict[tuple[int, ...], tuple[tuple, Any]] = {}  # see :meth:`derived`
        # What a build made over every row for others of the cycle to start from, by what
        # it is of (see columnar_match._RequestColumns.knob_rank_whole).
        self.bases: dict[Hashable, Any] = {}

    def get(self, key: Hashable, req: Any) -> Optional[tuple[Optional[np.ndarray], ...]]:
        """The arrays kept under ``key`` for a request that gives the values they read
        (read through ``req``, so that a log of its reads sees them), else None."""
        known, arrays = self._by.get(key, req)
        if not known:
            return None
        self.hits += 1
        self._taken[key] = self._taken.get(key, 0) + 1
        return arrays  # type: ignore[no-any-return]

    def worth(self, key: Hashable) -> bool:
        """Whether arrays under ``key`` may still be kept this cycle: there is room, and
        past a few, those kept have been taken again (else every request reads other
        values, and each build is better off evaluating its own rows)."""
        kept = self._kept.get(key, 0)
        return self.size < self.budget and (kept < _TRIAL or self._taken.get(key, 0) >= kept)

    def derived(self, sources: tuple[Any, ...], make: Callable[[], _Made]) -> _Made:
        """``make()``, made once per ``sources`` (objects this cycle keeps, by identity: what
        is made of them is the same as long as they are): kept with them, at most
        :data:`_DERIVED` results."""
        key = tuple(map(id, sources))
        hit = self._derived.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], sources)):
            return hit[1]  # type: ignore[no-any-return]
        if len(self._derived) >= _DERIVED:
            self._derived.clear()
        made = make()
        self._derived[key] = (sources, made)
        return made

    def put(self, key: Hashable, req: Any, read: list[str], arrays: tuple[Optional[np.ndarray], ...]) -> None:
        """Keep ``arrays``, computed from ``req`` reading the names ``read`` (each over every row)."""
        if self._by.put(key, req, read, arrays):
            held = [a for a in arrays if a is not None]
            self.size += sum(a.nbytes for a in held)
            if held:
                self.budget = max(self.budget, self.per_row * len(held[0]))
        self._kept[key] = self._kept.get(key, 0) + 1


class Kept(tuple):  # type: ignore[type-arg]
    """Arrays in :func:`kept_form`, marked with whether their reals hold no NaN (found
    once, when first asked: a build's sort keys taken of them need no look for one)."""

    _nan_free: Optional[bool] = None

    @property
    def nan_free(self) -> bool:
        """Whether no real of the arrays is NaN."""
        free = self._nan_free
        if free is None:
            # The minimum is NaN when any value is.
            free = self._nan_free = not any(
                a is not None and a.dtype.kind == "f" and len(a) and np.isnan(a.min()) for a in self
            )
        return free


def nan_free(arrays: Any) -> bool:
    """Whether ``arrays`` are marked as holding no NaN (:class:`Kept`; other tuples are not)."""
    return type(arrays) is Kept and arrays.nan_free


def kept_form(arrays: tuple[np.ndarray, ...]) -> Kept:
    """``arrays`` as they are kept: a mask with no row set as None, reals that single
    precision holds bit for bit in single precision (a rank usually is: the knob ranks
    are rounded to it, and slot and job ranks are mostly small integers), integers
    between -128 and 127 in a byte."""
    out: list[Optional[np.ndarray]] = []
    for a in arrays:
        if a.dtype == bool:
            out.append(a if a.any() else None)
        elif a.dtype == np.float64:
            with np.errstate(over="ignore"):
                single = a.astype(np.float32)
            exact = bool((single.astype(np.float64).view(np.int64) == a.view(np.int64)).all())
            out.append(single if exact else a)
        elif a.dtype == np.int64 and (not len(a) or (int(a.min()) >= -128 and int(a.max()) <= 127)):
            out.append(a.astype(np.int8))  # small codes (a preemption state)
        else:
            out.append(a)
    return Kept(out)


def at(arrays: tuple[Optional[np.ndarray], ...], rows: np.ndarray, widen: bool = True) -> tuple[np.ndarray, ...]:
    """The values of the rows at the positions ``rows`` (integers) of each array in
    :func:`kept_form`, as they were computed (``widen`` False: reals kept in single
    precision left so, each the same number).  Picked with ``take`` and told apart by their
    type code (a build asks for its rows of several arrays: ~1,300 calls a steady 10k cycle,
    where ``a[rows]`` and comparing dtypes with types cost ~1 us more a call)."""
    out = []
    for a in arrays:
        if a is None:
            out.append(np.zeros(len(rows), dtype=bool))
            continue
        code = a.dtype.char
        if code == "f":  # float32
            out.append(a.take(rows).astype(np.float64) if widen else a.take(rows))
        elif code == "b":  # int8
            out.append(a.take(rows).astype(np.int64))
        else:
            out.append(a.take(rows))
    return tuple(out)


__all__ = ["BUDGET", "Kept", "RowResults", "at", "kept_form", "nan_free"]
