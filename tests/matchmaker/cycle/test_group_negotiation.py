"""Negotiation with accounting groups, end to end: GROUP_SORT_EXPR order, the group
ephemeral attributes in preemption policies and ranks (docs/negotiation.md, ephemeral attributes), who a job's submitter
is (docs/negotiation.md, group membership, seed "Group Accounting"), and cycle-level Hypothesis properties.

Expected values come from the spec and seed text, derived by hand where a scenario is
ours (the derivation is in each docstring).
"""

from __future__ import annotations

from collections import Counter
from typing import Optional

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from classad.ad import ClassAd
from classad.parser import parse_expr
from matchmaker.accounting.store import Accountant
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.cycle.results import CycleResult
from matchmaker.cycle.session import advance_pool, run_cycle
from matchmaker.groups.membership import group_of_submitter
from matchmaker.pool.ads import pool_from_ads, submitter_name

PHYS, CHEM = "group_physics", "group_chemistry"


def slot(i: int, claimed_by: Optional[str] = None, **extra: object) -> ClassAd:
    """One-core slot ``slot<i>@host``; ``claimed_by`` runs a job of that submitter there."""
    ad = ClassAd(
        {
            "Name": f"slot{i}@host",
            "SlotID": i,
            "Cpus": 1,
            "Memory": 1024,
            "Requirements": True,
            "State": "Unclaimed",
            "Activity": "Idle",
        }
    )
    if claimed_by:
        ad.update(
            {
                "State": "Claimed",
                "Activity": "Busy",
                "RemoteUser": claimed_by,
                "RemoteOwner": claimed_by,
                "AccountingGroup": claimed_by,
                "CurrentRank": 0.0,
            }
        )
    ad.update(extra)
    return ad


def jobs(name: str, n: int, cluster: int, status: int = 1, **extra: object) -> list[ClassAd]:
    """``n`` one-core jobs of ``group.user`` (or a plain user) in one cluster."""
    owner = name.rpartition(".")[2]
    out = []
    for proc in range(n):
        ad = ClassAd(
            {
                "ClusterId": cluster,
                "ProcId": proc,
                "Owner": owner,
                "User": f"{owner}@d",
                "JobStatus": status,
                "RequestCpus": 1,
                "Requirements": True,
            }
        )
        if "." in name:
            ad["AccountingGroup"] = name
        ad.update(extra)
        out.append(ad)
    return out


def settings_of(config: str) -> Settings:
    return Settings.from_knobs(Knobs.from_string(config))


def run(config: str, slots: list[ClassAd], job_ads: list[ClassAd], **kw: object) -> CycleResult:
    return negotiate(pool_from_ads(slots, job_ads), settings_of(config), StaticPriorities(), 0.0, **kw)


def by_group(result: CycleResult, config: str) -> dict[str, int]:
    tree = settings_of(config).group_tree
    assert tree is not None
    return dict(Counter(group_of_submitter(m.submitter, tree) for m in result.matches))


# ---- GROUP_SORT_EXPR ------------------------------------------------------------------------------

TWO_GROUPS = """
GROUP_NAMES = group_physics, group_chemistry
GROUP_QUOTA_group_physics = 20
GROUP_QUOTA_group_chemistry = 10
"""


def test_default_order_is_starvation_order_with_none_last():
    """Physics runs 10 of its 20 (starvation 0.5), chemistry 0 of 10 (0): chemistry goes
    first and takes all 5 free slots; `<none>` is ordered last (the default expression
    gives it 3.4e38)."""
    slots = [slot(i, f"{PHYS}.einstein@d") for i in range(1, 11)] + [slot(i) for i in range(11, 16)]
    job_ads = jobs(f"{PHYS}.einstein", 10, 1, status=2) + jobs(f"{PHYS}.einstein", 10, 2) + jobs(f"{CHEM}.curie", 10, 3)
    r = run(TWO_GROUPS, slots, job_ads)
    assert by_group(r, TWO_GROUPS) == {CHEM: 5}
    assert [g.name for g in r.groups] == [CHEM, PHYS, "<none>"]
    assert [g.order for g in r.groups] == [1, 2, 3]
    assert {g.name: g.sort_key for g in r.groups}[PHYS] == 0.5


def test_custom_sort_expression_ascending():
    """GROUP_SORT_EXPR ranks physics first (-1 < 0): it takes the 5 free slots instead."""
    config = TWO_GROUPS + 'GROUP_SORT_EXPR = ifThenElse(AccountingGroup =?= "group_physics", -1, 0)\n'
    slots = [slot(i, f"{PHYS}.einstein@d") for i in range(1, 11)] + [slot(i) for i in range(11, 16)]
    job_ads = jobs(f"{PHYS}.einstein", 10, 1, status=2) + jobs(f"{PHYS}.einstein", 10, 2) + jobs(f"{CHEM}.curie", 10, 3)
    assert by_group(run(config, slots, job_ads), config) == {PHYS: 5}


def test_sort_expression_sees_quota_and_allocation():
    """12 free slots, quotas 20 and 10 (oversubscribed, not scaled): ``-GroupQuota`` puts
    physics first (12 slots for it); ``GroupResourcesAllocated`` (10 < 20) puts chemistry
    first (10, then physics 2)."""
    job_ads = jobs(f"{PHYS}.einstein", 30, 1) + jobs(f"{CHEM}.curie", 30, 2)
    slots = [slot(i) for i in range(1, 13)]
    config = TWO_GROUPS + "GROUP_SORT_EXPR = -GroupQuota\n"
    assert by_group(run(config, slots, job_ads), config) == {PHYS: 12}
    config = TWO_GROUPS + "GROUP_SORT_EXPR = -GroupResourcesAllocated\n"
    assert by_group(run(config, slots, job_ads), config) == {PHYS: 12}
    config = TWO_GROUPS + "GROUP_SORT_EXPR = GroupResourcesAllocated\n"
    assert by_group(run(config, slots, job_ads), config) == {CHEM: 10, PHYS: 2}


def test_sort_expression_failures_go_last():
    """A value that is not a number sorts as FLT_MAX, after every number: chemistry's
    string sorts after physics's 0 even though chemistry comes first in tree order."""
    config = TWO_GROUPS + 'GROUP_SORT_EXPR = ifThenElse(AccountingGroup =?= "group_chemistry", "x", 0)\n'
    job_ads = jobs(f"{PHYS}.einstein", 30, 1) + jobs(f"{CHEM}.curie", 30, 2)
    r = run(config, [slot(i) for i in range(1, 13)], job_ads)
    assert by_group(r, config) == {PHYS: 12}
    assert [g.name for g in r.groups][-1] == CHEM and r.groups[-1].sort_key == 3.4028234663852886e38


# ---- group ephemeral attributes ---------------------------------------------------------------------

QUOTA_POLICY = """
GROUP_NAMES = a, b
GROUP_QUOTA_a = 5
GROUP_QUOTA_b = 5
GROUP_ACCEPT_SURPLUS = true
PREEMPTION_REQUIREMENTS = (SubmitterGroupResourcesInUse < SubmitterGroupQuota) && \\
                          (RemoteGroupResourcesInUse > RemoteGroupQuota)
PREEMPTION_REQUIREMENTS_STABLE = false
"""


def test_quota_respecting_preemption_needs_the_previous_cycles_quotas(tmp_path):
    """Cycle 1: only a has jobs and takes all 10 slots (quota 5 plus 5 surplus); the quota
    table (a 5, b 5) is stored.  Cycle 2: b arrives; allocations are 5 and 5, b (0/5)
    negotiates first and may preempt a's claims while b is under quota and a over it
    (RemoteGroupQuota = 5 from cycle 1; RemoteGroupResourcesInUse is live): 5 preemptions,
    after which a holds 5 = its quota.  Without the stored table RemoteGroupQuota is
    absent, as on HTCondor's first cycle, the policy is undefined and nothing is
    preempted."""
    settings = settings_of(QUOTA_POLICY)
    pool = pool_from_ads([slot(i) for i in range(1, 11)], jobs("a.user", 20, 1))
    acct = Accountant.load(tmp_path / "acct.db")
    first = run_cycle(pool, settings, acct, 1000.0)
    assert Counter(m.submitter for m in first.matches) == {"a.user@d": 10}
    assert acct.previous_quotas() == {"<none>": 0.0, "a": 5.0, "b": 5.0}
    pool = advance_pool(pool, first, settings)
    pool = pool_from_ads([s.ad for s in pool.slots], [j.ad for j in pool.jobs] + jobs("b.user", 10, 2))
    second = run_cycle(pool, settings, acct, 1060.0)
    acct.close()
    assert [(m.submitter, m.reason, m.preempted) for m in second.matches] == [("b.user@d", "priority", "a.user@d")] * 5
    fresh = Accountant.load(":memory:")
    again = run_cycle(pool, settings, fresh, 1060.0)
    assert again.matches == []
    assert {r.job: r.reason for r in again.rejected}["2.0"] == "PREEMPTION_REQUIREMENTS == False"


def test_remote_group_quota_comes_from_the_previous_table():
    """Slot ads of claimed slots carry RemoteGroup and RemoteGroupQuota of the group of
    the claim's user (from ``previous_quotas``); the job Requirements see them."""
    config = "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 2\nGROUP_QUOTA_b = 2\nPREEMPTION_REQUIREMENTS = True\n"
    slots = [slot(1, "a.x@d"), slot(2, "a.x@d")]
    job_ads = jobs("b.y", 2, 1, Requirements=parse_expr('TARGET.RemoteGroup == "a" && TARGET.RemoteGroupQuota == 7'))
    assert run(config, slots, job_ads).matches == []
    r = run(config, slots, job_ads, previous_quotas={"a": 7.0, "b": 2.0})
    assert [(m.submitter, m.preempted) for m in r.matches] == [("b.y@d", "a.x@d")] * 2


def test_submitter_group_usage_grows_during_the_cycle():
    """SubmitterGroupResourcesInUse counts the whole group and is refreshed before every
    match attempt; slots accept only requests of groups using fewer than 3.  With the
    match list cached (the default) g.u's list is built once, at usage 0, and serves all
    5 of its jobs (docs/negotiation.md, candidate slots: a cached list is only re-checked for limits); g.v's new
    list then finds none.  Without caching every request is tested afresh: 3 in all."""
    config = "GROUP_NAMES = g\nGROUP_QUOTA_g = 10\n"
    slots = [slot(i, Requirements=parse_expr("TARGET.SubmitterGroupResourcesInUse < 3")) for i in range(1, 11)]
    job_ads = jobs("g.u", 5, 1) + jobs("g.v", 5, 2)
    r = run(config, slots, job_ads)
    assert Counter(m.submitter for m in r.matches) == {"g.u@d": 5}
    r = run(config + "NEGOTIATOR_MATCHLIST_CACHING = false\n", slots, job_ads)
    assert len(r.matches) == 3
    assert {m.group for m in r.matches} == {"g"}


def test_submitter_group_quota_is_the_rounds_quota():
    """SubmitterGroupQuota is the group's quota in the current allocation round: for
    `<none>` that is the pool minus its children's quotas (4 - 1 - 1 = 2), but the whole
    pool (4) once some group autoregroups (docs/negotiation.md, autoregroup)."""
    config = "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 1\nGROUP_QUOTA_b = 1\n"
    for extra, quota in (("", 2), ("GROUP_AUTOREGROUP_a = true\n", 4)):
        slots = [slot(i, Requirements=parse_expr(f"TARGET.SubmitterGroupQuota == {quota}")) for i in range(1, 5)]
        r = run(config + extra, slots, jobs("carol", 2, 1))
        assert [(m.submitter, m.group) for m in r.matches] == [("carol@d", "<none>")] * 2, extra


def test_uwcs_style_policy_preempts_only_within_the_group():
    """``SubmitterGroup =?= RemoteGroup`` (the UWCS template's first clause): a.x may
    preempt a.y (same group) but not b.z.  a.x's slice in a's pass is 1 of a's 2."""
    config = (
        "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 2\nGROUP_QUOTA_b = 2\n"
        "PREEMPTION_REQUIREMENTS = TARGET.SubmitterGroup =?= MY.RemoteGroup\n"
    )
    slots = [slot(1, "b.z@d"), slot(2, "a.y@d")]
    job_ads = jobs("a.x", 2, 1) + jobs("a.y", 1, 2, status=2) + jobs("b.z", 1, 3, status=2)
    r = run(config, slots, job_ads)
    assert [(m.submitter, m.slot, m.preempted) for m in r.matches] == [("a.x@d", "slot2@host", "a.y@d")]


def test_remote_group_in_a_job_rank():
    """A job Rank may prefer preempting one group over another: b.w's job ranks claims of
    group c higher, so of two claimed slots it preempts c's."""
    config = (
        "GROUP_NAMES = a, b, c\nGROUP_QUOTA_a = 1\nGROUP_QUOTA_b = 1\nGROUP_QUOTA_c = 1\n"
        "PREEMPTION_REQUIREMENTS = True\n"
    )
    slots = [slot(1, "a.x@d"), slot(2, "c.y@d")]
    job_ads = jobs("b.w", 1, 1, Rank=parse_expr('TARGET.RemoteGroup =?= "c"'))
    r = run(config, slots, job_ads)
    assert [(m.slot, m.preempted) for m in r.matches] == [("slot2@host", "c.y@d")]


@pytest.mark.parametrize("policy", ["MY.RemoteAutoregroup =?= true", 'MY.RemoteNegotiatingGroup =?= "<none>"'])
def test_remote_autoregroup_marks_claims_made_on_surplus(policy):
    """Cycle 1: only a has jobs; its own pass gives it its quota of 2, the autoregroup
    pass of `<none>` 2 more, and those claims publish RemoteAutoregroup = true and
    RemoteNegotiatingGroup = "<none>".  Cycle 2: b arrives under a PREEMPTION_REQUIREMENTS
    that reads either, and takes back exactly those two slots; a keeps the two it got
    within its quota."""
    config = (
        "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 2\nGROUP_QUOTA_b = 2\nGROUP_AUTOREGROUP = true\n"
        f"PREEMPTION_REQUIREMENTS = {policy}\n"
    )
    settings = settings_of(config)
    pool = pool_from_ads([slot(i) for i in range(1, 5)], jobs("a.u", 10, 1))
    first = negotiate(pool, settings, StaticPriorities(), 0.0)
    regrouped = sorted(m.slot for m in first.matches if m.autoregroup)
    assert len(first.matches) == 4 and len(regrouped) == 2
    pool = advance_pool(pool, first, settings)
    pool = pool_from_ads([s.ad for s in pool.slots], [j.ad for j in pool.jobs] + jobs("b.v", 10, 2))
    second = negotiate(pool, settings, StaticPriorities(), 60.0)
    assert sorted(m.slot for m in second.matches) == regrouped
    assert {(m.submitter, m.preempted) for m in second.matches} == {("b.v@d", "a.u@d")}


# ---- accounting principals ----------------------------------------------------------------------------


def test_submitter_is_the_accounting_user_within_the_group():
    """AccountingGroup "g.u" (as submit writes it), or AcctGroup + AcctGroupUser, name
    "g.u@domain"; an accounting user alone is "u@domain"; otherwise the job's User."""

    def name(**attrs: object) -> Optional[str]:
        return submitter_name(ClassAd({"Owner": "alice", "User": "alice@d", **attrs}))

    assert name(AccountingGroup="group_physics.einstein") == "group_physics.einstein@d"
    assert name(AcctGroup="group_physics", AcctGroupUser="einstein") == "group_physics.einstein@d"
    assert name(AcctGroup="group_physics") == "group_physics.alice@d"
    assert name(AcctGroupUser="ishmael") == "ishmael@d"
    assert name() == "alice@d"


def test_people_sharing_an_accounting_user_are_served_fifo():
    """Seed: Alice and Bob both submit as accounting_group_user ishmael: one submitter,
    no fair share between them, first come first served.  Without it they split 2/2."""

    def people(shared: bool) -> list[ClassAd]:
        extra = {"AcctGroupUser": "ishmael"} if shared else {}
        return [
            ClassAd(
                {
                    "ClusterId": c,
                    "ProcId": p,
                    "Owner": who,
                    "User": f"{who}@d",
                    "JobStatus": 1,
                    "Requirements": True,
                    **extra,
                }
            )
            for c, who in ((1, "alice"), (2, "bob"))
            for p in range(3)
        ]

    r = negotiate(
        pool_from_ads([slot(i) for i in range(1, 5)], people(True)), Settings.defaults(), StaticPriorities(), 0.0
    )
    assert [m.job for m in r.matches] == ["1.0", "1.1", "1.2", "2.0"]
    assert [s.name for s in r.submitters] == ["ishmael@d"]
    r = negotiate(
        pool_from_ads([slot(i) for i in range(1, 5)], people(False)), Settings.defaults(), StaticPriorities(), 0.0
    )
    assert Counter(m.submitter for m in r.matches) == {"alice@d": 2, "bob@d": 2}


def test_group_names_are_case_insensitive():
    """ "Group_Physics.b" negotiates in group_physics: both users share its quota of 2,
    and the cycle reports the group under its configured spelling."""
    config = "GROUP_NAMES = group_physics\nGROUP_QUOTA_group_physics = 2\n"
    r = run(config, [slot(i) for i in range(1, 11)], jobs("group_physics.a", 3, 1) + jobs("Group_Physics.b", 3, 2))
    assert len(r.matches) == 2
    assert {m.group for m in r.matches} == {"group_physics"}
    assert {g.name: g.matched for g in r.groups}["group_physics"] == 2


def test_jobs_without_a_group_negotiate_in_none():
    """An ungrouped user negotiates in `<none>`, after the groups, within its quota."""
    config = "GROUP_NAMES = g\nGROUP_QUOTA_g = 2\n"
    r = run(config, [slot(i) for i in range(1, 5)], jobs("g.u", 5, 1) + jobs("carol", 5, 2))
    assert [(m.submitter, m.negotiating_group, m.group) for m in r.matches] == [("g.u@d", "g", "g")] * 2 + [
        ("carol@d", "<none>", "<none>")
    ] * 2


# ---- properties of whole cycles ------------------------------------------------------------------------

GROUPS = ("ga", "gb", "gc")


@st.composite
def group_pools(draw: st.DrawFn, surplus: bool, weights: bool) -> tuple[str, list[ClassAd], list[ClassAd]]:
    """A config with up to three flat groups and a pool; with ``surplus`` groups may
    accept surplus and some slots are claimed, else none is and nothing accepts."""
    n_groups = draw(st.integers(1, 3))
    lines = [f"GROUP_NAMES = {', '.join(GROUPS[:n_groups])}"]
    for g in GROUPS[:n_groups]:
        lines.append(f"GROUP_QUOTA_{g} = {draw(st.integers(0, 12))}")
        lines.append(f"GROUP_ACCEPT_SURPLUS_{g} = {draw(st.booleans()) if surplus else False}")
    lines.append(f"NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION = {draw(st.booleans())}")
    lines.append(f"NEGOTIATOR_CONSIDER_PREEMPTION = {draw(st.booleans())}")
    lines.append(f"PREEMPTION_REQUIREMENTS = {draw(st.booleans())}")
    users = [f"{g}.u{k}" for g in GROUPS[:n_groups] for k in range(draw(st.integers(1, 2)))] + ["plain"]
    slots = []
    for i in range(1, draw(st.integers(1, 16)) + 1):
        owner = draw(st.sampled_from(users)) if surplus and draw(st.booleans()) else None
        slots.append(slot(i, f"{owner}@d" if owner else None, Cpus=draw(st.integers(1, 3)) if weights else 1))
    job_ads: list[ClassAd] = []
    for cluster, user in enumerate(users, 1):
        job_ads += jobs(user, draw(st.integers(0, 12)), cluster)
    return "\n".join(lines) + "\n", slots, job_ads


@hsettings(max_examples=60, deadline=None)
@given(case=st.booleans().flatmap(lambda w: group_pools(surplus=True, weights=w)))
def test_property_matches_never_exceed_the_pool(case):
    """Whatever the groups, quotas and claims: every slot is matched at most once, so the
    matches never exceed the pool, in count or in weight."""
    config, slots, job_ads = case
    r = run(config, slots, job_ads)
    names = [m.slot for m in r.matches]
    assert len(names) == len(set(names)) <= len(slots)
    assert sum(m.weight for m in r.matches) <= sum(float(s["Cpus"]) for s in slots)


@hsettings(max_examples=60, deadline=None)
@given(case=group_pools(surplus=False, weights=False))
def test_property_without_surplus_no_group_exceeds_its_quota(case):
    """With no group accepting surplus (one-core slots, nothing claimed), no group's usage
    after the cycle exceeds its quota: each pass is capped by the group limit and the
    unclaimed limit ``group_quota - group_usage`` (docs/negotiation.md, pie slices and spins and allocation rounds).  (Only RANK
    preemption may pass the limit, in spin 1, and here nothing is claimed.)"""
    config, slots, job_ads = case
    r = run(config, slots, job_ads)
    for g in r.groups:
        if g.name != "<none>":
            assert g.usage <= g.quota, (g, config)
