"""Property-test a pool's policy: Hypothesis pools shaped like a site's dumps, fast cycles, laws.

* :func:`pools` -- small pools drawn like ``condor_status -l`` / ``condor_q -l`` dumps;
* :func:`names_read` -- the attributes that can change a cycle (the others may be left out);
* :func:`run_cycle` / :func:`run_cycles` -- negotiation cycles on a drawn pool, in memory;
* ``check_*`` -- laws every cycle should obey (:mod:`matchmaker.testing.properties`);
* :meth:`DrawnPool.write` -- the pool as ad files, to replay a failure with the CLI.

Needs the ``hypothesis`` package (the project's ``[test]`` extra); see docs/testing.md.
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401
except ImportError:  # pragma: no cover - exercised by tests/language/test_testing_module.py
    raise ImportError(
        "matchmaker.testing provides Hypothesis strategies and needs the 'hypothesis' package: "
        "pip install hypothesis (it is in the project's [test] extra: pip install 'pyclassad[test]')"
    ) from None

from .knobs import knobs_of
from .pools import DrawnPool, pools
from .properties import (
    LawBroken,
    check_cycle_laws,
    check_group_quotas,
    check_matches_satisfy_requirements,
    check_no_slot_matched_twice,
    check_preemptions_satisfy_preemption_requirements,
    check_priority_factor_law,
    matched,
    priority_factor_law,
    replay,
)
from .reads import MATCHMAKER_READS, names_read, referenced_names
from .runs import DEFAULT_NOW, CycleRun, run_cycle, run_cycles

__all__ = [
    "DEFAULT_NOW",
    "MATCHMAKER_READS",
    "CycleRun",
    "DrawnPool",
    "LawBroken",
    "check_cycle_laws",
    "check_group_quotas",
    "check_matches_satisfy_requirements",
    "check_no_slot_matched_twice",
    "check_preemptions_satisfy_preemption_requirements",
    "check_priority_factor_law",
    "knobs_of",
    "matched",
    "names_read",
    "pools",
    "priority_factor_law",
    "referenced_names",
    "replay",
    "run_cycle",
    "run_cycles",
]
