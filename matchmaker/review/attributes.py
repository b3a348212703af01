"""Attribute references checked against the ads that will be matched.

An expression lives in one ad (its *owner*: a job, a slot, or the ad a group is sorted
by) and is matched against another (the *target*).  ``MY.x`` is looked up in the
owner's side, ``TARGET.x`` / ``OTHER.x`` in the target's side, and a bare ``x`` in
either (the owner first, as evaluation does).  Names are compared without case, and
the attributes the negotiator adds while it negotiates (``SubmitterUserPrio``,
``RemoteUserPrio``, ...; docs/negotiation.md, ephemeral attributes) count as present.

A name no ad of its side has is ``attr-unknown`` (with the near names as a suggestion);
one that only some ads lack is ``attr-partial``, with the number of ads lacking it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Optional

from classad import ast
from classad.ad import ClassAd

from ..cycle.ephemeral import REQUEST_NAMES
from .findings import Finding
from .names import or_list, suggestions
from .recording import SourceText

JOB, SLOT, GROUP = "job", "slot", "group"
# What the negotiator inserts into each side (docs/negotiation.md, ephemeral attributes).
EPHEMERAL = {
    JOB: REQUEST_NAMES,
    SLOT: (
        "RemoteUserPrio",
        "RemoteUserFloor",
        "RemoteUserResourcesInUse",
        "RemoteGroup",
        "RemoteGroupResourcesInUse",
        "RemoteGroupQuota",
        "RemoteNegotiatingGroup",
        "RemoteAutoregroup",
        "CurrentRank",
        "SlotWeight",
        "PreemptState",
    ),
    GROUP: ("AccountingGroup", "GroupQuota", "GroupResourcesAllocated", "GroupResourcesInUse"),
}
# slot<N>_RemoteUserPrio and the rest, with NEGOTIATOR_CROSS_SLOT_PRIOS.
_CROSS_SLOT = re.compile(r"[a-z_]+\d+_remote(user|group)\w*\Z")
_SPECIAL = frozenset({"my", "target", "other", "parent", "root", "self", "toplevel", "currenttime"})


class Side:
    """The attributes one side's ads hold: how many ads hold each name, first spelling."""

    def __init__(self, kind: str, ads: Sequence[ClassAd]) -> None:
        self.kind = kind
        self.total = len(ads)
        self.count: dict[str, int] = {}
        self.spelling: dict[str, str] = {}
        # Counted per list of names by identity (compacted ads share one); the lists are held,
        # so no identity is reused while counting.
        lists: dict[int, tuple[tuple[str, ...], int]] = {}
        for ad in ads:
            names = ad.spellings()
            seen = lists.get(id(names))
            lists[id(names)] = (names, 1 if seen is None else seen[1] + 1)
        for names, n in lists.values():
            for name in names:
                key = name.lower()
                self.count[key] = self.count.get(key, 0) + n
                self.spelling.setdefault(key, name)
        for name in EPHEMERAL[kind]:
            self.spelling.setdefault(name.lower(), name)
        self.ephemeral = frozenset(n.lower() for n in EPHEMERAL[kind])

    def has(self, lname: str) -> bool:
        return lname in self.count or lname in self.ephemeral or (self.kind == SLOT and bool(_CROSS_SLOT.match(lname)))

    def missing(self, lname: str) -> int:
        """Ads of this side without the attribute (0 for the negotiator's own)."""
        if lname in self.ephemeral or lname not in self.count:
            return 0
        return self.total - self.count[lname]


@dataclass(frozen=True)
class Ref:
    """One reference: ``scope`` is "my", "target" or "" (bare); ``name`` as written."""

    scope: str
    name: str
    guarded: bool = False  # read where Undefined is expected: ``x ?: d``, ``isUndefined(x)``, ``x =?= y``


_GUARDS = frozenset(
    {
        "isundefined",
        "iserror",
        "isboolean",
        "isinteger",
        "isreal",
        "isstring",
        "islist",
        "isclassad",
        "isabstime",
        "isreltime",
        "ifthenelse",
    }
)


def references(node: ast.Node) -> Iterator[Ref]:
    """Every attribute reference of ``node`` (nested ad literals are their own scope)."""
    stack: list[tuple[ast.Node, bool]] = [(node, False)]
    while stack:
        n, guarded = stack.pop()
        if isinstance(n, ast.AttrRef):
            if n.lname not in _SPECIAL and not n.absolute:
                yield Ref("", n.name, guarded)
        elif isinstance(n, ast.Select):
            base = n.base
            if isinstance(base, ast.AttrRef) and base.lname in ("my", "self"):
                yield Ref("my", n.name, guarded)
            elif isinstance(base, ast.AttrRef) and base.lname in ("target", "other"):
                yield Ref("target", n.name, guarded)
            else:
                stack.append((base, guarded))
        else:
            stack += reversed(list(_children(n, guarded)))


def _children(n: ast.Node, guarded: bool) -> Iterator[tuple[ast.Node, bool]]:
    """The sub-expressions of ``n`` in source order, each with whether it is guarded."""
    if isinstance(n, ast.Binary):
        g = guarded or n.op in ("=?=", "=!=", "is", "isnt")
        yield from ((n.left, g), (n.right, g))
    elif isinstance(n, ast.Elvis):
        yield from ((n.left, True), (n.right, guarded))
    elif isinstance(n, ast.Unary):
        yield n.operand, guarded
    elif isinstance(n, ast.Paren):
        yield n.inner, guarded
    elif isinstance(n, ast.Conditional):
        yield from ((n.cond, True), (n.then, guarded), (n.other, guarded))
    elif isinstance(n, ast.ListExpr):
        yield from ((x, guarded) for x in n.items)
    elif isinstance(n, ast.Call):
        g = n.lname in _GUARDS
        yield from ((x, guarded or (g and i == 0)) for i, x in enumerate(n.args))
    elif isinstance(n, ast.Subscript):
        yield from ((n.base, guarded), (n.index, guarded))


@dataclass(frozen=True)
class Owned:
    """An expression to check: its tree, what it is called, its owner and target sides,
    and where it is written (``line`` is where the search for a name's column starts)."""

    node: ast.Node
    label: str
    owner: str
    target: Optional[str]
    file: str
    line: int
    span: int = 1


def check_references(exprs: Iterable[Owned], sides: dict[str, Side], source: SourceText) -> list[Finding]:
    """attr-unknown and attr-partial findings of every expression, each name once per place."""
    out: dict[tuple[str, int, str, str], Finding] = {}
    for e in exprs:
        own, other = sides.get(e.owner), sides.get(e.target) if e.target else None
        if own is None:
            continue
        for ref in references(e.node):
            key = (e.file, e.line, ref.scope, ref.name.lower())
            if key in out:
                continue
            found = _judge(ref, e, own, other)
            if found is not None:
                code, message = found
                line, col = source.find(e.file, e.line, ref.name, span=e.span)
                out[key] = Finding(e.file, line, col, code, message)
    return list(out.values())


def _judge(ref: Ref, e: Owned, own: Side, other: Optional[Side]) -> Optional[tuple[str, str]]:
    lname = ref.name.lower()
    if ref.scope == "target":
        if other is None:
            return None
        sides = [other]
    elif ref.scope == "my":
        sides = [own]
    else:
        sides = [own] + ([other] if other is not None else [])
        if own.has(lname):
            sides = [own]
    holders = [s for s in sides if s.has(lname)]
    shown = (f"{ref.scope.upper()}." if ref.scope else "") + ref.name
    if not holders:
        pool = {s.spelling[k] for s in sides for k in s.spelling}
        near = suggestions(ref.name, pool)
        where = " or ".join(f"{s.kind} ads" for s in sides)
        hint = f"; did you mean {or_list(near)}?" if near else ""
        return "attr-unknown", f"{shown} in {e.label}: no {where} have {ref.name}, so it is undefined{hint}"
    side = holders[0]
    if ref.guarded or side is own:
        return None  # an owner knows its own ad; a guarded read expects Undefined
    missing = side.missing(lname)
    if missing:
        return "attr-partial", (
            f"{shown} in {e.label}: {missing} of {side.total} {side.kind} ads lack {ref.name} (undefined there)"
        )
    return None


__all__ = ["EPHEMERAL", "GROUP", "JOB", "SLOT", "Owned", "Ref", "Side", "check_references", "references"]
