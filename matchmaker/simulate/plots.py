"""PNG plots of a simulation with matplotlib, drawn off-screen (no display needed).

:func:`write_plots` draws three figures per kind of principal -- priorities (RUP solid,
EUP dashed), running jobs, and share of the pool (stacked) -- over hours since the
start: ``priorities.png``, ``running.png`` and ``shares.png`` for submitters, and with
group quotas ``group-priorities.png``, ``group-running.png`` and ``group-shares.png``.
The figures are built on matplotlib's Agg canvas directly, so no backend is selected
and nothing global is changed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .series import Simulation

WIDTH, HEIGHT, DPI = 10.0, 5.0, 100  # inches and dots per inch: 1000 x 500 pixels


def new_figure(title: str, ylabel: str) -> tuple[Any, Any]:
    """A titled figure and its axes over hours since the start, on the Agg canvas."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plots need matplotlib (pip install 'pyclassad[simulate]')") from None
    fig = Figure(figsize=(WIDTH, HEIGHT), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlabel("time since start (hours)")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def save_figure(fig: Any, ax: Any, path: Path) -> Path:
    """Write the figure as PNG (with a legend when lines are labelled); returns ``path``."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, format="png")
    return path


def plot_priorities(sim: Simulation, kind: str, path: Path) -> Path:
    """RUP (solid) and EUP (dashed) of every principal of ``kind`` over time."""
    fig, ax = new_figure(f"{kind.capitalize()} priorities (lower is better)", "priority")
    for i, name in enumerate(sim.names(kind)):
        hours = sim.column(name, "hours", kind)
        color = f"C{i % 10}"
        ax.plot(hours, sim.column(name, "rup", kind), color=color, label=f"{name} RUP")
        eup = sim.column(name, "eup", kind)
        if eup != sim.column(name, "rup", kind):
            ax.plot(hours, eup, color=color, linestyle="--", label=f"{name} EUP")
    return save_figure(fig, ax, path)


def plot_running(sim: Simulation, kind: str, path: Path) -> Path:
    """Running jobs of every principal of ``kind`` over time."""
    fig, ax = new_figure(f"Running jobs per {kind}", "running jobs")
    for name in sim.names(kind):
        ax.step(sim.column(name, "hours", kind), sim.column(name, "running", kind), where="post", label=name)
    return save_figure(fig, ax, path)


def plot_shares(sim: Simulation, kind: str, path: Path) -> Path:
    """Each principal's share of the pool's weight, stacked, over time."""
    fig, ax = new_figure(f"Share of the pool per {kind} (weighted slots claimed)", "share of the pool (%)")
    names = sim.names(kind)
    if names:
        hours = sim.column(names[0], "hours", kind)
        shares = [[100.0 * v for v in sim.column(n, "share", kind)] for n in names]
        ax.stackplot(hours, shares, labels=names, step="post", alpha=0.8)
    ax.set_ylim(0, 100)
    return save_figure(fig, ax, path)


def write_plots(sim: Simulation, directory: str | os.PathLike) -> list[Path]:
    """Draw every figure into ``directory`` (created if missing); returns the files."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for kind, prefix in (("submitter", ""), ("group", "group-")):
        if kind == "group" and not sim.names("group"):
            continue
        files.append(plot_priorities(sim, kind, out / f"{prefix}priorities.png"))
        files.append(plot_running(sim, kind, out / f"{prefix}running.png"))
        files.append(plot_shares(sim, kind, out / f"{prefix}shares.png"))
    return files


__all__ = ["new_figure", "plot_priorities", "plot_running", "plot_shares", "save_figure", "write_plots"]
