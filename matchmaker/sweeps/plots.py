"""Comparison figures of a sweep: one metric per figure, one line per variant.

:func:`write_plots` draws, over hours since the start, the pool's utilisation
(``utilisation.png``), Jain's fairness index (``fairness.png``), idle jobs
(``idle.png``) and preemptions so far (``preemptions.png``), plus a bar chart of
each variant's mean and 95th-percentile wait (``wait.png``).  Drawn on matplotlib's
Agg canvas, as :mod:`matchmaker.simulate.plots` draws a single run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

from ..simulate.plots import new_figure, save_figure
from .result import SweepResult
from .summary import summarise
from .worker import Outcome


def _pool_rows(o: Outcome) -> list[dict[str, Any]]:
    return [r for r in o.rows if r["kind"] == "pool"]


def _lines(
    result: SweepResult,
    title: str,
    ylabel: str,
    path: Path,
    series: Callable[[Outcome], tuple[list[float], list[Optional[float]]]],
) -> Path:
    fig, ax = new_figure(title, ylabel)
    for i, o in enumerate(result.finished):
        hours, values = series(o)
        ax.step(
            hours,
            [float("nan") if v is None else v for v in values],
            where="post",
            color=f"C{i % 10}",
            linestyle=("-", "--", ":", "-.")[(i // 10) % 4],
            label=o.variant.name,
        )
    return save_figure(fig, ax, path)


def plot_utilisation(result: SweepResult, path: Path) -> Path:
    """Claimed weight over the pool's weight, per cycle, in percent."""
    return _lines(
        result,
        "Pool utilisation (claimed slot weight)",
        "utilisation (%)",
        path,
        lambda o: ([r["hours"] for r in _pool_rows(o)], [100.0 * r["share"] for r in _pool_rows(o)]),
    )


def plot_fairness(result: SweepResult, path: Path) -> Path:
    """Jain's index over the submitters with queued jobs, per cycle."""
    fairness = result.fairness()
    return _lines(
        result,
        "Jain's fairness index of shares against targets (1 = fair)",
        "Jain's index",
        path,
        lambda o: ([h for _, h, _ in fairness[o.variant.name]], [j for _, _, j in fairness[o.variant.name]]),
    )


def plot_idle(result: SweepResult, path: Path) -> Path:
    """Idle jobs in the queue after each cycle."""
    return _lines(
        result,
        "Idle jobs after each cycle",
        "idle jobs",
        path,
        lambda o: ([r["hours"] for r in _pool_rows(o)], [r["idle"] for r in _pool_rows(o)]),
    )


def plot_preemptions(result: SweepResult, path: Path) -> Path:
    """Preemptions since the start."""

    def cumulative(o: Outcome) -> tuple[list[float], list[Optional[float]]]:
        total, values = 0, []  # type: tuple[int, list[Optional[float]]]
        for r in _pool_rows(o):
            total += r["preempted"]
            values.append(float(total))
        return [r["hours"] for r in _pool_rows(o)], values

    return _lines(result, "Preemptions since the start", "preemptions", path, cumulative)


def plot_waits(result: SweepResult, path: Path) -> Path:
    """Mean and 95th-percentile wait of each variant, in hours (bars)."""
    fig, ax = new_figure("Wait before each job start", "wait (hours)")
    ax.set_xlabel("variant")
    names, means, p95s = [], [], []
    for o in result.finished:
        pool = summarise(o.rows, o.waits, o.idle_at_end)[0]
        names.append(o.variant.name)
        means.append((pool["wait_mean"] or 0.0) / 3600.0)
        p95s.append((pool["wait_p95"] or 0.0) / 3600.0)
    xs = list(range(len(names)))
    ax.bar([x - 0.2 for x in xs], means, width=0.4, label="mean")
    ax.bar([x + 0.2 for x in xs], p95s, width=0.4, label="95th percentile")
    ax.set_xticks(xs, names, rotation=30, ha="right", fontsize="small")
    return save_figure(fig, ax, path)


def write_plots(result: SweepResult, directory: str | os.PathLike) -> list[Path]:
    """Every comparison figure into ``directory``; returns the files."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    return [
        plot_utilisation(result, out / "utilisation.png"),
        plot_fairness(result, out / "fairness.png"),
        plot_idle(result, out / "idle.png"),
        plot_preemptions(result, out / "preemptions.png"),
        plot_waits(result, out / "wait.png"),
    ]


__all__ = ["plot_fairness", "plot_idle", "plot_preemptions", "plot_utilisation", "plot_waits", "write_plots"]
