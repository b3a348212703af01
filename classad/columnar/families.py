"""Expressions that differ only in their literals, evaluated together as one.

A pool often holds many variants of one policy: ``START`` expressions that are the
same but for the owner they refuse (``TARGET.Owner =!= "user14"``), one variant per
few machines.  A table column holding them evaluates each distinct expression on its
own rows, and the fixed cost of walking an expression is paid once per variant.  A
*family* is a set of such variants: the same tree in every node kind, operator and
name, with plain literals (booleans, integers, reals, strings) of the same type in the
same places, or lists of such literals.  Its *template* is that tree with each literal replaced by a
:class:`Hole`; evaluated over all the family's rows at once, a hole gives each row the
literal of its own variant, so every row gets the value its own expression has.  A
literal that every member has alike (type and exact value: the ``15 * 60`` of every
``START`` variant) stays a literal of the template, so that the parts of the template
without holes are what the variants hold, shared like theirs (row-only parts, constants).

Only trees made of the node kinds the vector walk handles are grouped, and only calls
of functions that depend on their arguments alone (no ``random``).  Whatever the
walk would hand to the scalar evaluator inside a template (which does not know holes)
stops the template before that evaluation, and the variants are then evaluated one by
one as usual (see :meth:`classad.columnar.compile.Run.family_values`).
"""

from __future__ import annotations

from itertools import count
from typing import Any, Callable, Hashable, Optional

import numpy as np

from .. import ast
from ..functions import registry
from ..values import ListValue
from .memo import token

# Calls the vector walk handles itself, whatever their implementation.
_SPECIAL_CALLS = frozenset(("ifthenelse", "isundefined", "iserror", "isstring", "isinteger", "isreal", "isboolean"))
_HOLE_TYPES = (bool, int, float, str)
_LIMIT = 100_000


class Hole:
    """The place of a literal in a family's template: the ``k``-th of family ``family``."""

    __slots__ = ("family", "k")

    def __init__(self, family: int, k: int) -> None:
        self.family, self.k = family, k


class Family:
    """The template of some variants, the row attributes it names, the ids of its nodes,
    and which of a variant's literals (positions in :attr:`Variants.values`) its holes are."""

    __slots__ = ("key", "template", "names", "ids", "positions")

    def __init__(self, key: int, template: Any, names: frozenset, ids: frozenset, positions: tuple) -> None:
        self.key, self.template, self.names, self.ids = key, template, names, ids
        self.positions = positions  # hole k is each variant's literal number positions[k]


class Variants:
    """Which of an attribute's expression nodes belong to a family, and their literals."""

    __slots__ = ("family_of", "family_codes", "families", "values", "holes", "calls")

    def __init__(self, family_of: list[int], families: list[Family], values: list[tuple]) -> None:
        self.family_of = family_of  # node index -> index into ``families``, -1 when alone
        self.family_codes = np.asarray(family_of, dtype=np.int64)  # the same, as an array
        self.families = families
        self.values = values  # node index -> its literals, in the order of the holes
        # family index -> one column per hole, indexed by node (made on first use by the walk)
        self.holes: dict[int, list] = {}
        # (id(call node), argument tokens) -> (node, result per node) of a call on the holes
        # (classad.columnar.compile.Run._variant_call)
        self.calls: dict[tuple, tuple] = {}


# id(node) -> (node, signature or None, literals); signature -> Family.
_signatures: dict[int, tuple[Any, Optional[Hashable], tuple]] = {}
_families: dict[Hashable, Family] = {}
_keys = count()


def variants(nodes: list, pure: Callable[[Any], bool]) -> Optional[Variants]:
    """The families among ``nodes`` (at least two members each), None when there is none."""
    by_sig: dict[Hashable, list[int]] = {}
    values: list[tuple] = []
    for g, node in enumerate(nodes):
        sig, lits = _signature_of(node, pure)
        values.append(lits)
        if sig is not None:
            by_sig.setdefault(sig, []).append(g)
    family_of = [-1] * len(nodes)
    fams: list[Family] = []
    for sig, members in by_sig.items():
        if len(members) < 2:
            continue
        alike = _alike([values[g] for g in members])
        fam = _families.get((sig, alike))
        if fam is None:
            if len(_families) > _LIMIT:
                _families.clear()
            fam = _families[(sig, alike)] = _family(next(_keys), nodes[members[0]], {k for k, _ in alike})
        for g in members:
            family_of[g] = len(fams)
        fams.append(fam)
    return Variants(family_of, fams, values) if fams else None


def _alike(literals: list[tuple]) -> tuple:
    """The literals every member has alike: (position, token) pairs; lists are never alike."""
    first = literals[0]
    out = []
    for k, v in enumerate(first):
        if type(v) is ListValue:
            continue
        tok = token(v)
        if all(token(lits[k]) == tok for lits in literals):
            out.append((k, tok))
    return tuple(out)


def _signature_of(node: Any, pure: Callable[[Any], bool]) -> tuple[Optional[Hashable], tuple]:
    hit = _signatures.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1], hit[2]
    lits: list = []
    sig = _signature(node, lits, pure)
    if len(_signatures) > _LIMIT:
        _signatures.clear()
    _signatures[id(node)] = (node, sig, tuple(lits))
    return sig, tuple(lits)


def _signature(node: Any, lits: list, pure: Callable[[Any], bool]) -> Optional[Hashable]:
    """The tree with its plain literals left out (their types kept; their values appended
    to ``lits``); None for a tree with a kind or call the templates leave alone."""
    t = type(node)
    if t is ast.Literal:
        v = node.value
        if type(v) in _HOLE_TYPES:
            lits.append(v)
            return ("H", type(v))
        return None
    if t is ast.ListExpr:
        if not all(type(i) is ast.Literal and type(i.value) in _HOLE_TYPES for i in node.items):
            return None
        lits.append(ListValue(node.items, None))  # as the walk makes a list of literals in a row's scope
        return ("HL",)
    if t is ast.AttrRef:
        return None if node.absolute else ("a", node.lname)
    if t is ast.Select:
        base = node.base
        if type(base) is not ast.AttrRef or base.absolute:
            return None
        return ("s", base.lname, node.lname)
    if t is ast.Call:
        entry = registry.lookup(node.lname)
        if entry is None or not entry.accepts(len(node.args)):
            return None
        if node.lname not in _SPECIAL_CALLS and not pure(entry):
            return None
        parts: list = ["c", node.lname]
        children: Any = node.args
    elif t is ast.Binary:
        parts, children = ["b", node.op], (node.left, node.right)
    elif t is ast.Unary:
        parts, children = ["u", node.op], (node.operand,)
    elif t is ast.Paren:
        parts, children = ["p"], (node.inner,)
    elif t is ast.Conditional:
        parts, children = ["?"], (node.cond, node.then, node.other)
    elif t is ast.Elvis:
        parts, children = ["?:"], (node.left, node.right)
    else:
        return None
    for child in children:
        s = _signature(child, lits, pure)
        if s is None:
            return None
        parts.append(s)
    return tuple(parts)


def _family(key: int, node: Any, alike: set) -> Family:
    """The family whose template is ``node`` with its plain literals made holes, but those
    at the positions ``alike`` (kept as literals)."""
    literals = iter(range(1_000_000))
    positions: list[int] = []
    names: set = set()
    ids: set = set()

    def copy(n: Any) -> Any:
        t = type(n)
        if t is ast.Literal or t is ast.ListExpr:
            at = next(literals)
            if at in alike:
                out: Any = ast.Literal(n.value)
            else:
                out = Hole(key, len(positions))
                positions.append(at)
        elif t is ast.AttrRef:
            names.add(n.lname)
            out = ast.AttrRef(n.name, n.lname, n.absolute)
        elif t is ast.Select:
            if n.base.lname == "my":
                names.add(n.lname)
            out = ast.Select(ast.AttrRef(n.base.name, n.base.lname, False), n.name, n.lname)
            ids.add(id(out.base))
        elif t is ast.Call:
            out = ast.Call(n.name, n.lname, tuple(copy(a) for a in n.args))
        elif t is ast.Binary:
            out = ast.Binary(n.op, copy(n.left), copy(n.right))
        elif t is ast.Unary:
            out = ast.Unary(n.op, copy(n.operand))
        elif t is ast.Paren:
            out = ast.Paren(copy(n.inner))
        elif t is ast.Conditional:
            out = ast.Conditional(copy(n.cond), copy(n.then), copy(n.other))
        else:
            out = ast.Elvis(copy(n.left), copy(n.right))
        ids.add(id(out))
        return out

    template = copy(node)
    return Family(key, template, frozenset(names), frozenset(ids), tuple(positions))


__all__ = ["Family", "Hole", "Variants", "variants"]
