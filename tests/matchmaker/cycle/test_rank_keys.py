"""The sort keys a columnar build gives its candidates (knob ranks negated in single
precision, the job's Rank negated, PREEMPTION_RANK's fill for the rows that preempt
nothing) are, value for value, the keys the scalar path makes for the same request at
the same moment -- whether the ranks were taken of arrays kept for the cycle, of a base
brought up to date for a later request, or computed on the build's own rows."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st
from test_build_reuse import CYCLE
from test_knob_bases import KNOBS
from test_row_results import POLICIES, _cycle, _pool, _settings, _without_row_results

from matchmaker.cycle import matching
from matchmaker.cycle.candidates import CandidateList

# Preemption with PREEMPTION_RANK unset (a constant key for the rows that preempt), and
# every knob rank unset; the others as the tests of kept knob ranks and of kept arrays.
UNSET = [
    "PREEMPTION_REQUIREMENTS = True\nPREEMPTION_RANK =\n",
    "PREEMPTION_REQUIREMENTS = True\nNEGOTIATOR_PRE_JOB_RANK =\nNEGOTIATOR_POST_JOB_RANK =\nPREEMPTION_RANK =\n",
    "PREEMPTION_REQUIREMENTS = True\nNEGOTIATOR_IGNORE_JOB_RANKS = true\n",
]


def _bits(key: tuple) -> tuple:
    """A key with each real as its bits (``-0.0`` and ``0.0`` told apart; NaN as itself)."""
    return tuple(v.hex() if type(v) is float else v for v in key)


def _view(cl: CandidateList) -> list:
    return [(c.entry.index, c.state, _bits(c.key)) for c in (cl.items[i] for i in range(len(cl.items)))]


def _checked(seen: list):
    """A ``build_columnar`` that also makes the scalar list of each request it lists
    (before it, with the same budget) and records both views."""
    real = matching.build_columnar

    def build(matcher, req, autocluster, submitter, classes, only_rank, budget, static):
        scalar = matcher._scan(req, autocluster, submitter, classes, only_rank, replace(budget), static)
        out = real(matcher, req, autocluster, submitter, classes, only_rank, budget, static)
        if out is not None:
            seen.append((_view(out), _view(scalar)))
        return out

    return build


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@pytest.mark.parametrize("kept", [True, False], ids=["kept", "own-rows"])
@hsettings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE, config=st.sampled_from(KNOBS + UNSET + POLICIES))
def test_columnar_sort_keys_are_the_scalar_keys(
    match_engine, kept, slots, kinds, queue, policy, eups, weights, groups, config
):
    """Every columnar list holds the candidates, in order, with the states and the keys
    (bit for bit) of the scalar list made for the request just before it; ``own-rows``:
    nothing kept for the cycle, every rank computed on the build's rows."""
    kinds = [{**k, "draws": False} for k in kinds]
    pool = _pool(slots, kinds, queue, False)
    settings = _settings(config, weights, groups)
    seen: list = []
    with pytest.MonkeyPatch.context() as mp:
        if not kept:
            _without_row_results(mp)
        mp.setattr(matching, "build_columnar", _checked(seen))
        _cycle(pool, settings, eups)
    for columnar, scalar in seen:
        assert columnar == scalar


def test_bits_tell_zeros_apart():
    assert _bits((-0.0, 1, math.inf)) != _bits((0.0, 1, math.inf))
