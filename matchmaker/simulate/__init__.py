"""Many negotiation cycles over virtual time: the queue's life, the series, the plots.

This package owns the simulation of a pool over hours or days: jobs arrive at their
``QDate``, run for ``SimJobDuration`` seconds on the slots the negotiator gave them,
complete and free their slots, and are preempted back to idle, while the accountant
charges usage between cycles exactly as for real cycles.  It records a time series
per submitter, group and pool (:mod:`.series`) and draws it with matplotlib
(:mod:`.plots`, imported only when plotting).  It may import :mod:`matchmaker.cycle`
and the layers below it (pool, config, accounting, groups, errors) and :mod:`classad`.
"""

from .jobs import DURATION_ATTR, REPEAT_ATTR
from .loop import run_simulation
from .series import COLUMNS, ClaimSpan, ClaimSpans, JobOutcome, Simulation

__all__ = [
    "COLUMNS",
    "DURATION_ATTR",
    "REPEAT_ATTR",
    "ClaimSpan",
    "ClaimSpans",
    "JobOutcome",
    "Simulation",
    "run_simulation",
]
