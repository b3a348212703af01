"""How many cycles a simulation runs (``matchmaker.api.cycle_count``), by hand arithmetic."""

from __future__ import annotations

import math

import pytest

from matchmaker.api import MAX_CYCLES, MAX_TIME, cycle_count
from matchmaker.errors import StateError


@pytest.mark.parametrize(
    ("duration", "interval", "cycles"),
    [
        (0.0, 60.0, 1),  # the start alone
        (3600.0, 60.0, 61),  # 0, 60, ..., 3600: both ends
        (3599.0, 60.0, 60),  # 0 .. 3540: the end falls between two cycles
        (90.0, 300.0, 1),  # the interval is longer than the run
        (3600.0, 0.5, 7201),
    ],
)
def test_both_ends_are_cycles(duration, interval, cycles):
    assert cycle_count(1_700_000_000.0, duration, interval) == cycles


def test_the_most_cycles_run_and_one_more_is_refused():
    """``MAX_CYCLES - 1`` intervals of one second are ``MAX_CYCLES`` cycles; one more is too many."""
    assert cycle_count(0.0, MAX_CYCLES - 1.0, 1.0) == MAX_CYCLES
    with pytest.raises(StateError, match="cycles; at most"):
        cycle_count(0.0, float(MAX_CYCLES), 1.0)


@pytest.mark.parametrize("interval", [0.0, -60.0, math.nan, math.inf])
def test_an_interval_that_is_not_positive_and_finite_is_refused(interval):
    with pytest.raises(ValueError, match="interval must be a positive"):
        cycle_count(0.0, 3600.0, interval)


@pytest.mark.parametrize("duration", [-1.0, math.nan, math.inf])
def test_a_negative_or_infinite_duration_is_refused(duration):
    with pytest.raises(ValueError, match="duration must be a non-negative"):
        cycle_count(0.0, duration, 60.0)


def test_the_run_must_end_within_the_accepted_times():
    with pytest.raises(StateError, match="start:"):
        cycle_count(-1.0, 60.0, 60.0)
    with pytest.raises(StateError, match="start \\+ duration"):
        cycle_count(MAX_TIME - 30.0, 60.0, 60.0)
