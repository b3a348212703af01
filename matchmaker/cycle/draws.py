"""Whether evaluating a request's match expressions over the slot table could draw random numbers.

The columnar candidate-list build (:mod:`.columnar_match`) may evaluate an expression on
fewer rows, or in another order, than a plain walk through its stages would, when the
rows left out cannot change the list.  That is exact only if none of those evaluations
draws from the run's random source: one draw skipped or moved shifts every later one (a
simulation's ``--seed`` repeats a run exactly).  An expression can draw when it calls
``random``, or ``eval`` (whose text may call it), or names an attribute, of the request or
of a slot, whose expression can draw in turn.

:class:`DrawCheck` follows the names an expression can read, on each side, the way the
evaluator resolves them (``MY.x`` on its own side, ``TARGET.x`` on the other, a bare ``x``
on its own side and on the other where an ad lacks it), and answers False only when no
expression it reaches draws.  Whatever it cannot follow (a whole ad as a value, names such
as ``parent`` or ``symmetricMatch``, a literal holding an ad) counts as drawing.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, Sequence

from classad import ast
from classad.columnar import AdTable
from classad.columnar.compile import SPECIAL_NAMES
from classad.values import ERROR, UNDEFINED, AbsTime, RelTime

# Functions that draw, or evaluate a text that may.
_DRAWING = frozenset(("random", "eval"))
# Names that stand for a whole ad or a match context rather than an attribute: the
# evaluator's special names but ``currenttime``, a number read like any bare name (an ad
# may define it; where none does it is the clock, which draws nothing).
_WHOLE = SPECIAL_NAMES - {"currenttime"}
_PLAIN = (bool, int, float, str)
_TIMES = (AbsTime, RelTime)
# How a name is read: on the expression's own side, on the other side, or bare (its own
# side, then the other where that ad lacks it).
OWN, PARTNER, BARE = 0, 1, 2
ROW, FIXED = 0, 1

_LIMIT = 200_000


class _Summary:
    """What one expression tree can do: draw itself, or read these names."""

    __slots__ = ("node", "draws", "reads")

    def __init__(self, node: Any, draws: bool, reads: frozenset[tuple[int, str]]) -> None:
        self.node, self.draws, self.reads = node, draws, reads


_summaries: dict[int, _Summary] = {}


def summary(node: Any) -> _Summary:
    """The :class:`_Summary` of a tree, remembered per node (trees are immutable and shared)."""
    hit = _summaries.get(id(node))
    if hit is not None and hit.node is node:
        return hit
    reads: set[tuple[int, str]] = set()
    draws = _walk(node, reads)
    if len(_summaries) > _LIMIT:
        _summaries.clear()
    hit = _summaries[id(node)] = _Summary(node, draws, frozenset(reads))
    return hit


def _walk(node: Any, reads: set[tuple[int, str]]) -> bool:
    """Add the names ``node`` reads to ``reads``; True when it may draw (or cannot be followed)."""
    if not isinstance(node, ast.Node):
        return True
    todo: list[Any] = [node]
    while todo:
        n = todo.pop()
        t = type(n)
        if t is ast.Literal:
            v = n.value
            if not (type(v) in _PLAIN or v is UNDEFINED or v is ERROR or type(v) in _TIMES):
                return True  # a list or ad value: its parts are not followed
        elif t is ast.AttrRef:
            if n.lname in _WHOLE:
                return True
            reads.add((BARE, n.lname))
        elif t is ast.Select:
            base = n.base
            if type(base) is ast.AttrRef and not base.absolute and base.lname in ("my", "target", "other"):
                reads.add((OWN if base.lname == "my" else PARTNER, n.lname))
            else:  # an attribute of some other ad value: read anywhere
                reads.add((BARE, n.lname))
                reads.add((PARTNER, n.lname))
                todo.append(base)
        elif t is ast.Call and n.lname in _DRAWING:
            return True
        elif t is ast.Record:
            for name, value in n.attrs:
                reads.add((BARE, name.lower()))
                todo.append(value)
        else:
            parts = n if t is tuple else [getattr(n, f.name) for f in dataclasses.fields(n) if f.name != "fn"]
            for part in parts:
                if isinstance(part, (ast.Node, tuple)):
                    todo.append(part)
                elif not (part is None or type(part) in _PLAIN):
                    return True  # some other object in a tree: not followed
    return False


class DrawCheck:
    """Draw analysis over one slot table (the rows' side) and any request (the fixed side)."""

    def __init__(self, table: AdTable) -> None:
        self.table = table
        # Per row attribute: whether some row may lack it, and the union of its expressions' summaries.
        self._columns: dict[str, tuple[bool, bool, frozenset[tuple[int, str]]]] = {}
        # Per row attribute: what following it through the rows alone finds (see _row_closure).
        self._closures: dict[str, tuple[bool, frozenset[str]]] = {}

    def _row_name(self, lname: str) -> tuple[bool, bool, frozenset[tuple[int, str]]]:
        """(some row lacks it, some row's expression may draw, what the expressions read)."""
        hit = self._columns.get(lname)
        if hit is None:
            col = self.table.column(lname)
            draws, reads = False, set[tuple[int, str]]()
            for node in col.nodes:
                s = summary(node)
                draws = draws or s.draws
                reads |= s.reads
            hit = self._columns[lname] = (col.any_missing, draws, frozenset(reads))
        return hit

    def may_draw(
        self, req: Any, row_names: Sequence[str], fixed_names: Sequence[str], row_nodes: Sequence[Any]
    ) -> bool:
        """Whether evaluating the rows' attributes ``row_names``, the request's attributes
        ``fixed_names`` and the row-side expressions ``row_nodes`` (the knobs) could draw.
        What the rows' expressions reach among themselves is the same for every request
        (:meth:`_row_closure`); only the request's names are followed per request."""
        if self.table.nested:
            return True
        todo: list[str] = list(fixed_names)
        rows: list[str] = list(row_names)
        for node in row_nodes:
            s = summary(node)
            if s.draws:
                return True
            for side, lname in _resolve(ROW, s.reads, self, req):
                (rows if side == ROW else todo).append(lname)
        seen_rows = set(rows)
        for lname in seen_rows:
            draws, fixed = self._row_closure(lname)
            if draws:
                return True
            todo.extend(fixed)
        seen: set[str] = set()
        while todo:
            lname = todo.pop()
            if lname in seen:
                continue
            seen.add(lname)
            node = req.get_node(lname)
            if node is None or type(node) is ast.Literal:
                continue
            s = summary(node)
            if s.draws:
                return True
            for side, name in _resolve(FIXED, s.reads, self, req):
                if side == FIXED:
                    todo.append(name)
                elif name not in seen_rows:
                    seen_rows.add(name)
                    draws, fixed = self._row_closure(name)
                    if draws:
                        return True
                    todo.extend(fixed)
        return False

    def _row_closure(self, lname: str) -> tuple[bool, frozenset[str]]:
        """The row attribute ``lname`` followed through the rows' expressions alone: whether
        one of them may draw, and the request's names they may read (remembered)."""
        hit = self._closures.get(lname)
        if hit is not None:
            return hit
        seen: set[str] = set()
        fixed: set[str] = set()
        todo = [lname]
        draws = False
        while todo and not draws:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            _missing, draws, reads = self._row_name(name)
            for side, other in _resolve(ROW, reads, self, None):
                if side == ROW:
                    todo.append(other)
                else:
                    fixed.add(other)
        hit = self._closures[lname] = (draws, frozenset(fixed))
        return hit

    def lacks(self, side: int, lname: str, req: Any) -> bool:
        """Whether some ad on ``side`` lacks attribute ``lname`` (a bare name then falls through)."""
        if side == ROW:
            return self._row_name(lname)[0]
        return req.get_node(lname) is None


def _resolve(side: int, reads: frozenset[tuple[int, str]], check: DrawCheck, req: Any) -> list[tuple[int, str]]:
    """The (side, name) pairs the reads of an expression on ``side`` may look up."""
    other = FIXED if side == ROW else ROW
    out = []
    for how, lname in reads:
        if how == OWN:
            out.append((side, lname))
        elif how == PARTNER:
            out.append((other, lname))
        else:
            out.append((side, lname))
            if check.lacks(side, lname, req):
                out.append((other, lname))
    return out


def node_draws(node: Optional[Any]) -> bool:
    """Whether the tree itself calls a drawing function (names it reads aside)."""
    return node is not None and summary(node).draws


__all__ = ["DrawCheck", "node_draws", "summary"]
