"""A cycle's copy of an ad read in bulk (``NegotiationAd.plains``) reads as one name at a time.

The expected values are the one-name reader's (``NegotiationAd.plain``), itself checked
against the ad's own storage elsewhere: the bulk reader must give the very same object
for every name (a node by identity, a bare value of the same type and value), whether the
copy's source is a compacted ad (shared layout, template values and the ad's own) or a
dict, with the copy's own entries over it, and log the same names when recording.  A
table carried to the copies (``AdTable.follow``, which reads changed rows in bulk) must
hold the columns of a table built afresh from them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from classad import ClassAd
from classad.columnar import AdTable
from classad.columnar.column import K_STR
from classad.parser import parse_expr
from matchmaker.cycle.ephemeral import NegotiationAd

NAMES = ["a", "b", "c", "d", "e"]
VALUES = st.sampled_from(["1", "2", "0", "2.5", "true", '"s"', '"t"', "undefined", "error", "{1, 2}", "a + 1", "b"])
SOURCE = st.dictionaries(st.sampled_from(NAMES), VALUES, max_size=5)
SETTINGS = settings(max_examples=120, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _ad(values: dict[str, str], compact: bool) -> ClassAd:
    ad = ClassAd("[" + "; ".join(f"{k} = {v}" for k, v in values.items()) + "]")
    return ad.compact() if compact else ad


def _copy(source: ClassAd, own: dict[str, str]) -> NegotiationAd:
    copy = NegotiationAd(source)
    copy.set_entries((k, (k.upper(), parse_expr(v))) for k, v in own.items())
    return copy


def _same_object(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and type(a) in (bool, int, float, str) and a == b)


@SETTINGS
@given(
    sources=st.lists(st.tuples(SOURCE, st.booleans()), min_size=1, max_size=5),
    owns=st.lists(SOURCE, min_size=1, max_size=5),
    names=st.permutations(NAMES + ["missing"]),
)
def test_bulk_reading_gives_each_names_plain_form(sources, owns, names):
    ads = [_ad(values, compact) for values, compact in sources]
    for i, own in enumerate(owns):
        copy = _copy(ads[i % len(ads)], own)
        keys = tuple(names)
        one, bulk = [copy.plain(k) for k in keys], copy.plains(keys)
        assert all(_same_object(x, y) for x, y in zip(one, bulk)), (one, bulk)
        assert len(one) == len(bulk)
        copy.reads = []
        copy.plains(keys)
        assert copy.reads == list(keys)


def _column_state(table: AdTable, name: str) -> list:
    col = table.column(name)
    v = col.values
    rows = []
    for r in range(table.n):
        s = table.pool.strings[v.s[r]] if v.kind[r] == K_STR else None
        node = id(col.nodes[col.group[r]]) if col.group[r] >= 0 else None
        obj = repr(v.o[r]) if v.o is not None else None
        rows.append((int(col.holds[r]), int(v.kind[r]), int(v.i[r]), float(v.f[r]).hex(), s, obj, node))
    return rows


@SETTINGS
@given(
    sources=st.lists(st.tuples(SOURCE, st.booleans()), min_size=1, max_size=6),
    owns=st.lists(SOURCE, min_size=2, max_size=8),
    later=st.lists(SOURCE, min_size=2, max_size=8),
    data=st.data(),
)
def test_a_table_followed_over_copies_is_the_table_built_afresh(sources, owns, later, data):
    ads = [_ad(values, compact) for values, compact in sources]
    rows = [_copy(ads[i % len(ads)], own) for i, own in enumerate(owns)]
    table = AdTable(rows, NAMES)
    n = len(later)
    source = np.array([data.draw(st.integers(-1, len(rows) - 1)) for _ in range(n)], np.int64)
    dirty = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
    changed = {k: np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool) for k in NAMES[:3]}
    new_rows = []
    for r in range(n):
        s = int(source[r])
        if s >= 0 and not dirty[r] and not any(m[r] for m in changed.values()):
            new_rows.append(rows[s])  # unchanged: the same copy again
        elif s >= 0 and not dirty[r]:
            touched = {k: later[r][k] for k in NAMES[:3] if changed[k][r] and k in later[r]}
            copy = _copy(ads[s % len(ads)], owns[s])
            copy.set_entries((k, (k, parse_expr(v))) for k, v in touched.items())
            new_rows.append(copy)
        else:
            new_rows.append(_copy(ads[r % len(ads)], later[r]))
    carried = table.follow(new_rows, source, dirty, changed)
    fresh = AdTable(new_rows, NAMES)
    for name in NAMES:
        assert _column_state(carried, name) == _column_state(fresh, name), name
