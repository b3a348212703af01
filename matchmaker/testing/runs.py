"""One negotiation cycle, or a few, on a drawn pool: fast enough for hundreds of examples.

Each run keeps its books in memory (an accountant in ``:memory:``), so nothing is
written and every example starts fresh.  The configuration is read once per distinct
text or file and reused.  A :class:`CycleRun` holds what a property needs: the pool
as the cycle read it, the settings, the result and the usage at the start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

from classad.ad import ClassAd

from ..api import load_ads
from ..config.knobs import Knobs
from ..config.settings import Settings
from ..cycle.results import CycleResult, Match
from ..cycle.session import advance_pool, open_accountant, run_cycle as cycle_with_books
from ..pool.ads import Pool, usage_by_customer
from .knobs import knobs_of
from .pools import DrawnPool

#: The time of the first cycle when none is given (2024-06-10, near the example dumps).
DEFAULT_NOW = 1_718_035_200.0


@dataclass(frozen=True)
class CycleRun:
    """One cycle: the pool it read, its settings, what it decided, the usage at its start."""

    pool: Pool
    knobs: Knobs
    settings: Settings
    result: CycleResult
    now: float
    usage_before: Mapping[str, float]

    def slot_ad(self, name: str) -> ClassAd:
        """The ad of the slot called ``name``."""
        return next(s.ad for s in self.pool.slots if s.name == name)

    def job_ad(self, job_id: str) -> ClassAd:
        """The ad of job ``ClusterId.ProcId``."""
        return next(j.ad for j in self.pool.jobs if j.id == job_id)

    def matches_of(self, submitter: str) -> list[Match]:
        """The matches ``submitter`` made."""
        return [m for m in self.result.matches if m.submitter == submitter]

    def weight_of(self, submitter: str) -> float:
        """The slot weight ``submitter`` matched in this cycle."""
        return sum(m.weight for m in self.matches_of(submitter))


def run_cycles(
    pool: DrawnPool,
    config: str | os.PathLike | Knobs,
    *,
    cycles: int = 1,
    now: float = DEFAULT_NOW,
    interval: Optional[float] = None,
    factors: Optional[Mapping[str, float]] = None,
) -> list[CycleRun]:
    """``cycles`` cycles on ``pool`` under ``config``, ``interval`` seconds apart (default
    ``NEGOTIATOR_INTERVAL``), each starting from the pool as the previous one left it
    (every match claimed, nothing finished).  ``factors`` sets priority factors first."""
    knobs = knobs_of(config)
    loaded = load_ads(knobs, pool.slots, pool.jobs)
    step = float(interval if interval is not None else loaded.settings.interval)
    acct = open_accountant(":memory:", loaded.settings)
    runs: list[CycleRun] = []
    try:
        with acct.transaction():
            for name, factor in (factors or {}).items():
                acct.set_factor(name, factor)
        current = loaded.pool
        for n in range(cycles):
            at = now + n * step
            before = usage_by_customer(current.slots)
            result = cycle_with_books(current, loaded.settings, acct, at)
            runs.append(CycleRun(current, knobs, loaded.settings, result, at, before))
            current = advance_pool(current, result, loaded.settings, at)
    finally:
        acct.close()
    return runs


def run_cycle(
    pool: DrawnPool,
    config: str | os.PathLike | Knobs,
    *,
    now: float = DEFAULT_NOW,
    factors: Optional[Mapping[str, float]] = None,
) -> CycleRun:
    """One cycle on ``pool`` under ``config`` (see :func:`run_cycles`)."""
    return run_cycles(pool, config, now=now, factors=factors)[0]


__all__ = ["DEFAULT_NOW", "CycleRun", "run_cycle", "run_cycles"]
