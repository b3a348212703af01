"""The columnar engine against the scalar evaluator on random ads and expressions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from classad import ClassAd, set_strict_mode
from classad.ad import value_to_python
from classad.columnar import AdTable, evaluate_attribute, evaluate_column
from classad.evaluate import evaluate_top, new_state
from classad.parser import parse_expr
from classad.testing import canonical, expressions, literals

NAMES = ["a", "b", "s", "u", "e", "l", "r", "t", "n", "z", "x", "tb", "ts", "A", "S", "Req", "Rank"]
NOW = 1_700_000_000.0


def _clock() -> float:
    return NOW


@contextmanager
def strict_mode(strict: bool) -> Iterator[None]:
    """Strict mode on (or off) inside the block, off after it."""
    set_strict_mode(strict)
    try:
        yield
    finally:
        set_strict_mode(False)


SMALL = [
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-9223372036854775808",
    "9223372036854775807",
    "0.0",
    "-0.0",
    "1.5",
    "2.0",
    "-2.5",
    "1e308",
    'real("NaN")',
    '"x"',
    '"X"',
    '"y"',
    '""',
    "true",
    "false",
    "undefined",
    "error",
]
REFS = NAMES + ["MY." + n for n in NAMES[:6]] + ["TARGET." + n for n in NAMES[:8]] + ["OTHER.a", "missing"]
OPS = ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "=?=", "=!=", "&&", "||", "&", "|", "^", "<<", ">>"]
CALLS = [
    "isUndefined({})",
    "isError({})",
    "isString({})",
    "isInteger({})",
    "isReal({})",
    "isBoolean({})",
    "int({})",
    "real({})",
    "floor({})",
    "ceiling({})",
    "round({})",
    "int({} * 1.5)",
    "toLower({})",
    "size({})",
    'member({}, {{1, "x", 2.0}})',
    'stringListMember({}, "x,y")',
    "ifThenElse({0}, {0} + 1, {0})",
    'strcat({}, "x")',
]


def focused(max_leaves: int = 10) -> st.SearchStrategy[str]:
    """Expressions over few, colliding values, so that equalities and edge cases happen."""
    leaves = st.one_of(st.sampled_from(SMALL), st.sampled_from(REFS))

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(OPS), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(st.sampled_from(["-", "!", "+", "~"]), inner).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
            st.tuples(inner, inner).map(lambda t: f"(({t[0]}) ?: ({t[1]}))"),
            st.tuples(st.sampled_from(CALLS), inner).map(lambda t: t[0].format(t[1])),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


values = st.one_of(
    st.sampled_from(SMALL),
    st.sampled_from(SMALL),
    literals(),
    focused(4),
    expressions(max_leaves=3),
    st.sampled_from(
        [
            "{1, 2}",
            '{"a", "B"}',
            "[q = 1]",
            "a",
            "MY.b",
            "TARGET.a",
            "x + 1",
            "u",
            "a + b",
            'strcat(s, "z")',
            "relTime(5)",
        ]
    ),
)
small_num = st.sampled_from(
    [
        "0",
        "1",
        "2",
        "-1",
        "1.0",
        "2.5",
        "0.0",
        "-0.0",
        "true",
        '"x"',
        '"X"',
        "1e308",
        "-1e308",
        "undefined",
        "error",
        "{1}",
        "-1e308 * 10",
        "a",
        "b + 1",
        "TARGET.b",
    ]
)
ads = st.tuples(
    st.fixed_dictionaries({"a": small_num, "b": small_num, "n": small_num}),
    st.dictionaries(st.sampled_from(NAMES), values, max_size=6),
).map(lambda t: "[" + "; ".join(f"{k} = {v}" for k, v in {**t[0], **t[1]}.items()) + "]")


def _ad(text: str) -> ClassAd:
    return ClassAd(text)


def _same(col_values: list, expected: list) -> None:
    got = [canonical(value_to_python(v)) for v in col_values]
    want = [canonical(value_to_python(v)) for v in expected]
    assert got == want


def _check(
    exprs: list[str] | str, row_texts: list[str], fixed_text: str | None, row_side: str, compact: bool = False
) -> None:
    """``compact``: the rows in shared layouts (classad.layout), as the matchmaker keeps
    slot ads: the table then reads bare literal values, the layout template's among them."""
    try:
        rows = [_ad(t).compact() if compact else _ad(t) for t in row_texts]
        fixed = _ad(fixed_text) if fixed_text is not None else None
    except Exception:
        return  # text the parser refuses is not what this test is about
    table = AdTable(rows)
    for expr in [exprs] if isinstance(exprs, str) else exprs:
        try:
            node = parse_expr(expr)
        except Exception:
            continue
        _check_one(node, table, rows, fixed, row_side)
    _check_attrs(table, rows, fixed, row_side)


def _check_one(node, table, rows, fixed, row_side) -> None:
    col = evaluate_column(node, table, row_side=row_side, other=fixed, state=new_state(clock=_clock))
    if row_side == "my":
        expected = [evaluate_top(node, r, new_state(r, fixed, clock=_clock)) for r in rows]
    else:
        expected = [evaluate_top(node, fixed, new_state(fixed, r, clock=_clock)) for r in rows]
    _same(col.to_values(), expected)
    every_other = np.arange(0, len(rows), 2)
    col = evaluate_column(node, table, row_side=row_side, other=fixed, state=new_state(clock=_clock), rows=every_other)
    _same(col.to_values(), expected[::2])


def _check_attrs(table, rows, fixed, row_side) -> None:
    for name in ("Req", "x"):
        col = evaluate_attribute(table, name, row_side=row_side, other=fixed, state=new_state(clock=_clock))
        if row_side == "my":
            expected = [r.evaluate(name, fixed, state=new_state(r, fixed, clock=_clock)) for r in rows]
        else:
            expected = [fixed.evaluate(name, r, state=new_state(fixed, r, clock=_clock)) for r in rows]
        _same(col.to_values(), expected)


top = st.one_of(
    st.tuples(focused(6), st.sampled_from(OPS), focused(6)).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
    focused(10),
    expressions(max_leaves=10),
)
cases = dict(
    expr=st.lists(top, min_size=4, max_size=8),
    rows=st.lists(ads, min_size=1, max_size=5),
    fixed=ads,
    side=st.sampled_from(["my", "target"]),
    alone=st.booleans(),
)
_settings = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.slow
@_settings
@given(**cases)
def test_matches_scalar_default_mode(expr, rows, fixed, side, alone):
    _check(expr, rows, None if alone and side == "my" else fixed, side)


@pytest.mark.slow
@_settings
@given(**cases)
def test_matches_scalar_strict_mode(expr, rows, fixed, side, alone):
    with strict_mode(True):
        _check(expr, rows, None if alone and side == "my" else fixed, side)


policy_exprs = st.sampled_from(
    [
        'KeyboardIdle > 15 * 60 && LoadAvg - CondorLoadAvg <= 0.3 && TARGET.Owner != "root"',
        "TARGET.RequestMemory <= MY.Memory && TARGET.RequestCpus <= Cpus",
        'TARGET.Arch == "X86_64" && TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory',
        "TARGET.KFlops / 1000 + (TARGET.Memory ?: 0) * 0.5",
        "ifThenElse(isUndefined(TARGET.Mips), 0, TARGET.Mips) / (LoadAvg + 1)",
        'stringListMember(TARGET.Owner, "alice,bob") || Memory % 3 == 1',
        "TARGET.Owner =?= Owner || TARGET.Owner =!= undefined",
        "-(KFlops) * 3 / (Memory - 2048) > Disk",
        "member(Cpus, {1, 2, 4}) ? real(Memory) : int(LoadAvg * 10)",
        "floor(LoadAvg) + ceiling(LoadAvg) - round(LoadAvg)",
    ]
)
num = st.one_of(
    st.integers(-5, 5000),
    st.floats(-10, 1e4, allow_nan=False).map(repr),
    st.sampled_from(["undefined", "error", '"x"', "true", "1e308 * 10"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    expr=policy_exprs,
    cols=st.lists(st.tuples(num, num, num, num, num, num), min_size=1, max_size=8),
    owner=st.sampled_from(['"alice"', '"ALICE"', '"root"', "undefined", "3"]),
    side=st.sampled_from(["my", "target"]),
    compact=st.booleans(),
)
def test_policy_expressions(expr, cols, owner, side, compact):
    rows = [
        f"[KeyboardIdle = {a}; LoadAvg = {b}; CondorLoadAvg = {c}; Memory = {d}; Cpus = {e}; "
        f'KFlops = {f}; Disk = 100; Arch = "x86_64"; OpSys = "LINUX"; Owner = "bob"]'
        for a, b, c, d, e, f in cols
    ]
    fixed = (
        f"[Owner = {owner}; RequestMemory = 1024; RequestCpus = 1; Memory = 10; KFlops = 5; "
        f'Mips = undefined; Arch = "X86_64"; OpSys = "linux"]'
    )
    _check(expr, rows, fixed, side, compact)


@pytest.mark.parametrize("expr", ["a + 1", "TARGET.a", "x", "parent", "Req"])
def test_no_rows(expr):
    col = evaluate_column(expr, AdTable([]), other=ClassAd("[a = 1]"))
    assert col.to_values() == []


_simple_refs = st.sampled_from(["a", "b", "n", "TARGET.a", "TARGET.b", "MY.n", "a", "b", "missing"])
_edge_values = st.sampled_from(
    ["undefined", "error", "1e308", "-1e308", 'real("NaN")', "9223372036854775807", "-9223372036854775808", "3"]
)
simple_leaf = st.one_of(_simple_refs, _simple_refs, _simple_refs, small_num, _edge_values)
simple_expr = st.one_of(
    st.tuples(simple_leaf, st.sampled_from(OPS), simple_leaf).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
    st.tuples(simple_leaf, st.sampled_from(OPS), simple_leaf, st.sampled_from(OPS), simple_leaf).map(
        lambda t: f"({t[0]} {t[1]} {t[2]}) {t[3]} {t[4]}"
    ),
    st.tuples(st.sampled_from(["-", "!", "+", "~"]), simple_leaf).map(lambda t: f"{t[0]}{t[1]}"),
    st.tuples(st.sampled_from(CALLS), simple_leaf).map(lambda t: t[0].format(t[1])),
    st.tuples(simple_leaf, simple_leaf, simple_leaf).map(lambda t: f"{t[0]} ? {t[1]} : {t[2]}"),
)
simple_row = st.tuples(small_num, small_num, small_num, st.booleans()).map(
    lambda t: f"[a = {t[0]}; b = {t[1]}" + (f"; n = {t[2]}]" if t[3] else "]")
)
# What a test of some expressions over small values draws besides its expressions.
small_value_cases = dict(
    rows=st.lists(simple_row, min_size=2, max_size=8),
    fixed=simple_row,
    side=st.sampled_from(["my", "target"]),
    strict=st.booleans(),
    compact=st.booleans(),
)


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(exprs=st.lists(simple_expr, min_size=10, max_size=20), **small_value_cases)
def test_operators_on_small_values(exprs, rows, fixed, side, strict, compact):
    with strict_mode(strict):
        _check(exprs, rows, fixed, side, compact)


_JOB_REQS = st.sampled_from(
    [
        'TARGET.Arch == "X86_64" && TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory',
        '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk)',
        "ifThenElse(isUndefined(OTHER.Mips), 0, TARGET.Mips) > 10 && (TARGET.KFlops ?: 1) > RequestMemory",
        '!(TARGET.Arch == "X86_64") || TARGET.Memory * 2 >= RequestMemory',
    ]
)
_EXTRA = st.sampled_from(["", 'target = [Arch = "X86_64"; OpSys = "LINUX"];', "other = 3;"])


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    reqs=st.lists(st.tuples(_JOB_REQS, st.integers(0, 3000), _EXTRA), min_size=2, max_size=5),
    cols=st.lists(
        st.tuples(
            num,
            num,
            st.sampled_from(['"X86_64"', '"x86_64"', '"ARM"', "undefined", "3"]),
            st.sampled_from(["", "my = [Arch = 1];"]),
        ),
        min_size=1,
        max_size=8,
    ),
)
def test_requests_share_their_row_only_parts(reqs, cols):
    """Many requests over one slot table: the parts of their Requirements that read only the
    slot (TARGET.Arch == "X86_64") are computed once and shared, with the scalar answers,
    also when a request defines ``target`` or ``other`` itself or a slot defines ``my``."""
    rows = [
        ClassAd(f'[Memory = {m}; Disk = {d}; Arch = {arch}; OpSys = "LINUX"; Mips = 20; KFlops = {m}; {extra}]')
        for m, d, arch, extra in cols
    ]
    table = AdTable(rows)
    for _ in range(2):
        for req, size, extra in reqs:
            fixed = ClassAd(f"[Requirements = {req}; RequestMemory = {size}; RequestDisk = {size}; {extra}]")
            col = evaluate_attribute(
                table, "Requirements", row_side="target", other=fixed, state=new_state(clock=_clock)
            )
            expected = [fixed.evaluate("Requirements", r, state=new_state(fixed, r, clock=_clock)) for r in rows]
            _same(col.to_values(), expected)


_KNOBS = st.sampled_from(
    [
        "((CurrentTime - EnteredCurrentState) > 3600) && (RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2)",
        "(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory",
        "ifThenElse(TARGET.Owner == Owner, 1, 0) + size(strcat(TARGET.Owner, Name))",
        'member(TARGET.Owner, {"alice", "bob"}) ? Memory : TARGET.SubmitterUserPrio',
    ]
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    knob=_KNOBS,
    reqs=st.lists(
        st.tuples(
            st.sampled_from(['"alice"', '"bob"', "undefined", "{1}"]),
            st.sampled_from(["10.5", "500", "undefined", '"x"']),
        ),
        min_size=2,
        max_size=5,
    ),
    cols=st.lists(st.tuples(num, num, st.sampled_from(['"bob"', "undefined", "TARGET.Owner"])), min_size=1, max_size=8),
    data=st.data(),
)
def test_shared_knob_results_match_scalar(knob, reqs, cols, data):
    """A knob evaluated for request after request with ``shared=True`` reuses results
    between requests that give the same values to what it reads, with the scalar answers
    (on every row and on subsets)."""
    rows = [
        ClassAd(
            f"[EnteredCurrentState = {a}; RemoteUserPrio = {b}; Rank = {rank}; Cpus = 2; Memory = {a}; "
            f'Name = "s{i}"; Owner = "bob"]'
        )
        for i, (a, b, rank) in enumerate(cols)
    ]
    table = AdTable(rows)
    node = parse_expr(knob)
    for owner, prio in reqs * 2:
        fixed = ClassAd(f"[Owner = {owner}; SubmitterUserPrio = {prio}]")
        subset = np.asarray(
            sorted(set(data.draw(st.lists(st.integers(0, len(rows) - 1), max_size=len(rows))))), dtype=np.int64
        )
        for at in (None, subset):
            col = evaluate_column(
                node, table, row_side="my", other=fixed, state=new_state(clock=_clock), rows=at, shared=True
            )
            picked = rows if at is None else [rows[r] for r in at.tolist()]
            _same(col.to_values(), [evaluate_top(node, r, new_state(r, fixed, clock=_clock)) for r in picked])


# Names the columnar engine must leave to the scalar evaluator (written out here, not taken
# from classad.columnar.compile, so that a name dropped there fails below).
SPECIAL = [
    "parent",
    "self",
    "toplevel",
    "root",
    "my",
    "currenttime",
    "target",
    "other",
    "ad",
    "symmetricMatch",
    "leftMatchesRight",
    "rightMatchesLeft",
    "leftRankValue",
    "rightRankValue",
    "lCtx",
    "rCtx",
    "LEFT",
    "RIGHT",
]


@pytest.mark.parametrize("name", SPECIAL)
@pytest.mark.parametrize("side", ["my", "target"])
@pytest.mark.parametrize("compact", [False, True])
def test_special_names_in_slot_ads(name, side, compact):
    """Slot ads whose attributes read a special name unscoped (the enclosing ad, the ad
    itself, the match's context ads, the clock): the columnar answers are the scalar ones,
    for the slot attributes and for expressions over them."""
    rows = [
        f"[Memory = 1; a = 2; Requirements = a > 1; Rank = Memory * 2; x = isUndefined({name}); Req = {name}]",
        f"[Memory = 3; a = 0; Requirements = a > 1; Rank = 5; x = {name} =?= undefined; Req = {name}]",
        "[Memory = 4; a = 3; Requirements = true; Rank = 1; x = 1; Req = 2]",
    ]
    fixed = "[Memory = 10; a = 20; Requirements = Memory > 5; Rank = 7]"
    exprs = [name, f"isUndefined({name})", f"{name} =?= undefined", f"x && isUndefined({name})"]
    _check(exprs, rows, fixed, side, compact)


# Leaves of logical chains: booleans on every row (comparisons, the flag ``f``), values that
# vary per row between booleans, Undefined, Error and non-booleans, and constants.
_logic_leaf = st.sampled_from(
    [
        "a > 1",
        "b <= 2",
        "TARGET.a == a",
        "n >= 0",
        "f",
        "TARGET.f",
        "!f",
        "g",
        "missing",
        "true",
        "false",
        "undefined",
        "error",
        '"x"',
        "1",
        "a",
    ]
)
_logic_chain = st.recursive(
    _logic_leaf,
    lambda inner: st.tuples(inner, st.sampled_from(["&&", "||"]), inner, st.booleans()).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})" if t[3] else f"{t[0]} {t[1]} {t[2]}"
    ),
    max_leaves=7,
)
_logic_row = st.tuples(
    small_num, small_num, st.booleans(), st.sampled_from(["true", "false", "undefined", "error", "1", '"y"'])
).map(lambda t: f"[a = {t[0]}; b = {t[1]}; n = 1; f = {str(t[2]).lower()}; g = {t[3]}]")
logic_chain_cases = dict(
    exprs=st.lists(_logic_chain, min_size=4, max_size=8),
    rows=st.lists(_logic_row, min_size=2, max_size=8),
    fixed=_logic_row,
    side=st.sampled_from(["my", "target"]),
    strict=st.booleans(),
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(**logic_chain_cases)
def test_logical_chains(exprs, rows, fixed, side, strict):
    """Chains of ``&&`` and ``||`` (combined as boolean arrays while every row's value is a
    boolean) give the scalar evaluator's three-valued results, on every row and on half of them."""
    with strict_mode(strict):
        _check(exprs, rows, fixed, side)
