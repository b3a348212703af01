"""Conversions and comparisons shared by the built-in functions.

The reference library converts arguments with a handful of helpers
(``convertValueToStringValue``, ``convertValueToRealValue``,
``convertValueToIntegerValue``, the C ``strtod`` prefix parser) and compares
list elements with the same operator core the language uses.  Those rules are
collected here once so every function module agrees.

Several reference helpers read an integer argument through a 32-bit C ``int``
(``substr`` offsets, ``interval``, ``random``'s bound, ``absTime`` seconds);
:func:`wrap32` and :func:`trunc32` reproduce those narrowing conversions.

Comparisons mirror the reference operator core, including one visible quirk:
the numeric promotion of a comparison (bool to int, int to real) is applied to
the caller's operands *in place*, so a running ``min`` that once met a real
stays a real (``min({1, 2.5})`` is ``1.0``).  :class:`Cell` holds such a
mutable operand.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterator, Optional

from ..adcore import AdCore
from ..timetext import format_abstime, format_reltime
from ..unparse import value_to_string
from ..values import (  # the C integer helpers are re-exported for the function modules
    ERROR,
    INT32_MIN,
    INT64_MIN,
    UNDEFINED,
    AbsTime,
    ListValue,
    RelTime,
    bytes_to_string,
    c_div,
    c_mod,
    compare_strings,
    compare_strings_nocase,
    format_real,
    real_to_int,
    trunc32,
    wrap32,
    wrap64,
)

_SCALAR_TYPES = frozenset({bool, int, float, str, ListValue, AbsTime, RelTime, type(UNDEFINED)})
_C_SPACE = " \t\n\v\f\r"


# --- type tests ----------------------------------------------------------------


def is_ad(v: Any) -> bool:
    """True for an ad value (any :class:`~classad.adcore.AdCore`, the public ClassAd included)."""
    t = type(v)
    if t in _SCALAR_TYPES:
        return False
    return isinstance(v, AdCore)


def ad_node(ad: Any, lname: str) -> Any:
    """The expression node of attribute ``lname`` (folded) in ``ad`` itself, or None."""
    return ad.lookup_node(lname)


def ad_parent(ctx: Any, ad: Any) -> Any:
    """The enclosing ad of ``ad`` in this evaluation (including a match context's), or None."""
    parent_of = getattr(ctx.state, "parent_of", None)
    if parent_of is not None:
        return parent_of(ad)
    return getattr(ad, "parent", None)


def find_attr(ctx: Any, ad: Any, lname: str, partner: bool = True) -> Optional[tuple]:
    """(expression node, ad holding it) for a name looked up from ``ad`` through its
    enclosing ads (and, in compat mode, the partner ad of a match), or None."""
    cur = ad
    while cur is not None:
        node = ad_node(cur, lname)
        if node is not None:
            return node, cur
        cur = ad_parent(ctx, cur)
    state = ctx.state
    if partner and ad is not None and not getattr(state, "strict", True) and getattr(state, "target", None) is not None:
        other = state.partner(ad)
        if other is not None:
            return find_attr(ctx, other, lname, False)
    return None


def root_ad(ctx: Any, ad: Any) -> Any:
    """The outermost ad enclosing ``ad``."""
    while True:
        parent = ad_parent(ctx, ad)
        if parent is None:
            return ad
        ad = parent


def type_tag(v: Any) -> Any:
    """A tag naming the ClassAd type of ``v`` (for the meta operators ``is``/``isnt``)."""
    if v is UNDEFINED or v is ERROR:
        return v
    t = type(v)
    if t in (bool, int, float, str, AbsTime, RelTime, ListValue):
        return t
    if is_ad(v):
        return "classad"
    return t


# --- narrowing conversions (C casts on x86-64) ------------------------------------


def trunc64(x: float) -> int:
    """``(long long) x`` for a double (NaN or out of range gives INT64_MIN)."""
    return real_to_int(x)


def reltime_secs_int(v: RelTime) -> int:
    """A relative time read through ``time_t`` (the reference casts to ``int`` first)."""
    return trunc32(float(v.secs))


# --- strtod ----------------------------------------------------------------------

_DEC = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX = re.compile(r"([+-]?)0[xX]((?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+))([pP][+-]?[0-9]+)?")
_INF = re.compile(r"([+-]?)(?:infinity|inf)", re.IGNORECASE)
_NAN = re.compile(r"([+-]?)nan(?:\([0-9A-Za-z_]*\))?", re.IGNORECASE)


def strtod(s: str) -> tuple[float, int]:
    """C ``strtod``: the value of the longest numeric prefix and the characters consumed.

    Leading white space is skipped; decimal, hexadecimal (``0x1p3``), ``inf``,
    ``infinity`` and ``nan`` are read; nothing readable gives ``(0.0, 0)``.
    """
    i = 0
    n = len(s)
    while i < n and s[i] in _C_SPACE:
        i += 1
    m = _HEX.match(s, i)
    if m:
        sign, body, exp = m.group(1), m.group(2), m.group(3) or "p0"
        if body.startswith("."):
            body = "0" + body
        try:
            val = float.fromhex("0x" + body + exp)
        except OverflowError:
            val = math.inf
        return (-val if sign == "-" else val), m.end()
    m = _INF.match(s, i)
    if m:
        return (-math.inf if m.group(1) == "-" else math.inf), m.end()
    m = _NAN.match(s, i)
    if m:
        return (-math.nan if m.group(1) == "-" else math.nan), m.end()
    m = _DEC.match(s, i)
    if m:
        return float(m.group(0)), m.end()
    return 0.0, 0


_HEXDIGITS = "0123456789abcdefABCDEF"


def scan_double(s: str) -> Optional[float]:
    """``sscanf(s, "%lf")``: the number at the start of ``s``, or None when the scan fails.

    Unlike ``strtod``, glibc's ``scanf`` does not back up over a hexadecimal
    prefix with no digits
    (``"0x"`` and ``"."`` fail, as in glibc; a dangling exponent such as ``"1e"``
    is read as 1).
    """
    n = len(s)
    i = 0
    while i < n and s[i] in _C_SPACE:
        i += 1
    start = i
    if i < n and s[i] in "+-":
        i += 1
    low = s[i : i + 8].lower()
    if low.startswith("inf"):
        k = 3
        while k < len(low) and low[k] == "infinity"[k]:
            k += 1
        return strtod(s[start:])[0] if k in (3, 8) else None
    if low.startswith("nan"):
        j = i + 3
        if j < n and s[j] == "(":
            close = j + 1
            while close < n and s[close].isascii() and (s[close].isalnum() or s[close] == "_"):
                close += 1
            if close >= n or s[close] != ")":
                return None
        return strtod(s[start:])[0]
    hexa = low.startswith("0x")
    digits = _HEXDIGITS if hexa else "0123456789"
    j = i + 2 if hexa else i
    mant = 0
    while j < n and s[j] in digits:
        j += 1
        mant += 1
    if j < n and s[j] == ".":
        j += 1
        while j < n and s[j] in digits:
            j += 1
            mant += 1
    if mant == 0:
        return None
    if hexa and j < n and s[j] in "pP":
        j += 1
        if j < n and s[j] in "+-":
            j += 1
        if not (j < n and s[j] in "0123456789"):
            return None
    return strtod(s[start:])[0]


# --- value conversions -------------------------------------------------------------


def to_string(v: Any) -> Any:
    """``convertValueToStringValue``: a str, or Undefined/Error.

    Reals print as the unparser prints them (``%1.15E``, ``0.0``, ``real("NaN")``);
    absolute times as ``2020-01-02T03:04:05+01:00``; relative times as
    ``[-][D+]hh:mm:ss`` of their whole seconds; lists and ads are unparsed.
    """
    t = type(v)
    if t is str:
        return v
    if t is int:
        return str(v)
    if t is bool:
        return "true" if v else "false"
    if t is float:
        return format_real(v)
    if v is UNDEFINED or v is ERROR:
        return v
    if t is AbsTime:
        return format_abstime(v)
    if t is RelTime:
        return format_reltime(RelTime(reltime_secs_int(v)))
    return value_to_string(v)


def to_real(v: Any) -> Any:
    """``convertValueToRealValue``: a float, or Undefined/Error (strings via ``strtod``)."""
    t = type(v)
    if t is float:
        return v
    if t is int:
        return float(v)
    if t is bool:
        return 1.0 if v else 0.0
    if t is str:
        val, used = strtod(v)
        if used == 0:
            return ERROR
        return val
    if t is AbsTime:
        return float(v.secs)
    if t is RelTime:
        return float(reltime_secs_int(v))
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


def to_int(v: Any) -> Any:
    """``convertValueToIntegerValue``: an int, or Undefined/Error.

    Strings are read with ``strtod`` and truncated (``"3.9"`` is 3, ``"0x10"`` 16).
    """
    t = type(v)
    if t is int:
        return v
    if t is float:
        return trunc64(v)
    if t is bool:
        return 1 if v else 0
    if t is str:
        val, used = strtod(v)
        if used == 0:
            return ERROR
        return trunc64(val)
    if t is AbsTime:
        return wrap64(int(v.secs))
    if t is RelTime:
        return reltime_secs_int(v)
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


def from_bytes(b: bytes) -> str:
    """A string value from bytes."""
    return bytes_to_string(b)


# --- comparisons and arithmetic ----------------------------------------------------


class Cell:
    """A mutable operand: comparisons write their numeric promotions back into it."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v


_STRICT = ("<", "<=", "==", "!=", ">", ">=")


def _cmp_result(op: str, c: int) -> bool:
    if op == "<":
        return c < 0
    if op == "<=":
        return c <= 0
    if op in ("==", "is"):
        return c == 0
    if op in ("!=", "isnt"):
        return c != 0
    if op == ">":
        return c > 0
    return c >= 0


def _cmp_num(op: str, a: Any, b: Any) -> bool:
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op in ("==", "is"):
        return a == b
    if op in ("!=", "isnt"):
        return a != b
    if op == ">":
        return a > b
    return a >= b


def compare(op: str, x: Cell, y: Cell) -> Any:
    """Apply comparison ``op`` (``< <= == != > >= is isnt``) to two operand cells.

    Returns a bool, Undefined or Error, following the reference operator core;
    numeric promotions are written back into the cells.
    """
    a, b = x.v, y.v
    if op in ("is", "isnt"):
        if type_tag(a) != type_tag(b):
            return op == "isnt"
        if a is UNDEFINED or a is ERROR:
            return op == "is"
        ta = type(a)
        if ta is str:
            return _cmp_result(op, compare_strings(a, b))
        if ta in (int, float, bool):
            return _cmp_num(op, a, b)
        if ta is AbsTime:
            same = a.secs == b.secs and a.offset == b.offset
            return same if op == "is" else not same
        if ta is RelTime:
            return _cmp_num(op, a.secs, b.secs)
        return ERROR  # two lists or two ads
    if a is ERROR or b is ERROR:
        return ERROR
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    ta, tb = type(a), type(b)
    if is_ad(a) or is_ad(b) or ta is ListValue or tb is ListValue:
        return ERROR
    if ta is str or tb is str:
        if ta is not str or tb is not str:
            return ERROR
        return _cmp_result(op, compare_strings_nocase(a, b))
    if ta is AbsTime or tb is AbsTime:
        if ta is not AbsTime or tb is not AbsTime:
            return ERROR
        return _cmp_num(op, a.secs, b.secs)
    if ta is RelTime or tb is RelTime:
        if ta is not RelTime or tb is not RelTime:
            return ERROR
        return _cmp_num(op, a.secs, b.secs)
    a, b = promote(x, y)
    return _cmp_num(op, a, b)


def promote(x: Cell, y: Cell) -> tuple:
    """Numeric promotion of two bool/int/real cells, written back (``coerceToNumber``)."""
    a, b = x.v, y.v
    if type(a) is bool:
        a = x.v = int(a)
    if type(b) is bool:
        b = y.v = int(b)
    if type(a) is int and type(b) is float:
        a = x.v = float(a)
    elif type(a) is float and type(b) is int:
        b = y.v = float(b)
    return a, b


def add(x: Cell, y: Cell) -> Any:
    """``x + y`` for numbers (bool promotes); int wraps, a +INF real result is Error."""
    if x.v is ERROR or y.v is ERROR:
        return ERROR
    if x.v is UNDEFINED or y.v is UNDEFINED:
        return UNDEFINED
    a, b = promote(x, y)
    if type(a) is int:
        return wrap64(a + b)
    r = a + b
    return ERROR if r == math.inf else r


def divide_real(a: Any, n: float) -> Any:
    """``a / n`` with a real divisor (``avg``): Error stays Error, +INF is Error."""
    if a is ERROR:
        return ERROR
    if a is UNDEFINED:
        return UNDEFINED
    if type(a) is bool:
        a = int(a)
    a = float(a)
    r = a / n
    return ERROR if r == math.inf else r


def iter_list(lst: ListValue, ctx: Any) -> Iterator[Any]:
    """The element values of a list, evaluated one at a time in the list's scope."""
    return lst.iter_values(ctx.state)


def make_list(items: list) -> ListValue:
    """A list value of ready values."""
    return ListValue.of(items)


def make_ad(pairs: list) -> Any:
    """A new ad holding ``(name, value)`` pairs of plain values, in order."""
    return AdCore.from_values(pairs)


__all__ = [
    "INT32_MIN",
    "INT64_MIN",
    "Cell",
    "ad_node",
    "ad_parent",
    "add",
    "c_div",
    "c_mod",
    "compare",
    "divide_real",
    "find_attr",
    "from_bytes",
    "is_ad",
    "iter_list",
    "make_ad",
    "make_list",
    "promote",
    "reltime_secs_int",
    "root_ad",
    "scan_double",
    "strtod",
    "to_int",
    "to_real",
    "to_string",
    "trunc32",
    "trunc64",
    "type_tag",
    "wrap32",
]
