"""What the builds of a cycle found of its consumption-policy slots, kept between builds
(matchmaker/cycle/cp_lists.py): the same run as testing every such slot for every build.

The differential: one random pool with consumption-policy slots simulated (carried and
rebuilt, the run's random source seeded) with the kept answers, and again with the cycle's lists turned off
(every build tests every slot pair by pair, the path before the lists).  Everything the
runs report must be the same, draws of ``random`` included.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import matchmaker
from classad import ParserType, parseAds
from matchmaker.config.knobs import Knobs
from matchmaker.cycle import state as cycle_state

START = 1700000000.0

# Consumption policies: HTCondor's usual one, one reading the slot (MY), one that draws
# (``random(1)`` is 0, but each evaluation takes a number from the run's source), one
# reading a job attribute no autocluster holds, and one that is not a number for some
# requests.
POLICIES = [
    "ConsumptionCpus = quantize(target.RequestCpus, {1})\nConsumptionMemory = quantize(target.RequestMemory, {128})\n"
    "ConsumptionDisk = quantize(target.RequestDisk, {1024})\n",
    "ConsumptionCpus = target.RequestCpus\nConsumptionMemory = quantize(target.RequestMemory, {MY.MemoryQuantum})\n"
    "ConsumptionDisk = 0\n",
    "ConsumptionCpus = target.RequestCpus + random(1)\nConsumptionMemory = target.RequestMemory\nConsumptionDisk = 0\n",
    "ConsumptionCpus = ifThenElse(target.Big =?= true, 2 * target.RequestCpus, target.RequestCpus)\n"
    "ConsumptionMemory = quantize(target.RequestMemory, {128})\nConsumptionDisk = 0\n",
    "ConsumptionCpus = ifThenElse(target.RequestCpus > 2, undefined, target.RequestCpus)\n"
    "ConsumptionMemory = target.RequestMemory\nConsumptionDisk = target.RequestDisk\n",
]
STARTS = [
    "true",
    "(TARGET.SubmitterUserResourcesInUse < 3) || (MY.Cpus > 6)",
    '(TARGET.Owner =!= "carol") && (TARGET.RequestMemory <= MY.Memory)',
    "(MY.Cpus >= TARGET.RequestCpus) && (TARGET.RequestDisk <= MY.Disk)",
]
# The last weight draws (random(1) is 0): a slot with it is tested as before, every build.
WEIGHTS = ["Cpus", "Cpus + Memory / 1024", "2", "Cpus + random(1)"]
JOB_RANKS = ["0", "TARGET.Memory", "TARGET.Cpus * 10 - TARGET.Memory / 1000"]


@st.composite
def pools(draw: st.DrawFn) -> tuple[str, str, str]:
    slots = []
    for k in range(draw(st.integers(1, 6))):
        cp = draw(st.booleans())
        cpus = draw(st.integers(1, 12))
        memory = draw(st.sampled_from([1024, 4096, 8192, 16384]))
        text = (
            f'Name = "slot1@node{k}"\nMachine = "node{k}"\nSlotID = 1\nPartitionableSlot = true\n'
            f'SlotType = "Partitionable"\nCpus = {cpus}\nMemory = {memory}\nDisk = {draw(st.integers(1, 8)) * 100000}\n'
            f'State = "Unclaimed"\nActivity = "Idle"\nMemoryQuantum = {draw(st.sampled_from([128, 256, 1000]))}\n'
            f"START = {draw(st.sampled_from(STARTS))}\nRequirements = START && (TARGET.RequestCpus <= MY.Cpus)\n"
            f"Rank = {draw(st.sampled_from(['0', 'TARGET.RequestCpus']))}\n"
            f"SlotWeight = {draw(st.sampled_from(WEIGHTS))}\n"
        )
        if cp:
            text += 'ConsumptionPolicy = true\nMachineResources = "Cpus Memory Disk Swap"\n'
            text += draw(st.sampled_from(POLICIES))
        slots.append(text + "\n")
    if draw(st.booleans()):  # room in the pool's size that no job can take: the limits leave room
        slots.append(
            'Name = "slot1@big"\nMachine = "big"\nSlotID = 1\nPartitionableSlot = true\nSlotType = "Partitionable"\n'
            'Cpus = 64\nMemory = 262144\nDisk = 10000000\nState = "Unclaimed"\nActivity = "Idle"\n'
            "Requirements = false\nRank = 0\nSlotWeight = Cpus\n\n"
        )
    jobs = []
    p = 0
    for _ in range(draw(st.integers(1, 4))):  # kinds of jobs, several of each (one autocluster)
        owner = draw(st.sampled_from(["alice", "bob", "carol"]))
        kind = (
            f'Owner = "{owner}"\nUser = "{owner}@example.org"\nJobStatus = 1\n'
            f"RequestCpus = {draw(st.integers(1, 4))}\n"
            f"RequestMemory = {draw(st.sampled_from(['1000', '2000', '300', 'RequestCpus * 700']))}\n"
            f"RequestDisk = {draw(st.sampled_from([1000, 50000]))}\n"
            f"Requirements = {draw(st.sampled_from(['true', 'TARGET.Memory >= 2000', 'ProcId % 2 == 0']))}\n"
            f"Rank = {draw(st.sampled_from(JOB_RANKS))}\n"
            f"Luck = {draw(st.sampled_from(['random(10)', '3']))}\n"
        )
        for _ in range(draw(st.integers(1, 10))):
            big = "true" if p % 3 == 0 else "false"  # read by a consumption policy only: not in the autocluster
            jobs.append(f"ClusterId = 1\nProcId = {p}\nQDate = {1699990000 + p}\nBig = {big}\n{kind}\n")
            p += 1
    config = draw(
        st.sampled_from(
            [
                "",
                "NEGOTIATOR_USE_SLOT_WEIGHTS = false",
                "NEGOTIATOR_PRE_JOB_RANK = TARGET.Luck\nNEGOTIATOR_POST_JOB_RANK = MY.Cpus",
                "GROUP_NAMES = group_a\nGROUP_QUOTA_DYNAMIC_group_a = 0.5\nGROUP_ACCEPT_SURPLUS = true",
            ]
        )
    )
    return "".join(slots), "".join(jobs), config


def _run(text: tuple[str, str, str], *, incremental: bool) -> str:
    slots, jobs, config = text
    loaded = matchmaker.load_ads(
        Knobs.from_string(config), list(parseAds(slots, ParserType.Old)), list(parseAds(jobs, ParserType.Old))
    )
    loaded = dataclasses.replace(
        loaded, settings=dataclasses.replace(loaded.settings, simulate_incremental=incremental)
    )
    series = matchmaker.simulate(loaded, start=START, duration=1200, interval=300, seed=3, job_duration=600)
    return json.dumps(list(series), sort_keys=True, default=str)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(pools())
def test_kept_answers_are_those_of_testing_every_slot_again(monkeypatch, pool):
    kept = _run(pool, incremental=True)
    assert _run(pool, incremental=False) == kept
    with monkeypatch.context() as m:
        m.setattr(cycle_state, "ConsumptionLists", lambda *args: None)  # every build tests every slot
        assert _run(pool, incremental=True) == kept
        assert _run(pool, incremental=False) == kept


def _slot(name: str, cpus: int, start: str, policy: str) -> str:
    return (
        f'Name = "slot1@{name}"\nMachine = "{name}"\nSlotID = 1\nPartitionableSlot = true\nSlotType = "Partitionable"\n'
        f'Cpus = {cpus}\nMemory = 16384\nDisk = 800000\nState = "Unclaimed"\nActivity = "Idle"\nMemoryQuantum = 128\n'
        f"START = {start}\nRequirements = START\nRank = 0\nSlotWeight = Cpus\n"
        f'ConsumptionPolicy = true\nMachineResources = "Cpus Memory Disk Swap"\n{policy}\n'
    )


BIG = (
    'Name = "slot1@big"\nMachine = "big"\nSlotID = 1\nPartitionableSlot = true\nSlotType = "Partitionable"\n'
    'Cpus = 64\nMemory = 262144\nDisk = 10000000\nState = "Unclaimed"\nActivity = "Idle"\n'
    "Requirements = false\nRank = 0\nSlotWeight = Cpus\n\n"
)


def _jobs(n: int) -> str:
    return "".join(
        f'ClusterId = 1\nProcId = {p}\nQDate = {1699990000 + p}\nOwner = "alice"\nUser = "alice@example.org"\n'
        "JobStatus = 1\nRequestCpus = 1\nRequestMemory = 1000\nRequestDisk = 1000\nRequirements = true\nRank = 0\n\n"
        for p in range(n)
    )


def test_kept_answers_follow_what_the_requests_give_the_names_read(monkeypatch):
    """Two 6-core slots whose START takes a job while its submitter holds fewer than 3 cores
    (``SubmitterUserResourcesInUse``, which grows with every match of the cycle, not a
    significant attribute: one autocluster), and room in the pool elsewhere: alice's eight
    1-core jobs get three matches, however the slot not matched was found before."""
    pool = (
        _slot("node0", 6, START_USAGE, POLICIES[0]) + _slot("node1", 6, START_USAGE, POLICIES[0]) + BIG,
        _jobs(8),
        "",
    )
    kept = _run(pool, incremental=True)
    assert [(r["cycle"], r["matched"]) for r in json.loads(kept) if r["name"] == "pool"][0] == (0, 3)
    with monkeypatch.context() as m:
        m.setattr(cycle_state, "ConsumptionLists", lambda *args: None)
        assert _run(pool, incremental=True) == kept


START_USAGE = "(TARGET.SubmitterUserResourcesInUse < 3) || (MY.Cpus > 6)"


DRAWING_PLAIN = (
    'Name = "slot1@s0"\nMachine = "s0"\nSlotID = 1\nPartitionableSlot = true\nSlotType = "Partitionable"\n'
    'Cpus = 8\nMemory = 16384\nDisk = 800000\nState = "Unclaimed"\nActivity = "Idle"\n'
    "START = random(3) == 0\nRequirements = START\nRank = 0\nSlotWeight = Cpus\n\n"
)
USUAL = (
    "ConsumptionCpus = quantize(target.RequestCpus, {1})\nConsumptionMemory = quantize(target.RequestMemory, {128})\n"
    "ConsumptionDisk = quantize(target.RequestDisk, {1024})\n"
)


@pytest.mark.parametrize(
    "old, new",
    [("SlotWeight = Cpus", "SlotWeight = Cpus + random(1)"), ("Cpus = 2", "Cpus = 2 + random(1)")],
    ids=["weight draws", "resource draws"],
)
def test_a_slot_that_draws_takes_as_many_numbers_as_before(monkeypatch, old, new):
    """Two consumption-policy slots whose weight (or Cpus) draws ``random(1)`` (always 0) and a
    plain slot whose START draws: each build must take as many numbers from the run's source
    as testing every slot again does, or later draws (the plain slot's START) differ."""
    slots = "".join(_slot(n, 2, "true", USUAL).replace(old, new) + "\n" for n in ("n0", "n1")) + DRAWING_PLAIN
    pool = (slots, _jobs(10), "")
    kept = _run(pool, incremental=True)
    with monkeypatch.context() as m:
        m.setattr(cycle_state, "ConsumptionLists", lambda *args: None)
        assert _run(pool, incremental=True) == kept
