"""The reference parser: Lark over ``grammar/classad.lark``, and its error messages.

:mod:`classad.parser` sends here only the text the hand-written parser
(:mod:`classad.descent`) leaves: text it refuses (this parser then says where and
what was expected) and the rare shapes it does not read.  Lark runs with
``transformer=`` so no parse tree is built: the :class:`_Builder` callbacks turn
rules straight into :mod:`classad.ast` nodes.  Lark's exceptions are caught in
exactly one place, :func:`parse_with_grammar`, and become a :class:`GrammarError`
with line, column and message.  Nothing here is loaded until first needed: Lark
costs a process about 13 MiB and a tenth of a second.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Optional

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import ast, lexemes
from .lexemes import KEYWORDS, unescape_new, unescape_old
from .timetext import parse_abstime_literal, parse_reltime_literal

_TRUE, _FALSE, _UNDEF, _ERROR = lexemes.TRUE, lexemes.FALSE, lexemes.UNDEF, lexemes.ERROR_LITERAL
_STRING_PART, _QNAME_PART = lexemes.STRING_PART, lexemes.QNAME_PART
_to_int, _to_real = lexemes.to_int, lexemes.to_real


def _grammar_path() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "grammar" / "classad.lark", here.parent / "grammar" / "classad.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("classad.lark grammar file not found next to the classad package")


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


_builder: "Optional[_Builder]" = None


@functools.cache
def lark_parser() -> Lark:
    """The LALR parser of ``grammar/classad.lark`` (built on first use; Lark's own cache
    makes later processes skip the grammar analysis)."""
    global _builder
    _builder = _Builder()
    return Lark(
        _grammar_path().read_text(encoding="utf-8"),
        parser="lalr",
        lexer="contextual",
        start=["expr", "classad", "old_line"],
        transformer=_builder,
        maybe_placeholders=True,
        cache=True,
    )


_FRIENDLY = {
    "RBRACE": "'}'",
    "LBRACE": "'{'",
    "RSQB": "']'",
    "LSQB": "'['",
    "RPAR": "')'",
    "LPAR": "'('",
    "COMMA": "','",
    "SEMICOLON": "';'",
    "COLON": "':'",
    "QMARK": "'?'",
    "EQUAL": "'='",
    "NAME": "a name",
    "QNAME": "a quoted name",
    "INT": "an integer",
    "NEG_INT": "an integer",
    "REAL": "a real",
    "NEG_REAL": "a real",
    "STRING": "a string",
    "DOT": "'.'",
    "ELVIS": "'?:'",
    "$END": "end of input",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*', '/' or '%'",
    "NOT_OP": "'!' or '~'",
    "EQ_OP": "'==' or '!='",
    "REL_OP": "a comparison",
    "OR_OP": "'||'",
    "AND_OP": "'&&'",
    "TRUE": "true",
    "FALSE": "false",
    "UNDEFINED": "undefined",
    "ERROR": "error",
    "IS": "is",
    "ISNT": "isnt",
    "SHIFT_OP": "a shift",
    "BITOR_OP": "'|'",
    "BITAND_OP": "'&'",
    "BITXOR_OP": "'^'",
}


def _describe_expected(expected: Any) -> str:
    names = sorted({_FRIENDLY.get(e, e) for e in expected})
    if not names:
        return ""
    if len(names) > 6:
        names = names[:6] + ["..."]
    return "; expected " + ", ".join(names)


class GrammarError(Exception):
    """Text the grammar refuses: the message and, where known, line and column (1-based)."""

    def __init__(self, message: str, line: Optional[int] = None, column: Optional[int] = None) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


def parse_with_grammar(text: str, start: str, old_strings: bool) -> Any:
    """The tree of ``text`` for rule ``start`` (``"expr"``, ``"classad"``, ``"old_line"``),
    strings read in the old syntax when ``old_strings``; :class:`GrammarError` if refused."""
    parser = lark_parser()
    assert _builder is not None
    _builder.old_strings = old_strings
    try:
        return parser.parse(text, start=start)
    except _TokenError as exc:
        raise GrammarError(exc.message, exc.tok.line, exc.tok.column) from None
    except UnexpectedToken as exc:
        tok = exc.token
        if tok.type == "$END":
            msg = "unexpected end of input" + _describe_expected(exc.expected)
        else:
            msg = f"unexpected {str(tok)[:40]!r}" + _describe_expected(exc.expected)
        raise GrammarError(
            msg, exc.line if exc.line != -1 else _last_line(text), exc.column if exc.column != -1 else _last_col(text)
        ) from None
    except UnexpectedEOF as exc:
        raise GrammarError(
            "unexpected end of input" + _describe_expected(exc.expected), _last_line(text), _last_col(text)
        ) from None
    except UnexpectedCharacters as exc:
        at = exc.pos_in_stream if exc.pos_in_stream is not None else len(text)  # always set by Lark here
        ch = text[at] if at < len(text) else ""
        msg = f"unexpected character {ch!r}"
        if ch in "\"'":
            msg = "unterminated string or quoted name"
        elif ch == "0" or ch.isdigit():
            msg = f"invalid number near {text[at : at + 12]!r}"
        elif ch == "/" and text[at : at + 2] == "/*":
            msg = "unterminated comment"
        raise GrammarError(msg, exc.line, exc.column) from None
    except (UnexpectedInput, LarkError) as exc:  # any other Lark failure stays inside this boundary
        raise GrammarError(str(exc).splitlines()[0]) from None
    except RecursionError:
        raise GrammarError("expression nested too deeply") from None


def _last_line(text: str) -> int:
    return text.count("\n") + 1


def _last_col(text: str) -> int:
    return len(text) - (text.rfind("\n") + 1) + 1


__all__ = ["GrammarError", "lark_parser", "parse_with_grammar"]
