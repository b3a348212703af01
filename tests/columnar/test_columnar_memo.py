"""Row-attribute results shared between evaluations over one table (classad.columnar.memo).

Every evaluation is compared with the scalar evaluator: a result taken from the shared
store must be what evaluating afresh gives, for any sequence of fixed ads and row subsets.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_columnar_differential import _clock, _same, ads, focused, small_num

from classad import ClassAd, set_strict_mode
from classad.columnar import AdTable, attribute_true, evaluate_attribute, evaluate_column
from classad.evaluate import new_state
from classad.parser import parse_expr

# Row attributes that read the fixed ad in different ways: scoped, unscoped fall-through,
# through other row attributes, lazily (only on some rows), and through fixed-side expressions.
ROW_EXPRS = st.sampled_from(
    [
        "TARGET.a",
        "TARGET.a + a",
        "a > 1 && TARGET.b",
        "a < 1 || TARGET.n =?= undefined",
        "u",
        "u + 1",
        "ifThenElse(b, TARGET.a, TARGET.b)",
        "TARGET.Req",
        "x",
        "(a ?: TARGET.a) * 2",
        "missing_here",
        "TARGET.u",
        'member(TARGET.a, {1, 2, "x"})',
        "isUndefined(TARGET.z) ? a : b",
        "CurrentTime - a",
        # Variants of the shapes above that differ only in their literals (one family).
        "a > 2 && TARGET.b",
        "a < -1 || TARGET.n =?= undefined",
        'member(TARGET.a, {"y", 2.0})',
        'member(TARGET.a, {"x"})',
        "(a ?: TARGET.a) * 3",
        # Combinations of row attributes only (Run._combines: not stored, their parts are).
        "x && u",
        "!Req || (MY.u)",
    ]
)
FIXED_VALUES = st.sampled_from(
    ["0", "1", "2", "1.0", "true", '"x"', '"X"', "undefined", "error", "a + 1", "TARGET.a", "-0.0", "0.0"]
)
fixed_ads = st.tuples(FIXED_VALUES, FIXED_VALUES, st.booleans(), FIXED_VALUES).map(
    lambda t: f"[a = {t[0]}; b = {t[1]}" + (f"; u = {t[3]}" if t[2] else "") + "]"
)
row_ads = st.tuples(small_num, small_num, ROW_EXPRS, ROW_EXPRS, ROW_EXPRS, st.booleans()).map(
    lambda t: f"[a = {t[0]}; b = {t[1]}; Req = {t[2]}; x = {t[3]}" + (f"; u = {t[4]}]" if t[5] else "]")
)


def _scalar(rows: list, fixed: ClassAd, name: str) -> list:
    return [r.evaluate(name, fixed, state=new_state(r, fixed, clock=_clock)) for r in rows]


def truthy(value: Any) -> bool:
    """Whether a match counts ``value`` as true: true, or a non-zero number (NaN too)."""
    return value is True or (type(value) in (int, float) and value != 0)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.lists(st.one_of(row_ads, ads), min_size=2, max_size=7),
    fixed_texts=st.lists(fixed_ads, min_size=2, max_size=6),
    subsets=st.lists(st.sampled_from(["all", "even", "odd", "first", "last"]), min_size=1, max_size=3),
    strict=st.booleans(),
)
def test_shared_results_equal_fresh_evaluation(rows, fixed_texts, subsets, strict):
    try:
        row_ads_ = [ClassAd(t) for t in rows]
        fixeds = [ClassAd(t) for t in fixed_texts]
    except Exception:
        return
    set_strict_mode(strict)
    try:
        table = AdTable(row_ads_)
        n = len(row_ads_)
        picks = {
            "all": np.arange(n),
            "even": np.arange(0, n, 2),
            "odd": np.arange(1, n, 2),
            "first": np.arange(0, 1),
            "last": np.arange(n - 1, n),
        }
        for _round in range(2):
            for fixed in fixeds:
                for name in ("Req", "x", "u"):
                    expected = _scalar(row_ads_, fixed, name)
                    for which in subsets:
                        at = picks[which]
                        col = evaluate_attribute(
                            table, name, row_side="my", other=fixed, state=new_state(clock=_clock), rows=at
                        )
                        _same(col.to_values(), [expected[i] for i in at.tolist()])
                        mask = attribute_true(table, name, other=fixed, state=new_state(clock=_clock), rows=at)
                        assert mask.tolist() == [truthy(expected[i]) for i in at.tolist()]
    finally:
        set_strict_mode(False)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.lists(row_ads, min_size=2, max_size=6),
    fixed_texts=st.lists(fixed_ads, min_size=2, max_size=5),
    exprs=st.lists(focused(6), min_size=1, max_size=4),
)
def test_expressions_over_shared_attributes(rows, fixed_texts, exprs):
    """Whole expressions (which read the row attributes through the store) on both sides."""
    from classad.evaluate import evaluate_top
    from classad.parser import parse_expr

    try:
        row_ads_ = [ClassAd(t) for t in rows]
        fixeds = [ClassAd(t) for t in fixed_texts]
        nodes = [parse_expr(e) for e in exprs]
    except Exception:
        return
    table = AdTable(row_ads_)
    for fixed in fixeds + fixeds[:1]:
        for node in nodes:
            col = evaluate_column(node, table, row_side="my", other=fixed, state=new_state(clock=_clock))
            expected = [evaluate_top(node, r, new_state(r, fixed, clock=_clock)) for r in row_ads_]
            _same(col.to_values(), expected)
            col = evaluate_column(node, table, row_side="target", other=fixed, state=new_state(clock=_clock))
            expected = [evaluate_top(node, fixed, new_state(fixed, r, clock=_clock)) for r in row_ads_]
            _same(col.to_values(), expected)


def test_requests_agreeing_on_what_is_read_share_one_result():
    rows = [
        ClassAd(
            f"[Memory = {m}; Requirements = TARGET.RequestMemory <= Memory && KeyboardIdle > 10; KeyboardIdle = {k}]"
        )
        for m, k in ((100, 5), (200, 50), (300, 500))
    ]
    table = AdTable(rows)

    def ok(request: str) -> list:
        col = evaluate_attribute(table, "Requirements", other=ClassAd(request), state=new_state())
        return col.to_values()

    assert ok('[RequestMemory = 150; Owner = "a"]') == [False, True, True]
    assert ok('[RequestMemory = 250; Owner = "a"]') == [False, False, True]
    memo = table.shared_memo()
    assert (memo.hits, memo.misses) == (0, 2)
    # Another owner, same RequestMemory: the Requirements do not read Owner, so the result is shared.
    assert ok('[RequestMemory = 150; Owner = "b"]') == [False, True, True]
    assert memo.hits == 1
    # 150.0 is not 150 for the store (a real compares like an integer here, but need not elsewhere).
    assert ok("[RequestMemory = 150.0]") == [False, True, True]
    assert memo.hits == 1


def test_an_attribute_that_only_combines_others_is_computed_from_them():
    """``Requirements = Start && (Fits)`` only combines two attributes: it is not stored,
    its parts are (Start under the owner it reads, Fits under the memory).  Memory 100,
    200, 300 and Start refusing owner "b" on the second row: RequestMemory 150 gives
    false, true, true for "a" and false, false, true for "b"; 250 false, false, true."""
    rows = [
        ClassAd(
            f"[Memory = {m}; Start = TARGET.Owner =!= {refused}; Fits = TARGET.RequestMemory <= Memory;"
            " Requirements = Start && (Fits)]"
        )
        for m, refused in ((100, '"x"'), (200, '"b"'), (300, '"x"'))
    ]
    table = AdTable(rows)
    memo = table.shared_memo()
    cases = [
        ('[RequestMemory = 150; Owner = "a"]', [False, True, True]),
        ('[RequestMemory = 150; Owner = "b"]', [False, False, True]),
        ('[RequestMemory = 250; Owner = "a"]', [False, False, True]),
    ]
    for request, expected in cases + cases:
        col = evaluate_attribute(table, "Requirements", other=ClassAd(request), state=new_state())
        assert col.to_values() == expected
        mask = attribute_true(table, "Requirements", other=ClassAd(request), state=new_state())
        assert mask.tolist() == expected
    stored = {key[0] for key in memo.entries}
    assert stored == {"start", "fits"}
    # The second round found every part stored: Start for "a" and "b", Fits for 150 and 250.
    assert memo.misses == 4


def test_a_table_is_freed_without_the_cycle_collector():
    """A table and its ads go as soon as the last reference does: the row-only store that
    the table keeps refers back to it weakly, so the two form no reference cycle (a
    streaming query would otherwise hold every batch until the collector ran)."""
    import gc
    import weakref

    rows = [
        ClassAd(
            f"[Memory = {m}; Requirements = (KeyboardIdle > 10) && TARGET.RequestMemory <= Memory; "
            f"KeyboardIdle = {m // 10}]"
        )
        for m in (100, 200, 300)
    ]
    table = AdTable(rows)
    for request in ("[RequestMemory = 150]", "[RequestMemory = 250]"):
        evaluate_attribute(table, "Requirements", other=ClassAd(request), state=new_state())
    assert table.row_only is not None
    gone = weakref.ref(table)
    gc.disable()
    try:
        del table
        assert gone() is None
    finally:
        gc.enable()


# The fixed ad's expressions read against the rows, shared between fixed ads: names the
# fixed ad may lack (falling through to the row), MY and TARGET, the clock, an ad that
# defines ``target`` itself (then TARGET is its own attribute, not the row).
FIXED_EXPRS = st.sampled_from(
    [
        "TARGET.a >= a",
        "b + TARGET.b",
        "u",
        "missing_in_both",
        "MY.a + TARGET.n",
        "CurrentTime - TARGET.a > 0",
        "x =?= undefined ? TARGET.a : x",
        "TARGET.Req && a > 0",
        "{1, 2}",
    ]
)
fixed_parts = st.tuples(FIXED_VALUES, st.booleans(), FIXED_VALUES, st.booleans())


def _fixed_ad(req: Any, parts: tuple) -> ClassAd:
    """A fixed ad holding the very node ``req`` as its ``Req`` (as the ads of a file that
    hold the same text do), with other values and names around it."""
    a, has_x, x, has_target = parts
    ad = ClassAd(f"[a = {a}" + (f"; x = {x}" if has_x else "") + ("; target = [a = 7]" if has_target else "") + "]")
    ad.set_node("Req", req)
    return ad


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.lists(st.one_of(row_ads, ads), min_size=1, max_size=6),
    req=FIXED_EXPRS,
    parts=st.lists(fixed_parts, min_size=2, max_size=6),
    strict=st.booleans(),
)
def test_shared_fixed_side_attributes_equal_fresh_evaluation(rows, req, parts, strict):
    """``evaluate_attribute(..., row_side="target", shared=True)``: each fixed ad's result,
    whether computed or found under another fixed ad's (the same ``Req`` text, other
    values, other names present), is the scalar evaluator's."""
    try:
        row_ads_ = [ClassAd(t) for t in rows]
        node = parse_expr(req)
        fixeds = [_fixed_ad(node, p) for p in parts]
    except Exception:
        return
    set_strict_mode(strict)
    try:
        table = AdTable(row_ads_)
        for fixed in fixeds + fixeds:
            for name in ("Req", "x"):
                col = evaluate_attribute(
                    table, name, row_side="target", other=fixed, state=new_state(clock=_clock), shared=True
                )
                want = [fixed.evaluate(name, r, state=new_state(fixed, r, clock=_clock)) for r in row_ads_]
                _same(col.to_values(), want)
                for at in (None, np.arange(0, len(row_ads_), 2)):
                    mask = attribute_true(
                        table, name, row_side="target", other=fixed, state=new_state(clock=_clock), rows=at, shared=True
                    )
                    picked = want if at is None else [want[i] for i in at.tolist()]
                    assert mask.tolist() == [truthy(v) for v in picked]
    finally:
        set_strict_mode(False)


def test_a_name_the_fixed_ad_lacks_is_a_read_of_the_fixed_ad():
    """Req = x =?= undefined ? TARGET.a : x, one node held by two requests.  The row has
    x = 5.  Request 1 lacks x: the unscoped name falls through to the row, Req = 5.
    Request 2 has x = 2: Req = 2.  The first result must not serve the second (the
    absence of x is part of what it read)."""
    rows = [ClassAd("[a = 1; x = 5]")]
    node = parse_expr("x =?= undefined ? TARGET.a : x")
    first, second = ClassAd("[a = 0]"), ClassAd("[a = 0; x = 2]")
    first.set_node("Req", node)
    second.set_node("Req", node)
    table = AdTable(rows)

    def req(fixed: ClassAd) -> list:
        col = evaluate_attribute(table, "Req", row_side="target", other=fixed, state=new_state(), shared=True)
        return col.to_values()

    assert req(first) == [5]
    assert req(second) == [2]
    assert req(first) == [5]
    assert table.shared_memo().hits == 1


def test_only_attributes_that_combine_others_are_left_out_of_the_memo():
    """Requirements = START && (Limits) and NotReq = !START || !MY.Limits only combine row
    attributes: the memo stores START's and Limits' results, never theirs, on all rows or
    a subset.  Loose = START && TARGET.Owner =!= "x" compares a value of its own: it is
    stored.  Every value is also the scalar evaluator's.

    By hand (slot: Memory, KeyboardIdle): START = KeyboardIdle > 10, Limits = RequestMemory
    <= Memory.  Slots (100, 5), (200, 50), (300, 500): START = [F, T, T].
    RequestMemory 150: Limits [F, T, T], Requirements [F, T, T];
    RequestMemory 250: Limits [F, F, T], Requirements [F, F, T];
    NotReq = !START || !MY.Limits: [T, F, F] for 150, [T, T, F] for 250.
    Loose (owner "a") = START = [F, T, T]."""
    rows = [
        ClassAd(
            f"[Memory = {m}; KeyboardIdle = {k}; START = KeyboardIdle > 10; "
            "Limits = TARGET.RequestMemory <= Memory; Requirements = START && (Limits); "
            'NotReq = !START || !MY.Limits; Loose = START && TARGET.Owner =!= "x"]'
        )
        for m, k in ((100, 5), (200, 50), (300, 500))
    ]
    table = AdTable(rows)
    requests = [ClassAd(f'[RequestMemory = {m}; Owner = "a"]') for m in (150, 250, 150)]
    expected = {
        "requirements": [[False, True, True], [False, False, True]],
        "notreq": [[True, False, False], [True, True, False]],
        "loose": [[False, True, True], [False, True, True]],
    }
    for i, request in enumerate(requests):
        for name, want in expected.items():
            state = new_state(clock=_clock)
            got = evaluate_attribute(table, name, other=request, state=state).to_values()
            assert got == want[i % 2] == _scalar(rows, request, name)
            mask = attribute_true(table, name, other=request, state=new_state(clock=_clock))
            assert mask.tolist() == want[i % 2]
            odd = attribute_true(table, name, other=request, state=new_state(clock=_clock), rows=np.array([1, 2]))
            assert odd.tolist() == want[i % 2][1:]
    stored = {key[0] for key, lru in table.shared_memo().entries.items() if lru}
    assert stored == {"start", "limits", "loose"}
