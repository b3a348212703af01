"""Which attributes an expression refers to: ``ClassAd.externalRefs`` / ``internalRefs``.

Both walk the expression as HTCondor's reference collectors do, with the ad the
method is called on as the root (names found only in its enclosing ads count
as external):

* an unscoped name found in the ad (or one of its special names) is followed
  into the expression it names; a name found nowhere is *external*;
* ``base.name`` evaluates ``base``: an Undefined base makes the whole
  ``base.name`` text external, an ad is searched for ``name``, anything else
  cannot be analysed (``ValueError``, as in ``classad2``);
* a name found in the root ad itself is *internal*;
* nested ad literals in the expression are walked in the scope of the
  expression (not their own), and following a chain of attributes more than
  400 deep cannot be analysed either.

Results are sorted case-insensitively; a name reached in two spellings is
reported in the first one met.
"""

from __future__ import annotations

from typing import Any, Optional

from . import ast
from .adcore import AdCore
from .evaluate import evaluate_node, new_state
from .unparse import unparse
from .values import UNDEFINED

_MAX_DEPTH = 400
_SPECIAL = frozenset({"toplevel", "root", "self", "my", "parent", "currenttime"})


class RefsUnknown(Exception):
    """The expression's references cannot be determined (raised as ValueError by the API)."""


class _Walker:
    """One walk over an expression, collecting external or internal names."""

    def __init__(self, root: Any, internal: bool) -> None:
        self.root = root
        self.internal = internal
        self.state = new_state(root)
        self.found: dict[str, str] = {}
        self.depth = _MAX_DEPTH
        self.cur = root
        self.literal_parent: Any = None  # the query's ad literal being walked, if any
        self.following = 0  # > 0 while walking an attribute's expression, not the query's
        self.in_scope_part = False  # walking the ``base`` of ``base.name`` (internal only)
        self.special = _SPECIAL - {"my", "currenttime"} if self.state.strict else _SPECIAL

    def add(self, name: str) -> None:
        self.found.setdefault(name.lower(), name)

    def names(self) -> list[str]:
        keys = sorted(self.found, key=lambda k: k.encode("utf-8", "surrogateescape"))
        return [self.found[k] for k in keys]

    # ---- scope search ---------------------------------------------------------------

    def _up(self, ad: Any) -> Optional[Any]:
        return None if ad is self.root else ad.parent

    def lookup(self, start: Any, lname: str) -> Optional[tuple[Any, Any]]:
        """``(expression node or ad, ad where found)`` for ``lname`` from ``start``, or None.

        Like the C++ search, it leaves ``self.cur`` at the last ad it looked in.
        """
        cur = start
        while cur is not None:
            self.cur = cur
            node = cur.lookup_node(lname)
            if node is not None:
                return node, cur
            sup = self._up(cur)
            if lname not in self.special:
                cur = sup
                if cur is start:
                    return None
                continue
            if lname in ("toplevel", "root"):
                return self.root, cur
            if lname in ("self", "my"):
                return cur, cur
            if lname == "parent":
                return (sup, cur) if sup is not None else None
            return ast.call("time", ()), cur  # CurrentTime
        return None

    # ---- the walk: ``self.cur`` is the ad unscoped names are looked up from ----------------

    def deeper(self, node: Any) -> None:
        if self.depth <= 0:
            raise RefsUnknown("references nested too deeply")
        self.depth -= 1
        try:
            self.walk(node)
        finally:
            self.depth += 1

    def walk(self, node: Any) -> None:
        t = type(node)
        if t is ast.Literal:
            return
        if t is ast.AttrRef:
            self.reference(self.root if node.absolute else self.cur, node.name, node.lname)
        elif t is ast.Select:
            self.selection(node)
        elif t is ast.Paren:
            self.walk(node.inner)
        elif t is ast.Unary:
            self.walk(node.operand)
        elif t is ast.Binary or t is ast.Elvis:
            self.walk(node.left)
            self.walk(node.right)
        elif t is ast.Subscript:
            self.walk(node.base)
            self.walk(node.index)
        elif t is ast.Conditional:
            for part in (node.cond, node.then, node.other):
                self.walk(part)
        elif t is ast.Call:
            for arg in node.args:
                self.deeper(arg)
        elif t is ast.ListExpr:
            for item in node.items:
                self.deeper(item)
        elif t is ast.Record:
            self.record(node)
        elif isinstance(node, AdCore):  # an ad reached through a special name
            self.ad_body([n for _, n in node.node_items()])
        else:
            raise RefsUnknown(f"cannot analyse {t.__name__}")

    def ad_body(self, nodes: list) -> None:
        if self.internal and self.in_scope_part:
            return  # an ad used only to scope a selection: its body is not referenced
        for n in nodes:
            self.deeper(n)

    def record(self, node: ast.Record) -> None:
        if self.following:
            self.ad_body([n for _, n in node.attrs])
            return
        # Inside an ad literal of the query, nested literals have it as their parent.
        saved = self.literal_parent
        self.literal_parent = self.literal_ad(node)
        try:
            self.ad_body([n for _, n in node.attrs])
        finally:
            self.literal_parent = saved

    def literal_ad(self, node: ast.Record) -> Any:
        return AdCore.from_nodes(node.attrs, self.literal_parent)

    def selection(self, node: ast.Select) -> None:
        if self.internal:
            saved, self.in_scope_part = self.in_scope_part, True
            try:
                self.walk(node.base)
            finally:
                self.in_scope_part = saved
        base = self.scope_value(node.base)
        if base is UNDEFINED:
            if not self.internal:
                self.add(unparse(node.base) + "." + node.name)
            return
        if not isinstance(base, AdCore):
            raise RefsUnknown("the scope of a selection is not an ad")
        self.reference(base, node.name, node.lname)

    def scope_value(self, base: Any) -> Any:
        """The value of a selection's ``base``.  Ad literals written in the analysed
        expression itself are not inside the root ad (those held by attributes are)."""
        if not self.following:
            base = self.detached(base)
        return evaluate_node(base, self.cur, self.state)

    def detached(self, node: Any) -> Any:
        """``node`` with its ad literals replaced by ads outside the root ad."""
        t = type(node)
        if t is ast.Record:
            return ast.Literal(self.literal_ad(node))
        if t is ast.Literal or t is ast.AttrRef:
            return node
        if t is ast.Select:
            return ast.Select(self.detached(node.base), node.name, node.lname)
        if t is ast.Subscript:
            return ast.Subscript(self.detached(node.base), self.detached(node.index))
        if t is ast.Binary:
            return ast.Binary(node.op, self.detached(node.left), self.detached(node.right))
        if t is ast.Elvis:
            return ast.Elvis(self.detached(node.left), self.detached(node.right))
        if t is ast.Unary:
            return ast.Unary(node.op, self.detached(node.operand))
        if t is ast.Paren:
            return ast.Paren(self.detached(node.inner))
        if t is ast.Conditional:
            return ast.Conditional(*(self.detached(x) for x in (node.cond, node.then, node.other)))
        if t is ast.ListExpr:
            return ast.ListExpr(tuple(self.detached(x) for x in node.items))
        if t is ast.Call:
            return ast.Call(node.name, node.lname, tuple(self.detached(x) for x in node.args))
        return node

    def reference(self, start: Any, name: str, lname: str) -> None:
        saved = self.cur
        hit = self.lookup(start, lname)
        if hit is None:
            if not self.internal:
                self.add(name)
                self.cur = saved
            # internalRefs keeps looking up later names from where this search ended,
            # as the C++ collector does (see docs/differences.md)
            return
        target, where = hit
        if self.internal and where is self.root and self.root.lookup_node(lname) is not None:
            self.add(name)
        self.cur = where
        self.following += 1
        try:
            self.deeper(target)
        finally:
            self.following -= 1
            self.cur = saved


def _refs(ad: Any, tree: Any, internal: bool) -> list[str]:
    walker = _Walker(ad, internal)
    try:
        walker.walk(tree.node)
    except (RefsUnknown, RecursionError):
        kind = "internal" if internal else "external"
        raise ValueError(f"Unable to determine {kind} references.") from None
    return walker.names()


def external_refs(ad: Any, expr: Any) -> list[str]:
    """Names ``expr`` refers to, evaluated in ``ad``, that ``ad`` does not define."""
    return _refs(ad, expr, internal=False)


def internal_refs(ad: Any, expr: Any) -> list[str]:
    """Names ``expr`` refers to, evaluated in ``ad``, that ``ad`` itself defines."""
    return _refs(ad, expr, internal=True)
