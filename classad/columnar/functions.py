"""Vector forms of the numeric conversion functions (``int``, ``real``, ``floor``,
``ceiling``, ``round``) for rows holding numbers; other rows are left to the caller.

Same rules as :mod:`classad.functions.types` / :mod:`classad.functions.math`: a real
converted to an integer truncates (or rounds) and gives -9223372036854775808 when
NaN, infinite or out of the 64-bit range; bool counts as 0/1.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .column import K_BOOL, K_INT, K_REAL, Column

_TWO63 = 9223372036854775808.0
_I64_MIN = np.int64(-(1 << 63))


def _to_int64(x: np.ndarray) -> np.ndarray:
    bad = np.isnan(x) | (x >= _TWO63) | (x < -_TWO63)
    safe = np.where(bad, 0.0, x)
    return np.where(bad, _I64_MIN, safe.astype(np.int64))


def _integral(round_fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[Column], tuple[Column, np.ndarray]]:
    def apply(a: Column) -> tuple[Column, np.ndarray]:
        k = a.kind
        isint, isbool, isreal = k == K_INT, k == K_BOOL, k == K_REAL
        out = Column.empty(len(k), a.pool, K_INT)
        with np.errstate(invalid="ignore"):
            vals = _to_int64(round_fn(np.where(isreal, a.f, 0.0)))
        out.i[:] = np.where(isreal, vals, a.i)
        return out, ~(isint | isbool | isreal)

    return apply


def _real(a: Column) -> tuple[Column, np.ndarray]:
    k = a.kind
    isint, isbool, isreal = k == K_INT, k == K_BOOL, k == K_REAL
    out = Column.empty(len(k), a.pool, K_REAL)
    out.f[:] = np.where(isreal, a.f, a.i.astype(np.float64))
    return out, ~(isint | isbool | isreal)


#: function name -> (module that must implement it, vector form)
NUMERIC: dict[str, tuple[str, Callable[[Column], tuple[Column, np.ndarray]]]] = {
    "int": ("classad.functions.types", _integral(np.trunc)),
    "real": ("classad.functions.types", _real),
    "floor": ("classad.functions.math", _integral(np.floor)),
    "ceiling": ("classad.functions.math", _integral(np.ceil)),
    "ceil": ("classad.functions.math", _integral(np.ceil)),
    "round": ("classad.functions.math", _integral(np.rint)),
}

__all__ = ["NUMERIC"]
