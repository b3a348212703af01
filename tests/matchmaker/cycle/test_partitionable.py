"""Partitionable slots: the startd's split with HTCondor's request rounding, the schedd's
leftover claims, resources going back when a job ends (docs/negotiation.md, partitionable slots).

Every expected number is worked out by hand in the test's docstring.  HTCondor's
default rounding (its parameter table, checked against the oracle in test_knobs.py):
cores ``quantize(RequestCpus, {1})``, memory ``quantize(RequestMemory, {128})``, disk
``quantize(RequestDisk, {1024})`` -- with a one-element list, a value up to the element
becomes the element, a larger one is rounded up to a multiple of it.
"""

from __future__ import annotations

from itertools import islice

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import matchmaker
from classad import ParserType, parseAds
from classad.ad import ClassAd
from classad.unparse import unparse
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle.claims import claim_matches, leftover_rank_below, rounding_of, slot_rank
from matchmaker.cycle.results import CycleResult, Match
from matchmaker.pool.ads import RUNNING, pool_from_ads
from matchmaker.pool.partition import (
    Rounding,
    child_name,
    child_names,
    machine_resources,
    parent_name,
    requested,
    split,
    with_values,
)

START = 1700000000.0
ALICE = "alice@example.org"
CONSUMPTION = (
    'MachineResources = "Cpus Memory Disk Swap"\nConsumptionCpus = quantize(target.RequestCpus, {1})\n'
    "ConsumptionMemory = quantize(target.RequestMemory, {128})\n"
    "ConsumptionDisk = quantize(target.RequestDisk, {1024})\n"
)
PSLOT_REQ = "(TARGET.RequestCpus <= MY.Cpus) && (TARGET.RequestMemory <= MY.Memory) && (TARGET.RequestDisk <= MY.Disk)"


def pslot_text(
    name: str = "slot1@node1", cpus: int = 16, memory: int = 32768, disk: int = 1000000, requirements: str = PSLOT_REQ
) -> str:
    return (
        f'Name = "{name}"\nMachine = "{name.partition("@")[2]}"\nSlotID = 1\nPartitionableSlot = true\n'
        f'SlotType = "Partitionable"\nCpus = {cpus}\nMemory = {memory}\nDisk = {disk}\nState = "Unclaimed"\n'
        f'Activity = "Idle"\nRequirements = {requirements}\nRank = 0\nSlotWeight = Cpus\n\n'
    )


def job_text(
    proc: int, cpus: int = 1, memory: int = 1000, disk: int = 1000, owner: str = "alice", extra: str = ""
) -> str:
    return (
        f'ClusterId = 1\nProcId = {proc}\nOwner = "{owner}"\nUser = "{owner}@example.org"\nJobStatus = 1\n'
        f"RequestCpus = {cpus}\nRequestMemory = {memory}\nRequestDisk = {disk}\nRequirements = true\n"
        f"{extra}\n\n"
    )


def ads(text: str) -> list[ClassAd]:
    return list(parseAds(text, ParserType.Old))


def simulate(
    slots: str, jobs: str, config: str = "", duration: float = 600, interval: float = 300, job_duration: float = 7200
):
    loaded = matchmaker.load_ads(Knobs.from_string(config), ads(slots), ads(jobs))
    return matchmaker.simulate(loaded, start=START, duration=duration, interval=interval, job_duration=job_duration)


# ---- the split and its rounding ---------------------------------------------------------------


def test_request_rounding_defaults():
    """2 cores stay 2; 1000 MB -> 1024 (8 x 128); 5000 KB -> 5120 (5 x 1024).  Memory 100 and
    disk 10 are below the one list element, so they become 128 and 1024.  A job without
    RequestCpus asks for 1 core, and without RequestMemory/RequestDisk for 0 before rounding:
    128 MB and 1024 KB."""
    slot = ClassAd({"Cpus": 8, "Memory": 4096, "Disk": 100000})
    r = Rounding.defaults()
    res = machine_resources(slot)
    assert res == ("Cpus", "Memory", "Disk")
    assert requested(ClassAd({"RequestCpus": 2, "RequestMemory": 1000, "RequestDisk": 5000}), slot, res, r) == {
        "Cpus": 2,
        "Memory": 1024,
        "Disk": 5120,
    }
    assert requested(ClassAd({"RequestCpus": 1, "RequestMemory": 100, "RequestDisk": 10}), slot, res, r) == {
        "Cpus": 1,
        "Memory": 128,
        "Disk": 1024,
    }
    assert requested(ClassAd({"RequestMemory": 129}), slot, res, r) == {"Cpus": 1, "Memory": 256, "Disk": 1024}
    assert requested(ClassAd({}), slot, res, r) == {"Cpus": 1, "Memory": 128, "Disk": 1024}


def test_request_rounding_knobs():
    """The knobs replace the rounding: memory to multiples of 1000 gives 1000 -> 1000,
    1001 -> 2000; the settings' defaults are HTCondor's (1000 MB -> 1024)."""
    slot = ClassAd({"Cpus": 8, "Memory": 4096, "Disk": 100000})
    job = ClassAd({"RequestCpus": 1, "RequestMemory": 1001, "RequestDisk": 1})
    res = machine_resources(slot)
    knobs = Knobs.from_string("MODIFY_REQUEST_EXPR_REQUESTMEMORY = quantize(RequestMemory, 1000)\n")
    assert requested(job, slot, res, rounding_of(Settings.from_knobs(knobs)))["Memory"] == 2000
    assert requested(ClassAd({"RequestMemory": 1000}), slot, res, rounding_of(Settings.defaults()))["Memory"] == 1024


def test_machine_resources_and_names():
    """MachineResources lists what is handed out, swap aside; dynamic slots are named
    ``slot1_N@host`` after their parent."""
    assert machine_resources(ClassAd({"MachineResources": "Cpus Memory Disk Swap GPUs"})) == (
        "Cpus",
        "Memory",
        "Disk",
        "GPUs",
    )
    assert machine_resources(ClassAd({"Cpus": 1, "GPUs": 2})) == ("Cpus", "Memory", "Disk", "GPUs")
    # The same lists again (each text is split once): the same answers; a list naming only
    # swap, or nothing, gives the defaults of each ad (with GPUs when that ad has them).
    for _ in range(2):
        assert machine_resources(ClassAd({"MachineResources": "Cpus, Memory Memory Swap"})) == ("Cpus", "Memory")
        assert machine_resources(ClassAd({"MachineResources": " swap "})) == ("Cpus", "Memory", "Disk")
        assert machine_resources(ClassAd({"MachineResources": " swap ", "GPUs": 1})) == (
            "Cpus",
            "Memory",
            "Disk",
            "GPUs",
        )
        assert machine_resources(ClassAd({"MachineResources": "  ", "GPUs": 1})) == ("Cpus", "Memory", "Disk", "GPUs")
    assert child_name("slot1@node1", 3) == "slot1_3@node1"
    assert list(islice(child_names("slot1@node1", 3), 2)) == [(3, "slot1_3@node1"), (4, "slot1_4@node1")]
    assert next(child_names("slot1", 1)) == (1, "slot1_1")  # a name without a host
    assert parent_name("slot1_3@node1") == "slot1@node1"
    assert parent_name("slot1@node1") is None


def one_match(pool, job: str, slot: str) -> CycleResult:
    return CycleResult([Match(job, ALICE, slot, "no-preemption", None, 16.0)], [], [], [], {})


def test_split_makes_a_dynamic_slot():
    """A 2-core, 1000 MB, 5000 KB job on a pslot of 8 cores, 4096 MB, 100000 KB: the
    dynamic slot slot1_1@node1 holds 2 cores, 1024 MB, 5120 KB and is claimed by alice;
    the pslot keeps 6 cores, 3072 MB, 94880 KB (100000 - 5120).  Its weight (Cpus) is 2,
    the pslot's 6.  Leftovers off: nothing else starts."""
    settings = Settings.defaults(claim_leftovers=False)
    pool = pool_from_ads(
        ads(pslot_text(cpus=8, memory=4096, disk=100000)),
        ads(job_text(0, cpus=2, memory=1000, disk=5000) + job_text(1)),
    )
    out = claim_matches(pool, one_match(pool, "1.0", "slot1@node1"), settings)
    slots = {s.name: s for s in out.pool.slots}
    assert set(slots) == {"slot1@node1", "slot1_1@node1"}
    p, d = slots["slot1@node1"].ad, slots["slot1_1@node1"].ad
    assert (p["Cpus"], p["Memory"], p["Disk"]) == (6, 3072, 94880)
    assert (d["Cpus"], d["Memory"], d["Disk"]) == (2, 1024, 5120)
    assert d["DynamicSlot"] is True and d["SlotType"] == "Dynamic" and d["ParentSlotId"] == 1
    assert "PartitionableSlot" not in d
    assert (d["State"], d["RemoteUser"], d["JobId"]) == ("Claimed", ALICE, "1.0")
    assert slots["slot1_1@node1"].weight == 2 and slots["slot1@node1"].weight == 6
    assert slots["slot1_1@node1"].charged and not slots["slot1@node1"].charged
    jobs = {j.id: j for j in out.pool.jobs}
    assert jobs["1.0"].status == RUNNING and jobs["1.0"].ad["RemoteHost"] == "slot1_1@node1"
    assert jobs["1.1"].status != RUNNING
    assert [(s.job, s.slot, s.leftover) for s in out.starts] == [("1.0", "slot1_1@node1", False)]


def test_startd_refuses_a_job_too_large_for_what_is_left():
    """A pslot whose Requirements are just true matched with a 32-core job while it has 16:
    the startd cannot carve it, the job stays idle and no dynamic slot appears."""
    pool = pool_from_ads(ads(pslot_text(requirements="true")), ads(job_text(0, cpus=32)))
    out = claim_matches(pool, one_match(pool, "1.0", "slot1@node1"), Settings.defaults())
    assert [s.name for s in out.pool.slots] == ["slot1@node1"]
    assert out.pool.slots[0].ad["Cpus"] == 16
    assert out.starts == [] and [j for j, _ in out.refused] == ["1.0"]


# ---- leftovers ------------------------------------------------------------------------------------


def test_leftovers_on_fill_the_slot_in_the_first_cycle():
    """16 one-core jobs (1000 MB -> 1024 each, 16384 of 32768 MB) on a 16-core pslot: the
    negotiator matches one (the pslot is one candidate per cycle), the schedd claims the
    leftovers for the other 15 at once.  After cycles at 0, 300, 600 s: 16 running each
    time, and each job is charged its own core: 16 cores x 600 s = 9600 core-seconds."""
    sim = simulate(pslot_text(), "".join(job_text(p) for p in range(16)))
    assert sim.column(ALICE, "running") == [16, 16, 16]
    assert sim.column(ALICE, "matched") == [1, 0, 0]
    assert sim.column(ALICE, "usage") == [16.0, 16.0, 16.0]
    assert sim.at(600 / 3600, ALICE)["charged"] == pytest.approx(16 * 600)
    assert sorted({s.slot for s in sim.spans}) == sorted(f"slot1_{k}@node1" for k in range(1, 17))
    assert all(s.weight == 1 for s in sim.spans)


def test_leftovers_off_one_job_per_cycle():
    """Without CLAIM_PARTITIONABLE_LEFTOVERS each cycle's single pslot match starts one job:
    1, 2, 3 running after the cycles at 0, 300, 600 s.  Charged by 600 s: the first job
    600 s, the second 300 s, the third 0: 900 core-seconds."""
    sim = simulate(pslot_text(), "".join(job_text(p) for p in range(16)), "CLAIM_PARTITIONABLE_LEFTOVERS = false\n")
    assert sim.column(ALICE, "running") == [1, 2, 3]
    assert sim.at(600 / 3600, ALICE)["charged"] == pytest.approx(900)


def test_leftovers_default_follows_slot_weights():
    """CLAIM_PARTITIONABLE_LEFTOVERS defaults to $(NEGOTIATOR_USE_SLOT_WEIGHTS): without slot
    weights the schedd leaves the leftovers alone, one job per cycle."""
    sim = simulate(pslot_text(), "".join(job_text(p) for p in range(4)), "NEGOTIATOR_USE_SLOT_WEIGHTS = false\n")
    assert sim.column(ALICE, "running") == [1, 2, 3]


def test_memory_leftovers_that_fit_no_job():
    """A pslot of 16 cores and 4096 MB; jobs 0-3 ask 1 core and 1500 MB (-> 1536), job 4
    asks 500 MB (-> 512).  Cycle 0: job 0 matched (4096 - 1536 = 2560 left), leftovers:
    job 1 fits (1024 left), jobs 2 and 3 do not, job 4 does (512 left).  Then 13 cores and
    512 MB sit unused: no later cycle can place jobs 2 and 3 (their 1500 MB > 512)."""
    jobs = "".join(job_text(p, memory=1500) for p in range(4)) + job_text(4, memory=500)
    sim = simulate(pslot_text(memory=4096), jobs, duration=900)
    assert sim.column(ALICE, "running") == [3, 3, 3, 3]
    assert sim.column(ALICE, "idle") == [2, 2, 2, 2]
    assert sorted(s.slot for s in sim.spans) == ["slot1_1@node1", "slot1_2@node1", "slot1_3@node1"]
    running = sorted(j.id for j in sim.jobs if j.starts == 1)
    assert running == ["1.0", "1.1", "1.4"]


def test_leftovers_only_for_the_matched_submitter():
    """Two submitters, one 4-core pslot: the negotiator gives it to one of them (equal
    priorities: alice first by name); the schedd fills the leftovers with alice's jobs only,
    so bob gets nothing in that cycle: alice 4, bob 0."""
    jobs = "".join(job_text(p) for p in range(4)) + "".join(
        job_text(p, owner="bob").replace("ClusterId = 1", "ClusterId = 2") for p in range(4)
    )
    sim = simulate(pslot_text(cpus=4), jobs, duration=0)
    assert sim.column(ALICE, "running") == [4]
    assert sim.column("bob@example.org", "running") == [0]


def test_leftovers_start_no_job_naming_a_concurrency_limit():
    """HTCondor's schedd drops the match's MatchedConcurrencyLimits from the leftovers' ad
    and, with CLAIM_RECYCLING_CONSIDER_LIMITS (default true), starts a job on a claim only
    when the job's ConcurrencyLimits equals it: no job naming a limit runs on leftovers.
    A 16-core pslot; alice's jobs 0-2 name sw_licence (SW_LICENCE_LIMIT = 2), 3-5 none.
    Cycle 0: the negotiator matches job 0 (sw_licence 1 of 2), the leftovers take 3, 4, 5
    but not 1, 2: 4 running.  Cycle 300: sw_licence held by job 0 (1 of 2), job 1 is
    matched, job 2 not on leftovers: 5.  Cycle 600: the limit is full, job 2 waits: 5."""
    lic = 'ConcurrencyLimits = "sw_licence"'
    jobs = "".join(job_text(p, extra=lic if p < 3 else "") for p in range(6))
    sim = simulate(pslot_text(), jobs, "SW_LICENCE_LIMIT = 2\n")
    assert sim.column(ALICE, "running") == [4, 5, 5]
    assert sim.column(ALICE, "matched") == [1, 1, 0]
    assert sorted(j.id for j in sim.jobs if j.starts == 1) == ["1.0", "1.1", "1.3", "1.4", "1.5"]
    # Without the knob the schedd starts every job that fits: all 6 in cycle 0, sw_licence
    # held 3 times (more than its capacity, as HTCondor's schedd would).
    off = simulate(pslot_text(), jobs, "SW_LICENCE_LIMIT = 2\nCLAIM_RECYCLING_CONSIDER_LIMITS = false\n")
    assert off.column(ALICE, "running") == [6, 6, 6]


def test_leftover_limits_are_evaluated_against_what_is_left():
    """The job's ConcurrencyLimits is evaluated with the leftovers' ad as TARGET; a value
    that is not a string, or the empty string, names no limit.  One cycle on a 16-core
    pslot: job 0 (no limits) is matched, 15 cores left; job 1's ifThenElse(Cpus >= 16, ...)
    is undefined there: started, 14 left; job 2's ifThenElse(Cpus >= 14, "sw_licence", "")
    names sw_licence: not started; job 3's "" names none: started."""
    jobs = (
        job_text(0)
        + job_text(1, extra='ConcurrencyLimits = ifThenElse(TARGET.Cpus >= 16, "sw_licence", undefined)')
        + job_text(2, extra='ConcurrencyLimits = ifThenElse(TARGET.Cpus >= 14, "sw_licence", "")')
        + job_text(3, extra='ConcurrencyLimits = ""')
    )
    sim = simulate(pslot_text(), jobs, duration=0)
    assert sorted(j.id for j in sim.jobs if j.starts == 1) == ["1.0", "1.1", "1.3"]
    assert sim.column(ALICE, "idle") == [1]


def ranked_pslot(rank: str, current_rank: str = "CurrentRank = 0.0\n") -> str:
    """A 16-core pslot with ``Rank = rank`` publishing ``current_rank`` (a startd publishes
    CurrentRank = 0.0 for a partitionable slot: the claim the pslot itself holds is unclaimed)."""
    return pslot_text().replace("Rank = 0\n", f"Rank = {rank}\n{current_rank}")


def leftover_starts(slots: str, jobs: str, config: str = "") -> list[str]:
    """The jobs started in one cycle (the matched one and those on leftovers); the same with
    SIMULATE_INCREMENTAL on and off."""
    out = []
    for incremental in ("true", "false"):
        sim = simulate(slots, jobs, f"{config}SIMULATE_INCREMENTAL = {incremental}\n", duration=0)
        out.append(sorted(j.id for j in sim.jobs if j.starts == 1))
    assert out[0] == out[1]
    return out[0]


def prio_jobs(*prios: str) -> str:
    return "".join(job_text(p, extra=f"Prio = {v}" if v else "") for p, v in enumerate(prios))


def test_leftovers_refuse_jobs_the_slot_ranks_below_the_leftovers_current_rank():
    """HTCondor's FindRunnableJob (qmgmt.cpp) skips a job when the slot's Rank, evaluated
    with the job as TARGET, is a number below the CurrentRank of the ad it is given; for
    leftovers that is the pslot ad the startd sends back, whose CurrentRank is 0.0 (not
    the rank of the claimed job).  Rank = TARGET.Prio on a 16-core pslot, one cycle: job 0
    (Prio 5) is matched; on the leftovers 1 (3 >= 0) and 2 (7 >= 0) start, 3 (-1 < 0) and
    4 (-0.5 < 0) do not, 5 (no Prio: undefined, not a number) and 6 ("low": a string) are
    not compared and start, 7 (false, 0.0 >= 0) starts: 1.0, 1.1, 1.2, 1.5, 1.6, 1.7."""
    jobs = prio_jobs("5", "3", "7", "-1", "-0.5", "", '"low"', "false")
    started = leftover_starts(ranked_pslot("TARGET.Prio"), jobs)
    assert started == ["1.0", "1.1", "1.2", "1.5", "1.6", "1.7"]


def test_leftovers_rank_test_is_strict_and_reads_the_ads_current_rank():
    """The comparison is ``Rank < CurrentRank`` (equal is not refused), with a bool as 0/1,
    against the leftovers' ad's own CurrentRank.  With CurrentRank = 2.0 and Rank =
    TARGET.Prio: job 0 (Prio 9) is matched (the negotiator does not compare ranks of an
    unclaimed slot); 1 (2, equal) starts, 2 (1.5) does not, 3 (true = 1.0 < 2) does not,
    4 (2.5) starts: 1.0, 1.1, 1.4."""
    jobs = prio_jobs("9", "2", "1.5", "true", "2.5")
    assert leftover_starts(ranked_pslot("TARGET.Prio", "CurrentRank = 2.0\n"), jobs) == ["1.0", "1.1", "1.4"]


def test_leftovers_rank_test_without_a_number_to_compare_with():
    """A CurrentRank that is not a number (here undefined) makes the schedd compare no
    rank: every job starts, even Prio -1.  A pslot ad without CurrentRank stands for the
    startd's, which always publishes one (0.0 for the pslot): job 1 (Prio -1) is refused."""
    jobs = prio_jobs("5", "-1", "4")
    undefined = ranked_pslot("TARGET.Prio", "CurrentRank = NoSuchAttr\n")
    assert leftover_starts(undefined, jobs) == ["1.0", "1.1", "1.2"]
    assert leftover_starts(ranked_pslot("TARGET.Prio", ""), jobs) == ["1.0", "1.2"]


def test_leftovers_of_a_slot_whose_literal_rank_is_below_its_current_rank():
    """Rank = -1.5 (the same for every job) is below the pslot's CurrentRank 0.0: only the
    matched job 0 runs, nothing on the leftovers; Rank = 0.0 refuses none: all three."""
    jobs = prio_jobs("", "", "")
    assert leftover_starts(ranked_pslot("-1.5"), jobs) == ["1.0"]
    assert leftover_starts(ranked_pslot("0.0"), jobs) == ["1.0", "1.1", "1.2"]


def test_leftover_rank_refused_values():
    """The rule alone: the slot's Rank (slot MY, job TARGET; bool as 0/1, missing as the
    startd's 0.0, not a number: no refusal) < the slot's CurrentRank (missing: 0.0)."""
    job = ClassAd({"Prio": 1})

    def refused(slot: str) -> bool:
        return leftover_rank_below(job, ads(slot + "\n")[0], START) is not None

    assert refused("Rank = TARGET.Prio\nCurrentRank = 1.5")  # 1 < 1.5
    assert not refused("Rank = TARGET.Prio\nCurrentRank = 1")  # 1 < 1 is false
    assert refused("Rank = TARGET.Prio == 2\nCurrentRank = 0.5")  # false = 0 < 0.5
    assert not refused("Rank = TARGET.Prio == 1\nCurrentRank = 0.5")  # true = 1
    assert not refused('Rank = "high"\nCurrentRank = 5')  # not a number
    assert not refused("Rank = TARGET.Missing\nCurrentRank = 5")  # undefined
    assert refused("Rank = -TARGET.Prio")  # -1 < 0.0 (no CurrentRank: the startd's 0.0)
    assert refused("Slot = 1\nCurrentRank = 0.5")  # no Rank: the startd's 0.0 < 0.5
    assert not refused("Rank = -5\nCurrentRank = Missing")  # CurrentRank not a number
    assert refused("Rank = -5\nCurrentRank = MY.Base + 1\nBase = -3")  # evaluated: -5 < -2
    assert not refused("Rank = -5\nCurrentRank = MY.Base + 1\nBase = -7")  # -5 < -6 is false


@pytest.mark.parametrize(
    "rank, owner, expected",
    [
        ('TARGET.Owner == "alice"', "alice", 1.0),  # true counts 1 (startd: EvalFloat)
        ('TARGET.Owner == "alice"', "bob", 0.0),  # false counts 0
        ("true", "alice", 1.0),  # a literal, on the static and the dynamic slot alike
        ("TARGET.RequestCpus > 0", "alice", 1.0),  # reads only the job's literals
        ('"high"', "alice", 0.0),  # not a number: 0 (the startd's "Setting RANK to 0.0")
    ],
)
def test_current_rank_of_a_boolean_rank(rank: str, owner: str, expected: float):
    """The startd publishes as CurrentRank its Rank for the claim's job read with EvalFloat
    (Resource.cpp compute_rank), which takes a bool as 1.0 or 0.0: a static slot and the
    dynamic slot split from a pslot, both with ``Rank = rank``, claimed by ``owner``'s job."""
    static = static_text("slot1@static", 4).replace("Rank = 0\n", f"Rank = {rank}\n")
    pslot = pslot_text("slot1@node1").replace("Rank = 0\n", f"Rank = {rank}\n")
    job = job_text(0, owner=owner).replace('"alice@example.org"', f'"{owner}@example.org"')
    for text, claimed_name in ((static, "slot1@static"), (pslot, "slot1_1@node1")):
        pool = pool_from_ads(ads(text), ads(job))
        result = one_match(pool, "1.0", pool.slots[0].name)
        claimed = claim_matches(pool, result, Settings.defaults(), START)
        ad = {s.name: s.ad for s in claimed.pool.slots}[claimed_name]
        assert ad.evaluate("CurrentRank") == expected


def cpus_memory_pslot(name: str, cpus: int, disk: int) -> str:
    """A pslot that hands out only cores and memory (1024 MB a core), with some ``Disk`` it keeps."""
    return pslot_text(
        name, cpus=cpus, memory=cpus * 1024, disk=disk, requirements="TARGET.RequestCpus <= MY.Cpus"
    ).replace("SlotWeight = Cpus\n", 'SlotWeight = Cpus\nMachineResources = "Cpus Memory"\n')


def test_leftovers_of_a_slot_listing_other_resources_than_a_refused_match():
    """A job's request is sized for the resources of the slot it is tried on.  slot1@a hands
    out Cpus Memory Disk (2 cores, 2048 MB, 100000 KB; Requirements true); slot1@b only
    Cpus Memory (3 cores, 3072 MB; its 1000 KB of Disk are not handed out).  alice's jobs
    ask 1 core and 1000 MB (-> 1024); 1.0 asks 200000 KB of disk (-> 196 x 1024 = 200704)
    and ranks a first, 1.1-1.3 ask 1000 KB (-> 1024).  The negotiator: 1.0 takes a, which
    leaves the cycle; 1.1 takes b; 1.2 and 1.3 find nothing.  The startd refuses 1.0 on a
    (200704 > 100000 KB): no leftovers on a.  1.1 on b takes {1 core, 1024 MB}: 2 cores,
    2048 MB left.  Leftovers on b in queue order, each asking b {1, 1024}: 1.0 fits (b
    hands out no disk), then 1.2; 1.3 finds no core.  b ends with 0 cores, 0 MB, its
    Disk untouched; a is as it was.  Running 3, idle 1 (1.3).  The next cycle (300 s)
    gives a to 1.3 (b has no core for b's Requirements): running 4, idle 0."""
    a = pslot_text("slot1@a", cpus=2, memory=2048, disk=100000, requirements="true")
    slots = a + cpus_memory_pslot("slot1@b", 3, 1000)
    jobs = job_text(0, disk=200000, extra='Rank = TARGET.Name == "slot1@a"')
    jobs += "".join(job_text(p) for p in (1, 2, 3))
    loaded = matchmaker.load_ads(Knobs.from_string(""), ads(slots), ads(jobs))
    result = matchmaker.negotiate(loaded, now=START)
    assert [(m.job, m.slot) for m in result.matches] == [("1.0", "slot1@a"), ("1.1", "slot1@b")]
    out = claim_matches(loaded.pool, result, loaded.settings)
    assert [j for j, _ in out.refused] == ["1.0"]
    assert [(s.job, s.slot, s.leftover) for s in out.starts] == [
        ("1.1", "slot1_1@b", False),
        ("1.0", "slot1_2@b", True),
        ("1.2", "slot1_3@b", True),
    ]
    slots_out = {s.name: s.ad for s in out.pool.slots}
    assert [slots_out["slot1@a"][r] for r in ("Cpus", "Memory", "Disk")] == [2, 2048, 100000]
    assert [slots_out["slot1@b"][r] for r in ("Cpus", "Memory", "Disk")] == [0, 0, 1000]
    assert [(slots_out[f"slot1_{k}@b"]["Cpus"], slots_out[f"slot1_{k}@b"]["Memory"]) for k in (1, 2, 3)] == [
        (1, 1024)
    ] * 3
    sim = simulate(slots, jobs, duration=300)
    assert sim.column(ALICE, "running") == [3, 4]
    assert sim.column(ALICE, "idle") == [1, 0]


def test_leftovers_ask_a_slot_only_for_the_resources_it_lists():
    """The matches 1.0 on slot1@a (Cpus Memory Disk: 2 cores, 2048 MB, 100000 KB), then 1.1
    on slot1@b (Cpus Memory: 2 cores, 2048 MB, 1000 KB of Disk it does not hand out).
    alice's four jobs ask 1 core, 1000 MB (-> 1024), 1000 KB (-> 1024).  Claims: 1.0 takes
    {1, 1024, 1024} of a, 1.1 {1, 1024} of b.  Leftovers on a: 1.2 fits (a: 0 cores, 0 MB,
    100000 - 2 x 1024 = 97952 KB left), 1.3 does not (no core).  Leftovers on b: 1.3 asks b
    {1, 1024} and fits (b: 0 cores, 0 MB, Disk still 1000), although its 1024 KB for a
    would not fit b's 1000 KB."""
    a = pslot_text("slot1@a", cpus=2, memory=2048, disk=100000)
    pool = pool_from_ads(ads(a + cpus_memory_pslot("slot1@b", 2, 1000)), ads("".join(job_text(p) for p in range(4))))
    result = CycleResult(
        [
            Match("1.0", ALICE, "slot1@a", "no-preemption", None, 2.0),
            Match("1.1", ALICE, "slot1@b", "no-preemption", None, 2.0),
        ],
        [],
        [],
        [],
        {},
    )
    out = claim_matches(pool, result, Settings.defaults())
    assert [(s.job, s.slot) for s in out.starts] == [
        ("1.0", "slot1_1@a"),
        ("1.1", "slot1_1@b"),
        ("1.2", "slot1_2@a"),
        ("1.3", "slot1_2@b"),
    ]
    slots = {s.name: s.ad for s in out.pool.slots}
    assert (slots["slot1@a"]["Cpus"], slots["slot1@a"]["Memory"], slots["slot1@a"]["Disk"]) == (0, 0, 97952)
    assert (slots["slot1@b"]["Cpus"], slots["slot1@b"]["Memory"], slots["slot1@b"]["Disk"]) == (0, 0, 1000)


def test_resources_come_back_when_jobs_end():
    """Jobs of 600 s on a 4-core pslot with 8 jobs, cycles every 300 s: jobs 0-3 run from 0
    to 600; at 600 their dynamic slots go away, the pslot has 4 cores again, and jobs 4-7
    start (the first through the negotiator, three as leftovers) on dynamic slots slot1_1..4
    again.  Running: 4, 4, 4; done at 600: 4."""
    sim = simulate(pslot_text(cpus=4), "".join(job_text(p, extra="SimJobDuration = 600") for p in range(8)))
    assert sim.column(ALICE, "running") == [4, 4, 4]
    assert sim.column(ALICE, "done") == [0, 0, 4]
    spans = sorted((s.start, s.slot, s.end) for s in sim.spans)
    assert spans[:4] == [(START, f"slot1_{k}@node1", START + 600) for k in range(1, 5)]
    assert [(s[0], s[1]) for s in spans[4:]] == [(START + 600, f"slot1_{k}@node1") for k in range(1, 5)]


# ---- properties -----------------------------------------------------------------------------------

PROPS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
RES = ("Cpus", "Memory", "Disk")


@st.composite
def pools(draw):
    """1-3 partitionable slots (1-8 cores, 1-8 GB, 2-20 MB of disk; with a consumption policy
    or not) and a static slot, 1-14
    jobs of alice and bob (1-3 cores, 100-3000 MB, 1-4000 KB, 300-1500 s; bob's arrive at
    600 s); leftovers on or off;
    no preemption, priority preemption, or that and preemption inside partitionable slots."""
    slots = "".join(
        pslot_text(
            f"slot1@node{m}", draw(st.integers(1, 8)), 1024 * draw(st.integers(1, 8)), 1024 * draw(st.integers(2, 20))
        ).replace("SlotWeight = Cpus\n", "SlotWeight = Cpus\n" + CONSUMPTION * cp)
        for m, cp in enumerate(draw(st.lists(st.booleans(), min_size=1, max_size=3)))
    )
    slots += 'Name = "slot1@static"\nCpus = 1\nMemory = 2048\nState = "Unclaimed"\nRequirements = true\nRank = 0\n\n'
    jobs = ""
    for p in range(draw(st.integers(1, 14))):
        owner = draw(st.sampled_from(["alice", "bob"]))
        arrival = f"\nQDate = {START + 600:.0f}" if owner == "bob" else ""  # bob comes to a busy pool
        jobs += job_text(
            p,
            draw(st.integers(1, 3)),
            draw(st.integers(100, 3000)),
            draw(st.integers(1, 4000)),
            owner,
            f"SimJobDuration = {draw(st.integers(1, 5)) * 300}{arrival}",
        )
    preemption = draw(
        st.sampled_from(
            [
                "PREEMPTION_REQUIREMENTS = False\n",
                "PREEMPTION_REQUIREMENTS = True\n",
                "PREEMPTION_REQUIREMENTS = True\nALLOW_PSLOT_PREEMPTION = true\n",
            ]
        )
    )
    return slots, jobs, draw(st.booleans()), preemption


def snapshots(monkeypatch) -> list:
    """What the pool holds after every cycle: (slot name, resources, customer, weight) per
    slot and the slot of each running job."""
    from matchmaker.simulate.series import Simulation

    seen: list = []
    record = Simulation.record

    def spy(self, k, t, run, result, preempted):
        slots = [
            (s.name, {r: s.ad.get(r) for r in RES}, s.customer if s.charged else None, s.weight) for s in run.slots
        ]
        seen.append((t, slots, [(j.id, j.slot) for j in run.jobs if j.phase == "running"]))
        return record(self, k, t, run, result, preempted)

    monkeypatch.setattr(Simulation, "record", spy)
    return seen


@pytest.mark.slow
@PROPS
@given(pools())
def test_partitionable_invariants(monkeypatch, pool):
    """After every cycle: (1) each machine's partitionable slot plus its dynamic slots hold
    exactly the resources it started with; (2) no two running jobs hold one slot and every
    claimed dynamic slot runs exactly one job; (3) what the accountant charged each submitter
    equals the sum over cycles of its claimed slots' weights times the interval."""
    slots, jobs, leftovers, preemption = pool
    seen = snapshots(monkeypatch)
    config = f"CLAIM_PARTITIONABLE_LEFTOVERS = {leftovers}\n{preemption}"
    sim = simulate(slots, jobs, config, duration=1800, interval=300)
    totals = {ad["Name"]: {r: ad[r] for r in RES} for ad in ads(slots) if ad.get("PartitionableSlot")}
    for _t, snap, running in seen:
        held = {name: {r: 0 for r in RES} for name in totals}
        for name, res, _customer, _w in snap:
            family = name if name in totals else parent_name(name)
            if family in held:
                for r in RES:
                    held[family][r] += res[r]
        assert held == totals
        on = [slot for _j, slot in running]
        assert len(on) == len(set(on))
        claimed_dynamic = {name for name, _r, customer, _w in snap if customer and parent_name(name)}
        assert claimed_dynamic == {slot for slot in on if parent_name(slot)}
    for who in ("alice@example.org", "bob@example.org"):
        charged = sum(w * 300 for _t, snap, _r in seen[:-1] for _n, _res, customer, w in snap if customer == who)
        if who in sim.names():
            assert sim.column(who, "charged")[-1] == pytest.approx(charged, abs=1e-6)


# ---- dumps as condor_status gives them ---------------------------------------------------------


def dslot_text(k: int, cpus: int, memory: int, user: str, job: str) -> str:
    return (
        f'Name = "slot1_{k}@node1"\nMachine = "node1"\nSlotID = 1\nDynamicSlot = true\nSlotType = "Dynamic"\n'
        f'ParentSlotId = 1\nCpus = {cpus}\nMemory = {memory}\nDisk = 1024\nState = "Claimed"\nActivity = "Busy"\n'
        f'RemoteUser = "{user}"\nRemoteOwner = "{user}"\nJobId = "{job}"\nRequirements = {PSLOT_REQ}\n'
        f'Rank = 0\nSlotWeight = Cpus\nMyType = "Machine"\n\n'
    )


def test_mixed_dump_pslot_dynamic_and_static(tmp_path, monkeypatch):
    """A machine of 32 cores read as condor_status shows it: the pslot advertises the 8 cores
    left, three dynamic slots of alice hold 8 + 8 + 8, and a static 1-core slot: pool weight
    8 + 24 + 1 = 33.  bob's two one-core jobs: the default NEGOTIATOR_PRE_JOB_RANK prefers
    fewer cores, so job 2.0 takes the static slot, 2.1 the pslot, carved as slot1_4 (1..3 are
    taken).  alice's jobs (running since the start, 600 s) end at 600: their slots go away
    and the pslot is back to 32 - 1 = 31 cores."""
    slots = (
        pslot_text(cpus=8, memory=8192, disk=100000).replace("SlotWeight", 'MyType = "Machine"\nSlotWeight')
        + "".join(dslot_text(k, 8, 2048, ALICE, f"1.{k - 1}") for k in (1, 2, 3))
        + 'Name = "slot1@static"\nCpus = 1\nMemory = 2048\nState = "Unclaimed"\nRequirements = true\nRank = 0\n'
        'MyType = "Machine"\n\n'
    )
    jobs = "".join(
        job_text(
            p,
            cpus=8,
            memory=2048,
            extra=f'JobStatus = 2\nRemoteHost = "slot1_{p + 1}@node1"\n'
            f"JobCurrentStartDate = {START:.0f}\nSimJobDuration = 600",
        )
        for p in range(3)
    ).replace("JobStatus = 1\n", "")
    jobs += "".join(job_text(p, owner="bob").replace("ClusterId = 1", "ClusterId = 2") for p in range(2))
    (tmp_path / "slots.ad").write_text(slots)
    (tmp_path / "jobs.ad").write_text(jobs)
    (tmp_path / "c.config").write_text("")
    loaded = matchmaker.load(tmp_path / "c.config", tmp_path / "slots.ad", tmp_path / "jobs.ad")
    seen = snapshots(monkeypatch)
    sim = matchmaker.simulate(loaded, start=START, duration=600, interval=300)
    assert sim.meta()["pool_weight"] == 33
    pslot_cpus = [next(res["Cpus"] for name, res, _c, _w in snap if name == "slot1@node1") for _t, snap, _r in seen]
    assert pslot_cpus == [7, 7, 31]
    assert sim.column("bob@example.org", "running") == [2, 2, 2]
    assert sim.column(ALICE, "running") == [3, 3, 0]
    bob = sorted((s.slot, s.weight) for s in sim.spans if s.customer == "bob@example.org")
    assert bob == [("slot1@static", 1), ("slot1_4@node1", 1)]


def test_any_dump_keeps_machine_and_job_ads(tmp_path):
    """condor_status -any: three DaemonMaster ads, a Scheduler and a Negotiator around two
    Machine ads; only the two slots are read, and one warning line names the five skipped
    ads instead of a "no Requirements" warning each.  The job file's Submitter ad likewise."""
    other = [
        f'MyType = "{t}"\nName = "{t.lower()}{i}@host"\n\n'
        for i, t in enumerate(["DaemonMaster", "DaemonMaster", "Scheduler", "DaemonMaster", "Negotiator"])
    ]
    slots = (
        "".join(other[:2])
        + pslot_text().replace("SlotWeight", 'MyType = "Machine"\nSlotWeight')
        + "".join(other[2:])
        + 'MyType = "Machine"\nName = "slot2@static"\nCpus = 1\nRequirements = true\n\n'
    )
    (tmp_path / "slots.ad").write_text(slots)
    (tmp_path / "jobs.ad").write_text(
        job_text(0).replace("JobStatus", 'MyType = "Job"\nJobStatus')
        + 'MyType = "Submitter"\nName = "alice@example.org"\n\n'
    )
    (tmp_path / "c.config").write_text("")
    loaded = matchmaker.load(tmp_path / "c.config", tmp_path / "slots.ad", tmp_path / "jobs.ad")
    assert [s.name for s in loaded.pool.slots] == ["slot1@node1", "slot2@static"]
    assert [j.id for j in loaded.pool.jobs] == ["1.0"]
    assert loaded.pool.warnings == [
        f"{tmp_path / 'slots.ad'}: warning: skipped 5 ads whose MyType is not 'Machine' "
        "(DaemonMaster 3, Negotiator 1, Scheduler 1)",
        f"{tmp_path / 'jobs.ad'}: warning: skipped 1 ad whose MyType is not 'Job' (Submitter 1)",
    ]


# ---- depth-first packing -------------------------------------------------------------------------


def two_machines_four_jobs(config: str):
    slots = pslot_text("slot1@node1", cpus=4, memory=8192) + pslot_text("slot1@node2", cpus=4, memory=8192)
    loaded = matchmaker.load_ads(Knobs.from_string(config), ads(slots), ads("".join(job_text(p) for p in range(4))))
    result = matchmaker.negotiate(loaded, now=START)
    claimed = claim_matches(loaded.pool, result, loaded.settings)
    per_machine: dict[str, int] = {}
    for start in claimed.starts:
        machine = start.slot.partition("@")[2]
        per_machine[machine] = per_machine.get(machine, 0) + 1
    return result, per_machine


def test_breadth_first_by_default():
    """Two 4-core pslots, four one-core jobs of one autocluster.  Default: each pslot is one
    candidate; 1.0 takes node1 (the first in slot order, every rank equal), 1.1 node2, 1.2
    finds nothing left and is rejected (1.3 skipped with its autocluster).  The schedd then
    fills node1's leftovers with 1.2 and 1.3: node1 runs 3 jobs, node2 1."""
    result, per_machine = two_machines_four_jobs("")
    assert [(m.job, m.slot) for m in result.matches] == [("1.0", "slot1@node1"), ("1.1", "slot1@node2")]
    assert per_machine == {"node1": 3, "node2": 1}


def test_depth_first_packs_one_slot():
    """NEGOTIATOR_DEPTH_FIRST: after 1.0 takes node1, min(4 cores / 1, 8192 MB / 1000) = 4
    jobs fit it, so the next 3 requests (1.1-1.3) are left to the schedd: one match in the
    cycle, and the leftovers put all four jobs on node1; node2 stays free for others."""
    result, per_machine = two_machines_four_jobs("NEGOTIATOR_DEPTH_FIRST = true\n")
    assert [(m.job, m.slot) for m in result.matches] == [("1.0", "slot1@node1")]
    assert result.rejected == []
    assert per_machine == {"node1": 4}


def test_jobs_that_fit():
    """min(Cpus // RequestCpus, Memory // RequestMemory): 8 cores and 4096 MB hold
    min(8 // 2, 4096 // 1000) = 4 jobs of 2 cores and 1000 MB, min(4, 4096 // 3000) = 1 of
    3000 MB; without a memory request only the cores count (8 // 2 = 4); never below 1."""
    from matchmaker.pool.partition import jobs_that_fit

    slot = ClassAd({"Cpus": 8, "Memory": 4096})
    assert jobs_that_fit(slot, ClassAd({"RequestCpus": 2, "RequestMemory": 1000})) == 4
    assert jobs_that_fit(slot, ClassAd({"RequestCpus": 2, "RequestMemory": 3000})) == 1
    assert jobs_that_fit(slot, ClassAd({"RequestCpus": 2})) == 4
    assert jobs_that_fit(slot, ClassAd({"RequestCpus": 16})) == 1


# ---- consumption policies ------------------------------------------------------------------------


def cp_pool(jobs: str, weight: str = "Cpus", config: str = "CLAIM_PARTITIONABLE_LEFTOVERS = false\n"):
    slot = pslot_text(cpus=8, memory=8192, disk=100000).replace(
        "SlotWeight = Cpus\n", f"SlotWeight = {weight}\n{CONSUMPTION}"
    )
    return matchmaker.load_ads(Knobs.from_string(config), ads(slot), ads(jobs))


def bob_jobs(n: int, **kw) -> str:
    return "".join(job_text(p, owner="bob", **kw).replace("ClusterId = 1", "ClusterId = 2") for p in range(n))


def test_consumption_policy_several_matches_in_one_cycle():
    """An 8-core pslot advertising a consumption policy (SlotWeight = Cpus), alice and bob with
    four 2-core 1000 MB jobs each and equal priorities: pool weight 8, each slice 4.  alice
    (first by name) matches 1.0 (the slot goes 8 -> 6 cores, cost 8 - 6 = 2) and 1.1 (cost 2,
    her slice used up); bob then 2.0 and 2.1 on the same slot, 2 each.  Four matches on one
    pslot in one cycle, 8 cores and 4 x 1024 MB consumed; the accountant holds four claims of
    weight 2.  The startd carves four dynamic slots of 2 cores and 1024 MB."""
    loaded = cp_pool("".join(job_text(p, cpus=2) for p in range(4)) + bob_jobs(4, cpus=2))
    result = matchmaker.negotiate(loaded, now=START)
    assert [(m.job, m.slot, m.weight) for m in result.matches] == [
        ("1.0", "slot1@node1", 2),
        ("1.1", "slot1@node1", 2),
        ("2.0", "slot1@node1", 2),
        ("2.1", "slot1@node1", 2),
    ]
    assert result.usage == {ALICE: 4, "bob@example.org": 4}
    claimed = claim_matches(loaded.pool, result, loaded.settings)
    slots = {s.name: s.ad for s in claimed.pool.slots}
    assert slots["slot1@node1"]["Cpus"] == 0 and slots["slot1@node1"]["Memory"] == 8192 - 4 * 1024
    assert [(slots[f"slot1_{k}@node1"]["Cpus"], slots[f"slot1_{k}@node1"]["Memory"]) for k in range(1, 5)] == [
        (2, 1024)
    ] * 4


def test_consumption_policy_charges_the_weight_it_takes():
    """SlotWeight = Cpus + Memory / 1024 on 8 cores and 8192 MB: weight 8 + 8 = 16.  Each
    2-core 1000 MB job consumes 2 cores and 1024 MB, so the weight drops by 2 + 1 = 3:
    alice's three jobs cost 3 each (16 -> 13 -> 10 -> 7), usage 9."""
    loaded = cp_pool("".join(job_text(p, cpus=2) for p in range(3)), weight="Cpus + Memory / 1024")
    result = matchmaker.negotiate(loaded, now=START)
    assert [m.weight for m in result.matches] == [3, 3, 3]
    assert result.usage == {ALICE: 9}


def test_consumption_policy_stops_when_nothing_fits():
    """Five 2-core jobs on 8 cores: four fit (8 -> 0), the fifth finds the slot without cores
    and is rejected with "no match found"."""
    loaded = cp_pool("".join(job_text(p, cpus=2) for p in range(5)))
    result = matchmaker.negotiate(loaded, now=START)
    assert [m.job for m in result.matches] == ["1.0", "1.1", "1.2", "1.3"]
    assert [(r.job, r.reason) for r in result.rejected] == [("1.4", "no match found")]


def test_consumption_claims_are_charged_apart():
    """The accountant keeps one claim per consumption match (``slot1@node1`` then
    ``slot1@node1_cp_match_1``...): after the cycle alice's usage in the store is 2 + 2 = 4."""
    from matchmaker.cycle.session import claim_names

    ms = [
        Match("1.0", ALICE, "s", "no-preemption", None, 2.0),
        Match("1.1", ALICE, "s", "no-preemption", None, 2.0),
        Match("1.2", ALICE, "t", "no-preemption", None, 1.0),
    ]
    assert claim_names(ms) == ["s", "s_cp_match_1", "t"]
    loaded = cp_pool("".join(job_text(p, cpus=2) for p in range(2)))
    from matchmaker.accounting.store import Accountant

    acct = Accountant.load(":memory:")
    matchmaker.cycle.session.run_cycle(loaded.pool, loaded.settings, acct, START)
    assert acct.usage(ALICE) == 4


# ---- analyze ------------------------------------------------------------------------------------


def analyze(slots: str, jobs: str, job: str, config: str = ""):
    from matchmaker.analyze import analyze_job, prepare
    from matchmaker.analyze.render import job_text as render

    loaded = matchmaker.load_ads(Knobs.from_string(config), ads(slots), ads(jobs))
    report = analyze_job(prepare(loaded.pool, loaded.settings, START, None), job)
    return report, render(report)


def test_analyze_fit_in_what_is_left():
    """A job asking 8192 MB (8 GB; a multiple of 128 already) against a pslot with 2048 MB
    (2 GB) left and one with 32768: no on the first, yes on the second with its rounded
    request (1 core, 8 GB, 1000 KB -> 1024 KB = 1 MB)."""
    slots = pslot_text("slot1@small", cpus=4, memory=2048) + pslot_text("slot1@big", memory=32768)
    report, text = analyze(slots, job_text(0, memory=8192), "1.0")
    assert report.partitionable == [
        "slot1@small: fits what is left: no (needs 8 GB, 2 GB left)",
        "slot1@big: fits what is left: yes (needs 1 core, 8 GB, 1 MB)",
    ]
    assert "Partitionable slots:\n  slot1@small: fits what is left: no (needs 8 GB, 2 GB left)" in text


def test_analyze_leftovers_claimed():
    """One pslot of 4 cores and 4096 MB; alice's 1.0 (1000 MB) is matched, 1.1 (3000 MB ->
    3072) finds the slot taken for the cycle, but after it the schedd starts 1.1 on the
    leftovers (4096 - 1024 = 3072 MB left) as slot1_2@node1."""
    report, _ = analyze(pslot_text(cpus=4, memory=4096), job_text(0) + job_text(1, memory=3000), "1.1")
    assert report.outcome == "rejected"
    assert report.partitionable[-1] == (
        "after the cycle the schedd starts it on the leftovers of slot1@node1, "
        "as slot1_2@node1 (CLAIM_PARTITIONABLE_LEFTOVERS)"
    )


def test_analyze_leftovers_too_small_or_off():
    """With 3100 MB (-> 25 x 128 = 3200) the 3072 MB left do not fit it; with the knob off
    the leftovers are not claimed at all."""
    report, _ = analyze(pslot_text(cpus=4, memory=4096), job_text(0) + job_text(1, memory=3100), "1.1")
    assert report.partitionable[-1] == (
        "leftovers of slot1@node1 after the schedd's claims do not fit it: needs 3200 MB, 3072 MB left"
    )
    report, _ = analyze(
        pslot_text(cpus=4, memory=4096),
        job_text(0) + job_text(1, memory=3000),
        "1.1",
        "CLAIM_PARTITIONABLE_LEFTOVERS = false\n",
    )
    assert report.partitionable[-1].startswith(
        "leftovers of slot1@node1 are not claimed: CLAIM_PARTITIONABLE_LEFTOVERS is false"
    )


def test_analyze_leftovers_refused_for_a_concurrency_limit():
    """Job 1 fits the 3 cores and 3072 MB left after job 0's match but names sw_licence
    ("SW_Licence" is read as written): the schedd starts no job naming a limit on leftovers;
    with CLAIM_RECYCLING_CONSIDER_LIMITS false it starts it there as slot1_2@node1."""
    jobs = job_text(0) + job_text(1, extra='ConcurrencyLimits = "SW_Licence"')
    report, _ = analyze(pslot_text(cpus=4, memory=4096), jobs, "1.1")
    assert report.partitionable[-1] == (
        "leftovers of slot1@node1 are enough for it, but the schedd starts no job naming a "
        "concurrency limit (SW_Licence) on leftovers (CLAIM_RECYCLING_CONSIDER_LIMITS)"
    )
    report, _ = analyze(pslot_text(cpus=4, memory=4096), jobs, "1.1", "CLAIM_RECYCLING_CONSIDER_LIMITS = false\n")
    assert report.partitionable[-1] == (
        "after the cycle the schedd starts it on the leftovers of slot1@node1, "
        "as slot1_2@node1 (CLAIM_PARTITIONABLE_LEFTOVERS)"
    )


def test_analyze_leftovers_refused_for_the_slots_rank():
    """Rank = TARGET.Prio on a 4-core pslot publishing CurrentRank 0.0: job 0 (Prio 5) is
    matched; job 1 (Prio -1) fits the 3 cores and 3072 MB left and both Requirements hold,
    but -1 < 0: the schedd does not start it there.  Job 2 (Prio -2, Requirements false)
    is refused by its Requirements first, as FindRunnableJob tests them before the rank."""
    slots = pslot_text(cpus=4, memory=4096).replace("Rank = 0\n", "Rank = TARGET.Prio\nCurrentRank = 0.0\n")
    jobs = job_text(0, extra="Prio = 5") + job_text(1, extra="Prio = -1")
    jobs += job_text(2, extra="Prio = -2").replace("Requirements = true", "Requirements = false")
    report, _ = analyze(slots, jobs, "1.1")
    assert report.partitionable[-1] == (
        "leftovers of slot1@node1 are enough for it, but the slot's Rank for it, -1, is below "
        "their CurrentRank 0: the schedd starts no job there that the slot ranks lower"
    )
    report, _ = analyze(slots, jobs, "1.2")
    assert report.partitionable[-1] == (
        "leftovers of slot1@node1 are enough for it, but its Requirements or the slot's refuse it"
    )


# ---- preemption inside partitionable slots -----------------------------------------------------


def carved_machine(current_rank: float = 0, rank: str = "0") -> str:
    """An 8-core 8192 MB machine fully carved: the pslot has nothing left, alice runs 1.0
    and 1.1 on two dynamic slots of 4 cores, 4096 MB and 1024 KB."""
    pslot = pslot_text(cpus=0, memory=0, disk=0).replace("Rank = 0\n", f"Rank = {rank}\n")
    dslots = "".join(
        dslot_text(k, 4, 4096, ALICE, f"1.{k - 1}").replace("Rank = 0\n", f"Rank = {rank}\n")
        + f"CurrentRank = {current_rank}\n\n"
        for k in (1, 2)
    )
    return pslot + dslots.replace("\n\nCurrentRank", "\nCurrentRank")


def running_alice() -> str:
    return "".join(
        job_text(p, cpus=4, memory=4096, disk=0, extra=f'JobStatus = 2\nRemoteHost = "slot1_{p + 1}@node1"').replace(
            "JobStatus = 1\n", ""
        )
        for p in range(2)
    )


PSLOT_PREEMPTION = "ALLOW_PSLOT_PREEMPTION = true\nPREEMPTION_REQUIREMENTS = True\n"


def test_pslot_preemption_by_priority():
    """bob's job asks 6 cores and 6000 MB; no dynamic slot alone holds it.  With
    ALLOW_PSLOT_PREEMPTION the pslot takes alice's dynamic slots in order (CurrentRank 0 =
    the slot's Rank 0 for bob: priority preemption, PREEMPTION_REQUIREMENTS true): after
    slot1_1 it has 4 cores (not enough), after slot1_2 8 -- the match, costing the weight of
    the pslot with both: 8.  alice's usage 8 -> 0, bob's 8.  Without the knob no slot fits."""
    slots, jobs = carved_machine(), running_alice() + bob_jobs(1, cpus=6, memory=6000)
    loaded = matchmaker.load_ads(Knobs.from_string(PSLOT_PREEMPTION), ads(slots), ads(jobs))
    result = matchmaker.negotiate(loaded, now=START)
    assert [(m.job, m.slot, m.reason, m.preempted, m.preempted_slots, m.weight) for m in result.matches] == [
        ("2.0", "slot1@node1", "priority", ALICE, ("slot1_1@node1", "slot1_2@node1"), 8)
    ]
    assert result.usage == {ALICE: 0, "bob@example.org": 8}
    claimed = claim_matches(loaded.pool, result, loaded.settings)
    slots_after = {s.name: s.ad for s in claimed.pool.slots}
    assert set(slots_after) == {"slot1@node1", "slot1_1@node1"}
    assert (slots_after["slot1_1@node1"]["Cpus"], slots_after["slot1_1@node1"]["Memory"]) == (6, 6016)
    assert (slots_after["slot1@node1"]["Cpus"], slots_after["slot1@node1"]["Memory"]) == (2, 8192 - 6016)
    assert sorted(j.id for j in claimed.pool.jobs if j.status == RUNNING) == ["2.0"]
    off = matchmaker.load_ads(Knobs.from_string("PREEMPTION_REQUIREMENTS = True\n"), ads(slots), ads(jobs))
    assert matchmaker.negotiate(off, now=START).matches == []


def test_pslot_preemption_takes_only_what_it_needs():
    """A 4-core job: preempting slot1_1 alone (4 cores back) makes it fit, so slot1_2 keeps
    running; the match costs 4."""
    loaded = matchmaker.load_ads(
        Knobs.from_string(PSLOT_PREEMPTION),
        ads(carved_machine()),
        ads(running_alice() + bob_jobs(1, cpus=4, memory=4000)),
    )
    result = matchmaker.negotiate(loaded, now=START)
    assert [(m.preempted_slots, m.weight) for m in result.matches] == [(("slot1_1@node1",), 4)]


def test_pslot_preemption_by_machine_rank_and_not_past_it():
    """The machine ranks bob's jobs 10: alice's dynamic slots (CurrentRank 0 < 10) go by
    machine Rank even with PREEMPTION_REQUIREMENTS false.  With CurrentRank 20 (> 10) none
    can be taken: no match."""
    rank = '(TARGET.Owner == "bob") * 10'
    knobs = "ALLOW_PSLOT_PREEMPTION = true\n"
    jobs = running_alice() + bob_jobs(1, cpus=6, memory=6000)
    loaded = matchmaker.load_ads(Knobs.from_string(knobs), ads(carved_machine(0, rank)), ads(jobs))
    assert [(m.reason, m.preempted_slots) for m in matchmaker.negotiate(loaded, now=START).matches] == [
        ("rank", ("slot1_1@node1", "slot1_2@node1"))
    ]
    loaded = matchmaker.load_ads(Knobs.from_string(knobs), ads(carved_machine(20, rank)), ads(jobs))
    assert matchmaker.negotiate(loaded, now=START).matches == []


def test_pslot_preemption_in_a_simulation():
    """The simulated cycle: alice's two jobs go back to idle (2 preemptions), bob runs on
    slot1_1 with 6 cores; the machine still holds 8 cores in all."""
    loaded = matchmaker.load_ads(
        Knobs.from_string(PSLOT_PREEMPTION),
        ads(carved_machine()),
        ads(running_alice() + bob_jobs(1, cpus=6, memory=6000)),
    )
    sim = matchmaker.simulate(loaded, start=START, duration=0, interval=300)
    assert sim.column(ALICE, "preempted") == [2] and sim.column(ALICE, "running") == [0]
    assert sim.column("bob@example.org", "running") == [1]
    assert [(s.slot, s.customer, s.weight) for s in sim.spans if s.customer == "bob@example.org"] == [
        ("slot1_1@node1", "bob@example.org", 6)
    ]


def test_pslot_preemption_in_negotiate_json(tmp_path):
    """``negotiate --json`` lists the dynamic slots a match preempts (the scenario of
    test_pslot_preemption_by_priority: both of alice's slots)."""
    import json

    from tests.support import run_matchmaker

    (tmp_path / "slots.ad").write_text(carved_machine())
    (tmp_path / "jobs.ad").write_text(running_alice() + bob_jobs(1, cpus=6, memory=6000))
    (tmp_path / "c.config").write_text(PSLOT_PREEMPTION)
    status, out, err = run_matchmaker(
        "negotiate",
        "--config",
        tmp_path / "c.config",
        "--slots",
        tmp_path / "slots.ad",
        "--jobs",
        tmp_path / "jobs.ad",
        "--now",
        START,
        "--json",
    )
    assert status == 0, err
    (match,) = json.loads(out)["matches"]
    assert (match["slot"], match["preempted"], match["preempted_slots"]) == (
        "slot1@node1",
        ALICE,
        ["slot1_1@node1", "slot1_2@node1"],
    )


def test_split_hands_out_gpus():
    """A pslot listing GPUs in MachineResources (4 of them): a job asking 1 GPU gets a
    dynamic slot with GPUs = 1 and the pslot keeps 3; a job without RequestGPUs takes none
    (the pslot keeps 3 after the second split too)."""
    text = pslot_text(cpus=8, memory=8192).replace(
        "SlotWeight = Cpus\n", 'SlotWeight = Cpus\nMachineResources = "Cpus Memory Disk Swap GPUs"\nGPUs = 4\n'
    )
    pool = pool_from_ads(ads(text), ads(job_text(0, extra="RequestGPUs = 1") + job_text(1)))
    out = claim_matches(pool, one_match(pool, "1.0", "slot1@node1"), Settings.defaults())
    slots = {s.name: s.ad for s in out.pool.slots}
    assert slots["slot1_1@node1"]["GPUs"] == 1
    assert slots["slot1_2@node1"]["GPUs"] == 0  # job 1.0's leftovers started 1.1
    assert slots["slot1@node1"]["GPUs"] == 3


def test_analyze_slot_what_is_left():
    """analyze --slot on a pslot with 4 cores and 2048 MB left: of two requests (1000 MB ->
    1024, and 8192 MB), one fits; the other needs 8 GB where 2 GB are left."""
    from matchmaker.analyze import analyze_slot, prepare

    loaded = matchmaker.load_ads(
        Knobs.from_string(""), ads(pslot_text(cpus=4, memory=2048)), ads(job_text(0) + bob_jobs(1, memory=8192))
    )
    report = analyze_slot(prepare(loaded.pool, loaded.settings, START, None), "slot1@node1")
    assert report.notes[-2:] == [
        "partitionable: 4 cores, 2 GB, 1000000 KB left; 1 of 2 request(s) fit what is left",
        "job 2.0 does not fit what is left (needs 8 GB, 2 GB left)",
    ]


def test_example_partitionable_readme():
    """examples/partitionable/README.md: 16 running and 16.0 slot-hours with leftovers, 13
    running and 6.5 slot-hours without (worked out in the README)."""
    from tests.support import ROOT

    d = ROOT / "examples" / "partitionable"
    got = {}
    for name in ("leftovers", "no-leftovers"):
        loaded = matchmaker.load(d / f"{name}.config", d / "slots.ad", d / "jobs.ad")
        sim = matchmaker.simulate(loaded, start=START, duration=3600)
        got[name] = (sim.at(1, ALICE)["running"], sim.at(1, ALICE)["charged"] / 3600)
    assert got == {"leftovers": (16, 16.0), "no-leftovers": (13, 6.5)}


# Ranks of a partitionable slot: missing, literals, ones that read only the job, and ones that
# read the slot itself (directly, through another attribute, through a job attribute that
# reads the slot back, or through eval).
RANKS = st.sampled_from(
    (
        "",
        "Rank = 0",
        "Rank = 3.5",
        'Rank = "high"',
        'Rank = member(TARGET.Owner, {"bob", "alice"}) ? 10 : 0',
        "Rank = TARGET.RequestCpus * 2",
        "Rank = TARGET.Prio",
        "Rank = Cpus",
        "Rank = MY.Memory / 1024",
        'Rank = State =?= "Claimed"',
        "Rank = Boost\nBoost = Cpus + 1",
        'Rank = eval("Cpus")',
        "Rank = ifThenElse(TARGET.RequestCpus > 1, Disk, 0)",
    )
)
PRIOS = st.sampled_from(("", "Prio = 7", "Prio = TARGET.Cpus", "Prio = 2.5"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RANKS, PRIOS, st.integers(1, 3), st.booleans(), st.booleans())
def test_a_dynamic_slot_claimed_in_one_step_is_the_one_made_then_claimed(
    rank: str, prio: str, cpus: int, group: bool, odd_resource: bool
) -> None:
    """The claims write a dynamic slot claimed at once when its ``CurrentRank`` is known
    without it; the result must be what splitting the slot, evaluating the dynamic slot's
    ``Rank`` for the job in it and then writing the claim, stamped with the claim's time, gives
    (the reference below is made of those three steps).  A resource named like a claim attribute (``Activity``) takes the
    same place and the claim's value as in two steps."""
    lines = pslot_text(cpus=4).replace("Rank = 0\n", "").strip().splitlines() + rank.splitlines()
    if odd_resource:
        lines += ['MachineResources = "Cpus Memory Disk Activity"', "TotalSlotActivity = 5"]
    extra = [prio] + (['AcctGroup = "group_a"', 'AccountingGroup = "group_a.alice"'] if group else [])
    text, jobs = "\n".join(lines) + "\n\n", job_text(0, cpus=cpus, extra="\n".join(x for x in extra if x))
    pool = pool_from_ads(ads(text), ads(jobs))
    settings_ = Settings.defaults()
    job, slot = pool.jobs[0], pool.slots[0]
    submitter = job.submitter
    result = CycleResult([Match("1.0", submitter, slot.name, "no-preemption", None, 1.0)], [], [], [], {})
    claimed = claim_matches(pool, result, settings_, START)
    got = {s.name: s.ad for s in claimed.pool.slots}["slot1_1@node1"]
    request = requested(job.ad, slot.ad, machine_resources(slot.ad), rounding_of(settings_))
    child = split(slot.ad, request, "slot1_1@node1")[1]
    want = {"State": "Claimed", "Activity": "Busy", "RemoteUser": submitter, "RemoteOwner": submitter, "JobId": "1.0"}
    want["CurrentRank"] = slot_rank(child, job.ad, START)
    want.update(dict.fromkeys(("EnteredCurrentState", "EnteredCurrentActivity", "JobStart"), int(START)))
    if submitter != "alice@example.org":
        want["AccountingGroup"] = submitter
    expected = with_values(child, want, equal_values=True)
    assert [(n, unparse(v)) for n, v in got.node_items()] == [(n, unparse(v)) for n, v in expected.node_items()]


def test_a_dynamic_slot_takes_the_lowest_free_number_after_a_vacate_in_the_same_claims():
    """One claims pass over three matches on the carved machine given 8 more cores (16
    cores, 8 free; slot1_1 and slot1_2 run alice's 1.0 and 1.1): bob's 2.0 (2 cores) takes
    slot1_3, the lowest free number; bob's 2.1 (2 cores) then slot1_4; bob's 2.2 preempts
    slot1_1 first (ALLOW_PSLOT_PREEMPTION), whose number is free again, so its dynamic slot
    is slot1_1, not slot1_5.  alice's 1.0 is idle again."""
    pslot = pslot_text(cpus=8, memory=8192, disk=10000)
    dslots = "".join(dslot_text(k, 4, 4096, ALICE, f"1.{k - 1}") for k in (1, 2))
    jobs = running_alice() + bob_jobs(3, cpus=2, memory=1000, disk=0)
    loaded = matchmaker.load_ads(Knobs.from_string(PSLOT_PREEMPTION), ads(pslot + dslots), ads(jobs))
    bob = "bob@example.org"
    matches = [
        Match("2.0", bob, "slot1@node1", "no-preemption", None),
        Match("2.1", bob, "slot1@node1", "no-preemption", None),
        Match("2.2", bob, "slot1@node1", "priority", ALICE, preempted_slots=("slot1_1@node1",)),
    ]
    result = CycleResult(matches, [], [], [], {})
    claimed = claim_matches(loaded.pool, result, loaded.settings)
    assert [(s.job, s.slot) for s in claimed.starts] == [
        ("2.0", "slot1_3@node1"),
        ("2.1", "slot1_4@node1"),
        ("2.2", "slot1_1@node1"),
    ]
    status = {j.id: j.status for j in claimed.pool.jobs}
    assert status["1.0"] == 1 and status["1.1"] == RUNNING


# ---- candidate order with merged candidates ------------------------------------------------------
# Consumption-policy slots and partitionable-slot preemption candidates are added to a request's
# candidate list after the ordinary slots; they must still take their place in candidate order
# (docs/negotiation.md, candidate order).  NEGOTIATOR_PRE_JOB_RANK = 0 leaves the job's Rank
# (the second key) to decide.  Like every test here, each runs with both match engines.


def static_text(name: str, cpus: int) -> str:
    """An unclaimed static slot that takes any job."""
    return (
        f'Name = "{name}"\nMachine = "{name.partition("@")[2]}"\nCpus = {cpus}\nMemory = 32768\n'
        'State = "Unclaimed"\nRequirements = true\nRank = 0\n\n'
    )


def negotiate_ranked(statics: str, jobs: str) -> list[tuple[str, str]]:
    """Static slots listed before an 8-core 8192 MB pslot with a consumption policy."""
    slots = statics + pslot_text(cpus=8, memory=8192, disk=100000).replace(
        "SlotWeight = Cpus\n", f"SlotWeight = Cpus\n{CONSUMPTION}"
    )
    loaded = matchmaker.load_ads(Knobs.from_string("NEGOTIATOR_PRE_JOB_RANK = 0\n"), ads(slots), ads(jobs))
    return [(m.job, m.slot) for m in matchmaker.negotiate(loaded, now=START).matches]


def test_consumption_slot_placed_by_job_rank():
    """slot1@static (1 core, first in slot order) and the consumption-policy pslot (8 cores),
    one 1-core job with ``Rank = TARGET.Cpus``: both pre-job ranks are 0, the job's Rank is 1
    for the static slot and 8 for the pslot, so the pslot comes first (8 > 1) and takes the
    job, although the static slot precedes it in the slot list."""
    jobs = job_text(0, extra="Rank = TARGET.Cpus")
    assert negotiate_ranked(static_text("slot1@static", 1), jobs) == [("1.0", "slot1@node1")]


def test_consumption_slot_between_static_slots_by_job_rank():
    """The reverse: ``Rank = -TARGET.Cpus`` prefers fewer cores.  slot1@small (1 core) ranks
    -1, the pslot -8, slot1@big (16 cores) -16: candidate order small, pslot, big.  Two jobs
    of one autocluster: 1.0 takes small (not the pslot, so the merged candidate is not put
    first), 1.1 the pslot (not big, so it is not put last either)."""
    statics = static_text("slot1@small", 1) + static_text("slot1@big", 16)
    jobs = "".join(job_text(p, extra="Rank = -TARGET.Cpus") for p in range(2))
    assert negotiate_ranked(statics, jobs) == [("1.0", "slot1@small"), ("1.1", "slot1@node1")]


def test_pslot_preemption_candidate_placed_by_job_rank():
    """The carved machine (its pslot has nothing left, alice's two 4-core dynamic slots) and an
    unclaimed 1-core slot1@static; bob's 1-core job ranks machine node1 10, others 0.  With
    ALLOW_PSLOT_PREEMPTION the pslot is a priority-preemption candidate (slot1_1 back makes
    4 cores) ranked 10 by the job, the static slot an unclaimed one ranked 0: the job's Rank
    (second key) comes before the preemption state (fourth), so the pslot wins and
    slot1_1@node1 is preempted."""
    slots = carved_machine() + static_text("slot1@static", 1)
    jobs = running_alice() + bob_jobs(1, extra='Rank = (TARGET.Machine == "node1") * 10')
    config = PSLOT_PREEMPTION + "NEGOTIATOR_PRE_JOB_RANK = 0\n"
    loaded = matchmaker.load_ads(Knobs.from_string(config), ads(slots), ads(jobs))
    result = matchmaker.negotiate(loaded, now=START)
    assert [(m.job, m.slot, m.reason, m.preempted_slots) for m in result.matches] == [
        ("2.0", "slot1@node1", "priority", ("slot1_1@node1",))
    ]


@pytest.mark.parametrize("clock", ["CurrentTime", "time()"])
def test_claims_evaluate_at_the_cycles_time(clock: str) -> None:
    """The startd evaluates a claimed slot's Rank and, for the leftovers, both Requirements
    when the claim is made: at the cycle's time, not at the epoch.  The partitionable slot
    accepts jobs only from 1,700,000,000 on and ranks them by the seconds since
    1,699,990,000, so at START (1,700,000,000) the matched job's dynamic slot has
    CurrentRank 1,700,000,000 - 1,699,990,000 = 10,000, and alice's second idle job starts
    on the leftovers (at the epoch the Requirements would be false and the rank
    -1,699,990,000)."""
    requirements = f"{PSLOT_REQ} && ({clock} >= 1700000000)"
    text = pslot_text(cpus=4, requirements=requirements).replace("Rank = 0", f"Rank = {clock} - 1699990000")
    pool = pool_from_ads(ads(text), ads(job_text(0) + job_text(1)))
    job, slot = pool.jobs[0], pool.slots[0]
    result = CycleResult([Match(job.id, job.submitter, slot.name, "no-preemption", None, 1.0)], [], [], [], {})
    claimed = claim_matches(pool, result, Settings.defaults(), START)
    assert [(s.job, s.leftover) for s in claimed.starts] == [("1.0", False), ("1.1", True)]
    ranks = {s.name: s.ad.evaluate("CurrentRank") for s in claimed.pool.slots if s.name != slot.name}
    assert ranks == {"slot1_1@node1": 10000.0, "slot1_2@node1": 10000.0}


@pytest.mark.parametrize("compacted", [False, True])
def test_split_reads_slot_id_and_total_slot_names_as_written(compacted: bool) -> None:
    """A pslot whose ``SlotID`` is an expression (``1 + 2``: the dynamic slot's
    ``ParentSlotId`` is 3) and which lists ``totalslotcpus`` (any spelling) but no
    ``TotalSlotMemory``: a 2-core, 512 MB split writes ``TotalSlotCpus = 2`` (under the
    pslot's spelling) and no ``TotalSlotMemory``; a ``SlotID`` that is a string gives no
    ``ParentSlotId`` at all.  Compacted or not, the same."""
    text = 'Name = "slot1@n"\nSlotID = 1 + 2\nCpus = 8\nMemory = 4096\ntotalslotcpus = 8\nPartitionableSlot = true\n'
    (parent,) = ads(text)
    (other,) = ads(text.replace("1 + 2", '"one"'))
    if compacted:
        parent.compact()
        other.compact()
    shrunk, child = split(parent, {"Cpus": 2, "Memory": 512}, "slot1_1@n")
    assert (shrunk["Cpus"], shrunk["Memory"], shrunk["totalslotcpus"]) == (6, 3584, 8)
    assert child["ParentSlotId"] == 3 and child["TotalSlotCpus"] == 2 and "TotalSlotMemory" not in child
    assert "totalslotcpus" in child.spellings() and "PartitionableSlot" not in child
    _, child = split(other, {"Cpus": 2, "Memory": 512}, "slot1_1@n")
    assert "ParentSlotId" not in child and child["TotalSlotCpus"] == 2
