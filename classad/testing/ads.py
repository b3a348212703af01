"""Strategies for whole ads shaped like a site's dump, and for single values of every kind.

``ads(like="slots.ad")`` learns the dump (:func:`classad.testing.schema.learn`) and
draws ads attribute by attribute: present as often as in the dump, of each kind as
often as in the dump, numbers among those seen or within the seen range, strings
from the seen vocabulary, expressions kept as they are or redrawn in the same shape
(the same tree with its literals changed).  Shrinking goes towards the dump's most
common case: optional attributes absent, the most common kind and value, expressions
as written.
"""

from __future__ import annotations

import datetime
import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import fields, replace
from typing import Any, Optional

from hypothesis import strategies as st

from ..ad import ClassAd
from ..ast import Literal, Node
from ..parser import parse_expr
from ..unparse import unparse
from ..values import ERROR, UNDEFINED, Value
from .choices import Labelled, pick, toss, weighted
from .schema import NUMERIC, AdsLike, AttrSpec, Schema, from_dict, learn

# Bounds of numbers drawn when a description gives no range.
_INT_RANGE = (-(2**31), 2**31)
_REAL_RANGE = (-1e9, 1e9)
_NAME_TEXT = st.text(alphabet=st.sampled_from(list("abcdefghijklmnopqrstuvwxyz0123456789_.@-")), max_size=12)

# A number drawn and thrown away before each ad.  Hypothesis begins a new example by
# walking down the choices it has explored before, taking every branch with equal odds
# (not the dump's); a first choice that is new almost every time ends that walk at once.
# It shrinks to 0 and changes nothing in the ad.
_NONCE = st.integers(0, 2**64)

VALUE_KINDS = ("undefined", "error", "bool", "int", "real", "string", "abstime", "list", "ad")


@functools.lru_cache(maxsize=4096)
def parsed(text: str) -> Node:
    """The tree of expression text, parsed once (trees are immutable and shared)."""
    return parse_expr(text)


def ads(
    like: Optional[AdsLike] = None,
    *,
    schema: Optional[Mapping[str, Any] | Schema] = None,
    names: Optional[Iterable[str]] = None,
    fresh: float = 0.25,
    shapes: bool = False,
    extra: Optional[Mapping[str, Any]] = None,
) -> st.SearchStrategy[ClassAd]:
    """Ads shaped like a dump (``like``: a file, ads, or a :class:`Schema`) or like an
    explicit description (``schema``: see :func:`classad.testing.schema.from_dict`).

    ``names`` keeps only those attributes.  ``fresh`` is the probability that a number
    is drawn anywhere in the attribute's range rather than among the values seen.
    ``shapes`` redraws the literals inside expressions (each with probability
    ``fresh``) instead of keeping every expression as written.  ``extra`` maps names
    to values or strategies set on every ad after drawing (``{"Name": "slot1"}``)."""
    if (like is None) == (schema is None):
        raise ValueError("give ads() either like= (a dump) or schema= (a description)")
    if like is not None:
        base = learn(like)
    else:
        base = schema if isinstance(schema, Schema) else from_dict(schema or {})
    if names is not None:
        base = base.only(names)
    parts = [attribute(spec, fresh=fresh, shapes=shapes) for spec in base.attrs]
    extras = {k: v if isinstance(v, st.SearchStrategy) else st.just(v) for k, v in (extra or {}).items()}

    @st.composite
    def drawn_ads(draw: Any) -> ClassAd:  # composite, so a failing example prints as the ad itself
        draw(_NONCE)
        return _build([draw(p) for p in parts], draw(st.fixed_dictionaries(extras)))

    return drawn_ads()


def _build(pairs: list, extras: dict) -> ClassAd:
    ad = ClassAd()
    for pair in pairs:
        if pair is not None:
            ad.set_node(pair[0], pair[1])
    for name, value in extras.items():
        if value is None:
            ad.pop(name, None)
        else:
            ad[name] = value
    return ad


def attribute(
    spec: AttrSpec, *, fresh: float = 0.25, shapes: bool = False
) -> st.SearchStrategy[Optional[tuple[str, Node]]]:
    """``(name, expression node)`` for one attribute, or None when it is absent."""
    return _Attribute(spec, fresh, shapes)


class _Attribute(Labelled):
    """One attribute of a drawn ad: present as often as in the dump, then of each kind
    as often, then a value of that kind.  Shrinks to absent (when the dump allows it),
    then to the most common kind and value."""

    def __init__(self, spec: AttrSpec, fresh: float, shapes: bool) -> None:
        super().__init__(repr((spec, fresh, shapes)))
        self.spec = spec
        self.kind = weighted(spec.kinds)
        self.by_kind = {kind: _node_of_kind(spec, kind, fresh, shapes) for kind, _ in spec.kinds}

    def do_draw(self, data: Any) -> Optional[tuple[str, Node]]:
        if not toss(data, self.spec.present):
            return None
        inner = self.by_kind[pick(data, self.kind)]
        fixed = getattr(inner, "fixed", None)
        return self.spec.name, fixed if fixed is not None else pick(data, inner)


def _node_of_kind(spec: AttrSpec, kind: str, fresh: float, shapes: bool) -> st.SearchStrategy[Node]:
    seen = spec.values.get(kind, ())
    key = repr((spec.name, kind, seen, spec.ranges.get(kind), fresh, shapes))
    if kind in ("undefined", "error"):
        return st.just(Literal(UNDEFINED if kind == "undefined" else ERROR))
    if kind == "bool":
        return _Node(weighted(seen) if seen else st.booleans(), Literal, key)
    if kind in NUMERIC:
        return _Node(_number(spec, kind, seen, fresh), Literal, key)
    if kind == "string":
        return _Node(weighted(seen) if seen else _NAME_TEXT, Literal, key)
    if seen:
        return _Reshaped(weighted(seen), fresh, key) if shapes else _Node(weighted(seen), parsed, key)
    return _Node(values(kinds=(kind,) if kind in ("list", "ad") else ("int", "bool")), _value_node, key)


_JUST = type(st.just(0))


class _Node(Labelled):
    """``make(value)`` for a value drawn from ``inner``.  (Not ``inner.map(make)``: every
    mapped strategy shares one label, and Hypothesis would copy a number's choices into
    a string's draw, which upsets the choices that follow.)"""

    def __init__(self, inner: st.SearchStrategy[Any], make: Any, key: str) -> None:
        super().__init__(key)
        self.inner, self.make = inner, make
        # A value that cannot vary (one value seen, nothing fresh) is made once, drawn never.
        self.fixed = make(getattr(inner, "value")) if isinstance(inner, _JUST) else None  # noqa: B009

    def do_draw(self, data: Any) -> Any:
        return self.make(pick(data, self.inner))


def _number(spec: AttrSpec, kind: str, seen: tuple, fresh: float) -> st.SearchStrategy[Any]:
    low, high = spec.ranges.get(kind) or (_INT_RANGE if kind == "int" else _REAL_RANGE)
    anywhere = _Range(kind, low, high)
    if not seen:
        return anywhere
    if low == high or fresh <= 0:
        return weighted(seen)
    return _Either(fresh, anywhere, weighted(seen))


class _Range(Labelled):
    """A number of ``kind`` from ``low`` to ``high`` (labelled by its range).

    The number is one choice drawn straight from ``data``, like :func:`toss`: a draw of
    ``st.integers`` would open a span labelled like every other attribute's numbers,
    and Hypothesis's generation, which copies one span over another of the same label,
    would then copy one attribute's number into another's place, where the choices
    that follow no longer line up and fall back to the simplest (attributes absent)."""

    def __init__(self, kind: str, low: float, high: float) -> None:
        super().__init__(repr((kind, low, high)))
        self.key = f"range{(kind, low, high)!r}"
        self.is_int = kind == "int"
        self.low: float = int(math.ceil(low)) if self.is_int else float(low)
        self.high: float = int(math.floor(high)) if self.is_int else float(high)

    def do_draw(self, data: Any) -> Any:
        if self.is_int:
            return data.draw_integer(self.low, self.high)
        return data.draw_float(self.low, self.high, allow_nan=False)

    def __repr__(self) -> str:
        return self.key


class _Either(Labelled):
    """``new`` with probability ``p``, else ``old``; shrinks to ``old``."""

    def __init__(self, p: float, new: st.SearchStrategy[Any], old: st.SearchStrategy[Any]) -> None:
        super().__init__(repr((p, new, old)))
        self.p = p
        self.new, self.old = new, old

    def do_draw(self, data: Any) -> Any:
        return pick(data, self.new) if toss(data, self.p) else pick(data, self.old)


def reshaped(tree: Node, fresh: float) -> st.SearchStrategy[Node]:
    """``tree`` with each number, string and boolean literal redrawn (each with
    probability ``fresh``) as another of its kind; shrinks to ``tree`` itself."""
    return _Reshaped(st.just(tree), fresh, repr((unparse(tree), fresh)))


class _Reshaped(Labelled):
    """One of the expressions (trees or texts) ``trees`` draws, redrawn in its shape."""

    def __init__(self, trees: st.SearchStrategy[Any], fresh: float, key: str) -> None:
        super().__init__(key)
        self.trees, self.fresh = trees, fresh

    def do_draw(self, data: Any) -> Node:
        tree = pick(data, self.trees)
        tree = parsed(tree) if type(tree) is str else tree
        spots = _literals(tree)
        if not spots:
            return tree
        new = [pick(data, _Either(self.fresh, _similar(v), st.just(v))) for v in spots]
        return _replace_literals(tree, iter(new))


def _literals(node: Any) -> list[Any]:
    """The redrawable literal values of a tree, in a fixed walk order."""
    if type(node) is Literal:
        return [node.value] if type(node.value) in (bool, int, float, str) else []
    out: list[Any] = []
    for child in children(node):
        out += _literals(child)
    return out


def children(node: Any) -> list[Any]:
    """The sub-expressions of a node (record attributes' values included)."""
    kids: list[Any] = []
    for f in fields(node):
        if f.name == "fn":
            continue
        v = getattr(node, f.name)
        if isinstance(v, Node):
            kids.append(v)
        elif type(v) is tuple:
            kids += [x[1] if type(x) is tuple else x for x in v if isinstance(x, (Node, tuple))]
    return kids


def _replace_literals(node: Any, new: Any) -> Any:
    if type(node) is Literal:
        return Literal(next(new)) if type(node.value) in (bool, int, float, str) else node
    changes = {}
    for f in fields(node):
        if f.name == "fn":
            continue
        v = getattr(node, f.name)
        if isinstance(v, Node):
            changes[f.name] = _replace_literals(v, new)
        elif type(v) is tuple and any(isinstance(x, (Node, tuple)) for x in v):
            changes[f.name] = tuple(
                (x[0], _replace_literals(x[1], new))
                if type(x) is tuple
                else _replace_literals(x, new)
                if isinstance(x, Node)
                else x
                for x in v
            )
    return replace(node, fn=None, **changes) if changes else node


def _similar(value: Any) -> st.SearchStrategy[Any]:
    """Another value of the kind of ``value``, near it in size."""
    t = type(value)
    if t is bool:
        return st.booleans()
    if t is int:
        span = max(10, abs(value) * 2)
        return st.integers(-span, span)
    if t is float:
        span = max(10.0, abs(value) * 2) if math.isfinite(value) else 1e6
        return st.floats(-span, span, allow_nan=False, allow_infinity=False)
    return _NAME_TEXT


# ---- single values ------------------------------------------------------------------------------

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def values(kinds: Iterable[str] = VALUE_KINDS, *, max_depth: int = 2) -> st.SearchStrategy[Any]:
    """Values of every ClassAd kind as Python gives them (what ``ad[name] = v`` stores and
    ``ad.eval`` returns): ``Value.Undefined``, ``Value.Error``, bool, 64-bit int, real
    (with infinities and NaN), str, absolute time (``datetime``), lists and nested ads
    of these.  ``kinds`` picks among :data:`VALUE_KINDS`."""
    kinds = tuple(kinds)
    unknown = set(kinds) - set(VALUE_KINDS)
    if unknown or not kinds:
        raise ValueError(f"unknown value kinds {sorted(unknown)}; kinds are {', '.join(VALUE_KINDS)}")
    scalar = {
        "undefined": st.just(Value.Undefined),
        "error": st.just(Value.Error),
        "bool": st.booleans(),
        "int": st.integers(-(2**63), 2**63 - 1),
        "real": st.floats(width=64),
        "string": st.text(max_size=8),
        "abstime": st.integers(0, 4_102_444_800).map(lambda s: _EPOCH + datetime.timedelta(seconds=s)),
    }
    parts = [scalar[k] for k in kinds if k in scalar]
    if max_depth > 0:
        inner_kinds = VALUE_KINDS if max_depth > 1 else tuple(scalar)
        inner = values(inner_kinds, max_depth=max_depth - 1)
        if "list" in kinds:
            parts.append(st.lists(inner, max_size=4))
        if "ad" in kinds:
            parts.append(st.dictionaries(_ATTR_NAME, inner, max_size=4).map(_ad_of))
    return st.one_of(*parts) if parts else st.just([])


_RESERVED = {"true", "false", "undefined", "error", "is", "isnt", "parent"}
_ATTR_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True).filter(lambda n: n.lower() not in _RESERVED)


def _ad_of(attrs: dict) -> ClassAd:
    ad = ClassAd()
    for k, v in attrs.items():
        ad[k] = v
    return ad


def _value_node(value: Any) -> Node:
    ad = ClassAd()
    ad["v"] = value
    node = ad.get_node("v")
    assert node is not None
    return node


def text_of(node: Node) -> str:
    """The text of a drawn expression node."""
    return unparse(node)


__all__ = ["VALUE_KINDS", "ads", "attribute", "children", "parsed", "reshaped", "text_of", "values"]
