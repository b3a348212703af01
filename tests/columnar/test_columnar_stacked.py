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

from classad import ClassAd, ExprTree
from classad.columnar import AdTable, compile as compile_module, evaluate_attribute, evaluate_column
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


# The matchmaker's default NEGOTIATOR_PRE_JOB_RANK: only My.Rank (a slot's Rank against
# the job) and the job's own attributes that a slot lacks may differ between owners.
PRE_JOB_RANK = "(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory"
RANK_SLOTS = [
    "Rank = 0.0; Cpus = 1; Memory = {m}",
    'Rank = member(TARGET.Owner, {{"ann"}}) ? 10 : 0; Cpus = 2; Memory = {m}; RemoteOwner = "x"',
    'Rank = 0.0; Cpus = 4; Memory = {m}; RemoteOwner = "y"',
    'Rank = TARGET.Owner == "bob" ? 10 : 0; Cpus = 8; Memory = {m}',
]


def _walks(monkeypatch: Any) -> list[tuple[int, int]]:
    """Where each walk over stacked rows is noted: (rows, copies)."""
    seen: list[tuple[int, int]] = []
    made = compile_module.StackedRows.__init__

    def note(self: Any, table: Any, at: np.ndarray, copies: int) -> None:
        seen.append((len(at), copies))
        made(self, table, at, copies)

    monkeypatch.setattr(compile_module.StackedRows, "__init__", note)
    return seen


def _pre_job_rank(table: AdTable, job: ClassAd, rows: Any = None) -> list:
    col = evaluate_column(PRE_JOB_RANK, table, other=job, state=new_state(), rows=rows, shared=True)
    return col.to_values()


def _rank_table(memory: int, jobs: list[ClassAd]) -> AdTable:
    """The table of RANK_SLOTS with Memory 100, 200, 300, 400, each job's PRE_JOB_RANK
    stored, followed to a generation where every slot's Memory is ``memory`` more."""
    slots = [ClassAd("[" + t.format(m=100 * (i + 1)) + "]") for i, t in enumerate(RANK_SLOTS)]
    table = AdTable(slots)
    for job in jobs:
        _pre_job_rank(table, job)
    new = [ClassAd("[" + t.format(m=100 * (i + 1) + memory) + "]") for i, t in enumerate(RANK_SLOTS)]
    return table.follow(new, np.arange(4), np.zeros(4, bool), {"memory": np.ones(4, bool)})


def test_rows_that_read_nothing_owners_differ_in_are_computed_once(monkeypatch):
    """Hand count, Memory 101, 201, 301, 401 (every row to compute again), no job holds
    RemoteOwner: slot 0 reads no owner, 0.0 + 1,000,000 - 100,000 - 101 = 899899.0; slot 1
    (Rank 10 for ann): ann 100,000,000 + 0 - 200,000 - 201 = 99799799, else -200201; slot 2
    0.0 + 0 - 400,000 - 301 = -400301.0; slot 3 (Rank 10 for bob): bob 100,000,000 +
    1,000,000 - 800,000 - 401 = 100199599, else 199599.  Asked for by ann, the three
    results are brought in two walks: the four rows for ann, then slots 1 and 3 (whose
    Rank read the owner) once for each of bob and cid."""
    ann, bob, cid = _jobs()
    table = _rank_table(1, [ann, bob, cid])
    walks = _walks(monkeypatch)
    memo = table.shared_memo()
    asked = _pre_job_rank(table, ann)
    assert walks == [(4, 1), (2, 2)]
    as_is = memo.as_is
    got = [asked, _pre_job_rank(table, bob), _pre_job_rank(table, cid)]
    assert memo.as_is - as_is == 2
    exact = [[(type(v), v) for v in values] for values in got]
    assert exact == [
        [(float, 899899.0), (int, 99799799), (float, -400301.0), (int, 199599)],
        [(float, 899899.0), (int, -200201), (float, -400301.0), (int, 100199599)],
        [(float, 899899.0), (int, -200201), (float, -400301.0), (int, 199599)],
    ]


def test_a_slot_that_falls_through_to_the_owners_differing_values_is_computed_for_each(monkeypatch):
    """As the first count, but the jobs hold RemoteOwner: ann "ann", bob Undefined, cid
    "cid".  Slots 0 and 3 lack RemoteOwner, so they read the job's, which differs between
    the owners: (RemoteOwner =?= UNDEFINED) is true for bob only.  Slot 0: bob 899899.0,
    ann and cid -100101.0; slot 3: bob 100199599, ann and cid -800401.  The second walk
    takes slots 0, 1 and 3."""
    jobs = [
        ClassAd('[Owner = "ann"; RemoteOwner = "ann"]'),
        ClassAd('[Owner = "bob"; RemoteOwner = undefined]'),
        ClassAd('[Owner = "cid"; RemoteOwner = "cid"]'),
    ]
    table = _rank_table(1, jobs)
    walks = _walks(monkeypatch)
    got = [_pre_job_rank(table, job) for job in jobs]
    assert walks == [(4, 1), (3, 2)]
    assert [[(type(v), v) for v in values] for values in got] == [
        [(float, -100101.0), (int, 99799799), (float, -400301.0), (int, -800401)],
        [(float, 899899.0), (int, -200201), (float, -400301.0), (int, 100199599)],
        [(float, -100101.0), (int, -200201), (float, -400301.0), (int, -800401)],
    ]


def test_a_walk_where_most_rows_differ_between_owners_lays_every_row_out_for_each(monkeypatch):
    """The jobs of the last count, whose walk found 3 of its 4 rows reading RemoteOwner or
    Owner: the next generation's walk (Memory 102 ... 402) takes the four rows three times
    over at once, each value one less than in the last count.  A generation where only slot
    2's Memory changes (to 303) walks that slot alone, three times (it reads nothing that
    differs, -400303.0 for each), and the next walk is again two: the four rows for the
    first owner asking, then where the others' may differ."""
    jobs = [
        ClassAd('[Owner = "ann"; RemoteOwner = "ann"]'),
        ClassAd('[Owner = "bob"; RemoteOwner = undefined]'),
        ClassAd('[Owner = "cid"; RemoteOwner = "cid"]'),
    ]
    table = _rank_table(1, jobs)
    for job in jobs:
        _pre_job_rank(table, job)

    def slots(memories: list[int]) -> list[ClassAd]:
        return [ClassAd("[" + t.format(m=m) + "]") for t, m in zip(RANK_SLOTS, memories)]

    def followed(table: AdTable, memories: list[int], changed: list[int]) -> AdTable:
        return table.follow(slots(memories), np.arange(4), np.zeros(4, bool), {"memory": _changed(4, changed)})

    walks = _walks(monkeypatch)
    table = followed(table, [102, 202, 302, 402], [0, 1, 2, 3])
    got = [_pre_job_rank(table, job) for job in jobs]
    assert walks == [(4, 3)]
    assert [[(type(v), v) for v in values] for values in got] == [
        [(float, -100102.0), (int, 99799798), (float, -400302.0), (int, -800402)],
        [(float, 899898.0), (int, -200202), (float, -400302.0), (int, 100199598)],
        [(float, -100102.0), (int, -200202), (float, -400302.0), (int, -800402)],
    ]
    table = followed(table, [102, 202, 303, 402], [2])
    assert [_pre_job_rank(table, job)[2] for job in jobs] == [-400303.0] * 3
    table = followed(table, [103, 203, 304, 403], [0, 1, 2, 3])
    assert [_pre_job_rank(table, job)[0] for job in jobs] == [-100103.0, 899897.0, -100103.0]
    assert walks == [(4, 3), (1, 3), (4, 1), (3, 2)]


@pytest.mark.parametrize("nobody", ["undefined", '"dan"'])
def test_rows_that_compare_the_owner_with_none_of_the_owners_are_computed_once(monkeypatch, nobody):
    """Slots 0 and 1: Memory > 50 && TARGET.Owner =!= undefined (every owner has one: the
    same value for each), or =!= "dan" (no owner's name: then slots 0, 1 and 3 are one
    family, the name a column of the three rows' literals); slot 2: TARGET.Owner =?= "cid" || Memory > 50; slot 3: Memory >
    50 && TARGET.Owner =!= "bob".  Memory 40, 40, 200, 40 stored for the three owners, then
    100, 100, 40, 100: slots 0 and 1 T for each; slot 2 ann F, bob F, cid T; slot 3 ann T,
    bob F, cid T.  Asked for by ann, the three results are brought in two walks: the four
    rows for ann, then slots 2 and 3 (where an owner is compared with a name one of them
    has) once for each of bob and cid."""
    texts = [
        f"Memory > 50 && TARGET.Owner =!= {nobody}",
        f"Memory > 50 && TARGET.Owner =!= {nobody}",
        'TARGET.Owner =?= "cid" || Memory > 50',
        'Memory > 50 && TARGET.Owner =!= "bob"',
    ]
    ann, bob, cid = _jobs()
    table = AdTable(_slots([40, 40, 200, 40], texts))
    for job in (ann, bob, cid):
        _start(table, job)
    new = _slots([100, 100, 40, 100], texts)
    table = table.follow(new, np.arange(4), np.zeros(4, bool), {"memory": np.ones(4, bool)})
    walks = _walks(monkeypatch)
    got = [_start(table, job) for job in (ann, bob, cid)]
    assert walks == [(4, 1), (2, 2)]
    assert got == [[True, True, False, True], [True, True, False, False], [True, True, True, True]]


# Values of the attributes the rank expressions read, of every kind; None: the ad lacks it.
_SLOT_VALUES = {
    "Rank": [
        None,
        "0.0",
        "1",
        '"x"',
        "undefined",
        "error",
        'TARGET.Owner == "ann" ? 10 : 0',
        'member(TARGET.Owner, {"ann", "bob"}) ? 2.5 : -1',
        "TARGET.Prio",
        "Cpus * 0.1",
    ],
    "RemoteOwner": [None, '"u"', "undefined", "error", "3"],
    "Cpus": [None, "1", "2.5", '"c"', "undefined", "error", "TARGET.Prio"],
    "Memory": [None, "100", "1e300", "-0.0", '"m"', "undefined", "error"],
}
RANK_EXPRS = [
    PRE_JOB_RANK,
    "(RemoteOwner =?= UNDEFINED) * (ifThenElse(isUndefined(My.Rank), 1000, My.Rank) - Cpus - 1.0e10*(Memory=?=True))",
    "Memory * TARGET.Prio + Cpus",
    "ifThenElse(Cpus > 1, My.Rank, -Memory) + 0.5",
    'Cpus > 1 && TARGET.Owner =!= "bob" || Memory < 200',
]
_slot_texts = st.fixed_dictionaries({name: st.sampled_from(values) for name, values in _SLOT_VALUES.items()}).map(
    lambda d: "[" + "; ".join(f"{k} = {v}" for k, v in d.items() if v is not None) + "]"
)


def _rank_job(owner: str, remote_owner: Any, prio: Any, cpus: Any) -> str:
    """A job's text with its Owner and whichever of the others are not None."""
    named = zip(("Owner", "RemoteOwner", "Prio", "Cpus"), (f'"{owner}"', remote_owner, prio, cpus))
    return "[" + "; ".join(f"{k} = {v}" for k, v in named if v is not None) + "]"


_rank_jobs = st.builds(
    _rank_job,
    st.sampled_from(OWNERS),
    st.sampled_from([None, '"u"', "undefined"]),
    st.sampled_from([None, "1", "0.5", '"p"']),
    st.sampled_from([None, "2"]),
)


def _exactly(v: Any) -> Any:
    """A value with its type, a real by its bits (0.0 and -0.0 differ)."""
    return (type(v).__name__, v.hex() if type(v) is float else repr(v))


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    slots=st.lists(_slot_texts, min_size=1, max_size=7),
    jobs=st.lists(_rank_jobs, min_size=2, max_size=5),
    expr=st.sampled_from(RANK_EXPRS),
    data=st.data(),
)
def test_knob_ranks_brought_for_every_owner_are_the_scalar_values(slots, jobs, expr, data):
    """A knob rank over random slots (every kind of value in what it reads, attributes
    missing so that names fall through to the job) for jobs of several owners, brought
    generation after generation: each owner's values are the scalar evaluator's, bit for bit."""
    rows = [ClassAd(t) for t in slots]
    fixed = [ClassAd(t) for t in jobs]
    node = ExprTree(expr)
    table = AdTable(rows)
    for _generation in range(4):
        for i in data.draw(st.permutations(range(len(fixed)))):
            job = fixed[i]
            want = [node.evaluate(r, job) for r in rows]
            at = data.draw(st.sampled_from([None, np.arange(0, len(rows), 2)]))
            got = evaluate_column(node, table, other=job, state=new_state(), rows=at, shared=True).to_values()
            assert [_exactly(v) for v in got] == [_exactly(want[p]) for p in (range(len(rows)) if at is None else at)]
        new = [ClassAd(data.draw(_slot_texts)) if data.draw(st.booleans()) else r for r in rows]
        dirty = np.array([a is not b for a, b in zip(new, rows)])
        table = table.follow(new, np.arange(len(rows)), dirty, {})
        rows = new
