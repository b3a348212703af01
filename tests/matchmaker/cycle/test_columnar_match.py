"""The columnar match engine gives the scalar engine's cycle results on random pools.

The pools are made so that the whole candidate order and the concurrency limits decide
who gets what: every drawn slot comes with a twin that differs only in ``KFlops`` and
``Disk`` (so the knob ranks of the twins tie and the job's Rank, which mostly reads
those two, must order them), there are usually more jobs than slots, and the limits
``lic`` (capacity 2) and ``big`` (capacity 1) run out within a cycle (a limit read from
the slot must then keep the job off the slots it fills, and name itself as the reason
when no slot is left)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support import idle_job_ads, unclaimed_slot_ads

from classad import set_strict_mode
from classad.ad import ClassAd
from classad.parser import parse_expr
from matchmaker.config.settings import Settings
from matchmaker.cycle.columnar_match import SlotTable
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.pool.ads import pool_from_ads

USERS = ["alice@x.org", "bob@x.org", "carol@x.org"]
START = [
    "true",
    "KeyboardIdle > 15 * 60 && (LoadAvg - CondorLoadAvg) <= 0.3",
    'TARGET.Owner =!= "carol" || LoadAvg < 0.5',
    "isUndefined(KeyboardIdle) || KeyboardIdle > 100",
]
SLOT_REQ = "START && TARGET.RequestCpus <= MY.Cpus && TARGET.RequestMemory <= MY.Memory"
SLOT_RANK = ["0", 'TARGET.Owner == "bob"', "TARGET.JobPrio", "KFlops / 1e6", "error", "TARGET.missing"]
JOB_REQ = [
    'TARGET.Arch == "X86_64" && TARGET.Memory >= RequestMemory',
    'TARGET.OpSys == "linux" && TARGET.Disk > 1000',
    "TARGET.KFlops > 500000 || TARGET.Mips =?= undefined",
    "true",
]
# The first ones order twins against the default NEGOTIATOR_POST_JOB_RANK (which prefers
# the larger KFlops): ignoring the job's Rank changes those matches.
JOB_RANK = [
    "-TARGET.KFlops",
    "TARGET.Disk - TARGET.KFlops / 1000",
    "0",
    "TARGET.KFlops",
    "TARGET.Memory",
    "-TARGET.LoadAvg",
    "TARGET.Mips ?: 1",
    "TARGET.KFlops / 0",
]
# Limits read from the slot are tested per candidate slot by the match engines (a plain
# string is tested once per request, before them).
SLOT_LIMITS = 'ifThenElse(TARGET.Cpus > 1, "big", "lic")'
CAPACITY = {"lic": 2.0, "big": 1.0}
KNOBS = [
    {},
    {
        "preemption_requirements": "RemoteUserPrio > SubmitterUserPrio * 1.2",
        "preemption_rank": "TARGET.JobPrio + RemoteUserResourcesInUse",
    },
    {"pre_job_rank": "-LoadAvg", "post_job_rank": "KFlops"},
    {"post_job_rank": "-KFlops", "preemption_rank": "-KeyboardIdle"},
    {
        "pre_job_rank": "1 / (Cpus - 2)",
        "preemption_rank": "TARGET.JobPrio / (Cpus - 1)",
        "preemption_requirements": "RemoteUserResourcesInUse > 1",
    },
    {"preemption_requirements": "true", "preemption_rank": "Memory", "pre_job_rank": "TARGET.Owner"},
]

slot = st.fixed_dictionaries(
    {
        "Memory": st.sampled_from([1024, 2048, 4096]),
        "Cpus": st.integers(1, 4),
        "LoadAvg": st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.5]),
        "KeyboardIdle": st.integers(0, 3000),
        "KFlops": st.integers(100000, 1000000),
        "Disk": st.integers(0, 5000),
        "twin": st.tuples(st.integers(100000, 1000000), st.integers(0, 5000)),  # its KFlops and Disk
        "Arch": st.sampled_from(["X86_64", "x86_64", "ARM64"]),
        "start": st.integers(0, len(START) - 1),
        "rank": st.sampled_from([0, 0, *range(len(SLOT_RANK))]),
        "user": st.sampled_from([None, None, None, *USERS]),
        "current": st.sampled_from([0.0, 1.0, -1.0]),
        "activity": st.sampled_from(["Busy", "Idle"]),
        "kind": st.sampled_from(["static", "static", "partitionable", "consumption"]),
    }
)
job = st.fixed_dictionaries(
    {
        "user": st.sampled_from(USERS),
        "memory": st.sampled_from([512, 1024, 3000]),
        "cpus": st.integers(1, 2),
        "req": st.integers(0, len(JOB_REQ) - 1),
        "rank": st.integers(0, len(JOB_RANK) - 1),
        "prio": st.integers(0, 2),
        "count": st.integers(1, 4),
        "limits": st.sampled_from([SLOT_LIMITS, None, '"lic"', SLOT_LIMITS]),
    }
)


def _slot_ad(i: int, d: dict) -> ClassAd:
    ad = ClassAd(
        {
            "Name": f"slot{i}@host{i // 2}",
            "SlotID": i + 1,
            "Memory": d["Memory"],
            "Cpus": d["Cpus"],
            "LoadAvg": d["LoadAvg"],
            "CondorLoadAvg": 0.0,
            "KeyboardIdle": d["KeyboardIdle"],
            "KFlops": d["KFlops"],
            "Disk": d["Disk"],
            "Arch": d["Arch"],
            "OpSys": "LINUX",
            "CurrentRank": d["current"],
        }
    )
    ad.set_node("START", parse_expr(START[d["start"]]))
    ad.set_node("Requirements", parse_expr(SLOT_REQ))
    ad.set_node("Rank", parse_expr(SLOT_RANK[d["rank"]]))
    if d["user"] is None:
        ad.update({"State": "Unclaimed", "Activity": "Idle"})
        if d["kind"] != "static":  # a partitionable slot, with a consumption policy or not
            ad["PartitionableSlot"] = True
        if d["kind"] == "consumption":
            ad["MachineResources"] = "Cpus Memory"
            ad.set_node("ConsumptionCpus", parse_expr("TARGET.RequestCpus"))
            ad.set_node("ConsumptionMemory", parse_expr("quantize(TARGET.RequestMemory, {512})"))
    else:
        ad.update({"State": "Claimed", "Activity": d["activity"], "RemoteUser": d["user"], "RemoteOwner": d["user"]})
    return ad


def _slot_ads(slots: list[dict]) -> list[ClassAd]:
    """Each drawn slot and its twin, next to each other."""
    out = []
    for d in slots:
        kflops, disk = d["twin"]
        for twin in (d, {**d, "KFlops": kflops, "Disk": disk}):
            out.append(_slot_ad(len(out), twin))
    return out


def _job_ads(jobs: list[dict]) -> list[ClassAd]:
    return idle_job_ads({**d, "requirements": JOB_REQ[d["req"]], "rank": JOB_RANK[d["rank"]]} for d in jobs)


def _summary(result) -> tuple:
    return (result.matches, result.rejected, result.usage, result.submitters, result.spins)


@pytest.mark.slow
@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)  # it runs both engines itself
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    slots=st.lists(slot, min_size=2, max_size=4),
    jobs=st.lists(job, min_size=2, max_size=6),
    knobs=st.integers(0, len(KNOBS) - 1),
    eups=st.lists(st.sampled_from([1.0, 10.0, 500.0]), min_size=3, max_size=3),
    flags=st.fixed_dictionaries(
        {
            "needs_eup": st.booleans(),
            "skip_idle": st.booleans(),
            "ignore_ranks": st.sampled_from([False, False, False, True]),
            "cache": st.booleans(),
            "strict": st.booleans(),
            "stable": st.booleans(),
            "depth_first": st.booleans(),
        }
    ),
)
def test_random_pools_same_cycle(match_engine, slots, jobs, knobs, eups, flags):
    pool = pool_from_ads(_slot_ads(slots), _job_ads(jobs))
    knob_nodes = {k: parse_expr(v) for k, v in KNOBS[knobs].items()}
    base = Settings.defaults(
        preemption_needs_better_eup=flags["needs_eup"],
        skip_claimed_idle=flags["skip_idle"],
        ignore_job_ranks=flags["ignore_ranks"],
        matchlist_caching=flags["cache"],
        preemption_rank_stable=flags["stable"],
        preemption_requirements_stable=flags["stable"],
        depth_first=flags["depth_first"],
        **knob_nodes,
    )
    base = replace(base, concurrency_capacity=lambda name: CAPACITY.get(name, 1.0))
    prios = StaticPriorities(dict(zip(USERS, eups)))
    set_strict_mode(flags["strict"])
    try:
        results = [
            negotiate(pool, replace(base, policy=replace(base.policy, columnar=on)), prios, 1000.0)
            for on in (True, False)
        ]
    finally:
        set_strict_mode(False)
    assert _summary(results[0]) == _summary(results[1])
    assert sorted(results[0].warnings) == sorted(results[1].warnings)


def test_rank_errors_reported_as_by_the_scalar_engine(match_engine):
    """A knob rank that is an error is reported once per distinct set of values it read."""
    slots = [
        ClassAd(
            {"Name": f"s{i}", "Cpus": 2, "Memory": 100, "Requirements": True, "State": "Unclaimed", "Activity": "Idle"}
        )
        for i in range(3)
    ]
    jobs = [
        ClassAd(
            {
                "ClusterId": 1,
                "ProcId": p,
                "User": "u@x",
                "Owner": "u",
                "JobStatus": 1,
                "RequestCpus": 1,
                "RequestMemory": 1,
                "Requirements": True,
            }
        )
        for p in range(2)
    ]
    result = negotiate(
        pool_from_ads(slots, jobs),
        Settings.defaults(pre_job_rank=parse_expr("1 / (Cpus - 2)")),
        StaticPriorities({}),
        0.0,
    )
    assert [m.slot for m in result.matches] == ["s0", "s1"]
    assert result.warnings == [
        "slot#0: warning: slot s0: NEGOTIATOR_PRE_JOB_RANK evaluates to error; treated as the lowest rank"
    ]


def test_job_rank_picks_between_slots_the_knob_ranks_tie(match_engine):
    """Two unclaimed slots alike but for ``Disk``; the job's ``Rank = TARGET.Disk`` wants s2.

    By hand, with the default knobs (docs/negotiation.md, candidate order):

    * NEGOTIATOR_PRE_JOB_RANK = 10000000 * 0 + 1000000 * 1 - 100000 * 1 - 2048 = 897952
      for both slots (Rank 0, unclaimed, 1 core, 2048 MB): a tie;
    * the job's Rank: 100 for s1, 500 for s2, so s2 comes first;
    * NEGOTIATOR_POST_JOB_RANK = KFlops - SlotID: 999 for s1, 998 for s2 (it would pick s1,
      as would the slot-list order; both only break ties of the job's Rank).

    So the job runs on s2."""
    slots = []
    for i, disk in ((1, 100), (2, 500)):
        slots.append(
            ClassAd(
                {
                    "Name": f"s{i}",
                    "SlotID": i,
                    "Cpus": 1,
                    "Memory": 2048,
                    "KFlops": 1000,
                    "Disk": disk,
                    "Rank": 0,
                    "Requirements": True,
                    "State": "Unclaimed",
                    "Activity": "Idle",
                }
            )
        )
    jobs = idle_job_ads(
        [{"user": "u@x", "memory": 1, "prio": 0, "count": 1, "requirements": "true", "rank": "TARGET.Disk"}]
    )
    result = negotiate(pool_from_ads(slots, jobs), Settings.defaults(), StaticPriorities({}), 0.0)
    assert [(m.job, m.slot) for m in result.matches] == [("1.0", "s2")]


def test_slot_a_full_limit_keeps_off_is_not_ranked(match_engine):
    """A slot the job's ConcurrencyLimits (read from the slot) rules out is not a candidate,
    so NEGOTIATOR_PRE_JOB_RANK is not evaluated on it (docs/negotiation.md, candidate slots).

    By hand: ``big`` has capacity 1 and the claimed slot c0 already holds it, so for the job
    (``ConcurrencyLimits = ifThenElse(TARGET.Cpus > 1, "big", "lic")``) s2 (2 cores) is full
    and s1 (1 core, ``lic``: 0 of 1 used) is free.  c0 refuses every job.  The knob
    ``1 / (Cpus - 2)`` is an error on s2 alone, which is never ranked: no warning, and the
    job runs on s1."""
    common = {"Memory": 2048, "Rank": 0}
    c0 = {"Name": "c0", "Cpus": 2, "Requirements": False, "State": "Claimed", "Activity": "Busy"}
    c0.update({"RemoteUser": "o@x", "AccountingGroup": "o@x", "ConcurrencyLimits": "big"})
    free = {"Requirements": True, "State": "Unclaimed", "Activity": "Idle"}
    slots = [
        ClassAd({**common, **c0}),
        ClassAd({**common, **free, "Name": "s1", "Cpus": 1}),
        ClassAd({**common, **free, "Name": "s2", "Cpus": 2}),
    ]
    jobs = idle_job_ads(
        [{"user": "u@x", "memory": 1, "prio": 0, "count": 1, "requirements": "true", "limits": SLOT_LIMITS}]
    )
    settings = replace(
        Settings.defaults(pre_job_rank=parse_expr("1 / (Cpus - 2)")), concurrency_capacity=lambda _name: 1.0
    )
    result = negotiate(pool_from_ads(slots, jobs), settings, StaticPriorities({}), 0.0)
    assert [(m.job, m.slot) for m in result.matches] == [("1.0", "s1")]
    assert result.warnings == []


def test_a_rank_that_is_nan_is_ordered_on_the_slot_classes(match_engine):
    """A job whose ``Rank`` is NaN (``real("NaN")``): the columnar engine leaves the order
    to the scalar path, which reads the slot classes (made only then in a columnar cycle).
    By hand, with the default NEGOTIATOR_PRE_JOB_RANK (``10000000 * Rank + 1000000 *
    (RemoteOwner =?= undefined) - 100000 * Cpus - Memory``): 897952 for s1 (2048 MB) and
    898976 for s2 (1024 MB); it decides before the job's Rank, so the job runs on s2, and
    the second job on s1."""
    slots = unclaimed_slot_ads([2048, 1024])
    jobs = idle_job_ads(
        [{"user": "u@x", "memory": 1, "prio": 0, "count": 2, "requirements": "true", "rank": 'real("NaN")'}]
    )
    result = negotiate(pool_from_ads(slots, jobs), Settings.defaults(), StaticPriorities({}), 0.0)
    assert [(m.job, m.slot) for m in result.matches] == [("1.0", "s2"), ("1.1", "s1")]


def test_each_slot_alone_makes_its_classes_on_first_read(match_engine):
    """Three slots (s1 claimed by u@x): no class until the classes are read, then one class
    per slot in order, the claimed one listed as claimed too, each entry pointing at its
    class.  Two entries of one slot (one index twice) share a class, made at once."""
    from matchmaker.cycle.ephemeral import NegotiationAd
    from matchmaker.cycle.evaluator import EachAlone, SlotEntry, each_alone
    from matchmaker.pool.ads import make_slots

    ads = [ClassAd({"Name": f"s{i}", "RemoteUser": "u@x"} if i == 1 else {"Name": f"s{i}"}) for i in range(3)]
    records = make_slots([(ad, f"slots:{i}") for i, ad in enumerate(ads)])
    entries = [SlotEntry(s, NegotiationAd(s.ad), s.remote) for s in records]
    classes = each_alone(entries)
    assert type(classes) is EachAlone and not classes.made and len(classes) == 3
    assert [e.cls for e in entries] == [None, None, None]
    made = list(classes)
    assert classes.made and [c.entries for c in made] == [[e] for e in entries]
    assert [c.claimed for c in made] == [[], [entries[1]], []]
    assert [e.cls for e in entries] == made
    twice = [SlotEntry(records[0], NegotiationAd(ads[0]), None) for _ in range(2)]
    (shared,) = each_alone(twice)
    assert shared.entries == twice and all(e.cls is shared for e in twice)


def test_only_rank_tables_are_made_once_per_priority_tables():
    """An only-Rank build's preemption tables made of a priority build's are made once per
    those tables in a cycle (the same tuple again, so the rows found in it are found once
    too).  By hand, four rows, the last three claimed: the priority tables preempt row 1 by
    Rank (state 1), row 0 is unclaimed (state 2), rows 2 and 3 by priority (state 0), row 3's
    Rank is an error.  Only-Rank: state 2 but on row 1; kept: the unclaimed row 0 and row 1;
    no refusal; the same error; the claimed rows kept or in error: 1 and 3."""
    slots = SlotTable.__new__(SlotTable)  # only the claimed mask is read
    slots.claimed = np.array([False, True, True, True])
    full = (
        np.array([2, 1, 0, 0], dtype=np.int8),
        np.array([True, True, True, False]),
        np.array([False, False, False, True]),
        np.array([False, False, False, True]),
    )
    tables = slots.rank_only(full)
    assert slots.rank_only(full) is tables
    assert tables[0].tolist() == [2, 1, 2, 2]
    assert tables[1].tolist() == [True, True, False, False]
    assert tables[2] is None
    assert tables[3].tolist() == [False, False, False, True]
    rows = slots.rank_rows(tables)
    assert rows.tolist() == [1, 3]
    assert slots.rank_rows(tables) is rows
