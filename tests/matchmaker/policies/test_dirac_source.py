"""DIRAC's TaskQueue job choice and WMSHistory corrector, checked against their sources.

Expected numbers are worked out by hand from DIRAC's documentation (the seed text on
job priorities and the WMSHistory corrector) and from ``TaskQueueDB`` and the
WMSHistory report, with the arithmetic in each docstring; docs/policies.md quotes
the sources.  The random choices are seeded, so every run draws the same numbers; the
statistical tests state their tolerance.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st
from policy_helpers import NOW, ads, job, run, slots

from matchmaker.config.knobs import Knobs
from matchmaker.config.policy_settings import policy_params
from matchmaker.errors import ConfigError
from matchmaker.policies.dirac import Slice, correction, first_probability, level_draw, window_averages
from matchmaker.policies.dirac_runner import DiracRunner
from matchmaker.policies.jobs import Ledger, Pending, PoolShape
from matchmaker.pool.ads import pool_from_ads

DIRAC = "MATCHMAKER_PRIORITY_POLICY = dirac\n"
CORRECTED = DIRAC + "DIRAC_ENABLE_SHARES_CORRECTION = true\nDIRAC_CORRECTION_SLICES = [3600, 1, 3]\n"


# ---- the job inside a TaskQueue ---------------------------------------------------------


def test_nine_jobs_at_priority_1_outweigh_one_at_priority_2():
    """Every job row draws RAND()/RealPriority.  The priority-2 job wins when its key U/2 is
    below all nine keys U_i: P = integral_0^(1/2) 2 (1 - t)^9 dt = 2 (1 - 0.5^10) / 10
    = 0.199805.  (One draw per level would give level 2 the chance 0.75.)  40,000 seeded
    draws; tolerance 0.01, five standard deviations (sqrt(0.2 * 0.8 / 40000) = 0.002)."""
    exact = 0.2 * (1 - 0.5**10)
    assert first_probability([2] + [1] * 9, 0) == pytest.approx(exact, abs=1e-4)
    rng = random.Random(23)
    n = 40_000
    wins = sum(level_draw({1: 9, 2: 1}, rng) == 2 for _ in range(n))
    assert wins / n == pytest.approx(exact, abs=0.01)


@pytest.mark.parametrize(
    "levels, level, exact",
    [
        ({1: 1, 2: 1}, 2, 0.75),  # one job each: integral_0^(1/2) 2 (1 - t) dt = 0.75
        ({1: 3, 5: 1}, 5, 1.25 * (1 - 0.8**4)),  # integral_0^(1/5) 5 (1 - t)^3 dt = 0.738
        # priority 10 is 1e6: integral_0^(1e-6) 1e6 (1 - 9t)^500 dt = 1e6/4509 (1 - (1 - 9e-6)^501) = 0.99774
        ({10: 1, 9: 500}, 10, 1e6 / (9 * 501) * (1 - (1 - 9e-6) ** 501)),
    ],
)
def test_level_odds_follow_every_row(levels, level, exact):
    """The level's chance is the sum of its rows' chances of the smallest key (tolerance
    0.01 over 20,000 seeded draws, at least four standard deviations)."""
    rng = random.Random(5)
    n = 20_000
    assert sum(level_draw(levels, rng) == level for _ in range(n)) / n == pytest.approx(exact, abs=0.01)


def pending_of(text: str) -> list[Pending]:
    return [Pending(j, 1) for j in pool_from_ads([], ads(text)).jobs]


def first_picks(config: str, pending: list[Pending], trials: int) -> Counter:
    """The first job picked in ``trials`` cycles, each with its own ``DIRAC_SEED``."""
    cfg = policy_params(Knobs.from_string(config))
    picks: Counter = Counter()
    for seed in range(trials):
        runner = DiracRunner(replace(cfg, dirac_seed=seed))
        runner.begin_cycle(NOW, pending, [], {}, PoolShape(1, 1))
        picks[runner.pick().job.id] += 1
    return picks


def test_the_cycle_draws_every_job_row():
    """One TaskQueue: jobs 1.0-1.8 at DiracPriority 1, job 2.0 at 2.  The chance that 2.0
    goes first is 0.199805 (above), not 0.75.  2000 cycles with seeds 0..1999; tolerance
    0.035, about four standard deviations (sqrt(0.2 * 0.8 / 2000) = 0.009)."""
    text = "".join(job("a@d", 1, p) for p in range(9)) + job("a@d", 2, extra="DiracPriority = 2")
    picks = first_picks(DIRAC, pending_of(text), 2000)
    assert picks["2.0"] / 2000 == pytest.approx(0.199805, abs=0.035)


def test_one_of_the_fifty_lowest_job_ids_is_taken():
    """TaskQueueDB fetches the drawn level's 50 lowest JobIds and takes one at random.  60
    jobs at one level: over 600 first picks only procs 0-49 appear, each about 600/50 =
    12 times (every one at least once; none more than 30 times, over five standard
    deviations of sqrt(600 * 0.02 * 0.98) = 3.4 above 12)."""
    picks = first_picks(DIRAC, pending_of("".join(job("a@d", 1, p) for p in range(60))), 600)
    assert set(picks) == {f"1.{p}" for p in range(50)}
    assert max(picks.values()) <= 30


@settings(max_examples=30, deadline=None)
@given(st.permutations(range(8)), st.integers(0, 1000))
def test_picks_do_not_depend_on_the_order_of_the_input(order, seed):
    """The same jobs handed over in any order give the same sequence of picks."""
    text = "".join(
        job(u, c, p, extra=f"DiracPriority = {1 + (c + p) % 3}") for u, c in (("a@d", 1), ("b@d", 2)) for p in range(4)
    )
    pending = pending_of(text)
    cfg = replace(policy_params(Knobs.from_string(DIRAC)), dirac_seed=seed)

    def sequence(items):
        runner = DiracRunner(cfg)
        runner.begin_cycle(NOW, items, [], {}, PoolShape(8, 1))
        return [runner.pick().job.id for _ in items]

    assert sequence([pending[i] for i in order]) == sequence(pending)


def test_group_share_knobs_give_d1():
    """D1 (docs/policies.md) set by knobs: DIRAC_DEFAULT_GROUP = analysis (jobs without an
    accounting group), DIRAC_JOBSHARE_analysis 10000, DIRAC_JOBSHARE_mc 300,
    DIRAC_JOBSHARING = mc.  analysis: two owners, 5000 each; alice's TaskQueues weigh 1 (jobs
    at 1, 1, 1) and 3 (1, 5): 5000*1/4 = 1250 and 5000*3/4 = 3750; bob's 5000.  mc is
    shared by the group: weights 1 and 2 of 3: 100 and 200.
    Without DIRAC_JOBSHARING mc is split per owner first: 150 each.  Without
    DIRAC_DEFAULT_GROUP the jobs fall in group user, share 1000: 125, 375 and 500."""
    text = (
        "".join(job("alice@d", 1, p) for p in range(3))
        + job("alice@d", 2, 0)
        + job("alice@d", 2, 1, extra="DiracPriority = 5")
        + "".join(job("bob@d", 3, p) for p in range(2))
        + "".join(job("x@d", 4, p, extra='AcctGroup = "mc"') for p in range(2))
        + "".join(job("y@d", 5, p, extra='AcctGroup = "mc"\nDiracPriority = 2') for p in range(2))
    )
    pending = [Pending(j, j.cluster) for j in pool_from_ads([], ads(text)).jobs]
    shares = "DIRAC_JOBSHARE_analysis = 10000\nDIRAC_JOBSHARE_mc = 300\n"

    def priorities(config: str) -> dict:
        runner = DiracRunner(policy_params(Knobs.from_string(DIRAC + config)))
        runner.begin_cycle(NOW, pending, [], {}, PoolShape(1, 1))
        return {(r["owner"], r["group"], r["autocluster"]): r["priority"] for r in runner.report()}

    grouped = "DIRAC_DEFAULT_GROUP = analysis\n" + shares
    assert priorities(grouped + "DIRAC_JOBSHARING = mc\n") == pytest.approx(
        {
            ("alice@d", "analysis", 1): 1250,
            ("alice@d", "analysis", 2): 3750,
            ("bob@d", "analysis", 3): 5000,
            ("mc.x@d", "mc", 4): 100,
            ("mc.y@d", "mc", 5): 200,
        }
    )
    split = priorities(grouped)
    assert (split[("mc.x@d", "mc", 4)], split[("mc.y@d", "mc", 5)]) == pytest.approx((150, 150))
    plain = priorities(shares + "DIRAC_JOBSHARING = mc\n")
    assert [plain[("alice@d", "user", 1)], plain[("alice@d", "user", 2)], plain[("bob@d", "user", 3)]] == pytest.approx(
        [125, 375, 500]
    )


# ---- the history corrector ------------------------------------------------------------


def test_a_late_group_is_averaged_over_the_whole_span():
    """Slice [3600, 1, 3]; groups A and B, share 1000 each.  Four cycles within the hour:
    A ran 10 jobs at each, B started at the third with 10.  Averages over all four cycles:
    A 40/4 = 10, B 20/4 = 5 (not 20/2 = 10).  Shares 0.5 / 0.5, usage 10/15 and 5/15:
    A 0.5/(2/3) = 0.75, B 0.5/(1/3) = 1.5, inside [1/3, 3] and [1/5, 5].  One owner per
    group, so the TaskQueues get 1000 * 0.75 = 750 and 1000 * 1.5 = 1500."""
    times = (NOW - 3000, NOW - 2000, NOW - 1000, NOW)
    ledger = {
        "A": Ledger(10, tuple(x for t in times for x in (t, 10.0)), NOW),
        "B": Ledger(10, (NOW - 1000, 10.0, NOW, 10.0), NOW),
    }
    assert window_averages({g: h.buckets for g, h in ledger.items()}, NOW, 3600) == {"A": 10.0, "B": 5.0}
    jobs = job("a@d", 1, extra='AcctGroup = "A"') + job("b@d", 2, extra='AcctGroup = "B"')
    _, runner = run(CORRECTED, slots(2), jobs, ledger)
    assert {r["group"]: r["priority"] for r in runner.report()} == pytest.approx({"A": 750, "B": 1500})


def test_cycles_without_running_jobs_count_as_zero():
    """The store built cycle by cycle: A runs 10 jobs in cycles 1 and 2, then nothing;
    B nothing, then 10 in cycles 3 and 4.  A's later cycles are stored as 0, and B's
    earlier ones count as 0: both average 20/4 = 5, so neither is corrected (factor 1,
    TaskQueue priority 1000 each)."""
    runner = DiracRunner(policy_params(Knobs.from_string(CORRECTED)))

    def running(group: str) -> list:
        return pool_from_ads(
            [],
            ads(
                "".join(job(f"{group.lower()}@d", 50 + i, status=2, extra=f'AcctGroup = "{group}"') for i in range(10))
            ),
        ).jobs

    ledger: dict = {}
    for i, group in enumerate("AABB"):
        ledger = runner.ledger(NOW - 3000 + 1000 * i, running(group), ledger)
    assert ledger["A"].buckets[1::2] == (10.0, 10.0, 0.0, 0.0)
    assert window_averages({g: h.buckets for g, h in ledger.items()}, NOW, 3600) == {"A": 5.0, "B": 5.0}
    jobs = job("a@d", 1, extra='AcctGroup = "A"') + job("b@d", 2, extra='AcctGroup = "B"')
    _, corrected = run(CORRECTED, slots(2), jobs, ledger)
    assert {r["group"]: (r["correction"], r["priority"]) for r in corrected.report()} == {
        "A": (1.0, 1000.0),
        "B": (1.0, 1000.0),
    }


@given(
    st.lists(st.floats(1, 1e4), min_size=2, max_size=4),
    st.lists(st.floats(0, 1e3), min_size=4, max_size=4),
    st.integers(0, 3),
    st.floats(0.5, 100),
    st.booleans(),
)
def test_more_running_jobs_never_raise_a_groups_correction(shares, usage, who, extra, compat):
    """Priority is monotone in usage: a group that ran more is never corrected upwards."""
    names = [f"g{i}" for i in range(len(shares))]
    who %= len(names)
    share = dict(zip(names, shares))
    before = dict(zip(names, usage))
    after = dict(before, **{names[who]: before[names[who]] + extra})
    sl = [(Slice(80, 2), before), (Slice(20, 5), before)]
    more = [(Slice(80, 2), after), (Slice(20, 5), after)]
    f0 = correction(share, sl, 3, compat)[names[who]]
    f1 = correction(share, more, 3, compat)[names[who]]
    assert f1 <= f0 + 1e-12


# ---- knobs checked at load --------------------------------------------------------------


@pytest.mark.parametrize(
    "text, line",
    [
        ("DIRAC_CORRECTION_SLICES = [3600, 1]\n", 1),  # corrector off, still checked
        ("X = 1\nDIRAC_CORRECTION_SLICES = [3600, 0, 3]\n", 2),  # weight 0
        ("DIRAC_ENABLE_SHARES_CORRECTION = true\nDIRAC_CORRECTION_SLICES =\n", 2),  # on, without a slice
        ("DIRAC_JOBSHARE_lhcb = -5\n", 1),
        ("DIRAC_JOBSHARE_lhcb = plenty\n", 1),
        ("DIRAC_PRIORITY_CONSOLIDATION = max\n", 1),
        ("DIRAC_SEED = 1.5\n", 1),
        ("X = 1\nDIRAC_SEEDS = 3\n", 2),  # no such knob
    ],
)
@pytest.mark.parametrize("policy", ["dirac", "htcondor", "slurm"])
def test_bad_dirac_knobs_name_file_and_line_whatever_the_policy(text, line, policy):
    with pytest.raises(ConfigError) as e:
        policy_params(Knobs.from_string(text + f"MATCHMAKER_PRIORITY_POLICY = {policy}\n", "pool.conf"))
    assert (e.value.file, e.value.line) == ("pool.conf", line)


def test_corrector_survives_tiny_usage_and_zero_shares():
    """A usage so small that its part of the total underflows is as under-served as can be
    (the slice maximum); shares that are all 0 give no division by zero."""
    slices = [(Slice(1, 3), {"a": 5e-324, "b": 2.0})]
    assert correction({"a": 1.0, "b": 1.0}, slices, 5)["a"] == 3
    plain = [(Slice(1, 3), {"a": 1.0, "b": 2.0})]
    assert correction({"a": 0.0, "b": 0.0}, plain, 5) == {"a": pytest.approx(1 / 3), "b": pytest.approx(1 / 3)}
