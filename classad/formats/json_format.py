"""ClassAds as JSON, as ``condor_q -json`` and ``ClassAd.printJson()`` write them.

An ad is an object; nested ads are objects and lists arrays; integers, reals,
booleans and strings map to JSON; Undefined is ``null``.  Anything JSON cannot
hold (an expression, Error, an absolute time, an infinite real) is a string
``"\\/Expr(<new-syntax text>)\\/"``; the escaped slashes are what mark it, so
``"/Expr(x)/"`` stays a plain string.  The writers (:func:`write_ad`, which
reproduces ``printJson()`` byte for byte) live in :mod:`classad.printing.json_text`
and are re-exported here.

The reader takes a ``[ {...}, {...} ]`` list, one object per line, or objects
one after another.  Each object is cut out of the stream by the splitter and
decoded with the standard :mod:`json` module; an object it rejects is tried
once more with HTCondor's leniencies (trailing commas, ``TRUE``/``False``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterator

from .. import ast
from ..ad import ClassAd, lower_key
from ..errors import FormatError, ParseError
from ..parser import parse_expr
from ..printing.json_text import json_string, write_ad, write_ads
from ..values import INT64_MAX, INT64_MIN, UNDEFINED
from .names import name_problem
from .sources import LineSource
from .splitter import JSON_SYNTAX, split_records

ErrorHandler = Callable[[FormatError], None]

# ---- reading -------------------------------------------------------------------------------

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_EXPR_PREFIX = '"\\/Expr('
_EXPR_SUFFIX = ')\\/"'
_MARK = "\x00"
_LENIENT = re.compile(r'"(?:[^"\\]|\\.)*"|,(?=\s*[}\]])|\b(?i:true|false|null)\b', re.S)


# A \\u0000 escape that is not itself escaped; surrogates that stand for no byte.
_ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000", re.I)
_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


class _Pairs(list):
    """The key/value pairs of one JSON object, in order (a list, to keep duplicates)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _int_value(v: int) -> int:
    return v if INT64_MIN <= v <= INT64_MAX else 0  # as the C++ lexer does


def _to_int(text: str) -> int:
    if len(text) > 20:  # beyond int64 whatever the digits; as the C++ lexer
        return 0
    return _int_value(int(text))


def _lenient_fix(m: re.Match) -> str:
    text = m.group()
    if text[0] == '"':
        return text
    return "" if text == "," else text.lower()


def _position(text: str, offset: int, line: int, column: int) -> tuple[int, int]:
    """File line and column of ``offset`` in a record text that starts at line:column."""
    newlines = text.count("\n", 0, offset)
    if not newlines:
        return line, column + offset
    return line + newlines, offset - text.rfind("\n", 0, offset)


# What could make a name or a string unacceptable (see names.py and check_text): a
# byte-order mark or a surrogate, raw or escaped.  A text without any is checked per
# string only for empty names.
_SUSPECT = re.compile(r"[\ufeff\ud800-\udfff]|\\[uU](?:[fF][eE][fF][fF]|[dD][89a-fA-F])")


def _is_clean(text: str) -> bool:
    """Whether ``text`` holds nothing :data:`_SUSPECT` finds (an ASCII text without
    ``\\u`` escapes at once)."""
    if text.isascii() and "\\u" not in text and "\\U" not in text:
        return True
    return _SUSPECT.search(text) is None


class _Decoder:
    """Decodes one object's text into a ClassAd, reporting errors at file positions."""

    def __init__(self, text: str, name: str, line: int, column: int) -> None:
        self.text, self.name, self.line, self.column = text, name, line, column
        self.exprs: list[tuple[str, int]] = []  # (raw token, offset in text)
        self.clean = _is_clean(text)

    def error(self, message: str, offset: int) -> FormatError:
        line, col = _position(self.text, offset, self.line, self.column)
        return FormatError(message, file=self.name, line=line, column=col)

    def _mark_expressions(self) -> str:
        text = self.text
        if "\\/Expr(" not in text:
            return text
        out, last = [], 0
        for m in _TOKEN.finditer(text):
            token = m.group()
            if token.startswith(_EXPR_PREFIX) and token.endswith(_EXPR_SUFFIX) and len(token) >= 12:
                out.append(text[last : m.start()])
                out.append(f'"\\u0000{len(self.exprs)}"')
                self.exprs.append((token, m.start()))
                last = m.end()
        out.append(text[last:])
        return "".join(out)

    def _loads(self, text: str) -> Any:
        # Integers are read by Python's int and clamped to int64 afterwards (see
        # attributes and node); a text that fails so is read once more with _to_int,
        # which also takes numbers longer than Python's int conversion limit.
        try:
            return json.loads(text, object_pairs_hook=_Pairs, parse_constant=_reject_constant)
        except ValueError:
            return json.loads(text, object_pairs_hook=_Pairs, parse_int=_to_int, parse_constant=_reject_constant)

    def decode(self) -> ClassAd:
        text = self.text
        nul = _ESCAPED_NUL.search(text) if "\\u0000" in text or "\\U0000" in text else None
        if nul is not None:  # also keeps user text apart from the expression markers
            raise self.error("a string cannot contain a NUL character", nul.end() - 6)
        marked = self._mark_expressions()
        try:
            pairs = self._loads(marked)
        except ValueError as first:
            try:
                pairs = self._loads(_LENIENT.sub(_lenient_fix, marked))
            except ValueError:
                raise self._json_error(first) from None
        return ClassAd.adopt(self.attributes(pairs))

    def _json_error(self, exc: ValueError) -> FormatError:
        # Report against the original text: markers only replace strings by strings.
        try:
            self._loads(self.text)
        except json.JSONDecodeError as original:
            return self.error(original.msg, original.pos)
        except ValueError as original:
            return self.error(str(original), 0)
        if isinstance(exc, json.JSONDecodeError):
            return self.error(exc.msg, 0)
        return self.error(str(exc), 0)

    def attributes(self, pairs: list) -> dict[str, tuple[str, ast.Node]]:
        """One object's pairs as an ad's storage: lower-case key -> (first spelling, node);
        a repeated name keeps its first spelling and its last value."""
        merged: dict[str, tuple[str, ast.Node]] = {}
        marked, literal = bool(self.exprs), ast.Literal
        for key, value in pairs:
            clean = self.clean
            if marked and key.startswith(_MARK):
                token, offset = self.exprs[int(key[1:])]
                try:
                    key = json.loads(token)
                except json.JSONDecodeError as exc:
                    raise self.error(exc.msg, offset + exc.pos) from None
                clean = False
            if not clean or not key:
                problem = name_problem(key)
                if problem is not None:
                    raise self.error(problem[1], 0)
                self.check_text(key)
            t = type(value)
            node: ast.Node
            if t is float or t is bool or (t is str and clean and not marked):
                node = literal(value)
            elif t is int:
                node = literal(_int_value(value))
            else:
                node = self.node(value)
            folded = lower_key(key)
            old = merged.get(folded)
            merged[folded] = (old[0] if old else key, node)
        return merged

    def record(self, pairs: list) -> ast.Record:
        return ast.Record(tuple(self.attributes(pairs).values()))

    def node(self, v: Any) -> ast.Node:
        t = type(v)
        if t is str:
            if v.startswith(_MARK) and v[1:].isdigit() and int(v[1:]) < len(self.exprs):
                return self.expression(*self.exprs[int(v[1:])])
            if _MARK in v:
                raise self.error("a string cannot contain a NUL character", 0)
            if not self.clean:
                self.check_text(v)
            return ast.Literal(v)
        if t is int:
            return ast.Literal(_int_value(v))
        if t is float or t is bool:
            return ast.Literal(v)
        if v is None:
            return ast.Literal(UNDEFINED)
        if t is _Pairs:
            return self.record(v)
        return ast.ListExpr(tuple(self.node(item) for item in v))

    def check_text(self, v: str) -> None:
        """Refuse a lone surrogate escape (``"\\ud800"``): it is no character and no byte."""
        m = _LONE_SURROGATE.search(v)
        if m is not None:
            code = "\\u%04x" % ord(m.group())
            where = self.text.lower().find(code)
            raise self.error(f"{code} is a lone surrogate, not a character", max(where, 0))

    def expression(self, token: str, offset: int) -> ast.Node:
        try:
            inner = json.loads(token)[len("/Expr(") : -len(")/")]
        except json.JSONDecodeError as exc:  # e.g. a raw control character inside the token
            raise self.error(exc.msg, offset + exc.pos) from None
        try:
            return parse_expr(inner)
        except ParseError as exc:
            # Point into the token: its opening quote plus the escaped prefix.
            where = offset + len(_EXPR_PREFIX) + max((exc.column or 1) - 1, 0)
            raise self.error(f"in \\/Expr(...)\\/: {exc.message}", where) from None


def decode_object(text: str, name: str = "<string>", line: int = 1, column: int = 1) -> ClassAd:
    """One JSON object's text as a ClassAd (positions in errors count from line:column)."""
    return _Decoder(text, name, line, column).decode()


def iter_ads(src: LineSource, handle: ErrorHandler) -> Iterator[ClassAd]:
    """Ads from JSON text; each broken object goes to ``handle`` and is skipped."""
    name = src.name
    for rec in split_records(src, JSON_SYNTAX, handle):
        try:
            ad = decode_object(rec.text, name, rec.line, rec.column)
        except FormatError as exc:
            handle(exc)
            continue
        src.last_end = (rec.end_line, rec.end_column)
        yield ad


__all__ = ["write_ad", "write_ads", "json_string", "iter_ads", "decode_object"]
