"""Clause counts over many ads: how many targets each ``&&`` clause accepts, alone and in turn.

For one expression (a job's Requirements against every slot, or a slot's against every
job) :func:`count_clauses` gives, per conjunct, how many targets it accepts *alone*, the
*running* count (targets accepting this clause and every one before it, so it never
grows), and on how many it was Undefined or Error -- the commonest surprise, reported
as such rather than as a plain "false".  :func:`first_failures` answers the reverse
question: for the targets an expression rejects, which clause rejected each first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from classad.ad import ClassAd
from classad.analyze import ERR, TRUE, UNDEF, Conjunct, evaluate_in_match, outcome, split_conjuncts
from classad.ast import AttrRef

from ..cycle.ephemeral import MatchState


@dataclass(frozen=True)
class ClauseCount:
    """One conjunct's counts over the targets."""

    index: int
    text: str
    alone: int  # targets for which this clause alone is true
    running: int  # targets for which it and every clause before it are true
    undefined: int  # targets on which it evaluated to Undefined
    error: int  # ... to Error


def evaluator(usage: Any, now: float) -> Callable[[Any, ClassAd, Optional[ClassAd]], object]:
    """``f(node, my, target)``: a node evaluated in the matchmaker's context at ``now``."""

    def run(node: Any, my: ClassAd, target: Optional[ClassAd]) -> object:
        return evaluate_in_match(node, my, target, MatchState(usage, now))

    return run


def expanded(ad: ClassAd, attribute: str, depth: int = 3) -> list[Conjunct]:
    """The conjuncts of ``ad.attribute``, a clause that only names another attribute of
    the same ad (``Requirements = START``) replaced by that attribute's own conjuncts,
    shown as ``START: <clause>``."""
    out: list[Conjunct] = []
    for c in split_conjuncts(ad.get_node(attribute)):
        node = c.node
        if (
            isinstance(node, AttrRef)
            and not node.absolute
            and depth > 0
            and node.lname != attribute.lower()
            and ad.get_node(node.name) is not None
        ):
            out += [Conjunct(0, sub.node, f"{node.name}: {sub.text}") for sub in expanded(ad, node.name, depth - 1)]
        else:
            out.append(c)
    return [Conjunct(i, c.node, c.text) for i, c in enumerate(out, 1)]


def clause_outcomes(
    conjuncts: Sequence[Conjunct], my: ClassAd, target: ClassAd, ev: Callable[..., object]
) -> list[str]:
    """The outcome of each conjunct of ``my`` against ``target``."""
    return [outcome(ev(c.node, my, target)) for c in conjuncts]


def count_clauses(
    my: ClassAd,
    targets: Sequence[ClassAd],
    ev: Callable[..., object],
    attribute: str = "Requirements",
    reverse: bool = False,
) -> list[ClauseCount]:
    """Per-conjunct counts of ``my.attribute`` over ``targets`` (each target's own
    expression against ``my`` when ``reverse`` -- then conjuncts are matched by text)."""
    if reverse:
        return _count_reverse(my, targets, ev, attribute)
    conjuncts = expanded(my, attribute)
    alone = [0] * len(conjuncts)
    running = [0] * len(conjuncts)
    undef = [0] * len(conjuncts)
    err = [0] * len(conjuncts)
    for t in targets:
        still = True
        for i, o in enumerate(clause_outcomes(conjuncts, my, t, ev)):
            ok = o == TRUE
            alone[i] += ok
            still = still and ok
            running[i] += still
            undef[i] += o == UNDEF
            err[i] += o == ERR
    return [ClauseCount(c.index, c.text, alone[i], running[i], undef[i], err[i]) for i, c in enumerate(conjuncts)]


def _count_reverse(
    my: ClassAd, targets: Sequence[ClassAd], ev: Callable[..., object], attribute: str
) -> list[ClauseCount]:
    table: dict[str, list[int]] = {}
    for t in targets:
        conjuncts = expanded(t, attribute)
        for c, o in zip(conjuncts, clause_outcomes(conjuncts, t, my, ev)):
            row = table.setdefault(c.text, [0, 0, 0, 0])
            row[0] += 1
            row[1] += o == TRUE
            row[2] += o == UNDEF
            row[3] += o == ERR
    return [ClauseCount(i, text, r[1], r[1], r[2], r[3]) for i, (text, r) in enumerate(table.items(), 1)]


def accepts(my: ClassAd, target: ClassAd, ev: Callable[..., object], attribute: str = "Requirements") -> bool:
    """Whether ``my.attribute`` is true against ``target`` (the whole expression)."""
    node = my.get_node(attribute)
    return node is not None and outcome(ev(node, my, target)) == TRUE


def first_failures(
    owners: Sequence[ClassAd], other: ClassAd, ev: Callable[..., object], attribute: str = "Requirements"
) -> dict[str, list[int]]:
    """For each owner whose ``attribute`` rejects ``other``: the text of its first
    conjunct that is not true (``"<no Requirements>"`` when it has none), mapped to the
    positions of the owners it decided."""
    out: dict[str, list[int]] = {}
    for pos, ad in enumerate(owners):
        node = ad.get_node(attribute)
        if node is None:
            out.setdefault(f"<no {attribute}>", []).append(pos)
            continue
        if outcome(ev(node, ad, other)) == TRUE:
            continue
        text = "<the expression as a whole>"
        for c in expanded(ad, attribute):
            o = outcome(ev(c.node, ad, other))
            if o != TRUE:
                text = c.text if o == "false" else f"{c.text}  ({o})"
                break
        out.setdefault(text, []).append(pos)
    return out


__all__ = ["ClauseCount", "accepts", "clause_outcomes", "count_clauses", "evaluator", "expanded", "first_failures"]
