"""Many simulations at once: a sweep of variants over Dask ``distributed``.

:func:`sweep` takes the base inputs of :func:`matchmaker.simulate`, the variants (a TOML
sweep file, :mod:`.spec`, and/or ``vary`` axes), runs each variant's simulation on a
Dask cluster (:mod:`.engine`; an embedded ``LocalCluster`` by default) and returns a
:class:`~.result.SweepResult`.  Each variant's rows equal those of ``simulate`` run
alone on that variant, whatever the number of workers.

The package sits above :mod:`matchmaker.api` (it builds on the public ``simulate``)
and below the command line.  Dask is imported only when a sweep runs; pandas only
for DataFrames; pyarrow only to write Parquet; matplotlib only for the figures.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

from ..simulate.atomic import write_atomically
from .engine import dask_client, run_tasks
from .plan import Plan, Times, make_plan, read_config
from .result import SweepResult
from .spec import COMMAND_LINE, SweepError, Variant, combine, read_sweep_file, vary_axes
from .store import read_parts, write_part, write_table, write_variants
from .worker import Outcome

Progress = Callable[[Outcome, int, int], None]


def variants_of(
    config: Any,
    sweep_file: Optional[str | os.PathLike] = None,
    vary: Optional[Mapping[str, Sequence[Any]]] = None,
    vary_source: str = COMMAND_LINE,
) -> list[Variant]:
    """The variants of a sweep file and ``vary`` axes (their product), checked against
    the base configuration (a :class:`~matchmaker.config.language.Config`)."""
    explicit, axes = read_sweep_file(sweep_file, config) if sweep_file is not None else ([], [])
    axes = axes + vary_axes(vary or {}, config, vary_source)
    if not explicit and not axes:
        raise SweepError("nothing to sweep: give a sweep file or --vary", file=COMMAND_LINE)
    return combine(explicit, axes)


def sweep(
    config: str | os.PathLike,
    slots: str | os.PathLike,
    jobs: str | os.PathLike,
    *,
    start: float,
    duration: float,
    sweep_file: Optional[str | os.PathLike] = None,
    vary: Optional[Mapping[str, Sequence[Any]]] = None,
    interval: Optional[float] = None,
    job_duration: float = 3600.0,
    seed: Optional[int] = None,
    factors: Optional[Mapping[str, float]] = None,
    out: Optional[str | os.PathLike] = None,
    resume: bool = False,
    client: Any = None,
    scheduler: Optional[str] = None,
    workers: Optional[int] = None,
    progress: Optional[Progress] = None,
) -> SweepResult:
    """Simulate every variant of ``sweep_file`` and ``vary`` (``{knob: [values]}``, also
    ``seed`` and ``jobs``) over the base ``config``, ``slots`` and ``jobs``, with the times,
    ``seed`` and ``factors`` of :func:`matchmaker.simulate`.

    Runs on ``client`` (a ``distributed.Client``), on the cluster at ``scheduler``, or on
    an embedded ``LocalCluster`` of ``workers`` processes (default one per core).  With
    ``out``, each variant is stored as it finishes and the tables are written at the end
    (:mod:`.store`); ``resume`` takes the variants already stored there.  ``progress(outcome,
    done, total)`` hears each finished variant.  A failing variant is in the result with
    its error; bad sweep input raises :class:`SweepError` before anything runs."""
    base = read_config(config)
    variants = variants_of(base, sweep_file, vary, "<vary>")
    plan = make_plan(
        base,
        str(config),
        str(slots),
        str(jobs),
        variants,
        Times(start, duration, interval, job_duration),
        seed=seed,
        factors=factors,
    )
    return run_plan(
        plan, out=out, resume=resume, client=client, scheduler=scheduler, workers=workers, progress=progress
    )


def run_plan(
    plan: Plan,
    *,
    out: Optional[str | os.PathLike] = None,
    resume: bool = False,
    client: Any = None,
    scheduler: Optional[str] = None,
    workers: Optional[int] = None,
    progress: Optional[Progress] = None,
) -> SweepResult:
    """Run a prepared :class:`Plan` (see :func:`sweep`)."""
    if resume and out is None:
        raise SweepError("resuming needs the output directory of the sweep", file=COMMAND_LINE)
    by_key = {t.key: t.variant for t in plan.tasks}
    done: dict[str, Outcome] = {o.key: o for o in plan.failed}
    if resume and out is not None:
        done.update(read_parts(out, by_key))
    total = len(plan.order)
    if progress is not None:
        for o in done.values():
            progress(o, len(done), total)

    def finished(outcome: Outcome) -> None:
        done[outcome.key] = outcome
        if out is not None and outcome.ok:
            write_part(out, outcome)
        if progress is not None:
            progress(outcome, len(done), total)

    todo = [t for t in plan.tasks if t.key not in done]
    if todo:
        with dask_client(client, scheduler, workers) as c:
            run_tasks(c, plan.inputs, todo, finished)
    result = SweepResult([done[k] for k in plan.order])
    if out is not None:
        write_tables(result, out)
    return result


def write_tables(result: SweepResult, out: str | os.PathLike) -> list[Path]:
    """The tidy table, the summary and ``variants.csv`` into ``out``."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    files = [
        write_table(result.rows(), result.columns(), directory / "rows"),
        write_table(result.summary_rows(), result.summary_columns(), directory / "summary"),
        write_variants(directory, result.outcomes, result.parameters()),
    ]
    return files


def write_meta(out: str | os.PathLike, meta: Mapping[str, Any]) -> None:
    """``sweep.json``: the sweep's own parameters (what ``--resume`` reuses)."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    write_atomically(directory / "sweep.json", lambda fh: json.dump(dict(meta), fh, indent=1))


__all__ = [
    "Outcome",
    "Plan",
    "SweepError",
    "SweepResult",
    "Times",
    "Variant",
    "make_plan",
    "read_config",
    "run_plan",
    "sweep",
    "variants_of",
    "write_meta",
    "write_tables",
]
