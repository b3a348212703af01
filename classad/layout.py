"""Shared-layout attribute storage: ads with the same attribute names share one key table,
and the values they have in common.

An ad normally stores its attributes in a dict (lower-case name -> ``(spelling,
node)``), which costs about 1.5 KB for a 47-attribute job ad before any value.
A queue dump holds 100,000 such ads in a few dozen distinct attribute lists, and
the ads of one list agree on most values (the same ``Requirements``, ``Cmd``,
``RequestMemory``...).  :func:`compact` therefore stores an ad as one tuple: a
shared :class:`Variant` followed by only the values in which the ad differs from
its :class:`Layout`'s template (the first ad compacted with those names).  A
variant records which places an ad keeps itself; the ads that differ from the
template in the same places share it.

A literal the ad keeps itself is stored as its bare Python value when it is a
``bool``, ``int``, ``float`` or ``str`` (most such values are the ad's own:
identifiers, times, sizes), and read back as a :class:`~classad.ast.Literal`.
Every mapping method (``get``, ``in``, ``[]``, ``items``, ``values``, ``len``,
iteration) gives nodes, like the dict it replaces; only :meth:`SharedAttrs.stored_of`
hands out the stored form, for callers that key caches by identity.  The ad turns
the storage back into a dict before its first change (``ClassAd`` does this), so it
is never written; :func:`rewrite` makes the storage of a written copy directly (what
compacting the written dict would give), for callers that rewrite many compacted ads.

Layouts are remembered in a bounded table, and so are the variants of each layout;
a full table of variants first forgets the variants no ad holds any more.  When a
table is full, new attribute lists keep their dicts and new patterns of difference
keep every value.
"""

from __future__ import annotations

import sys
from itertools import compress, repeat
from operator import and_, eq, is_, is_not, itemgetter, not_
from typing import Any, Callable, Iterator, Optional, Sequence

from . import ast

Entry = tuple[str, ast.Node]
# What the storage holds for one attribute: its node, or the bare value of a plain literal.
Stored = Any

_literal = ast.Literal
_BARE = frozenset({bool, int, float, str})


def plain_form(node: ast.Node) -> Stored:
    """``node`` as :meth:`SharedAttrs.plain` gives it: the bare value of a plain literal,
    else the node."""
    if type(node) is _literal and type(node.value) in _BARE:  # type: ignore[attr-defined]
        return node.value  # type: ignore[attr-defined]
    return node


def plain_of(attrs: Any, key: str) -> Stored:
    """What an ad's storage holds for ``key`` (lower-case) in the form of
    :meth:`SharedAttrs.plain`: ``attrs`` is a dict of ``(spelling, node)`` entries, or a
    storage with a ``plain`` method of its own (a :class:`SharedAttrs`, say)."""
    if type(attrs) is dict:
        entry = attrs.get(key)
        return None if entry is None else plain_form(entry[1])
    return attrs.plain(key)


def _node(stored: Stored) -> ast.Node:
    """The node of a stored value (a bare value becomes a fresh literal)."""
    return _literal(stored) if type(stored) in _BARE else stored


class Layout:
    """The attribute names of a family of ads, each lower-case key's place, and the
    template values that the family's variants leave out."""

    __slots__ = (
        "spellings",
        "keys",
        "place",
        "template",
        "bare",
        "pairs",
        "variants",
        "whole",
        "_positions",
        "moves",
        "_refused",
    )

    def __init__(self, spellings: tuple[str, ...], keys: tuple[str, ...], template: tuple[ast.Node, ...]) -> None:
        self.spellings = spellings
        self.keys = keys
        self.place = {key: i for i, key in enumerate(keys)}
        self.template = template
        # The template's plain literal values (a value equal to nothing elsewhere).
        self.bare = tuple(v if v is not node else _NOT_BARE for v, node in zip(map(plain_form, template), template))
        self.pairs = tuple(zip(spellings, template))  # the template's entries, ready to hand out
        self.variants: dict[tuple[int, ...], Variant] = {}
        self.whole = Variant(self, tuple(range(len(keys))))  # for ads past the variant limit
        self._positions: dict[tuple[str, ...], tuple[int, ...]] = {}
        self.moves: dict[tuple, Optional[_Move]] = {}  # see rewrite()
        self._refused = 0  # new variants to refuse before the table is recycled again

    def positions(self, keys: tuple[str, ...]) -> tuple[int, ...]:
        """Where each of ``keys`` (lower-case) is, -1 for a missing one; remembered per tuple."""
        got = self._positions.get(keys)
        if got is None:
            if len(self._positions) >= 256:
                self._positions.clear()
            got = self._positions[keys] = tuple(self.place.get(k, -1) for k in keys)
        return got

    def variant(self, own: tuple[int, ...]) -> "Optional[Variant]":
        """The variant whose ads keep the places ``own`` themselves (None when the table
        of variants is full and this one is new)."""
        found = self.variants.get(own)
        if found is None:
            if len(self.variants) >= VARIANT_LIMIT and not self._recycled():
                return None
            found = self.variants[own] = Variant(self, own)
        return found

    def _recycled(self) -> bool:
        """Whether the full table of variants made room by forgetting the variants that no
        ad holds any more (a long simulation rewrites ads into new patterns and drops the
        old ads).  Besides the table, only the rewrite plans refer to a variant without
        holding an ad of it or a cache key made of one (:meth:`SharedAttrs.stored_key`);
        their references are counted out, and a variant forgotten is forgotten by the plans
        too, so no ad or cache can meet it again: a later ad of its pattern gets a new
        variant, the same in all but identity.  When that frees less than an eighth of the
        table, as many new ones are refused before the next try."""
        if self._refused > 0:
            self._refused -= 1
            return False
        moves = [
            m
            for layout in _LAYOUTS.values()
            for m in layout.moves.values()
            if m is not None and (m.source is self or m.target is self)
        ]
        planned = _plan_references(moves, self)
        table = self.variants
        counts = _reference_counts(table)
        self.variants = {}
        gone: set[int] = set()
        for (own, v), refs in zip(table.items(), counts):
            if refs - planned.get(id(v), 0) > _UNHELD:
                self.variants[own] = v
            else:
                gone.add(id(v))
        table.clear()
        if gone:
            for m in moves:
                m.forget(self, gone)
        room = max(1, VARIANT_LIMIT // 8)
        if VARIANT_LIMIT - len(self.variants) < room:
            self._refused = room
            return False
        return True


class Variant:
    """The ads of one layout that keep the same places themselves: ``source[p]`` is the
    index of place ``p``'s value in such an ad's tuple, 0 when the value is the template's."""

    __slots__ = (
        "layout",
        "source",
        "place",
        "spellings",
        "template",
        "pairs",
        "own_places",
        "own_at",
        "_plans",
        "_plains",
    )

    def __init__(self, layout: Layout, own: tuple[int, ...]) -> None:
        source = [0] * len(layout.keys)
        for i, p in enumerate(own, 1):
            source[p] = i
        self.layout = layout
        self.source = tuple(source)
        # The layout's tables again, one attribute access nearer to the hot path.
        self.place, self.spellings = layout.place, layout.spellings
        self.template, self.pairs = layout.template, layout.pairs
        # The places an ad keeps itself, in increasing order, and their indices in its tuple
        # (two tuples rather than one of pairs: fewer objects for the cyclic collector).
        self.own_places = tuple(p for p, s in enumerate(source) if s)
        self.own_at = tuple(map(source.__getitem__, self.own_places))
        self._plans: dict[tuple[str, ...], _Plan] = {}
        self._plains: dict[tuple[str, ...], tuple[list[Stored], tuple[int, ...], tuple[int, ...]]] = {}

    @property
    def own(self) -> tuple[tuple[int, int], ...]:
        """(place, index in the ad's tuple) of each place an ad of this variant keeps itself."""
        return tuple(zip(self.own_places, self.own_at))

    def plain_plan(self, keys: tuple[str, ...]) -> tuple[list[Stored], tuple[int, ...], tuple[int, ...]]:
        """How to read the plain forms (:meth:`SharedAttrs.plain`) of ``keys`` from an ad of
        this variant: the template's plain forms with the ad's own places as None, those
        places in the result and their indices in the ad's tuple; remembered per tuple."""
        got = self._plains.get(keys)
        if got is None:
            if len(self._plains) >= 64:
                self._plains.clear()
            bare, template = self.layout.bare, self.template
            fixed: list[Stored] = []
            rows: list[int] = []
            at: list[int] = []
            for r, p in enumerate(self.layout.positions(keys)):
                s = self.source[p] if p >= 0 else 0
                fixed.append(None if p < 0 or s else template[p] if bare[p] is _NOT_BARE else bare[p])
                if s:
                    rows.append(r)
                    at.append(s)
            got = self._plains[keys] = (fixed, tuple(rows), tuple(at))
        return got

    def plan(self, keys: tuple[str, ...]) -> "_Plan":
        """How to read ``keys`` (lower-case) from an ad of this variant; remembered per tuple."""
        got = self._plans.get(keys)
        if got is None:
            if len(self._plans) >= 64:
                self._plans.clear()
            got = self._plans[keys] = _Plan(self, keys)
        return got


class _Plan:
    """The stored values of some names in the ads of one variant: what the template gives
    (fixed for the variant) and where in each ad the rest is."""

    __slots__ = ("fixed", "rows", "at")

    def __init__(self, variant: Variant, keys: tuple[str, ...]) -> None:
        source, template = variant.source, variant.template
        fixed: list[Stored] = []
        rows: list[int] = []
        at: list[int] = []
        for r, p in enumerate(variant.layout.positions(keys)):
            s = source[p] if p >= 0 else 0
            fixed.append(None if p < 0 or s else template[p])
            if s:
                rows.append(r)
                at.append(s)
        self.fixed = fixed  # the values, with the ad's own left as None
        # The ad's own: each one's place in the result and its index in the ad's tuple (two
        # tuples rather than one of pairs: fewer objects for the cyclic collector to walk).
        self.rows = tuple(rows)
        self.at = tuple(at)


_item = tuple.__getitem__
_size = tuple.__len__


class SharedAttrs(tuple):
    """A read-only view shaped like ``dict[lower-case name, (spelling, node)]`` over a
    shared :class:`Variant` and one ad's own values.

    It is one tuple, ``(variant, value, value, ...)``, so that an ad costs a single object
    beyond its own values; the tuple's own item access and length are not its interface
    (use the mapping methods)."""

    __slots__ = ()

    @property
    def layout(self) -> Layout:
        """The names and template values, shared with every ad of the same attribute list."""
        return _item(self, 0).layout  # type: ignore[no-any-return]

    def _at(self, p: int) -> Stored:
        variant: Variant = _item(self, 0)
        s = variant.source[p]
        return _item(self, s) if s else variant.template[p]

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        variant: Variant = _item(self, 0)
        p = variant.place.get(key)
        if p is None:
            return default
        s = variant.source[p]
        if not s:
            return variant.pairs[p]
        stored = _item(self, s)
        if type(stored) in _BARE:
            stored = _literal(stored)
        return (variant.spellings[p], stored)

    def __getitem__(self, key: str) -> Entry:  # type: ignore[override]
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found  # type: ignore[no-any-return]

    def __contains__(self, key: object) -> bool:
        return key in _item(self, 0).layout.place

    def __len__(self) -> int:
        return len(_item(self, 0).layout.keys)

    def __iter__(self) -> Iterator[str]:
        return iter(_item(self, 0).layout.keys)

    def keys(self) -> tuple[str, ...]:
        return _item(self, 0).layout.keys  # type: ignore[no-any-return]

    def _nodes(self) -> Iterator[ast.Node]:
        return map(_node, map(self._at, range(len(self))))

    def values(self) -> Iterator[Entry]:
        return zip(self.layout.spellings, self._nodes())

    def items(self) -> Iterator[tuple[str, Entry]]:
        layout = self.layout
        return zip(layout.keys, zip(layout.spellings, self._nodes()))

    def stored_of(self, keys: tuple[str, ...]) -> list[Stored]:
        """What is stored for each of ``keys`` (lower-case), None for a missing one: a node,
        or the bare ``bool``/``int``/``float``/``str`` value of a literal.  Each is the same
        object on every call, so callers may key caches by identity while they hold it."""
        plan = _item(self, 0).plan(keys)
        out = plan.fixed.copy()
        for r, s in zip(plan.rows, plan.at):
            out[r] = _item(self, s)
        return out

    def plain(self, key: str) -> Stored:
        """What the ad holds for ``key`` (lower-case) with every plain literal bare, the
        template's too: a ``bool``/``int``/``float``/``str``, any other node as it is, None
        for a missing one.  For readers after values rather than nodes (a table column)."""
        variant: Variant = _item(self, 0)
        p = variant.place.get(key)
        if p is None:
            return None
        s = variant.source[p]
        if s:
            return _item(self, s)
        b = variant.layout.bare[p]
        return variant.template[p] if b is _NOT_BARE else b

    def plains(self, keys: tuple[str, ...]) -> list[Stored]:
        """:meth:`plain` of each of ``keys`` (lower-case), in one call."""
        variant: Variant = _item(self, 0)
        fixed, rows, at = variant.plain_plan(keys)
        out = fixed.copy()
        for r, s in zip(rows, at):
            out[r] = _item(self, s)
        return out

    def stored_key(self, keys: tuple[str, ...]) -> tuple[tuple, tuple]:
        """``(key, held)``: a hashable key that two ads (or calls) share only when each of
        ``keys`` is stored as the same object in both (see :meth:`stored_of`), and the
        objects the key stands for -- a cache keyed by it must hold them."""
        variant: Variant = _item(self, 0)
        at = variant.plan(keys).at
        if not at:
            return (variant,), ()
        if len(at) == 1:
            v = _item(self, at[0])
            return (variant, id(v)), v
        own = tuple(map(_item, repeat(self, len(at)), at))  # the tuple's own items, not the mapping's
        return (variant, *map(id, own)), own

    def to_dict(self) -> dict[str, Entry]:
        """The same attributes as a new, writable dict: the template's entries as they are,
        the ad's own values made entries (a bare value a fresh literal)."""
        variant: Variant = _item(self, 0)
        entries = list(variant.pairs)
        spellings = variant.spellings
        for p, s in zip(variant.own_places, variant.own_at):
            v = _item(self, s)
            entries[p] = (spellings[p], _literal(v) if type(v) in _BARE else v)
        return dict(zip(variant.layout.keys, entries))

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    __hash__ = object.__hash__  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SharedAttrs({self.to_dict()!r})"

    def __reduce__(self) -> tuple:
        # Pickled (and deep-copied) as the names and nodes; loading shares the layout again.
        return (_rebuild, (self.layout.spellings, tuple(self._nodes())))

    def __copy__(self) -> "SharedAttrs":
        return self


def _rebuild(spellings: tuple[str, ...], nodes: tuple) -> "dict[str, Entry] | SharedAttrs":
    """A pickled :class:`SharedAttrs` (a dict when the layout table is full)."""
    return compact({spelling.lower(): (spelling, node) for spelling, node in zip(spellings, nodes)})


# Spellings in order -> their layout.  Bounded: past the limit new lists are not compacted.
_LAYOUTS: dict[tuple[str, ...], Layout] = {}
LAYOUT_LIMIT = 4096
# Variants of one layout.  Bounded: past the limit (once the variants no ad holds are
# forgotten, see Layout._recycled) a new pattern keeps every value.
VARIANT_LIMIT = 1024


def _plan_references(moves: list["_Move"], layout: Layout) -> dict[int, int]:
    """By id, how many references to each variant of ``layout`` the plans of ``moves`` hold
    (a function of its own: no variable of the caller is left holding one)."""
    planned: dict[int, int] = {}
    for m in moves:
        for v in m.planned(layout):
            planned[id(v)] = planned.get(id(v), 0) + 1
    return planned


def _reference_counts(table: dict) -> list[int]:
    return [sys.getrefcount(v) for v in table.values()]


# What _reference_counts says of a value that only its table holds.
_UNHELD = _reference_counts({(): object()})[0]


_NOT_BARE = object()


def _same_value(v: Stored, w: Stored) -> bool:
    """Whether two stored values are plain literals no evaluation or printing can tell apart."""
    t = type(v)
    return t in _BARE and t is type(w) and v == w and (t is not float or repr(v) == repr(w))


def compact(attrs: dict[str, Entry], *, equal_values: bool = True) -> "dict[str, Entry] | SharedAttrs":
    """``attrs`` as a :class:`SharedAttrs` when its layout is known or may still be added;
    otherwise ``attrs`` itself.  With ``equal_values`` false only the template's very nodes
    are left to it (see :meth:`classad.ad.ClassAd.compact`)."""
    if not attrs:
        return attrs
    spellings, nodes = zip(*attrs.values())
    layout: Optional[Layout] = _LAYOUTS.get(spellings)
    if layout is None:
        if len(_LAYOUTS) >= LAYOUT_LIMIT:
            return attrs
        layout = _LAYOUTS[spellings] = Layout(spellings, tuple(attrs), nodes)
    # The places that differ from the template, found at C speed (readers share one node
    # among the ads that have the same value); the ad keeps those, bare when plain literals
    # (plain_form written out: this runs for every ad read).
    own = tuple(compress(range(len(nodes)), map(is_not, nodes, layout.template)))
    literal, bare = _literal, _BARE
    values = [
        n.value if n.__class__ is literal and n.value.__class__ in bare else n  # type: ignore[attr-defined]
        for n in map(nodes.__getitem__, own)
    ]
    # A plain literal equal to the template's but not the same node (a reader that does not
    # share nodes, or one that forgot them) is left to the template too: found at C speed,
    # then told apart from the values that Python merely calls equal (1 and true, 0.0 and -0.0).
    if equal_values and True in map(eq, values, map(layout.bare.__getitem__, own)):
        keep = [not _same_value(v, layout.bare[p]) for v, p in zip(values, own)]
        own, values = tuple(compress(own, keep)), list(compress(values, keep))
    variant = layout.variant(own)
    if variant is None:
        variant = layout.whole
        values = [plain_form(n) for n in nodes]
    return tuple.__new__(SharedAttrs, (variant, *values))


def shared_attrs(layout: Layout, own: tuple[int, ...], values: list[Stored]) -> SharedAttrs:
    """What :func:`compact` gives for an ad of ``layout`` that holds the template's values
    except at the places ``own`` (in increasing order), where it holds ``values`` in their
    stored form (a plain literal as its bare value, see :meth:`SharedAttrs.stored_of`), none
    of them the template's very node; an own plain literal equal to the template's is left
    to the template (as with ``equal_values``)."""
    if True in map(eq, values, map(layout.bare.__getitem__, own)):
        keep = [not _same_value(v, layout.bare[p]) for v, p in zip(values, own)]
        own, values = tuple(compress(own, keep)), list(compress(values, keep))
    variant = layout.variant(own)
    if variant is None:
        variant = layout.whole
        whole = [t if b is _NOT_BARE else b for b, t in zip(layout.bare, layout.template)]
        for p, v in zip(own, values):
            whole[p] = v
        values = whole
    return tuple.__new__(SharedAttrs, (variant, *values))


def own_values(attrs: SharedAttrs) -> dict[int, Stored]:
    """The places of its layout that ``attrs`` holds itself, with their stored values (the
    rest are the template's)."""
    variant: Variant = _item(attrs, 0)
    return {p: _item(attrs, s) for p, s in zip(variant.own_places, variant.own_at)}


# ---- writing a compacted ad without a dict ------------------------------------------------
#
# A simulation rewrites a few attributes of thousands of compacted ads every cycle (a
# claim's State and RemoteUser, a partitionable slot's Cpus).  Turning each ad into a dict
# and compacting it again costs a step per attribute; rewrite() gives the very same
# storage in steps per value the ad keeps itself.


class _Move:
    """What deleting some names and then writing others makes of the ads of one layout:
    the layout of the result (``target``) and, for each of its places, the old place it
    keeps or the write it takes."""

    __slots__ = (
        "source",
        "target",
        "kept",
        "writes",
        "gather",
        "write_places",
        "new_places",
        "old_places",
        "moved",
        "old_values",
        "_plans",
    )

    def __init__(self, source: Layout, target: Layout, kept: tuple, writes: tuple) -> None:
        self.source, self.target = source, target
        self.kept = kept  # (new place, old place) of the attributes kept as they were
        self.writes = writes  # (new place, index of the write)
        self.gather = _getter(tuple(i for _, i in writes))  # the written values in place order
        self.write_places = tuple(q for q, _ in writes)
        # The same by column, for the steps of each variant (see _Steps): the kept places,
        # whether the old template's value there is not the new one's node, and its stored form.
        self.new_places = tuple(q for q, _ in kept)
        self.old_places = tuple(p for _, p in kept)
        self.moved = tuple(source.template[p] is not target.template[q] for q, p in kept)
        self.old_values = tuple(plain_form(source.template[p]) for _, p in kept)
        self._plans: dict[Variant, _Steps] = {}

    def planned(self, layout: Layout) -> Iterator[Variant]:
        """The variants of ``layout`` the plans refer to: each variant of the source layout
        planned, and the variant of the target each plan leads to (once per reference)."""
        if self.source is layout:
            yield from self._plans
        if self.target is layout:
            for steps in self._plans.values():
                if steps._variant is not None:
                    yield steps._variant
                yield from steps.remembered()

    def forget(self, layout: Layout, gone: set[int]) -> None:
        """Forget the plans' references to the variants of ``layout`` whose ids are ``gone``."""
        if self.source is layout:
            for v in [v for v in self._plans if id(v) in gone]:
                del self._plans[v]
        if self.target is layout:
            for steps in self._plans.values():
                if steps._variant is not None and id(steps._variant) in gone:
                    steps._variant = None
                steps.forget(gone)

    def plan(self, variant: Variant) -> "_Steps":
        """How an ad of ``variant`` becomes an ad of the target layout (remembered)."""
        got = self._plans.get(variant)
        if got is None:
            if len(self._plans) >= VARIANT_LIMIT:
                self._plans.clear()
            got = self._plans[variant] = _Steps(self, variant)
        return got


class _Steps:
    """The places of the result an ad of one variant keeps itself, by where their values
    come from: values of the ad's tuple (``take``), template values of the old layout
    that are not the new one's (``consts``), the writes (``writes``); the order that
    puts the three, concatenated, in place order, and a getter that takes them in that
    order from the ad's tuple followed by the other two (``gather``)."""

    __slots__ = (
        "take",
        "check",
        "consts",
        "writes",
        "order",
        "places",
        "bare",
        "gather",
        "compared",
        "types",
        "zeros",
        "_variant",
        "_patterns",
    )

    def __init__(self, move: _Move, variant: Variant) -> None:
        new = move.target.template
        # Column by column at C speed: where each kept value is in the ad's tuple (0: the
        # old template's), and which of the old template's values the new one lacks.
        source = list(map(variant.source.__getitem__, move.old_places))
        const = list(map(and_, map(not_, source), move.moved))
        self.take = tuple(filter(None, source))
        self.consts = tuple(compress(move.old_values, const))
        self.writes = move.writes
        at = [*compress(move.new_places, source), *compress(move.new_places, const), *move.write_places]
        self.order = tuple(sorted(range(len(at)), key=at.__getitem__))
        self.places = tuple(map(at.__getitem__, self.order))
        self.bare = tuple(map(move.target.bare.__getitem__, self.places))
        # A value the ad keeps is never the node of its own layout's template; another
        # layout's template may hold that very node (then it is left to the template):
        # the new template's node at each place the result keeps.
        self.check = None if move.source is move.target else tuple(map(new.__getitem__, self.places))
        # The result's values in place order, taken at C speed from the ad's tuple followed
        # by the other values (its length is fixed by the variant).
        size = 1 + len(variant.own_places)
        sources = [*self.take, *range(size, size + len(at) - len(self.take))]
        self.gather = _getter(tuple(map(sources.__getitem__, self.order)))
        # The places whose template value is a plain literal (the others equal no stored
        # value) and those values: what an equal value left to the template is looked for in.
        bare_at = tuple(compress(range(len(self.bare)), map(is_not, self.bare, repeat(_NOT_BARE))))
        self.compared = (bare_at, _getter(bare_at), tuple(map(self.bare.__getitem__, bare_at)))
        # Their types (a value of another type is never the same, however equal), and which of
        # them are float zeros (0.0 and -0.0 are equal, not the same).
        self.types = tuple(map(type, self.compared[2]))
        self.zeros = tuple(j for j, b in enumerate(self.compared[2]) if type(b) is float and b == 0)
        self._variant: Optional[Variant] = None
        # The patterns of values equal to the template's and of template nodes met (see
        # _variant_of) -> the values that may be left to it.
        self._patterns: dict[tuple, _Candidates] = {}

    def remembered(self) -> Iterator[Variant]:
        """The target's variants the patterns' outcomes remember (once per reference)."""
        for candidates in self._patterns.values():
            for outcome in candidates.outcomes.values():
                if outcome is not None and outcome[2] is not None:
                    yield outcome[2]

    def forget(self, gone: set[int]) -> None:
        """Forget the outcomes' references to the variants whose ids are ``gone``."""
        for candidates in self._patterns.values():
            for outcome in candidates.outcomes.values():
                if outcome is not None and outcome[2] is not None and id(outcome[2]) in gone:
                    outcome[2] = None

    def variant(self, target: Layout) -> Optional[Variant]:
        """The target's variant that keeps exactly ``places``."""
        if self._variant is None:
            self._variant = target.variant(self.places)
        return self._variant


def _getter(at: tuple[int, ...]) -> Callable[[Any], tuple]:
    """A function of a sequence that gives its items at the places ``at``, as a tuple
    (at C speed: :func:`operator.itemgetter`, which gives a bare item for one place)."""
    if len(at) > 1:
        return itemgetter(*at)
    if at:
        (k,) = at
        return lambda items: (items[k],)
    return lambda items: ()


def _move(layout: Layout, deleted: tuple[str, ...], names: tuple[str, ...]) -> Optional[_Move]:
    """The move of ``layout``'s ads by these deletions and writes, when the resulting list
    of names already has a layout (remembered per layout)."""
    key = (deleted, names)
    found: Any = layout.moves.get(key, _NOT_BARE)  # (one hash of the key: None is an answer too)
    if found is not _NOT_BARE:
        return found  # type: ignore[no-any-return]
    places: dict[str, tuple[str, int, int]] = {
        k: (s, p, -1) for p, (k, s) in enumerate(zip(layout.keys, layout.spellings))
    }
    for name in deleted:
        places.pop(name.lower(), None)
    for i, name in enumerate(names):
        k = name.lower()
        had = places.get(k)
        places[k] = (had[0] if had is not None else name, -1, i)
    spellings = tuple(s for s, _, _ in places.values())
    target = _LAYOUTS.get(spellings)
    if target is None or target.keys != tuple(places):
        return None  # compact() makes the layout (or cannot): ask again next time
    kept = tuple((q, p) for q, (_, p, i) in enumerate(places.values()) if i < 0)
    writes = tuple((q, i) for q, (_, p, i) in enumerate(places.values()) if i >= 0)
    if len(layout.moves) >= 64:
        layout.moves.clear()
    made = layout.moves[key] = _Move(layout, target, kept, writes)
    return made


def written(attrs: dict[str, Entry], deleted: tuple[str, ...], names: tuple[str, ...], nodes: Any) -> dict[str, Entry]:
    """``attrs`` (not changed) without the names ``deleted`` and then with each of ``names``
    set to its node of ``nodes`` (a plain ``bool``/``int``/``float``/``str`` value stands for
    a new literal of it), keeping an existing spelling: a new dict."""
    return _write(dict(attrs), deleted, names, nodes)


def _write(out: dict[str, Entry], deleted: tuple[str, ...], names: tuple[str, ...], nodes: Any) -> dict[str, Entry]:
    for name in deleted:
        out.pop(name.lower(), None)
    for name, node in zip(names, nodes):
        if node.__class__ in _BARE:
            node = _literal(node)
        key = name.lower()
        had = out.get(key)
        out[key] = (had[0] if had is not None else name, node)
    return out


def rewrite(
    attrs: SharedAttrs,
    deleted: tuple[str, ...],
    names: tuple[str, ...],
    nodes: Any,
    *,
    equal_values: bool = True,
) -> "dict[str, Entry] | SharedAttrs":
    """Exactly ``compact(written(attrs.to_dict(), deleted, names, nodes), equal_values=...)``,
    without the dict when the result's layout and variant are known already: only the
    values the ad keeps itself and the written ones are looked at, most of them at C speed."""
    variant: Variant = _item(attrs, 0)
    layout = variant.layout
    move = _move(layout, deleted, names) if variant is not layout.whole else None
    if move is not None:
        target = move.target
        steps = move.plan(variant)
        written, left = _bare_writes(move, nodes)
        got: Sequence[Any] = steps.gather(_concat(attrs, steps.consts + written))
        if steps.check is not None and not all(map(is_not, got, steps.check)):
            # A value the ad kept is the new template's very node: the template holds it.
            got = [_TEMPLATE if v is t else v for v, t in zip(got, steps.check)]
            left = True
        _, pick, bare = steps.compared
        picked = pick(got)
        # (as bytes, 1 where Python calls the value equal: the pattern's key as it is)
        equal = bytes(map(eq, picked, bare)) if equal_values else None
        if not left and (equal is None or 1 not in equal):
            found = steps.variant(target)  # no value is left to the template (most writes)
        else:
            found, got = _variant_of(target, steps, got, picked, equal, left)
        if found is not None:
            return tuple.__new__(SharedAttrs, (found, *got))
    return compact(_write(attrs.to_dict(), deleted, names, nodes), equal_values=equal_values)


def _bare_writes(move: _Move, nodes: Any) -> tuple[tuple, bool]:
    """The stored form of each write, and whether one is its place's template node itself
    (the template then holds it: :data:`_TEMPLATE` stands in its place)."""
    got = move.gather(nodes)
    if _BARE.issuperset(map(type, got)):
        return got, False  # plain values only (what with_values mostly writes): stored as they are
    template = move.target.template
    out = []
    left = False
    for q, i in move.writes:
        v = nodes[i]
        if v.__class__ in _BARE:
            out.append(v)
        elif v is template[q]:
            left = True
            out.append(_TEMPLATE)
        else:
            out.append(v.value if v.__class__ is _literal and v.value.__class__ in _BARE else v)
    return tuple(out), left


_TEMPLATE = object()
_concat = tuple.__add__  # an ad's tuple (not its mapping) followed by other values


def _variant_of(
    target: Layout, steps: _Steps, got: Sequence[Any], picked: tuple, equal: Optional[bytes], left: bool
) -> tuple[Optional[Variant], Sequence[Any]]:
    """The variant of the result whose own values are ``got`` at ``steps.places``, and its
    own values: a value left to the template (:data:`_TEMPLATE`, or a plain literal the same
    as the template's, as :func:`compact` with ``equal_values`` leaves it) is dropped.
    ``picked`` are the values at the places ``steps.compared`` names, and ``equal`` says
    (1 or 0 each) which of them Python calls equal to the template's (None:
    ``equal_values`` is false)."""
    key = (
        equal if equal is not None and 1 in equal else None,
        bytes(map(is_, got, repeat(_TEMPLATE))) if left else None,
    )
    patterns = steps._patterns
    found = patterns.get(key)
    if found is None:
        if len(patterns) >= 256:
            patterns.clear()
        found = patterns[key] = _Candidates(steps, key[0])
    # Of the values Python calls equal, the same ones: of the template's type (1, 1.0 and
    # true are not), and of its sign for a float zero (0.0 and -0.0 are not).
    values = found.pick(picked)
    same = bytes(map(is_, map(type, values), found.types))
    if found.zeros:
        bare = steps.compared[2]
        marks = bytearray(same)
        for i in found.zeros:
            if marks[i] and not _same_value(values[i], bare[found.at[i]]):
                marks[i] = 0
        same = bytes(marks)
    outcomes = found.outcomes
    outcome: Any = outcomes.get(same, _NOT_BARE)
    if outcome is _NOT_BARE:
        drop = [False] * len(steps.compared[0])
        for j, s in zip(found.at, same):
            drop[j] = s == 1
        if len(outcomes) >= 64:
            outcomes.clear()
        outcome = outcomes[same] = _pattern(steps, got, drop, left)
    if outcome is None:
        return steps.variant(target), got
    own, kept, variant = outcome
    if variant is None:  # (remembered: the variant's key is not hashed again)
        variant = outcome[2] = target.variant(own)
    return variant, kept(got)


class _Candidates:
    """The values of one pattern of equality to the template (``equal`` of
    :func:`_variant_of`) that may be left to it: their indices among the compared places
    (``at``), a getter of them, the template's types there, which of them are float zeros;
    and what each outcome of comparing them makes of the result (see :func:`_pattern`)."""

    __slots__ = ("at", "pick", "types", "zeros", "outcomes")

    def __init__(self, steps: _Steps, equal: Optional[bytes]) -> None:
        self.at = () if equal is None else tuple(compress(range(len(equal)), equal))
        self.pick = _getter(self.at)
        self.types = tuple(map(steps.types.__getitem__, self.at))
        self.zeros = tuple(i for i, j in enumerate(self.at) if j in steps.zeros)
        self.outcomes: dict[bytes, Optional[list]] = {}


def _pattern(steps: _Steps, got: Sequence[Any], drop: list[bool], left: bool) -> Optional[list]:
    """``[places, getter, None]``: the places the result keeps and a getter of their values
    from ``got``, when values are left to the template (``drop`` of the compared places,
    and each :data:`_TEMPLATE` if ``left``); None when none is.  The third item is where
    :func:`_variant_of` remembers the target's variant of those places (a reference the
    plans hold: see :meth:`_Move.planned`)."""
    keep = [v is not _TEMPLATE for v in got] if left else [True] * len(got)
    if True in drop:
        for k in compress(steps.compared[0], drop):
            keep[k] = False
    if False not in keep:
        return None
    return [tuple(compress(steps.places, keep)), _getter(tuple(compress(range(len(keep)), keep))), None]


__all__ = [
    "Layout",
    "Variant",
    "SharedAttrs",
    "Stored",
    "shared_attrs",
    "compact",
    "own_values",
    "plain_form",
    "rewrite",
    "written",
    "plain_of",
    "LAYOUT_LIMIT",
    "VARIANT_LIMIT",
]
