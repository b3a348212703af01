"""The columnar candidate order (``candidate_order``, ``head_order``) against Python's sort
of the same keys with the position last (the slot list order of equal candidates)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from matchmaker.cycle.columnar_match import candidate_order, head_order

# Few distinct values, so that ties are common; -0.0 sorts as 0.0, infinities at the ends.
_values = st.sampled_from([float("-inf"), -7.0, -0.0, 0.0, 1.0, 2.5, float("inf")])


@st.composite
def _keys(draw: st.DrawFn) -> list[np.ndarray]:
    n = draw(st.integers(0, 300))
    keys = []
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            keys.append(np.full(n, draw(_values)))  # the same on every row
        else:
            keys.append(np.array(draw(st.lists(_values, min_size=n, max_size=n)), dtype=np.float64))
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
