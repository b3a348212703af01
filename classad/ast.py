"""Immutable expression nodes: the closed set of ClassAd syntax kinds.

Nodes are frozen, slotted dataclasses.  One tree is shared by every ad that holds
the same expression text, so nodes never change after they are built, except for
the compiled closure cached in ``fn`` (filled on first evaluation by
:mod:`classad.evaluate`; it is not part of equality).  Per-node work that can be
done once, such as case-folding names, is done in the constructor helpers below.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, Optional


@dataclass(frozen=True, slots=True, eq=False)
class Node:
    """Base of every expression node.

    ``fn`` caches the node's compiled closure (keyword-only, so the kinds below keep
    their own fields as positional arguments).
    """

    fn: Optional[Callable] = field(default=None, compare=False, repr=False, kw_only=True)

    def __eq__(self, other: object) -> bool:
        return same_tree(self, other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)


@dataclass(frozen=True, slots=True, eq=False)
class Literal(Node):
    """A constant: bool, int, real, string, Undefined, Error, time, or a ready list/ad value."""

    value: Any


@dataclass(frozen=True, slots=True, eq=False)
class AttrRef(Node):
    """An attribute reference ``name``, or ``.name`` (absolute: starts at the root ad)."""

    name: str
    lname: str
    absolute: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Select(Node):
    """Selection ``base.name``."""

    base: Node
    name: str
    lname: str


@dataclass(frozen=True, slots=True, eq=False)
class Subscript(Node):
    """Subscript ``base[index]``."""

    base: Node
    index: Node


@dataclass(frozen=True, slots=True, eq=False)
class Binary(Node):
    """A binary operator; ``op`` is its canonical spelling (``is``/``isnt`` for meta-equality)."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True, eq=False)
class Unary(Node):
    """A prefix operator: ``-``, ``+``, ``!`` or ``~``."""

    op: str
    operand: Node


@dataclass(frozen=True, slots=True, eq=False)
class Conditional(Node):
    """The ternary ``cond ? then : other``."""

    cond: Node
    then: Node
    other: Node


@dataclass(frozen=True, slots=True, eq=False)
class Elvis(Node):
    """``left ?: right``: right when left is Undefined."""

    left: Node
    right: Node


@dataclass(frozen=True, slots=True, eq=False)
class Paren(Node):
    """Source parentheses: skipped by evaluation, kept by the printer."""

    inner: Node


@dataclass(frozen=True, slots=True, eq=False)
class ListExpr(Node):
    """A list literal ``{a, b}``."""

    items: tuple


@dataclass(frozen=True, slots=True, eq=False)
class Record(Node):
    """A nested ad literal ``[a = 1; b = 2]``: ``attrs`` is a tuple of (name, node)."""

    attrs: tuple


@dataclass(frozen=True, slots=True, eq=False)
class Call(Node):
    """A function call; ``lname`` is the case-folded name used for lookup."""

    name: str
    lname: str
    args: tuple


def attr_ref(name: str, absolute: bool = False) -> AttrRef:
    """Build an attribute reference with its folded name."""
    return AttrRef(name, name.lower(), absolute)


def select(base: Node, name: str) -> Select:
    """Build a selection with its folded name."""
    return Select(base, name, name.lower())


def call(name: str, args: tuple) -> Call:
    """Build a function call with its folded name."""
    return Call(name, name.lower(), tuple(args))


def _state_without_closure(node: Node) -> list:
    """What pickling keeps of a node: its fields, without the compiled closure (which
    cannot be pickled and is compiled again on first use)."""
    return [None if f.name == "fn" else getattr(node, f.name) for f in fields(node)]


def same_tree(a: object, b: object) -> bool:
    """Structural equality of two trees (names compared case-insensitively)."""
    if type(a) is not type(b):
        return False
    # ``b`` has ``a``'s type; each test names both so the type checker knows it too.
    if isinstance(a, Literal) and isinstance(b, Literal):
        va, vb = a.value, b.value
        if type(va) is not type(vb):
            return False
        if type(va) is float:
            return va == vb or (va != va and vb != vb)
        return va == vb
    if isinstance(a, AttrRef) and isinstance(b, AttrRef):
        return a.lname == b.lname and a.absolute == b.absolute
    if isinstance(a, Select) and isinstance(b, Select):
        return a.lname == b.lname and same_tree(a.base, b.base)
    if isinstance(a, Subscript) and isinstance(b, Subscript):
        return same_tree(a.base, b.base) and same_tree(a.index, b.index)
    if isinstance(a, Binary) and isinstance(b, Binary):
        return a.op == b.op and same_tree(a.left, b.left) and same_tree(a.right, b.right)
    if isinstance(a, Unary) and isinstance(b, Unary):
        return a.op == b.op and same_tree(a.operand, b.operand)
    if isinstance(a, Conditional) and isinstance(b, Conditional):
        return same_tree(a.cond, b.cond) and same_tree(a.then, b.then) and same_tree(a.other, b.other)
    if isinstance(a, Elvis) and isinstance(b, Elvis):
        return same_tree(a.left, b.left) and same_tree(a.right, b.right)
    if isinstance(a, Paren) and isinstance(b, Paren):
        return same_tree(a.inner, b.inner)
    if isinstance(a, ListExpr) and isinstance(b, ListExpr):
        return len(a.items) == len(b.items) and all(same_tree(x, y) for x, y in zip(a.items, b.items))
    if isinstance(a, Record) and isinstance(b, Record):  # an ad is a mapping: attribute order does not matter
        if len(a.attrs) != len(b.attrs):
            return False
        other = {name.lower(): node for name, node in b.attrs}
        return all(name.lower() in other and same_tree(node, other[name.lower()]) for name, node in a.attrs)
    if isinstance(a, Call) and isinstance(b, Call):
        return (
            a.lname == b.lname and len(a.args) == len(b.args) and all(same_tree(x, y) for x, y in zip(a.args, b.args))
        )
    return a is b


# Each node class got its own generated __getstate__ (frozen, slotted dataclasses); all of
# them leave the closure out.
for _cls in (Node, *Node.__subclasses__()):
    _cls.__getstate__ = _state_without_closure  # type: ignore[method-assign, assignment]
