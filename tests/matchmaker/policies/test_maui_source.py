"""Maui's start priority as the Maui documentation defines it (docs/policies.md, Maui).

Expected numbers are worked out by hand from the documented equation

    Priority = C1WEIGHT * MIN(C1CAP, SUM(S11WEIGHT * MIN(S11CAP, S11S) + ...)) + ...

with Maui's defaults (every component weight 1, QUEUETIMEWEIGHT 1 and every other
subcomponent weight 0, no caps, the clip at 1); the arithmetic is in each docstring.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from classad.ad import ClassAd
from matchmaker.config.knobs import Knobs
from matchmaker.config.maui_settings import parse_maui_time
from matchmaker.config.policy_settings import policy_params
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.errors import ConfigError
from matchmaker.policies import maui
from matchmaker.policies.jobs import Ledger
from matchmaker.policies.runners import make_runner
from matchmaker.pool.ads import parse_old_ads, pool_from_ads

NOW = 1_000_000.0
LAST: dict = {}  # the last cycle's result


def ads(text: str) -> list[ClassAd]:
    return [ad for ad, _ in parse_old_ads(text)]


def slots(n: int) -> str:
    return "\n".join(
        f'Name = "s{i}"\nSlotID = {i}\nCpus = 1\nMemory = 2048\nDisk = 1048576\nRequirements = true\n' for i in range(n)
    )


def job(user: str, cluster: int, minutes: float, extra: str = "", proc: int = 0) -> str:
    """An idle 1-CPU job of ``user`` queued ``minutes`` ago."""
    return (
        f'ClusterId = {cluster}\nProcId = {proc}\nUser = "{user}@d"\nJobStatus = 1\nRequestCpus = 1\n'
        f"Requirements = true\nQDate = {NOW - minutes * 60}\n{extra}\n\n"
    )


def cycle(config: str, n_slots: int, jobs: str, ledger=None):
    """One ordered cycle; returns (matched job ids in order, {job id: start priority})."""
    knobs = Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = maui\n" + config)
    cfg = policy_params(knobs)
    settings = replace(Settings.from_knobs(knobs), priority_policy=cfg)
    runner = make_runner(cfg)
    pool = pool_from_ads(ads(slots(n_slots)), ads(jobs))
    result = negotiate(pool, settings, StaticPriorities({}), NOW, runner=runner, ledger=ledger or {})
    LAST["result"] = result
    return [m.job for m in result.matches], {r["name"]: r["priority"] for r in runner.report()}


# ---- credentials -----------------------------------------------------------------------


def test_user_credential_follows_the_user_whatever_group_charges_the_job():
    """Seed: "USERWEIGHT 1 / USERCFG[john] PRIORITY=300" gives john's jobs 300 more.  john's
    job is charged to accounting group physics (AccountingGroup = "physics.john"): still
    300 + 10 minutes = 310.  alice, 299 minutes: 299."""
    jobs = job("john", 1, 10, 'AccountingGroup = "physics.john"') + job("alice", 2, 299)
    order, prio = cycle("MAUI_USERWEIGHT = 1\nMAUI_USERCFG_john_PRIORITY = 300\n", 2, jobs)
    assert prio == {"1.0": pytest.approx(310), "2.0": pytest.approx(299)}
    assert order == ["1.0", "2.0"]


def test_a_penalised_user_does_not_escape_through_a_group():
    """USERCFG[john] PRIORITY=-100 with negative priorities kept: john's job charged to
    physics, queued 50 minutes: 50 - 100 = -50; alice's 10-minute job: 10.  alice first."""
    cfg = "MAUI_USERWEIGHT = 1\nMAUI_USERCFG_john_PRIORITY = -100\nMAUI_ENABLENEGJOBPRIORITY = true\n"
    jobs = job("john", 1, 50, 'AccountingGroup = "physics.john"') + job("alice", 2, 10)
    order, prio = cycle(cfg, 2, jobs)
    assert prio == {"1.0": pytest.approx(-50), "2.0": pytest.approx(10)}
    assert order == ["2.0", "1.0"]


def test_group_credential_comes_from_the_group():
    """GROUPWEIGHT 1, GROUPCFG[physics] PRIORITY=50: john's physics job queued 10 minutes:
    10 + 50 = 60; a job without a group: its 10 minutes."""
    jobs = job("john", 1, 10, 'AccountingGroup = "physics.john"') + job("alice", 2, 10)
    _, prio = cycle("MAUI_GROUPWEIGHT = 1\nMAUI_GROUPCFG_physics_PRIORITY = 50\n", 0, jobs)
    assert prio == {"1.0": pytest.approx(60), "2.0": pytest.approx(10)}


def test_default_credentials_apply_to_whoever_has_none_of_their_own():
    """USERCFG[DEFAULT] PRIORITY=100, USERCFG[john] PRIORITY=300, USERCFG[bob] PRIORITY=0
    (0 counts as unset for a user, as in Maui's code); all queued 10 minutes:
    john 300 + 10 = 310, alice 100 + 10 = 110, bob 100 + 10 = 110.  GROUPCFG[DEFAULT]
    PRIORITY=7 with GROUPWEIGHT 1 adds 7 to the job that has a group (physics), nothing to
    the others (no group, no group credential)."""
    cfg = (
        "MAUI_USERWEIGHT = 1\nMAUI_USERCFG_DEFAULT_PRIORITY = 100\nMAUI_USERCFG_john_PRIORITY = 300\n"
        "MAUI_USERCFG_bob_PRIORITY = 0\nMAUI_GROUPWEIGHT = 1\nMAUI_GROUPCFG_DEFAULT_PRIORITY = 7\n"
    )
    jobs = job("john", 1, 10) + job("alice", 2, 10) + job("bob", 3, 10, 'AccountingGroup = "physics.bob"')
    _, prio = cycle(cfg, 0, jobs)
    assert prio == {"1.0": pytest.approx(310), "2.0": pytest.approx(110), "3.0": pytest.approx(117)}


def test_account_and_class_priorities():
    """ACCOUNTWEIGHT 2, ACCOUNTCFG[chem] PRIORITY=100, CLASSWEIGHT 3, CLASSCFG[short]
    PRIORITY=10; the job (Account "chem", Class "short") queued 5 minutes:
    5 + 2*100 + 3*10 = 235."""
    cfg = (
        "MAUI_ACCOUNTWEIGHT = 2\nMAUI_ACCOUNTCFG_chem_PRIORITY = 100\nMAUI_CLASSWEIGHT = 3\n"
        "MAUI_CLASSCFG_short_PRIORITY = 10\n"
    )
    _, prio = cycle(cfg, 0, job("a", 1, 5, 'Account = "chem"\nClass = "short"'))
    assert prio == {"1.0": pytest.approx(235)}


# ---- the seed's second example: QOS, XFACTOR, QUEUETIME 10, a DEFAULT queue-time target --

SEED_QOS = (
    "MAUI_QOSWEIGHT = 1\nMAUI_XFACTORWEIGHT = 1\nMAUI_QUEUETIMEWEIGHT = 10\nMAUI_TARGETQUEUETIMEWEIGHT = 1\n"
    "MAUI_QOSCFG_low_PRIORITY = 1000\nMAUI_QOSCFG_medium_PRIORITY = 10000\nMAUI_QOSCFG_high_PRIORITY = 10000\n"
    "MAUI_USERCFG_DEFAULT_QTTARGET = 4:00:00\n"
)


def test_the_seeds_qos_example():
    """The seed's maui.cfg; QTTARGET 4:00:00 = 14400 s for every user; XF = (queue + WCLimit)
    / max(120, WCLimit) (Maui's code); TARG = (14400 - queued s)**-2.

    A: QOS low, 60 min, WCLimit 3600: XF (3600+3600)/3600 = 2; 10*60 + 2 = 602; TARG
       10800**-2 = 8.57e-9; CRED 1000 -> 1602.0000000086.
    B: QOS high, 10 min, WCLimit 7200: XF 7800/7200 = 1.083333; 100 + 1.083333; TARG
       13800**-2 = 5.25e-9; CRED 10000 -> 10101.083333.
    C: no QOS, 120 min, no limit: XF 7200/120 = 60; 1200 + 60; TARG 7200**-2 -> 1260.0000000193.
    D: no QOS, 14399 s: XF 14399/120 = 119.991667; 2399.833333 + 119.991667; TARG
       (14400 - 14399)**-2 = 1 -> 2520.825 (were 4:00:00 read as 4 s, TARG would be 1e8).
    Order: B, D, A, C."""
    jobs = (
        job("u", 1, 60, 'Qos = "low"\nWallClockLimit = 3600')
        + job("u", 2, 10, 'Qos = "high"\nWallClockLimit = 7200')
        + job("u", 3, 120)
        + job("u", 4, 14399 / 60)
    )
    order, prio = cycle(SEED_QOS, 4, jobs)
    assert prio["1.0"] == pytest.approx(1602 + 10800**-2, abs=1e-9)
    assert prio["2.0"] == pytest.approx(10101.083333, abs=1e-6)
    assert prio["3.0"] == pytest.approx(1260 + 7200**-2, abs=1e-9)
    assert prio["4.0"] == pytest.approx(2520.825, abs=1e-6)
    assert order == ["2.0", "4.0", "1.0", "3.0"]


def test_a_qos_target_comes_before_the_users():
    """QOSCFG[q] QTTARGET=3600 with the DEFAULT user target 4:00:00: a job of QOS q queued
    3590 s gets (3600 - 3590)**-2 = 0.01 at TARGETQUEUETIMEWEIGHT 1, TARGETWEIGHT 1; with
    queue time 3590/60 * 10 = 598.333333 and XF (3590 + 0)/120 = 29.916667:
    total 628.26 (no CRED: q has no PRIORITY)."""
    _, prio = cycle(SEED_QOS + "MAUI_QOSCFG_q_QTTARGET = 3600\n", 0, job("u", 1, 3590 / 60, 'Qos = "q"'))
    assert prio["1.0"] == pytest.approx(598.333333 + 29.916667 + 0.01, abs=1e-5)


def test_a_users_expansion_factor_target():
    """USERCFG[john] XFTARGET=3, TARGETXFACTORWEIGHT 100: john's job queued 60 min with
    WCLimit 3600 has XF 2, so (3 - 2)**-2 = 1 -> 100, plus 60 queue minutes = 160."""
    cfg = "MAUI_TARGETXFACTORWEIGHT = 100\nMAUI_USERCFG_john_XFTARGET = 3\n"
    _, prio = cycle(cfg, 0, job("john", 1, 60, "WallClockLimit = 3600"))
    assert prio["1.0"] == pytest.approx(160)


# ---- REJECTNEGPRIOJOBS, resources, fair share -------------------------------------------


def test_rejectnegpriojobs_keeps_negative_jobs_from_starting():
    """USERCFG[bad] PRIORITY=-1000, USERWEIGHT 1: bad's job queued 10 minutes scores
    10 - 1000 = -990 and never starts, though slots are free; good's job (5) starts."""
    cfg = "MAUI_REJECTNEGPRIOJOBS = true\nMAUI_USERWEIGHT = 1\nMAUI_USERCFG_bad_PRIORITY = -1000\n"
    order, prio = cycle(cfg, 3, job("bad", 1, 10) + job("good", 2, 5))
    assert order == ["2.0"]
    assert prio == {"1.0": pytest.approx(-990), "2.0": pytest.approx(5)}
    (rejected,) = LAST["result"].rejected
    assert (rejected.job, rejected.mechanism) == ("1.0", "priority-policy")
    assert "-990" in rejected.explanation


def test_resource_terms_from_the_jobs_requests():
    """Pool: 4 slots of 1 CPU, 2048 MB, 1048576 KiB disk (4 CPUs, 8192 MB, 4194304 KiB).  The
    job: MachineCount 2, RequestCpus 4, RequestMemory 12288, RequestDisk 1048576 per node,
    WCLimit 3600, queued 0 minutes.  NODE 2, PROC 8, MEM 24576 MB, DISK 2048 MB,
    PS 8*3600 = 28800, PE max(8/4, 24576/8192, 2097152/4194304) * 4 = 3*4 = 12.
    Weights 10, 1, 0.001, 0.01, 0.001, 1: 20 + 8 + 24.576 + 20.48 + 28.8 + 12 = 113.856."""
    cfg = (
        "MAUI_NODEWEIGHT = 10\nMAUI_PROCWEIGHT = 1\nMAUI_MEMWEIGHT = 0.001\nMAUI_DISKWEIGHT = 0.01\n"
        "MAUI_PSWEIGHT = 0.001\nMAUI_PEWEIGHT = 1\n"
    )
    extra = (
        "MachineCount = 2\nRequestMemory = 12288\nRequestDisk = 1048576\nWallClockLimit = 3600\nRequirements = false"
    )
    _, prio = cycle(cfg, 4, job("a", 1, 0, extra).replace("RequestCpus = 1", "RequestCpus = 4"))
    assert prio["1.0"] == pytest.approx(113.856)


def test_walltime_and_the_users_running_jobs_and_procs():
    """WALLTIMEWEIGHT 0.01, UJOBWEIGHT 10, UPROCWEIGHT 1, QUEUETIMEWEIGHT 0.  john runs two
    jobs of 1 and 3 CPUs (UJOB 2, UPROC 4); his idle job has WCLimit 3600:
    0.01*3600 + 10*2 + 1*4 = 60.  alice runs nothing; her job's WCLimit 600: 0.01*600 = 6."""
    cfg = "MAUI_WALLTIMEWEIGHT = 0.01\nMAUI_UJOBWEIGHT = 10\nMAUI_UPROCWEIGHT = 1\nMAUI_QUEUETIMEWEIGHT = 0\n"
    running = (job("john", 1, 30, proc=0) + job("john", 1, 30, "RequestCpus = 3", proc=1)).replace(
        "JobStatus = 1", "JobStatus = 2"
    )
    idle = job("john", 2, 10, "WallClockLimit = 3600") + job("alice", 3, 10, "WallClockLimit = 600")
    _, prio = cycle(cfg, 0, running + idle)
    assert prio == {"2.0": pytest.approx(60), "3.0": pytest.approx(6)}


@pytest.mark.parametrize("service_cap", ["MAUI_SERVICECAP", "MAUI_SERVCAP", "MAUI_SERVICEWCAP"])
def test_caps_set_by_knobs(service_cap):
    """M2 (docs/policies.md) through the knobs: QUEUETIMEWEIGHT 10, XFACTORWEIGHT 100,
    QOSWEIGHT 1, QUEUETIMECAP 1000, XFACTORCAP 10, the service cap 3000 (any of its
    spellings), QOSCFG[hi] PRIORITY=10000.
    A: QOS hi, queued 30 min, WCLimit 3600: XF (1800 + 3600)/3600 = 1.5; 10*30 + 100*1.5
    = 450, under every cap; + 10000 = 10450.
    B: queued 2000 min, WCLimit 14400: XF (120000 + 14400)/14400 = 9.333;
    10*min(1000, 2000) + 100*min(10, 9.333) = 10933.3, capped at 3000."""
    cfg = (
        "MAUI_QUEUETIMEWEIGHT = 10\nMAUI_XFACTORWEIGHT = 100\nMAUI_QOSWEIGHT = 1\nMAUI_QUEUETIMECAP = 1000\n"
        f"MAUI_XFACTORCAP = 10\n{service_cap} = 3000\nMAUI_QOSCFG_hi_PRIORITY = 10000\n"
    )
    jobs = job("a", 1, 30, 'Qos = "hi"\nWallClockLimit = 3600') + job("b", 2, 2000, "WallClockLimit = 14400")
    _, prio = cycle(cfg, 0, jobs)
    assert prio == {"1.0": pytest.approx(10450), "2.0": pytest.approx(3000)}


def ledger(**buckets: tuple[float, ...]) -> dict[str, Ledger]:
    return {k.replace("__", ":"): Ledger(b[0], b, NOW) for k, b in buckets.items()}


def test_m3_fair_share_with_decayed_buckets():
    """M3 (docs/policies.md): FSPOLICY DEDICATEDPS, FSDEPTH 4, FSDECAY 0.5, FSWEIGHT 100,
    FSUSERWEIGHT 10, USERCFG[u] FSTARGET=25.  u's buckets 10, 20, 40, 40; everyone's
    100 each.  U_u = 10 + 10 + 10 + 5 = 35, U_tot = 100 + 50 + 25 + 12.5 = 187.5: 18.6667 %;
    delta 25 - 18.6667 = 6.3333; FS = 100*10*6.3333 = 6333.33; queued 60 -> 6393.33.
    Target 25- (ceiling): delta 0 -> 60."""
    cfg = (
        "MAUI_FSPOLICY = DEDICATEDPS\nMAUI_FSDEPTH = 4\nMAUI_FSDECAY = 0.5\nMAUI_FSWEIGHT = 100\n"
        "MAUI_FSUSERWEIGHT = 10\n"
    )
    led = ledger(USER__u=(10, 20, 40, 40), USER__v=(90, 80, 60, 60))
    _, prio = cycle(cfg + "MAUI_USERCFG_u_FSTARGET = 25\n", 0, job("u", 1, 60), led)
    assert prio["1.0"] == pytest.approx(6393.33, abs=0.01)
    _, ceiling = cycle(cfg + "MAUI_USERCFG_u_FSTARGET = 25-\n", 0, job("u", 1, 60), led)
    assert ceiling["1.0"] == pytest.approx(60)


def test_fair_share_by_group_and_default_user_targets():
    """FSPOLICY DEDICATEDPS, FSWEIGHT 1.  Usage: a 30, b 70 (total 100); group physics 30
    (a's).  GROUPCFG[physics] FSTARGET=25, FSGROUPWEIGHT 10: physics 25 - 30 = -5 -> -50.
    USERCFG[DEFAULT] FSTARGET=50, FSUSERWEIGHT 1: a 50 - 30 = 20, b 50 - 70 = -20.
    a's physics job queued 100 min: 100 - 50 + 20 = 70; b's job queued 60 min: 60 - 20 = 40."""
    cfg = (
        "MAUI_FSPOLICY = DEDICATEDPS\nMAUI_FSWEIGHT = 1\nMAUI_FSGROUPWEIGHT = 10\nMAUI_FSUSERWEIGHT = 1\n"
        "MAUI_GROUPCFG_physics_FSTARGET = 25\nMAUI_USERCFG_DEFAULT_FSTARGET = 50\n"
    )
    led = ledger(USER__a=(30,), USER__b=(70,), GROUP__physics=(30,))
    order, prio = cycle(cfg, 2, job("a", 1, 100, 'AccountingGroup = "physics.a"') + job("b", 2, 60), led)
    assert prio == {"1.0": pytest.approx(70), "2.0": pytest.approx(40)}
    assert order == ["1.0", "2.0"]


def test_usage_is_kept_per_credential():
    """A running 2-CPU job of john in group physics with QOS q, run 600 s: 1200 slot-seconds in
    USER:john, GROUP:physics and QOS:q (not under the accounting name)."""
    runner = make_runner(policy_params(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = maui\n")))
    text = job("john", 1, 60, 'AccountingGroup = "physics.john"\nQos = "q"\nRemoteWallClockTime = 600')
    running = pool_from_ads(
        [], ads(text.replace("JobStatus = 1", "JobStatus = 2").replace("RequestCpus = 1", "RequestCpus = 2"))
    ).jobs
    out = runner.ledger(NOW, running, {})
    assert {k: v.buckets for k, v in out.items()} == {
        "USER:john": (1200.0,),
        "GROUP:physics": (1200.0,),
        "QOS:q": (1200.0,),
    }


# ---- Maui times --------------------------------------------------------------------------


def test_fsinterval_reads_a_maui_time():
    """FSINTERVAL 1:00:00 = 3600 s: a bucket written an hour ago (interval 276 against 277
    now, 1e6 // 3600 = 277) has moved to index 1.  At the default 12:00:00 both times fall
    in interval 23 (1e6 // 43200) and nothing moves."""
    old = {"USER:a": Ledger(5.0, (5.0,), NOW - 3600)}
    hourly = make_runner(
        policy_params(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = maui\nMAUI_FSINTERVAL = 1:00:00\n"))
    )
    assert hourly.ledger(NOW, [], old)["USER:a"].buckets == (0.0, 5.0)
    daily = make_runner(policy_params(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = maui\n")))
    assert daily.ledger(NOW, [], old)["USER:a"].buckets == (5.0,)


def test_xfminwclimit_reads_a_maui_time():
    """M2's edge case: WCLimit 60 s, queued 600 s.  XFMINWCLIMIT 2:00 (120 s): XF (600+60)/120
    = 5.5; XFMINWCLIMIT 10:00 (600 s): 660/600 = 1.1.  XFACTORWEIGHT 1, QUEUETIMEWEIGHT 0."""
    cfg = "MAUI_XFACTORWEIGHT = 1\nMAUI_QUEUETIMEWEIGHT = 0\n"
    jobs = job("a", 1, 10, "WallClockLimit = 60")
    assert cycle(cfg + "MAUI_XFMINWCLIMIT = 2:00\n", 0, jobs)[1]["1.0"] == pytest.approx(5.5)
    assert cycle(cfg + "MAUI_XFMINWCLIMIT = 10:00\n", 0, jobs)[1]["1.0"] == pytest.approx(1.1)


@pytest.mark.parametrize(
    "text, seconds", [("4:00:00", 14400), ("1:02:03:04", 93784), ("10:30", 630), ("90", 90), ("0:00:01", 1)]
)
def test_maui_time_values(text, seconds):
    """[[[DD:]HH:]MM:]SS: 1:02:03:04 = 86400 + 2*3600 + 3*60 + 4 = 93784."""
    assert parse_maui_time(text) == seconds


# ---- laws --------------------------------------------------------------------------------


@given(st.floats(0, 100), st.floats(0, 1e4), st.floats(0, 1e4), st.floats(0, 1e4), st.booleans())
def test_fair_share_never_rises_with_own_usage(target, mine, others, more, percent):
    before = maui.fs_delta(f"{target:.3f}", mine, mine + others + 1, percent)
    after = maui.fs_delta(f"{target:.3f}", mine + more, mine + more + others + 1, percent)
    assert after <= before + 1e-9


SUBS = ("QUEUETIME", "XFACTOR", "USER", "GROUP", "ACCOUNT", "QOS", "CLASS", "PROC", "MEM", "FSUSER")
COMP = {
    "QUEUETIME": "SERV",
    "XFACTOR": "SERV",
    "USER": "CRED",
    "GROUP": "CRED",
    "ACCOUNT": "CRED",
    "QOS": "CRED",
    "CLASS": "CRED",
    "PROC": "RES",
    "MEM": "RES",
    "FSUSER": "FS",
}


@given(
    st.dictionaries(st.sampled_from(SUBS), st.floats(-1e3, 1e3), min_size=1),
    st.dictionaries(st.sampled_from(SUBS), st.floats(0, 10)),
    st.sampled_from(SUBS),
)
def test_a_weight_of_zero_removes_its_term(values, weights, off):
    p = maui.MauiParams(subweights={**weights, off: 0.0}, enable_neg_job_priority=True)
    by_comp: dict[str, dict[str, float]] = {}
    for s, v in values.items():
        by_comp.setdefault(COMP[s], {})[s] = v
    without = {c: {s: (0.0 if s == off else v) for s, v in d.items()} for c, d in by_comp.items()}
    assert maui.start_priority(by_comp, p) == pytest.approx(maui.start_priority(without, p), abs=1e-9)


@hsettings(max_examples=15, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 5))
def test_ties_do_not_depend_on_the_order_of_the_ads(rnd: random.Random, n_slots):
    """Equal priority and QDate: ClusterId, then ProcId decide, whatever the ads' order."""
    blocks = [job(u, c, 30, proc=p) for c, u in ((3, "x"), (1, "y"), (2, "z")) for p in range(2)]
    first, _ = cycle("", n_slots, "".join(blocks))
    rnd.shuffle(blocks)
    again, _ = cycle("", n_slots, "".join(blocks))
    assert again == first == ["1.0", "1.1", "2.0", "2.1", "3.0"][:n_slots]


# ---- knobs checked at load ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text, line",
    [
        ("MAUI_USERCFG_john_PRIORITY = high\n", 2),
        ("MAUI_USERCFG_DEFAULT_QTTARGET = 4h\n", 2),
        ("MAUI_QOSCFG_q_QTTARGET = 1:xx\n", 2),
        ("MAUI_USERCFG_john_QTWEIGHT = 1\n", 2),  # QTWEIGHT is a QOS attribute
        ("MAUI_GROUPCFG_physics_FSTARGET = lots\n", 2),
        ("MAUI_ACCOUNTCFG_chem_PRIORITY = x\n", 2),
        ("X = 1\nMAUI_BYPASSWEIGHT = 5\n", 3),  # no backfill: BYPASS is always 0
        ("MAUI_SWAPWEIGHT = 1\n", 2),
        ("MAUI_ATTRWEIGHT = 1\n", 2),
        ("MAUI_USAGEWEIGHT = 2\n", 2),
        ("MAUI_SPVIOLATIONWEIGHT = 1\n", 2),
        ("MAUI_QUEUETIMEWIEGHT = 1\n", 2),  # misspelt
        ("MAUI_FSINTERVAL = 0\n", 2),
        ("MAUI_XFMINWCLIMIT = 2:xx\n", 2),
        ("MAUI_FSPOLICY = FAIR\n", 2),
        ("MAUI_QUEUETIMECAP = -1\n", 2),
    ],
)
@pytest.mark.parametrize("policy", ["maui", "htcondor"])
def test_bad_maui_knobs_are_refused_at_load_with_file_and_line(text, line, policy):
    with pytest.raises(ConfigError) as e:
        policy_params(Knobs.from_string(f"MATCHMAKER_PRIORITY_POLICY = {policy}\n" + text, "maui.conf"))
    assert (e.value.file, e.value.line) == ("maui.conf", line)


def test_a_not_modelled_weight_of_zero_is_accepted():
    cfg = policy_params(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = maui\nMAUI_BYPASSWEIGHT = 0\n"))
    assert "BYPASS" not in cfg.maui.subweights
