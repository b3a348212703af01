"""``matchmaker analyze`` and the explained results of ``negotiate``: the example READMEs'
narratives as analyze tests (numbers worked out there by hand), suggestions and
Undefined reporting on a pool built for them, the command line."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from support import ROOT, run_matchmaker as mm

import matchmaker
from matchmaker.analyze import analyze_job, analyze_slot, analyze_submitter, prepare
from matchmaker.cycle.explain import GROUP_QUOTA, SUBMITTER_LIMIT

NEG = ROOT / "examples" / "negotiator"
GROUPS = ROOT / "examples" / "groups"
NOW = 1700000000
ALICE, CAROL, GUEST, BOB = "alice@example.org", "carol@example.org", "guest@visitor.org", "bob@example.org"


def view_of(config: Path, slots: Path, jobs: Path, state: Path | None = None):
    loaded = matchmaker.load(config, slots, jobs)
    return prepare(loaded.pool, loaded.settings, NOW, str(state) if state else None)


@pytest.fixture(scope="module")
def neg():
    return view_of(NEG / "negotiator.config", NEG / "slots.ads", NEG / "jobs.ads")


# ---- examples/negotiator/README.md -------------------------------------------------------------


def test_job_1_2_first_refused_by_alices_slice(neg):
    """README: "Job 1.2 would exceed alice's slice (2 + 1 > 2.9999): rejected for now", then
    in spin 2 it preempts another of guest's slots for priority (5e6 > 500 x 1.2)."""
    r = analyze_job(neg, "1.2")
    assert r.outcome == "matched"
    assert r.history and r.history[0].startswith(SUBMITTER_LIMIT)
    slice_ = 6 * 10000 / 20001  # alice's share of the pool of 6
    assert "has taken 2 " in r.history[0] and f"{slice_:.6g}" in r.history[0]
    assert "slot2@node2.example.org" in r.verdict and "job 3.1 of guest@visitor.org" in r.verdict
    assert "RemoteUserPrio 5000000," in r.verdict and "SubmitterUserPrio 500" in r.verdict


def test_job_2_0_preempts_bob_by_machine_rank(neg):
    """README: node3's Rank for carol's job (10) beats its CurrentRank (0) for bob's."""
    m = neg.match_of("2.0")
    assert (m.slot, m.reason, m.preempted) == ("slot1@node3.example.org", "rank", BOB)
    p = m.preemption
    assert (p.user, p.rank_before, p.rank_after) == (BOB, 0.0, 10.0)
    r = analyze_job(neg, "2.0")
    assert r.availability.get("preemptible by machine Rank") == 1
    assert "slot Rank 0 -> 10" in r.verdict


def test_priority_preemption_values(neg):
    """README: guest's EUP 0.5 x 1e7 = 5,000,000 against 500: what allowed 1.1 and 1.2."""
    pre = {m.job: m.preemption for m in neg.result.matches if m.reason == "priority"}
    assert set(pre) == {"1.1", "1.2"}
    assert [(p.job, p.user, p.remote_user_prio, p.submitter_user_prio) for p in pre.values()] == [
        ("3.0", GUEST, 5e6, 500.0),
        ("3.1", GUEST, 5e6, 500.0),
    ]


def test_guest_slice_zero_then_nothing_left(neg):
    """README: guest's slice is 0, so in spin 1 only RANK preemption is tried and no slot prefers
    guest; in the last spin every slot it accepts is taken or already its own."""
    r = analyze_job(neg, "3.4")
    assert r.outcome == "rejected"
    first = r.history[0]
    assert first.startswith(SUBMITTER_LIMIT) and "limit 0" in first and "machine Rank" in first
    assert r.mechanism == "unavailable"
    # 5 slots accept guest's job both ways (node3 takes only carol and bob); guest holds 4.
    assert r.slot_accepts == 5
    assert r.availability == {"claimed by the same submitter": 4, "available": 1}
    assert "3 already matched this cycle" in r.verdict and "2 claimed by the same submitter" in r.verdict
    assert [x.mechanism for x in neg.result.rejected] == [r.mechanism]


def test_slot_on_node3_accepts_only_carol(neg):
    """README: node3 only runs jobs of carol and bob and prefers carol's."""
    r = analyze_slot(neg, "slot1@node3.example.org")
    assert r.both_ways == ["2.0"] and r.next_job == "2.0"
    assert r.rejections[0][1] == 2 and "START" in r.rejections[0][0]  # alice's and guest's requests
    assert r.requests == 3 and r.jobs == 5


def test_submitter_reports_one_per_autocluster(neg):
    assert [r.job for r in analyze_submitter(neg, ALICE)] == ["1.0"]


# ---- examples/groups/README.md -----------------------------------------------------------------


@pytest.fixture(scope="module")
def groups():
    return view_of(GROUPS / "groups.config", GROUPS / "slots.ads", GROUPS / "jobs.ads")


def test_groups_chemistry_waits_on_its_own_quota(groups):
    """README: "chemistry's 2 extra jobs wait, because chemistry does not accept surplus"."""
    r = analyze_job(groups, "3.10")
    assert r.mechanism == GROUP_QUOTA
    assert "group group_chemistry" in r.verdict and "GROUP_ACCEPT_SURPLUS_group_chemistry = false" in r.verdict
    assert "limit of 10" in r.verdict
    assert r.slot_accepts == 30 and len(r.matched_elsewhere) == 30


def test_groups_hep_stops_at_its_allocation(groups):
    """README: hep is allocated 15 + lep's unused 3 = 18."""
    r = analyze_job(groups, "1.18")
    assert r.mechanism == GROUP_QUOTA and "group group_physics.hep" in r.verdict and "limit of 18" in r.verdict


def test_groups_refused_job(groups):
    r = analyze_job(groups, "4.0")
    assert r.outcome == "refused" and "not allowed for user 'curie'" in r.verdict


def test_fermi_is_stopped_by_the_strict_physics_cap(tmp_path):
    """README "Try": without the oversubscription line hep takes physics' whole 20 and lep gets
    0 -- the mechanism is physics' strict cap, not "no match found"."""
    for f in GROUPS.iterdir():
        shutil.copy(f, tmp_path / f.name)
    config = tmp_path / "groups.config"
    config.write_text(
        "\n".join(
            line
            for line in config.read_text().splitlines()
            if not line.startswith("NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION")
        )
        + "\n"
    )
    view = view_of(config, tmp_path / "slots.ads", tmp_path / "jobs.ads")
    assert sum(m.submitter.startswith("group_physics.hep") for m in view.result.matches) == 20
    (r,) = analyze_submitter(view, "group_physics.lep.fermi@example.org")
    assert r.job == "2.0" and r.mechanism == GROUP_QUOTA
    assert "ancestor group_physics" in r.verdict and "uses 20 of its quota 20" in r.verdict
    assert "NEGOTIATOR_STRICT_ENFORCE_QUOTA = true" in r.verdict


# ---- suggestions and Undefined -----------------------------------------------------------------

SLOTS = "".join(
    f'Name = "s{i}"\nCpus = 1\nMemory = {mem}\nRequirements = true\n{extra}\n'
    for i, (mem, extra) in enumerate(
        [(1024, ""), (2048, ""), (4096, ""), (4096, ""), (4096, "HasDocker = true\n"), (8192, "HasDocker = false\n")]
    )
)
JOB = (
    'ClusterId = 1\nProcId = 0\nUser = "u@d"\nJobStatus = 1\nRequestMemory = 6000\n'
    "Requirements = TARGET.Memory >= RequestMemory && TARGET.HasDocker =!= false\n"
)


@pytest.fixture()
def small(tmp_path):
    (tmp_path / "s.ads").write_text(SLOTS)
    (tmp_path / "j.ads").write_text(JOB)
    (tmp_path / "c.config").write_text("")
    return tmp_path


def test_suggestion_and_counts(small):
    """Memory 8192 is the only slot big enough and it has HasDocker false: nothing matches.
    RequestMemory <= 4096 (the nearest value any slot offers) admits the three 4096 slots."""
    view = view_of(small / "c.config", small / "s.ads", small / "j.ads")
    r = analyze_job(view, "1.0")
    assert [(c.alone, c.running) for c in r.clauses] == [(1, 1), (5, 0)]
    assert r.mechanism == "requirements"
    (s,) = r.suggestions
    assert (s.attribute, s.direction, s.value, s.more) == ("RequestMemory", "<=", 4096, 3)


def test_undefined_is_reported(small):
    (small / "j.ads").write_text(JOB.replace("=!= false", "== true"))
    view = view_of(small / "c.config", small / "s.ads", small / "j.ads")
    r = analyze_job(view, "1.0")
    assert r.clauses[1].undefined == 4
    assert "TARGET.HasDocker == true is undefined on 4 slots" in r.notes


# ---- command line ------------------------------------------------------------------------------


def neg_args(*extra: object) -> list:
    return [
        "--config",
        NEG / "negotiator.config",
        "--slots",
        NEG / "slots.ads",
        "--jobs",
        NEG / "jobs.ads",
        "--now",
        NOW,
        *extra,
    ]


def test_cli_json_and_state_untouched(tmp_path):
    db = tmp_path / "acct.db"
    assert mm("negotiate", *neg_args("--state", db)).returncode == 0
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    proc = mm("analyze", *neg_args("--state", db, "--job", "3.4", "--json"))
    assert proc.returncode == 0, proc.stderr
    (doc,) = json.loads(proc.stdout)["jobs"]
    assert doc["job"] == "3.4" and doc["outcome"] in ("rejected", "not-reached", "matched")
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_cli_text_and_errors():
    proc = mm("analyze", *neg_args("--slot", "slot1@node3.example.org"))
    assert proc.returncode == 0 and "Verdict: takes job 2.0" in proc.stdout
    proc = mm("analyze", *neg_args("--job", "9.9"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"matchmaker: {NEG / 'jobs.ads'}: error: no job '9.9'"


def test_negotiate_explain_and_json():
    proc = mm("negotiate", *neg_args("--explain"))
    assert proc.returncode == 0
    assert "1.1 on slot1@node2.example.org: preempts job 3.0 of guest@visitor.org by priority" in proc.stdout
    assert "RemoteUserPrio 5000000 vs SubmitterUserPrio 500" in proc.stdout
    doc = json.loads(mm("negotiate", *neg_args("--json")).stdout)
    pre = {m["job"]: m.get("preemption") for m in doc["matches"]}
    assert pre["1.0"] is None
    assert pre["2.0"] == {
        "job": None,
        "user": BOB,
        "RemoteUserPrio": 500.0,
        "SubmitterUserPrio": 500.0,
        "rank_before": 0.0,
        "rank_after": 10.0,
    }


def test_concurrency_limit_names_its_numbers(tmp_path):
    """FAST_LIMIT = 1 and two jobs asking for "fast": the second is refused by the limit,
    and says so with the counter and the capacity."""
    (tmp_path / "s.ads").write_text(SLOTS)
    (tmp_path / "j.ads").write_text(
        "\n".join(
            f'ClusterId = 1\nProcId = {p}\nUser = "u@d"\nJobStatus = 1\nRequestMemory = 512\n'
            f'ConcurrencyLimits = "fast"\nRequirements = TARGET.Memory >= RequestMemory\n'
            for p in range(2)
        )
    )
    (tmp_path / "c.config").write_text("FAST_LIMIT = 1\n")
    view = view_of(tmp_path / "c.config", tmp_path / "s.ads", tmp_path / "j.ads")
    r = analyze_job(view, "1.1")
    assert r.mechanism == "concurrency-limit"
    assert "fast: 1 in use + 1 asked > capacity 1" in r.verdict
    assert "concurrency limit fast: asks 1, 0 in use at cycle start, capacity 1" in r.context


def test_docs_quote_real_output():
    """docs/analyze.md and the negotiator README quote what the commands print."""
    docs = (ROOT / "docs" / "analyze.md").read_text()
    out = mm("analyze", *neg_args("--job", "1.2")).stdout
    assert out in docs
    readme = (NEG / "README.md").read_text()
    explain = mm("negotiate", *neg_args("--explain")).stdout
    tail = explain[explain.index("Preemptions:") :]
    assert tail in readme
