"""An HTCondor-style matchmaker: the negotiation cycle over slot and job ads.

The package is layered; each subpackage imports only from those listed before it (and
from :mod:`classad`), a rule ``tests/test_layers.py`` checks:

* :mod:`matchmaker.errors` -- the exceptions raised at the edges;
* :mod:`matchmaker.groups` -- the accounting-group quota tree and its math, map files;
* :mod:`matchmaker.accounting` -- user-priority math, the SQLite store, userprio reports;
* :mod:`matchmaker.config` -- HTCondor's configuration language, the knob table, settings;
* :mod:`matchmaker.pool` -- ads to slots, jobs, submitters, autoclusters, limits;
* :mod:`matchmaker.policies` -- priority models (HTCondor's RUP/EUP, LSF, Maui, DIRAC, Slurm);
* :mod:`matchmaker.cycle` -- one negotiation cycle: ephemeral attributes, matching, pie, groups;
* :mod:`matchmaker.simulate` -- many cycles over virtual time, series and plots;
* :mod:`matchmaker.analyze` -- why a job does not match: clause counts, verdicts;

  (``matchmaker.simulate`` and ``matchmaker.analyze`` are also the API functions: called,
  they run :func:`matchmaker.api.simulate` and :func:`matchmaker.api.analyze`; otherwise
  they read as the subpackages, so ``import matchmaker.simulate.series`` works too);
* :mod:`matchmaker.review` -- ``lint`` (a policy's mistakes) and ``diff`` (what a new policy changes);
* :mod:`matchmaker.api` -- the public entry points re-exported here;
* :mod:`matchmaker.sweeps` -- many simulations at once on Dask (``matchmaker.sweep``);
* :mod:`matchmaker.cli` -- the ``matchmaker`` command.

Typical use::

    import matchmaker
    loaded = matchmaker.load("negotiator.config", "slots.ads", "jobs.ads")
    result = matchmaker.negotiate(loaded, now=1700000000, state="prio.db")
    for m in result.matches:
        print(m.job, m.slot, m.reason)
    sim = matchmaker.simulate(loaded, start=1700000000, duration=48 * 3600)   # rows per cycle
    runs = matchmaker.sweep("negotiator.config", "slots.ads", "jobs.ads", start=1700000000,
                            duration=24 * 3600, vary={"PRIORITY_HALFLIFE": [86400, 604800]})
"""

import functools
import importlib
from typing import TYPE_CHECKING, Any, Callable

from .accounting.store import Accountant
from .api import Loaded, analyze, diff, lint, load, load_ads, negotiate, simulate
from .config.knobs import Knobs
from .config.settings import Settings
from .cycle.results import CycleResult, GroupSummary, Match, Preemption, Rejection, SubmitterSummary
from .errors import ConfigError, StateError
from .pool.ads import Job, Pool, Slot
from .review.cycle_diff import CycleDiff
from .review.findings import Finding, LintReport
from .review.series_diff import SeriesDiff
from .simulate import Simulation
from .sweeps import SweepError, SweepResult, sweep


class _FunctionAndPackage:
    """An API function that shares its name with a subpackage (``matchmaker.simulate``,
    ``matchmaker.analyze``): calling it calls the function, and its other attributes are
    the subpackage's, so ``matchmaker.simulate(...)``, ``matchmaker.simulate.series`` and
    ``import matchmaker.simulate.series as series`` all work."""

    def __init__(self, function: Callable[..., Any], package: str) -> None:
        functools.update_wrapper(self, function)  # name, docstring and signature of the function
        self._function = function
        self._package = importlib.import_module(package)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._package, name)

    def __repr__(self) -> str:
        return f"<function {self._function.__qualname__} and package {self._package.__name__}>"

    def __reduce__(self) -> tuple[Callable[[str], Any], tuple[str]]:
        return _function_and_package, (self._function.__name__,)


def _function_and_package(name: str) -> Any:
    """``matchmaker.<name>`` (how a pickled one is found again)."""
    return globals()[name]


if not TYPE_CHECKING:  # type checkers see the functions themselves
    analyze = _FunctionAndPackage(analyze, "matchmaker.analyze")
    simulate = _FunctionAndPackage(simulate, "matchmaker.simulate")

__all__ = [
    "Accountant",
    "ConfigError",
    "CycleDiff",
    "CycleResult",
    "Finding",
    "GroupSummary",
    "Job",
    "Knobs",
    "LintReport",
    "Loaded",
    "Match",
    "Pool",
    "Preemption",
    "Rejection",
    "SeriesDiff",
    "Settings",
    "Simulation",
    "Slot",
    "StateError",
    "SubmitterSummary",
    "SweepError",
    "SweepResult",
    "analyze",
    "diff",
    "lint",
    "load",
    "load_ads",
    "negotiate",
    "simulate",
    "sweep",
]
