"""Arrays over every slot row kept for a cycle's builds (:mod:`matchmaker.cycle.row_results`)
give what each build computes on its own rows.

Random pools with groups, preemption (by Rank and by priority, PREEMPTION_REQUIREMENTS,
partitionable slots and their dynamic slots, consumption policies), concurrency limits and
submitter limits, and knobs and slot Ranks that read the request, read live usage or draw
random numbers: whole cycles with and without the kept arrays are compared (matches,
rejections with their reasons, usage, warnings in their order and the next random number
drawn), and every build is compared with one made at the same moment without them."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st
from support import idle_job_ads, unclaimed_slot_ads
from test_build_reuse import CYCLE, USERS, _job_ads, _slot_ad, _view

from classad.ad import ClassAd
from classad.evaluate import seeded_random
from classad.parser import parse_expr
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle import columnar_match, matching
from matchmaker.cycle.build_reuse import Found
from matchmaker.cycle.candidates import CandidateList
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.cycle.row_results import RowResults, at, kept_form, nan_free
from matchmaker.pool.ads import pool_from_ads

NOW = 100_000.0
POLICIES = [
    "",
    "PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2\n",
    "PREEMPTION_REQUIREMENTS = True\nPREEMPTION_RANK = TARGET.JobPrio + RemoteUserResourcesInUse\n",
    'PREEMPTION_REQUIREMENTS = TARGET.Owner =!= "ann"\nNEGOTIATOR_PRE_JOB_RANK = TARGET.Owner == "abe" ? Cpus : -Cpus\n',
    "PREEMPTION_REQUIREMENTS = True\nALLOW_PSLOT_PREEMPTION = true\nNEGOTIATOR_POST_JOB_RANK = TARGET.JobPrio * KFlops\n",
    "PREEMPTION_REQUIREMENTS = TARGET.SubmitterGroupResourcesInUse < 3\nPREEMPTION_RANK = KFlops / 0\n",
]
# Policies whose knobs draw random numbers.
DRAWING = [
    "PREEMPTION_REQUIREMENTS = random(2) == 1\n",
    "PREEMPTION_REQUIREMENTS = True\nNEGOTIATOR_PRE_JOB_RANK = random(5) - Cpus\n",
]


def _settings(config: str, weights: bool, groups: bool) -> Settings:
    config += f"NEGOTIATOR_USE_SLOT_WEIGHTS = {str(weights).lower()}\nLIC_LIMIT = 2\nBIG_LIMIT = 1\n"
    if groups:
        config += "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 3\nGROUP_QUOTA_b = 2\nGROUP_ACCEPT_SURPLUS = true\n"
    return Settings.from_knobs(Knobs.from_string(config))


def _pool(slots: list[dict], kinds: list[dict], queue: list, rank_draws: bool):
    slot_ads = [_slot_ad(i, d) for i, d in enumerate(slots)]
    if rank_draws:
        for ad in slot_ads[1::2]:
            ad.set_node("Rank", parse_expr("random(3)"))
    return pool_from_ads(slot_ads, _job_ads(kinds, queue))


def _cycle(pool, settings: Settings, eups: list[float]) -> tuple:
    with seeded_random(5):
        r = negotiate(pool, settings, StaticPriorities(dict(zip(USERS, eups))), NOW)
        next_draw = ClassAd("[x = random(1000000)]").evaluate("x")
    return r.matches, r.rejected, r.usage, r.submitters, r.warnings, r.groups, next_draw


def _without_row_results(mp: pytest.MonkeyPatch) -> None:
    """Every build evaluates on its own rows, as it does with nothing kept."""
    mp.setattr(RowResults, "get", lambda self, key, req: None)
    mp.setattr(RowResults, "worth", lambda self, key: False)


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@hsettings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE, config=st.sampled_from(POLICIES + DRAWING), rank_draws=st.sampled_from([False] * 3 + [True]))
def test_cycles_with_and_without_row_results(
    match_engine, slots, kinds, queue, policy, eups, weights, groups, config, rank_draws
):
    """Matches, rejections, usage, the groups' table, the warnings in their order and the
    next random number are the same when every build evaluates on its own rows."""
    pool = _pool(slots, kinds, queue, rank_draws)
    settings = _settings(config, weights, groups)
    kept = _cycle(pool, settings, eups)
    with pytest.MonkeyPatch.context() as mp:
        _without_row_results(mp)
        assert _cycle(pool, settings, eups) == kept


def _alone(build, args: tuple) -> Optional[CandidateList]:
    """``build(*args)`` with no kept arrays taken (and none kept), nor stored builds."""
    slots = columnar_match._slots(args[0], args[4])
    kept, slots._results = slots._results, RowResults(budget=0)
    found, slots._found = slots._found, None
    try:
        with pytest.MonkeyPatch.context() as mp:
            _without_row_results(mp)
            return build(*args)
    finally:
        slots._results, slots._found = kept, found


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@hsettings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE, config=st.sampled_from(POLICIES))
def test_every_build_is_a_build_on_its_own_rows(
    match_engine, slots, kinds, queue, policy, eups, weights, groups, config
):
    """Each build lists the candidates, in the order, with the keys and flags, that a build
    of the same request at the same moment makes on its own rows (nothing here draws)."""
    kinds = [{**k, "draws": False} for k in kinds]
    pool = _pool(slots, kinds, queue, False)
    real = columnar_match.build
    seen: list = []

    def build(*args):
        alone = _alone(real, args)
        out = real(*args)
        seen.append((None if out is None else _view(out), None if alone is None else _view(alone)))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(matching, "build_columnar", build)
        _cycle(pool, _settings(config, weights, groups), eups)
    for kept, alone in seen:
        assert kept == alone


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@hsettings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE, config=st.sampled_from(POLICIES))
def test_knob_ranks_over_every_row_are_kept_as_computed(
    match_engine, slots, kinds, queue, policy, eups, weights, groups, config
):
    """The knob ranks a build keeps over every row (made in single precision at once) are,
    bit for bit and in the same form, what keeping its computation on every row gives."""
    kinds = [{**k, "draws": False} for k in kinds]
    pool = _pool(slots, kinds, queue, False)
    real = columnar_match._RequestColumns.every_row
    seen: list = []

    def every_row(self, key, compute, whole=None):
        out = real(self, key, compute, whole)
        if whole is not None:
            seen.append((out, kept_form(compute(self.table.all_rows))))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match._RequestColumns, "every_row", every_row)
        _cycle(pool, _settings(config, weights, groups), eups)
    for kept, computed in seen:
        assert [None if a is None else (a.dtype, a.tobytes()) for a in kept] == [
            None if a is None else (a.dtype, a.tobytes()) for a in computed
        ]


# ---- by hand --------------------------------------------------------------------------------

FREE = {"cpus": 1, "memory": 1024, "idle": 3000, "arch": "X86_64", "start": 0, "rank": 0, "kind": "static"}


def _plain(user: str) -> dict:
    return {"user": user, "req": 0, "memory": 512, "cpus": 1, "prio": 0, "limits": 0, "draws": False}


def _counted(mp: pytest.MonkeyPatch) -> list:
    """The :class:`RowResults` of the cycle's slot tables, as they are made."""
    made: list = []
    prop = columnar_match.SlotTable.results

    def results(self):
        out = prop.fget(self)
        if not any(r is out for r in made):
            made.append(out)
        return out

    mp.setattr(columnar_match.SlotTable, "results", property(results))
    return made


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_a_slot_rank_kept_for_one_owner_is_not_taken_for_another(match_engine):
    """By hand: slot 0 is zed's (Rank ``TARGET.Owner == "bea" ? 10 : 0``, CurrentRank 0),
    slot 1 is free; PREEMPTION_REQUIREMENTS is False (the default), so only Rank preempts.
    ann (EUP 1) goes first: slot 0's Rank for her job is 0, not above 0, so she takes
    slot 1.  bea (EUP 10) next: slot 0's Rank for hers is 10 > 0, so she preempts zed
    there.  The Rank computed for ann's request (0 on every row) must not be taken for
    bea's, whose Owner differs; what reads nothing that differs (POST_JOB_RANK) is."""
    slot_ads = [_slot_ad(0, {**FREE, "user": "zed@d", "busy": True}), _slot_ad(1, {**FREE, "user": None})]
    slot_ads[0].set_node("Rank", parse_expr('TARGET.Owner == "bea" ? 10 : 0'))
    pool = pool_from_ads(slot_ads, _job_ads([_plain("ann@d"), _plain("bea@d")], [(0, 1), (1, 1)]))
    with pytest.MonkeyPatch.context() as mp:
        made = _counted(mp)
        r = negotiate(pool, _settings("", False, False), StaticPriorities({"ann@d": 1.0, "bea@d": 10.0}), NOW)
    assert [(m.job, m.slot, m.preempted) for m in r.matches] == [
        ("1.0", "slot1@host1", None),
        ("2.0", "slot0@host0", "zed@d"),
    ]
    assert sum(m.hits for m in made) >= 1


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_preemption_requirements_kept_per_submitter_priority(match_engine):
    """By hand: slots 0 and 1 are zed's (EUP 100), claimed two hours ago;
    PREEMPTION_REQUIREMENTS is ``RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2``.
    ann (EUP 1: 100 > 1.2) preempts zed on one slot; bea (EUP 90: 100 > 108 is false) may
    not take the other, and her list says PREEMPTION_REQUIREMENTS refused it.  What ann's
    request made of the expression must not answer for bea's, which gives
    SubmitterUserPrio another value."""
    claim = {**FREE, "user": "zed@d", "busy": True}
    slot_ads = [_slot_ad(0, claim), _slot_ad(1, claim)]
    pool = pool_from_ads(slot_ads, _job_ads([_plain("ann@d"), _plain("bea@d")], [(0, 1), (1, 1)]))
    config = "PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2\n"
    eups = StaticPriorities({"ann@d": 1.0, "bea@d": 90.0, "zed@d": 100.0})
    r = negotiate(pool, _settings(config, False, False), eups, NOW)
    assert [(m.job, m.submitter, m.preempted) for m in r.matches] == [("1.0", "ann@d", "zed@d")]
    assert [(j.job, j.reason) for j in r.rejected] == [("2.0", "PREEMPTION_REQUIREMENTS == False")]


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_a_knob_that_draws_is_evaluated_on_the_rows_asked_only(match_engine):
    """``NEGOTIATOR_PRE_JOB_RANK = random(5) - Cpus``: four free slots, two requests of
    different autoclusters.  Evaluating the knob on rows a build did not ask for would draw
    more numbers, so nothing is kept for it and the cycle (and its next random number) is
    the one where each build evaluates on its own rows."""
    slot_ads = [_slot_ad(i, {**FREE, "user": None}) for i in range(4)]
    kinds = [_plain("ann@d"), {**_plain("ann@d"), "memory": 1024}]
    pool = pool_from_ads(slot_ads, _job_ads(kinds, [(0, 1), (1, 1)]))
    settings = _settings("NEGOTIATOR_PRE_JOB_RANK = random(5) - Cpus\n", False, False)
    node = settings.policy.pre_job_rank
    with pytest.MonkeyPatch.context() as mp:
        made = _counted(mp)
        kept = _cycle(pool, settings, [1.0] * 4)
    assert len(kept[0]) == 2
    assert made and all(m._kept.get(("knob", id(node)), 0) == 0 for m in made)
    with pytest.MonkeyPatch.context() as mp:
        _without_row_results(mp)
        assert _cycle(pool, settings, [1.0] * 4) == kept


def test_arrays_are_kept_within_bounds():
    """By hand: a budget of 80 bytes keeps one array of ten reals (then there is no room); a
    kind of array whose eight kept ones were never taken again is no longer kept."""
    req = ClassAd({"Owner": "ann"})

    class Req:
        reads = None

        def plain(self, lname):
            return req.plain(lname)

    results = RowResults(budget=80, per_row=8)  # ten rows: no more than the budget
    assert results.worth("a")
    results.put("a", Req(), ["owner"], (np.zeros(10),))
    assert not results.worth("a") and not results.worth("b")
    assert results.get("a", Req())[0].nbytes == 80
    many = RowResults()
    for _ in range(8):
        assert many.worth("k")
        many.put("k", Req(), ["owner"], (None,))
    assert not many.worth("k") and many.worth("other")
    many.get("k", Req())
    assert not many.worth("k")  # taken once, kept eight times


def test_the_bound_grows_with_the_rows():
    """By hand: a budget of 80 bytes at 16 bytes a row keeps two arrays of ten reals (the
    bound is 160 bytes for ten rows), and for a hundred rows up to 1,600 bytes; a table of
    so few rows that the budget is more keeps to the budget."""
    req = ClassAd({"Owner": "ann"})

    class Req:
        reads = None

        def plain(self, lname):
            return req.plain(lname)

    ten = RowResults(budget=80, per_row=16)
    ten.put("a", Req(), ["owner"], (None, np.zeros(10)))
    assert ten.worth("b")
    ten.put("b", Req(), ["owner"], (np.zeros(10),))
    assert not ten.worth("c")
    hundred = RowResults(budget=80, per_row=16)
    for i in range(7):
        hundred.put(i, Req(), ["owner"], (np.ones(100, dtype=bool), np.zeros(100, dtype=np.int8)))
        assert hundred.worth("next")  # 200 bytes a pair: seven pairs are 1,400 bytes
    hundred.put("last", Req(), ["owner"], (np.zeros(100, dtype=np.float32),))
    assert hundred.size == 1800 and not hundred.worth("next")
    few = RowResults(budget=80, per_row=4)
    few.put("a", Req(), ["owner"], (np.zeros(10),))
    assert not few.worth("b")


def test_kept_arrays_give_back_every_bit():
    """Ranks single precision holds exactly (-0.0, 3, infinity, NaN) are kept in it; any
    other (0.1, 1e40) keeps the array in double precision; a mask with no row set is kept
    as nothing; small integer codes are kept in a byte, others as they are.  Taken back,
    each row has the bits it was computed with."""
    exact = np.array([-0.0, 3.0, -np.inf, np.nan])
    inexact = [np.array([3.0, 0.1]), np.array([1e40, 0.0]), np.array([16777217.0, 1.0])]
    none, some = np.zeros(4, dtype=bool), np.array([False, True, False, False])
    codes, wide = np.array([0, -128, 127, 2]), np.array([128, 0])
    kept = kept_form((exact, none, some, codes, wide, *inexact))
    assert kept[0].dtype == np.float32 and kept[1] is None and kept[2] is some
    assert kept[3].dtype == np.int8 and kept[4].dtype == np.int64
    assert all(k.dtype == np.float64 for k in kept[5:])
    rows = np.array([1, 0])
    back = at(kept, rows)
    for got, was in zip(back, (exact, none, some, codes, wide, *inexact)):
        assert got.dtype == was.dtype and got.tobytes() == was[rows].tobytes()
    # Rows asked again and out of order, by hand.
    ranks, nothing, mask, small = at(kept[:4], np.array([3, 3, 1, 2]))
    assert np.isnan(ranks[:2]).all() and ranks[2:].tolist() == [3.0, -np.inf]
    assert nothing.tolist() == [False] * 4 and mask.tolist() == [False, False, True, False]
    assert small.tolist() == [2, 2, -128, 127]


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_slot_ranks_are_computed_once_for_every_submitters_preemption_tests(match_engine):
    """By hand: slots 0 and 1 are zed's (EUP 100), claimed two hours ago, Rank
    ``TARGET.JobPrio`` and CurrentRank 0; PREEMPTION_REQUIREMENTS is
    ``RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2``.  ann (EUP 1) and abe (EUP 2) each
    have one job of JobPrio 0: the Rank (0) is not above the CurrentRank (0) but not below
    it, zed is another submitter with a worse priority and 100 > 1.2 and 100 > 2.4, so each
    preempts zed by priority on one slot.  NEGOTIATOR_PRE_JOB_RANK ties (Rank 0, both claimed,
    1 CPU, 1024 MB), so the job Rank ``TARGET.KFlops`` (1000 + slot) decides: ann, first,
    takes slot 1, abe slot 0.  The preemption tests are
    computed per submitter, but the Rank reads only the JobPrio, which both requests give
    as 0: abe's tests take the ranks computed for ann's.  PREEMPTION_REQUIREMENTS, whose
    values change every cycle, leaves nothing in the table's memo."""
    claim = {**FREE, "user": "zed@d", "busy": True}
    slot_ads = [_slot_ad(0, claim), _slot_ad(1, claim)]
    for ad in slot_ads:
        ad.set_node("Rank", parse_expr("TARGET.JobPrio"))
    pool = pool_from_ads(slot_ads, _job_ads([_plain("ann@d"), _plain("abe@d")], [(0, 1), (1, 1)]))
    settings = _settings("PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2\n", False, False)
    eups = StaticPriorities({"ann@d": 1.0, "abe@d": 2.0, "zed@d": 100.0})
    tables: list = []
    real = columnar_match.build

    def build(*args):
        tables.append(columnar_match._slots(args[0], args[4]).table)
        return real(*args)

    with pytest.MonkeyPatch.context() as mp:
        made = _counted(mp)
        mp.setattr(matching, "build_columnar", build)
        r = negotiate(pool, settings, eups, NOW)
    assert [(m.job, m.slot, m.submitter, m.preempted) for m in r.matches] == [
        ("1.0", "slot1@host1", "ann@d", "zed@d"),
        ("2.0", "slot0@host0", "abe@d", "zed@d"),
    ]
    assert len(made) == 1
    assert made[0]._kept[("slot", "rank")] == 1 and made[0]._taken[("slot", "rank")] >= 1
    prereq = settings.policy.preemption_requirements
    memo = tables[0].shared_memo()
    assert not any(key[0] == ("expr", id(prereq)) for key in memo.entries)
    with pytest.MonkeyPatch.context() as mp:
        _without_row_results(mp)
        again = negotiate(pool, settings, eups, NOW)
    assert (again.matches, again.rejected, again.usage) == (r.matches, r.rejected, r.usage)


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_an_only_rank_build_takes_the_submitters_full_preemption_tests(match_engine):
    """By hand: slots 0 and 1 are zed's (EUP 100), slot 2 is free; slot 0's Rank is
    ``TARGET.Owner == "ann" ? 10 : 0``, slot 1's is 0, CurrentRank 0 on both, and
    PREEMPTION_REQUIREMENTS is True.  ann's (EUP 1) list holds slot 0 by Rank (10 > 0), the
    free slot 2 and slot 1 by priority (0 = 0, zed's priority worse), in the order of
    NEGOTIATOR_PRE_JOB_RANK (10,000,000 x the slot's Rank 10 first, then 1,000,000 for the
    unclaimed slot; Cpus and Memory are alike).  An only-Rank build
    of her request right after keeps slot 0 alone, by Rank; it is made of the tests her
    full build computed (no preemption test computed again for it), and lists what a
    build with nothing kept lists."""
    claim = {**FREE, "user": "zed@d", "busy": True}
    slot_ads = [_slot_ad(0, claim), _slot_ad(1, claim), _slot_ad(2, {**FREE, "user": None})]
    slot_ads[0].set_node("Rank", parse_expr('TARGET.Owner == "ann" ? 10 : 0'))
    pool = pool_from_ads(slot_ads, _job_ads([_plain("ann@d")], [(0, 1)]))
    settings = _settings("PREEMPTION_REQUIREMENTS = True\n", False, False)
    real, table = columnar_match.build, columnar_match._RequestColumns.claimed_table
    made: list = []
    seen: list = []

    def claimed_table(self, rows, submitter, only_rank):
        made.append(only_rank)
        return table(self, rows, submitter, only_rank)

    def build(matcher, req, autocluster, submitter, classes, only_rank, budget, static):
        out = real(matcher, req, autocluster, submitter, classes, only_rank, budget, static)
        if not only_rank:
            args = (matcher, req, autocluster, submitter, classes, True, replace(budget), static)
            seen.append((_view(out), _view(real(*args)), _view(_alone(real, args))))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match._RequestColumns, "claimed_table", claimed_table)
        mp.setattr(matching, "build_columnar", build)
        negotiate(pool, settings, StaticPriorities({"ann@d": 1.0, "zed@d": 100.0}), NOW)
    (full, rank_only, alone), *_ = seen
    assert [(index, state) for index, state, _ in full[0]] == [(0, 1), (2, 2), (1, 0)]
    assert [(index, state) for index, state, _ in rank_only[0]] == [(0, 1)]
    assert rank_only == alone
    assert made[:1] == [False] and True not in made[:2]


def test_kept_arrays_are_marked_free_of_nan_only_when_no_real_is_nan():
    """A kept tuple knows whether a real of its arrays is NaN (single or double precision,
    first or last row, beside masks and codes); a tuple not kept so is never marked."""
    nan_last = np.array([1.0, 0.1, np.nan])  # kept in double precision
    nan_first = np.array([np.nan, 2.0, 3.0])  # kept in single precision
    clean = np.array([0.1, -np.inf, np.inf])
    mask, codes = np.array([True, False, True]), np.array([0, 1, 2])
    assert not nan_free(kept_form((nan_last, mask)))
    assert not nan_free(kept_form((mask, nan_first)))
    assert kept_form((mask,))[0] is mask and nan_free(kept_form((mask, codes, np.zeros(3, dtype=bool))))
    assert nan_free(kept_form((clean, mask))) and nan_free(kept_form((np.zeros(0),)))
    assert not nan_free((clean, mask)) and not nan_free(None)


def test_stored_builds_keep_a_key_marked_only_while_every_part_of_it_is():
    """A stored build's keys filled for more rows stay marked free of NaN only when both
    computations were marked so (by hand, key by key)."""
    rows = np.arange(3)
    keys = [np.zeros(1) for _ in range(4)]
    errors = [np.zeros(1, dtype=bool) for _ in range(3)]
    found = Found.known_at(rows, rows, np.array([0]), keys, errors, [], rows[:0], [True, True, False, True])
    found.laid_out()
    assert found.marks == [True, True, False, True]
    found.put_keys(np.array([2]), keys, errors, [True, False, True, True])
    assert found.marks == [True, False, False, True]


@pytest.mark.parametrize("match_engine", ["columnar", "scalar"], indirect=True)
def test_a_knob_rank_that_is_nan_on_one_slot_is_ordered_by_the_scalar_path(match_engine):
    """NEGOTIATOR_PRE_JOB_RANK ``ifThenElse(Memory > 1500, real("NaN"), Memory)``: NaN on
    s1 (2048 MB), 1024 on s2 and 512 on s3, kept over every row by the first build.  The
    sort keys are negated (NaN, -1024, -512 in slot order); no comparison with NaN is true
    and -512 < -1024 is false, so the scalar path's sort leaves the slots as listed, where
    a columnar sort would put NaN last (s2, s3, s1).  By hand: the jobs take s1, then s2."""
    slots = unclaimed_slot_ads([2048, 1024, 512])
    jobs = idle_job_ads([{"user": "u@x", "memory": 1, "prio": 0, "count": 2, "requirements": "true"}])
    knob = parse_expr('ifThenElse(Memory > 1500, real("NaN"), Memory)')
    settings = Settings.defaults(pre_job_rank=knob)
    result = negotiate(pool_from_ads(slots, jobs), settings, StaticPriorities({}), 0.0)
    assert [(m.job, m.slot) for m in result.matches] == [("1.0", "s1"), ("1.1", "s2")]
