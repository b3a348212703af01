"""``examples/property-testing`` runs on its own, as a site would run it: its three properties
pass with the shipped policy (on a few pools each, ``EXAMPLES``), and the deliberately wrong
policy is caught with a pool of one slot and one job.  Each in a pytest run of its own,
outside ``tests/``, as a site runs it (no conftest of the project's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT


def run_example(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1", **env}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "examples/property-testing"),
            "-p",
            "no:cacheprovider",
            "-p",
            "no:benchmark",  # a plugin a site may have; it writes its own directory here
            "--rootdir",
            str(ROOT),
            *args,
        ],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_the_example_passes_with_its_policy(tmp_path):
    proc = run_example(tmp_path, EXAMPLES="15")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "3 passed" in proc.stdout
    # nothing written where it ran but Hypothesis's own cache (no pool files, no store)
    assert [p.name for p in tmp_path.iterdir() if p.name != ".hypothesis"] == []


@pytest.mark.slow
def test_the_example_catches_the_wrong_policy(tmp_path):
    """Only the law the wrong policy breaks, with the README's 200 pools (the first
    breaking pool comes after 150 of them)."""
    proc = run_example(tmp_path, "-k", "physics", POLICY="wrong-policy.config")
    assert proc.returncode == 1
    assert "1 failed, 2 deselected" in proc.stdout
    assert "of group_physics." in proc.stdout and "preempted group_chemistry." in proc.stdout
    # Hypothesis's heading of the shrunk case ("Falsifying example" in older releases)
    heading = "Failing test case" if "Failing test case" in proc.stdout else "Falsifying example"
    failing = proc.stdout[proc.stdout.index(heading) :]
    pool = failing[failing.index("pool=DrawnPool") : failing.index("short test summary")]
    assert pool.count("slot1@") == 1 and "slot2@" not in pool  # one slot
    assert pool.count("ClusterId = ") == 1  # one job
