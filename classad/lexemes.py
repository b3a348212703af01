"""Token decoding shared by both parsers: string and quoted-name escapes, numbers, keywords.

The Lark parser (:mod:`classad.parser`) and the hand-written one
(:mod:`classad.descent`) read tokens the same way through these functions, so
the two build the same trees.
"""

from __future__ import annotations

import re
from typing import Optional

from . import ast
from .values import ERROR, INT64_MAX, INT64_MIN, UNDEFINED, bytes_to_string, string_bytes

# Words that are literals or operators, in any case; not attribute names unless quoted.
KEYWORDS = frozenset({"true", "false", "undefined", "error", "is", "isnt"})

TRUE = ast.Literal(True)
FALSE = ast.Literal(False)
UNDEF = ast.Literal(UNDEFINED)
ERROR_LITERAL = ast.Literal(ERROR)

STRING_PART = re.compile(r'"((?:\\.|[^"\\])*)"', re.S)
QNAME_PART = re.compile(r"'((?:\\.|[^'\\])*)'", re.S)
_SIMPLE_ESCAPES = {
    ord("a"): 7,
    ord("b"): 8,
    ord("f"): 12,
    ord("n"): 10,
    ord("r"): 13,
    ord("t"): 9,
    ord("v"): 11,
}


def unescape_new(body: str) -> Optional[str]:
    """Decode the escapes of a new-syntax string body; None if it contains a NUL byte.

    ``\\101`` is octal (a third digit is read only after a first digit 0-3), the C
    escapes ``\\n \\t ...`` are decoded, any other ``\\c`` is ``c``.
    """
    if "\\" not in body:
        return body
    raw = string_bytes(body)
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        b = raw[i]
        if b != 0x5C or i + 1 >= n:
            out.append(b)
            i += 1
            continue
        c = raw[i + 1]
        if 0x30 <= c <= 0x37:
            value = c - 0x30
            j = i + 2
            if j < n and 0x30 <= raw[j] <= 0x37:
                value = value * 8 + raw[j] - 0x30
                j += 1
                if c <= 0x33 and j < n and 0x30 <= raw[j] <= 0x37:
                    value = value * 8 + raw[j] - 0x30
                    j += 1
            if value == 0:
                return None
            out.append(value)
            i = j
            continue
        out.append(_SIMPLE_ESCAPES.get(c, c))
        i += 2
    if 0 in out:
        return None
    return bytes_to_string(bytes(out))


def unescape_old(body: str) -> str:
    """Decode an old-syntax string body: only ``\\"`` is an escape."""
    return body.replace('\\"', '"')


def to_int(text: str) -> int:
    if len(text) > 20:  # beyond int64 whatever the digits; int() refuses thousands of them
        return 0
    value = int(text)
    # The C++ lexer turns a literal beyond the int64 range into 0.
    if value > INT64_MAX or value < INT64_MIN:
        return 0
    return value


def to_real(text: str) -> float:
    try:
        return float(text)
    except OverflowError:  # pragma: no cover - float() returns inf instead
        return float("inf")


__all__ = [
    "ERROR_LITERAL",
    "FALSE",
    "KEYWORDS",
    "QNAME_PART",
    "STRING_PART",
    "TRUE",
    "UNDEF",
    "to_int",
    "to_real",
    "unescape_new",
    "unescape_old",
]
