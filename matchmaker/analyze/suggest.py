"""One-number suggestions: the smallest change of one job attribute that would match more slots.

A clause such as ``TARGET.Memory >= RequestMemory`` compares a slot value against a job
attribute holding a plain number.  The values the slots offer for the other side are
the only thresholds that matter; each is tried in turn, nearest to the job's value
first, on a copy of the job whose attribute is changed, and the first that makes more
slots accept the job *both ways* (its whole Requirements and the slots') is reported:
``RequestMemory <= 4096 would match 120 more slots``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from classad import ast
from classad.ad import ClassAd
from classad.analyze import split_conjuncts
from classad.unparse import unparse_value

from .clauses import accepts

COMPARISONS = ("<", "<=", ">", ">=", "==")
MAX_TRIES = 12  # thresholds tried per clause, nearest first


@dataclass(frozen=True)
class Suggestion:
    """Set ``attribute`` to ``value`` (``direction`` is ``<=`` or ``>=`` of the current value)."""

    clause: str
    attribute: str
    current: float
    value: float
    direction: str
    more: int  # slots accepting both ways with the change, minus without

    def text(self) -> str:
        """``"RequestMemory <= 4096 would match 3 more slots"``."""
        return (
            f"{self.attribute} {self.direction} {unparse_value(self.value)} would match "
            f"{self.more} more slot{'s' if self.more != 1 else ''} (clause: {self.clause})"
        )


def _job_attr(node: ast.Node, job: ClassAd) -> Optional[str]:
    """The job attribute ``node`` names (``X`` or ``MY.X``) when the job holds a number there."""
    while type(node) is ast.Paren:
        node = node.inner
    name = None
    if type(node) is ast.AttrRef and not node.absolute:
        name = node.name
    elif type(node) is ast.Select and type(node.base) is ast.AttrRef and node.base.lname == "my":
        name = node.name
    if name is None:
        return None
    lit = job.get_node(name)
    if type(lit) is ast.Literal and type(lit.value) in (int, float):
        return name
    return None


def _numbers(node: ast.Node, slots: Sequence[ClassAd], job: ClassAd, ev: Callable[..., object]) -> set[float]:
    out: set[float] = set()
    for s in slots:
        v = ev(node, job, s)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out.add(v)
    return out


def suggest(job: ClassAd, slots: Sequence[ClassAd], ev: Callable[..., object]) -> list[Suggestion]:
    """Suggestions for the clauses of the job's Requirements that compare a job number."""
    base = sum(1 for s in slots if accepts(job, s, ev) and accepts(s, job, ev))
    out = []
    for c in split_conjuncts(job.get_node("Requirements")):
        node = c.node
        while type(node) is ast.Paren:
            node = node.inner
        if type(node) is not ast.Binary or node.op not in COMPARISONS:
            continue
        for mine, other in ((node.left, node.right), (node.right, node.left)):
            attr = _job_attr(mine, job)
            if attr is None:
                continue
            current = job.get_node(attr).value  # type: ignore[union-attr]
            s = _best(job, slots, ev, attr, current, _numbers(other, slots, job, ev), base, c.text)
            if s is not None:
                out.append(s)
            break
    return out


def _best(
    job: ClassAd,
    slots: Sequence[ClassAd],
    ev: Callable[..., object],
    attr: str,
    current: Any,
    values: set[float],
    base: int,
    clause: str,
) -> Optional[Suggestion]:
    tries = sorted((v for v in values if v != current), key=lambda v: (abs(v - current), v))[:MAX_TRIES]
    for v in tries:
        changed = ClassAd(job)
        changed[attr] = v
        n = sum(1 for s in slots if accepts(changed, s, ev) and accepts(s, changed, ev))
        if n > base:
            return Suggestion(clause, attr, float(current), v, "<=" if v < current else ">=", n - base)
    return None


__all__ = ["Suggestion", "suggest"]
