"""``matchmaker lint`` and ``matchmaker diff``: a policy's mistakes, and what it changes.

    matchmaker lint --config FILE [--slots FILE --jobs FILE] [--now EPOCH] [--json] [--strict]
    matchmaker diff --config A --config B --slots FILE --jobs FILE [--now EPOCH] [--state DB]
                    [--duration SPAN [--interval SPAN] [--seed N] [--out DIR [--plot]]] [--json]

``lint`` prints one line per finding, ``file:line:col: severity: message [code]``
(docs/lint.md), and exits 0 when clean, 1 when there are errors (with ``--strict``
also warnings), 2 on usage errors.  ``diff`` prints what changes when configuration B replaces A, for
one cycle or, with ``--duration``, over two simulations (docs/diff.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
from pathlib import Path
from typing import Any, NoReturn, TextIO

from classad.cli_grammar import UsageError

from ..api import diff, lint
from ..review.cycle_diff import CycleDiff, format_cycle_diff
from ..review.series_diff import format_series_diff, write_diff_plots
from .arguments import epoch_time, parse_span, positive_span

PROG = "matchmaker"


def _mistake(command: str, text: str) -> NoReturn:
    """A command-line mistake of ``lint`` or ``diff``: one line, status 2."""
    raise UsageError(text, f"{PROG} {command}")


def cmd_lint(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if (args.slots is None) != (args.jobs is None):
        _mistake("lint", "--slots and --jobs go together")
    for path in (args.config, args.slots, args.jobs):
        if path is not None and (os.path.isdir(path) or not (path == "-" or os.path.exists(path))):
            _mistake("lint", f"{path}: no such file")
    report = lint(args.config, args.slots, args.jobs, now=args.now)
    if args.json:
        json.dump(report.to_json(), out, indent=2)
        out.write("\n")
    else:
        out.write(report.text())
    return report.exit_status(args.strict)


def cmd_diff(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if len(args.config) != 2:
        _mistake("diff", "give --config twice (A, then B)")
    if args.duration is None and (args.interval is not None or args.plot or args.seed is not None):
        _mistake("diff", "--interval, --seed and --plot need --duration")
    if args.plot and not args.out:
        _mistake("diff", "--plot needs --out DIR")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        _mistake(
            "diff",
            "--plot needs matplotlib, which is not installed; install the simulate extra "
            "(pip install '.[simulate]' from a checkout)",
        )
    if args.duration is not None and args.state is not None:
        _mistake("diff", "--state is for one cycle; simulations start from an empty accountant")
    now = time.time() if args.now is None else args.now
    a, b = args.config
    result = diff(
        a,
        b,
        args.slots,
        args.jobs,
        now=now,
        duration=args.duration,
        interval=args.interval,
        state=args.state,
        seed=args.seed,
    )
    for w in result.warnings:
        err.write(f"{PROG}: {w}\n")
    if args.out and not isinstance(result, CycleDiff):
        directory = Path(args.out)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "diff.json").write_text(json.dumps(result.to_json(), indent=2) + "\n")
        if args.plot:
            write_diff_plots(result, directory)
    if args.json:
        json.dump(result.to_json(), out, indent=2)
        out.write("\n")
    elif isinstance(result, CycleDiff):
        out.write(format_cycle_diff(result, a, b))
    else:
        out.write(format_series_diff(result, a, b))
    return 0


def register(subparsers: Any) -> None:
    """Add ``lint`` and ``diff`` to the ``matchmaker`` command."""
    li = subparsers.add_parser("lint", help="find a configuration's mistakes (and the pool's) before deploying it")
    li.add_argument("--config", required=True, help="negotiator configuration (HTCondor syntax)")
    li.add_argument("--slots", help="slot ads: also check attribute names and clauses against them")
    li.add_argument("--jobs", help="job ads (with --slots)")
    li.add_argument("--now", type=epoch_time, help="the clock of the clause checks, seconds since the epoch")
    li.add_argument("--json", action="store_true", help="print the findings as a JSON list")
    li.add_argument("--strict", action="store_true", help="warnings fail the run too (exit 1)")
    li.set_defaults(run=cmd_lint)
    d = subparsers.add_parser("diff", help="what changes when configuration B replaces A, for one cycle or over time")
    d.add_argument("--config", required=True, action="append", help="configuration A, then (again) B")
    d.add_argument("--slots", required=True, help="slot ads")
    d.add_argument("--jobs", required=True, help="job ads")
    d.add_argument(
        "--now", type=epoch_time, help="the cycle's (or the simulations' start) time, seconds since the epoch"
    )
    d.add_argument("--state", help="accountant database (SQLite), read only, for the one-cycle diff")
    d.add_argument("--duration", type=parse_span, help="simulate this long under each configuration (e.g. 48h)")
    d.add_argument("--interval", type=positive_span, help="time between cycles (default: A's NEGOTIATOR_INTERVAL)")
    d.add_argument("--seed", type=int, help="seed for random() in SimJobDuration")
    d.add_argument("--out", help="with --duration: directory for diff.json (and the plots)")
    d.add_argument("--plot", action="store_true", help="draw A against B into --out")
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(run=cmd_diff)


__all__ = ["register"]
