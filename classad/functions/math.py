"""Math: ``floor``, ``ceiling``/``ceil``, ``round``, ``pow``, ``quantize``, ``random``.

Rounding functions return an integer argument unchanged and otherwise convert
with ``real()`` rules first (so ``floor("2.5")`` is 2), then cast the C way:
out-of-range or NaN results become -9223372036854775808.  ``round`` is C
``rint``: halves go to the even neighbour.  Undefined arguments are Error here,
unlike most functions.  ``pow`` and ``quantize`` keep integers when both
operands are integers and otherwise compute in doubles with C ``pow``/``ceil``.
"""

from __future__ import annotations

import math
from typing import Any

from ..values import ERROR, UNDEFINED, ListValue, real_to_int, wrap64
from .common import c_div, iter_list, to_real, wrap32
from .registry import builtin

_INT_MAX = (1 << 31) - 1


def _real_arg(v: Any) -> Any:
    r = to_real(v)
    return ERROR if r is UNDEFINED else r


def _round_with(v: Any, fn: Any) -> Any:
    if type(v) is int:
        return v
    r = _real_arg(v)
    if r is ERROR:
        return ERROR
    if r != r or r in (math.inf, -math.inf):
        return real_to_int(r)
    return real_to_int(fn(r))


@builtin("floor", 1, 1)
def floor_(ctx: Any, v: Any) -> Any:
    """Largest integer not above the argument: ``floor(-2.5)`` is -3, ``floor(7)`` is 7."""
    return _round_with(v, math.floor)


@builtin("ceiling", 1, 1, aliases=("ceil",))
def ceiling_(ctx: Any, v: Any) -> Any:
    """Smallest integer not below the argument: ``ceiling(2.1)`` is 3 (alias ``ceil``)."""
    return _round_with(v, math.ceil)


@builtin("round", 1, 1)
def round_(ctx: Any, v: Any) -> Any:
    """Nearest integer, halves to even (C ``rint``): ``round(2.5)`` is 2, ``round(3.5)`` 4."""
    return _round_with(v, round)


def c_pow(x: float, y: float) -> float:
    """C ``pow``: overflow gives an infinity and a domain error NaN instead of raising."""
    try:
        return math.pow(x, y)
    except OverflowError:
        odd = y == math.floor(y) and math.fmod(y, 2.0) != 0.0
        return -math.inf if (x < 0 and odd) else math.inf
    except ValueError:
        if x == 0.0 and y < 0:
            odd = y == math.floor(y) and math.fmod(y, 2.0) != 0.0
            return -math.inf if (math.copysign(1.0, x) < 0 and odd) else math.inf
        return math.nan


@builtin("pow", 2, 2)
def pow_(ctx: Any, base: Any, exp: Any) -> Any:
    """``base`` to the power ``exp``: ``pow(2, 10)`` is 1024, ``pow(2, -1)`` is 0.5.

    With two integers and ``exp >= 0`` the result is the integer C computes as
    ``(long long)(pow(b, e) + 0.5)``, which truncates negative results toward
    zero (``pow(-2, 3)`` is -7, as in the reference).  Otherwise both convert
    with ``real()`` rules (Undefined is Error) and the result is a real.
    """
    if type(base) is int and type(exp) is int and exp >= 0:
        return real_to_int(c_pow(float(base), float(exp)) + 0.5)
    rb, re_ = _real_arg(base), _real_arg(exp)
    if rb is ERROR or re_ is ERROR:
        return ERROR
    return c_pow(rb, re_)


def _ceil(x: float) -> float:
    if x != x or x in (math.inf, -math.inf):
        return x
    r = float(math.ceil(x))
    return math.copysign(0.0, x) if r == 0.0 else r


@builtin("quantize", 2, 2)
def quantize(ctx: Any, a: Any, b: Any) -> Any:
    """Round ``a`` up to a multiple of ``b``: ``quantize(7, 4)`` is 8, ``quantize(6.8, 1.2)`` 7.2.

    With a list, the first element not below ``a`` is returned as it is
    (``quantize(3, {2, 4, 8})`` is 4); past the end the last element is used as
    the step.  A zero step returns ``a`` unchanged.
    """
    rval = _real_arg(a)
    if rval is ERROR:
        return ERROR
    if type(b) is ListValue:
        base: Any = 0.0
        rbase = 0.0
        for elem in iter_list(b, ctx):
            base = elem
            conv = to_real(elem)
            if conv is UNDEFINED or conv is ERROR:
                return ERROR
            rbase = conv
            if rbase >= rval:
                return elem
        b = base
    else:
        conv = to_real(b)
        if conv is UNDEFINED or conv is ERROR:
            return ERROR
        rbase = conv
    if type(b) is int:
        if b == 0:
            return a
        if type(a) is int:
            return wrap64(c_div(wrap64(a + b - 1), b) * b)
        return _ceil(rval / float(b)) * float(b)
    if -1e-8 <= rbase <= 1e-8:
        return a
    return _ceil(rval / rbase) * rbase


@builtin("random", 0, 1)
def random_(ctx: Any, *args: Any) -> Any:
    """A random number below the bound: ``random(10)`` is an int in [0, 10), ``random()`` a real.

    The bound is read through a C ``int``; a bound that is not positive is a
    hard evaluation failure in the reference, Error here.  Other types are Error.
    """
    bound = args[0] if args else 1.0
    rng = ctx.state.random
    if type(bound) is int:
        m = wrap32(bound)
        if m <= 0:
            return ERROR
        return rng.randrange(_INT_MAX + 1) % m
    if type(bound) is float:
        if bound <= 0:
            return ERROR
        return bound * (rng.randrange(_INT_MAX + 1) / float(_INT_MAX))
    return ERROR
