"""The public entry points: load a pool from files, negotiate with the books kept.

:func:`load` reads the configuration, builds the typed :class:`Settings` and reads the
slot and job ad files with every setting that shapes the pool applied (``SLOT_WEIGHT``,
``UID_DOMAIN``, the accounting-group map, ...).  :func:`negotiate` runs one cycle over
a loaded pool against an accountant store -- an SQLite file, or memory when ``state``
is None -- aging priorities to ``now`` and charging the matches, in one transaction.
The ``matchmaker`` command is a thin layer over these two functions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Optional

from .config.knobs import Knobs
from .config.settings import Settings
from .cycle.results import CycleResult
from .cycle.session import open_accountant, run_cycle
from .policies.params import policy_params
from .pool.ads import Pool, load_pool


@dataclass(frozen=True)
class Loaded:
    """A pool read from ad files together with the configuration it was read under."""

    knobs: Knobs
    settings: Settings
    pool: Pool
    warnings: tuple[str, ...]     # configuration warnings, as "<config>: warning: ..."


def load(config: str | os.PathLike, slots: str | os.PathLike, jobs: str | os.PathLike) -> Loaded:
    """Read the configuration file and the two ad files; bad input raises ``ClassAdError``
    (``ConfigError`` or ``FormatError``) naming file, line and column."""
    knobs = Knobs.from_file(str(config))
    settings = Settings.from_knobs(knobs)
    policy = policy_params(knobs)
    if policy.name != "htcondor":
        settings = replace(settings, priority_policy=policy)
    pool = load_pool(slots, jobs, use_slot_weights=settings.use_slot_weights,
                     slot_weight_expr=settings.slot_weight_expr, force_slot_weight=settings.force_slot_weight,
                     uid_domain=settings.uid_domain, group_mapping=settings.group_mapping)
    tree = settings.group_tree
    warnings = tuple(f"{config}: warning: {w}" for w in (tree.warnings if tree is not None else ()))
    return Loaded(knobs, settings, pool, warnings)


def negotiate(loaded: Loaded, *, now: float, state: Optional[str | os.PathLike] = None) -> CycleResult:
    """One negotiation cycle at time ``now`` with the accountant at ``state`` (in memory
    when None), committed in one transaction; a failure leaves the store unchanged."""
    acct = open_accountant(str(state) if state is not None else ":memory:", loaded.knobs, loaded.settings)
    try:
        return run_cycle(loaded.pool, loaded.settings, acct, now)
    finally:
        acct.close()


__all__ = ["Loaded", "load", "negotiate"]
