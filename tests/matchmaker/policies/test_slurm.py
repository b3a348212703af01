"""Slurm multifactor and Fair Tree: the worked examples S1-S3 and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from matchmaker.policies.slurm import (
    Assoc,
    SlurmParams,
    age_factor,
    decay_per_second,
    decayed,
    fair_tree,
    interval_usage,
    job_priority,
    level_fairshare,
)


def s1_tree() -> Assoc:
    a = Assoc("A", 60, children=[Assoc("a1", 1, 600, is_user=True), Assoc("a2", 1, 0, is_user=True)])
    b = Assoc("B", 40, children=[Assoc("b1", 1, 200, is_user=True)])
    return Assoc("root", children=[a, b])


def test_s1_fair_tree():
    root = s1_tree()
    a, b = root.children
    assert level_fairshare(a, root.children, 800) == pytest.approx(0.8)
    assert level_fairshare(b, root.children, 800) == pytest.approx(1.6)
    fs = fair_tree(root)
    assert fs == pytest.approx({"b1": 1.0, "a2": 2 / 3, "a1": 1 / 3})
    p = SlurmParams(weight_fairshare=10000)
    assert [job_priority(p, fairshare=fs[u]) for u in ("b1", "a2", "a1")] == [10000, 6666, 3333]


def test_s2_ties():
    c = Assoc("C", children=[Assoc(f"c{i}", 1, u, is_user=True) for i, u in enumerate((100, 100, 0, 200), 1)])
    fs = fair_tree(Assoc("root", children=[c]))
    assert fs == pytest.approx({"c3": 1.0, "c1": 0.75, "c2": 0.75, "c4": 0.25})


def test_s2_decay():
    assert decay_per_second(604800) == pytest.approx(0.99999885417, abs=1e-11)
    assert decayed(1000, 604800, 604800) == pytest.approx(500.073, abs=1e-3)
    assert decayed(1000, 2 * 604800, 604800) == pytest.approx(250.073, abs=1e-3)
    assert interval_usage(4, 300, 604800) == pytest.approx(1199.588, abs=1e-3)


def test_s3_job_priority():
    p = SlurmParams(weight_age=1000, weight_fairshare=10000, weight_qos=2000)
    x = job_priority(p, age=age_factor(3.5 * 86400), fairshare=1 / 3, qos=100 / 100)
    y = job_priority(p, age=age_factor(10 * 86400), fairshare=1.0, qos=20 / 100, nice=100)
    z = job_priority(p, age=age_factor(0), fairshare=2 / 3, qos=20 / 100)
    assert (x, y, z) == (5833, 11300, 7066)
    assert sorted("XYZ", key=lambda j: -{"X": x, "Y": y, "Z": z}[j]) == ["Y", "Z", "X"]


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=8))
def test_fair_tree_ranks_lie_in_range_and_follow_usage(usages):
    users = [Assoc(f"u{i}", 1, u, is_user=True) for i, u in enumerate(usages)]
    fs = fair_tree(Assoc("root", children=users))
    n = len(users)
    assert all(1 / n - 1e-12 <= v <= 1.0 for v in fs.values())
    for a in users:
        for b in users:
            if a.usage < b.usage:
                assert fs[a.name] >= fs[b.name]


@given(st.floats(-1e6, 1e9), st.floats(0, 1), st.floats(0, 1e5))
def test_priority_is_a_positive_integer(nice, fs, w):
    v = job_priority(SlurmParams(weight_fairshare=w), fairshare=fs, nice=nice)
    assert v >= 1 and v == int(v)
