"""Ephemeral attributes (docs/negotiation.md, ephemeral attributes): what requests and slots carry while
negotiated, the live ResourcesInUseBy* functions, and that the ads read are never changed."""

from __future__ import annotations

from hypothesis import given, settings as hsettings, strategies as st

from classad.ad import ClassAd
from classad.parser import parse_expr
from classad.values import ERROR
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import (
    LiveUsage,
    MatchState,
    NegotiationAd,
    StaticPriorities,
    annotate_request,
    annotate_slot,
    refresh_request,
)
from matchmaker.cycle.negotiator import negotiate
from matchmaker.pool.ads import make_slots, parse_old_ads, pool_from_ads

ALICE, GUEST = "alice@d", "guest@v"


def ads(text: str) -> list[ClassAd]:
    return [ad for ad, _ in parse_old_ads(text)]


def slots_text(n_free: int, guest_slots: int) -> str:
    out = [f'Name = "free{i}"\nCpus = 1\nRequirements = true\n' for i in range(n_free)]
    out += [
        f'Name = "g{i}"\nCpus = 1\nRequirements = true\nState = "Claimed"\nRemoteUser = "{GUEST}"\n'
        f'RemoteOwner = "{GUEST}"\nCurrentRank = 0.0\n'
        for i in range(guest_slots)
    ]
    return "\n".join(out)


def jobs_text(user: str, n: int, extra: str = "") -> str:
    return "\n".join(
        f'ClusterId = 1\nProcId = {p}\nUser = "{user}"\nJobStatus = 1\nRequirements = true\n{extra}\n' for p in range(n)
    )


def run(slot_text: str, job_text: str, config: str, eups=None):
    pool = pool_from_ads(ads(slot_text), ads(job_text))
    ads_read = [s.ad for s in pool.slots] + [j.ad for j in pool.jobs]
    before = [{k: repr(v) for k, v in ad.items()} for ad in ads_read]
    result = negotiate(
        pool, Settings.from_knobs(Knobs.from_string(config)), StaticPriorities(eups or {ALICE: 500.0, GUEST: 5e6}), 0.0
    )
    after = [{k: repr(v) for k, v in ad.items()} for ad in ads_read]
    assert before == after, "negotiation modified an ad read from a file"
    return result


# ---- requests -----------------------------------------------------------------------------------


def test_request_copy_carries_submitter_attributes():
    """SubmitterUserPrio, SubmittorPrio, SubmitterUserResourcesInUse, SubmitterNegotiatingGroup,
    SubmitterAutoregroup; the job ad itself is unchanged."""
    job = ClassAd({"ClusterId": 1, "Requirements": True})
    req = annotate_request(job, eup=750.0, usage=3.0)
    assert req.eval("SubmitterUserPrio") == 750.0 and req.eval("SubmittorPrio") == 750.0
    assert req.eval("SubmitterUserResourcesInUse") == 3.0
    assert req.eval("SubmitterNegotiatingGroup") == "<none>"
    assert req.eval("SubmitterAutoregroup") is False
    assert "SubmitterGroup" not in req
    assert "SubmitterUserPrio" not in job


def test_request_copy_with_group_attributes():
    """With groups the request also carries SubmitterGroup, its usage and quota."""
    req = annotate_request(
        ClassAd(), eup=1.0, usage=0.0, negotiating_group="g", group="g", group_usage=4.0, group_quota=10.0
    )
    assert (
        req.eval("SubmitterGroup"),
        req.eval("SubmitterGroupResourcesInUse"),
        req.eval("SubmitterGroupQuota"),
        req.eval("SubmitterNegotiatingGroup"),
    ) == ("g", 4.0, 10.0, "g")


_SUBMITTER_NAMES = (
    "SubmitterNegotiatingGroup",
    "SubmitterAutoregroup",
    "SubmittorPrio",
    "SubmitterUserPrio",
    "SubmitterUserResourcesInUse",
    "SubmitterGroup",
    "SubmitterGroupResourcesInUse",
    "SubmitterGroupQuota",
)


def _by_set_node(job: ClassAd, eup, usage, negotiating_group, autoregroup, group, group_usage, group_quota):
    """The request copy as docs/negotiation.md describes it, written name by name through
    ``ClassAd.set_node`` (which keeps a spelling the job ad already has)."""
    req = NegotiationAd(job)
    req.set_node("SubmitterNegotiatingGroup", parse_expr(repr(negotiating_group or "<none>").replace("'", '"')))
    req.set_node("SubmitterAutoregroup", parse_expr("true" if autoregroup else "false"))
    req.set_node("SubmittorPrio", parse_expr(repr(float(eup))))
    req.set_node("SubmitterUserPrio", parse_expr(repr(float(eup))))
    req.set_node("SubmitterUserResourcesInUse", parse_expr(repr(float(usage))))
    if group is not None:
        req.set_node("SubmitterGroup", parse_expr(f'"{group}"'))
        req.set_node("SubmitterGroupResourcesInUse", parse_expr(repr(float(group_usage or 0.0))))
        if group_quota is not None:
            req.set_node("SubmitterGroupQuota", parse_expr(repr(float(group_quota))))
    return req


def _written(ad: ClassAd) -> list:
    """Each attribute of ``ad`` in order: its name as written and its value."""
    return [(name, ad.eval(name)) for name in ad.keys()]


_numbers = st.floats(min_value=0.0, max_value=1e6, allow_nan=False).map(lambda x: round(x, 3))


@hsettings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(_SUBMITTER_NAMES), unique=True, max_size=4),
    st.booleans(),
    _numbers,
    _numbers,
    st.sampled_from([None, "g", "h.sub"]),
    st.booleans(),
    st.sampled_from([None, "g", "h.sub"]),
    st.one_of(st.none(), _numbers),
    st.one_of(st.none(), _numbers),
    st.lists(_numbers, max_size=3),
)
def test_request_copies_are_those_set_node_writes(
    held, compacted, eup, usage, negotiating_group, autoregroup, group, group_usage, group_quota, refreshes
):
    """The request copy (names, spellings, order and values), and the same copy after each
    usage refresh, are those written name by name through ``set_node``, whether or not the
    job ad already holds some of the names (in other spellings), compacted or not."""
    job = ClassAd({"ClusterId": 1, "Requirements": True})
    for name in held:  # an existing attribute keeps its spelling
        job.set_node(name.upper() if len(name) % 2 else name.lower(), parse_expr("17"))
    if compacted:
        job.compact()
    args = (eup, usage, negotiating_group, autoregroup, group, group_usage, group_quota)
    req = annotate_request(
        job,
        eup=eup,
        usage=usage,
        negotiating_group=negotiating_group,
        autoregroup=autoregroup,
        group=group,
        group_usage=group_usage,
        group_quota=group_quota,
    )
    want = _by_set_node(job, *args)
    assert _written(req) == _written(want)
    recording = annotate_request(job, eup=eup, usage=usage, group=group, group_usage=group_usage)
    recording.reads = []  # a copy recording its reads is refreshed through set_node (and records them)
    for amount in refreshes:
        group_amount = amount * 2 if group_usage is not None else None
        refresh_request(req, amount, group_amount)
        want.set_node("SubmitterUserResourcesInUse", parse_expr(repr(float(amount))))
        if group_amount is not None and want.get_node("SubmitterGroup") is not None:
            want.set_node("SubmitterGroupResourcesInUse", parse_expr(repr(float(group_amount))))
        assert _written(req) == _written(want)
        refresh_request(recording, amount, group_amount)
        assert "submitteruserresourcesinuse" in recording.reads
    assert "SubmitterUserPrio" not in job or job.eval("SubmitterUserPrio") == 17


# ---- slots ----------------------------------------------------------------------------------------


def _slot(text: str):
    (s,) = make_slots(parse_old_ads(text))
    return s


def test_slot_copy_carries_remote_attributes():
    """RemoteUserPrio is the EUP of the running user; RemoteUserResourcesInUse is an expression."""
    s = _slot('Name = "s"\nRemoteUser = "bob@d"\nAccountingGroup = "grp.bob@d"\nPreemptingRank = 7\nCurrentRank = 1\n')
    copy = annotate_slot(s, now=0.0, eup_of={"grp.bob@d": 42.0}.get, floor_of=lambda _u: 2.0)
    assert copy.eval("RemoteUserPrio") == 42.0  # AccountingGroup wins over RemoteUser
    assert copy.eval("RemoteUserFloor") == 2.0
    assert str(copy.lookup("RemoteUserResourcesInUse")) == 'ResourcesInUseByUser("grp.bob@d")'
    assert copy.eval("CurrentRank") == 7  # PreemptingRank replaces CurrentRank
    assert "RemoteUserPrio" not in s.ad and s.ad.eval("CurrentRank") == 1


def test_no_remote_attributes_without_preemption():
    s = _slot('Name = "s"\nRemoteUser = "bob@d"\n')
    copy = annotate_slot(s, now=0.0, eup_of=lambda _u: 1.0, consider_preemption=False)
    assert "RemoteUserPrio" not in copy


def test_cross_slot_prios():
    """NEGOTIATOR_CROSS_SLOT_PRIOS adds slot<N>_RemoteUserPrio from slot<N>_RemoteUser."""
    s = _slot('Name = "s"\nTotalSlots = 3\nslot1_RemoteUser = "a@d"\nslot3_RemoteUser = "c@d"\n')
    copy = annotate_slot(s, now=0.0, eup_of={"a@d": 1.0, "c@d": 3.0}.get, cross_slot_prios=True)
    assert copy.eval("slot1_RemoteUserPrio") == 1.0 and copy.eval("slot3_RemoteUserPrio") == 3.0
    assert "slot2_RemoteUserPrio" not in copy


def test_negotiator_requirements_replace_requirements():
    s = _slot('Name = "s"\nRequirements = false\nNegotiatorRequirements = true\n')
    assert annotate_slot(s, now=0.0, eup_of=lambda _u: 1.0).eval("Requirements") is True


# ---- the live functions ---------------------------------------------------------------------------


def test_resources_in_use_functions_need_a_negotiation():
    """Outside a cycle (no usage in the evaluation state) the functions give Error."""
    ad = ClassAd()
    ad.set_node("x", parse_expr('ResourcesInUseByUser("a@d")'))
    assert ad.evaluate("x") is ERROR
    state = MatchState(LiveUsage({"a@d": 2.5}), 0.0)
    assert ad.evaluate("x", state=state) == 2.5
    ad.set_node("y", parse_expr("ResourcesInUseByUser(3)"))
    assert ad.evaluate("y", state=state) is ERROR
    ad.set_node("z", parse_expr('ResourcesInUseByUsersGroup("a@d")'))
    assert ad.evaluate("z", state=state) == 2.5  # no groups: everyone is in <none>


def test_remote_usage_is_read_live_when_not_stable():
    """PREEMPTION_REQUIREMENTS on RemoteUserResourcesInUse: with the _STABLE knob false the
    value is re-read, so alice stops preempting once guest is down to 2 slots."""
    config = "PREEMPTION_REQUIREMENTS = RemoteUserResourcesInUse > 2\nPREEMPTION_REQUIREMENTS_STABLE = false\n"
    r = run(slots_text(0, 4), jobs_text(ALICE, 3), config)
    assert [(m.reason, m.preempted) for m in r.matches] == [("priority", GUEST)] * 2
    assert [x.reason for x in r.rejected] == ["PREEMPTION_REQUIREMENTS == False"]


def test_stable_preemption_requirements_reuse_the_match_list():
    """With PREEMPTION_REQUIREMENTS_STABLE (the default) the list built for the autocluster is
    reused as HTCondor does, so the stale value lets alice preempt a third slot."""
    config = "PREEMPTION_REQUIREMENTS = RemoteUserResourcesInUse > 2\n"
    r = run(slots_text(0, 4), jobs_text(ALICE, 3), config)
    assert len(r.matches) == 3


def test_submitter_usage_grows_during_the_cycle():
    """SubmitterUserResourcesInUse is refreshed before each match; without match-list caching a
    slot requirement on it stops alice at 2 slots."""
    slots = "\n".join(
        f'Name = "s{i}"\nCpus = 1\nRequirements = TARGET.SubmitterUserResourcesInUse < 2\n' for i in range(5)
    )
    r = run(slots, jobs_text(ALICE, 5), "NEGOTIATOR_MATCHLIST_CACHING = false\n")
    assert len(r.matches) == 2
    assert r.rejected[0].reason == "no match found"


def test_priority_margin_uses_both_prios():
    """The UWCS-style margin RemoteUserPrio > SubmitterUserPrio * 1.2."""
    config = "PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2\n"
    r = run(slots_text(0, 1), jobs_text(ALICE, 1), config, eups={ALICE: 500.0, GUEST: 601.0})
    assert [m.reason for m in r.matches] == ["priority"]
    r = run(slots_text(0, 1), jobs_text(ALICE, 1), config, eups={ALICE: 500.0, GUEST: 599.0})
    assert r.matches == []


def test_preemption_moves_usage_between_users():
    """Usage is charged at once: the preempted user loses the slot's weight, the new one gains it."""
    config = "PREEMPTION_REQUIREMENTS = True\n"
    r = run(slots_text(0, 3), jobs_text(ALICE, 2), config)
    assert r.usage == {GUEST: 1.0, ALICE: 2.0}


def test_state_has_fixed_clock():
    """Evaluation inside the matchmaker reads the cycle's time, never the wall clock."""
    ad = ClassAd()
    ad.set_node("t", parse_expr("time()"))
    assert ad.evaluate("t", state=MatchState(None, 1234.0)) == 1234


def test_group_attributes_in_requests():
    """With group quotas a request carries SubmitterGroup, SubmitterGroupQuota (this round's
    quota) and, in the autoregroup pass of the root, SubmitterAutoregroup = true."""
    config = (
        "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 1\nGROUP_QUOTA_b = 1\nGROUP_AUTOREGROUP = TRUE\n"
        "NEGOTIATOR_CONSIDER_PREEMPTION = false\nNEGOTIATOR_USE_SLOT_WEIGHTS = false\n"
    )
    slots = "\n".join(
        f'Name = "s{i}"\nCpus = 1\nRequirements = TARGET.SubmitterAutoregroup =!= true && '
        f"TARGET.SubmitterGroupQuota == 1 && TARGET.SubmitterGroup == TARGET.SubmitterNegotiatingGroup\n"
        for i in range(4)
    )
    jobs = "\n".join(
        f'ClusterId = {c}\nProcId = {p}\nUser = "u@d"\nAccountingGroup = "{g}.u"\nJobStatus = 1\nRequirements = true\n'
        for c, g in ((1, "a"), (2, "b"))
        for p in range(3)
    )
    r = run(slots, jobs, config, eups={})
    assert sorted(m.submitter for m in r.matches) == ["a.u@d", "b.u@d"]


def test_a_remote_attribute_the_slot_holds_keeps_the_slot_s_spelling():
    """A slot ad that already holds ``REMOTEUSERPRIO`` (as a startd may publish it) gets
    the cycle's value under its own spelling, whether its storage is a layout shared with
    other ads (compacted) or its own; the names it lacks get the negotiator's spelling.
    Two copies made with one user's entries share them."""
    text = 'Name = "s"\nRemoteUser = "bob@d"\nREMOTEUSERPRIO = 3.0\n'
    for compacted in (True, False):
        s = _slot(text)
        if compacted:
            s = make_slots([(ClassAd(s.ad).compact(), "f:1")])[0]
        memo: dict = {}
        copy = annotate_slot(s, now=0.0, eup_of={"bob@d": 42.0}.get, memo=memo)
        other = annotate_slot(s, now=0.0, eup_of={"bob@d": 42.0}.get, memo=memo)
        names = [name for name, _ in copy.node_items()]
        assert "REMOTEUSERPRIO" in names and "RemoteUserPrio" not in names, compacted
        assert "RemoteUserFloor" in names and copy.eval("RemoteUserPrio") == 42.0
        own, others = copy._attrs.own, other._attrs.own  # type: ignore[attr-defined]
        assert own["remoteuserfloor"] is others["remoteuserfloor"]
