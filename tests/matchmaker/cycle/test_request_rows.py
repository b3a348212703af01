"""The rows :func:`matchmaker.cycle.columnar_match._request_rows` leaves out are those on
which a knob's value cannot depend on the request: evaluated against any two requests, a
knob gives there the same rank and the same error flag."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings, strategies as st

from classad.ad import ClassAd
from classad.columnar import AdTable, evaluate_column, knob_rank_single
from classad.columnar.column import K_ERROR
from classad.parser import parse_expr
from matchmaker.cycle import columnar_match

_NAMES = ["A", "b", "Rank", "RemoteOwner"]
# What a slot or a request may hold under a name: nothing, literals of each kind, expressions
# reading its own ad, the other ad or both, a list, an ad.
_VALUES = [
    None,
    "3",
    "2.5",
    '"x"',
    "true",
    "undefined",
    "error",
    "A + 1",
    "TARGET.A * 2",
    "b ?: 4",
    "{1, 2}",
    "[q = 1]",
    "{TARGET.A}",
    "[q = TARGET.b]",
]
_LEAVES = ["A", "b", "MY.A", "my.Rank", "TARGET.A", "target.b", "RemoteOwner", "rank", "1", "0.5", '"x"', "undefined"]


def _tree(draw: Any, depth: int) -> str:
    """A knob's text of names of either ad, literals, operators, Elvis and conditionals."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(_LEAVES))
    kind = draw(st.integers(0, 4))
    left, right = _tree(draw, depth - 1), _tree(draw, depth - 1)
    if kind == 0:
        return f"({left} {draw(st.sampled_from(['+', '-', '*', '/', '<', '==', '=?=', '=!=', '&&', '||']))} {right})"
    if kind == 1:
        return f"({left} ?: {right})"
    if kind == 2:
        return f"({_tree(draw, depth - 1)} ? {left} : {right})"
    if kind == 3:
        return f"({draw(st.sampled_from(['-', '!']))}({left}))"
    return f"({left})"


@st.composite
def _knobs(draw: Any) -> str:
    return _tree(draw, 3)


def _ad(values: list) -> ClassAd:
    ad = ClassAd({})
    for name, text in zip(_NAMES, values):
        if text is not None:
            ad.set_node(name, parse_expr(text))
    return ad


_AD = st.lists(st.sampled_from(_VALUES), min_size=len(_NAMES), max_size=len(_NAMES))


@settings(max_examples=200, deadline=None)
@given(st.lists(_AD, min_size=1, max_size=8), _AD, _AD, _knobs(), st.booleans())
def test_rows_left_out_give_every_request_the_same_rank(slots, one, other, knob, my_attr):
    """On the rows left out (when the knob's shape is analysed at all), the knob ranks and
    errors against two requests are the same, bit for bit; a row's own attribute named MY too."""
    ads = [_ad(v) for v in slots]
    if my_attr:  # a row's own attribute named MY
        ads[0].set_node("My", parse_expr("[A = 7]"))
    table = AdTable(ads)
    node = parse_expr(knob)
    at = columnar_match._request_rows(node, table)
    if at is None:
        return
    free = np.ones(table.n, dtype=bool)
    free[at] = False
    got = []
    for req in (_ad(one), _ad(other)):
        col = evaluate_column(node, table, row_side="my", other=req, rows=table.all_rows)
        got.append((knob_rank_single(col)[free].tobytes(), (col.kind == K_ERROR)[free].tobytes()))
    assert got[0] == got[1]
