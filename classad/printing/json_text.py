"""Ads and values as JSON, exactly as ``condor_q -json`` and ``ClassAd.printJson()`` write them.

An ad is an object; nested ads are objects and lists arrays; integers, reals,
booleans and strings map to JSON; Undefined is ``null``.  Anything JSON cannot
hold (an expression, Error, an absolute time, an infinite real) is a string
``"\\/Expr(<new-syntax text>)\\/"``.  Attribute order, two-space indentation,
reals as ``%.16G`` (``.0`` added when bare) and control characters as ``\\u00XX``
follow ``printJson()`` byte for byte.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable, Optional, TextIO

from .. import ast
from ..adcore import AdCore
from ..unparse import unparse_value
from ..values import ERROR, UNDEFINED, AbsTime, ListValue, RelTime
from .printers import container_items, tool_items, unparse_new

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# NUL and lone surrogates too (the latter stand for bytes that are not UTF-8), so
# the output is always valid JSON in valid UTF-8.
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')


def _escape_char(m: re.Match) -> str:
    c = m.group()
    return _ESCAPES.get(c) or "\\u%04X" % ord(c)


def json_string(s: str) -> str:
    """``s`` as a JSON string literal, escaped as HTCondor escapes it (UTF-8 left as is).

    Bytes that are not UTF-8 (held as lone surrogates U+DC80..U+DCFF) are written
    as ``\\uDCxx`` escapes; the reader turns them back into the same bytes.
    """
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, s) + '"'


def _quoted_expr(text: str) -> str:
    return '"\\/Expr(' + _NEEDS_ESCAPE.sub(_escape_char, text) + ')\\/"'


def _real(x: float) -> str:
    if x != x or math.isinf(x):
        return _quoted_expr(unparse_value(x))
    if x == 0.0:
        return "%.1f" % x  # keeps the sign of -0.0
    text = "%.16G" % x
    if "." not in text and "E" not in text:
        text += ".0"
    return text


class _Writer:
    """One JSON printer: pretty (two-space indents) or one line (``jsonl``)."""

    def __init__(self, oneline: bool = False) -> None:
        self.oneline = oneline
        self.level = 0

    def node(self, n: ast.Node) -> str:
        if type(n) is ast.Literal:
            return self.value(n.value)
        if type(n) is ast.Record:
            return self.obj(container_items(n.attrs))
        if type(n) is ast.ListExpr:
            return self.array([lambda item=item: self.node(item) for item in n.items])
        return _quoted_expr(unparse_new(n))

    def value(self, v: Any) -> str:
        t = type(v)
        if t is str:
            return json_string(v)
        if t is bool:
            return "true" if v else "false"
        if t is int:
            return str(v)
        if t is float:
            return _real(v)
        if v is UNDEFINED:
            return "null"
        if v is ERROR:
            return _quoted_expr("error")
        if t is RelTime:
            # HTCondor 25 stores a relative-time literal as its seconds (a real).
            return _real(float(v.secs))
        if t is AbsTime:
            return _quoted_expr(unparse_value(v))
        if t is ListValue:
            if v.nodes is not None:
                return self.array([lambda item=item: self.node(item) for item in v.nodes])
            return self.array([lambda item=item: self.value(item) for item in v._values])
        if isinstance(v, AdCore):
            return self.obj(container_items(v.node_items()))
        return _quoted_expr(unparse_value(v))

    def obj(self, items: list) -> str:
        if self.oneline:
            return "{" + ",".join(json_string(k) + ": " + self.node(v) for k, v in items) + "}"
        self.level += 2
        pad = "\n" + " " * self.level
        parts = [pad + json_string(k) + ": " + self.node(v) for k, v in items]
        self.level -= 2
        return "{" + ",".join(parts) + "\n" + " " * self.level + "}"

    def array(self, items: list) -> str:
        if self.oneline:
            return "[" + ",".join(render() for render in items) + "]"
        self.level += 2
        pad = "\n" + " " * self.level
        parts = [pad + render() for render in items]
        self.level -= 2
        return "[" + ",".join(parts) + "\n" + " " * self.level + "]"


def write_ad(ad: AdCore, items: Optional[list] = None, oneline: bool = False) -> str:
    """An ad as JSON, exactly as ``classad2.ClassAd.printJson()`` prints it."""
    return _Writer(oneline).obj(container_items(ad.node_items()) if items is None else items)


def write_ads(ads: Iterable[AdCore], out: TextIO, lines: bool = False) -> int:
    """Write ads as ``condor_q -json`` does (a list), or one object per line.  Returns the count."""
    count = 0
    for ad in ads:
        text = write_ad(ad, tool_items(ad.node_items()), oneline=lines)
        if lines:
            out.write(text + "\n")
        else:
            out.write(("[\n" if count == 0 else ",\n") + text + "\n")
        count += 1
    if count and not lines:
        out.write("]\n")
    return count


__all__ = ["json_string", "write_ad", "write_ads"]
