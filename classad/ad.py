"""``ClassAd`` and ``ExprTree``: the Python face of the language, shaped like ``classad2``.

A :class:`ClassAd` is a case-insensitive mutable mapping from attribute names to
expressions that keeps the first spelling of each name.  Values read with
``ad[key]`` follow ``classad2``'s conventions: literals come back as Python
values (``bool``, ``int``, ``float``, ``str``, ``datetime``, lists, nested
``ClassAd``, ``Value.Undefined``/``Value.Error``), anything else as an
:class:`ExprTree`.  ``ad.eval(key)`` evaluates.

Internally each ad maps the folded name to ``(spelling, node)``; nodes are the
shared immutable trees of :mod:`classad.ast`, so copying an ad is cheap.
"""

from __future__ import annotations

import datetime
from collections.abc import MutableMapping
from typing import Any, Iterator, Optional

from . import ast
from .adcore import AdCore, lower_key
from .errors import ParseError
from .evaluate import EvalState, eval_attribute, evaluate_top, new_state
from .layout import SharedAttrs
from .parser import parse_expr, parse_record
from .printing.json_text import write_ad as json_text
from .printing.new_text import write_ad_pretty
from .printing.old_text import print_old
from .refs import external_refs, internal_refs
from .unparse import container_key, unparse, unparse_ad
from .values import ERROR, INT64_MAX, INT64_MIN, UNDEFINED, AbsTime, ListValue, RelTime, Value, truthiness

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


class ClassAd(AdCore, MutableMapping):
    """A ClassAd: built from new-syntax text (``"[a = 1]"``), a dict, or nothing."""

    __slots__ = ()

    def __init__(self, source: Any = None) -> None:
        self._attrs: dict[str, tuple[str, ast.Node]] | SharedAttrs = {}
        self.parent: Optional[AdCore] = None
        if source is None:
            return
        if isinstance(source, str):
            record = parse_record(source)
            self._attrs = {pair[0].lower(): pair if type(pair) is tuple else tuple(pair) for pair in record.attrs}
        elif isinstance(source, AdCore):
            self._attrs = source._attrs if type(source._attrs) is SharedAttrs else dict(source._attrs)
        elif hasattr(source, "items"):
            for key, value in source.items():
                self[key] = value
        else:
            raise TypeError(f"cannot build a ClassAd from {type(source).__name__}")

    # ---- mapping protocol ----------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        entry = self._attrs.get(key.lower())
        if entry is None:
            raise KeyError(key)
        return node_to_python(entry[1], self)

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError("ClassAd attribute names must be strings")
        self.set_node(key, python_to_node(value))

    def __delitem__(self, key: str) -> None:
        del self._writable()[key.lower()]

    def __iter__(self) -> Iterator[str]:
        # classad2's order (its hash container's): by byte length, then case-insensitively.
        return iter(sorted((name for name, _ in self._attrs.values()), key=container_key))

    def __len__(self) -> int:
        return len(self._attrs)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._attrs

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AdCore):
            return NotImplemented
        if len(self._attrs) != len(other._attrs):
            return False
        for key, (_, node) in self._attrs.items():
            entry = other._attrs.get(key)
            if entry is None or not ast.same_tree(node, entry[1]):
                return False
        return True

    __hash__ = None  # type: ignore[assignment]

    # ---- evaluation ----------------------------------------------------------------

    def eval(self, attr: str, target: Optional["ClassAd"] = None) -> Any:
        """Evaluate attribute ``attr`` of this ad; KeyError if it is missing."""
        node = self.lookup_node(attr.lower())
        if node is None:
            raise KeyError(attr)
        return value_to_python(self.evaluate(attr, target))

    def evaluate(self, attr: str, target: Optional["ClassAd"] = None, state: Optional[EvalState] = None) -> Any:
        """Evaluate ``attr`` and return the raw language value (Undefined if missing)."""
        lname = attr.lower()
        node = self.lookup_node(lname)
        if node is None:
            return UNDEFINED
        st = state or new_state(self, target)
        try:
            return eval_attribute(self, lname, node, st)
        except RecursionError:
            return ERROR

    def lookup(self, attr: str) -> "ExprTree":
        """The expression of ``attr`` (not evaluated); KeyError if it is missing."""
        node = self.lookup_node(attr.lower())
        if node is None:
            raise KeyError(attr)
        return ExprTree._wrap(node)

    def get(self, key: str, default: Any = None) -> Any:
        entry = self._attrs.get(key.lower())
        return default if entry is None else node_to_python(entry[1], self)

    def matches(self, other: "ClassAd") -> bool:
        """True if ``other``'s Requirements hold with ``other`` as MY and this ad as TARGET."""
        return other._requirements_true(self)

    def symmetricMatch(self, other: "ClassAd") -> bool:  # classad2 name
        """True if each ad's Requirements hold against the other."""
        return self.matches(other) and other.matches(self)

    symmetric_match = symmetricMatch

    def _requirements_true(self, target: "ClassAd") -> bool:
        node = self.lookup_node("requirements")
        if node is None:
            return False
        st = new_state(self, target)
        try:
            value = eval_attribute(self, "requirements", node, st)
        except RecursionError:
            return False
        return truthiness(value) is True

    def externalRefs(self, expr: Any) -> list[str]:  # classad2 name
        """Names ``expr`` uses that this ad does not define: with ``[bar = 2]``,
        ``externalRefs(ExprTree("foo =?= bar"))`` is ``["foo"]``.  ValueError if the
        references cannot be determined (a selection from a non-ad)."""
        return external_refs(self, expr if isinstance(expr, ExprTree) else ExprTree(expr))

    def internalRefs(self, expr: Any) -> list[str]:  # classad2 name
        """Names ``expr`` uses that this ad defines (``["bar"]`` in the example above)."""
        return internal_refs(self, expr if isinstance(expr, ExprTree) else ExprTree(expr))

    external_refs = externalRefs
    internal_refs = internalRefs

    def flatten(self, expr: Any) -> "ExprTree":
        """Evaluate ``expr`` in this ad and return the value as an expression."""
        tree = expr if isinstance(expr, ExprTree) else ExprTree(str(expr))
        return tree.simplify(self)

    # ---- printing --------------------------------------------------------------------

    def __repr__(self) -> str:
        return unparse_ad(self)

    def __str__(self) -> str:
        return write_ad_pretty(self)

    def printOld(self) -> str:  # classad2 name
        """The ad in old ("long") format: ``Name = value`` lines, as ``classad2`` prints them."""
        return print_old(self)

    def printJson(self) -> str:  # classad2 name
        """The ad as a JSON object, as ``condor_q -json`` prints it."""
        return json_text(self)

    print_old = printOld
    print_json = printJson


class ExprTree:
    """A parsed expression, as ``classad2.ExprTree``: ``ExprTree("a + 1").eval(ad)``."""

    __slots__ = ("_node",)

    def __init__(self, text: Any = None) -> None:
        self._node: ast.Node
        if text is None:  # classad2: no argument is the expression ``undefined``
            self._node = ast.Literal(UNDEFINED)
        elif isinstance(text, ExprTree):
            self._node = text._node
        elif isinstance(text, str):
            self._node = parse_expr(text)
        else:
            self._node = python_to_node(text)

    @classmethod
    def _wrap(cls, node: ast.Node) -> "ExprTree":
        tree = cls.__new__(cls)
        tree._node = node
        return tree

    @property
    def node(self) -> ast.Node:
        """The immutable expression tree."""
        return self._node

    def eval(self, scope: Optional[ClassAd] = None, target: Optional[ClassAd] = None) -> Any:
        """Evaluate with ``scope`` as MY and ``target`` as TARGET; returns a Python value."""
        return value_to_python(self.evaluate(scope, target))

    def evaluate(
        self, scope: Optional[ClassAd] = None, target: Optional[ClassAd] = None, state: Optional[EvalState] = None
    ) -> Any:
        """Evaluate and return the raw language value."""
        return evaluate_top(self._node, scope, state or new_state(scope, target))

    def simplify(self, scope: Optional[ClassAd] = None, target: Optional[ClassAd] = None) -> "ExprTree":
        """Evaluate and return the value as an expression (what ``classad_eval`` prints)."""
        return ExprTree._wrap(value_to_node(self.evaluate(scope, target)))

    def sameAs(self, other: "ExprTree") -> bool:  # classad2 name
        """Structural equality."""
        return ast.same_tree(self._node, other._node)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ExprTree):
            return repr(self) == repr(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        return unparse(self._node)

    __str__ = __repr__


# ---- conversions between Python and the language -----------------------------------------


def python_to_node(value: Any) -> ast.Node:
    """An expression node for a Python value (what ``ad[key] = value`` stores)."""
    if isinstance(value, ExprTree):
        return value._node
    if isinstance(value, ast.Node):
        return value
    t = type(value)
    if t is int and not INT64_MIN <= value <= INT64_MAX:
        raise OverflowError(f"{value} does not fit a ClassAd integer (64 bits)")
    if t is bool or t is int or t is float or t is str:
        return ast.Literal(value)
    if t is bytes:  # classad2 stores byte strings as (UTF-8) strings
        return ast.Literal(value.decode("utf-8"))
    if isinstance(value, Value):
        return ast.Literal(UNDEFINED if value == Value.Undefined else ERROR)
    if isinstance(value, AdCore):
        return ast.Record(tuple(value.node_items()))
    if isinstance(value, dict):
        return python_to_node(ClassAd(value))
    if isinstance(value, (list, tuple)):
        return ast.ListExpr(tuple(python_to_node(v) for v in value))
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.astimezone()
        offset = value.utcoffset()
        # Whole seconds, rounded down, as classad2 stores them (microseconds are dropped).
        secs = (value - _EPOCH) // datetime.timedelta(seconds=1)
        return ast.Literal(AbsTime(secs, int(offset.total_seconds()) if offset else 0))
    if isinstance(value, datetime.timedelta):
        return ast.Literal(RelTime(value.total_seconds()))
    if isinstance(value, int):  # int subclasses (e.g. IntEnum members other than Value)
        return python_to_node(int(value))
    if isinstance(value, float):
        return ast.Literal(float(value))
    raise TypeError(f"cannot convert {t.__name__} to a ClassAd expression")


def value_to_node(value: Any) -> ast.Node:
    """A literal node holding an evaluated value (for printing it)."""
    return ast.Literal(value)


def _abstime_to_datetime(v: AbsTime) -> datetime.datetime:
    return _EPOCH + datetime.timedelta(seconds=v.secs)


def value_to_python(value: Any) -> Any:
    """A language value converted as ``classad2`` converts evaluation results."""
    t = type(value)
    if t is bool or t is int or t is float or t is str or t is Value:
        return value
    if t is ListValue:
        if value.nodes is None:
            return [value_to_python(v) for v in value._values]
        return [node_to_python(n, value.scope) for n in value.nodes]
    if t is AbsTime:
        return _abstime_to_datetime(value)
    if t is RelTime:
        return float(value.secs)
    if isinstance(value, ClassAd):
        return value
    if isinstance(value, AdCore):  # an ad made by the evaluator: handed over as a ClassAd
        return ClassAd.from_nodes(tuple(value.node_items()), value.parent)
    return value


def node_to_python(node: ast.Node, scope: Optional[ClassAd] = None) -> Any:
    """A stored expression as ``classad2`` returns it: literals as values, else ExprTree."""
    if type(node) is ast.Literal:
        return value_to_python(node.value)
    if type(node) is ast.ListExpr:
        return [node_to_python(n, scope) for n in node.items]
    if type(node) is ast.Record:
        return ClassAd.from_nodes(node.attrs, None)
    return ExprTree._wrap(node)


__all__ = ["ClassAd", "ExprTree", "ParseError", "lower_key", "python_to_node", "value_to_python", "node_to_python"]
