"""A candidate-list build repeated within a cycle (:mod:`matchmaker.cycle.build_reuse`)
gives what a fresh build gives.

Random pools with groups, preemption (by Rank and by priority, PREEMPTION_REQUIREMENTS,
partitionable slots and their dynamic slots, consumption policies), concurrency limits
and submitter limits, and queues that alternate between autoclusters so that a
submitter's lists are built again within a spin: every build that reuses an earlier one
is compared with a fresh build of the same request at the same moment (the candidates,
their order and keys, and the flags), and whole cycles with and without reuse are
compared (matches, rejections with their reasons, usage, warnings in their order, and the
next random number drawn)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from classad.ad import ClassAd
from classad.evaluate import seeded_random
from classad.parser import parse_expr
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle import columnar_match, matching
from matchmaker.cycle.build_reuse import ByReads, FoundBuilds
from matchmaker.cycle.candidates import Budget, CandidateList
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.pool.ads import pool_from_ads

NOW = 100_000.0
# Submitters: two in group a, one in group b, one in no group.
USERS = ["a.ann@d", "a.abe@d", "b.bea@d", "zed@d"]
START = ["true", 'TARGET.Owner =!= "bea" || Cpus > 1', 'KeyboardIdle > 600 || State =!= "Unclaimed"']
SLOT_RANK = ["0", 'TARGET.Owner == "ann" ? 10 : 0', "TARGET.JobPrio", "error", "1 / (Cpus - 2)"]
JOB_REQ = [
    "TARGET.Memory >= RequestMemory",
    'TARGET.Arch == "X86_64" && TARGET.Cpus >= RequestCpus',
    "TARGET.KeyboardIdle > SubmitterUserResourcesInUse",
]
LIMITS = [None, '"lic"', 'ifThenElse(TARGET.Cpus > 1, "big", "lic")']
POLICIES = [
    "",
    "PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2\n",
    "PREEMPTION_REQUIREMENTS = True\nPREEMPTION_RANK = TARGET.JobPrio + RemoteUserResourcesInUse\n",
    "PREEMPTION_REQUIREMENTS = TARGET.SubmitterGroupResourcesInUse < 3\nNEGOTIATOR_PRE_JOB_RANK = -KeyboardIdle\n",
    "PREEMPTION_REQUIREMENTS = True\nALLOW_PSLOT_PREEMPTION = true\nNEGOTIATOR_POST_JOB_RANK = KFlops / 0\n",
    "PREEMPTION_REQUIREMENTS = RemoteUserResourcesInUse > 1\nNEGOTIATOR_PRE_JOB_RANK = TARGET.Owner\n",
]

slot = st.fixed_dictionaries(
    {
        "cpus": st.integers(1, 4),
        "memory": st.sampled_from([1024, 4096]),
        "idle": st.sampled_from([0, 3000]),
        "arch": st.sampled_from(["X86_64", "ARM64"]),
        "start": st.sampled_from([0, 0, *range(len(START))]),
        "rank": st.sampled_from([0, 0, *range(len(SLOT_RANK))]),
        "user": st.sampled_from([None, None, None, None, *USERS]),
        "kind": st.sampled_from(["static", "static", "partitionable", "consumption"]),
        "busy": st.booleans(),
    }
)
cluster = st.fixed_dictionaries(
    {
        "user": st.sampled_from([*[USERS[0]] * 5, *USERS]),
        "req": st.sampled_from([0, 0, 1, 1, 2]),
        "memory": st.sampled_from([512, 2048]),
        "cpus": st.integers(1, 2),
        "prio": st.integers(0, 1),
        "limits": st.sampled_from([0, 0, 1, 2]),
        "draws": st.sampled_from([False] * 7 + [True]),
    }
)


def _slot_ad(i: int, d: dict) -> ClassAd:
    ad = ClassAd(
        {
            "Name": f"slot{i}@host{i}",
            "SlotID": i + 1,
            "Cpus": d["cpus"],
            "Memory": d["memory"],
            "KeyboardIdle": d["idle"],
            "KFlops": 1000 + i,
            "Arch": d["arch"],
            "OpSys": "LINUX",
            "CurrentRank": 0.0,
        }
    )
    ad.set_node("START", parse_expr(START[d["start"]]))
    ad.set_node("Requirements", parse_expr("START && TARGET.RequestMemory <= MY.Memory"))
    ad.set_node("Rank", parse_expr(SLOT_RANK[d["rank"]]))
    user = d["user"]
    if user is None:
        ad.update({"State": "Unclaimed", "Activity": "Idle"})
        if d["kind"] != "static":
            ad["PartitionableSlot"] = True
        if d["kind"] == "consumption":
            ad["MachineResources"] = "Cpus Memory"
            ad.set_node("ConsumptionCpus", parse_expr("TARGET.RequestCpus"))
            ad.set_node("ConsumptionMemory", parse_expr("TARGET.RequestMemory"))
        return ad
    ad.update(
        {
            "State": "Claimed",
            "Activity": "Busy" if d["busy"] else "Idle",
            "RemoteUser": user,
            "RemoteOwner": user,
            "AccountingGroup": user,
            "EnteredCurrentState": int(NOW) - 7200,
        }
    )
    if d["kind"] != "static":  # a dynamic slot of the partitionable slot before it
        ad.update({"Name": f"slot1_{i}@host{i - 1}", "DynamicSlot": True, "SlotType": "Dynamic"})
    return ad


def _job_ads(kinds: list[dict], queue: list[tuple[int, int]]) -> list[ClassAd]:
    """A cluster per ``(kind, count)`` of ``queue``: ``count`` jobs like ``kinds[kind]``
    (taken modulo), so that a user's queue comes back to an autocluster after another and
    its list is built again."""
    out = []
    for c, (k, count) in enumerate(queue):
        d = {**kinds[k % len(kinds)], "count": count}
        owner = d["user"].rpartition("@")[0].rpartition(".")[2]
        for p in range(d["count"]):
            ad = ClassAd(
                {
                    "ClusterId": c + 1,
                    "ProcId": p,
                    "Owner": owner,
                    "User": f"{owner}@d",
                    "JobStatus": 1,
                    "RequestMemory": d["memory"],
                    "RequestCpus": d["cpus"],
                    "JobPrio": d["prio"],
                }
            )
            if "." in d["user"]:
                ad["AccountingGroup"] = d["user"].rpartition("@")[0]
            req = JOB_REQ[d["req"]] + (" && random(3) != 0" if d["draws"] else "")
            ad.set_node("Requirements", parse_expr(req))
            ad.set_node("Rank", parse_expr("TARGET.KFlops"))
            if LIMITS[d["limits"]] is not None:
                ad.set_node("ConcurrencyLimits", parse_expr(LIMITS[d["limits"]]))
            out.append(ad)
    return out


def _settings(policy: int, weights: bool, groups: bool) -> Settings:
    config = POLICIES[policy] + f"NEGOTIATOR_USE_SLOT_WEIGHTS = {str(weights).lower()}\n"
    config += "LIC_LIMIT = 2\nBIG_LIMIT = 1\n"
    if groups:
        config += "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 3\nGROUP_QUOTA_b = 2\nGROUP_ACCEPT_SURPLUS = true\n"
    return Settings.from_knobs(Knobs.from_string(config))


def _view(cl: CandidateList) -> tuple:
    items = [cl.items[i] for i in range(len(cl.items))]
    return [(c.entry.index, c.state, c.key) for c in items], cl.no_preemption_req, cl.limited, list(cl.concurrency)


def _fresh(build, args: tuple) -> Optional[CandidateList]:
    """``build(*args)`` with no stored builds to take (and none kept)."""
    slots = columnar_match._slots(args[0], args[4])
    stored, slots._found = slots._found, FoundBuilds(budget=0)
    try:
        return build(*args)
    finally:
        slots._found = stored


def _compared(seen: list):
    """A ``build_columnar`` that, before each build, makes again the list of every request
    built earlier in the cycle (as it is now: some slots gone, its usage attributes
    changed; with its budget of then, and with no limit, which offers the rows its limits
    kept off) through the stored builds and, when that reused one, afresh too, and
    records both views."""
    real = columnar_match.build
    asked: list[tuple] = []

    def both(args: tuple) -> None:
        slots = columnar_match._slots(args[0], args[4])
        for budget in (args[6], Budget(math.inf, math.inf)):  # as then, and with no limit
            again = (*args[:6], replace(budget), *args[7:])
            hits = slots.found.hits
            reused = real(*again)
            if slots.found.hits > hits:
                fresh = _fresh(real, again)
                seen.append((True, _view(reused) if reused else None, _view(fresh) if fresh else None))

    def build(matcher, req, autocluster, submitter, classes, only_rank, budget, static):
        for args in asked:
            if args[0] is matcher:
                both(args)
        asked.append((matcher, req, autocluster, submitter, classes, only_rank, replace(budget), static))
        return real(matcher, req, autocluster, submitter, classes, only_rank, budget, static)

    return build


def _cycle(pool, settings: Settings, eups: list[float]) -> tuple:
    with seeded_random(5):
        r = negotiate(pool, settings, StaticPriorities(dict(zip(USERS, eups))), NOW)
        next_draw = ClassAd("[x = random(1000000)]").evaluate("x")
    return r.matches, r.rejected, r.usage, r.submitters, r.warnings, r.groups, next_draw


CYCLE = {
    "slots": st.lists(slot, min_size=6, max_size=16),
    "kinds": st.lists(cluster, min_size=2, max_size=4),
    "queue": st.lists(st.tuples(st.integers(0, 3), st.integers(1, 2)), min_size=3, max_size=8),
    "policy": st.integers(0, len(POLICIES) - 1),
    "eups": st.lists(st.sampled_from([1.0, 10.0, 500.0]), min_size=4, max_size=4),
    "weights": st.booleans(),
    "groups": st.booleans(),
}


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@hsettings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE)
def test_a_reused_build_is_a_fresh_build(match_engine, monkeypatch, slots, kinds, queue, policy, eups, weights, groups):
    """Every build that reused an earlier one of its cycle lists the candidates, in the
    order, with the keys and flags, that a fresh build at that moment gives."""
    pool = pool_from_ads([_slot_ad(i, d) for i, d in enumerate(slots)], _job_ads(kinds, queue))
    seen: list = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(matching, "build_columnar", _compared(seen))
        _cycle(pool, _settings(policy, weights, groups), eups)
    import os

    if os.environ.get("DBG"):
        print("SEEN", len(seen), sum(h for h, r, f in seen), sum(len(r[0]) for h, r, f in seen if h and r))
    for hit, reused, fresh in seen:
        if hit:  # else both are fresh builds (which draw different numbers when they draw)
            assert reused == fresh


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@hsettings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE)
def test_cycles_with_and_without_reuse(match_engine, slots, kinds, queue, policy, eups, weights, groups):
    """Matches, rejections, usage, the groups' table, the warnings in their order and the
    next random number are the same when no build is reused and no answer of the draw
    analysis is remembered."""
    pool = pool_from_ads([_slot_ad(i, d) for i, d in enumerate(slots)], _job_ads(kinds, queue))
    settings = _settings(policy, weights, groups)
    reused = _cycle(pool, settings, eups)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(FoundBuilds, "find", lambda self, key, req: None)
        mp.setattr(ByReads, "get", lambda self, key, req: (False, None))
        assert _cycle(pool, settings, eups) == reused


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_a_queue_that_alternates_reuses_the_list(match_engine, monkeypatch):
    """By hand: ann's queue holds clusters A (2 jobs), B (1 job, needs 4 GB), A (2 jobs):
    three runs, so A's list is built twice in one session (the match list holds one
    list).  Four free one-core slots of 1 GB (slots 0-3, KFlops 1000-1003) and one of
    4 GB (slot 4, KFlops 1004), slot Rank 0, the default knobs: PRE_JOB_RANK prefers the
    smaller slot (its ``- Memory``), a tie among slots 0-3 that the job's Rank
    (``TARGET.KFlops``) breaks, so A takes slots 3 and 2, B takes slot 4 (the only one it
    fits), and the second A run takes slots 1 and 0 from the reused list, which no longer
    offers 2, 3 and 4."""
    base = {"cpus": 1, "idle": 3000, "arch": "X86_64", "start": 0, "rank": 0, "user": None, "kind": "static"}
    slot_ads = [_slot_ad(i, {**base, "memory": 1024}) for i in range(4)] + [_slot_ad(4, {**base, "memory": 4096})]
    a = {"user": "zed@d", "req": 0, "memory": 512, "cpus": 1, "prio": 0, "limits": 0, "draws": False}
    b = {**a, "memory": 4096}
    builds: list = []
    real = columnar_match.build

    def build(matcher, req, *args):
        slots = columnar_match._slots(matcher, args[2])
        hits = slots.found.hits
        out = real(matcher, req, *args)
        builds.append((slots.found.hits > hits, _view(out), _view(_fresh(real, (matcher, req, *args)))))
        return out

    monkeypatch.setattr(matching, "build_columnar", build)
    r = negotiate(
        pool_from_ads(slot_ads, _job_ads([a, b], [(0, 2), (1, 1), (0, 2)])),
        _settings(0, False, False),
        StaticPriorities(),
        NOW,
    )
    assert [(m.job, m.slot) for m in r.matches] == [
        ("1.0", "slot3@host3"),
        ("1.1", "slot2@host2"),
        ("2.0", "slot4@host4"),
        ("3.0", "slot1@host1"),
        ("3.1", "slot0@host0"),
    ]
    assert [hit for hit, _, _ in builds] == [False, False, True]
    _, reused, fresh = builds[2]
    assert reused == fresh and [index for index, _, _ in reused[0]] == [1, 0]


def _replayed(slot_ads: list[ClassAd], job_ads: list[ClassAd], config: str, eups: dict) -> tuple:
    """The cycle's matches and, for each time a build reused an earlier one while an
    earlier request was made again, ``(reused view, fresh view)`` (see :func:`_compared`)."""
    seen: list = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(matching, "build_columnar", _compared(seen))
        r = negotiate(
            pool_from_ads(slot_ads, job_ads),
            Settings.from_knobs(Knobs.from_string(config)),
            StaticPriorities(eups),
            NOW,
        )
    return [(m.job, m.submitter, m.slot, m.preempted) for m in r.matches], [(a, b) for _, a, b in seen]


def _plain(user: str) -> dict:
    return {"user": user, "req": 0, "memory": 512, "cpus": 1, "prio": 0, "limits": 0, "draws": False}


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_a_refused_slot_that_left_no_longer_flags_the_list(match_engine):
    """By hand: slot 0 is zed's (EUP 500), slot 1 free; PREEMPTION_REQUIREMENTS lets only
    bea preempt.  Spin 1 in EUP order: ann (EUP 1) is refused slot 0 (her list is flagged)
    and takes slot 1; bea (10) preempts zed on slot 0; abe (100) finds nothing.  When
    abe's list is built, ann's is made again: both slots are gone, so nothing in it was
    refused by PREEMPTION_REQUIREMENTS any more, and the reused list must say so."""
    free = {"cpus": 1, "memory": 1024, "idle": 3000, "arch": "X86_64", "start": 0, "rank": 0, "kind": "static"}
    slot_ads = [_slot_ad(0, {**free, "user": "zed@d", "busy": True}), _slot_ad(1, {**free, "user": None})]
    kinds = [_plain("ann@d"), _plain("bea@d"), _plain("abe@d")]
    config = 'PREEMPTION_REQUIREMENTS = TARGET.Owner == "bea"\n'
    matches, seen = _replayed(
        slot_ads, _job_ads(kinds, [(0, 1), (1, 1), (2, 1)]), config, {"ann@d": 1.0, "bea@d": 10.0, "abe@d": 100.0}
    )
    assert matches == [("1.0", "ann@d", "slot1@host1", None), ("2.0", "bea@d", "slot0@host0", "zed@d")]
    flags = [(reused[1], fresh[1]) for reused, fresh in seen if reused[0] == []]
    assert (False, False) in flags  # ann's list at abe's build: her refused slot is gone
    assert all(reused == fresh for reused, fresh in seen)


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_a_build_that_read_live_usage_is_not_reused(match_engine):
    """By hand: zed (EUP 500) holds slots 0 and 1, and PREEMPTION_REQUIREMENTS =
    RemoteUserResourcesInUse > 1 reads zed's usage as it is at the build.  ann (EUP 1)
    preempts zed on slot 1 (her list offers both, zed's usage being 2; her Rank,
    ``TARGET.KFlops``, prefers slot 1's 1001 to slot 0's 1000); then zed's usage is 1, so
    when abe's list is built and ann's is made again, slot 0 is refused: a list stored
    with the usage of its first build would still offer it."""
    claim = {"cpus": 1, "memory": 1024, "idle": 3000, "arch": "X86_64", "start": 0, "rank": 0, "kind": "static"}
    claim |= {"user": "zed@d", "busy": True}
    slot_ads = [_slot_ad(0, claim), _slot_ad(1, claim)]
    config = "PREEMPTION_REQUIREMENTS = RemoteUserResourcesInUse > 1\n"
    kinds = [_plain("ann@d"), _plain("abe@d")]
    builds: list = []
    real = columnar_match.build

    def build(matcher, req, *args):
        out = real(matcher, req, *args)
        builds.append((req.get("Owner"), None if out is None else _view(out)))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match, "build", build)
        matches, seen = _replayed(slot_ads, _job_ads(kinds, [(0, 1), (1, 1)]), config, {"ann@d": 1.0, "abe@d": 100.0})
    assert matches[0][1:] == ("ann@d", "slot1@host1", "zed@d")
    again = [view for owner, view in builds[1:] if owner == "ann"]
    assert again and all(view[0] == [] and view[1] for view in again)  # slot 0 refused, flagged
    assert all(reused == fresh for reused, fresh in seen)


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_the_draw_analysis_is_remembered_per_request_values(match_engine):
    """zed holds slots 0-3 (Rank 0, none prefers a job), slots 4 and 5 are free.  carol
    (EUP 1) takes one; her job draws nothing, so the draw analysis answers no for her
    request.  alice (EUP 500) takes the other free slot by the round-up rule and is then
    past her slice, so her next request is an only-Rank build; her Requirements draw
    (``random(3) != 0``), so that build must test both Requirements on zed's four slots
    (four draws) rather than skip them.  Taking carol's remembered answer for alice's
    request would skip those draws and change the cycle's next random number."""
    claim = {"cpus": 1, "memory": 1024, "idle": 3000, "arch": "X86_64", "start": 0, "rank": 0, "kind": "static"}
    slot_ads = [_slot_ad(i, {**claim, "user": "zed@d", "busy": True}) for i in range(4)]
    slot_ads += [_slot_ad(i, {**claim, "user": None}) for i in (4, 5)]
    kinds = [_plain("carol@d"), {**_plain("alice@d"), "draws": True}]
    pool = pool_from_ads(slot_ads, _job_ads(kinds, [(0, 1), (1, 3)]))
    settings = Settings.from_knobs(Knobs.from_string(""))
    eups = StaticPriorities({"carol@d": 1.0, "alice@d": 500.0, "zed@d": 10.0})

    def cycle() -> tuple:
        with seeded_random(11):
            r = negotiate(pool, settings, eups, NOW)
            return r.matches, r.rejected, ClassAd("[x = random(1000000)]").evaluate("x")

    remembered = cycle()
    assert [m.submitter for m in remembered[0]] == ["carol@d", "alice@d"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ByReads, "get", lambda self, key, req: (False, None))
        assert cycle() == remembered
