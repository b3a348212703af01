"""Control and introspection: ``ifThenElse``, ``eval``, ``unparse``, ``unresolved``, ``debug``.

``ifThenElse`` is lazy (only the chosen branch is evaluated).  ``unparse`` and
``unresolved`` receive their first argument as a syntax node: it must be
written as an attribute name, and they look at the expression that attribute
holds rather than at its value.  ``eval`` parses its string argument at run
time and evaluates it in the current ad.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import regex as _rx

from .. import ast, unparse as up
from ..errors import ParseError
from ..unparse import quote_name, unparse
from ..values import ERROR, UNDEFINED, ListValue
from .common import ad_node, ad_parent, is_ad, root_ad, to_string
from .pcre import compile_pattern, search_bytes
from .registry import builtin


@builtin("ifThenElse", 3, 3, kind="lazy")
def if_then_else(ctx: Any, cond: Callable[[], Any], then: Callable[[], Any], other: Callable[[], Any]) -> Any:
    """``ifThenElse(c, a, b)``: like ``c ? a : b``, only the chosen branch is evaluated.

    ``c`` may be a bool, int or real (non-zero is true); Undefined gives
    Undefined; Error, strings, lists, ads and times give Error.
    """
    c = cond()
    t = type(c)
    if t is bool:
        chosen = c
    elif t is int:
        chosen = c != 0
    elif t is float:
        chosen = c != 0.0
    elif c is UNDEFINED:
        return UNDEFINED
    else:
        return ERROR
    return then() if chosen else other()


@builtin("eval", 1, 1)
def eval_(ctx: Any, v: Any) -> Any:
    """Parse the string form of the argument and evaluate it here: ``eval("1 + 2")`` is 3.

    ``eval(1 + 1)`` is 2 (the value is turned into text first).  Undefined,
    Error and text that does not parse give Error.
    """
    text = to_string(v)
    if type(text) is not str:
        return ERROR
    try:
        node = ctx.parse(text)
    except (ParseError, RecursionError):
        return ERROR
    return ctx.eval(node)


@builtin("debug", 1, 1)
def debug(ctx: Any, v: Any) -> Any:
    """Return the argument unchanged (the reference also logs it): ``debug(3)`` is 3."""
    return v


# --- unparse -------------------------------------------------------------------------------


def _pretty_printer() -> Any:
    """The reference's ``PrettyPrint``: the one-line printer, but ads indent by 4 and lists by 3."""

    class Pretty(up.Printer):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__(False)
            self.level = 0

        def _ad_body(self, pairs: list) -> str:
            self.level += 4
            out = "\n" + " " * self.level + "["
            self.level += 4
            parts = []
            for name, text_fn in pairs:
                parts.append("\n" + " " * self.level + up.quote_name(name) + " = " + text_fn())
            out += "; ".join(parts)
            self.level -= 4
            out += "\n" + " " * self.level + "]"
            self.level -= 4
            return out

        def _list_body(self, fns: list) -> str:
            self.level += 3
            out = "\n" + " " * self.level + "{"
            self.level += 3
            out += ",".join("\n" + " " * self.level + fn() for fn in fns)
            self.level -= 3
            out += "\n" + " " * self.level + "}"
            self.level -= 3
            return out

        def node(self, n: ast.Node) -> str:
            if type(n) is ast.Record:
                items = sorted(n.attrs, key=lambda kv: (len(kv[0]), kv[0].lower()))
                return self._ad_body([(k, (lambda v=v: self.node(v))) for k, v in items])
            if type(n) is ast.ListExpr:
                return self._list_body([(lambda i=i: self.node(i)) for i in n.items])
            return super().node(n)

        def value(self, v: Any) -> str:
            if type(v) is ListValue:
                if v.nodes is not None:
                    return self._list_body([(lambda i=i: self.node(i)) for i in v.nodes])
                return self._list_body([(lambda x=x: self.value(x)) for x in v._values or ()])
            if is_ad(v):
                items = up.ad_items_in_print_order(v)
                return self._ad_body([(k, (lambda n=n: self.node(n))) for k, n in items])
            return super().value(v)

    return Pretty()


def pretty_unparse(node: ast.Node) -> str:
    """Text of an expression as the reference's ``PrettyPrint`` writes it."""
    try:
        return _pretty_printer().node(node)
    except RecursionError:
        return ""


def _plain_name(node: Any) -> Optional[str]:
    """The folded name of a plain (unquoted, relative) attribute reference, else None."""
    if type(node) is not ast.AttrRef or node.absolute:
        return None
    if quote_name(node.name) != node.name:
        return None
    return node.lname


@builtin("unparse", 1, 1, kind="raw")
def unparse_(ctx: Any, node: ast.Node) -> Any:
    """The source text of an attribute's expression in the current ad: with ``a = x + 1``,
    ``unparse(a)`` is ``"x + 1"``.

    The argument must be written as an attribute reference (``unparse(1 + 2)``
    is Error); an attribute missing from the current ad itself (parents are not
    searched) gives ``""``, as do selections like ``unparse(a.b)``.
    """
    if type(node) is ast.Paren or (type(node) is not ast.AttrRef and type(node) is not ast.Select):
        return ERROR
    lname = _plain_name(node)
    ad = getattr(ctx, "ad", None)
    if lname is None or ad is None:
        return ""
    expr = ad_node(ad, lname)
    if expr is None:
        return ""
    return pretty_unparse(expr)


# --- unresolved --------------------------------------------------------------------------

_SPECIAL = frozenset({"toplevel", "root", "self", "parent"})
_COMPAT_SPECIAL = frozenset({"my", "currenttime"})
_DEPTH = 400


class _RefWalker:
    """The reference's external-reference collector (``_GetExternalReferences``)."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.refs: dict = {}
        self.depth = _DEPTH
        self.special = _SPECIAL if getattr(ctx.state, "strict", False) else _SPECIAL | _COMPAT_SPECIAL
        self.top = root_ad(ctx, ctx.ad) if ctx.ad is not None else None

    def add(self, name: str) -> None:
        self.refs.setdefault(name.lower(), name)

    def lookup(self, start: Any, lname: str) -> tuple:
        """(status, node-or-ad, ad where found): status 'ok', 'ad' or 'undef'."""
        cur = start
        while cur is not None:
            node = ad_node(cur, lname)
            if node is not None:
                return "ok", node, cur
            sup = None if cur is self.top else ad_parent(self.ctx, cur)
            if lname not in self.special:
                cur = sup
                if cur is start:
                    return "undef", None, None
                continue
            if lname in ("toplevel", "root"):
                return ("ad", self.top, cur) if self.top is not None else ("undef", None, None)
            if lname in ("self", "my"):
                return "ad", cur, cur
            if lname == "parent":
                return ("ad", sup, cur) if sup is not None else ("undef", None, None)
            return "ok", ast.call("time", ()), cur  # CurrentTime
        return "undef", None, None

    def walk_ad(self, ad: Any, scope: Any) -> bool:
        for _name, node in ad.node_items():
            if not self.nested(node, scope):
                return False
        return True

    def nested(self, node: Any, scope: Any) -> bool:
        if self.depth <= 0:
            return False
        self.depth -= 1
        try:
            return self.walk(node, scope)
        finally:
            self.depth += 1

    def walk(self, node: Any, scope: Any) -> bool:
        t = type(node)
        if t is ast.Literal:
            return True
        if t is ast.AttrRef:
            start = self.top if node.absolute else scope
            if start is None:
                return False
            return self.resolve(start, node.name, node.lname)
        if t is ast.Select:
            base = self.ctx.eval_in(node.base, scope) if scope is not None else UNDEFINED
            if base is UNDEFINED:
                self.add(unparse(node.base) + "." + node.name)
                return True
            if not is_ad(base):
                return False
            return self.resolve(base, node.name, node.lname)
        if t is ast.Paren:
            return self.walk(node.inner, scope)
        if t is ast.Unary:
            return self.walk(node.operand, scope)
        if t is ast.Binary:
            return self.walk(node.left, scope) and self.walk(node.right, scope)
        if t is ast.Elvis:
            return self.walk(node.left, scope) and self.walk(node.right, scope)
        if t is ast.Subscript:
            return self.walk(node.base, scope) and self.walk(node.index, scope)
        if t is ast.Conditional:
            return all(self.walk(x, scope) for x in (node.cond, node.then, node.other))
        if t is ast.Call:
            return all(self.nested(a, scope) for a in node.args)
        if t is ast.ListExpr:
            return all(self.nested(a, scope) for a in node.items)
        if t is ast.Record:
            return all(self.nested(v, scope) for _k, v in node.attrs)
        return False

    def resolve(self, start: Any, name: str, lname: str) -> bool:
        status, found, where = self.lookup(start, lname)
        if status == "undef":
            self.add(name)
            return True
        if status == "ad":
            return self.nested_ad(found)
        return self.nested(found, where)

    def nested_ad(self, ad: Any) -> bool:
        if self.depth <= 0:
            return False
        self.depth -= 1
        try:
            return self.walk_ad(ad, ad)
        finally:
            self.depth += 1


@builtin("unresolved", 1, 2, kind="raw")
def unresolved(ctx: Any, node: ast.Node, *rest: ast.Node) -> Any:
    """Attributes an attribute's expression refers to that no ad defines, comma-separated:
    with ``a = b + x; b = 1``, ``unresolved(a)`` is ``"x"``.

    A ``TARGET.`` prefix is dropped.  With a second argument (a regular
    expression, matched case-insensitively) the result is whether any such name
    matches.  An attribute that does not exist gives Undefined; a first argument
    that is not an attribute name gives Error.
    """
    if type(node) is not ast.AttrRef and type(node) is not ast.Select:
        return ERROR
    ad = getattr(ctx, "ad", None)
    walker = _RefWalker(ctx)
    if isinstance(node, ast.Select):  # no subclasses: the same test as type(node) is ast.Select
        base = ctx.eval(node.base)
        if not is_ad(base):
            return UNDEFINED
        status, found, where = walker.lookup(base, node.lname)
    else:
        if ad is None:
            return UNDEFINED
        start = walker.top if node.absolute else ad
        status, found, where = walker.lookup(start, node.lname)
    if status == "undef":
        return UNDEFINED
    pattern = None
    if rest:
        pv = ctx.eval(rest[0])
        if type(pv) is not str:
            return ERROR
        if compile_pattern(pv, _rx.IGNORECASE) is None:
            return ERROR
        pattern = pv
    ok = walker.walk_ad(found, found) if status == "ad" else walker.walk(found, where)
    names = []
    if ok:
        for key in sorted(walker.refs, key=lambda k: k.encode("utf-8", "surrogateescape")):
            name = walker.refs[key]
            if key.startswith("target."):
                name = name[7:]
            names.append(name)
    if pattern is not None:
        for name in names:
            if search_bytes(pattern, name, _rx.IGNORECASE, notempty=True) is True:
                return True
        return False
    return ",".join(names)
