"""Where a requirement is true, read without making its column
(classad.columnar.compile: ``Run.row_attr_true``, ``Run.shared_fixed_true``).

A slot's ``Requirements = START && (WithinResourceLimits)`` is read as the rows where each
name is true (a stored result's bits, a cheap attribute's fused boolean array), each name
evaluated on the rows where the names before it are true or Undefined; a cheap attribute
computed afresh for each request (a job's ``Requirements``) gives its fused boolean array
straight.  Neither may change which rows are true nor what is drawn: the expected values
are the scalar evaluator's, and the draws are counted against it.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st
from test_columnar_afresh import afresh_at_once
from test_columnar_differential import _clock
from test_columnar_memo import truthy
from test_table_follow import _CountingRandom

from classad import ClassAd, set_strict_mode
from classad.columnar import AdTable, attribute_true
from classad.evaluate import evaluate_top, new_state
from classad.parser import parse_expr

# Requirements: one node shared by every row (as the ads of a file holding the same text).
CHAINS = ["A && (B)", "A && B && C", "(A && B) && C", "A && (B && C)", "(A) && C"]
# A row's A, B or C: absent (falls through to the request), a literal (Undefined, Error,
# numbers, a string), a cheap expression (computed afresh, fused), one read through the
# request's values (stored by them), one that reads the request's Owner through a list.
PARTS = [
    None,
    "true",
    "false",
    "undefined",
    "error",
    "0",
    "2.5",
    '"x"',
    "TARGET.m <= M",
    'TARGET.o =!= "u1"',
    'member(TARGET.o, {"u1", "u2"})',
    "TARGET.m",
    "M - TARGET.m",
]
# Cheap combinations, evaluated as one array (a B or C every row holds: computed afresh).
CHEAP = ["M > 0 && TARGET.m <= M && TARGET.d <= D", "M > 0 || TARGET.m =?= undefined", "!(M > 2) && TARGET.d <= D"]
PARTS += CHEAP
_NODES: dict[str, Any] = {}


def _node(text: str) -> Any:
    node = _NODES.get(text)
    if node is None:
        node = _NODES[text] = parse_expr(text)
    return node


def _row(m: Any, d: Any, parts: tuple, usual: tuple, chain: str) -> ClassAd:
    ad = ClassAd(f"[M = {m}; D = {d}]")
    for name, text, kept in zip("ABC", parts, usual):
        if text == KEEP:
            text = kept
        if text is not None:
            ad.set_node(name, _node(text))
    ad.set_node("Requirements", _node(chain))
    return ad


VALUES = st.sampled_from(["0", "1", "2", "3", "2.5", "undefined", "error", '"s"', "true"])
# Most rows hold the example's usual A, B and C (KEEP), so that one expression on every row
# (the cheap paths) is common; some hold another.
KEEP = "keep"
_PART = st.one_of(st.just(KEEP), st.just(KEEP), st.just(KEEP), st.sampled_from(PARTS))
rows_st = st.tuples(VALUES, VALUES, st.tuples(_PART, _PART, _PART))
requests_st = st.tuples(
    st.sampled_from(["0", "1", "2", "undefined", '"s"', "2.5"]),
    st.sampled_from(["0", "1", "3"]),
    st.sampled_from(['"u1"', '"u3"', "undefined"]),
    st.sampled_from([None, "true", "false", "undefined", "TARGET.M > 1"]),
)


def _request(parts: tuple) -> ClassAd:
    m, d, o, a = parts
    ad = ClassAd(f"[m = {m}; d = {d}; o = {o}]")
    if a is not None:
        ad.set_node("A", _node(a))
    return ad


def _expected(ads: list, name: str, fixed: ClassAd, row_side: str) -> list[bool]:
    out = []
    for ad in ads:
        my, target = (ad, fixed) if row_side == "my" else (fixed, ad)
        value = my.evaluate(name, target, state=new_state(my, target, clock=_clock))
        out.append(truthy(value))
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    chain=st.sampled_from(CHAINS),
    usual=st.tuples(*[st.one_of(st.sampled_from(PARTS), st.sampled_from(CHEAP))] * 3),
    rows=st.lists(rows_st, min_size=1, max_size=7),
    requests=st.lists(requests_st, min_size=1, max_size=4),
    uniform=st.booleans(),
    afresh=st.booleans(),
    strict=st.booleans(),
)
def test_true_rows_of_a_combination_of_names_are_the_scalar_ones(chain, usual, rows, requests, uniform, afresh, strict):
    """The rows where the slots' ``Requirements`` (a ``&&`` of names) is true, for requests
    one after the other, on every row and on a subset, are those where the scalar
    evaluator gives true (or a non-zero number); so are the rows of each name alone.
    ``uniform``: every row holds the same A, B and C (as a pool's slots hold one
    ``WithinResourceLimits``)."""
    ads = [_row(m, d, (KEEP,) * 3 if uniform else parts, usual, chain) for m, d, parts in rows]
    fixeds = [_request(r) for r in requests]
    set_strict_mode(strict)
    try:
        with afresh_at_once() if afresh else _nothing():
            table = AdTable(ads)
            subsets = [None, np.arange(0, len(ads), 2)]
            for _round in range(2):
                for fixed in fixeds:
                    for name in ("Requirements", "A", "B", "C"):
                        want = _expected(ads, name, fixed, "my")
                        for at in subsets:
                            got = attribute_true(table, name, other=fixed, state=new_state(clock=_clock), rows=at)
                            assert got.tolist() == (want if at is None else [want[i] for i in at.tolist()])
    finally:
        set_strict_mode(False)


# The request's own Requirements against the rows: cheap combinations (fused when every
# part is a boolean on every row, three masks when some row is Undefined or Error).
FIXED_REQS = [
    "TARGET.M >= m && TARGET.D >= d",
    "(TARGET.M >= m) && (TARGET.D >= d) && (TARGET.C)",
    "TARGET.M >= m || !(TARGET.D >= d)",
    "TARGET.C && TARGET.M > 0",
]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    req=st.sampled_from(FIXED_REQS),
    rows=st.lists(st.tuples(VALUES, VALUES, st.sampled_from([None, "true", "false", "undefined", "1"])), min_size=1),
    requests=st.lists(requests_st, min_size=1, max_size=4),
    afresh=st.booleans(),
)
def test_true_rows_of_a_requests_requirements_are_the_scalar_ones(req, rows, requests, afresh):
    """A request's cheap ``Req`` against the rows (shared, computed afresh once judged so):
    its true rows are the scalar evaluator's, on every row and on a subset."""
    ads = []
    for m, d, c in rows:
        ad = ClassAd(f"[M = {m}; D = {d}]")
        if c is not None:
            ad.set_node("C", _node(c))
        ads.append(ad)
    fixeds = []
    for parts in requests:
        fixed = _request(parts)
        fixed.set_node("Req", _node(req))
        fixeds.append(fixed)
    with afresh_at_once() if afresh else _nothing():
        table = AdTable(ads)
        for _round in range(2):
            for fixed in fixeds:
                want = _expected(ads, "Req", fixed, "target")
                for at in (None, np.arange(0, len(ads), 2)):
                    got = attribute_true(
                        table,
                        "Req",
                        row_side="target",
                        other=fixed,
                        state=new_state(clock=_clock),
                        rows=at,
                        shared=True,
                    )
                    assert got.tolist() == (want if at is None else [want[i] for i in at.tolist()])


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _draws(table: AdTable, fixed: ClassAd, rows: np.ndarray) -> tuple[list[bool], int]:
    rng = _CountingRandom(3)
    got = attribute_true(table, "Requirements", other=fixed, state=new_state(rng=rng, clock=_clock), rows=rows)
    return got.tolist(), rng.draws


def test_a_name_that_draws_is_evaluated_where_the_names_before_it_leave_the_value_open():
    """By hand: Requirements = A && (B) on six rows; A = TARGET.m <= M with M 0..5 and the
    request's m = 2 (false on rows 0 and 1, true on rows 2..4), row 5's A the literal undefined;
    B = random(10) >= 0, true whatever the draw.  The
    lazy walk evaluates B on rows 2, 3, 4 (true) and 5 (Undefined): four draws, and the
    true rows are 2, 3, 4 (row 5: Undefined && true is Undefined).  The scalar evaluator
    draws on the same rows; asked on rows 0, 2 and 5: two draws, row 2 true."""
    a, b = _node("TARGET.m <= M"), _node("random(10) >= 0")
    ads = []
    for m in range(6):
        ad = ClassAd(f"[M = {m}]")
        if m < 5:
            ad.set_node("A", a)
        else:
            ad.set_node("A", _node("undefined"))
        ad.set_node("B", b)
        ad.set_node("Requirements", _node("A && (B)"))
        ads.append(ad)
    fixed = ClassAd("[m = 2]")
    for afresh in (False, True):
        with afresh_at_once() if afresh else _nothing():
            table = AdTable(ads)
            for _round in range(2):
                assert _draws(table, fixed, table.all_rows) == ([False, False, True, True, True, False], 4)
                assert _draws(table, fixed, np.array([0, 2, 5])) == ([False, True, False], 2)
    source = _CountingRandom(3)
    for ad in ads:
        evaluate_top(ad.get_node("Requirements"), ad, new_state(ad, fixed, rng=source))
    assert source.draws == 4
    assert isinstance(source, random.Random)


def test_a_cheap_name_after_a_stored_one_is_evaluated_on_every_row():
    """By hand: Requirements = A && (B) on eight rows, M = 0..7; A = TARGET.o =!= M (a
    stored result by the request's o), B = M > 0 && TARGET.m <= M (cheap, computed afresh
    once judged so, and evaluated ahead of need on every row).  For o = 3 and m = 2: A is
    false on row 3 only, B true on rows 2..7, so the true rows are 2, 4, 5, 6, 7; for o = 5
    and m = 6: A false on row 5, B true on rows 6 and 7: true rows 6 and 7.  Asked again
    (B now computed afresh), and on the odd rows (5 and 7 for the second request: 7)."""
    a, b = _node("TARGET.o =!= M"), _node("M > 0 && TARGET.m <= M")
    ads = []
    for m in range(8):
        ad = ClassAd(f"[M = {m}]")
        ad.set_node("A", a)
        ad.set_node("B", b)
        ad.set_node("Requirements", _node("A && (B)"))
        ads.append(ad)
    want = {(3, 2): {2, 4, 5, 6, 7}, (5, 6): {6, 7}}
    with afresh_at_once():
        table = AdTable(ads)
        for _round in range(3):
            for (o, m), true_rows in want.items():
                fixed = ClassAd(f"[o = {o}; m = {m}]")
                got = attribute_true(table, "Requirements", other=fixed, state=new_state(clock=_clock))
                assert set(np.nonzero(got)[0].tolist()) == true_rows
                odd = np.arange(1, 8, 2)
                got = attribute_true(table, "Requirements", other=fixed, state=new_state(clock=_clock), rows=odd)
                assert set(odd[got].tolist()) == true_rows & {1, 3, 5, 7}


def test_a_drawing_name_after_a_cheap_one_that_is_undefined_on_some_rows():
    """By hand: Requirements = A && (B) on six rows; A = M > 0 && TARGET.m <= M on every
    row (cheap: computed afresh, one fused array) with M = 0..4 and, on row 5, M undefined;
    B = random(10) >= 0.  For the request's m = 2: A is false on row 0 (0 > 0), false on
    row 1 (2 <= 1), true on rows 2, 3, 4, and Undefined on row 5 (undefined > 0 is
    Undefined, and Undefined && Undefined is Undefined).  The lazy walk evaluates B where A
    is true or Undefined: rows 2, 3, 4 and 5, four draws; the true rows are 2, 3, 4.  The
    scalar evaluator draws on the same four rows.  Asked on rows 1, 4 and 5: two draws."""
    a, b = _node("M > 0 && TARGET.m <= M"), _node("random(10) >= 0")
    ads = []
    for m in ["0", "1", "2", "3", "4", "undefined"]:
        ad = ClassAd(f"[M = {m}]")
        ad.set_node("A", a)
        ad.set_node("B", b)
        ad.set_node("Requirements", _node("A && (B)"))
        ads.append(ad)
    fixed = ClassAd("[m = 2]")
    source = _CountingRandom(3)
    for ad in ads:
        evaluate_top(ad.get_node("Requirements"), ad, new_state(ad, fixed, rng=source))
    assert source.draws == 4
    for afresh in (False, True):
        with afresh_at_once() if afresh else _nothing():
            table = AdTable(ads)
            for _round in range(3):
                assert _draws(table, fixed, table.all_rows) == ([False, False, True, True, True, False], 4)
                assert _draws(table, fixed, np.array([1, 4, 5])) == ([False, True, False], 2)


DRAWS = "random(4) >= 0"  # true whatever it draws: only the number of draws tells


def _scalar_draws(ads: list, fixed: ClassAd, rows: list[int]) -> tuple[list[bool], int]:
    source = _CountingRandom(3)
    out = []
    for i in rows:
        ad = ads[i]
        out.append(
            truthy(evaluate_top(ad.get_node("Requirements"), ad, new_state(ad, fixed, rng=source, clock=_clock)))
        )
    return out, source.draws


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    chain=st.sampled_from(CHAINS),
    usual=st.tuples(
        st.sampled_from(CHEAP + ["TARGET.m <= M", None]),
        st.sampled_from([DRAWS, DRAWS, "TARGET.m <= M", "undefined", None]),
        st.sampled_from([DRAWS, "true", None] + CHEAP),
    ),
    rows=st.lists(rows_st, min_size=1, max_size=7),
    requests=st.lists(requests_st, min_size=1, max_size=3),
    uniform=st.booleans(),
    afresh=st.booleans(),
)
def test_true_rows_draw_as_often_as_the_scalar_evaluator(chain, usual, rows, requests, uniform, afresh):
    """A ``&&`` of names where some name draws a random number: on every row and on the
    even rows, for requests one after the other, the true rows and the number of draws
    are the scalar evaluator's (a name is evaluated where the names before it are true or
    Undefined, whichever way the names before it were read: a cheap A first, often one
    expression on every row, computed afresh and fused)."""
    ads = [_row(m, d, (KEEP,) * 3 if uniform else parts, usual, chain) for m, d, parts in rows]
    fixeds = [_request(r) for r in requests]
    with afresh_at_once() if afresh else _nothing():
        table = AdTable(ads)
        for _round in range(2):
            for fixed in fixeds:
                for at in (table.all_rows, np.arange(0, len(ads), 2), np.arange(1, len(ads), 2)):
                    assert _draws(table, fixed, at) == _scalar_draws(ads, fixed, at.tolist())
