"""Cycles under each priority policy: the policy orders, the usual matching matches."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings as hsettings, strategies as st
from support import EXAMPLES

from classad.ad import ClassAd
from matchmaker.api import load, negotiate as api_negotiate
from matchmaker.config.knobs import Knobs
from matchmaker.config.policy_settings import policy_params
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.errors import ConfigError
from matchmaker.policies.jobs import Ledger
from matchmaker.policies.runners import make_runner
from matchmaker.pool.ads import parse_old_ads, pool_from_ads

NOW = 1_000_000.0


def ads(text: str) -> list[ClassAd]:
    return [ad for ad, _ in parse_old_ads(text)]


def slots(n: int, extra: str = "") -> str:
    return "\n".join(f'Name = "s{i}"\nSlotID = {i}\nCpus = 1\nRequirements = true\n{extra}\n' for i in range(n))


def job(user: str, cluster: int, proc: int = 0, status: int = 1, extra: str = "") -> str:
    return (
        f'ClusterId = {cluster}\nProcId = {proc}\nUser = "{user}"\nJobStatus = {status}\nRequestCpus = 1\n'
        f"Requirements = true\nQDate = {int(NOW) - 60}\n{extra}\n\n"
    )


def run(config: str, slot_text: str, job_text: str, ledger=None, runner=None):
    knobs = Knobs.from_string(config)
    cfg = policy_params(knobs)
    st_ = replace(Settings.from_knobs(knobs), priority_policy=cfg if cfg.name != "htcondor" else None)
    runner = runner or (make_runner(cfg) if cfg.name != "htcondor" else None)
    pool = pool_from_ads(ads(slot_text), ads(job_text))
    result = negotiate(pool, st_, StaticPriorities({}), NOW, runner=runner, ledger=ledger or {})
    return result, runner


LSF = "MATCHMAKER_PRIORITY_POLICY = lsf\nLSF_USER_SHARES = [A, 10] [B, 10] [C, 20]\n"


def test_lsf_cycle_gives_the_l2_dispatch_sequence():
    # B runs 2 jobs of 1.5 h, C 4 of 0.5 h; A's 10 CPU-hours were charged 5 h ago.
    running = "\n".join(
        [job("B@d", 100 + i, status=2, extra=f"RemoteWallClockTime = {1.5 * 3600}") for i in range(2)]
        + [job("C@d", 200 + i, status=2, extra=f"RemoteWallClockTime = {0.5 * 3600}") for i in range(4)]
    )
    idle = "\n".join(job(u, c, p) for u, c in (("A@d", 1), ("B@d", 2), ("C@d", 3)) for p in range(3))
    ledger = {
        "A@d": Ledger(10.0, updated=NOW - 5 * 3600),
        "B@d": Ledger(2.8, updated=NOW),
        "C@d": Ledger(2.0, updated=NOW),
    }
    result, runner = run(LSF, slots(5), running + "\n" + idle, ledger)
    assert [m.submitter for m in result.matches] == ["A@d", "A@d", "C@d", "A@d", "C@d"]
    rows = {r["name"]: r for r in runner.report()}
    assert rows["B@d"]["priority"] == pytest.approx(0.76570, abs=1e-3)


def test_maui_orders_jobs_by_start_priority():
    cfg = "MATCHMAKER_PRIORITY_POLICY = maui\nMAUI_USERWEIGHT = 1\nMAUI_USERCFG_john_PRIORITY = 300\n"
    jobs = (
        job("john@d", 1, extra=f"QDate = {int(NOW) - 600}")
        + job("alice@d", 2, extra=f"QDate = {int(NOW) - 299 * 60}")
        + job("alice@d", 3, extra=f"QDate = {int(NOW) - 311 * 60}")
        + job("alice@d", 4, extra=f"QDate = {int(NOW)}")
    )
    result, runner = run(cfg, slots(4), jobs)
    assert [m.job for m in result.matches] == ["3.0", "1.0", "2.0", "4.0"]
    assert [r["priority"] for r in runner.report()] == pytest.approx([311, 310, 299, 1])


def test_slurm_fair_tree_orders_jobs():
    cfg = (
        "MATCHMAKER_PRIORITY_POLICY = slurm\nSLURM_PRIORITYWEIGHTFAIRSHARE = 10000\n"
        "SLURM_SHARES_A = 60\nSLURM_SHARES_B = 40\n"
    )
    jobs = (
        job("a1@d", 1, extra='AcctGroup = "A"')
        + job("a2@d", 2, extra='AcctGroup = "A"')
        + job("b1@d", 3, extra='AcctGroup = "B"')
    )
    ledger = {"A.a1@d": Ledger(600, updated=NOW), "A.a2@d": Ledger(0, updated=NOW), "B.b1@d": Ledger(200, updated=NOW)}
    result, runner = run(cfg, slots(3), jobs, ledger)
    assert [m.job for m in result.matches] == ["3.0", "2.0", "1.0"]
    assert [r["priority"] for r in runner.report()] == [10000, 6666, 3333]


def test_dirac_lottery_is_seeded_and_respects_shares():
    cfg = "MATCHMAKER_PRIORITY_POLICY = dirac\nDIRAC_JOBSHARE_user = 10000\n"
    jobs = "".join(job("alice@d", 1, p) for p in range(20)) + "".join(job("bob@d", 2, p) for p in range(20))
    a, _ = run(cfg, slots(10), jobs)
    b, runner = run(cfg, slots(10), jobs)
    assert [m.job for m in a.matches] == [m.job for m in b.matches]
    assert len(a.matches) == 10
    assert {r["priority"] for r in runner.report()} == {5000.0}


@pytest.mark.parametrize("policy", ["lsf", "maui", "dirac", "slurm"])
def test_requirements_still_decide(policy):
    jobs = job("A@d", 1, extra="Requirements = TARGET.Memory > 100") + job("B@d", 2)
    result, _ = run(f"MATCHMAKER_PRIORITY_POLICY = {policy}\n", slots(2, "Memory = 50"), jobs)
    assert [m.job for m in result.matches] == ["2.0"]
    assert [r.job for r in result.rejected] == ["1.0"]


@hsettings(max_examples=25, deadline=None)
@given(
    st.sampled_from(["lsf", "maui", "dirac", "slurm"]),
    st.lists(st.integers(0, 200), min_size=1, max_size=6),
    st.integers(1, 6),
)
def test_a_policy_never_matches_a_job_whose_requirements_fail(policy, needs, n_slots):
    jobs = "".join(job(f"u{i % 3}@d", i + 1, extra=f"Requirements = TARGET.Memory >= {m}") for i, m in enumerate(needs))
    result, _ = run(f"MATCHMAKER_PRIORITY_POLICY = {policy}\n", slots(n_slots, "Memory = 100"), jobs)
    for m in result.matches:
        assert needs[int(m.job.split(".")[0]) - 1] <= 100
    assert len(result.matches) == min(n_slots, sum(1 for x in needs if x <= 100))


@pytest.mark.parametrize(
    "text, line",
    [
        ("MATCHMAKER_PRIORITY_POLICY = pbs\n", 1),
        ("MATCHMAKER_PRIORITY_POLICY = lsf\nLSF_USER_SHARES = [a 3]\n", 2),
        ("MATCHMAKER_PRIORITY_POLICY = lsf\nLSF_GPU_TERM = inside\n", 2),
        ("MATCHMAKER_PRIORITY_POLICY = maui\nMAUI_FSDEPTH = many\n", 2),
        ("MATCHMAKER_PRIORITY_POLICY = maui\nMAUI_XFACTOR_FORM = x\n", 2),
        ("X = 1\nMATCHMAKER_PRIORITY_POLICY = dirac\nDIRAC_PRIORITY_CONSOLIDATION = max\n", 3),
    ],
)
def test_bad_policy_knobs_name_file_and_line(text, line):
    with pytest.raises(ConfigError) as e:
        policy_params(Knobs.from_string(text, "pool.conf"))
    assert e.value.file == "pool.conf" and e.value.line == line


def test_default_is_htcondor():
    assert policy_params(Knobs.from_string("")).name == "htcondor"


def test_htcondor_policy_is_the_pie_unchanged(tmp_path):

    ex = EXAMPLES / "negotiator"
    conf = tmp_path / "n.config"
    conf.write_text((ex / "negotiator.config").read_text() + "\nMATCHMAKER_PRIORITY_POLICY = htcondor\n")
    plain = api_negotiate(load(ex / "negotiator.config", ex / "slots.ads", ex / "jobs.ads"), now=1700000000)
    named = api_negotiate(load(conf, ex / "slots.ads", ex / "jobs.ads"), now=1700000000)
    assert load(conf, ex / "slots.ads", ex / "jobs.ads").settings.priority_policy is None
    assert plain.matches == named.matches and plain.rejected == named.rejected


MAUI_JOBS = (
    job("john@d", 1, extra=f"QDate = {int(NOW) - 600}")
    + job("alice@d", 2, extra=f"QDate = {int(NOW) - 299 * 60}")
    + job("alice@d", 3, extra=f"QDate = {int(NOW) - 311 * 60}")
)


def test_priority_expression_reproduces_the_built_in_maui_formula():
    cfg = "MATCHMAKER_PRIORITY_POLICY = maui\nMAUI_USERWEIGHT = 1\nMAUI_USERCFG_john_PRIORITY = 300\n"
    built_in, _ = run(cfg, slots(3), MAUI_JOBS)
    edited, runner = run(
        cfg + "MATCHMAKER_POLICY_PRIORITY_EXPR = MauiQueueMinutes + MauiUserPriority\n", slots(3), MAUI_JOBS
    )
    assert [m.job for m in edited.matches] == [m.job for m in built_in.matches] == ["3.0", "1.0", "2.0"]
    assert [r["priority"] for r in runner.report()] == pytest.approx([311, 310, 299])


def test_an_edited_priority_expression_changes_the_order():
    cfg = (
        "MATCHMAKER_PRIORITY_POLICY = maui\nMAUI_USERCFG_john_PRIORITY = 300\n"
        "MATCHMAKER_POLICY_PRIORITY_EXPR = MauiQueueMinutes / 10 + MauiUserPriority\n"
    )
    result, _ = run(cfg, slots(3), MAUI_JOBS)
    assert [m.job for m in result.matches] == ["1.0", "3.0", "2.0"]


def test_lsf_priority_expression_is_static_fair_share():
    cfg = LSF + "MATCHMAKER_POLICY_PRIORITY_EXPR = LsfShares\n"
    jobs = "".join(job(u, c, p) for u, c in (("A@d", 1), ("C@d", 3)) for p in range(3))
    result, _ = run(cfg, slots(4), jobs)
    # static: C's 20 shares always beat A's 10, whatever C starts
    assert [m.submitter for m in result.matches] == ["C@d", "C@d", "C@d", "A@d"]


def test_slurm_expression_is_truncated():
    cfg = "MATCHMAKER_PRIORITY_POLICY = slurm\nMATCHMAKER_POLICY_PRIORITY_EXPR = 1000 * FairShareFactor + 0.9\n"
    _, runner = run(cfg, slots(1), job("a@d", 1))
    assert runner.report()[0]["priority"] == 1000


def test_lsf_walks_the_group_tree_top_down():
    # physics (10 shares) holds hep.alice (1 share) and lep.bob (5); chem (1) holds carol (100).
    cfg = (
        "MATCHMAKER_PRIORITY_POLICY = lsf\n"
        "LSF_USER_SHARES = [physics, 10] [chem, 1] [physics.alice, 1] [physics.bob, 5] [chem.carol, 100]\n"
    )
    jobs = "".join(
        job(u, c, p, extra=f'AccountingGroup = "{g}"')
        for u, c, g in (("alice@d", 1, "physics.alice"), ("bob@d", 2, "physics.bob"), ("carol@d", 3, "chem.carol"))
        for p in range(4)
    )
    result, _ = run(cfg, slots(4), jobs)
    # physics 10/3 beats chem 1/3; inside, bob 5/3 beats alice 1/3 -> bob; physics 10/6 still
    # beats chem -> bob 5/6 vs alice 1/3 -> bob; physics 10/9 > 1/3 -> bob (5/9 > 1/3); then
    # physics 10/12 = 0.83 > 0.33 -> bob 5/12 = 0.417 > 0.333 -> bob.  carol's 100 shares never count.
    assert [m.submitter for m in result.matches] == ["physics.bob@d"] * 4


def test_dirac_corrector_in_the_cycle_gives_d3():
    cfg = (
        "MATCHMAKER_PRIORITY_POLICY = dirac\nDIRAC_ENABLE_SHARES_CORRECTION = true\n"
        "DIRAC_CORRECTION_SLICES = [604800, 80, 2] [3600, 20, 5]\nDIRAC_MAX_GLOBAL_CORRECTION = 3\n"
        "DIRAC_JOBSHARE_user = 10000\nDIRAC_JOBSHARE_mc = 300\nDIRAC_JOBSHARE_data = 40000\n"
    )
    jobs = "".join(job(f"{g}user@d", i + 1, extra=f'AcctGroup = "{g}"') for i, g in enumerate(("user", "mc", "data")))
    # running-job counts at two cycles: week averages (5500+500)/2 = 3000, (2000+0)/2 = 1000,
    # (10500+1500)/2 = 6000; hour (the last cycle only) 500 / 0 (mc absent) / 1500
    ledger = {
        "user": Ledger(500, (NOW - 7200, 5500, NOW - 60, 500), NOW),
        "mc": Ledger(0, (NOW - 7200, 2000, NOW - 60, 0), NOW),
        "data": Ledger(1500, (NOW - 7200, 10500, NOW - 60, 1500), NOW),
    }
    _, runner = run(cfg, slots(3), jobs, ledger)
    prio = {r["group"]: r["priority"] for r in runner.report()}
    assert prio["user"] == pytest.approx(6892.0, abs=0.1)
    assert prio["data"] == pytest.approx(50894.6, abs=0.1)
    assert prio["mc"] == pytest.approx(420, abs=1e-6)
    _, compat = run(cfg + "DIRAC_CORRECTOR_COMPAT = true\n", slots(3), jobs, ledger)
    assert {r["group"]: r["priority"] for r in compat.report()}["mc"] == pytest.approx(900)


def test_dirac_samples_are_kept_per_group_within_the_longest_slice():
    cfg = (
        "MATCHMAKER_PRIORITY_POLICY = dirac\nDIRAC_ENABLE_SHARES_CORRECTION = true\n"
        "DIRAC_CORRECTION_SLICES = [3600, 1, 3]\n"
    )
    runner = make_runner(policy_params(Knobs.from_string(cfg)))
    running = pool_from_ads([], ads(job("a@d", 1, status=2) + job("b@d", 2, status=2, extra='AcctGroup = "mc"'))).jobs
    old = {"user": Ledger(4, (NOW - 7200, 9, NOW - 600, 4), NOW - 600)}
    new = runner.ledger(NOW, running, old)
    assert new["user"].buckets == (NOW - 600, 4, NOW, 1.0)
    assert new["mc"].buckets == (NOW, 1.0)


def test_bad_dirac_slices_name_the_line():
    with pytest.raises(ConfigError) as e:
        policy_params(
            Knobs.from_string(
                "MATCHMAKER_PRIORITY_POLICY = dirac\nDIRAC_ENABLE_SHARES_CORRECTION = 1\n"
                "DIRAC_CORRECTION_SLICES = [1, 2]\n",
                "d.conf",
            )
        )
    assert (e.value.file, e.value.line) == ("d.conf", 3)


def test_maui_queue_time_target_of_a_qos():
    # QTTARGET 3600 s, queued 3590 s: (3600 - 3590)^-2 = 0.01; weight 10000 -> 100 points
    cfg = "MATCHMAKER_PRIORITY_POLICY = maui\nMAUI_TARGETQUEUETIMEWEIGHT = 10000\nMAUI_QOSCFG_urgent_QTTARGET = 3600\n"
    jobs = job("a@d", 1, extra=f'QDate = {int(NOW) - 3590}\nQos = "urgent"') + job(
        "b@d", 2, extra=f"QDate = {int(NOW) - 3590 - 60 * 150}"
    )
    result, runner = run(cfg, slots(1), jobs)
    rows = {r["name"]: r for r in runner.report()}
    assert rows["1.0"]["targ"] == pytest.approx(100)
    assert rows["1.0"]["priority"] == pytest.approx(3590 / 60 + 100)
    assert [m.job for m in result.matches] == ["2.0"]  # 209.8 minutes beat 159.8


def test_group_quotas_are_reported_as_not_applied():
    result, _ = run(
        "MATCHMAKER_PRIORITY_POLICY = lsf\nGROUP_NAMES = g\nGROUP_QUOTA_g = 1\n",
        slots(2),
        job("a@d", 1, extra='AccountingGroup = "g.a"') + job("a@d", 1, 1, extra='AccountingGroup = "g.a"'),
    )
    assert len(result.matches) == 2
    assert any("group quotas are not applied" in w for w in result.warnings)
