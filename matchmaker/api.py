"""The public entry points: load a pool, negotiate with the books kept, simulate.

:func:`load` reads the configuration, builds the typed :class:`Settings` and reads the
slot and job ad files with every setting that shapes the pool applied (``SLOT_WEIGHT``,
``UID_DOMAIN``, the accounting-group map, ...).  :func:`negotiate` runs one cycle over
a loaded pool against an accountant store -- an SQLite file, or memory when ``state``
is None -- aging priorities to ``now`` and charging the matches, in one transaction.
:func:`load_ads` is :func:`load` for ads built in memory, and :func:`simulate` runs
cycles over virtual time (:mod:`matchmaker.simulate`).  The ``matchmaker`` command is
a thin layer over these functions.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from classad.ad import ClassAd

from .accounting.priority_math import MAX_TIME
from .accounting.reports import check_edit
from .accounting.store import Accountant
from .analyze.pool_view import PoolView, prepare
from .config.knobs import Knobs, reader_warnings
from .config.settings import Settings
from .cycle.results import CycleResult
from .cycle.session import open_accountant, run_cycle
from .errors import StateError
from .pool.ads import AdSource, Pool, load_pool, pool_from_ads, rereadable
from .pool.concurrency import named_limits
from .review.config_checks import check_config
from .review.cycle_diff import CycleDiff, cycle_diff
from .review.findings import LintReport
from .review.lint import lint_review
from .review.series_diff import SeriesDiff, series_diff
from .simulate import Simulation, run_simulation
from .simulate.outputs import StagedOutputs, check_directory, estimated_size


@dataclass(frozen=True)
class Loaded:
    """A pool read from ad files together with the configuration it was read under."""

    knobs: Knobs
    settings: Settings
    pool: Pool
    warnings: tuple[str, ...]  # configuration warnings, as "<config>: warning: ..."


def load(
    config: str | os.PathLike,
    slots: AdSource,
    jobs: AdSource,
    progress: Optional[Callable[[str], None]] = None,
    *,
    allow_empty: bool = False,
) -> Loaded:
    """Read the configuration file and the two ad sources; bad input raises ``ClassAdError``
    (``ConfigError`` or ``FormatError``) naming file, line and column.

    A source is a path, ``"-"`` for standard input, a pipe or an open file, in any ad
    format, gzipped or not (:func:`matchmaker.pool.ads.stream_ads`).  A source holding no
    ads is refused (``FormatError``) unless ``allow_empty``.  ``progress``, if given, hears
    which source is being read."""
    knobs = Knobs.from_file(str(config))
    settings = settings_from(knobs)
    pool = load_pool(slots, jobs, progress=progress, allow_empty=allow_empty, **pool_options(settings))
    check_limits(pool, settings)
    return Loaded(knobs, settings, pool, config_warnings(knobs, settings, str(config)))


def load_ads(config: str | os.PathLike | Knobs, slots: Iterable[ClassAd], jobs: Iterable[ClassAd]) -> Loaded:
    """:func:`load` for ads built in memory; ``config`` is a file or a :class:`Knobs`
    (``Knobs.from_string(text)``).  Every setting that shapes the pool is applied, as by
    :func:`load`; sources are ``slot#N`` and ``job#N``."""
    knobs = config if isinstance(config, Knobs) else Knobs.from_file(str(config))
    settings = settings_from(knobs)
    pool = pool_from_ads(slots, jobs, **pool_options(settings))
    check_limits(pool, settings)
    where = "<config>" if isinstance(config, Knobs) else str(config)
    return Loaded(knobs, settings, pool, config_warnings(knobs, settings, where))


def settings_from(knobs: Knobs) -> Settings:
    """The typed settings of a configuration, its priority model's parameters included
    (:meth:`Settings.from_knobs`)."""
    return Settings.from_knobs(knobs)


def check_limits(pool: Pool, settings: Settings) -> None:
    """The capacity of every concurrency limit the pool's ads name is a number
    (``ConfigError`` naming the knob's file and line, and the ad naming the limit)."""
    settings.check_concurrency_limits(named_limits(pool.jobs, pool.slots))


def pool_options(settings: Settings) -> dict[str, Any]:
    """The settings that shape a pool read from ads (slot weights, ``UID_DOMAIN``, the
    accounting-group map), as keywords of ``load_pool`` and ``pool_from_ads``."""
    return dict(
        use_slot_weights=settings.use_slot_weights,
        slot_weight_expr=settings.slot_weight_expr,
        force_slot_weight=settings.force_slot_weight,
        uid_domain=settings.uid_domain,
        group_mapping=settings.group_mapping,
    )


def config_warnings(knobs: Knobs, settings: Settings, where: str) -> tuple[str, ...]:
    """What the configuration warns about: its reader's warnings (with file and line), then
    the group tree's (named after ``where``, the configuration)."""
    tree = settings.group_tree
    return reader_warnings(knobs) + tuple(f"{where}: warning: {w}" for w in (tree.warnings if tree is not None else ()))


def negotiate(
    loaded: Loaded,
    *,
    now: float,
    state: Optional[str | os.PathLike] = None,
    allow_clock_skew: bool = False,
    progress: Optional[Callable[[str], None]] = None,
) -> CycleResult:
    """One negotiation cycle at time ``now`` with the accountant at ``state`` (in memory
    when None), committed in one transaction; a failure leaves the store unchanged.

    ``now`` must be finite and, unless ``allow_clock_skew``, not earlier than the store's
    last update: a clock that goes back and forth would charge usage that never happened.
    Another command writing the store during the cycle makes the cycle fail
    (``StateError``) rather than overwrite that command's edit.  ``progress``, if given,
    hears a short text at each pie spin and every hundred matches."""
    check_time(now, "now")
    path = str(state) if state is not None else ":memory:"
    acct = open_accountant(path, loaded.settings)
    try:
        acct.check_clock(now, allow_skew=allow_clock_skew)
        return run_cycle(loaded.pool, loaded.settings, acct, now, progress)
    finally:
        acct.close()


# The most cycles one simulation may run (a year of one-minute cycles is 525,600).
MAX_CYCLES = 1_000_000


def check_time(value: float, what: str) -> float:
    """``value`` if it is a finite number of seconds since the epoch, from 0 to
    :data:`MAX_TIME`, else ``StateError``: a later time is a mistake (milliseconds for
    seconds, a stray exponent) that would otherwise be charged as usage and stored."""
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise StateError(f"{what}: {value!r} is not a finite time (seconds since the epoch)")
    if not 0 <= value <= MAX_TIME:
        raise StateError(
            f"{what}: {value!r} is outside 0 .. {MAX_TIME:.0f} seconds since the epoch (the end of the year 9999)"
        )
    return float(value)


def cycle_count(start: float, duration: float, interval: float) -> int:
    """How many cycles a run from ``start`` for ``duration`` seconds makes at one cycle
    every ``interval`` seconds (both ends included); ``ValueError`` for an interval that
    is not positive or a duration that is negative, ``StateError`` for times outside
    :func:`check_time`'s range or more than :data:`MAX_CYCLES` cycles."""
    check_time(start, "start")
    if not (math.isfinite(interval) and interval > 0):
        raise ValueError(f"the interval must be a positive number of seconds, not {interval!r}")
    if not (math.isfinite(duration) and duration >= 0):
        raise ValueError(f"the duration must be a non-negative number of seconds, not {duration!r}")
    check_time(start + duration, "start + duration")
    cycles = duration // interval + 1
    if cycles > MAX_CYCLES:
        raise StateError(
            f"a duration of {duration:g} s at one cycle every {interval:g} s is {cycles:.0f} "
            f"cycles; at most {MAX_CYCLES:,} may run (use a longer interval)"
        )
    return int(cycles)


def simulate(
    loaded: Loaded,
    *,
    start: float,
    duration: float,
    interval: Optional[float] = None,
    state: Optional[str | os.PathLike] = None,
    seed: Optional[int] = None,
    job_duration: float = 3600.0,
    factors: Optional[Mapping[str, float]] = None,
    progress: Optional[Callable[[int, int], None]] = None,
    allow_clock_skew: bool = False,
    fresh_state: bool = False,
    out: Optional[str | os.PathLike] = None,
    plots: bool = False,
) -> Simulation:
    """Negotiation cycles every ``interval`` seconds (default ``NEGOTIATOR_INTERVAL``) from
    ``start`` to ``start + duration`` inclusive, with the accountant at ``state`` (in memory
    when None).  Jobs run ``SimJobDuration`` seconds (default ``job_duration``); ``seed``
    seeds ``random()`` in those durations; ``factors`` sets priority factors before the
    first cycle; ``progress(done, total)`` is called after each cycle.  Returns the
    :class:`~matchmaker.simulate.Simulation` (its rows; ``.to_frame()`` with pandas).

    With ``out``, ``series.csv``, ``series.json`` (and with ``plots`` the figures) replace
    the previous run's files in that directory together (:mod:`matchmaker.simulate.outputs`).

    The order of effects (docs/reliability.md): the directory ``out`` and the clock are
    checked before the first cycle (``start`` must not be earlier than the store's last
    update unless ``allow_clock_skew``, or ``fresh_state``: the run then starts from an empty
    store, and its result replaces the store's contents); the whole run is one store transaction, and the
    store is written only after the outputs are in place.  Any failure, the outputs' or the
    store's, leaves both the store and the previous outputs as they were."""
    step = float(interval if interval is not None else loaded.settings.interval)
    cycles = cycle_count(start, duration, step)
    if out is not None:
        principals = len({j.submitter for j in loaded.pool.jobs} | {s.customer for s in loaded.pool.slots})
        check_directory(out, needed=estimated_size(cycles, principals, plots))
    acct = open_accountant(str(state) if state is not None else ":memory:", loaded.settings)
    try:
        if not fresh_state:
            acct.check_clock(start, allow_skew=allow_clock_skew)
        staged: Optional[StagedOutputs] = None
        try:
            with acct.transaction():
                if fresh_state:
                    acct.clear()
                _set_factors(acct, factors or {})
                sim = run_simulation(
                    loaded.pool,
                    loaded.settings,
                    acct,
                    start=start,
                    duration=duration,
                    interval=step,
                    job_duration=job_duration,
                    seed=seed,
                    progress=progress,
                )
                if out is not None:
                    staged = StagedOutputs.write(sim, out, plots=plots)
                    staged.swap_in()
        except BaseException:
            if staged is not None:
                staged.roll_back()
            raise
        if staged is not None:
            staged.finish()
        return sim
    finally:
        acct.close()


def _set_factors(acct: Accountant, factors: Mapping[str, float]) -> None:
    for name, value in factors.items():
        try:
            check_edit(acct, "setfactor", name, value)
        except ValueError as exc:
            raise StateError(str(exc)) from None
        acct.set_factor(name, value)


def analyze(loaded: Loaded, *, now: float, state: Optional[str | os.PathLike] = None) -> PoolView:
    """The cycle ``negotiate`` would run at ``now``, kept for the ``analyze`` reports
    (:mod:`matchmaker.analyze`); the store at ``state`` is only read."""
    check_time(now, "now")
    return prepare(loaded.pool, loaded.settings, now, str(state) if state is not None else None)


def lint(
    config: str | os.PathLike,
    slots: Optional[str | os.PathLike] = None,
    jobs: Optional[str | os.PathLike] = None,
    *,
    now: Optional[float] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> LintReport:
    """The findings of ``matchmaker lint`` (docs/lint.md): the configuration's, and with
    ``slots`` and ``jobs`` (both or neither) the pool's.  A configuration that cannot be
    read is a ``config-error`` finding; an ad file that cannot be read raises
    ``ClassAdError``.  ``environ`` stands for the process environment (``_CONDOR_*``);
    ``now`` fixes the clock of the clause checks."""
    if (slots is None) != (jobs is None):
        raise ValueError("lint needs both the slot and the job ads, or neither")
    review = check_config(str(config), None if environ is None else dict(environ))
    pool = None
    if slots is not None and jobs is not None:
        pool = load_pool(slots, jobs, **pool_options(review.settings or Settings.defaults()))
    return lint_review(review, pool, now)


def diff(
    config_a: str | os.PathLike,
    config_b: str | os.PathLike,
    slots: AdSource,
    jobs: AdSource,
    *,
    now: float,
    duration: Optional[float] = None,
    interval: Optional[float] = None,
    state: Optional[str | os.PathLike] = None,
    seed: Optional[int] = None,
    job_duration: float = 3600.0,
) -> CycleDiff | SeriesDiff:
    """What changes when configuration B replaces A over the same ads (docs/diff.md).

    Without ``duration``: one cycle at ``now`` under each (as :func:`analyze` prepares it;
    the store at ``state`` is only read), compared as a :class:`CycleDiff`.  With
    ``duration``: two simulations from ``now`` (``interval`` defaults to A's
    ``NEGOTIATOR_INTERVAL``, used for both so the cycles line up; each starts from an
    empty accountant), compared as a :class:`SeriesDiff`.  The ad sources may be pipes or
    standard input: they are read once (:func:`~matchmaker.pool.ads.rereadable`)."""
    slot_source, job_source = rereadable(slots), rereadable(jobs)
    a = load(config_a, slot_source(), job_source())
    b = load(config_b, slot_source(), job_source())
    warnings = [f"A: {w}" for w in a.warnings] + [f"B: {w}" for w in b.warnings]
    result: CycleDiff | SeriesDiff
    if duration is None:
        result = cycle_diff(analyze(a, now=now, state=state), analyze(b, now=now, state=state))
    else:
        step = float(interval if interval is not None else a.settings.interval)
        runs = [
            simulate(x, start=now, duration=duration, interval=step, seed=seed, job_duration=job_duration)
            for x in (a, b)
        ]
        result = series_diff(runs[0], runs[1])
        warnings += [f"{side}: {w}" for side, run in zip("AB", runs) for w in run.warnings]
    result.warnings = list(dict.fromkeys(warnings))
    return result


__all__ = [
    "MAX_TIME",
    "Loaded",
    "analyze",
    "check_limits",
    "check_time",
    "diff",
    "lint",
    "load",
    "load_ads",
    "negotiate",
    "pool_options",
    "settings_from",
    "simulate",
]
