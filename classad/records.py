"""A fast path for reading a whole ad: cut ``[ a = 1; b = 2 ]`` into attributes.

Large ads are read attribute by attribute, each value through the expression
cache, which is linear and several times faster than one parse of the whole
text.  The cutter only recognises the plain form; anything else makes it give
up (None) so the full parser decides and reports errors precisely.
"""

from __future__ import annotations

import re
from typing import AbstractSet, Any, Callable, Optional

from . import ast
from .errors import ParseError

# Tokens that matter for cutting an ad into attributes: strings, quoted names,
# comments, brackets and semicolons.  Everything else is skipped by finditer.
_CUT_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|//[^\n]*|/\*.*?\*/|[\[\]{}();]', re.S)
_ASSIGNMENT = re.compile(r"[ \t\n\r\f\v]*([A-Za-z_][A-Za-z0-9_]*)[ \t\n\r\f\v]*=(.*)", re.S)


def split_attributes(
    text: str, parse: Callable[[str], ast.Node], keywords: AbstractSet[str], whole: bool = False
) -> Optional[tuple]:
    """The (name, node) pairs of a plain ``[ a = 1; b = 2 ]`` ad, or None to use the full parser.

    Each value is parsed on its own through the expression cache, so values that
    repeat from ad to ad (``Requirements``, ``Arch``...) are parsed once and their
    trees shared; ``parse`` is that cached expression parser and ``keywords`` the
    reserved words (both passed in by the callers: the parser sits above this
    module).  With ``whole``, text after the closing ``]`` also gives None.
    Anything unusual (quoted names, comments between attributes,
    a syntax error anywhere) returns None: the whole-ad parser then decides, and
    reports errors with their exact position.
    """
    pieces: list[str] = []
    depth = 0
    start = 1
    for m in _CUT_TOKENS.finditer(text):
        c = m.group()[0]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                pieces.append(text[start : m.start()])
                if whole and m.end() != len(text):
                    return None
                break
        elif c == ";" and depth == 1:
            pieces.append(text[start : m.start()])
            start = m.end()
    else:
        if whole:
            return None  # never closed
    merged: dict[str, tuple[str, Any]] = {}
    for piece in pieces:
        assign = _ASSIGNMENT.match(piece)
        if assign is None:
            if piece.strip(" \t\n\r\f\v"):
                return None
            continue
        attr = assign.group(1)
        if attr.lower() in keywords:
            return None
        try:
            node = parse(assign.group(2).strip(" \t\n\r\f\v"))
        except ParseError:
            return None
        key = attr.lower()
        old = merged.get(key)
        merged[key] = (old[0] if old else attr, node)
    if not merged and len(pieces) > 1:
        return None  # "[ ; ]" is an error; let the parser say so
    return tuple(merged.values())
