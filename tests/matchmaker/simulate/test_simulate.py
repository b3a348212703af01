"""The simulation over virtual time: seed 002's worked examples, the bookkeeping rules, the API.

Expected numbers come from the seed's priority formula (RUP(t) = β·RUP(t−δt) + (1−β)·ρ,
β = 0.5^(δt/h)) and its worked examples: 100 cores claimed from a RUP of 0.5 give 50.25
after one half-life and 75.125 after two; with no usage the RUP halves every half-life;
two users with equal factors end up with half of the pool each.
"""

from __future__ import annotations

import gc

import pytest
from support import ROOT

import matchmaker
from classad import ParserType, parseAds
from matchmaker.api import settings_from
from matchmaker.config.knobs import Knobs
from matchmaker.simulate import COLUMNS, Simulation

EXAMPLES = ROOT / "examples" / "simulate"
START = 1700000000.0
HOUR = 3600.0
ALICE, BOB = "alice@example.org", "bob@example.org"


def scenario(name: str) -> matchmaker.Loaded:
    d = EXAMPLES / name
    return matchmaker.load(d / "negotiator.config", EXAMPLES / "slots.ad", d / "jobs.ad")


def ads(text: str) -> list:
    return list(parseAds(text, ParserType.Old))


def slot_text(n: int, cpus: int = 1, start: int = 0) -> str:
    return "".join(
        f'Name = "slot{i}@node"\nCpus = {cpus}\nState = "Unclaimed"\nRequirements = true\nRank = 0\n\n'
        for i in range(start, start + n)
    )


def job_text(cluster: int, owner: str, n: int, extra: str = "") -> str:
    return "".join(
        f'ClusterId = {cluster}\nProcId = {p}\nOwner = "{owner}"\nUser = "{owner}@example.org"\n'
        f"JobStatus = 1\nRequirements = true\n{extra}\n\n"
        for p in range(n)
    )


# ---- seed 002's graphs --------------------------------------------------------------------


@pytest.mark.slow
def test_rup_growth_100_cores_for_48_hours():
    sim = matchmaker.simulate(scenario("rup-growth"), start=START, duration=48 * HOUR)
    assert sim.meta()["interval"] == 300  # NEGOTIATOR_INTERVAL of the example
    assert sim.at(0, ALICE)["rup"] == 0.5
    assert sim.at(24, ALICE)["rup"] == pytest.approx(50.25, rel=1e-12)
    assert sim.at(48, ALICE)["rup"] == pytest.approx(75.125, rel=1e-12)
    assert all(r == 100 for r in sim.column(ALICE, "running"))
    # in between it follows the closed form RUP(t) = 100 + (0.5 - 100) * 0.5^(t/h)
    for h in (1, 6, 12.5, 36):
        assert sim.at(h, ALICE)["rup"] == pytest.approx(100 - 99.5 * 0.5 ** (h / 24), rel=1e-12)


def test_rup_grows_then_decays():
    sim = matchmaker.simulate(scenario("grow-decay"), start=START, duration=72 * HOUR, interval=HOUR)
    assert sim.at(24, ALICE)["rup"] == pytest.approx(50.25, rel=1e-12)
    assert sim.at(24, ALICE)["running"] == 0 and sim.at(24, ALICE)["done"] == 100
    for h in (30, 48, 72):
        assert sim.at(h, ALICE)["rup"] == pytest.approx(50.25 * 0.5 ** ((h - 24) / 24), rel=1e-12)
    assert sim.at(72, ALICE)["charged"] == pytest.approx(100 * 24 * HOUR)


@pytest.mark.slow
def test_two_users_share_the_pool():
    sim = matchmaker.simulate(scenario("fair-share"), start=START, duration=120 * HOUR, interval=HOUR)
    before = sim.at(47, ALICE)
    assert before["running"] == 100 and sim.at(47, BOB)["pending"] == 100
    at48 = sim.at(48, ALICE), sim.at(48, BOB)
    # "User A's RUP should be about 75.0 at the 48 hour mark ... User B deserves 150 times User A"
    assert at48[0]["rup"] == pytest.approx(75.125, rel=1e-9)
    assert at48[0]["eup"] / at48[1]["eup"] == pytest.approx(150.25, rel=1e-9)
    # A drops from the whole pool to (rounded up) one core, then rebounds towards half of it
    assert at48[0]["running"] <= 1
    after = sim.column(ALICE, "running")[48:]
    assert all(b >= a for a, b in zip(after, after[1:]))
    assert sim.at(120, ALICE)["share"] == pytest.approx(0.5, abs=0.03)
    assert sim.at(120, BOB)["share"] == pytest.approx(0.5, abs=0.03)


@pytest.mark.slow
def test_unequal_factors_follow_the_inverse_eup_ratio():
    """With factors 1 and 4 each cycle splits the pool by 1/EUP; since a RUP settles at the
    usage, u_A / u_B = EUP_B / EUP_A = (u_B * 4) / (u_A * 1): the shares settle at 2 : 1."""
    sim = matchmaker.simulate(
        scenario("fair-share"), start=START + 48 * HOUR, duration=240 * HOUR, interval=HOUR, factors={BOB: 4}
    )
    first = sim.at(0, ALICE), sim.at(0, BOB)
    assert (first[0]["running"], first[1]["running"]) == (80, 20)  # EUPs 0.5 and 2.0
    end = sim.at(240, ALICE), sim.at(240, BOB)
    assert end[0]["running"] / end[1]["running"] == pytest.approx(2.0, abs=0.1)
    assert end[1]["eup"] / end[0]["eup"] == pytest.approx(2.0, abs=0.1)


# ---- bookkeeping rules --------------------------------------------------------------------

PREEMPTING = """
PRIORITY_HALFLIFE = 3600
NEGOTIATOR_INTERVAL = 600
DEFAULT_PRIO_FACTOR = 1
PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmitterUserPrio * 1.2
"""


def busy_pool(seed: int = 3) -> Simulation:
    slots = ads(slot_text(6) + slot_text(3, cpus=2, start=6))
    jobs = ads(
        job_text(1, "alice", 20, "SimJobDuration = 600 + random(7200)\nSimJobRepeat = 1\nRequestCpus = 1")
        + job_text(2, "bob", 15, f"QDate = {START + 2 * HOUR:.0f}\nSimJobDuration = 300 + random(3600)")
        + job_text(3, "carol", 5, f"QDate = {START + 5 * HOUR:.0f}")
    )
    loaded = matchmaker.load_ads(Knobs.from_string(PREEMPTING), slots, jobs)
    return matchmaker.simulate(loaded, start=START, duration=12 * HOUR, seed=seed, job_duration=1800)


def test_a_run_leaves_no_reference_cycles_behind():
    """Once a run returns, reference counting has freed what it made: the cyclic collector
    finds none of the loop's state, the carried state, the jobs, slots or ads."""
    gc.collect()
    was_on, flags = gc.isenabled(), gc.get_debug()
    gc.disable()
    try:
        sim = busy_pool()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = {type(o).__name__ for o in gc.garbage}
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
        if was_on:
            gc.enable()
    assert sim.rows
    assert not left & {"_Run", "Carried", "SlotCarry", "SimJob", "Slot", "Job", "ClassAd", "AdCore"}


def test_deterministic_for_a_seed():
    one, two = busy_pool(3), busy_pool(3)
    assert one.rows == two.rows and one.jobs == two.jobs
    assert busy_pool(4).rows != one.rows


def test_seed_covers_random_in_requirements():
    jobs = job_text(1, "alice", 30, "SimJobDuration = 300").replace(
        "Requirements = true", "Requirements = random(2) == 0"
    )
    loaded = matchmaker.load_ads(Knobs.from_string("NEGOTIATOR_INTERVAL = 600"), ads(slot_text(8)), ads(jobs))

    def matched(seed: int) -> list:
        return matchmaker.simulate(loaded, start=START, duration=6 * HOUR, seed=seed).column(ALICE, "matched")

    assert matched(11) == matched(11)
    assert matched(11) != matched(12)
    assert 0 < sum(matched(11)) < 30 * 8


def test_conservation():
    sim = busy_pool()
    sizes = {ALICE: 20, BOB: 15, "carol@example.org": 5}
    for r in sim:
        if r["kind"] == "submitter":
            assert r["running"] + r["idle"] + r["pending"] + r["done"] == sizes[r["name"]]
        if r["kind"] == "pool":
            assert r["usage"] <= sim.pool_weight
    assert sum(r["preempted"] for r in sim if r["kind"] == "pool") > 0  # the policy did preempt
    assert any(j.preemptions for j in sim.jobs)
    # a slot is never claimed twice at once
    by_slot: dict[str, list] = {}
    for span in sim.spans:
        by_slot.setdefault(span.slot, []).append(span)
    for spans in by_slot.values():
        for a, b in zip(spans, spans[1:]):
            assert a.end is not None and a.end <= b.start
    # usage charged = sum of claimed weight x time, per submitter and in total
    end = START + 12 * HOUR
    final = {r["name"]: r for r in sim if r["cycle"] == sim.rows[-1]["cycle"]}
    for name in sizes:
        expected = sum(s.charge(end) for s in sim.spans if s.customer == name)
        assert final[name]["charged"] == pytest.approx(expected, rel=1e-9)
    assert final["pool"]["charged"] == pytest.approx(sum(s.charge(end) for s in sim.spans), rel=1e-9)
    assert {s.weight for s in sim.spans} == {1.0, 2.0}
    # a long run keeps one span per claim and one outcome per job: neither holds a __dict__
    assert not hasattr(sim.spans[0], "__dict__") and not hasattr(sim.jobs[0], "__dict__")


def test_preempted_jobs_go_back_to_idle_and_rerun():
    sim = busy_pool()
    rows = [r for r in sim if r["kind"] == "submitter" and r["name"] == ALICE and r["preempted"]]
    assert rows
    prev = {r["cycle"]: r for r in sim if r["kind"] == "submitter" and r["name"] == ALICE}
    for r in rows:
        before = prev[r["cycle"] - 1]
        # the preempted jobs are idle again (none of them finished in that cycle's bookkeeping)
        assert r["idle"] + r["running"] + r["done"] == before["idle"] + before["running"] + before["done"]
        assert r["idle"] >= r["preempted"]


def stamped_slots(n: int, requirements: str = "true") -> list:
    """``n`` one-core slots, Unclaimed for two hours at the start."""
    return ads(
        "".join(
            f'Name = "s{i}@node"\nCpus = 1\nState = "Unclaimed"\nActivity = "Idle"\n'
            f"EnteredCurrentState = {START - 2 * HOUR:.0f}\nEnteredCurrentActivity = {START - 2 * HOUR:.0f}\n"
            f"Requirements = {requirements}\nRank = 0\n\n"
            for i in range(n)
        )
    )


def test_a_claim_starts_the_slots_state_timer_again():
    """A slot claimed in the run entered the Claimed state then, so the UWCS guard
    ``CurrentTime - EnteredCurrentState > 3600`` keeps it from priority preemption for an
    hour after the claim, whatever the slot's state timer read before.

    Cycles every 600 s, half-life 3600 s, factors 1.  alice's two jobs claim both slots at
    the start (t = 0); bob's two jobs arrive at t = 600.  From then on alice's RUP is above
    bob's times 1.2 (bob has no usage: 0.5; alice after one cycle on 2 slots:
    0.5 * 0.5**(600/3600) + 2 * (1 - 0.5**(600/3600)) = 0.664 > 0.6), so only the guard
    holds the preemption back.  The slots entered Claimed at t = 0; 600 k - 0 > 3600 first
    at k = 7: t = 4200 s, 7/6 h.  (Had the claim left the stamp at -7200, the guard would
    pass at t = 600.)"""
    knobs = Knobs.from_string(
        "PRIORITY_HALFLIFE = 3600\nNEGOTIATOR_INTERVAL = 600\nDEFAULT_PRIO_FACTOR = 1\n"
        "PREEMPTION_REQUIREMENTS = (CurrentTime - EnteredCurrentState > 3600)"
        " && RemoteUserPrio > SubmitterUserPrio * 1.2\n"
    )
    jobs = ads(
        job_text(1, "alice", 2, "SimJobDuration = 36000")
        + job_text(2, "bob", 2, f"QDate = {START + 600:.0f}\nSimJobDuration = 36000")
    )
    sim = matchmaker.simulate(matchmaker.load_ads(knobs, stamped_slots(2), jobs), start=START, duration=2 * HOUR)
    alice = {round(r["hours"] * 6): r for r in sim if r["kind"] == "submitter" and r["name"] == ALICE}
    assert alice[0]["running"] == 2
    assert [k for k in sorted(alice) if alice[k]["preempted"]][0] == 7
    assert sim.at(7 / 6, BOB)["running"] >= 1


def test_a_release_starts_the_slots_state_timer_again():
    """A static slot whose job ended is Unclaimed from the cycle that saw it end.  The slot
    takes a job only 1800 s after it entered its state: alice's job (1200 s) claims it at
    t = 0 (its stamp then reads -7200) and ends at t = 1200, where the slot is released.
    bob's job, idle from t = 600, then waits until 600 k - 1200 >= 1800: k = 5, t = 3000 s,
    5/6 h.  (Had the release left the stamp as it was, bob would start at t = 1200.)"""
    knobs = Knobs.from_string("NEGOTIATOR_INTERVAL = 600\n")
    slots = stamped_slots(1, 'State == "Unclaimed" && CurrentTime - EnteredCurrentState >= 1800')
    jobs = ads(
        job_text(1, "alice", 1, "SimJobDuration = 1200")
        + job_text(2, "bob", 1, f"QDate = {START + 600:.0f}\nSimJobDuration = 36000")
    )
    sim = matchmaker.simulate(matchmaker.load_ads(knobs, slots, jobs), start=START, duration=HOUR)
    assert sim.at(0, ALICE)["running"] == 1
    bob = {round(r["hours"] * 6): r["running"] for r in sim if r["kind"] == "submitter" and r["name"] == BOB}
    assert [k for k in sorted(bob) if bob[k]][0] == 5


def test_a_job_run_again_is_idle_from_the_end_of_its_run():
    """A job that runs again (``SimJobRepeat``) is idle from when its run ended, and the
    slot takes only jobs idle for 1800 s: ``CurrentTime - TARGET.EnteredCurrentStatus >=
    1800``.  alice's job (idle since -7200) starts at t = 0, runs 1200 s, and is idle
    again from t = 1200; 600 k - 1200 >= 1800 first at k = 5, so it runs again from
    t = 3000 s, 5/6 h.  (Had its status stamp stayed at its start, t = 0, it would run
    again from k = 3.)"""
    knobs = Knobs.from_string("NEGOTIATOR_INTERVAL = 600\n")
    slots = stamped_slots(1, "CurrentTime - TARGET.EnteredCurrentStatus >= 1800")
    extra = f"EnteredCurrentStatus = {START - 2 * HOUR:.0f}\nSimJobDuration = 1200\nSimJobRepeat = 1"
    sim = matchmaker.simulate(
        matchmaker.load_ads(knobs, slots, ads(job_text(1, "alice", 1, extra))), start=START, duration=HOUR
    )
    running = {round(r["hours"] * 6): r["running"] for r in sim if r["kind"] == "submitter" and r["name"] == ALICE}
    assert [running[k] for k in range(7)] == [1, 1, 0, 0, 0, 1, 1]


def test_arrivals_wait_for_their_qdate():
    sim = busy_pool()
    assert sim.at(1.5 + 1 / 6, BOB)["pending"] == 15
    assert sim.at(2, BOB)["pending"] == 0
    assert all(r["pending"] == 5 for r in sim if r["name"] == "carol@example.org" and r["hours"] < 5)


def test_initial_claims_and_held_jobs():
    slots = ads(
        'Name = "s1"\nState = "Claimed"\nRemoteUser = "dave@example.org"\nRequirements = true\n\n'
        + slot_text(1, start=2)
    )
    jobs = ads(
        'ClusterId = 9\nProcId = 0\nUser = "dave@example.org"\nJobStatus = 2\nRemoteHost = "s1"\n'
        f"JobCurrentStartDate = {START - 600:.0f}\nSimJobDuration = 1800\nRequirements = true\n\n"
        + job_text(10, "erin", 1, "JobStatus = 5")
    )
    loaded = matchmaker.load_ads(Knobs.from_string("NEGOTIATOR_INTERVAL = 300"), slots, jobs)
    sim = matchmaker.simulate(loaded, start=START, duration=HOUR)
    # dave's job started 10 minutes before the start and runs 30 minutes: done at +20 min
    assert sim.at(0, "dave@example.org")["running"] == 1
    assert sim.at(20 / 60, "dave@example.org")["done"] == 1
    assert sim.at(1, "dave@example.org")["charged"] == pytest.approx(1200)
    assert "erin@example.org" not in sim.names()  # held: takes no part


def test_a_submitter_first_named_during_the_run_has_rows_and_counts_in_the_pool():
    """A job's submitter is read from its ad (``AccountingGroup`` within ``User``'s domain),
    and a claim rewrites the ad: with ``AccountingGroup = ifThenElse(JobStatus == 2, "run",
    "wait")`` the two idle jobs are ``wait@example.org``'s, and once started (both at k = 0:
    two free slots, runs of ten hours) they are ``run@example.org``'s.  That submitter has
    rows from k = 0 with 2 running, and the pool's row counts them: 2 running and 0 idle at
    every cycle k = 0..6 (an hour of 600 s cycles), as many as the jobs that run."""
    knobs = Knobs.from_string("NEGOTIATOR_INTERVAL = 600")
    extra = 'AccountingGroup = ifThenElse(JobStatus == 2, "run", "wait")\nSimJobDuration = 36000'
    sim = matchmaker.simulate(
        matchmaker.load_ads(knobs, ads(slot_text(2)), ads(job_text(1, "alice", 2, extra))), start=START, duration=HOUR
    )
    pool = [r for r in sim if r["kind"] == "pool"]
    assert [r["running"] for r in pool] == [2] * 7
    assert [r["idle"] for r in pool] == [0] * 7
    assert [r["running"] for r in sim if r["name"] == "run@example.org"] == [2] * 7
    assert [r["running"] for r in sim if r["name"] == "wait@example.org"] == [0] * 7


def test_groups_have_rows():
    config = Knobs.from_string(
        "GROUP_NAMES = group_a, group_b\nGROUP_QUOTA_group_a = 3\nGROUP_QUOTA_group_b = 1\nNEGOTIATOR_INTERVAL = 600\n"
    )
    jobs = ads(
        job_text(1, "alice", 6, 'AcctGroup = "group_a"\nSimJobDuration = 3000')
        + job_text(2, "bob", 6, 'AcctGroup = "group_b"\nSimJobDuration = 3000')
    )
    sim = matchmaker.simulate(matchmaker.load_ads(config, ads(slot_text(4)), jobs), start=START, duration=3 * HOUR)
    assert set(sim.names("group")) == {"group_a", "group_b"}
    for r in sim:
        if r["kind"] == "group":
            members = [
                m for m in sim if m["kind"] == "submitter" and m["group"] == r["name"] and m["cycle"] == r["cycle"]
            ]
            assert r["running"] == sum(m["running"] for m in members)
            assert r["usage"] == sum(m["usage"] for m in members)
    assert sim.at(0, "group_a", kind="group")["running"] == 3
    assert sim.at(0, "group_b", kind="group")["running"] == 1


# ---- the facade ---------------------------------------------------------------------------


def test_load_ads_applies_the_pool_settings(tmp_path):
    (tmp_path / "map").write_text("* frank group_x\n")
    (tmp_path / "cfg").write_text(
        "UID_DOMAIN = site.org\nSLOT_WEIGHT = Cpus * 2\nGROUP_NAMES = group_x\n"
        "GROUP_QUOTA_group_x = 10\nuse FEATURE : AssignAccountingGroup(map)\n"
    )
    jobs = ads(
        'ClusterId = 1\nOwner = "frank"\nJobStatus = 1\nRequirements = true\n\n'
        'ClusterId = 2\nOwner = "gina"\nJobStatus = 1\nRequirements = true\n\n'
    )
    loaded = matchmaker.load_ads(tmp_path / "cfg", ads(slot_text(1, cpus=3)), jobs)
    assert [s.weight for s in loaded.pool.slots] == [6.0]
    assert [j.submitter for j in loaded.pool.jobs] == ["group_x.frank@site.org", "gina@site.org"]


def test_simulation_rows_and_frame():
    sim = matchmaker.simulate(scenario("grow-decay"), start=START, duration=2 * HOUR, interval=HOUR)
    assert len(sim) == 3 * 2 and sim[0]["kind"] == "submitter"
    assert list(sim[0]) == list(COLUMNS)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            sim.to_frame()
    else:
        assert len(sim.to_frame()) == len(sim)


def test_bad_interval():
    with pytest.raises(ValueError):
        matchmaker.simulate(scenario("grow-decay"), start=START, duration=HOUR, interval=0)


def test_plots_without_a_display(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.delenv("DISPLAY", raising=False)
    from matchmaker.simulate.plots import write_plots

    sim = matchmaker.simulate(scenario("fair-share"), start=START, duration=60 * HOUR, interval=2 * HOUR)
    files = write_plots(sim, tmp_path / "png")
    assert sorted(f.name for f in files) == ["priorities.png", "running.png", "shares.png"]
    for f in files:
        data = f.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert (width, height) == (1000, 500)
        assert len(data) > 10_000


def test_group_plots(tmp_path):
    pytest.importorskip("matplotlib")
    from matchmaker.simulate.plots import write_plots

    config = Knobs.from_string("GROUP_NAMES = group_a\nGROUP_QUOTA_group_a = 2\nNEGOTIATOR_INTERVAL = 600\n")
    jobs = ads(job_text(1, "alice", 4, 'AcctGroup = "group_a"') + job_text(2, "bob", 4))
    sim = matchmaker.simulate(matchmaker.load_ads(config, ads(slot_text(4)), jobs), start=START, duration=HOUR)
    names = sorted(f.name for f in write_plots(sim, tmp_path))
    assert names == sorted(
        ["priorities.png", "running.png", "shares.png", "group-priorities.png", "group-running.png", "group-shares.png"]
    )


def test_bad_duration_warns_and_uses_the_default():
    jobs = ads(job_text(1, "alice", 1, 'SimJobDuration = "long"') + job_text(2, "bob", 1))
    loaded = matchmaker.load_ads(Knobs.from_string("NEGOTIATOR_INTERVAL = 600"), ads(slot_text(2)), jobs)
    sim = matchmaker.simulate(loaded, start=START, duration=2 * HOUR, job_duration=1800)
    assert [w for w in sim.warnings if "SimJobDuration" in w] == [
        "job#0: warning: job 1.0: SimJobDuration is not a non-negative number; it runs for the default 1800 s"
    ]
    assert sim.at(0.5, ALICE)["done"] == 1 and sim.at(0.5, BOB)["done"] == 1


def test_the_collector_walks_the_young_every_fiftieth_cycle() -> None:
    """The schedule of the run's collections, by hand: after cycle k (counted from 0) the
    youngest generation when k + 1 is a multiple of 50, else none."""
    from matchmaker.simulate.loop import _generation

    walked = {k: g for k in range(1000) if (g := _generation(k)) is not None}
    assert walked == dict.fromkeys(range(49, 1000, 50), 0)


def test_the_collector_sweeps_what_the_cycles_leave(monkeypatch: pytest.MonkeyPatch) -> None:
    """A simulation pauses the cyclic collector for the run and sets the objects that
    existed before the first cycle aside from it; every so many cycles (here ten) it walks
    the young objects, where whatever the cycles left in reference cycles lies, and sets what
    survives aside until the run ends.  Each cycle here leaves one list that holds itself.
    The collections the run makes are the youngest generation's after cycles 10 and 20,
    after each of them (when ``progress`` is told) no garbage is left and nothing is in
    the older generations (what survived is set aside, not promoted); once the run
    returns, nothing is set aside any more."""
    import gc

    import matchmaker.simulate.loop as loop
    from matchmaker.cycle.session import open_accountant
    from matchmaker.pool.ads import pool_from_ads
    from matchmaker.simulate.loop import run_simulation

    slots = "".join(
        f'Name = "slot{i}@n"\nCpus = 1\nState = "Unclaimed"\nRequirements = true\nRank = 0\n\n' for i in range(3)
    )
    jobs = "".join(
        f'ClusterId = 1\nProcId = {p}\nOwner = "alice"\nUser = "alice@example.org"\nJobStatus = 1\n'
        "Requirements = true\nSimJobDuration = 300\nSimJobRepeat = -1\n\n"
        for p in range(5)
    )
    s = settings_from(Knobs.from_string("NEGOTIATOR_INTERVAL = 300\n"))
    pool = pool_from_ads(list(parseAds(slots, ParserType.Old)), list(parseAds(jobs, ParserType.Old)))
    cycles_done = [0]
    collections: list[tuple[int, int]] = []  # (cycles done, generation) of each collection the run makes
    found: dict[int, int] = {}
    older: dict[int, int] = {}  # objects in the older generations after each collection

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append((cycles_done[0], info["generation"]))

    def progress(done: int, _total: int) -> None:
        cycles_done[0] = done
        if done % 10 == 0:
            older[done] = len(gc.get_objects(1)) + len(gc.get_objects(2))
            gc.callbacks.remove(seen)
            found[done] = gc.collect(0)
            gc.callbacks.append(seen)

    def leaky_cycle(*args: object, **kwargs: object) -> object:
        garbage: list = []
        garbage.append(garbage)
        return run_cycle(*args, **kwargs)

    run_cycle = loop.run_cycle
    monkeypatch.setattr(loop, "run_cycle", leaky_cycle)
    monkeypatch.setattr(loop, "_YOUNG_EVERY", 10)
    gc.callbacks.append(seen)
    try:
        run_simulation(
            pool,
            s,
            open_accountant(":memory:", s),
            start=1_700_000_000,
            duration=19 * 300,
            interval=300,
            job_duration=900,
            progress=progress,
        )
    finally:
        gc.callbacks.remove(seen)
    assert collections == [(9, 0), (19, 0)]
    assert found == {10: 0, 20: 0}
    assert older == {10: 0, 20: 0}
    assert gc.get_freeze_count() == 0


def _captured_run(monkeypatch: pytest.MonkeyPatch) -> list:
    """The loop's state of the next run, kept once the run is over."""
    from matchmaker.simulate import loop

    runs: list = []

    class Kept(loop._Run):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            runs.append(self)

    monkeypatch.setattr(loop, "_Run", Kept)
    return runs


def test_a_done_job_lets_its_runs_records_go(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job done after its runs holds the record it was read with again, not the copy of
    its ad the last claim made (a long run would keep one per job that ran)."""
    runs = _captured_run(monkeypatch)
    loaded = matchmaker.load_ads(
        Knobs.from_string("NEGOTIATOR_INTERVAL = 300"),
        ads(slot_text(4)),
        ads(job_text(1, "alice", 6, "SimJobDuration = 600\nSimJobRepeat = 1")),
    )
    sim = matchmaker.simulate(loaded, start=START, duration=2 * HOUR)
    assert [j.phase for j in sim.jobs] == ["done"] * 6 and all(j.runs == 2 for j in sim.jobs)
    read = {j.id: j for j in loaded.pool.jobs}
    (run,) = runs
    assert all(j.record is read[j.id] for j in run.jobs)
    assert sim.rows[-1]["done"] == 6


def test_a_done_job_whose_submitter_changed_keeps_its_last_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job whose submitter depends on its status (here ``AccountingGroup``) is done as the
    submitter of its last run, as its last record says, not the one it was read with."""
    runs = _captured_run(monkeypatch)
    loaded = matchmaker.load_ads(
        Knobs.from_string("NEGOTIATOR_INTERVAL = 300"),
        ads(slot_text(2)),
        ads(
            job_text(
                1, "alice", 2, 'SimJobDuration = 600\nAccountingGroup = JobStatus == 2 ? "ran.alice" : "idle.alice"'
            )
        ),
    )
    sim = matchmaker.simulate(loaded, start=START, duration=HOUR)
    assert [(j.submitter, j.phase) for j in sim.jobs] == [("ran.alice@example.org", "done")] * 2
    (run,) = runs
    read = {j.id: j for j in loaded.pool.jobs}
    assert all(j.phase == "done" and j.record is not read[j.id] for j in run.jobs)
