"""A table's comparisons of its own columns with a number, kept for its later runs
(classad.columnar.table: ``AdTable.number_bools``).

Every answer must be what comparing afresh gives (``ops.compare_number_bools``): for
the same number written as another type (``2**53`` and ``2.0**53`` differ on
``2**53 + 1``), for either way round (``3 < x`` kept as ``x > 3``), and for columns that
are not the table's own (made for one run and gone: another may get the same id).
"""

from __future__ import annotations

import gc
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from classad import ClassAd
from classad.columnar import AdTable, ops
from classad.parser import parse_expr

OPS = ["<", "<=", ">", ">=", "==", "!="]
BIG = 2**53
# Equal numbers of other types are told apart: on an integer column a real is compared
# as reals, so BIG + 1 is greater than the integer BIG but not than the real BIG.
VALUES = [0, 1, 1.0, True, False, 0.0, -1, 2, 2.5, BIG, float(BIG), BIG + 1, -BIG, 1e300, -0.0, 3]


def _table(memory: list, reals: list) -> AdTable:
    ads = []
    for m, r in zip(memory, reals):
        ad = ClassAd("[]")
        ad.set_node("Memory", parse_expr(str(m)))
        ad.set_node("Load", parse_expr(repr(float(r))))
        ads.append(ad)
    return AdTable(ads)


ints_st = st.lists(st.sampled_from([0, 1, 2, 3, -1, BIG, BIG + 1, BIG - 1, -BIG - 1]), min_size=1, max_size=12)
asks_st = st.lists(st.tuples(st.sampled_from(OPS), st.sampled_from(VALUES), st.booleans(), st.booleans()), max_size=40)


@settings(max_examples=150, deadline=None)
@given(ints_st, asks_st, st.randoms(use_true_random=False))
def test_kept_comparisons_are_fresh_ones(memory: list, asks: list, rnd: random.Random) -> None:
    reals = [rnd.choice([0.5, 2.0, 3.25, -1.0, 1e300]) for _ in memory]
    table = _table(memory, reals)
    for op, value, swapped, real in asks:
        col = table.column("load" if real else "memory").values
        got = table.number_bools(op, col, value, swapped)
        want = ops.compare_number_bools(op, col, value, swapped)
        assert (got is None) == (want is None)
        if want is not None:
            assert got is not None and got.dtype == bool
            assert got.tolist() == want.tolist(), (op, value, swapped, real)


def test_same_number_of_another_type() -> None:
    table = _table([BIG + 1, BIG, 0], [0.0, 0.0, 0.0])
    col = table.column("memory").values
    as_int = table.number_bools(">", col, BIG, False)
    as_real = table.number_bools(">", col, float(BIG), False)
    assert as_int is not None and as_real is not None
    assert as_int.tolist() == [True, False, False]
    assert as_real.tolist() == [False, False, False]  # BIG + 1 read as a real is BIG


def test_either_way_round() -> None:
    table = _table([1, 2, 3], [0.0, 0.0, 0.0])
    col = table.column("memory").values
    assert table.number_bools("<", col, 2, True).tolist() == [False, False, True]  # 2 < x
    assert table.number_bools(">", col, 2, False).tolist() == [False, False, True]  # x > 2, as kept
    assert table.number_bools("<=", col, 2, True).tolist() == [False, True, True]  # 2 <= x
    assert table.number_bools("<", col, 2, False).tolist() == [True, False, False]  # x < 2


def test_kept_answers_are_read_only() -> None:
    table = _table([1, 2, 3], [0.0, 0.0, 0.0])
    got = table.number_bools(">", table.column("memory").values, 1, False)
    assert got is not None
    with pytest.raises(ValueError):
        got[0] = True


def test_columns_not_the_tables_are_compared_afresh() -> None:
    """A column made for one run (taken at rows, computed) is not kept: once it is gone,
    another may be made at the same address, and must not be given its answers."""
    n = 64
    table = _table(list(range(n)), [0.0] * n)
    own = table.column("memory")
    rnd = random.Random(5)
    for _ in range(200):
        order = np.array(rnd.sample(range(n), n))
        col = own.take(order)  # every row's value, in another order: a column of its own
        got = table.number_bools(">=", col, 32, False)
        assert got is not None
        assert got.tolist() == (order >= 32).tolist()
        del col, got
        gc.collect()
