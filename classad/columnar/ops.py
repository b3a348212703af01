"""ClassAd operator semantics on whole columns.

Each function takes :class:`~classad.columnar.column.Column` operands of equal
length and returns ``(result, fallback)``: ``fallback`` is a boolean mask of
the rows this module does not decide (times, lists, ads, string ordering, bit
shifts) -- the caller evaluates those rows with the scalar evaluator -- or
None.  The rules are those of :mod:`classad.operators`: Error beats Undefined
for the strict operators, bool promotes to int, int to real, integer
arithmetic wraps at 64 bits, real results of +infinity are Error.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .column import K_BOOL, K_ERROR, K_INT, K_OTHER, K_REAL, K_STR, K_UNDEF, Column, kinds

_I64_MIN = np.int64(-(1 << 63))
_I64_MAX = np.int64((1 << 63) - 1)
Result = tuple[Column, Optional[np.ndarray]]


def _mask_or_none(m: np.ndarray) -> Optional[np.ndarray]:
    return m if m.any() else None


def _reals(c: Column) -> Any:
    """The real payload, or 0.0 when it is zero on every row (not made for the asking)."""
    f = c.f_or_none()
    return 0.0 if f is None else f


def _codes(c: Column) -> Any:
    """The string payload, or 0 when it is zero on every row (not made for the asking)."""
    s = c.s_or_none()
    return 0 if s is None else s


def uniform(c: Column) -> int:
    """The kind every row has, or -1 when the rows differ (or there are none)."""
    if c.uni >= 0:
        return c.uni
    k = c.kind
    if not len(k):
        return -1
    k0 = k[0]
    return -1 if np.count_nonzero(k != k0) else int(k0)


def truth(a: Column) -> Column:
    """The boolean-equivalent of each row: bool, Undefined or Error (strings, lists... are Error).
    A column of booleans is its own answer (returned as is, not copied)."""
    if a.uni == K_BOOL:
        return a
    k = a.kind
    if len(k) and k[0] == K_BOOL and uniform(a) == K_BOOL:
        return a
    out = Column.empty(len(k), a.pool, K_ERROR)
    out.kind[k == K_UNDEF] = K_UNDEF
    isb = (k == K_BOOL) | (k == K_INT)
    isr = k == K_REAL
    out.kind[isb | isr] = K_BOOL
    out.i[:] = np.where(isr, _reals(a) != 0.0, a.i != 0)
    return out


def _strict_start(a: Column, b: Column) -> tuple[Column, np.ndarray]:
    """The result skeleton: Error where either is Error, else Undefined where either is;
    returns it and the mask of rows where both operands are data values."""
    ka, kb = a.kind, b.kind
    err = (ka == K_ERROR) | (kb == K_ERROR)
    und = (ka == K_UNDEF) | (kb == K_UNDEF)
    out = Column.empty(len(ka), a.pool, K_ERROR)
    out.kind[und & ~err] = K_UNDEF
    return out, ~(err | und)


def _nums(c: Column) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k = c.kind
    isint = (k == K_INT) | (k == K_BOOL)
    isreal = k == K_REAL
    return isint, isreal, np.where(isreal, _reals(c), c.i.astype(np.float64))


_WRAPPING = {"+": np.add, "-": np.subtract, "*": np.multiply}


_INTEGRAL = (K_INT, K_BOOL)
_NUMBER = (K_INT, K_BOOL, K_REAL)


def arithmetic(op: str, a: Column, b: Column) -> Result:
    """``+ - * / %``."""
    wrapping = _WRAPPING.get(op)
    if wrapping is not None:
        ua, ub = uniform(a), uniform(b)
        if ua in _INTEGRAL and ub in _INTEGRAL:
            # Integers (booleans as 0/1) on every row: the 64-bit result, wrapped, on every row.
            with np.errstate(all="ignore"):
                r = wrapping(a.i, b.i)
            return Column(kinds(len(r), K_INT), r, None, None, None, a.pool, K_INT), None
        if ua in _NUMBER and ub in _NUMBER:
            return _real_arithmetic(wrapping, a, ua, b, ub), None
        if _numbers(a, ua) and _numbers(b, ub):
            return _mixed_arithmetic(wrapping, a, b), None
    out, data = _strict_start(a, b)
    other = data & ((a.kind == K_OTHER) | (b.kind == K_OTHER))
    ia, ra, fa = _nums(a)
    ib, rb, fb = _nums(b)
    both_int = data & ia & ib
    real = data & (ia | ra) & (ib | rb) & ~both_int
    x, y = a.i, b.i
    with np.errstate(all="ignore"):
        if both_int.any():
            if op == "+":
                r = x + y
                ok = both_int
            elif op == "-":
                r = x - y
                ok = both_int
            elif op == "*":
                r = x * y
                ok = both_int
            else:
                zero = y == 0
                safe_y = np.where(zero, 1, y)
                ok = both_int & ~zero
                if op == "/":
                    q = x // safe_y
                    rem = x - q * safe_y
                    q = q + ((rem != 0) & ((x < 0) != (safe_y < 0)))
                    r = np.where((x == _I64_MIN) & (safe_y == -1), _I64_MAX, q)
                else:
                    r = np.where(safe_y == -1, 0, np.fmod(x, np.where(safe_y == -1, 1, safe_y)))
            out.kind[ok] = K_INT
            out.i[ok] = r[ok]
        if real.any():
            if op == "%":
                pass  # a real operand of % is Error
            else:
                if op == "+":
                    r = fa + fb
                    ok = real
                elif op == "-":
                    r = fa - fb
                    ok = real
                elif op == "*":
                    r = fa * fb
                    ok = real
                else:
                    zero = fb == 0.0
                    r = fa / np.where(zero, 1.0, fb)
                    nan_case = zero & ((fa == 0.0) | np.isnan(fa))
                    neg_inf = zero & ~nan_case & ((fa > 0) != ~np.signbit(fb))
                    r = np.where(nan_case, np.nan, np.where(neg_inf, -np.inf, r))
                    ok = real & (~zero | nan_case | neg_inf)
                ok = ok & (r != np.inf)
                out.kind[ok] = K_REAL
                out.f[ok] = r[ok]
    return out, _mask_or_none(other)


def _numbers(c: Column, kind: int) -> bool:
    """Whether every row of ``c`` (whose uniform kind is ``kind``) is a number (bool, int, real)."""
    if kind >= 0:
        return kind in _NUMBER
    k = c.kind
    return bool(((k >= K_BOOL) & (k <= K_REAL)).all())


def _mixed_arithmetic(fn: Any, a: Column, b: Column) -> Column:
    """``+ - *`` of two columns of numbers of mixed kinds: the 64-bit result, wrapped, where
    both are integers (booleans as 0/1), else the real result, Error where it is +infinity."""
    both = (a.kind != K_REAL) & (b.kind != K_REAL)
    with np.errstate(all="ignore"):
        ints = fn(a.i, b.i)
        reals = fn(
            np.where(a.kind == K_REAL, _reals(a), a.i.astype(np.float64)),
            np.where(b.kind == K_REAL, _reals(b), b.i.astype(np.float64)),
        )
    real_ok = ~both & (reals != np.inf)
    kind = np.where(both, np.int8(K_INT), np.where(real_ok, np.int8(K_REAL), np.int8(K_ERROR)))
    return Column(kind, np.where(both, ints, 0), np.where(real_ok, reals, 0.0), None, None, a.pool)


def _real_arithmetic(fn: Any, a: Column, ua: int, b: Column, ub: int) -> Column:
    """``+ - *`` of two columns of numbers of one kind each, one of them reals: the real
    result on every row, Error where it is +infinity."""
    with np.errstate(all="ignore"):
        r = fn(a.f if ua == K_REAL else a.i.astype(np.float64), b.f if ub == K_REAL else b.i.astype(np.float64))
    n = len(r)
    ok = r != np.inf
    if ok.all():
        return Column(kinds(n, K_REAL), np.zeros(n, np.int64), r, None, None, a.pool, K_REAL)
    kind = np.where(ok, np.int8(K_REAL), np.int8(K_ERROR))
    return Column(kind, np.zeros(n, np.int64), np.where(ok, r, 0.0), None, None, a.pool)


_NAN_RESULT = {"==": False, "!=": True, "<": False, "<=": False, ">": False, ">=": False}
_CMP = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


def _numeric_payload(c: Column) -> Optional[np.ndarray]:
    """The int or real payload of a column whose rows are all numbers of one kind, with
    no NaN (None otherwise)."""
    k = uniform(c)
    if k == K_INT or k == K_BOOL:
        return c.i
    if k == K_REAL and not np.isnan(c.f).any():
        return c.f
    return None


def compare_number(op: str, a: Column, value: Any, swapped: bool) -> Optional[Column]:
    """``a op value`` (``value op a`` if ``swapped``) for a number ``value`` when every
    row of ``a`` is a number of one kind: the common case, without the general
    bookkeeping.  None when the general :func:`compare` is needed."""
    t = type(value)
    if not (t is int or t is bool or (t is float and value == value)):
        return None
    x = _numeric_payload(a)
    fn = _CMP[op]
    if x is None:
        return _compare_some_numbers(fn, a, value, swapped)
    res = fn(value, x) if swapped else fn(x, value)
    return Column.of_bools(res, a.pool)


def compare_number_bools(op: str, a: Column, value: Any, swapped: bool) -> Optional[np.ndarray]:
    """:func:`compare_number` as a boolean array, when every row of ``a`` is a number of
    one kind (no NaN) and ``value`` a number (not NaN); None otherwise."""
    t = type(value)
    if not (t is int or t is bool or (t is float and value == value)):
        return None
    x = _numeric_payload(a)
    if x is None:
        return None
    fn = _CMP[op]
    return fn(value, x) if swapped else fn(x, value)  # type: ignore[no-any-return]


def _compare_some_numbers(fn: Any, a: Column, value: Any, swapped: bool) -> Optional[Column]:
    """:func:`compare_number` of a column whose rows are numbers, Undefined and Error only
    (an attribute some rows lack): Undefined and Error rows keep their kind, as the strict
    operator gives them; None for any other column, or one holding a NaN."""
    k = a.kind
    if not len(k) or int(k.max()) > K_REAL:  # K_UNDEF < K_ERROR < K_BOOL < K_INT < K_REAL
        return None
    isreal = k == K_REAL
    res = fn(value, a.i) if swapped else fn(a.i, value)
    if isreal.any():
        f = a.f
        if np.isnan(f[isreal]).any():
            return None
        res = np.where(isreal, fn(value, f) if swapped else fn(f, value), res)
    number = k >= K_BOOL
    kind = np.where(number, np.int8(K_BOOL), k).astype(np.int8, copy=False)
    return Column(kind, (res & number).astype(np.int64), None, None, None, a.pool)


def compare(op: str, a: Column, b: Column) -> Result:
    """``== != < <= > >=`` (strings compared without regard to case)."""
    x = _numeric_payload(a)
    if x is not None:
        y = _numeric_payload(b)
        if y is not None:
            return Column.of_bools(_CMP[op](x, y), a.pool), None
    out, data = _strict_start(a, b)
    ka, kb = a.kind, b.kind
    other = data & ((ka == K_OTHER) | (kb == K_OTHER))
    ia, ra, fa = _nums(a)
    ib, rb, fb = _nums(b)
    fn = _CMP[op]
    both_int = data & ia & ib
    real = data & (ia | ra) & (ib | rb) & ~both_int
    strs = data & (ka == K_STR) & (kb == K_STR)
    res = np.zeros(len(ka), bool)
    if both_int.any():
        res |= both_int & fn(a.i, b.i)
    if real.any():
        nan = np.isnan(fa) | np.isnan(fb)
        with np.errstate(invalid="ignore"):
            res |= real & np.where(nan, _NAN_RESULT[op], fn(fa, fb))
    if strs.any():
        if op in ("==", "!="):
            fold = a.pool.folded()
            res |= strs & fn(fold[a.s], fold[b.s])
        else:
            other = other | strs
    decided = both_int | real | (strs & ~other)
    out.kind[decided] = K_BOOL
    out.i[:] = res
    return out, _mask_or_none(other)


def meta_equal(a: Column, b: Column, negate: bool) -> Result:
    """``=?=`` (``negate`` False) or ``=!=``: same type and value, strings case-sensitively."""
    ka, kb = a.kind, b.kind
    same = ka == kb
    res = np.zeros(len(ka), bool)
    res |= same & ((ka == K_UNDEF) | (ka == K_ERROR))
    res |= same & ((ka == K_INT) | (ka == K_BOOL)) & (a.i == b.i)
    res |= same & (ka == K_REAL) & (_reals(a) == _reals(b))
    res |= same & (ka == K_STR) & (_codes(a) == _codes(b))
    other = same & (ka == K_OTHER)
    out = Column.of_bools(res != negate, a.pool)
    return out, _mask_or_none(other)


def bitwise(op: str, a: Column, b: Column) -> Result:
    """``& | ^`` on integers; shifts are left to the scalar evaluator."""
    out, data = _strict_start(a, b)
    both = data & (a.kind == K_INT) & (b.kind == K_INT)
    if op in ("<<", ">>", ">>>"):
        return out, _mask_or_none(both)
    fn = {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}[op]
    out.kind[both] = K_INT
    out.i[both] = fn(a.i, b.i)[both]
    return out, None


def unary(op: str, a: Column) -> Result:
    """``- + ! ~``."""
    k = a.kind
    out = Column.empty(len(k), a.pool, K_ERROR)
    out.kind[k == K_UNDEF] = K_UNDEF
    other = None
    isint, isreal = k == K_INT, k == K_REAL
    with np.errstate(all="ignore"):
        if op == "-":
            out.kind[isint] = K_INT
            out.i[:] = -a.i
            neg = -a.f
            okr = isreal & (neg != np.inf)
            out.kind[okr] = K_REAL
            out.f[:] = neg
            other = _mask_or_none(k == K_OTHER)
        elif op == "+":
            out.kind[isint] = K_INT
            out.kind[isreal] = K_REAL
            out.i[:] = a.i
            out.f[:] = a.f
            other = _mask_or_none(k == K_OTHER)
        elif op == "!":
            num = isint | isreal | (k == K_BOOL)
            out.kind[num] = K_BOOL
            out.i[:] = np.where(isreal, _reals(a) == 0.0, a.i == 0)
        else:  # "~"
            out.kind[isint] = K_INT
            out.i[:] = ~a.i
    return out, other


def is_kind(a: Column, kinds: tuple[int, ...]) -> Column:
    """True where the row's kind is one of ``kinds`` (the is* type predicates)."""
    m = np.zeros(len(a.kind), bool)
    for k in kinds:
        m |= a.kind == k
    return Column.of_bools(m, a.pool)


__all__ = ["arithmetic", "bitwise", "compare", "compare_number", "is_kind", "meta_equal", "truth", "uniform", "unary"]
