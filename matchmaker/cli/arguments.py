"""Options several ``matchmaker`` subcommands share, and the types of their values.

Values are checked while the command line is parsed, so a mistake (``--now garbage``,
``--now 1e20``) is a command-line error (one line, exit status 2) before any file is read.
"""

from __future__ import annotations

import argparse
import math
import re

from classad.cli_grammar import UsageError

from ..api import MAX_TIME


def epoch_time(text: str) -> float:
    """Seconds since the epoch, from 0 to the end of the year 9999 (:data:`~matchmaker.api.MAX_TIME`)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time (seconds since the epoch)") from None
    if not math.isfinite(value) or not 0 <= value <= MAX_TIME:
        raise argparse.ArgumentTypeError(
            f"{text!r} is outside 0 .. {MAX_TIME:.0f} seconds since the epoch (the end of the year 9999)"
        )
    return value


def finite_number(text: str) -> float:
    """A finite number (a priority factor, a usage)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_SPAN = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([smhdw]?)\s*")


def parse_span(text: str) -> float:
    """Seconds in ``90``, ``90s``, ``5m``, ``1.5h``, ``2d`` or ``1w``."""
    m = _SPAN.fullmatch(text)
    if m is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time span (e.g. 300, 5m, 48h, 2d)")
    value = float(m.group(1)) * _UNITS[m.group(2)]
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite time span")
    return value


def positive_span(text: str) -> float:
    """A time span longer than zero."""
    value = parse_span(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be longer than zero")
    return value


def add_pool_sources(parser: argparse.ArgumentParser) -> None:
    """``--config``, ``--slots``, ``--jobs`` and ``--allow-empty``: what a cycle is read from.

    Ad sources are read by :func:`matchmaker.pool.ads.stream_ads`: a path, ``-`` for
    standard input, a pipe (``<(condor_q -json)``), gzipped or not, in any ad format."""
    parser.add_argument("--config", required=True, help="negotiator configuration (HTCondor syntax)")
    parser.add_argument(
        "--slots",
        required=True,
        help="slot ads: condor_status -l, -json, -xml or [ ... ] format; a file, '-' for stdin "
        "or a pipe, gzipped or not",
    )
    parser.add_argument(
        "--jobs",
        required=True,
        help="job ads: condor_q -l, -json, -xml or [ ... ] format; a file, '-' for stdin or a pipe, gzipped or not",
    )
    parser.add_argument(
        "--allow-empty", action="store_true", help="accept a slot or job source holding no ads (refused by default)"
    )


def add_run_options(parser: argparse.ArgumentParser, factor_help: str) -> None:
    """``--job-duration`` and ``--setfactor NAME VALUE`` (repeatable, ``factor_help`` its
    help): how long a simulated job without SimJobDuration runs, and the priority factors
    set before the first cycle."""
    parser.add_argument(
        "--job-duration", type=parse_span, default=3600.0, help="run time of jobs without SimJobDuration (default 1h)"
    )
    parser.add_argument("--setfactor", nargs=2, action="append", metavar=("NAME", "VALUE"), help=factor_help)


def set_factors(args: argparse.Namespace) -> dict[str, float]:
    """The ``--setfactor`` pairs of :func:`add_run_options` as submitter to factor; a value
    that is not a finite number is a command-line error."""
    try:
        return {name: finite_number(value) for name, value in args.setfactor or ()}
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--setfactor: {exc}", f"matchmaker {args.command}") from None


def pool_sources(args: argparse.Namespace) -> tuple[str, str, str]:
    """``(config, slots, jobs)`` of :func:`add_pool_sources`; standard input can be read once."""
    if args.slots == "-" and args.jobs == "-":
        raise UsageError("--slots and --jobs cannot both read standard input ('-')", f"matchmaker {args.command}")
    return args.config, args.slots, args.jobs


__all__ = [
    "add_pool_sources",
    "add_run_options",
    "epoch_time",
    "finite_number",
    "parse_span",
    "pool_sources",
    "positive_span",
    "set_factors",
]
