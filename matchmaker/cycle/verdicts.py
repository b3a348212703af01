"""Jobs' ``Requirements`` against one slot ad, evaluated once for the jobs that read the same.

After a cycle the schedd offers a partitionable slot's leftovers to a submitter's idle
jobs one after the other (:mod:`matchmaker.cycle.claims`), and most of them ask the same
of the slot: the same ``Requirements`` tree (identical text shares one tree) over the same
request sizes.  The verdict of such a tree is a function of the values it reads, so a job
that reads the very values another job read against the same slot ad gets that job's
verdict without an evaluation.  That holds only when every value the evaluation can reach
is a plain literal: each name the tree reads, in the job (or, for a bare name the job
lacks, in the slot), and in the slot for ``TARGET.x``; an expression there could read more
of either ad.  A tree that calls ``random`` or ``eval`` is always evaluated (skipping a
draw would shift every later one), and so is one that names a whole ad or a match's
context ads (``parent``, ``target``, ``symmetricMatch``...).
"""

from __future__ import annotations

from typing import Callable, Optional

from classad import ast
from classad.ad import ClassAd
from classad.columnar.compile import SPECIAL_NAMES

from ..pool.autocluster import references
from .carry import NOT_LITERAL, exact_key, node_steady


class Verdicts:
    """The verdicts of jobs' ``Requirements`` against ``slot`` (one ad: a rewritten slot
    gets a new :class:`Verdicts`), by the tree and the literal values it read."""

    def __init__(self, slot: ClassAd) -> None:
        self.slot = slot
        # By the tree's id: the tree, and the names it reads (lower-case, in order) when
        # its verdict is shared, else None.
        self._reads: dict[int, tuple[ast.Node, Optional[tuple[str, ...]]]] = {}
        self._known: dict[tuple, bool] = {}

    def verdict(self, node: ast.Node, job: ClassAd, evaluate: Callable[[], bool]) -> bool:
        """``evaluate()``, the verdict of ``node`` (``job``'s ``Requirements``) against the
        slot, or the one it gave for a job that held the same literal values."""
        hit = self._reads.get(id(node))
        if hit is None or hit[0] is not node:
            hit = self._reads[id(node)] = (node, self._shared_reads(node))
        names = hit[1]
        if names is None or job.parent is not None:
            return evaluate()
        key = (id(node), *map(exact_key, job.stored_of(names)))
        if NOT_LITERAL in key:
            return evaluate()
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = evaluate()
        return known

    def _shared_reads(self, node: ast.Node) -> Optional[tuple[str, ...]]:
        """The names ``node`` reads of the job when its verdict may be shared: it draws
        nothing, names no whole ad, and the slot holds a plain literal (or nothing) for
        every name it reads there."""
        if not node_steady(node) or self.slot.parent is not None:
            return None
        own, other = references(node)
        if not SPECIAL_NAMES.isdisjoint(own) or not SPECIAL_NAMES.isdisjoint(other):
            return None
        if NOT_LITERAL in map(exact_key, self.slot.stored_of(tuple(own | other))):
            return None
        return tuple(sorted(own))


__all__ = ["Verdicts"]
