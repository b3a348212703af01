"""The preemption tests of a cycle's claimed slots made over every row per submitter
(:meth:`~matchmaker.cycle.columnar_match._RequestColumns.claimed_table`, from the slots'
ranks made into masks once) give what the tests on the claimed rows give
(:meth:`~matchmaker.cycle.columnar_match._RequestColumns.claimed_states`).

Random pools with groups, preemption by Rank and by priority, slot Ranks that read the
request or are errors, PREEMPTION_REQUIREMENTS reading the submitter's priority or live
usage, or a literal, and the better-EUP rule: each build's request is tested both ways at
the same moment, for both modes, with the slots' ranks kept for the cycle or not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st
from test_build_reuse import CYCLE, USERS, _job_ads, _slot_ad
from test_row_results import FREE, NOW, _plain, _settings

from classad.parser import parse_expr
from matchmaker.cycle import columnar_match, matching
from matchmaker.cycle.candidates import NO_PREEMPTION, PRIO_PREEMPTION, RANK_PREEMPTION, CandidateList
from matchmaker.cycle.ephemeral import StaticPriorities
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
]


def _by_claimed_states(run, rows: np.ndarray, submitter: str, only_rank: bool) -> tuple:
    """The tests of ``claimed_states`` on the claimed rows, laid out over every row."""
    n = len(rows)
    state = np.full(n, NO_PREEMPTION, dtype=np.int64)
    keep = np.ones(n, dtype=bool)
    refused, error = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    cpos = np.nonzero(run.slots.claimed[rows])[0]
    if len(cpos):
        error[cpos], refused[cpos] = run.claimed_states(rows[cpos], cpos, state, keep, submitter, only_rank)
    return state, keep, refused, error


def _both_ways(args: tuple) -> list:
    """The claimed table of the request of ``args`` (a build's) made both ways, in both
    modes, when the tests read nothing that draws."""
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
        alone = _by_claimed_states(run, rows, submitter, only_rank)
        out.append((tuple(a.tolist() for a in made), tuple(a.tolist() for a in alone)))
    return out


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@pytest.mark.parametrize("ranks_kept", [True, False])
@hsettings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE, config=st.sampled_from(CONFIGS))
def test_the_claimed_table_is_the_tests_of_the_claimed_rows(
    match_engine, ranks_kept, slots, kinds, queue, policy, eups, weights, groups, config
):
    """Before every build of a cycle, its request's claimed table (state, kept, refused,
    Rank error per row) equals the tests run on the claimed rows alone."""
    kinds = [{**k, "draws": False} for k in kinds]
    pool = pool_from_ads([_slot_ad(i, d) for i, d in enumerate(slots)], _job_ads(kinds, queue))
    settings = _settings(config, weights, groups)
    real = columnar_match.build
    seen: list = []

    def build(*args):
        seen.extend(_both_ways(args))
        return real(*args)

    worth = RowResults.worth
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(matching, "build_columnar", build)
        if not ranks_kept:  # the slots' ranks computed afresh for each table, not kept
            mp.setattr(RowResults, "worth", lambda self, key: key[0] != "slot" and worth(self, key))
        negotiate(pool, settings, StaticPriorities(dict(zip(USERS, eups))), NOW)
    for made, alone in seen:
        assert made == alone


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
