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
        # By the tree's id: the tree, and whether its verdicts are shared against the slot.
        self._shared: dict[int, tuple[ast.Node, bool]] = {}
        self._known: dict[tuple, bool] = {}

    def verdict(self, node: ast.Node, job: ClassAd, evaluate: Callable[[], bool]) -> bool:
        """``evaluate()``, the verdict of ``node`` (``job``'s ``Requirements``) against the
        slot, or the one it gave for a job that held the same literal values."""
        key = job_key(node, job)
        if key is None or not self.shared(node):
            return evaluate()
        return self.known(key, evaluate)

    def known(self, key: tuple, evaluate: Callable[[], bool]) -> bool:
        """The verdict of the jobs of :func:`job_key` ``key`` (of a tree :meth:`shared`):
        ``evaluate()`` the first time, then the same."""
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = evaluate()
        return known

    def shared(self, node: ast.Node) -> bool:
        """Whether the verdicts of ``node`` are shared against the slot: the tree draws
        nothing and names no whole ad (:func:`job_key` is not None for it) and the slot
        holds a plain literal (or nothing) for every name it reads there."""
        hit = self._shared.get(id(node))
        if hit is None or hit[0] is not node:
            reads = _reads(node)
            shared = (
                reads is not None
                and self.slot.parent is None
                and NOT_LITERAL not in map(exact_key, self.slot.stored_of(reads[1]))
            )
            hit = self._shared[id(node)] = (node, shared)
        return hit[1]


def job_key(node: ast.Node, job: ClassAd) -> Optional[tuple]:
    """What a verdict of ``node`` (``job``'s ``Requirements``) is shared by: the tree and the
    literal values it reads of the job; None when it is not shared (the tree draws, names a
    whole ad, or reads a value of the job that is not a plain literal)."""
    reads = _reads(node)
    if reads is None or job.parent is not None:
        return None
    key = (id(node), *map(exact_key, job.stored_of(reads[0])))
    return None if NOT_LITERAL in key else key


def _reads(node: ast.Node) -> Optional[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The names ``node`` reads (lower-case, in order): as bare names (of the job, or the
    slot when the job lacks one), and these with the ``TARGET.x`` names; None when its
    verdicts are never shared (it draws, or names a whole ad or a match's context ads)."""
    hit = _reads_cache.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    reads: Optional[tuple[tuple[str, ...], tuple[str, ...]]] = None
    if node_steady(node):
        own, other = references(node)
        if SPECIAL_NAMES.isdisjoint(own) and SPECIAL_NAMES.isdisjoint(other):
            reads = (tuple(sorted(own)), tuple(own | other))
    if len(_reads_cache) > 10_000:
        _reads_cache.clear()
    _reads_cache[id(node)] = (node, reads)
    return reads


_reads_cache: dict[int, tuple[ast.Node, Optional[tuple[tuple[str, ...], tuple[str, ...]]]]] = {}


__all__ = ["Verdicts", "job_key"]
