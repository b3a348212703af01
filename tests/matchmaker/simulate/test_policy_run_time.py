"""How long a running job has run, as the priority models read it from the job ads a
simulation writes (docs/policies.md): the current run, from the start the schedd stamps."""

from __future__ import annotations

import matchmaker
from classad import ParserType, parseAds
from matchmaker.config.knobs import Knobs
from matchmaker.policies.jobs import wall_seconds
from matchmaker.pool.ads import make_jobs

START = 1700000000.0


def ads(text: str) -> list:
    return list(parseAds(text, ParserType.Old))


def running_job(extra: str) -> object:
    text = f'ClusterId = 1\nProcId = 0\nUser = "a@d"\nJobStatus = 2\nRequirements = true\n{extra}\n'
    return make_jobs([(ads(text)[0], "test")], uid_domain="d")[0]


def test_the_current_run_is_read_from_its_start():
    """``RemoteWallClockTime`` counts only the runs that ended (0.0 from ``condor_submit``
    until one does), so a running job's run time is ``now - JobCurrentStartDate``: a job
    started 5400 s ago after an earlier run of 1800 s has run 5400 s, whatever its
    ``EnteredCurrentStatus``; one that never ran before (``RemoteWallClockTime = 0.0``)
    has run 3600 s, not 0.  Without a start: ``RemoteWallClockTime`` (900), else
    ``now - EnteredCurrentStatus`` (600)."""
    now = START
    rerun = running_job(
        f"JobCurrentStartDate = {now - 5400:.0f}\nRemoteWallClockTime = 1800.0\nEnteredCurrentStatus = {now - 5000:.0f}"
    )
    assert wall_seconds(rerun, now) == 5400
    first = running_job(f"JobCurrentStartDate = {now - 3600:.0f}\nRemoteWallClockTime = 0.0")
    assert wall_seconds(first, now) == 3600
    assert wall_seconds(running_job("RemoteWallClockTime = 900"), now) == 900
    assert wall_seconds(running_job(f"EnteredCurrentStatus = {now - 600:.0f}"), now) == 600


def lsf_run(extra: str) -> list:
    """A's four jobs have run two hours when the run begins and end one a cycle from
    t = 600; A and B then each have four idle jobs; LSF with equal shares."""
    claimed = 'State = "Claimed"\nActivity = "Busy"\nRemoteUser = "A@d"\nRemoteOwner = "A@d"\n'
    slots = "".join(
        f'Name = "slot{i}@node"\nCpus = 1\n{claimed}JobId = "1.{i}"\nRequirements = true\nRank = 0\n\n'
        for i in range(4)
    )
    jobs = "".join(
        f'ClusterId = 1\nProcId = {p}\nOwner = "A"\nUser = "A@d"\nJobStatus = 2\nRemoteHost = "slot{p}@node"\n'
        f"JobCurrentStartDate = {START - 7200:.0f}\nEnteredCurrentStatus = {START - 7200:.0f}\n"
        f"Requirements = true\nSimJobDuration = {7200 + 600 * (p + 1)}\n{extra}\n\n"
        for p in range(4)
    )
    for cluster, user in ((2, "A"), (3, "B")):
        jobs += "".join(
            f'ClusterId = {cluster}\nProcId = {p}\nOwner = "{user}"\nUser = "{user}@d"\nJobStatus = 1\n'
            f"Requirements = true\nSimJobDuration = 36000\n{extra}\n\n"
            for p in range(4)
        )
    knobs = Knobs.from_string(
        "NEGOTIATOR_INTERVAL = 600\nUID_DOMAIN = d\nMATCHMAKER_PRIORITY_POLICY = lsf\nLSF_USER_SHARES = [A, 10] [B, 10]\n"
    )
    sim = matchmaker.simulate(matchmaker.load_ads(knobs, ads(slots), ads(jobs)), start=START, duration=3000)
    return [(r["name"], r["running"], r["matched"]) for r in sim if r["kind"] == "submitter"]


def test_a_policy_sees_the_same_run_times_with_the_counter_condor_submit_writes():
    """``condor_submit`` writes ``RemoteWallClockTime = 0.0`` on every job.  It says no
    run has ended yet, so it must not change how long the running jobs have run (two hours
    and more for A's, from their start stamps, then from the starts the simulation
    stamps): the series is the one of the same ads without it.  (Read as the run time, it
    made A's running jobs weigh nothing in LSF's priority, and A kept slots B gets.)"""
    assert lsf_run("RemoteWallClockTime = 0.0") == lsf_run("")
