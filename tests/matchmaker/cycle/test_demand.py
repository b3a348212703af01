"""Each submitter's demand for the group quotas (matchmaker.cycle.demand).

Expected values are hand sums of the rule in docs/negotiation.md (allocation rounds):
idle and running jobs count, each for its ``RequestCpus`` under
``NEGOTIATOR_USE_WEIGHTED_DEMAND`` (a value that is not a positive number counts 1),
else for 1.  The memory a simulation carries (:class:`JobWeights`) must give the same
sums as a call without it, whatever changed between the calls.
"""

from __future__ import annotations

import random

from classad.ad import ClassAd
from classad.evaluate import seeded_random
from classad.parser import parse_expr
from matchmaker.cycle.demand import JobWeights, job_demand
from matchmaker.pool.ads import Job, Pool

IDLE, RUNNING, HELD, DONE = 1, 2, 5, 4


def job(proc: int, submitter: str, request_cpus: object, status: int = IDLE) -> Job:
    """A job record; ``request_cpus`` is a value, an expression text (``"expr:..."``) or None (absent)."""
    ad = ClassAd({"ClusterId": 1, "ProcId": proc, "RequestMemory": 3072})
    if isinstance(request_cpus, str) and request_cpus.startswith("expr:"):
        ad.set_node("RequestCpus", parse_expr(request_cpus[5:]))
    elif request_cpus is not None:
        ad["RequestCpus"] = request_cpus
    return Job(ad, 1, proc, submitter, status, f"jobs:{proc}")


SUBS = {"a@d": None, "b@d": None}


def mixed_jobs() -> list[Job]:
    return [
        job(0, "a@d", 2),  # 2
        job(1, "a@d", 0.5, RUNNING),  # 0.5
        job(2, "a@d", "expr:RequestMemory / 1024"),  # 3
        job(3, "a@d", None),  # absent: Undefined -> 1
        job(4, "a@d", 0),  # not positive -> 1
        job(5, "a@d", -2),  # 1
        job(6, "a@d", "four"),  # a string -> 1
        job(7, "a@d", True),  # a boolean is not a number -> 1
        job(8, "a@d", "expr:1 / 0"),  # Error -> 1
        job(9, "a@d", 8, HELD),  # held: not counted
        job(10, "a@d", 8, DONE),  # completed: not counted
        job(11, "c@d", 8),  # not a submitter of the cycle
        job(12, "b@d", "expr:2 + 2", RUNNING),  # 4
        job(13, "b@d", 1),  # 1
    ]


def test_weighted_and_plain_counts() -> None:
    """a: 2 + 0.5 + 3 + 1 + 1 + 1 + 1 + 1 + 1 = 11.5; b: 4 + 1 = 5.  Unweighted: a 9 jobs, b 2."""
    pool = Pool([], mixed_jobs())
    assert job_demand(pool, SUBS, True) == {"a@d": 11.5, "b@d": 5.0}
    assert job_demand(pool, SUBS, False) == {"a@d": 9.0, "b@d": 2.0}
    memory = JobWeights()
    for _ in range(2):
        assert job_demand(pool, SUBS, True, memory) == {"a@d": 11.5, "b@d": 5.0}
        assert job_demand(pool, SUBS, False, memory) == {"a@d": 9.0, "b@d": 2.0}


def test_sums_run_in_job_order() -> None:
    """1e16 + 1 rounds back to 1e16 (the doubles there are 2 apart, the tie goes to the even
    one), so 1e16, 1, 1 in that order sum to 1e16, while 1, 1, 1e16 would give 1e16 + 2."""
    pool = Pool([], [job(0, "a@d", 1e16), job(1, "a@d", 1), job(2, "a@d", "expr:1")])
    expected = {"a@d": 1e16, "b@d": 0.0}
    assert job_demand(pool, SUBS, True) == expected
    memory = JobWeights()
    job_demand(pool, SUBS, True, memory)
    assert job_demand(pool, SUBS, True, memory) == expected
    reordered = Pool([], [pool.jobs[1], pool.jobs[2], pool.jobs[0]])
    assert job_demand(reordered, SUBS, True, memory) == {"a@d": 1e16 + 2, "b@d": 0.0}


def test_a_changed_job_gets_a_new_record_and_is_read_again() -> None:
    """Cycle 1: a 2 + 3 = 5.  Cycle 2: job 0 asks 6 (a new record of the same job), job 1 is
    held, job 2 arrives with 1.5, job 3 left: a 6 + 1.5 = 7.5; b's job 4 (weight 4) runs."""
    first = [job(0, "a@d", 2), job(1, "a@d", 3), job(3, "b@d", 7, HELD), job(4, "b@d", 4)]
    memory = JobWeights()
    assert job_demand(Pool([], first), SUBS, True, memory) == {"a@d": 5.0, "b@d": 4.0}
    held = first[1].with_ad(first[1].ad, HELD)
    second = [job(0, "a@d", 6), held, job(2, "a@d", 1.5), first[3].with_ad(first[3].ad, RUNNING)]
    assert job_demand(Pool([], second), SUBS, True, memory) == {"a@d": 7.5, "b@d": 4.0}
    assert job_demand(Pool([], second), SUBS, False, memory) == {"a@d": 2.0, "b@d": 1.0}


def test_a_submitter_that_joins_later_counts_its_known_jobs() -> None:
    """The records are known from a call without b@d among the submitters: b 3 + 1 = 4."""
    jobs = [job(0, "a@d", 2), job(1, "b@d", 3), job(2, "b@d", "expr:1")]
    memory = JobWeights()
    assert job_demand(Pool([], jobs), {"a@d": None}, True, memory) == {"a@d": 2.0}
    assert job_demand(Pool([], jobs), SUBS, True, memory) == {"a@d": 2.0, "b@d": 4.0}


def test_an_expression_is_evaluated_in_every_call_in_job_order() -> None:
    """``random`` draws from the run's seeded source: each call evaluates both jobs' requests
    again, the first job first, as the scalar evaluator does one evaluation after another."""
    expr = "expr:1 + random(1000)"
    jobs = [job(0, "a@d", expr), job(1, "b@d", expr)]
    memory = JobWeights()
    with seeded_random(11):
        got = [job_demand(Pool([], jobs), SUBS, True, memory) for _ in range(3)]
    reference = ClassAd()
    reference.set_node("RequestCpus", parse_expr(expr[5:]))
    with seeded_random(11):
        values = [float(reference.evaluate("RequestCpus")) for _ in range(6)]
    assert got == [{"a@d": values[2 * k], "b@d": values[2 * k + 1]} for k in range(3)]
    assert len(set(values)) > 1  # the draws differ, so a kept value would show


def test_memory_follows_a_changing_queue() -> None:
    """Random queues drawn from a set of records, some of which get new records (other
    values, other status) now and then: each call with the memory gives the sum of the
    values the records were made with (RequestMemory / 512 = 6, undefined and 0 count 1)."""
    rng = random.Random(3)
    weight = {1: 1.0, 2: 2.0, 0.25: 0.25, 0: 1.0, None: 1.0, "expr:RequestMemory / 512": 6.0, "expr:undefined": 1.0}
    made_with: dict[Job, object] = {}

    def make(proc: int) -> Job:
        value = rng.choice(list(weight))
        record = job(proc, rng.choice(("a@d", "b@d")), value, rng.choice((IDLE, RUNNING, HELD)))
        made_with[record] = value
        return record

    records = [make(p) for p in range(60)]
    memory = JobWeights()
    for step in range(40):
        queue = rng.sample(records, rng.randint(0, 40))
        expected = {"a@d": 0.0, "b@d": 0.0}
        for r in queue:
            if r.status in (IDLE, RUNNING):
                expected[r.submitter] += weight[made_with[r]]
        assert job_demand(Pool([], queue), SUBS, True, memory) == expected
        if step % 5 == 4:  # some jobs change: new records for their ids
            for k in rng.sample(range(len(records)), 10):
                records[k] = make(records[k].proc)


def test_memory_holds_only_the_last_queue() -> None:
    """The memory keeps the records of the last call alone, so it keeps no ad alive that
    the pool has dropped: after queues of 30, 10 and 20 records (the last sharing 5 with the
    second), it holds those 20."""
    memory = JobWeights()
    second = [job(p, "a@d", 1) for p in range(10)]
    third = second[:5] + [job(p, "b@d", 2) for p in range(15)]
    for queue, expected in (
        ([job(p, "a@d", 1) for p in range(30)], {"a@d": 30.0, "b@d": 0.0}),
        (second, {"a@d": 10.0, "b@d": 0.0}),
        (third, {"a@d": 5.0, "b@d": 30.0}),
    ):
        assert job_demand(Pool([], queue), SUBS, True, memory) == expected
    assert set(memory.known) == set(third)


def test_told_changes_are_applied_only_from_the_list_they_start_at() -> None:
    """A simulation tells the memory each cycle's queue as the last one told less the records
    that left and with those that joined.  Queues: 1 (a 2, b 3), 2 (b leaves, a's job
    becomes 5: a 5), 3 (b 4 joins: a 5, b 4).  With a call at each queue the changes are
    followed; with no call at queue 2, queue 3 is not queue 1's tallies changed by the last
    change alone (b's 3 would stay): it is read again."""
    a, b = job(0, "a@d", 2), job(1, "b@d", 3)
    a5, b4 = job(0, "a@d", 5), job(3, "b@d", 4)
    queues = ([a, b], [a5], [a5, b4])
    expected = ({"a@d": 2.0, "b@d": 3.0}, {"a@d": 5.0, "b@d": 0.0}, {"a@d": 5.0, "b@d": 4.0})
    changes = (([], []), ([a, b], [a5]), ([], [b4]))
    for asked in ((0, 1, 2), (0, 2)):
        memory = JobWeights()
        for k, (queue, (left, joined)) in enumerate(zip(queues, changes)):
            memory.tell(queue, left, joined)
            if k in asked:
                assert job_demand(Pool([], queue), SUBS, True, memory) == expected[k]
                assert memory.counts(queue) == Pool([], queue).submitter_counts()
        assert set(memory.known) == {a5, b4}
