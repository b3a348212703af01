"""Shared test fixtures: the oracle (HTCondor's C++ library) when it is installed."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# A fixed zone so time functions give the same answers everywhere.
os.environ.setdefault("TZ", "UTC")

# Property tests draw the same examples on every run, so CI gives the answer the last local
# run gave; HYPOTHESIS_PROFILE=explore draws new ones (to look for new counterexamples).
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


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
