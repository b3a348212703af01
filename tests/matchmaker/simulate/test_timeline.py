"""The simulated queue's timeline: which jobs are due at a time, the queue in order, the counts.

Expected values are worked out by hand in each docstring."""

from __future__ import annotations

from classad.ad import ClassAd
from matchmaker.pool.ads import make_jobs
from matchmaker.simulate.jobs import DONE, PENDING, QUEUED_IDLE, QUEUED_RUNNING, SimJob, Timeline


def _job(proc: int, owner: str, arrival: float, phase: str) -> SimJob:
    ad = ClassAd({"ClusterId": 1, "ProcId": proc, "Owner": owner, "User": f"{owner}@x", "JobStatus": 1})
    (record,) = make_jobs([(ad, f"jobs:{proc}")])
    return SimJob(record, arrival, phase, 0)


def _ids(jobs: list[SimJob]) -> list[str]:
    return [j.id for j in jobs]


def test_due_jobs_come_in_queue_order_and_stale_runs_are_skipped() -> None:
    """Queue: 1.0 running until 100, 1.1 pending until 50, 1.2 running until 50 but preempted
    at 40 and started again at 40 to run until 200, 1.3 idle.  At 40 nothing is due; at 50
    only 1.1 arrives (1.2's first run no longer counts); at 100 1.0 ends; at 200 1.2 ends.
    Jobs due together come in queue order (1.0 before 1.1 at 100 when both are due)."""
    jobs = [_job(0, "a", 0, QUEUED_RUNNING), _job(1, "a", 50, PENDING), _job(2, "b", 0, QUEUED_RUNNING)]
    jobs.append(_job(3, "b", 0, QUEUED_IDLE))
    timeline = Timeline(jobs)
    jobs[0].end, jobs[0].starts = 100.0, 1
    jobs[2].end, jobs[2].starts = 50.0, 1
    timeline.runs_until(jobs[0])
    timeline.runs_until(jobs[2])
    assert timeline.due(40) == []
    timeline.move(jobs[2], QUEUED_IDLE)  # preempted at 40 ...
    jobs[2].end = None
    timeline.move(jobs[2], QUEUED_RUNNING)  # ... and started again at 40
    jobs[2].end, jobs[2].starts = 200.0, 2
    timeline.runs_until(jobs[2])
    assert _ids(timeline.due(50)) == ["1.1"]
    timeline.move(jobs[1], QUEUED_IDLE)
    assert _ids(timeline.due(100)) == ["1.0"]
    timeline.move(jobs[0], DONE)
    assert _ids(timeline.due(150)) == []
    assert _ids(timeline.due(200)) == ["1.2"]


def test_both_kinds_due_at_once_come_in_queue_order() -> None:
    """1.0 pending until 30, 1.1 running until 20: at 30 both are due, 1.0 first (queue order)."""
    jobs = [_job(0, "a", 30, PENDING), _job(1, "a", 0, QUEUED_RUNNING)]
    timeline = Timeline(jobs)
    jobs[1].end, jobs[1].starts = 20.0, 1
    timeline.runs_until(jobs[1])
    assert _ids(timeline.due(30)) == ["1.0", "1.1"]


def test_the_queue_and_the_counts_follow_the_moves() -> None:
    """Queue: 1.0 idle (a), 1.1 pending (a), 1.2 running (b).  Counts at the start: a 1 idle
    and 1 pending, b 1 running; the queue holds 1.0 and 1.2.  1.1 arrives: the queue is
    1.0, 1.1, 1.2 (queue order, not arrival order).  1.0 is done: it leaves the queue and
    a has 1 idle, 1 done."""
    jobs = [_job(0, "a", 0, QUEUED_IDLE), _job(1, "a", 10, PENDING), _job(2, "b", 0, QUEUED_RUNNING)]
    timeline = Timeline(jobs)
    assert _ids(timeline.queued) == ["1.0", "1.2"]
    assert timeline.counts["a@x"] == {QUEUED_RUNNING: 0, QUEUED_IDLE: 1, PENDING: 1, DONE: 0}
    assert timeline.counts["b@x"][QUEUED_RUNNING] == 1
    timeline.move(jobs[1], QUEUED_IDLE)
    assert _ids(timeline.queued) == ["1.0", "1.1", "1.2"]
    timeline.move(jobs[0], DONE)
    assert _ids(timeline.queued) == ["1.1", "1.2"]
    assert timeline.counts["a@x"] == {QUEUED_RUNNING: 0, QUEUED_IDLE: 1, PENDING: 0, DONE: 1}


def test_arrivals_and_repeats_read_literals_and_expressions_alike() -> None:
    """``QDate`` and ``SimJobRepeat`` as the simulation reads them at the start (here 1000):
    a number (integer or real) is its value, an expression is evaluated with the start as
    the clock, and anything that is not a number (a string, a boolean, undefined) is no
    date -- the job is queued at the start -- and no repeat.  By hand: QDate 1010 and
    1010.5 arrive then; ``time() + 20`` arrives at 1020; 990 and "soon" are queued now;
    SimJobRepeat 2 and 2.9 repeat twice, ``1 + 1`` twice, true not at all."""
    from matchmaker.simulate.jobs import initial_jobs

    rows = [
        ("1010", "2"),
        ("1010.5", "2.9"),
        ("time() + 20", "1 + 1"),
        ("990", "true"),
        ('"soon"', "undefined"),
        ("undefined", '"2"'),
    ]
    ads = [
        (
            ClassAd(f'[ClusterId = {k}; ProcId = 0; User = "a@b"; JobStatus = 1; QDate = {q}; SimJobRepeat = {r}]'),
            f"jobs:{k}",
        )
        for k, (q, r) in enumerate(rows)
    ]
    jobs = initial_jobs(make_jobs(ads), 1000.0)
    assert [(j.phase, j.arrival, j.repeats_left) for j in jobs] == [
        (PENDING, 1010.0, 2),
        (PENDING, 1010.5, 2),
        (PENDING, 1020.0, 2),
        (QUEUED_IDLE, 1000.0, 0),
        (QUEUED_IDLE, 1000.0, 0),
        (QUEUED_IDLE, 1000.0, 0),
    ]


def test_a_job_records_its_waits_and_holds_no_dict() -> None:
    """Pending until 50, started at 80 (waited 30), idle again at 100, started at 160 (60):
    the waits are (30, 60).  A queue of 600,000 jobs holds no ``__dict__`` per job."""
    job = _job(0, "a", 50, PENDING)
    assert job.waits == ()
    job.started(80.0)
    job.idle_since = 100.0
    job.started(160.0)
    assert job.waits == (30.0, 60.0) and job.idle_since is None
    assert not hasattr(job, "__dict__")
