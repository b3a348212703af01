"""The columnar candidate order (``candidate_order``, ``head_order``) against Python's sort
of the same keys with the position last (the slot list order of equal candidates)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from matchmaker.cycle.columnar_match import candidate_order, head_order, smallest_positions

# Few distinct values, so that ties are common; -0.0 sorts as 0.0, infinities at the ends.
_values = st.sampled_from([float("-inf"), -7.0, -0.0, 0.0, 1.0, 2.5, float("inf")])


@st.composite
def _keys(draw: st.DrawFn) -> list[np.ndarray]:
    n = draw(st.integers(0, 300))
    times = draw(st.sampled_from([1, 1, 3]))  # past 512 positions, keys that vary are found first
    keys = []
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            keys.append(np.full(n * times, draw(_values)))  # the same on every row
        else:
            values = np.array(draw(st.lists(_values, min_size=n, max_size=n)), dtype=np.float64)
            keys.append(np.tile(values, times) if draw(st.booleans()) else np.repeat(values, times))
    return keys


def _python_order(keys: list[np.ndarray]) -> list[int]:
    n = len(keys[0])
    return sorted(range(n), key=lambda p: (*(float(k[p]) for k in keys), p))


@settings(max_examples=300, deadline=None)
@given(keys=_keys(), k=st.integers(1, 40))
def test_candidate_order_and_its_head_match_python_sort(keys, k):
    """The full order is Python's; the head is at least ``k`` long (or everything) and is
    the start of it."""
    want = _python_order(keys)
    assert candidate_order(keys).tolist() == want
    head = head_order(keys, k).tolist()
    assert len(head) >= min(k, len(want))
    assert head == want[: len(head)]


def test_a_head_of_many_rows_sorts_only_the_front():
    """2,000 distinct first keys: the head of 32 is the 32 smallest, not the whole list."""
    first = np.arange(2000, 0, -1, dtype=np.float64)  # descending: the smallest come last
    head = head_order([first, np.zeros(2000)], 32).tolist()
    assert head == list(range(1999, 1967, -1))


def _at_most_kth(a: np.ndarray, k: int) -> list[int]:
    """The positions of the values at most the ``k``-th smallest, from the definition."""
    return np.flatnonzero(a <= np.partition(a, k - 1)[k - 1]).tolist()


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(_values, min_size=1, max_size=40).flatmap(
        lambda pool: st.lists(st.sampled_from(pool), min_size=1, max_size=3000)
    ),
    k=st.integers(1, 40),
)
def test_smallest_positions_are_the_partitions(values, k):
    """The positions found among those of the values at most a sampled guess are those of
    every value at most the ``k``-th smallest of all (``np.partition``'s), with many ties,
    infinities and both zeros."""
    a = np.array(values, dtype=np.float64)
    k = min(k, len(a))
    assert smallest_positions(a, k).tolist() == _at_most_kth(a, k)


def test_smallest_positions_when_the_guess_leaves_too_few():
    """4,096 values, the 32 smallest wanted: the sample is every 16th value, and its 7th
    smallest is the guess.  When the only small values are the sampled ones (0..255, the
    rest 1,000), just 7 values are at most the guess (0..6), fewer than 32: every value is
    partitioned, and the positions are those of 0..31.  Descending values 4,096..1: the
    last 32.  Both are guessed right or not alike: the positions are the same."""
    a = np.full(4096, 1000.0)
    a[::16] = np.arange(256, dtype=np.float64)  # the sample holds 0..255 and 1000s
    assert smallest_positions(a, 32).tolist() == list(range(0, 512, 16))
    a = np.arange(4096, 0, -1, dtype=np.float64)
    assert smallest_positions(a, 32).tolist() == list(range(4064, 4096))
