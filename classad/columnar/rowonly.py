"""Sub-expressions that depend on the row alone, computed once per table.

Slot policies repeat the same row-only parts in many texts: a pool whose START
expressions differ only in the owners they accept still computes
``KeyboardIdle > 15 * 60 && LoadAvg - CondorLoadAvg <= 0.3`` in every one.  A
sub-expression is *row-only* when its value cannot depend on the fixed ad or on
the evaluation: it names only attributes every row holds (so no lookup falls
through to the fixed ad), or ``MY.x``, whose own expressions are row-only in
turn without a cycle; it calls only pure functions; it has no ``TARGET``,
absolute or special names.  Such a value is computed over every row of the
table and then shared by every evaluation and every ad text in which the same
sub-expression appears: sub-expressions are compared by *shape* (node kinds,
operators, names and exact literal values), not by identity.

The fixed ad's own expressions hold row-only parts too: a job's Requirements reads
the slot through ``TARGET.Arch == "X86_64"``, the same in a thousand requests.
:meth:`RowOnly.partner_form` rewrites such a part into its row-scope twin
(``MY.Arch == "X86_64"``), which then shares a value like any other.

A shape is computed over the whole table only when it is asked for a second
time, so a pool whose row-only parts are each used by a single slot pays
nothing for the sharing.  Values are kept packed and their memory is bounded like
:mod:`classad.columnar.memo`.

A table carried to a successor (:meth:`~classad.columnar.table.AdTable.follow`) hands
this object on (:meth:`RowOnly.moved_to`): each value remembers its generation and the
attributes it read, and is brought up to date when next used (only the rows where one of
those attributes changed are computed again).  The verdicts of the analysis depend on
which rows hold which expressions, so they are made again when that changed.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any, Optional

from .. import ast
from ..functions import registry
from .column import Column, Const, Packed
from .table import HOLDS_NOTHING, AdTable

_UNIQUE = "unique"  # shape of a node that is never row-only (compared by identity)
_MY = ast.attr_ref("MY")
_PARTNER = frozenset({"target", "other"})
DEFAULT_BUDGET = 32 * 1024 * 1024


class RowOnly:
    """Shapes, row-only verdicts and shared values of one table's sub-expressions."""

    def __init__(self, table: AdTable, weird: frozenset, pure: Any, budget: int = DEFAULT_BUDGET) -> None:
        # The table holds this object (``table.row_only``): a weak reference back keeps the
        # pair out of a reference cycle, so a table and its ads are freed as soon as unused.
        self.t: AdTable = weakref.proxy(table)
        self._weird = weird
        self._pure = pure
        self._by_id: dict[int, tuple[Any, int, int]] = {}  # id(node) -> (node, shape code, depth)
        self._shapes: dict[tuple, int] = {}
        self._attr_depth: dict[str, int] = {}
        self._asked: set[tuple] = set()
        self._partner: dict[int, tuple[Any, Any]] = {}  # id(node) -> (node, row-scope twin or None)
        self.values: OrderedDict[tuple, Kept] = OrderedDict()
        self.budget = budget
        self.nbytes = 0

    def moved_to(self, table: AdTable, structure_changed: bool) -> "RowOnly":
        """This object serving ``table``, the successor of its table (see the module
        docstring); the analysis is made again if ``structure_changed``."""
        self.t = weakref.proxy(table)
        if structure_changed:
            self._by_id.clear()
            self._attr_depth.clear()
        return self

    # ---- analysis ---------------------------------------------------------------------

    def shape(self, node: Any) -> tuple[int, int]:
        """(shape code, depth): depth is -1 when ``node`` is not row-only, else how many
        attribute expressions deep its value reaches."""
        hit = self._by_id.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1], hit[2]
        key, depth = self._analyse(node)
        code = self._shapes.setdefault(key, len(self._shapes))
        self._by_id[id(node)] = (node, code, depth)
        return code, depth

    def _analyse(self, node: Any) -> tuple[tuple, int]:
        t = type(node)
        if t is ast.Literal:
            v = node.value
            tv = type(v)
            if tv is float:
                return ("L", tv, v.hex()), 0
            if tv in (int, bool, str):
                return ("L", tv, v), 0
            return (_UNIQUE, id(node)), 0
        if t is ast.AttrRef:
            if node.absolute or node.lname in self._weird:
                return (_UNIQUE, id(node)), -1
            col = self.t.column(node.lname)
            depth = -1 if col.any_missing else self._attr(node.lname)
            return ("a", node.lname), depth
        if t is ast.Select:
            base = node.base
            if (
                type(base) is ast.AttrRef
                and not base.absolute
                and base.lname == "my"
                and node.lname not in self._weird
                and bool((self.t.column("my").holds == HOLDS_NOTHING).all())
            ):
                return ("my", node.lname), self._attr(node.lname)
            return (_UNIQUE, id(node)), -1
        if t is ast.Call:
            entry = registry.lookup(node.lname)
            ok = (
                entry is not None
                and entry.accepts(len(node.args))
                and (
                    self._pure(entry)
                    and not getattr(entry.impl, "stable_in_evaluation", False)
                    or node.lname
                    in ("ifthenelse", "isundefined", "iserror", "isstring", "isinteger", "isreal", "isboolean")
                )
            )
            return self._compound(("c", node.lname), node.args, ok)
        if t is ast.Binary:
            return self._compound(("b", node.op), (node.left, node.right), True)
        if t is ast.Unary:
            return self._compound(("u", node.op), (node.operand,), True)
        if t is ast.Conditional:
            return self._compound(("?",), (node.cond, node.then, node.other), True)
        if t is ast.Elvis:
            return self._compound(("?:",), (node.left, node.right), True)
        if t is ast.Paren:
            return self._compound(("p",), (node.inner,), True)
        if t is ast.ListExpr and all(type(i) is ast.Literal for i in node.items):
            return self._compound(("list",), node.items, True)
        return (_UNIQUE, id(node)), -1

    # ---- the fixed ad's parts that read only the rows ----------------------------------

    def partner_form(self, node: Any) -> Optional[Any]:
        """For ``node`` in the fixed ad's scope: the same expression in the rows' scope if
        it reads the rows only through ``TARGET.x``/``OTHER.x`` (now ``MY.x``) and nothing
        of the fixed ad; else None.  The caller makes sure the fixed ad has no attribute
        named ``target`` or ``other`` (which would make those names its own)."""
        hit = self._partner.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        twin = _row_twin(node)
        self._partner[id(node)] = (node, twin)
        return twin

    def _compound(self, head: tuple, children: Any, ok: bool) -> tuple[tuple, int]:
        codes, depth = [], 0 if ok else -1
        for child in children:
            code, d = self.shape(child)
            codes.append(code)
            depth = -1 if d < 0 or depth < 0 else max(depth, d)
        return head + tuple(codes), depth

    def _attr(self, lname: str) -> int:
        """Depth of attribute ``lname``'s expressions (-1: not row-only, or in a cycle)."""
        d = self._attr_depth.get(lname)
        if d is not None:
            return d
        self._attr_depth[lname] = -1  # a reference back to it while analysing is a cycle
        depth = 0
        for n in self.t.column(lname).nodes:
            nd = self.shape(n)[1]
            if nd < 0:
                depth = -1
                break
            depth = max(depth, nd + 1)
        self._attr_depth[lname] = depth
        return depth

    # ---- values -----------------------------------------------------------------------

    def get(self, key: tuple) -> Optional["Kept"]:
        """The kept value of shape ``key`` (perhaps of an older generation), None when not kept."""
        v = self.values.get(key)
        if v is not None:
            self.values.move_to_end(key)
        return v

    def drop(self, key: tuple) -> None:
        """Forget the value of shape ``key``."""
        old = self.values.pop(key, None)
        if old is not None:
            self.nbytes -= _size(old.value)

    def worth_computing(self, key: tuple) -> bool:
        """True from the second time ``key`` is asked for."""
        if key in self._asked:
            return True
        self._asked.add(key)
        return False

    def put(self, key: tuple, value: Const | Column, node: Any, deps: frozenset) -> None:
        """Keep ``value`` (over every row) for shape ``key``, computed from ``node`` (one
        expression of that shape) reading the attributes ``deps``."""
        kept = Kept(value if type(value) is Const else Packed(value), self.t.generation, deps, node)  # type: ignore[arg-type]
        self.drop(key)
        self.nbytes += _size(kept.value)
        self.values[key] = kept
        while self.nbytes > self.budget and len(self.values) > 1:
            self.nbytes -= _size(self.values.popitem(last=False)[1].value)


class Kept:
    """A row-only value, the generation of the table it was computed over, the attributes
    it read, and an expression of its shape (to compute rows again)."""

    __slots__ = ("value", "generation", "deps", "node")

    def __init__(self, value: Const | Packed, generation: int, deps: frozenset, node: Any) -> None:
        self.value, self.generation, self.deps, self.node = value, generation, deps, node


def _row_twin(node: Any) -> Optional[Any]:
    """See :meth:`RowOnly.partner_form` (no caching here)."""
    t = type(node)
    if t is ast.Literal:
        return node
    if t is ast.Select:
        base = node.base
        if type(base) is ast.AttrRef and not base.absolute and base.lname in _PARTNER:
            return ast.select(_MY, node.name)
        return None
    if t is ast.Binary:
        left, right = _row_twin(node.left), _row_twin(node.right)
        return None if left is None or right is None else ast.Binary(node.op, left, right)
    if t is ast.Unary:
        operand = _row_twin(node.operand)
        return None if operand is None else ast.Unary(node.op, operand)
    if t is ast.Paren:
        inner = _row_twin(node.inner)
        return None if inner is None else ast.Paren(inner)
    if t is ast.Conditional or t is ast.Elvis or t is ast.Call:
        parts = (
            (node.cond, node.then, node.other)
            if t is ast.Conditional
            else (node.left, node.right)
            if t is ast.Elvis
            else node.args
        )
        twins: list[Any] = [_row_twin(p) for p in parts]
        if any(x is None for x in twins):
            return None
        if t is ast.Conditional:
            return ast.Conditional(*twins)
        if t is ast.Elvis:
            return ast.Elvis(*twins)
        return ast.call(node.name, tuple(twins))
    if t is ast.ListExpr and all(type(i) is ast.Literal for i in node.items):
        return node
    return None


def _size(v: Optional[Const | Packed]) -> int:
    return v.nbytes if type(v) is Packed else 0  # type: ignore[union-attr]


__all__ = ["Kept", "RowOnly"]
