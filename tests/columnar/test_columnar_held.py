"""Names some rows may hold and others not: ``MY``, ``TARGET``, ``OTHER``, ``CurrentTime``
and unscoped names that fall through to the fixed ad.

The walk skips looking at each row when the table knows that no row holds a name
(``AttrColumn.held_nowhere``) or that every row does (``any_missing`` false); the
expected values are the scalar evaluator's, on every row and on random subsets.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st
from test_columnar_differential import _clock, _same

from classad import ClassAd
from classad.columnar import AdTable, evaluate_attribute, evaluate_column
from classad.evaluate import evaluate_top, new_state
from classad.parser import parse_expr

# Attributes a row may or may not hold, some of them names with a meaning of their own.
OPTIONAL = ["MY = [a = 7]", "TARGET = 3", "OTHER = 4", "CurrentTime = 5", "z = 9", "a = 2"]
EXPRS = st.sampled_from(
    [
        "MY.a",
        "TARGET.a",
        "OTHER.a",
        "CurrentTime - 1",
        "z + 1",
        "a + TARGET.b",
        "MY.z =?= undefined",
        "TARGET.b > a",
    ]
)
rows_ = st.lists(st.lists(st.booleans(), min_size=len(OPTIONAL), max_size=len(OPTIONAL)), min_size=1, max_size=6)


def _row(holds: list[bool], expr: str) -> ClassAd:
    parts = [text for text, held in zip(OPTIONAL, holds) if held]
    return ClassAd("[" + "; ".join([*parts, f"E = {expr}"]) + "]")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(holds=rows_, expr=EXPRS, fixed_z=st.booleans(), data=st.data())
def test_names_held_by_some_rows_only(holds, expr, fixed_z, data):
    rows = [_row(h, expr) for h in holds]
    fixed = ClassAd("[a = 1; b = 2" + ("; z = 30]" if fixed_z else "]"))
    table = AdTable(rows)
    subset = np.array(sorted(set(data.draw(st.lists(st.integers(0, len(rows) - 1), max_size=6)))), np.intp)
    node = parse_expr(expr)
    for at in (None, subset):
        picked = rows if at is None else [rows[i] for i in at.tolist()]
        got = evaluate_attribute(table, "E", other=fixed, state=new_state(clock=_clock), rows=at)
        _same(got.to_values(), [r.evaluate("E", fixed, state=new_state(r, fixed, clock=_clock)) for r in picked])
        for shared in (False, True):
            got = evaluate_column(node, table, other=fixed, state=new_state(clock=_clock), rows=at, shared=shared)
            _same(got.to_values(), [evaluate_top(node, r, new_state(r, fixed, clock=_clock)) for r in picked])


def test_held_nowhere_and_any_missing():
    """Three rows: ``x`` in none, ``y`` in the second only, ``w`` in all."""
    table = AdTable([ClassAd("[w = 1]"), ClassAd("[w = 2; y = 3]"), ClassAd("[w = 4]")])
    x, y, w = table.column("x"), table.column("y"), table.column("w")
    assert (x.held_nowhere, x.any_missing) == (True, True)
    assert (y.held_nowhere, y.any_missing) == (False, True)
    assert (w.held_nowhere, w.any_missing) == (False, False)
    assert AdTable([]).column("x").held_nowhere


def _only_entry(table: AdTable):
    memo = table.shared_memo()
    (lru,) = memo.entries.values()
    (entry,) = lru.values()
    return entry


def test_a_brought_result_keeps_or_extends_its_reads():
    """Req = a > 1 && TARGET.b > 0 against [b = 1].  Both rows have a = 0: the && stops
    on every row and nothing of the fixed ad is read (no keys).  Row 1 becomes a = 5: the
    bring computes it again, reads TARGET.b (1 > 0: true) and the result is stored under
    that read too: [False, True].  Row 0 becomes a = -1: computed again, b is read on no
    row changed, the reads are the same and the stored result keeps its very keys."""
    req = "Req = a > 1 && TARGET.b > 0"
    rows = [ClassAd(f"[a = 0; {req}]"), ClassAd(f"[a = 0; {req}]")]
    job = ClassAd("[b = 1]")
    table = AdTable(rows)
    assert evaluate_attribute(table, "Req", other=job, state=new_state()).to_values() == [False, False]
    assert _only_entry(table).keys == ()
    n = 2
    dirty = np.array([False, True])
    rows = [rows[0], ClassAd(f"[a = 5; {req}]")]
    table = table.follow(rows, np.arange(n), dirty, {})
    assert evaluate_attribute(table, "Req", other=job, state=new_state()).to_values() == [False, True]
    entry = _only_entry(table)
    assert [k[:2] for k in entry.keys] == [("a", "b")]
    rows = [ClassAd(f"[a = -1; {req}]"), rows[1]]
    table = table.follow(rows, np.arange(n), ~dirty, {})
    assert evaluate_attribute(table, "Req", other=job, state=new_state()).to_values() == [False, True]
    again = _only_entry(table)
    assert again is not entry and again.generation == 2
    assert again.keys is entry.keys and again.tokens is entry.tokens
