"""What each operator does to its operand values: one table shared by every backend.

The propagation rule is stated once, here, for the *strict* operators
(arithmetic, comparison, bitwise, shifts, unary): if any operand is Error the
result is Error; otherwise if any operand is Undefined the result is Undefined.
The compiler applies it before calling a function of :data:`BINARY` or
:data:`UNARY`, so those functions only ever see data values.

Operators that do NOT follow the rule live in the compiler, because they are
lazy or inspect Undefined/Error themselves: ``&&``, ``||``, ``is``/``isnt``
(``=?=``/``=!=``), the ternary ``?:`` and Elvis ``?:``.  :func:`meta_equal`
implements ``is``.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from .errors import set_last_error
from .values import (
    ERROR,
    INT64_MIN,
    UNDEFINED,
    AbsTime,
    ListValue,
    RelTime,
    compare_strings,
    compare_strings_nocase,
    real_result,
    wrap64,
)

_NUM = (int, float, bool)


def _num(v: Any) -> Any:
    """bool → int for arithmetic and comparison; other values unchanged."""
    return int(v) if type(v) is bool else v


def _is_num(v: Any) -> bool:
    t = type(v)
    return t is int or t is float or t is bool


# ---- arithmetic -----------------------------------------------------------------


def _time_arith(op: str, a: Any, b: Any) -> Any:
    """Arithmetic involving absolute/relative times (everything else with times is Error)."""
    ta, tb = type(a), type(b)
    if op == "+":
        if ta is AbsTime and tb is RelTime:
            return AbsTime(a.secs + b.secs, a.offset)
        if ta is RelTime and tb is AbsTime:
            return AbsTime(a.secs + b.secs, b.offset)
        if ta is RelTime and tb is RelTime:
            return RelTime(a.secs + b.secs)
    elif op == "-":
        if ta is AbsTime and tb is AbsTime:
            return RelTime(a.secs - b.secs)
        if ta is AbsTime and tb is RelTime:
            return AbsTime(a.secs - b.secs, a.offset)
        if ta is RelTime and tb is RelTime:
            return RelTime(a.secs - b.secs)
    elif op in ("*", "/"):
        if ta is RelTime and tb in (int, float):
            if op == "*":
                return RelTime(a.secs * b)
            if b == 0:
                return ERROR
            return RelTime(a.secs / b)
        if op == "*" and tb is RelTime and ta in (int, float):
            return RelTime(a * b.secs)
    return ERROR


def _arith(op: str, int_fn: Callable[[int, int], Any], real_fn: Callable[[float, float], Any]):
    def apply(a: Any, b: Any) -> Any:
        ta, tb = type(a), type(b)
        if ta is bool:
            a, ta = int(a), int
        if tb is bool:
            b, tb = int(b), int
        if ta is int and tb is int:
            return int_fn(a, b)
        if (ta is int or ta is float) and (tb is int or tb is float):
            return real_fn(float(a), float(b))
        if ta is AbsTime or ta is RelTime or tb is AbsTime or tb is RelTime:
            return _time_arith(op, a, b)
        return ERROR

    return apply


def _int_div(a: int, b: int) -> Any:
    if b == 0:
        return ERROR
    if a == INT64_MIN and b == -1:
        return (1 << 63) - 1  # HTCondor's documented answer for the one overflowing case
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int_mod(a: int, b: int) -> Any:
    if b == 0:
        return ERROR
    if b == -1:
        return 0
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _real_div(a: float, b: float) -> Any:
    if b == 0.0:
        if a == 0.0 or a != a:
            return math.nan
        return ERROR if (a > 0) == (math.copysign(1.0, b) > 0) else -math.inf
    return real_result(a / b)


def _real_mul(a: float, b: float) -> Any:
    try:
        return real_result(a * b)
    except OverflowError:  # pragma: no cover - float multiplication does not raise
        return ERROR


BINARY_ARITH = {
    "+": _arith("+", lambda a, b: wrap64(a + b), lambda a, b: real_result(a + b)),
    "-": _arith("-", lambda a, b: wrap64(a - b), lambda a, b: real_result(a - b)),
    "*": _arith("*", lambda a, b: wrap64(a * b), _real_mul),
    "/": _arith("/", _int_div, _real_div),
    # % with any real operand is Error in HTCondor.
    "%": _arith("%", _int_mod, lambda a, b: ERROR),
}


# ---- comparison -------------------------------------------------------------------


def _compare(a: Any, b: Any) -> Any:
    """-1/0/1 for two comparable values, None for unordered reals (NaN), Error otherwise."""
    ta, tb = type(a), type(b)
    if ta is str and tb is str:
        return compare_strings_nocase(a, b)
    if _is_num(a) and _is_num(b):
        x, y = _num(a), _num(b)
        if type(x) is float or type(y) is float:
            x, y = float(x), float(y)
            if x != x or y != y:
                return None
        return (x > y) - (x < y)
    if ta is tb and (ta is AbsTime or ta is RelTime):
        return (a.secs > b.secs) - (a.secs < b.secs)
    if (ta is str) is not (tb is str) and (ta in _SCALARS or tb in _SCALARS):
        set_last_error("strings can only be compared to strings")
    return ERROR


# Non-string values whose comparison with a string explains itself in lastError().
_SCALARS = frozenset({bool, int, float, AbsTime, RelTime})


def _cmp_op(test: Callable[[int], bool], nan_result: bool):
    def apply(a: Any, b: Any) -> Any:
        c = _compare(a, b)
        if c is ERROR:
            return ERROR
        if c is None:
            return nan_result
        return test(c)

    return apply


BINARY_COMPARE = {
    "==": _cmp_op(lambda c: c == 0, False),
    "!=": _cmp_op(lambda c: c != 0, True),
    "<": _cmp_op(lambda c: c < 0, False),
    "<=": _cmp_op(lambda c: c <= 0, False),
    ">": _cmp_op(lambda c: c > 0, False),
    ">=": _cmp_op(lambda c: c >= 0, False),
}


def meta_equal(a: Any, b: Any) -> Any:
    """``a is b`` (``=?=``): same type and same value, strings case-sensitively.

    Undefined is Undefined and Error is Error; two lists or two ads give Error.
    """
    ta, tb = type(a), type(b)
    if ta is not tb:
        if a is UNDEFINED or a is ERROR or b is UNDEFINED or b is ERROR:
            return a is b
        return False
    if a is UNDEFINED or a is ERROR:
        return a is b
    if ta is str:
        return compare_strings(a, b) == 0
    if ta is float:
        return a == b
    if ta is int or ta is bool:
        return a == b
    if ta is AbsTime:
        return a.secs == b.secs and a.offset == b.offset
    if ta is RelTime:
        return a.secs == b.secs
    return ERROR  # lists, ads


# ---- bitwise and shifts (integers only; bool is not accepted) ----------------------


def _int_only(fn: Callable[[int, int], int]):
    def apply(a: Any, b: Any) -> Any:
        if type(a) is int and type(b) is int:
            return fn(a, b)
        return ERROR

    return apply


def _shift_left(a: int, n: int) -> int:
    return wrap64(a << (n & 63))


def _shift_right(a: int, n: int) -> int:
    # x86 semantics as the C++ library runs: a non-negative value shifts by count mod 64;
    # a negative one shifts min(64, count) times and a negative count does nothing.
    if a >= 0:
        return a >> (n & 63)
    if n <= 0:
        return a
    return a >> min(n, 64)


def _shift_right_logical(a: int, n: int) -> int:
    if a >= 0:
        return a >> (n & 63)
    # HTCondor masks the arithmetic shift with ~(-1 << (64 - n)), both shifts taken mod 64.
    mask = ~wrap64(-1 << ((64 - n) & 63))
    return wrap64((a >> (n & 63)) & mask)


BINARY_BITWISE = {
    "&": _int_only(lambda a, b: a & b),
    "|": _int_only(lambda a, b: a | b),
    "^": _int_only(lambda a, b: a ^ b),
    "<<": _int_only(_shift_left),
    ">>": _int_only(_shift_right),
    ">>>": _int_only(_shift_right_logical),
}

#: Every strict binary operator: spelling → function of two data values.
BINARY: dict[str, Callable[[Any, Any], Any]] = {**BINARY_ARITH, **BINARY_COMPARE, **BINARY_BITWISE}


# ---- unary --------------------------------------------------------------------------


def _neg(v: Any) -> Any:
    t = type(v)
    if t is int:
        return wrap64(-v)
    if t is float:
        return real_result(-v)
    if t is RelTime:
        return RelTime(-v.secs)
    return ERROR


def _pos(v: Any) -> Any:
    t = type(v)
    if t is int or t is float or t is RelTime:
        return v
    return ERROR


def _not(v: Any) -> Any:
    t = type(v)
    if t is bool:
        return not v
    if t is int:
        return v == 0
    if t is float:
        return v == 0.0
    return ERROR


def _invert(v: Any) -> Any:
    if type(v) is int:
        return ~v
    return ERROR


#: Every unary operator (all strict): spelling → function of one data value.
UNARY: dict[str, Callable[[Any], Any]] = {"-": _neg, "+": _pos, "!": _not, "~": _invert}

__all__ = ["BINARY", "UNARY", "meta_equal", "ListValue"]
