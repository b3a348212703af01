"""One negotiation cycle: submitters, pie slices, pie spins (docs/negotiation.md, the cycle at a glance).

Phases, each a function or method over plain data:

1. :meth:`Cycle.__init__` -- pool sizes over *all* slot ads, current usage from
   the claimed slots, the trimmed and annotated slot list, autoclusters and each
   submitter's request queue, EUPs frozen for the cycle.
2. :func:`negotiate_with_group` -- the pie engine: per spin, each submitter's
   slice ``(1/EUP) / sum(1/EUP) * total - usage``, submitters in EUP order,
   spinning until a spin neither uses pie nor retires a submitter.  Without
   groups it runs once after the floor round (docs/negotiation.md, floor round and dispatch); with ``GROUP_NAMES`` the
   group-quota loop of :mod:`matchmaker.cycle.group_passes` calls it once per group
   pass with ``group_quota`` and ``group_name``.
3. :func:`negotiate_submitter` -- one submitter's session: requests in queue
   order, the submitter limit with the round-up-once rule, RANK-only preemption
   past the limit in spin 1, autocluster skipping after a rejection.

:func:`negotiate` is the entry point.  Its settings come from
:mod:`matchmaker.config.settings`; jobs the accounting-group map refused at submit time
(``Pool.refused``) are reported first among the rejected requests.  Time budgets
(NEGOTIATOR_MAX_TIME_*) are not modelled: library code has no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, Callable, Optional

from classad.bulk import heap_settled

from ..config.settings import Settings
from ..groups.membership import group_of_submitter
from ..policies.runners import make_runner
from ..pool.ads import Pool
from .carry import Carried
from .ephemeral import GroupView, Priorities
from .group_passes import negotiate_groups
from .ordered import ordered_cycle
from .pie import negotiate_with_group
from .results import CycleResult
from .state import Cycle


def negotiate(
    pool: Pool,
    settings: Settings,
    priorities: Priorities,
    now: float,
    *,
    usage: Optional[Mapping[str, float]] = None,
    previous_quotas: Optional[Mapping[str, float]] = None,
    runner: Any = None,
    ledger: Optional[Mapping[str, Any]] = None,
    progress: Optional[Callable[[str], None]] = None,
    carry: Optional[Carried] = None,
    explain: bool = True,
) -> CycleResult:
    """Run one cycle (docs/negotiation.md, floor round and dispatch): without groups the floor round, then the pie; with
    ``settings.group_tree`` the group-quota rounds, one pie per group pass.

    ``usage`` is each submitter's weighted usage at cycle start (default: the claimed
    slots); ``previous_quotas`` is the last cycle's quota table, the source of the slots'
    ``RemoteGroupQuota`` (absent, as on HTCondor's first cycle, when None); ``progress``
    hears a short text at each spin and every hundred matches.  The pool's ads are set
    aside from the cyclic collector while the cycle runs (:func:`classad.bulk.heap_settled`).
    ``carry`` is what the previous cycle of a simulation left (:mod:`matchmaker.cycle.carry`).
    ``explain``: each rejection gets its deciding mechanism and a sentence
    (:mod:`matchmaker.cycle.explain`); False leaves the mechanism empty and the sentence
    HTCondor's reason (a simulation never shows them); a priority policy's refusals keep theirs."""
    with heap_settled():
        return _negotiate(
            pool,
            settings,
            priorities,
            now,
            usage=usage,
            previous_quotas=previous_quotas,
            runner=runner,
            ledger=ledger,
            progress=progress,
            carry=carry,
            explain=explain,
        )


def _negotiate(
    pool: Pool,
    settings: Settings,
    priorities: Priorities,
    now: float,
    *,
    usage: Optional[Mapping[str, float]],
    previous_quotas: Optional[Mapping[str, float]],
    runner: Any,
    ledger: Optional[Mapping[str, Any]],
    progress: Optional[Callable[[str], None]],
    carry: Optional[Carried],
    explain: bool,
) -> CycleResult:
    if settings.priority_policy is not None:
        if runner is None:
            runner = make_runner(settings.priority_policy)
        return ordered_cycle(
            pool,
            settings,
            priorities,
            now,
            runner,
            ledger or {},
            usage=usage,
            progress=progress,
            carry=carry,
            explain=explain,
        )
    tree = settings.group_tree
    if tree is None:
        cycle = Cycle(pool, settings, priorities, now, usage=usage, progress=progress, carry=carry, explain=explain)
        below = [s for s in cycle.submitters if s.floor > 0 and cycle.usage.of(s.name) < s.floor]
        if below:
            negotiate_with_group(cycle, below, floor_round=True)
        order = negotiate_with_group(cycle, cycle.submitters)
        result = cycle.result(order)
        cycle.close()
        return result
    group_of = partial(group_of_submitter, tree=tree)
    cycle = Cycle(
        pool,
        settings,
        priorities,
        now,
        usage=usage,
        group_of=group_of,
        groups=GroupView(group_of, previous_quotas),
        progress=progress,
        carry=carry,
        explain=explain,
    )
    result = negotiate_groups(cycle, pool, pie=negotiate_with_group)
    cycle.close()
    return result


__all__ = ["negotiate"]
