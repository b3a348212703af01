"""Columnar evaluation: one expression over a whole table of ClassAds at once.

The scalar evaluator (:mod:`classad.evaluate`) answers one ad at a time.  This
package answers the same question for many ads together, with NumPy arrays,
and gives exactly the scalar answers (the scalar evaluator is the reference;
whatever has no vector form is handed to it for just the rows concerned)::

    from classad.columnar import AdTable, evaluate_column

    table = AdTable(slot_ads)                       # columns are built on first use
    col = evaluate_column("Memory >= 2048 && Arch == \\"X86_64\\"", table)
    col.to_values()                                  # one language value per ad
    true_mask(col)                                   # numpy bool array: "is true"

Public API:

* :class:`AdTable` ``(ads, names=())`` -- the rows; ``names`` pre-extracts columns.
* :func:`evaluate_column` ``(expr, table, *, row_side="my", other=None, state=None)``
  -- ``expr`` (text, :class:`~classad.ExprTree` or node) on every row.  With
  ``row_side="my"`` the expression lives in each row's ad (MY is the row) and
  ``other``, if given, is TARGET for every row; with ``row_side="target"`` it
  lives in the fixed ad ``other`` (MY) and each row is TARGET.  ``state`` is an
  :class:`~classad.evaluate.EvalState` (clock, strict mode, ...); by default a
  new one in the default mode.
* :func:`evaluate_attribute` ``(table, name, *, row_side="my", other=None, state=None)``
  -- an attribute as ``ad.evaluate(name)`` evaluates it: each row's own
  (``"my"``) or the fixed ad's against each row (``"target"``).
* :func:`attribute_true` -- the same arguments: which rows' value of the attribute
  counts as true (``true_mask`` of it), read from shared boolean results without
  making the column where they hold it.
* :func:`expression_true` -- :func:`evaluate_column`'s arguments (not shared): which
  rows' value of the expression counts as true, an ``&&`` chain of the rows read as
  the true rows of its parts (those reading only the rows and the clock once per table).
* :class:`Column` -- the result: ``len()``, ``value(r)``, ``to_values()``.
* :func:`true_mask` (value counts as true), :func:`rank_array` (a number for
  ranks: int/real/bool, else 0.0) and :func:`knob_rank_array` (single
  precision, -inf when not a number) -- what a matchmaker needs.

A table remembers work between evaluations: sub-expressions that read only the
row (:mod:`.rowonly`) and row attributes by the values they read of the fixed ad
(:mod:`.memo`).  So the ads of a table must not change while it is in use.
``table.follow(ads, source, dirty, changed)`` continues a table over a new list of
ads, told which rows are the same as before: it reads again only the rows that
changed and keeps that remembered work, brought up to date on use
(:mod:`.generations`).
"""

from __future__ import annotations

from .column import Column, Const, StringPool
from .evaluate import attribute_true, evaluate_attribute, evaluate_column, expression_true
from .ranks import knob_rank_array, knob_rank_single, rank_array, true_mask
from .table import AdTable

__all__ = [
    "AdTable",
    "Column",
    "Const",
    "StringPool",
    "attribute_true",
    "evaluate_attribute",
    "evaluate_column",
    "expression_true",
    "knob_rank_array",
    "knob_rank_single",
    "rank_array",
    "true_mask",
]
