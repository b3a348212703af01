"""``matchmaker analyze``: why a job, a submitter's autoclusters or a slot do (not) match.

    matchmaker analyze --config C --slots S --jobs J [--state DB] [--now T]
                       [--job C.P | --submitter NAME | --slot NAME] [--json]

Without a selection every submitter's autoclusters are reported.  ``--state`` is read,
never written.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, TextIO

from classad.errors import ClassAdError

from ..analyze import analyze_job, analyze_slot, analyze_submitter
from ..analyze.render import job_json, job_text, slot_json, slot_text
from ..api import analyze, load
from .arguments import add_pool_sources, epoch_time, pool_sources


def cmd_analyze(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    loaded = load(*pool_sources(args), allow_empty=args.allow_empty)
    for w in loaded.warnings:
        err.write(f"matchmaker: {w}\n")
    now = args.now if args.now is not None else time.time()  # the CLI is the edge: it may read the clock
    view = analyze(loaded, now=now, state=args.state)
    try:
        if args.slot is not None:
            reports: list[Any] = [analyze_slot(view, args.slot)]
        elif args.job is not None:
            reports = [analyze_job(view, args.job)]
        elif args.submitter is not None:
            reports = analyze_submitter(view, args.submitter)
        else:
            reports = [r for name in sorted(view.start.queues) for r in analyze_submitter(view, name)]
    except KeyError as exc:
        what = "slot" if args.slot else "job" if args.job else "submitter with idle jobs"
        where = args.slots if args.slot else args.jobs
        raise ClassAdError(f"no {what} {exc.args[0]!r}", file=where) from None
    if args.json:
        docs = [slot_json(r) if args.slot else job_json(r) for r in reports]
        json.dump({"slots" if args.slot else "jobs": docs}, out, indent=2)
        out.write("\n")
    else:
        out.write("\n".join(slot_text(r) if args.slot else job_text(r) for r in reports))
    return 0


def register(subparsers: Any) -> None:
    """Add ``analyze`` to the ``matchmaker`` command."""
    a = subparsers.add_parser(
        "analyze",
        help="why jobs or slots do (not) match, clause by clause",
        description="Why jobs or slots do (not) match, clause by clause.",
    )
    add_pool_sources(a)
    a.add_argument("--state", help="accountant database (SQLite), read only")
    a.add_argument("--now", type=epoch_time, help="the cycle's time, seconds since the epoch (default: the clock)")
    which = a.add_mutually_exclusive_group()
    which.add_argument("--job", metavar="C.P", help="one job")
    which.add_argument("--submitter", metavar="NAME", help="each autocluster of one submitter")
    which.add_argument("--slot", metavar="NAME", help="one slot: which requests it accepts, and why not")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.set_defaults(run=cmd_analyze)


__all__ = ["register"]
