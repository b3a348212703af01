"""The worked examples of docs/negotiation.md (worked examples) that need no group quotas (7.1-7.5, 7.11, 7.12).

Expected numbers are the spec's.  Unless an example says otherwise: one schedd, each
submitter one autocluster of identical one-core jobs (Requirements true), unclaimed
static slots of weight 1, default knobs, EUPs set directly.
"""

from __future__ import annotations

from collections import Counter

import pytest

from classad.ad import ClassAd
from classad.parser import parse_expr
from matchmaker.accounting.store import Accountant
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle.candidates import sort_key
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.cycle.pie import pie_shares
from matchmaker.pool.ads import pool_from_ads

A, B, C = "A@d", "B@d", "C@d"
DAY = 86400.0


def slot_ads(n: int, claimed: dict[int, str] | None = None) -> list[ClassAd]:
    """``n`` one-core slots; ``claimed`` maps slot number to the user running there."""
    out = []
    for i in range(1, n + 1):
        ad = ClassAd({"Name": f"slot{i}@host", "SlotID": i, "Cpus": 1, "Memory": 1024, "Requirements": True})
        if claimed and i in claimed:
            ad.update(
                {
                    "State": "Claimed",
                    "Activity": "Busy",
                    "RemoteUser": claimed[i],
                    "RemoteOwner": claimed[i],
                    "CurrentRank": 0.0,
                }
            )
        out.append(ad)
    return out


def job_ads(counts: dict[str, int], **extra: object) -> list[ClassAd]:
    """Idle jobs: ``counts[user]`` of them per user, one cluster per user."""
    out = []
    for cluster, (user, n) in enumerate(counts.items(), 1):
        for proc in range(n):
            ad = ClassAd({"ClusterId": cluster, "ProcId": proc, "User": user, "JobStatus": 1, "Requirements": True})
            ad.update(extra)
            out.append(ad)
    return out


def per_user(result) -> dict[str, int]:
    return dict(Counter(m.submitter for m in result.matches))


def run(slots, jobs, eups, now=0.0, settings=None, **kw):
    return negotiate(pool_from_ads(slots, jobs), settings or Settings.defaults(), StaticPriorities(eups), now, **kw)


# ---- 7.1 - 7.3: the pie -------------------------------------------------------------------------


def test_7_1_exact_pie_70_slots():
    """EUPs 5/10/20 share 70 slots 4:2:1 in one spin."""
    r = run(slot_ads(70), job_ads({A: 100, B: 100, C: 100}), {A: 5, B: 10, C: 20})
    assert per_user(r) == {A: 40, B: 20, C: 10}
    assert [round(s.limit, 6) for s in r.submitters] == [40, 20, 10]
    assert r.spins == 1


def test_7_2_crumbs_leave_one_slot_idle():
    """Limits 57.143/28.571/14.286: 57/28/14 in spin 1; spin 2 skips slices below the min weight."""
    r = run(slot_ads(100), job_ads({A: 100, B: 100, C: 100}), {A: 5, B: 10, C: 20})
    assert per_user(r) == {A: 57, B: 28, C: 14}
    assert [round(s.limit, 3) for s in r.submitters] == [57.143, 28.571, 14.286]
    assert r.spins == 2
    assert len(r.matches) == 99


def test_7_2_next_cycle_leftover_goes_first_in_eup_order():
    """With usage 57/28/14 and the same EUPs, A's recomputed limit 0.143 > 0 takes the idle
    slot by the round-up-once rule."""
    owners = {i: A for i in range(1, 58)} | {i: B for i in range(58, 86)} | {i: C for i in range(86, 100)}
    r = run(slot_ads(100, owners), job_ads({A: 100, B: 100, C: 100}), {A: 5, B: 10, C: 20})
    assert [(m.submitter, m.slot, m.reason) for m in r.matches] == [(A, "slot100@host", "no-preemption")]


def test_7_2_ten_slots_three_equal_eups():
    """Three equal EUPs on 10 slots: 3/3/3 and one idle slot."""
    r = run(slot_ads(10), job_ads({A: 10, B: 10, C: 10}), {A: 7, B: 7, C: 7})
    assert per_user(r) == {A: 3, B: 3, C: 3}


def test_7_3_redistribution_is_order_dependent():
    """A (EUP 5) has 10 jobs: A 10, B 66, C 24 (not the ideal 60/30 split of 90)."""
    r = run(slot_ads(100), job_ads({A: 10, B: 100, C: 100}), {A: 5, B: 10, C: 20})
    assert per_user(r) == {A: 10, B: 66, C: 24}


# ---- 7.4, 7.5: priorities feeding the pie -----------------------------------------------------


def test_7_4_priority_factors_split_two_to_one():
    """RUP 10 for both, factors 1000 and 2000: EUPs 10000/20000 give 2/3 and 1/3 of the pie."""
    acct = Accountant.load(":memory:")
    for name, factor in ((A, 1000), (B, 2000)):
        acct.set_priority(name, 10)
        acct.set_factor(name, factor)
    assert (acct.eup(A), acct.eup(B)) == (10000, 20000)
    r = run(slot_ads(30), job_ads({A: 30, B: 30}), {A: acct.eup(A), B: acct.eup(B)})
    assert per_user(r) == {A: 20, B: 10}


def test_7_4_nice_user_against_new_user():
    """Nice user (factor 1e10, RUP 0.5: EUP 5e9) vs a new user (EUP 500): shares 1e7 : 1."""
    shares = pie_shares({"nice-user.x@d": 0.5 * 1e10, A: 500.0})
    assert shares[A] / shares["nice-user.x@d"] == pytest.approx(1e7)


def test_7_5_rup_dynamics_feed_the_manual_scenario():
    """100 cores for 48 h take A's RUP from 0.5 to 75.125; new user B (0.5) then deserves
    150.25 times as much, and A's slice of 100 cores is 0.66 cores."""
    acct = Accountant.load(":memory:", halflife=DAY)
    acct.set_factor(A, 1.0)
    acct.set_factor(B, 1.0)
    acct.update_priorities(0.0)
    acct.set_usage(A, 100.0, 0.0)
    acct.update_priorities(DAY)
    assert acct.rup(A) == pytest.approx(50.25)
    acct.update_priorities(2 * DAY)
    assert acct.rup(A) == pytest.approx(75.125)
    shares = pie_shares({A: acct.eup(A), B: acct.eup(B)})
    assert shares[B] / shares[A] == pytest.approx(150.25)
    assert 100 * shares[A] == pytest.approx(0.66, abs=0.005)
    # In the cycle itself A's 0.66 rounds up once: it gets one core, B the other 99.
    r = run(slot_ads(100), job_ads({A: 100, B: 100}), {A: acct.eup(A), B: acct.eup(B)})
    assert per_user(r) == {A: 1, B: 99}
    assert r.submitters[1].name == A and r.submitters[1].limit == pytest.approx(0.66, abs=0.005)


def test_7_5_idle_rup_halves_each_day():
    """RUP 10 with no usage: 5 after one day, 2.5 after two."""
    acct = Accountant.load(":memory:", halflife=DAY)
    acct.update_priorities(0.0)
    acct.set_priority(A, 10.0)
    acct.update_priorities(DAY)
    assert acct.rup(A) == pytest.approx(5.0)
    acct.update_priorities(2 * DAY)
    assert acct.rup(A) == pytest.approx(2.5)


# ---- 7.11: candidate sort --------------------------------------------------------------------

TABLE = [
    ("slot1", 100, 1, 10),
    ("slot2", 100, 2, 20),
    ("slot3", 100, 2, 30),
    ("slot4", 0, 1, 40),
    ("slot5", 200, 1, 50),
]


def test_7_11_sort_key_orders_the_manual_table():
    """Sorted by PRE_JOB_RANK, job Rank, POST_JOB_RANK: slot5, slot3, slot2, slot1, slot4."""
    from matchmaker.cycle.candidates import NO_PREEMPTION

    keyed = sorted(
        (sort_key(pre, rank, post, NO_PREEMPTION, -3.4e38, i), name) for i, (name, pre, rank, post) in enumerate(TABLE)
    )
    assert [name for _, name in keyed] == ["slot5", "slot3", "slot2", "slot1", "slot4"]


def test_7_11_three_matches_go_to_slot5_slot3_slot2():
    """One request for three jobs against the five slots: the schedd gets slot5, slot3, slot2."""
    slots = []
    for i, (name, pre, rank, post) in enumerate(TABLE, 1):
        slots.append(
            ClassAd(
                {
                    "Name": name,
                    "SlotID": i,
                    "Cpus": 1,
                    "Requirements": True,
                    "PreValue": pre,
                    "JobRankValue": rank,
                    "PostValue": post,
                }
            )
        )
    jobs = job_ads({A: 3})
    for ad in jobs:
        ad.set_node("Rank", parse_expr("TARGET.JobRankValue"))
    knobs = Knobs.from_string("NEGOTIATOR_PRE_JOB_RANK = MY.PreValue\nNEGOTIATOR_POST_JOB_RANK = MY.PostValue\n")
    r = run(slots, jobs, {A: 1.0}, settings=Settings.from_knobs(knobs))
    assert [m.slot for m in r.matches] == ["slot5", "slot3", "slot2"]


# ---- 7.12: concurrency limits ----------------------------------------------------------------


def test_7_12_concurrency_limit_caps_an_autocluster():
    """XSW_LIMIT = 3, 10 free slots, 5 jobs using XSW: 3 match, the 4th is rejected with
    "concurrency limit xsw reached" and the 5th is skipped with its autocluster."""
    settings = Settings.from_knobs(Knobs.from_string("XSW_LIMIT = 3\n"))
    r = run(slot_ads(10), job_ads({A: 5}, ConcurrencyLimits="XSW"), {A: 500.0}, settings=settings)
    assert [m.job for m in r.matches] == ["1.0", "1.1", "1.2"]
    assert [(x.job, x.reason) for x in r.rejected] == [("1.3", "concurrency limit xsw reached")]


def test_7_12_default_capacities_by_prefix():
    """CONCURRENCY_LIMIT_DEFAULT = 5, CONCURRENCY_LIMIT_DEFAULT_LARGE = 100:
    LARGE.SWLICENSE has capacity 100, OTHER.LICENSE 5."""
    knobs = Knobs.from_string("CONCURRENCY_LIMIT_DEFAULT = 5\nCONCURRENCY_LIMIT_DEFAULT_LARGE = 100\n")
    settings = Settings.from_knobs(knobs)
    assert settings.concurrency_capacity("large.swlicense") == 100
    assert settings.concurrency_capacity("other.license") == 5
    r = run(slot_ads(20), job_ads({A: 8}, ConcurrencyLimits="OTHER.LICENSE"), {A: 500.0}, settings=settings)
    assert len(r.matches) == 5
    r = run(slot_ads(20), job_ads({A: 8}, ConcurrencyLimits="LARGE.SWLICENSE"), {A: 500.0}, settings=settings)
    assert len(r.matches) == 8


def test_7_12_amounts_consume_several_units():
    """FILESERVER:3 consumes 3 units: with FILESERVER_LIMIT = 7 only two such jobs fit."""
    settings = Settings.from_knobs(Knobs.from_string("FILESERVER_LIMIT = 7\n"))
    r = run(slot_ads(10), job_ads({A: 4}, ConcurrencyLimits="FILESERVER:3"), {A: 500.0}, settings=settings)
    assert len(r.matches) == 2
    assert r.rejected[0].reason == "concurrency limit fileserver reached"


def test_7_12_claimed_slots_count_against_limits():
    """Limits held by running claims (the slot's ConcurrencyLimits) are counted first."""
    slots = slot_ads(6, {1: B, 2: B})
    for ad in slots[:2]:
        ad["ConcurrencyLimits"] = "xsw"
    settings = Settings.from_knobs(Knobs.from_string("XSW_LIMIT = 3\n"))
    r = run(slots, job_ads({A: 5}, ConcurrencyLimits="XSW"), {A: 500.0, B: 500.0}, settings=settings)
    assert len(r.matches) == 1
