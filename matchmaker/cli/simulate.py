"""``matchmaker simulate``: negotiation cycles over virtual time, with series and plots.

    matchmaker simulate --config FILE --slots FILE --jobs FILE --duration 48h [--start EPOCH]
                        [--interval 5m] [--state DB [--allow-clock-skew | --fresh-state]] [--seed N] [--job-duration 1h]
                        [--setfactor NAME VALUE] [--out DIR] [--plot] [--json] [--no-progress]

A thin layer over :func:`matchmaker.api.simulate`: it prints a summary per submitter
(and group) at the end; the API writes ``series.csv`` and ``series.json`` into ``--out``,
and with ``--plot`` the PNG figures next to them, replacing the previous run's files
together.  A progress bar (rich) appears on stderr
when it is a terminal and the run takes more than a second.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from typing import Any, TextIO

from classad.cli_grammar import UsageError

from ..api import load, simulate
from .arguments import (
    add_pool_sources,
    add_run_options,
    epoch_time,
    parse_span,
    pool_sources,
    positive_span,
    set_factors,
)
from .progress import ProgressBar, wanted

PROG = "matchmaker"


def summary(sim: Any) -> dict[str, Any]:
    """The last cycle's row of every submitter and group, with the run's parameters."""
    last = sim.rows[-1]["cycle"] if sim.rows else None
    final = [r for r in sim.rows if r["cycle"] == last]
    return {"meta": sim.meta(), "final": final, "warnings": sim.warnings}


def print_summary(sim: Any, out: TextIO) -> None:
    """A short table of the last cycle."""
    meta = sim.meta()
    out.write(
        f"Simulated {meta['duration'] / 3600:g} h in {meta['cycles']} cycles of {meta['interval']:g} s "
        f"over a pool of weight {meta['pool_weight']:g}.\n"
    )
    head = ("KIND", "NAME", "RUNNING", "IDLE", "PENDING", "DONE", "SHARE", "RUP", "EUP", "CHARGED (slot-h)")
    rows = [head]
    for r in summary(sim)["final"]:
        prio = ("-", "-") if r["rup"] is None else (f"{r['rup']:.3f}", f"{r['eup']:.3f}")
        rows.append(
            (
                r["kind"],
                r["name"],
                str(r["running"]),
                str(r["idle"]),
                str(r["pending"]),
                str(r["done"]),
                f"{100 * r['share']:.1f}%",
                *prio,
                f"{r['charged'] / 3600:.1f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for row in rows:
        out.write(
            "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip() + "\n"
        )


def cmd_simulate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.plot:
        _check_plotting(args)
    factors = set_factors(args)
    loaded = load(*pool_sources(args), allow_empty=args.allow_empty)
    for w in loaded.warnings:
        err.write(f"{PROG}: {w}\n")
    bar = ProgressBar(err, enabled=wanted(err, args.no_progress))
    try:
        sim = simulate(
            loaded,
            start=args.start if args.start is not None else time.time(),
            duration=args.duration,
            interval=args.interval,
            state=args.state,
            seed=args.seed,
            job_duration=args.job_duration,
            factors=factors,
            progress=bar,
            allow_clock_skew=args.allow_clock_skew,
            fresh_state=args.fresh_state,
            out=args.out,
            plots=args.plot,
        )
    finally:
        bar.close()
    for w in sim.warnings:  # includes the pool's own warnings
        err.write(f"{PROG}: {w}\n")
    if args.json:
        json.dump(summary(sim), out, indent=2)
        out.write("\n")
    else:
        print_summary(sim, out)
    return 0


def _check_plotting(args: argparse.Namespace) -> None:
    """``--plot`` is refused before any work when it cannot succeed: no ``--out``, or no
    matplotlib (the ``simulate`` extra)."""
    prog = f"{PROG} simulate"
    if not args.out:
        raise UsageError("--plot needs --out DIR", prog)
    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError(
            "--plot needs matplotlib, which is not installed; install the simulate extra "
            "(pip install '.[simulate]' from a checkout)",
            prog,
        )


def register(subparsers: Any) -> None:
    """Add the ``simulate`` subcommand."""
    s = subparsers.add_parser(
        "simulate",
        help="run negotiation cycles over virtual time",
        description="Run negotiation cycles over virtual time.",
    )
    add_pool_sources(s)
    s.add_argument("--duration", required=True, type=parse_span, help="virtual time to simulate (e.g. 48h)")
    s.add_argument("--start", type=epoch_time, help="virtual start time, seconds since the epoch (default: now)")
    s.add_argument(
        "--interval", type=positive_span, help="time between cycles (default: NEGOTIATOR_INTERVAL of the configuration)"
    )
    s.add_argument(
        "--state",
        help="accountant database (SQLite; default: in memory); written once, when the "
        "whole run and its outputs succeeded",
    )
    start_over = s.add_mutually_exclusive_group()
    start_over.add_argument(
        "--allow-clock-skew",
        action="store_true",
        help="accept a --start earlier than the state's last update (the interval restarts; "
        "hours already charged are charged again)",
    )
    start_over.add_argument(
        "--fresh-state",
        action="store_true",
        help="start from an empty accountant and replace what --state holds with this run's "
        "result (its earlier records are lost)",
    )
    s.add_argument("--seed", type=int, help="seed for random() in SimJobDuration")
    add_run_options(s, "priority factor of a submitter before the first cycle (repeatable)")
    s.add_argument("--out", help="directory for series.csv, series.json (and the plots)")
    s.add_argument(
        "--plot",
        action="store_true",
        help="also draw PNG plots into --out (needs matplotlib: pip install '.[simulate]')",
    )
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    s.set_defaults(run=cmd_simulate)


__all__ = ["parse_span", "print_summary", "register", "summary"]
