"""Every matchmaker test runs twice: with the columnar match engine and with the scalar one
(the scalar run is marked ``slow``: the full suite runs it, the fast inner loop does not)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, params=["columnar", pytest.param("scalar", marks=pytest.mark.slow)])
def match_engine(request, monkeypatch):
    """``MATCHMAKER_COLUMNAR`` on (the default) or off, in this process and in CLI subprocesses."""
    if request.param == "scalar":
        import matchmaker.cycle.columnar_match as columnar_match

        monkeypatch.setattr(columnar_match, "build", lambda *args, **kwargs: None)
        monkeypatch.setenv("_CONDOR_MATCHMAKER_COLUMNAR", "false")
    return request.param
