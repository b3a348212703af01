"""The ``classad`` command: evaluate expressions, query ad files, convert between formats.

A thin layer over the library::

    classad eval --my-ad '[Cpus = 4]' 'Cpus * 2'            # like HTCondor's classad_eval
    classad query slots.ad --constraint 'State == "Unclaimed"' --af Name Cpus
    classad convert --to json jobs.ad                        # any format to any format

Errors are one line on stderr, ``classad: <file>:<line>:<col>: <kind>: <message>``,
with exit status 1; an interrupt exits with 130.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
from contextlib import closing
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence, TextIO

from .ad import ClassAd, ExprTree
from .analyze import register as register_analyze
from .errors import ClassAdError, FormatError, ParseError
from .evaluate import default_strict, set_strict_mode
from .formats import parseAds, write_ads
from .formats.detect import to_parser_type
from .formats.printers import OLD
from .values import truthiness

PROG = "classad"
INPUT_FORMATS = ("auto", "old", "new", "json", "xml")
OUTPUT_FORMATS = ("old", "new", "pretty", "json", "jsonl", "xml")


# Undecodable input bytes travel as surrogate escapes; show them as the bytes they were.
_ESCAPED_BYTE = re.compile(r"\\udc([89a-f][0-9a-f])")


def _error_line(exc: ClassAdError) -> str:
    message = _ESCAPED_BYTE.sub(r"\\x\1", exc.message.replace("\n", " "))
    return f"{PROG}: {exc.location()}: {exc.kind}: {message}"


# ---- reading inputs ------------------------------------------------------------------------


def _open_input(name: str) -> Any:
    """What parseAds reads for a command-line file name (``-`` is standard input)."""
    if name == "-":
        stream = getattr(sys.stdin, "buffer", sys.stdin)
        return _NamedStream(stream, "<stdin>")
    return Path(name)


class _NamedStream:
    """Standard input under a readable name for error messages."""

    def __init__(self, stream: Any, name: str) -> None:
        self._stream = stream
        self.name = name

    def readline(self) -> Any:
        return self._stream.readline()


def _read_ads(names: Sequence[str], fmt: str, on_error: Any) -> Iterator[ClassAd]:
    for name in names:
        yield from parseAds(_open_input(name), to_parser_type(fmt), on_error=on_error)


def _error_policy(keep_going: bool, failures: list) -> Any:
    if not keep_going:
        return "raise"

    def report(exc: ClassAdError) -> None:
        failures.append(exc)
        print(_error_line(exc), file=sys.stderr)

    return report


def _parse_arg_expr(text: str, label: str) -> ExprTree:
    try:
        return ExprTree(text)
    except ParseError as exc:
        raise ParseError(exc.message, file=label, line=exc.line, column=exc.column) from None


def _first_ad(name: str, fmt: str) -> ClassAd:
    with closing(_read_ads([name], fmt, "raise")) as ads:
        ad = next(ads, None)
    if ad is None:
        label = "<stdin>" if name == "-" else name
        raise FormatError("no ad in the input", file=label, line=1, column=1)
    return ad


# ---- eval ----------------------------------------------------------------------------------


def _as_ad(text: str) -> Optional[ClassAd]:
    """``text`` as an ad (``[a = 1]``) or as assignments (``a = 1; b = 2``), else None."""
    for candidate in (text, "[" + text + "]"):
        try:
            return ClassAd(candidate)
        except ParseError:
            continue
    return None


def cmd_eval(args: argparse.Namespace, out: TextIO) -> int:
    """Evaluate each expression; assignments extend the ad (HTCondor's classad_eval)."""
    if not args.strict:
        return _evaluate_all(args, out)
    previous = default_strict()
    set_strict_mode(True)
    try:
        return _evaluate_all(args, out)
    finally:
        set_strict_mode(previous)


def _evaluate_all(args: argparse.Namespace, out: TextIO) -> int:
    my = ClassAd()
    if args.my is not None:
        my = _first_ad(args.my, args.input_format)
    elif args.my_ad is not None:
        my = _ad_argument(args.my_ad, "<my-ad>")
    target = None
    if args.target is not None:
        target = _first_ad(args.target, args.input_format)
    elif args.target_ad is not None:
        target = _ad_argument(args.target_ad, "<target-ad>")
    changed = True
    for index, text in enumerate(args.expressions, start=1):
        assignments = _as_ad(text)
        if assignments is not None:
            for name, node in assignments.node_items():
                my.set_node(name, node)
            changed = True
            continue
        tree = _parse_arg_expr(text, f"<expr{index}>")
        if changed and not args.quiet:
            out.write(repr(my) + "\n")
        changed = False
        out.write(repr(tree.simplify(my, target)) + "\n")
    return 0


def _ad_argument(text: str, label: str) -> ClassAd:
    """An ad given on the command line, or a syntax error naming the option."""
    ad = _as_ad(text)
    if ad is not None:
        return ad
    try:
        ClassAd(text)
    except ParseError as exc:
        raise ParseError(exc.message, file=label, line=exc.line, column=exc.column) from None
    raise ParseError("not an ad", file=label, line=1, column=1)


# ---- query ---------------------------------------------------------------------------------


def autoformat(value: Any) -> str:
    """One ``-af`` column: strings as they are, anything else in old syntax."""
    return value if type(value) is str else OLD.value(value)


def cmd_query(args: argparse.Namespace, out: TextIO) -> int:
    """Print the ads that satisfy a constraint, whole or as ``-af`` columns."""
    constraint = _parse_arg_expr(args.constraint, "<constraint>") if args.constraint else None
    columns = [_parse_arg_expr(a, f"<af{i}>") for i, a in enumerate(args.af or (), start=1)]
    failures: list = []
    ads = _read_ads(args.files, args.input_format, _error_policy(args.keep_going, failures))

    def selected() -> Iterator[ClassAd]:
        for ad in ads:
            if constraint is None or truthiness(constraint.evaluate(ad)) is True:
                yield ad

    if columns:
        for ad in selected():
            out.write(" ".join(autoformat(c.evaluate(ad)) for c in columns) + "\n")
    else:
        write_ads(selected(), out, args.output)
    return 1 if failures else 0


# ---- convert -------------------------------------------------------------------------------


def cmd_convert(args: argparse.Namespace, out: TextIO) -> int:
    """Read ads in one format and write them in another."""
    failures: list = []
    ads = _read_ads([args.file], args.input_format, _error_policy(args.keep_going, failures))
    write_ads(ads, out, args.to, new_style="list" if args.list else "lines")
    return 1 if failures else 0


# ---- argument parsing ----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``classad`` command and its subcommands."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Evaluate ClassAd expressions, query ad files and convert them "
                               "between HTCondor's formats (old, new, JSON, XML).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    ev = sub.add_parser("eval", help="evaluate expressions against an ad (like classad_eval)",
                        description="Evaluate each EXPR against the ad and print the result in ClassAd "
                                    "syntax. An argument that is an assignment ('x = 7', 'a = 1; b = 2') "
                                    "or an ad ('[x = 7]') is added to the ad instead; the ad is printed "
                                    "before the first result after a change, unless --quiet.")
    mine = ev.add_mutually_exclusive_group()
    mine.add_argument("--my", metavar="FILE", help="file holding the ad (its first ad; - for stdin)")
    mine.add_argument("--my-ad", metavar="TEXT", help="the ad itself, e.g. '[Cpus = 4]'")
    theirs = ev.add_mutually_exclusive_group()
    theirs.add_argument("--target", metavar="FILE", help="file holding the TARGET ad (its first ad)")
    theirs.add_argument("--target-ad", metavar="TEXT", help="the TARGET ad itself")
    ev.add_argument("--from", dest="input_format", choices=INPUT_FORMATS, default="auto",
                    help="format of the ad files (default: detect)")
    ev.add_argument("--strict", action="store_true",
                    help="strict evaluation (HTCondor's STRICT_CLASSAD_EVALUATION = true)")
    ev.add_argument("-q", "--quiet", action="store_true", help="do not print the ad")
    ev.add_argument("expressions", nargs="+", metavar="EXPR", help="expression or assignment")
    ev.set_defaults(run=cmd_eval)

    qu = sub.add_parser("query", help="select ads from files (like condor_status -constraint -af)",
                        description="Print the ads of FILE... ('-' for stdin) for which the constraint "
                                    "is true, evaluated in each ad alone.")
    qu.add_argument("files", nargs="+", metavar="FILE", help="ad file in any format, or - for stdin")
    qu.add_argument("-c", "--constraint", metavar="EXPR", help="keep ads where EXPR is true")
    qu.add_argument("--af", "--autoformat", dest="af", nargs="+", metavar="ATTR",
                    help="print these attributes or expressions, space separated, one line per ad")
    shape = qu.add_mutually_exclusive_group()
    for flag, fmt in (("--long", "old"), ("--new", "new"), ("--json", "json"), ("--xml", "xml")):
        shape.add_argument(flag, dest="output", action="store_const", const=fmt,
                           help=f"print whole ads in {fmt} format" + (" (default)" if fmt == "old" else ""))
    qu.add_argument("--from", dest="input_format", choices=INPUT_FORMATS, default="auto",
                    help="format of the input (default: detect)")
    qu.add_argument("-k", "--keep-going", action="store_true",
                    help="report broken ads and go on (exit status 1 at the end)")
    qu.set_defaults(run=cmd_query, output="old")

    co = sub.add_parser("convert", help="convert an ad file to another format",
                        description="Read the ads of FILE ('-' for stdin) and print them in another format.")
    co.add_argument("file", nargs="?", default="-", metavar="FILE", help="input file (default: stdin)")
    co.add_argument("--to", required=True, choices=OUTPUT_FORMATS,
                    help="output format: old (condor_q -l), new (one ad per line), pretty, "
                         "json (condor_q -json), jsonl (one object per line), xml")
    co.add_argument("--from", dest="input_format", choices=INPUT_FORMATS, default="auto",
                    help="format of the input (default: detect)")
    co.add_argument("--list", action="store_true",
                    help="with --to new, wrap the ads in { , } as condor_q -long:new does")
    co.add_argument("-k", "--keep-going", action="store_true",
                    help="report broken ads and go on (exit status 1 at the end)")
    co.set_defaults(run=cmd_convert)
    register_analyze(sub)
    return parser


def _utf8_stdout() -> TextIO:
    # ClassAd strings are bytes: write them back as they came (invalid UTF-8 included).
    out = sys.stdout
    if hasattr(out, "reconfigure"):
        try:
            out.reconfigure(encoding="utf-8", errors="surrogateescape")
        except (ValueError, io.UnsupportedOperation):
            pass
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command; returns the exit status."""
    args = build_parser().parse_args(argv)
    out = _utf8_stdout()
    run: Callable[[argparse.Namespace, TextIO], int] = args.run
    try:
        status = run(args, out)
        out.flush()
        return status
    except ClassAdError as exc:
        print(_error_line(exc), file=sys.stderr)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            # The reader went away (``| head``): stop quietly, as cat does.
            try:
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silences the final flush
            except OSError:
                pass
            return 1
        where = exc.filename if exc.filename is not None else "<input>"
        print(f"{PROG}: {where}: io: {exc.strerror or exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    return 1


if __name__ == "__main__":
    sys.exit(main())
