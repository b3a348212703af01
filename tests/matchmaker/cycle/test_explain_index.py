"""The explanation's index of the cycle's slots (matchmaker.cycle.explain._Index).

When every slot is a group of its own (the columnar matcher's classes) the index is made
without a step per slot; it must be what the general construction makes of the same
slots: the same groups, claim buckets, holders and lookups by slot name.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings, strategies as st

from classad.ad import ClassAd
from matchmaker.cycle.columnar_match import SlotTable
from matchmaker.cycle.evaluator import EachAlone
from matchmaker.cycle.explain import _Index

ENTRY = st.tuples(
    st.sampled_from((None, "alice", "bob", "carol")),  # the claim's holder
    st.booleans(),  # claimed idle
    st.integers(0, 5),  # consumption policy: 0 has one
    st.sampled_from(("s1", "s2", "s3", "s4", "s5", "s6")),  # names may repeat
)

FIELDS = ("holder_code", "b_group", "b_holder", "b_idle", "b_size", "free_count")
NAMES = ("s1", "s2", "s3", "s4", "s5", "s6", "s7")


def _entries(specs: list) -> list:
    return [
        SimpleNamespace(
            remote=remote,
            claimed_idle=idle if remote else False,
            cp=("Cpus",) if cp == 0 else None,
            cls=None,
            slot=SimpleNamespace(name=name, ad=ClassAd()),
            index=k,  # the slot's place (distinct, increasing)
            ad=ClassAd(),
            alive=True,
            weight=1.0,
        )
        for k, (remote, idle, cp, name) in enumerate(specs)
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(ENTRY, max_size=12), st.lists(st.sampled_from(NAMES), max_size=8), st.booleans())
def test_each_slot_alone_is_indexed_as_the_general_construction_does(
    specs: list, matched: list, from_table: bool
) -> None:
    """Also: each name's group and bucket, and the matches counted (some names matched
    twice, or not indexed), are the same."""
    entries = _entries(specs)
    kept = [e for e in entries if e.cp is None]
    # No classes: every slot alone; by the slot table of the columnar matcher when it
    # holds the same entries (those without a consumption policy), else by the entries.
    table = SlotTable(EachAlone(kept)) if from_table else None
    fast = _Index(entries, table)
    assert fast.table is (table.table if table is not None else None)  # the representatives' table
    general = _Index.__new__(_Index)
    general.alone, general.seen = None, 0
    general._grouped(kept)
    general.dead_free, general.dead_all = np.zeros(len(general.reps), np.int64), np.zeros(len(general.reps), np.int64)
    general.b_dead = np.zeros(len(general.b_first), np.int64)
    for name in NAMES:
        assert fast.place(name) == general.place(name), name
    for index in (fast, general):
        index.catch_up([SimpleNamespace(slot=name) for name in matched])
        index.catch_up([SimpleNamespace(slot=name) for name in matched + ["s1"]])
    for name in ("dead_free", "dead_all", "b_dead", "seen"):
        a, b = getattr(fast, name), getattr(general, name)
        assert (a.tolist() if isinstance(a, np.ndarray) else a) == (b.tolist() if isinstance(b, np.ndarray) else b)
    assert fast.consumption == [e for e in entries if e.cp is not None]
    assert [id(e) for e in fast.reps] == [id(e) for e in general.reps]
    assert [id(e) for e in fast.b_first] == [id(e) for e in general.b_first]
    for name in FIELDS:
        a, b = getattr(fast, name), getattr(general, name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.tolist() == b.tolist(), name
        else:
            assert a == b and list(a) == list(b), name


def test_a_claim_is_its_own_bucket_by_holder_and_idleness() -> None:
    """By hand: s1 free, s2 claimed by alice (busy), s3 by bob (idle), s4 by alice (idle),
    s5 has a consumption policy (examined apart).  Groups 0-3; buckets in group order;
    holders coded in order of appearance: alice 0, bob 1."""
    index = _Index(
        _entries([(None, False, 1, "s1"), ("alice", False, 1, "s2"), ("bob", True, 1, "s3"), ("alice", True, 1, "s4")])
        + _entries([(None, False, 0, "s5")])
    )
    assert index.free_count.tolist() == [1, 0, 0, 0]
    assert index.b_group.tolist() == [1, 2, 3]
    assert index.b_holder.tolist() == [0, 1, 0] and index.holder_code == {"alice": 0, "bob": 1}
    assert index.b_idle.tolist() == [False, True, True]
    assert index.place("s3") == (2, ("bob", True)) and index.place("s1") == (0, None)
    assert [e.slot.name for e in index.consumption] == ["s5"]
