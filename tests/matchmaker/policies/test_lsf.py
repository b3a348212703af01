"""LSF fair share: the worked examples L1-L3 and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from matchmaker.policies.lsf import LsfParams, LsfUsage, dispatch_sequence, dynamic_priority, pick_leaf, tenth_after

H = 3600.0


def test_l1_bhpart_example():
    u1 = LsfUsage(cpu_hours=9.6 / H, run_hours=5108 / H, job_slots=1)
    u2 = LsfUsage()
    others = LsfUsage(cpu_hours=598.1 / H, run_hours=19556 / H, job_slots=5)
    p1, p2, p3 = dynamic_priority(8, u1), dynamic_priority(2, u2), dynamic_priority(1, others)
    assert p1 == pytest.approx(1.14366, abs=1e-5)
    assert p2 == pytest.approx(0.66667, abs=1e-5)
    assert p3 == pytest.approx(0.045623, abs=1e-6)
    assert p1 > p2 > p3


def test_l2_decay():
    cpu = 10 * tenth_after(5, 5)
    assert cpu == pytest.approx(1.0, abs=1e-3)
    assert dynamic_priority(10, LsfUsage(cpu_hours=cpu)) == pytest.approx(2.70270, abs=1e-3)
    cpu_half = 10 * tenth_after(2.5, 5)
    assert cpu_half == pytest.approx(3.16228, abs=1e-3)
    assert dynamic_priority(10, LsfUsage(cpu_hours=cpu_half)) == pytest.approx(1.91805, abs=1e-3)


def test_l2_dispatch_sequence():
    accounts = {
        "A": (10, LsfUsage(cpu_hours=1.0)),
        "B": (10, LsfUsage(cpu_hours=2.8, run_hours=3.0, job_slots=2)),
        "C": (20, LsfUsage(cpu_hours=2.0, run_hours=2.0, job_slots=4)),
    }
    assert dynamic_priority(10, accounts["B"][1]) == pytest.approx(0.76570, abs=1e-5)
    assert dynamic_priority(20, accounts["C"][1]) == pytest.approx(1.12360, abs=1e-5)
    seq = dispatch_sequence(accounts, {"A": 10, "B": 10, "C": 10}, 5)
    assert seq == ["A", "A", "C", "A", "C"]


def test_l3_static_floor():
    p = LsfParams(cpu_time_factor=0, run_time_factor=0, run_job_factor=0)
    heavy = LsfUsage(cpu_hours=1e6, run_hours=1e5, job_slots=500)
    assert dynamic_priority(50, heavy, p) == pytest.approx(5000)
    assert dynamic_priority(30, LsfUsage(), p) == pytest.approx(3000)


def test_l3_gpu_term():
    # (historical 0 + run 2 h) x 2 physical GPUs = 4 GPU-hours
    u = LsfUsage(cpu_hours=2, run_hours=2, job_slots=1, gpu_run_hours=4)
    add = LsfParams(gpu_run_time_factor=0.5, gpu_term="additive")
    den = LsfParams(gpu_run_time_factor=0.5)
    assert dynamic_priority(10, u, add) == pytest.approx(3.13636, abs=1e-5)
    assert dynamic_priority(10, u, den) == pytest.approx(0.92593, abs=1e-5)


def test_tree_walk_does_not_look_below_a_losing_group():
    children = {"": ["g1", "g2"], "g1": ["a", "b"], "g2": ["c"]}
    shares = {"g1": 10, "g2": 1, "a": 1, "b": 5, "c": 100}
    usage = {"a": LsfUsage(job_slots=3), "b": LsfUsage(job_slots=1), "c": LsfUsage()}
    # g1: 10/(3*(1+4)) = 0.667 > g2: 1/3; under g1, b: 5/6 > a: 1/12; c (100/3) is never seen
    assert pick_leaf(children, shares, usage, {"a", "b", "c"}) == "b"
    assert pick_leaf(children, shares, usage, {"c"}) == "c"


usages = st.builds(
    LsfUsage, cpu_hours=st.floats(0, 1e4), run_hours=st.floats(0, 1e4), job_slots=st.integers(0, 1000).map(float)
)


@given(usages, st.floats(1, 1e4), st.floats(0, 1e4))
def test_more_shares_never_lowers_priority(u, shares, extra):
    assert dynamic_priority(shares + extra, u) >= dynamic_priority(shares, u)


@given(usages, st.floats(1, 1e4))
def test_a_dispatch_never_raises_the_winner(u, shares):
    after = LsfUsage(cpu_hours=u.cpu_hours, run_hours=u.run_hours, job_slots=u.job_slots + 1)
    assert dynamic_priority(shares, after) < dynamic_priority(shares, u)


@given(st.floats(0, 100), st.floats(0, 100), st.floats(0.1, 50))
def test_decay_is_monotone(a, b, hist):
    lo, hi = sorted((a, b))
    assert tenth_after(hi, hist) <= tenth_after(lo, hist) <= 1.0
