"""Maui start priority: the worked examples M1-M3 and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from matchmaker.policies.maui import MauiParams, bucket_usage, cap, component, fs_delta, start_priority, xfactor


def test_m1_john():
    p = MauiParams(subweights={"USER": 1.0})
    prio = {
        j: start_priority({"SERV": {"QUEUETIME": q}, "CRED": {"USER": u}}, p)
        for j, q, u in (("j1", 10, 300), ("j2", 299, 0), ("j3", 311, 0), ("j4", 0, 0))
    }
    assert prio == {"j1": 310, "j2": 299, "j3": 311, "j4": 1}
    assert sorted(prio, key=lambda j: -prio[j]) == ["j3", "j1", "j2", "j4"]


M2 = MauiParams(
    subweights={"QUEUETIME": 10, "XFACTOR": 100, "QOS": 1}, caps={"QUEUETIME": 1000, "XFACTOR": 10, "SERV": 3000}
)


def test_m2_caps():
    xa = xfactor(1800, 3600)
    assert xa == pytest.approx(1.5)
    a = start_priority({"SERV": {"QUEUETIME": 30, "XFACTOR": xa}, "CRED": {"QOS": 10000}}, M2)
    xb = xfactor(120000, 14400)
    assert xb == pytest.approx(9.33333, abs=1e-5)
    b = start_priority({"SERV": {"QUEUETIME": 2000, "XFACTOR": xb}, "CRED": {"QOS": 0}}, M2)
    assert a == pytest.approx(10450)
    assert b == pytest.approx(3000)
    uncapped = MauiParams(subweights=M2.subweights)
    assert start_priority({"SERV": {"QUEUETIME": 2000, "XFACTOR": xb}}, uncapped) == pytest.approx(20933.33, abs=0.01)


def test_m2_xfactor_forms():
    assert xfactor(600, 60, 120) == pytest.approx(5.5)
    assert xfactor(600, 60, 120, form="manual") == pytest.approx(6.0)


M3 = MauiParams(weights={"FS": 100}, subweights={"FSUSER": 10}, fs_policy="DEDICATEDPS", fs_depth=4, fs_decay=0.5)


def _m3_usage():
    u = bucket_usage([10, 20, 40, 40], 0.5, 4)
    tot = bucket_usage([100, 100, 100, 100], 0.5, 4)
    return u, tot


def test_m3_fair_share():
    u, tot = _m3_usage()
    assert (u, tot) == (pytest.approx(35), pytest.approx(187.5))
    for target, expect in (("25", 6393.33), ("25-", 60), ("25+", 6393.33)):
        d = fs_delta(target, u, tot)
        prio = start_priority({"SERV": {"QUEUETIME": 60}, "FS": {"FSUSER": d}}, M3)
        assert prio == pytest.approx(expect, abs=0.01)
    pct = fs_delta("25", u, tot, percent_policy=True)
    assert pct == pytest.approx(0.25333, abs=1e-5)
    assert start_priority({"SERV": {"QUEUETIME": 60}, "FS": {"FSUSER": pct}}, M3) == pytest.approx(313.33, abs=0.01)


def test_m3_negative_case():
    w = {"FSUSER": 10, "FSGROUP": 20, "FSACCOUNT": 30, "FSQOS": 40}
    deltas = {
        "FSUSER": fs_delta("30", 25, 100),
        "FSGROUP": fs_delta(None, 10, 100),
        "FSACCOUNT": fs_delta("25", 35, 100),
        "FSQOS": fs_delta("10+", 25, 100),
    }
    assert deltas == {"FSUSER": 5, "FSGROUP": 0, "FSACCOUNT": -10, "FSQOS": 0}
    values = {"SERV": {"QUEUETIME": 60}, "FS": deltas}
    assert start_priority(values, MauiParams(weights={"FS": 100}, subweights=w)) == 1
    neg = MauiParams(weights={"FS": 100}, subweights=w, enable_neg_job_priority=True)
    assert start_priority(values, neg) == pytest.approx(-24940)


def test_system_priority_beats_everything():
    assert start_priority({"SERV": {"QUEUETIME": 1e12}}, MauiParams(), system_prio=5) == 1e9 + 5


@given(st.floats(-1e9, 1e9), st.floats(1, 1e6))
def test_a_cap_bounds_its_subcomponent(v, c):
    p = MauiParams(subweights={"QUEUETIME": 1}, caps={"QUEUETIME": c})
    assert component({"QUEUETIME": v}, p, "SERV") <= c
    assert cap(v, c) <= c


@given(st.floats(0, 1e7), st.floats(0, 1e7), st.floats(1, 1e5))
def test_code_xfactor_at_most_manual(q, wc, mn):
    assert xfactor(q, wc, mn) <= xfactor(q, wc, mn, form="manual") + 1e-9


@given(st.dictionaries(st.sampled_from(["QUEUETIME", "USER", "QOS"]), st.floats(-1e6, 1e6)))
def test_priority_clipped_at_one(values):
    assert start_priority({"SERV": values}, MauiParams(subweights={"USER": 1, "QOS": 1})) >= 1.0
