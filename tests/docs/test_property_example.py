"""``examples/property-testing`` runs on its own, as a site would run it: its three properties
pass with the shipped policy, and the deliberately wrong policy is caught with a pool of one
slot and one job.  Few examples each (``EXAMPLES``), in a separate pytest run outside
``tests/`` (so its settings and conftest-free setup are the ones a site gets)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_example(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1", **env}
    return subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "examples/property-testing"), "-q",
                           "-p", "no:cacheprovider", "--rootdir", str(ROOT)],
                          cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_example_passes_with_its_policy(tmp_path):
    proc = run_example(tmp_path, EXAMPLES="15")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "3 passed" in proc.stdout
    assert list(tmp_path.iterdir()) == []          # nothing written where it ran


@pytest.mark.slow
def test_the_example_catches_the_wrong_policy(tmp_path):
    proc = run_example(tmp_path, EXAMPLES="60", POLICY="wrong-policy.config")
    assert proc.returncode == 1
    assert "1 failed, 2 passed" in proc.stdout
    assert "of group_physics." in proc.stdout and "preempted group_chemistry." in proc.stdout
    failing = proc.stdout[proc.stdout.index("Failing test case"):]
    pool = failing[failing.index("pool=DrawnPool"):failing.index("Explanation")]
    assert pool.count("slot1@") == 1 and "slot2@" not in pool      # one slot
    assert pool.count("ClusterId = ") == 1                           # one job
