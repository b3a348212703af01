"""The pie: slices of the pool by effective user priority, spun until nothing changes.

:func:`negotiate_with_group` runs the spins over a set of submitters (all of them, or
one group pass's); :func:`negotiate_submitter` is one submitter's session within a spin.
"""

from __future__ import annotations

import math
from typing import Mapping, Optional, Sequence

from classad.values import FLT_MAX

from .candidates import Budget
from .ephemeral import GroupContext, annotate_for, refresh_request
from .explain import explain_rejection
from .state import Cycle, SubmitterState

INF = math.inf
DONE, RESUME = "done", "resume"


def pie_shares(eups: Mapping[str, float]) -> dict[str, float]:
    """Each submitter's fraction of the pie: ``(1/EUP) / sum(1/EUP)``, computed as HTCondor
    does (``maxP / (EUP * sum(maxP / EUP))``) over distinct names."""
    if not eups:
        return {}
    max_eup = max(eups.values())
    z = sum(max_eup / e for e in eups.values())
    return {name: max_eup / (e * z) for name, e in eups.items()}


def pie_slices(
    eups: Mapping[str, float], total: float, usage: Optional[Mapping[str, float]] = None
) -> dict[str, float]:
    """Each submitter's limit for a spin: ``share * total - usage``, never below 0."""
    usage = usage or {}
    return {n: max(0.0, sh * total - usage.get(n, 0.0)) for n, sh in pie_shares(eups).items()}


def _limits(
    cycle: Cycle,
    s: SubmitterState,
    share: float,
    total: float,
    floor_round: bool,
    group_quota: float,
    group_usage_at_start: float,
    grouped: bool,
) -> tuple[float, float]:
    """``submitter_limit`` of docs/negotiation.md, pie slices and spins: (limit, unclaimed limit)."""
    usage = cycle.usage.of(s.name)
    lim = INF if cycle.settings.ignore_user_priorities else max(0.0, share * total - usage)
    lim_unclaimed = lim
    if grouped:
        lim_unclaimed = min(lim_unclaimed, max(0.0, group_quota - group_usage_at_start))
    if not cycle.settings.policy.consider_preemption:
        lim = lim_unclaimed
    if floor_round:
        lim = min(s.floor, lim)
    return lim, lim_unclaimed


def submitter_order_key(s: SubmitterState) -> tuple:
    """Spin-1 order: EUP, then starvation, then name (for HTCondor's LastHeardFrom hash)."""
    return (s.eup, s.starvation, s.name)


def negotiate_with_group(
    cycle: Cycle,
    submitters: Sequence[SubmitterState],
    *,
    floor_round: bool = False,
    group_quota: float = INF,
    group_name: Optional[str] = None,
    context: Optional[GroupContext] = None,
) -> list[SubmitterState]:
    """Spin the pie for ``submitters`` (docs/negotiation.md, pie slices and spins); returns them in spin-1 order.

    ``group_quota`` caps the weight the call may hand out and ``group_name`` names the
    group whose usage counts against it (None: uncapped, as without groups or in the
    autoregroup root pass); ``context`` says what the requests learn about groups.
    """
    cp = cycle.settings.policy.consider_preemption
    subs = list(submitters)
    order: list[SubmitterState] = []
    grouped = group_name is not None
    cycle.pass_cap = (group_name, group_quota, context.quotas if context else None)
    spin = 0
    while True:
        spin += 1
        cycle.spins += 1
        cycle.report()
        ignore_limit = spin == 1 and cp
        group_usage = cycle.usage.of_group(group_name) if grouped and group_name is not None else 0.0
        if grouped and not ignore_limit and group_usage >= group_quota:
            break
        if not cp:
            subs = [s for s in subs if s.idle > 0]
        if not subs:
            break
        shares = pie_shares({s.name: s.eup for s in subs})
        total = min(cycle.pool_weight, group_quota)
        pie_left = 0.0
        for s in subs:
            lim, _ = _limits(cycle, s, shares[s.name], total, floor_round, group_quota, group_usage, grouped)
            usage = cycle.usage.of(s.name)
            s.starvation = usage / (usage + lim) if usage + lim > 0 else FLT_MAX
            pie_left += lim
        if not cp and pie_left <= 0:
            break
        if spin == 1:
            subs.sort(key=submitter_order_key)
            order = list(subs)
        cycle.pie_left = pie_left
        pie_orig, n_orig = pie_left, len(subs)
        for s in list(subs):
            if grouped and not ignore_limit and cycle.usage.of_group(group_name) >= group_quota:  # type: ignore[arg-type]
                break
            share = shares[s.name]
            lim, lim_unclaimed = _limits(cycle, s, share, total, floor_round, group_quota, group_usage, grouped)
            if spin == 1:
                s.share, s.limit = share, (INF if cycle.settings.ignore_user_priorities else share * total)
            lim = min(lim, cycle.pie_left)
            s.spin_limits.append(lim)
            ceiling = s.ceiling
            ceil_left = INF if ceiling < 0 else max(0.0, ceiling - int(cycle.usage.of(s.name)))
            if s.idle == 0:
                result = DONE
            elif spin > 1 and (lim < cycle.min_weight or cycle.pie_left < cycle.min_weight):
                result = RESUME
            elif ceil_left == 0 or ceil_left < cycle.min_weight:
                result = DONE
            else:
                result = negotiate_submitter(cycle, s, lim, lim_unclaimed, ceil_left, ignore_limit, context)
            if result == DONE:
                subs.remove(s)
        if not (cycle.pie_left < pie_orig or len(subs) < n_orig) or not subs or floor_round or not cycle.slots_left():
            break
    return order


def negotiate_submitter(
    cycle: Cycle,
    s: SubmitterState,
    lim: float,
    lim_unclaimed: float,
    ceil_left: float,
    ignore_limit: bool,
    context: Optional[GroupContext] = None,
) -> str:
    """One submitter's session (docs/negotiation.md, one submitter's session); returns DONE or RESUME."""
    st, pol = cycle.settings, cycle.settings.policy
    budget = Budget(lim, lim_unclaimed)
    limited = False
    rejected: set[int] = set()
    cache: list = [None]
    for run in s.queue.runs:
        if run.remaining == 0 or run.autocluster in rejected:
            continue
        req = None
        while run.remaining > 0:
            only_rank = False
            if budget.used >= budget.lim:
                if not ignore_limit:
                    return RESUME
                only_rank = True
            if budget.used >= ceil_left:
                return RESUME
            if req is None:
                req = annotate_for(run.current().ad, s.name, s.eup, cycle.usage, context)
            else:
                refresh_request(req, cycle.usage.of(s.name), cycle.usage.of_group(cycle.usage.group_of(s.name)))
            cand, reason, by_limit = cycle.find(req, run.autocluster, s, only_rank, budget, cache)
            if cand is None:
                cycle.reject(
                    run.current().id,
                    reason,
                    *(
                        explain_rejection(
                            cycle, s, req, reason, only_rank=only_rank, budget=budget, autocluster=run.autocluster
                        )
                        if cycle.explains
                        else ()
                    ),
                )
                rejected.add(run.autocluster)
                limited = limited or by_limit
                if limited and not pol.consider_preemption and not st.use_slot_weights:
                    return RESUME
                break
            cycle.commit(s, run, cand, req, budget, context)
    return RESUME if budget.used >= budget.lim or limited else DONE


__all__ = [
    "DONE",
    "RESUME",
    "negotiate_submitter",
    "negotiate_with_group",
    "pie_shares",
    "pie_slices",
    "submitter_order_key",
]
