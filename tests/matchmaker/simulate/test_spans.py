"""ClaimSpans keeps claim spans as columns: reading them back gives the ClaimSpan records
they were made of, with every value as given (type included), and ordering them by start
gives what Python's stable sort by ``(start, slot)`` gives the list of records."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, strategies as st

from matchmaker.simulate import ClaimSpan, ClaimSpans

NAMES = st.sampled_from(["slot1@a", "slot1_1@a", "slot1_10@a", "slot2@b", "alice@x", "bob@x", "", "é@ü"])
NUMBERS = st.one_of(
    st.floats(allow_nan=False),
    st.sampled_from([0.0, -0.0, 1.0, 300.0, 1.7e9]),
    st.integers(-(2**70), 2**70),
)
FLOATS = st.one_of(st.floats(allow_nan=False), st.sampled_from([0.0, 300.0, 600.0, 1.7e9]))


def spans_of(numbers: st.SearchStrategy, ends: st.SearchStrategy) -> st.SearchStrategy[list[ClaimSpan]]:
    return st.lists(st.builds(ClaimSpan, NAMES, NAMES, numbers, numbers, ends), max_size=40)


def exact(spans) -> list[tuple]:
    """Each span's fields with their types: 1 and 1.0, 0.0 and -0.0 differ."""
    return [tuple((type(v), repr(v)) for v in dataclasses.astuple(s)) for s in spans]


@given(spans_of(FLOATS, st.one_of(st.none(), FLOATS)))
def test_float_spans_read_back_as_given(spans):
    kept = ClaimSpans(spans)
    assert len(kept) == len(spans)
    assert exact(kept) == exact(spans)
    assert kept == spans and list(kept) == spans
    assert exact([kept[k] for k in range(-len(spans), 0)]) == exact(spans)
    assert exact(kept[1::2]) == exact(spans[1::2])


@given(spans_of(NUMBERS, st.one_of(st.none(), NUMBERS)))
def test_any_numbers_read_back_as_given(spans):
    kept = ClaimSpans()
    for s in spans:
        kept.append(s)
    assert exact(kept) == exact(spans)


@given(spans_of(FLOATS, st.one_of(st.none(), FLOATS)))
def test_by_start_is_the_stable_sort_by_start_then_slot(spans):
    expected = sorted(spans, key=lambda s: (s.start, s.slot))
    ordered = ClaimSpans(spans).by_start()
    assert exact(ordered) == exact(expected)
    assert ordered == ClaimSpans(expected)


@given(spans_of(NUMBERS, st.one_of(st.none(), NUMBERS)))
def test_by_start_with_ints_sorts_as_python(spans):
    expected = sorted(spans, key=lambda s: (s.start, s.slot))
    assert exact(ClaimSpans(spans).by_start()) == exact(expected)


def test_by_start_ties_keep_their_order():
    # the same start and slot twice (a name given twice in a pool): the order kept is the input's
    spans = [
        ClaimSpan("s@b", "bob", 2.0, 600.0, None),
        ClaimSpan("s@a", "carl", 1.0, 600.0, 900.0),
        ClaimSpan("s@a", "alice", 1.0, 600.0, None),
        ClaimSpan("s@z", "dora", 1.0, 300.0, 600.0),
    ]
    got = [(s.slot, s.customer) for s in ClaimSpans(spans).by_start()]
    assert got == [("s@z", "dora"), ("s@a", "carl"), ("s@a", "alice"), ("s@b", "bob")]


def test_nan_start_sorts_as_python():
    spans = [ClaimSpan("b", "x", 1.0, 5.0), ClaimSpan("a", "x", 1.0, math.nan), ClaimSpan("c", "x", 1.0, 1.0)]
    expected = sorted(spans, key=lambda s: (s.start, s.slot))
    assert [s.slot for s in ClaimSpans(spans).by_start()] == [s.slot for s in expected]


def test_a_span_read_is_a_copy_and_has_no_dict():
    kept = ClaimSpans([ClaimSpan("slot1@a", "alice", 1.0, 0.0)])
    first = kept[0]
    first.end = 10.0
    assert kept[0].end is None
    assert not hasattr(first, "__dict__")
    assert kept[0].charge(100.0) == 100.0 and first.charge(100.0) == 10.0
    with pytest.raises(IndexError):
        kept[1]
    with pytest.raises(IndexError):
        kept[-2]
