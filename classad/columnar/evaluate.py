"""The public entry points: evaluate an expression or an attribute over a table.

They pick the side the expression lives on, run :class:`~classad.columnar.compile.Run`
over the rows, and fall back to the scalar evaluator for the whole table when the
vector walk cannot reproduce the scalar scoping (rows nested in other ads, the
fixed ad being one of the rows) or runs out of stack.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .. import ast
from ..evaluate import new_state
from .column import Column, Const, as_column
from .compile import FIXED, ROW, Run
from .table import HOLDS_NOTHING, AdTable


def _run(table: AdTable, other: Any, state: Any, row_side: str) -> Run:
    if row_side not in ("my", "target"):
        raise ValueError(f"row_side must be 'my' or 'target', not {row_side!r}")
    if row_side == "target" and other is None:
        raise ValueError("row_side='target' needs the fixed ad (other=)")
    if state is None:
        state = new_state()
    return Run(table, other, state, row_side == "my")


def _needs_scalar(table: AdTable, other: Any) -> bool:
    return table.nested or (other is not None and (other.parent is not None or table.contains_ad(other)))


def evaluate_column(
    expr: Any,
    table: AdTable,
    *,
    row_side: str = "my",
    other: Any = None,
    state: Any = None,
    rows: Optional[np.ndarray] = None,
    shared: bool = False,
) -> Column:
    """The value of ``expr`` on every row of ``table`` (see the package docstring), or
    on the rows at the sorted positions ``rows`` only.  With ``shared`` (for an expression
    of the rows evaluated again and again with other fixed ads, such as a negotiator
    knob), the result is computed for every row and reused by later calls whose fixed ad
    gives the same values to everything it reads."""
    node, run, scope, rows = _prepared(expr, table, row_side, other, state, rows)
    if _needs_scalar(table, other):
        return run.scalar(node, scope, rows, frozenset())
    try:
        if shared and scope == ROW:
            result = run.shared_expr(node, rows)
        else:
            result = run.ev(node, scope, rows, frozenset())
        return _handed_out(table, result, len(rows))
    except RecursionError:
        return run.scalar(node, scope, rows, frozenset())


def evaluate_attribute(
    table: AdTable,
    name: str,
    *,
    row_side: str = "my",
    other: Any = None,
    state: Any = None,
    rows: Optional[np.ndarray] = None,
    shared: bool = False,
) -> Column:
    """Attribute ``name`` evaluated as ``ad.evaluate(name)`` does: of each row's ad
    (``row_side="my"``) or of the fixed ad ``other`` against each row (``"target"``).
    Undefined where the ad has no such attribute.  With ``shared`` the fixed ad's attribute
    is computed for every row and reused by later calls whose fixed ad gives the same
    values to everything it reads (a row attribute is always shared so)."""
    lname = name.lower()
    run = _run(table, other, state, row_side)
    if rows is None:
        rows = table.all_rows
    if row_side == "target" and lname not in run.fixed_attrs:
        return Column.empty(len(rows), table.pool)
    if _needs_scalar(table, other):
        return _attr_scalar(run, lname, row_side, rows)
    try:
        if row_side == "my":
            return _handed_out(table, run.row_attr(lname, rows, frozenset()), len(rows))
        if shared:
            return _handed_out(table, run.shared_fixed_attr(lname, rows), len(rows))
        return _handed_out(table, run.fixed_attr(lname, rows, frozenset()), len(rows))
    except RecursionError:
        return _attr_scalar(run, lname, row_side, rows)


def attribute_true(
    table: AdTable,
    name: str,
    *,
    row_side: str = "my",
    other: Any = None,
    state: Any = None,
    rows: Optional[np.ndarray] = None,
    shared: bool = False,
) -> np.ndarray:
    """Which rows' value of :func:`evaluate_attribute` (same arguments) counts as true, as
    :func:`~classad.columnar.ranks.true_mask` of it says; where a shared result of booleans
    holds the values (a ``Requirements`` evaluated for an earlier request), they are read
    from its bits without making the column."""
    lname = name.lower()
    run = _run(table, other, state, row_side)
    if rows is None:
        rows = table.all_rows
    if row_side == "target" and lname not in run.fixed_attrs:
        return np.zeros(len(rows), dtype=bool)
    if _needs_scalar(table, other):
        return _attr_scalar(run, lname, row_side, rows).is_true()
    try:
        if row_side == "my":
            return run.row_attr_true(lname, rows)
        if shared:
            return run.shared_fixed_true(lname, rows)
        return as_column(run.fixed_attr(lname, rows, frozenset()), len(rows), table.pool).is_true()
    except RecursionError:
        return _attr_scalar(run, lname, row_side, rows).is_true()


def expression_true(
    expr: Any,
    table: AdTable,
    *,
    row_side: str = "my",
    other: Any = None,
    state: Any = None,
    rows: Optional[np.ndarray] = None,
) -> np.ndarray:
    """Which rows' value of :func:`evaluate_column` (same arguments, not shared) counts as
    true, as :func:`~classad.columnar.ranks.true_mask` of it says; an ``&&`` chain of the
    rows (a negotiator knob such as PREEMPTION_REQUIREMENTS, evaluated for many fixed ads)
    is read as the true rows of its parts, those that read of the fixed ad at most the
    clock and names it lacks evaluated once per generation of the table."""
    node, run, scope, rows = _prepared(expr, table, row_side, other, state, rows)
    if _needs_scalar(table, other):
        return run.scalar(node, scope, rows, frozenset()).is_true()
    try:
        return run.expression_true(node, scope, rows)
    except RecursionError:
        return run.scalar(node, scope, rows, frozenset()).is_true()


def _prepared(
    expr: Any, table: AdTable, row_side: str, other: Any, state: Any, rows: Optional[np.ndarray]
) -> tuple[Any, Run, int, np.ndarray]:
    """What :func:`evaluate_column` and :func:`expression_true` start from: the tree of
    ``expr`` (text, an ``ExprTree`` or a tree), the run over ``table``, the rows' scope and
    the rows (every row when None)."""
    from ..ad import ExprTree
    from ..parser import parse_expr

    node = parse_expr(expr) if isinstance(expr, str) else expr.node if isinstance(expr, ExprTree) else expr
    scope = ROW if row_side == "my" else FIXED
    return node, _run(table, other, state, row_side), scope, table.all_rows if rows is None else rows


def _handed_out(table: AdTable, result: Any, n: int) -> Column:
    """``result`` as a column the caller owns: a bare attribute reference may give the
    table's own column, which is copied; every other column the walk gives is new."""
    if type(result) is not Column:
        return as_column(result, n, table.pool)
    return result.copy() if table.owns(result) else result


def _attr_scalar(run: Run, lname: str, row_side: str, rows: np.ndarray) -> Column:
    table = run.t
    if row_side == "my":
        out = Column.empty(len(rows), table.pool)
        holds = table.column(lname).holds[rows]
        for p in np.nonzero(holds != HOLDS_NOTHING)[0].tolist():
            r = rows[p]
            node = table.ads[r]._attrs[lname][1]
            if type(node) is ast.Literal:
                out.put(np.array([p]), Const(node.value))
            else:
                out.put(np.array([p]), run.scalar(node, ROW, rows[p : p + 1], frozenset({(ROW, lname)})))
        return out
    node = run.fixed_attrs[lname][1]
    if type(node) is ast.Literal:
        return as_column(Const(node.value), len(rows), table.pool)
    return run.scalar(node, FIXED, rows, frozenset({(FIXED, lname)}))


__all__ = ["attribute_true", "evaluate_attribute", "evaluate_column", "expression_true"]
