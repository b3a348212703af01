"""Turning a column into what a matchmaker compares: a truth mask and rank arrays."""

from __future__ import annotations

import numpy as np

from .column import K_BOOL, K_INT, K_REAL, Column

_FLT_MAX = 3.4028234663852886e38


def true_mask(col: Column) -> np.ndarray:
    """Rows whose value counts as true: true, or a non-zero int or real (NaN included)."""
    return col.is_true()


def _one_kind(col: Column) -> int:
    """The kind of every row, or -1 when the rows differ (or there are none)."""
    k = col.kind
    if not len(k):
        return -1
    first = int(k[0])
    return first if bool((k == first).all()) else -1


def rank_array(col: Column) -> np.ndarray:
    """A float per row for a rank: int and real as themselves, bool as 0/1, else 0.0."""
    kind = _one_kind(col)
    if kind == K_INT or kind == K_BOOL:
        return col.i.astype(np.float64)  # integers have no -0.0
    if kind == K_REAL:
        out = col.f.copy()
    else:
        vals, isnum = col.numbers()
        out = np.where(isnum, vals, 0.0)
    out[out == 0.0] = 0.0  # a zero rank is +0.0 whatever its sign
    return out


def knob_rank_array(col: Column) -> np.ndarray:
    """A float per row for PRE/POST_JOB_RANK and PREEMPTION_RANK: the number rounded to
    single precision (beyond its range: infinity), -inf when the value is not a number."""
    kind = _one_kind(col)
    if kind == K_INT or kind == K_BOOL:
        # Every 64-bit integer is within single precision's range: rounding is all there is
        # (through a double first, as every number is).
        return col.i.astype(np.float64).astype(np.float32).astype(np.float64)
    vals, isnum = (col.f, None) if kind == K_REAL else col.numbers()
    with np.errstate(over="ignore"):
        single = vals.astype(np.float32).astype(np.float64)
    big = np.abs(vals) > _FLT_MAX
    single = np.where(big & ~np.isinf(vals), np.copysign(np.inf, vals), single)
    return single if isnum is None else np.where(isnum, single, -np.inf)


__all__ = ["knob_rank_array", "rank_array", "true_mask", "K_BOOL", "K_INT", "K_REAL"]
