"""Hierarchical group quotas: worked examples 7.6-7.10 of docs/negotiation.md, the numbers of
seed 002 ("Accounting Groups with Hierarchical Group Quotas") and Hypothesis properties.

Expected values are taken from the spec text, or derived by hand from its pseudo-code
with the derivation written next to the assert; none was pasted from a run of the code.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from matchmaker.groups.membership import group_demand, group_of_submitter, negotiating_members
from matchmaker.groups.quotas import (
    FLT_MAX,
    ROOT,
    Allocation,
    GroupConfig,
    GroupPass,
    GroupStats,
    GroupTree,
    allocate,
    assign_quotas,
    build_tree,
    group_order,
    run_rounds,
    starvation_key,
    strict_cap,
    subtree_usage,
)

PHYS, CHEM, HEP, LEP = "group_physics", "group_chemistry", "group_physics.hep", "group_physics.lep"


def physics_chemistry(hep_lep: bool = False, physics_accepts: bool = False) -> GroupTree:
    """The seed's pool: physics 20 and chemistry 10 static, optionally hep 15 / lep 5
    static and accepting surplus (the seed's surplus configuration)."""
    configs = [GroupConfig(PHYS, static_quota=20, accept_surplus=physics_accepts), GroupConfig(CHEM, static_quota=10)]
    if hep_lep:
        configs += [
            GroupConfig(HEP, static_quota=15, accept_surplus=True),
            GroupConfig(LEP, static_quota=5, accept_surplus=True),
        ]
    return build_tree(configs)


class FakePie:
    """A minimal stand-in for the pie engine of docs/negotiation.md (pie slices and spins), enough for HGQ tests:
    unit slots of named kinds, equal EUPs, one spin.  A member's slice is
    min(pool, limit) / members minus what it runs; a pass made as a group also stops at
    the group limit, as the real pie does.  Jobs never finish and nothing is preempted."""

    def __init__(self, tree: GroupTree, slots: dict[str, int], jobs: dict[str, tuple[int, set[str]]]) -> None:
        self.tree = tree
        self.free = dict(slots)
        self.pool = sum(slots.values())
        self.idle = {sub: n for sub, (n, _) in jobs.items()}
        self.fits = {sub: kinds for sub, (_, kinds) in jobs.items()}
        self.running = {sub: 0 for sub in jobs}
        self.members = negotiating_members(tree, jobs)

    def usage(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for sub, n in self.running.items():
            group = group_of_submitter(sub, self.tree)
            out[group] = out.get(group, 0) + n
        return out

    def demand(self) -> dict[str, float]:
        return group_demand(self.tree, [(s, self.idle[s] + self.running[s]) for s in self.idle])

    def __call__(self, step: GroupPass) -> dict[str, float]:
        subs = self.members[step.group]
        share = min(self.pool, step.limit) / len(subs)
        for sub in subs:
            want = math.floor(share - self.running[sub])
            if step.negotiate_as is not None:
                want = min(want, step.limit - self.usage().get(step.negotiate_as, 0))
            for kind in sorted(self.fits[sub]):
                take = max(0, min(want, self.idle[sub], self.free[kind]))
                self.free[kind] -= take
                self.idle[sub] -= take
                self.running[sub] += take
                want -= take
        return self.usage()


# ----------------------------------------------------------------- tree and membership


def test_tree_sorts_siblings_case_insensitively_and_keeps_first_spelling():
    """Parents precede children, siblings are sorted, a duplicate spelling is dropped."""
    tree = build_tree(
        [GroupConfig("b.x", 1), GroupConfig("B", 2), GroupConfig("a", 3), GroupConfig("b", 4), GroupConfig("b.W", 5)]
    )
    assert tree.order == (ROOT, "a", "B", "b.W", "b.x")
    assert tree.nodes["B"].config_quota == 2
    assert tree.lookup("B.w") == "b.W"
    assert any("duplicate" in w for w in tree.warnings)


def test_tree_ignores_bad_names_with_warnings():
    """Missing parent, empty component and the reserved root name are skipped."""
    tree = build_tree(
        [
            GroupConfig("x.y", 1),
            GroupConfig("<none>", 1),
            GroupConfig("a..b", 1),
            GroupConfig("a", 1),
            GroupConfig("<NONE>.a", 1),
        ]
    )
    assert tree.order == (ROOT, "a")
    assert len(tree.warnings) == 4


def test_group_without_quota_gets_dynamic_zero():
    """1.15 item 6: the code keeps a group with no quota knob, with dynamic quota 0."""
    tree = build_tree([GroupConfig("a"), GroupConfig("b", dynamic_quota=0.5)])
    quotas = assign_quotas(tree, 10)
    assert quotas.quota["a"] == 0 and quotas.quota["b"] == 5 and quotas.quota[ROOT] == 5
    assert any("no usable quota" in w for w in tree.warnings)


def test_root_accepts_surplus_and_autoregroup_means_anywhere():
    """The root always accepts surplus; one autoregroup group makes the tree autoregroup."""
    tree = build_tree([GroupConfig("a", 1), GroupConfig("b", 1, autoregroup=True)])
    assert tree.nodes[ROOT].accept_surplus and tree.autoregroup


# ----------------------------------------------------------------- 7.6 and seed quotas


@pytest.mark.parametrize(
    "pool, oversub, physics, chemistry, root",
    [
        (30, False, 20, 10, 0),
        (30, True, 20, 10, 0),
        (15, False, 10, 5, 0),
        (15, True, 20, 10, 0),
        (60, False, 20, 10, 30),
        (60, True, 20, 10, 30),
    ],
)
def test_7_6_static_quota_scaling(pool, oversub, physics, chemistry, root):
    """Example 7.6: static quotas shrink only without oversubscription, never grow."""
    tree = physics_chemistry()
    quotas = assign_quotas(tree, pool, allow_oversubscription=oversub)
    assert (quotas.quota[PHYS], quotas.quota[CHEM], quotas.quota[ROOT]) == (physics, chemistry, root)
    big = allocate(tree, quotas, {PHYS: 1000, CHEM: 1000})  # large demand, no surplus
    assert (big.allocated[PHYS], big.allocated[CHEM]) == (physics, chemistry)


def test_seed_power_failure_scaling_needs_oversubscription_off():
    """Seed 002 says 15 slots scale physics/chemistry to 10/5 by default; the code's
    effective default is oversubscription on (spec 1.15 item 4), which keeps 20/10."""
    tree = physics_chemistry()
    assert assign_quotas(tree, 15).quota[PHYS] == 20
    off = assign_quotas(tree, 15, allow_oversubscription=False)
    assert (off.quota[PHYS], off.quota[CHEM]) == (10, 5)


@pytest.mark.parametrize("pool", [30, 90])
def test_seed_dynamic_quotas_keep_their_ratio(pool):
    """Seed 002: dynamic 0.33 / 0.66 of the pool, not scaled up because they sum below 1."""
    tree = build_tree([GroupConfig(PHYS, dynamic_quota=0.66), GroupConfig(CHEM, dynamic_quota=0.33)])
    quotas = assign_quotas(tree, pool)
    assert quotas.quota[CHEM] == pytest.approx(0.33 * pool)
    assert quotas.quota[PHYS] == pytest.approx(0.66 * pool)
    assert quotas.quota[ROOT] == pytest.approx(0.01 * pool)


def test_seed_static_subgroups_and_userprio_sample():
    """Seed 002: hep owns 15 of physics' 20, lep the other 5; the condor_userprio sample
    shows quotas 15 / 5 and 60 requested each, without surplus."""
    tree = build_tree([GroupConfig(PHYS, 20), GroupConfig(HEP, 15), GroupConfig(LEP, 5), GroupConfig(CHEM, 10)])
    for oversub in (False, True):
        quotas = assign_quotas(tree, 30, oversub)
        assert (quotas.quota[HEP], quotas.quota[LEP]) == (15, 5)
        got = allocate(tree, quotas, {HEP: 60, LEP: 60})
        assert (got.allocated[HEP], got.allocated[LEP]) == (15, 5)
        assert got.unmet[HEP] == 45 and got.unmet[LEP] == 55


def test_oversubscription_lets_an_interior_group_keep_its_subtree_quota():
    """4.3: with OVERSUB physics' own quota is its whole 20; without, 20 - 15 - 5 = 0."""
    tree = physics_chemistry(hep_lep=True)
    assert assign_quotas(tree, 30, True).quota[PHYS] == 20
    assert assign_quotas(tree, 30, False).quota[PHYS] == 0


# ----------------------------------------------------------------- 7.7 surplus


@pytest.mark.parametrize(
    "demand, physics_accepts, without, with_",
    [
        ((60, 60, 0), False, (15, 5, 0), (30, 10, 0)),
        ((60, 2, 0), False, (18, 2, 0), (38, 2, 0)),
        ((60, 60, 60), False, (15, 5, 10), (30, 10, 10)),
        ((60, 2, 0), True, (28, 2, 0), (48, 2, 0)),
    ],
)
def test_7_7_surplus_inside_a_capped_parent(demand, physics_accepts, without, with_):
    """Example 7.7, round-1 allocations hep/lep/chemistry, OVERSUB false and true."""
    tree = physics_chemistry(hep_lep=True, physics_accepts=physics_accepts)
    wanted = dict(zip((HEP, LEP, CHEM), demand))
    for oversub, expected in ((False, without), (True, with_)):
        got = allocate(tree, assign_quotas(tree, 30, oversub), wanted)
        assert (got.allocated[HEP], got.allocated[LEP], got.allocated[CHEM]) == expected


def test_7_7_seed_hep_and_lep_share_at_most_physics_20_without_oversubscription():
    """Seed 002: hep and lep may exceed 15 and 5 but not 20 together (OVERSUB false)."""
    tree = physics_chemistry(hep_lep=True)
    got = allocate(tree, assign_quotas(tree, 30, False), {HEP: 60, LEP: 2})
    assert got.allocated[HEP] > 15 and got.allocated[HEP] + got.allocated[LEP] == 20


def test_7_7_strict_enforcement_gives_hep_the_whole_physics_cap():
    """7.7 with OVERSUB: allocations 30/10 but strict enforcement caps the physics subtree
    at 20; hep (first of the tied keys, breadth-first) takes all 20 and lep gets limit 0."""
    tree = physics_chemistry(hep_lep=True)
    quotas = assign_quotas(tree, 30)
    pie = FakePie(
        tree, {"any": 30}, {"group_physics.hep.higgs@d": (60, {"any"}), "group_physics.lep.fermi@d": (60, {"any"})}
    )
    result = run_rounds(tree, quotas, pie.demand(), pie.usage(), pie, pool_size=30, groups_with_submitters=[HEP, LEP])
    assert result.rounds[0].order == (CHEM, PHYS, HEP, LEP, ROOT)
    first = [(p.group, p.limit) for p in result.passes if p.round == 1]
    assert first == [(HEP, 20), (LEP, 0)]
    assert pie.running == {"group_physics.hep.higgs@d": 20, "group_physics.lep.fermi@d": 0}


def test_strict_cap_uses_static_config_and_dynamic_subtree_quota():
    """4.4 strict_enforce: room under a non-accepting static ancestor is its config quota
    minus its subtree's live usage."""
    tree = physics_chemistry(hep_lep=True)
    quotas = assign_quotas(tree, 30)
    assert strict_cap(tree, quotas, HEP, 30, 0, {HEP: 12, LEP: 3}) == 5
    assert subtree_usage(tree, {HEP: 12, LEP: 3, CHEM: 1})[ROOT] == 16


# ----------------------------------------------------------------- 7.8 truncation


def seven_eight() -> GroupTree:
    return build_tree(
        [
            GroupConfig(CHEM, dynamic_quota=0.33334),
            GroupConfig(PHYS, dynamic_quota=0.66667),
            GroupConfig(HEP, dynamic_quota=0.75),
            GroupConfig(LEP, dynamic_quota=0.25),
        ]
    )


def test_7_8_dynamic_quotas_normalised():
    """Example 7.8: the fractions sum to 1.00001 > 1, so they are normalised.  The seed's
    "same 15 machines" for hep is only approximately true (14.999925)."""
    quotas = assign_quotas(seven_eight(), 30)
    assert quotas.quota[CHEM] == pytest.approx(10.0001, abs=1e-6)
    assert quotas.subtree_quota[PHYS] == pytest.approx(19.9999, abs=1e-6)
    assert quotas.quota[HEP] == pytest.approx(14.999925, abs=1e-8)
    assert quotas.quota[LEP] == pytest.approx(4.999975, abs=1e-8)


def test_7_8_remainders_are_floored_and_lost():
    """Example 7.8 unweighted: remainder recovery floors hep to 14 and lep to 4; nobody
    accepts the fractions."""
    tree = seven_eight()
    got = allocate(tree, assign_quotas(tree, 30), {HEP: 100, LEP: 100, CHEM: 100}, weighted_slots=False)
    assert (got.allocated[HEP], got.allocated[LEP], got.allocated[CHEM]) == (14, 4, 10)


@pytest.mark.parametrize("weighted", [False, True])
def test_7_8_limits_passed_to_the_pie_are_ints(weighted):
    """Example 7.8: the pie gets hep 14, lep 4, chemistry 10; 2 of 30 slots stay unused,
    weighted or not (the group limit is truncated to int)."""
    tree = seven_eight()
    pie = FakePie(tree, {"any": 30}, {f"{g}.u@d": (100, {"any"}) for g in (HEP, LEP, CHEM)})
    result = run_rounds(
        tree,
        assign_quotas(tree, 30),
        pie.demand(),
        pie.usage(),
        pie,
        pool_size=30,
        groups_with_submitters=[HEP, LEP, CHEM],
        weighted_slots=weighted,
    )
    limits = {p.group: p.limit for p in result.passes if p.round == 1}
    assert limits == {CHEM: 10, HEP: 14, LEP: 4}
    assert pie.usage() == {HEP: 14, LEP: 4, CHEM: 10} and pie.free["any"] == 2


# ----------------------------------------------------------------- 7.9 autoregroup


def test_7_9_autoregroup():
    """Example 7.9: b (limit 1), a (limit 1), then <none> with both users and no group
    cap (total 4: each 2 - 1 more); steady state 2 jobs each."""
    tree = build_tree([GroupConfig("a", 1, autoregroup=True), GroupConfig("b", 1, autoregroup=True)])
    pie = FakePie(tree, {"any": 4}, {"a.user@d": (10, {"any"}), "b.user@d": (10, {"any"})})
    b_first = {"a": 1.0, "b": 0.0}
    result = run_rounds(
        tree,
        assign_quotas(tree, 4),
        pie.demand(),
        pie.usage(),
        pie,
        pool_size=4,
        groups_with_submitters=["a", "b"],
        weighted_slots=False,
        consider_preemption=False,
        sort_key=lambda s: b_first.get(s.name, -1.0),
    )
    assert result.passes[:3] == (GroupPass(1, "b", 1, "b"), GroupPass(1, "a", 1, "a"), GroupPass(1, ROOT, 4, None))
    assert pie.running == {"a.user@d": 2, "b.user@d": 2}


# ----------------------------------------------------------------- 7.10 rounds


def test_7_10_allocation_rounds_and_hard_caps():
    """Example 7.10: quotas 20/20/10/10/10/10; a.b's unused 10 moves to a.a within a's
    cap; b's users alternate on slots 1-10.  Expected steady state a.a 20, b.a 5, b.b 5.

    Hand derivation from 4.4 for cycle 1: strict_enforce adds the group's usage from the
    start of the round, so with rate 1 a.a climbs one slot per step only while k <= 21 - k
    and stops at 10; later cycles add 5, 3, 1, 1.  Hence several cycles are simulated."""
    names = ("a", "b", "a.a", "a.b", "b.a", "b.b")
    tree = build_tree([GroupConfig(n, dynamic_quota=0.5, accept_surplus=n not in ("a", "b")) for n in names])
    quotas = assign_quotas(tree, 40)
    assert [quotas.quota[n] for n in names] == [20, 20, 10, 10, 10, 10]
    pie = FakePie(
        tree,
        {"low": 10, "high": 30},
        {
            "a.a.user@d": (20, {"high"}),
            "a.b.user@d": (10, set()),
            "b.a.user@d": (10, {"low"}),
            "b.b.user@d": (10, {"low"}),
        },
    )
    rr_times: dict[str, float] = {}
    for cycle in range(8):
        result = run_rounds(
            tree,
            quotas,
            pie.demand(),
            pie.usage(),
            pie,
            pool_size=40,
            groups_with_submitters=["a.a", "a.b", "b.a", "b.b"],
            consider_preemption=False,
            round_robin_rate=1,
            rr_times=rr_times,
            now=float(cycle),
        )
        rr_times = dict(result.rr_times)
        if cycle == 0:
            first = result.rounds[0].allocation.allocated
            assert [first[n] for n in ("a.a", "a.b", "b.a", "b.b")] == [20, 10, 10, 10]
            assert pie.usage()["a.a"] == 10
        in_subtree = subtree_usage(tree, pie.usage())
        assert in_subtree["a"] <= 20 and in_subtree["b"] <= 20
    assert pie.running == {"a.a.user@d": 20, "a.b.user@d": 0, "b.a.user@d": 5, "b.b.user@d": 5}


# ----------------------------------------------------------------- surplus details


def test_zero_quota_groups_split_leftover_surplus_equally():
    """allocate_surplus: with no quota weights the leftover is split equally."""
    tree = build_tree(
        [GroupConfig("a", 10), GroupConfig("b", 0, accept_surplus=True), GroupConfig("c", 0, accept_surplus=True)]
    )
    got = allocate(tree, assign_quotas(tree, 10), {"b": 100, "c": 100})
    assert (got.allocated["b"], got.allocated["c"]) == (5, 5)


def test_remainder_round_robin_order_and_rr_times():
    """recover_remainders: quotas 2.5/2.5/5 floor to 2/2/5; the 1-slot remainder goes by
    (rr time, larger quota, larger demand): c first, then a once c was served."""
    tree = build_tree(
        [GroupConfig(n, dynamic_quota=q, accept_surplus=True) for n, q in (("a", 0.25), ("b", 0.25), ("c", 0.5))]
    )
    quotas = assign_quotas(tree, 10)
    want = {"a": 100, "b": 100, "c": 100}
    got = allocate(tree, quotas, want, weighted_slots=False)
    assert [got.allocated[n] for n in "abc"] == [2, 2, 6] and got.round_robin == {"c"}
    later = allocate(tree, quotas, want, weighted_slots=False, rr_times={"c": 100.0})
    assert [later.allocated[n] for n in "abc"] == [3, 2, 5]
    weighted = allocate(tree, quotas, want)
    assert [weighted.allocated[n] for n in "abc"] == [2.5, 2.5, 5]


# ----------------------------------------------------------------- group order


def order_fixture() -> tuple[GroupTree, Allocation]:
    tree = build_tree([GroupConfig("a", 10), GroupConfig("b", 10), GroupConfig("c", 0)])
    return tree, allocate(tree, assign_quotas(tree, 30), {})


def test_starvation_order():
    """Default GROUP_SORT_EXPR: usage/quota ascending, quota-0 groups, then <none>."""
    tree, alloc = order_fixture()
    assert group_order(tree, alloc, {"a": 5, "b": 1, "c": 0}) == ["b", "a", "c", ROOT]
    assert starvation_key(GroupStats(ROOT, 0, 0, 0)) == 3.4e38


def test_sort_key_ascending_negatives_first_and_failures_last():
    """1.15 item 7: ascending (negatives first); None/NaN become FLT_MAX, which sorts even
    after the 3.4e38 the default expression gives <none>; ties keep tree order."""
    tree, alloc = order_fixture()
    keys = {"a": None, "b": -1.0, "c": float("nan"), ROOT: 3.4e38}
    assert group_order(tree, alloc, {}, lambda s: keys[s.name]) == ["b", ROOT, "a", "c"]
    tied = {"a": FLT_MAX, "c": None}  # None is exactly FLT_MAX: ties keep tree order
    assert group_order(tree, alloc, {}, lambda s: tied.get(s.name, 0.0)) == [ROOT, "b", "a", "c"]
    seen: list[GroupStats] = []
    group_order(tree, alloc, {"a": 4}, lambda s: seen.append(s) or 0.0)
    assert GroupStats("a", 10, 0, 4) in seen


def test_autoregroup_forces_root_last():
    """4.4: under autoregroup <none> is negotiated last whatever its sort value."""
    tree = build_tree([GroupConfig("a", 1, autoregroup=True)])
    alloc = allocate(tree, assign_quotas(tree, 4), {}, pool_size=4)
    assert alloc.quota[ROOT] == 4 and alloc.allocated[ROOT] == 4
    assert group_order(tree, alloc, {}, lambda s: -100.0 if s.name == ROOT else 0.0) == ["a", ROOT]


# ----------------------------------------------------------------- properties


@st.composite
def setups(draw, accept=None, leaf_demand_only=False, autoregroup=False):
    """A random tree of up to 7 groups with static, dynamic or missing quotas, a pool and
    a demand per group."""
    configs, names = [], []
    for i in range(draw(st.integers(1, 7))):
        parent = draw(st.sampled_from([None] + names))
        name = f"g{i}" if parent is None else f"{parent}.g{i}"
        names.append(name)
        kind = draw(st.sampled_from(["static", "dynamic", "none"]))
        configs.append(
            GroupConfig(
                name,
                static_quota=draw(st.integers(0, 100)) / 2 if kind == "static" else None,
                dynamic_quota=draw(st.integers(0, 100)) / 100 if kind == "dynamic" else None,
                accept_surplus=draw(st.booleans()) if accept is None else accept,
                autoregroup=autoregroup,
            )
        )
    tree = build_tree(configs)
    leaves = {n for n in tree.order if not tree.nodes[n].children}
    demand = {n: draw(st.integers(0, 60)) if n in leaves or not leaf_demand_only else 0 for n in tree.order}
    return tree, draw(st.integers(0, 100)), demand


def eps(pool: float) -> float:
    return 1e-6 * max(1.0, pool)


def in_subtree(tree: GroupTree, values, name: str) -> float:
    return sum(values[n] for n in tree.order if n == name or n.startswith(name + "."))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(setups(), st.booleans())
def test_property_hard_capped_parent_never_exceeded(setup, weighted):
    """Without oversubscription a subtree under a non-accepting group never gets more than
    that group's subtree quota."""
    tree, pool, demand = setup
    quotas = assign_quotas(tree, pool, allow_oversubscription=False)
    got = allocate(tree, quotas, demand, weighted_slots=weighted)
    for name in tree.order[1:]:
        if not tree.nodes[name].accept_surplus:
            assert in_subtree(tree, got.allocated, name) <= quotas.subtree_quota[name] + eps(pool)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(setups(accept=False), st.booleans(), st.booleans())
def test_property_no_surplus_no_group_over_quota(setup, oversub, weighted):
    """With no group accepting surplus, no leaf group exceeds its quota.  (An interior
    group may still use its own children's unused quota: it competes as their peer.)"""
    tree, pool, demand = setup
    quotas = assign_quotas(tree, pool, oversub)
    got = allocate(tree, quotas, demand, weighted_slots=weighted)
    for name in tree.order[1:]:
        if not tree.nodes[name].children:
            assert got.allocated[name] <= quotas.quota[name] + eps(pool)


@settings(max_examples=200, deadline=None)
@given(setups(accept=False, leaf_demand_only=True), st.booleans(), st.booleans())
def test_property_no_surplus_leaf_demand_every_group_within_quota(setup, oversub, weighted):
    """No surplus anywhere and demand only at leaves: every group stays within its quota."""
    tree, pool, demand = setup
    quotas = assign_quotas(tree, pool, oversub)
    got = allocate(tree, quotas, demand, weighted_slots=weighted)
    for name in tree.order[1:]:
        assert got.allocated[name] <= quotas.quota[name] + eps(pool)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(setups(), st.booleans())
def test_property_allocations_fit_the_pool(setup, weighted):
    """Without oversubscription the allocations never add up to more than the pool."""
    tree, pool, demand = setup
    got = allocate(tree, assign_quotas(tree, pool, False), demand, weighted_slots=weighted)
    assert sum(got.allocated.values()) <= pool + eps(pool)


def test_oversubscription_can_allocate_more_than_the_pool():
    """The counterpart of the property above: 7.6 with 15 slots allocates 20 + 10."""
    tree = physics_chemistry()
    got = allocate(tree, assign_quotas(tree, 15), {PHYS: 100, CHEM: 100})
    assert sum(got.allocated.values()) == 30


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(setups(), st.booleans())
def test_property_scaling_keeps_static_ratios(setup, oversub):
    """Static siblings keep the ratio of their configured quotas (scaled or not)."""
    tree, pool, _ = setup
    quotas = assign_quotas(tree, pool, oversub)
    for name in tree.order:
        if quotas.subtree_quota[name] <= 0:
            continue
        static = [tree.nodes[c] for c in tree.nodes[name].children if tree.nodes[c].is_static]
        scale = {quotas.subtree_quota[c.name] / c.config_quota for c in static if c.config_quota}
        assert max(scale, default=1) == pytest.approx(min(scale, default=1), rel=1e-9)
        if oversub:
            assert all(quotas.subtree_quota[c.name] == c.config_quota for c in static)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(setups(), st.integers(0, 80), st.booleans(), st.booleans(), st.sampled_from([1.0, 1e100]))
def test_property_strict_enforcement_caps_subtree_usage(setup, slots, oversub, weighted, rate):
    """With strict enforcement, negotiation never grows a non-accepting group's subtree
    past its cap (static config quota, or subtree quota if dynamic)."""
    tree, pool, demand = setup
    jobs = {(f"{n}.u@d" if n != ROOT else "u@d"): (int(demand[n]), {"any"}) for n in tree.order}
    pie = FakePie(tree, {"any": slots}, jobs)
    quotas = assign_quotas(tree, slots, oversub)
    run_rounds(
        tree,
        quotas,
        pie.demand(),
        pie.usage(),
        pie,
        pool_size=slots,
        groups_with_submitters=tree.order,
        weighted_slots=weighted,
        round_robin_rate=rate,
    )
    usage = subtree_usage(tree, pie.usage())
    for name in tree.order[1:]:
        node = tree.nodes[name]
        if not node.accept_surplus:
            cap = node.config_quota if node.is_static else quotas.subtree_quota[name]
            assert usage[name] <= cap + 1e-9
