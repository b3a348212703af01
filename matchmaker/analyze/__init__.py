"""Why a job does (not) match: HTCondor's ``-better-analyze``, for a whole pool and both ways.

This package owns the ``analyze`` reports: a job's Requirements split into its ``&&``
clauses with the slots each accepts and the running count, the slots' own Requirements
against the job, why the slots both sides accept are still unavailable (claims,
preemption rules, limits, quotas), the verdict the negotiation cycle reached with the
mechanism and knob that decided it, and one-number suggestions; and the reverse view
from one slot.  It runs the cycle itself (:mod:`matchmaker.cycle`) on a read-only copy
of the accountant, and may import ``classad`` and every matchmaker layer below
``analyze`` (errors, groups, accounting, config, pool, policies, cycle, simulate),
never ``api`` or ``cli``.
"""

from .job import JobReport, analyze_job, analyze_submitter
from .pool_view import PoolView, prepare
from .slot import SlotReport, analyze_slot

__all__ = ["JobReport", "PoolView", "SlotReport", "analyze_job", "analyze_slot", "analyze_submitter", "prepare"]
