"""The ad file formats, and how to tell them apart from the first bytes of a file.

:class:`ParserType` mirrors ``classad2.ParserType`` member for member (same
names, same numbers), so code written for the ``htcondor`` wheel keeps working.

``classad2`` only tells old from new (``Auto``: a first character ``[`` or
``/`` means new, anything else old).  :func:`detect` also recognises JSON and
XML, which is what HTCondor's own file reader (``FileAuto``) does; both names
use it here.  The rules look at the first two significant characters, after any
``//`` or ``/* */`` comments:

=====================  ==========================================
first characters       format
=====================  ==========================================
``<``                  XML (``<?xml``, ``<classads>``, ``<c>``)
``[`` then ``{``       JSON list of objects (``condor_q -json``)
``{`` then ``[``       new-syntax list (``condor_q -long:new``)
``{`` otherwise        JSON object(s), one per line or concatenated
``[`` or ``/``         new syntax (``[ a = 1 ]``)
anything else          old (``Name = value`` lines)
=====================  ==========================================
"""

from __future__ import annotations

import enum
from typing import Any, Optional

from .sources import LineSource


class ParserType(enum.IntEnum):
    """An ad file format, numbered as ``classad2.ParserType`` numbers them."""

    Auto = -1
    Old = 0
    XML = 1
    JSON = 2
    New = 3
    FileAuto = 4


_NAMES = {
    "auto": ParserType.Auto,
    "old": ParserType.Old,
    "long": ParserType.Old,
    "new": ParserType.New,
    "json": ParserType.JSON,
    "jsonl": ParserType.JSON,
    "xml": ParserType.XML,
    "fileauto": ParserType.FileAuto,
}


def to_parser_type(value: Any) -> ParserType:
    """A :class:`ParserType` from a member, its number or its (case-insensitive) name."""
    if isinstance(value, ParserType):
        return value
    if isinstance(value, str):
        try:
            return _NAMES[value.strip().lower()]
        except KeyError:
            raise ValueError(f"unknown ad format {value!r}; expected one of " + ", ".join(sorted(_NAMES))) from None
    if isinstance(value, int) and not isinstance(value, bool):
        return ParserType(value)
    # Accept the wheel's own enum (or any IntEnum) by its value.
    if isinstance(value, enum.IntEnum):
        return ParserType(int(value))
    raise TypeError(f"parser must be a ParserType, not {type(value).__name__}")


# C isspace(): what the C++ readers skip between ads.
WHITESPACE = " \t\n\r\f\v"


def _significant(src: LineSource, count: int) -> tuple[list[str], str]:
    """Read lines until ``count`` significant characters are seen; return lines read and chars.

    ``#`` comment lines count as one significant character (they mean old format);
    ``//`` and ``/* ... */`` comments before the first significant character are skipped.
    """
    lines: list[str] = []
    chars = ""
    in_block = False
    while len(chars) < count:
        line = src.readline()
        if line is None:
            break
        lines.append(line)
        text = line.strip(WHITESPACE)
        if not chars:
            text, in_block = _after_comments(text, in_block)
        if not text:
            continue
        if not chars and text.startswith("#"):
            return lines, "#"
        chars += "".join(text.split())[: count - len(chars)]
    return lines, chars


def _after_comments(text: str, in_block: bool) -> tuple[str, bool]:
    """``text`` without leading ``//`` / ``/* */`` comments; whether a block is still open."""
    while True:
        if in_block:
            end = text.find("*/")
            if end < 0:
                return "", True
            text, in_block = text[end + 2 :].lstrip(WHITESPACE), False
        if text.startswith("//"):
            return "", False
        if not text.startswith("/*"):
            return text, False
        text, in_block = text[2:], True


def detect(src: LineSource) -> ParserType:
    """The format of the text ``src`` is about to return; nothing is consumed."""
    lines, chars = _significant(src, 2)
    for line in reversed(lines):
        src.push_back(line)
    return classify(chars)


def classify(chars: str) -> ParserType:
    """The format implied by the first (up to) two significant characters."""
    first: Optional[str] = chars[:1] or None
    second = chars[1:2]
    if first is None:
        return ParserType.Old  # nothing but white space: no ads in any format
    if first == "<":
        return ParserType.XML
    if first == "[":
        return ParserType.JSON if second == "{" else ParserType.New
    if first == "{":
        return ParserType.New if second == "[" else ParserType.JSON
    if first == "/":
        return ParserType.New
    return ParserType.Old
