"""The pool as one negotiation cycle sees it, prepared once for every analyze report.

:func:`prepare` does what ``negotiate`` does before matching -- the accountant aged to
``now`` and brought in line with the claimed slots, EUPs frozen -- on a private
in-memory copy of the store, so analyzing never changes the database.  It then runs the
cycle once for the outcome (matches, rejections with their mechanism, the rejection
history) and builds a second, untouched :class:`~matchmaker.cycle.state.Cycle` whose
annotated slots are the cycle-start view the clause counts are taken over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Optional

from classad.ad import ClassAd

from ..accounting.store import Accountant, Claim
from ..config.settings import Settings
from ..cycle.ephemeral import ROOT_GROUP, GroupContext, GroupView, annotate_for
from ..cycle.negotiator import negotiate
from ..cycle.results import CycleResult, Match, Rejection
from ..cycle.session import AccountantPriorities, group_function, open_accountant
from ..cycle.state import Cycle
from ..groups.membership import group_of_submitter
from ..pool.ads import Job, Pool


def _store_copy(path: Optional[str], settings: Settings) -> Accountant:
    """A private in-memory copy of the store at ``path`` (an empty store when None), opened
    through the store's own read-only path: the same schema and value checks as every
    other command, and the file never written."""
    return open_accountant(":memory:" if path is None else path, settings, read_only=True)


@dataclass
class PoolView:
    """A loaded pool, the cycle's outcome over it and its cycle-start view (see module doc)."""

    pool: Pool
    settings: Settings
    now: float
    result: CycleResult
    start: Cycle  # built like the cycle's, never negotiated
    priorities: Any
    _jobs: dict[str, Job] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._jobs = {j.id: j for j in self.pool.jobs}

    def job(self, job_id: str) -> Optional[Job]:
        """The job ``C.P``, or None."""
        return self._jobs.get(job_id)

    def match_of(self, job_id: str) -> Optional[Match]:
        """The match the cycle made for ``job_id``, if any."""
        return next((m for m in self.result.matches if m.job == job_id), None)

    def match_on(self, slot: str) -> Optional[Match]:
        """The match the cycle made on slot ``slot``, if any."""
        return next((m for m in self.result.matches if m.slot == slot), None)

    def rejection(self, job_id: str) -> Optional[Rejection]:
        """The job's final rejection (None when it was matched or never tried)."""
        return next((r for r in self.result.rejected if r.job == job_id), None)

    def history(self, job_id: str) -> list[Rejection]:
        """Every time the cycle turned the job away, in order."""
        return [r for r in self.result.history if r.job == job_id]

    def request(self, job: Job) -> ClassAd:
        """The job's ad as the cycle's first request for it: with its ``Submitter*`` attributes."""
        quotas = {g.name: g.quota for g in self.result.groups} if self.result.groups else None
        usage = self.start.usage
        group = usage.group_of(job.submitter) if quotas is not None else ROOT_GROUP
        ctx = GroupContext(group, False, quotas)
        return annotate_for(job.ad, job.submitter, self.priorities.eup(job.submitter), usage, ctx)


def prepare(pool: Pool, settings: Settings, now: float, state: Optional[str] = None) -> PoolView:
    """Run the cycle over ``pool`` as ``negotiate`` would at ``now`` (without changing the
    store at ``state``) and keep what the reports need."""
    acct = _store_copy(state, settings)
    try:
        group_of = group_function(settings)
        acct.update_priorities(now)
        acct.sync_claims(
            [
                Claim(s.name, s.customer, s.weight, group_of(s.customer), start_time=now)  # type: ignore[arg-type]
                for s in pool.slots
                if s.charged
            ],
            now,
        )
        usage = {c.name: c.weighted_resources_used for c in acct.customers() if not c.is_group}
        previous = acct.previous_quotas()
        priorities = AccountantPriorities(acct)
        for name in {j.submitter for j in pool.jobs} | {s.customer for s in pool.slots if s.customer}:
            priorities.eup(name), priorities.floor(name), priorities.ceiling(name)
        result = negotiate(pool, settings, priorities, now, usage=usage, previous_quotas=previous)
        tree = settings.group_tree
        if tree is None:
            start = Cycle(pool, settings, priorities, now, usage=usage)
        else:
            gof = partial(group_of_submitter, tree=tree)
            start = Cycle(pool, settings, priorities, now, usage=usage, group_of=gof, groups=GroupView(gof, previous))
        return PoolView(pool, settings, now, result, start, _Frozen(priorities))
    finally:
        acct.close()


class _Frozen:
    """The cycle's priorities, kept after the store copy is closed (unknown names: 0.5 x the
    default factor is not guessed; they were all read while the store was open)."""

    def __init__(self, p: AccountantPriorities) -> None:
        self._eup = dict(p._eup)
        self._floor = {n: p.floor(n) for n in self._eup}
        self._ceiling = {n: p.ceiling(n) for n in self._eup}

    def eup(self, name: str) -> float:
        return self._eup.get(name, 0.0)

    def floor(self, name: str) -> float:
        return self._floor.get(name, 0.0)

    def ceiling(self, name: str) -> float:
        return self._ceiling.get(name, -1.0)


__all__ = ["PoolView", "prepare"]
