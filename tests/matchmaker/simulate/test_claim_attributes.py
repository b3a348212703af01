"""What a claim made in a simulation publishes on its slot, and what it no longer holds of
the claim before it, as a startd publishes a claim's attributes afresh (docs/simulate.md)."""

from __future__ import annotations

import matchmaker
from classad import ParserType, parseAds
from matchmaker.config.knobs import Knobs

START = 1700000000.0
HOUR = 3600.0
ALICE, BOB = "alice@example.org", "bob@example.org"


def ads(text: str) -> list:
    return list(parseAds(text, ParserType.Old))


def slots(n: int, extra: str = "") -> str:
    return "".join(
        f'Name = "s{i}@node"\nCpus = 1\nArch = "X86_64"\nState = "Unclaimed"\nActivity = "Idle"\n'
        f"Requirements = true\nRank = 0\n{extra}\n"
        for i in range(n)
    )


def jobs(owner: str, n: int, extra: str = "", cluster: int = 1) -> str:
    return "".join(
        f'ClusterId = {cluster}\nProcId = {p}\nOwner = "{owner}"\nUser = "{owner}@example.org"\n'
        f"JobStatus = 1\nRequirements = true\n{extra}\n\n"
        for p in range(n)
    )


def column(sim, name: str, key: str) -> list:
    return [r[key] for r in sim if r["kind"] == "submitter" and r["name"] == name]


def test_a_concurrency_limit_stays_held_by_the_claims_of_earlier_cycles():
    """A claim holds its job's ``ConcurrencyLimits`` until it ends: the next cycle counts it
    at its start.  ``LIC_LIMIT = 3``, ten free slots, twenty jobs asking for ``lic``, each
    running 1200 s; cycles every 600 s for an hour (k = 0..6).  k = 0: three start (the
    limit).  k = 1: those three hold the limit, nothing starts.  k = 2 (t = 1200): they
    end, their slots are released, three more start; and so on: three run at every cycle,
    and three more are done every second cycle: 0, 0, 3, 3, 6, 6, 9.  (Had the claims not
    published the limit, each cycle would count none held and start three more: 3, 6,
    6, ... as the earlier ones end.)"""
    knobs = Knobs.from_string("NEGOTIATOR_INTERVAL = 600\nLIC_LIMIT = 3\n")
    job_ads = jobs("alice", 20, 'ConcurrencyLimits = "lic"\nSimJobDuration = 1200')
    sim = matchmaker.simulate(matchmaker.load_ads(knobs, ads(slots(10)), ads(job_ads)), start=START, duration=HOUR)
    assert column(sim, ALICE, "running") == [3] * 7
    assert column(sim, ALICE, "done") == [0, 0, 3, 3, 6, 6, 9]


def test_a_concurrency_limit_read_from_the_slot_is_held_as_the_claim_evaluated_it():
    """A job's ``ConcurrencyLimits`` that reads the slot is evaluated against the slot it
    claims (the startd's reading): ``strcat("lic_", TARGET.Arch)`` is ``lic_X86_64`` on
    these slots, whose limit is 2; the jobs run for ten hours.  Two start at k = 0 and the
    two claims hold the limit at every later cycle: 2 running throughout.  (Unpublished,
    the limit would let two more start each cycle: 2, 4, 6, 8.)  The dynamic slots carved
    from a partitionable slot hold it too; a match there removes the partitionable slot for
    the rest of its cycle (docs/negotiation.md), so one starts at k = 0, the second at
    k = 1, and the two hold the limit from then on: 1, 2, 2, ...  (Unpublished: 1, 2, 3, ...)"""
    knobs = Knobs.from_string(
        "NEGOTIATOR_INTERVAL = 600\nLIC_X86_64_LIMIT = 2\nCLAIM_PARTITIONABLE_LEFTOVERS = false\n"
    )
    extra = 'ConcurrencyLimits = strcat("lic_", TARGET.Arch)\nSimJobDuration = 36000'
    static = matchmaker.simulate(
        matchmaker.load_ads(knobs, ads(slots(8)), ads(jobs("alice", 8, extra))), start=START, duration=HOUR
    )
    assert column(static, ALICE, "running") == [2] * 7
    pslot = (
        'Name = "slot1@node"\nSlotType = "Partitionable"\nPartitionableSlot = true\nCpus = 8\n'
        'Memory = 8192\nDisk = 800000\nArch = "X86_64"\nState = "Unclaimed"\nActivity = "Idle"\n'
        "Requirements = true\nRank = 0\n\n"
    )
    extra += "\nRequestCpus = 1\nRequestMemory = 1024\nRequestDisk = 1000"
    split = matchmaker.simulate(
        matchmaker.load_ads(knobs, ads(pslot), ads(jobs("alice", 8, extra))), start=START, duration=HOUR
    )
    assert column(split, ALICE, "running") == [1] + [2] * 6


def test_a_preempting_claim_keeps_nothing_of_the_claim_it_ended():
    """The slot's claim is charged to its ``AccountingGroup`` when it has one, else to its
    ``RemoteUser``.  alice's job runs on the only slot under the accounting group
    ``group_a.alice``; bob's job, which the slot ranks higher (``Rank``), preempts it at
    t = 0.  bob's claim publishes no ``AccountingGroup`` (his job has none), so it is
    charged to bob: 600 slot-seconds by t = 600 and 1200 by t = 1200, none to the group
    after t = 0.  (Had the group's ``AccountingGroup`` stayed on the slot, the group would
    be charged for bob's job.)"""
    knobs = Knobs.from_string("NEGOTIATOR_INTERVAL = 600\n")
    slot = slots(
        1,
        'Owner = "bob"\nRank = (TARGET.Owner == "bob") * 10\nCurrentRank = 0\n'
        'RemoteUser = "alice@example.org"\nRemoteOwner = "alice@example.org"\n'
        'AccountingGroup = "group_a.alice@example.org"\nJobId = "1.0"\nTotalJobRunTime = 5000\n',
    ).replace('State = "Unclaimed"\nActivity = "Idle"', 'State = "Claimed"\nActivity = "Busy"')
    group = 'AccountingGroup = "group_a.alice@example.org"\nAcctGroup = "group_a"\nAcctGroupUser = "alice"\n'
    running = jobs("alice", 1, group + 'RemoteHost = "s0@node"\nSimJobDuration = 36000').replace(
        "JobStatus = 1", "JobStatus = 2"
    )
    job_ads = running + jobs("bob", 1, "SimJobDuration = 36000", cluster=2)
    sim = matchmaker.simulate(matchmaker.load_ads(knobs, ads(slot), ads(job_ads)), start=START, duration=1200)
    assert column(sim, BOB, "running") == [1, 1, 1]
    assert column(sim, BOB, "charged") == [0, 600, 1200]
    assert [(s.customer, s.start - START, s.end) for s in sim.spans] == [
        ("group_a.alice@example.org", 0, START),
        (BOB, 0, None),
    ]


def test_a_new_claim_has_run_for_no_time_yet():
    """The startd publishes ``TotalJobRunTime`` only while above 0, and a claim starts it
    from 0: a slot claimed in the run holds none, whatever its ad held before.  The default
    ``PREEMPTION_RANK``, ``RemoteUserPrio * 1000000 - TotalJobRunTime`` (undefined: 0),
    preempts the most recently started of a user's jobs first.

    alice runs jobs 1.0 on ``s0`` (``TotalJobRunTime = 9000``, its run ends at t = 600) and
    1.1 on ``s1`` (``TotalJobRunTime = 100``); her job 1.2 waits and claims ``s0`` at
    t = 600.  bob's job arrives at t = 1200.  Half-life 3600 s, cycles every 600 s, so
    beta = 0.5 ** (1/6) = 0.8909; alice held both slots from t = 0: her RUP is
    0.5 beta + 2 (1 - beta) = 0.6637 at t = 600 and 0.6637 beta + 2 (1 - beta) = 0.8094 at
    t = 1200, above bob's 0.5 times 1.2: the claims may be preempted for bob
    (``PREEMPTION_REQUIREMENTS``), and their ranks are ``R * 1000000 - 0`` for ``s0`` and
    ``R * 1000000 - 100`` for ``s1`` (R = 0.8094 for both), so job 1.2 is the one preempted.
    (Had ``s0`` kept its 9000, job 1.1 would be.)  At t = 1800 bob's RUP, 0.5 beta +
    (1 - beta) = 0.5545, is below alice's: bob keeps the slot."""
    knobs = Knobs.from_string(
        "NEGOTIATOR_INTERVAL = 600\nPRIORITY_HALFLIFE = 3600\nDEFAULT_PRIO_FACTOR = 1\n"
        "PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmitterUserPrio * 1.2\n"
    )
    claimed = (
        'State = "Claimed"\nActivity = "Busy"\nRemoteUser = "alice@example.org"\nRemoteOwner = "alice@example.org"\n'
    )
    slot_ads = "".join(
        f'Name = "s{i}@node"\nCpus = 1\n{claimed}JobId = "1.{i}"\nTotalJobRunTime = {ran}\n'
        "Requirements = true\nRank = 0\n\n"
        for i, ran in ((0, 9000), (1, 100))
    )
    job_ads = "".join(
        f'ClusterId = 1\nProcId = {i}\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 2\n'
        f'RemoteHost = "s{i}@node"\nJobCurrentStartDate = {START - ran:.0f}\nSimJobDuration = {dur}\n'
        "Requirements = true\n\n"
        for i, ran, dur in ((0, 9000, 9600), (1, 100, 36000))
    )
    job_ads += jobs("alice", 1, "SimJobDuration = 36000").replace("ProcId = 0", "ProcId = 2")
    job_ads += jobs("bob", 1, f"QDate = {START + 1200:.0f}\nSimJobDuration = 36000", cluster=2)
    sim = matchmaker.simulate(matchmaker.load_ads(knobs, ads(slot_ads), ads(job_ads)), start=START, duration=1800)
    assert column(sim, BOB, "running") == [0, 0, 1, 1]
    assert {j.id: j.preemptions for j in sim.jobs} == {"1.0": 0, "1.1": 0, "1.2": 1, "2.0": 0}
