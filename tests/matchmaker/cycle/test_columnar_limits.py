"""The columnar build's submitter-limit stage against its definition (docs/negotiation.md,
one submitter's session): a slot preempted for priority needs the limit to permit its
weight, an unclaimed one the unclaimed limit, and one taken by Rank neither; each test is
``used + weight <= allowed``, or ``used <= 0 < allowed`` (the round-up rule)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings, strategies as st

from matchmaker.cycle.candidates import (
    NO_PREEMPTION,
    PRIO_PREEMPTION,
    RANK_PREEMPTION,
    Budget,
    CandidateList,
    permits,
)
from matchmaker.cycle.columnar_match import SlotTable, _RequestColumns

_amount = st.sampled_from([0.0, -1.0, 0.5, 1.0, 2.0, 2.5, 3.0, 4.0, 7.5, math.inf])
_weight = st.sampled_from([0.25, 1.0, 1.5, 2.0, 4.0, 8.0, 0.0, -1.0, math.nan])


def _kept(weights: list[float], states: list[int], rows: list[int], budget: Budget) -> tuple[list[int], bool]:
    weight = np.array(weights)
    slots = SimpleNamespace(weight=weight, _heaviest=None)
    slots.heaviest = SlotTable.heaviest.fget(slots)  # type: ignore[attr-defined]
    run = SimpleNamespace(slots=slots, out=CandidateList(0, False, []))
    at = _RequestColumns.within_submitter_limits(run, np.array(rows, dtype=np.int64), np.array(states), budget)  # type: ignore[arg-type]
    return at.tolist(), run.out.limited


@settings(max_examples=300, deadline=None)
@given(
    slots=st.lists(st.tuples(_weight, st.sampled_from([NO_PREEMPTION, PRIO_PREEMPTION, RANK_PREEMPTION])), max_size=8),
    pick=st.lists(st.booleans(), min_size=8, max_size=8),
    used=_amount,
    lim=_amount,
    used_unclaimed=_amount,
    lim_unclaimed=_amount,
)
def test_the_limits_keep_what_the_definition_keeps(slots, pick, used, lim, used_unclaimed, lim_unclaimed):
    """Random weights (fractions, zero, negative, NaN) and budgets around them, on some of
    the table's rows (the heaviest slot of the table may be one the build does not see)."""
    weights = [w for w, _ in slots]
    rows = [r for r in range(len(slots)) if pick[r]]
    states = [slots[r][1] for r in rows]
    budget = Budget(lim, lim_unclaimed, used, used_unclaimed)

    def allowed(r: int, state: int) -> bool:
        if state == PRIO_PREEMPTION:
            return permits(used, lim, weights[r])
        if state == NO_PREEMPTION:
            return permits(used_unclaimed, lim_unclaimed, weights[r])
        return True

    expected = [p for p, (r, s) in enumerate(zip(rows, states)) if allowed(r, s)]
    assert _kept(weights, states, rows, budget) == (expected, len(expected) < len(rows))


def test_a_heavy_slot_elsewhere_does_not_limit_a_light_one():
    """By hand: 2.5 of a limit of 3 used; the table holds a slot of weight 4 (not a
    candidate here) and one of weight 0.5 (3.0 <= 3, permitted) and one of 1 (3.5 > 3,
    refused); unclaimed, the same budget."""
    budget = Budget(3.0, 3.0, 2.5, 2.5)
    assert _kept([4.0, 0.5, 1.0], [NO_PREEMPTION, NO_PREEMPTION], [1, 2], budget) == ([0], True)
    assert _kept([4.0, 0.5, 1.0], [PRIO_PREEMPTION, RANK_PREEMPTION], [1, 2], budget) == ([0, 1], False)
    assert _kept([4.0, 0.5, 1.0], [NO_PREEMPTION], [1], budget) == ([0], False)
