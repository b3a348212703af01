"""Which values a rewritten compacted ad leaves to its layout's template
(``classad.layout.rewrite``, its ``_variant_of`` step and the patterns it remembers).

The rule, spelled out here without the storage: a value is left to the template when it
is the template's very node, or (``equal_values``) when both are plain literals of the
same Python type and equal value, a float with the same sign of zero as well (1, 1.0
and true differ; so do 0.0 and -0.0, "a" and "A").  Everything else -- Undefined, Error,
expressions, lists, fresh nodes equal in structure -- the ad keeps itself.  Many ads of
one family are rewritten alike, so that the patterns of values left to the template are
met again (and remembered) with other values; each result is checked against the rule,
against a plain dict of the written values, and against that dict compacted."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

import classad
from classad import ast, layout
from classad.layout import SharedAttrs, own_values
from classad.parser import parse_expr

SETTINGS = settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))

_TEXTS = ("0", "1", "1.0", "true", "false", "0.0", "-0.0", '"a"', '"A"', "undefined", "error", "x + 1", "{1, 2}")
_SHARED = [parse_expr(t) for t in _TEXTS]  # one node per text, shared as a reader shares them
_NODES = st.one_of(st.sampled_from(_SHARED), st.sampled_from(_TEXTS).map(parse_expr))
_PLAIN = st.sampled_from([0, 1, -1, 1.0, 0.0, -0.0, True, False, "a", "A", ""])
_WRITTEN = st.one_of(_NODES, _PLAIN)
_NAMES = tuple(f"N{i}" for i in range(8))
# Names of the layout (any case), new ones, and one that no ad has (deleting it does nothing).
_EDIT_NAMES = st.sampled_from(["n0", "N3", "n5", "N7", "New", "new", "Other", "missing"])
_BARE = (bool, int, float, str)


def _bare(node: object) -> bool:
    return type(node) is ast.Literal and type(node.value) in _BARE


def _same_plain(a: ast.Node, b: ast.Node) -> bool:
    """Plain literals no evaluation or printing tells apart."""
    if not (_bare(a) and _bare(b)):
        return False
    x, y = a.value, b.value  # type: ignore[attr-defined]
    return type(x) is type(y) and x == y and repr(x) == repr(y)


def _written(ad: classad.ClassAd, deleted: tuple, names: tuple, nodes: list) -> dict[str, tuple[str, ast.Node]]:
    """The written copy as a plain dict (lower-case name -> (spelling, node))."""
    out = {spelling.lower(): (spelling, node) for spelling, node in ad.node_items()}
    for name in deleted:
        out.pop(name.lower(), None)
    for name, node in zip(names, nodes):
        if type(node) in _BARE:
            node = ast.Literal(node)
        had = out.get(name.lower())
        out[name.lower()] = (had[0] if had else name, node)
    return out


def _plain_path(ad: classad.ClassAd, deleted: tuple, names: tuple, nodes: list, equal: bool) -> classad.ClassAd:
    out = classad.ClassAd(ad)
    for name in deleted:
        if name in out:
            del out[name]
    for name, node in zip(names, nodes):
        out[name] = node
    return out.compact(equal_values=equal)


def _check(ours: classad.ClassAd, expected: dict, plain: classad.ClassAd, equal: bool) -> None:
    attrs = ours._attrs
    assert type(attrs) is SharedAttrs
    # The rule: which places the ad keeps itself.
    template = attrs.layout.template
    if tuple.__getitem__(attrs, 0) is not attrs.layout.whole:
        kept = {
            p
            for p, (_, node) in enumerate(expected.values())
            if node is not template[p] and not (equal and _same_plain(node, template[p]))
        }
        assert set(own_values(attrs)) == kept
    # Read back: the same names and spellings in order, each value the same (a plain literal
    # of the same type, value and sign; any other node the very node written or kept).
    assert ours.spellings() == tuple(s for s, _ in expected.values())
    for key, (_, node) in expected.items():
        got = ours.get_node(key)
        if _bare(node):
            assert _bare(got) and _same_plain(got, node)
        else:
            assert got is node
    for name in ("missing", "Other", "nope"):
        if name.lower() not in expected:
            assert ours.get_node(name) is None
    # The very storage of the written dict compacted.
    other = plain._attrs
    assert type(other) is SharedAttrs
    assert tuple.__len__(attrs) == tuple.__len__(other)
    assert all(x is y for x, y in zip(tuple.__iter__(attrs), tuple.__iter__(other)))


_ROWS = st.lists(st.lists(st.one_of(st.none(), _NODES), min_size=8, max_size=8), min_size=2, max_size=10)


@SETTINGS
@given(
    template=st.lists(_NODES, min_size=8, max_size=8),
    rows=_ROWS,
    tag=st.integers(0, 10**9),
    deleted=st.lists(_EDIT_NAMES, max_size=3).map(tuple),
    writes=st.lists(st.tuples(_EDIT_NAMES, _WRITTEN), max_size=5),
    compact_equal=st.booleans(),
    write_equal=st.booleans(),
)
def test_values_left_to_the_template_follow_the_rule(
    template, rows, tag, deleted, writes, compact_equal: bool, write_equal: bool
) -> None:
    """A family's first ad is its template; the others hold its very node (None in a row)
    or another value, often equal to it in Python's eyes.  All get the same deletions and
    writes, twice over (the second round meets the remembered patterns)."""
    spellings = (*_NAMES, f"Tag{tag}")
    first = classad.ClassAd.from_nodes(tuple(zip(spellings, (*template, _SHARED[0]))))
    ads = [first.compact(equal_values=compact_equal)]
    for row in rows:
        nodes = [t if n is None else n for n, t in zip(row, template)]
        ad = classad.ClassAd.from_nodes(tuple(zip(spellings, (*nodes, _SHARED[0]))))
        ads.append(ad.compact(equal_values=compact_equal))
    names = tuple(n for n, _ in writes)
    values = [v for _, v in writes]
    # The written names' layout made first, its template the template ad written.
    _plain_path(ads[0], deleted, names, values, write_equal)
    for _ in range(2):
        for ad in ads:
            before = ad.printOld()
            ours = ad.rewritten(names, values, deleted=deleted, equal_values=write_equal)
            expected = _written(ad, deleted, names, values)
            plain = classad.ClassAd.from_nodes(tuple(expected.values())).compact(equal_values=write_equal)
            _check(ours, expected, plain, write_equal)
            assert ad.printOld() == before


def test_equal_values_of_other_types_or_signs_are_kept() -> None:
    """By hand: a template of 1, 0.0, "a" and true; ads written with values Python calls
    equal to those keep them, the same values go to the template, whatever order the
    patterns are met in."""
    spellings = ("A", "B", "C", "D", "TagSameValues")
    template = [parse_expr(t) for t in ("1", "0.0", '"a"', "true")] + [parse_expr("0")]
    first = classad.ClassAd.from_nodes(tuple(zip(spellings, template))).compact()
    names = ("a", "b", "c", "d", "New")
    first.rewritten(names, [1, 0.0, "a", True, 5])  # the written layout, its template these values
    cases = [
        ([1, 0.0, "a", True, 5], set()),
        ([1.0, -0.0, "A", 1, 5], {0, 1, 2, 3}),
        ([True, 0.0, "a", 1, 6], {0, 3, 5}),  # New is place 5
        ([1, -0.0, "a", True, 5], {1}),
        ([1, 0, "a", True, 5.0], {1, 5}),
        ([1, 0.0, "a", True, 5], set()),
        ([1.0, -0.0, "A", 1, 5], {0, 1, 2, 3}),
        ([1.0, 0.0, "a", True, 5], {0}),  # as many values left to the template, other places
        ([1, 0.0, "A", True, 5], {2}),
        ([1, 0.0, "a", 1, 5], {3}),
    ]
    for values, kept in cases:
        out = first.rewritten(names, values)
        assert set(own_values(out._attrs)) == kept
        assert [(type(out[n]), out[n]) for n in names] == [(type(v), v) for v in values]
        assert repr(out["b"]) == repr(values[1])


def test_a_remembered_pattern_gives_the_variant_the_table_holds(monkeypatch) -> None:
    """The patterns remember places, not variants: once a full table forgot the variant of
    a pattern (no ad held it), the next ad of that pattern gets the table's new variant."""
    monkeypatch.setattr(layout, "VARIANT_LIMIT", 4)
    monkeypatch.setattr(layout, "_LAYOUTS", {})
    spellings = ("A", "B", "C")
    first = classad.ClassAd.from_nodes(tuple(zip(spellings, map(parse_expr, ("1", "2", "3"))))).compact()
    first.rewritten(("b",), [2])
    ad = classad.ClassAd.from_nodes(tuple(zip(spellings, map(parse_expr, ("7", "8", "9"))))).compact()
    out = ad.rewritten(("b",), [2])  # 2 left to the template: a pattern remembered
    assert set(own_values(out._attrs)) == {0, 2}
    del out
    for i in range(12):  # other patterns fill the table and push the forgotten one out
        row = [parse_expr(str(v)) for v in (1 if i % 2 else 10 + i, 2 if i % 3 else 20 + i, 3 if i % 5 else 30)]
        classad.ClassAd.from_nodes(tuple(zip(spellings, row))).compact().rewritten(("c",), [3 + i % 2])
    again = ad.rewritten(("b",), [2])
    variant = tuple.__getitem__(again._attrs, 0)
    layout_ = again._attrs.layout
    assert variant is layout_.whole or layout_.variants.get(variant.own_places) is variant
    assert [again[n] for n in spellings] == [7, 2, 9]
