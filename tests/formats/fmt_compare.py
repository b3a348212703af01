"""Comparing ads read back from a file with the ads that were written.

``ClassAd.__eq__`` compares nested ads attribute by attribute in stored order,
but a file stores nested ads in HTCondor's printing order, so two equal ads
can compare unequal.  :func:`canonical` gives an order-free, typed form:
literals as (type, repr) so that ``1``, ``1.0`` and ``true`` differ, nested
ads as sorted name/value pairs, other expressions as their printed text
(which is what every format stores).
"""

from __future__ import annotations

from typing import Any

from classad import ast
from classad.unparse import unparse


def canonical(node: ast.Node) -> Any:
    """A hashable, order-free form of an expression tree."""
    t = type(node)
    if t is ast.Literal:
        return (type(node.value).__name__, repr(node.value))
    if t is ast.Record:
        return ("record", tuple(sorted((k.lower(), canonical(v)) for k, v in node.attrs)))
    if t is ast.ListExpr:
        return ("list", tuple(canonical(i) for i in node.items))
    return ("expr", unparse(node))


def ad_form(ad: Any) -> Any:
    """The canonical form of a whole ad (names folded, as lookups are case-insensitive)."""
    return tuple(sorted((name.lower(), canonical(node)) for name, node in ad.node_items()))


def assert_same_ads(got: list, expected: list) -> None:
    """Equal ad lists, with a readable difference on failure."""
    assert len(got) == len(expected), f"{len(got)} ads read, {len(expected)} expected"
    for i, (g, e) in enumerate(zip(got, expected)):
        assert ad_form(g) == ad_form(e), f"ad {i}: read {g!r}, expected {e!r}"
