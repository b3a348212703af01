"""The preemption tests of a cycle's claimed slots made over every row per submitter
(:meth:`~matchmaker.cycle.columnar_match._RequestColumns.claimed_table`, from the slots'
ranks made into masks once) and made on the claimed rows alone (the build's way when the
table cannot be made over every row) give what the scalar evaluator gives pair by pair,
in the order of the scalar build (:meth:`~matchmaker.cycle.matching.Matcher._scan`).

Random pools with groups, preemption by Rank and by priority, slot Ranks that read the
request or are errors, CurrentRanks above, equal to and below them,
PREEMPTION_REQUIREMENTS reading the submitter's priority or live usage, or a literal,
and the better-EUP rule: each build's request is tested all three ways at the same
moment, for both modes, with the slots' ranks kept for the cycle or not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st
from test_both_requirements import _seen_at_builds
from test_build_reuse import CYCLE, _job_ads, _slot_ad
from test_row_results import FREE, NOW, _plain, _settings

from classad.columnar import compile as columnar_compile
from classad.evaluate import eval_attribute, evaluate_top
from classad.parser import parse_expr
from classad.values import ERROR, UNDEFINED
from matchmaker.cycle import columnar_match, matching
from matchmaker.cycle.candidates import NO_PREEMPTION, PRIO_PREEMPTION, RANK_PREEMPTION, CandidateList
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.evaluator import is_true, rank_value
from matchmaker.cycle.negotiator import negotiate
from matchmaker.cycle.row_results import RowResults
from matchmaker.pool.ads import pool_from_ads

CONFIGS = [
    "",
    "PREEMPTION_REQUIREMENTS = True\n",
    "PREEMPTION_REQUIREMENTS = False\n",
    "PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2\n",
    "PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio\nMATCHMAKER_PREEMPTION_NEEDS_BETTER_EUP = true\n",
    "PREEMPTION_REQUIREMENTS = RemoteUserResourcesInUse > 1 || TARGET.JobPrio > 0\n",
    "PREEMPTION_REQUIREMENTS = TARGET.SubmitterGroupResourcesInUse < 3\n",
    "PREEMPTION_REQUIREMENTS = (CurrentTime - EnteredCurrentState > 3600) && RemoteUserPrio > 2\n",
    "PREEMPTION_REQUIREMENTS = ((CurrentTime - EnteredCurrentState) > (1 * 3600)) "
    "&& (RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2)\n",
    "PREEMPTION_REQUIREMENTS = TARGET.SubmitterUserPrio * 1.2 < RemoteUserPrio && KFlops > 1003 && TARGET.JobPrio >= 0\n",
]


CURRENT = [0.0, 10.0, -1.0]  # CurrentRanks below, equal to and above the slot Ranks 0 and 10
# Literal slot Ranks, given to some slots in place of theirs (None: theirs kept).
LITERAL_RANKS = [None, None, "0", "10", "error", "undefined", "{1, 2}", "2.5", '"ten"']
# How the slots' ranks over every row are found: kept for the cycle or computed for each
# table; with or without evaluating only the rows holding an expression, whatever their share.
RANKS = [(kept, based) for kept in (True, False) for based in (False, True)]


def _ranks_found(mp: pytest.MonkeyPatch, ranks: tuple[bool, bool]) -> None:
    kept, based = ranks
    worth = RowResults.worth
    if not kept:  # the slots' ranks computed afresh for each table, not kept
        mp.setattr(RowResults, "worth", lambda self, key: key[0] != "slot" and worth(self, key))
    if based:
        mp.setattr(columnar_match, "_BASE_SHARE", 1)


def _raw(ad, name: str, st) -> object:
    """A slot attribute's value against the request, as the scalar evaluator finds it."""
    node = ad.get_node(name)
    return UNDEFINED if node is None else eval_attribute(ad, name, node, st)


def _pair_by_pair(matcher, req, slots, submitter: str, only_rank: bool) -> tuple:
    """Per row of ``slots``, its preemption state, whether it stays a candidate, whether
    PREEMPTION_REQUIREMENTS refused it and whether its Rank is an error, each claimed
    slot's values found by the scalar evaluator and tested in the scalar build's order:
    a Rank above the CurrentRank preempts by Rank; else an only-Rank build and the
    submitter's own claims keep nothing, then a better EUP when asked for,
    PREEMPTION_REQUIREMENTS, and a Rank not below the CurrentRank preempt by priority."""
    pol, st, eup_of = matcher.policy, matcher.ev.state, matcher.eup_of
    prereq = pol.preemption_requirements
    out: tuple = ([], [], [], [])
    for e in slots.entries:
        state, keep, refused, error = NO_PREEMPTION, True, False, False
        if e.remote is not None:
            st.my, st.target = e.ad, req
            raw = _raw(e.ad, "rank", st)
            rank, current = rank_value(raw) or 0.0, rank_value(_raw(e.ad, "currentrank", st)) or 0.0
            error = raw is ERROR
            if rank > current:
                state = RANK_PREEMPTION
            elif only_rank or e.remote == submitter:
                keep = False
            elif pol.preemption_needs_better_eup and not eup_of(submitter) < eup_of(e.remote):
                keep = False
            elif prereq is not None and not is_true(evaluate_top(prereq, e.ad, st)):
                keep, refused = False, True
            elif rank < current:
                keep = False
            else:
                state = PRIO_PREEMPTION
        for column, value in zip(out, (state, keep, refused, error)):
            column.append(value)
    return out


def _claimed_rows_alone(run, rows: np.ndarray, submitter: str, only_rank: bool) -> tuple:
    """The build's tests made on the claimed rows of ``rows`` alone, laid out over ``rows``."""
    n = len(rows)
    state = np.full(n, NO_PREEMPTION, dtype=np.int64)
    keep = np.ones(n, dtype=bool)
    refused, error = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    cpos = np.nonzero(run.slots.claimed[rows])[0]
    if len(cpos):
        state[cpos], keep[cpos], refused[cpos], error[cpos] = run.claimed_rows_table(rows[cpos], submitter, only_rank)
    return state, keep, refused, error


def _both_ways(args: tuple) -> list:
    """The claimed table of the request of ``args`` (a build's) made all three ways, in
    both modes, when the tests read nothing that draws."""
    matcher, req, autocluster, submitter, classes = args[:5]
    slots = columnar_match._slots(matcher, classes)
    slots.sync()
    prereq = matcher.policy.preemption_requirements
    if slots.may_draw(req, (prereq,), (), ("rank", "currentrank")):
        return []
    out = []
    for only_rank in (False, True):
        run = columnar_match._RequestColumns(matcher, req, slots, CandidateList(autocluster, only_rank, []))
        rows = slots.table.all_rows
        made = run.claimed_table(rows, submitter, only_rank)
        alone = _claimed_rows_alone(run, rows, submitter, only_rank)
        scalar = _pair_by_pair(matcher, req, slots, submitter, only_rank)
        out.append((tuple(a.tolist() for a in made), tuple(a.tolist() for a in alone), scalar))
    # the slots' ranks over every row themselves, each as the scalar evaluator finds it
    st_ = matcher.ev.state
    for attr in ("rank", "currentrank"):
        rank, error = run.slot_rank_of(attr, slots.table.all_rows)
        scalar_rank, scalar_error = [], []
        for e in slots.entries:
            st_.my, st_.target = e.ad, req
            raw = _raw(e.ad, attr, st_)
            scalar_rank.append(rank_value(raw) or 0.0)
            scalar_error.append(raw is ERROR)
        out.append(((rank.tolist(), error.tolist()),) * 2 + ((scalar_rank, scalar_error),))
    return out


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("chains", [False, True])
@hsettings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    **CYCLE,
    config=st.sampled_from(CONFIGS),
    currents=st.lists(st.sampled_from(CURRENT), min_size=16, max_size=16),
    literals=st.lists(st.sampled_from(LITERAL_RANKS), min_size=16, max_size=16),
)
def test_the_claimed_table_is_the_scalar_tests(
    match_engine, ranks, chains, slots, kinds, queue, policy, eups, weights, groups, config, currents, literals
):
    """Before every build of a cycle, its request's claimed table (state, kept, refused,
    Rank error per row), made over every row and on the claimed rows alone, equals the
    tests evaluated pair by pair; so too the slots' ranks over every row.  ``chains``:
    combinations evaluated as one array at any size, so that an ``&&`` chain of
    PREEMPTION_REQUIREMENTS is read from a plan of its parts (classad.columnar's
    ``expression_true``), as it is on tables of thousands of rows."""
    kinds = [{**k, "draws": False} for k in kinds]
    slot_ads = [_slot_ad(i, d) for i, d in enumerate(slots)]
    for ad, current, literal in zip(slot_ads, currents, literals):
        ad["CurrentRank"] = current
        if literal is not None:
            ad.set_node("Rank", parse_expr(literal))
    pool = pool_from_ads(slot_ads, _job_ads(kinds, queue))
    settings = _settings(config, weights, groups)

    def setup(mp: pytest.MonkeyPatch) -> None:
        _ranks_found(mp, ranks)
        if chains:
            mp.setattr(columnar_compile, "_AHEAD_ROWS", 0)

    seen = _seen_at_builds(_both_ways, pool, settings, eups, setup)
    for made, alone, scalar in seen:
        assert made == alone == scalar


# ---- by hand --------------------------------------------------------------------------------


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@pytest.mark.parametrize("ranks_kept", [True, False])
def test_a_claimed_table_by_hand(match_engine, ranks_kept):
    """By hand, ann's (EUP 1) full build; PREEMPTION_REQUIREMENTS is
    ``RemoteUserPrio > TARGET.SubmitterUserPrio * 50`` (zed's EUP 100 > 50, ian's 20 not),
    CurrentRank 0 everywhere.

    * slot 0, zed's, Rank 10: preempted by Rank (10 > 0), PREEMPTION_REQUIREMENTS not asked;
    * slot 1, ann's own, Rank 0: not a candidate (her own claim);
    * slot 2, ian's, Rank 0: PREEMPTION_REQUIREMENTS refuses it;
    * slot 3, zed's, Rank 0: preempted by priority (Rank 0 is not below 0);
    * slot 4, zed's, Rank -1: PREEMPTION_REQUIREMENTS holds, but its Rank is below the
      CurrentRank: not a candidate;
    * slot 5, free: a candidate, no preemption;
    * slot 6, zed's, Rank an error: ranked as 0, so preempted by priority as slot 3, its
      error noted.

    The only-Rank table keeps slot 0 (by Rank) and the free slot 5 alone, refuses nothing,
    and notes slot 6's error too."""
    ranks = ["10", "0", "0", "0", "-1", "0", "error"]
    users = ["zed@d", "ann@d", "ian@d", "zed@d", "zed@d", None, "zed@d"]
    slot_ads = []
    for i, (rank, user) in enumerate(zip(ranks, users)):
        ad = _slot_ad(i, {**FREE, "user": user, "busy": True})
        ad.set_node("Rank", parse_expr(rank))
        slot_ads.append(ad)
    pool = pool_from_ads(slot_ads, _job_ads([_plain("ann@d")], [(0, 1)]))
    settings = _settings("PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio * 50\n", False, False)
    eups = StaticPriorities({"ann@d": 1.0, "zed@d": 100.0, "ian@d": 20.0})
    real = columnar_match.build
    tables: list = []

    def build(*args):
        matcher, req, autocluster, submitter, classes = args[:5]
        slots = columnar_match._slots(matcher, classes)
        for only_rank in (False, True):
            run = columnar_match._RequestColumns(matcher, req, slots, CandidateList(autocluster, only_rank, []))
            made = run.claimed_table(slots.table.all_rows, submitter, only_rank)
            order = np.argsort(slots.index)  # by slot
            tables.append(tuple(a[order].tolist() for a in made))
        return real(*args)

    worth = RowResults.worth
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(matching, "build_columnar", build)
        if not ranks_kept:
            mp.setattr(RowResults, "worth", lambda self, key: key[0] != "slot" and worth(self, key))
        negotiate(pool, settings, eups, NOW)
    R, P, N = RANK_PREEMPTION, PRIO_PREEMPTION, NO_PREEMPTION
    full, rank_only = tables[:2]
    assert full == (
        [R, N, N, P, N, N, P],
        [True, False, False, True, False, True, True],
        [False, False, True, False, False, False, False],
        [False, False, False, False, False, False, True],
    )
    assert rank_only == (
        [R, N, N, N, N, N, N],
        [True, False, False, False, False, True, False],
        [False] * 7,
        [False, False, False, False, False, False, True],
    )


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_slot_ranks_over_every_row_by_hand(match_engine):
    """By hand, the free slots' Ranks over every row for ann's request (JobPrio 0), bob's
    (JobPrio 5) and cat's (JobPrio 1): ``0``, ``TARGET.Owner == "ann" ? 10 : 0``, ``error`` (ranked 0, an
    error), ``{1, 2}`` (a list expression, not a number: 0), ``TARGET.JobPrio``, ``2.5``,
    ``undefined`` (0), ``0`` and four ``7``.  Three rows of twelve hold an expression
    (a quarter, :data:`~matchmaker.cycle.columnar_match._BASE_SHARE`): after the first
    request's ranks, only those three rows are evaluated for the others'; each gets
    arrays of its own."""
    ranks = ["0", 'TARGET.Owner == "ann" ? 10 : 0', "error", "{1, 2}", "TARGET.JobPrio", "2.5", "undefined", "0"]
    ranks += ["7"] * 4
    slot_ads = []
    for i, rank in enumerate(ranks):
        ad = _slot_ad(i, {**FREE, "user": None})
        ad.set_node("Rank", parse_expr(rank))
        slot_ads.append(ad)
    kinds = [_plain("ann@d"), {**_plain("bob@d"), "prio": 5}, {**_plain("cat@d"), "prio": 1}]
    pool = pool_from_ads(slot_ads, _job_ads(kinds, [(0, 1), (1, 1), (2, 1)]))
    eups = StaticPriorities({"ann@d": 1.0, "bob@d": 2.0, "cat@d": 3.0})
    real, asked = columnar_match.build, []
    got: dict = {}
    side = columnar_match._RequestColumns.slot_side

    def slot_side(self, attr, at):
        asked.append(len(at))
        return side(self, attr, at)

    def build(*args):
        matcher, req, autocluster, submitter, classes = args[:5]
        slots = columnar_match._slots(matcher, classes)
        run = columnar_match._RequestColumns(matcher, req, slots, CandidateList(autocluster, False, []))
        if submitter not in got:
            order = np.argsort(slots.index)  # by slot
            got[submitter] = (order, run.slot_rank_of("rank", slots.table.all_rows))
        return real(*args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(matching, "build_columnar", build)
        mp.setattr(columnar_match._RequestColumns, "slot_side", slot_side)
        negotiate(pool, _settings("", False, False), eups, NOW)
    assert asked == [12, 3, 3]
    errors = [False, False, True] + [False] * 9
    for submitter, expected in (
        ("ann@d", [0, 10, 0, 0, 0, 2.5, 0, 0, 7, 7, 7, 7]),
        ("bob@d", [0, 0, 0, 0, 5, 2.5, 0, 0, 7, 7, 7, 7]),
        ("cat@d", [0, 0, 0, 0, 1, 2.5, 0, 0, 7, 7, 7, 7]),
    ):
        order, (rank, error) = got[submitter]
        assert rank[order].tolist() == expected
        assert error[order].tolist() == errors


# ---- a build's candidate rows and their states ------------------------------------------


def _candidates_and_scalar(args: tuple) -> list:
    """The rows and preemption states :meth:`~matchmaker.cycle.columnar_match._RequestColumns.candidates`
    gives the request of ``args`` (a build's), in both modes, with what the scalar tests
    give: of the live rows both Requirements keep (the columnar ones, tested against the
    scalar path in test_both_requirements), those the preemption tests keep pair by pair,
    and their states; when nothing the build evaluates draws."""
    matcher, req, autocluster, submitter, classes = args[:5]
    slots = columnar_match._slots(matcher, classes)
    slots.sync()
    pol = matcher.policy
    knobs = (pol.preemption_requirements,)
    if slots.may_draw(req, knobs, ("requirements",), ("requirements", "rank", "currentrank")):
        return []
    out = []
    for only_rank in (False, True):
        run = columnar_match._RequestColumns(matcher, req, slots, CandidateList(autocluster, only_rank, []))
        rows, state, _ = run.candidates(submitter, only_rank)
        both = set(run.both_requirements(slots.live_rows(False)).tolist())
        scalar_state, keep, _, _ = _pair_by_pair(matcher, req, slots, submitter, only_rank)
        wanted = []
        for r in range(len(slots.entries)):
            if r not in both or not keep[r]:
                continue
            if pol.skip_claimed_idle and slots.claimed[r] and slots.claimed_idle[r]:
                continue
            if only_rank and scalar_state[r] != RANK_PREEMPTION:
                continue
            wanted.append((r, scalar_state[r]))
        out.append((list(zip(rows.tolist(), state.tolist())), wanted, state.dtype))
    return out


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize("ranks", RANKS)
@hsettings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    **CYCLE,
    config=st.sampled_from(CONFIGS),
    currents=st.lists(st.sampled_from(CURRENT), min_size=16, max_size=16),
)
def test_the_candidates_states_are_the_scalar_tests(
    match_engine, whole, ranks, slots, kinds, queue, policy, eups, weights, groups, config, currents
):
    """Before every build of a cycle, the candidate rows and their preemption states (kept
    in a byte: the states are 0, 1 and 2) are those the scalar tests give pair by pair;
    ``whole``: the tests combined with both Requirements over every row, else picked at
    the rows both Requirements keep."""
    kinds = [{**k, "draws": False} for k in kinds]
    slot_ads = [_slot_ad(i, d) for i, d in enumerate(slots)]
    for ad, current in zip(slot_ads, currents):
        ad["CurrentRank"] = current
    pool = pool_from_ads(slot_ads, _job_ads(kinds, queue))

    def setup(mp: pytest.MonkeyPatch) -> None:
        _ranks_found(mp, ranks)
        if not whole:
            mp.setattr(columnar_match, "_WHOLE", 0)

    seen = _seen_at_builds(_candidates_and_scalar, pool, _settings(config, weights, groups), eups, setup)
    for made, wanted, dtype in seen:
        assert made == wanted
        assert dtype == np.int8
