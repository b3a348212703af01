"""Shared test fixtures: the oracle (HTCondor's C++ library) when it is installed, and the
guard that keeps the work tree clean (tests run from a temporary directory, and the run
fails if ``git status --porcelain`` differs at its end)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

# A fixed zone so time functions give the same answers everywhere.
os.environ.setdefault("TZ", "UTC")

# Property tests draw the same examples on every run, so CI gives the answer the last local
# run gave; HYPOTHESIS_PROFILE=explore draws new ones (to look for new counterexamples).
# No deadline: how long an example takes depends on the machine's load (and on how many
# workers share it), and the tests assert no wall-clock times.
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


ROOT = Path(__file__).resolve().parent.parent


def work_tree_status() -> str | None:
    """``git status --porcelain`` of the checkout (untracked files included), or None
    outside a git checkout."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        return None
    proc = subprocess.run(
        [git, "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    return proc.stdout if proc.returncode == 0 else None


@pytest.fixture(scope="session", autouse=True)
def work_tree_untouched(tmp_path_factory):
    """Run every test from a temporary directory, with the project on ``PYTHONPATH`` for
    command-line subprocesses, and fail the run if it changed the work tree: a test that
    writes a file (a relative ``--state``, ``--out``) must write it under ``tmp_path``."""
    before = work_tree_status()
    saved_cwd, saved_path = os.getcwd(), os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + saved_path if saved_path else "")
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(saved_cwd)
    if saved_path is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = saved_path
    after = work_tree_status()
    if before is not None and after is not None and after != before:
        changed = sorted(set(after.splitlines()) ^ set(before.splitlines()))
        pytest.fail(
            "the tests changed the work tree (write under tmp_path instead): " + "; ".join(changed), pytrace=False
        )


@pytest.fixture(scope="session")
def oracle():
    """The ``classad2`` module in HTCondor's default mode, or skip if the wheel is missing."""
    pytest.importorskip("htcondor2")  # must come first: it switches classad2 to compat mode
    import classad2

    return classad2


def pytest_collection_modifyitems(config, items):
    """Tests that use the oracle fixture are marked ``oracle`` (``-m "not oracle"`` runs
    without the htcondor wheel's answers)."""
    for item in items:
        if "oracle" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.oracle)
