"""Cheap expressions computed afresh instead of stored, and combinations evaluated as one
boolean array (classad.columnar.compile: ``Run._afresh``, ``Run._fused``).

A shared result of a cheap expression (comparisons, arithmetic, names and selections under
``&&``, ``||`` and ``!``) that seldom serves a later run as it is -- every request asks with
other values, or the table moved on since -- is no longer stored: each run computes it.  A
``&&`` / ``||`` / ``!`` combination of such parts over a big table is evaluated as one
boolean array when every part is a boolean on every row.  Neither may change a value nor
a random draw: the expected values are the scalar evaluator's, or counted by hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import test_columnar_memo as memo_tests
import test_table_follow as follow_tests
from hypothesis import HealthCheck, given, settings, strategies as st
from test_columnar_differential import ads
from test_columnar_memo import FIXED_EXPRS, fixed_ads, fixed_parts, row_ads
from test_table_follow import _drawn

from classad import ClassAd
from classad.columnar import (
    AdTable,
    attribute_true,
    compile as columnar_compile,
    evaluate_attribute,
    evaluate_column,
    memo,
)
from classad.evaluate import evaluate_top, new_state
from classad.parser import parse_expr
from classad.values import UNDEFINED

# The differentials below run test_columnar_memo's and test_table_follow's again, reached
# through their modules so that they are not collected twice.
_FEW = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


@contextmanager
def afresh_at_once() -> Iterator[None]:
    """A cheap key is judged at its first lookup (so computed afresh from its second on,
    unless that first found a result as it was), and combinations are evaluated as one
    array on tables of any size."""
    saved = memo.DIRECT_AFTER, columnar_compile._AHEAD_ROWS
    memo.DIRECT_AFTER, columnar_compile._AHEAD_ROWS = 1, 0
    try:
        yield
    finally:
        memo.DIRECT_AFTER, columnar_compile._AHEAD_ROWS = saved


@_FEW
@given(
    rows=st.lists(st.one_of(row_ads, ads), min_size=2, max_size=7),
    fixed_texts=st.lists(fixed_ads, min_size=2, max_size=6),
    subsets=st.lists(st.sampled_from(["all", "even", "odd", "first", "last"]), min_size=1, max_size=3),
    strict=st.booleans(),
)
def test_shared_row_attributes_computed_afresh(rows, fixed_texts, subsets, strict):
    """test_columnar_memo's differential, with every cheap key judged at once and every
    combination tried as one array (each row parses its own nodes, so a row attribute is
    cheap only with a single row's expressions; the hand tests share nodes)."""
    with afresh_at_once():
        memo_tests.test_shared_results_equal_fresh_evaluation.hypothesis.inner_test(rows, fixed_texts, subsets, strict)


@_FEW
@given(
    rows=st.lists(st.one_of(row_ads, ads), min_size=1, max_size=6),
    req=FIXED_EXPRS,
    parts=st.lists(fixed_parts, min_size=2, max_size=6),
    strict=st.booleans(),
)
def test_shared_fixed_attributes_computed_afresh(rows, req, parts, strict):
    """test_columnar_memo's differential of the fixed side, every cheap key judged at once."""
    with afresh_at_once():
        memo_tests.test_shared_fixed_side_attributes_equal_fresh_evaluation.hypothesis.inner_test(
            rows, req, parts, strict
        )


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    first=st.lists(st.one_of(row_ads, ads), min_size=1, max_size=6),
    fixed_texts=st.lists(fixed_ads, min_size=1, max_size=3),
    strict=st.booleans(),
    data=st.data(),
)
def test_followed_tables_with_results_computed_afresh(first, fixed_texts, strict, data):
    """test_table_follow's differential (generations of a carried table), every cheap key
    judged at once."""
    with afresh_at_once():
        follow_tests.test_a_followed_table_is_the_table_built_afresh.hypothesis.inner_test(
            first, fixed_texts, strict, data
        )


def _holding(ad: ClassAd, **nodes: str) -> ClassAd:
    """``ad`` holding each expression as one node shared with every other ad given it (as
    the ads of a file that hold the same text do)."""
    for name, text in nodes.items():
        node = _NODES.get(text)
        if node is None:
            node = _NODES[text] = parse_expr(text)
        ad.set_node(name, node)
    return ad


_NODES: dict = {}


def _limits_table() -> AdTable:
    return AdTable(
        [
            _holding(
                ClassAd(f"[Memory = {m}; KeyboardIdle = {k}]"),
                Limits="TARGET.RequestMemory <= Memory",
                Start='KeyboardIdle > 10 && TARGET.Owner == "a"',
            )
            for m, k in ((100, 5), (200, 50), (300, 500))
        ]
    )


def test_a_cheap_result_seldom_found_as_it_is_is_no_longer_stored():
    """By hand: slots (Memory, KeyboardIdle) (100, 5), (200, 50), (300, 500).  Limits =
    TARGET.RequestMemory <= Memory for RequestMemory 150, 250, 50, 350: [F, T, T],
    [F, F, T], [T, T, T], [F, F, F] -- four lookups, none found: with DIRECT_AFTER = 4
    the key is computed afresh from then on and its stored results are forgotten.  Asked
    again with 150 (and on rows 1 and 2): [F, T, T] ([T, T]), nothing stored.  Start =
    KeyboardIdle > 10 && TARGET.Owner == "a" for four requests of owner "a": [F, T, T],
    found as it was three times out of four, so still stored."""
    table = _limits_table()
    shared = table.shared_memo()
    saved = memo.DIRECT_AFTER
    memo.DIRECT_AFTER = 4
    try:
        wants = {150: [False, True, True], 250: [False, False, True], 50: [True] * 3, 350: [False] * 3}
        for request_memory, want in wants.items():
            job = ClassAd(f'[RequestMemory = {request_memory}; Owner = "a"]')
            assert evaluate_attribute(table, "Limits", other=job, state=new_state()).to_values() == want
            assert evaluate_attribute(table, "Start", other=job, state=new_state()).to_values() == [False, True, True]
        limits = next(k for k in shared.lookups if k[0] == "limits")
        start = next(k for k in shared.lookups if k[0] == "start")
        assert shared.lookups[limits] == [4, 0] and limits in shared.direct
        assert shared.lookups[start] == [4, 3] and start not in shared.direct
        assert not shared.entries[limits] and len(shared.entries[start]) == 1
        job = ClassAd('[RequestMemory = 150; Owner = "a"]')
        assert evaluate_attribute(table, "Limits", other=job, state=new_state()).to_values() == [False, True, True]
        mask = attribute_true(table, "Limits", other=job, state=new_state(), rows=np.array([1, 2]))
        assert mask.tolist() == [True, True]
        assert not shared.entries[limits]
    finally:
        memo.DIRECT_AFTER = saved


def test_an_expression_computed_afresh_draws_only_for_the_asked_rows():
    """By hand: P = Memory > 0 && R over rows of Memory 1..4 with R = true: P is cheap,
    judged at its first lookup (a miss) and computed afresh from then on: True on every
    row, no draw.  Row 2 is then rewritten to R = random(10) >= 0 (true whatever the draw).
    Asked on rows 0, 1 and 3 of the carried table -- most rows, where P would be computed
    on every row and picked -- it gives True, True, True and draws nothing, as on a new
    table (row 2, not asked, must not draw).  Asked on every row: one draw, row 2's."""
    rows = [_holding(ClassAd(f"[Memory = {m}]"), R="true", P="Memory > 0 && R") for m in (1, 2, 3, 4)]
    job = ClassAd("[RequestMemory = 1]")
    table = AdTable(rows)
    asked = np.array([0, 1, 3])
    with afresh_at_once():
        assert _drawn(table, "P", "my", job, table.all_rows) == ([True] * 4, 0)
        assert any(k[0] == "p" for k in table.shared_memo().direct)
        new_rows = list(rows)
        new_rows[2] = _holding(ClassAd("[Memory = 3]"), R="random(10) >= 0", P="Memory > 0 && R")
        table = table.follow(new_rows, np.arange(4), np.array([False, False, True, False]), {})
        assert any(k[0] == "p" for k in table.shared_memo().direct)
        assert _drawn(AdTable(new_rows), "P", "my", job, asked) == ([True] * 3, 0)
        assert _drawn(table, "P", "my", job, asked) == ([True] * 3, 0)
        assert _drawn(table, "P", "my", job, table.all_rows) == ([True] * 4, 1)


def _big_rows(n: int, lacking: int, odd: str = "[Memory = 700]") -> list[ClassAd]:
    """Row r: Memory 100 * (r % 7), Cpus r % 3; row ``lacking`` the ad ``odd`` (by default
    no Cpus: Undefined)."""
    return [
        _holding(ClassAd(f"[Memory = {100 * (r % 7)}; Cpus = {r % 3}]"), Requirements=_REQ)
        if r != lacking
        else _holding(ClassAd(odd), Requirements=_REQ)
        for r in range(n)
    ]


_REQ = "TARGET.RequestMemory <= Memory && (MY.Cpus > 0 || Memory >= 600) && !(Memory == 300)"


def test_a_combination_over_a_big_table_is_one_boolean_array():
    """By hand, over 3000 rows (above the size where right sides are evaluated ahead of
    need): row r has Memory 100 * (r % 7) and Cpus r % 3.  Requirements =
    TARGET.RequestMemory <= Memory && (MY.Cpus > 0 || Memory >= 600) && !(Memory == 300)
    for RequestMemory 200 is true where r % 7 is 2, 4 or 5 and r % 3 is not 0, or where
    r % 7 is 6: every part is a boolean on every row, so it is evaluated as one array.
    With row 7 lacking Cpus (and Memory 700), MY.Cpus > 0 is Undefined there: still one
    pass (the three-valued tables row by row), the same values and row 7 true (Undefined ||
    700 >= 600 is true).  The scalar evaluator agrees on every row."""
    n = 3000
    job = ClassAd("[RequestMemory = 200]")
    node = parse_expr(_REQ)
    original = columnar_compile.Run._fused
    for lacking in (-1, 7):
        rows = _big_rows(n, lacking)
        table = AdTable(rows)
        want = [(r % 7 in (2, 4, 5) and r % 3 != 0) or r % 7 == 6 or r == lacking for r in range(n)]
        fused: list[bool] = []

        def spy(self, *args, fused=fused):  # type: ignore[no-untyped-def]
            out = original(self, *args)
            fused.append(out is not None)
            return out

        columnar_compile.Run._fused = spy  # type: ignore[method-assign]
        try:
            got = evaluate_attribute(table, "Requirements", other=job, state=new_state()).to_values()
            mask = attribute_true(table, "Requirements", other=job, state=new_state(), rows=table.all_rows[::2])
        finally:
            columnar_compile.Run._fused = original  # type: ignore[method-assign]
        assert got == want
        assert mask.tolist() == want[::2]
        assert [evaluate_top(node, r, new_state(r, job)) for r in rows] == want
        assert fused == [True]


def test_a_combination_that_keeps_failing_to_be_one_array_is_tried_now_and_then():
    """MY.Cpus > TARGET.MinCpus && Memory >= 100 against [MinCpus = 0] over 3000 rows, row
    7 holding Cpus as an expression, ifThenElse(Memory > 0, undefined, 1) (Undefined there),
    which is never evaluated ahead of need: never one array.  Over 40 runs it is tried in the first 7 (a failure counted in each),
    then skipped but in the 32nd: 8 tries.  With every row holding Cpus it is one array in
    each of the 40.  Every value is the scalar evaluator's: true where r % 3 is not 0 and
    r % 7 is not 0 (so false on row 7 of Memory 0, and Undefined on the row 7 lacking
    Cpus, of Memory 700: Undefined && true)."""
    node = parse_expr("MY.Cpus > TARGET.MinCpus && Memory >= 100")
    job = ClassAd("[MinCpus = 0]")
    original = columnar_compile.Run._bools
    for lacking, tries in ((7, 8), (-1, 40)):
        rows = _big_rows(3000, lacking, "[Memory = 700; Cpus = ifThenElse(Memory > 0, undefined, 1)]")
        table = AdTable(rows)
        want = [evaluate_top(node, r, new_state(r, job)) for r in rows]
        calls: list[bool] = []

        def spy(self, at, *args, calls=calls):  # type: ignore[no-untyped-def]
            if at is node:
                calls.append(True)
            return original(self, at, *args)

        columnar_compile.Run._bools = spy  # type: ignore[method-assign]
        try:
            for _ in range(40):
                got = evaluate_column(node, table, other=job, state=new_state()).to_values()
                assert got == want
        finally:
            columnar_compile.Run._bools = original  # type: ignore[method-assign]
        assert len(calls) == tries
        assert want[7] is (UNDEFINED if lacking == 7 else False)


def test_a_rank_is_never_computed_afresh():
    """Rank = 10 * Memory + TARGET.Boost (arithmetic at the top, as NEGOTIATOR_PRE_JOB_RANK)
    over slots of Memory 1, 2, 3, for Boost 0, 1, 2, 3: [10, 20, 30] plus the boost, each
    a miss -- but stored all the same (its column forms cost more than bringing a result
    up to date), while Limits = TARGET.Boost <= Memory is judged at once."""
    rows = [
        _holding(ClassAd(f"[Memory = {m}]"), Rank="10 * Memory + TARGET.Boost", Limits="TARGET.Boost <= Memory")
        for m in (1, 2, 3)
    ]
    table = AdTable(rows)
    with afresh_at_once():
        for boost in range(4):
            job = ClassAd(f"[Boost = {boost}]")
            got = evaluate_attribute(table, "Rank", other=job, state=new_state()).to_values()
            assert got == [10 + boost, 20 + boost, 30 + boost]
            assert evaluate_attribute(table, "Limits", other=job, state=new_state()).to_values() == [
                boost <= m for m in (1, 2, 3)
            ]
    shared = table.shared_memo()
    assert [k[0] for k in shared.direct] == ["limits"]
    assert len(next(lru for k, lru in shared.entries.items() if k[0] == "rank")) == 4


def _start_runs(want: str, requests: int = 3) -> tuple[list, memo.SharedMemo]:
    """Start = TARGET.Want && Memory > 0 over 3000 slots of Memory 100 * (r % 7), for
    ``requests`` jobs alike, [A = 1; B = 2; Want = ``want``]: each run's values (each the
    scalar evaluator's on every row) and the table's memo."""
    rows = [_holding(ClassAd(f"[Memory = {100 * (r % 7)}]"), Start="TARGET.Want && Memory > 0") for r in range(3000)]
    table = AdTable(rows)
    node = parse_expr("TARGET.Want && Memory > 0")
    runs = []
    for _ in range(requests):
        job = _holding(ClassAd("[A = 1; B = 2]"), Want=want)
        got = evaluate_attribute(table, "Start", other=job, state=new_state()).to_values()
        assert got == [evaluate_top(node, r, new_state(r, job)) for r in rows]
        runs.append(got)
    return runs, table.shared_memo()


def test_a_combination_of_job_constants_is_a_constant_and_shared():
    """Want = A > 0 && B > 0 reads only the job's literals (1 > 0 && 2 > 0: true), and
    Want = A < 0 && TARGET.Memory > 0 is decided by its left side alone (1 < 0: false),
    and in Want = TARGET.Memory >= 0 && B > 0 no slot decides the left side (every Memory
    is at least 0), so the right side's constant is the value (2 > 0: true): each a
    constant, as the row-by-row walk gives it, over the big table too.  So Start reads a
    constant of the job and is shared: the second and third requests, alike, are memo
    hits.  Start is Memory > 0 (true but where r % 7 is 0), or false everywhere."""
    for want, expected in (
        ("A > 0 && B > 0", [r % 7 != 0 for r in range(3000)]),
        ("A < 0 && TARGET.Memory > 0", [False] * 3000),
        ("TARGET.Memory >= 0 && B > 0", [r % 7 != 0 for r in range(3000)]),
    ):
        runs, shared = _start_runs(want)
        assert runs == [expected] * 3
        assert shared.hits == 2
        assert not any(k[0] == "start" for k in shared.unshareable)


def test_a_combination_reading_the_slots_stays_per_row():
    """Want = A > 0 && TARGET.Memory >= 300 reads each slot: true where r % 7 >= 3, so
    Start (Want && Memory > 0) is true exactly there; the values are per row, and every
    run gives them."""
    runs, _ = _start_runs("A > 0 && TARGET.Memory >= 300")
    assert runs == [[r % 7 >= 3 for r in range(3000)]] * 3


def _brought(table: AdTable, job: ClassAd, name: str, rows: np.ndarray) -> tuple[list, int]:
    """``name`` of ``table`` against ``job`` on ``rows`` (shared), and how many stored
    results that brought up to date from an older generation of the table."""
    original = columnar_compile.Run._bring_stored
    calls: list[bool] = []

    def spy(self, *args):  # type: ignore[no-untyped-def]
        calls.append(True)
        return original(self, *args)

    columnar_compile.Run._bring_stored = spy  # type: ignore[method-assign]
    try:
        got = evaluate_attribute(table, name, other=job, state=new_state(), rows=rows, shared=True).to_values()
    finally:
        columnar_compile.Run._bring_stored = original  # type: ignore[method-assign]
    return got, len(calls)


def test_a_cheap_result_seldom_found_as_it_is_is_computed_not_brought():
    """By hand: slots of Memory 100, 200, 300, each Limits = TARGET.RequestMemory <= Memory
    and Start = KeyboardIdle > 10 && TARGET.Owner == "a" (KeyboardIdle 5, 50, 500), asked
    for a job [RequestMemory = 150; Owner = "a"].  Generation 0: Limits once ([F, T, T], a
    miss, stored), Start twice (a miss, then found as it is).  Row 0 is then rewritten to
    Memory 400, KeyboardIdle 20.  Generation 1: Limits, found once in one lookup as it was
    -- never -- is computed, not brought: [T, T, T] (the stored [F, T, T] would be wrong on
    row 0), and on rows 0 and 2, [T, T]; Start, found as it was in one lookup of two, is
    brought up to date: [T, T, T].  Limits' lookups then count 3, none found; Start's 3,
    one found (a result brought up to date was not found as it was)."""
    rows = [
        _holding(
            ClassAd(f"[Memory = {m}; KeyboardIdle = {k}]"),
            Limits="TARGET.RequestMemory <= Memory",
            Start='KeyboardIdle > 10 && TARGET.Owner == "a"',
        )
        for m, k in ((100, 5), (200, 50), (300, 500))
    ]
    job = ClassAd('[RequestMemory = 150; Owner = "a"]')
    table = AdTable(rows)
    every = table.all_rows
    assert _brought(table, job, "Limits", every) == ([False, True, True], 0)
    assert _brought(table, job, "Start", every) == ([False, True, True], 0)
    assert _brought(table, job, "Start", every) == ([False, True, True], 0)
    new_rows = list(rows)
    new_rows[0] = _holding(
        ClassAd("[Memory = 400; KeyboardIdle = 20]"),
        Limits="TARGET.RequestMemory <= Memory",
        Start='KeyboardIdle > 10 && TARGET.Owner == "a"',
    )
    table = table.follow(new_rows, np.arange(3), np.array([True, False, False]), {})
    every = table.all_rows
    assert _brought(table, job, "Limits", every) == ([True, True, True], 0)
    assert _brought(table, job, "Limits", np.array([0, 2])) == ([True, True], 0)
    assert _brought(table, job, "Start", every) == ([True, True, True], 1)
    shared = table.shared_memo()
    limits = next(k for k in shared.lookups if k[0] == "limits")
    start = next(k for k in shared.lookups if k[0] == "start")
    assert shared.lookups[limits] == [3, 0] and shared.lookups[start] == [3, 1]
    assert limits not in shared.direct
    limits_node = parse_expr("TARGET.RequestMemory <= Memory")
    assert [evaluate_top(limits_node, r, new_state(r, job)) for r in new_rows] == [True] * 3


def test_a_cheap_result_computed_not_brought_draws_only_for_the_asked_rows():
    """By hand: P = Memory > 0 && R over rows of Memory 1..4 with R = true, asked once on
    every row (stored: its lookups found nothing as it was).  Row 2 is rewritten to R =
    random(10) >= 0 (true whatever the draw).  Asked on rows 0, 1 and 3 of the carried
    table, the older result is not brought but computed: True, True, True and no draw (row
    2, not asked, must not draw), as on a new table; asked on every row: one draw, row 2's."""
    rows = [_holding(ClassAd(f"[Memory = {m}]"), R="true", P="Memory > 0 && R") for m in (1, 2, 3, 4)]
    job = ClassAd("[RequestMemory = 1]")
    table = AdTable(rows)
    assert _drawn(table, "P", "my", job, table.all_rows) == ([True] * 4, 0)
    new_rows = list(rows)
    new_rows[2] = _holding(ClassAd("[Memory = 3]"), R="random(10) >= 0", P="Memory > 0 && R")
    table = table.follow(new_rows, np.arange(4), np.array([False, False, True, False]), {})
    asked = np.array([0, 1, 3])
    assert _drawn(AdTable(new_rows), "P", "my", job, asked) == ([True] * 3, 0)
    assert _drawn(table, "P", "my", job, asked) == ([True] * 3, 0)
    assert _drawn(table, "P", "my", job, table.all_rows) == ([True] * 4, 1)
