"""Slurm's multifactor priority and Fair Tree, checked against their sources.

Every expected number below is worked out by hand from Slurm's documentation
(priority_multifactor and fair_tree pages) or from ``fair_tree.c``, with the
arithmetic in the docstring; docs/policies.md quotes the sentences.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st
from policy_helpers import NOW, job, run, slots

from matchmaker.config.knobs import Knobs
from matchmaker.config.policy_settings import parse_slurm_time as parse_time, policy_params
from matchmaker.errors import ConfigError
from matchmaker.policies.jobs import Ledger
from matchmaker.policies.slurm import (
    Assoc,
    SlurmParams,
    fair_tree,
    job_priority,
    job_size_factor,
    qos_factor,
)
from matchmaker.policies.slurm_runner import SlurmRunner

SLURM = "MATCHMAKER_PRIORITY_POLICY = slurm\n"


# ---- time strings -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("90", 90 * 60),  # minutes
        ("90:30", 90 * 60 + 30),  # minutes:seconds
        ("1:30:00", 3600 + 30 * 60),  # hours:minutes:seconds
        ("7-0", 7 * 86400),  # days-hours
        ("1-12", 86400 + 12 * 3600),  # days-hours
        ("1-12:30", 86400 + 12 * 3600 + 30 * 60),  # days-hours:minutes
        ("1-12:00:00", 86400 + 12 * 3600),  # days-hours:minutes:seconds
        ("0", 0),
    ],
)
def test_slurm_time_strings(text, seconds):
    assert parse_time(text) == seconds


@pytest.mark.parametrize("text", ["7 days", "1:2:3:4", "", "-5", "1.5", "7-", "3600*24", "1-2:3:4:5", "a-1"])
def test_bad_slurm_time_strings(text):
    with pytest.raises(ValueError):
        parse_time(text)


def test_max_age_7_0_is_seven_days_in_a_cycle():
    """PRIORITYMAXAGE = 7-0 is a week, not 7 - 0 = 7 seconds: a job eligible 3.5 days ago has
    age 302400 / 604800 = 0.5, so 1000 * 0.5 = 500 (7 seconds would give the full 1000)."""
    cfg = SLURM + "SLURM_PRIORITYWEIGHTAGE = 1000\nSLURM_PRIORITYMAXAGE = 7-0\n"
    _, runner = run(cfg, slots(1), job("a@d", 1, extra=f"QDate = {int(NOW - 3.5 * 86400)}"))
    assert runner.report()[0]["priority"] == 500


def test_truncation_can_be_turned_off():
    """Age weight 1000, a job eligible a day ago: 1000 * 86400/604800 = 142.857143; Slurm
    truncates it to 142; SLURM_PRIORITY_TRUNCATE = false keeps the fraction."""
    cfg = SLURM + "SLURM_PRIORITYWEIGHTAGE = 1000\n"
    jobs = job("a@d", 1, extra=f"QDate = {int(NOW - 86400)}")
    _, truncated = run(cfg, slots(1), jobs)
    _, exact = run(cfg + "SLURM_PRIORITY_TRUNCATE = false\n", slots(1), jobs)
    assert truncated.report()[0]["priority"] == 142
    assert exact.report()[0]["priority"] == pytest.approx(142.857143, abs=1e-6)


def test_half_life_is_read_as_a_slurm_time():
    """90 is ninety minutes: the half-life is 5400 s."""
    assert policy_params(Knobs.from_string(SLURM + "SLURM_PRIORITYDECAYHALFLIFE = 90\n")).slurm.decay_half_life == 5400


@pytest.mark.parametrize(
    "text, line",
    [
        ("SLURM_PRIORITYMAXAGE = 7 days\n", 2),
        ("SLURM_PRIORITYMAXAGE = 0\n", 2),
        ("X = 1\nSLURM_PRIORITYDECAYHALFLIFE = 3600*24\n", 3),
        ("SLURM_PRIORITYFLAGS = SMALL_RELATIVE_TO_TIME, MAX_TRES\n", 2),
        ("SLURM_QOS_PRIORITY_high = many\n", 2),
        ("SLURM_QOS_PRIORITY_high = -5\n", 2),
        ("SLURM_SHARES_alice = lots\n", 2),
        ("SLURM_PRIORITYWEIGHTFAIRSHAR = 10000\n", 2),  # no such knob: it would change nothing
        ("NEGOTIATOR.SLURM_QOS_PRIORTY_high = 5\n", 2),
    ],
)
def test_bad_slurm_knobs_name_file_and_line(text, line):
    with pytest.raises(ConfigError) as e:
        policy_params(Knobs.from_string(SLURM + text, "pool.conf"))
    assert (e.value.file, e.value.line) == ("pool.conf", line)


def test_slurm_knobs_are_checked_whatever_the_policy():
    """A bad per-name knob is an error at load even while another policy is chosen."""
    with pytest.raises(ConfigError) as e:
        policy_params(Knobs.from_string("SLURM_QOS_PRIORITY_normal = x\n", "pool.conf"))
    assert (e.value.file, e.value.line) == ("pool.conf", 1)


# ---- QOS ----------------------------------------------------------------------------


def test_qos_is_normalised_by_every_configured_qos():
    """QOS priorities high 100, normal 20, top 400 (no pending job uses top).  The factor is
    normalised to the highest of all QOS: high 100/400 = 0.25 -> 1000 * 0.25 = 250;
    normal 20/400 = 0.05 -> 50.  (Normalised over the pending jobs' QOS only it would be
    1000 and 200.)"""
    cfg = (
        SLURM + "SLURM_PRIORITYWEIGHTQOS = 1000\nSLURM_QOS_PRIORITY_high = 100\n"
        "SLURM_QOS_PRIORITY_normal = 20\nSLURM_QOS_PRIORITY_top = 400\n"
    )
    jobs = job("x@d", 1, extra='Qos = "high"') + job("y@d", 2, extra='Qos = "normal"') + job("z@d", 3)
    _, runner = run(cfg, slots(3), jobs)
    prio = {r["name"]: r["priority"] for r in runner.report()}
    assert prio == {"1.0": 250, "2.0": 50, "3.0": 1}  # no QOS: factor 0, floored at 1
    assert qos_factor(100, 400) == 0.25 and qos_factor(5, 0) == 0.0


def test_s3_through_the_cycle():
    """The S3 example: weights age 1000 (max age 7-0), fair share 0 here, QOS 2000 with
    high = 100 (the highest) and normal = 20.  X: eligible 3.5 d ago, high: 500 + 2000 =
    2500.  Y: 10 d ago (age capped at 1), normal, nice 100: 1000 + 400 - 100 = 1300.
    Z: just eligible, normal: 0 + 400 = 400.  Order X, Y, Z."""
    cfg = (
        SLURM + "SLURM_PRIORITYWEIGHTAGE = 1000\nSLURM_PRIORITYWEIGHTQOS = 2000\n"
        "SLURM_QOS_PRIORITY_high = 100\nSLURM_QOS_PRIORITY_normal = 20\n"
    )
    jobs = (
        job("x@d", 1, extra=f'Qos = "high"\nQDate = {int(NOW - 3.5 * 86400)}')
        + job("y@d", 2, extra=f'Qos = "normal"\nQDate = {int(NOW - 10 * 86400)}\nNice = 100')
        + job("z@d", 3, extra=f'Qos = "normal"\nQDate = {int(NOW)}')
    )
    result, runner = run(cfg, slots(3), jobs)
    assert [(r["name"], r["priority"]) for r in runner.report()] == [("1.0", 2500), ("2.0", 1300), ("3.0", 400)]
    assert [m.job for m in result.matches] == ["1.0", "2.0", "3.0"]


# ---- job size ---------------------------------------------------------------------------


def test_job_size_by_nodes_and_cpus():
    """4 machines of 4 CPUs (N = 4, C = 16); every job runs on one machine.
    Favouring large jobs, (n/N + c/C)/2: 1 CPU -> (1/4 + 1/16)/2 = 0.15625;
    8 CPUs -> (1/4 + 8/16)/2 = 0.375.  Favouring small, 1 - ((n-1)/N + (c-1)/C)/2:
    1 CPU -> 1 - 0 = 1.0 ("the single node job will receive the 1.0");
    8 CPUs -> 1 - (0 + 7/16)/2 = 0.78125.  Whole machine, favouring large: (4/4 + 16/16)/2 = 1."""
    assert job_size_factor(1, 1, 4, 16) == pytest.approx(0.15625)
    assert job_size_factor(1, 8, 4, 16) == pytest.approx(0.375)
    assert job_size_factor(1, 1, 4, 16, favor_small=True) == 1.0
    assert job_size_factor(1, 8, 4, 16, favor_small=True) == pytest.approx(0.78125)
    assert job_size_factor(4, 16, 4, 16) == 1.0


def test_job_size_relative_to_time():
    """SMALL_RELATIVE_TO_TIME, N = 4, C = 16: size = max(n*C/N, c) / limit_minutes / C.
    1 CPU for 60 min: max(4, 1)/60/16 = 0.00416667.  8 CPUs for 10 min: 8/10/16 = 0.05.
    The whole machine for one minute: 16/1/16 = 1.0 ("a full-system job with a time limit
    of one will receive a job size factor of 1.0").  No limit: 0.  Favouring small: 1 - size."""
    assert job_size_factor(1, 1, 4, 16, relative_to_time=True, limit_minutes=60) == pytest.approx(4 / 960)
    assert job_size_factor(1, 8, 4, 16, relative_to_time=True, limit_minutes=10) == pytest.approx(0.05)
    assert job_size_factor(4, 16, 4, 16, relative_to_time=True, limit_minutes=1) == 1.0
    assert job_size_factor(1, 8, 4, 16, relative_to_time=True) == 0.0
    assert job_size_factor(1, 8, 4, 16, True, True, 10) == pytest.approx(0.95)


def test_job_size_in_the_cycle():
    """8 slots of 2 CPUs on 4 machines: N = 4, C = 16.  Weight 1000.  Favouring small:
    a 1-CPU job gets 1000, a 2-CPU job 1 - (1/16)/2 = 0.96875 -> 968.  With
    SMALL_RELATIVE_TO_TIME (favouring large): the 2-CPU job limited to 30 min
    (WallClockLimit 1800 s): max(4, 2)/30/16 = 0.0083333 -> 8; the 1-CPU job without a
    limit: 0 -> floored to 1."""
    jobs = job("a@d", 1) + job("b@d", 2, extra="RequestCpus = 2\nWallClockLimit = 1800")
    _, small = run(
        SLURM + "SLURM_PRIORITYWEIGHTJOBSIZE = 1000\nSLURM_PRIORITYFAVORSMALL = true\n",
        slots(8, cpus=2, machines=4),
        jobs,
    )
    assert {r["name"]: r["priority"] for r in small.report()} == {"1.0": 1000, "2.0": 968}
    _, timed = run(
        SLURM + "SLURM_PRIORITYWEIGHTJOBSIZE = 1000\nSLURM_PRIORITYFLAGS = small_relative_to_time\n",
        slots(8, cpus=2, machines=4),
        jobs,
    )
    assert {r["name"]: r["priority"] for r in timed.report()} == {"1.0": 1, "2.0": 8}


# ---- Fair Tree ties -------------------------------------------------------------------


def user(name: str, usage: float, shares: float = 1) -> Assoc:
    return Assoc(name, shares, usage, is_user=True)


def test_user_tied_with_a_sibling_account_shares_its_best_users_rank():
    """root -> u (usage 100) and account A {a1 100, a2 0}, all one share.  Root level:
    A's usage 100 of 200, so LF(u) = 0.5/0.5 = 1 = LF(A): tied, u first (users before
    accounts).  N = 3: u gets rank 3 (1.0).  A starts tied, so its best user a2
    (LF inf) keeps rank 3 (1.0); a1 (LF 0.5/1 = 0.5) gets rank 1 (1/3)."""
    root = Assoc("root", children=[user("u", 100), Assoc("A", children=[user("a1", 100), user("a2", 0)])])
    assert fair_tree(root) == pytest.approx({"u": 1.0, "a2": 1.0, "a1": 1 / 3})


def test_sibling_accounts_tied_on_level_fairshare_are_merged():
    """root -> A {a1 30, a2 10}, B {b1 20, b2 20}; one share each.  LF(A) = LF(B) =
    0.5/0.5 = 1: tied, so their children are merged and ranked together, each by its LF
    within its own account: a2 0.5/0.25 = 2, b1 = b2 = 0.5/0.5 = 1, a1 0.5/0.75 = 0.667.
    N = 4: a2 rank 4 (1.0), b1 and b2 rank 3 (0.75), a1 rank 1 (0.25).  (Walking A then
    B without merging would give a2 1.0, a1 0.75, b1 and b2 0.5.)"""
    root = Assoc(
        "root",
        children=[
            Assoc("A", children=[user("a1", 30), user("a2", 10)]),
            Assoc("B", children=[user("b1", 20), user("b2", 20)]),
        ],
    )
    assert fair_tree(root) == pytest.approx({"a2": 1.0, "b1": 0.75, "b2": 0.75, "a1": 0.25})


def test_merged_ties_in_the_cycle():
    """The merged-accounts tree above as submitters A.a1@d ... with their usage stored
    (no decay between the store and the cycle) and weight 10000: a2 10000, b1 and b2
    7500, a1 2500."""
    ledger = {
        f"{g}.{u}@d": Ledger(v, updated=NOW)
        for g, u, v in (("A", "a1", 30), ("A", "a2", 10), ("B", "b1", 20), ("B", "b2", 20))
    }
    jobs = "".join(
        job(f"{u}@d", i + 1, extra=f'AcctGroup = "{g}"')
        for i, (g, u) in enumerate((("A", "a1"), ("A", "a2"), ("B", "b1"), ("B", "b2")))
    )
    result, runner = run(SLURM + "SLURM_PRIORITYWEIGHTFAIRSHARE = 10000\n", slots(4), jobs, ledger)
    assert {r["name"]: r["priority"] for r in runner.report()} == {"2.0": 10000, "3.0": 7500, "4.0": 7500, "1.0": 2500}
    assert [m.job for m in result.matches] == ["2.0", "3.0", "4.0", "1.0"]


def test_every_association_is_ranked_active_or_not():
    """S1's tree: A (60 shares) {a1 usage 600, a2}, B (40) {b1 usage 200}.  Only a1 and b1
    have jobs.  a2 has stored usage 0 and no jobs: it is still an association under A, so
    N = 3 and b1 gets 1.0 (10000), a1 1/3 (3333).  Were a2 left out, N = 2 and a1 would
    get 1/2; were it put under the root, its infinite LF would rank it first and b1 would
    get 2/3."""
    cfg = SLURM + "SLURM_PRIORITYWEIGHTFAIRSHARE = 10000\nSLURM_SHARES_A = 60\nSLURM_SHARES_B = 40\n"
    jobs = job("a1@d", 1, extra='AcctGroup = "A"') + job("b1@d", 2, extra='AcctGroup = "B"')
    ledger = {"A.a1@d": Ledger(600, updated=NOW), "A.a2@d": Ledger(0, updated=NOW), "B.b1@d": Ledger(200, updated=NOW)}
    _, runner = run(cfg, slots(2), jobs, ledger)
    assert {r["name"]: r["priority"] for r in runner.report()} == {"2.0": 10000, "1.0": 3333}
    del ledger["A.a2@d"]
    _, without = run(cfg, slots(2), jobs, ledger)
    assert {r["name"]: r["priority"] for r in without.report()}["1.0"] == 5000
    _, declared = run(cfg + "SLURM_ASSOCIATIONS = A.a2@d\n", slots(2), jobs, ledger)
    assert {r["name"]: r["priority"] for r in declared.report()} == {"2.0": 10000, "1.0": 3333}


# ---- properties ---------------------------------------------------------------------

usages = st.sampled_from([0.0, 10.0, 20.0, 30.0, 50.0])


@st.composite
def trees(draw):
    """Two-level trees with small usages and shares, so that ties are frequent."""
    accounts = []
    for a in range(draw(st.integers(1, 3))):
        kids = [user(f"u{a}{i}", draw(usages), draw(st.sampled_from([1, 2]))) for i in range(draw(st.integers(1, 3)))]
        accounts.append(Assoc(f"A{a}", draw(st.sampled_from([1, 2])), children=kids))
    loose = [user(f"r{i}", draw(usages)) for i in range(draw(st.integers(0, 2)))]
    return Assoc("root", children=accounts + loose)


def shuffled(node: Assoc, rng: random.Random) -> Assoc:
    kids = [shuffled(c, rng) for c in node.children]
    rng.shuffle(kids)
    return Assoc(node.name, node.shares, node.usage, kids, node.is_user)


@settings(max_examples=150, deadline=None)
@given(trees(), st.integers(0, 2**32))
def test_ties_do_not_depend_on_the_order_of_the_input(root, seed):
    assert fair_tree(shuffled(root, random.Random(seed))) == fair_tree(root)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(trees(), st.data())
def test_more_usage_never_raises_a_users_factor(root, data):
    users = [u for a in root.children for u in (a.children if not a.is_user else [a])]
    target = data.draw(st.sampled_from(users))
    before = fair_tree(root)[target.name]
    target.usage += data.draw(st.sampled_from([1.0, 10.0, 100.0]))
    assert fair_tree(root)[target.name] <= before


@given(st.sampled_from(["age", "fairshare", "qos", "jobsize"]), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1e5))
def test_a_weight_of_zero_removes_its_term(term, x, y, w):
    weights = {"age": "weight_age", "fairshare": "weight_fairshare", "qos": "weight_qos", "jobsize": "weight_jobsize"}
    p = SlurmParams(**{k: w for k in weights.values()} | {weights[term]: 0.0})
    others = {k: 0.5 for k in weights if k != term}
    assert job_priority(p, **others, **{term: x}) == job_priority(p, **others, **{term: y})


def test_per_name_knobs_are_found_as_the_negotiator_sees_them():
    """``NEGOTIATOR.X`` is the negotiator's; ``SCHEDD.X`` is another daemon's and not read."""
    knobs = Knobs.from_string(
        "NEGOTIATOR.SLURM_QOS_PRIORITY_a = 1\nSCHEDD.SLURM_QOS_PRIORITY_b = 2\nSLURM_QOS_PRIORITY_c = 3\n"
    )
    assert sorted(knobs.pattern_args("SLURM_QOS_PRIORITY_<q>")) == ["a", "c"]


@pytest.mark.parametrize("half_life, expected", [("7-0", 500.073), ("168:00:00", 500.073), ("0", 1000.0)])
def test_stored_usage_decays_by_the_half_life_time_string(half_life, expected):
    """Usage 1000 stored a week ago: with a half-life of 7-0 (= 168:00:00) it is
    1000 * (1 - 0.693/604800)^604800 = 500.073 (0.693 is not ln 2); 0 switches decay off."""
    runner = SlurmRunner(policy_params(Knobs.from_string(SLURM + f"SLURM_PRIORITYDECAYHALFLIFE = {half_life}\n")))
    usage = runner.usage(NOW, ["u@d"], {"u@d": Ledger(1000, updated=NOW - 604800)})
    assert usage["u@d"] == pytest.approx(expected, abs=1e-3)
