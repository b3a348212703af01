"""``matchmaker``: run one negotiation cycle, or show and edit user priorities and quotas.

    matchmaker negotiate --config FILE --slots FILE --jobs FILE [--state DB] [--now EPOCH] [--json]
    matchmaker userprio --state DB [--json] [--setprio NAME VALUE] [--setfactor NAME VALUE]
                        [--resetusage NAME] [--delete NAME] [--now EPOCH]
    matchmaker userprio --state DB --quotas [--allusers] [--json]

A thin layer over the library: argument parsing, one call per phase, printing.
With ``--state`` the accountant is loaded, aged to ``--now``, brought up to date
with the claimed slots, charged for the cycle's matches and saved together with
the cycle's group quota table, all in one transaction
(:func:`matchmaker.negotiate`): a failure leaves the database as it
was.  ``userprio --quotas`` prints that stored table, as ``condor_userprio
-quotas`` prints what the negotiator last computed, so it needs no ``--config``.
Errors print one line ``matchmaker: <file>:<line>: <kind>: <message>`` on stderr
and exit with 1; warnings print ``matchmaker: <file>:<line>: warning: <message>``
and do not change the exit status.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from typing import Any, Optional, Sequence, TextIO

from classad.errors import ClassAdError

from ..accounting.reports import (
    format_priorities,
    format_quotas,
    priorities_json,
    priority_report,
    quota_report,
    quotas_json,
    surplus_policy,
    user_count,
)
from ..accounting.store import Accountant
from ..api import load, negotiate
from ..cycle.negotiator import CycleResult
from ..errors import StateError
from . import policies

PROG = "matchmaker"


# ---- printing ------------------------------------------------------------------------------


def _num(x: float) -> Optional[float]:
    return None if math.isinf(x) or math.isnan(x) else x


def result_json(result: CycleResult) -> dict[str, Any]:
    """The ``--json`` document of a cycle; with group quotas also a ``groups`` list and
    each match's group and negotiating pass."""
    grouped = bool(result.groups)
    matches = []
    for m in result.matches:
        row: dict[str, Any] = {"job": m.job, "submitter": m.submitter, "slot": m.slot, "reason": m.reason,
                               "preempted": m.preempted}
        if grouped:
            row.update(group=m.group, negotiating_group=m.negotiating_group, autoregroup=m.autoregroup)
        matches.append(row)
    doc: dict[str, Any] = {
        "matches": matches,
        "submitters": [{"name": s.name, "eup": s.eup, "limit": _num(s.limit), "matched": s.matched}
                       for s in result.submitters],
        "rejected": [{"job": r.job, "reason": r.reason} for r in result.rejected],
    }
    if grouped:
        doc["groups"] = [{"name": g.name, "quota": g.quota, "allocated": g.allocated, "usage": g.usage,
                          "matched": g.matched, "order": g.order, "config_quota": g.config_quota,
                          "subtree_quota": g.subtree_quota, "surplus": g.surplus, "requested": g.requested,
                          "sort_key": _num(g.sort_key)} for g in result.groups]
    return doc


def _table(rows: Sequence[Sequence[str]], out: TextIO, right: Sequence[int] = ()) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.write("  ".join(cells).rstrip() + "\n")


def _fmt(x: float) -> str:
    return "unlimited" if math.isinf(x) else f"{x:.2f}"


def print_result(result: CycleResult, out: TextIO) -> None:
    """The human-readable report: matches, submitters, groups (with quotas), rejected requests."""
    grouped = bool(result.groups)
    out.write(f"Matches: {len(result.matches)}\n")
    if result.matches:
        head = ("JOB", "SUBMITTER", "SLOT", "REASON", "PREEMPTS") + (("PASS",) if grouped else ())
        _table([head] + [(m.job, m.submitter, m.slot, m.reason, m.preempted or "-") +
                         ((m.negotiating_group + (" (autoregroup)" if m.autoregroup else ""),) if grouped else ())
                         for m in result.matches], out)
    out.write(f"\nSubmitters: {len(result.submitters)}\n")
    if result.submitters:
        _table([("SUBMITTER", "EUP", "LIMIT", "MATCHED")] +
               [(s.name, f"{s.eup:.2f}", _fmt(s.limit), str(s.matched)) for s in result.submitters],
               out, right=(1, 2, 3))
    if grouped:
        out.write(f"\nGroups: {len(result.groups)}\n")
        _table([("ORDER", "GROUP", "QUOTA", "SURPLUS", "REQUESTED", "ALLOCATED", "IN USE", "MATCHED")] +
               [(str(g.order), g.name, f"{g.quota:.2f}", g.surplus, f"{g.requested:g}", f"{g.allocated:.2f}",
                 f"{g.usage:g}", str(g.matched)) for g in result.groups], out, right=(0, 2, 4, 5, 6, 7))
    if result.rejected:
        out.write(f"\nRejected: {len(result.rejected)}\n")
        _table([("JOB", "REASON")] + [(r.job, r.reason) for r in result.rejected], out)


# ---- commands --------------------------------------------------------------------------------


def _now(args: argparse.Namespace) -> float:
    return float(args.now) if args.now is not None else time.time()   # the CLI is the edge: it may


def cmd_negotiate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    loaded = load(args.config, args.slots, args.jobs)
    result = negotiate(loaded, now=_now(args), state=args.state)
    warnings = list(loaded.warnings) + result.warnings
    for w in warnings:
        err.write(f"{PROG}: {w}\n")
    if args.json:
        json.dump(result_json(result), out, indent=2)
        out.write("\n")
    else:
        print_result(result, out)
    return 0


def cmd_userprio(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if not os.path.exists(args.state):
        raise StateError("no such accountant database (run 'matchmaker negotiate --state' first)",
                         file=args.state)
    acct = Accountant.load(args.state)
    try:
        if args.quotas:
            return _show_quotas(acct, args, out)
        now = _now(args) if args.resetusage else 0.0
        with acct.transaction():
            for name, value in args.setprio or ():
                acct.set_priority(name, _float(value, "--setprio", args.state))
            for name, value in args.setfactor or ():
                acct.set_factor(name, _float(value, "--setfactor", args.state))
            for name in args.resetusage or ():
                acct.reset_usage(name, now)
            for name in args.delete or ():
                acct.delete(name)
        rows = priority_report(acct, all_users=True)
        last = acct.last_update_time
    finally:
        acct.close()
    if args.json:
        json.dump(priorities_json(rows, last), out, indent=2)
        out.write("\n")
    else:
        out.write(format_priorities(rows))
    return 0


def _show_quotas(acct: Accountant, args: argparse.Namespace, out: TextIO) -> int:
    """``userprio --quotas``: the last cycle's group quota table."""
    if args.setprio or args.setfactor or args.resetusage or args.delete:
        raise ClassAdError("--quotas only shows; run the edits without it", file=args.state)
    every = acct.group_quotas()
    rows = quota_report(acct, all_groups=args.allusers)
    doc = dict(last_update=acct.last_update_time, users=user_count(acct), policy=surplus_policy(every))
    if args.json:
        json.dump(quotas_json(rows, **doc), out, indent=2)
        out.write("\n")
    elif not every:
        out.write("No group quotas (the last cycle ran without GROUP_NAMES).\n")
    else:
        out.write(format_quotas(rows, **doc))
    return 0


def _float(text: str, option: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ClassAdError(f"{option}: {text!r} is not a number", file=where) from None
    if not math.isfinite(value):
        raise ClassAdError(f"{option}: {text!r} is not a finite number", file=where)
    return value


def error_line(exc: ClassAdError, config: Optional[str] = None) -> str:
    """``matchmaker: <file>:<line>: <kind>: <message>`` (a column goes into the message)."""
    file = exc.file or (config if exc.kind == "config" and config else "<input>")
    where = file if exc.line is None else f"{file}:{exc.line}"
    message = exc.message if exc.column is None else f"column {exc.column}: {exc.message}"
    return f"{PROG}: {where}: {exc.kind}: {' '.join(message.split())}"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands ``negotiate`` and ``userprio``)."""
    p = argparse.ArgumentParser(prog=PROG, description="HTCondor-style negotiation over ad files.")
    sub = p.add_subparsers(dest="command", required=True)
    n = sub.add_parser("negotiate", help="run one negotiation cycle")
    n.add_argument("--config", required=True, help="negotiator configuration (HTCondor syntax)")
    n.add_argument("--slots", required=True, help="slot ads, old (condor_status -l) format")
    n.add_argument("--jobs", required=True, help="job ads, old (condor_q -l) format")
    n.add_argument("--state", help="accountant database (SQLite); created if missing")
    n.add_argument("--now", type=float, help="the cycle's time, seconds since the epoch")
    n.add_argument("--json", action="store_true", help="print one JSON object")
    n.set_defaults(run=cmd_negotiate)
    u = sub.add_parser("userprio", help="show (and edit) user priorities, or show group quotas")
    u.add_argument("--state", required=True, help="accountant database (SQLite)")
    u.add_argument("--json", action="store_true")
    u.add_argument("--quotas", action="store_true",
                   help="the last cycle's group quotas (condor_userprio -quotas)")
    u.add_argument("--allusers", action="store_true",
                   help="with --quotas: also groups without demand or usage, and <none>")
    u.add_argument("--setprio", nargs=2, action="append", metavar=("NAME", "VALUE"))
    u.add_argument("--setfactor", nargs=2, action="append", metavar=("NAME", "VALUE"))
    u.add_argument("--resetusage", action="append", metavar="NAME")
    u.add_argument("--delete", action="append", metavar="NAME")
    u.add_argument("--now", type=float, help="time for --resetusage, seconds since the epoch")
    u.set_defaults(run=cmd_userprio)
    policies.register(u)
    return p


def main(argv: Optional[Sequence[str]] = None, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    """Entry point; returns the exit status (output to ``sys.stdout``/``sys.stderr`` by default)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    args = build_parser().parse_args(argv)
    try:
        return args.run(args, out, err)
    except ClassAdError as exc:
        err.write(error_line(exc, getattr(args, "config", None)) + "\n")
        return 1
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as cat does.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silences the final flush
        except OSError:
            pass
        return 1
    except OSError as exc:
        err.write(f"{PROG}: {exc.filename or '<system>'}: error: {exc.strerror or exc}\n")
        return 1
    except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback
        err.write(f"{PROG}: <internal>: error: {type(exc).__name__}: {exc} (please report this bug)\n")
        return 1

