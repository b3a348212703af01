"""A table carried to a new list of ads (``AdTable.follow``) is the table built afresh.

The expected values are the scalar evaluator's, and the expected columns a fresh
table's: a carried table re-reads only the rows its caller says changed and keeps its
shared results and row-only values, bringing them up to date when used; any row read
from an out-of-date result shows up as a difference.  Random tables go through several
generations of random updates (rows kept, rewritten in one attribute, dropped, added,
reordered), with the clock moving between generations.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_columnar_differential import _same, ads
from test_columnar_memo import ROW_EXPRS, fixed_ads, row_ads, truthy

from classad import ClassAd, set_strict_mode
from classad.columnar import AdTable, attribute_true, evaluate_attribute, evaluate_column
from classad.columnar.column import K_OTHER, K_STR
from classad.evaluate import evaluate_top, new_state
from classad.parser import parse_expr

# Knob-like expressions of the rows, shared through the memo; the first repeats row-only parts.
KNOBS = ["a > 1 && b < 2", "(a > 1 && b < 2) || TARGET.a == a", "CurrentTime - a > 0 || x", "TARGET.b + u"]
NAMES = ("Req", "x", "u", "a")


def _column_rows(table: AdTable, name: str) -> list:
    """What a column says of each row: (holds, node or decoded literal value)."""
    col = table.column(name)
    out = []
    for r in range(table.n):
        k = int(col.values.kind[r])
        if col.group[r] >= 0:
            out.append((int(col.holds[r]), "expr", id(col.nodes[col.group[r]])))
        elif k == K_STR:
            out.append((int(col.holds[r]), k, table.pool.strings[col.values.s[r]]))
        elif k == K_OTHER:
            out.append((int(col.holds[r]), k, repr(col.values.o[r])))  # type: ignore[index]
        else:
            out.append((int(col.holds[r]), k, int(col.values.i[r]), col.values.f[r].hex()))
    return out


def _same_columns(carried: AdTable, fresh: AdTable) -> None:
    for name in list(carried._columns):
        a, b = carried.column(name), fresh.column(name)
        assert _column_rows(carried, name) == _column_rows(fresh, name), name
        assert [id(n) for n in a.nodes] == [id(n) for n in b.nodes], name
        assert (a.all_literal, a.any_missing, a.one_expr) == (b.all_literal, b.any_missing, b.one_expr)


def _next_generation(draw: Any, old: list) -> tuple[list, np.ndarray, np.ndarray, dict]:
    """New rows from ``old`` and what ``follow`` is told about them."""
    rows: list = []
    sources: list[int] = []
    dirty: list[bool] = []
    changed: dict[str, list[int]] = {}
    for r, ad in enumerate(old):
        action = draw(st.sampled_from(["keep", "keep", "keep", "rewrite", "drop", "dirty"]))
        if action == "drop":
            continue
        if action == "rewrite":
            name = draw(st.sampled_from(["a", "b", "Req", "x", "u"]))
            text = draw(st.one_of(ROW_EXPRS, st.sampled_from(["0", "1", "2.5", '"s"', "undefined"])))
            ad = ClassAd(ad)
            if draw(st.booleans()) and name in ad:
                del ad[name]
            else:
                ad.set_node(name, parse_expr(text))
            changed.setdefault(name.lower(), []).append(len(rows))
        rows.append(ad)
        sources.append(r)
        dirty.append(action == "dirty")
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(rows)))
        rows.insert(at, ClassAd(draw(row_ads)))
        sources.insert(at, -1)
        dirty.insert(at, False)
        changed = {k: [i + (i >= at) for i in v] for k, v in changed.items()}
    n = len(rows)
    masks = {}
    for name, at_rows in changed.items():
        m = np.zeros(n, bool)
        m[at_rows] = True
        masks[name] = m
    return rows, np.array(sources, np.int64), np.array(dirty, bool), masks


def _same_truth(table: AdTable, name: str, side: str, fixed: Any, clock: Any, want: list, shared: bool) -> None:
    """:func:`attribute_true` on every row and on every other row: the rows whose value in
    ``want`` (the scalar evaluator's) a match counts as true."""
    for at in (None, np.arange(0, table.n, 2)):
        mask = attribute_true(
            table, name, row_side=side, other=fixed, state=new_state(clock=clock), rows=at, shared=shared
        )
        picked = want if at is None else [want[i] for i in at.tolist()]
        assert mask.tolist() == [truthy(v) for v in picked]


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    first=st.lists(st.one_of(row_ads, ads), min_size=1, max_size=6),
    fixed_texts=st.lists(fixed_ads, min_size=1, max_size=3),
    strict=st.booleans(),
    data=st.data(),
)
def test_a_followed_table_is_the_table_built_afresh(first, fixed_texts, strict, data):
    try:
        rows = [ClassAd(t) for t in first]
        fixeds = [ClassAd(t) for t in fixed_texts]
    except Exception:
        return
    knobs = [parse_expr(k) for k in KNOBS]
    set_strict_mode(strict)
    try:
        table = AdTable(rows)
        for generation in range(4):

            def clock(now: float = 1_700_000_000 + 300 * generation) -> float:
                return now

            for _round in range(2):  # twice: row-only parts are kept from their second use
                for fixed in fixeds:
                    for name in NAMES:
                        col = evaluate_attribute(table, name, other=fixed, state=new_state(clock=clock))
                        want = [r.evaluate(name, fixed, state=new_state(r, fixed, clock=clock)) for r in rows]
                        _same(col.to_values(), want)
                        _same_truth(table, name, "my", fixed, clock, want, False)
                        want = [fixed.evaluate(name, r, state=new_state(fixed, r, clock=clock)) for r in rows]
                        for shared in (False, True):
                            col = evaluate_attribute(
                                table, name, row_side="target", other=fixed, state=new_state(clock=clock), shared=shared
                            )
                            _same(col.to_values(), want)
                            _same_truth(table, name, "target", fixed, clock, want, shared)
                    for knob in knobs:
                        col = evaluate_column(knob, table, other=fixed, state=new_state(clock=clock), shared=True)
                        want = [evaluate_top(knob, r, new_state(r, fixed, clock=clock)) for r in rows]
                        _same(col.to_values(), want)
            _same_columns(table, AdTable(rows))
            rows, source, dirty, changed = _next_generation(data.draw, rows)
            table = table.follow(rows, source, dirty, changed)
            assert table.n == len(rows)
    finally:
        set_strict_mode(False)


def test_only_the_changed_rows_are_computed_again():
    """Hand count: 4 slots of 100..400 MB; Requirements = TARGET.R <= Memory && State ==
    "Unclaimed", R = 150: False, True, True, True.  Slot 2 becomes Claimed: False, True,
    False, True, found as a memo hit brought forward (no miss, so not every row again)."""
    rows = [
        ClassAd(f'[Memory = {m}; State = "Unclaimed"; Requirements = TARGET.R <= Memory && State == "Unclaimed"]')
        for m in (100, 200, 300, 400)
    ]
    job = ClassAd("[R = 150]")
    table = AdTable(rows)
    got = evaluate_attribute(table, "Requirements", other=job, state=new_state())
    assert got.to_values() == [False, True, True, True]
    changed = ClassAd(rows[2])
    changed["State"] = "Claimed"
    new_rows = [rows[0], rows[1], changed, rows[3]]
    n = 4
    state_rows = np.zeros(n, bool)
    state_rows[2] = True
    table = table.follow(new_rows, np.arange(n), np.zeros(n, bool), {"state": state_rows})
    memo = table.shared_memo()
    hits, misses = memo.hits, memo.misses
    got = evaluate_attribute(table, "Requirements", other=job, state=new_state())
    assert got.to_values() == [False, True, False, True]
    assert (memo.hits - hits, memo.misses - misses) == (1, 0)
    # A change the result did not read (Disk) leaves it as it is: no row computed again.
    table = table.follow(new_rows, np.arange(n), np.zeros(n, bool), {"disk": state_rows})
    entry = next(iter(table.shared_memo().entries[next(iter(table.shared_memo().entries))].values()))
    assert entry.deps >= {"memory", "state"} and "disk" not in entry.deps
    got = evaluate_attribute(table, "Requirements", other=job, state=new_state())
    assert got.to_values() == [False, True, False, True]


class _CountingRandom(random.Random):
    """A seeded source that counts its draws (``random()`` draws through ``randrange``)."""

    draws = 0

    def randrange(self, *args: Any, **kw: Any) -> int:  # type: ignore[override]
        self.draws += 1
        return super().randrange(*args, **kw)


def _scalar_values(ads_: list, name: str, other: Any, seed: int) -> list:
    """``name`` of each ad against ``other`` by the scalar evaluator, one source in order."""
    rng = random.Random(seed)
    out = []
    for ad in ads_:
        out.append(evaluate_top(ad.get_node(name), ad, new_state(ad, other, rng=rng)))
    return out


def _drawn(table: AdTable, name: str, side: str, other: Any, rows: np.ndarray) -> tuple[list, int]:
    """``name`` on ``rows`` through the shared memo, and how many numbers that drew."""
    rng = _CountingRandom(5)
    got = evaluate_attribute(table, name, row_side=side, other=other, state=new_state(rng=rng), rows=rows, shared=True)
    return got.to_values(), rng.draws


@pytest.mark.parametrize("side", ["my", "target"])
def test_an_expression_that_draws_is_evaluated_on_the_asked_rows_only(side):
    """Hand count: 4 rows of Memory 1..4, X = Memory * 1000 + random(1000) (of the rows, or
    of the fixed ad against each row, where Memory falls through to the row).  Asked on
    rows 1 and 3 of a new table, it draws twice, once per asked row (none for the rows not
    asked, which a new shared result would hold), giving 2xxx and 4xxx: the scalar
    evaluator's values for those two rows, in row order, from the same seeded source.  The
    same again once the table's memo knows that X draws."""
    text = "Memory * 1000 + random(1000)"
    if side == "my":
        ads_ = [ClassAd(f"[Memory = {m}; X = {text}]") for m in (1, 2, 3, 4)]
        fixed = ClassAd("[R = 1]")
    else:
        ads_ = [ClassAd(f"[Memory = {m}]") for m in (1, 2, 3, 4)]
        fixed = ClassAd(f"[X = {text}]")
    table = AdTable(ads_)
    for _ in range(2):
        got, draws = _drawn(table, "X", side, fixed, np.array([1, 3]))
        assert draws == 2
        assert [v // 1000 for v in got] == [2, 4]
        source = random.Random(5)
        expected = [
            evaluate_top(ad.get_node("X"), ad, new_state(ad, fixed, rng=source))
            if side == "my"
            else evaluate_top(fixed.get_node("X"), fixed, new_state(fixed, ad, rng=source))
            for ad in (ads_[1], ads_[3])
        ]
        assert got == expected


def test_a_carried_result_is_brought_up_to_date_without_drawing_for_rows_not_asked():
    """Hand count: Requirements = Memory > 150 over rows of Memory 100..400 (no draw):
    False, True, True, True, kept.  Row 2 is rewritten to Requirements = random(10) >= 0
    && Memory > 150 (True whatever the draw).  Asked on rows 0, 1 and 3 of the carried
    table: False, True, True and no draw, as on a new table (row 2, not asked, must not
    draw while the kept result is brought up to date).  Asked on every row: one draw,
    row 2's, and False, True, True, True."""
    rows = [ClassAd(f"[Memory = {m}; Requirements = Memory > 150]") for m in (100, 200, 300, 400)]
    job = ClassAd("[R = 1]")
    table = AdTable(rows)
    assert _drawn(table, "Requirements", "my", job, table.all_rows) == ([False, True, True, True], 0)
    new_rows = list(rows)
    new_rows[2] = ClassAd("[Memory = 300; Requirements = random(10) >= 0 && Memory > 150]")
    dirty = np.array([False, False, True, False])
    table = table.follow(new_rows, np.arange(4), dirty, {})
    asked = np.array([0, 1, 3])
    assert _drawn(AdTable(new_rows), "Requirements", "my", job, asked) == ([False, True, True], 0)
    assert _drawn(table, "Requirements", "my", job, asked) == ([False, True, True], 0)
    assert _drawn(table, "Requirements", "my", job, table.all_rows) == ([False, True, True, True], 1)


def test_a_request_value_that_draws_is_not_read_to_look_up_a_stored_result():
    """Hand count: 4 rows of Cpus 1..4 with Requirements = TARGET.RequestCpus <= MY.Cpus.
    A request with RequestCpus = 2 stores a result under the value it read (False, True,
    True, True; no draw).  A request with RequestCpus = 1 + random(2) (1 or 2) asked on
    rows 1 and 3 (Cpus 2 and 4: true whatever is drawn) draws twice, once per asked row,
    as the scalar evaluator does for the two pairs -- on the table that holds the stored
    result as on a new one: looking the stored results up must not read (and draw) the
    request's RequestCpus, or the draws of a run would depend on what its memo held."""
    rows = [ClassAd(f"[Cpus = {c}; Requirements = TARGET.RequestCpus <= MY.Cpus]") for c in (1, 2, 3, 4)]
    literal, drawing = ClassAd("[RequestCpus = 2]"), ClassAd("[RequestCpus = 1 + random(2)]")
    asked = np.array([1, 3])
    assert _drawn(AdTable(rows), "Requirements", "my", drawing, asked) == ([True, True], 2)
    table = AdTable(rows)
    assert _drawn(table, "Requirements", "my", literal, table.all_rows) == ([False, True, True, True], 0)
    assert _drawn(table, "Requirements", "my", drawing, asked) == ([True, True], 2)
    assert _drawn(table, "Requirements", "my", literal, table.all_rows) == ([False, True, True, True], 0)
