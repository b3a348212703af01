"""A request's ``&&`` chain of Requirements read as the true rows of its parts
(classad.columnar.compile: ``Run._conjunction_plan``, ``Run._conjunction_true``).

Once a cheap Requirements of the request side is computed afresh on every row, the parts
that read only the rows (``TARGET.Arch == "X86_64"``) are evaluated once for the table's
generation and shared by every request holding the same expression; each request then
compares its own values with the rows' columns.  Neither may change a true row: the
expected values are the scalar evaluator's, or worked out by hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_columnar_afresh import afresh_at_once
from test_columnar_differential import _clock
from test_columnar_memo import truthy

from classad import ClassAd, set_strict_mode
from classad.columnar import AdTable, attribute_true, compile as columnar_compile
from classad.evaluate import new_state
from classad.parser import parse_expr

# The parts of a chain: read only through the rows (the same for every request), a row
# value compared with a request's value (either way round, with arithmetic on either
# side), and others (evaluated as any combination's part: a request's value alone, a
# constant, an ``||``, a comparison whose sides both read the request).
PARTS = [
    'TARGET.Arch == "x86"',
    "TARGET.HasX",
    "(TARGET.Memory > 2)",
    "TARGET.Memory >= RequestMemory",
    "RequestDisk <= TARGET.Disk",
    "TARGET.Memory * 2 > RequestMemory",
    "TARGET.Disk == RequestDisk + 1",
    "TARGET.Cpus >= RequestCpus",
    "(TARGET.Memory >= RequestMemory || TARGET.HasX)",
    "RequestCpus > 0",
    "true",
    "undefined",
    "RequestMemory <= RequestDisk",
]
ROW_VALUES = st.sampled_from([None, "0", "1", "3", "2.5", "undefined", "error", '"s"', "true"])
REQUEST_VALUES = st.sampled_from([None, "0", "1", "2", "2.5", "undefined", '"s"', "TARGET.Memory", "2 * 2", "false"])
ARCH = st.sampled_from([None, '"x86"', '"X86"', '"arm"', "undefined", "3"])
HASX = st.sampled_from([None, "true", "false", "undefined", "1"])
# Mostly numbers: a column of numbers only is compared with a request's number at once.
NUMBERS = st.one_of(st.sampled_from(["0", "1", "2", "3", "5"]), ROW_VALUES)
slots_st = st.tuples(ARCH, HASX, NUMBERS, NUMBERS, ROW_VALUES)
requests_st = st.tuples(REQUEST_VALUES, REQUEST_VALUES, REQUEST_VALUES)


def _slot(arch: Any, hasx: Any, memory: Any, disk: Any, cpus: Any) -> ClassAd:
    ad = ClassAd("[]")
    for name, text in (("Arch", arch), ("HasX", hasx), ("Memory", memory), ("Disk", disk), ("Cpus", cpus)):
        if text is not None:
            ad.set_node(name, parse_expr(text))
    return ad


def _request(requirements: Any, memory: Any, disk: Any, cpus: Any) -> ClassAd:
    """A request holding the very node ``requirements`` (as the requests of one
    autocluster do), with its own values."""
    ad = ClassAd("[]")
    for name, text in (("RequestMemory", memory), ("RequestDisk", disk), ("RequestCpus", cpus)):
        if text is not None:
            ad.set_node(name, parse_expr(text))
    ad.set_node("Requirements", requirements)
    return ad


def _chain(parts: list[str], nested: int) -> str:
    """``parts`` joined by ``&&``: as written (left to right), or with the last ``nested``
    parts grouped on the right."""
    if 0 < nested < len(parts) - 1:
        head, tail = parts[: len(parts) - nested], parts[len(parts) - nested :]
        return " && ".join(head) + " && (" + " && ".join(tail) + ")"
    return " && ".join(parts)


def _scalar(slots: list[ClassAd], request: ClassAd) -> list[bool]:
    return [truthy(request.evaluate("Requirements", s, state=new_state(request, s, clock=_clock))) for s in slots]


def _true_rows(table: AdTable, request: ClassAd, rows: Any = None) -> list[bool]:
    got = attribute_true(
        table, "Requirements", row_side="target", other=request, state=new_state(clock=_clock), rows=rows, shared=True
    )
    return got.tolist()  # type: ignore[no-any-return]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    parts=st.lists(st.sampled_from(PARTS), min_size=2, max_size=5),
    nested=st.integers(0, 3),
    slots=st.lists(slots_st, min_size=1, max_size=8),
    requests=st.lists(requests_st, min_size=1, max_size=4),
    changed=st.lists(st.tuples(st.integers(0, 7), NUMBERS), max_size=3),
    strict=st.booleans(),
)
def test_true_rows_of_a_chain_are_the_scalar_ones(parts, nested, slots, requests, changed, strict):
    """Requests holding one ``&&`` chain of Requirements, one after the other and twice
    over: the true rows on every row and on the even rows are the scalar evaluator's;
    so again after some slots' Memory changed (a later generation of the table)."""
    node = parse_expr(_chain(parts, nested))
    ads = [_slot(*s) for s in slots]
    reqs = [_request(node, *r) for r in requests]
    set_strict_mode(strict)
    try:
        with afresh_at_once():
            table = AdTable(ads)
            for generation in range(2):
                for _round in range(2):
                    for req in reqs:
                        want = _scalar(ads, req)
                        assert _true_rows(table, req) == want
                        even = np.arange(0, len(ads), 2)
                        assert _true_rows(table, req, even) == [want[i] for i in even.tolist()]
                if generation == 0:
                    ads = list(ads)
                    memory = np.zeros(len(ads), bool)
                    for row, value in changed:
                        if row < len(ads):
                            ads[row] = ClassAd(ads[row])
                            ads[row].set_node("Memory", parse_expr(value or "undefined"))
                            memory[row] = True
                    n = len(ads)
                    table = table.follow(ads, np.arange(n), np.zeros(n, bool), {"memory": memory})
    finally:
        set_strict_mode(False)


REQUIREMENTS = (
    '(TARGET.Arch == "x86") && (TARGET.Memory >= RequestMemory) && (RequestDisk <= TARGET.Disk) && TARGET.HasX'
)


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each chain read as the true rows of its parts answered (it may decline)."""
    seen: list[bool] = []
    real = columnar_compile.Run._conjunction_true

    def spy(self: Any, *args: Any) -> Any:
        got = real(self, *args)
        seen.append(got is not None)
        return got

    monkeypatch.setattr(columnar_compile.Run, "_conjunction_true", spy)
    return seen


def test_requests_of_one_chain_by_hand(planned):
    """By hand, five slots (Arch, Memory, Disk, HasX): x86/4/10/true, arm/8/10/true,
    x86/8/5/undefined, x86/2/20/true, x86/"big"/20/true; Requirements as REQUIREMENTS.
    The row-only parts (Arch, HasX) hold on slots 0, 3 and 4.  A request of Memory 3 and
    Disk 10 keeps slot 0 (4 >= 3, 10 <= 10); slot 3 has 2 < 3 of Memory, slot 4 a string
    (an Error).  A request of Memory 2 and Disk 20 keeps slot 3 (slot 0's Disk is 10);
    one of Memory 1 and Disk 1 keeps slots 0 and 3.  Each asked twice, the answers made
    from the parts, and a caller writing into an answer changes no later one."""
    node = parse_expr(REQUIREMENTS)
    rows = [("x86", 4, 10, "true"), ("arm", 8, 10, "true"), ("x86", 8, 5, "undefined"), ("x86", 2, 20, "true")]
    ads = [ClassAd(f'[Arch = "{a}"; Memory = {m}; Disk = {d}; HasX = {h}]') for a, m, d, h in rows]
    ads.append(ClassAd('[Arch = "x86"; Memory = "big"; Disk = 20; HasX = true]'))
    want = {(3, 10): [0], (2, 20): [3], (1, 1): [0, 3]}
    with afresh_at_once():
        table = AdTable(ads)
        for _round in range(2):
            for (memory, disk), true_rows in want.items():
                req = _request(node, str(memory), str(disk), None)
                got = attribute_true(
                    table, "Requirements", row_side="target", other=req, state=new_state(clock=_clock), shared=True
                )
                assert np.nonzero(got)[0].tolist() == true_rows
                got[:] = True
    assert planned and all(planned)


def test_a_constant_part_leaves_the_chain_to_the_usual_walk(planned):
    """By hand: ``TARGET.HasX && RequestCpus > 0 && TARGET.Memory >= RequestMemory`` on two
    slots (HasX true, Memory 4 and 1) for a request of RequestCpus 0 and RequestMemory 2:
    ``RequestCpus > 0`` is false for every row (a constant, which decides the chain alone),
    so no row is true, as the usual walk finds it.  With RequestCpus 1: slot 0 only.  The
    chain of parts declines either way (a constant part, true or not, is left to the walk)."""
    node = parse_expr("TARGET.HasX && RequestCpus > 0 && TARGET.Memory >= RequestMemory")
    ads = [ClassAd("[HasX = true; Memory = 4]"), ClassAd("[HasX = true; Memory = 1]")]
    with afresh_at_once():
        table = AdTable(ads)
        for cpus, true_rows in ((0, []), (1, [0])):
            for _round in range(2):
                got = _true_rows(table, _request(node, "2", None, str(cpus)))
                assert np.nonzero(got)[0].tolist() == true_rows
    assert planned and not any(planned)


def test_a_later_generation_of_the_table_is_read_anew(planned):
    """By hand: ``TARGET.Memory >= RequestMemory && TARGET.HasX`` on two slots (Memory 3
    and 1, HasX true) for a request of RequestMemory 2: slot 0.  Slot 1's Memory becomes 5
    (the table followed by its next generation): both slots."""
    node = parse_expr("TARGET.Memory >= RequestMemory && TARGET.HasX")
    ads = [ClassAd("[Memory = 3; HasX = true]"), ClassAd("[Memory = 1; HasX = true]")]
    req = _request(node, "2", None, None)
    with afresh_at_once():
        table = AdTable(ads)
        for _round in range(2):
            assert _true_rows(table, req) == [True, False]
        ads = [ads[0], ClassAd("[Memory = 5; HasX = true]")]
        table = table.follow(ads, np.arange(2), np.zeros(2, bool), {"memory": np.array([False, True])})
        for _round in range(2):
            assert _true_rows(table, req) == [True, True]
    assert planned and all(planned)
