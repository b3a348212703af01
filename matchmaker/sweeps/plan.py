"""The client's side of a sweep: the base inputs read once, one task per variant.

:func:`make_plan` reads the base configuration as ``simulate`` reads it (includes, the
environment, the group map file), applies each variant's knobs after it, builds the
variant's typed settings and gives it a stable key: a digest of the variant's
parameters, the base configuration, the ad files and the run's times.  The key names
the variant's results on disk, so ``--resume`` recognises finished work and never
takes a result computed from other inputs.  A variant whose configuration does not
hold together (an unknown policy name, say) is a failed :class:`Outcome` at once.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Optional

from classad.errors import ClassAdError

from ..api import config_warnings, settings_from
from ..config.knobs import Knobs, read_config_file
from ..config.language import Config
from .spec import Variant, apply_settings, factor_table
from .worker import Inputs, Outcome, Task, _one_line, pool_key


@dataclass(frozen=True)
class Times:
    """The virtual times of every variant (as ``simulate``'s options)."""

    start: float
    duration: float
    interval: Optional[float] = None
    job_duration: float = 3600.0


@dataclass
class Plan:
    """The inputs to ship, a task per runnable variant, and the variants that failed already."""

    inputs: Inputs
    tasks: list[Task]
    failed: list[Outcome]
    order: list[str]  # every variant's key, in the sweep's order


def read_config(path: str | os.PathLike) -> Config:
    """The base configuration, read as ``Knobs.from_file`` reads it, keeping of the
    environment only what its definitions use (it travels to the workers)."""
    config = read_config_file(path, environ=dict(os.environ))
    config.detach_environment()
    return config


def variant_key(variant: Variant, seed: Optional[int], factors: Mapping[str, float], base: str) -> str:
    """The variant's stable name on disk: a digest of everything its rows depend on."""
    text = json.dumps([variant.identity(), seed, sorted(factors.items()), base])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def make_plan(
    config: Config,
    config_file: str,
    slots: str,
    jobs: str,
    variants: Sequence[Variant],
    times: Times,
    *,
    seed: Optional[int] = None,
    factors: Optional[Mapping[str, float]] = None,
) -> Plan:
    """The tasks of ``variants`` over the base ``config`` (read from ``config_file``), ``slots``
    and ``jobs`` files."""
    job_files = list(dict.fromkeys([jobs] + [v.jobs for v in variants if v.jobs is not None]))
    inputs = Inputs.read(slots, job_files)
    base = json.dumps(
        [
            config.digest(),
            inputs.digest,
            slots,
            jobs,
            times.start,
            times.duration,
            times.interval,
            times.job_duration,
        ]
    )
    tasks, failed, order = [], [], []
    for v in variants:
        fs = factor_table(factors or {}, v)
        s = v.seed if v.seed is not None else seed
        key = variant_key(v, s, fs, base)
        order.append(key)
        try:
            knobs = Knobs(apply_settings(config, v.knobs))
            settings = settings_from(knobs)
        except ClassAdError as exc:
            failed.append(Outcome(key, v, status=1, error=_one_line(exc)))
            continue
        warnings = config_warnings(knobs, settings, config_file)
        resolved = Variant(v.name, v.knobs, v.factors, s, v.jobs)
        tasks.append(
            Task(
                key,
                resolved,
                knobs,
                settings,
                warnings,
                v.jobs or jobs,
                pool_key(settings),
                times.start,
                times.duration,
                times.interval,
                times.job_duration,
                tuple(sorted(fs.items())),
            )
        )
    return Plan(inputs, tasks, failed, order)


__all__ = ["Plan", "Times", "make_plan", "read_config", "variant_key"]
