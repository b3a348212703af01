"""Candidate selection for one request (docs/negotiation.md, candidate slots): both Requirements,
preemption by machine RANK and by priority, the sort key, the submitter-limit rule and
the memoized evaluation."""

from __future__ import annotations

import random

from hypothesis import given, settings as hsettings, strategies as st

from classad.ad import ClassAd
from classad.evaluate import evaluate_top, new_state
from classad.parser import parse_expr
from classad.values import truthiness
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import MatchPolicy, Settings
from matchmaker.cycle.candidates import NO_PREEMPTION, PRIO_PREEMPTION, RANK_PREEMPTION, permits, sort_key
from matchmaker.cycle.ephemeral import LiveUsage, MatchState, NegotiationAd, StaticPriorities
from matchmaker.cycle.evaluator import J_REQ, S_PREQ, S_REQ, Evaluator, SlotEntry, float32
from matchmaker.cycle.negotiator import negotiate
from matchmaker.pool.ads import make_slots, parse_old_ads, pool_from_ads
from matchmaker.pool.concurrency import parse_limits

ALICE, BOB = "alice@d", "bob@d"


def ads(text: str) -> list[ClassAd]:
    """Old-format ads separated by blank lines."""
    return [ad for ad, _ in parse_old_ads(text)]


def slot(name: str, extra: str = "") -> str:
    return f'Name = "{name}"\nCpus = 1\nMemory = 1024\nRequirements = true\n{extra}\n'


def claimed(name: str, user: str, extra: str = "") -> str:
    return slot(
        name,
        f'State = "Claimed"\nActivity = "Busy"\nRemoteUser = "{user}"\n'
        f'RemoteOwner = "{user}"\nCurrentRank = 0.0\n{extra}',
    )


def jobs(user: str, n: int, extra: str = "", cluster: int = 1) -> str:
    return "\n".join(
        f'ClusterId = {cluster}\nProcId = {p}\nUser = "{user}"\nJobStatus = 1\nRequirements = true\n{extra}\n'
        for p in range(n)
    )


def cycle(slot_text: str, job_text: str, eups: dict | None = None, config: str = "", **kw):
    settings = Settings.from_knobs(Knobs.from_string(config)) if config else Settings.defaults(**kw)
    return negotiate(
        pool_from_ads(ads(slot_text), ads(job_text)),
        settings,
        StaticPriorities(eups or {ALICE: 500.0, BOB: 500.0}),
        0.0,
    )


def reasons(result) -> list[tuple[str, str, str | None]]:
    return [(m.slot, m.reason, m.preempted) for m in result.matches]


# ---- pure pieces -----------------------------------------------------------------------------


def test_permits_rounds_up_once():
    """A submitter with any positive limit may take one slot whatever its weight."""
    assert permits(0.0, 0.2, 8.0)
    assert permits(2.0, 3.0, 1.0)
    assert not permits(2.0, 2.9, 1.0)
    assert not permits(0.0, 0.0, 1.0)


def test_float32_conversion_makes_close_ranks_tie():
    """PRE/POST/PREEMPTION_RANK compare in single precision: 1e8 and 1e8+1 tie."""
    assert float32(1e8) == float32(1e8 + 1)
    assert float32(1e300) == float("inf")
    a = sort_key(1e8 + 1, 0, 0, NO_PREEMPTION, 0, 1)
    b = sort_key(1e8, 0, 0, NO_PREEMPTION, 0, 0)
    assert b < a  # a tie on the rank, so slot order decides


def test_sort_key_state_order():
    """With equal ranks: no preemption before RANK before PRIO preemption."""
    keys = [sort_key(0, 0, 0, s, 0, i) for i, s in enumerate((PRIO_PREEMPTION, NO_PREEMPTION, RANK_PREEMPTION))]
    assert sorted(range(3), key=keys.__getitem__) == [1, 2, 0]


def test_parse_limits():
    """Names lower-cased, amounts default to 1."""
    assert parse_limits("a, B:2,set.Member") == [("a", 1.0), ("b", 2.0), ("set.member", 1.0)]


# ---- requirements and preemption ---------------------------------------------------------------


def test_both_requirements_must_hold():
    """The job's and the slot's Requirements are each evaluated with the other ad as TARGET."""
    slots = (
        slot("s1", 'Requirements = TARGET.Owner == "nobody"')
        + "\n"
        + slot("s2", "Memory = 512")
        + "\n"
        + slot("s3", "Memory = 4096")
    )
    r = cycle(slots, jobs(ALICE, 2, 'Owner = "alice"\nRequirements = TARGET.Memory >= 1024'))
    assert [m.slot for m in r.matches] == ["s3"]
    assert [(x.job, x.reason) for x in r.rejected] == [("1.1", "no match found")]


def test_unclaimed_slot_is_no_preemption():
    r = cycle(slot("s1"), jobs(ALICE, 1))
    assert reasons(r) == [("s1", "no-preemption", None)]


def test_priority_preemption_needs_preemption_requirements():
    """Default PREEMPTION_REQUIREMENTS = False: a slot of another user is never taken for priority."""
    r = cycle(claimed("s1", BOB), jobs(ALICE, 1))
    assert r.matches == []
    assert [x.reason for x in r.rejected] == ["PREEMPTION_REQUIREMENTS == False"]
    r = cycle(claimed("s1", BOB), jobs(ALICE, 1), config="PREEMPTION_REQUIREMENTS = True\n")
    assert reasons(r) == [("s1", "priority", BOB)]


def test_unset_preemption_requirements_means_unrestricted():
    """An empty PREEMPTION_REQUIREMENTS (unset) lets priority preemption happen."""
    r = cycle(claimed("s1", BOB), jobs(ALICE, 1), config="PREEMPTION_REQUIREMENTS =\n")
    assert reasons(r) == [("s1", "priority", BOB)]


def test_rank_preemption_ignores_preemption_requirements():
    """A slot whose RANK prefers the new job is a RANK candidate even with PREEMPTION_REQUIREMENTS False."""
    r = cycle(claimed("s1", BOB, 'Rank = TARGET.Owner == "alice"'), jobs(ALICE, 1, 'Owner = "alice"'))
    assert reasons(r) == [("s1", "rank", BOB)]


def test_own_slot_is_not_a_candidate_unless_rank_prefers():
    r = cycle(claimed("s1", ALICE), jobs(ALICE, 1), config="PREEMPTION_REQUIREMENTS = True\n")
    assert r.matches == []
    r = cycle(claimed("s1", ALICE, "Rank = 5"), jobs(ALICE, 1))
    assert reasons(r) == [("s1", "rank", ALICE)]


def test_machine_rank_must_not_get_worse():
    """Priority preemption needs slot Rank for the new job >= CurrentRank."""
    text = claimed("s1", BOB, "Rank = TARGET.Prio\nCurrentRank = 5")
    r = cycle(text, jobs(ALICE, 1, "Prio = 3"), config="PREEMPTION_REQUIREMENTS = True\n")
    assert r.matches == []
    r = cycle(text, jobs(ALICE, 1, "Prio = 5"), config="PREEMPTION_REQUIREMENTS = True\n")
    assert reasons(r) == [("s1", "priority", BOB)]


def test_no_preemption_wins_a_tie():
    """With the ranks unset and equal, an idle slot beats a RANK and a PRIO candidate."""
    text = claimed("s1", BOB) + "\n" + claimed("s2", BOB, "Rank = 1") + "\n" + slot("s3")
    config = "PREEMPTION_REQUIREMENTS = True\nNEGOTIATOR_PRE_JOB_RANK =\nNEGOTIATOR_POST_JOB_RANK =\n"
    r = cycle(text, jobs(ALICE, 3), config=config, eups={ALICE: 1.0, BOB: 1e9})
    assert reasons(r) == [("s3", "no-preemption", None), ("s2", "rank", BOB), ("s1", "priority", BOB)]


def test_preemption_rank_breaks_ties_among_priority_candidates():
    """PREEMPTION_RANK (here: least run time first) picks which claim to preempt."""
    text = (
        claimed("s1", BOB, "TotalJobRuntime = 500")
        + "\n"
        + claimed("s2", BOB, "TotalJobRuntime = 20")
        + "\n"
        + claimed("s3", BOB, "TotalJobRuntime = 90")
    )
    config = "PREEMPTION_REQUIREMENTS = True\nPREEMPTION_RANK = -TotalJobRuntime\n"
    r = cycle(text, jobs(ALICE, 2), config=config)
    assert [m.slot for m in r.matches] == ["s2", "s3"]


def test_default_pre_job_rank_prefers_idle_slots():
    """The default NEGOTIATOR_PRE_JOB_RANK puts unclaimed slots (no RemoteOwner) first."""
    text = claimed("s1", BOB) + "\n" + slot("s2")
    r = cycle(text, jobs(ALICE, 1), config="PREEMPTION_REQUIREMENTS = True\n")
    assert reasons(r) == [("s2", "no-preemption", None)]


def test_job_rank_orders_candidates():
    """The job's Rank (MY = job, TARGET = slot) is the second key."""
    text = slot("s1", "Memory = 1024") + "\n" + slot("s2", "Memory = 8192") + "\n" + slot("s3", "Memory = 4096")
    config = "NEGOTIATOR_PRE_JOB_RANK =\nNEGOTIATOR_POST_JOB_RANK =\n"
    r = cycle(text, jobs(ALICE, 3, "Rank = TARGET.Memory"), config=config)
    assert [m.slot for m in r.matches] == ["s2", "s3", "s1"]


def test_manual_behaviour_eup_test_for_priority_preemption():
    """MatchPolicy.preemption_needs_better_eup (the manual): a worse EUP never preempts."""
    text = claimed("s1", BOB)
    r = cycle(text, jobs(ALICE, 1), eups={ALICE: 900.0, BOB: 600.0}, preemption_requirements=parse_expr("true"))
    assert reasons(r) == [("s1", "priority", BOB)]  # the code: no EUP comparison
    r = cycle(
        text,
        jobs(ALICE, 1),
        eups={ALICE: 900.0, BOB: 600.0},
        preemption_requirements=parse_expr("true"),
        preemption_needs_better_eup=True,
    )
    assert r.matches == []


def test_manual_behaviour_skip_claimed_idle():
    """MatchPolicy.skip_claimed_idle (the manual): Claimed/Idle slots are never candidates."""
    text = claimed("s1", BOB, 'Activity = "Idle"')
    r = cycle(text, jobs(ALICE, 1), preemption_requirements=parse_expr("true"))
    assert len(r.matches) == 1
    r = cycle(text, jobs(ALICE, 1), preemption_requirements=parse_expr("true"), skip_claimed_idle=True)
    assert r.matches == []


def test_submitter_limit_rejection_reason():
    """A request turned away only by the submitter limit says so (slices 1.5 of 3 slots)."""
    text = "\n".join(slot(f"s{i}") for i in range(3))
    r = cycle(text, jobs(ALICE, 4) + "\n" + jobs(BOB, 4, cluster=2))
    assert len(r.matches) == 2
    assert [(x.job, x.reason) for x in r.rejected] == [
        ("1.1", "submitter limit exceeded"),
        ("2.1", "submitter limit exceeded"),
    ]


def test_past_the_limit_only_rank_preemption_is_tried():
    """In spin 1 a submitter at its limit may still take slots by machine RANK only; an idle
    slot is then no candidate at all ("no match found")."""
    text = (
        "\n".join(slot(f"s{i}") for i in range(4))
        + "\n"
        + claimed("s8", BOB, "Rank = 1")
        + "\n"
        + claimed("s9", BOB, "Rank = 1")
    )
    # Pool 6, equal EUPs: alice's slice is 3, bob's 3 - 2 in use = 1.
    r = cycle(text, jobs(ALICE, 5) + "\n" + jobs(BOB, 4, cluster=2), config="NEGOTIATOR_PRE_JOB_RANK =\n")
    assert [(m.job, m.slot, m.reason) for m in r.matches] == [
        ("1.0", "s0", "no-preemption"),
        ("1.1", "s1", "no-preemption"),
        ("1.2", "s2", "no-preemption"),
        ("1.3", "s8", "rank"),
        ("1.4", "s9", "rank"),
        ("2.0", "s3", "no-preemption"),
    ]


# ---- memoized evaluation -----------------------------------------------------------------------

_SLOT_REQS = [
    "TARGET.RequestMemory <= MY.Memory",
    "Memory > 2000 || TARGET.Small =?= true",
    "START && TARGET.RequestCpus <= Cpus",
    "RequestMemory * 2 <= Memory",
    "Undefinedthing",
]
_JOB_REQS = [
    "TARGET.Memory >= RequestMemory",
    'TARGET.Cpus >= MY.RequestCpus && Arch == "X"',
    "ifThenElse(Small, TARGET.Memory > 100, TARGET.Memory > 3000)",
    "MY.RequestCpus < 3",
]


@hsettings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_SLOT_REQS),
            st.sampled_from([512, 1024, 4096]),
            st.integers(1, 4),
            st.sampled_from(["X", "Y"]),
            st.booleans(),
        ),
        min_size=1,
        max_size=6,
    ),
    st.lists(
        st.tuples(st.sampled_from(_JOB_REQS), st.sampled_from([256, 1024, 3000]), st.integers(1, 4), st.booleans()),
        min_size=1,
        max_size=6,
    ),
)
def test_memoized_requirements_agree_with_direct_evaluation(slot_specs, job_specs):
    """Results reused from the memo equal a fresh evaluation of each pair."""
    slot_ads = []
    for i, (req, mem, cpus, arch, start) in enumerate(slot_specs):
        ad = ClassAd({"Name": f"s{i}", "Memory": mem, "Cpus": cpus, "Arch": arch, "START": start})
        ad.set_node("Requirements", parse_expr(req))
        slot_ads.append(ad)
    entries = [SlotEntry(s, NegotiationAd(s.ad), None) for s in make_slots([(a, "x") for a in slot_ads])]
    ev = Evaluator(MatchState(LiveUsage(), 0.0), MatchPolicy())
    for req_text, mem, cpus, small in job_specs:
        job = ClassAd({"RequestMemory": mem, "RequestCpus": cpus, "Small": small})
        job.set_node("Requirements", parse_expr(req_text))
        req = NegotiationAd(job)
        ev.use_request(req)
        for e in entries:
            want_job = truthiness(job.evaluate("Requirements", state=new_state(job, e.slot.ad))) is True
            want_slot = truthiness(e.slot.ad.evaluate("Requirements", state=new_state(e.slot.ad, job))) is True
            assert ev.value(e, J_REQ) is want_job
            assert ev.value(e, S_REQ) is want_slot


def test_volatile_values_are_never_memoized():
    """An expression calling ResourcesInUseByUser is evaluated every time."""
    usage = LiveUsage({BOB: 3.0})
    ad = ClassAd({"Name": "s", "Cpus": 1})
    ad.set_node("Requirements", parse_expr('ResourcesInUseByUser("bob@d") > 2'))
    (s,) = make_slots([(ad, "x")])
    e = SlotEntry(s, NegotiationAd(ad), None)
    ev = Evaluator(MatchState(usage, 0.0), MatchPolicy())
    ev.use_request(NegotiationAd(ClassAd({"Requirements": True})))
    assert ev.value(e, S_REQ) is True
    usage.remove(BOB, 1.0)
    assert ev.value(e, S_REQ) is False


class _CountingRandom(random.Random):
    """A seeded source that counts its draws (``random(n)`` draws through ``randrange``)."""

    draws = 0

    def randrange(self, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        self.draws += 1
        return super().randrange(*args, **kwargs)


def test_random_draws_again_for_every_evaluation():
    """``random()`` gives a fresh number on every use (docs/reliability.md), so an
    expression that calls it is never answered from the memo: two slots holding the
    same values and one slot asked twice make three evaluations of ``random(1000) >= 0``,
    hence three draws (by hand: one per evaluation, none remembered)."""
    slot_ads = []
    for name in ("s1", "s2"):
        ad = ClassAd({"Name": name, "Cpus": 1})
        ad.set_node("Requirements", parse_expr("random(1000) >= 0"))
        slot_ads.append(ad)
    e1, e2 = (SlotEntry(s, NegotiationAd(s.ad), None) for s in make_slots([(a, "x") for a in slot_ads]))
    ev = Evaluator(MatchState(LiveUsage(), 0.0), MatchPolicy())
    source = _CountingRandom(3)
    ev.state.random = source
    ev.use_request(NegotiationAd(ClassAd({"Requirements": True})))
    assert [ev.value(e1, S_REQ), ev.value(e2, S_REQ), ev.value(e1, S_REQ)] == [True, True, True]
    assert source.draws == 3


def test_slot_classes_do_not_change_results():
    """Slots that differ only in attributes no test reads share evaluations, yet each is matched."""
    text = "\n".join(slot(f"s{i}", f"SlotID = {i}") for i in range(1, 6))
    r = cycle(text, jobs(ALICE, 5, "Requirements = TARGET.Memory >= 1024"))
    assert sorted(m.slot for m in r.matches) == [f"s{i}" for i in range(1, 6)]


def test_negotiation_ads_log_every_attribute_read():
    """The memo is keyed on what an evaluation read, so every lookup must be logged --
    also the evaluator's direct read of an ad's own attribute table (its fast path)."""
    ad = NegotiationAd(ClassAd({"RemoteUserPrio": 5e6, "Other": 1}))
    st = MatchState(None, 0.0)
    st.my, st.target = ad, ad
    ad.reads = []
    assert evaluate_top(parse_expr("RemoteUserPrio > 1000 && Missing =?= undefined"), ad, st) is True
    reads, ad.reads = ad.reads, None
    assert "remoteuserprio" in reads and "missing" in reads and "other" not in reads


def test_memo_tells_slots_apart_by_the_values_read():
    """PREEMPTION_REQUIREMENTS read from two slots with different RemoteUserPrio gives two
    answers, however the first one was cached."""
    policy = MatchPolicy(preemption_requirements=parse_expr("RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2"))
    ev = Evaluator(MatchState(LiveUsage(), 0.0), policy)
    entries = []
    for name, prio in (("s1", 500.0), ("s2", 5e6)):
        ad = ClassAd({"Name": name, "Cpus": 1, "Requirements": True, "RemoteUserPrio": prio})
        (s,) = make_slots([(ad, name)])
        entries.append(SlotEntry(s, NegotiationAd(ad), "x@d"))
    ev.use_request(NegotiationAd(ClassAd({"SubmitterUserPrio": 500.0})))
    assert [ev.value(e, S_PREQ) for e in entries] == [False, True]
