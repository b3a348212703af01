"""Fixtures of the matchmaker's tests.

``match_engine`` runs a test with the columnar match engine and again with the scalar one
(the scalar run is marked ``slow``). It applies where the engine can change an answer:
the cycle's tests (``cycle/``) and the analyses built on it (``analyze/``) use it for
every test through their own ``conftest.py``; configuration, groups, accounting, policies,
simulation, sweep and command-line tests run once."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["columnar", pytest.param("scalar", marks=pytest.mark.slow)])
def match_engine(request, monkeypatch):
    """``MATCHMAKER_COLUMNAR`` on (the default) or off, in this process and in CLI subprocesses."""
    if request.param == "scalar":
        import matchmaker.cycle.columnar_match as columnar_match
        import matchmaker.cycle.matching as matching

        monkeypatch.setattr(columnar_match, "build", lambda *args, **kwargs: None)
        monkeypatch.setattr(matching, "build_columnar", lambda *args, **kwargs: None)
        monkeypatch.setenv("_CONDOR_MATCHMAKER_COLUMNAR", "false")
    return request.param
