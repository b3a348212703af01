"""Expressions that differ only in their literals (one family, evaluated through one
template) against the scalar evaluator, row by row."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from classad import ClassAd, set_strict_mode
from classad.ad import value_to_python
from classad.columnar import AdTable, evaluate_attribute
from classad.columnar.families import variants
from classad.evaluate import new_state
from classad.testing import canonical

NOW = 1_700_000_000.0

# Shapes with holes {0}, {1}, {2}: the rows of a table hold a few shapes, each with its own literals.
SHAPES = [
    "(KeyboardIdle > {0}) && ((LoadAvg - CondorLoadAvg) <= {1} || State =!= {2}) && member(TARGET.Owner, {0})",
    "(KeyboardIdle > 15 * 60) && (TARGET.Owner =!= {0}) && LoadAvg <= {1}",
    "member(TARGET.Owner, {0}) ? {1} : {2}",
    "ifThenElse(KeyboardIdle > {0}, LoadAvg * {1}, strcat({2}, State))",
    "KeyboardIdle + {0}",
    "{0} / KeyboardIdle + {1} % LoadAvg",
    "isString({0}) || {1} =?= TARGET.Owner",
    "toLower({0}) == TARGET.Owner && stringListMember(TARGET.Owner, {1})",
    "(MY.KeyboardIdle ?: {0}) - {1} >= TARGET.Size",
    "-{0} < Missing || !{1}",
]
LITERALS = [
    "0",
    "1",
    "-1",
    "900",
    "2.5",
    "-0.0",
    "0.3",
    '"x"',
    '"alice"',
    '"ALICE"',
    '"bob"',
    '"alice,bob"',
    '"Unclaimed"',
    "true",
    "false",
    "undefined",
    "error",
    '{"alice", "bob"}',
    '{"ALICE"}',
    '{1, 2.0, "x"}',
    "{}",
    "9223372036854775807",
    "1e308",
]
_lits = st.sampled_from(LITERALS)
_row = st.tuples(
    st.integers(0, 2),
    st.tuples(_lits, _lits, _lits),
    st.sampled_from(["0", "2000", "1.5", '"x"', "undefined"]),
    st.sampled_from(["0.1", "0.5", "-3", "undefined"]),
    st.sampled_from(['"Unclaimed"', '"Claimed"', "3"]),
)


def _same(col_values: list, expected: list) -> None:
    got = [canonical(value_to_python(v)) for v in col_values]
    want = [canonical(value_to_python(v)) for v in expected]
    assert got == want


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    shapes=st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3),
    rows=st.lists(_row, min_size=2, max_size=12),
    owner=st.sampled_from(['"alice"', '"ALICE"', '"bob"', "undefined", "3", "{1}"]),
    size=st.sampled_from(["0", "1000", '"x"']),
    strict=st.booleans(),
    compact=st.booleans(),
)
def test_variants_match_scalar(shapes, rows, owner, size, strict, compact):
    """Each row's ``Pol`` is one of a few shapes filled with its own literals: a family per
    shape evaluated through one template gives every row the value of its own expression."""
    ads = []
    for which, lits, idle, load, state in rows:
        text = shapes[which % len(shapes)].format(*lits)
        try:
            ad = ClassAd(
                f"[Pol = {text}; KeyboardIdle = {idle}; LoadAvg = {load}; CondorLoadAvg = 0.1; State = {state}]"
            )
        except Exception:
            continue
        ads.append(ad.compact() if compact else ad)
    fixed = ClassAd(f"[Owner = {owner}; Size = {size}]")
    set_strict_mode(strict)
    try:
        table = AdTable(ads)
        expected = [r.evaluate("Pol", fixed, state=new_state(r, fixed, clock=lambda: NOW)) for r in ads]
        for _ in range(2):  # the second time through the table's shared results
            col = evaluate_attribute(table, "Pol", row_side="my", other=fixed, state=new_state(clock=lambda: NOW))
            _same(col.to_values(), expected)
            every_other = np.arange(0, len(ads), 2)
            col = evaluate_attribute(
                table, "Pol", row_side="my", other=fixed, state=new_state(clock=lambda: NOW), rows=every_other
            )
            _same(col.to_values(), expected[::2])
    finally:
        set_strict_mode(False)


def test_variants_group_what_differs_only_in_literals():
    """Literals of the same type in the same places make one family; another type, another
    tree, or a call that draws random numbers does not."""
    from classad.columnar.compile import _pure
    from classad.parser import parse_expr

    texts = [
        'member(TARGET.Owner, {"a", "b"}) && Cpus > 1',
        'member(TARGET.Owner, {"c"}) && Cpus > 4',
        'member(TARGET.Owner, {"d"}) && Cpus > 4.0',  # a real where the others have an int
        'member(TARGET.Owner, {"e"}) && Cpus >= 4',  # another operator
        "random(4) > 1",
        "random(5) > 1",
    ]
    found = variants([parse_expr(t) for t in texts], _pure)
    assert found is not None
    assert found.family_of[0] == found.family_of[1] >= 0
    assert found.family_of[2:] == [-1, -1, -1, -1]
    assert [str(v) for v in found.values[1][1:]] == ["4"]


def test_literals_every_variant_shares_stay_in_the_template():
    """The literals of ``KeyboardIdle > 15 * 60 && TARGET.Owner =!= "u1"`` are, in order,
    15, 60 and "u1"; with "u2" and "u3" in the other variants only the third differs, so
    the template has one hole, for literal 2, and keeps ``15 * 60`` (which the variants'
    row-only part shares).  ``0.0`` against ``-0.0`` are equal but not the same value, and
    ``1`` against ``1.0`` not of one type (another family): those stay holes, as does a list."""
    from classad.columnar.compile import _pure
    from classad.parser import parse_expr

    owners = [f'KeyboardIdle > 15 * 60 && TARGET.Owner =!= "u{i}"' for i in (1, 2, 3)]
    found = variants([parse_expr(t) for t in owners], _pure)
    assert found is not None
    assert found.families[found.family_of[0]].positions == (2,)
    zeros = ["x > 0.0 && member(y, {1}) && z == 2", "x > -0.0 && member(y, {1}) && z == 2"]
    found = variants([parse_expr(t) for t in zeros], _pure)
    assert found is not None
    assert found.families[found.family_of[0]].positions == (0, 1)


_CALL_VALUES = ["1", "1.0", "true", "0.0", "-0.0", "0", '"a"', '"A"', "undefined", "error", "2.5"]


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.lists(
        st.tuples(st.lists(st.sampled_from(_CALL_VALUES), max_size=3), st.sampled_from(_CALL_VALUES)),
        min_size=2,
        max_size=8,
    ),
    xs=st.lists(st.sampled_from(_CALL_VALUES), min_size=2, max_size=6),
)
def test_function_results_remembered_by_exact_argument_values(rows, xs):
    """A table remembers the results of functions that depend on their arguments alone,
    by the exact values called with: requests one after the other whose ``X`` is ``1``,
    ``1.0``, ``true``, ``0.0``, ``-0.0``, ``"a"``, ``"A"``, Undefined or Error each get
    their own answers (``identicalMember`` and ``strcat`` tell all of these apart), row
    by row as the scalar evaluator gives them."""
    ads = []
    for lits, y in rows:
        listed = "{" + ", ".join(lits) + "}"
        ads.append(
            ClassAd(
                f"[Pol = identicalMember(TARGET.X, {listed}); Cat = strcat(TARGET.X, Y); Y = {y};"
                f" Pick = member(TARGET.X, {listed}) ? Y : size({listed})]"
            )
        )
    table = AdTable(ads)
    for x in xs:
        fixed = ClassAd(f"[X = {x}]")
        for name in ("Pol", "Cat", "Pick"):
            expected = [r.evaluate(name, fixed, state=new_state(r, fixed, clock=lambda: NOW)) for r in ads]
            col = evaluate_attribute(table, name, row_side="my", other=fixed, state=new_state(clock=lambda: NOW))
            _same(col.to_values(), expected)


def test_a_call_on_a_list_hole_is_made_once_per_variant_across_generations():
    """``Pol = member(TARGET.Owner, {...}) && Cpus > 1`` over six rows, three variants (one
    expression each, shared by the rows that hold it: {"a", "b"} on rows 0 and 3, {"c"} on
    rows 1 and 4, {"a"} on rows 2 and 5), Cpus = 2 on every row.  By hand, for Owner "a":
    true, false, true, true, false, true; for "c": false, true, false, false, true, false.
    The call is made over the three variants once per owner (a result per variant, kept
    with the family's literals); the table followed to a generation where rows 1 and 4 are
    rewritten with the same expressions (Cpus = 0 on row 4: false for "c" there) keeps
    those results, so asking again, for either owner, makes no call."""
    from classad import ExprTree
    from classad.columnar import compile as columnar_compile

    exprs = [ExprTree(f"member(TARGET.Owner, {t}) && Cpus > 1") for t in ('{"a", "b"}', '{"c"}', '{"a"}')]

    def slot(r: int, cpus: int = 2) -> ClassAd:
        ad = ClassAd(f"[Cpus = {cpus}]")
        ad["Pol"] = exprs[r % 3]
        return ad

    ads = [slot(r) for r in range(6)]
    made: list[int] = []
    original = columnar_compile._calls_on_lists

    def spy(known, entry, ctx, args, pool):  # type: ignore[no-untyped-def]
        made.append(len(args[1]))
        return original(known, entry, ctx, args, pool)

    def values(table: AdTable, owner: str) -> list:
        fixed = ClassAd(f'[Owner = "{owner}"]')
        return evaluate_attribute(table, "Pol", other=fixed, state=new_state(clock=lambda: NOW)).to_values()

    columnar_compile._calls_on_lists = spy  # type: ignore[assignment]
    try:
        table = AdTable(ads)
        assert values(table, "a") == [True, False, True, True, False, True]
        assert values(table, "c") == [False, True, False, False, True, False]
        assert made == [3, 3]  # one result per variant, for each owner
        rewritten = [ads[0], slot(1), ads[2], ads[3], slot(4, cpus=0), ads[5]]
        dirty = np.array([False, True, False, False, True, False])
        table = table.follow(rewritten, np.arange(6), dirty, {})
        assert values(table, "c") == [False, True, False, False, False, False]
        assert values(table, "a") == [True, False, True, True, False, True]
        assert made == [3, 3]
    finally:
        columnar_compile._calls_on_lists = original  # type: ignore[assignment]
    for owner in ("a", "c"):
        fixed = ClassAd(f'[Owner = "{owner}"]')
        want = [r.evaluate("Pol", fixed, state=new_state(r, fixed, clock=lambda: NOW)) for r in rewritten]
        assert values(table, owner) == want
