"""The columnar build's prefilters give the scalar engine's candidate lists, flags and results.

An only-Rank build finds the claimed slots whose Rank beats their CurrentRank before it
runs both Requirements, and only when no expression it evaluates can draw random numbers
(:mod:`matchmaker.cycle.draws`).  Every build of a cycle is compared here with the scalar
scan of the same request, in both modes (only-Rank and full); whole cycles and short
simulations are compared with the engine's plain path (the prefilters off), warnings in
order and the next random number drawn included."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st
from support import idle_job_ads

from classad import ast
from classad.ad import ClassAd
from classad.columnar import AdTable
from classad.evaluate import seeded_random
from classad.parser import parse_expr
from matchmaker.api import settings_from
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle import columnar_match
from matchmaker.cycle.build_reuse import FoundBuilds
from matchmaker.cycle.candidates import CandidateList
from matchmaker.cycle.draws import DrawCheck
from matchmaker.cycle.ephemeral import NegotiationAd, StaticPriorities
from matchmaker.cycle.matching import Matcher
from matchmaker.cycle.negotiator import negotiate
from matchmaker.cycle.session import open_accountant
from matchmaker.pool.ads import pool_from_ads
from matchmaker.simulate.loop import run_simulation

NOW = 100_000.0
USERS = ["alice@x.org", "bob@x.org", "carol@x.org"]
START = [
    "true",
    'TARGET.Owner =!= "carol"',
    'KeyboardIdle > 600 || State =!= "Unclaimed"',
    "TARGET.Owner =!= undefined && Cpus >= 1",
]
SLOT_RANK = [
    "0",
    "0.0",
    'TARGET.Owner == "bob"',
    'member(TARGET.Owner, {"alice", "carol"}) ? 10 : 0',
    "TARGET.JobPrio",
    "error",
    "TARGET.missing",
    "1 / (Cpus - 2)",
]
CURRENT_RANK = ["0.0", "1.0", "-1.0", "error", '"text"', "10"]
PREQ = [
    None,
    "false",
    "true",
    "RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2",
    "((CurrentTime - EnteredCurrentState) > 3600) && (RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2)",
    "RemoteUserPrio / 0 > 1",
    "TARGET.JobPrio > 0",
    "undefined",
]
JOB_REQ = ["true", "TARGET.Memory >= RequestMemory", 'TARGET.Arch == "X86_64" || TARGET.Cpus > 2']

slot = st.fixed_dictionaries(
    {
        "cpus": st.integers(1, 4),
        "memory": st.sampled_from([1024, 4096]),
        "idle": st.sampled_from([0, 3000]),
        "arch": st.sampled_from(["X86_64", "ARM64"]),
        "start": st.integers(0, len(START) - 1),
        "rank": st.integers(0, len(SLOT_RANK) - 1),
        "current": st.integers(0, len(CURRENT_RANK) - 1),
        "user": st.sampled_from([None, *USERS, *USERS]),
        "busy": st.booleans(),
        "age": st.sampled_from([60, 7200]),
    }
)
job = st.fixed_dictionaries(
    {
        "user": st.sampled_from(USERS),
        "memory": st.sampled_from([512, 2048]),
        "req": st.integers(0, len(JOB_REQ) - 1),
        "prio": st.integers(0, 2),
        "count": st.integers(1, 3),
        "limits": st.sampled_from([None, None, '"lic"', 'ifThenElse(TARGET.Cpus > 1, "big", "lic")']),
    }
)


def _slot_ad(i: int, d: dict, start: str = "", rank: str = "") -> ClassAd:
    ad = ClassAd(
        {
            "Name": f"slot{i}@host{i // 2}",
            "Cpus": d["cpus"],
            "Memory": d["memory"],
            "KeyboardIdle": d["idle"],
            "Arch": d["arch"],
            "OpSys": "LINUX",
        }
    )
    ad.set_node("START", parse_expr(start or START[d["start"]]))
    ad.set_node("Requirements", parse_expr("START && TARGET.RequestMemory <= MY.Memory"))
    ad.set_node("Rank", parse_expr(rank or SLOT_RANK[d["rank"]]))
    ad.set_node("CurrentRank", parse_expr(CURRENT_RANK[d["current"]]))
    if d["user"] is None:
        ad.update({"State": "Unclaimed", "Activity": "Idle", "EnteredCurrentState": int(NOW) - 100})
    else:
        ad.update(
            {
                "State": "Claimed",
                "Activity": "Busy" if d["busy"] else "Idle",
                "RemoteUser": d["user"],
                "RemoteOwner": d["user"],
                "EnteredCurrentState": int(NOW) - d["age"],
            }
        )
    return ad


def _job_ads(jobs: list[dict], requirements: str = "") -> list[ClassAd]:
    return idle_job_ads({**d, "requirements": requirements or JOB_REQ[d["req"]]} for d in jobs)


def _settings(preq: int, flags: dict) -> Settings:
    knobs = {} if PREQ[preq] is None else {"preemption_requirements": parse_expr(PREQ[preq])}
    base = Settings.defaults(
        preemption_needs_better_eup=flags["needs_eup"],
        skip_claimed_idle=flags["skip_idle"],
        matchlist_caching=flags["cache"],
        **knobs,
    )
    if PREQ[preq] is None:
        base = replace(base, policy=replace(base.policy, preemption_requirements=None))
    return replace(base, concurrency_capacity=lambda name: 2.0 if name == "lic" else 1.0)


def _view(cl: CandidateList) -> tuple:
    items = [cl.items[i] for i in range(len(cl.items))]
    return (
        [(c.entry.index, c.state, c.key) for c in items],
        cl.no_preemption_req,
        cl.limited,
        sorted(cl.concurrency),
    )


def _shadowed(monkeypatch: pytest.MonkeyPatch, seen: list) -> None:
    """Every build of the cycle also builds the list of the same request in both modes
    (only-Rank and full) with the columnar engine, with its plain path and with the scalar
    scan, and records ``(mode, columnar, scalar, what the columnar build sorted, what the
    plain path sorted)``: rows, states and the rows whose Rank is an error."""
    original = Matcher.build
    listed = columnar_match._RequestColumns.listed
    found = FoundBuilds.find
    draws = columnar_match.SlotTable.may_draw
    plain = [False]
    sorted_: list = []

    def spy_sort(self, rows, state, rank_errors, *rest):
        sorted_.append((rows.tolist(), state.tolist(), list(rank_errors), self.out.no_preemption_req))
        return listed(self, rows, state, rank_errors, *rest)

    def may_draw(self, req, *args):
        return plain[0] or draws(self, req, *args)

    def find(self, key, req):  # the plain path makes its list afresh
        return None if plain[0] else found(self, key, req)

    def build(self, req, autocluster, submitter, classes, only_rank, budget, static_limits):
        self.ev.use_request(req)
        for mode in (True, False):
            args = (req, autocluster, submitter, classes, mode, replace(budget), static_limits)
            sorted_.clear()
            fast = columnar_match.build(self, *args)
            plain[0] = True
            try:
                again = columnar_match.build(self, *args)
            finally:
                plain[0] = False
            if fast is not None and again is not None:
                seen.append((mode, _view(fast), _view(self._scan(*args)), sorted_[0], sorted_[1]))
        return original(self, req, autocluster, submitter, classes, only_rank, budget, static_limits)

    monkeypatch.setattr(columnar_match._RequestColumns, "listed", spy_sort)
    monkeypatch.setattr(columnar_match.SlotTable, "may_draw", may_draw)
    monkeypatch.setattr(FoundBuilds, "find", find)
    monkeypatch.setattr(Matcher, "build", build)


FLAGS = st.fixed_dictionaries({"needs_eup": st.booleans(), "skip_idle": st.booleans(), "cache": st.booleans()})
# A random cycle: its pool, PREEMPTION_REQUIREMENTS, the users' priorities and the knobs.
CYCLE = {
    "slots": st.lists(slot, min_size=1, max_size=10),
    "jobs": st.lists(job, min_size=1, max_size=4),
    "preq": st.integers(0, len(PREQ) - 1),
    "eups": st.lists(st.sampled_from([1.0, 10.0, 500.0]), min_size=3, max_size=3),
    "flags": FLAGS,
}


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE)
def test_every_build_gives_the_scalar_list_and_flags(match_engine, slots, jobs, preq, eups, flags):
    """The columnar list of each request (only-Rank and full), with its flags
    (PREEMPTION_REQUIREMENTS refused a slot, the submitter limit did, the concurrency
    limits met), is the scalar engine's."""
    pool = pool_from_ads([_slot_ad(i, d) for i, d in enumerate(slots)], _job_ads(jobs))
    seen: list = []
    with pytest.MonkeyPatch.context() as mp:
        _shadowed(mp, seen)
        negotiate(pool, _settings(preq, flags), StaticPriorities(dict(zip(USERS, eups))), NOW)
    for mode, fast, scalar, fast_sorted, plain_sorted in seen:
        assert fast == scalar, f"only_rank={mode}"
        assert fast_sorted == plain_sorted, f"only_rank={mode}"


def _as_on_the_plain_path(run: Callable[[], tuple]) -> None:
    """``run()`` gives the same as it does on the plain path: the columnar engine without
    its prefilters (every expression may draw)."""
    fast = run()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match.SlotTable, "may_draw", lambda self, req, *args: True)
        assert fast == run()


def _cycle(pool, preq: int, flags: dict, eups: list, seed: int = 3) -> tuple:
    with seeded_random(seed):
        result = negotiate(pool, _settings(preq, flags), StaticPriorities(dict(zip(USERS, eups))), NOW)
        next_draw = ClassAd("[x = random(1000000)]").evaluate("x")  # the same only after as many draws
    return result.matches, result.rejected, result.usage, result.submitters, result.warnings, next_draw


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE, draw_in=st.sampled_from(["", "rank", "start", "job", "job-unread"]))
def test_cycles_as_on_the_plain_path(match_engine, slots, jobs, preq, eups, flags, draw_in):
    """Matches, rejections with their explanations, usage and the warnings in their order
    are those of the plain path -- also when an expression the build evaluates draws
    random numbers (the prefilters then stand aside, so the same numbers are drawn)."""
    start = "random(3) != 0" if draw_in == "start" else ""
    rank = "random(4)" if draw_in == "rank" else ""
    req = "random(2) == 0 || TARGET.Cpus > 1" if draw_in == "job" else ""
    slot_ads = [_slot_ad(i, d, start if i % 2 else "", rank if i % 2 else "") for i, d in enumerate(slots)]
    job_ads = _job_ads(jobs, req)
    if draw_in == "job-unread":
        for ad in job_ads:
            ad.set_node("SimJobDuration", parse_expr("600 + random(100)"))
    _as_on_the_plain_path(lambda: _cycle(pool_from_ads(slot_ads, job_ads), preq, flags, eups))


# ---- the draw analysis -----------------------------------------------------------------------


def _check(slot_texts: list[str], job_text: str) -> bool:
    slots = [NegotiationAd(ClassAd(t)) for t in slot_texts]
    req = NegotiationAd(ClassAd(job_text))
    return DrawCheck(AdTable(slots)).may_draw(req, ("requirements", "rank", "currentrank"), ("requirements",), ())


PLAIN_SLOT = "[Requirements = START && TARGET.RequestCpus <= Cpus; START = KeyboardIdle > 60; Cpus = 2; Rank = 0]"
PLAIN_JOB = '[Requirements = TARGET.Cpus >= RequestCpus; RequestCpus = 1; Owner = "a"]'


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@pytest.mark.parametrize(
    ("slot_texts", "job_text", "draws"),
    [
        ([PLAIN_SLOT, PLAIN_SLOT], PLAIN_JOB, False),
        # a job attribute no tested expression names does not matter
        ([PLAIN_SLOT], PLAIN_JOB[:-1] + "; SimJobDuration = 600 + random(60)]", False),
        # one slot's START, reached through its Requirements
        ([PLAIN_SLOT, PLAIN_SLOT.replace("KeyboardIdle > 60", "random(2) == 1")], PLAIN_JOB, True),
        # the job's RequestCpus, read by the slot's Requirements
        ([PLAIN_SLOT], PLAIN_JOB.replace("RequestCpus = 1", "RequestCpus = 1 + random(2)"), True),
        # a bare name the job lacks falls through to the slots: KeyboardIdle draws there
        (
            [PLAIN_SLOT.replace("Cpus = 2;", "Cpus = 2; KeyboardIdle = random(100);")],
            "[Requirements = KeyboardIdle > 1]",
            True,
        ),
        # ... but not when the job has it
        (
            [PLAIN_SLOT.replace("Cpus = 2;", "Cpus = 2; Mips = random(100);")],
            "[Requirements = Mips > 1; Mips = 3]",
            False,
        ),
        ([PLAIN_SLOT.replace("Rank = 0", 'Rank = eval("1")')], PLAIN_JOB, True),
        ([PLAIN_SLOT.replace("Rank = 0", "Rank = parent.x")], PLAIN_JOB, True),
        # an attribute of a nested ad, and a list element
        ([PLAIN_SLOT.replace("Rank = 0", "Rank = Sub.x; Sub = [x = random(2)]")], PLAIN_JOB, True),
        ([PLAIN_SLOT.replace("Rank = 0", "Rank = size(L); L = {1, random(2)}")], PLAIN_JOB, True),
        ([PLAIN_SLOT.replace("Rank = 0", 'Rank = member(TARGET.Owner, {"a", "b"}) ? 10 : 0')], PLAIN_JOB, False),
        ([PLAIN_SLOT], PLAIN_JOB.replace("TARGET.Cpus", "TARGET.CurrentRank"), False),
        # CurrentTime is the clock where no ad defines it, and an attribute where one does
        ([PLAIN_SLOT.replace("Rank = 0", "Rank = CurrentTime - 60")], PLAIN_JOB, False),
        ([PLAIN_SLOT.replace("Rank = 0", "Rank = CurrentTime; CurrentTime = random(9)")], PLAIN_JOB, True),
    ],
)
def test_what_may_draw(match_engine, slot_texts, job_text, draws):
    """By hand: a tested expression may draw when it, or an expression it names (on the
    side the evaluator looks the name up), calls ``random`` or ``eval``, or names a whole ad."""
    assert _check(slot_texts, job_text) is draws


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_only_rank_build_tests_requirements_only_where_rank_is_better(match_engine, monkeypatch):
    """By hand: of three slots bob holds, only the one whose Rank for alice's job (10)
    beats its CurrentRank (0) can be taken by Rank; past her limit, alice's only-Rank
    build runs both Requirements on that row alone and offers just that slot."""
    base = {"cpus": 1, "memory": 4096, "idle": 3000, "arch": "X86_64", "start": 0, "rank": 0, "current": 0}
    claim = {**base, "user": "bob@x.org", "busy": True, "age": 60}
    ranks = ["0", 'TARGET.Owner == "alice" ? 10 : 0', "0"]
    slot_ads = [_slot_ad(i, claim, rank=r) for i, r in enumerate(ranks)]
    alice = {"user": "alice@x.org", "memory": 512, "req": 0, "prio": 0, "count": 1, "limits": None}
    asked: list[int] = []
    original = columnar_match._RequestColumns.both_requirements

    def spy(self, rows):
        asked.append(len(rows))
        return original(self, rows)

    monkeypatch.setattr(columnar_match._RequestColumns, "both_requirements", spy)
    seen: list = []
    _shadowed(monkeypatch, seen)
    flags = {"needs_eup": False, "skip_idle": False, "cache": False}
    negotiate(pool_from_ads(slot_ads, _job_ads([alice])), _settings(1, flags), StaticPriorities({}), NOW)
    only_rank = [fast for mode, fast, *_ in seen if mode]
    assert only_rank and all([index for index, _, _ in fast[0]] == [1] for fast in only_rank)
    assert asked[:3] == [1, 3, 3]  # the only-Rank build, its plain path and the full build test 1, 3, 3 rows


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_a_start_that_draws_keeps_the_plain_path(match_engine):
    """Four slots bob holds have ``START = random(3) != 0``.  Alice (EUP 500, next to
    carol's 1) is past her slice after one match, so her next request is an only-Rank
    build: the plain path tests both Requirements on the four claims (drawing four times)
    though none prefers her job.  The prefiltered build must draw the same, or every later
    number (and the cycle's next draw) would differ."""
    claim = {"cpus": 1, "memory": 4096, "idle": 3000, "arch": "X86_64", "start": 0, "rank": 0, "current": 0}
    claim |= {"user": "bob@x.org", "busy": True, "age": 60}
    slot_ads = [_slot_ad(i, claim, start="random(3) != 0") for i in range(4)] + [_slot_ad(4, {**claim, "user": None})]
    three = {"memory": 512, "req": 0, "prio": 0, "count": 3, "limits": None}
    job_ads = _job_ads([{**three, "user": "alice@x.org"}, {**three, "user": "carol@x.org"}])
    flags = {"needs_eup": False, "skip_idle": False, "cache": False}
    _as_on_the_plain_path(lambda: _cycle(pool_from_ads(slot_ads, job_ads), 0, flags, [500.0, 10.0, 1.0]))


def _simulate(slot_ads: list, job_ads: list, preq: int, seed: int) -> tuple:
    """Four 5-minute cycles of a simulation: its rows, jobs and warnings."""
    config = "NEGOTIATOR_INTERVAL = 300\nPRIORITY_HALFLIFE = 600\n"
    if PREQ[preq] is not None:
        config += f"PREEMPTION_REQUIREMENTS = {PREQ[preq]}\n"
    s = settings_from(Knobs.from_string(config))
    with seeded_random(seed):
        pool = pool_from_ads(slot_ads, job_ads)
    sim = run_simulation(
        pool, s, open_accountant(":memory:", s), start=NOW, duration=900, interval=300, job_duration=600, seed=seed
    )
    return sim.rows, sim.jobs, sim.warnings


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    slots=st.lists(slot, min_size=1, max_size=8),
    jobs=st.lists(job, min_size=1, max_size=4),
    preq=st.integers(0, len(PREQ) - 1),
    seed=st.integers(0, 3),
    draw_in=st.sampled_from(["", "start", "duration"]),
)
def test_simulations_as_on_the_plain_path(match_engine, slots, jobs, preq, seed, draw_in):
    """Over several cycles (carried tables, jobs that end and start), the series, the jobs'
    outcomes and the warnings are those of the plain path."""
    start = "random(3) != 0" if draw_in == "start" else ""
    slot_ads = [_slot_ad(i, d, start) for i, d in enumerate(slots)]
    job_ads = _job_ads(jobs)
    for ad in job_ads:
        ad.set_node("SimJobDuration", parse_expr("300 + random(600)" if draw_in == "duration" else "600"))
    _as_on_the_plain_path(lambda: _simulate(slot_ads, job_ads, preq, seed))


# ---- the draw analysis against its definition -------------------------------------------

_NAMES = ["a", "b", "c", "requirements", "rank", "currentrank"]
_EXPRS = ["1", "a + 1", "TARGET.b", "MY.c", "random(2)", "c", "TARGET.a > 1", "b && TARGET.c", "MY.a + TARGET.rank"]
_ad_text = st.dictionaries(st.sampled_from(_NAMES), st.sampled_from(_EXPRS), max_size=5)


def _reachable_draws(check: DrawCheck, req, row_names, fixed_names, nodes) -> bool:
    """The definition: some (side, name) reachable from the start, followed as the
    evaluator looks names up, holds an expression that draws (a plain walk of the graph)."""
    from matchmaker.cycle.draws import FIXED, ROW, _resolve, summary

    todo = [(ROW, n) for n in row_names] + [(FIXED, n) for n in fixed_names]
    for node in nodes:
        if summary(node).draws:
            return True
        todo.extend(_resolve(ROW, summary(node).reads, check, req))
    seen: set = set()
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        side, lname = key
        if side == ROW:
            _missing, draws, reads = check._row_name(lname)
        else:
            node = req.get_node(lname)
            if node is None or type(node) is ast.Literal:
                continue
            draws, reads = summary(node).draws, summary(node).reads
        if draws:
            return True
        todo.extend(_resolve(side, reads, check, req))
    return False


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(slots=st.lists(_ad_text, min_size=1, max_size=3), job=_ad_text, knob=st.sampled_from([None, *_EXPRS]))
def test_the_draw_analysis_follows_every_path(slots, job, knob):
    """Random slot and job ads whose attributes name each other on both sides: the
    analysis (the rows' part remembered per attribute) answers as a plain walk does."""

    def ad(d: dict) -> ClassAd:
        out = ClassAd()
        for name, text in d.items():
            out.set_node(name, parse_expr(text))
        return out

    check = DrawCheck(AdTable([NegotiationAd(ad(d)) for d in slots]))
    req = NegotiationAd(ad(job))
    nodes = [] if knob is None else [parse_expr(knob)]
    for fixed in (("requirements",), ("requirements", "rank")):
        expected = _reachable_draws(check, req, ("requirements", "rank", "currentrank"), fixed, nodes)
        assert check.may_draw(req, ("requirements", "rank", "currentrank"), fixed, nodes) is expected


_VALUES = ["1", "2", '"x"', "true", "undefined", "error", "2.5", *_EXPRS]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    slots=st.lists(_ad_text, min_size=1, max_size=3),
    jobs=st.lists(st.dictionaries(st.sampled_from(_NAMES), st.sampled_from(_VALUES), max_size=5), max_size=8),
    knob=st.sampled_from([None, *_EXPRS]),
)
# By hand: the job's ``a`` holds a literal, then is missing (a bare ``a`` then falls
# through to the slots' ``a``, which draws), then holds another literal (no draw again).
@example(
    slots=[{"a": "random(2)"}], jobs=[{"requirements": "c", "c": "a + 1", "a": v} for v in ("1", None, "2")], knob=None
)
def test_remembered_draw_answers_are_the_analysis(slots, jobs, knob):
    """A cycle's slot table remembers its answers by what the analysis can tell apart of
    the request's values (whether a name is there, and which expression it holds unless
    it is a literal): each request of a random sequence, whose names hold literals of
    other values or expressions, gets the answer a fresh analysis gives it."""

    def ad(d: dict) -> ClassAd:
        out = ClassAd()
        for name, text in d.items():
            if text is not None:
                out.set_node(name, parse_expr(text))
        return out

    rows = [NegotiationAd(ad(d)) for d in slots]
    table = columnar_match.SlotTable.__new__(columnar_match.SlotTable)
    table.table = AdTable(rows)
    knobs = () if knob is None else (parse_expr(knob),)
    for job in jobs:
        req = NegotiationAd(ad(job))
        for fixed in (("requirements",), ("requirements", "rank")):
            expected = DrawCheck(AdTable(rows)).may_draw(req, columnar_match._ROW_TESTS, fixed, knobs)
            assert table.may_draw(req, knobs, fixed) is expected


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@pytest.mark.parametrize("start", ["random(3) != 0", "KeyboardIdle > 600"])
def test_both_requirements_over_every_row_only_when_nothing_draws(match_engine, start):
    """Six idle slots, half with less memory than alice's jobs ask for.  Both Requirements
    of a full build may be evaluated over every row (the slots her Requirements refuse
    included) only when neither can draw: with ``START = random(3) != 0`` the build
    evaluates START on the slots her Requirements accept alone, as the build that tests
    them row by row does, so the same numbers are drawn."""
    free = {"cpus": 1, "idle": 3000, "arch": "X86_64", "start": 0, "rank": 0, "current": 0, "user": None}
    free |= {"busy": False, "age": 60}
    slot_ads = [_slot_ad(i, {**free, "memory": 1024 if i % 2 else 4096}, start=start) for i in range(6)]
    alice = {"user": "alice@x.org", "memory": 2048, "req": 1, "prio": 0, "count": 2, "limits": None}
    flags = {"needs_eup": False, "skip_idle": False, "cache": False}
    whole: list[int] = []
    original = columnar_match._RequestColumns.both_requirements_mask

    def spy(self):
        whole.append(1)
        return original(self)

    def run() -> tuple:
        return _cycle(pool_from_ads(slot_ads, _job_ads([alice])), 0, flags, [1.0, 1.0, 1.0])

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match._RequestColumns, "both_requirements_mask", spy)
        fast = run()
        mp.setattr(columnar_match, "_WHOLE", 0)  # never over every row
        assert fast == run()
    assert bool(whole) is (start == "KeyboardIdle > 600")
