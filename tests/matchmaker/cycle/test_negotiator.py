"""The negotiation cycle (docs/negotiation.md, the cycle at a glance): pie math, submitter order, spins,
floors and ceilings, autocluster skipping, job order, slot weights, knobs that trim the pool."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, strategies as st

from classad.ad import ClassAd
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.cycle.pie import pie_shares, pie_slices, submitter_order_key
from matchmaker.cycle.state import SubmitterState
from matchmaker.pool.ads import make_jobs, make_slots, parse_old_ads, pool_from_ads, pool_size
from matchmaker.pool.autocluster import Autoclusters, Queue, build_queues, job_order_key, significant_attributes

A, B, C = "A@d", "B@d", "C@d"


def ads(text: str) -> list[ClassAd]:
    return [ad for ad, _ in parse_old_ads(text)]


def slots(n: int, extra: str = "", start: int = 1) -> str:
    return "\n".join(
        f'Name = "s{i}"\nSlotID = {i}\nCpus = 1\nRequirements = true\n{extra}\n' for i in range(start, start + n)
    )


def jobs(user: str, n: int, cluster: int = 1, extra: str = "") -> str:
    return "\n".join(
        f'ClusterId = {cluster}\nProcId = {p}\nUser = "{user}"\nJobStatus = 1\nRequirements = true\n{extra}\n'
        for p in range(n)
    )


def cycle(slot_text: str, job_text: str, eups: dict, config: str = "", **prio_kw):
    settings = Settings.from_knobs(Knobs.from_string(config))
    return negotiate(pool_from_ads(ads(slot_text), ads(job_text)), settings, StaticPriorities(eups, **prio_kw), 0.0)


def count(result) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in result.matches:
        out[m.submitter] = out.get(m.submitter, 0) + 1
    return out


# ---- pure pie math ---------------------------------------------------------------------------------

eup_maps = st.dictionaries(
    st.text("abcdef", min_size=1, max_size=3),
    st.floats(min_value=0.5, max_value=1e10, allow_nan=False),
    min_size=1,
    max_size=8,
)


@given(eup_maps, st.floats(min_value=1, max_value=1e6))
def test_pie_slices_sum_to_the_pool(eups, total):
    """Without usage the slices add up to the pool."""
    assert sum(pie_slices(eups, total).values()) == pytest.approx(total, rel=1e-9)


@given(eup_maps, st.floats(min_value=1, max_value=1e6))
def test_better_eup_never_gets_a_smaller_slice(eups, total):
    """A smaller (better) EUP never gets a smaller slice."""
    slices = pie_slices(eups, total)
    for a in eups:
        for b in eups:
            if eups[a] < eups[b]:
                assert slices[a] >= slices[b]


@given(eup_maps)
def test_slices_are_inverse_to_eups(eups):
    """share_a / share_b = EUP_b / EUP_a."""
    names = sorted(eups)
    assume(len(names) >= 2)
    shares = pie_shares(eups)
    a, b = names[0], names[1]
    assert shares[a] / shares[b] == pytest.approx(eups[b] / eups[a], rel=1e-9)


def test_usage_is_subtracted_and_floored_at_zero():
    assert pie_slices({A: 1.0, B: 1.0}, 10, {A: 3.0, B: 7.5}) == {A: 2.0, B: 0.0}


def test_submitter_order_tie_breaks():
    """EUP first, then starvation (usage share), then name."""

    def sub(name, eup, starvation):
        s = SubmitterState(name, eup, 0.0, -1.0, Queue(name), 1, 0)
        s.starvation = starvation
        return s

    subs = [sub("b", 5, 0.5), sub("c", 5, 0.1), sub("a", 5, 0.5), sub("z", 1, 0.9)]
    assert [s.name for s in sorted(subs, key=submitter_order_key)] == ["z", "c", "a", "b"]


# ---- the cycle --------------------------------------------------------------------------------------


def test_floor_round_comes_first():
    """B's floor of 3 is served in a floor round before the pie, despite B's bad EUP."""
    r = cycle(slots(10), jobs(A, 10) + "\n" + jobs(B, 10, 2), {A: 500.0, B: 5e6}, floors={B: 3.0})
    assert count(r) == {A: 7, B: 3}
    assert [m.submitter for m in r.matches[:3]] == [B, B, B]


def test_ceiling_caps_a_submitter():
    """A ceiling of 2 stops A at 2 slots; the rest goes to B."""
    r = cycle(slots(10), jobs(A, 10) + "\n" + jobs(B, 10, 2), {A: 500.0, B: 500.0}, ceilings={A: 2.0})
    assert count(r) == {A: 2, B: 8}


def test_ignore_user_priorities_gives_all_to_the_first():
    r = cycle(
        slots(5),
        jobs(A, 10) + "\n" + jobs(B, 10, 2),
        {A: 500.0, B: 600.0},
        "NEGOTIATOR_IGNORE_USER_PRIORITIES = true\n",
    )
    assert count(r) == {A: 5}
    assert r.submitters[0].limit == float("inf")


def test_rejection_skips_the_rest_of_the_autocluster():
    """A rejected request's autocluster is skipped for the session; other autoclusters go on."""
    text = jobs(A, 3, 1, "Requirements = TARGET.Memory > 100000") + "\n" + jobs(A, 2, 2)
    r = cycle(slots(5), text, {A: 500.0})
    assert [x.job for x in r.rejected] == ["1.0"]
    assert [m.job for m in r.matches] == ["2.0", "2.1"]


def test_negotiate_all_jobs_in_cluster_disables_skipping():
    text = jobs(A, 3, 1, "Requirements = TARGET.Memory > 100000") + "\n" + jobs(A, 2, 2)
    r = cycle(slots(5), text, {A: 500.0}, "NEGOTIATE_ALL_JOBS_IN_CLUSTER = true\n")
    assert [x.job for x in r.rejected] == ["1.0", "1.1", "1.2"]
    assert len(r.matches) == 2


def test_job_order_priorities_then_cluster_and_proc():
    """PreJobPrio1 > JobPrio > ClusterId/ProcId decide which jobs get the two slots."""
    text = "\n".join(
        [
            jobs(A, 1, 1),
            jobs(A, 1, 2, "JobPrio = 5"),
            jobs(A, 1, 3, "JobPrio = 5"),
            jobs(A, 1, 4, "PreJobPrio1 = 1\nJobPrio = -10"),
        ]
    )
    r = cycle(slots(3), text, {A: 500.0})
    assert [m.job for m in r.matches] == ["4.0", "2.0", "3.0"]


def test_job_order_key_by_qdate_is_the_manual_variant():
    text = 'ClusterId = 1\nUser = "a@d"\nQDate = 50\n\nClusterId = 2\nUser = "a@d"\nQDate = 10\n'
    (j1, j2) = make_jobs(parse_old_ads(text))
    assert job_order_key(j1) < job_order_key(j2)
    assert job_order_key(j2, by_qdate=True) < job_order_key(j1, by_qdate=True)


def test_job_order_by_qdate_knob_in_a_cycle():
    """MATCHMAKER_JOB_ORDER_BY_QDATE = true (docs/negotiation.md, manual or code 3: job order, the manual): the older job by
    QDate gets the one slot although its cluster id is larger."""
    text = "\n".join([jobs(A, 1, 1, "QDate = 50"), jobs(A, 1, 2, "QDate = 10")])
    assert [m.job for m in cycle(slots(1), text, {A: 500.0}).matches] == ["1.0"]
    r = cycle(slots(1), text, {A: 500.0}, "MATCHMAKER_JOB_ORDER_BY_QDATE = true\n")
    assert [m.job for m in r.matches] == ["2.0"]


def test_autoclusters_group_by_significant_attributes():
    """Jobs that differ only in attributes nobody reads share an autocluster."""
    text = (
        jobs(A, 2, 1, 'RequestMemory = 100\nRequirements = TARGET.Memory >= RequestMemory\nCmd = "x"')
        + "\n"
        + jobs(A, 1, 2, 'RequestMemory = 100\nRequirements = TARGET.Memory >= RequestMemory\nCmd = "y"')
        + "\n"
        + jobs(A, 1, 3, "RequestMemory = 200\nRequirements = TARGET.Memory >= RequestMemory")
    )
    slot_ads = ads(slots(1, 'Memory = 1024\nRank = TARGET.Department == "x"'))
    sig = significant_attributes(slot_ads)
    assert "department" in sig and "memory" not in sig
    queues = build_queues(make_jobs([(a, "x") for a in ads(text)]), Autoclusters(sig))
    runs = queues[A].runs
    assert [len(r.jobs) for r in runs] == [3, 1]


def test_slot_weights_are_the_pie_units():
    """A 4-core slot weighs 4.  Pool 8, EUPs 500/600: slices 4.36 and 3.64.  A's first
    match is the 4-core slot (the default POST_JOB_RANK prefers SlotID 1), which uses 4 of
    its 4.36; B takes three 1-core slots; the fourth stays idle (crumbs below weight 1)."""
    text = slots(1, "Cpus = 4") + "\n" + slots(4, start=2)
    r = cycle(text, jobs(A, 5) + "\n" + jobs(B, 5, 2), {A: 500.0, B: 600.0})
    assert [(m.submitter, m.slot, m.weight) for m in r.matches] == [
        (A, "s1", 4.0),
        (B, "s2", 1.0),
        (B, "s3", 1.0),
        (B, "s4", 1.0),
    ]
    r = cycle(text, jobs(A, 5) + "\n" + jobs(B, 5, 2), {A: 500.0, B: 600.0}, "NEGOTIATOR_USE_SLOT_WEIGHTS = false\n")
    # Unweighted: a pool of 5, slices 2.73 and 2.27 -> 2 and 2, one crumb left idle.
    assert count(r) == {A: 2, B: 2} and all(m.weight == 1 for m in r.matches)


def test_partitionable_slot_is_one_candidate():
    """A partitionable slot is matched once per cycle and costs its whole weight."""
    text = 'Name = "pslot"\nPartitionableSlot = true\nCpus = 8\nRequirements = true\n'
    r = cycle(text, jobs(A, 4, extra="RequestCpus = 1"), {A: 500.0})
    assert [(m.job, m.slot, m.weight) for m in r.matches] == [("1.0", "pslot", 8.0)]
    assert r.usage == {A: 8.0}


def test_pool_size_counts_claimed_slots_and_min_weight():
    """The pie is cut from all slots, claimed or not; the min weight is over all slot ads."""
    text = slots(2, "Cpus = 2") + '\nName = "c"\nCpus = 1\nState = "Claimed"\nRemoteUser = "x@d"\n'
    size = pool_size(make_slots(parse_old_ads(text)))
    assert (size.weighted, size.min_weight) == (5.0, 1.0)


def _pslot(name: str, cpus: str) -> str:
    return f'Name = "{name}"\nPartitionableSlot = true\nCpus = {cpus}\n'


def _static(name: str) -> str:
    return f'Name = "{name}"\nCpus = 1\n'


def test_effective_pool_size_is_summed_in_slot_order():
    """The effective size counts 1 per slot, a partitionable slot's cores instead, added in
    slot order as floats.  Whole counts: p (8 cores), s, q (0 cores: counts 1), t: 8 + 1 +
    1 + 1 = 11.  Fractions: p (0.1), s, q (0.7): (0.1 + 1.0) + 0.7 = 1.1 + 0.7 = 1.8, while
    the partitionable slots first give (0.1 + 0.7) + 1.0 = 0.7999999999999999 + 1.0 =
    1.7999999999999998.  Past 2**53: p (1e16), s, t: 1e16 + 1 rounds back
    to 1e16 (the floats there are 2 apart, ties to even), twice: 1e16, not 1e16 + 2."""

    def effective(*ads: str) -> float:
        return pool_size(make_slots(parse_old_ads("\n".join(ads)))).effective

    assert effective(_pslot("p", "8"), _static("s"), _pslot("q", "0"), _static("t")) == 11.0
    assert effective(_pslot("p", "0.1"), _static("s"), _pslot("q", "0.7")) == 1.8
    assert effective(_pslot("p", "1e16"), _static("s"), _static("t")) == 1e16


def test_without_preemption_claimed_slots_are_trimmed():
    """NEGOTIATOR_CONSIDER_PREEMPTION = false: claimed slots are never candidates, even by RANK."""
    text = slots(1) + '\nName = "c"\nCpus = 1\nRequirements = true\nState = "Claimed"\nRemoteUser = "B@d"\nRank = 10\n'
    r = cycle(text, jobs(A, 3), {A: 500.0, B: 500.0}, "NEGOTIATOR_CONSIDER_PREEMPTION = false\n")
    assert [m.slot for m in r.matches] == ["s1"]


def test_slot_constraint_and_job_constraint():
    """NEGOTIATOR_SLOT_CONSTRAINT drops slots; NEGOTIATOR_JOB_CONSTRAINT drops jobs."""
    config = "NEGOTIATOR_SLOT_CONSTRAINT = SlotID != 2\nNEGOTIATOR_JOB_CONSTRAINT = ProcId != 0\n"
    r = cycle(slots(3), jobs(A, 3), {A: 500.0}, config)
    assert sorted(m.slot for m in r.matches) == ["s1", "s3"]
    assert "1.0" not in [m.job for m in r.matches]


def test_retiring_slots_are_trimmed_unless_early_preemption():
    text = (
        'Name = "c"\nCpus = 1\nRequirements = true\nState = "Claimed"\nRemoteUser = "B@d"\n'
        "RetirementTimeRemaining = 100\nCurrentRank = 0\n"
    )
    config = "PREEMPTION_REQUIREMENTS = true\n"
    assert cycle(text, jobs(A, 1), {A: 1.0, B: 500.0}, config).matches == []
    r = cycle(text, jobs(A, 1), {A: 1.0, B: 500.0}, config + "NEGOTIATOR_CONSIDER_EARLY_PREEMPTION = true\n")
    assert len(r.matches) == 1


def test_submitter_with_only_running_jobs_takes_part_in_the_pie():
    """A submitter with running but no idle jobs still counts in the normalisation."""
    text = jobs(A, 10) + "\n" + jobs(B, 1, 2, "JobStatus = 2")
    r = cycle(slots(10), text, {A: 500.0, B: 500.0})
    assert count(r) == {A: 10}  # B's slice comes back to A in spin 2
    assert [s.name for s in r.submitters] == [A, B]


def test_submitter_constraint():
    r = cycle(
        slots(4),
        jobs(A, 2) + "\n" + jobs(B, 2, 2),
        {A: 500.0, B: 500.0},
        'NEGOTIATOR_SUBMITTER_CONSTRAINT = Name != "A@d"\n',
    )
    assert count(r) == {B: 2}


def test_accounting_group_names_the_submitter():
    text = jobs("u@d", 1, extra='AccountingGroup = "group_x.u"')
    r = cycle(slots(1), text, {"group_x.u@d": 500.0})
    assert r.matches[0].submitter == "group_x.u@d"


# ---- group quotas: the pie per group (examples 7.6 and 7.9 end to end) ------------------------------


def group_jobs(group_user: str, n: int, cluster: int) -> str:
    return jobs("u@d", n, cluster, f'AccountingGroup = "{group_user}"')


def test_static_group_quotas_cap_each_group():
    """7.6: quotas 20 and 10 on a pool of 30 with large demand: 20 / 10, `<none>` gets 0."""
    config = (
        "GROUP_NAMES = group_physics, group_chemistry\nGROUP_QUOTA_group_physics = 20\n"
        "GROUP_QUOTA_group_chemistry = 10\n"
    )
    text = group_jobs("group_physics.einstein", 40, 1) + "\n" + group_jobs("group_chemistry.curie", 40, 2)
    r = cycle(slots(30), text, {}, config)
    assert count(r) == {"group_physics.einstein@d": 20, "group_chemistry.curie@d": 10}
    assert r.group_quotas == {"<none>": 0.0, "group_physics": 20.0, "group_chemistry": 10.0}
    r = cycle(slots(60), text, {}, config)
    assert r.group_quotas["<none>"] == 30.0
    assert count(r) == {"group_physics.einstein@d": 20, "group_chemistry.curie@d": 10}


def test_autoregroup_passes_then_the_root():
    """7.9: groups a, b with quota 1, autoregroup, b sorted first: b (1), a (1), then the root
    pass splits the rest by user priority: 2 jobs each."""
    config = (
        "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 1\nGROUP_QUOTA_b = 1\nGROUP_AUTOREGROUP = TRUE\n"
        "NEGOTIATOR_CONSIDER_PREEMPTION = false\nNEGOTIATOR_USE_SLOT_WEIGHTS = false\n"
        'GROUP_SORT_EXPR = ifThenElse(AccountingGroup =?= "b", 1, ifThenElse(AccountingGroup =?= "a", 2, 3))\n'
    )
    r = cycle(slots(4), group_jobs("a.user", 10, 1) + "\n" + group_jobs("b.user", 10, 2), {}, config)
    assert [m.submitter for m in r.matches] == ["b.user@d", "a.user@d", "a.user@d", "b.user@d"]


def test_a_cycle_is_freed_without_the_cyclic_collector() -> None:
    """Once its result is made, a cycle's state (slot entries and their classes, the
    matcher calling the cycle's methods) no longer refers to itself, so reference counting
    frees it: with the collector off, nothing the cycle made is left behind."""
    import gc
    import weakref

    import matchmaker.cycle.state as state
    from matchmaker.cycle.evaluator import SlotClass

    made: list = []
    original = state.Cycle.__init__

    def remember(self, *args, **kw) -> None:  # type: ignore[no-untyped-def]
        original(self, *args, **kw)
        made.append(weakref.ref(self))

    state.Cycle.__init__ = remember  # type: ignore[method-assign]
    was_on = gc.isenabled()
    gc.disable()

    def classes() -> int:
        return sum(1 for o in gc.get_objects() if type(o) is SlotClass)

    try:
        before = classes()
        for config in ("", "GROUP_NAMES = g\nGROUP_QUOTA_g = 1\n", "MATCHMAKER_PRIORITY_POLICY = lsf\n"):
            result = cycle(slots(3), jobs("a@x", 2) + "\n" + jobs("b@x", 2, cluster=2), {}, config)
            assert result.matches  # the cycle did its work
        assert len(made) == 3 and all(ref() is None for ref in made)
        assert classes() == before
    finally:
        state.Cycle.__init__ = original  # type: ignore[method-assign]
        if was_on:
            gc.enable()
