"""The queues a simulation's cycles build with what the last cycles found of each job record
(``QueueKeys``) are the queues a fresh build gives.

A carried record keeps its autocluster and, when reading them evaluated nothing, its
queue-order priorities; every call numbers the autoclusters again in the order it meets
them, and a priority that is an expression is evaluated again in every call, in the same
order (it may draw random numbers: the draws must stay in step).
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from classad.ad import ClassAd
from classad.evaluate import seeded_random
from classad.parser import parse_expr
from matchmaker.pool.ads import IDLE, Job
from matchmaker.pool.autocluster import Autoclusters, Queue, QueueKeys, build_queues, job_order_key

# What a job may store under a queue-order attribute: nothing, an integer, or expressions
# (one draws a random number).
_PRIOS = ["", "JobPrio = 3", "JobPrio = -2", "JobPrio = 1 + 1", "JobPrio = random(4)", "PreJobPrio1 = 1"]
_REQS = [
    "Requirements = TARGET.Memory >= RequestMemory",
    "Requirements = TARGET.Memory >= RequestMemory && TARGET.Arch == Arch",
    "Requirements = true",
]


def _job(cluster: int, proc: int, user: str, memory: int, prio: str, req: str, arch: str, status: int) -> Job:
    text = (
        f'[ClusterId = {cluster}; ProcId = {proc}; User = "{user}"; RequestMemory = {memory}; '
        f'Arch = "{arch}"; Cmd = "c{cluster}"; {prio + ";" if prio else ""} {req}]'
    )
    return Job(ClassAd(text).compact(), cluster, proc, user, status, f"jobs:{cluster}")


_jobs = st.builds(
    _job,
    st.integers(1, 6),
    st.integers(0, 3),
    st.sampled_from(["a@x", "b@x", "c@x"]),
    st.sampled_from([100, 200]),
    st.sampled_from(_PRIOS),
    st.sampled_from(_REQS),
    st.sampled_from(["X86_64", "ARM"]),
    st.sampled_from([IDLE, IDLE, IDLE, 2]),
)
_SIGNIFICANT = [frozenset({"memory"}), frozenset({"memory", "cmd"}), frozenset()]


def _shape(queues: dict[str, Queue]) -> list:
    """Each queue's runs as (autocluster, the records in order), submitters in order."""
    return [(name, [(r.autocluster, [id(j) for j in r.jobs]) for r in q.runs]) for name, q in queues.items()]


def _cycles(*knobs: st.SearchStrategy, max_size: int) -> st.SearchStrategy:
    """The cycles after the first: records taken again, new records, the significant
    attributes, whether ordered by QDate, and ``knobs``."""
    return st.lists(
        st.tuples(
            st.lists(st.integers(0, 40), max_size=14),  # records of earlier cycles taken again
            st.lists(_jobs, max_size=6),  # new records
            st.sampled_from(range(len(_SIGNIFICANT))),
            st.booleans(),  # by QDate
            *knobs,
        ),
        min_size=1,
        max_size=max_size,
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(_jobs, min_size=1, max_size=14), _cycles(max_size=5), st.integers(0, 1000))
def test_carried_queues_are_the_fresh_ones(first, cycles, seed):
    """Cycle after cycle, records taken again (some twice, some not idle), new records and
    changed significant attributes or order: the carried build gives the fresh build's runs,
    autocluster numbers and job order, with the same random draws (``JobPrio = random(4)``)."""
    kept = QueueKeys()
    records, seen = first, list(first)  # this cycle's records, every record so far
    for step, (again, new, sig_at, by_qdate) in enumerate([((), (), 0, False), *cycles]):
        if step:
            records = [seen[i % len(seen)] for i in again] + list(new)
            seen += new
        sig = _SIGNIFICANT[sig_at]
        with seeded_random(seed + step):
            fresh = build_queues(records, Autoclusters(sig), by_qdate=by_qdate)
        with seeded_random(seed + step):
            carried = build_queues(records, kept.autoclusters(sig), by_qdate=by_qdate, kept=kept)
        assert _shape(carried) == _shape(fresh)


@settings(max_examples=100, deadline=None)
@given(st.lists(_jobs, min_size=1, max_size=14), _cycles(max_size=4), st.integers(0, 1000))
def test_kept_order_keys_are_the_fresh_ones(first, cycles, seed):
    """What the claims take of the cycle's queues: after each carried build, every record
    seen so far (this cycle's, earlier ones, ones not idle) asked for its order key, by
    QDate or not, gets ``job_order_key`` of it, with the same random draws after it."""
    kept, draw = QueueKeys(), ClassAd("[r = random(1000)]")
    records, seen = first, list(first)
    for step, (again, new, sig_at, by_qdate) in enumerate([((), (), 0, False), *cycles]):
        if step:
            records = [seen[i % len(seen)] for i in again] + list(new)
            seen += new
        with seeded_random(seed + step):
            build_queues(records, kept.autoclusters(_SIGNIFICANT[sig_at]), by_qdate=by_qdate, kept=kept)
        for asked in (by_qdate, not by_qdate):
            with seeded_random(seed - step):
                got = [(kept.order_key(j, asked), draw.evaluate("r")) for j in seen]
            with seeded_random(seed - step):
                fresh = [(job_order_key(j, by_qdate=asked), draw.evaluate("r")) for j in seen]
            assert got == fresh


# NEGOTIATOR_JOB_CONSTRAINT (one draws), SIGNIFICANT_ATTRIBUTES and the names removed from them.
_CONSTRAINTS = [None, "RequestMemory > 100", "random(3) > 0", 'Arch == "ARM" || JobPrio > 0']
_FIXED = [None, ("RequestMemory",), ("Cmd", "Arch")]
_REMOVE = [(), ("Cmd",), ("requestmemory",)]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_jobs, min_size=1, max_size=14),
    _cycles(
        st.sampled_from(range(len(_CONSTRAINTS))),
        st.sampled_from(range(len(_FIXED))),
        st.sampled_from(range(len(_REMOVE))),
        max_size=6,
    ),
    st.integers(0, 1000),
)
def test_carried_queues_under_a_job_constraint_and_fixed_names(first, cycles, seed):
    """As :func:`test_carried_queues_are_the_fresh_ones`, with a job constraint (records it
    leaves out in one cycle and takes in the next; one drawing a random number per job) and
    the autoclusters' fixed and removed names changing between cycles: the carried build
    gives the fresh build's runs, numbers, order and draws."""
    kept = QueueKeys()
    records, seen = first, list(first)
    for step, (again, new, sig_at, by_qdate, c, f, r) in enumerate([((), (), 0, False, 0, 0, 0), *cycles]):
        if step:
            records = [seen[i % len(seen)] for i in again] + list(new)
            seen += new
        sig, text = _SIGNIFICANT[sig_at], _CONSTRAINTS[c]
        constraint = None if text is None else parse_expr(text)
        names = {"fixed": _FIXED[f], "remove": _REMOVE[r]}
        with seeded_random(seed + step):
            fresh = build_queues(records, Autoclusters(sig, **names), by_qdate=by_qdate, job_constraint=constraint)
        with seeded_random(seed + step):
            carried = build_queues(
                records, kept.autoclusters(sig, **names), by_qdate=by_qdate, job_constraint=constraint, kept=kept
            )
        assert _shape(carried) == _shape(fresh)


def test_autoclusters_numbered_again_each_cycle():
    """By hand: the first cycle meets memory 100 (autocluster 1), then 200 (2); the second
    holds only the 200 job, which is then autocluster 1, as in a fresh build; the third
    meets 200 then 100 again: 1 and 2."""
    small = _job(1, 0, "a@x", 100, "", _REQS[0], "X86_64", IDLE)
    large = _job(2, 0, "a@x", 200, "", _REQS[0], "X86_64", IDLE)
    later = _job(3, 0, "a@x", 100, "", _REQS[0], "X86_64", IDLE)
    kept = QueueKeys()
    sig = frozenset({"memory"})

    def runs(jobs: list[Job]) -> list[tuple[int, int]]:
        q = build_queues(jobs, kept.autoclusters(sig), kept=kept)["a@x"]
        return [(r.autocluster, len(r.jobs)) for r in q.runs]

    assert runs([small, large]) == [(1, 1), (2, 1)]
    assert runs([large]) == [(1, 1)]
    assert runs([large, later]) == [(1, 1), (2, 1)]


def test_order_expression_evaluated_in_every_cycle():
    """A record whose JobPrio is an expression is ordered by its value in each cycle: the
    same record with ``JobPrio = random(100)`` against one with ``JobPrio = 50``, under
    seeds that draw above and below 50, comes first or second accordingly."""
    drawn = _job(1, 0, "a@x", 100, "JobPrio = random(100)", _REQS[0], "X86_64", IDLE)
    fixed = _job(2, 0, "a@x", 200, "JobPrio = 50", _REQS[0], "X86_64", IDLE)
    kept = QueueKeys()
    sig = frozenset({"memory"})
    orders = set()
    for seed in range(12):
        with seeded_random(seed):
            q = build_queues([drawn, fixed], kept.autoclusters(sig), kept=kept)["a@x"]
        orders.add(tuple(j.cluster for r in q.runs for j in r.jobs))
    assert orders == {(1, 2), (2, 1)}
