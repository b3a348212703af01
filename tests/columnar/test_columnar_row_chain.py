"""The true rows of an ``&&`` chain of the rows, read from the parts of a plan made once
per generation of the table (classad.columnar: ``expression_true``; compile's
``Run._row_chain_plan``, ``Run._row_chain_true``).

A negotiator knob such as PREEMPTION_REQUIREMENTS lives in the slots' scope and is asked
for many requests: ``(CurrentTime - EnteredCurrentState) > 3600 && RemoteUserPrio >
TARGET.SubmitterUserPrio * 1.2``.  Its parts that read of the request at most the clock
and names the request lacks are evaluated over every row once; a comparison with such a
side keeps that side's column; each request then and-s in its own parts.  None of it may
change a true row: the expected values are the scalar evaluator's, or worked out by hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_columnar_ahead import always_ahead  # chains read from plans at any size too
from test_columnar_memo import truthy

from classad import ClassAd, set_strict_mode
from classad.columnar import AdTable, compile as columnar_compile, expression_true
from classad.evaluate import evaluate_top, new_state
from classad.parser import parse_expr

NOW = 1_700_000_000

# The parts of a chain: reading the rows and the clock (a name some rows lack falls
# through to the request), a row value compared with the request's (either way round),
# the request alone, constants, an ``||`` and the clock alone.
PARTS = [
    "(CurrentTime - Entered) > 100",
    "Prio > TARGET.SubPrio * 1.2",
    "TARGET.SubPrio * 1.2 < Prio",
    "Prio >= Cut",
    "Entered >= 0",
    "MY.Prio < 10",
    "TARGET.Flag",
    "(Owner == TARGET.User || Prio > 2)",
    "CurrentTime > 5",
    "true",
    "undefined",
    "Prio",
]
ROW_VALUES = st.sampled_from([None, "0", "1", "3", "2.5", "undefined", "error", '"s"', "true", "CurrentTime - 50"])
NUMBERS = st.one_of(st.sampled_from(["0", "1", "2", "3", "5", "2.5"]), ROW_VALUES)
ENTERED = st.sampled_from([None, str(NOW - 500), str(NOW - 50), str(NOW), "undefined", '"x"'])
OWNER = st.sampled_from([None, '"ann"', '"bob"', "3"])
REQUEST_VALUES = st.sampled_from([None, "0", "1", "2", "2.5", "undefined", '"s"', "2 * 2", "false", "true"])
slots_st = st.tuples(ENTERED, NUMBERS, OWNER)
# A request: SubPrio, Cut, Flag, User, and sometimes the rows' own names (Entered, Prio).
requests_st = st.tuples(REQUEST_VALUES, REQUEST_VALUES, REQUEST_VALUES, OWNER, st.sampled_from([None, "1", str(NOW)]))


def _slot(entered: Any, prio: Any, owner: Any) -> ClassAd:
    ad = ClassAd("[]")
    for name, text in (("Entered", entered), ("Prio", prio), ("Owner", owner)):
        if text is not None:
            ad.set_node(name, parse_expr(text))
    return ad


def _request(subprio: Any, cut: Any, flag: Any, user: Any, own: Any) -> ClassAd:
    ad = ClassAd("[]")
    for name, text in (("SubPrio", subprio), ("Cut", cut), ("Flag", flag), ("User", user)):
        if text is not None:
            ad.set_node(name, parse_expr(text))
    if own is not None:  # names the rows hold (or lack): a row lacking one reads the request's
        ad.set_node("Entered", parse_expr(own))
        ad.set_node("Prio", parse_expr(own))
    return ad


def _chain(parts: list[str], nested: int) -> str:
    if 0 < nested < len(parts) - 1:
        head, tail = parts[: len(parts) - nested], parts[len(parts) - nested :]
        return " && ".join(head) + " && (" + " && ".join(tail) + ")"
    return " && ".join(parts)


def _state(now: int) -> Any:
    """A state whose clock reads ``now``."""
    return new_state(clock=lambda: now)


def _scalar(node: Any, slots: list[ClassAd], request: ClassAd, now: int) -> list[bool]:
    return [truthy(evaluate_top(node, s, new_state(s, request, clock=lambda: now))) for s in slots]


def _true_rows(node: Any, table: AdTable, request: ClassAd, now: int, rows: Any = None) -> list[bool]:
    got = expression_true(node, table, row_side="my", other=request, state=_state(now), rows=rows)
    return got.tolist()  # type: ignore[no-any-return]


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each chain read from a plan answered (it may decline)."""
    seen: list[bool] = []
    real = columnar_compile.Run._row_chain_true

    def spy(self: Any, *args: Any) -> Any:
        got = real(self, *args)
        seen.append(got is not None)
        return got

    monkeypatch.setattr(columnar_compile.Run, "_row_chain_true", spy)
    return seen


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    parts=st.lists(st.sampled_from(PARTS), min_size=2, max_size=5),
    nested=st.integers(0, 3),
    slots=st.lists(slots_st, min_size=1, max_size=8),
    requests=st.lists(requests_st, min_size=1, max_size=4),
    clocks=st.lists(st.sampled_from([NOW, NOW + 60, NOW + 1000]), min_size=1, max_size=2),
    changed=st.lists(st.tuples(st.integers(0, 7), NUMBERS), max_size=3),
    strict=st.booleans(),
)
def test_true_rows_of_a_chain_are_the_scalar_ones(parts, nested, slots, requests, clocks, changed, strict):
    """Requests against one ``&&`` chain of the rows, one after the other, at one or two
    clocks and twice over: the true rows on every row and on the even rows are the
    scalar evaluator's; so again after some slots' Prio changed (a later generation)."""
    node = parse_expr(_chain(parts, nested))
    ads = [_slot(*s) for s in slots]
    reqs = [_request(*r) for r in requests]
    set_strict_mode(strict)
    try:
        with always_ahead():
            table = AdTable(ads)
            for generation in range(2):
                for now in clocks:
                    for _round in range(2):
                        for req in reqs:
                            want = _scalar(node, ads, req, now)
                            assert _true_rows(node, table, req, now) == want
                            even = np.arange(0, len(ads), 2)
                            assert _true_rows(node, table, req, now, even) == [want[i] for i in even.tolist()]
                if generation == 0:
                    ads = list(ads)
                    prio = np.zeros(len(ads), bool)
                    for row, value in changed:
                        if row < len(ads):
                            ads[row] = ClassAd(ads[row])
                            ads[row].set_node("Prio", parse_expr(value or "undefined"))
                            prio[row] = True
                    n = len(ads)
                    table = table.follow(ads, np.arange(n), np.zeros(n, bool), {"prio": prio})
    finally:
        set_strict_mode(False)


UWCS = "((CurrentTime - EnteredCurrentState) > (1 * 3600)) && (RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2)"


def _uwcs_slots() -> list[ClassAd]:
    """Five slots (EnteredCurrentState, RemoteUserPrio): claimed two hours ago by a user of
    priority 30, half an hour ago (30), two hours ago (5), two hours ago (a string), and
    one unclaimed slot that entered its state two hours ago and has no RemoteUserPrio."""
    rows = [(NOW - 7200, "30"), (NOW - 1800, "30"), (NOW - 7200, "5"), (NOW - 7200, '"high"')]
    ads = [ClassAd(f"[EnteredCurrentState = {e}; RemoteUserPrio = {p}]") for e, p in rows]
    ads.append(ClassAd(f"[EnteredCurrentState = {NOW - 7200}]"))
    return ads


def test_the_uwcs_preemption_requirements_by_hand(planned):
    """By hand, UWCS on :func:`_uwcs_slots`: only claims older than an hour (slots 0, 2, 3
    and 4) whose user's priority is 20 % worse than the submitter's.  A submitter of
    priority 10 (30 > 12; 5 is not; a string compared is an Error; slot 4's RemoteUserPrio
    is the request's, which has none: Undefined): slot 0.  Of priority 2 (5 > 2.4 too):
    slots 0 and 2.  Of priority 30: none.  Each asked twice, from the plan, and a caller
    writing into an answer changes no later one."""
    node = parse_expr(UWCS)
    table = AdTable(_uwcs_slots())
    want = {10: [0], 2: [0, 2], 30: []}
    with always_ahead():
        for _round in range(2):
            for prio, true_rows in want.items():
                req = ClassAd(f"[SubmitterUserPrio = {prio}]")
                got = expression_true(node, table, other=req, state=_state(NOW))
                assert np.nonzero(got)[0].tolist() == true_rows
                got[:] = True
                sub = np.array([0, 2, 4])
                got = expression_true(node, table, other=req, state=_state(NOW), rows=sub)
                assert got.tolist() == [r in true_rows for r in (0, 2, 4)]
    assert planned and all(planned)


def test_a_request_holding_a_name_the_rows_lack(planned):
    """By hand, UWCS on :func:`_uwcs_slots` for a request of SubmitterUserPrio 2 that holds
    RemoteUserPrio = 100 itself: slot 4, which lacks it, reads the request's (100 > 2.4),
    so slots 0, 2 and 4 -- the plan made for a request without it declines (the usual walk
    answers), twice; a request without it again finds slots 0 and 2 from the plan."""
    node = parse_expr(UWCS)
    table = AdTable(_uwcs_slots())
    plain = ClassAd("[SubmitterUserPrio = 2]")
    holding = ClassAd("[SubmitterUserPrio = 2; RemoteUserPrio = 100]")
    state = _state(NOW)
    with always_ahead():
        for req, true_rows in ((plain, [0, 2]), (holding, [0, 2, 4]), (holding, [0, 2, 4]), (plain, [0, 2])):
            got = expression_true(node, table, other=req, state=state)
            assert np.nonzero(got)[0].tolist() == true_rows
    assert planned == [True, False, False, True]


def test_a_later_clock_is_read_anew(planned):
    """By hand, UWCS on :func:`_uwcs_slots` for a request of SubmitterUserPrio 10: slot 0
    at the slots' clock; an hour later slot 1's claim is older than an hour too: slots 0
    and 1 (the plan, made at the first clock, declines); back at the first clock, slot 0
    again from the plan."""
    node = parse_expr(UWCS)
    table = AdTable(_uwcs_slots())
    req = ClassAd("[SubmitterUserPrio = 10]")
    with always_ahead():
        for now, true_rows in ((NOW, [0]), (NOW, [0]), (NOW + 3600, [0, 1]), (NOW, [0])):
            got = expression_true(node, table, other=req, state=_state(now))
            assert np.nonzero(got)[0].tolist() == true_rows
    assert planned == [True, True, False, True]


def test_a_later_generation_of_the_table_is_read_anew(planned):
    """By hand, UWCS on :func:`_uwcs_slots` for a request of SubmitterUserPrio 10: slot 0;
    slot 2's RemoteUserPrio becomes 50 (the table followed by its next generation):
    slots 0 and 2."""
    node = parse_expr(UWCS)
    ads = _uwcs_slots()
    table = AdTable(ads)
    req = ClassAd("[SubmitterUserPrio = 10]")
    with always_ahead():
        assert np.nonzero(expression_true(node, table, other=req, state=_state(NOW)))[0].tolist() == [0]
        ads = list(ads)
        ads[2] = ClassAd(f"[EnteredCurrentState = {NOW - 7200}; RemoteUserPrio = 50]")
        changed = np.zeros(5, bool)
        changed[2] = True
        table = table.follow(ads, np.arange(5), np.zeros(5, bool), {"remoteuserprio": changed})
        got = expression_true(node, table, other=req, state=_state(NOW))
        assert np.nonzero(got)[0].tolist() == [0, 2]
    assert planned and all(planned)


def test_small_tables_and_other_tops_take_the_usual_walk(planned):
    """Below the size where combinations are evaluated as one array, and for a top that is
    not ``&&``, no plan is made; the answers are the same (by hand: UWCS for a request of
    SubmitterUserPrio 10 is slot 0; ``RemoteUserPrio > 10 || EnteredCurrentState > 0``
    holds on every slot but slot 3, whose string compared with 10 is an Error, which
    decides the ``||``)."""
    table = AdTable(_uwcs_slots())
    req = ClassAd("[SubmitterUserPrio = 10]")
    state = _state(NOW)
    assert np.nonzero(expression_true(parse_expr(UWCS), table, other=req, state=state))[0].tolist() == [0]
    with always_ahead():
        either = parse_expr("RemoteUserPrio > 10 || EnteredCurrentState > 0")
        assert expression_true(either, table, other=req, state=state).tolist() == [True, True, True, False, True]
    assert planned == []


def test_a_plan_serves_runs_with_a_fixed_ad_or_without_alike_only(planned):
    """In strict mode ``MY.x`` is Undefined when there is no fixed ad: ``MY.Prio < 10 &&
    Size >= 0`` on a slot of Prio 1 and Size 1 and one of Prio 20 (no Size: not a part
    read of the rows alone) holds on slot 0 for a request, on no slot without one (a plan
    of each kind), and on slot 0 for a request again."""
    node = parse_expr("MY.Prio < 10 && Size >= 0")
    ads = [ClassAd("[Prio = 1; Size = 1]"), ClassAd("[Prio = 20]")]
    table = AdTable(ads)
    req = ClassAd("[SubPrio = 1]")
    set_strict_mode(True)
    try:
        with always_ahead():
            for other, true_rows in ((req, [0]), (None, []), (None, []), (req, [0])):
                got = expression_true(node, table, other=other, state=_state(NOW))
                assert np.nonzero(got)[0].tolist() == true_rows
                assert got.tolist() == _scalar(node, ads, other, NOW)
    finally:
        set_strict_mode(False)
    assert planned == [True, True, True, True]
