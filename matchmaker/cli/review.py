"""``matchmaker lint``: a policy's mistakes before it is deployed.

    matchmaker lint --config FILE [--slots FILE --jobs FILE] [--now EPOCH] [--json] [--strict]

``lint`` prints one line per finding, ``file:line:col: severity: message [code]``
(docs/lint.md), and exits 0 when clean, 1 when there are errors (with ``--strict``
also warnings), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any, TextIO

from ..api import lint

PROG = "matchmaker"


def _usage(err: TextIO, message: str) -> int:
    err.write(f"{PROG}: error: {message}\n")
    return 2


def cmd_lint(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if (args.slots is None) != (args.jobs is None):
        return _usage(err, "lint: --slots and --jobs go together")
    for path in (args.config, args.slots, args.jobs):
        if path is not None and not os.path.isfile(path):
            return _usage(err, f"lint: {path}: no such file")
    report = lint(args.config, args.slots, args.jobs, now=args.now)
    if args.json:
        json.dump(report.to_json(), out, indent=2)
        out.write("\n")
    else:
        out.write(report.text())
    return report.exit_status(args.strict)


def register(subparsers: Any) -> None:
    """Add ``lint`` to the ``matchmaker`` command."""
    li = subparsers.add_parser("lint", help="find a configuration's mistakes (and the pool's) before deploying it")
    li.add_argument("--config", required=True, help="negotiator configuration (HTCondor syntax)")
    li.add_argument("--slots", help="slot ads: also check attribute names and clauses against them")
    li.add_argument("--jobs", help="job ads (with --slots)")
    li.add_argument("--now", type=float, help="the clock of the clause checks, seconds since the epoch")
    li.add_argument("--json", action="store_true", help="print the findings as a JSON list")
    li.add_argument("--strict", action="store_true", help="warnings fail the run too (exit 1)")
    li.set_defaults(run=cmd_lint)


__all__ = ["register"]
