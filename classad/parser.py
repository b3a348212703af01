"""Text to expression trees: the hand-written parser, the Lark LALR parser behind it, and the parse cache.

Every text first goes to :mod:`classad.descent`, which reads valid text fast and
gives up on anything else; only then does Lark run, as the reference grammar and
the one place syntax errors are reported.

The grammar lives in ``grammar/classad.lark`` (shipped inside the wheel as
``classad/grammar/classad.lark``).  Lark runs with ``transformer=`` so no parse
tree is built: the :class:`_Builder` callbacks turn rules straight into the
immutable nodes of :mod:`classad.ast`.  Lark's exceptions are caught in exactly
one place, :func:`_parse`, and re-raised as :class:`~classad.errors.ParseError`
with line, column and what was expected.

``parse_expr`` is cached by source text: identical text parses once and every ad
holding it shares one tree.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any, Optional

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import ast, descent, lexemes
from .bulk import collector_paused
from .errors import ParseError
from .lexemes import KEYWORDS, unescape_new, unescape_old
from .limits import LIMITS
from .records import split_attributes
from .timetext import parse_abstime_literal, parse_reltime_literal

# Nesting deeper than this is a parse error, not a RecursionError (the C++ parser
# stops at 500 levels of recursion).
MAX_DEPTH = 500

_TRUE, _FALSE, _UNDEF, _ERROR = lexemes.TRUE, lexemes.FALSE, lexemes.UNDEF, lexemes.ERROR_LITERAL
_STRING_PART, _QNAME_PART = lexemes.STRING_PART, lexemes.QNAME_PART
_to_int, _to_real = lexemes.to_int, lexemes.to_real


def _grammar_path() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "grammar" / "classad.lark", here.parent / "grammar" / "classad.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("classad.lark grammar file not found next to the classad package")


# ---- the tree builder ---------------------------------------------------------


@v_args(inline=True)
class _Builder(Transformer):
    """Lark callbacks: one per grammar rule alias, building :mod:`classad.ast` nodes."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=True)
        self.old_strings = False

    # names
    def _name(self, tok: Token) -> str:
        if tok.type == "QNAME":
            parts = []
            for m in _QNAME_PART.finditer(str(tok)):
                text = unescape_new(m.group(1))
                if text is None or "\0" in text:
                    raise _TokenError(tok, "a quoted name cannot contain a NUL byte")
                parts.append(text)
            name = "".join(parts)
            if not name:
                raise _TokenError(tok, "empty quoted attribute name")
            return name
        text = str(tok)
        if text.lower() in KEYWORDS:
            raise _TokenError(tok, f"keyword '{text}' cannot be an attribute name (quote it: '{text}')")
        return text

    def attr_ref(self, tok: Token) -> ast.Node:
        return ast.attr_ref(self._name(tok))

    def abs_ref(self, _dot: Token, tok: Token) -> ast.Node:
        return ast.attr_ref(self._name(tok), absolute=True)

    def select(self, base: ast.Node, _dot: Token, tok: Token) -> ast.Node:
        return ast.select(base, self._name(tok))

    def subscript(self, base: ast.Node, index: ast.Node) -> ast.Node:
        return ast.Subscript(base, index)

    def call(self, tok: Token, *args: Any) -> ast.Node:
        name = self._name(tok) if tok.type == "NAME" else self._name(tok)
        items = tuple(a for a in args if a is not None)
        lname = name.lower()
        if lname in ("abstime", "reltime") and len(items) == 1 and _is_string_literal(items[0]):
            return _fold_time_literal(tok, name, items[0])
        return ast.call(name, items)

    def paren(self, inner: ast.Node) -> ast.Node:
        return ast.Paren(inner)

    def list_expr(self, *items: Any) -> ast.Node:
        return ast.ListExpr(tuple(i for i in items if i is not None))

    def record(self, *attrs: Any) -> ast.Node:
        # Duplicate names: the last value wins, the first spelling is kept.
        merged: dict[str, tuple[str, ast.Node]] = {}
        for name, node in attrs:
            key = name.lower()
            if key in merged:
                merged[key] = (merged[key][0], node)
            else:
                merged[key] = (name, node)
        return ast.Record(tuple(merged.values()))

    def attr(self, tok: Token, value: ast.Node) -> tuple:
        return (self._name(tok), value)

    def classad(self, record: ast.Node) -> ast.Node:
        return record

    def old_line(self, tok: Token, value: ast.Node) -> tuple:
        return (self._name(tok), value)

    # operators
    def binary(self, left: ast.Node, op: Token, right: ast.Node) -> ast.Node:
        text = str(op)
        if op.type == "IS" or text == "=?=":
            text = "is"
        elif op.type == "ISNT" or text == "=!=":
            text = "isnt"
        return ast.Binary(text, left, right)

    def unary(self, op: Token, operand: ast.Node) -> ast.Node:
        return ast.Unary(str(op), operand)

    def conditional(self, cond: ast.Node, then: ast.Node, other: ast.Node) -> ast.Node:
        return ast.Conditional(cond, then, other)

    def elvis(self, left: ast.Node, _op: Token, right: ast.Node) -> ast.Node:
        return ast.Elvis(left, right)

    # literals (terminal callbacks)
    def INT(self, tok: Token) -> ast.Node:
        return ast.Literal(_to_int(str(tok)))

    NEG_INT = INT

    def REAL(self, tok: Token) -> ast.Node:
        return ast.Literal(_to_real(str(tok)))

    NEG_REAL = REAL

    def STRING(self, tok: Token) -> ast.Node:
        if "\0" in tok:
            raise _TokenError(tok, "a string cannot contain a NUL byte")
        parts = []
        for m in _STRING_PART.finditer(str(tok)):
            if self.old_strings:
                parts.append(unescape_old(m.group(1)))
                continue
            text = unescape_new(m.group(1))
            if text is None:
                raise _TokenError(tok, "a string cannot contain a NUL byte")
            parts.append(text)
        return ast.Literal("".join(parts))

    def TRUE(self, tok: Token) -> ast.Node:
        return _TRUE

    def FALSE(self, tok: Token) -> ast.Node:
        return _FALSE

    def UNDEFINED(self, tok: Token) -> ast.Node:
        return _UNDEF

    def ERROR(self, tok: Token) -> ast.Node:
        return _ERROR


def _is_string_literal(node: ast.Node) -> bool:
    return isinstance(node, ast.Literal) and type(node.value) is str


def _fold_time_literal(tok: Token, name: str, arg: ast.Node) -> ast.Node:
    """``absTime("...")`` / ``relTime("...")`` with a literal string become time literals."""
    text = arg.value  # type: ignore[attr-defined]
    parse = parse_abstime_literal if name.lower() == "abstime" else parse_reltime_literal
    value = parse(text)
    if value is None:
        raise _TokenError(tok, f"invalid {name} literal {text!r}")
    return ast.Literal(value)


class _TokenError(Exception):
    """Raised inside callbacks; turned into ParseError with the token's position."""

    def __init__(self, tok: Token, message: str) -> None:
        super().__init__(message)
        self.tok = tok
        self.message = message


# ---- the parser and its single error boundary --------------------------------

_builder = _Builder()
_lark = Lark(
    _grammar_path().read_text(encoding="utf-8"),
    parser="lalr",
    lexer="contextual",
    start=["expr", "classad", "old_line"],
    transformer=_builder,
    maybe_placeholders=True,
    cache=True,
)

_FRIENDLY = {
    "RBRACE": "'}'", "LBRACE": "'{'", "RSQB": "']'", "LSQB": "'['", "RPAR": "')'", "LPAR": "'('",
    "COMMA": "','", "SEMICOLON": "';'", "COLON": "':'", "QMARK": "'?'", "EQUAL": "'='",
    "NAME": "a name", "QNAME": "a quoted name", "INT": "an integer", "NEG_INT": "an integer",
    "REAL": "a real", "NEG_REAL": "a real", "STRING": "a string", "DOT": "'.'", "ELVIS": "'?:'",
    "$END": "end of input", "ADD_OP": "'+' or '-'", "MUL_OP": "'*', '/' or '%'",
    "NOT_OP": "'!' or '~'", "EQ_OP": "'==' or '!='", "REL_OP": "a comparison",
    "OR_OP": "'||'", "AND_OP": "'&&'", "TRUE": "true", "FALSE": "false",
    "UNDEFINED": "undefined", "ERROR": "error", "IS": "is", "ISNT": "isnt",
    "SHIFT_OP": "a shift", "BITOR_OP": "'|'", "BITAND_OP": "'&'", "BITXOR_OP": "'^'",
}


def _describe_expected(expected: Any) -> str:
    names = sorted({_FRIENDLY.get(e, e) for e in expected})
    if not names:
        return ""
    if len(names) > 6:
        names = names[:6] + ["..."]
    return "; expected " + ", ".join(names)


def _caret(text: str, line: int, column: int) -> str:
    lines = text.splitlines() or [""]
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    if len(src) > 200:
        start = max(0, column - 100)
        src = src[start:start + 200]
        column -= start
    return src + "\n" + " " * max(0, column - 1) + "^"


# Strings, quoted names and brackets: what the size and nesting pre-check looks at.
_SCAN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[\[\](){}]', re.S)
_PRECHECK_FROM = 1 << 16  # shorter texts parse quickly whatever they hold


def _precheck(text: str, limit: int, source: Optional[str], line_offset: int) -> None:
    """Refuse, before the slow parser runs, text that is too long or nested too deeply.

    String literals do not count towards ``limit``: a long string is one token.
    """
    code = len(text)
    depth = 0
    for m in _SCAN.finditer(text):
        c = m.group()
        if len(c) > 1 or c in "\"'":
            code -= len(c)
        elif c in "([{":
            depth += 1
            if depth > MAX_DEPTH:
                raise _error(text, f"expression nested more than {MAX_DEPTH} levels deep",
                             text.count("\n", 0, m.start()) + 1,
                             m.start() - text.rfind("\n", 0, m.start()), source, line_offset)
        else:
            depth -= 1
    if code > limit:
        raise ParseError(f"expression text longer than {limit} characters (outside strings)",
                         file=source, line=None if source is None else 1 + line_offset)


def _parse(text: str, start: str, old_strings: bool, source: Optional[str],
           line_offset: int = 0) -> Any:
    if len(text) > _PRECHECK_FROM:
        _precheck(text, LIMITS.max_ad if start == "classad" else LIMITS.max_expr, source, line_offset)
    fast = descent.parse(text, start, old_strings, MAX_DEPTH)
    if fast is descent.TOO_DEEP:   # valid, but deeper than the evaluator may go: no need for Lark's view
        raise ParseError(f"expression nested more than {MAX_DEPTH} levels deep", file=source)
    if fast is not None:
        return fast
    _builder.old_strings = old_strings
    try:
        result = _lark.parse(text, start=start)
    except _TokenError as exc:
        raise _error(text, exc.message, exc.tok.line, exc.tok.column, source, line_offset) from None
    except UnexpectedToken as exc:
        tok = exc.token
        if tok.type == "$END":
            msg = "unexpected end of input" + _describe_expected(exc.expected)
        else:
            msg = f"unexpected {str(tok)[:40]!r}" + _describe_expected(exc.expected)
        raise _error(text, msg, exc.line if exc.line != -1 else _last_line(text),
                     exc.column if exc.column != -1 else _last_col(text), source, line_offset) from None
    except UnexpectedEOF as exc:
        raise _error(text, "unexpected end of input" + _describe_expected(exc.expected),
                     _last_line(text), _last_col(text), source, line_offset) from None
    except UnexpectedCharacters as exc:
        at = exc.pos_in_stream if exc.pos_in_stream is not None else len(text)  # always set by Lark here
        ch = text[at] if at < len(text) else ""
        msg = f"unexpected character {ch!r}"
        if ch in "\"'":
            msg = "unterminated string or quoted name"
        elif ch == "0" or ch.isdigit():
            msg = f"invalid number near {text[at:at + 12]!r}"
        elif ch == "/" and text[at:at + 2] == "/*":
            msg = "unterminated comment"
        raise _error(text, msg, exc.line, exc.column, source, line_offset) from None
    except (UnexpectedInput, LarkError) as exc:  # any other Lark failure stays inside this boundary
        raise _error(text, str(exc).splitlines()[0], None, None, source, line_offset) from None
    except RecursionError:
        raise _error(text, "expression nested too deeply", None, None, source, line_offset) from None
    tree: Any = result[1] if start == "old_line" else result  # type: ignore[index]
    _check_depth(tree, text, source)
    return result


def _last_line(text: str) -> int:
    return text.count("\n") + 1


def _last_col(text: str) -> int:
    return len(text) - (text.rfind("\n") + 1) + 1


def _error(text: str, message: str, line: Optional[int], column: Optional[int],
           source: Optional[str], line_offset: int) -> ParseError:
    context = _caret(text, line, column) if line is not None and column is not None else None
    return ParseError(message, file=source, line=None if line is None else line + line_offset,
                      column=column, context=context)


def _check_depth(node: ast.Node, text: str, source: Optional[str]) -> None:
    """Reject trees nested deeper than MAX_DEPTH without recursing."""
    # Cheap pre-check: a tree can only be deep if the text has many openers or operators.
    if len(text) >= MAX_DEPTH and descent.deeper_than(node, MAX_DEPTH):
        raise ParseError(f"expression nested more than {MAX_DEPTH} levels deep", file=source)


# ---- public entry points ------------------------------------------------------


# Most values in ad files are plain literals; these patterns recognise exactly the
# token forms of the grammar (see INT, REAL and STRING there), so such values skip
# Lark without changing what they mean.
_FAST_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FAST_REAL = re.compile(r"-?(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)\Z")
_FAST_STRING = re.compile(r'"[^"\\\n\0]*"\Z')
_FAST_WORDS = {"true": _TRUE, "false": _FALSE, "undefined": _UNDEF, "error": _ERROR}


def fast_literal(text: str) -> Optional[ast.Node]:
    """The node of ``text`` when it is one simple literal, else None (use the full parser)."""
    text = text.strip(" \t")
    if not text:
        return None
    first = text[0]
    if first == '"':
        if _FAST_STRING.match(text):  # no escapes: the body is the value, in both syntaxes
            return ast.Literal(text[1:-1])
        return None
    if first.isdigit() or first == "-":
        if _FAST_INT.match(text):
            return ast.Literal(_to_int(text))
        if _FAST_REAL.match(text):
            return ast.Literal(_to_real(text))
        return None
    return _FAST_WORDS.get(text.lower())


@functools.lru_cache(maxsize=65536)
def parse_expr(text: str) -> ast.Node:
    """Parse one expression; identical text returns the identical (shared) tree."""
    fast = fast_literal(text)
    if fast is not None:
        return fast
    node = _parse(text, "expr", False, None)
    return node


@functools.lru_cache(maxsize=65536)
def parse_old_value(text: str) -> ast.Node:
    """Parse the value of an old-format ``Name = value`` line (old string escapes)."""
    fast = fast_literal(text)
    if fast is not None:
        return fast
    node = _parse(text, "expr", True, None)
    return node


# Ads up to this size are read value by value through the expression cache, so values
# that repeat from ad to ad share one tree; a larger one is one record parsed in a single
# pass, which is faster and has little to share.
SHARE_VALUES_UP_TO = 1 << 18


def parse_record(text: str, source: Optional[str] = None) -> ast.Record:
    """Parse a whole ``[ ... ]`` ad.

    An ad of a few kilobytes is first read value by value (each through the
    expression cache); anything that path cannot read, and any very large ad,
    goes to the full parser (the fast one, then Lark).
    """
    if 4096 < len(text) <= SHARE_VALUES_UP_TO:
        body = text.strip(" \t\n\r\f\v")
        pairs = split_attributes(body, parse_expr, KEYWORDS, whole=True) if body[:1] == "[" else None
        if pairs is not None:
            return ast.Record(pairs)
    if len(text) > SHARE_VALUES_UP_TO:
        with collector_paused():
            return _parse(text, "classad", False, source)
    return _parse(text, "classad", False, source)


def parse_full_expr_lenient(text: str) -> ast.Node:
    """Parse as the C++ ``eval()`` function does: a top-level ternary may be followed by junk.

    ``eval("1 ? 2 : 3 junk")`` is 2 in HTCondor, while ``eval("1 + 2 3")`` is an error.
    """
    try:
        return parse_expr(text)
    except ParseError as exc:
        error = exc
    # Find the longest prefix that parses as a ternary, cutting at token boundaries.
    if error.line is None or error.column is None:
        raise error
    lines = text.splitlines(keepends=True)
    offset = sum(len(l) for l in lines[: error.line - 1]) + error.column - 1
    prefix = text[:offset]
    try:
        node = parse_expr(prefix)
    except ParseError:
        raise error from None
    if isinstance(node, ast.Conditional):
        return node
    raise error
