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
    return knob_rank_single(col).astype(np.float64)


def knob_rank_single(col: Column) -> np.ndarray:
    """:func:`knob_rank_array` in single precision, which holds each of its values bit for
    bit (what a matchmaker keeps of a knob rank over every row)."""
    kind = _one_kind(col)
    if kind == K_INT or kind == K_BOOL:
        # Every 64-bit integer is within single precision's range: rounding is all there is
        # (through a double first, as every number is).
        return col.i.astype(np.float64).astype(np.float32)
    # The reals' payload rounded (the other rows' are written below).
    reals = col.f if kind == K_REAL or col._f is not None else np.zeros(len(col.kind))
    with np.errstate(over="ignore", invalid="ignore"):
        single = reals.astype(np.float32)
        # A real just past the range would round to its largest number: infinity instead.
        # (Looked for when the largest or smallest payload is not within it, NaN included.)
        if len(reals) and not (reals.max() <= _FLT_MAX and reals.min() >= -_FLT_MAX):
            big = (np.abs(reals) > _FLT_MAX) & ~np.isinf(reals)
            single[big] = np.copysign(np.inf, reals[big])
    if kind != K_REAL:
        k = col.kind
        ints = np.flatnonzero((k == K_INT) | (k == K_BOOL))
        single[ints] = col.i[ints].astype(np.float64).astype(np.float32)
        single[(k < K_BOOL) | (k > K_REAL)] = -np.inf  # not a number
    return single


__all__ = ["knob_rank_array", "knob_rank_single", "rank_array", "true_mask", "K_BOOL", "K_INT", "K_REAL"]
