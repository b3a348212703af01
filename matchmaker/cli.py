"""``matchmaker``: run one negotiation cycle, or show and edit user priorities.

    matchmaker negotiate --config FILE --slots FILE --jobs FILE [--state DB] [--now EPOCH] [--json]
    matchmaker userprio --state DB [--json] [--setprio NAME VALUE] [--setfactor NAME VALUE]
                        [--resetusage NAME] [--delete NAME] [--now EPOCH]

A thin layer over the library: argument parsing, one call per phase, printing.
With ``--state`` the accountant is loaded, aged to ``--now``, brought up to date
with the claimed slots, charged for the cycle's matches and saved, all in one
transaction: a failure leaves the database as it was.  Errors print one line
``matchmaker: <file>:<line>: <kind>: <message>`` on stderr and exit with 1;
warnings print ``matchmaker: <file>:<line>: warning: <message>`` and do not
change the exit status.
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

from .accountant import Accountant, Claim
from .errors import StateError
from .groupmap import group_of_submitter, group_prio_factor
from .knobs import Knobs
from .negotiator import CycleResult, Settings, negotiate
from .pool import load_pool

PROG = "matchmaker"


class AccountantPriorities:
    """The accountant as the cycle's :class:`~matchmaker.negotiator.Priorities` (EUPs frozen)."""

    def __init__(self, acct: Accountant) -> None:
        self.acct = acct
        self._eup: dict[str, float] = {}

    def eup(self, name: str) -> float:
        if name not in self._eup:
            self._eup[name] = self.acct.eup(name)
        return self._eup[name]

    def floor(self, name: str) -> float:
        c = self.acct.get(name)
        return c.floor if c is not None else 0.0

    def ceiling(self, name: str) -> float:
        c = self.acct.get(name)
        return c.ceiling if c is not None else -1.0


def run_cycle(config: str, slots: str, jobs: str, state: Optional[str], now: float
              ) -> tuple[CycleResult, list[str]]:
    """Load everything, negotiate once, charge the accountant; returns the result and warnings."""
    knobs = Knobs.from_file(config)
    settings = Settings.from_knobs(knobs)
    tree = settings.group_tree
    group_of = (lambda name: group_of_submitter(name, tree)) if tree is not None else (lambda name: None)
    factor = (lambda name: group_prio_factor(name, tree)) if tree is not None else None
    pool = load_pool(slots, jobs, use_slot_weights=settings.use_slot_weights,
                     slot_weight_expr=settings.slot_weight_expr,
                     force_slot_weight=settings.force_slot_weight, uid_domain=settings.uid_domain)
    acct = Accountant.from_knobs(state if state is not None else ":memory:", knobs, group_factor=factor)
    try:
        with acct.transaction():
            acct.update_priorities(now)
            acct.sync_claims([Claim(s.name, s.customer, s.weight, group_of(s.customer),  # type: ignore[arg-type]
                                    start_time=now) for s in pool.slots if s.charged], now)
            usage = {c.name: c.weighted_resources_used for c in map(acct.get, acct.names())
                     if c is not None and not c.is_group}
            result = negotiate(pool, settings, AccountantPriorities(acct), now, usage=usage)
            for m in result.matches:
                acct.add_match(m.submitter, m.slot, m.weight, now, group=group_of(m.submitter))
    finally:
        acct.close()
    group_warnings = [f"{config}: warning: {w}" for w in (tree.warnings if tree is not None else ())]
    return result, group_warnings + result.warnings


# ---- printing ------------------------------------------------------------------------------


def _num(x: float) -> Optional[float]:
    return None if math.isinf(x) or math.isnan(x) else x


def result_json(result: CycleResult) -> dict[str, Any]:
    """The ``--json`` document of a cycle."""
    return {
        "matches": [{"job": m.job, "submitter": m.submitter, "slot": m.slot, "reason": m.reason,
                     "preempted": m.preempted} for m in result.matches],
        "submitters": [{"name": s.name, "eup": s.eup, "limit": _num(s.limit), "matched": s.matched}
                       for s in result.submitters],
        "rejected": [{"job": r.job, "reason": r.reason} for r in result.rejected],
    }


def _table(rows: Sequence[Sequence[str]], out: TextIO, right: Sequence[int] = ()) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.write("  ".join(cells).rstrip() + "\n")


def _fmt(x: float) -> str:
    return "unlimited" if math.isinf(x) else f"{x:.2f}"


def print_result(result: CycleResult, out: TextIO) -> None:
    """The human-readable report: matches, submitters, rejected requests."""
    out.write(f"Matches: {len(result.matches)}\n")
    if result.matches:
        _table([("JOB", "SUBMITTER", "SLOT", "REASON", "PREEMPTS")] +
               [(m.job, m.submitter, m.slot, m.reason, m.preempted or "-") for m in result.matches], out)
    out.write(f"\nSubmitters: {len(result.submitters)}\n")
    if result.submitters:
        _table([("SUBMITTER", "EUP", "LIMIT", "MATCHED")] +
               [(s.name, f"{s.eup:.2f}", _fmt(s.limit), str(s.matched)) for s in result.submitters],
               out, right=(1, 2, 3))
    if result.rejected:
        out.write(f"\nRejected: {len(result.rejected)}\n")
        _table([("JOB", "REASON")] + [(r.job, r.reason) for r in result.rejected], out)


def print_userprio(rows: list, out: TextIO) -> None:
    """A ``condor_userprio``-like table."""
    if not rows:
        out.write("No users.\n")
        return
    _table([("USER", "EFFECTIVE", "REAL", "FACTOR", "IN USE", "USAGE (HRS)", "FLOOR", "CEILING")] +
           [(r.name, f"{r.effective_priority:.2f}", f"{r.real_priority:.2f}", f"{r.priority_factor:.2f}",
             f"{r.weighted_resources_used:g}", f"{r.accumulated_usage_hours:.2f}",
             f"{r.floor:g}" if r.floor else "", f"{r.ceiling:g}" if r.ceiling >= 0 else "")
            for r in rows], out, right=(1, 2, 3, 4, 5, 6, 7))


# ---- commands --------------------------------------------------------------------------------


def _now(args: argparse.Namespace) -> float:
    return float(args.now) if args.now is not None else time.time()   # the CLI is the edge: it may


def cmd_negotiate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    result, warnings = run_cycle(args.config, args.slots, args.jobs, args.state, _now(args))
    for w in warnings:
        err.write(f"{PROG}: {w}\n")
    if args.json:
        json.dump(result_json(result), out, indent=2)
        out.write("\n")
    else:
        print_result(result, out)
    return 0


def cmd_userprio(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    now = _now(args)
    if not os.path.exists(args.state):
        raise StateError("no such accountant database (run 'matchmaker negotiate --state' first)",
                         file=args.state)
    acct = Accountant.load(args.state)
    try:
        with acct.transaction():
            for name, value in args.setprio or ():
                acct.set_priority(name, _float(value, "--setprio", args.state))
            for name, value in args.setfactor or ():
                acct.set_factor(name, _float(value, "--setfactor", args.state))
            for name in args.resetusage or ():
                acct.reset_usage(name, now)
            for name in args.delete or ():
                acct.delete(name)
        rows = acct.report(all_users=True)
        last = acct.last_update_time
    finally:
        acct.close()
    if args.json:
        json.dump({"last_update": last, "users": [{
            "name": r.name, "is_group": r.is_group, "effective_priority": r.effective_priority,
            "real_priority": r.real_priority, "priority_factor": r.priority_factor,
            "resources_used": r.resources_used, "weighted_resources_used": r.weighted_resources_used,
            "accumulated_usage_hours": r.accumulated_usage_hours, "begin_usage_time": r.begin_usage_time,
            "last_usage_time": r.last_usage_time, "floor": r.floor, "ceiling": r.ceiling} for r in rows]},
            out, indent=2)
        out.write("\n")
    else:
        print_userprio(rows, out)
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
    u = sub.add_parser("userprio", help="show (and edit) user priorities")
    u.add_argument("--state", required=True, help="accountant database (SQLite)")
    u.add_argument("--json", action="store_true")
    u.add_argument("--setprio", nargs=2, action="append", metavar=("NAME", "VALUE"))
    u.add_argument("--setfactor", nargs=2, action="append", metavar=("NAME", "VALUE"))
    u.add_argument("--resetusage", action="append", metavar="NAME")
    u.add_argument("--delete", action="append", metavar="NAME")
    u.add_argument("--now", type=float, help="time for --resetusage, seconds since the epoch")
    u.set_defaults(run=cmd_userprio)
    return p


def main(argv: Optional[Sequence[str]] = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args, out, err)
    except ClassAdError as exc:
        err.write(error_line(exc, getattr(args, "config", None)) + "\n")
        return 1
    except OSError as exc:
        err.write(f"{PROG}: {exc.filename or '<system>'}: error: {exc.strerror or exc}\n")
        return 1
    except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback
        err.write(f"{PROG}: <internal>: error: {type(exc).__name__}: {exc} (please report this bug)\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
