"""``matchmaker``: run one negotiation cycle, or show and edit user priorities and quotas.

    matchmaker negotiate --config FILE --slots FILE --jobs FILE [--state DB] [--now EPOCH] [--json] [--explain]
    matchmaker analyze --config FILE --slots FILE --jobs FILE [--state DB] [--now EPOCH]
                       [--job C.P | --submitter NAME | --slot NAME] [--json]
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
and do not change the exit status.  Command-line mistakes are one line naming the
subcommand and exit with 2 (the grammar of :mod:`classad.cli_grammar`, docs/cli.md).
"""

from __future__ import annotations

import argparse
import calendar
import datetime
import json
import math
import os
import re
import sys
import time
from typing import Any, Optional, Sequence, TextIO

from classad.cli_grammar import (
    INTERRUPT_STATUS,
    USAGE_STATUS,
    CommandParser,
    UsageError,
    broken_pipe_status,
    command_parser,
    parse_command_line,
    printable,
)
from classad.errors import ClassAdError

from ..accounting.reports import (
    EDITS,
    admin,
    format_most,
    format_priorities,
    format_quotas,
    format_usage,
    priorities_json,
    priority_report,
    quota_report,
    quotas_json,
    roll_up,
    surplus_policy,
    user_count,
)
from ..accounting.store import Accountant, store_absent
from ..api import load, negotiate
from ..cycle.negotiator import CycleResult
from ..errors import StateError
from . import policies, simulate as simulate_command, sweep as sweep_command
from .analyze import register as register_analyze
from .arguments import add_pool_sources, epoch_time, pool_sources
from .explained import preemption_json, print_explanations
from .progress import StatusLine, wanted
from .review import register as register_review

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
        row: dict[str, Any] = {
            "job": m.job,
            "submitter": m.submitter,
            "slot": m.slot,
            "reason": m.reason,
            "preempted": m.preempted,
        }
        if grouped:
            row.update(group=m.group, negotiating_group=m.negotiating_group, autoregroup=m.autoregroup)
        if m.preemption is not None:
            row["preemption"] = preemption_json(m.preemption)
        if m.preempted_slots:  # ALLOW_PSLOT_PREEMPTION: the dynamic slots the match ends
            row["preempted_slots"] = list(m.preempted_slots)
        matches.append(row)
    doc: dict[str, Any] = {
        "matches": matches,
        "submitters": [
            {
                "name": s.name,
                "eup": s.eup,
                "limit": _num(s.limit),
                "matched": s.matched,
                "spin_limits": [_num(x) for x in s.spin_limits],
            }
            for s in result.submitters
        ],
        "rejected": [
            {"job": r.job, "reason": r.reason, "mechanism": r.mechanism, "explanation": r.explanation}
            for r in result.rejected
        ],
    }
    if grouped:
        doc["groups"] = [
            {
                "name": g.name,
                "quota": g.quota,
                "allocated": g.allocated,
                "usage": g.usage,
                "matched": g.matched,
                "order": g.order,
                "config_quota": g.config_quota,
                "subtree_quota": g.subtree_quota,
                "surplus": g.surplus,
                "requested": g.requested,
                "sort_key": _num(g.sort_key),
                "allocated_by_round": list(g.allocated_by_round),
            }
            for g in result.groups
        ]
    return doc


def _table(rows: Sequence[Sequence[str]], out: TextIO, right: Sequence[int] = ()) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.write("  ".join(cells).rstrip() + "\n")


def _amount(x: float) -> str:
    """A slice or limit as the refusals are decided: up to four decimals (``2.9999``, ``7.5``, ``3``)."""
    if math.isinf(x):
        return "unlimited"
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _amounts(xs: Sequence[float]) -> str:
    return ", ".join(_amount(x) for x in xs) if xs else "-"


def _counts(values: Sequence[str]) -> str:
    """``" (a 3, b 1)"``: how many times each value occurs, most frequent first."""
    tally: dict[str, int] = {}
    for v in values:
        tally[v] = tally.get(v, 0) + 1
    if not tally:
        return ""
    return " (" + ", ".join(f"{k} {n}" for k, n in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))) + ")"


def print_result(result: CycleResult, out: TextIO, explain: bool = False, summary: bool = False) -> None:
    """The human-readable report: matches, submitters, groups (with quotas), rejected requests;
    with ``explain`` what allowed each preemption and what decided each rejection.  With
    ``summary`` the matches and rejections are counted (by reason, by mechanism), not listed."""
    grouped = bool(result.groups)
    if summary:
        out.write(f"Matches: {len(result.matches)}{_counts([m.reason for m in result.matches])}\n")
    else:
        out.write(f"Matches: {len(result.matches)}\n")
    if result.matches and not summary:
        head = ("JOB", "SUBMITTER", "SLOT", "REASON", "PREEMPTS") + (("PASS",) if grouped else ())
        _table(
            [head]
            + [
                (m.job, m.submitter, m.slot, m.reason, m.preempted or "-")
                + ((m.negotiating_group + (" (autoregroup)" if m.autoregroup else ""),) if grouped else ())
                for m in result.matches
            ],
            out,
        )
    out.write(f"\nSubmitters: {len(result.submitters)}\n")
    if any(s.spin_limits for s in result.submitters):
        _table(
            [("SUBMITTER", "EUP", "SLICE", "LIMIT PER SPIN", "MATCHED")]
            + [
                (
                    s.name,
                    f"{s.eup:.2f}",
                    _amount(s.limit) if s.spin_limits else "-",
                    _amounts(s.spin_limits),
                    str(s.matched),
                )
                for s in result.submitters
            ],
            out,
            right=(1, 2, 4),
        )
    elif result.submitters:  # no pie was spun (another priority model ordered the cycle)
        _table(
            [("SUBMITTER", "EUP", "MATCHED")] + [(s.name, f"{s.eup:.2f}", str(s.matched)) for s in result.submitters],
            out,
            right=(1, 2),
        )
    if grouped:
        out.write(f"\nGroups: {len(result.groups)}\n")
        _table(
            [("ORDER", "GROUP", "QUOTA", "SURPLUS", "REQUESTED", "ALLOCATED PER ROUND", "IN USE", "MATCHED")]
            + [
                (
                    str(g.order),
                    g.name,
                    f"{g.quota:.2f}",
                    g.surplus,
                    f"{g.requested:g}",
                    _amounts(g.allocated_by_round or (g.allocated,)),
                    f"{g.usage:g}",
                    str(g.matched),
                )
                for g in result.groups
            ],
            out,
            right=(0, 2, 4, 6, 7),
        )
    if result.rejected and summary:
        out.write(f"\nRejected: {len(result.rejected)}{_counts([r.mechanism or '-' for r in result.rejected])}\n")
    elif result.rejected:
        out.write(f"\nRejected: {len(result.rejected)}\n")
        _table(
            [("JOB", "DECIDED BY", "REASON")] + [(r.job, r.mechanism or "-", r.reason) for r in result.rejected], out
        )
    if explain and not summary:
        print_explanations(result, out)


# ---- commands --------------------------------------------------------------------------------


def _now(args: argparse.Namespace) -> float:
    """``--now``, or the wall clock: the CLI is the edge, where reading the clock belongs."""
    return time.time() if args.now is None else float(args.now)


def cmd_negotiate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    status = StatusLine(err, enabled=wanted(err, args.no_progress))
    try:
        loaded = load(*pool_sources(args), progress=status, allow_empty=args.allow_empty)
        result = negotiate(
            loaded, now=_now(args), state=args.state, allow_clock_skew=args.allow_clock_skew, progress=status
        )
    finally:
        status.close()
    warnings = list(loaded.warnings) + result.warnings
    for w in warnings:
        err.write(f"{PROG}: {w}\n")
    if args.json:
        json.dump(result_json(result), out, indent=2)
        out.write("\n")
    else:
        print_result(result, out, explain=getattr(args, "explain", False), summary=getattr(args, "summary", False))
    return 0


def _edits(args: argparse.Namespace) -> list[tuple[str, str, Optional[str]]]:
    """The requested ``condor_userprio`` edits as (edit, name, value), in a fixed order."""
    edits: list[tuple[str, str, Optional[str]]] = []
    for edit in EDITS:
        edits += [(edit, name, value) for name, value in getattr(args, edit) or ()]
    edits += [("resetusage", name, None) for name in args.resetusage or ()]
    edits += [("delete", name, None) for name in args.delete or ()]
    return edits


def cmd_userprio(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    edits = _edits(args)
    if args.quotas and edits:
        raise UsageError("--quotas only shows; run the edits without it", f"{PROG} userprio")
    active_since = _active_from(args)  # a mistake in it is found before any edit
    if store_absent(args.state) and not edits:
        what = "empty file, not an accountant database" if os.path.exists(args.state) else "no such accountant database"
        raise StateError(
            f"{what} (run 'matchmaker negotiate --state' first, or give an edit such as --setfactor to create it)",
            file=args.state,
        )
    acct = Accountant.load(args.state)
    try:
        now = _edit_time(args, acct)
        if args.quotas:
            return _show_quotas(acct, args, out)
        with acct.transaction():
            for edit, name, value in edits:
                try:
                    admin(acct, edit, name, value, now=now)
                except ValueError as exc:
                    raise ClassAdError(f"--{exc}", file=args.state) from None
        rows = priority_report(acct, all_users=True, active_since=active_since)
        last = acct.last_update_time
    finally:
        acct.close()
    if args.grouprollup:
        rows = roll_up(rows)
    if args.json:
        json.dump(priorities_json(rows, last), out, indent=2)
        out.write("\n")
    else:
        show = format_usage if args.usage else format_most if args.most else format_priorities
        out.write(show(rows))
    return 0


def _edit_time(args: argparse.Namespace, acct: Accountant) -> float:
    """The time of ``--resetusage``: ``--now``, else the state's own clock (its last update),
    so usage never starts after the cycle that last charged it; the wall clock only for a
    state no cycle has updated yet."""
    if args.now is not None:
        return float(args.now)
    last = acct.last_update_time
    return float(last) if last is not None else time.time()


def _active_from(args: argparse.Namespace) -> Optional[float]:
    """``--activefrom MONTH DAY YEAR`` as seconds since the epoch (UTC midnight), or None."""
    if not args.activefrom:
        return None
    month, day, year = args.activefrom
    try:
        return calendar.timegm(datetime.date(int(year), int(month), int(day)).timetuple())
    except ValueError:
        raise UsageError(
            f"--activefrom: {month} {day} {year} is not a date (MONTH DAY YEAR)", f"{PROG} userprio"
        ) from None


def _show_quotas(acct: Accountant, args: argparse.Namespace, out: TextIO) -> int:
    """``userprio --quotas``: the last cycle's group quota table."""
    every = acct.group_quotas()
    rows = quota_report(acct, all_groups=args.allusers)
    doc: dict[str, Any] = dict(last_update=acct.last_update_time, users=user_count(acct), policy=surplus_policy(every))
    if args.json:
        json.dump(quotas_json(rows, **doc), out, indent=2)
        out.write("\n")
    elif not every:
        out.write("No group quotas (the last cycle ran without GROUP_NAMES).\n")
    else:
        out.write(format_quotas(rows, **doc))
    return 0


def error_line(exc: ClassAdError, config: Optional[str] = None) -> str:
    """``matchmaker: <file>:<line>: <kind>: <message>`` (a column goes into the message)."""
    file = exc.file or (config if exc.kind == "config" and config else "<input>")
    where = file if exc.line is None else f"{file}:{exc.line}"
    message = exc.message if exc.column is None else f"column {exc.column}: {exc.message}"
    return printable(f"{PROG}: {where}: {exc.kind}: {' '.join(message.split())}")


def build_parser() -> CommandParser:
    """The argument parser of every subcommand (the grammar of :mod:`classad.cli_grammar`)."""
    p = command_parser(PROG, "HTCondor-style negotiation over ad files.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    register_negotiate(sub)
    u = register_userprio(sub)
    simulate_command.register(sub)
    sweep_command.register(sub)
    register_analyze(sub)
    register_review(sub)
    policies.register(u)
    numbers_are_values(p)
    return p


def register_negotiate(sub: Any) -> None:
    """The ``negotiate`` subcommand: one cycle over the pool's files."""
    n = sub.add_parser("negotiate", help="run one negotiation cycle", description="Run one negotiation cycle.")
    add_pool_sources(n)
    n.add_argument("--state", help="accountant database (SQLite); created if missing")
    n.add_argument(
        "--now",
        type=epoch_time,
        help="the cycle's time, seconds since the epoch (default: the clock); not earlier than the state's last update",
    )
    n.add_argument(
        "--allow-clock-skew",
        action="store_true",
        help="accept a --now earlier than the state's last update (the interval restarts)",
    )
    n.add_argument("--json", action="store_true", help="print one JSON object")
    n.add_argument(
        "--explain", action="store_true", help="also say what allowed each preemption and what decided each rejection"
    )
    n.add_argument(
        "--summary",
        action="store_true",
        help="count the matches (by reason) and rejections (by what decided them) instead of "
        "listing each; the submitter and group tables are printed as usual",
    )
    n.add_argument(
        "--no-progress",
        action="store_true",
        help="never show progress (shown on stderr, when it is a terminal, once a run takes more than a second)",
    )
    n.set_defaults(run=cmd_negotiate)


def register_userprio(sub: Any) -> argparse.ArgumentParser:
    """The ``userprio`` subcommand (reports and edits of the store); returned so the
    priority models can add their own reports to it."""
    u = sub.add_parser(
        "userprio",
        help="show (and edit) user priorities, or show group quotas",
        description="Show user priorities, as condor_userprio does, and edit them.",
    )
    u.add_argument("--state", required=True, help="accountant database (SQLite)")
    u.add_argument("--json", action="store_true", help="print one JSON object")
    u.add_argument("--quotas", action="store_true", help="the last cycle's group quotas (condor_userprio -quotas)")
    u.add_argument(
        "--allusers",
        action="store_true",
        help="every record (the default here); with --quotas also groups without demand or usage, and <none>",
    )
    view = u.add_mutually_exclusive_group()
    view.add_argument(
        "--usage", action="store_true", help="accumulated usage with the time it began and the time of the last usage"
    )
    view.add_argument(
        "--most", action="store_true", help="priorities, factor, resources in use, accumulated usage and its times"
    )
    u.add_argument(
        "--activefrom",
        nargs=3,
        metavar=("MONTH", "DAY", "YEAR"),
        help="only principals with usage on or after that date (UTC midnight)",
    )
    u.add_argument(
        "--grouprollup",
        action="store_true",
        help="a group's resources in use and accumulated usage include its subgroups'",
    )
    for edit, meaning in EDITS.items():
        u.add_argument(f"--{edit}", nargs=2, action="append", metavar=("NAME", "VALUE"), help=meaning)
    u.add_argument(
        "--resetusage",
        action="append",
        metavar="NAME",
        help="reset the accumulated usage and the priority to its minimum",
    )
    u.add_argument("--delete", action="append", metavar="NAME", help="remove the principal's record")
    u.add_argument(
        "--now",
        type=epoch_time,
        help="time for --resetusage, seconds since the epoch (default: the state's last update)",
    )
    u.set_defaults(run=cmd_userprio)
    return u


# A number is a value wherever it stands, never an option: ``-setfactor u@d -inf`` gives
# the edit the value -inf (then refused as not finite), ``-setfactor u@d -1e5`` the value
# -1e5.  argparse on its own takes only ``-5`` and ``-.5`` for numbers.
NUMBER_ARGUMENT = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)


def numbers_are_values(parser: argparse.ArgumentParser) -> None:
    """Make ``parser`` and its subcommands' parsers read a negative number as a value."""
    parser._negative_number_matcher = NUMBER_ARGUMENT  # type: ignore[attr-defined]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                numbers_are_values(sub)


def main(argv: Optional[Sequence[str]] = None, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    """Entry point; returns the exit status (output to ``sys.stdout``/``sys.stderr`` by default).

    Command-line mistakes exit with 2, bad input with 1, an interrupt with 130; a reader
    that goes away (``| head``) ends the command quietly with 0."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    args = parse_command_line(build_parser(), list(sys.argv[1:] if argv is None else argv), out, err)
    if isinstance(args, int):
        return args
    try:
        status = args.run(args, out, err)
        out.flush()
        return status
    except UsageError as exc:
        err.write(exc.line() + "\n")
        return USAGE_STATUS
    except ClassAdError as exc:
        err.write(error_line(exc, getattr(args, "config", None)) + "\n")
        return 1
    except BrokenPipeError:
        return broken_pipe_status(out)
    except OSError as exc:
        err.write(printable(f"{PROG}: {exc.filename or '<system>'}: error: {exc.strerror or exc}") + "\n")
        return 1
    except KeyboardInterrupt:
        err.write(f"{PROG}: interrupted\n")
        return INTERRUPT_STATUS
    except MemoryError:
        err.write(f"{PROG}: error: out of memory\n")
        return 2
    except Exception as exc:  # the last resort: never a traceback
        err.write(printable(f"{PROG}: <internal>: error: {type(exc).__name__}: {exc} (please report this bug)") + "\n")
        return 2
