"""Policy accounting in the SQLite store across cycles, and ``userprio`` per model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import ROOT, Ran, run_matchmaker

from matchmaker.accounting.store import Accountant

EXAMPLES = ROOT / "examples"
NOW = 1700000000


def cli(*args: str) -> Ran:
    """``matchmaker ARGS`` in this process."""
    return run_matchmaker(*args)


def negotiate(policy: str, db: Path, now: int = NOW, config: str | None = None) -> Ran:
    d, pool = EXAMPLES / policy, EXAMPLES / "policy-pool"
    return cli(
        "negotiate",
        "--config",
        config or str(d / f"{policy}.config"),
        "--slots",
        str(pool / "slots.ads"),
        "--jobs",
        str(pool / "jobs.ads"),
        "--now",
        str(now),
        "--state",
        str(db),
    )


def test_lsf_usage_is_stored_and_decays(tmp_path):
    db = tmp_path / "acct.db"
    assert negotiate("lsf", db).returncode == 0
    with Accountant.load(db) as acct:
        usage = acct.policy_usage("lsf")
    # carol's running job has run 7200 s on one slot, no CPU counters: its 2 wall hours, each
    # decayed by its age, are 5/ln 10 * (1 - 0.1 ** (2/5)) = 2.171472 * 0.601893 = 1.306994;
    # the run hours of all jobs (the ledger's first bucket) are the same
    assert usage["carol@example.org"][0] == pytest.approx(1.306994, abs=1e-6)
    assert usage["carol@example.org"][1] == pytest.approx((1.306994, 0.0), abs=1e-6)
    assert negotiate("lsf", db, NOW + 5 * 3600).returncode == 0
    with Accountant.load(db) as acct:
        usage = acct.policy_usage("lsf")
    # five hours later the first charge counts a tenth (HIST_HOURS 5), plus what the job ran
    # since: its ad still reports 7200 s of wall time, so 2 hours again: 0.130699 + 1.306994
    assert usage["carol@example.org"][0] == pytest.approx(0.1306994 + 1.306994, abs=1e-6)


def test_maui_buckets_shift_per_interval(tmp_path):
    db = tmp_path / "acct.db"
    assert negotiate("maui", db).returncode == 0
    assert negotiate("maui", db, NOW + 43200).returncode == 0
    with Accountant.load(db) as acct:
        _value, buckets, _t = acct.policy_usage("maui")["USER:carol"]
    # one FSINTERVAL later the first charge moved to bucket 1; the new one (capped by the
    # job's reported 7200 s of wall time) is in bucket 0
    assert buckets == pytest.approx((7200.0, 7200.0))


def test_slurm_usage_decays_by_its_half_life(tmp_path):
    db = tmp_path / "acct.db"
    assert negotiate("slurm", db).returncode == 0
    with Accountant.load(db) as acct:
        first = acct.policy_usage("slurm")["carol@example.org"][0]
    assert first == pytest.approx(7200.0)


@pytest.mark.parametrize(
    "policy, header",
    [("lsf", "SHARE_INFO_FOR  USER/GROUP"), ("maui", "JOB"), ("dirac", "TASKQUEUE"), ("slurm", "JOBID")],
)
def test_userprio_shows_the_policy_breakdown(tmp_path, policy, header):
    db = tmp_path / "acct.db"
    assert negotiate(policy, db).returncode == 0
    out = cli("userprio", "--state", str(db))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:2][0] == f"Priority policy: {policy}"
    assert out.stdout.splitlines()[1].startswith(header)
    doc = json.loads(cli("userprio", "--state", str(db), "--json").stdout)
    assert doc["policy"] == policy and doc["time"] == NOW and doc["rows"]


def test_userprio_falls_back_after_an_htcondor_cycle(tmp_path):
    db = tmp_path / "acct.db"
    assert negotiate("lsf", db).returncode == 0
    plain = tmp_path / "plain.config"
    plain.write_text("MATCHMAKER_PRIORITY_POLICY = htcondor\n")
    assert negotiate("lsf", db, NOW + 60, config=str(plain)).returncode == 0
    out = cli("userprio", "--state", str(db))
    assert "Priority policy" not in out.stdout
    assert cli("userprio", "--state", str(db), "--policy", "lsf").stdout.startswith("Priority policy: lsf")
    bad = cli("userprio", "--state", str(db), "--policy", "maui")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr


def test_bad_policy_config_is_a_clean_error(tmp_path):
    conf = tmp_path / "bad.config"
    conf.write_text("MATCHMAKER_PRIORITY_POLICY = lsf\nLSF_USER_SHARES = [alice 4]\n")
    out = negotiate("lsf", tmp_path / "a.db", config=str(conf))
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert f"{conf}:2" in out.stderr
