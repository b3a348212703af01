"""``matchmaker sweep``: many simulations at once, on an embedded or a given Dask cluster.

    matchmaker sweep --config FILE --slots FILE --jobs FILE --duration 24h --out DIR
                     [--sweep SWEEP.toml] [--vary KNOB=v1,v2,...]... [--start EPOCH] [--interval 5m]
                     [--seed N] [--job-duration 1h] [--setfactor NAME VALUE]...
                     [--scheduler ADDRESS | --workers N] [--resume] [--plot] [--json] [--no-progress]

A thin layer over :func:`matchmaker.sweeps.sweep`: the base inputs are ``simulate``'s,
the variants come from the sweep file and the ``--vary`` axes.  It prints one line per
variant (utilisation, fairness, waits, preemptions), writes the tables into ``--out``
(see docs/sweep.md) and, with ``--plot``, the comparison figures.  Every failed
variant is one line on stderr and makes the exit status 1; the others complete.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import time
from pathlib import Path
from typing import Any, Optional, TextIO

from classad.errors import ClassAdError

from ..sweeps import make_plan, read_config, run_plan, variants_of, write_meta
from ..sweeps.plan import Times
from ..sweeps.result import SweepResult
from ..sweeps.spec import parse_vary
from .arguments import add_run_options, epoch_time, parse_span, positive_span, set_factors
from .progress import ProgressBar, wanted

PROG = "matchmaker"


def _start(args: argparse.Namespace) -> float:
    """``--start``; when resuming without it, the start of the sweep being resumed; else now."""
    if args.start is not None:
        return float(args.start)
    meta = Path(args.out) / "sweep.json"
    if args.resume and meta.is_file():
        try:
            return float(json.loads(meta.read_text(encoding="utf-8"))["start"])
        except (ValueError, KeyError, TypeError):
            raise ClassAdError("not the record of a sweep (no start time); give --start", file=str(meta)) from None
    return time.time()


def cmd_sweep(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _need(
        "distributed", "matchmaker sweep needs Dask: pip install 'dask[distributed]' (or the project's [sweep] extra)"
    )
    if args.plot:
        _need("matplotlib", "--plot needs matplotlib: pip install matplotlib (or the project's [simulate] extra)")
    factors = set_factors(args)
    config = read_config(args.config)
    variants = variants_of(config, args.sweep, parse_vary(args.vary or []))
    start = _start(args)
    plan = make_plan(
        config,
        args.config,
        args.slots,
        args.jobs,
        variants,
        Times(start, args.duration, args.interval, args.job_duration),
        seed=args.seed,
        factors=factors,
    )
    write_meta(
        args.out,
        dict(
            start=start,
            duration=args.duration,
            interval=args.interval,
            job_duration=args.job_duration,
            seed=args.seed,
            factors=factors,
            variants=[v.name for v in variants],
        ),
    )
    bar = ProgressBar(err, enabled=wanted(err, args.no_progress), label="variants")
    try:
        result = run_plan(
            plan,
            out=args.out,
            resume=args.resume,
            scheduler=args.scheduler,
            workers=args.workers,
            progress=lambda _o, done, total: bar(done, total),
        )
    finally:
        bar.close()
    for o in result.outcomes:
        for w in dict.fromkeys(o.warnings):
            err.write(f"{PROG}: variant {o.variant.name}: {w}\n")
        if not o.ok:
            err.write(f"{PROG}: variant {o.variant.name}: {o.error}\n")
    if args.plot:
        from ..sweeps.plots import write_plots

        write_plots(result, args.out)
    if args.json:
        json.dump(_json(result), out, indent=2)
        out.write("\n")
    else:
        print_summary(result, out)
    return 0 if not result.failed else 1


def _need(module: str, message: str) -> None:
    """Refuse at once, before any work, when an optional library is missing."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise ClassAdError(message, file="<command line>") from None


def _json(result: SweepResult) -> dict[str, Any]:
    return dict(
        variants=[
            dict(key=o.key, name=o.variant.name, parameters=o.variant.parameters(), status=o.status, error=o.error)
            for o in result.outcomes
        ],
        summary=[{k: _plain(v) for k, v in r.items()} for r in result.summary_rows()],
    )


def _plain(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _cell(v: Optional[float], scale: float = 1.0, digits: int = 2) -> str:
    return "-" if v is None else f"{v * scale:.{digits}f}"


def print_summary(result: SweepResult, out: TextIO) -> None:
    """One line per variant: its pool's figures, or FAILED."""
    pools = {r["variant"]: r for r in result.summary_rows() if r["kind"] == "pool"}
    head = ("VARIANT", "STATUS", "UTILISATION", "JAIN MEAN", "JAIN MIN", "WAIT MEAN (h)", "WAIT P95 (h)", "PREEMPTIONS")
    rows = [head]
    for o in result.outcomes:
        p = pools.get(o.variant.name)
        if p is None:
            rows.append((o.variant.name, "failed", "-", "-", "-", "-", "-", "-"))
            continue
        rows.append(
            (
                o.variant.name,
                "done",
                f"{100 * p['utilisation']:.1f}%",
                _cell(p["jain_mean"], digits=3),
                _cell(p["jain_min"], digits=3),
                _cell(p["wait_mean"], 1 / 3600),
                _cell(p["wait_p95"], 1 / 3600),
                str(p["preemptions"]),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for row in rows:
        out.write(
            "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip() + "\n"
        )


def _vary_option(text: str) -> str:
    """``NAME=v1,v2,...`` (its values are checked against the knob table later)."""
    name, eq, values = text.partition("=")
    if not eq or not name.strip() or not values.strip(", "):
        raise argparse.ArgumentTypeError(f"{text!r}: write NAME=value1,value2,...")
    return text


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of workers")
    return n


def register(subparsers: Any) -> None:
    """Add the ``sweep`` subcommand."""
    s = subparsers.add_parser(
        "sweep", help="run many simulations at once on Dask (variants of knobs, factors, seeds, job files)"
    )
    s.add_argument("--config", required=True, help="base negotiator configuration (HTCondor syntax)")
    s.add_argument("--slots", required=True, help="slot ads")
    s.add_argument("--jobs", required=True, help="base job ads")
    s.add_argument("--duration", required=True, type=parse_span, help="virtual time to simulate (e.g. 24h)")
    s.add_argument("--out", required=True, help="directory for the results (each variant as it finishes)")
    s.add_argument("--sweep", help="sweep file (TOML): [axes] and/or [[variant]] tables")
    s.add_argument(
        "--vary",
        action="append",
        metavar="KNOB=V1,V2,...",
        type=_vary_option,
        help="an axis of values of a knob (also seed=..., jobs=...); repeatable, crossed",
    )
    s.add_argument(
        "--start",
        type=epoch_time,
        help="virtual start time, seconds since the epoch (default: now, or the resumed sweep's)",
    )
    s.add_argument(
        "--interval",
        type=positive_span,
        help="time between cycles (default: NEGOTIATOR_INTERVAL of each variant's configuration)",
    )
    s.add_argument("--seed", type=int, help="seed of every variant that does not set its own")
    add_run_options(s, "priority factor set before the first cycle in every variant (repeatable)")
    where = s.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on this Dask scheduler (tcp://host:8786) instead of an embedded cluster",
    )
    where.add_argument(
        "--workers", type=_workers, help="worker processes of the embedded cluster (default: one per core)"
    )
    s.add_argument("--resume", action="store_true", help="keep the variants already finished in --out")
    s.add_argument("--plot", action="store_true", help="also draw the comparison figures (PNG) into --out")
    s.add_argument("--json", action="store_true", help="print the variants and the summary as JSON")
    s.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    s.set_defaults(run=cmd_sweep)


__all__ = ["print_summary", "register"]
