"""The DIRAC and Slurm rules through the command line: ``negotiate`` keeps the usage in the
store, ``userprio`` prints the policy's breakdown, a bad knob is one error line."""

from __future__ import annotations

import io
import json

from matchmaker.cli import main

NOW = 1_700_000_000


def write_pool(tmp_path, running: list[tuple[str, str, int]], idle: list[tuple[str, str]]) -> tuple[str, str]:
    """Slots: one claimed per running job plus one idle per idle job; jobs with AcctGroup."""
    slots, jobs = [], []
    for i, (group, user, wall) in enumerate(running):
        slots.append(
            f'Name = "slot{i}@n"\nCpus = 1\nState = "Claimed"\nActivity = "Busy"\n'
            f'RemoteUser = "{group}.{user}@d"\nJobId = "{100 + i}.0"\nRequirements = true\n'
        )
        jobs.append(
            f'ClusterId = {100 + i}\nProcId = 0\nUser = "{user}@d"\nAcctGroup = "{group}"\nJobStatus = 2\n'
            f"RequestCpus = 1\nQDate = {NOW - wall}\nEnteredCurrentStatus = {NOW - wall}\n"
            f"RemoteWallClockTime = {wall}\nRequirements = true\n"
        )
    for i, (group, user) in enumerate(idle):
        slots.append(f'Name = "free{i}@n"\nCpus = 1\nState = "Unclaimed"\nActivity = "Idle"\nRequirements = true\n')
        jobs.append(
            f'ClusterId = {i + 1}\nProcId = 0\nUser = "{user}@d"\nAcctGroup = "{group}"\nJobStatus = 1\n'
            f"RequestCpus = 1\nQDate = {NOW}\nRequirements = true\n"
        )
    (tmp_path / "slots.ads").write_text("\n".join(slots))
    (tmp_path / "jobs.ads").write_text("\n".join(jobs))
    return str(tmp_path / "slots.ads"), str(tmp_path / "jobs.ads")


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_slurm_merged_ties_in_negotiate_and_userprio(tmp_path):
    """Running jobs charge slot-seconds: A.a1 30, A.a2 10, B.b1 20, B.b2 20 (one CPU each,
    their wall time, no decay within the cycle).  A and B tie at LF 1 and are merged:
    a2 1.0, b1 and b2 0.75, a1 0.25 (worked out in test_slurm_source); with weight 10000
    the idle jobs get 10000, 7500, 7500, 2500, and userprio prints those factors."""
    users = [("A", "a1", 30), ("A", "a2", 10), ("B", "b1", 20), ("B", "b2", 20)]
    slots, jobs = write_pool(tmp_path, users, [(g, u) for g, u, _ in users])
    cfg = tmp_path / "slurm.config"
    cfg.write_text("MATCHMAKER_PRIORITY_POLICY = slurm\nSLURM_PRIORITYWEIGHTFAIRSHARE = 10000\n")
    db = str(tmp_path / "state.db")
    code, out, err = cli(
        "negotiate", "--config", str(cfg), "--slots", slots, "--jobs", jobs, "--now", str(NOW), "--state", db
    )
    assert code == 0, err
    code, out, err = cli("userprio", "--state", db, "--json")
    assert code == 0, err
    rows = {r["name"]: (r["priority"], r["fairshare"]) for r in json.loads(out)["rows"]}
    assert rows == {"2.0": (10000, 1.0), "3.0": (7500, 0.75), "4.0": (7500, 0.75), "1.0": (2500, 0.25)}


def test_bad_slurm_time_is_one_error_line(tmp_path):
    slots, jobs = write_pool(tmp_path, [], [("A", "a1")])
    cfg = tmp_path / "slurm.config"
    cfg.write_text("MATCHMAKER_PRIORITY_POLICY = slurm\nSLURM_PRIORITYMAXAGE = 7 days\n")
    code, out, err = cli("negotiate", "--config", str(cfg), "--slots", slots, "--jobs", jobs, "--now", str(NOW))
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and f"{cfg}:2:" in err and "SLURM_PRIORITYMAXAGE" in err


def test_dirac_slices_checked_with_the_corrector_off(tmp_path):
    slots, jobs = write_pool(tmp_path, [], [("A", "a1")])
    cfg = tmp_path / "dirac.config"
    cfg.write_text("MATCHMAKER_PRIORITY_POLICY = dirac\nDIRAC_CORRECTION_SLICES = [3600, 1]\n")
    code, out, err = cli("negotiate", "--config", str(cfg), "--slots", slots, "--jobs", jobs, "--now", str(NOW))
    assert code != 0 and err.count("\n") == 1 and f"{cfg}:2:" in err and "DIRAC_CORRECTION_SLICES" in err
