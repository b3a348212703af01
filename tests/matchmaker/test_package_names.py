"""``matchmaker.simulate`` and ``matchmaker.analyze`` are API functions and subpackages at
once (docs/architecture.md): every way of reaching either works."""

from __future__ import annotations

import importlib
import inspect
import pickle

import pytest

import matchmaker
from matchmaker import api

PAIRS = [("simulate", "series", "Simulation"), ("analyze", "job", "analyze_job")]


@pytest.mark.parametrize(("name", "module", "member"), PAIRS)
def test_the_name_is_the_function_when_called_and_the_package_otherwise(name, module, member):
    both = getattr(matchmaker, name)
    package = importlib.import_module(f"matchmaker.{name}")
    submodule = importlib.import_module(f"matchmaker.{name}.{module}")
    assert getattr(getattr(both, module), member) is getattr(submodule, member)
    assert both.__path__ == package.__path__
    assert inspect.signature(both) == inspect.signature(getattr(api, name))
    assert both.__doc__ == getattr(api, name).__doc__


def test_every_import_spelling_reaches_the_submodule():
    import matchmaker.analyze.job as job
    import matchmaker.simulate.series
    import matchmaker.simulate.series as series
    from matchmaker.simulate import series as same

    assert series is same is matchmaker.simulate.series
    assert job is importlib.import_module("matchmaker.analyze.job")


def test_calling_it_runs_the_function(monkeypatch):
    """The call goes to the function it wraps, with its arguments as given."""
    seen = []
    both = matchmaker.simulate
    monkeypatch.setattr(both, "_function", lambda *a, **k: seen.append((a, k)) or "ran")
    assert both("loaded", start=1.0, duration=2.0) == "ran"
    assert seen == [(("loaded",), {"start": 1.0, "duration": 2.0})]


@pytest.mark.parametrize("name", ["simulate", "analyze"])
def test_it_pickles_as_itself(name):
    both = getattr(matchmaker, name)
    assert pickle.loads(pickle.dumps(both)) is both
