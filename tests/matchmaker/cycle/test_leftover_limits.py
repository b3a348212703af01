"""The leftovers as the claims go through them: the concurrency-limit test
(CLAIM_RECYCLING_CONSIDER_LIMITS) reads a job's missing or literal ConcurrencyLimits once and
evaluates an expression against each partitionable slot's leftovers; a job's request for a
list of resources and its values as a tuple are made once."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import matchmaker
from classad import ParserType, parseAds
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle import claims
from matchmaker.cycle.claims import claim_matches
from matchmaker.cycle.idle_jobs import IdleJobs
from matchmaker.cycle.results import CycleResult, Match
from matchmaker.pool.ads import pool_from_ads

START = 1700000000.0
ALICE = "alice@example.org"
PSLOT_REQ = "(TARGET.RequestCpus <= MY.Cpus) && (TARGET.RequestMemory <= MY.Memory)"


def pslot_text(name: str, cpus: int, listed: str = "") -> str:
    return (
        f'Name = "{name}"\nMachine = "{name.partition("@")[2]}"\nSlotID = 1\nPartitionableSlot = true\n'
        f'SlotType = "Partitionable"\nCpus = {cpus}\nMemory = {cpus * 1024}\nDisk = 1000000\n'
        f'State = "Unclaimed"\nActivity = "Idle"\nRequirements = {PSLOT_REQ}\nRank = 0\nSlotWeight = Cpus\n'
        + (f'MachineResources = "{listed}"\n' if listed else "")
        + "\n"
    )


def job_text(
    proc: int, limits: str | None, cpus: int = 1, owner: str = "alice", memory: int = 1000, disk: int = 1000
) -> str:
    extra = "" if limits is None else f"ConcurrencyLimits = {limits}\n"
    return (
        f'ClusterId = 1\nProcId = {proc}\nOwner = "{owner}"\nUser = "{owner}@example.org"\nJobStatus = 1\n'
        f"RequestCpus = {cpus}\nRequestMemory = {memory}\nRequestDisk = {disk}\nRequirements = true\n{extra}\n"
    )


def ads(text: str) -> list:
    return list(parseAds(text, ParserType.Old))


def test_an_expression_is_evaluated_against_each_slots_leftovers():
    """alice matched 1.0 on slot1@a and 1.1 on slot1@b (4 cores each).  Her idle jobs in
    queue order: 1.2 names sw_licence on machine a only, 1.3 names it always (a literal),
    1.4 none.  Leftovers of a (3 cores): 1.2 names the limit there, 1.3 too: 1.4 starts.
    Leftovers of b: 1.2 names "" there and starts; 1.3 still names the limit.  A limit
    read once per job would wrongly skip 1.2 on b as well (or start it on a)."""
    jobs = (
        job_text(0, None)
        + job_text(1, None)
        + job_text(2, 'ifThenElse(TARGET.Machine == "a", "sw_licence", "")')
        + job_text(3, '"sw_licence"')
        + job_text(4, None)
    )
    pool = pool_from_ads(ads(pslot_text("slot1@a", 4) + pslot_text("slot1@b", 4)), ads(jobs))
    matches = [Match("1.0", ALICE, "slot1@a", "no-preemption", None, 1.0)]
    matches.append(Match("1.1", ALICE, "slot1@b", "no-preemption", None, 1.0))
    out = claim_matches(pool, CycleResult(matches, [], [], [], {}), Settings.defaults(claim_leftovers=True))
    assert [(s.job, s.slot, s.leftover) for s in out.starts] == [
        ("1.0", "slot1_1@a", False),
        ("1.1", "slot1_1@b", False),
        ("1.4", "slot1_2@a", True),
        ("1.2", "slot1_2@b", True),
    ]


LIMITS = [
    None,
    '""',
    '"sw_licence"',
    '"other,sw_licence"',
    "12",
    'ifThenElse(TARGET.Cpus >= 3, "sw_licence", "")',
    'ifThenElse(TARGET.Machine == "node1", "other", undefined)',
    'strcat("sw_", TARGET.Machine)',
]


@st.composite
def pools(draw):
    """1-3 partitionable slots of 1-8 cores, 1-12 jobs of alice and bob (1-3 cores) whose
    ConcurrencyLimits is missing, a literal (naming a limit or not) or an expression of the slot."""
    slots = "".join(pslot_text(f"slot1@node{m}", draw(st.integers(1, 8))) for m in range(draw(st.integers(1, 3))))
    jobs = "".join(
        job_text(p, draw(st.sampled_from(LIMITS)), draw(st.integers(1, 3)), draw(st.sampled_from(["alice", "bob"])))
        for p in range(draw(st.integers(1, 12)))
    )
    return slots, jobs


def claimed(loaded, result) -> tuple:
    out = claim_matches(loaded.pool, result, loaded.settings, now=START)
    return (
        [(s.job, s.slot, s.leftover) for s in out.starts],
        out.refused,
        [(s.name, str(s.ad)) for s in out.pool.slots],
        [(j.id, str(j.ad)) for j in out.pool.jobs],
    )


def per_slot(original):
    """:meth:`_Claims._not_started` with every job's limits evaluated against each slot's
    leftovers (as :func:`leftover_limits`), none read once."""

    def not_started(self, submitter):
        known = self._leftover_jobs.get(submitter)
        if known is None:
            jobs = original(self, submitter).jobs
            limits = [claims._NEEDS_SLOT if self.settings.claim_recycling_consider_limits else None] * len(jobs)
            known = self._leftover_jobs[submitter] = IdleJobs(jobs, limits, claims._NEEDS_SLOT)
        return known

    return not_started


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pools(), st.booleans())
def test_leftovers_equal_evaluating_the_limits_per_slot(monkeypatch, pool, consider):
    """The claims with each job's limits read once equal the claims that evaluate
    :func:`leftover_limits` for every job on every slot's leftovers (knob on or off)."""
    slots, jobs = pool
    config = f"SW_LICENCE_LIMIT = 100\nOTHER_LIMIT = 100\nCLAIM_RECYCLING_CONSIDER_LIMITS = {consider}\n"
    loaded = matchmaker.load_ads(Knobs.from_string(config), ads(slots), ads(jobs))
    result = matchmaker.negotiate(loaded, now=START)
    fast = claimed(loaded, result)
    with monkeypatch.context() as m:
        m.setattr(claims._Claims, "_not_started", per_slot(claims._Claims._not_started))
        reference = claimed(loaded, result)
    assert fast == reference


@st.composite
def shaped_pools(draw):
    """1-3 partitionable slots of 1-8 cores listing Cpus Memory Disk or only Cpus Memory;
    2-16 jobs of alice and bob asking 1-3 cores, 200-3000 MB and 1-300000 KB (the slots
    have 1000000), limits as in :func:`pools`."""
    listed = st.sampled_from(["", "Cpus Memory"])
    slots = "".join(
        pslot_text(f"slot1@node{m}", draw(st.integers(1, 8)), draw(listed)) for m in range(draw(st.integers(1, 3)))
    )
    jobs = "".join(
        job_text(
            p,
            draw(st.sampled_from(LIMITS)),
            draw(st.integers(1, 3)),
            draw(st.sampled_from(["alice", "bob"])),
            draw(st.integers(200, 3000)),
            draw(st.integers(1, 300000)),
        )
        for p in range(draw(st.integers(2, 16)))
    )
    return slots, jobs


class _Forgetting(dict):
    """A table that keeps nothing (each job's request shape made again on every slot)."""

    def setdefault(self, key, default=None):
        return _Forgetting()

    def __setitem__(self, key, value):
        pass


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shaped_pools(), st.booleans())
def test_leftovers_equal_the_loop_asking_everything_per_slot(monkeypatch, pool, consider):
    """The claims equal those of the leftovers asking each job's request (and its shape)
    and evaluating its limits again on every slot's leftovers."""
    slots, jobs = pool
    config = f"SW_LICENCE_LIMIT = 100\nOTHER_LIMIT = 100\nCLAIM_RECYCLING_CONSIDER_LIMITS = {consider}\n"
    loaded = matchmaker.load_ads(Knobs.from_string(config), ads(slots), ads(jobs))
    result = matchmaker.negotiate(loaded, now=START)
    fast = claimed(loaded, result)
    init = claims._Claims.__init__

    def forgetful(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._shapes = _Forgetting()

    with monkeypatch.context() as m:
        m.setattr(claims._Claims, "_not_started", per_slot(claims._Claims._not_started))
        m.setattr(claims._Claims, "__init__", forgetful)
        reference = claimed(loaded, result)
    assert fast == reference


@pytest.mark.parametrize("limits", LIMITS)
def test_limits_read_once_are_those_of_every_slot(limits):
    """A job's limits as :meth:`_Claims._not_started` reads them once: either marked to be
    evaluated per slot, or what :func:`leftover_limits` gives on two different slots (an
    expression of the slot gives different values there); None with the knob off."""
    pool = pool_from_ads([], ads(job_text(0, limits) + job_text(1, limits)))
    slots = [ads(pslot_text(f"slot1@node{k}", c))[0] for k, c in ((1, 8), (2, 1))]
    run = claims._Claims(pool, Settings.defaults(), now=START)
    run.started.add("1.0")
    idle = run._not_started(ALICE)
    [job], [read] = idle.jobs, idle.limits
    assert (job.id, job) == ("1.1", pool.jobs[1])
    if read is not claims._NEEDS_SLOT:
        assert [read] * 2 == [claims.leftover_limits(job.ad, slot, START) for slot in slots]
    off = claims._Claims(pool, Settings.defaults(claim_recycling_consider_limits=False), now=START)
    assert off._not_started(ALICE).limits == [None, None]
