"""Clauses that nothing in the pool satisfies, found with the columnar engine.

Each job's Requirements and each slot's Requirements (``START`` when it has none) is
split into its ``&&`` clauses (a clause that only names another attribute of the ad,
``Requirements = START``, is replaced by that attribute's clauses, as ``analyze``
shows them).  Every clause is evaluated over the whole other side at once
(:func:`classad.columnar.evaluate_column`); one that is true for no ad there is
``clause-dead`` (with how many ads found it false, undefined or an error), and an
expression whose clauses each hold somewhere but never together is
``requirements-unsatisfiable``.  Owners whose expression and the values it reads of
their own ad are equal are evaluated once, and reported once with their number.

Clauses that read what the negotiator adds during a cycle (``SubmitterUserPrio``,
``RemoteUserPrio``, ``ResourcesInUseByUser(...)``, ...) are skipped: the ads on disk
do not have those values yet.  So are clauses that read only their own ad
(``KeyboardIdle > 15 * 60`` on a desktop in use): they describe the machine's state at
the time of the dump, not a condition on the other side.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from classad import ast
from classad.ad import ClassAd
from classad.analyze import Conjunct, outcome
from classad.columnar import AdTable, evaluate_column, true_mask
from classad.unparse import unparse

from ..analyze.clauses import expanded
from .attributes import EPHEMERAL, references
from .findings import Finding
from .recording import SourceText

_EPHEMERAL = frozenset(n.lower() for names in EPHEMERAL.values() for n in names)
_LIVE_FUNCTIONS = frozenset({"resourcesinusebyuser", "resourcesinusebyusersgroup"})


@dataclass(frozen=True)
class Owner:
    """An ad whose expression is checked: the ad, what to call it, where it was read."""

    ad: ClassAd
    name: str  # "job 1.0", "slot slot1@node1"
    source: str  # "file:line"


@dataclass
class _Group:
    owners: list[Owner] = field(default_factory=list)


def _reads_live(node: Optional[ast.Node]) -> bool:
    """Whether ``node`` reads an attribute or function the negotiator supplies in a cycle."""
    if node is None:
        return False
    if any(r.name.lower() in _EPHEMERAL for r in references(node)):
        return True
    return any(fn.lower() in _LIVE_FUNCTIONS for fn in _calls(unparse(node)))


def _calls(text: str) -> list[str]:
    return re.findall(r"([A-Za-z_]\w*)\s*\(", text)


def _reads_other(node: ast.Node, ad: ClassAd) -> bool:
    """Whether ``node`` reads the other side: ``TARGET.x``, or a bare name its own ad lacks.
    A clause of the ad's own attributes only (``KeyboardIdle > 15 * 60``) is the machine's
    state at the time of the dump, not a condition on the match."""
    return any(r.scope == "target" or (r.scope == "" and ad.get_node(r.name) is None) for r in references(node))


class _Keys:
    """Groups owners whose expression and every attribute of their own ad it reads (also
    through other attributes, ``Requirements = START``) are stored as the same objects:
    ads read from one dump share them for equal values."""

    def __init__(self) -> None:
        self._direct: dict[int, tuple[ast.Node, frozenset[str]]] = {}
        self.held: list[Any] = []

    def direct(self, node: ast.Node) -> frozenset[str]:
        """The names ``node`` reads that its own ad may hold (cached by identity)."""
        hit = self._direct.get(id(node))
        if hit is None or hit[0] is not node:
            hit = (node, frozenset(r.name.lower() for r in references(node) if r.scope != "target"))
            self._direct[id(node)] = hit
        return hit[1]

    def key(self, ad: ClassAd, attribute: str, node: ast.Node) -> tuple:
        names, todo = {attribute.lower()}, list(self.direct(node))
        while todo:
            name = todo.pop()
            if name in names:
                continue
            names.add(name)
            sub = ad.lookup_node(name)
            if sub is not None and not isinstance(sub, ast.Literal):
                todo += self.direct(sub)
        order = tuple(sorted(names))
        stored, held = ad.stored_key(order)
        self.held.append(held)
        return (attribute, order, stored)


def _attribute(ad: ClassAd, kind: str) -> Optional[str]:
    if ad.get_node("Requirements") is not None:
        return "Requirements"
    if kind == "slot" and ad.get_node("START") is not None:
        return "START"
    return None


def dead_clauses(
    owners: Sequence[Owner],
    kind: str,
    others: Sequence[ClassAd],
    other_kind: str,
    source: SourceText,
    now: Optional[float] = None,
) -> list[Finding]:
    """clause-dead and requirements-unsatisfiable findings of ``owners`` (of ``kind``)
    against every ad of ``others``."""
    if not others:
        return []
    groups: dict[tuple, _Group] = {}
    keys = _Keys()
    for o in owners:
        attribute = _attribute(o.ad, kind)
        node = o.ad.get_node(attribute) if attribute is not None else None
        if attribute is not None and node is not None:
            groups.setdefault(keys.key(o.ad, attribute, node), _Group()).owners.append(o)
    table = AdTable(list(others))
    state = None if now is None else _fixed_clock(now)
    dead: dict[tuple[str, str, str], list[Owner]] = {}
    unsatisfiable: dict[tuple[str, str], list[Owner]] = {}
    detail: dict[tuple, str] = {}
    for (attribute, _, _), group in groups.items():
        ad = group.owners[0].ad
        whole = ad.get_node(attribute)
        assert whole is not None  # grouped only when present
        text = unparse(whole)
        clauses = [c for c in expanded(ad, attribute) if not _reads_live(c.node) and _reads_other(c.node, ad)]
        found, together = False, None
        for c in clauses:
            col = evaluate_column(c.node, table, row_side="target", other=ad, state=state)
            mask = true_mask(col)
            together = mask if together is None else together & mask
            if not mask.any():
                key = (attribute, text, c.text)
                dead.setdefault(key, []).extend(group.owners)
                detail.setdefault(key, _breakdown(col.to_values(), other_kind))
                found = True
        if not found and len(clauses) > 1 and together is not None and not together.any():
            unsatisfiable.setdefault((attribute, text), []).extend(group.owners)
    out = []
    for key, who in dead.items():
        attribute, _, clause = key
        index = next((c.index for c in expanded(who[0].ad, attribute) if c.text == clause), 0)
        out.append(
            _finding(
                who,
                attribute,
                clause,
                source,
                "clause-dead",
                f"clause {index} of {_whose(who, attribute)}, {clause}, is true for no {other_kind}: {detail[key]}",
            )
        )
    for (attribute, _), who in unsatisfiable.items():
        out.append(
            _finding(
                who,
                attribute,
                None,
                source,
                "requirements-unsatisfiable",
                f"{_whose(who, attribute)} is true for no {other_kind}, though each of its clauses "
                f"holds for some; no {other_kind} meets them all at once",
            )
        )
    return out


def _whose(who: list[Owner], attribute: str) -> str:
    extra = f" (and {len(who) - 1} more with the same {attribute})" if len(who) > 1 else ""
    return f"{who[0].name}'s {attribute}{extra}"


def _breakdown(values: Sequence[Any], kind: str) -> str:
    tally: dict[str, int] = {}
    for v in values:
        o = outcome(v)
        tally[o] = tally.get(o, 0) + 1
    parts = [f"{o} for {n}" for o, n in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))]
    return ", ".join(parts) + f" of {len(values)} {kind}s"


def _finding(
    who: list[Owner], attribute: str, clause: Optional[str], source: SourceText, code: str, message: str
) -> Finding:
    file, _, line_text = who[0].source.rpartition(":")
    if not file or not line_text.isdigit():
        return Finding(who[0].source, 1, 1, code, message)
    attr = clause.split(":", 1)[0] if clause and ":" in clause.split(" ", 1)[0] else attribute
    found = source.attribute_line(file, int(line_text), attr)
    line, col = (found if found is not None else int(line_text)), 1
    if clause is not None and found is not None:
        first = next(iter(references(_first_node(who[0].ad, attribute, clause))), None)
        if first is not None:
            line, col = source.locate(file, line, first.name) or (line, col)
    return Finding(file, line, col, code, message)


def _first_node(ad: ClassAd, attribute: str, clause: str) -> ast.Node:
    c: Optional[Conjunct] = next((c for c in expanded(ad, attribute) if c.text == clause), None)
    return c.node if c is not None else ast.Literal(True)


def _fixed_clock(now: float) -> Any:
    from classad.evaluate import new_state

    return new_state(None, clock=lambda: now)


__all__ = ["Owner", "dead_clauses"]
