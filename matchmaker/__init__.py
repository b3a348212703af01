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
