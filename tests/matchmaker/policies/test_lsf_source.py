"""LSF fair share as the LSF documentation defines it (docs/policies.md, LSF).

Every expected number is worked out by hand from the documented formula
``dynamic priority = shares / (cpu_time*CPU_TIME_FACTOR + run_time*RUN_TIME_FACTOR
+ (1 + job_slots)*RUN_JOB_FACTOR + ...)`` with the defaults 0.7 / 0.7 / 3 and
HIST_HOURS 5; the arithmetic is in each docstring.  Two numbers recur:

* ``k(h) = 5/ln 10 * (1 - 0.1**(h/5))`` is ``h`` hours of use that ended now, each hour
  decayed by its age (an hour counts 0.1 after HIST_HOURS): ``5/ln 10 = 2.171472``,
  ``k(1) = 2.171472 * (1 - 0.630957) = 0.801366``, ``k(2) = 2.171472 * (1 - 0.398107)
  = 1.306994``, ``k(5) = 2.171472 * 0.9 = 1.954325``.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from classad.ad import ClassAd
from matchmaker.cli.policies import format_report
from matchmaker.config.knobs import Knobs
from matchmaker.config.policy_settings import policy_params
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.errors import ConfigError
from matchmaker.policies import lsf
from matchmaker.policies.jobs import PoolShape
from matchmaker.policies.runners import make_runner
from matchmaker.pool.ads import parse_old_ads, pool_from_ads

NOW = 1_000_000.0
H = 3600.0
K1, K2, K5 = 0.801366, 1.306994, 1.954325
POOL = PoolShape(cpus=1.0, nodes=1.0)


def ads(text: str) -> list[ClassAd]:
    return [ad for ad, _ in parse_old_ads(text)]


def slots(n: int, memory: int = 2048) -> str:
    return "\n".join(
        f'Name = "s{i}"\nSlotID = {i}\nCpus = 1\nMemory = {memory}\nRequirements = true\n' for i in range(n)
    )


def job(user: str, cluster: int, proc: int = 0, status: int = 1, extra: str = "") -> str:
    return (
        f'ClusterId = {cluster}\nProcId = {proc}\nUser = "{user}"\nJobStatus = {status}\nRequestCpus = 1\n'
        f"Requirements = true\nQDate = {int(NOW) - 60}\n{extra}\n\n"
    )


def running(user: str, cluster: int, hours: float, extra: str = "") -> str:
    return job(user, cluster, status=2, extra=f"RemoteWallClockTime = {hours * H}\n{extra}")


def cycle(config: str, n_slots: int, jobs: str, ledger=None, memory: int = 2048):
    """One ordered cycle under ``config``; returns (matches' submitters, runner)."""
    knobs = Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = lsf\n" + config)
    cfg = policy_params(knobs)
    settings = replace(Settings.from_knobs(knobs), priority_policy=cfg)
    runner = make_runner(cfg)
    pool = pool_from_ads(ads(slots(n_slots, memory)), ads(jobs))
    result = negotiate(pool, settings, StaticPriorities({}), NOW, runner=runner, ledger=ledger or {})
    return [m.submitter for m in result.matches], runner


def prio(runner, account: str) -> float:
    return runner.priority(account)


SHARES = "LSF_USER_SHARES = [A, 10] [B, 10]\n"


# ---- committed run time ---------------------------------------------------------------


def test_a_job_without_a_run_limit_commits_nothing():
    """Seed: committed run time is "specified at job submission with the -W option of bsub,
    or in the queue with the RUNLIMIT parameter".  COMMITTED_RUN_TIME_FACTOR 1, no stored
    CPU time; each account has one 1-slot job running for 1 h.

    A's job has WallClockLimit 4 h: committed 4, run 1 -> D = 0.7*1 + (4 - 1)*1 + 3*(1+1)
    = 9.7, priority 10/9.7 = 1.030928.  B's job has no limit: it commits only what it ran,
    D = 0.7 + 0 + 6 = 6.7, priority 1.492537 (a missing limit must not lower D below that).
    """
    jobs = running("A@d", 1, 1, f"WallClockLimit = {4 * H}") + running("B@d", 2, 1)
    _, runner = cycle(SHARES + "LSF_COMMITTED_RUN_TIME_FACTOR = 1\n", 0, jobs)
    assert prio(runner, "A@d") == pytest.approx(1.030928, abs=1e-6)
    assert prio(runner, "B@d") == pytest.approx(1.492537, abs=1e-6)


def test_the_queue_run_limit_commits_for_jobs_without_their_own():
    """LSF_RUNLIMIT 7200 s (the queue's RUNLIMIT): B's job, 1 h run, now commits 2 h:
    D = 0.7 + (2 - 1)*1 + 6 = 7.7, priority 10/7.7 = 1.298701.  A's own limit (4 h) wins over
    the queue's: still 1.030928."""
    jobs = running("A@d", 1, 1, f"WallClockLimit = {4 * H}") + running("B@d", 2, 1)
    _, runner = cycle(SHARES + "LSF_COMMITTED_RUN_TIME_FACTOR = 1\nLSF_RUNLIMIT = 7200\n", 0, jobs)
    assert prio(runner, "B@d") == pytest.approx(1.298701, abs=1e-6)
    assert prio(runner, "A@d") == pytest.approx(1.030928, abs=1e-6)


def test_a_dispatched_job_commits_its_whole_limit_at_once():
    """Nothing runs; A's pending jobs have WallClockLimit 10 h, B's none; factor 1.

    Both start at D = 3 (10/3, tie: by name, A).  A: D = 3*2 + 10*1 = 16 -> 0.625.  B then
    goes while it beats 0.625: D = 6, 9, 12, 15 -> 1.667, 1.111, 0.833, 0.667, each a win;
    after its 5th, D = 18 -> 0.556 < 0.625, so A.  Sequence: A, B, B, B, B, B, A."""
    jobs = "".join(job("A@d", 1, p, extra=f"WallClockLimit = {10 * H}") for p in range(4)) + "".join(
        job("B@d", 2, p) for p in range(8)
    )
    order, runner = cycle(SHARES + "LSF_COMMITTED_RUN_TIME_FACTOR = 1\n", 7, jobs)
    assert order == ["A@d"] + ["B@d"] * 5 + ["A@d"]
    assert prio(runner, "A@d") == pytest.approx(10 / (3 * 3 + 20), abs=1e-9)


@hsettings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 50), min_size=1, max_size=4), st.floats(0.1, 10))
def test_without_run_limits_the_committed_factor_changes_nothing(walls, factor):
    """No run limit anywhere: (committed - run) is 0 for every job, whatever the factor."""
    jobs = "".join(running("A@d", i + 1, w) for i, w in enumerate(walls))
    _, plain = cycle(SHARES, 0, jobs)
    _, committed = cycle(SHARES + f"LSF_COMMITTED_RUN_TIME_FACTOR = {factor}\n", 0, jobs)
    assert prio(committed, "A@d") == pytest.approx(prio(plain, "A@d"), rel=1e-12)


# ---- CPU time, decay, historical run time ------------------------------------------------


def charge(config: str, jobs: str, old=None, now: float = NOW):
    """The ledger the LSF runner stores at ``now`` for the running ``jobs``."""
    runner = make_runner(policy_params(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = lsf\n" + config)))
    pool = pool_from_ads([], ads(jobs))
    return runner.ledger(now, [j for j in pool.jobs if j.status == 2], old or {})


def test_cpu_time_is_the_ads_cpu_counters_when_it_has_them():
    """Seed: cpu_time is "the cumulative CPU time used by the user ... using the actual (not
    normalized) CPU time".  A 2 h job reporting RemoteUserCpu 3000 + RemoteSysCpu 600 = 3600 s
    used half a CPU-hour per wall hour: 0.5 * k(2) = 0.653497 decayed CPU hours.  A job with
    no counters falls back to its wall time times its slots: k(2) = 1.306994."""
    led = charge("", running("A@d", 1, 2, "RemoteUserCpu = 3000\nRemoteSysCpu = 600") + running("B@d", 2, 2))
    assert led["A@d"].value == pytest.approx(0.5 * K2, abs=1e-6)
    assert led["B@d"].value == pytest.approx(K2, abs=1e-6)
    # the run hours of all jobs are the wall time either way
    assert led["A@d"].buckets[0] == led["B@d"].buckets[0] == pytest.approx(K2, abs=1e-6)


def test_cpu_counters_enter_the_priority():
    """A: 10 shares, the 2 h job with 3600 s of CPU: D = 0.7*0.653497 + 0.7*2 + 3*2
    = 0.457448 + 1.4 + 6 = 7.857448, priority 1.272677."""
    jobs = running("A@d", 1, 2, "RemoteUserCpu = 3000\nRemoteSysCpu = 600")
    _, runner = cycle(SHARES, 0, jobs, charge(SHARES, jobs))
    assert prio(runner, "A@d") == pytest.approx(1.272677, abs=1e-6)


def test_run_time_decay():
    """LSF_RUN_TIME_DECAY: a job running 5 h counts k(5) = 1.954325 run hours instead of 5.
    No CPU stored: D = 0.7*1.954325 + 6 = 7.368027 -> 10/7.368027 = 1.357216; without the
    decay D = 0.7*5 + 6 = 9.5 -> 1.052632."""
    jobs = running("A@d", 1, 5)
    _, decayed = cycle(SHARES + "LSF_RUN_TIME_DECAY = true\n", 0, jobs)
    _, plain = cycle(SHARES, 0, jobs)
    assert prio(decayed, "A@d") == pytest.approx(1.357216, abs=1e-6)
    assert prio(plain, "A@d") == pytest.approx(1.052632, abs=1e-6)


def test_historical_run_time_of_a_finished_job():
    """ENABLE_HIST_RUN_TIME: "historical run time of finished jobs", decayed like CPU time.

    Cycle at T: A's job has run 1 h: the ledger holds k(1) = 0.801366 CPU hours and run
    hours.  At T + 2 h the job is gone (finished): both decayed by 0.1**(2/5) = 0.398107 to
    0.319030.  D = 0.7*0.319030 (cpu) + 0.7*0.319030 (history) + 3*1 = 3.446642 -> 10/D
    = 2.901375.  Without the history: D = 0.223321 + 3 = 3.223321 -> 3.102391."""
    first = charge(SHARES, running("A@d", 1, 1))
    later = NOW + 2 * H
    runner = make_runner(
        policy_params(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = lsf\nLSF_ENABLE_HIST_RUN_TIME = true\n" + SHARES))
    )
    runner.begin_cycle(later, [], [], runner.ledger(later, [], first), POOL)
    assert runner.usage["A@d"].hist_run_hours == pytest.approx(0.319030, abs=1e-6)
    assert runner.priority("A@d") == pytest.approx(2.901375, abs=1e-5)
    plain = make_runner(policy_params(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = lsf\n" + SHARES)))
    plain.begin_cycle(later, [], [], plain.ledger(later, [], first), POOL)
    assert plain.priority("A@d") == pytest.approx(3.102391, abs=1e-5)


def test_a_running_job_is_not_history():
    """The job still runs at T + 1 h with 2 h of wall time: the ledger's run hours are k(2),
    all of it the running job's, so the history is 0 (and its run time 2 h is counted once)."""
    first = charge(SHARES, running("A@d", 1, 1))
    later = NOW + H
    jobs = running("A@d", 1, 2)
    led = charge(SHARES, jobs, first, later)
    assert led["A@d"].buckets[0] == pytest.approx(K2, abs=1e-6)
    runner = make_runner(
        policy_params(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = lsf\nLSF_ENABLE_HIST_RUN_TIME = true\n" + SHARES))
    )
    run_jobs = [j for j in pool_from_ads([], ads(jobs)).jobs]
    runner.begin_cycle(later, [], run_jobs, led, POOL)
    assert runner.usage["A@d"].hist_run_hours == pytest.approx(0.0, abs=1e-9)
    assert runner.usage["A@d"].run_hours == pytest.approx(2.0)


# ---- the weighting knobs, the default shares and the floor --------------------------------


def test_cpu_and_run_time_factors():
    """LSF_CPU_TIME_FACTOR 2, LSF_RUN_TIME_FACTOR 0.1: A's 2 h job with 3600 s of CPU:
    cpu 0.5*k(2) = 0.653497, weighted 1.306994; run 0.1*2 = 0.2; slots 3*2 = 6:
    D = 7.506994 -> 10/D = 1.332091."""
    jobs = running("A@d", 1, 2, "RemoteUserCpu = 3600")
    cfg = SHARES + "LSF_CPU_TIME_FACTOR = 2\nLSF_RUN_TIME_FACTOR = 0.1\n"
    _, runner = cycle(cfg, 0, jobs, charge(cfg, jobs))
    assert prio(runner, "A@d") == pytest.approx(1.332091, abs=1e-6)


def test_hist_hours():
    """LSF_HIST_HOURS 10: an hour of use counts 0.1 after 10 h, so 2 h of use that ended now
    are 10/ln 10 * (1 - 0.1**(2/10)) = 4.342945 * 0.369043 = 1.602732 hours (k(2) = 1.306994
    at the default 5)."""
    led = charge(SHARES + "LSF_HIST_HOURS = 10\n", running("B@d", 2, 2))
    assert led["B@d"].value == pytest.approx(1.602732, abs=1e-6)


def test_default_shares_and_the_floor():
    """LSF_USER_SHARES names only A; C gets LSF_DEFAULT_SHARES 4: nothing runs, D = 3*1,
    priority 4/3.  With RUN_JOB_FACTOR 0 and no usage D = 0, raised to the floor: A gets
    10/0.01 = 1000 (the seed: "The maximum value of dynamic user priority is 100 times the
    number of user shares"); with LSF_PRIORITY_FLOOR 0.5, 10/0.5 = 20."""
    jobs = job("A@d", 1) + job("C@d", 2)
    _, runner = cycle("LSF_USER_SHARES = [A, 10]\nLSF_DEFAULT_SHARES = 4\n", 0, jobs)
    assert prio(runner, "C@d") == pytest.approx(4 / 3)
    _, floor = cycle("LSF_USER_SHARES = [A, 10]\nLSF_RUN_JOB_FACTOR = 0\n", 0, jobs)
    assert prio(floor, "A@d") == pytest.approx(1000)
    _, raised = cycle("LSF_USER_SHARES = [A, 10]\nLSF_RUN_JOB_FACTOR = 0\nLSF_PRIORITY_FLOOR = 0.5\n", 0, jobs)
    assert prio(raised, "A@d") == pytest.approx(20)


# ---- GPU and the memory adjustment ------------------------------------------------------


def test_gpu_run_time_from_the_jobs_gpu_request():
    """GPU_RUN_TIME_FACTOR 0.5; A's job: 2 h on 2 GPUs (RequestGPUs = 2) -> (0 + 2)*2*0.5 = 2.
    No CPU stored: D = 0.7*2 + 3*2 = 7.4; in the denominator 10/(7.4 + 2) = 1.063830."""
    jobs = running("A@d", 1, 2, "RequestGPUs = 2")
    _, runner = cycle(SHARES + "LSF_GPU_RUN_TIME_FACTOR = 0.5\n", 0, jobs)
    assert prio(runner, "A@d") == pytest.approx(1.063830, abs=1e-6)


def test_historical_gpu_hours_count_when_enabled():
    """A finished 1 h job on 3 GPUs, charged at T, seen at T: 3*k(1) = 2.404098 GPU-hours of
    history; with ENABLE_GPU_HIST_RUN_TIME and factor 0.5 the term is 1.202049; CPU and run
    history k(1) = 0.801366 count 0.7*0.801366 = 0.560956 (CPU only; run history is off):
    D = 0.560956 + 3 + 1.202049 = 4.763005 -> 10/D = 2.099515.  Without the GPU history the
    term is 0: 10/3.560956 = 2.808234."""
    led = charge(SHARES, running("A@d", 1, 1, "RequestGPUs = 3"))
    assert led["A@d"].buckets[1] == pytest.approx(3 * K1, abs=1e-6)
    for extra, want in (("LSF_ENABLE_GPU_HIST_RUN_TIME = true\n", 2.099515), ("", 2.808234)):
        runner = make_runner(
            policy_params(
                Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = lsf\nLSF_GPU_RUN_TIME_FACTOR = 0.5\n" + SHARES + extra)
            )
        )
        runner.begin_cycle(NOW, [], [], led, POOL)
        assert runner.priority("A@d") == pytest.approx(want, abs=1e-5)


def test_memory_adjustment_plug_in():
    """Seed: fair share adjustment = (1+slots)*((used_memory/used_slots)/(slot_memory*THRESHOLD)).
    Slots of 2048 MB per CPU.  A's running job uses 4096 MB on 1 slot: (1+1)*(4096/2048) = 4;
    B's uses 1024 MB: 2*0.5 = 1.  Both jobs just started (0 h), no CPU stored, factor 1:
    A: D = 6 + 4 = 10 -> 1.0; B: D = 6 + 1 = 7 -> 1.428571.  THRESHOLD 2 halves them:
    A 10/8 = 1.25, B 10/6.5 = 1.538462."""
    jobs = running("A@d", 1, 0, "MemoryUsage = 4096") + running("B@d", 2, 0, "MemoryUsage = 1024")
    _, runner = cycle(SHARES + "LSF_FAIRSHARE_ADJUSTMENT_FACTOR = 1\n", 4, jobs)
    assert prio(runner, "A@d") == pytest.approx(1.0)
    assert prio(runner, "B@d") == pytest.approx(1.428571, abs=1e-6)
    _, half = cycle(SHARES + "LSF_FAIRSHARE_ADJUSTMENT_FACTOR = 1\nLSF_FAIRSHARE_ADJUSTMENT_THRESHOLD = 2\n", 4, jobs)
    assert prio(half, "A@d") == pytest.approx(1.25)
    assert prio(half, "B@d") == pytest.approx(1.538462, abs=1e-6)


def test_the_adjustment_grows_with_every_dispatch():
    """A as above (ratio 4096/2048 = 2), one pending job, one free slot: after its dispatch
    job_slots is 2, the adjustment (1+2)*2 = 6 and D = 3*3 + 6 = 15 -> 10/15."""
    jobs = running("A@d", 1, 0, "MemoryUsage = 4096") + job("A@d", 2)
    order, runner = cycle(SHARES + "LSF_FAIRSHARE_ADJUSTMENT_FACTOR = 1\n", 2, jobs)
    assert order == ["A@d"]
    assert prio(runner, "A@d") == pytest.approx(10 / 15)


# ---- bhpart -r --------------------------------------------------------------------------


def test_userprio_shows_the_share_tree_levels():
    """physics (10 shares) holds alice (1) and bob (5); chem (1) holds carol (100).  alice has
    one job running (0 h), so physics' usage is 1 slot.  Level "/": physics D = 3*2 = 6 ->
    10/6 = 1.666667; chem D = 3 -> 0.333333.  "/physics/": bob 5/3 = 1.666667, alice
    1/6 = 0.166667.  "/chem/": carol 100/3 = 33.333333."""
    cfg = "LSF_USER_SHARES = [physics, 10] [chem, 1] [physics.alice, 1] [physics.bob, 5] [chem.carol, 100]\n"
    jobs = (
        running("alice@d", 1, 0, 'AccountingGroup = "physics.alice"')
        + job("bob@d", 2, extra='AccountingGroup = "physics.bob"')
        + job("carol@d", 3, extra='AccountingGroup = "chem.carol"')
    )
    _, runner = cycle(cfg, 0, jobs)
    rows = [(r["parent"], r["name"], round(r["priority"], 6), r["started"]) for r in runner.report()]
    assert rows == [
        ("/", "physics", 1.666667, 1),
        ("/", "chem", 0.333333, 0),
        ("/physics/", "physics.bob@d", 1.666667, 0),
        ("/physics/", "physics.alice@d", 0.166667, 1),
        ("/chem/", "chem.carol@d", 33.333333, 0),
    ]
    text = format_report("lsf", runner.report())
    assert text.splitlines()[1].split()[:2] == ["SHARE_INFO_FOR", "USER/GROUP"]
    assert text.splitlines()[2].split()[:3] == ["/", "physics", "10"]


# ---- laws -------------------------------------------------------------------------------

usage = st.builds(
    lsf.LsfUsage,
    cpu_hours=st.floats(0, 1e3),
    run_hours=st.floats(0, 1e3),
    hist_run_hours=st.floats(0, 1e3),
    job_slots=st.integers(0, 100).map(float),
    fairshare_adjustment=st.floats(0, 1e3),
    gpu_run_hours=st.floats(0, 1e3),
    hist_gpu_run_hours=st.floats(0, 1e3),
)
params = st.builds(
    lsf.LsfParams,
    committed_run_time_factor=st.floats(0, 5),
    fairshare_adjustment_factor=st.floats(0, 5),
    gpu_run_time_factor=st.floats(0, 5),
    enable_hist_run_time=st.booleans(),
    enable_gpu_hist_run_time=st.booleans(),
)
FIELDS = (
    "cpu_hours",
    "run_hours",
    "hist_run_hours",
    "job_slots",
    "fairshare_adjustment",
    "gpu_run_hours",
    "hist_gpu_run_hours",
)


@given(usage, params, st.sampled_from(FIELDS), st.floats(0, 1e3))
def test_priority_never_rises_with_usage(u, p, name, more):
    u = replace(u, committed_run_hours=u.run_hours)
    grown = replace(u, **{name: getattr(u, name) + more})
    if name == "run_hours":
        grown = replace(grown, committed_run_hours=grown.run_hours)
    assert lsf.dynamic_priority(10, grown, p) <= lsf.dynamic_priority(10, u, p) * (1 + 1e-12)


TERMS = {
    "cpu_time_factor": ("cpu_hours",),
    "run_time_factor": ("run_hours", "hist_run_hours"),
    "fairshare_adjustment_factor": ("fairshare_adjustment",),
    "gpu_run_time_factor": ("gpu_run_hours", "hist_gpu_run_hours"),
}


@given(usage, params, st.sampled_from(sorted(TERMS)))
def test_a_factor_of_zero_removes_its_term(u, p, factor):
    p = replace(p, **{factor: 0.0})
    u = replace(u, committed_run_hours=u.run_hours)
    bare = replace(
        u, **{f: 0.0 for f in TERMS[factor]}, committed_run_hours=0.0 if "run_hours" in TERMS[factor] else u.run_hours
    )
    assert lsf.dynamic_priority(10, u, p) == pytest.approx(lsf.dynamic_priority(10, bare, p), rel=1e-12)


@hsettings(max_examples=20, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 6))
def test_ties_do_not_depend_on_the_order_of_the_ads(rnd: random.Random, n_slots):
    """Four accounts with equal shares and no usage tie at every step; the order of the
    job ads must not change who is served."""
    blocks = [job(f"{u}@d", c, p) for c, u in enumerate("WXYZ", start=1) for p in range(2)]
    first, _ = cycle("", n_slots, "".join(blocks))
    rnd.shuffle(blocks)
    again, _ = cycle("", n_slots, "".join(blocks))
    assert again == first


# ---- knobs checked at load ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text, line",
    [
        ("LSF_RUN_TIME_DECAY = maybe\n", 2),
        ("LSF_ENABLE_HIST_RUN_TIME = sometimes\n", 2),
        ("X = 1\nLSF_RUNLIMIT = -5\n", 3),
        ("LSF_FAIRSHARE_ADJUSTMENT_THRESHOLD = 0\n", 2),
        ("LSF_FWD_JOB_FACTOR = 3\n", 2),
        ("LSF_CPU_TIMEFACTOR = 0.5\n", 2),  # a misspelt knob would change nothing
    ],
)
@pytest.mark.parametrize("policy", ["lsf", "htcondor"])
def test_bad_lsf_knobs_are_refused_at_load_with_file_and_line(text, line, policy):
    with pytest.raises(ConfigError) as e:
        policy_params(Knobs.from_string(f"MATCHMAKER_PRIORITY_POLICY = {policy}\n" + text, "pool.conf"))
    assert (e.value.file, e.value.line) == ("pool.conf", line)


# ---- in the simulator ---------------------------------------------------------------------


def test_a_job_started_by_the_simulator_is_charged_for_its_run(tmp_path):
    """One slot, alice's one job starts in the first cycle (t0); at t0 + 600 s it has run
    600 s = 1/6 h on one slot, no CPU counters: k(1/6) = 2.171472 * (1 - 0.1**(1/30))
    = 2.171472 * (1 - 0.926119) = 0.160431 CPU hours and run hours in the ledger."""
    import matchmaker
    from matchmaker.accounting.store import Accountant

    start = NOW
    loaded = matchmaker.load_ads(
        Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = lsf\n"),
        ads(slots(1)),
        ads(job("alice@d", 1).replace(f"QDate = {int(NOW) - 60}", f"QDate = {int(start)}")),
    )
    db = tmp_path / "sim.db"
    matchmaker.simulate(loaded, start=start, duration=600, interval=600, state=db)
    with Accountant.load(db) as acct:
        value, buckets, updated = acct.policy_usage("lsf")["alice@d"]
    assert updated == start + 600
    assert value == pytest.approx(0.160431, abs=1e-6)
    assert buckets[0] == pytest.approx(0.160431, abs=1e-6)


def test_a_dotted_name_ending_in_lsf_is_not_an_lsf_knob():
    """``GROUP_QUOTA_physics.lsf_users`` is a group quota, not an LSF knob."""
    cfg = policy_params(
        Knobs.from_string(
            "MATCHMAKER_PRIORITY_POLICY = lsf\nGROUP_QUOTA_physics.LSF_users = 3\nNEGOTIATOR.LSF_RUN_JOB_FACTOR = 2\n"
        )
    )
    assert cfg.lsf.run_job_factor == 2


def test_the_priority_expression_sees_every_term():
    """An edited formula can use the committed hours: A's job (1 h run, 4 h limit) still
    commits 3 h, so ``LsfShares / (1 + LsfCommittedRunHours)`` is 10 / 4 = 2.5."""
    jobs = running("A@d", 1, 1, f"WallClockLimit = {4 * H}")
    _, runner = cycle(SHARES + "MATCHMAKER_POLICY_PRIORITY_EXPR = LsfShares / (1 + LsfCommittedRunHours)\n", 0, jobs)
    assert prio(runner, "A@d") == pytest.approx(2.5)


def test_another_daemons_lsf_names_are_neither_read_nor_refused():
    """``SCHEDD.LSF_...`` belongs to the schedd (as ``SCHEDD.MAUI_...`` does): the negotiator
    keeps the default RUN_JOB_FACTOR 3 and does not refuse the schedd's unknown name."""
    cfg = policy_params(
        Knobs.from_string(
            "MATCHMAKER_PRIORITY_POLICY = lsf\nSCHEDD.LSF_CPU_TIMEFACTOR = 0.5\nSCHEDD.LSF_RUN_JOB_FACTOR = 2\n"
        )
    )
    assert cfg.lsf.run_job_factor == 3
