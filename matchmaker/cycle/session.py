"""Negotiation cycles against the accountant store, one after another.

:func:`matchmaker.cycle.negotiator.negotiate` is pure: it reads priorities and usage
and returns matches.  A real negotiator also keeps books between cycles, and
this module is that glue, shared by the CLI and by multi-cycle simulations:

* :func:`run_cycle` -- in one accountant transaction: age the priorities to
  ``now``, bring the claim records in line with the claimed slots (HTCondor's
  CheckMatches), negotiate with EUPs frozen from the store, charge every match to
  its submitter and group, and store the cycle's quota table (the next cycle's
  source of ``RemoteGroupQuota``, and what ``userprio --quotas`` prints).  A
  failure leaves the store as it was.
* :func:`advance_pool` -- the pool as the next cycle would find it when every
  match was claimed and nothing finished: matched slots Claimed/Busy by their
  submitter (publishing ``RemoteGroup``-style attributes the startd would),
  matched jobs running, preempted jobs idle again; a partitionable slot split
  into a dynamic slot per job, leftovers claimed (:mod:`matchmaker.cycle.claims`).
"""

from __future__ import annotations

from itertools import compress
from operator import attrgetter
from typing import Any, Callable, Optional

from classad.bulk import heap_settled

from ..accounting.store import Accountant, Claim, QuotaRecord
from ..config.settings import Settings
from ..groups.membership import group_of_submitter
from ..policies.jobs import Ledger
from ..policies.runners import make_runner
from ..pool.ads import RUNNING, Pool
from .carry import Carried
from .claims import claim_matches
from .negotiator import CycleResult, negotiate

_NAME = attrgetter("name")


class AccountantPriorities:
    """The accountant as the cycle's :class:`~matchmaker.cycle.ephemeral.Priorities` (EUPs frozen)."""

    def __init__(self, acct: Accountant) -> None:
        self.acct = acct
        self._eup: dict[str, float] = {}
        self._limits: dict[str, tuple[float, float]] = {}

    def eup(self, name: str) -> float:
        if name not in self._eup:
            self._eup[name] = self.acct.eup(name)
        return self._eup[name]

    def _floor_ceiling(self, name: str) -> tuple[float, float]:
        hit = self._limits.get(name)
        if hit is None:
            c = self.acct.get(name)
            hit = self._limits[name] = (c.floor, c.ceiling) if c is not None else (0.0, -1.0)
        return hit

    def floor(self, name: str) -> float:
        return self._floor_ceiling(name)[0]

    def ceiling(self, name: str) -> float:
        return self._floor_ceiling(name)[1]


def group_function(settings: Settings) -> Callable[[Optional[str]], Optional[str]]:
    """The group a submitter is charged to (None without group quotas)."""
    tree = settings.group_tree
    if tree is None:
        return lambda _name: None
    return lambda name: group_of_submitter(name, tree) if name else None


def open_accountant(path: str, settings: Settings, **how: bool) -> Accountant:
    """The accountant store at ``path`` (``":memory:"`` for none) with the settings' half-life
    and priority factors.  ``how``: ``read_only`` or ``must_exist`` (see :meth:`Accountant.load`)."""
    return Accountant.load(path, halflife=settings.halflife, factors=settings.factors, **how)


def run_cycle(
    pool: Pool,
    settings: Settings,
    acct: Accountant,
    now: float,
    progress: Optional[Callable[[str], None]] = None,
    carry: Optional[Carried] = None,
    claims_changed: Optional[set[str]] = None,
    explain: bool = True,
) -> CycleResult:
    """One cycle with the books kept (see the module docstring); one transaction.
    ``progress`` hears what the cycle is doing (see :func:`negotiator.negotiate`); ``carry``
    is what the previous cycle of a simulation left (:mod:`matchmaker.cycle.carry`).
    ``claims_changed``: the names of the only slots whose claims may differ from the
    accountant's records (a simulation synced them after its last cycle); None: any slot.
    ``explain``: as :func:`negotiate`'s (False: rejections without their mechanism)."""
    group_of = remembered(group_function(settings))
    # The pool's objects are set aside from the cyclic collector for the whole cycle, the
    # books included: a collection now would walk the pool just read (classad.bulk).
    with heap_settled(), acct.transaction():
        acct.update_priorities(now)
        acct.sync_claims(_claims(pool, group_of, now, claims_changed), now, claims_changed)
        usage = {c.name: c.weighted_resources_used for c in acct.customers() if not c.is_group}
        if settings.priority_policy is not None:
            result = _policy_cycle(pool, settings, acct, now, usage, progress, carry, explain)
        else:
            result = negotiate(
                pool,
                settings,
                AccountantPriorities(acct),
                now,
                usage=usage,
                previous_quotas=acct.previous_quotas(),
                progress=progress,
                carry=carry,
                explain=explain,
            )
        acct.add_matches(
            (
                Claim(name, m.submitter, m.weight, group_of(m.submitter), now)
                for m, name in zip(result.matches, claim_names(result.matches))
            ),
            now,
        )
        acct.set_group_quotas(
            QuotaRecord(
                g.name,
                g.quota,
                g.config_quota,
                g.is_static,
                g.subtree_quota,
                g.surplus,
                g.requested,
                g.allocated,
                g.usage,
                g.sort_key,
                g.order,
                g.matched,
            )
            for g in result.groups
        )
    return result


def remembered(group_of: Callable[[Optional[str]], Optional[str]]) -> Callable[[Optional[str]], Optional[str]]:
    """``group_of`` answered once per name (the group tree does not change within a cycle,
    nor within a simulation, whose settings are fixed)."""
    known: dict[Optional[str], Optional[str]] = {}

    def remembered(name: Optional[str]) -> Optional[str]:
        if name in known:
            return known[name]
        g = known[name] = group_of(name)
        return g

    return remembered


def _claims(
    pool: Pool, group_of: Callable[[Optional[str]], Optional[str]], now: float, only: Optional[set[str]] = None
) -> list[Claim]:
    """The claimed slots (of the names ``only``, None: all) as the accountant's claim records
    (HTCondor's CheckMatches)."""
    slots = pool.slots if only is None else compress(pool.slots, map(only.__contains__, map(_NAME, pool.slots)))
    return [Claim(s.name, s.customer, s.weight, group_of(s.customer), now) for s in slots if s.charged]  # type: ignore[arg-type]


def claim_names(matches: Any) -> list[str]:
    """The accountant's name for each match's claim: the slot's name, and for the second
    and later matches on one consumption-policy slot ``<slot>_cp_match_<k>``, so that each
    is charged on its own."""
    seen: dict[str, int] = {}
    out = []
    for m in matches:
        k = seen[m.slot] = seen.get(m.slot, -1) + 1
        out.append(m.slot if k == 0 else f"{m.slot}_cp_match_{k}")
    return out


def _policy_cycle(
    pool: Pool,
    settings: Settings,
    acct: Accountant,
    now: float,
    usage: dict,
    progress: Optional[Callable[[str], None]] = None,
    carry: Optional[Carried] = None,
    explain: bool = True,
) -> CycleResult:
    """A cycle under a priority policy: charge its ledger up to ``now`` with the running
    jobs, negotiate in its order, store the ledger and its breakdown rows."""
    cfg = settings.priority_policy
    assert cfg is not None
    runner = make_runner(cfg)
    old = {e: Ledger(v, b, u) for e, (v, b, u) in acct.policy_usage(cfg.name).items()}
    running = [j for j in pool.jobs if j.status == RUNNING]
    ledger = runner.ledger(now, running, old)
    result = negotiate(
        pool,
        settings,
        AccountantPriorities(acct),
        now,
        usage=usage,
        runner=runner,
        ledger=ledger,
        progress=progress,
        carry=carry,
        explain=explain,
    )
    acct.set_policy_state(
        cfg.name, {e: (h.value, h.buckets, h.updated) for e, h in ledger.items()}, now, runner.report()
    )
    return result


def advance_pool(pool: Pool, result: CycleResult, settings: Settings, now: Optional[float] = None) -> Pool:
    """The pool after ``result``'s matches were claimed at ``now``
    (:func:`matchmaker.cycle.claims.claim_matches`)."""
    return claim_matches(pool, result, settings, now).pool


__all__ = ["AccountantPriorities", "advance_pool", "group_function", "open_accountant", "remembered", "run_cycle"]
