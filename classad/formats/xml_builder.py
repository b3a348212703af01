"""Building ClassAds from the tags of HTCondor's XML, one token at a time.

The builder keeps a stack with one frame per open element (ad, attribute,
list, scalar value), so it needs no look-ahead and holds only the current ad.
Value rules follow HTCondor's XML reader: ``<i>`` and ``<r>`` read the
longest number prefix (``strtoll``/``strtod``; none at all gives Error),
``<s>`` text keeps its white space and has its ClassAd escapes decoded,
``<e>`` is parsed as a new-syntax expression, ``<at>``/``<rt>`` as time
literals.  Unlike HTCondor, which drops a bad ad silently or stops reading,
every problem is reported with its line and column; the rest of that ad is
skipped and reading goes on with the next one.
"""

from __future__ import annotations

import re
from typing import Any, Callable, NamedTuple, Optional

from .. import ast
from ..ad import ClassAd
from ..errors import FormatError, ParseError
from ..lexemes import unescape_new
from ..parser import parse_expr
from ..unparse import quote_string
from ..values import ERROR, INT64_MAX, INT64_MIN, UNDEFINED
from .names import name_problem

ErrorHandler = Callable[[FormatError], None]

_PROLOG = frozenset({"?xml", "?xml-stylesheet", "!DOCTYPE", "DOCTYPE", "classads"})
_SCALARS = frozenset({"i", "r", "s", "at", "rt", "e"})
_FLAGS = frozenset({"b", "un", "er"})
_INT_PREFIX = re.compile(r"[ \t\n\r\f\v]*([+-]?[0-9]+)")
_REAL_PREFIX = re.compile(
    r"[ \t\n\r\f\v]*([+-]?(?:inf(?:inity)?|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?))", re.I
)


_ENTITY = re.compile(r"&(amp|lt|gt|quot|apos);")
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def decode_entities(text: str) -> str:
    """Replace the five XML entities; anything else that looks like one stays as written."""
    if "&" not in text:
        return text
    return _ENTITY.sub(lambda m: _ENTITIES[m.group(1)], text)


class _Skip(Exception):
    """Raised inside the builder to abandon the current ad after reporting."""


class _Frame:
    __slots__ = ("tag", "name", "items", "value", "text", "line", "column")

    def __init__(self, tag: str, line: int, column: int, name: str = "") -> None:
        self.tag = tag  # "c", "a", "l", a scalar tag, or a flag tag waiting for its end
        self.name = name  # attribute name for "a"
        self.items: list = []  # (name, node) for "c", nodes for "l"
        self.value: Optional[ast.Node] = None
        self.text: list = []
        self.line = line
        self.column = column


def _int_value(text: str) -> Any:
    m = _INT_PREFIX.match(text)
    if m is None:
        return ERROR
    digits = m.group(1).lstrip("+-").lstrip("0")
    if len(digits) > 19:
        return ERROR  # out of the int64 range, as the reference reader decides
    value = int(m.group(1))
    return value if INT64_MIN <= value <= INT64_MAX else ERROR


def _real_value(text: str) -> Any:
    m = _REAL_PREFIX.match(text)
    if m is None:
        return ERROR
    return float(m.group(1))


class AdBuilder:
    """Feed tokens in order; :meth:`feed` returns each top-level ad as it closes."""

    def __init__(self, name: str, handle: ErrorHandler) -> None:
        self.name = name
        self.handle = handle
        self.stack: list[_Frame] = []
        self.skip_depth = 0  # > 0: inside a bad ad, counting its <c> nesting

    def error(self, message: str, token: Any) -> _Skip:
        self.handle(FormatError(message, file=self.name, line=token.line, column=token.column))
        return _Skip()

    def feed(self, token: Any) -> Optional[ClassAd]:
        """Take one token; return a finished top-level ad, if this token closed one.

        A token of kind ``"attr"`` (see :func:`~classad.formats.xml_format.scan`) stands
        for ``<a n="NAME"><T>TEXT</T></a>`` written on one line: read at once where an
        attribute may start, otherwise as its five tokens (which then explain the error)."""
        if token.kind == "attr":
            if self.skip_depth:
                return None
            if not self.stack or self.stack[-1].tag != "c":
                for part in _expand(token):
                    self.feed(part)
                return None
            try:
                self._simple_attribute(token)
            except _Skip:
                self.skip_depth = sum(1 for f in self.stack if f.tag == "c")
                self.stack.clear()
            return None
        if self.skip_depth:
            if token.name == "c" and token.kind == "start":
                self.skip_depth += 1
            elif token.name == "c" and token.kind == "end":
                self.skip_depth -= 1
            return None
        try:
            return self._step(token)
        except _Skip:
            self.skip_depth = sum(1 for f in self.stack if f.tag == "c")
            self.stack.clear()
            return None

    def finish(self, lineno: int) -> None:
        """Report an ad left open at the end of the input."""
        if self.stack:
            first = self.stack[0]
            self.handle(
                FormatError("<c> opened here is never closed", file=self.name, line=first.line, column=first.column)
            )
            self.stack.clear()

    # ---- one token ------------------------------------------------------------------

    def _step(self, tok: Any) -> Optional[ClassAd]:
        if not self.stack:
            return self._top(tok)
        frame = self.stack[-1]
        if frame.tag in _SCALARS:
            self._in_scalar(frame, tok)
            return None
        if tok.kind == "text":
            if tok.text.strip(" \t\n\r\f\v"):
                raise self.error(f"unexpected text {tok.text.strip()[:20]!r} in <{frame.tag}>", tok)
            return None
        if frame.tag in _FLAGS:
            if tok.kind == "end" and tok.name == frame.tag:
                self.stack.pop()
                return None
            raise self.error(f"expected </{frame.tag}>", tok)
        if frame.tag == "c":
            return self._in_ad(frame, tok)
        if frame.tag == "a" and tok.kind == "end" and tok.name == "a":
            self.stack.pop()
            if frame.value is None:
                raise self.error(f"attribute {frame.name!r} has no value", tok)
            self.stack[-1].items.append((frame.name, frame.value))
            return None
        if frame.tag == "l" and tok.kind == "end" and tok.name == "l":
            self.stack.pop()
            self._deliver(ast.ListExpr(tuple(frame.items)), tok)
            return None
        self._start_value(tok)
        return None

    def _top(self, tok: Any) -> Optional[ClassAd]:
        if tok.kind == "text":
            if tok.text.strip(" \t\n\r\f\v"):
                raise self.error(f"unexpected text {tok.text.strip()[:20]!r} outside an ad", tok)
            return None
        if tok.name == "c" and tok.kind == "start":
            self.stack.append(_Frame("c", tok.line, tok.column))
            return None
        if tok.name == "c" and tok.kind == "empty":
            return ClassAd()
        if tok.name in _PROLOG:
            return None
        raise self.error(f"unexpected <{'/' if tok.kind == 'end' else ''}{tok.name}> outside an ad", tok)

    def _in_ad(self, frame: _Frame, tok: Any) -> Optional[ClassAd]:
        if tok.name == "a" and tok.kind == "start":
            name = tok.attrs.get("n", "")
            decoded = unescape_new(name) if name else None
            if not decoded:
                raise self.error('<a> without a valid n="name"', tok)
            problem = name_problem(decoded)
            if problem is not None:
                raise self.error(problem[1], tok)
            self.stack.append(_Frame("a", tok.line, tok.column, decoded))
            return None
        if tok.name == "c" and tok.kind == "end":
            self.stack.pop()
            record = _record(frame.items)
            if not self.stack:
                return ClassAd.from_nodes(record.attrs)
            self._deliver(record, tok)
            return None
        if tok.name == "c" and tok.kind == "start" and len(self.stack) == 1:
            # A new ad where an attribute should be: the previous ad was never closed.
            self.stack.append(_Frame("c", tok.line, tok.column))
            self.stack = self.stack[-1:]
            self.handle(
                FormatError(
                    "<c> opened here is not closed before the next <c>",
                    file=self.name,
                    line=frame.line,
                    column=frame.column,
                )
            )
            return None
        raise self.error(f"expected <a> or </c>, found <{'/' if tok.kind == 'end' else ''}{tok.name}>", tok)

    def _simple_attribute(self, tok: Any) -> None:
        """An "attr" token inside an ad: what its five tokens do there (_in_ad, then
        _start_value, _in_scalar and the attribute's end in _step), with the same errors."""
        decoded = unescape_new(tok.name) if tok.name else None
        if not decoded:
            raise self.error('<a> without a valid n="name"', tok)
        problem = name_problem(decoded)
        if problem is not None:
            raise self.error(problem[1], tok)
        tag, text = tok.attrs["tag"], decode_entities(tok.text)
        node: ast.Node
        if tag == "i":
            node = ast.Literal(_int_value(text))
        elif tag == "r":
            node = ast.Literal(_real_value(text))
        else:
            where = _At(tok.line, _value_column(tok))
            node = self._scalar(tag, text, where)
        self.stack[-1].items.append((decoded, node))

    def _start_value(self, tok: Any) -> None:
        name, kind = tok.name, tok.kind
        if kind == "end":
            raise self.error(f"unexpected </{name}>", tok)
        if name in _SCALARS:
            if kind == "empty":
                self._deliver(self._scalar(name, "", tok), tok)
            else:
                self.stack.append(_Frame(name, tok.line, tok.column))
            return
        if name in _FLAGS:
            if name == "b":
                value: Any = tok.attrs.get("v", "") in ("t", "T")
            else:
                value = UNDEFINED if name == "un" else ERROR
            self._deliver(ast.Literal(value), tok)
            if kind == "start":
                self.stack.append(_Frame(name, tok.line, tok.column))  # waits for its end tag
            return
        if name in ("l", "c"):
            if kind == "empty":
                self._deliver(ast.ListExpr(()) if name == "l" else ast.Record(()), tok)
            else:
                self.stack.append(_Frame(name, tok.line, tok.column))
            return
        raise self.error(f"unknown element <{name}>", tok)

    def _in_scalar(self, frame: _Frame, tok: Any) -> None:
        if tok.kind == "text":
            frame.text.append(tok.text)
            return None
        if tok.kind == "end" and tok.name == frame.tag:
            self.stack.pop()
            self._deliver(self._scalar(frame.tag, "".join(frame.text), frame), tok)
            return None
        raise self.error(f"expected </{frame.tag}>, found <{tok.name}>", tok)

    def _deliver(self, node: ast.Node, tok: Any) -> None:
        parent = self.stack[-1] if self.stack else None
        if parent is None or parent.tag not in ("a", "l"):
            raise self.error("a value outside an attribute or list", tok)
        if parent.tag == "l":
            parent.items.append(node)
        elif parent.value is not None:
            raise self.error(f"attribute {parent.name!r} has more than one value", tok)
        else:
            parent.value = node

    def _scalar(self, tag: str, text: str, where: Any) -> ast.Node:
        if tag == "i":
            return ast.Literal(_int_value(text))
        if tag == "r":
            return ast.Literal(_real_value(text))
        if tag == "s":
            value = unescape_new(text)
            if value is None:
                raise self.error("a string cannot contain a NUL character", where)
            return ast.Literal(value)
        stripped = text.strip(" \t\n\r\f\v")
        if tag == "e":
            source = stripped
        else:
            source = ("absTime(" if tag == "at" else "relTime(") + quote_string(stripped) + ")"
        try:
            return parse_expr(source)
        except ParseError as exc:
            raise self.error(f"in <{tag}>: {exc.message}", where) from None


class _At(NamedTuple):
    """A position to report an error at."""

    line: int
    column: int


def _value_column(tok: Any) -> int:
    """Where the value's tag of an "attr" token starts: after ``<a n="NAME">``."""
    return tok.column + len('<a n="">') + len(tok.name)


def _expand(tok: Any) -> list:
    """The five tokens (four for an empty text) an "attr" token stands for, at their places."""
    kind = type(tok)
    tag, line, col = tok.attrs["tag"], tok.line, tok.column
    at_tag = _value_column(tok)
    at_text = at_tag + len(tag) + 2
    raw_length = len(tok.text)
    parts = [kind("start", "a", {"n": tok.name}, "", line, col), kind("start", tag, {}, "", line, at_tag)]
    if tok.text:
        parts.append(kind("text", "", {}, decode_entities(tok.text), line, at_text))
    parts.append(kind("end", tag, {}, "", line, at_text + raw_length))
    parts.append(kind("end", "a", {}, "", line, at_text + raw_length + len(tag) + 3))
    return parts


def _record(items: list) -> ast.Record:
    """A record node; a repeated name keeps its first spelling and its last value."""
    merged: dict[str, tuple[str, ast.Node]] = {}
    for name, node in items:
        key = name.lower()
        old = merged.get(key)
        merged[key] = (old[0] if old else name, node)
    return ast.Record(tuple(merged.values()))
