"""Shared results of several fixed ads brought to a new generation in one walk.

When a carried table's shared result is brought up to date for one fixed ad (a job of
one owner), the results the other fixed ads stored under the same key (the other
owners') are brought with it when they have the same rows to compute again: one walk
over those rows laid out once per owner (classad.columnar.stacked).  Each owner's
values must be what its own evaluation gives: hand-counted tables, the cases the walk
must leave to each owner's run (a new read of the fixed ad, a random draw), and random
tables of owner-dependent expressions compared with the scalar evaluator.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_columnar_differential import _same

from classad import ClassAd
from classad.columnar import AdTable, compile as compile_module, evaluate_attribute
from classad.evaluate import new_state
from classad.values import UNDEFINED

OWNERS = ("ann", "bob", "cid")
START_KEY = ("start", frozenset(), False, False)


def _slots(memories: list[int], starts: list[str]) -> list[ClassAd]:
    return [ClassAd(f"[Memory = {m}; Start = {s}]") for m, s in zip(memories, starts)]


def _jobs(extra: str = "") -> list[ClassAd]:
    return [ClassAd(f'[Owner = "{o}"{extra}]') for o in OWNERS]


def _start(table: AdTable, job: ClassAd, rows: Any = None, rng: Any = None) -> list:
    state = new_state(rng=rng) if rng is not None else new_state()
    return evaluate_attribute(table, "Start", other=job, state=state, rows=rows).to_values()


def _changed(n: int, rows: list[int]) -> np.ndarray:
    mask = np.zeros(n, bool)
    mask[rows] = True
    return mask


STARTS = [
    'Memory > 50 && TARGET.Owner =!= "bob"',
    'Memory > 150 && TARGET.Owner =!= "cid"',
    'member(TARGET.Owner, {"ann", "bob"}) && Memory > 250',
    'member(TARGET.Owner, {"cid"}) && Memory > 350',
]


def _first_and_last_rewritten(table: AdTable, slots: list[ClassAd]) -> AdTable:
    """``table`` followed to the next generation, where slot 0's Memory became 100 and
    slot 3's 400 (new ads with the same ``STARTS``)."""
    new = list(slots)
    new[0] = ClassAd(f"[Memory = 100; Start = {STARTS[0]}]")
    new[3] = ClassAd(f"[Memory = 400; Start = {STARTS[3]}]")
    return table.follow(new, np.arange(4), np.zeros(4, bool), {"memory": _changed(4, [0, 3])})


def test_the_other_owners_results_are_brought_in_the_same_walk():
    """Hand count: Memory 40, 200, 300, 300; Start of the four slots as in STARTS (two
    families: the Memory bound and the owner differ).  Generation 0:
    ann F T T F, bob F T T F, cid F F F F.  Slot 0's Memory becomes 100 and slot 3's 400:
    ann T T T F, bob F T T F, cid T F F T.  Asking for ann's brings bob's and cid's
    results to the new generation too (one walk), and theirs are then found as they are."""
    slots = _slots([40, 200, 300, 300], STARTS)
    ann, bob, cid = _jobs()
    table = AdTable(slots)
    assert [_start(table, j) for j in (ann, bob, cid)] == [
        [False, True, True, False],
        [False, True, True, False],
        [False, False, False, False],
    ]
    table = _first_and_last_rewritten(table, slots)
    memo = table.shared_memo()
    assert _start(table, ann) == [True, True, True, False]
    assert sorted(e.generation for e in memo.entries[START_KEY].values()) == [1, 1, 1]
    as_is = memo.as_is
    assert _start(table, bob) == [False, True, True, False]
    assert _start(table, cid) == [True, False, False, True]
    assert memo.as_is - as_is == 2
    assert START_KEY not in memo.unstacked


def test_a_walk_takes_no_more_rows_than_its_bound(monkeypatch):
    """As the first test, with walks bounded to 4 rows: slots 0 and 3 for ann and one
    other owner's result (bob's, the first stored after ann's); cid's is then brought by
    its own run.  The values are those of the first test."""
    monkeypatch.setattr(compile_module, "_STACKED_ROWS", 4)
    slots = _slots([40, 200, 300, 300], STARTS)
    ann, bob, cid = _jobs()
    table = AdTable(slots)
    for job in (ann, bob, cid):
        _start(table, job)
    table = _first_and_last_rewritten(table, slots)
    memo = table.shared_memo()
    assert _start(table, ann) == [True, True, True, False]
    generations = {e.tokens[0][1]: e.generation for e in memo.entries[START_KEY].values()}
    assert generations == {"ann": 1, "bob": 1, "cid": 0}
    assert _start(table, bob) == [False, True, True, False]
    assert _start(table, cid) == [True, False, False, True]


def test_a_result_not_asked_for_in_eight_generations_is_left_to_its_run():
    """Memory 40, M, 300, 300 (STARTS), ann's and bob's results stored at generation 0;
    then only ann asks, generation after generation, slot 1's Memory M alternating 100
    (odd generations) and 200: ann F (M > 150) T F.  bob's result is brought along with
    ann's while it was asked for in the last eight generations (up to generation 8), not
    at generation 9, where bob's own run brings it: F F T F."""
    slots = _slots([40, 200, 300, 300], STARTS)
    ann, bob, _ = _jobs()
    table = AdTable(slots)
    for job in (ann, bob):
        _start(table, job)
    for generation in range(1, 10):
        memory = 100 if generation % 2 else 200
        slots = list(slots)
        slots[1] = ClassAd(f"[Memory = {memory}; Start = {STARTS[1]}]")
        table = table.follow(slots, np.arange(4), np.zeros(4, bool), {"memory": _changed(4, [1])})
        assert _start(table, ann) == [False, memory > 150, True, False]
        entries = table.shared_memo().entries[START_KEY].values()
        bobs = next(e for e in entries if e.tokens == ((str, "bob"),))
        assert bobs.generation == min(generation, 8)
    assert _start(table, bob) == [False, False, True, False]


def test_the_rows_any_of_them_must_compute_are_computed_for_all():
    """Start = ifThenElse(TARGET.Owner == "ann", A, B), A = Memory > 50 && size(Name) >= 0,
    B the same of Disk: ann's result reads Memory and Disk, bob's Disk only.  Memory 40,
    100 and Disk 100, 40: ann F T, bob T F.  Slot 0's Memory and slot 1's Disk become 100:
    bob's result has slot 1 to compute again, ann's slots 0 and 1.  Asked for by bob
    first, both are brought in one walk over both slots: bob T T, ann T T."""
    text = (
        'A = Memory > 50 && size(Name) >= 0; B = Disk > 50 && size(Name) >= 0; Name = "x"; '
        'Start = ifThenElse(TARGET.Owner == "ann", A, B)'
    )
    slots = [ClassAd(f"[Memory = {m}; Disk = {d}; {text}]") for m, d in ((40, 100), (100, 40))]
    ann, bob, _ = _jobs()
    table = AdTable(slots)
    assert [_start(table, j) for j in (ann, bob)] == [[False, True], [True, False]]
    new = [ClassAd(f"[Memory = 100; Disk = 100; {text}]") for _ in range(2)]
    table = table.follow(new, np.arange(2), np.zeros(2, bool), {"memory": _changed(2, [0]), "disk": _changed(2, [1])})
    memo = table.shared_memo()
    assert _start(table, bob) == [True, True]
    assert sorted(e.generation for e in memo.entries[START_KEY].values()) == [1, 1]
    assert _start(table, ann) == [True, True]


def test_a_new_read_of_the_fixed_ad_leaves_each_owner_to_its_own_run():
    """Slot 3's Start becomes TARGET.Dept == "phys", a read the stored results never made:
    the walk cannot stand for the owners' runs (whose jobs may hold Dept), so each brings
    its own.  ann (Dept "phys"): T for slot 3, bob ("chem"): F, cid (no Dept): Undefined."""
    slots = _slots([40, 200, 300, 300], STARTS)
    jobs = [
        ClassAd('[Owner = "ann"; Dept = "phys"]'),
        ClassAd('[Owner = "bob"; Dept = "chem"]'),
        ClassAd('[Owner = "cid"]'),
    ]
    table = AdTable(slots)
    for job in jobs:
        _start(table, job)
    new = list(slots)
    new[3] = ClassAd('[Memory = 400; Start = TARGET.Dept == "phys"]')
    table = table.follow(new, np.arange(4), np.zeros(4, bool), {"start": _changed(4, [3])})
    assert [_start(table, j)[3] for j in jobs] == [True, False, UNDEFINED]
    assert START_KEY in table.shared_memo().unstacked
    assert _start(table, jobs[1]) == [False, True, True, False]


class _CountingRandom(random.Random):
    """A seeded source that counts its draws."""

    draws = 0

    def randrange(self, *args: Any, **kw: Any) -> int:  # type: ignore[override]
        self.draws += 1
        return super().randrange(*args, **kw)


def test_a_walk_that_would_draw_draws_nothing():
    """Slot 1's Start becomes random(10) >= 0 && TARGET.Owner =!= "cid" (true for ann
    whatever the draw).  ann asks for slots 0, 2 and 3 only: no number is drawn for slot 1,
    neither for ann nor for the other owners, and ann gets T T F."""
    slots = _slots([100, 200, 300, 400], STARTS)
    ann, bob, cid = _jobs()
    table = AdTable(slots)
    for job in (ann, bob, cid):
        _start(table, job)
    new = list(slots)
    new[1] = ClassAd('[Memory = 200; Start = random(10) >= 0 && TARGET.Owner =!= "cid"]')
    table = table.follow(new, np.arange(4), np.zeros(4, bool), {"start": _changed(4, [1])})
    rng = _CountingRandom(3)
    assert _start(table, ann, np.array([0, 2, 3]), rng) == [True, True, False]
    assert rng.draws == 0


# Start expressions that read the owner (and a number of the job) in several ways, and
# families of them (texts that differ only in their literals).
TEMPLATES = [
    'Memory > {k} && TARGET.Owner =!= "{u}"',
    'member(TARGET.Owner, {{"{u}", "{v}"}}) && Memory > {k}',
    'Memory * {k} + (TARGET.Owner == "{u}")',
    'ifThenElse(TARGET.Owner == "{u}", Memory, -{k})',
    "TARGET.Owner =!= undefined && Memory > {k}",
    "TARGET.Prio * Memory + {k}",
    "Memory > {k}",
    'regexp("^{u}", TARGET.Owner) || Memory < {k}',
]
start_texts = st.builds(
    lambda t, k, u, v: t.format(k=k, u=u, v=v),
    st.sampled_from(TEMPLATES),
    st.integers(0, 4),
    st.sampled_from(OWNERS),
    st.sampled_from(OWNERS),
)
job_texts = st.tuples(st.sampled_from((*OWNERS, None)), st.sampled_from(["1", "2", "1.5", "undefined"])).map(
    lambda t: "[" + (f'Owner = "{t[0]}"; ' if t[0] else "") + f"Prio = {t[1]}]"
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    slots=st.lists(st.tuples(st.integers(0, 4), start_texts), min_size=1, max_size=6),
    jobs=st.lists(job_texts, min_size=2, max_size=5),
    data=st.data(),
)
def test_every_owner_gets_its_own_values_generation_after_generation(slots, jobs, data):
    rows = [ClassAd(f"[Memory = {m}; Start = {s}]") for m, s in slots]
    fixed = [ClassAd(t) for t in jobs]
    table = AdTable(rows)
    for _generation in range(4):
        order = data.draw(st.permutations(range(len(fixed))))
        for i in order:
            job = fixed[i]
            want = [r.evaluate("Start", job, state=new_state(r, job)) for r in rows]
            at = data.draw(st.sampled_from([None, np.arange(0, len(rows), 2)]))
            got = _start(table, job, at)
            _same(got, want if at is None else [want[p] for p in at.tolist()])
        new = list(rows)
        memory, start = [], []
        for r in range(len(rows)):
            change = data.draw(st.sampled_from(["keep", "keep", "memory", "start"]))
            if change == "memory":
                new[r] = ClassAd(rows[r])
                new[r]["Memory"] = data.draw(st.integers(0, 4))
                memory.append(r)
            elif change == "start":
                new[r] = ClassAd(f"[Memory = {rows[r]['Memory']}; Start = {data.draw(start_texts)}]")
                start.append(r)
        n = len(rows)
        table = table.follow(
            new, np.arange(n), np.zeros(n, bool), {"memory": _changed(n, memory), "start": _changed(n, start)}
        )
        rows = new
