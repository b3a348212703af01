"""``matchmaker.testing``: drawn pools, fast cycles, and the laws -- which hold on drawn pools
and fail on runs built to break them."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import find, given, settings
from support import EXAMPLES, run_matchmaker

from classad import ClassAd
from matchmaker.cycle.results import GroupSummary, Match, Preemption
from matchmaker.testing import (
    DrawnPool,
    LawBroken,
    check_cycle_laws,
    check_group_quotas,
    check_matches_satisfy_requirements,
    check_no_slot_matched_twice,
    check_preemptions_satisfy_preemption_requirements,
    check_priority_factor_law,
    matched,
    names_read,
    pools,
    priority_factor_law,
    run_cycle,
    run_cycles,
)

EX = EXAMPLES
USERS = ["alice@example.org", "bob@example.org", "carol@example.org"]
PREEMPT = "PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2\n"
GROUPS = (EX / "groups/groups.config").read_text().replace("use FEATURE : AssignAccountingGroup(groups.map)", "")
FAST = settings(max_examples=40, deadline=None)


@pytest.mark.slow
def test_laws_hold_on_pools_like_the_example_dumps():
    """bob's factor is 1e4 (EUP 5000 against 500), so bob's claims may be preempted for
    priority: the preemption law is exercised (some pools have such preemptions)."""
    preemptions = []

    @FAST
    @given(pools(EX / "slots.ad", EX / "jobs.ad", submitters=USERS))
    def laws_hold(pool):
        run = run_cycle(pool, PREEMPT, factors={"bob@example.org": 1e4})
        check_cycle_laws(run)
        preemptions.append(len(matched(run, reason="priority")))

    laws_hold()
    assert sum(preemptions) > 0


@pytest.mark.slow
@FAST
@given(
    pools(
        EX / "groups/slots.ads",
        EX / "groups/jobs.ads",
        submitters=USERS,
        groups=[None, "group_physics", "group_physics.hep", "group_physics.lep", "group_chemistry"],
        max_jobs=10,
    )
)
def test_laws_hold_under_group_quotas(pool):
    check_cycle_laws(run_cycle(pool, GROUPS))


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(pools(EX / "slots.ad", EX / "jobs.ad", submitters=USERS))
def test_raising_a_factor_gives_no_more_slots(pool):
    priority_factor_law(pool, "", "alice@example.org", low=1.0, high=1000.0)


# ---- each law fails on a run built to break it ----------------------------------------------


def slot(name: str, req: str = "true", **more) -> ClassAd:
    ad = ClassAd({"Name": name, "Cpus": 1, "Memory": 1024, **more})
    ad["Requirements"] = ClassAd(f"[r = {req}]").lookup("r")
    return ad


def job(cluster: int, user: str, req: str = "true") -> ClassAd:
    ad = ClassAd({"ClusterId": cluster, "ProcId": 0, "User": user, "JobStatus": 1, "RequestCpus": 1})
    ad["Requirements"] = ClassAd(f"[r = {req}]").lookup("r")
    return ad


def test_requirements_law_fails_on_a_match_the_slot_refuses():
    run = run_cycle(DrawnPool((slot("s1", "false"), slot("s2")), (job(1, "a@d"),)), "")
    assert [m.slot for m in run.result.matches] == ["s2"]
    check_matches_satisfy_requirements(run)
    forged = replace(run.result, matches=[replace(run.result.matches[0], slot="s1")])
    with pytest.raises(LawBroken, match="the slot's Requirements refuse it"):
        check_matches_satisfy_requirements(replace(run, result=forged))


def test_requirements_law_fails_on_a_match_the_job_refuses():
    run = run_cycle(DrawnPool((slot("s1"), slot("s2", Memory=64)), (job(1, "a@d", "TARGET.Memory > 100"),)), "")
    forged = replace(run.result, matches=[replace(run.result.matches[0], slot="s2")])
    with pytest.raises(LawBroken, match="the job's Requirements are not true"):
        check_matches_satisfy_requirements(replace(run, result=forged))


def test_slot_law_fails_on_a_slot_matched_twice():
    run = run_cycle(DrawnPool((slot("s1"), slot("s2")), (job(1, "a@d"), job(2, "a@d"))), "")
    assert len(run.result.matches) == 2
    check_no_slot_matched_twice(run)
    twice = [run.result.matches[0], replace(run.result.matches[1], slot=run.result.matches[0].slot)]
    with pytest.raises(LawBroken, match="matched twice"):
        check_no_slot_matched_twice(replace(run, result=replace(run.result, matches=twice)))


def test_preemption_law_fails_on_a_preemption_the_knob_forbids():
    """Slot s1 is claimed by b@d; the knob allows preemption only when RemoteUserPrio > 10^6."""
    claimed = slot("s1", State="Claimed", Activity="Busy", RemoteUser="b@d")
    run = run_cycle(DrawnPool((claimed,), (job(1, "a@d"),)), "PREEMPTION_REQUIREMENTS = RemoteUserPrio > 1000000\n")
    assert run.result.matches == []
    forged = Match("1.0", "a@d", "s1", "priority", "b@d", preemption=Preemption(None, "b@d", 500.0, 500.0, 0.0, 0.0))
    with pytest.raises(LawBroken, match="PREEMPTION_REQUIREMENTS is not true"):
        check_preemptions_satisfy_preemption_requirements(replace(run, result=replace(run.result, matches=[forged])))


def test_factor_law_fails_on_a_pool_that_favours_bad_priorities():
    """Slots that only start jobs of submitters whose EUP is above 1000: with factor 1
    (EUP 0.5) alice gets nothing, with factor 10^4 (EUP 5000) she gets both slots."""
    pool = DrawnPool(
        (slot("s1", "TARGET.SubmitterUserPrio > 1000"), slot("s2", "TARGET.SubmitterUserPrio > 1000")),
        (job(1, "alice@d"), job(2, "alice@d")),
    )
    with pytest.raises(LawBroken, match="got 2 slot weight with the higher priority factor, more than the 0"):
        priority_factor_law(pool, "", "alice@d", low=1.0, high=1e4)


def test_factor_law_compares_weights():
    run = run_cycle(DrawnPool((slot("s1"),), (job(1, "a@d"),)), "")
    empty = replace(run, result=replace(run.result, matches=[]))
    check_priority_factor_law(run, empty, "a@d")
    with pytest.raises(LawBroken):
        check_priority_factor_law(empty, run, "a@d")


def test_quota_law_fails_on_a_group_over_its_quota():
    config = "GROUP_NAMES = g\nGROUP_QUOTA_g = 1\n"
    pool = DrawnPool(
        (slot("s1"), slot("s2"), slot("s3")),
        tuple(ClassAd({**dict(job(i, "u@d")), "AccountingGroup": "g.u"}) for i in (1, 2, 3)),
    )
    run = run_cycle(pool, config)
    check_group_quotas(run)
    assert len(run.result.matches) == 1  # quota 1, no surplus: one slot
    over = [replace(g, usage=3.0) if g.name == "g" else g for g in run.result.groups]
    assert any(isinstance(g, GroupSummary) and g.name == "g" for g in over)
    with pytest.raises(LawBroken, match="group g takes no surplus"):
        check_group_quotas(replace(run, result=replace(run.result, groups=over)))


# ---- a wrong policy is caught, with a small counterexample, and replays with the CLI ---------


@pytest.mark.slow
def test_a_wrong_policy_is_falsified_with_a_small_pool(tmp_path):
    """The site meant "bob's claims are never preempted", but wrote the knob without the
    guard; the smallest pool breaking it has one slot, claimed by bob, and one job of a
    few attributes, and the written-out pool replays the preemption with the CLI."""
    wrong = "PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio\n"
    slots_like, jobs_like = EX / "negotiator/slots.ads", EX / "negotiator/jobs.ads"

    def preempts_bob(pool: DrawnPool) -> bool:
        run = run_cycle(pool, wrong, factors={"bob@example.org": 1e4})
        return any(m.preempted == "bob@example.org" for m in run.result.matches)

    small = find(
        pools(
            slots_like,
            jobs_like,
            submitters=USERS,
            max_slots=3,
            max_jobs=3,
            attributes=names_read(slots_like, jobs_like, wrong),
        ),
        preempts_bob,
        settings=settings(max_examples=200, database=None, deadline=None, derandomize=True),
    )
    assert len(small.slots) == 1 and len(small.jobs) == 1
    assert small.slots[0]["RemoteUser"] == "bob@example.org"
    assert len(small.jobs[0]) <= 9, small.jobs[0]  # as many as the job dump's ads have at most
    config = tmp_path / "wrong.config"
    config.write_text(wrong)
    slots, jobs = small.write(tmp_path / "pool")
    state = tmp_path / "state.db"
    assert run_matchmaker("userprio", "--state", state, "--setfactor", "bob@example.org", "10000").returncode == 0
    ran = run_matchmaker(
        "negotiate", "--config", config, "--slots", slots, "--jobs", jobs, "--now", "1718035200", "--state", state
    )
    assert ran.returncode == 0, ran.stderr
    assert "priority" in ran.stdout and "bob@example.org" in ran.stdout


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(pools(EX / "slots.ad", EX / "jobs.ad", submitters=USERS, max_slots=4, max_jobs=4))
def test_leaving_out_unread_attributes_changes_no_cycle(pool):
    """A cycle on a pool decides the same with only the attributes ``names_read`` keeps."""
    keep = names_read(EX / "slots.ad", EX / "jobs.ad", PREEMPT)
    trimmed = DrawnPool(
        *(
            tuple(ClassAd({k: ad.lookup(k) for k in ad if k.lower() in keep}) for ad in group)
            for group in (pool.slots, pool.jobs)
        )
    )
    assert len(trimmed.slots[0]) < len(pool.slots[0])
    factors = {"bob@example.org": 1e4}
    full, cut = run_cycle(pool, PREEMPT, factors=factors), run_cycle(trimmed, PREEMPT, factors=factors)
    assert full.result.matches == cut.result.matches
    assert [(r.job, r.reason) for r in full.result.rejected] == [(r.job, r.reason) for r in cut.result.rejected]


def test_run_cycles_starts_each_cycle_from_the_last_ones_claims():
    """Two slots, three jobs of one submitter: the first cycle matches two jobs; in the
    second both slots are claimed by them, the submitter's usage is 2, and the third job
    finds no free slot (no preemption: the knob's default is False)."""
    pool = DrawnPool((slot("s1"), slot("s2")), (job(1, "a@d"), job(2, "a@d"), job(3, "a@d")))
    first, second = run_cycles(pool, "", cycles=2, interval=300)
    assert len(first.result.matches) == 2 and first.usage_before == {}
    assert second.now == first.now + 300
    assert second.usage_before == {"a@d": 2.0}
    assert second.result.matches == []
    assert {j.id for j in second.pool.jobs if j.status == 2} == {m.job for m in first.result.matches}


def test_a_drawn_pool_is_written_for_the_cli(tmp_path):
    pool = DrawnPool((slot("s1"),), (job(1, "a@d"),))
    config = tmp_path / "empty.config"
    config.write_text("")
    command = pool.command(tmp_path / "pool", config, 1718035200)
    assert command.startswith("matchmaker negotiate --config ")
    ran = run_matchmaker(*command.split()[1:])
    assert ran.returncode == 0, ran.stderr
    assert "1.0" in ran.stdout and "s1" in ran.stdout
    assert run_cycle(pool, config).result.matches[0].slot == "s1"
