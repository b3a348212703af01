"""Strings: ``strcat``, ``join``, ``substr``, ``toUpper``/``toLower``, ``strcmp``/``stricmp``,
``versioncmp`` and the ``version*`` predicates.

Strings are byte strings: ``substr`` counts bytes and case mapping touches only
ASCII letters.  Non-string arguments are converted the way ``string()`` does
(reals as ``%1.15E``, lists unparsed).  ``strcat`` and ``join`` are lazy so that
``strcat`` can stop at its first Undefined argument, as the reference does.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..limits import LIMITS
from ..values import (
    ERROR,
    UNDEFINED,
    ListValue,
    ascii_lower,
    ascii_upper,
    compare_strings,
    compare_strings_nocase,
    string_bytes,
)
from .common import from_bytes, iter_list, to_string, wrap32
from .registry import builtin


def _concat(values: Iterable[Any], is_join: bool) -> Any:
    """The reference's shared strcat/join loop over argument values (lazily produced)."""
    undef = False
    defined = False
    sep = ""
    parts: list = []
    have_text = False
    size = 0
    cap = LIMITS.max_string
    for i, v in enumerate(values):
        s = v if type(v) is str else to_string(v)
        if type(s) is str:
            size += len(s) + (len(sep) if have_text else 0)
            if size > cap:
                return ERROR  # checked before joining, so the text is never built
        if s is UNDEFINED:
            undef = True
            if is_join:
                continue
            defined = False
            break
        if s is ERROR:
            return ERROR
        if is_join:
            if i == 0:
                sep = s
                continue
            if have_text:
                parts.append(sep)
        defined = True
        parts.append(s)
        if s:
            have_text = True
    if undef and not defined:
        return UNDEFINED
    return "".join(parts)


def _call_each(thunks: Iterable[Callable[[], Any]]) -> Iterable[Any]:
    for t in thunks:
        yield t()


@builtin("strcat", 0, None, kind="lazy")
def strcat(ctx: Any, *thunks: Callable[[], Any]) -> Any:
    """Concatenate the string forms of the arguments: ``strcat("x", 1.5)`` is ``"x1.500000000000000E+00"``.

    Arguments are evaluated left to right; the first Undefined makes the result
    Undefined (later ones are not evaluated) and an Error makes it Error, so
    ``strcat(undefined, error)`` is Undefined but ``strcat(error, undefined)`` Error.
    """
    return _concat(_call_each(thunks), False)


@builtin("join", 0, None, kind="lazy")
def join(ctx: Any, *thunks: Callable[[], Any]) -> Any:
    """Join with a separator: ``join(",", "a", "b")``, ``join(",", {"a", "b"})``, ``join({"a", "b"})``.

    The first value is the separator; Undefined items are skipped (an Undefined
    separator acts as ``""``), the result is Undefined only if nothing was
    defined.  Quirk kept from the reference: the separator is only written
    once the text so far is non-empty, so ``join(",", "", "a")`` is ``"a"``.
    """
    n = len(thunks)
    if 1 <= n <= 2:
        last = thunks[-1]()
        if type(last) is ListValue:

            def items() -> Iterable[Any]:
                yield thunks[0]() if n == 2 else ""
                yield from iter_list(last, ctx)

            return _concat(items(), True)

        def plain() -> Iterable[Any]:
            if n == 2:
                yield thunks[0]()
            yield last

        return _concat(plain(), True)
    return _concat(_call_each(thunks), True)


def _case_arg(v: Any) -> Any:
    return v if type(v) is str else to_string(v)


@builtin("toUpper", 1, 1)
def to_upper(ctx: Any, v: Any) -> Any:
    """ASCII upper case of the string form: ``toUpper("abc")`` is ``"ABC"``; Undefined stays."""
    s = _case_arg(v)
    return s if s is UNDEFINED or s is ERROR else ascii_upper(s)


@builtin("toLower", 1, 1)
def to_lower(ctx: Any, v: Any) -> Any:
    """ASCII lower case of the string form: ``toLower(1.5)`` is ``"1.500000000000000e+00"``."""
    s = _case_arg(v)
    return s if s is UNDEFINED or s is ERROR else ascii_lower(s)


@builtin("substr", 2, 3)
def substr(ctx: Any, s: Any, offset: Any, *rest: Any) -> Any:
    """Perl-like substring in bytes: ``substr("abcde", 1, 2)`` is ``"bc"``, ``substr("abcde", -2, -1)`` ``"d"``.

    A negative offset counts from the end, a negative length drops bytes from
    the end; both clamp.  Any Undefined argument gives Undefined; a non-string
    subject or a non-integer offset/length (no conversion: ``1.5`` or ``true``)
    gives Error.  Offsets are read through a C ``int`` as in the reference.
    """
    if s is UNDEFINED or offset is UNDEFINED or (rest and rest[0] is UNDEFINED):
        return UNDEFINED
    if type(s) is not str or type(offset) is not int or (rest and type(rest[0]) is not int):
        return ERROR
    data = string_bytes(s)
    alen = len(data)
    off = wrap32(offset)
    if off < 0:
        off = max(alen + off, 0)
    elif off >= alen:
        off = alen
    length = wrap32(rest[0]) if rest else 0
    if length <= 0:
        length = max(alen - off + length, 0)
    elif length > alen - off:
        length = alen - off
    if rest and wrap32(rest[0]) == 0:
        length = 0
    return from_bytes(data[off : off + length])


def _two_strings(a: Any, b: Any) -> Any:
    if a is UNDEFINED or b is UNDEFINED:
        return UNDEFINED
    sa, sb = to_string(a), to_string(b)
    if type(sa) is not str or type(sb) is not str:
        return ERROR
    return sa, sb


@builtin("strcmp", 2, 2)
def strcmp(ctx: Any, a: Any, b: Any) -> Any:
    """Byte-wise comparison of the string forms, -1/0/1: ``strcmp("a", "B")`` is 1."""
    pair = _two_strings(a, b)
    if type(pair) is not tuple:
        return pair
    return compare_strings(*pair)


@builtin("stricmp", 2, 2)
def stricmp(ctx: Any, a: Any, b: Any) -> Any:
    """Case-insensitive (ASCII) comparison, -1/0/1: ``stricmp("a", "B")`` is -1."""
    pair = _two_strings(a, b)
    if type(pair) is not tuple:
        return pair
    return compare_strings_nocase(*pair)


def _isdigit(c: int) -> bool:
    return 0x30 <= c <= 0x39


def _signed(c: int) -> int:
    return c - 256 if c >= 128 else c


def natural_cmp(s1: str, s2: str) -> int:
    """Version-aware comparison (like ``strverscmp``); the sign is what matters.

    Mirrors the reference: the result is a raw difference, not just -1/0/1
    (``versioncmp("a", "c")`` is -2), characters compare as signed bytes.
    """
    a = string_bytes(s1).split(b"\0", 1)[0] + b"\0"
    b = string_bytes(s2).split(b"\0", 1)[0] + b"\0"
    i = 0
    while a[i] and a[i] == b[i]:
        i += 1
    if a[i] == b[i]:
        return 0
    n = i
    while n > 0 and _isdigit(a[n - 1]):
        n -= 1
    if n == i and (not _isdigit(a[i]) or not _isdigit(b[i])):
        return _signed(a[i]) - _signed(b[i])
    z1 = n
    while a[z1] == 0x30:
        z1 += 1
    z2 = n
    while b[z2] == 0x30:
        z2 += 1
    if z1 > n and not _isdigit(a[z1]):
        z1 -= 1
    if z2 > n and not _isdigit(b[z2]):
        z2 -= 1
    if z1 - n != z2 - n:
        return (z2 - n) - (z1 - n)
    if z1 > n:
        return _signed(a[i]) - _signed(b[i])
    e1 = z1
    while _isdigit(a[e1]):
        e1 += 1
    e2 = z2
    while _isdigit(b[e2]):
        e2 += 1
    if e1 - n != e2 - n:
        return (e1 - n) - (e2 - n)
    return _signed(a[i]) - _signed(b[i])


@builtin("versioncmp", 2, 2)
def versioncmp(ctx: Any, a: Any, b: Any) -> Any:
    """Version comparison: ``versioncmp("7.9", "7.10")`` is negative, ``("000", "00")`` negative.

    Undefined in either argument gives Undefined; the result is the raw
    difference the reference computes (``versioncmp("a", "c")`` is -2).
    """
    pair = _two_strings(a, b)
    if type(pair) is not tuple:
        return pair
    return natural_cmp(*pair)


def _version_predicate(name: str, test: Callable[[int], bool]) -> None:
    def impl(ctx: Any, a: Any, b: Any) -> Any:
        pair = _two_strings(a, b)
        if type(pair) is not tuple:
            return pair
        return test(natural_cmp(*pair))

    impl.__name__ = name
    impl.__doc__ = (
        f"``{name}(a, b)``: versioncmp(a, b) {name[7:]} 0 as a bool, "
        f'e.g. ``versionLT("7.9", "7.10")`` is true; Undefined stays Undefined.'
    )
    builtin(name, 2, 2)(impl)


_version_predicate("versionLT", lambda r: r < 0)
_version_predicate("versionLE", lambda r: r <= 0)
_version_predicate("versionGT", lambda r: r > 0)
_version_predicate("versionGE", lambda r: r >= 0)
_version_predicate("versionEQ", lambda r: r == 0)


@builtin("version_in_range", 3, 3)
def version_in_range(ctx: Any, v: Any, lo: Any, hi: Any) -> Any:
    """``lo <= v <= hi`` by versioncmp: ``version_in_range("8.1", "8.0", "9")`` is true.

    An Undefined bound gives Undefined; an Undefined ``v`` gives Error.
    """
    if lo is UNDEFINED or hi is UNDEFINED:
        return UNDEFINED
    sv, sl, sh = to_string(v), to_string(lo), to_string(hi)
    if type(sv) is not str or type(sl) is not str or type(sh) is not str:
        return ERROR
    return natural_cmp(sl, sv) <= 0 and natural_cmp(sv, sh) <= 0
