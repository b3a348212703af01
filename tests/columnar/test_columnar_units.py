"""Unit tests of the columnar engine's pieces."""

from __future__ import annotations

import itertools
import math
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from classad import ClassAd, ExprTree
from classad.columnar import (
    AdTable,
    evaluate_attribute,
    evaluate_column,
    knob_rank_array,
    knob_rank_single,
    rank_array,
    true_mask,
)
from classad.columnar.column import Column, Packed, StringPool
from classad.evaluate import new_state
from classad.values import ERROR, UNDEFINED


def _rows(*texts: str) -> AdTable:
    return AdTable([ClassAd(t) for t in texts])


def test_round_trip_of_values():
    pool = StringPool()
    values = [True, 3, 2.5, "x", UNDEFINED, ERROR, -(1 << 63)]
    assert Column.of_values(values, pool).to_values() == values


def test_case_insensitive_string_equality_and_case_sensitive_is():
    t = _rows('[s = "Linux"]', '[s = "LINUX"]', '[s = "bsd"]')
    assert evaluate_column('s == "linux"', t).to_values() == [True, True, False]
    assert evaluate_column('s =?= "LINUX"', t).to_values() == [False, True, False]


def test_comparison_with_a_constant_where_some_rows_lack_the_attribute():
    """``x > 1`` (and ``1 < x``) on x = 1, missing, 2.5, error, true, 7, real("NaN"): a number
    compares as a number (true as 1), Undefined and Error stay themselves: false, undefined,
    true, error, false, true, and false for NaN (no real is greater than a NaN)."""
    rows = ["[x = 1]", "[]", "[x = 2.5]", "[x = error]", "[x = true]", "[x = 7]", '[x = real("NaN")]']
    expected = [False, UNDEFINED, True, ERROR, False, True, False]
    for n in (6, 7):  # without the NaN (every row decided by the constant's fast form) and with it
        t = _rows(*rows[:n])
        assert evaluate_column("x > 1", t).to_values() == expected[:n]
        assert evaluate_column("1 < x", t).to_values() == expected[:n]
        assert evaluate_column("x > 1.5", t).to_values() == expected[:n]


def test_shared_expression_nodes_grouped_per_row():
    shared = ExprTree("Memory * 2").node
    ads = [ClassAd({"Memory": m}) for m in (1, 2, 3)]
    for ad in ads[:2]:
        ad.set_node("Double", shared)
    ads[2]["Double"] = ExprTree("Memory + 100")
    assert evaluate_attribute(AdTable(ads), "Double").to_values() == [2, 4, 103]


def test_target_side_bound_once():
    job = ClassAd('[RequestMemory = 100; Requirements = TARGET.Memory >= RequestMemory && Owner == "u"]')
    t = _rows('[Memory = 50; Owner = "u"]', '[Memory = 150; Owner = "U"]', "[Memory = 150]")
    got = evaluate_attribute(t, "Requirements", row_side="target", other=job).to_values()
    # Owner is missing from the job: looked up in the slot (the partner), so the last row is Undefined.
    assert got == [False, True, UNDEFINED]


def test_circular_reference_is_undefined():
    t = _rows("[a = b; b = a]", "[a = 1; b = a]")
    assert evaluate_attribute(t, "a").to_values() == [UNDEFINED, 1]


def test_current_time_from_the_state_clock():
    t = _rows("[a = 1]", "[CurrentTime = 5]")
    st = new_state(clock=lambda: 1234.9)
    assert evaluate_column("CurrentTime", t, state=st).to_values() == [1234, 5]


def test_fallback_leaves_the_state_as_it_was():
    st = new_state(clock=lambda: 0.0)
    t = _rows("[a = {1, 2}]", "[a = {3}]")
    assert evaluate_column("size(a) + a[0]", t, state=st).to_values() == [3, 4]
    assert st.my is None and st.target is None and not st.active and st.depth == 0


def test_masks_and_ranks():
    col = Column.of_values([True, 0, 2.5, float("nan"), "x", UNDEFINED, -0.0, 1e300], StringPool())
    assert true_mask(col).tolist() == [True, False, True, True, False, False, False, True]
    ranks = rank_array(col)
    assert ranks[:3].tolist() == [1.0, 0.0, 2.5] and math.isnan(ranks[3]) and ranks[4:7].tolist() == [0, 0, 0]
    knob = knob_rank_array(col)
    assert knob[4] == -np.inf and knob[7] == np.inf and knob[2] == 2.5


def test_row_side_checks():
    with pytest.raises(ValueError):
        evaluate_column("1", _rows("[a = 1]"), row_side="target")
    with pytest.raises(ValueError):
        evaluate_column("1", _rows("[a = 1]"), row_side="left")


def test_select_ads_keeps_order_across_batches():
    from classad.columnar.select import select_ads

    ads = [ClassAd({"i": i, "s": "x" if i % 3 else "X"}) for i in range(25)]
    got = [ad["i"] for ad in select_ads('s == "x" && i % 2 == 0', ads, batch=4)]
    assert got == [ad["i"] for ad in ads if ExprTree('s == "x" && i % 2 == 0').eval(ad) is True]


def test_select_ads_yields_what_was_read_before_an_error():
    from classad.columnar.select import select_ads

    def source():
        yield ClassAd({"i": 1})
        yield ClassAd({"i": 2})
        raise OSError("disk gone")

    seen = []
    with pytest.raises(OSError):
        for ad in select_ads("i > 0", source(), batch=10):
            seen.append(ad["i"])
    assert seen == [1, 2]


def test_nested_rows_use_the_scalar_evaluator():
    outer = ClassAd("[a = 5; inner = [b = a + 1]]")
    inner = outer.evaluate("inner")
    col = evaluate_column("b * 2", AdTable([inner]))
    assert col.to_values() == [ExprTree("b * 2").evaluate(inner)] == [12]


def test_subset_of_rows():
    t = _rows("[a = 1]", "[a = 2]", "[a = 3]", "[b = 1]")
    rows = np.array([1, 3])
    assert evaluate_column("a * 10", t, rows=rows).to_values() == [20, UNDEFINED]
    assert evaluate_attribute(t, "a", rows=rows).to_values() == [2, UNDEFINED]


_PACKABLE = st.one_of(
    st.booleans(),
    st.integers(-(1 << 63), (1 << 63) - 1),
    st.sampled_from([0, 1, -1, 127, 128, -129]),
    st.floats(allow_nan=False),
    st.sampled_from([0.0, -0.0]),
    st.text(max_size=3),
    st.sampled_from([UNDEFINED, ERROR]),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(values=st.lists(_PACKABLE, max_size=12), data=st.data())
def test_packed_columns_unpack_to_the_same_values(values, data):
    """A memo keeps columns packed: unpacking gives back every value, bit for bit (-0.0,
    64-bit extremes), and any subset of rows."""
    pool = StringPool()
    col = Column.of_values(values, pool)
    packed = Packed(col)
    as_bits = lambda vs: [(type(v), math.copysign(1, v), v) if type(v) is float else (type(v), v) for v in vs]
    assert as_bits(packed.unpack().to_values()) == as_bits(values)
    rows = np.asarray(
        data.draw(st.lists(st.integers(0, max(0, len(values) - 1)), max_size=len(values))) if values else [],
        dtype=np.int64,
    )
    assert as_bits(packed.unpack(rows).to_values()) == as_bits([values[r] for r in rows.tolist()])


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.booleans(), min_size=1, max_size=40), data=st.data())
def test_packed_booleans_unpack_any_rows(values, data):
    """A boolean column is packed a bit per row; any rows, in any order and repeated, read
    back the bits they hold."""
    packed = Packed(Column.of_values(values, StringPool()))
    rows = data.draw(st.lists(st.integers(0, len(values) - 1), max_size=2 * len(values)))
    got = packed.unpack(np.asarray(rows, dtype=np.int64)).to_values()
    assert got == [values[r] for r in rows]


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(_PACKABLE, min_size=1, max_size=12),
    written=st.lists(_PACKABLE, max_size=6),
    data=st.data(),
)
def test_packed_moved_is_unpacked_put_and_packed_again(values, written, data):
    """A stored result brought to a new generation (its rows picked, some written anew) is
    moved in its packed form (Packed.moved): every value, bit for bit, is what unpacking
    the rows, putting the new values and packing again gives, wherever a payload has to
    widen (a large integer, a real single precision does not hold, a string where there
    was none), and moved rows alone."""
    pool = StringPool()
    packed = Packed(Column.of_values(values, pool))
    rows = np.asarray(data.draw(st.lists(st.integers(0, len(values) - 1), min_size=1, max_size=14)), dtype=np.int64)
    every = data.draw(st.booleans()) and len(rows) == len(values)
    pos = np.asarray(
        sorted(data.draw(st.sets(st.integers(0, len(rows) - 1), min_size=len(written), max_size=len(written))))
        if len(written) <= len(rows)
        else [],
        dtype=np.int64,
    )
    part = Column.of_values(written[: len(pos)], pool) if len(pos) else None
    expected = packed.unpack(None if every else rows)
    if part is not None:
        expected.put(pos, part)
    moved = packed.moved(None if every else rows, pos if part is not None else None, part)
    as_bits = lambda vs: [(type(v), math.copysign(1, v), v) if type(v) is float else (type(v), v) for v in vs]
    if moved is None:  # only a column of bits, or one that becomes booleans alone
        assert packed.bits is not None or all(type(v) is bool for v in expected.to_values())
        return
    assert as_bits(moved.unpack().to_values()) == as_bits(expected.to_values())
    assert moved.n == len(expected) and moved.nbytes >= 64
    some = np.asarray(data.draw(st.lists(st.integers(0, len(expected) - 1), max_size=8)), dtype=np.int64)
    assert as_bits(moved.unpack(some).to_values()) == as_bits(expected.take(some).to_values())


_FRESH = itertools.count()
_COLUMN_VALUES = st.sampled_from(
    [
        "true",
        "false",
        "0",
        "1",
        "-7",
        "9223372036854775807",
        "1.0",
        "-0.0",
        "2.5",
        '"x"',
        '"X"',
        '""',
        "undefined",
        "error",
        "{1, 2}",
        "[q = 1]",
        "a + 1",
        'absTime("2024-01-01T00:00:00Z")',
        "relTime(5)",
    ]
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(_COLUMN_VALUES, min_size=3, max_size=3), min_size=1, max_size=6),
    st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_columns_hold_each_ads_literal_or_expression(rows, drop_c):
    """A table's column gives each row what its ad holds: the literal's value with its type,
    Undefined where the ad lacks the name, the expression node itself otherwise -- read
    from ads in dicts and from the same ads in shared layouts (literals kept bare, the
    layout template's too), as the matchmaker keeps slot ads."""
    from classad import ast
    from classad.columnar.table import HOLDS_EXPR, HOLDS_LITERAL, HOLDS_NOTHING

    k = next(_FRESH)  # names of this example alone: its first ad is its layout's template
    texts = [f"[a{k} = {a}; b{k} = {b}" + ("]" if drop else f"; c{k} = {c}]") for (a, b, c), drop in zip(rows, drop_c)]
    ads = [ClassAd(t) for t in texts]
    for table in (AdTable([ClassAd(t) for t in texts]), AdTable([ClassAd(t).compact() for t in texts])):
        for name in (f"a{k}", f"b{k}", f"c{k}", "missing"):
            col = table.column(name)
            got = col.values.to_values()
            for r, ad in enumerate(ads):
                node = ad.lookup_node(name)
                if node is None:
                    assert col.holds[r] == HOLDS_NOTHING and got[r] is UNDEFINED
                elif type(node) is ast.Literal:
                    assert col.holds[r] == HOLDS_LITERAL
                    assert type(got[r]) is type(node.value) and repr(got[r]) == repr(node.value)
                else:
                    assert col.holds[r] == HOLDS_EXPR and col.nodes[col.group[r]] == node


def _payloads(col: Column) -> tuple:
    """Everything a column holds, payloads made (zeros where it held none), reals by bits."""
    return (
        col.kind.tolist(),
        col.i.tolist(),
        col.f.view(np.int64).tolist(),
        col.s.tolist(),
        None if col.o is None else [id(x) for x in col.o.tolist()],
    )


def _without_zero_payloads(col: Column) -> Column:
    """``col`` with its real and string payloads dropped where they are zero on every row
    (-0.0 is not zero by bits): what the engine builds for columns that never use them."""
    f, s = col.f, col.s
    return Column(
        col.kind.copy(),
        col.i.copy(),
        None if not f.view(np.int64).any() else f.copy(),
        None if not s.any() else s.copy(),
        None if col.o is None else col.o.copy(),
        col.pool,
    )


_LAZY_VALUES = st.one_of(
    st.booleans(),
    st.sampled_from([0, 1, -1, 7]),
    st.sampled_from([0.0, -0.0, 1.0, 2.5]),
    st.sampled_from(["", "a", "A"]),
    st.sampled_from([UNDEFINED, ERROR]),
)


@settings(max_examples=150, deadline=None)
@given(
    a=st.lists(_LAZY_VALUES, min_size=1, max_size=8),
    b=st.lists(_LAZY_VALUES, min_size=1, max_size=8),
    data=st.data(),
)
def test_columns_without_zero_payloads_behave_as_with_them(a, b, data):
    """A column may hold no real or string payload when it is zero on every row (booleans,
    integers).  Taking, putting, copying, packing and every operator give the same values
    and the same payloads as for the column with the zeros written out: ``1``, ``1.0``,
    ``true``, ``0.0`` and ``-0.0``, strings, Undefined and Error alike."""
    from classad.columnar import ops

    pool = StringPool()
    n = len(a)
    b = (b * n)[:n]
    eager_a, eager_b = Column.of_values(a, pool), Column.of_values(b, pool)
    rows = np.asarray(data.draw(st.lists(st.integers(0, n - 1), max_size=n)), dtype=np.int64)
    pos = np.asarray(sorted(set(data.draw(st.lists(st.integers(0, n - 1), max_size=n)))), dtype=np.int64)

    def lazy(col: Column) -> Column:
        return _without_zero_payloads(col)

    def eager(col: Column) -> Column:
        return col.copy()

    expected = None
    for fa, fb in itertools.product((eager, lazy), repeat=2):
        # Each operation on columns of its own: reading a payload makes it.
        put = fa(eager_a)
        put.put(pos, fb(eager_b).take(pos))
        got = [
            _payloads(fa(eager_a).take(rows)),
            _payloads(fa(eager_a).copy()),
            _payloads(put),
            _payloads(Packed(fa(eager_a)).unpack()),
            _payloads(Packed(fa(eager_a)).unpack(rows)),
            fa(eager_a).is_true().tolist(),
            [v.view(np.int64).tolist() if v.dtype == np.float64 else v.tolist() for v in fa(eager_a).numbers()],
            _payloads(ops.truth(fa(eager_a))),
            _payloads(ops.unary("!", fa(eager_a))[0]),
            _payloads(ops.unary("-", fa(eager_a))[0]),
            _payloads(ops.meta_equal(fa(eager_a), fb(eager_b), False)[0]),
            _payloads(ops.compare("==", fa(eager_a), fb(eager_b))[0]),
            _payloads(ops.compare("<", fa(eager_a), fb(eager_b))[0]),
            _payloads(ops.arithmetic("+", fa(eager_a), fb(eager_b))[0]),
            rank_array(fa(eager_a)).view(np.int64).tolist(),
            knob_rank_array(fa(eager_a)).view(np.int64).tolist(),
        ]
        if expected is None:
            expected = got
        else:
            assert got == expected


_HANDED_OUT = [
    "Memory",
    "(Memory)",
    "MY.Memory",
    "Flag",
    "ifThenElse(true, Memory, 0)",
    "Flag ? Memory : Memory",
    "Flag || Flag",
    "Memory ?: 1",
    "Name",
    "Req",
]


@settings(max_examples=60, deadline=None)
@given(
    memory=st.lists(st.sampled_from(["1", "2.5", '"m"', "true", "undefined", "Flag"]), min_size=1, max_size=5),
    flag=st.sampled_from(["true", "false", "1"]),
    expr=st.sampled_from(_HANDED_OUT),
    fixed_req=st.sampled_from(["TARGET.Memory", "TARGET.Flag", "(TARGET.Memory)", "TARGET.Memory + 0"]),
    every=st.booleans(),
)
def test_results_are_the_callers_own(memory, flag, expr, fixed_req, every):
    """Whatever the evaluation hands back (a bare attribute reference, a shared result, a
    row-only value, the fixed ad's attribute naming the rows' one) is the caller's to
    write on: scribbling over it changes nothing the table gives afterwards."""
    table = AdTable(
        [ClassAd(f'[Memory = {m}; Flag = {flag}; Name = "n{k}"; Req = Memory]') for k, m in enumerate(memory)]
    )
    fixed = ClassAd(f"[Req = {fixed_req}; Memory = 4]")
    rows = None if every else np.arange(0, len(memory), 2)
    calls = [
        lambda: evaluate_column(expr, table, rows=rows),
        lambda: evaluate_column(expr, table, other=fixed, rows=rows, shared=True),
        lambda: evaluate_attribute(table, "req", rows=rows),
        lambda: evaluate_attribute(table, "memory", rows=rows),
        lambda: evaluate_attribute(table, "req", row_side="target", other=fixed, rows=rows),
        lambda: evaluate_attribute(table, "req", row_side="target", other=fixed, rows=rows, shared=True),
    ]
    for call in calls:
        for _ in range(3):  # fresh, then from whatever the table kept
            col = call()
            before = repr(col.to_values())
            for a in (col.kind, col.i, col.f, col.s):
                a[:] = 3
            assert repr(call().to_values()) == before


_FLT_MAX = 3.4028234663852886e38

_RANKED = st.one_of(
    st.booleans(),
    st.integers(-(1 << 63), (1 << 63) - 1),
    st.sampled_from([0, 16777217, -(1 << 63), (1 << 63) - 1, 9007199254740993, (1 << 54) + (1 << 30) + 1]),
    st.floats(allow_nan=True),
    st.sampled_from([0.0, -0.0, 3.5e38, -1e39, float("inf"), 16777217.0]),
    # The doubles next to single precision's largest number: just past it (infinity, though
    # rounding to nearest gives the largest number) and just within it.
    st.sampled_from([_FLT_MAX + 2.0**75, -(_FLT_MAX + 2.0**75), _FLT_MAX, _FLT_MAX - 2.0**75]),
    st.sampled_from(["x", UNDEFINED, ERROR]),
)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(_RANKED, min_size=1, max_size=8), same_kind=st.booleans())
def test_rank_arrays_follow_each_value(values, same_kind):
    """Each row's rank is its own number's, whether the column holds one kind (a pool's
    integer ``Rank``) or several: ``rank_array`` gives int, real and bool (0/1) values as
    doubles (NaN kept, a zero as +0.0), else 0.0; ``knob_rank_array`` rounds the double to
    single precision (beyond its range: infinity of the sign), -inf for a non-number."""
    if same_kind:
        values = [v for v in values if type(v) is type(values[0])] or values[:1]
    col = Column.of_values(values, StringPool())

    def number(v):
        return float(v) if type(v) in (bool, int, float) else None

    want_rank = [0.0 if number(v) is None else (number(v) + 0.0 if number(v) == 0.0 else number(v)) for v in values]
    with np.errstate(over="ignore"):
        want_knob = [-math.inf if number(v) is None else float(np.float32(number(v))) for v in values]
    for k, v in enumerate(values):
        x = number(v)
        if x is not None and not math.isinf(x) and abs(x) > 3.4028234663852886e38:
            want_knob[k] = math.copysign(math.inf, x)
    bits = lambda a: [struct.pack("<d", x) for x in a]
    assert bits(rank_array(col).tolist()) == bits(want_rank)
    assert bits(knob_rank_array(col).tolist()) == bits(want_knob)
    single = knob_rank_single(col)
    assert single.dtype == np.float32
    assert bits(single.astype(np.float64).tolist()) == bits(want_knob)


def test_knob_ranks_past_single_precision_beside_a_nan():
    """By hand: a NaN stays NaN, the double just past single precision's largest number is
    infinity of its sign (rounding alone would give the largest number), a string -inf."""
    pool = StringPool()
    col = Column.of_values([float("nan"), _FLT_MAX + 2.0**75, -(_FLT_MAX + 2.0**75), "x", 2], pool)
    for got in (knob_rank_array(col), knob_rank_single(col).astype(np.float64)):
        assert math.isnan(got[0])
        assert got[1:].tolist() == [math.inf, -math.inf, -math.inf, 2.0]
    assert float(np.float32(_FLT_MAX + 2.0**75)) == _FLT_MAX  # what the check is for


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(
        st.one_of(
            st.booleans(),
            st.integers(-(1 << 63), (1 << 63) - 1),
            st.floats(allow_nan=False),
            st.sampled_from(["x", "X", ""]),
            st.sampled_from([UNDEFINED, ERROR]),
        ),
        min_size=1,
        max_size=8,
    ),
    one_kind=st.booleans(),
    data=st.data(),
)
def test_values_at_are_the_values_of_those_rows(values, one_kind, data):
    """``values_at(rows)`` is ``[value(r) for r in rows]``: the same types (a boolean
    stays a bool, never the int 1) and values, for a column of one kind or of many."""
    if one_kind:
        values = [v for v in values if type(v) is type(values[0])] or values[:1]
    col = Column.of_values(values, StringPool())
    rows = data.draw(st.lists(st.integers(0, len(values) - 1), max_size=10))
    got = col.values_at(rows)
    want = [values[r] for r in rows]
    assert [type(v) for v in got] == [type(v) for v in want]
    assert [struct.pack("<d", v) if type(v) is float else v for v in got] == [
        struct.pack("<d", v) if type(v) is float else v for v in want
    ]


def test_remembered_calls_answer_as_the_function_does():
    """``member(x, list)`` for the rows' lists and a fixed x = 2, through CallResults:
    rows 0 and 2 hold equal lists of literals {1, 2} (one remembered call answers both),
    row 1 holds {3}, row 3 the list {x} whose element is not a literal (never remembered:
    called each time).  By hand: member(2, {1, 2}) = true, member(2, {3}) = false,
    member(2, {x}) with x undefined = false."""
    from classad.columnar.column import Const
    from classad.columnar.memo import CallResults
    from classad.parser import parse_expr

    counted, calls = _counting_member()
    lists = [parse_expr(t) for t in ("{1, 2}", "{3}", "{1, 2}", "{x}")]
    ad = ClassAd("[]")
    values = [evaluate_column(node, _rows("[]"), state=new_state()).value(0) for node in lists]
    col = Column.of_values(values, StringPool())
    store = CallResults()
    ctx = type("Ctx", (), {"ad": ad, "state": new_state()})()
    first = store.calls(counted, ctx, [Const(2), col], [0, 1, 2, 3])
    assert first == [True, False, True, False]
    assert len(calls) == 3  # {1, 2} once for rows 0 and 2
    again = store.calls(counted, ctx, [Const(2), col], [3, 2, 1, 0])
    assert again == [False, True, False, True]
    assert len(calls) == 4  # only the list that is not of literals is called again


def test_calls_on_a_column_of_lists_once_per_list():
    """``member(2, L)`` over a column of list objects (what a family's list hole gives):
    rows 0 and 3 hold one object {1, 2}, row 1 another object of the same literals, row 2
    {3}.  By hand: member(2, {1, 2}) = true, member(2, {3}) = false; the function is called
    once per distinct list of literals (twice), and not again for a second request.  A
    list whose element is not a literal ({x}), a row that is not a list, or a function
    outside the list functions leaves the column to the general path (None)."""
    from classad.columnar.column import Const
    from classad.columnar.compile import _calls_on_lists
    from classad.columnar.memo import CallResults
    from classad.functions import registry
    from classad.parser import parse_expr

    counted, calls = _counting_member()
    state = new_state()
    ctx = type("Ctx", (), {"ad": ClassAd("[]"), "state": state})()

    def lists(*texts: str) -> list:
        return [evaluate_column(parse_expr(t), _rows("[]"), state=new_state()).value(0) for t in texts]

    one, same, other, odd = lists("{1, 2}", "{1, 2}", "{3}", "{x}")
    pool = StringPool()
    col = Column.of_values([one, same, other, one], pool)
    store = CallResults()
    got = _calls_on_lists(store, counted, ctx, [Const(2), col], pool)
    assert got is not None and got.to_values() == [True, True, False, True]
    assert len(calls) == 2
    again = _calls_on_lists(store, counted, ctx, [Const(2), col.take(np.array([2, 0]))], pool)
    assert again is not None and again.to_values() == [False, True]
    assert len(calls) == 2
    assert _calls_on_lists(store, counted, ctx, [Const(2), Column.of_values([one, odd], pool)], pool) is None
    assert _calls_on_lists(store, counted, ctx, [Const(2), Column.of_values([one, 3], pool)], pool) is None
    strcat = registry.lookup("strcat")
    assert _calls_on_lists(store, strcat, ctx, [Const("a"), col], pool) is None


@settings(max_examples=100, deadline=None)
@given(
    make=st.sampled_from(["bools", "broadcast", "table", "unpacked", "sum"]),
    n=st.integers(1, 6),
    puts=st.lists(st.tuples(st.integers(0, 5), st.sampled_from([True, 3, 2.5, "x", UNDEFINED])), max_size=3),
    data=st.data(),
)
def test_a_column_made_of_one_kind_says_so_until_written(make, n, puts, data):
    """A column made all of one kind (a comparison's booleans, a broadcast value, a table
    column's rows, an unpacked result, an integer sum) answers ``uniform`` from its mark;
    taken, copied or written with ``put`` it still answers what its kinds are."""
    from classad.columnar import ops
    from classad.columnar.column import Const

    pool = StringPool()
    if make == "bools":
        col = Column.of_bools(np.arange(n) % 2 == 0, pool)
    elif make == "broadcast":
        col = Column.broadcast("y", n, pool)
    elif make == "table":
        table = _rows(*[f"[a = {i}]" for i in range(n)])
        col = table.column("a").take(np.arange(n))
    elif make == "unpacked":
        col = Packed(Column.of_values([1.5] * n, pool)).unpack(np.arange(n))
    else:
        col, _ = ops.arithmetic("+", Column.of_values(list(range(n)), pool), Column.broadcast(1, n, pool))

    def truth_of(c: Column) -> int:
        kinds = set(c.kind.tolist())
        return kinds.pop() if len(kinds) == 1 else -1

    assert col.uni >= 0 and ops.uniform(col) == truth_of(col)
    for pos, value in puts:
        if pos < n:
            col.put(np.array([pos]), Const(value))
        col = data.draw(st.sampled_from([col, col.copy(), col.take(np.arange(n))]))
        assert ops.uniform(col) == truth_of(col)


_reals_ = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e308, -1e308, 1.5]),
)


@settings(max_examples=150, deadline=None)
@given(
    kinds_=st.tuples(st.sampled_from(["int", "bool", "real"]), st.sampled_from(["int", "bool", "real"])),
    op=st.sampled_from(["+", "-", "*"]),
    n=st.integers(1, 6),
    data=st.data(),
)
def test_arithmetic_on_numbers_of_one_kind_each_is_the_scalar_operators(kinds_, op, n, data):
    """``+ - *`` of two columns each all ints, all booleans or all reals (the fast paths)
    give the scalar operators' value on every row (an overflow to +infinity is Error)."""
    from classad.columnar import ops
    from classad.operators import BINARY

    draw = {"int": st.integers(-(1 << 63), (1 << 63) - 1), "bool": st.booleans(), "real": _reals_}
    left = [data.draw(draw[kinds_[0]]) for _ in range(n)]
    right = [data.draw(draw[kinds_[1]]) for _ in range(n)]
    pool = StringPool()
    got, fallback = ops.arithmetic(op, Column.of_values(left, pool), Column.of_values(right, pool))
    assert fallback is None
    want = [BINARY[op](x, y) for x, y in zip(left, right)]
    assert [struct.pack("<d", v) if type(v) is float else (type(v), v) for v in got.to_values()] == [
        struct.pack("<d", v) if type(v) is float else (type(v), v) for v in want
    ]


_NUMBERS = st.one_of(
    st.booleans(),
    st.integers(-(1 << 63), (1 << 63) - 1),
    st.sampled_from([(1 << 63) - 1, -(1 << 63), 0, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.7976931348623157e308, -0.0, 0.5]),
)


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(st.tuples(_NUMBERS, _NUMBERS), min_size=1, max_size=8),
    op=st.sampled_from(["+", "-", "*"]),
)
def test_arithmetic_of_mixed_numbers_is_the_scalar_operator_row_by_row(pairs, op):
    """``+ - *`` of two columns of numbers of mixed kinds (booleans, 64-bit integers at
    their limits, reals with NaN, infinities and overflow) give on each row what the
    scalar operator gives for that row's two values: wrapped integers where both are
    integers or booleans, reals elsewhere, Error where the real result is +infinity."""
    from classad.columnar import ops
    from classad.operators import BINARY

    pool = StringPool()
    a = Column.of_values([x for x, _ in pairs], pool)
    b = Column.of_values([y for _, y in pairs], pool)
    got, fallback = ops.arithmetic(op, a, b)
    assert fallback is None
    want = [BINARY[op](x, y) for x, y in pairs]

    def same(v: object) -> object:
        return ("real", struct.pack("<d", v)) if type(v) is float else (type(v).__name__, v)

    assert [same(v) for v in got.to_values()] == [same(v) for v in want]


def _counting_member() -> tuple[Any, list]:
    """The ``member`` function's registry entry, wrapped to record the arguments of each
    call (in the list returned with it); it keeps the list functions' module, so the memo
    treats it as one of them."""
    from classad.functions import registry

    entry = registry.lookup("member")
    calls: list = []
    impl = entry.impl

    class Counting:
        __module__ = impl.__module__

        def __call__(self, ctx: Any, *args: Any) -> Any:
            calls.append(args)
            return impl(ctx, *args)

    return type("Entry", (), {"impl": Counting(), "name": entry.name})(), calls


def test_and_names_and_combination_ids_walk_the_same_combinations():
    """Both helpers look through parentheses: ``_and_names`` lists the names of a ``&&`` of
    names left to right (None for anything else in it, or a single name); ``_combination_ids``
    gives the ``&&``, ``||`` and ``!`` nodes combined directly, stopping at anything else."""
    from classad import ast
    from classad.columnar.compile import _and_names, _combination_ids
    from classad.parser import parse_expr

    assert _and_names(parse_expr("A && (B && C) && (D)"), None) == ["a", "b", "c", "d"]
    assert _and_names(parse_expr("(A) && My.B"), None) is None  # a scoped name
    assert _and_names(parse_expr("A || B"), None) is None
    assert _and_names(parse_expr("(A)"), None) is None  # one name only
    assert _and_names(parse_expr("A && (B || C)"), None) is None

    node = parse_expr("!(A && B) || (C > 1 && !D)")
    combined = _combination_ids(node)
    # By hand: the ||, the ! and && under it, the && on the right and its !; not A, B, C > 1, D.
    top = node
    assert isinstance(top, ast.Binary) and top.op == "||"
    neg = top.left
    assert isinstance(neg, ast.Unary)
    left_and = neg.operand.inner if isinstance(neg.operand, ast.Paren) else neg.operand
    right_and = top.right.inner if isinstance(top.right, ast.Paren) else top.right
    expected = {id(top), id(neg), id(left_and), id(right_and), id(right_and.right)}
    assert combined == expected
    assert _combination_ids(parse_expr("A + B")) == set()
