"""Laws every negotiation cycle should obey, as checks that raise when a run breaks one.

Each ``check_*`` takes a :class:`~matchmaker.testing.runs.CycleRun` (or two) and raises
:class:`LawBroken` (an ``AssertionError``) naming the match, slot or submitter at fault::

    @given(pools(slots_like="slots.ad", jobs_like="jobs.ad"))
    def test_matches_are_sound(pool):
        check_matches_satisfy_requirements(run_cycle(pool, "policy.config"))

Expressions are evaluated as the cycle evaluated them: the ads annotated with the
attributes the negotiator adds (``SubmitterUserPrio``, ``RemoteUserPrio``, ...), at
the cycle's time, with the usage as it stood when each match was made (the usage at
the cycle's start, replayed match by match).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import partial
from typing import Any, Optional

from classad.ad import ClassAd
from classad.ast import Node
from classad.evaluate import evaluate_top
from classad.values import truthiness

from ..config.knobs import Knobs
from ..cycle.ephemeral import GroupContext, GroupView, LiveUsage, MatchState, annotate_for, annotate_slot
from ..cycle.results import Match
from ..groups.membership import group_of_submitter
from .pools import DrawnPool
from .runs import DEFAULT_NOW, CycleRun, run_cycle

# The EUP of a claim's user who submits nothing in the cycle (the smallest priority);
# it only matters to an expression that reads RemoteUserPrio outside a preemption.
_UNKNOWN_EUP = 0.5
_SLACK = 1e-9


class LawBroken(AssertionError):
    """A cycle broke one of the laws of this module; the message says where."""


def _true(my: ClassAd, target: Optional[ClassAd], node: Optional[Node], usage: LiveUsage, now: float) -> bool:
    if node is None:
        return False
    state = MatchState(usage, now)
    state.my, state.target = my, target
    try:
        return truthiness(evaluate_top(node, my, state)) is True
    except RecursionError:
        return False


def replay(run: CycleRun) -> Iterator[tuple[Match, ClassAd, ClassAd, LiveUsage]]:
    """Each match of the cycle in order, with the request and the slot annotated as the
    negotiator saw them and the usage just before the match."""
    tree = run.settings.group_tree
    group_of = partial(group_of_submitter, tree=tree) if tree is not None else None
    usage = LiveUsage(run.usage_before, group_of)
    eups = {s.name: s.eup for s in run.result.submitters}
    for m in run.result.matches:
        if m.preemption is not None:
            eups.setdefault(m.preemption.user, m.preemption.remote_user_prio)
    quotas = {g.name: g.quota for g in run.result.groups} if tree is not None else None
    slots = {s.name: s for s in run.pool.slots}
    st = run.settings
    for m in run.result.matches:
        slot = slots[m.slot]
        slot_ad = annotate_slot(
            slot,
            now=run.now,
            eup_of=lambda u: eups.get(u, _UNKNOWN_EUP),
            consider_preemption=st.policy.consider_preemption,
            cross_slot_prios=st.cross_slot_prios,
            resource_prefix=st.resource_prefix,
            slot_weight_expr=st.slot_weight_expr,
            force_slot_weight=st.force_slot_weight,
            groups=GroupView(group_of) if group_of is not None else None,
        )
        ctx = GroupContext(m.negotiating_group, m.autoregroup, quotas) if quotas is not None else None
        request = annotate_for(run.job_ad(m.job), m.submitter, eups.get(m.submitter, _UNKNOWN_EUP), usage, ctx)
        yield m, request, slot_ad, usage
        if m.preempted is not None and slot.charged and slot.customer is not None:
            usage.remove(slot.customer, m.weight)
        usage.add(m.submitter, m.weight)


def check_matches_satisfy_requirements(run: CycleRun) -> None:
    """Every match satisfies both ``Requirements``: the job's against the slot and the
    slot's (its ``NegotiatorRequirements`` when set) against the job."""
    for m, request, slot_ad, usage in replay(run):
        if not _true(request, slot_ad, request.get_node("Requirements"), usage, run.now):
            raise LawBroken(f"job {m.job} was matched with {m.slot}, but the job's Requirements are not true there")
        if not _true(slot_ad, request, slot_ad.get_node("Requirements"), usage, run.now):
            raise LawBroken(f"job {m.job} was matched with {m.slot}, but the slot's Requirements refuse it")


def check_no_slot_matched_twice(run: CycleRun) -> None:
    """No slot is matched twice in a cycle, and no job is."""
    slots: dict[str, str] = {}
    jobs: dict[str, str] = {}
    for m in run.result.matches:
        if m.slot in slots:
            raise LawBroken(f"slot {m.slot} was matched twice: to job {slots[m.slot]} and to job {m.job}")
        if m.job in jobs:
            raise LawBroken(f"job {m.job} was matched twice: to {jobs[m.job]} and to {m.slot}")
        slots[m.slot] = m.job
        jobs[m.job] = m.slot


def check_preemptions_satisfy_preemption_requirements(run: CycleRun) -> None:
    """A match that preempts a claim for priority had ``PREEMPTION_REQUIREMENTS`` true
    (the slot as MY, the new job as TARGET)."""
    node = run.settings.policy.preemption_requirements
    for m, request, slot_ad, usage in replay(run):
        if m.reason != "priority":
            continue
        if node is not None and not _true(slot_ad, request, node, usage, run.now):
            raise LawBroken(
                f"job {m.job} of {m.submitter} preempted {m.preempted} on {m.slot} for priority, "
                "but PREEMPTION_REQUIREMENTS is not true for that pair"
            )


def check_priority_factor_law(low: CycleRun, high: CycleRun, submitter: str) -> None:
    """``submitter`` matched no more slot weight with the higher priority factor (run
    ``high``) than with the lower one (run ``low``), the pool being the same."""
    got_low, got_high = low.weight_of(submitter), high.weight_of(submitter)
    if got_high > got_low + _SLACK:
        raise LawBroken(
            f"{submitter} got {got_high:g} slot weight with the higher priority factor, "
            f"more than the {got_low:g} it got with the lower one"
        )


def priority_factor_law(
    pool: DrawnPool,
    config: str | os.PathLike | Knobs,
    submitter: str,
    *,
    low: float = 1.0,
    high: float = 100.0,
    now: float = DEFAULT_NOW,
) -> tuple[CycleRun, CycleRun]:
    """Run the pool with ``submitter``'s priority factor at ``low`` and then at ``high``
    and check the law of :func:`check_priority_factor_law`; returns both runs."""
    if not high > low:
        raise ValueError(f"the raised factor ({high!r}) must be above the other ({low!r})")
    run_low = run_cycle(pool, config, now=now, factors={submitter: low})
    run_high = run_cycle(pool, config, now=now, factors={submitter: high})
    check_priority_factor_law(run_low, run_high, submitter)
    return run_low, run_high


def check_group_quotas(run: CycleRun) -> None:
    """A group that takes no surplus (``GROUP_ACCEPT_SURPLUS`` and ``GROUP_AUTOREGROUP``
    off) ends the cycle with its subtree (itself and its subgroups) using no more than
    the subtree's quota, unless the subtree already used more at the start (claims are
    not ended to bring a group back under its quota).  The subtree's quota, not the
    group's own: a group may use what its subgroups leave unused."""
    tree = run.settings.group_tree
    if tree is None:
        return
    before = LiveUsage(run.usage_before, partial(group_of_submitter, tree=tree))
    for g in run.result.groups:
        if g.surplus != "no":
            continue
        members = [h for h in run.result.groups if h.name == g.name or h.name.startswith(g.name + ".")]
        end = sum(h.usage for h in members)
        start = sum(before.of_group(h.name) for h in members)
        if end > max(g.subtree_quota, start) + _SLACK:
            raise LawBroken(
                f"group {g.name} takes no surplus, but ends the cycle with its subtree using {end:g} "
                f"of a quota of {g.subtree_quota:g} (it used {start:g} at the start)"
            )


def check_cycle_laws(run: CycleRun) -> None:
    """Every law of this module that one run can break."""
    check_no_slot_matched_twice(run)
    check_matches_satisfy_requirements(run)
    check_preemptions_satisfy_preemption_requirements(run)
    check_group_quotas(run)


def matched(run: CycleRun, **where: Any) -> list[Match]:
    """The matches whose fields equal ``where`` (``matched(run, reason="priority")``)."""
    return [m for m in run.result.matches if all(getattr(m, k) == v for k, v in where.items())]


__all__ = [
    "LawBroken",
    "check_cycle_laws",
    "check_group_quotas",
    "check_matches_satisfy_requirements",
    "check_no_slot_matched_twice",
    "check_preemptions_satisfy_preemption_requirements",
    "check_priority_factor_law",
    "matched",
    "priority_factor_law",
    "replay",
]
