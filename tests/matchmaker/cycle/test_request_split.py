"""A knob's rows split by :func:`matchmaker.cycle.columnar_match._request_split`: the rows
lacking a name it names read of the request only that name's value, so against two
requests holding the same literal under it (or both lacking it) the knob gives there the
same rank and error flag, as on the rows that read nothing of the request."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings, strategies as st
from test_request_rows import _NAMES, _VALUES, _ad, _knobs

from classad.ad import ClassAd
from classad.columnar import AdTable, evaluate_column, knob_rank_single
from classad.columnar.column import K_ERROR
from classad.parser import parse_expr
from matchmaker.cycle import columnar_match

_AD = st.lists(st.sampled_from(_VALUES), min_size=len(_NAMES), max_size=len(_NAMES))


@st.composite
def _requests(draw: Any) -> tuple[list, list]:
    """Two requests' values, the second keeping each of the first's with even odds (the
    same text, parsed again: a literal is the same, an expression another node)."""
    one = draw(_AD)
    other = [v if draw(st.booleans()) else draw(st.sampled_from(_VALUES)) for v in one]
    return one, other


def _redone(node: Any, table: AdTable, first: ClassAd, later: ClassAd) -> Any:
    """The rows a later request's knob rank is evaluated again on, as knob_rank_whole finds
    them from the split made with ``first`` (None: not analysed)."""
    split = columnar_match._request_split(node, table)
    if split is None:
        return None
    at, lacking = split
    redo = np.zeros(table.n, dtype=bool)
    redo[at] = True
    for lname, rows in lacking:
        if not columnar_match._same_literal(later.plain(lname), first.plain(lname)):
            redo[rows] = True
    return redo


@settings(max_examples=300, deadline=None)
@given(st.lists(_AD, min_size=1, max_size=8), _requests(), _knobs(), st.booleans())
def test_rows_not_redone_give_the_later_request_the_first_ones_rank(slots, requests, knob, my_attr):
    """On the rows not evaluated again for the later request, its knob ranks and errors are
    the first request's, bit for bit."""
    ads = [_ad(v) for v in slots]
    if my_attr:  # a row's own attribute named MY
        ads[0].set_node("My", parse_expr("[A = 7]"))
    table = AdTable(ads)
    node = parse_expr(knob)
    first, later = (_ad(v) for v in requests)
    redo = _redone(node, table, first, later)
    if redo is None:
        return
    got = []
    for req in (first, later):
        col = evaluate_column(node, table, row_side="my", other=req, rows=table.all_rows)
        got.append((knob_rank_single(col)[~redo].tobytes(), (col.kind == K_ERROR)[~redo].tobytes()))
    assert got[0] == got[1]


def test_split_by_hand():
    """The default PRE_JOB_RANK: the row whose Rank is an expression or whose Cpus is one is
    always evaluated again; the row lacking RemoteOwner only for a request whose RemoteOwner
    is not the first's literal (an expression never is)."""
    table = AdTable(
        [
            ClassAd({"Rank": 0.0, "RemoteOwner": "ann", "Cpus": 1, "Memory": 10}),
            _with(ClassAd({"RemoteOwner": "ann", "Cpus": 1, "Memory": 10}), "Rank", 'TARGET.Owner == "ann" ? 10 : 0'),
            ClassAd({"Rank": 0.0, "Cpus": 1, "Memory": 10}),
            _with(ClassAd({"Rank": 0.0, "RemoteOwner": "bea", "Memory": 10}), "Cpus", "2 * 1"),
        ]
    )
    pre = parse_expr("(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory")
    at, lacking = columnar_match._request_split(pre, table)
    assert at.tolist() == [1, 3]
    assert [(n, rows.tolist()) for n, rows in lacking] == [("remoteowner", [2])]
    bare, ann, ann2 = ClassAd({}), ClassAd({"RemoteOwner": "ann"}), ClassAd({"RemoteOwner": "ann"})
    expr = _with(ClassAd({}), "RemoteOwner", '"a" + "nn"')
    assert _redone(pre, table, bare, ClassAd({"Owner": "x"})).tolist() == [False, True, False, True]
    assert _redone(pre, table, ann, ann2).tolist() == [False, True, False, True]
    assert _redone(pre, table, bare, ann).tolist() == [False, True, True, True]
    assert _redone(pre, table, expr, expr).tolist() == [False, True, True, True]
    assert columnar_match._request_rows(pre, table).tolist() == [1, 2, 3]


def _with(ad: ClassAd, name: str, text: str) -> ClassAd:
    ad.set_node(name, parse_expr(text))
    return ad
