"""A job's queue-order key made of integer literals (bare or nodes) and absences is kept
with its record (``Job.order``) and given again; a key that evaluated anything is made
again each time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import matchmaker.pool.autocluster as autocluster
from matchmaker.pool.ads import make_jobs, parse_old_ads
from matchmaker.pool.autocluster import job_order_key
from matchmaker.pool.partition import with_values

_NAMES = ("PreJobPrio1", "PreJobPrio2", "JobPrio", "PostJobPrio1", "PostJobPrio2", "QDate")
# What an order attribute may be: a bare integer, absent, or something evaluated.
_STORED = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.none(),
    st.sampled_from(["1.5", "true", '"x"', "undefined", "ClusterId * 2", "3 + 4", "real(2)"]),
)


def _job(values: dict[str, str | None], cluster: int = 7, proc: int = 3, bare: bool = False):
    """A job record storing ``values`` (None: absent) as read from a file, or with the
    integers written as bare values (``bare``, as the claims and the simulation write them)."""
    lines = [f"ClusterId = {cluster}", f"ProcId = {proc}", 'User = "u@d"', "JobStatus = 1"]
    lines += [f"{name} = {v}" for name, v in values.items() if v is not None]
    (job,) = make_jobs(parse_old_ads("\n".join(lines) + "\n"))
    if bare:
        ints = {name: int(v) for name, v in values.items() if v is not None and v.lstrip("-").isdigit()}
        job = job.with_ad(with_values(job.ad, ints, equal_values=False), job.status)
    return job


def _fresh_key(job, by_qdate: bool) -> tuple:
    """The key of a new record of the same ad (nothing kept)."""
    job.order = None
    return job_order_key(job, by_qdate=by_qdate)


@settings(max_examples=200, deadline=None)
@given(stored=st.tuples(*[_STORED] * 6), asks=st.lists(st.booleans(), min_size=1, max_size=6), bare=st.booleans())
def test_kept_keys_are_the_keys_made_afresh(stored, asks, bare, monkeypatch_module):
    """Any sequence of asks (by QDate or not) gives the key a new record gives; a key of
    bare integers and absences evaluates nothing after the first ask of its variant, any
    other evaluates again each time."""
    values = dict(zip(_NAMES, stored))
    job = _job(values, bare=bare)
    if bare:  # the integers are stored bare
        assert all(
            type(v) is int for v, w in zip(job.ad.stored_of(autocluster._ORDER_NAMES), stored) if w and w.isdigit()
        )
    expected = {q: _fresh_key(_job(values), q) for q in (False, True)}
    literal = all(v is None or v.lstrip("-").isdigit() for v in stored)
    evaluated: list[str] = []
    real = autocluster._order_value
    monkeypatch_module.setattr(
        autocluster, "_order_value", lambda ad, name, s: evaluated.append(name) or real(ad, name, s)
    )
    last = None
    for by_qdate in asks:
        before = len(evaluated)
        assert job_order_key(job, by_qdate=by_qdate) == expected[by_qdate]
        if literal and last is by_qdate:
            assert len(evaluated) == before  # given again as kept
        if not literal:
            assert len(evaluated) > before
        last = by_qdate


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_a_record_remade_for_another_ad_has_its_own_key():
    """``Job.with_ad`` (a rewritten copy of the ad) does not carry the key of the old ad."""
    job = _job({"JobPrio": "5"})
    assert job_order_key(job) == (0, 0, -5, 0, 0, 7, 3)
    (other,) = make_jobs(parse_old_ads('ClusterId = 7\nProcId = 3\nUser = "u@d"\nJobPrio = 9\n'))
    remade = job.with_ad(other.ad, 1)
    assert job_order_key(remade) == (0, 0, -9, 0, 0, 7, 3)
    assert job_order_key(job) == (0, 0, -5, 0, 0, 7, 3)


def test_by_hand_qdate_and_cluster_order():
    job = _job({"JobPrio": "-2", "QDate": "100"}, cluster=4, proc=1)
    assert job_order_key(job) == (0, 0, 2, 0, 0, 4, 1)
    assert job_order_key(job, by_qdate=True) == (0, 0, 2, 0, 0, 100, 4, 1)
    assert job_order_key(job) == (0, 0, 2, 0, 0, 4, 1)
