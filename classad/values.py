"""Runtime values of the ClassAd language and the rules shared by every operator.

A value is a plain Python object: ``bool``, ``int`` (kept in 64-bit range),
``float``, ``str``, a :class:`ListValue`, a ``ClassAd``, an :class:`AbsTime`, a
:class:`RelTime`, or one of the two :class:`Value` members ``Undefined`` and
``Error``.  There is no wrapper per type, so dispatch is on ``type(v)``.  Because
``bool`` is a subclass of ``int`` and :class:`Value` is an ``IntEnum``, never use
``isinstance(v, int)`` to test for an integer: compare ``type(v) is int``.
"""

from __future__ import annotations

import enum
import math
from typing import Any, Iterable


class Value(enum.IntEnum):
    """The two non-data values, numbered as the ``classad2`` module numbers them."""

    Error = 1
    Undefined = 2


UNDEFINED = Value.Undefined
ERROR = Value.Error

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_MASK64 = (1 << 64) - 1
# C's FLT_MAX: the largest finite single-precision value (HTCondor's ranks, stringListMin/Max).
FLT_MAX = 3.4028234663852886e38


def wrap64(n: int) -> int:
    """Reduce a Python integer to a signed 64-bit integer (two's complement)."""
    if INT64_MIN <= n <= INT64_MAX:
        return n
    n &= _MASK64
    return n - (1 << 64) if n > INT64_MAX else n


# --- C integer arithmetic (x86-64 casts and operators) ----------------------------

INT32_MIN = -(1 << 31)


def wrap32(n: int) -> int:
    """A 64-bit integer read through a C ``int`` (two's complement truncation)."""
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n >= (1 << 31) else n


def trunc32(x: float) -> int:
    """``(int) x`` for a double: truncation; NaN or out of range gives INT_MIN."""
    if x != x or x >= 2147483648.0 or x <= -2147483649.0:
        return INT32_MIN
    return int(x)


def c_div(a: int, b: int) -> int:
    """C integer division (truncates toward zero); ``b`` is non-zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def c_mod(a: int, b: int) -> int:
    """C remainder (sign of the dividend); ``b`` is non-zero."""
    return a - b * c_div(a, b)


class AbsTime:
    """An absolute time: seconds since the epoch plus the zone offset in seconds east."""

    __slots__ = ("secs", "offset")

    def __init__(self, secs: float, offset: int = 0) -> None:
        self.secs = secs
        self.offset = offset

    def __eq__(self, other: object) -> bool:
        return type(other) is AbsTime and other.secs == self.secs and other.offset == self.offset

    def __hash__(self) -> int:
        return hash((self.secs, self.offset))

    def __repr__(self) -> str:
        return f"AbsTime({self.secs!r}, {self.offset!r})"


class RelTime:
    """A relative time (a duration) in seconds."""

    __slots__ = ("secs",)

    def __init__(self, secs: float) -> None:
        self.secs = secs

    def __eq__(self, other: object) -> bool:
        return type(other) is RelTime and other.secs == self.secs

    def __hash__(self) -> int:
        return hash(self.secs)

    def __repr__(self) -> str:
        return f"RelTime({self.secs!r})"


class ListValue:
    """A ClassAd list.

    Lists are lazy: a list literal keeps its element expressions (compiled nodes)
    and the ad they were written in, and each element is evaluated only when it is
    used, in that ad, by the evaluation state it is read with (its ``evaluate_in``).
    Lists built by functions hold ready values instead.
    """

    __slots__ = ("nodes", "scope", "_values")

    def __init__(self, nodes: tuple | None, scope: Any = None, values: list | None = None) -> None:
        self.nodes = nodes
        self.scope = scope
        self._values = values

    @classmethod
    def of(cls, values: Iterable[Any]) -> "ListValue":
        """A list whose elements are already values."""
        return cls(None, None, list(values))

    def __len__(self) -> int:
        nodes = self.nodes
        return len(nodes) if nodes is not None else len(self._values or ())

    def evaluate(self, state: Any) -> list:
        """Every element's value, each evaluated in the scope of the list."""
        if self.nodes is None:
            return self._values  # type: ignore[return-value]
        evaluate_in = state.evaluate_in
        scope = self.scope
        return [evaluate_in(n, scope) for n in self.nodes]

    def iter_values(self, state: Any):
        """Yield element values one at a time (for functions that may stop early)."""
        if self.nodes is None:
            yield from self._values  # type: ignore[misc]
            return
        evaluate_in = state.evaluate_in
        scope = self.scope
        for n in self.nodes:
            yield evaluate_in(n, scope)

    def element(self, i: int, state: Any) -> Any:
        """The value of element ``i`` (caller checks the range)."""
        if self.nodes is None:
            return self._values[i]  # type: ignore[index]
        return state.evaluate_in(self.nodes[i], self.scope)

    def __repr__(self) -> str:
        return f"ListValue({self.nodes if self.nodes is not None else self._values!r})"


# --- type predicates -------------------------------------------------------


def truthiness(v: Any) -> Any:
    """The boolean-equivalent of ``v``: a bool, or Undefined/Error.

    bool, int and real convert (NaN counts as true); Undefined and Error stay;
    every other type (string, list, ad, time) is Error.
    """
    t = type(v)
    if t is bool:
        return v
    if t is int:
        return v != 0
    if t is float:
        return v != 0.0
    if v is UNDEFINED:
        return UNDEFINED
    return ERROR


# --- numbers -----------------------------------------------------------------


def real_result(x: float) -> Any:
    """A real result of arithmetic: +INF becomes Error, as HTCondor's HUGE_VAL check does."""
    if x == math.inf:
        return ERROR
    return x


def real_to_int(x: float) -> int:
    """C-style truncation of a double to int64; out of range or NaN gives INT64_MIN (x86)."""
    if x != x or x >= 9223372036854775808.0 or x < -9223372036854775808.0:
        return INT64_MIN
    return int(x)


def _nonfinite_text(x: float) -> str | None:
    """How every printer writes NaN and the infinities (there are no such literals)."""
    if x != x:
        return 'real("NaN")'
    if x == math.inf:
        return 'real("INF")'
    if x == -math.inf:
        return 'real("-INF")'
    return None


def format_real(x: float) -> str:
    """A real as the new-syntax unparser prints it (``%1.15E``, special cases for 0/INF/NaN)."""
    special = _nonfinite_text(x)
    if special is not None:
        return special
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return "%1.15E" % x


def format_real_old(x: float) -> str:
    """A real as old-syntax and JSON printers write it (``%.16G``, ``.0`` added if bare)."""
    special = _nonfinite_text(x)
    if special is not None:
        return special
    text = "%.16G" % x
    if "." not in text and "E" not in text and "e" not in text:
        text += ".0"
    return text


# --- strings -----------------------------------------------------------------


def byte_length(s: str) -> int:
    """Length of a string value in bytes (ClassAd strings are byte strings)."""
    if s.isascii():
        return len(s)
    return len(s.encode("utf-8", "surrogateescape"))


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def ascii_lower(s: str) -> str:
    """Lower-case ASCII letters only, as C ``tolower`` in the C locale does."""
    return s.lower() if s.isascii() else s.translate(_LOWER)


def ascii_upper(s: str) -> str:
    """Upper-case ASCII letters only."""
    return s.upper() if s.isascii() else s.translate(_UPPER)


def string_bytes(s: str) -> bytes:
    """The bytes of a string value."""
    return s.encode("utf-8", "surrogateescape")


def bytes_to_string(b: bytes) -> str:
    """A string value from raw bytes (invalid UTF-8 kept through surrogate escapes)."""
    return b.decode("utf-8", "surrogateescape")


def compare_strings_nocase(a: str, b: str) -> int:
    """C ``strcasecmp``: -1, 0 or 1 comparing ASCII-lower-cased bytes."""
    la, lb = ascii_lower(a), ascii_lower(b)
    if not (la.isascii() and lb.isascii()):
        la_b, lb_b = string_bytes(la), string_bytes(lb)
        return (la_b > lb_b) - (la_b < lb_b)
    return (la > lb) - (la < lb)


def compare_strings(a: str, b: str) -> int:
    """C ``strcmp``: -1, 0 or 1 comparing bytes."""
    if not (a.isascii() and b.isascii()):
        a_b, b_b = string_bytes(a), string_bytes(b)
        return (a_b > b_b) - (a_b < b_b)
    return (a > b) - (a < b)
