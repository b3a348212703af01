"""Types: the predicates ``isUndefined`` ... ``isRelTime`` and the conversions
``int``, ``real``, ``string`` and ``bool``.

Predicates take one argument and answer whether its value has exactly that
type.  They never propagate Undefined or Error, and there is no promotion:
``isInteger(true)`` and ``isBoolean(1)`` are both false (the reference manual
claims otherwise; the library does not).

Conversions follow the reference library's value converters: strings are read
with C ``strtod`` (a numeric *prefix*, leading white space skipped, hexadecimal
and ``inf``/``nan`` accepted), reals truncate toward zero, relative times are
read through a C ``int`` (whole seconds), and a real becomes a string the way
the unparser prints it (``%1.15E``).  ``absTime`` and ``relTime`` live in
:mod:`classad.functions.time`.
"""

from __future__ import annotations

from typing import Any

from ..values import ERROR, UNDEFINED, AbsTime, ListValue, RelTime
from .common import is_ad, reltime_secs_int, to_int, to_real, to_string
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


# --- conversions ------------------------------------------------------------------


@builtin("int", 1, 1)
def int_(ctx: Any, v: Any) -> Any:
    """Integer value of the argument: ``int("  42abc")`` is 42, ``int(-3.9)`` is -3.

    Undefined stays Undefined; Error, lists, ads and strings with no number are Error.
    A real out of the 64-bit range (or NaN) becomes -9223372036854775808, as on x86.
    """
    return to_int(v)


@builtin("real", 1, 1)
def real_(ctx: Any, v: Any) -> Any:
    """Real value of the argument: ``real("1e3")`` is 1000.0, ``real("INF")`` infinity.

    Undefined stays Undefined; Error, lists, ads and unreadable strings are Error.
    """
    return to_real(v)


@builtin("string", 1, 1)
def string_(ctx: Any, v: Any) -> Any:
    """String form of the argument: ``string(1.5)`` is ``"1.500000000000000E+00"``.

    Lists and ads are unparsed (``string({1,"a"})`` is ``{ 1,"a" }``); a relative
    time prints its whole seconds (``string(relTime(90))`` is ``"01:30"``).
    """
    return to_string(v)


@builtin("bool", 1, 1)
def bool_(ctx: Any, v: Any) -> Any:
    """Boolean value: non-zero numbers are true, ``"TRUE"``/``"false"`` (any case) convert.

    Any other string is Undefined (``bool("yes")``); lists, ads, absolute times and
    Error are Error; a relative time is true when its whole seconds are non-zero.
    """
    t = type(v)
    if t is bool:
        return v
    if t is int:
        return v != 0
    if t is float:
        return v != 0.0
    if t is str:
        low = v.lower() if v.isascii() else None
        if low == "true":
            return True
        if low == "false":
            return False
        return UNDEFINED
    if t is RelTime:
        return reltime_secs_int(v) != 0
    if v is UNDEFINED:
        return UNDEFINED
    if v is ERROR or t is AbsTime or t is ListValue or is_ad(v):
        return ERROR
    return ERROR
