"""How a table lays out the plain forms of its rows (classad.columnar.table), made afresh
and carried to new rows (``AdTable.follow``).

Expected values by hand: each row's kind, payload, what it holds and its expression
group (numbered in order of first row), strings interned in row order; and a carried
table's arrays equal, payload by payload, to those of a table made afresh.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from classad import ClassAd, ast
from classad.columnar import AdTable
from classad.columnar.column import K_BOOL, K_ERROR, K_INT, K_OTHER, K_REAL, K_STR, K_UNDEF, StringPool
from classad.columnar.table import HOLDS_EXPR, HOLDS_LITERAL, HOLDS_NOTHING, _column_of
from classad.parser import parse_expr
from classad.values import ERROR, UNDEFINED, AbsTime

_NODES = [parse_expr("x + 1"), parse_expr("y > 2"), parse_expr("x + 1")]  # two equal texts, distinct nodes
_PLAIN = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.sampled_from(["a", "b", "A", ""]),
    st.sampled_from(_NODES),
)
_LITERALS = st.sampled_from([ast.Literal(UNDEFINED), ast.Literal(ERROR), ast.Literal([1, 2])])


def _expected(stored: list) -> tuple[list, list, list[str]]:
    """Each row as (holds, kind, value or group), the nodes in order of first row, and the
    strings in order of first appearance (the pool's order), computed row by row."""
    rows: list = []
    nodes: list = []
    strings: list[str] = []
    for v in stored:
        if v is None:
            rows.append((HOLDS_NOTHING, K_UNDEF, None))
            continue
        if type(v) is ast.Literal:
            v = v.value
        elif type(v) not in (bool, int, float, str):
            if not any(v is n for n in nodes):
                nodes.append(v)
            rows.append((HOLDS_EXPR, K_UNDEF, next(g for g, n in enumerate(nodes) if n is v)))
            continue
        if type(v) is str and v not in strings:
            strings.append(v)
        kind = {bool: K_BOOL, int: K_INT, float: K_REAL, str: K_STR}.get(type(v))
        if kind is None:
            kind = K_UNDEF if v is UNDEFINED else K_ERROR if v is ERROR else K_OTHER
        rows.append((HOLDS_LITERAL, kind, v))
    return rows, nodes, strings


def _rows(col: Any, pool: StringPool) -> list:
    out = []
    values = col.values
    for r in range(len(col.holds)):
        k = int(values.kind[r])
        if col.group[r] >= 0:
            out.append((int(col.holds[r]), k, int(col.group[r])))
        elif k == K_STR:
            out.append((int(col.holds[r]), k, pool.strings[values.s[r]]))
        elif k in (K_UNDEF, K_ERROR, K_OTHER) and int(col.holds[r]) == HOLDS_LITERAL:
            v = values.value(r)
            out.append((int(col.holds[r]), k, v.value if type(v) is ast.Literal else v))
        elif k in (K_UNDEF,):
            out.append((int(col.holds[r]), k, None))
        else:
            out.append((int(col.holds[r]), k, values.value(r)))
    return out


def _same_value_rows(got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g[:2] == w[:2]
        if type(w[2]) is float:  # to the bit, the sign of zero too
            assert type(g[2]) is float and g[2].hex() == w[2].hex()
        elif w[1] == K_OTHER:
            assert g[2] == w[2]
        else:
            assert type(g[2]) is type(w[2]) and g[2] == w[2]


@settings(max_examples=200, deadline=None)
@given(stored=st.lists(_PLAIN, max_size=12), literals=st.lists(st.tuples(st.integers(0, 12), _LITERALS), max_size=2))
def test_a_column_holds_each_row_as_read_row_by_row(stored: list, literals: list) -> None:
    """Random plain forms (nothing, booleans, integers, reals, strings, expression nodes,
    some rows Undefined, Error or a list): the column says of each row what the row
    holds, its kind and value, and its expression's group, numbered in order of first
    row; the pool interns the strings in row order (with or without literals, which are
    read row by row)."""
    for at, lit in literals:
        stored.insert(min(at, len(stored)), lit)
    pool = StringPool()
    col = _column_of(stored, pool)
    want, nodes, strings = _expected(stored)
    _same_value_rows(_rows(col, pool), want)
    assert [id(n) for n in col.nodes] == [id(n) for n in nodes]
    assert pool.strings == strings
    _payloads_only_where_their_kind(col)


def _payloads_only_where_their_kind(col: Any) -> None:
    """A row's payloads other than its kind's are empty (zero, or no object), as a
    column made afresh leaves them."""
    v = col.values
    kind = v.kind
    assert not v.i[(kind != K_INT) & (kind != K_BOOL)].any()
    assert not v.f[kind != K_REAL].any()
    assert not v.s[kind != K_STR].any()
    if v.o is not None:
        assert all(x is None for x in v.o[kind != K_OTHER].tolist())


# What a row holds under a name: a text, or a time (a literal a table keeps as an object).
_TEXTS = st.sampled_from(
    ["1", "2", "2.5", "-0.0", '"s"', '"t"', "{1, 2}", "undefined", "error", "x + 1", "y > 2", "time", "time"]
)
_NAMES = ("A", "B", "C")


def _node(text: str) -> ast.Node:
    return ast.Literal(AbsTime(5.0)) if text == "time" else parse_expr(text)


@st.composite
def _ad(draw: Any) -> ClassAd:
    ad = ClassAd()
    for name in _NAMES:
        if draw(st.booleans()):
            ad.set_node(name, _node(draw(_TEXTS)))
    return ad


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_carried_column_is_the_column_made_afresh_payload_by_payload(data: Any) -> None:
    """Differential: tables carried over generations of rows (kept, rewritten in one
    attribute, read again whole, dropped, added, in another order) hold in each column
    the kinds, payloads, holds and expression groups of a table made afresh (strings
    compared as strings: the pools differ), and no payload where a row's kind has none."""
    ads = data.draw(st.lists(_ad(), max_size=6))
    table = AdTable(ads)
    for name in _NAMES:
        table.column(name.lower())
    for _ in range(4):
        new: list = []
        source: list[int] = []
        dirty: list[bool] = []
        changed: dict[str, list[int]] = {}
        for r in data.draw(st.permutations(range(len(ads)))):
            action = data.draw(st.sampled_from(["keep", "keep", "rewrite", "dirty", "drop"]))
            if action == "drop":
                continue
            ad = ads[r]
            if action == "rewrite":
                name = data.draw(st.sampled_from(_NAMES))
                ad = ClassAd(ad)
                if name in ad and data.draw(st.booleans()):
                    del ad[name]
                else:
                    ad.set_node(name, _node(data.draw(_TEXTS)))
                changed.setdefault(name.lower(), []).append(len(new))
            new.append(ad)
            source.append(r)
            dirty.append(action == "dirty")
        for _added in range(data.draw(st.integers(0, 2))):
            new.append(data.draw(_ad()))
            source.append(-1)
            dirty.append(False)
        masks = {k: np.isin(np.arange(len(new)), v) for k, v in changed.items()}
        table = table.follow(new, np.array(source, np.int64), np.array(dirty, bool), masks)
        fresh = AdTable(new)
        for name in _NAMES:
            a, b = table.column(name.lower()), fresh.column(name.lower())
            assert np.array_equal(a.values.kind, b.values.kind)
            assert np.array_equal(a.holds, b.holds)
            assert np.array_equal(a.group, b.group)
            assert [id(n) for n in a.nodes] == [id(n) for n in b.nodes]
            assert np.array_equal(a.values.i, b.values.i)
            assert [x.hex() for x in a.values.f.tolist()] == [x.hex() for x in b.values.f.tolist()]
            strings = [table.pool.strings[c] if k == K_STR else None for k, c in zip(a.values.kind, a.values.s)]
            assert strings == [fresh.pool.strings[c] if k == K_STR else None for k, c in zip(b.values.kind, b.values.s)]
            others = [a.values.value(r) for r in range(len(new)) if a.values.kind[r] == K_OTHER]
            assert others == [b.values.value(r) for r in range(len(new)) if b.values.kind[r] == K_OTHER]
            _payloads_only_where_their_kind(a)
            flags = (a.all_literal, a.any_missing, a.one_expr, a.kind)
            assert flags == (b.all_literal, b.any_missing, b.one_expr, b.kind)
        ads = new
