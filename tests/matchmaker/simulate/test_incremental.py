"""Incremental cycles (``SIMULATE_INCREMENTAL``) give the very simulation the rebuild gives.

The expected result of each example is the other mode's run of the same input: with
the knob on, a simulation carries records and memos from one cycle to the next; with
it off every cycle starts from nothing.  Any difference in the series, the jobs'
outcomes, the claim spans, the warnings or the accountant's final state is a bug.
Random pools mix static and partitionable slots (whose disk quanta decide how many
jobs fit), slots claimed at the start (idle or busy), slots that the cycle trims or not
(retiring, not wanting matches) by literals or by expressions of the clock or of
random draws, job
streams with arrivals, random durations and repeats, several submitters, group
quotas, priority preemption (of dynamic slots too, ``ALLOW_PSLOT_PREEMPTION``) and
the other priority policies.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import matchmaker
from classad import ParserType, parseAds
from classad.evaluate import seeded_random
from matchmaker.api import settings_from
from matchmaker.config.knobs import Knobs
from matchmaker.cycle.session import open_accountant
from matchmaker.cycle.slot_carry import SlotCarry
from matchmaker.pool.ads import pool_from_ads
from matchmaker.simulate import loop
from matchmaker.simulate.loop import run_simulation

START = 1_700_000_000
OWNERS = ("alice", "bob", "carol", "dave")


def _ads(text: str) -> list:
    return list(parseAds(text, ParserType.Old))


# Slot clauses whose values change from cycle to cycle: the slot's state, the clock, the
# ephemeral priority of its user; and row-only parts shared between slots.
SLOT_CLAUSES = st.sampled_from(
    (
        "",
        ' && (MY.Cpus > 0 || State =!= "Unclaimed")',
        ' && (CurrentTime - EnteredCurrentState > 600 || State == "Unclaimed")',
        " && (RemoteUserPrio =?= undefined || RemoteUserPrio < 700)",
        " && KFlops * 2 > 1500 && (MY.Cpus > 0 || KFlops > 0)",
        " && random(4) != 0",
    )
)
# A job's Requirements may draw too: the columnar engine then evaluates it on the rows
# asked for only, the same in every cycle whatever its memo holds.
JOB_CLAUSES = st.sampled_from(("", "", " && random(3) != 0", " && (random(2) == 0 || TARGET.Cpus > 1)"))
# A job's size may draw as well: then every slot expression that reads it draws (the
# slots' Requirements, a Rank or a consumption policy reading TARGET.RequestCpus).
REQUEST_CPUS = st.sampled_from(("1", "1", "2", "1 + random(2)"))


# What decides whether the cycle trims a slot (RetirementTimeRemaining, WantMatching) and
# whether a claimed one is idle (Activity): literals, which a cycle keeps per slot record,
# and expressions that read the clock or draw, which each cycle evaluates again.
RETIREMENT = st.sampled_from(
    (
        [],
        ["RetirementTimeRemaining = 0"],
        ["RetirementTimeRemaining = 600"],
        ["RetirementTimeRemaining = EnteredCurrentState + 9000 - CurrentTime"],
        ["RetirementTimeRemaining = random(2) * 600"],
    )
)
WANT_MATCHING = st.sampled_from(([], ["WantMatching = false"], ["WantMatching = random(2) == 1"]))
CLAIMED_ACTIVITY = st.sampled_from(
    ('Activity = "Busy"', 'Activity = "Idle"', 'Activity = ifThenElse(random(2) == 0, "Idle", "Busy")')
)
# A claim's state, by a literal or by a draw (then its record, and what the cycle decides
# of it by the state, changes from cycle to cycle while the ad stays the same).
CLAIMED_STATE = st.sampled_from(
    ('State = "Claimed"', 'State = "Claimed"', 'State = ifThenElse(random(2) == 0, "Claimed", "Preempting")')
)
# What a cycle reads of a slot ad alone or adds to its copy: a Rank that is an error on its
# own (warned about each cycle), the negotiator's Requirements, a published weight, and
# for a claim its concurrency limits and preempting rank; by literals, by expressions and
# by random draws.
RANKS = st.sampled_from(("0", 'TARGET.Owner == "bob"', "TARGET.RequestCpus", "RemoteUserPrio ?: 0", '1 + "x"'))
SLOT_EXTRAS = st.sampled_from(
    (
        [],
        [],
        ['NegotiatorRequirements = TARGET.RequestCpus <= MY.Cpus && TARGET.Owner =!= "carol"'],
        ["SlotWeight = Cpus * 2"],
        ["SlotWeight = 1 + random(2)"],
    )
)
CLAIM_EXTRAS = st.sampled_from(
    (
        [],
        ['ConcurrencyLimits = "lic_a"'],
        ['ConcurrencyLimits = strcat("lic_", "b")', "PreemptingRank = 3"],
        ['PreemptingConcurrencyLimits = ifThenElse(random(2) == 0, "lic_a", "lic_b")'],
    )
)
# A partitionable slot's consumption policy (the cycle writes into its copy as it matches).
CONSUMPTION = st.sampled_from(
    (
        [],
        [],
        [
            'MachineResources = "Cpus Memory"',
            "ConsumptionCpus = TARGET.RequestCpus",
            "ConsumptionMemory = quantize(TARGET.RequestMemory, {256})",
        ],
    )
)


@st.composite
def slot_texts(draw: Any) -> str:
    out = []
    for i in range(draw(st.integers(1, 5))):
        cpus = draw(st.sampled_from((1, 2, 4)))
        attrs = [
            f'Name = "slot{i}@node{i % 2}"',
            f"Cpus = {cpus}",
            f"Memory = {cpus * 1024}",
            "Disk = 100000",
            'State = "Unclaimed"',
            'Activity = "Idle"',
            "Requirements = MY.Cpus > 0 && TARGET.RequestCpus <= MY.Cpus"
            + draw(st.sampled_from(("", ' && TARGET.Owner != "dave"')))
            + draw(SLOT_CLAUSES),
            "Rank = " + draw(RANKS),
            f"KFlops = {draw(st.integers(1, 3)) * 1000}",
            *draw(RETIREMENT),
            *draw(SLOT_EXTRAS),
        ]
        if draw(st.booleans()) and cpus > 1:
            attrs[0] = f'Name = "slot1@pnode{i}"'
            attrs[3] = f"Disk = {cpus * 1100}"  # the disk quantum decides how many jobs fit
            attrs += [
                "PartitionableSlot = true",
                'SlotType = "Partitionable"',
                f"TotalSlotCpus = {cpus}",
                f"TotalSlotMemory = {cpus * 1024}",
                f"TotalSlotDisk = {cpus * 1100}",
            ]
            attrs += draw(st.sampled_from(([], ["DiskQuantum = 1000"], ["DiskQuantum = 2000"])))
            attrs += draw(WANT_MATCHING)
            attrs += draw(CONSUMPTION)
        elif draw(st.integers(0, 3)) == 0:
            owner = draw(st.sampled_from(OWNERS))
            attrs[4:6] = [draw(CLAIMED_STATE), draw(CLAIMED_ACTIVITY)]
            attrs += [
                f'RemoteUser = "{owner}@example.org"',
                f'RemoteOwner = "{owner}@example.org"',
                "CurrentRank = 0",
                f"EnteredCurrentState = {START - 7200}",
                *draw(CLAIM_EXTRAS),
            ]
        out.append("\n".join(attrs) + "\n\n")
    return "".join(out)


@st.composite
def job_texts(draw: Any) -> str:
    out = []
    for cluster in range(1, draw(st.integers(1, 5)) + 1):
        owner = draw(st.sampled_from(OWNERS))
        group = draw(st.sampled_from(("", "group_a", "group_b")))
        for proc in range(draw(st.integers(1, 4))):
            attrs = [
                f"ClusterId = {cluster}",
                f"ProcId = {proc}",
                f'Owner = "{owner}"',
                f'User = "{owner}@example.org"',
                "JobStatus = 1",
                f"RequestCpus = {draw(REQUEST_CPUS)}",
                "RequestMemory = 512",
                f"RequestDisk = {draw(st.sampled_from((900, 1000, 1000)))}",
                "Requirements = TARGET.Cpus >= RequestCpus" + draw(JOB_CLAUSES),
                f"QDate = {START + draw(st.sampled_from((-60, 0, 300, 900, 2400)))}",
                f"JobPrio = {draw(st.integers(-1, 1))}",
                "SimJobDuration = " + draw(st.sampled_from(("600", "300 + random(1800)", "1200"))),
                f"SimJobRepeat = {draw(st.sampled_from((0, 1, 2, -1)))}",
            ]
            if group:
                attrs.append(f'AcctGroup = "{group}"')
            out.append("\n".join(attrs) + "\n\n")
    return "".join(out)


@st.composite
def configs(draw: Any) -> str:
    lines = ["NEGOTIATOR_INTERVAL = 300", "PRIORITY_HALFLIFE = 3600"]
    if draw(st.booleans()):
        lines.append(
            "PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2"
            + draw(st.sampled_from(("", " && CurrentTime - EnteredCurrentState > 600")))
        )
    if draw(st.booleans()):
        lines += [
            "GROUP_NAMES = group_a, group_b",
            "GROUP_QUOTA_DYNAMIC_group_a = 0.5",
            "GROUP_QUOTA_group_b = 2",
            "GROUP_ACCEPT_SURPLUS = " + str(draw(st.booleans())).lower(),
        ]
    else:
        lines.append("MATCHMAKER_PRIORITY_POLICY = " + draw(st.sampled_from(("htcondor", "htcondor", "lsf", "maui"))))
    lines.append("MATCHMAKER_SKIP_CLAIMED_IDLE = " + str(draw(st.booleans())).lower())
    lines.append("CLAIM_PARTITIONABLE_LEFTOVERS = " + str(draw(st.booleans())).lower())
    lines.append("ALLOW_PSLOT_PREEMPTION = " + str(draw(st.booleans())).lower())
    lines.append("MATCHMAKER_COLUMNAR = " + draw(st.sampled_from(("true", "true", "false"))))
    # How slots are weighed, counted, fetched and annotated.
    lines += draw(
        st.sampled_from(
            (
                [],
                [],
                ["NEGOTIATOR_USE_SLOT_WEIGHTS = false"],
                ["SLOT_WEIGHT = Cpus + 1", "FORCE_NEGOTIATOR_SLOT_WEIGHT = true"],
                ["NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT = KFlops > 1000"],
                ["NEGOTIATOR_SLOT_CONSTRAINT = KFlops < 3000 || random(2) == 0"],
                ["NEGOTIATOR_CROSS_SLOT_PRIOS = true", "CONCURRENCY_LIMIT_DEFAULT = 2"],
            )
        )
    )
    return "\n".join(lines) + "\n"


def simulate(config: str, slots: str, jobs: str, incremental: bool, cycles: int, seed: int) -> tuple:
    """The simulation's every output and the accountant's final state."""
    knobs = Knobs.from_string(config + f"SIMULATE_INCREMENTAL = {str(incremental).lower()}\n")
    s = settings_from(knobs)
    assert s.simulate_incremental is incremental
    with seeded_random(seed):  # the slot weights of the pool as read draw too
        pool = pool_from_ads(_ads(slots), _ads(jobs), **matchmaker.api.pool_options(s))
    return outputs(pool, s, cycles, seed)


def simulate_patched(
    patches: list[tuple[Any, str, Any]], config: str, slots: str, jobs: str, cycles: int, seed: int
) -> tuple:
    """:func:`simulate` with incremental cycles while each ``(owner, name, value)`` of
    ``patches`` stands in for the owner's attribute (a spy that checks or counts)."""
    with pytest.MonkeyPatch.context() as mp:
        for owner, name, value in patches:
            mp.setattr(owner, name, value)
        return simulate(config, slots, jobs, True, cycles, seed)


def outputs(pool: Any, s: Any, cycles: int, seed: int) -> tuple:
    """``cycles`` five-minute cycles of ``pool`` under ``s``: the simulation's every output
    and the accountant's final state."""
    acct = open_accountant(":memory:", s)
    sim = run_simulation(
        pool, s, acct, start=START, duration=(cycles - 1) * 300, interval=300, job_duration=900, seed=seed
    )
    policy = [acct.policy_usage(s.priority_policy.name)] if s.priority_policy is not None else []
    return (
        sim.rows,
        sim.jobs,
        [dataclasses.astuple(x) for x in sim.spans],
        sim.warnings,
        acct.customers(),
        acct.claims(),
        acct.group_quotas(),
        policy,
    )


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), job_texts(), st.integers(2, 6), st.integers(0, 3))
def test_incremental_equals_rebuild(config: str, slots: str, jobs: str, cycles: int, seed: int) -> None:
    on = simulate(config, slots, jobs, True, cycles, seed)
    off = simulate(config, slots, jobs, False, cycles, seed)
    assert on == off


def busy_pool() -> tuple[str, str, str]:
    """The config, slots and jobs of one busy run: four static slots and a partitionable
    one, twelve jobs of three users arriving over four cycles, bob's in group_a, priority
    preemption (claims, releases, splits, preemption and groups in one run)."""
    config = (
        "NEGOTIATOR_INTERVAL = 300\nPRIORITY_HALFLIFE = 600\n"
        "PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2\n"
        "GROUP_NAMES = group_a\nGROUP_QUOTA_DYNAMIC_group_a = 0.5\nGROUP_ACCEPT_SURPLUS = true\n"
    )
    slots = "".join(
        f'Name = "slot{i}@n"\nCpus = 1\nMemory = 1024\nDisk = 1000\nState = "Unclaimed"\n'
        f"Requirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\n\n"
        for i in range(4)
    )
    slots += (
        'Name = "slot1@p"\nCpus = 4\nMemory = 4096\nDisk = 4000\nState = "Unclaimed"\nPartitionableSlot = true\n'
        "TotalSlotCpus = 4\nTotalSlotMemory = 4096\nTotalSlotDisk = 4000\n"
        "Requirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\n\n"
    )
    jobs = "".join(
        f'ClusterId = {1 + p % 3}\nProcId = {p}\nOwner = "{o}"\nUser = "{o}@example.org"\n'
        f"JobStatus = 1\nRequestCpus = 1\nRequestMemory = 256\nRequestDisk = 10\nRequirements = true\n"
        f"QDate = {START + 300 * (p % 4)}\nSimJobDuration = 300 + random(900)\nSimJobRepeat = 2\n"
        + ('AcctGroup = "group_a"\n' if o == "bob" else "")
        + "\n"
        for p, o in enumerate(("alice", "bob", "carol") * 4)
    )
    return config, slots, jobs


def test_a_pool_that_changes_every_cycle() -> None:
    """One fixed busy case: claims, releases, splits, preemption and groups in one run."""
    config, slots, jobs = busy_pool()
    on = simulate(config, slots, jobs, True, 12, 5)
    off = simulate(config, slots, jobs, False, 12, 5)
    rows = on[0]
    assert sum(r["matched"] for r in rows if r["kind"] == "pool") > 12  # slots were reused
    assert any(r["running"] for r in rows if r["kind"] == "group")
    assert on == off


def test_the_loop_tells_the_slots_carry_where_each_record_was() -> None:
    """In the busy run (claims, splits, releases of static and dynamic slots, preemption),
    the loop tells the slots' carry each change of its list of records, so that each cycle
    finds last cycle's pairs by place (SlotCarry.follow): it searches the records'
    identities only in a cycle after claims that made the list otherwise (the first
    cycle's, which visit every slot: ``changed`` None).  The run is the rebuild's."""
    searched: list[int] = []  # the cycles that searched
    remade: list[int] = []  # the cycles whose claims made the list otherwise
    places, claims = SlotCarry._places, loop.claim_matches

    def spy_places(self: SlotCarry, records: list) -> Any:
        searched.append(self._cycle)
        return places(self, records)

    def spy_claims(*args: Any, **kwargs: Any) -> Any:
        out = claims(*args, **kwargs)
        if out.changed is None:
            remade.append(kwargs["carry"].slots._cycle)
        return out

    config, slots, jobs = busy_pool()
    on = simulate_patched(
        [(SlotCarry, "_places", spy_places), (loop, "claim_matches", spy_claims)], config, slots, jobs, 12, 5
    )
    assert on == simulate(config, slots, jobs, False, 12, 5)
    assert remade and remade[0] == 1
    assert searched == [c + 1 for c in remade if c < 12]


def test_random_numbers_are_drawn_as_in_the_rebuild() -> None:
    """A slot weight that draws random numbers is evaluated afresh in every cycle, as the
    rebuild does: skipping a draw would shift every later one (here the jobs' Requirements)."""
    slots = "".join(
        f'Name = "slot{i}@n"\nCpus = 1\nState = "Unclaimed"\nSlotWeight = 1 + random(3)\n'
        "Requirements = true\nRank = 0\n\n"
        for i in range(3)
    )
    jobs = "".join(
        f'ClusterId = 1\nProcId = {p}\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
        f"Requirements = random(3) != 0\nSimJobDuration = 300\nSimJobRepeat = -1\n\n"
        for p in range(4)
    )
    on = simulate("NEGOTIATOR_INTERVAL = 300\n", slots, jobs, True, 8, 2)
    assert len({r["usage"] for r in on[0] if r["kind"] == "pool"}) > 1  # weights did vary
    assert on == simulate("NEGOTIATOR_INTERVAL = 300\n", slots, jobs, False, 8, 2)


def test_requirements_that_draw_are_evaluated_on_the_same_rows_as_in_the_rebuild() -> None:
    """Requirements that call ``random`` are evaluated by the columnar engine on the rows
    asked for, in every cycle alike.  In the third cycle a slot is already matched when
    dave's first request is built, so his ``Requirements = random(3) != 0`` is asked of
    three of the four slots: the carried table knows from earlier cycles that the
    expression draws, the rebuild's new table does not, and must not draw for the fourth
    slot to find out (one draw more in either mode shifts every later number)."""
    config = "NEGOTIATOR_INTERVAL = 300\nPRIORITY_HALFLIFE = 3600\nMATCHMAKER_COLUMNAR = true\n"
    claim = (
        'Cpus = 1\nState = "Claimed"\nActivity = "Busy"\nRemoteUser = "alice@example.org"\n'
        'RemoteOwner = "alice@example.org"\nCurrentRank = 0\nEnteredCurrentState = 1699992800\n'
        "Requirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\n\n"
    )
    slots = "".join(f'Name = "s{i}@n"\n{claim}' for i in range(4))
    jobs = (
        'ClusterId = 1\nProcId = 0\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
        f"RequestCpus = 1\nRequirements = TARGET.Cpus >= RequestCpus\nQDate = {START - 60}\n"
        "SimJobDuration = 600\n\n"
    )
    jobs += "".join(
        f'ClusterId = 91\nProcId = {p}\nOwner = "dave"\nUser = "dave@example.org"\nJobStatus = 1\n'
        f"RequestCpus = 1\nRequirements = random(3) != 0\nQDate = {START - 100}\nSimJobDuration = 300\n"
        "SimJobRepeat = -1\n\n"
        for p in range(2)
    )
    jobs += "".join(
        f'ClusterId = 90\nProcId = {p}\nOwner = "carol"\nUser = "carol@example.org"\nJobStatus = 2\n'
        f'RemoteHost = "s{p + 1}@n"\nJobCurrentStartDate = {START - 3000}\nRequestCpus = 1\n'
        f"Requirements = TARGET.Cpus >= RequestCpus\nQDate = {START - 4000}\n"
        f"SimJobDuration = {300 * (p + 1) + 3000}\nSimJobRepeat = {p % 2}\n\n"
        for p in range(3)
    )
    on = simulate(config, slots, jobs, True, 3, 0)
    assert sum(r["matched"] for r in on[0] if r["kind"] == "pool") > 2
    assert on == simulate(config, slots, jobs, False, 3, 0)


GROUPS = (
    "GROUP_NAMES = group_a, group_b\nGROUP_QUOTA_DYNAMIC_group_a = 0.3\nGROUP_QUOTA_DYNAMIC_group_b = 0.3\n"
    "GROUP_ACCEPT_SURPLUS = true\n"
)


@pytest.mark.parametrize(
    ("extra", "requirements", "seed"),
    [("", "random(3) != 0", 0), ("", "random(3) != 0", 1), (GROUPS, "true", 1), (GROUPS, "true", 2)],
)
def test_a_request_size_that_draws_read_by_the_slots_is_drawn_as_in_the_rebuild(
    extra: str, requirements: str, seed: int
) -> None:
    """A third of the jobs have ``RequestCpus = 1 + random(2)``, which the slots'
    ``Requirements = TARGET.RequestCpus <= MY.Cpus`` read, so it draws once per slot
    asked.  A cycle's new table stores the slots' Requirements for the first request of
    literal size, then finds that a drawing request's cannot be stored; a table carried
    from an earlier cycle knows that already.  Looking up a stored result must therefore
    not evaluate the drawing request's RequestCpus, or the rebuild would draw more than
    the incremental cycle and shift every later number (the jobs' Requirements, their
    durations), alone or with group quotas (whose demand weighs jobs by their size)."""
    slots = "".join(
        f'Name = "slot{i}@n"\nCpus = 2\nMemory = 2048\nState = "Unclaimed"\n'
        "Requirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\n\n"
        for i in range(6)
    )
    jobs = "".join(
        f'ClusterId = {1 + p % 4}\nProcId = {p}\nOwner = "{o}"\nUser = "{o}@example.org"\nJobStatus = 1\n'
        f"RequestCpus = {('2', '1', '1 + random(2)')[p % 3]}\nRequestMemory = 512\nRequirements = {requirements}\n"
        f"QDate = {START + 300 * (p % 5)}\nSimJobDuration = 300 + random(600)\nSimJobRepeat = 1\n\n"
        for p, o in enumerate(("alice", "bob", "carol") * 5)
    )
    config = "NEGOTIATOR_INTERVAL = 300\nPRIORITY_HALFLIFE = 600\nMATCHMAKER_COLUMNAR = true\n" + extra
    on = simulate(config, slots, jobs, True, 10, seed)
    assert sum(r["matched"] for r in on[0] if r["kind"] == "pool") > 6  # the slots were matched again
    assert on == simulate(config, slots, jobs, False, 10, seed)


def test_a_job_record_that_draws_is_made_again_as_in_the_rebuild() -> None:
    """A job whose ``ProcId`` calls ``random`` draws each time its record is made (``random(1)``
    is always 0, so the job keeps its id); the incremental cycle must make it as often as the
    rebuild, or the jobs' ``Requirements`` would see other numbers.  A ``SimJobDuration`` that
    draws does not matter to the record."""
    slots = "".join(
        f'Name = "slot{i}@n"\nCpus = 1\nState = "Unclaimed"\nRequirements = true\nRank = 0\n\n' for i in range(2)
    )
    jobs = "".join(
        f'ClusterId = {p + 1}\nProcId = random(1)\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
        f"Requirements = random(3) != 0\nSimJobDuration = 300 + random(300)\nSimJobRepeat = -1\n\n"
        for p in range(5)
    )
    on = simulate("NEGOTIATOR_INTERVAL = 300\n", slots, jobs, True, 8, 3)
    assert sum(r["matched"] for r in on[0] if r["kind"] == "pool") > 2
    assert on == simulate("NEGOTIATOR_INTERVAL = 300\n", slots, jobs, False, 8, 3)


def test_jobs_that_draw_and_arrive_later_are_made_as_in_the_rebuild() -> None:
    """The incremental claims visit only the jobs they wrote, the ones that may draw and the
    ones the simulation changed since (a new record, or a place in the queue): a job whose
    ``ProcId`` draws and whose ``QDate`` comes after the start is made again from its arrival
    on, as the rebuild makes it, one arriving each cycle."""
    slots = "".join(
        f'Name = "slot{i}@n"\nCpus = 1\nState = "Unclaimed"\nRequirements = true\nRank = 0\n\n' for i in range(2)
    )
    jobs = "".join(
        f'ClusterId = {p + 1}\nProcId = random(1)\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
        f"QDate = {START + 300 * p}\nRequirements = random(3) != 0\nSimJobDuration = 300\nSimJobRepeat = -1\n\n"
        for p in range(1, 6)
    )
    on = simulate("NEGOTIATOR_INTERVAL = 300\n", slots, jobs, True, 8, 4)
    assert sum(r["matched"] for r in on[0] if r["kind"] == "pool") > 2
    assert on == simulate("NEGOTIATOR_INTERVAL = 300\n", slots, jobs, False, 8, 4)


@pytest.mark.parametrize("weighted", [True, False])
def test_group_demand_carried_per_job_record(weighted: bool) -> None:
    """The group quotas' demand (idle plus running jobs, weighted by ``RequestCpus`` under
    NEGOTIATOR_USE_WEIGHTED_DEMAND) is summed from what the carry kept of each job record,
    literal or not, while the rebuild reads every job again.  The groups' dynamic quotas
    take surplus only up to their demand, so the demand decides the matches."""
    config = (
        "NEGOTIATOR_INTERVAL = 300\nPRIORITY_HALFLIFE = 600\n"
        "GROUP_NAMES = group_a, group_b\nGROUP_QUOTA_DYNAMIC_group_a = 0.3\nGROUP_QUOTA_DYNAMIC_group_b = 0.3\n"
        f"GROUP_ACCEPT_SURPLUS = true\nNEGOTIATOR_USE_WEIGHTED_DEMAND = {str(weighted).lower()}\n"
    )
    slots = "".join(
        f'Name = "slot{i}@n"\nCpus = 2\nMemory = 2048\nState = "Unclaimed"\n'
        "Requirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\n\n"
        for i in range(6)
    )
    requests = ("2", "1", "RequestMemory / 256", "RequestMemory / 512", "0")
    jobs = "".join(
        f'ClusterId = {1 + p % 4}\nProcId = {p}\nOwner = "{o}"\nUser = "{o}@example.org"\nJobStatus = 1\n'
        f"RequestCpus = {requests[p % 5]}\nRequestMemory = 512\nRequirements = true\n"
        f"QDate = {START + 300 * (p % 5)}\nSimJobDuration = 300 + random(600)\nSimJobRepeat = 1\n"
        f'AcctGroup = "{"group_a" if o != "carol" else "group_b"}"\n\n'
        for p, o in enumerate(("alice", "bob", "carol") * 5)
    )
    on = simulate(config, slots, jobs, True, 10, 6)
    assert sum(r["matched"] for r in on[0] if r["kind"] == "pool") > 6
    assert on == simulate(config, slots, jobs, False, 10, 6)


def test_a_carried_request_follows_what_it_reads() -> None:
    """A job's rounded request is shared only by ads holding the same values for what the
    rounding reads.  By hand, with HTCondor's default rounding: RequestDisk 900 on a slot
    with DiskQuantum 1000 is 1000 KB, with 2000 it is 2000 KB, without one 1024 KB;
    RequestMemory 200 rounds up to 256 MB and RequestCpus 2 stays 2."""
    from classad.ad import ClassAd
    from matchmaker.cycle.carry import Carried
    from matchmaker.cycle.claims import rounding_of
    from matchmaker.pool.partition import requested

    rounding = rounding_of(settings_from(Knobs.from_string("")))
    carry = Carried()
    job = ClassAd("[RequestCpus = 2; RequestMemory = 200; RequestDisk = 900]").compact()
    resources = ("Cpus", "Memory", "Disk")
    computed: list[str] = []

    def request(slot: ClassAd) -> dict:
        def compute() -> dict:
            computed.append(str(slot.get("DiskQuantum")))
            return requested(job, slot, resources, rounding)

        return carry.request(job, slot, resources, rounding, compute)

    for quantum, disk in ((1000, 1000), (2000, 2000), (1000, 1000), (None, 1024)):
        slot = ClassAd("[Cpus = 8; Memory = 8192; Disk = 100000]")
        if quantum is not None:
            slot["DiskQuantum"] = quantum
        assert request(slot) == {"Cpus": 2, "Memory": 256, "Disk": disk}
    assert computed == ["1000", "2000", "None"]  # the second slot with quantum 1000 shared the first's
    drawn = ClassAd("[Cpus = 8; Memory = 8192; Disk = 100000; DiskQuantum = 1000 + random(1)]")
    assert request(drawn)["Disk"] == 1000 and len(computed) == 4  # an expression: computed again


_RESOURCE_LISTS = (("Cpus", "Memory"), ("Cpus", "Memory", "Disk"))
_REQUEST_VALUES = st.sampled_from(("", "1", "2", "1.0", "true", "900", "2500", "RequestCpus * 1500", "random(1)"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(("ask", "ask", "write", "cycle")),
            st.integers(0, 3),
            st.sampled_from(("RequestCpus", "RequestDisk", "RequestDisk", "DiskQuantum")),
            _REQUEST_VALUES,
            st.sampled_from(_RESOURCE_LISTS),
        ),
        min_size=20,
        max_size=60,
    )
)
def test_carried_requests_are_the_fresh_ones(steps: list) -> None:
    """A carried request, with what its key reads of each ad remembered by the ad's
    identity across cycles, is the one computed afresh: four jobs and a slot are
    rewritten into new ads, and asked with two lists of resources (the longer one reads
    more names: the disk's rounding), across the carry's cycles."""
    from functools import partial

    from classad.ad import ClassAd
    from matchmaker.cycle.carry import Carried
    from matchmaker.cycle.claims import rounding_of
    from matchmaker.pool.partition import requested

    rounding = rounding_of(settings_from(Knobs.from_string("")))
    carry, lists = Carried(), _RESOURCE_LISTS
    jobs = [ClassAd("[RequestCpus = 1; RequestMemory = 200; RequestDisk = 900]").compact() for _ in range(4)]
    slot = ClassAd("[Cpus = 8; Memory = 8192; Disk = 100000; DiskQuantum = 1000]")
    for kind, which, name, value, resources in steps:
        if kind == "cycle":
            carry.cycle_done()
        elif kind == "write":
            written = dict(slot if name == "DiskQuantum" else jobs[which])
            written.pop(name, None)
            if value:
                written[name] = ClassAd(f"[v = {value}]").lookup("v")
            if name == "DiskQuantum":
                slot = ClassAd(written)
            else:
                jobs[which] = ClassAd(written).compact()
        else:  # each list of resources in turn, the one drawn first
            job = jobs[which]
            for listed in sorted(lists, key=lambda r: r != resources):
                fresh = requested(job, slot, listed, rounding)
                got = carry.request(job, slot, listed, rounding, partial(requested, job, slot, listed, rounding))
                assert repr(got) == repr(fresh)


_PART_NAMES = ("RequestCpus", "RequestDisk", "DiskQuantum", "Catalogs")
_PART_VALUES = st.sampled_from(("1", "2", "1.0", "-0.0", "0.0", "true", '"a"', '"A"', "undefined", "x + 1", ""))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(_PART_NAMES), _PART_VALUES), max_size=5),
    st.lists(
        st.tuples(st.integers(0, 9), st.lists(st.tuples(st.sampled_from(_PART_NAMES), _PART_VALUES), max_size=3)),
        min_size=1,
        max_size=12,
    ),
)
def test_what_a_request_reads_of_compacted_ads_is_what_they_store(base: list, steps: list) -> None:
    """What a carried request's key reads of an ad (Carried._part, made once per variant's
    way of reading the names for the values of the layout's template) is the exact keys of
    what the ad stores under those names: compacted ads sharing a layout, rewritten into
    copies that keep some of the names themselves (and copies of those), each read once."""
    from classad.ad import ClassAd
    from matchmaker.cycle.carry import NOT_LITERAL, Carried, exact_key
    from matchmaker.pool.partition import with_values

    names = tuple(n.lower() for n in _PART_NAMES) + ("missing",)
    text = "; ".join(f"{n} = {v}" for n, v in dict(base).items() if v)
    ads = [ClassAd(f"[Cpus = 8; {text}]").compact(), ClassAd(f"[Cpus = 8; {text}]").compact()]
    carry = Carried()
    for which, writes in steps:
        parent = ads[which % len(ads)]
        values = {n: ClassAd(f"[v = {v}]").lookup("v") for n, v in writes if v}
        deleted = tuple(n for n, v in writes if not v)
        ad = with_values(parent, values, deleted=deleted)
        ads.append(ad)
        expected = tuple(map(exact_key, ad.stored_of(names)))
        assert carry._part(ad, names) == (None if NOT_LITERAL in expected else expected)


def test_trims_and_idle_claims_decided_by_expressions_are_evaluated_each_cycle() -> None:
    """Whether the cycle trims a slot and whether a claimed slot is idle may change from
    cycle to cycle while the slot's ad stays the same object.  Here preemption is
    considered (so ``RetirementTimeRemaining`` is read), any claim may be preempted for a
    better priority, and claimed idle slots are not (``MATCHMAKER_SKIP_CLAIMED_IDLE``).
    Alice's slot retires until the third cycle by the clock, Bob's is idle in every other
    cycle by the clock, Carol's draws both at random: an incremental cycle that kept
    either from an earlier cycle would preempt in other cycles (or shift later draws).
    One unclaimed slot holds literals."""
    config = (
        "NEGOTIATOR_INTERVAL = 300\nPRIORITY_HALFLIFE = 600\nPREEMPTION_REQUIREMENTS = true\n"
        "MATCHMAKER_SKIP_CLAIMED_IDLE = true\n"
    )
    claimed = (
        (
            "alice",
            'ifThenElse((CurrentTime / 300) % 2 == 0, "Idle", "Busy")',
            "EnteredCurrentState + 7800 - CurrentTime",
        ),
        ("bob", 'ifThenElse((CurrentTime / 300) % 2 == 0, "Idle", "Busy")', "0"),
        ("carol", 'ifThenElse(random(2) == 0, "Idle", "Busy")', "random(2) * 600"),
    )
    slots = "".join(
        f'Name = "slot{i}@n"\nCpus = 1\nMemory = 1024\nDisk = 1000\nState = "Claimed"\n'
        f'Activity = {activity}\nRemoteUser = "{o}@example.org"\n'
        f'RemoteOwner = "{o}@example.org"\nCurrentRank = 0\nEnteredCurrentState = {START - 7200}\n'
        f"RetirementTimeRemaining = {retirement}\nRequirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\n\n"
        for i, (o, activity, retirement) in enumerate(claimed)
    )
    slots += (
        'Name = "slot9@n"\nCpus = 1\nMemory = 1024\nDisk = 1000\nState = "Unclaimed"\nActivity = "Idle"\n'
        "RetirementTimeRemaining = 0\nRequirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\n\n"
    )
    jobs = "".join(
        f'ClusterId = 1\nProcId = {p}\nOwner = "{o}"\nUser = "{o}@example.org"\n'
        f"JobStatus = 1\nRequestCpus = 1\nRequestMemory = 256\nRequestDisk = 10\nRequirements = true\n"
        f"QDate = {START + 300 * (p % 3)}\nSimJobDuration = 300 + random(1200)\nSimJobRepeat = 3\n\n"
        for p, o in enumerate(("dave", "alice", "dave", "bob", "dave", "carol"))
    )
    for seed in range(3):
        on = simulate(config, slots, jobs, True, 8, seed)
        assert on == simulate(config, slots, jobs, False, 8, seed)


@st.composite
def dynamic_slot_texts(draw: Any) -> str:
    """Dynamic slots claimed at the start, some with their partitionable slot in the pool and
    some without (then they have no parent), marked by a literal, by ``SlotType`` or by an
    expression that draws; each may run a job of the input (``running_job_texts``)."""
    out = []
    for i in range(draw(st.integers(1, 3))):
        mark = draw(st.sampled_from(("DynamicSlot = true", 'SlotType = "Dynamic"', "DynamicSlot = random(2) == 0")))
        owner = draw(st.sampled_from(OWNERS))
        if draw(st.booleans()):
            out.append(
                f'Name = "slot1@dnode{i}"\nCpus = 2\nMemory = 2048\nDisk = 2200\nState = "Unclaimed"\n'
                'Activity = "Idle"\nPartitionableSlot = true\nSlotType = "Partitionable"\nTotalSlotCpus = 3\n'
                "TotalSlotMemory = 3072\nTotalSlotDisk = 3300\nRequirements = TARGET.RequestCpus <= MY.Cpus\n"
                "Rank = 0\n\n"
            )
        out.append(
            f'Name = "slot1_1@dnode{i}"\n{mark}\nCpus = 1\nMemory = 1024\nDisk = 1100\nState = "Claimed"\n'
            f'Activity = "Busy"\nRemoteUser = "{owner}@example.org"\nRemoteOwner = "{owner}@example.org"\n'
            f"CurrentRank = 0\nEnteredCurrentState = {START - 7200}\n"
            "Requirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\n\n"
        )
    return "".join(out)


def running_job_texts(slots: str) -> str:
    """A running job on each dynamic slot of ``slots``, ending in the first cycles, and two idle
    jobs whose ``Requirements`` draw (so that a draw more or less elsewhere shows)."""
    names = [line.split('"')[1] for line in slots.splitlines() if line.startswith('Name = "slot1_1@')]
    drawing = "".join(
        f'ClusterId = 91\nProcId = {p}\nOwner = "dave"\nUser = "dave@example.org"\nJobStatus = 1\n'
        f"RequestCpus = 1\nRequestMemory = 512\nRequestDisk = 900\nRequirements = random(3) != 0\n"
        f"QDate = {START - 100}\nSimJobDuration = 300\nSimJobRepeat = -1\n\n"
        for p in range(2)
    )
    return drawing + "".join(
        f'ClusterId = 90\nProcId = {p}\nOwner = "carol"\nUser = "carol@example.org"\nJobStatus = 2\n'
        f'RemoteHost = "{name}"\nJobCurrentStartDate = {START - 3000}\nRequestCpus = 1\nRequestMemory = 512\n'
        f"RequestDisk = 900\nRequirements = TARGET.Cpus >= RequestCpus\nQDate = {START - 4000}\n"
        f"SimJobDuration = {300 * (p + 1) + 3000}\nSimJobRepeat = {p % 2}\n\n"
        for p, name in enumerate(names)
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), dynamic_slot_texts(), job_texts(), st.integers(3, 6), st.integers(0, 3))
def test_dynamic_slots_at_the_start(config: str, slots: str, dynamic: str, jobs: str, cycles: int, seed: int) -> None:
    """The loop's books of the slots (which partitionable slot each dynamic slot belongs to,
    each slot's claim) are kept from the slots that changed when incremental, and made
    from every slot each cycle when not: dynamic slots with and without their
    partitionable slot, released, preempted and claimed again, give the same run.  The
    scalar engine runs the cycles, so that the example is about the loop's books alone."""
    config = config.replace("MATCHMAKER_COLUMNAR = true", "MATCHMAKER_COLUMNAR = false")
    jobs += running_job_texts(dynamic)
    on = simulate(config, slots + dynamic, jobs, True, cycles, seed)
    assert on == simulate(config, slots + dynamic, jobs, False, cycles, seed)


def test_what_the_run_evaluates_before_its_first_cycle_draws_from_its_seed() -> None:
    """Whether a slot is dynamic is first asked before the first cycle; for ``DynamicSlot =
    random(2) == 0`` that draws from the run's seeded source, so two runs of one input give
    the same series whatever was drawn before them.  Each of the four dynamic slots' jobs
    ends at the second cycle: a slot found dynamic goes back to its partitionable slot
    (``slot1@dnode<i>``) and the next job gets a new dynamic slot ``slot1_2@dnode<i>``; one
    found static is released and runs the next job itself, so the spans tell them apart."""
    dynamic = "".join(
        f'Name = "slot1@dnode{i}"\nCpus = 1\nMemory = 1024\nDisk = 1100\nState = "Unclaimed"\n'
        'Activity = "Idle"\nPartitionableSlot = true\nSlotType = "Partitionable"\nTotalSlotCpus = 2\n'
        "TotalSlotMemory = 2048\nTotalSlotDisk = 2200\nRequirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\n\n"
        f'Name = "slot1_1@dnode{i}"\nDynamicSlot = random(2) == 0\nCpus = 1\nMemory = 1024\nDisk = 1100\n'
        'State = "Claimed"\nActivity = "Busy"\nRemoteUser = "bob@example.org"\nRemoteOwner = "bob@example.org"\n'
        f"CurrentRank = 0\nEnteredCurrentState = {START - 7200}\nRequirements = TARGET.RequestCpus <= MY.Cpus\n"
        "Rank = 0\n\n"
        for i in range(4)
    )
    jobs = "".join(
        f'ClusterId = 7\nProcId = {p}\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
        f"RequestCpus = 1\nRequestMemory = 512\nRequestDisk = 900\nRequirements = TARGET.Cpus >= RequestCpus\n"
        f"QDate = {START + 200}\nSimJobDuration = 3600\n\n"
        for p in range(4)
    )
    jobs = jobs.replace("RequestCpus = 1", "RequestCpus = 2", 1) + running_job_texts(dynamic)
    config = "NEGOTIATOR_INTERVAL = 300\nMATCHMAKER_COLUMNAR = false\n"
    runs = []
    for outer in range(4):
        with seeded_random(outer):  # what was drawn before the run
            runs.append(simulate(config, dynamic, jobs, True, 3, 5))
    assert all(r == runs[0] for r in runs)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), dynamic_slot_texts(), job_texts(), st.integers(3, 6), st.integers(0, 3))
def test_claims_find_jobs_by_their_place_in_the_queue(
    config: str, slots: str, dynamic: str, jobs: str, cycles: int, seed: int
) -> None:
    """The loop tells the claims where each job is in the queue a cycle saw, instead of the
    claims making a table of every job by id: the same run as with the table."""
    from matchmaker.simulate import loop

    config = config.replace("MATCHMAKER_COLUMNAR = true", "MATCHMAKER_COLUMNAR = false")
    jobs += running_job_texts(dynamic)
    for incremental in (True, False):
        told = simulate(config, slots + dynamic, jobs, incremental, cycles, seed)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(loop._Run, "_queued_place", None)  # the claims make their table
            assert told == simulate(config, slots + dynamic, jobs, incremental, cycles, seed)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), dynamic_slot_texts(), job_texts(), st.integers(3, 6), st.integers(0, 3))
def test_slot_indices_increase_along_the_list(
    config: str, slots: str, dynamic: str, jobs: str, cycles: int, seed: int
) -> None:
    """A slot's index is the last tie-breaker of every sort of a cycle, which needs only its
    order: a simulation leaves the records after a slot that went away with the indices
    they had, and gives a new dynamic slot the next index after the last.  Every cycle
    must then see the indices increase along the slot list, with either mode."""
    from matchmaker.simulate import loop

    seen: list[list[int]] = []

    def checked(pool: Any, *args: Any, **kw: Any) -> Any:
        seen.append([s.index for s in pool.slots])
        return cycle(pool, *args, **kw)

    cycle = loop.run_cycle
    jobs += running_job_texts(dynamic)
    for incremental in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(loop, "run_cycle", checked)
            simulate(config, slots + dynamic, jobs, incremental, cycles, seed)
    assert len(seen) == 2 * cycles
    assert all(a < b for indices in seen for a, b in zip(indices, indices[1:]))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), dynamic_slot_texts(), job_texts(), st.integers(3, 6), st.integers(0, 3))
def test_the_slot_indices_the_loop_keeps_are_the_records(
    config: str, slots: str, dynamic: str, jobs: str, cycles: int, seed: int
) -> None:
    """The loop keeps each slot's index place by place as releases, give-backs and claims
    replace, remove and add records, instead of reading them off every record: whenever
    it uses them they are the records' indices, with either mode, and the run is the one
    made reading them afresh each time."""
    from matchmaker.simulate import loop

    kept = loop._Run._slot_indices
    used: list[int] = []

    def checked(run: Any) -> list[int]:
        indices = kept(run)
        assert indices == [s.index for s in run.slots]
        used.append(len(indices))
        return indices

    jobs += running_job_texts(dynamic)
    for incremental in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(loop._Run, "_slot_indices", checked)
            told = simulate(config, slots + dynamic, jobs, incremental, cycles, seed)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(loop._Run, "_slot_indices", lambda run: [s.index for s in run.slots])
            assert told == simulate(config, slots + dynamic, jobs, incremental, cycles, seed)
    assert used


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), dynamic_slot_texts(), job_texts(), st.integers(3, 6), st.integers(0, 3))
def test_released_slots_and_queued_jobs_the_claims_need_not_look_at(
    config: str, slots: str, dynamic: str, jobs: str, cycles: int, seed: int
) -> None:
    """A slot released or given back by the loop gets a record made of a copy of its ad
    with plain values written, and so does a job that goes back to idle; a job that
    arrives keeps its record.  When making the record of the ad it was made of draws no
    random numbers, that record is final and the claims do not look at it again.  The run
    is the one in which the claims look at every slot and job the loop gave a new ad or
    a place in the queue, and the rebuild's."""
    from matchmaker.simulate import loop

    def told(run: Any, slot: str, ad: Any, base: Any, names: Any, deleted: Any = ()) -> None:
        if run.carry is not None:
            run.carry.new_slots.add(slot)

    def told_job(run: Any, job: Any, base: Any) -> None:
        if run.carry is not None:
            run.carry.new_jobs.add(job.id)

    jobs += running_job_texts(dynamic)
    skipped = simulate(config, slots + dynamic, jobs, True, cycles, seed)
    assert skipped == simulate(config, slots + dynamic, jobs, False, cycles, seed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop._Run, "_new_ad", told)
        patch.setattr(loop._Run, "_new_record", told_job)
        assert skipped == simulate(config, slots + dynamic, jobs, True, cycles, seed)


def test_a_claim_released_between_cycles_ends_before_the_next_negotiation() -> None:
    """The loop syncs the claims after each cycle; the next cycle then syncs only the slots
    released since, before it negotiates.  Two slots (weight Cpus = 1), alice and bob with
    equal priorities, cycles every 300 s.  Cycle 0: alice's job A (300 s) and one of bob's
    long jobs start, one each by the pie.  Cycle 1 (+300): A has ended, alice's job B has
    arrived; her usage is 0, so her share of 1 slot lets B start on A's slot (a claim of A
    left on the books would count 1 against her share and leave B idle).  By hand, after
    cycle 2 (+600) alice has been charged 1 slot for 300 s (A) plus 1 for 300 s (B):
    accumulated usage 600, one slot in use."""
    slots = "".join(
        f'Name = "slot{i}@n"\nCpus = 1\nMemory = 1024\nDisk = 1000\nState = "Unclaimed"\n'
        "Requirements = true\nRank = 0\n\n"
        for i in (1, 2)
    )
    jobs = "".join(
        f'ClusterId = {p + 1}\nProcId = 0\nOwner = "{o}"\nUser = "{o}@example.org"\nJobStatus = 1\n'
        f"RequestCpus = 1\nRequirements = true\nQDate = {START + q}\nSimJobDuration = {d}\n\n"
        for p, (o, q, d) in enumerate(
            [("alice", 0, 300), ("alice", 300, 5000), ("bob", 0, 5000), ("bob", 0, 5000), ("bob", 0, 5000)]
        )
    )
    on = simulate("", slots, jobs, True, 3, 0)
    (alice,) = [c for c in on[4] if c.name == "alice@example.org"]
    assert (alice.accumulated_usage, alice.resources_used) == (600.0, 1.0)
    assert on == simulate("", slots, jobs, False, 3, 0)


def test_the_claims_charged_to_a_consumption_slot_end_when_its_dynamic_slots_are_synced() -> None:
    """After the claims the loop syncs only the slots the claims wrote and the names the
    cycle charged its matches to.  One partitionable slot with a consumption policy (4
    cores, 4096 MB) and alice's three jobs of 1 core and 512 MB, which arrive for cycle 1
    (+300 s; cycle 0 matched nothing and made the books of the slots) and are all matched
    to it: the cycle charges them as ``slot1@pnode``, ``slot1@pnode_cp_match_1`` and
    ``slot1@pnode_cp_match_2``, the claims make three dynamic slots of 1 core each (weight
    Cpus = 1).  By hand, after cycle 1 the books hold the three dynamic slots' claims only,
    and alice uses 3."""
    slots = (
        'Name = "slot1@pnode"\nCpus = 4\nMemory = 4096\nDisk = 100000\nState = "Unclaimed"\n'
        'Activity = "Idle"\nRequirements = TARGET.RequestCpus <= MY.Cpus\nRank = 0\n'
        'PartitionableSlot = true\nSlotType = "Partitionable"\nTotalSlotCpus = 4\n'
        'TotalSlotMemory = 4096\nTotalSlotDisk = 100000\nMachineResources = "Cpus Memory"\n'
        "ConsumptionCpus = TARGET.RequestCpus\nConsumptionMemory = quantize(TARGET.RequestMemory, {256})\n\n"
    )
    jobs = "".join(
        f'ClusterId = 1\nProcId = {p}\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
        f"RequestCpus = 1\nRequestMemory = 512\nRequirements = true\nQDate = {START + 300}\nSimJobDuration = 5000\n\n"
        for p in range(3)
    )
    on = simulate("", slots, jobs, True, 2, 0)
    assert [c.slot for c in on[5]] == ["slot1_1@pnode", "slot1_2@pnode", "slot1_3@pnode"]
    (alice,) = [c for c in on[4] if c.name == "alice@example.org"]
    assert alice.resources_used == 3.0
    assert on == simulate("", slots, jobs, False, 2, 0)


def test_only_charged_claims_hold_their_concurrency_limits() -> None:
    """``LIC_A_LIMIT = 2``.  slot0 is claimed by alice and its ad names ``lic_a``: one
    unit held.  slot1 and slot2 are unclaimed, and their ads name ``lic_a`` too, which
    holds nothing (only a charged claim holds its limits).  Bob's four idle jobs each
    need ``lic_a``: the first cycle matches one of them (1 held + 1 = 2, by hand) and the
    limit refuses the others; the incremental run gives the rebuild's series."""
    config = "NEGOTIATOR_INTERVAL = 300\nNEGOTIATOR_CONSIDER_PREEMPTION = false\nLIC_A_LIMIT = 2\n"
    slots = (
        'Name = "slot0@n"\nCpus = 1\nState = "Claimed"\nActivity = "Busy"\nRemoteUser = "alice@example.org"\n'
        'RemoteOwner = "alice@example.org"\nConcurrencyLimits = "lic_a"\nRequirements = true\nRank = 0\n\n'
    ) + "".join(
        f'Name = "slot{i}@n"\nCpus = 1\nState = "Unclaimed"\nActivity = "Idle"\nConcurrencyLimits = "lic_a"\n'
        "Requirements = true\nRank = 0\n\n"
        for i in (1, 2, 3)
    )
    jobs = "".join(
        f'ClusterId = 1\nProcId = {p}\nOwner = "bob"\nUser = "bob@example.org"\nJobStatus = 1\n'
        f'ConcurrencyLimits = "lic_a"\nRequestCpus = 1\nRequirements = true\nSimJobDuration = 600\n\n'
        for p in range(4)
    )
    on = simulate(config, slots, jobs, True, 4, 1)
    off = simulate(config, slots, jobs, False, 4, 1)
    first = [r for r in on[0] if r["kind"] == "pool" and r["cycle"] == 0]
    assert first[0]["matched"] == 1
    assert on == off


def test_leftovers_on_a_slot_listing_other_resources_than_the_refused_job_was_sized_for() -> None:
    """slot1@a hands out Cpus Memory Disk (2 cores, 2048 MB, 100000 KB; Requirements true),
    slot1@b only Cpus Memory (3 cores, 3072 MB, 1000 KB of Disk it keeps).  alice's jobs of
    600 s ask 1 core, 1000 MB (-> 1024); 1.0 asks 200000 KB of disk and ranks a first, the
    others 1000 KB.  Cycle 0: 1.0 takes a, 1.1 takes b; the startd refuses 1.0 on a (disk),
    and b's leftovers, each job asking b {1, 1024}, start 1.0 and 1.2: 3 running.  Cycle 1
    (300 s): 1.3 takes a: 4.  Cycle 2 (600 s): the first three are done: 1.  Cycle 3
    (900 s): all done: 0.  The incremental run gives the rebuild's series."""
    pslot = (
        'Name = "slot1@{0}"\nCpus = {1}\nMemory = {2}\nDisk = {3}\nState = "Unclaimed"\nActivity = "Idle"\n'
        'PartitionableSlot = true\nSlotType = "Partitionable"\nRank = 0\nRequirements = {4}\n{5}\n'
    )
    slots = pslot.format("a", 2, 2048, 100000, "true", "")
    slots += pslot.format("b", 3, 3072, 1000, "TARGET.RequestCpus <= MY.Cpus", 'MachineResources = "Cpus Memory"\n')
    jobs = "".join(
        f'ClusterId = 1\nProcId = {p}\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
        f"RequestCpus = 1\nRequestMemory = 1000\nRequestDisk = {200000 if p == 0 else 1000}\nRequirements = true\n"
        f"QDate = {START}\nSimJobDuration = 600\n" + ('Rank = TARGET.Name == "slot1@a"\n' if p == 0 else "") + "\n"
        for p in range(4)
    )
    on = simulate("", slots, jobs, True, 4, 0)
    assert [r["running"] for r in on[0] if r["kind"] == "pool"] == [3, 4, 1, 0]
    assert on == simulate("", slots, jobs, False, 4, 0)


def test_leftovers_refused_by_the_jobs_requirements_as_in_the_rebuild() -> None:
    """slot1@a (4 cores, 4096 MB, no HasDocker) is alice's only slot.  Her jobs of 600 s ask 1
    core and 1000 MB; 1.1 to 1.3 require HasDocker (one Requirements text, so one tree; 1.2
    asks 2000 MB), 1.5 asks ``RequestMemory = 500 + 500`` (an expression: never shared).
    Cycle 0: 1.0 takes a; its leftovers refuse 1.1 to 1.3 (each job's Requirements is false
    against a) and start 1.4 and 1.5: 3 running.  Cycle 1 (300 s): the docker jobs match
    nothing: 3.  Cycle 2 (600 s): all three are done: 0.  The incremental run, which shares
    the refusals of 1.1 to 1.3 against one ad, gives the rebuild's series."""
    slots = (
        'Name = "slot1@a"\nCpus = 4\nMemory = 4096\nDisk = 100000\nState = "Unclaimed"\nActivity = "Idle"\n'
        'PartitionableSlot = true\nSlotType = "Partitionable"\nRank = 0\nRequirements = true\n\n'
    )
    docker = "(TARGET.HasDocker) && (TARGET.Memory >= RequestMemory)"
    jobs = "".join(
        f'ClusterId = 1\nProcId = {p}\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
        f"RequestCpus = 1\nRequestMemory = {'2000' if p == 2 else '500 + 500' if p == 5 else '1000'}\n"
        f"RequestDisk = 1000\nRequirements = {docker if p in (1, 2, 3) else 'TARGET.Memory >= RequestMemory'}\n"
        f"QDate = {START}\nSimJobDuration = 600\n\n"
        for p in range(6)
    )
    on = simulate("", slots, jobs, True, 4, 0)
    assert [r["running"] for r in on[0] if r["kind"] == "pool"] == [3, 3, 0, 0]
    assert on == simulate("", slots, jobs, False, 4, 0)
