"""User priorities (docs/negotiation.md, user priorities): the RUP/EUP math, usage charging, and the SQLite store.

Numbers come from the manual (seeds 000 and 002: RUP 10 -> 5 -> 2.5 per half-life;
two users after 48 h) and docs/negotiation.md (example 7.4 and example 7.5).
"""

from __future__ import annotations

import math
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st
from support import ROOT

from matchmaker.accounting import store
from matchmaker.accounting.priority_math import (
    MIN_PRIORITY,
    FactorPolicy,
    decay_factor,
    default_prio_factor,
    effective_priority,
    group_ancestors,
    recent_usage,
    resolve_prio_factor,
    updated_priority,
)
from matchmaker.accounting.reports import admin, priority_report
from matchmaker.accounting.store import Accountant, Claim, QuotaRecord
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle.session import open_accountant
from matchmaker.errors import StateError

DAY = 86400.0


@pytest.fixture
def acct():
    a = Accountant.load(":memory:")
    a.update_priorities(0.0)  # start the clock
    yield a
    a.close()


def rup_after(rup: float, usage: float, seconds: float, steps: int = 1) -> float:
    for _ in range(steps):
        rup = updated_priority(rup, usage, seconds / steps, DAY)
    return rup


# ---- the manual's numbers -----------------------------------------------------------------


def test_decay_factor_is_one_half_per_half_life():
    """β = 0.5^(Δt/h)."""
    assert decay_factor(DAY, DAY) == 0.5
    assert decay_factor(2 * DAY, DAY) == 0.25
    assert decay_factor(0, DAY) == 1.0


def test_rup_halves_each_half_life_without_usage():
    """Seeds 000/002: a user with RUP 10 and no jobs has 5 one day later, 2.5 two days later."""
    assert rup_after(10, 0, DAY) == pytest.approx(5.0)
    assert rup_after(10, 0, 2 * DAY) == pytest.approx(2.5)
    assert rup_after(10, 0, 2 * DAY, steps=48) == pytest.approx(2.5)


def test_rup_rises_towards_usage():
    """docs/negotiation.md, example 7.5: from 0.5 with 100 cores: 50.25 after 24 h, 75.125 after 48 h (seed 002:
    "about 75.0 at the 48 hour mark"); 24 h on then 24 h off gives 25.125."""
    assert rup_after(0.5, 100, DAY) == pytest.approx(50.25)
    assert rup_after(0.5, 100, 2 * DAY) == pytest.approx(75.125)
    assert rup_after(0.5, 100, 2 * DAY) == pytest.approx(75.0, abs=0.2)
    assert rup_after(rup_after(0.5, 100, DAY), 0, DAY) == pytest.approx(25.125)


def test_rup_is_independent_of_update_spacing():
    """docs/negotiation.md, example 7.5: hourly, per-minute and one-shot updates agree (non-uniform intervals too)."""
    one = rup_after(0.5, 100, 2 * DAY)
    assert rup_after(0.5, 100, 2 * DAY, steps=48) == pytest.approx(one, rel=1e-12)
    assert rup_after(0.5, 100, 2 * DAY, steps=2880) == pytest.approx(one, rel=1e-9)
    rup = 0.5
    for dt in (1.0, 59.0, 3600.0, 13.5, 2 * DAY - 3673.5):
        rup = updated_priority(rup, 100, dt, DAY)
    assert rup == pytest.approx(one, rel=1e-12)


def test_manual_two_user_scenario():
    """docs/negotiation.md, example 7.5: at 48 h user A (75.125) vs new user B (0.5), factor 1: B deserves 150.25 times
    A's share; A's slice of 100 cores is 0.66."""
    a, b = effective_priority(rup_after(0.5, 100, 2 * DAY), 1.0), effective_priority(0.5, 1.0)
    assert a / b == pytest.approx(150.25)
    assert 100 * (1 / a) / (1 / a + 1 / b) == pytest.approx(0.66, abs=0.005)


def test_rup_never_below_one_half():
    """Every user begins at 0.5, the lowest possible value."""
    assert updated_priority(0.0, 0.0, DAY, DAY) == MIN_PRIORITY
    assert updated_priority(0.6, 0.0, 100 * DAY, DAY) == MIN_PRIORITY


# ---- EUP and factors ----------------------------------------------------------------------


def test_eup_is_rup_times_factor():
    """docs/negotiation.md, example 7.4: RUP 10 with factors 1000 and 2000 gives 10000 and 20000; a nice user
    (1e10, RUP 0.5) against a new user (EUP 500): ratio 10^7."""
    assert effective_priority(10, 1000) == 10000 and effective_priority(10, 2000) == 20000
    assert effective_priority(0.5, 1e10) / effective_priority(0.5, 1000) == pytest.approx(1e7)
    assert effective_priority(0.1, 1000) == 500  # minimum EUP is 0.5 x factor


POLICY = FactorPolicy(
    default=1000,
    nice_user=1e10,
    remote=1e7,
    local_domain="cs.wisc.edu",
    group_factor=lambda n: 2000.0 if n.startswith("group_physics.") else None,
)


@pytest.mark.parametrize(
    "name, factor",
    [
        ("alice@cs.wisc.edu", 1000),
        ("bob@elsewhere.org", 1e7),
        ("nice-user.carol@cs.wisc.edu", 1e10),
        ("nice-user.dave@elsewhere.org", 1e10),
        ("group_physics.erin@elsewhere.org", 2000),
        ("group_physics.frank@cs.wisc.edu", 2000),
        ("nodomain", 1e7),
    ],
)
def test_default_factor_precedence(name, factor):
    """docs/negotiation.md, priority factors and EUP: nice user > group factor > remote domain > DEFAULT_PRIO_FACTOR."""
    assert default_prio_factor(name, POLICY) == factor


def test_without_local_domain_everyone_is_local():
    """ACCOUNTANT_LOCAL_DOMAIN unset: no submitter is remote."""
    assert default_prio_factor("bob@elsewhere.org", FactorPolicy()) == 1000


def test_stored_factor_wins_when_set():
    """A stored factor of at least 1 beats every default; below 1 means unset."""
    assert resolve_prio_factor(5.0, "nice-user.x@y", POLICY) == 5.0
    assert resolve_prio_factor(0.0, "nice-user.x@y", POLICY) == 1e10


def test_factor_policy_from_knobs():
    """The settings read DEFAULT/NICE_USER/REMOTE_PRIO_FACTOR and ACCOUNTANT_LOCAL_DOMAIN."""
    k = Knobs.from_string("DEFAULT_PRIO_FACTOR = 1\nACCOUNTANT_LOCAL_DOMAIN = here\n", environ={})
    p = Settings.from_knobs(k).factors
    assert (p.default, p.nice_user, p.remote, p.local_domain) == (1.0, 1e10, 1e7, "here")


def test_accountant_factor_is_stored_on_first_use(acct):
    """docs/negotiation.md, priority factors and EUP: the default is stored, so later config changes do not affect the user;
    setfactor overrides it, and values below 1 are clamped to 1."""
    assert acct.prio_factor("u@d") == 1000
    acct.factors = FactorPolicy(default=7)
    assert acct.prio_factor("u@d") == 1000 and acct.prio_factor("new@d") == 7
    acct.set_factor("u@d", 2000)
    assert acct.eup("u@d") == 0.5 * 2000
    acct.set_factor("u@d", 0.25)
    assert acct.prio_factor("u@d") == 1.0


# ---- charging usage -----------------------------------------------------------------------


def test_partial_interval_charge():
    """docs/negotiation.md, example 7.5: a weight-4 slot matched 20 s into a 60 s interval contributes 4 x 40/60."""
    assert recent_usage(4.0, -20 * 4.0, 60.0) == pytest.approx(2.667, abs=1e-3)
    a = Accountant.load(":memory:")
    a.update_priorities(1000.0)
    a.add_match("u@d", "slot1@host", 4.0, 1020.0)
    a.set_priority("u@d", 10.0)
    a.update_priorities(1060.0)
    beta = decay_factor(60, DAY)
    assert a.rup("u@d") == pytest.approx(10 * beta + 4 * 40 / 60 * (1 - beta))
    assert a.get("u@d").weighted_accumulated_usage == pytest.approx(4 * 40)


def test_match_ending_within_one_interval_is_charged_its_duration(acct):
    """A match from t=10 to t=40 of weight 2 is charged 60 weighted seconds (see the
    differences document: HTCondor charges 40 here)."""
    acct.add_match("u@d", "s1", 2.0, 10.0)
    acct.remove_match("s1", 40.0)
    acct.update_priorities(60.0)
    c = acct.get("u@d")
    assert c.weighted_accumulated_usage == pytest.approx(60.0) and c.accumulated_usage == pytest.approx(30.0)
    assert c.weighted_resources_used == 0 and c.resources_used == 0


def test_claims_spanning_intervals_are_charged_per_interval(acct):
    """Each update charges the interval since the previous one; removal charges the rest."""
    acct.add_match("u@d", "s1", 1.0, 30.0)
    acct.update_priorities(60.0)
    acct.update_priorities(120.0)
    acct.remove_match("s1", 150.0)
    acct.update_priorities(180.0)
    assert acct.get("u@d").accumulated_usage == pytest.approx(120.0)
    assert acct.claims() == []


def test_usage_and_accumulated_hours_with_slot_weight(acct):
    """Weighted usage counts SlotWeight: weight 2 for an hour is 2 weighted hours."""
    acct.add_match("u@d", "s1", 2.0, 0.0)
    assert acct.usage("u@d") == 2.0
    acct.update_priorities(3600.0)
    [row] = priority_report(acct)
    assert row.accumulated_usage_hours == pytest.approx(2.0)
    assert row.weighted_resources_used == 2.0 and row.resources_used == 1.0


def test_group_usage_is_charged_up_the_tree(acct):
    """The assigned group's record is charged, and hierarchical usage goes to every ancestor."""
    acct.add_match("group_a.b.u@d", "s1", 3.0, 0.0, group="group_a.b")
    acct.add_match("group_a.v@d", "s2", 1.0, 0.0, group="group_a")
    assert acct.usage("group_a.b") == 3.0 and acct.usage("group_a") == 1.0
    assert acct.usage("group_a", hierarchical=True) == 4.0
    assert acct.get("group_a").is_group and not acct.get("group_a.b.u@d").is_group
    acct.remove_match("s1", 10.0)
    assert acct.usage("group_a", hierarchical=True) == 1.0 and acct.usage("group_a.b", hierarchical=True) == 0.0
    assert group_ancestors("a.b.c") == ["a.b.c", "a.b", "a"] and group_ancestors("<none>") == []


def test_none_group_gets_usage_but_no_hierarchy(acct):
    """The root ``<none>`` is charged like a group record without hierarchical usage."""
    acct.add_match("u@d", "s1", 2.0, 0.0, group="<none>")
    assert acct.usage("<none>") == 2.0 and acct.get("<none>").hier_weighted_resources_used == 0.0


def test_sync_claims_rebuilds_usage_from_slots(acct):
    """CheckMatches: vanished claims end, new ones start, a changed weight is re-charged."""
    acct.add_match("a@d", "s1", 1.0, 0.0)
    acct.add_match("b@d", "s2", 1.0, 0.0)
    acct.update_priorities(60.0)
    acct.sync_claims([Claim("s2", "b@d", 4.0), Claim("s3", "c@d", 2.0)], 60.0)
    assert [(c.slot, c.customer, c.weight) for c in acct.claims()] == [("s2", "b@d", 4.0), ("s3", "c@d", 2.0)]
    assert acct.claims()[0].start_time == 0.0
    assert (acct.usage("a@d"), acct.usage("b@d"), acct.usage("c@d")) == (0.0, 4.0, 2.0)
    acct.update_priorities(120.0)
    assert acct.get("b@d").weighted_accumulated_usage == pytest.approx(60 * 1 + 60 * 4)


def _sync_one_by_one(acct: Accountant, current: list, now: float) -> None:
    """The rule of ``sync_claims`` applied record by record (its docstring): each record in
    the accountant's order ends when its slot is no longer claimed by the same principal
    and group, or is charged again at a new weight (keeping its start); then each new
    claim starts, in the order given."""
    with acct.transaction():
        seen = {c.slot: c for c in current}
        for slot, old in list(acct._claims.items()):
            cur = seen.get(slot)
            if cur is None or cur.customer != old.customer or cur.group != old.group:
                acct._end_claim(slot, now)
            elif cur.weight != old.weight:
                acct._start_claim(Claim(slot, old.customer, cur.weight, old.group, now, old.limits), now)
                acct._claims[slot].start_time = old.start_time
        for slot, cur in seen.items():
            if slot not in acct._claims:
                acct._start_claim(Claim(slot, cur.customer, cur.weight, cur.group, now, cur.limits), now)


def _books(acct: Accountant) -> tuple:
    """Everything the accountant holds of the principals and claims, floats to the bit."""
    rows = [tuple(v.hex() if type(v) is float else v for v in vars(c).values()) for c in acct.customers()]
    claims = [tuple(v.hex() if type(v) is float else v for v in vars(c).values()) for c in acct._claims.values()]
    return sorted(rows), claims


_CLAIMS = st.lists(
    st.builds(
        Claim,
        st.sampled_from(["s1", "s2", "s3", "s4", "s5"]),
        st.sampled_from(["a@d", "b@d", "c@d"]),
        st.sampled_from([1.0, 2.0, 0.5, 3.0, float("nan")]),
        st.sampled_from([None, "g", "g.h"]),
    ),
    max_size=7,
)


@settings(max_examples=80, deadline=None)
@given(st.lists(_CLAIMS, min_size=1, max_size=5))
def test_sync_claims_is_the_rule_applied_record_by_record(cycles):
    """Differential: over cycles of random claim lists (slots repeated, principals, groups
    and weights changing, NaN weights), ``sync_claims`` leaves every record and claim (in
    order, floats to the bit) as the rule applied record by record does."""
    fast, slow = Accountant.load(":memory:"), Accountant.load(":memory:")
    for k, current in enumerate(cycles):
        now = 60.0 * (k + 1)
        for acct in (fast, slow):
            acct.update_priorities(now)
        fast.sync_claims(list(current), now)
        _sync_one_by_one(slow, list(current), now)
        assert _books(fast) == _books(slow)


_SLOTS = [f"s{k}" for k in range(12)]
_ONE_CLAIM = st.builds(
    Claim,
    st.sampled_from(_SLOTS),
    st.sampled_from(["a@d", "b@d", "c@d"]),
    # (sums that round, so the order of the charges shows; the store keeps no NaN)
    st.sampled_from([0.1, 0.7, 1.3, 2.0]),
    st.sampled_from([None, "g", "g.h"]),
)
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.lists(_ONE_CLAIM, max_size=6)),
        st.tuples(st.just("remove"), st.lists(st.sampled_from(_SLOTS), max_size=3)),
        st.tuples(st.just("full"), st.lists(_ONE_CLAIM, max_size=12)),
        st.tuples(st.just("only"), st.lists(st.sampled_from([*_SLOTS, "x"]))),
        st.tuples(st.just("reread")),
    ),
    min_size=1,
    max_size=12,
)


def _stored(acct: Accountant) -> tuple:
    """The store's rows of the principals and claims, floats to the bit."""
    hexed = lambda r: tuple(v.hex() if type(v) is float else v for v in r)
    return tuple(sorted(map(hexed, acct._conn.execute(f"SELECT * FROM {t}"))) for t in ("customers", "claims"))


@settings(max_examples=200, deadline=None)
@given(_STEPS, st.sampled_from([0.0, store._FEW_SLOTS, math.inf]), st.data())
def test_sync_claims_of_some_slots_is_the_full_sync(steps, few, data):
    """Differential: ``sync_claims`` told the only slots whose records may differ (the slots
    whose records do differ, by the rule, plus any others drawn, given as a list that may
    repeat names), with those slots' claims, leaves every record, the order of the claims
    and the stored rows (floats to the bit) as the sync given every claim does.  The
    accountants' claims are put in, ended, charged again and reread from the store in
    random turns first, so their order is not the slots'; the claims synced keep, drop or
    change each record (weight, principal or group), add new ones, in any order; ``few``
    makes the told slots' records found by their places always (inf), as the store
    chooses, or never (0)."""
    kept = store._FEW_SLOTS
    fast, slow = Accountant.load(":memory:"), Accountant.load(":memory:")
    try:
        store._FEW_SLOTS = few
        for k, step in enumerate(steps):
            now = 60.0 * (k + 1)
            for acct in (fast, slow):
                acct.update_priorities(now)
            if step[0] == "add":
                for acct in (fast, slow):
                    acct.add_matches(step[1], now)
            elif step[0] == "remove":
                for acct in (fast, slow):
                    for slot in step[1]:
                        acct.remove_match(slot, now)
            elif step[0] == "full":
                for acct in (fast, slow):
                    acct.sync_claims(step[1], now)
            elif step[0] == "only":
                current = []
                for c in slow.claims():
                    how = data.draw(st.sampled_from(["keep", "drop", "weight", "holder"]))
                    if how == "weight":
                        c.weight = data.draw(st.sampled_from([0.1, 0.7, 1.3, 2.0]))
                    elif how == "holder":
                        c = data.draw(_ONE_CLAIM.map(lambda new, slot=c.slot: replace(new, slot=slot)))
                    if how != "drop":
                        current.append(c)
                current = data.draw(st.permutations(current + data.draw(st.lists(_ONE_CLAIM, max_size=4))))
                seen = {c.slot: c for c in current}
                records = {c.slot: c for c in slow.claims()}
                only = [
                    s
                    for s in {*seen, *records}
                    if s not in seen
                    or s not in records
                    or (seen[s].customer, seen[s].group, seen[s].weight)
                    != (records[s].customer, records[s].group, records[s].weight)
                ] + step[1]
                fast.sync_claims([c for c in current if c.slot in only], now, only)
                slow.sync_claims(current, now)
            else:
                for acct in (fast, slow):
                    acct._load()  # (as a failed transaction or another process's commit does)
            assert _books(fast) == _books(slow)
            assert _stored(fast) == _stored(slow)
    finally:
        store._FEW_SLOTS = kept


def test_add_matches_charges_each_claim_in_turn_in_one_transaction(tmp_path):
    """``add_matches`` is ``add_match`` per claim, in order, committed once: a second claim on
    one slot ends the first (a@d is charged 0 from t=60, b@d 3); the claims start at ``now``
    whatever their record says.  Hand count: b@d holds weight 3 over [60, 120] = 180
    weighted seconds; a@d holds weight 2 over [60, 60] = 0.  A failure inside the block
    leaves nothing of it in the store."""
    path = tmp_path / "acct.db"
    a = Accountant.load(path)
    a.update_priorities(0.0)
    a.update_priorities(60.0)
    a.add_matches([Claim("s1", "a@d", 2.0, start_time=5.0), Claim("s1", "b@d", 3.0, "group_x")], 60.0)
    assert [(c.slot, c.customer, c.weight, c.group, c.start_time) for c in a.claims()] == [
        ("s1", "b@d", 3.0, "group_x", 60.0)
    ]
    a.update_priorities(120.0)
    assert a.get("b@d").weighted_accumulated_usage == pytest.approx(180.0)
    assert a.get("a@d").weighted_accumulated_usage == pytest.approx(0.0)
    assert a.usage("group_x") == 3.0 and a.usage("a@d") == 0.0
    with pytest.raises(AttributeError):
        a.add_matches([Claim("s2", "c@d", 1.0), None], 130.0)  # type: ignore[list-item]
    assert [c.slot for c in a.claims()] == ["s1"] and a.get("c@d") is None
    a.close()
    with Accountant.load(path) as b:
        assert [(c.slot, c.customer) for c in b.claims()] == [("s1", "b@d")]


def test_set_usage_keeps_the_earlier_part_of_the_interval(acct):
    """Changing in-use usage mid-interval charges the old value up to that moment."""
    acct.set_usage("u@d", 10.0, 0.0)
    acct.update_priorities(60.0)
    acct.set_usage("u@d", 0.0, 90.0)
    acct.update_priorities(120.0)
    assert acct.get("u@d").weighted_accumulated_usage == pytest.approx(600 + 300)


def test_usage_times(acct):
    """BeginUsageTime is set once usage accumulates; LastUsageTime at each update with usage."""
    acct.add_match("u@d", "s1", 1.0, 10.0)
    acct.update_priorities(60.0)
    acct.remove_match("s1", 70.0)
    acct.update_priorities(120.0)
    acct.update_priorities(180.0)
    c = acct.get("u@d")
    assert (c.begin_usage_time, c.last_usage_time) == (60.0, 120.0)


def test_clock_going_backwards_changes_nothing(acct):
    """A negative interval only restarts the interval."""
    acct.set_priority("u@d", 10.0)
    acct.update_priorities(100.0)
    before = acct.rup("u@d")
    acct.update_priorities(50.0)
    assert acct.rup("u@d") == before and acct.last_update_time == 50.0


# ---- condor_userprio ----------------------------------------------------------------------


def test_admin_edits(acct):
    """setprio, setfactor, setaccum, resetusage, delete (docs/negotiation.md, editing priorities)."""
    admin(acct, "-setprio", "u@d", "42")
    admin(acct, "setfactor", "u@d", "3")
    admin(acct, "setaccum", "u@d", "7200")
    assert (acct.rup("u@d"), acct.prio_factor("u@d"), acct.eup("u@d")) == (42.0, 3.0, 126.0)
    admin(acct, "resetusage", "u@d", now=500.0)
    c = acct.get("u@d")
    assert c.weighted_accumulated_usage == 0.0 and c.begin_usage_time == 500.0
    acct.set_ceiling("u@d", 10)
    acct.set_floor("u@d", 2)
    assert (acct.get("u@d").ceiling, acct.get("u@d").floor) == (10.0, 2.0)
    admin(acct, "delete", "u@d")
    assert acct.get("u@d") is None and acct.rup("u@d") == 0.5
    with pytest.raises(ValueError):
        admin(acct, "setprio", "u@d")
    with pytest.raises(ValueError):
        admin(acct, "explode", "u@d")


def test_report_rows_and_filters(acct):
    """Rows sorted by EUP; by default only users seen in the last 24 h; -allusers shows all."""
    acct.add_match("busy@d", "s1", 1.0, 0.0)
    acct.set_factor("busy@d", 10)
    acct.add_match("old@d", "s2", 1.0, 0.0)
    acct.update_priorities(3600.0)
    acct.remove_match("s2", 3600.0)
    acct.set_priority("idle@d", 3.0)
    acct.update_priorities(3600.0 + 2 * DAY)
    rows = priority_report(acct)
    assert [r.name for r in rows] == ["busy@d"]
    every = priority_report(acct, all_users=True)
    assert [r.name for r in every] == sorted([r.name for r in every], key=lambda n: acct.eup(n))
    assert {r.name for r in every} == {"busy@d", "old@d", "idle@d"}
    [old] = priority_report(acct, names=["old@d"])
    assert old.time_since_last_usage == pytest.approx(2 * DAY)
    assert old.real_priority == acct.rup("old@d") and old.priority_factor == 1000
    assert old.effective_priority == pytest.approx(old.real_priority * 1000)


# ---- the store ----------------------------------------------------------------------------


def test_state_survives_reopening(tmp_path):
    """Committed records, claims and the clock are read back."""
    path = tmp_path / "acct.db"
    with Accountant.load(path) as a:
        a.update_priorities(0.0)
        a.add_match("u@d", "s1", 2.0, 0.0, group="g", limits="xsw")
        a.set_factor("u@d", 5)
        a.update_priorities(600.0)
        rup = a.rup("u@d")
    with Accountant.load(path) as b:
        assert b.rup("u@d") == rup and b.prio_factor("u@d") == 5.0 and b.last_update_time == 600.0
        assert b.claims() == [Claim("s1", "u@d", 2.0, "g", 0.0, "xsw")]
        assert b.get("g").is_group is True


def test_failed_transaction_is_rolled_back(tmp_path):
    """An exception inside a cycle discards that cycle's changes, in memory and on disk."""
    path = tmp_path / "acct.db"
    a = Accountant.load(path)
    with a.transaction():
        a.update_priorities(0.0)
        a.add_match("u@d", "s1", 1.0, 0.0)
    with pytest.raises(RuntimeError):
        with a.transaction():
            a.update_priorities(60.0)
            a.add_match("v@d", "s2", 1.0, 60.0)
            raise RuntimeError("crash mid-cycle")
    assert a.last_update_time == 0.0 and a.get("v@d") is None and len(a.claims()) == 1
    a.close()
    with Accountant.load(path) as b:
        assert b.last_update_time == 0.0 and [c.slot for c in b.claims()] == ["s1"]


def test_process_killed_mid_cycle_loses_only_that_cycle(tmp_path):
    """A process that dies inside a cycle leaves the previous cycle's commit intact."""
    path = tmp_path / "acct.db"
    script = textwrap.dedent(f"""
        import os
        from matchmaker.accounting.store import Accountant
        a = Accountant.load({str(path)!r})
        with a.transaction():
            a.update_priorities(0.0)
            a.add_match("u@d", "s1", 1.0, 0.0)
        with a.transaction():
            a.update_priorities(60.0)
            a.add_match("v@d", "s2", 1.0, 60.0)
            os._exit(3)
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert run.returncode == 3, run.stderr
    with Accountant.load(path) as a:
        assert a.last_update_time == 0.0 and a.names() == ["u@d"]


def test_corrupt_file_raises_state_error_with_path(tmp_path):
    """A file that is not SQLite is a StateError naming the path."""
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StateError) as info:
        Accountant.load(path)
    assert info.value.file == str(path) and info.value.kind == "state"


def test_foreign_or_wrong_version_database(tmp_path):
    """An SQLite file of another program, or another schema version, is rejected."""
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(StateError, match="not an accountant database"):
        Accountant.load(foreign)
    path = tmp_path / "old.db"
    Accountant.load(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(StateError, match="schema version 99"):
        Accountant.load(path)


def test_unopenable_path(tmp_path):
    """A path in a missing directory is a StateError."""
    with pytest.raises(StateError):
        Accountant.load(tmp_path / "no" / "such" / "dir" / "a.db")


def test_the_store_is_opened_with_the_configured_half_life(tmp_path):
    """PRIORITY_HALFLIFE = 60: a RUP of 10 decays to 10 * 0.5**(60/60) = 5 one minute later."""
    k = Knobs.from_string("PRIORITY_HALFLIFE = 60\n", environ={})
    with open_accountant(":memory:", Settings.from_knobs(k)) as a:
        a.update_priorities(0.0)
        a.set_priority("u@d", 10.0)
        a.update_priorities(60.0)
        assert a.rup("u@d") == pytest.approx(5.0)


# ---- properties ---------------------------------------------------------------------------

rups = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)
usages = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)
halflives = st.floats(min_value=1.0, max_value=1e7, allow_nan=False)
intervals = st.lists(st.floats(min_value=0.001, max_value=1e6, allow_nan=False), min_size=1, max_size=20)


@given(rups, usages, halflives, intervals)
def test_split_intervals_equal_one_interval(rup, usage, halflife, dts):
    """With constant usage ρ ≥ 0, updating over any split of an interval equals one update over
    the whole of it.  The 0.5 floor does not break this: each update is a convex step towards
    ρ, so if ρ ≥ 0.5 the floor never binds, and if ρ < 0.5 a floored intermediate value can
    only lead to the floor again (the unfloored map is increasing and stays below 0.5)."""
    split = rup
    for dt in dts:
        split = updated_priority(split, usage, dt, halflife)
    whole = updated_priority(rup, usage, math.fsum(dts), halflife)
    assert split == pytest.approx(whole, rel=1e-9, abs=1e-9)


@given(
    st.lists(st.tuples(usages, st.floats(min_value=0.0, max_value=1e7, allow_nan=False)), max_size=30), rups, halflives
)
def test_rup_stays_at_least_one_half(steps, rup, halflife):
    """Whatever the usage history, RUP ≥ 0.5, and it lies between the old RUP and the usage."""
    for usage, dt in steps:
        new = updated_priority(rup, usage, dt, halflife)
        assert new >= MIN_PRIORITY
        lo, hi = sorted((max(rup, MIN_PRIORITY), max(usage, MIN_PRIORITY)))
        assert lo * (1 - 1e-12) <= new <= hi * (1 + 1e-12)
        rup = new


@given(rups, st.floats(min_value=1.0, max_value=1e12), st.floats(min_value=1.0, max_value=1e12))
def test_eup_is_monotone_in_factor(rup, f1, f2):
    """A larger factor never gives a better (smaller) EUP."""
    lo, hi = sorted((f1, f2))
    assert effective_priority(rup, lo) <= effective_priority(rup, hi)


@settings(max_examples=50, deadline=None)
@given(
    st.floats(min_value=0.0, max_value=1000.0),
    st.lists(st.floats(min_value=1.0, max_value=5e4), min_size=1, max_size=10),
)
def test_accountant_matches_closed_form(usage, dts):
    """Through the store, constant usage ρ gives RUP(t) = ρ + (0.5 − ρ)·0.5^(t/h) (floored)."""
    a = Accountant.load(":memory:")
    a.update_priorities(0.0)
    a.set_usage("u@d", usage, 0.0)
    now = 0.0
    for dt in dts:
        now += dt
        a.update_priorities(now)
    expected = max(MIN_PRIORITY, usage + (0.5 - usage) * 0.5 ** (now / DAY))
    assert a.rup("u@d") == pytest.approx(expected, rel=1e-9)
    assert a.get("u@d").weighted_accumulated_usage == pytest.approx(usage * now, rel=1e-9, abs=1e-6)
    a.close()


def test_quota_table_is_stored_with_the_transaction(tmp_path):
    """The last cycle's quota table is saved with the cycle's transaction, replaced whole by
    the next one, and discarded with a failed transaction."""
    path = tmp_path / "acct.db"
    acct = Accountant.load(path)
    assert acct.group_quotas() == [] and acct.previous_quotas() is None
    acct.set_group_quotas(
        [
            QuotaRecord("a", quota=5, config_quota=5, position=1),
            QuotaRecord("<none>", quota=0, is_static=False, position=2),
        ]
    )
    acct.close()
    acct = Accountant.load(path)
    assert [(q.name, q.quota, q.is_static) for q in acct.group_quotas()] == [("a", 5, True), ("<none>", 0, False)]
    assert acct.previous_quotas() == {"a": 5.0, "<none>": 0.0}
    with pytest.raises(RuntimeError):
        with acct.transaction():
            acct.set_group_quotas([])
            raise RuntimeError("cycle failed")
    assert acct.previous_quotas() == {"a": 5.0, "<none>": 0.0}
    acct.set_group_quotas([])
    assert acct.previous_quotas() is None
    acct.close()


def test_version_1_database_is_upgraded(tmp_path):
    """A database of schema version 1 (no quota table) is upgraded in place on load."""
    path = tmp_path / "v1.db"
    acct = Accountant.load(path)
    acct.set_priority("u@d", 7.0)
    acct.close()
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE group_quotas")
        conn.execute("UPDATE schema_version SET version = 1")
    acct = Accountant.load(path)
    assert acct.rup("u@d") == 7.0 and acct.group_quotas() == []
    acct.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchone() == (3,)
