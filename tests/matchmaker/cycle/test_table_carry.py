"""The slot table a simulation carries between cycles (matchmaker.cycle.table_carry).

Expected values by hand: which rows a cycle's annotated copies change, given which slot
ads and added attributes changed since the last cycle.
"""

from __future__ import annotations

import numpy as np

from classad import ClassAd, ast
from matchmaker.cycle.ephemeral import NegotiationAd
from matchmaker.cycle.table_carry import TableLine


def _copy(src: ClassAd, **added: object) -> NegotiationAd:
    ad = NegotiationAd(src)
    for name, value in added.items():
        ad.set_node(name, ast.Literal(value))
    return ad


def test_rows_follow_their_slot_ads_and_added_attributes() -> None:
    """Cycle 1: slots a, b, c (b and c claimed, RemoteUserPrio 500.0 and 700.0).
    Cycle 2: b's priority becomes 510.0, c's stays 700.0 (a new node of equal value), a is
    rewritten (a new ad), d is new and the order is d, c, b, a'.  Expected: sources
    -1, 2, 1, -1; dirty rows 0 and 3; RemoteUserPrio changed on row 2 only."""
    a, b, c = (ClassAd(f'[Name = "{n}"; Memory = {m}]') for n, m in (("a", 1), ("b", 2), ("c", 3)))
    line = TableLine()
    first = line.table_of([_copy(a), _copy(b, RemoteUserPrio=500.0), _copy(c, RemoteUserPrio=700.0)], [a, b, c])
    assert first.column("remoteuserprio").values.to_values()[1:] == [500.0, 700.0]
    a2 = ClassAd(a)
    a2["Memory"] = 5
    d = ClassAd('[Name = "d"; Memory = 4]')
    ads = [_copy(d), _copy(c, RemoteUserPrio=700.0), _copy(b, RemoteUserPrio=510.0), _copy(a2)]
    table = line.table_of(ads, [d, c, b, a2])
    step = table.history.steps[-1]
    assert step.source.tolist() == [-1, 2, 1, -1]
    assert step.dirty.tolist() == [True, False, False, True]
    assert {k: v.tolist() for k, v in step.changed.items()} == {"remoteuserprio": [False, False, True, False]}
    assert table.column("memory").values.to_values() == [4, 3, 2, 5]
    assert table.column("remoteuserprio").values.to_values()[1:3] == [700.0, 510.0]


def test_an_added_attribute_swapped_for_another_changes_both_columns() -> None:
    """Same number of added attributes, other names: RemoteUserPrio dropped, RemoteGroup
    added; both columns change on that row.  An equal integer and real are not the same."""
    s = ClassAd('[Name = "s"]')
    line = TableLine()
    first = line.table_of([_copy(s, RemoteUserPrio=1.0, X=1)], [s])
    for name in ("remotegroup", "remoteuserprio", "x"):
        first.column(name)  # columns a table has not read are read afresh, not followed
    table = line.table_of([_copy(s, RemoteGroup="g", X=1.0)], [s])
    step = table.history.steps[-1]
    assert sorted(step.changed) == ["remotegroup", "remoteuserprio", "x"]
    assert not step.dirty.any()
    assert table.column("x").values.to_values() == [1.0]
    assert np.array_equal(table.column("remoteuserprio").holds, np.array([1], np.int8))  # held nothing now
