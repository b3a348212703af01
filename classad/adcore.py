"""What the evaluator needs of an ad: its storage, a public lookup, and its parent scope.

An ad maps each attribute's folded (lower-case) name to ``(spelling, node)``; the nodes
are the shared immutable trees of :mod:`classad.ast`, so copying an ad is cheap.
:class:`AdCore` holds that table and the enclosing ad (``parent``) of a nested ad, and
nothing more: the evaluator, the reference walker and the function library work on it,
below :class:`classad.ClassAd`, the public mapping built on top of it.  Ads made while
evaluating (an ad literal's value, the context ads of a match, ``splitTime()``'s result)
are ``AdCore`` objects; the public layer turns each into a ``ClassAd`` when it hands a
value to Python.
"""

from __future__ import annotations

import sys
from typing import Any, Iterator, Optional, Sequence

from . import ast
from .layout import SharedAttrs, Stored, compact, plain_of, rewrite, written

# Spelling -> its lower-case key, one shared string per distinct spelling: a dump of
# 100,000 job ads then holds each attribute name once, not once per ad.
_LOWER_KEYS: dict[str, str] = {}
_LOWER_KEYS_LIMIT = 100_000


def lower_key(name: str) -> str:
    """The lower-case dictionary key of attribute spelling ``name`` (shared, interned)."""
    key = _LOWER_KEYS.get(name)
    if key is None:
        key = sys.intern(name.lower())
        if len(_LOWER_KEYS) < _LOWER_KEYS_LIMIT:
            _LOWER_KEYS[name] = key
    return key


class AdCore:
    """An ad's attribute table and its enclosing ad."""

    __slots__ = ("_attrs", "parent")

    def __init__(self) -> None:
        self._attrs: dict[str, tuple[str, ast.Node]] | SharedAttrs = {}
        self.parent: Optional[AdCore] = None

    @classmethod
    def from_nodes(cls, attrs: tuple, parent: Optional["AdCore"] = None) -> Any:
        """An ad of this class from (name, node) pairs, nested under ``parent``."""
        ad = cls.__new__(cls)
        key = lower_key
        ad._attrs = {key(pair[0]): pair if type(pair) is tuple else tuple(pair) for pair in attrs}
        ad.parent = parent
        return ad

    @classmethod
    def adopt(cls, attrs: "dict | SharedAttrs", parent: Optional["AdCore"] = None) -> Any:
        """An ad of this class that takes ``attrs`` (lower-case key -> (spelling, node)) as
        its storage, without copying (the readers hand over the dict they built)."""
        ad = cls.__new__(cls)
        ad._attrs = attrs
        ad.parent = parent
        return ad

    @classmethod
    def from_values(cls, pairs: list) -> Any:
        """A top-level ad holding ``(name, value)`` pairs of plain language values, in order."""
        return cls.from_nodes(tuple((name, ast.Literal(value)) for name, value in pairs))

    def compact(self, *, equal_values: bool = True) -> Any:
        """Store the attributes in a layout shared with ads that have the same names, in
        the same order (see :mod:`classad.layout`): far less memory for the many similar
        ads of a queue dump.  Nothing visible changes; the ad returns to its own dict
        when it is next modified.  Returns the ad.

        ``equal_values=False`` shares only the very nodes of the layout's template, not
        literals merely equal to them: for a reader that already gives equal values one
        node (the old-format reader), where comparing the values would be wasted work."""
        if type(self._attrs) is dict:
            self._attrs = compact(self._attrs, equal_values=equal_values)
        return self

    def _writable(self) -> dict[str, tuple[str, ast.Node]]:
        attrs = self._attrs
        if type(attrs) is SharedAttrs:
            attrs = self._attrs = attrs.to_dict()
        return attrs  # type: ignore[return-value]

    # ---- reading ---------------------------------------------------------------------

    def lookup_node(self, lname: str) -> Optional[ast.Node]:
        """The expression node of attribute ``lname`` (already lower-case) in this ad only."""
        entry = self._attrs.get(lname)
        return entry[1] if entry is not None else None

    def __len__(self) -> int:
        """The number of attributes this ad holds itself."""
        return len(self._attrs)

    def stored_of(self, lnames: tuple[str, ...]) -> list[Stored]:
        """What this ad stores for each attribute of ``lnames`` (already lower-case), None
        for a missing one: one call for the many names a caller reads of each of many ads
        (autocluster keys, queue order).  Each is a node or, in a compacted ad, may be the
        bare ``bool``/``int``/``float``/``str`` value of a literal (see
        :meth:`classad.layout.SharedAttrs.stored_of`)."""
        attrs = self._attrs
        if type(attrs) is SharedAttrs:
            return attrs.stored_of(lnames)
        out: list[Stored] = []
        for n in lnames:
            entry = attrs.get(n)
            out.append(None if entry is None else entry[1])
        return out

    def plain(self, lname: str) -> Stored:
        """Attribute ``lname`` (already lower-case) of this ad only, with a plain literal
        as its bare ``bool``/``int``/``float``/``str`` value and any other expression as its
        node; None when the ad lacks it.  For readers after values, such as the columns of
        a table of ads (see :meth:`classad.layout.SharedAttrs.plain`)."""
        attrs = self._attrs
        if type(attrs) is SharedAttrs:  # (plain_of without its own call: a hot read)
            return attrs.plain(lname)
        return plain_of(attrs, lname)

    def stored_key(self, lnames: tuple[str, ...]) -> tuple[tuple, Any]:
        """``(key, held)``: a hashable key equal for two ads (or two calls) only when each
        attribute of ``lnames`` (lower-case) is stored as the same object in both (see
        :meth:`stored_of`; a missing one as None), and the objects it stands for, which a
        cache keyed by it must hold so that their identities stay theirs."""
        attrs = self._attrs
        if type(attrs) is SharedAttrs:
            return attrs.stored_key(lnames)
        held = self.stored_of(lnames)
        return tuple(map(id, held)), held

    def spellings(self) -> tuple[str, ...]:
        """The attribute names as written, in insertion order; a compacted ad answers with
        its layout's shared tuple (the same object for every ad of that layout), so a
        caller may count names over many ads by that tuple."""
        attrs = self._attrs
        if type(attrs) is SharedAttrs:
            return attrs.layout.spellings
        return tuple(name for name, _ in attrs.values())

    def node_items(self) -> Iterator[tuple[str, ast.Node]]:
        """(spelling, expression node) pairs in insertion order."""
        return iter(self._attrs.values())

    def get_node(self, name: str) -> Optional[ast.Node]:
        """The expression node of ``name`` in this ad only, or None."""
        entry = self._attrs.get(name.lower())  # (lookup_node without its own call: a hot read)
        return entry[1] if entry is not None else None

    # ---- writing and copying ---------------------------------------------------------

    def set_node(self, name: str, node: ast.Node) -> None:
        """Store an expression node under ``name`` (keeping an existing spelling)."""
        key = name.lower()
        attrs = self._writable()
        old = attrs.get(key)
        attrs[key] = (old[0] if old else name, node)

    def rewritten(
        self,
        names: tuple[str, ...],
        nodes: Sequence[Any],
        *,
        deleted: tuple[str, ...] = (),
        equal_values: bool = True,
    ) -> Any:
        """A top-level copy of this ad without the attributes ``deleted`` (those it has),
        then with ``names[i]`` set to ``nodes[i]`` (keeping an existing spelling), where a
        plain ``bool``/``int``/``float``/``str`` value stands for a new literal of it.  The copy
        of a compacted ad is compacted as :meth:`compact` (with ``equal_values``) would
        leave the written copy, usually without a dict of every attribute on the way: a
        compacted ad stays cheap to write.  The copy of any other ad is a dict again."""
        attrs = self._attrs
        if type(attrs) is SharedAttrs:
            out = rewrite(attrs, deleted, names, nodes, equal_values=equal_values)
        else:
            out = written(attrs, deleted, names, nodes)  # type: ignore[arg-type]
        return type(self).adopt(out)

    def detached(self) -> Any:
        """A copy with no enclosing ad (what a string subscript ``ad["x"]`` yields)."""
        return type(self).from_nodes(tuple(self._attrs.values()), None)

    def copy(self) -> Any:
        """A shallow copy (expression trees are shared; they are immutable)."""
        return type(self).from_nodes(tuple(self._attrs.values()), self.parent)


__all__ = ["AdCore", "lower_key"]
