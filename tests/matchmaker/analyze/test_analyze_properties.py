"""Properties of ``analyze`` on random small pools: its counts are consistent, and what it
says about each job agrees with what an independent ``negotiate`` run reports."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import matchmaker
from classad.ad import ClassAd
from matchmaker.analyze import analyze_job, prepare
from matchmaker.api import Loaded
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.pool.ads import IDLE, pool_from_ads

NOW = 1700000000.0
USERS = ["u1@d", "u2@d", "u3@d"]
SLOT_REQS = ["true", "TARGET.RequestMemory <= Memory", 'TARGET.Owner =!= "u1"', "START"]
JOB_REQS = [
    "TARGET.Memory >= RequestMemory",
    "TARGET.Memory >= RequestMemory && TARGET.HasDocker",
    "TARGET.HasDocker =!= false",
    "true",
    "TARGET.Cpus > 1 && TARGET.Memory >= RequestMemory",
]
CONFIGS = [
    "",
    "PREEMPTION_REQUIREMENTS = false",
    "NEGOTIATOR_CONSIDER_PREEMPTION = false",
    "PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmitterUserPrio * 1.2\nfast_LIMIT = 1",
    "GROUP_NAMES = group_a, group_b\nGROUP_QUOTA_group_a = 2\nGROUP_QUOTA_group_b = 1\n"
    "GROUP_ACCEPT_SURPLUS_group_b = true\nNEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION = false",
]


@st.composite
def slot_ads(draw):
    out = []
    for i in range(draw(st.integers(1, 6))):
        ad = {
            "Name": f"slot{i}@h",
            "Cpus": draw(st.integers(1, 2)),
            "Memory": draw(st.sampled_from([1024, 4096])),
            "START": ClassAd("[x = TARGET.RequestMemory < 4000]").lookup("x"),
        }
        docker = draw(st.sampled_from([None, True, False]))
        if docker is not None:
            ad["HasDocker"] = docker
        a = ClassAd(ad)
        a["Requirements"] = ClassAd(f"[x = {draw(st.sampled_from(SLOT_REQS))}]").lookup("x")
        user = draw(st.sampled_from([None, None] + USERS))
        if user is not None:
            a.update(
                {"State": "Claimed", "Activity": "Busy", "RemoteUser": user, "RemoteOwner": user, "CurrentRank": 0.0}
            )
            a["Rank"] = ClassAd(f"[x = {draw(st.sampled_from(['0', 'TARGET.RequestMemory > 1000']))}]").lookup("x")
        out.append(a)
    return out


@st.composite
def job_ads(draw):
    out = []
    for i in range(draw(st.integers(1, 6))):
        user = draw(st.sampled_from(USERS))
        a = ClassAd(
            {
                "ClusterId": i + 1,
                "ProcId": 0,
                "User": user,
                "Owner": user.split("@")[0],
                "JobStatus": IDLE,
                "RequestMemory": draw(st.sampled_from([512, 2048, 8192])),
            }
        )
        a["Requirements"] = ClassAd(f"[x = {draw(st.sampled_from(JOB_REQS))}]").lookup("x")
        if draw(st.booleans()):
            a["ConcurrencyLimits"] = "fast"
        group = draw(st.sampled_from([None, "group_a", "group_b"]))
        if group is not None:
            a["AccountingGroup"] = f"{group}.{user.split('@')[0]}"
        out.append(a)
    return out


def setup(slots, jobs, config):
    knobs = Knobs.from_string(config)
    s = Settings.from_knobs(knobs)
    pool = pool_from_ads(slots, jobs)
    return Loaded(knobs, s, pool, ()), prepare(pool, s, NOW)


PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@PROPS
@given(slot_ads(), job_ads(), st.sampled_from(CONFIGS))
def test_counts_are_consistent(slots, jobs, config):
    _, view = setup(slots, jobs, config)
    for job in view.pool.jobs:
        r = analyze_job(view, job.id)
        running = [c.running for c in r.clauses]
        assert running == sorted(running, reverse=True)  # never increases
        assert all(c.running <= c.alone <= r.slots_considered for c in r.clauses)
        if r.clauses:
            assert running[-1] == r.job_accepts
        assert r.slot_accepts <= r.job_accepts
        assert sum(r.availability.values()) == r.slot_accepts
        assert len(r.matched_elsewhere) <= r.slot_accepts


@pytest.mark.slow
@PROPS
@given(slot_ads(), job_ads(), st.sampled_from(CONFIGS))
def test_verdict_agrees_with_negotiate(slots, jobs, config):
    loaded, view = setup(slots, jobs, config)
    result = matchmaker.negotiate(loaded, now=NOW)
    matched = {m.job: m for m in result.matches}
    rejected = {x.job: x for x in result.rejected}
    for job in view.pool.jobs:
        r = analyze_job(view, job.id)
        assert (r.outcome == "matched") == (job.id in matched)
        if job.id in matched:
            assert matched[job.id].slot in r.verdict and r.slot_accepts > 0
        if job.id in rejected:
            x = rejected[job.id]
            assert r.outcome == "rejected" and r.mechanism == x.mechanism and x.explanation in r.verdict
            if x.mechanism == "requirements":  # every slot both sides accept went elsewhere
                assert len(r.matched_elsewhere) == r.slot_accepts
            if x.mechanism == "unavailable":
                assert r.slot_accepts > 0


@pytest.mark.slow
@PROPS
@given(slot_ads(), job_ads())
def test_without_limits_the_final_count_decides(slots, jobs):
    """One submitter, no claims, no concurrency limits: the pie is the whole pool, so the
    queue's first job matches exactly when analyze counts a slot both sides accept."""
    for a in slots:
        for k in ("State", "Activity", "RemoteUser", "RemoteOwner", "CurrentRank"):
            a.pop(k, None)
    for a in jobs:
        a["User"], a["Owner"] = USERS[0], "u1"
        a.pop("ConcurrencyLimits", None)
        a.pop("AccountingGroup", None)
    loaded, view = setup(slots, jobs, "")
    first = view.start.queues[USERS[0]].runs[0].jobs[0]
    r = analyze_job(view, first.id)
    assert (r.outcome == "matched") == (r.slot_accepts > 0)
    if r.outcome != "matched":
        assert r.mechanism == "requirements"
