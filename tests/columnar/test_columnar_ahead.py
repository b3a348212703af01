"""Right sides of ``&&`` / ``||`` evaluated ahead of need (classad.columnar.compile).

On a big table the engine may evaluate a simple right side (comparisons and arithmetic of
literals, names and ``MY``/``TARGET`` selections) on every row instead of picking the rows
where the left side does not decide, giving up when that would take a scalar fallback or
evaluate an expression.  These tests lower the size threshold to nothing, so that every
such side is so evaluated on the small random tables, and compare with the scalar
evaluator: the values on every row, and shared results that later evaluations reuse.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st
from test_columnar_differential import (
    _check,
    _clock,
    _logic_row,
    logic_chain_cases,
    simple_expr,
    small_value_cases,
    strict_mode,
)
from test_columnar_memo import fixed_ads, row_ads, truthy

from classad import ClassAd
from classad.columnar import AdTable, attribute_true, compile as columnar_compile, evaluate_attribute, evaluate_column
from classad.evaluate import new_state
from classad.parser import parse_expr
from classad.values import UNDEFINED


@contextmanager
def always_ahead() -> Iterator[None]:
    """Every right side that may be evaluated ahead of need is, whatever the table's size."""
    saved = columnar_compile._AHEAD_ROWS
    columnar_compile._AHEAD_ROWS = 0
    try:
        yield
    finally:
        columnar_compile._AHEAD_ROWS = saved


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(**logic_chain_cases)
def test_logical_chains_ahead(exprs, rows, fixed, side, strict):
    """Chains of ``&&`` and ``||`` over booleans, Undefined, Error, numbers and strings give
    the scalar evaluator's three-valued results on every row and on half of them."""
    with strict_mode(strict), always_ahead():
        _check(exprs, rows, fixed, side)


_guarded = st.tuples(
    st.sampled_from(["a > 0", "b", "n =?= undefined", "true", "a == b", "!(a < 1)"]),
    st.sampled_from(["&&", "||"]),
    simple_expr,
).map(lambda t: f"({t[0]}) {t[1]} ({t[2]})")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(exprs=st.lists(_guarded, min_size=6, max_size=12), **small_value_cases)
def test_operators_on_small_values_ahead(exprs, rows, fixed, side, strict, compact):
    """Right sides of every operator on edge values (NaN, the 64-bit limits, overflowing
    reals, lists, strings against numbers), which the vector forms decide or leave to the
    scalar evaluator, behind a left side that decides some rows."""
    with strict_mode(strict), always_ahead():
        _check(exprs, rows, fixed, side, compact)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.lists(row_ads, min_size=2, max_size=7),
    fixed_texts=st.lists(fixed_ads, min_size=2, max_size=5),
    strict=st.booleans(),
)
def test_shared_results_ahead(rows, fixed_texts, strict):
    """Row attributes shared through the memo (whose reads of the fixed ad an evaluation
    ahead of need may add to) equal the scalar evaluator's values for every later fixed ad."""
    try:
        row_ads_ = [ClassAd(t) for t in rows]
        fixeds = [ClassAd(t) for t in fixed_texts]
    except Exception:
        return
    with strict_mode(strict), always_ahead():
        table = AdTable(row_ads_)
        odd = np.arange(1, len(row_ads_), 2)
        for fixed in fixeds + fixeds:
            for name in ("Req", "x"):
                expected = [r.evaluate(name, fixed, state=new_state(r, fixed, clock=_clock)) for r in row_ads_]
                col = evaluate_attribute(table, name, other=fixed, state=new_state(clock=_clock))
                assert [repr(v) for v in col.to_values()] == [repr(v) for v in expected]
                mask = attribute_true(table, name, other=fixed, state=new_state(clock=_clock), rows=odd)
                assert mask.tolist() == [truthy(expected[i]) for i in odd.tolist()]


def test_a_right_side_is_evaluated_ahead_on_every_row():
    """``a > 1 && TARGET.b <= b`` over 6 rows: the right side is asked on all 6 (not only on
    the 3 where ``a > 1``), and the values are the scalar's: a = 0, 2, 5, 1, 3, 0 and b = 4
    against TARGET.b = 3 give false, true, true, false, true, false."""
    rows = [ClassAd(f"[a = {a}; b = 4]") for a in (0, 2, 5, 1, 3, 0)]
    table = AdTable(rows)
    asked: list[int] = []
    real_ev, real_compared = columnar_compile.Run.ev, columnar_compile.Run._compared

    def ev(self, node, scope, at, active):
        if type(node).__name__ == "Binary" and node.op == "<=":
            asked.append(len(at))
        return real_ev(self, node, scope, at, active)

    def compared(self, node, scope, at, active):  # the comparison in a combination made one array
        if node.op == "<=":
            asked.append(len(at))
        return real_compared(self, node, scope, at, active)

    columnar_compile.Run.ev = ev  # type: ignore[method-assign]
    columnar_compile.Run._compared = compared  # type: ignore[method-assign]
    try:
        with always_ahead():
            run = columnar_compile.Run(table, ClassAd("[b = 3]"), new_state(clock=_clock), True)
            col = run.ev(parse_expr("a > 1 && TARGET.b <= b"), columnar_compile.ROW, table.all_rows, frozenset())
    finally:
        columnar_compile.Run.ev = real_ev  # type: ignore[method-assign]
        columnar_compile.Run._compared = real_compared  # type: ignore[method-assign]
    assert asked == [6]
    assert col.to_values() == [False, True, True, False, True, False]


_clock_part = st.sampled_from(
    [
        "(CurrentTime - a) > 3600",
        "CurrentTime - EnteredCurrentState > b",
        "MY.CurrentTime > a",
        "CurrentTime == TARGET.a",
        "CurrentTime == 1700000000",
        "RemoteUserPrio > TARGET.b * 1.2",
        "a > b",
        "g",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    parts=st.lists(st.tuples(_clock_part, st.sampled_from(["&&", "||", "&& !"])), min_size=2, max_size=4),
    rows=st.lists(
        st.tuples(
            _logic_row,
            st.sampled_from(["", "EnteredCurrentState = 1699990000;", "CurrentTime = 5;", "RemoteUserPrio = 2.5;"]),
        ),
        min_size=2,
        max_size=8,
    ),
    fixed=st.sampled_from(["[a = 1; b = 2]", "[a = 1700000000; b = undefined; CurrentTime = 7]", "[b = 1]"]),
    side=st.sampled_from(["my", "target"]),
)
def test_combinations_reading_the_clock_ahead(parts, rows, fixed, side):
    """Combinations of comparisons that read ``CurrentTime`` (the clock, or an ad's own
    attribute where one defines it) with parts that are Undefined or Error on some rows
    (a ``RemoteUserPrio`` only some slots hold, as PREEMPTION_REQUIREMENTS reads it), made
    in one pass: the scalar evaluator's values on every row and on half of them."""
    expr = parts[0][0] + "".join(f" {op} ({part})" for part, op in parts[1:])
    texts = [row[:-1] + "; " + extra.rstrip(";") + "]" if extra else row for row, extra in rows]
    with always_ahead():
        _check(expr, texts, fixed, side)


def test_the_clock_is_read_ahead_in_one_pass():
    """PREEMPTION_REQUIREMENTS of the UWCS template over 3 slots, one unclaimed (no
    RemoteUserPrio): ((CurrentTime - EnteredCurrentState) > 3600) && (RemoteUserPrio >
    TARGET.SubmitterUserPrio * 1.2) with the clock at 1,700,000,000 and SubmitterUserPrio 10.
    By hand: slot 0 entered 7200 s ago with priority 13 (> 12): true; slot 1 entered exactly
    3600 s ago (not more than an hour): false; slot 2 entered 7200 s ago, no priority: Undefined.  The combination is made
    in one pass (the clock a constant of the run)."""
    rows = [
        ClassAd("[EnteredCurrentState = 1699992800; RemoteUserPrio = 13.0]"),
        ClassAd("[EnteredCurrentState = 1699996400; RemoteUserPrio = 13.0]"),
        ClassAd("[EnteredCurrentState = 1699992800]"),
    ]
    node = parse_expr(
        "((CurrentTime - EnteredCurrentState) > (1 * 3600)) && (RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2)"
    )
    fused: list[bool] = []
    original = columnar_compile.Run._fused

    def spy(self, *args):  # type: ignore[no-untyped-def]
        out = original(self, *args)
        fused.append(out is not None)
        return out

    columnar_compile.Run._fused = spy  # type: ignore[method-assign]
    try:
        with always_ahead():
            col = evaluate_column(
                node, AdTable(rows), other=ClassAd("[SubmitterUserPrio = 10]"), state=new_state(clock=_clock)
            )
    finally:
        columnar_compile.Run._fused = original  # type: ignore[method-assign]
    assert fused == [True]
    assert col.to_values() == [True, False, UNDEFINED]
