"""What a dump of ads looks like, attribute by attribute: the description ``ads()`` draws from.

:func:`learn` reads ads (a file in any ad format, or ``ClassAd`` objects) and records,
for every attribute: how often it is present, which kinds of value it holds and how
often each, the range of its numbers, the values seen (strings, numbers, expression
texts) with their counts.  :func:`from_dict` builds the same from an explicit
description, for attributes a site wants to state rather than learn.

Kinds: ``int``, ``real``, ``bool``, ``string``, ``undefined``, ``error`` (literals),
``list`` and ``ad`` (list and nested-ad literals, kept as text), ``expr`` (anything
else: an expression to evaluate, kept as text).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Union

from ..ad import ClassAd
from ..ast import ListExpr, Literal, Node, Record
from ..errors import ClassAdError
from ..formats import parseAds
from ..parser import parse_expr
from ..unparse import unparse
from ..values import ERROR, UNDEFINED

KINDS = ("int", "real", "bool", "string", "undefined", "error", "list", "ad", "expr")
NUMERIC = ("int", "real")
TEXT_KINDS = ("list", "ad", "expr")  # values kept as expression text

#: At most this many distinct values are kept per attribute and kind (the most common).
MAX_VOCABULARY = 64

Weighted = tuple[tuple[Any, float], ...]  # (item, weight), most common first


@dataclass(frozen=True)
class AttrSpec:
    """One attribute of a dump: presence, kinds, ranges and values seen."""

    name: str
    present: float = 1.0  # fraction of the ads that hold it
    kinds: Weighted = (("int", 1.0),)  # (kind, share among the ads that hold it)
    values: Mapping[str, Weighted] = field(default_factory=dict)  # kind -> (value, count)
    ranges: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # int/real -> (min, max)

    @property
    def kind(self) -> str:
        """The most common kind."""
        return self.kinds[0][0]


@dataclass(frozen=True)
class Schema:
    """The attributes of a dump (in first-seen order) and how many ads it had."""

    attrs: tuple[AttrSpec, ...]
    count: int = 0

    def names(self) -> list[str]:
        """Attribute spellings, in first-seen order."""
        return [a.name for a in self.attrs]

    def get(self, name: str) -> AttrSpec | None:
        """The attribute ``name`` (case-insensitive), or None."""
        key = name.lower()
        return next((a for a in self.attrs if a.name.lower() == key), None)

    def only(self, names: Iterable[str]) -> Schema:
        """The same schema restricted to ``names`` (case-insensitive; unknown names ignored)."""
        keep = {n.lower() for n in names}
        return replace(self, attrs=tuple(a for a in self.attrs if a.name.lower() in keep))

    def without(self, names: Iterable[str]) -> Schema:
        """The same schema without ``names``."""
        drop = {n.lower() for n in names}
        return replace(self, attrs=tuple(a for a in self.attrs if a.name.lower() not in drop))

    def with_attrs(self, *specs: AttrSpec) -> Schema:
        """The same schema with ``specs`` added, replacing attributes of the same name."""
        rest = self.without(s.name for s in specs)
        return replace(rest, attrs=rest.attrs + specs)


AdsLike = Union[str, os.PathLike, Iterable[ClassAd], Schema]


def kind_of(node: Node) -> tuple[str, Any]:
    """The kind of a stored expression and the value recorded for it (text for
    ``list``, ``ad`` and ``expr``)."""
    if type(node) is Literal:
        v = node.value
        t = type(v)
        if t is bool:
            return "bool", v
        if t is int:
            return "int", v
        if t is float:
            return ("real", v) if math.isfinite(v) else ("expr", unparse(node))
        if t is str:
            return "string", v
        if v is UNDEFINED:
            return "undefined", None
        if v is ERROR:
            return "error", None
    if type(node) is ListExpr:
        return "list", unparse(node)
    if type(node) is Record:
        return "ad", unparse(node)
    return "expr", unparse(node)


def read_ads(source: str | os.PathLike | Iterable[ClassAd]) -> list[ClassAd]:
    """The ads of a file (any format, detected) or of an iterable of ads."""
    if isinstance(source, (str, os.PathLike)):
        return list(parseAds(Path(source)))
    return list(source)


def learn(source: AdsLike, *, max_vocabulary: int = MAX_VOCABULARY) -> Schema:
    """The schema of a dump: a file (``condor_status -l`` / ``condor_q -l`` output or any
    other ad format), ads, or a schema (returned as it is)."""
    if isinstance(source, Schema):
        return source
    ads = read_ads(source)
    spelling: dict[str, str] = {}
    kinds: dict[str, Counter] = {}
    seen: dict[tuple[str, str], Counter] = {}
    for ad in ads:
        for name, node in ad.node_items():
            key = name.lower()
            spelling.setdefault(key, name)
            kind, value = kind_of(node)
            kinds.setdefault(key, Counter())[kind] += 1
            seen.setdefault((key, kind), Counter())[value] += 1
    total = len(ads)
    specs = []
    for key, name in spelling.items():
        counts = kinds[key]
        held = sum(counts.values())
        kind_shares = tuple((k, n / held) for k, n in _most_common(counts))
        values = {k: tuple(_most_common(seen[key, k]))[:max_vocabulary] for k in counts}
        ranges = {k: (min(seen[key, k]), max(seen[key, k])) for k in counts if k in NUMERIC}
        specs.append(AttrSpec(name, held / total, kind_shares, values, ranges))
    return Schema(tuple(specs), total)


def _most_common(counter: Counter) -> list[tuple[Any, int]]:
    """Items by count, most common first; ties in first-seen order (stable)."""
    return sorted(counter.items(), key=lambda kv: -kv[1])


def from_dict(description: Mapping[str, Any]) -> Schema:
    """A schema from an explicit description::

        from_dict({
            "Memory": {"type": "int", "min": 1024, "max": 65536},
            "OpSys": {"type": "string", "values": ["LINUX", "WINDOWS"], "missing": 0.1},
            "Requirements": {"type": "expr", "values": ["TARGET.RequestMemory <= MY.Memory"]},
            "Rank": "real",
            "KFlops": {"type": {"int": 0.9, "undefined": 0.1}, "min": 0, "max": 10**7},
        })

    ``type`` is a kind, a list of kinds (equally likely) or kinds with weights;
    ``values`` a list (equally likely) or a mapping of value to weight (expression
    text for ``expr``, ``list`` and ``ad``); ``min``/``max`` bound drawn numbers;
    ``missing`` is the fraction of ads without the attribute (0 by default).
    ValueError names the attribute and what is wrong."""
    return Schema(tuple(_spec(name, entry) for name, entry in description.items()))


def _spec(name: str, entry: Any) -> AttrSpec:
    if isinstance(entry, (str, list, tuple)):
        entry = {"type": entry}
    if not isinstance(entry, Mapping):
        raise ValueError(f"{name}: describe an attribute with a kind or a dict, not {entry!r}")
    unknown = set(entry) - {"type", "values", "min", "max", "missing"}
    if unknown:
        raise ValueError(f"{name}: unknown keys {sorted(unknown)} (type, values, min, max, missing)")
    kinds = _weights(name, entry.get("type", "expr"))
    for kind, _ in kinds:
        if kind not in KINDS:
            raise ValueError(f"{name}: unknown kind {kind!r}; kinds are {', '.join(KINDS)}")
    missing = float(entry.get("missing", 0.0))
    if not 0.0 <= missing <= 1.0:
        raise ValueError(f"{name}: missing must be a fraction from 0 to 1, not {missing!r}")
    values: dict[str, Weighted] = {}
    if "values" in entry:
        for value, weight in _weights(name, entry["values"]):
            kind, value = _kind_of_value(name, value, [k for k, _ in kinds])
            values[kind] = values.get(kind, ()) + ((value, weight),)
    ranges = {}
    if "min" in entry or "max" in entry:
        low, high = entry.get("min"), entry.get("max")
        for kind in NUMERIC:
            lo = low if low is not None else -(2**31)
            hi = high if high is not None else 2**31
            if lo > hi:
                raise ValueError(f"{name}: min {lo!r} is above max {hi!r}")
            ranges[kind] = (lo, hi)
    return AttrSpec(name, 1.0 - missing, kinds, values, ranges)


def _weights(name: str, given: Any) -> Weighted:
    if isinstance(given, Mapping):
        pairs = [(k, float(w)) for k, w in given.items()]
    elif isinstance(given, (list, tuple)):
        pairs = [(k, 1.0) for k in given]
    else:
        pairs = [(given, 1.0)]
    total = sum(w for _, w in pairs)
    if not pairs or total <= 0 or any(w < 0 for _, w in pairs):
        raise ValueError(f"{name}: give at least one choice, with weights that are not negative")
    return tuple(sorted(((k, w / total) for k, w in pairs), key=lambda kw: -kw[1]))


def _kind_of_value(name: str, value: Any, kinds: list[str]) -> tuple[str, Any]:
    """The kind a described value belongs to, and the value as stored (text is an
    expression unless the attribute is a string; an integer is a real for a real)."""
    if type(value) is str and any(k in TEXT_KINDS for k in kinds) and "string" not in kinds:
        try:
            parse_expr(value)
        except ClassAdError:
            raise ValueError(f"{name}: {value!r} is not an expression") from None
        return next(k for k in kinds if k in TEXT_KINDS), value
    kind = {bool: "bool", int: "int", float: "real", str: "string"}.get(type(value))
    if kind == "int" and "int" not in kinds and "real" in kinds:
        return "real", float(value)
    if kind is None or kind not in kinds:
        raise ValueError(f"{name}: value {value!r} is not of the kinds {kinds}")
    return kind, value


__all__ = ["KINDS", "AdsLike", "AttrSpec", "Schema", "from_dict", "kind_of", "learn", "read_ads"]
