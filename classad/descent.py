"""Text to expression trees, fast: a hand-written precedence-climbing parser.

The Lark grammar (``grammar/classad.lark``, :mod:`classad.parser`) defines the
language and reports every syntax error with its position; it costs tens of
microseconds per expression.  This module reads the same language about ten
times faster and builds the very same :mod:`classad.ast` trees.  It never
reports errors itself: on anything it does not accept it gives up (``None``)
and the caller hands the text to the Lark parser, which then either accepts it
or explains what is wrong.

Tokens come from one regular expression run over the whole text: white space and
comments are an atomic prefix of each token (never re-read as operators), and the
end of the text is an empty token.  The only context the lexer needs --
whether ``-5`` is one literal (where an operand starts) or a minus and a 5 (after
an operand) -- is settled by the parser, which splits such a token when it
stands where an operator is expected.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from . import ast
from .lexemes import (
    ERROR_LITERAL,
    FALSE,
    KEYWORDS,
    QNAME_PART,
    STRING_PART,
    TRUE,
    UNDEF,
    to_int,
    to_real,
    unescape_new,
    unescape_old,
)
from .timetext import parse_abstime_literal, parse_reltime_literal

_WS = r"[ \t\f\r\n\v]"
_REAL = r"(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)(?![0-9])"
_INT = r"(?:0|[1-9][0-9]*)(?![0-9.eE])"
_TOKEN = re.compile(
    rf"(?>(?:{_WS}+|//[^\n]*|/\*(?:.|\n)*?\*/)*)("
    rf'"(?:\\.|[^"\\])*"(?:{_WS}*"(?:\\.|[^"\\])*")*'  # a string, adjacent ones joined
    rf"|'(?:\\.|[^'\\])*'(?:{_WS}*'(?:\\.|[^'\\])*')*"  # a quoted name, likewise
    rf"|-?{_REAL}|-?{_INT}"  # numbers, maybe glued to a minus
    r"|[A-Za-z_][A-Za-z0-9_]*"
    rf"|\?{_WS}*:"  # Elvis
    r"|>>>|>>|<<|<=|>=|==|!=|=\?=|=!=|\|\||&&|\.\.?"
    r"|[-+*/%<>!~^&|?:()\[\]{},;=]"
    rf"|[^ \t\f\r\n\v].*"  # anything else: the rest, refused below
    r"|\Z)",
    re.S,
)  # the end, after white space and comments
# What a number, string or quoted-name token must be in full (the catch-all above
# also starts with a digit or a quote where the proper forms did not match).
_NUMBER = re.compile(rf"-?{_REAL}|-?{_INT}")
_STRING = re.compile(rf'"(?:\\.|[^"\\])*"(?:{_WS}*"(?:\\.|[^"\\])*")*')
_QNAME = re.compile(rf"'(?:\\.|[^'\\])*'(?:{_WS}*'(?:\\.|[^'\\])*')*")

# Binding power of each binary operator (higher binds tighter); "is"/"isnt" are words.
_BINARY = {
    "||": 1,
    "&&": 2,
    "|": 3,
    "^": 4,
    "&": 5,
    "==": 6,
    "!=": 6,
    "=?=": 6,
    "=!=": 6,
    "is": 6,
    "isnt": 6,
    "<": 7,
    "<=": 7,
    ">": 7,
    ">=": 7,
    "<<": 8,
    ">>": 8,
    ">>>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "%": 10,
}
_SPELLING = {"=?=": "is", "=!=": "isnt"}
_UNARY = frozenset({"-", "+", "!", "~"})
# Tokens that end an operand run at once (no operator can be among them).
_STOPS = frozenset({"", ")", "]", "}", ",", ";", "?", ":", "="})
# Tokens that may follow an attribute's value in a record.
_VALUE_ENDS = frozenset({";", "]"})
_WORDS = {"true": TRUE, "false": FALSE, "undefined": UNDEF, "error": ERROR_LITERAL}
_END = ""
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NUMBER_START = frozenset("0123456789.")


class _GiveUp(Exception):
    """The text is not one this parser accepts; the Lark parser decides."""


class _Reader:
    """One parse: the token list and a cursor over it."""

    __slots__ = ("toks", "pos", "old_strings", "max_depth")

    def __init__(self, toks: list[str], old_strings: bool, max_depth: int) -> None:
        self.toks = toks
        self.pos = 0
        self.old_strings = old_strings
        self.max_depth = max_depth

    # ---- expressions, loosest first ----------------------------------------------------

    def expr(self) -> ast.Node:
        cond = self.binary(1)
        if self.toks[self.pos] != "?":
            return cond
        self.pos += 1
        then = self.expr()
        if self.toks[self.pos] != ":":
            raise _GiveUp
        self.pos += 1
        return ast.Conditional(cond, then, self.expr())

    def binary(self, floor: int) -> ast.Node:
        left = self.unary()
        toks = self.toks
        while True:
            op = toks[self.pos]
            power = _BINARY.get(op)
            if power is None:
                if op in _STOPS:
                    return left
                if op[:1] == "-" and len(op) > 1:
                    # "-5" after an operand is a minus and then a 5.
                    if floor > 9:
                        return left
                    toks[self.pos] = op[1:]
                    left = ast.Binary("-", left, self.binary(10))
                    continue
                low = op.lower()
                if low != "is" and low != "isnt":
                    return left
                power, op = 6, low
            if power < floor:
                return left
            self.pos += 1
            right = self.binary(power + 1)
            left = ast.Binary(_SPELLING.get(op, op), left, right)

    def unary(self) -> ast.Node:
        op = self.toks[self.pos]
        if op in _UNARY:
            self.pos += 1
            return ast.Unary(op, self.unary())
        return self.postfix()

    def postfix(self) -> ast.Node:
        """A primary, its selections and subscripts, then maybe Elvis (whose right side
        is again such a postfix expression)."""
        node = self.primary()
        toks = self.toks
        while True:
            op = toks[self.pos]
            if op == "." or op == "..":
                self.pos += 1
                node = ast.select(node, self.name())
            elif op == "[":
                self.pos += 1
                index = self.expr()
                if toks[self.pos] != "]":
                    raise _GiveUp
                self.pos += 1
                node = ast.Subscript(node, index)
            elif op[:1] == "?" and len(op) > 1:
                self.pos += 1
                return ast.Elvis(node, self.postfix())
            else:
                return node

    def primary(self) -> ast.Node:
        tok = self.toks[self.pos]
        self.pos += 1
        if tok.isdigit() and tok.isascii():  # a plain integer (the catch-all yields no digits alone but "0...")
            if tok[0] == "0" and len(tok) > 1:
                raise _GiveUp
            return ast.Literal(int(tok) if len(tok) < 19 else to_int(tok))
        first = tok[:1]
        if first in _NAME_START:
            low = tok.lower()
            if low in KEYWORDS:
                word = _WORDS.get(low)
                if word is None:
                    raise _GiveUp
                return word
            if self.toks[self.pos] == "(":
                return self.call(tok)
            return ast.AttrRef(tok, low)
        if first in _NUMBER_START or (first == "-" and len(tok) > 1):
            if tok == "." or tok == "..":
                return ast.attr_ref(self.name(), absolute=True)
            if _NUMBER.fullmatch(tok) is None:
                raise _GiveUp
            if "." in tok or "e" in tok or "E" in tok:
                return ast.Literal(to_real(tok))
            return ast.Literal(to_int(tok))
        if first == '"':
            return self.string(tok)
        if first == "'":
            name = self.quoted(tok)
            if self.toks[self.pos] == "(":
                return self.call(name)
            return ast.attr_ref(name)
        if tok == "(":
            inner = self.expr()
            if self.toks[self.pos] != ")":
                raise _GiveUp
            self.pos += 1
            return ast.Paren(inner)
        if tok == "{":
            return ast.ListExpr(self.items("}", ","))
        if tok == "[":
            return self.record()
        raise _GiveUp

    # ---- pieces ------------------------------------------------------------------------

    def items(self, close: str, seps: str) -> tuple:
        """Comma-separated expressions up to ``close`` (``seps``: the separators allowed)."""
        toks = self.toks
        if toks[self.pos] == close:
            self.pos += 1
            return ()
        out = [self.expr()]
        while True:
            tok = toks[self.pos]
            self.pos += 1
            if tok == close:
                return tuple(out)
            if tok == "" or tok not in seps:
                raise _GiveUp
            out.append(self.expr())

    def call(self, name: str) -> ast.Node:
        self.pos += 1  # the "("
        args = self.items(")", ",;")
        lname = name.lower()
        if (
            (lname == "abstime" or lname == "reltime")
            and len(args) == 1
            and type(args[0]) is ast.Literal
            and type(args[0].value) is str
        ):
            parse = parse_abstime_literal if lname == "abstime" else parse_reltime_literal
            value = parse(args[0].value)
            if value is None:
                raise _GiveUp
            return ast.Literal(value)
        return ast.call(name, args)

    def record(self) -> ast.Record:
        toks = self.toks
        if toks[self.pos] == "]":
            self.pos += 1
            return ast.Record(())
        while toks[self.pos] == ";":
            self.pos += 1
        merged: dict[str, tuple[str, ast.Node]] = {}
        while True:
            name = self.name()
            if toks[self.pos] != "=":
                raise _GiveUp
            self.pos += 1
            first = self.pos
            if toks[first] and toks[first + 1] in _VALUE_ENDS:  # (the last token is always the empty end)
                node = self.primary()  # a value of one token (most are): no operators to climb
            else:
                node = self.expr()
                # A value of fewer tokens than the limit cannot be nested that deep (each
                # node has a token of its own); the record and its ancestors add levels, so
                # a long value is measured as if it were the whole tree.
                if self.pos - first >= self.max_depth // 2 and deeper_than(node, self.max_depth // 2):
                    raise _GiveUp
            key = name.lower()
            old = merged.get(key)
            merged[key] = (old[0], node) if old is not None else (name, node)
            tok = toks[self.pos]
            if tok == ";":
                while toks[self.pos] == ";":
                    self.pos += 1
                tok = toks[self.pos]
            elif tok != "]":
                raise _GiveUp
            if tok == "]":
                self.pos += 1
                return ast.Record(tuple(merged.values()))

    def name(self) -> str:
        """An attribute name: a word that is not a keyword, or a quoted name."""
        tok = self.toks[self.pos]
        self.pos += 1
        first = tok[:1]
        if first in _NAME_START:
            if tok.lower() in KEYWORDS:
                raise _GiveUp
            return tok
        if first == "'":
            return self.quoted(tok)
        raise _GiveUp

    def quoted(self, tok: str) -> str:
        if _QNAME.fullmatch(tok) is None:
            raise _GiveUp
        parts = []
        for m in QNAME_PART.finditer(tok):
            text = unescape_new(m.group(1))
            if text is None or "\0" in text:
                raise _GiveUp
            parts.append(text)
        name = "".join(parts)
        if not name:
            raise _GiveUp
        return name

    def string(self, tok: str) -> ast.Node:
        if "\0" in tok or _STRING.fullmatch(tok) is None:
            raise _GiveUp
        if "\\" not in tok and tok.count('"') == 2:
            return ast.Literal(tok[1:-1])
        parts = []
        for m in STRING_PART.finditer(tok):
            if self.old_strings:
                parts.append(unescape_old(m.group(1)))
                continue
            text = unescape_new(m.group(1))
            if text is None:
                raise _GiveUp
            parts.append(text)
        return ast.Literal("".join(parts))


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` (white space and comments dropped), then an end marker."""
    toks = _TOKEN.findall(text)
    while toks and toks[-1] == _END:
        toks.pop()
    toks.append(_END)
    return toks


# What :func:`parse` returns for valid text whose tree is nested too deeply.
TOO_DEEP = object()


def parse(text: str, start: str = "expr", old_strings: bool = False, max_depth: int = 500) -> Optional[Any]:
    """The tree of ``text`` as the Lark parser builds it for rule ``start`` (``"expr"``,
    ``"classad"`` or ``"old_line"``), or None where this parser gives up, or
    :data:`TOO_DEEP` when the text is valid but its tree is nested more than
    ``max_depth`` levels deep."""
    toks = tokens(text)
    reader = _Reader(toks, old_strings, max_depth)
    try:
        if start == "expr":
            result: Any = reader.expr()
        elif start == "classad":
            if toks[0] != "[":
                return None
            reader.pos = 1
            result = reader.record()
        elif start == "old_line":
            name = reader.name()
            if toks[reader.pos] != "=":
                return None
            reader.pos += 1
            result = (name, reader.expr())
        else:
            return None
    except (_GiveUp, IndexError, RecursionError, ValueError, OverflowError):
        return None
    if reader.pos != len(toks) - 1:
        return None
    tree = result[1] if start == "old_line" else result
    if start != "classad" and len(toks) > max_depth and deeper_than(tree, max_depth):
        return TOO_DEEP
    return result


def deeper_than(root: ast.Node, limit: int) -> bool:
    """Whether the tree has a path of more than ``limit`` nodes (walked without recursion)."""
    stack = [(root, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth > limit:
            return True
        for child in _children(node):
            push((child, depth + 1))
    return False


def _children(n: ast.Node) -> tuple:
    t = type(n)
    if t is ast.Binary or t is ast.Elvis:
        return (n.left, n.right)  # type: ignore[attr-defined]
    if t is ast.Unary:
        return (n.operand,)  # type: ignore[attr-defined]
    if t is ast.Paren:
        return (n.inner,)  # type: ignore[attr-defined]
    if t is ast.Select:
        return (n.base,)  # type: ignore[attr-defined]
    if t is ast.Subscript:
        return (n.base, n.index)  # type: ignore[attr-defined]
    if t is ast.Conditional:
        return (n.cond, n.then, n.other)  # type: ignore[attr-defined]
    if t is ast.ListExpr:
        return n.items  # type: ignore[attr-defined,no-any-return]
    if t is ast.Call:
        return n.args  # type: ignore[attr-defined,no-any-return]
    if t is ast.Record:
        return tuple(v for _, v in n.attrs)  # type: ignore[attr-defined]
    return ()


__all__ = ["TOO_DEEP", "parse", "tokens"]
