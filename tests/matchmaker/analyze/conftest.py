"""Every test here runs with both match engines (see ``tests/matchmaker/conftest.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def both_engines(match_engine):
    """Runs each test once per match engine."""
    return match_engine
