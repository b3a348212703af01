"""The C-behaviour helpers the built-ins share: strtod/scanf, narrowing casts, version
comparison, string-list splitting and PCRE pattern rewriting."""

from __future__ import annotations

import math

import pytest

from classad.functions.common import scan_double, strtod, trunc32, wrap32
from classad.functions.pcre import compile_pattern, pcre_to_python
from classad.functions.stringlists import string_list_items
from classad.functions.strings import natural_cmp


@pytest.mark.parametrize(
    "text,value,used",
    [
        ("42", 42.0, 2),
        ("  42abc", 42.0, 4),
        ("-2.5e3x", -2500.0, 6),
        ("0x10", 16.0, 4),
        ("0x", 0.0, 1),
        ("1e", 1.0, 1),
        (".5", 0.5, 2),
        ("5.", 5.0, 2),
        ("inf", math.inf, 3),
        ("-Infinity", -math.inf, 9),
        ("abc", 0.0, 0),
        ("", 0.0, 0),
        ("\t\n 7", 7.0, 4),
        ("1e400", math.inf, 5),
    ],
)
def test_strtod(text: str, value: float, used: int) -> None:
    """C strtod: longest numeric prefix, white space skipped, hex and inf accepted."""
    assert strtod(text) == (value, used)


def test_strtod_nan() -> None:
    """``nan`` and ``nan(...)`` read as NaN."""
    assert math.isnan(strtod("nan(123)")[0]) and strtod("nan(123)")[1] == 8


@pytest.mark.parametrize("text,value", [("7", 7.0), ("1e", 1.0), ("1e3", 1000.0), ("0x1p3", 8.0), (" 2x", 2.0)])
def test_scan_double_reads(text: str, value: float) -> None:
    """sscanf("%lf") reads what strtod reads, including a dangling exponent (glibc)."""
    assert scan_double(text) == value


@pytest.mark.parametrize("text", ["0x", "0xg", ".", "-", "+.", "infin", "nan(", "abc", ""])
def test_scan_double_fails(text: str) -> None:
    """sscanf cannot back up over a hex prefix or a partial word, so these fail."""
    assert scan_double(text) is None


@pytest.mark.parametrize(
    "n,expected", [(0, 0), (4294967297, 1), (2147483648, -2147483648), (-1, -1), (9223372036854775807, -1)]
)
def test_wrap32(n: int, expected: int) -> None:
    """An int64 read through a C int keeps its low 32 bits."""
    assert wrap32(n) == expected


@pytest.mark.parametrize("x,expected", [(1.9, 1), (-1.9, -1), (3e9, -2147483648), (math.nan, -2147483648)])
def test_trunc32(x: float, expected: int) -> None:
    """(int) of a double truncates; out of range or NaN is INT_MIN (x86)."""
    assert trunc32(x) == expected


@pytest.mark.parametrize(
    "a,b,sign",
    [
        ("7.9", "7.10", -1),
        ("000", "00", -1),
        ("1.0", "1.0", 0),
        ("a", "c", -1),
        ("x1", "x", 1),
        ("1.010", "1.01", 1),
        ("abc", "ABC", 1),
    ],
)
def test_natural_cmp(a: str, b: str, sign: int) -> None:
    """Version comparison: numbers by value, more leading zeros first."""
    r = natural_cmp(a, b)
    assert (r > 0) - (r < 0) == sign


@pytest.mark.parametrize(
    "text,delims,items",
    [
        ("a, b,,c", ", ", ["a", "b", "c"]),
        (" a ;b c; ", ";", ["a", "b c"]),
        ("", ", ", []),
        ("a b", "", ["a b"]),
    ],
)
def test_string_list_items(text: str, delims: str, items: list) -> None:
    """String-list items: split on any delimiter, trimmed, empty ones dropped."""
    assert string_list_items(text, delims) == items


@pytest.mark.parametrize(
    "pcre,python",
    [
        (rb"\Qa.b\E", rb"a\x2eb"),
        (rb"a\z", rb"a\Z"),
        (rb"a\Z", rb"a(?=\n?\Z)"),
        (rb"x{,3}", rb"x\{,3}"),
        (rb"\x{41}", rb"\x41"),
        (rb"\cA", rb"\x01"),
        (rb"a(?#note)b", rb"ab"),
        (rb"(a)\g{-1}", rb"(a)(?:\1)"),
        (rb"(?<n>a)\k<n>", rb"(?<n>a)(?P=n)"),
    ],
)
def test_pcre_rewrites(pcre: bytes, python: bytes) -> None:
    """PCRE spellings Python lacks are rewritten."""
    assert pcre_to_python(pcre) == python


@pytest.mark.parametrize(
    "pattern", ["^*", "a\\b+", "\\A?", "a{2}{3}", "[\\w-z]", "(?<n>a)(?<n>b)", "(*FAIL)+", "\\x{100}", "[", "a\\"]
)
def test_patterns_pcre_rejects(pattern: str) -> None:
    """Patterns PCRE2 rejects do not compile here either (the call gives Error)."""
    assert compile_pattern(pattern, 0) is None
