"""Both Requirements of a build's request over the slots' rows
(:meth:`~matchmaker.cycle.columnar_match._RequestColumns.both_requirements`, and
``both_requirements_whole`` over the slots still available) keep the rows the scalar
evaluator matches both ways, as row positions, on random pools."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings
from test_build_reuse import CYCLE, USERS, _job_ads, _settings as _policy_settings, _slot_ad
from test_row_results import NOW, _settings

from matchmaker.cycle import columnar_match, matching
from matchmaker.cycle.candidates import CandidateList
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.pool.ads import pool_from_ads


def _requirements_both_ways(args: tuple) -> list:
    """The rows ``both_requirements`` keeps of every row and of every other row, and the
    rows whose ads match both ways by the scalar evaluator, for the request of ``args``
    (a build's), when neither Requirements could draw."""
    matcher, req, autocluster = args[:3]
    slots = columnar_match._slots(matcher, args[4])
    slots.sync()
    if slots.may_draw(req, (), ("requirements",), ("requirements",)):
        return []
    run = columnar_match._RequestColumns(matcher, req, slots, CandidateList(autocluster, False, []))
    every = slots.table.all_rows
    out = []
    for rows in (every, every[::2].copy()):
        kept = run.both_requirements(rows)
        ads = slots.table.ads
        scalar = [r for r in rows.tolist() if ads[r].matches(req) and req.matches(ads[r])]
        out.append((kept.dtype == rows.dtype, kept.tolist(), scalar))
    live = slots.live_rows()
    kept = run.both_requirements_whole()
    ads = slots.table.ads
    scalar = [r for r in live.tolist() if ads[r].matches(req) and req.matches(ads[r])]
    out.append((kept.dtype == live.dtype, kept.tolist(), scalar))
    return out


def _seen_at_builds(
    look: Callable[[tuple], list],
    pool: Any,
    settings: Any,
    eups: list,
    setup: Callable[[pytest.MonkeyPatch], None] = lambda mp: None,
) -> list:
    """What ``look`` finds before every columnar build of one cycle over ``pool`` (given
    the build's arguments), the cycle run as usual once ``setup`` has patched what it
    needs."""
    real = columnar_match.build
    seen: list = []

    def build(*args):
        seen.extend(look(args))
        return real(*args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(matching, "build_columnar", build)
        setup(mp)
        negotiate(pool, settings, StaticPriorities(dict(zip(USERS, eups))), NOW)
    return seen


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@hsettings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE)
def test_both_requirements_keep_the_rows_the_scalar_match_keeps(
    match_engine, slots, kinds, queue, policy, eups, weights, groups
):
    """Before every build of a cycle, the rows both Requirements keep (of every row, of
    every other row, and of the slots still available when both are evaluated over every
    row) are the rows whose slot and job match both ways, as the scalar evaluator finds
    them, still as row positions."""
    kinds = [{**k, "draws": False} for k in kinds]
    pool = pool_from_ads([_slot_ad(i, d) for i, d in enumerate(slots)], _job_ads(kinds, queue))
    seen = _seen_at_builds(_requirements_both_ways, pool, _settings("", weights, groups), eups)
    for same_type, kept, scalar in seen:
        assert same_type and kept == scalar


def _preemption_both_ways(args: tuple) -> list:
    """What a full build over every row finds of the preemption tests for the request of
    ``args`` (a build's): combining the tables with the rows' mask
    (``preemption_whole``) and picking them at the rows (``preemption_states``), each by a
    run of its own -- the rows, states, rows whose Rank is an error, the rows
    PREEMPTION_REQUIREMENTS refused and the list's flag."""
    matcher, req, autocluster, submitter, classes, only_rank = args[:6]
    slots = columnar_match._slots(matcher, classes)
    slots.sync()
    if only_rank or slots.may_draw(req, (), ("requirements",), ("requirements",)):
        return []
    out = []
    for whole in (True, False):
        run = columnar_match._RequestColumns(matcher, req, slots, CandidateList(autocluster, False, []))
        if whole:
            rows, state, errors = run.preemption_whole(run.both_requirements_mask(), submitter)
        else:
            rows, state, errors = run.preemption_states(run.both_requirements_whole(), submitter, False)
        out.append((rows.dtype, rows.tolist(), state.dtype, state.tolist(), errors))
        refused = run.refused  # positions, or a mask over every row (the whole path's)
        out.append(
            (np.flatnonzero(refused).tolist() if refused.dtype == bool else refused.tolist(), run.out.no_preemption_req)
        )
    return [out]


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@hsettings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE)
def test_preemption_over_the_mask_is_picking_the_rows(match_engine, slots, kinds, queue, policy, eups, weights, groups):
    """Before every full build of a cycle, the preemption tests of the rows both
    Requirements keep, found by combining the tables over every row with the rows' mask,
    are what picking the tables at those rows finds (as rows, states, errors, refusals)."""
    kinds = [{**k, "draws": False} for k in kinds]
    pool = pool_from_ads([_slot_ad(i, d) for i, d in enumerate(slots)], _job_ads(kinds, queue))
    seen = _seen_at_builds(_preemption_both_ways, pool, _policy_settings(policy, weights, groups), eups)
    for mask, picked, mask_flags, picked_flags in ((s[0], s[2], s[1], s[3]) for s in seen):
        assert mask == picked
        assert mask_flags == picked_flags
