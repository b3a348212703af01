"""Type predicates: ``isUndefined``, ``isError``, ``isString``, ``isInteger``, ...

Each takes one argument, evaluates it and answers whether its value has exactly
that type.  They never propagate Undefined or Error, and there is no promotion:
``isInteger(true)`` and ``isBoolean(1)`` are both false (the reference manual
claims otherwise; the library does not).
"""

from __future__ import annotations

from typing import Any

from ..values import ERROR, UNDEFINED, AbsTime, ListValue, RelTime
from .common import is_ad
from .registry import builtin


@builtin("isUndefined", 1, 1)
def is_undefined(ctx: Any, v: Any) -> bool:
    """True iff the argument is Undefined: ``isUndefined(x)`` with no ``x`` is true."""
    return v is UNDEFINED


@builtin("isError", 1, 1)
def is_error(ctx: Any, v: Any) -> bool:
    """True iff the argument is Error: ``isError(1/0)`` is true."""
    return v is ERROR


@builtin("isString", 1, 1)
def is_string(ctx: Any, v: Any) -> bool:
    """True iff the argument is a string: ``isString("1")`` is true, ``isString(1)`` false."""
    return type(v) is str


@builtin("isInteger", 1, 1)
def is_integer(ctx: Any, v: Any) -> bool:
    """True iff the argument is an integer: ``isInteger(true)`` is false."""
    return type(v) is int


@builtin("isReal", 1, 1)
def is_real(ctx: Any, v: Any) -> bool:
    """True iff the argument is a real: ``isReal(1.0)`` is true, ``isReal(1)`` false."""
    return type(v) is float


@builtin("isBoolean", 1, 1)
def is_boolean(ctx: Any, v: Any) -> bool:
    """True iff the argument is a boolean: ``isBoolean(1)`` is false."""
    return type(v) is bool


@builtin("isList", 1, 1)
def is_list(ctx: Any, v: Any) -> bool:
    """True iff the argument is a list: ``isList({})`` is true."""
    return type(v) is ListValue


@builtin("isClassAd", 1, 1)
def is_classad(ctx: Any, v: Any) -> bool:
    """True iff the argument is a ClassAd: ``isClassAd([a=1])`` is true."""
    return is_ad(v)


@builtin("isAbsTime", 1, 1)
def is_abstime(ctx: Any, v: Any) -> bool:
    """True iff the argument is an absolute time: ``isAbsTime(absTime(0))`` is true."""
    return type(v) is AbsTime


@builtin("isRelTime", 1, 1)
def is_reltime(ctx: Any, v: Any) -> bool:
    """True iff the argument is a relative time: ``isRelTime(relTime(5))`` is true.

    ``relTime("5")`` with a literal string is folded at parse time into a
    literal that evaluates to a *real*, so ``isRelTime(relTime("5"))`` is false.
    """
    return type(v) is RelTime
