"""Writing a compacted ad without a dict (``AdCore.rewritten``, ``classad.layout.rewrite``).

The reference is the plain path: copy the ad, delete and set the attributes one by one
through the mapping (which turns the storage back into a dict), then compact the copy.
The rewritten copy must be the very same storage -- the same shared variant and the
same stored objects, so that caches keyed by identity (autoclusters) see no difference --
and read and print as the plain copy does.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings, strategies as st

import classad
from classad import layout
from classad.layout import SharedAttrs
from classad.parser import parse_expr

SETTINGS = settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))

# Values that tell the storage's cases apart: plain literals stored bare, values Python calls
# equal but the language does not (1, 1.0 and true; 0.0 and -0.0), expressions and other
# literals stored as nodes.
_TEXTS = ("0", "1", "1.0", "true", "false", "0.0", "-0.0", '"a"', '"A"', "undefined", "x + 1", "{1, 2}", "[q = 1]")
# One node per text, shared by the ads that pick it (as a reader shares them), and a fresh
# parse of the same text (equal, not identical).
_SHARED = [parse_expr(t) for t in _TEXTS]
_NODES = st.one_of(st.sampled_from(_SHARED), st.sampled_from(_TEXTS).map(parse_expr))
_NAMES = ("Alpha", "beta", "GAMMA", "x", "Delta")
# What a write may give: a node, or a plain Python value standing for a new literal of it.
_WRITTEN = st.one_of(_NODES, st.sampled_from([0, 1, -1, 1.0, 0.0, -0.0, True, False, "a", "A", ""]))


def _family(tag: int, rows: list[list]) -> list[classad.ClassAd]:
    """Ads with the same names (a fresh layout per example) and the values of ``rows``."""
    names = (*_NAMES, f"Tag{tag}")
    return [classad.ClassAd.from_nodes(tuple(zip(names, (*row, _SHARED[0])))) for row in rows]


def _plain_path(ad: classad.ClassAd, deleted, names, nodes, equal_values: bool) -> classad.ClassAd:
    # A plain dict copy, even when nothing is written: copying a compacted ad would keep its
    # storage, and compacting that again leaves it as it was compacted (perhaps with other
    # ``equal_values``), which is not the reference.
    out = classad.ClassAd.from_nodes(tuple(ad.node_items()))
    assert type(out._attrs) is dict
    for name in deleted:
        if name in out:
            del out[name]
    for name, node in zip(names, nodes):
        out[name] = node  # a plain value becomes a literal, a node is stored as it is
    return out.compact(equal_values=equal_values)


def _same_storage(ours: classad.ClassAd, plain: classad.ClassAd) -> None:
    a, b = ours._attrs, plain._attrs
    assert type(a) is type(b)
    if type(a) is SharedAttrs:
        assert tuple.__len__(a) == tuple.__len__(b)
        assert all(x is y for x, y in zip(tuple.__iter__(a), tuple.__iter__(b)))
    else:
        assert a.keys() == b.keys() and all(a[k][0] == b[k][0] and a[k][1] is b[k][1] for k in a)
    assert ours.printOld() == plain.printOld()
    assert str(ours) == str(plain)
    assert ours == plain


_EDIT_NAMES = st.sampled_from(["alpha", "BETA", "Gamma", "x", "delta", "New", "new", "Other", "missing"])


@SETTINGS
@given(
    rows=st.lists(st.lists(_NODES, min_size=5, max_size=5), min_size=1, max_size=6),
    tag=st.integers(0, 10**9),
    deleted=st.lists(_EDIT_NAMES, max_size=3).map(tuple),
    writes=st.lists(st.tuples(_EDIT_NAMES, _WRITTEN), max_size=4),
    compact_equal=st.booleans(),
    write_equal=st.booleans(),
)
def test_a_rewritten_ad_is_the_compacted_written_copy(
    rows, tag, deleted, writes, compact_equal: bool, write_equal: bool
) -> None:
    """Every ad of a family gets the same deletions and writes (finding the result's layout
    known, so taking the path without a dict); each result is the plain path's, and the ad
    written is unchanged."""
    ads = [ad.compact(equal_values=compact_equal) for ad in _family(tag, rows)]
    names = tuple(n for n, _ in writes)
    # The first ad compacted with the written names becomes their layout's template, so both
    # paths must find that layout made already: by a throwaway copy of the last ad (not the
    # template of the family's own layout, so that a value an ad keeps may be the new one's).
    _plain_path(ads[-1], deleted, names, [node for _, node in writes], write_equal)
    for ad in ads:
        nodes = [node for _, node in writes]
        before = ad.printOld()
        plain = _plain_path(ad, deleted, names, nodes, write_equal)
        ours = ad.rewritten(names, nodes, deleted=deleted, equal_values=write_equal)
        _same_storage(ours, plain)
        assert ad.printOld() == before
        assert ours.parent is None


@SETTINGS
@given(
    rows=st.lists(st.lists(_NODES, min_size=5, max_size=5), min_size=2, max_size=4),
    tag=st.integers(0, 10**9),
    steps=st.lists(st.tuples(st.lists(_EDIT_NAMES, max_size=2), _EDIT_NAMES, _WRITTEN), min_size=1, max_size=5),
)
def test_rewrites_in_a_row_stay_the_plain_path(rows, tag, steps) -> None:
    """A chain of rewrites (a slot claimed, released, claimed again) against the same chain
    of plain copies, on every ad of a family."""
    ads = [ad.compact() for ad in _family(tag, rows)]
    throwaway = ads[-1]
    for deleted, name, node in steps:  # each step's layout made first (see above)
        throwaway = _plain_path(throwaway, tuple(deleted), (name,), [node], True)
    for ad in ads:
        ours, plain = ad, ad
        for deleted, name, node in steps:
            ours = ours.rewritten((name,), [node], deleted=tuple(deleted))
            plain = _plain_path(plain, tuple(deleted), (name,), [node], True)
            _same_storage(ours, plain)


def test_the_second_ad_takes_the_path_without_a_dict(monkeypatch) -> None:
    """Once the written list of names has a layout, an ad of the family is rewritten
    without building a dict (the fallback is made to fail to show it is not taken)."""
    first, second = _family(7, [[parse_expr(str(i)) for i in range(5)], [parse_expr(str(-i)) for i in range(5)]])
    first.compact(), second.compact()
    names = ("beta", "Claimed")
    made = first.rewritten(names, [parse_expr('"b"'), parse_expr("true")], deleted=("x",))
    monkeypatch.setattr(layout, "_write", None)
    again = second.rewritten(names, [parse_expr('"b"'), parse_expr("true")], deleted=("x",))
    assert again._attrs.layout is made._attrs.layout
    assert [again[k] for k in ("alpha", "beta", "gamma", "delta", "claimed")] == [0, "b", -2, -4, True]
    assert "x" not in again and list(again) == list(made)


def test_a_dict_ad_is_written_as_a_dict() -> None:
    """An ad that was never compacted gets a written dict, its spellings kept."""
    ad = classad.ClassAd('[Alpha = 1; Beta = "b"; Gone = 3]')
    out = ad.rewritten(("ALPHA", "New"), [parse_expr("2"), parse_expr("x + 1")], deleted=("gone", "absent"))
    assert type(out._attrs) is dict
    assert out.spellings() == ("Alpha", "Beta", "New")
    assert (out["alpha"], out["beta"], str(out.lookup("new"))) == (2, "b", "x + 1")
    assert ad.spellings() == ("Alpha", "Beta", "Gone") and ad["alpha"] == 1


_ABGD = ("Alpha", "Beta", "Gamma", "Delta")


def _abgd(row: list[int]) -> classad.ClassAd:
    """A compacted ad of Alpha, Beta, Gamma and Delta with the integers of ``row``."""
    return classad.ClassAd.from_nodes(tuple(zip(_ABGD, map(parse_expr, map(str, row))))).compact()


def _variant(ad: classad.ClassAd) -> layout.Variant:
    """The variant a compacted ad is stored in."""
    return tuple.__getitem__(ad._attrs, 0)


def _whole(ad: classad.ClassAd) -> bool:
    """Whether ``ad`` is stored past its layout's variant limit (keeping every value)."""
    attrs = ad._attrs
    return type(attrs) is SharedAttrs and tuple.__getitem__(attrs, 0) is attrs.layout.whole


def test_ads_past_the_variant_limit_read_back_what_was_written(monkeypatch) -> None:
    """A layout with room for three variants (a fresh table of layouts, so the first ad
    is the template): the all-zero ad and the ads differing from it at Alpha alone and at
    Beta alone take the three; the ads differing at Gamma, at Delta, at Alpha and Beta
    are past the limit and keep every value.  Writes then move ads into that case
    (Gamma = 7: a new pattern for all but the Gamma ad) and out of it (every value back
    to 0: the template's pattern).  Each ad must read back its row of values, changed by
    hand per write."""
    monkeypatch.setattr(layout, "VARIANT_LIMIT", 3)
    monkeypatch.setattr(layout, "_LAYOUTS", {})
    names = ("Alpha", "Beta", "Gamma", "Delta")
    rows = [[0, 0, 0, 0], [11, 0, 0, 0], [0, 12, 0, 0], [0, 0, 13, 0], [0, 0, 0, 14], [15, 16, 0, 0]]
    ads = [classad.ClassAd.from_nodes(tuple(zip(names, map(parse_expr, map(str, row))))).compact() for row in rows]
    assert [_whole(ad) for ad in ads] == [False, False, False, True, True, True]

    def read(ad: classad.ClassAd) -> list:
        assert ad.spellings() == names
        return [ad[n] for n in names]

    assert [read(ad) for ad in ads] == rows
    sevens = [ad.rewritten(("gamma",), [7]) for ad in ads]
    assert [read(ad) for ad in sevens] == [
        [0, 0, 7, 0],
        [11, 0, 7, 0],
        [0, 12, 7, 0],
        [0, 0, 7, 0],
        [0, 0, 7, 14],
        [15, 16, 7, 0],
    ]
    assert all(_whole(ad) for ad in sevens)
    zeros = [ad.rewritten(names, [parse_expr("0")] * 4) for ad in sevens]
    assert [read(ad) for ad in zeros] == [[0, 0, 0, 0]] * 6
    assert not any(_whole(ad) for ad in zeros)
    assert [read(ad) for ad in ads] == rows  # the ads written are unchanged


def test_a_full_table_forgets_the_variants_no_ad_holds(monkeypatch) -> None:
    """Room for three variants (a fresh table of layouts: the first ad is the template),
    so a try that frees none of them refuses the next new pattern (an eighth of the
    table, at least one) before trying again.  The all-zero ad and the ads differing at
    Alpha and at Beta fill it; once the Alpha and Beta ads are dropped (nothing else holds
    their variants), the Gamma ad and the Delta ad each get a variant.  With the three
    held, the AlphaBeta ad is past the limit (every value kept); so is the next new
    pattern (Alpha again), refused even though the Delta ad was dropped; the one after
    (Beta again) takes the Delta ad's place; the AlphaBeta ad written out of the whole
    variant is then past the limit again.  Every ad held reads back its row."""
    monkeypatch.setattr(layout, "VARIANT_LIMIT", 3)
    monkeypatch.setattr(layout, "_LAYOUTS", {})
    names, make = _ABGD, _abgd

    zero, alpha, beta = make([0, 0, 0, 0]), make([1, 0, 0, 0]), make([0, 2, 0, 0])
    del alpha, beta
    gamma, delta = make([0, 0, 3, 0]), make([0, 0, 0, 4])
    assert not any(map(_whole, (zero, gamma, delta)))
    both = make([5, 6, 0, 0])
    assert _whole(both)
    del delta
    alpha = make([7, 0, 0, 0])
    assert _whole(alpha)
    beta = make([0, 8, 0, 0])
    assert not _whole(beta)
    both = both.rewritten(("gamma",), [9])
    assert _whole(both)
    assert len(zero._attrs.layout.variants) == 3
    rows = [[ad[n] for n in names] for ad in (zero, gamma, both, alpha, beta)]
    assert rows == [[0, 0, 0, 0], [0, 0, 3, 0], [5, 6, 9, 0], [7, 0, 0, 0], [0, 8, 0, 0]]


def test_a_variant_forgotten_is_forgotten_by_the_rewrite_plans(monkeypatch) -> None:
    """Room for three variants.  The all-zero ad and the Alpha ad take two; writing Beta
    into the Alpha ad plans that rewrite and makes the Alpha-Beta variant (the third).
    Once the Alpha-Beta ad is dropped, only the plan refers to its variant: the Gamma ad
    (a new pattern) makes the table forget it.  Writing Beta into the Alpha ad again must
    then give the variant the table holds for the Alpha-Beta pattern (the Gamma ad dropped
    first, to leave room), not the one forgotten."""
    monkeypatch.setattr(layout, "VARIANT_LIMIT", 3)
    monkeypatch.setattr(layout, "_LAYOUTS", {})
    names, make, variant = _ABGD, _abgd, _variant

    zero, alpha = make([0, 0, 0, 0]), make([1, 0, 0, 0])
    both = alpha.rewritten(("beta",), [2])
    assert variant(both) is zero._attrs.layout.variants[(0, 1)]
    del both
    gamma = make([0, 0, 3, 0])
    assert not _whole(gamma) and (0, 1) not in zero._attrs.layout.variants
    del gamma
    again = alpha.rewritten(("beta",), [2])
    assert variant(again) is zero._attrs.layout.variants[(0, 1)]
    assert [again[n] for n in names] == [1, 2, 0, 0]


def test_a_variant_forgotten_is_forgotten_by_the_remembered_outcomes(monkeypatch) -> None:
    """As above, through the path that leaves a written value to the template: writing
    Beta = 2 and Gamma = 0 into the Alpha ad (0 is the template's Gamma) goes through the
    pattern's outcome, which remembers the Alpha-Beta variant.  Dropped, that variant is
    forgotten at the next new pattern (the remembered reference does not keep it), and the
    same write then gives the variant the table holds, not the one forgotten."""
    monkeypatch.setattr(layout, "VARIANT_LIMIT", 3)
    monkeypatch.setattr(layout, "_LAYOUTS", {})
    names, make, variant = _ABGD, _abgd, _variant

    zero, alpha = make([0, 0, 0, 0]), make([1, 0, 0, 0])
    both = alpha.rewritten(("beta", "gamma"), [2, 0])
    assert variant(both) is zero._attrs.layout.variants[(0, 1)]
    again = alpha.rewritten(("beta", "gamma"), [2, 0])  # the outcome remembered
    assert variant(again) is variant(both)
    del both, again
    gamma = make([0, 0, 3, 0])
    assert not _whole(gamma) and (0, 1) not in zero._attrs.layout.variants
    del gamma
    again = alpha.rewritten(("beta", "gamma"), [2, 0])
    assert variant(again) is zero._attrs.layout.variants[(0, 1)]
    assert [again[n] for n in names] == [1, 2, 0, 0]


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("make"), st.lists(_NODES, min_size=5, max_size=5)),
        st.tuples(st.just("drop"), st.integers(0, 7)),
        st.tuples(st.just("write"), st.integers(0, 7), st.lists(_EDIT_NAMES, max_size=2), _EDIT_NAMES, _WRITTEN),
    ),
    min_size=1,
    max_size=25,
)


@SETTINGS
@given(ops=_OPS, limit=st.integers(1, 4), tag=st.integers(0, 10**9))
def test_recycled_variants_keep_every_ad_the_plain_path(monkeypatch, ops, limit: int, tag: int) -> None:
    """Ads of one family made, dropped and rewritten (the ad written replaced by its copy)
    under a tiny variant table, so that it fills, forgets the variants of dropped ads and
    refuses new ones in turn.  Each write is the plain path's very storage (made in the
    same table), and after every step each ad held prints as the same ad made with no limit
    on variants at all."""
    monkeypatch.setattr(layout, "_LAYOUTS", {})
    held: list[tuple[classad.ClassAd, classad.ClassAd]] = []  # (ours, the same ad with no limit)
    names = (*_NAMES, f"Tag{tag}")
    for op in ops:
        if op[0] == "make":
            nodes = tuple(zip(names, (*op[1], _SHARED[0])))
            monkeypatch.setattr(layout, "VARIANT_LIMIT", 10**9)
            free = classad.ClassAd.from_nodes(nodes).compact()
            monkeypatch.setattr(layout, "VARIANT_LIMIT", limit)
            held.append((classad.ClassAd.from_nodes(nodes).compact(), free))
        elif held and op[0] == "drop":
            del held[op[1] % len(held)]
        elif held:
            _, k, deleted, name, node = op
            ours, free = held[k % len(held)]
            ours = ours.rewritten((name,), [node], deleted=tuple(deleted))
            _same_storage(ours, _plain_path(held[k % len(held)][0], tuple(deleted), (name,), [node], True))
            monkeypatch.setattr(layout, "VARIANT_LIMIT", 10**9)
            free = free.rewritten((name,), [node], deleted=tuple(deleted))
            monkeypatch.setattr(layout, "VARIANT_LIMIT", limit)
            held[k % len(held)] = (ours, free)
        for ours, free in held:
            assert ours.printOld() == free.printOld()
            assert ours == free


# Ads of three names whose values are 0 or 1: a write of 0 meets the template's value and
# takes the path that leaves it to the template (a remembered pattern's outcome).
_BIT_NAMES = ("Alpha", "beta", "GAMMA")
_BITS = [parse_expr("0"), parse_expr("1")]
_BIT_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("make"), st.lists(st.sampled_from(_BITS), min_size=3, max_size=3)),
        st.tuples(st.just("drop"), st.integers(0, 7)),
        st.tuples(
            st.sampled_from(["write", "copy"]),
            st.integers(0, 7),
            st.lists(st.sampled_from(["alpha", "BETA", "gamma"]), min_size=1, max_size=2, unique=True),
            st.lists(st.sampled_from([0, 1]), min_size=2, max_size=2),
        ),
    ),
    min_size=1,
    max_size=30,
)


def _written_as_plain(ad: classad.ClassAd, names: tuple[str, ...], values: list) -> classad.ClassAd:
    """``ad`` with ``values`` written, checked to read and print as the plain path's copy
    (a function of its own: no local of the caller keeps the result's variant alive)."""
    ours = ad.rewritten(names, values)
    plain = _plain_path(ad, (), names, values, True)
    assert ours.printOld() == plain.printOld() and ours == plain
    return ours


def _in_its_table(ad: classad.ClassAd) -> bool:
    """Whether ``ad``'s variant is one its layout's table holds (or the one keeping every value)."""
    attrs = ad._attrs
    if type(attrs) is not SharedAttrs:
        return True
    v = tuple.__getitem__(attrs, 0)
    return v is v.layout.whole or any(w is v for w in v.layout.variants.values())


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(ops=_BIT_OPS, limit=st.integers(2, 3))
@example(  # the Alpha ad's write of BETA = 1, GAMMA = 0 remembered, its result dropped and forgotten
    ops=[
        ("make", [_BITS[0]] * 3),
        ("make", [_BITS[1], _BITS[0], _BITS[0]]),
        ("copy", 1, ["BETA", "gamma"], [1, 0]),
        ("drop", 2),
        ("make", [_BITS[0], _BITS[0], _BITS[1]]),
        ("copy", 1, ["BETA", "gamma"], [1, 0]),
    ],
    limit=3,
)
def test_ads_written_with_template_values_keep_variants_of_their_table(monkeypatch, ops, limit: int) -> None:
    """Ads made, dropped, rewritten in place or copied with values equal to the template's
    under a tiny variant table that recycles: every ad held reads as the plain path's
    copy, and its variant is one the table holds (a remembered outcome of a write must not
    give a variant the table forgot when its ads were dropped)."""
    monkeypatch.setattr(layout, "_LAYOUTS", {})
    monkeypatch.setattr(layout, "VARIANT_LIMIT", limit)
    held: list[classad.ClassAd] = []
    for op in ops:
        if op[0] == "make":
            held.append(classad.ClassAd.from_nodes(tuple(zip(_BIT_NAMES, op[1]))).compact())
        elif held and op[0] == "drop":
            del held[op[1] % len(held)]
        elif held:
            k = op[1] % len(held)
            out = _written_as_plain(held[k], tuple(op[2]), op[3][: len(op[2])])
            if op[0] == "write":
                held[k] = out
            else:
                held.append(out)
            del out
        assert all(map(_in_its_table, held))
