"""DIRAC TaskQueue priorities: the worked examples D1-D3 and properties."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, strategies as st

from matchmaker.policies.dirac import (
    Slice,
    TaskQueue,
    correction,
    first_probability,
    lottery_keys,
    lottery_order,
    real_priority,
    tq_priorities,
)

D1 = [
    TaskQueue("TQ1", "alice", "user", (1, 1, 1)),
    TaskQueue("TQ2", "alice", "user", (1, 5)),
    TaskQueue("TQ3", "bob", "user", (1, 1)),
    TaskQueue("TQ4", "x", "mc", (1, 1)),
    TaskQueue("TQ5", "y", "mc", (2, 2)),
]
SHARES = {"user": 10000, "mc": 300}


def test_d1_shares_to_tq_priorities():
    p = tq_priorities(D1, SHARES, frozenset({"mc"}))
    assert p == pytest.approx({"TQ1": 1250, "TQ2": 3750, "TQ3": 5000, "TQ4": 100, "TQ5": 200})


def test_d1_grouping_variant():
    tqs = [TaskQueue("TQ1", "alice", "user", (1, 1, 1), "k"), TaskQueue("TQ2", "alice", "user", (1, 5), "k")] + D1[2:]
    p = tq_priorities(tqs, SHARES, frozenset({"mc"}))
    assert p["TQ1"] == pytest.approx(5000) and p["TQ2"] == pytest.approx(5000)


def test_d1_job_priority_hack():
    assert [real_priority(x) for x in (0, 1, 5, 9, 10, 12)] == [1e-5, 1, 5, 9, 1e6, 1e6]


@pytest.mark.parametrize(
    "ps, expect",
    [
        ((1, 2), (0.25, 0.75)),
        ((1, 3), (1 / 6, 5 / 6)),
        ((1250, 3750, 5000), (3 / 32, 11 / 32, 18 / 32)),
        ((7, 7, 7), (1 / 3, 1 / 3, 1 / 3)),
    ],
)
def test_d2_lottery_exact(ps, expect):
    assert [first_probability(ps, i) for i in range(len(ps))] == pytest.approx(expect, abs=1e-4)


def test_d2_lottery_monte_carlo():
    rng = random.Random(20241017)
    names = ["TQ1", "TQ2", "TQ3"]
    prio = {"TQ1": 1250, "TQ2": 3750, "TQ3": 5000}
    n = 200_000
    wins = dict.fromkeys(names, 0)
    for _ in range(n):
        wins[lottery_order(names, prio, rng)[0]] += 1
    for name, expect in zip(names, (3 / 32, 11 / 32, 18 / 32)):
        assert wins[name] / n == pytest.approx(expect, abs=0.003)


def test_d2_fixed_draws():
    keys = lottery_keys([1250, 3750, 5000], [0.5, 0.9, 0.2])
    assert keys == pytest.approx([4e-4, 2.4e-4, 4e-5])
    assert sorted(["TQ1", "TQ2", "TQ3"], key=lambda n: keys[int(n[-1]) - 1]) == ["TQ3", "TQ2", "TQ1"]


D3_SHARES = {"user": 10000, "mc": 300, "data": 40000}
D3_SLICES = [(Slice(80, 2), {"user": 3000, "mc": 1000, "data": 6000}), (Slice(20, 5), {"user": 500, "data": 1500})]


def test_d3_corrector():
    f = correction(D3_SHARES, D3_SLICES, max_global=3)
    corrected = {g: D3_SHARES[g] * f[g] for g in D3_SHARES}
    assert corrected["user"] == pytest.approx(6892.0, abs=0.1)
    assert corrected["data"] == pytest.approx(50894.6, abs=0.1)
    assert corrected["mc"] == pytest.approx(420, abs=1e-6)
    compat = correction(D3_SHARES, D3_SLICES, max_global=3, compat=True)
    assert D3_SHARES["mc"] * compat["mc"] == pytest.approx(900)
    assert D3_SHARES["mc"] * correction(D3_SHARES, D3_SLICES, max_global=5, compat=True)["mc"] == pytest.approx(1500)


tq_lists = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["g1", "g2"]),
        st.lists(st.integers(1, 9), min_size=1, max_size=4),
    ),
    min_size=1,
    max_size=8,
)


@given(tq_lists, st.floats(10, 1e5))
def test_tq_priorities_of_an_entity_sum_to_its_share(rows, share):
    tqs = [TaskQueue(f"t{i}", o, g, tuple(p)) for i, (o, g, p) in enumerate(rows)]
    prio = tq_priorities(tqs, {"g1": share, "g2": share})
    for g in ("g1", "g2"):
        owners = {t.owner for t in tqs if t.group == g}
        for o in owners:
            total = sum(prio[t.name] for t in tqs if t.group == g and t.owner == o)
            assert total == pytest.approx(share / len(owners), rel=1e-9)


@pytest.mark.slow
@given(st.lists(st.floats(0.01, 1e4), min_size=2, max_size=5))
def test_lottery_probabilities_sum_to_one(ps):
    assert sum(first_probability(ps, i, steps=4000) for i in range(len(ps))) == pytest.approx(1, abs=1e-2)
