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
import codecs
import io
import re
import sys
from contextlib import closing
from typing import Any, Callable, Generator, Optional, Sequence, TextIO

from . import cli_query
from .ad import ClassAd, ExprTree
from .analyze import register as register_analyze
from .cli_grammar import (
    INTERRUPT_STATUS,
    USAGE_STATUS,
    CommandParser,
    HelpRequested,
    UsageError,
    broken_pipe_status,
    command_parser,
    parse_command_line,
    printable,
)
from .errors import ClassAdError, FormatError, ParseError
from .evaluate import default_strict, set_strict_mode
from .formats import read_source, write_ads
from .formats.detect import to_parser_type
from .formats.sources import open_input

PROG = "classad"
INPUT_FORMATS = ("auto", "old", "new", "json", "xml")
OUTPUT_FORMATS = ("old", "new", "pretty", "json", "jsonl", "xml")


# Undecodable input bytes travel as surrogate escapes; show them as the bytes they were.
_ESCAPED_BYTE = re.compile(r"\\udc([89a-f][0-9a-f])")


def _error_line(exc: ClassAdError) -> str:
    message = _ESCAPED_BYTE.sub(r"\\x\1", exc.message.replace("\n", " "))
    return printable(f"{PROG}: {exc.location()}: {exc.kind}: {message}")


# ---- reading inputs ------------------------------------------------------------------------


def _read_ads(names: Sequence[str], fmt: str, on_error: Any) -> Generator[ClassAd, None, None]:
    """The ads of each named source in turn (a path, ``-`` for stdin, a pipe; gzipped or not)."""
    ptype = to_parser_type(fmt)
    for name in names:
        with open_input(name) as src:
            yield from read_source(src, ptype, on_error)


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


def cmd_query(args: argparse.Namespace, out: TextIO) -> int:
    """Print the ads that satisfy a constraint: whole, as ``-af`` columns or ``-format`` text."""
    constraint = cli_query.parse_expr_arg(args.constraint, "<constraint>") if args.constraint else None
    sort = [cli_query.parse_expr_arg(s, f"<sort{i}>") for i, s in enumerate(args.sort, start=1)]
    failures: list = []
    ads = _read_ads(args.files, args.input_format, _error_policy(args.keep_going, failures))
    chosen = cli_query.select(ads, constraint, sort, args.limit)
    if args.af:
        cli_query.write_autoformat(chosen, args.af, args.af_opts, out)
    elif args.formats:
        cli_query.write_formats(chosen, args.formats, out)
    else:
        write_ads(cli_query.project(chosen, args.attributes) if args.attributes else chosen, out, args.output)
    return 1 if failures else 0


autoformat = cli_query.autoformat


# ---- convert -------------------------------------------------------------------------------


def cmd_convert(args: argparse.Namespace, out: TextIO) -> int:
    """Read ads in one format and write them in another."""
    failures: list = []
    ads = _read_ads(args.files or ["-"], args.input_format, _error_policy(args.keep_going, failures))
    write_ads(ads, out, args.to, new_style="list" if args.list else "lines")
    return 1 if failures else 0


# ---- argument parsing ----------------------------------------------------------------------


def build_parser() -> CommandParser:
    """The argument parser of the ``classad`` command and its subcommands."""
    parser = command_parser(
        PROG,
        "Evaluate ClassAd expressions, query ad files and convert them "
        "between HTCondor's formats (old, new, JSON, XML).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    ev = sub.add_parser(
        "eval",
        help="evaluate expressions against an ad (like classad_eval)",
        description="Evaluate each EXPR against the ad and print the result in ClassAd "
        "syntax. An argument that is an assignment ('x = 7', 'a = 1; b = 2') "
        "or an ad ('[x = 7]') is added to the ad instead; the ad is printed "
        "before the first result after a change, unless --quiet.",
    )
    mine = ev.add_mutually_exclusive_group()
    mine.add_argument("--my", metavar="FILE", help="file holding the ad (its first ad; - for stdin)")
    mine.add_argument("--my-ad", metavar="TEXT", help="the ad itself, e.g. '[Cpus = 4]'")
    theirs = ev.add_mutually_exclusive_group()
    theirs.add_argument("--target", metavar="FILE", help="file holding the TARGET ad (its first ad)")
    theirs.add_argument("--target-ad", metavar="TEXT", help="the TARGET ad itself")
    ev.add_argument(
        "--from",
        dest="input_format",
        choices=INPUT_FORMATS,
        default="auto",
        help="format of the ad files (default: detect)",
    )
    ev.add_argument(
        "--strict", action="store_true", help="strict evaluation (HTCondor's STRICT_CLASSAD_EVALUATION = true)"
    )
    ev.add_argument("-q", "--quiet", action="store_true", help="do not print the ad")
    ev.add_argument("expressions", nargs="+", metavar="EXPR", help="expression or assignment")
    ev.set_defaults(run=cmd_eval)

    # The query options are read by cli_query (HTCondor's spellings, files anywhere);
    # this entry only lists the subcommand in the top-level help.
    sub.add_parser("query", help="select ads from files (like condor_status -constraint -af)", add_help=False)

    co = sub.add_parser(
        "convert",
        help="convert ad files to another format",
        description="Read the ads of FILE... ('-' for stdin) and print them in another format, in order.",
    )
    co.add_argument("files", nargs="*", metavar="FILE", help="input files (default: stdin)")
    co.add_argument(
        "--to",
        required=True,
        choices=OUTPUT_FORMATS,
        help="output format: old (condor_q -l), new (one ad per line), pretty, "
        "json (condor_q -json), jsonl (one object per line), xml",
    )
    co.add_argument(
        "--from",
        dest="input_format",
        choices=INPUT_FORMATS,
        default="auto",
        help="format of the input (default: detect)",
    )
    co.add_argument(
        "--list", action="store_true", help="with --to new, wrap the ads in { , } as condor_q -long:new does"
    )
    co.add_argument(
        "-k", "--keep-going", action="store_true", help="report broken ads and go on (exit status 1 at the end)"
    )
    co.set_defaults(run=cmd_convert)
    register_analyze(sub)
    return parser


def _write_string_bytes(exc: UnicodeError) -> tuple[bytes, int]:
    """Encoding error handler: lone surrogates become the bytes the C++ library would hold.

    ``\udc80``-``\udcff`` stand for undecodable input bytes and are written back as those
    bytes; any other lone surrogate (a JSON ``\ud800`` escape) is written as its three-byte
    UTF-8-style sequence, as HTCondor writes it.
    """
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = bytearray()
    for ch in exc.object[exc.start : exc.end]:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(code - 0xDC00)
        else:
            out += ch.encode("utf-8", "surrogatepass")
    return bytes(out), exc.end


codecs.register_error("classad-bytes", _write_string_bytes)


def _utf8_stdout() -> TextIO:
    # ClassAd strings are bytes: write them back as they came (invalid UTF-8 included).
    out = sys.stdout
    if hasattr(out, "reconfigure"):
        try:
            out.reconfigure(encoding="utf-8", errors="classad-bytes")
        except (ValueError, io.UnsupportedOperation):
            pass
    err = sys.stderr
    if hasattr(err, "reconfigure"):
        try:
            err.reconfigure(errors="backslashreplace")
        except (ValueError, io.UnsupportedOperation):
            pass
    return out


def _parse(argv: Sequence[str], out: TextIO, err: TextIO) -> argparse.Namespace | int:
    """The command line: ``query`` by its own reader, the rest by the shared grammar;
    an exit status after help or a mistake."""
    if any("\x00" in a for a in argv):
        # A process's arguments cannot hold NUL; only a caller from Python can pass one.
        err.write(UsageError("an argument holds a NUL character", PROG).line() + "\n")
        return USAGE_STATUS
    if argv and argv[0] == "query":
        try:
            args = cli_query.parse_args(argv[1:])
        except HelpRequested:
            cli_query.print_help(out)
            return 0
        except UsageError as exc:
            err.write(exc.line() + "\n")
            return USAGE_STATUS
        args.run = cmd_query
        return args
    return parse_command_line(build_parser(), argv, out, err)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command; returns the exit status: 0, 1 for bad input, 2 for a command-line
    mistake, 130 after an interrupt; a reader that goes away (``| head``) ends it with 0."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parsed = _parse(argv, sys.stdout, sys.stderr)
    if isinstance(parsed, int):
        return parsed
    out = _utf8_stdout()
    run: Callable[[argparse.Namespace, TextIO], int] = parsed.run
    try:
        status = run(parsed, out)
        out.flush()
        return status
    except UsageError as exc:
        print(exc.line(), file=sys.stderr)
        return USAGE_STATUS
    except ClassAdError as exc:
        print(_error_line(exc), file=sys.stderr)
    except BrokenPipeError:
        return broken_pipe_status(out)
    except OSError as exc:
        where = exc.filename if exc.filename is not None else "<input>"
        print(printable(f"{PROG}: {where}: io: {exc.strerror or exc}"), file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return INTERRUPT_STATUS
    except RecursionError:
        print(f"{PROG}: <input>: error: input nested too deeply", file=sys.stderr)
    except Exception as exc:  # the last resort: never a traceback
        print(
            printable(f"{PROG}: <internal>: error: {type(exc).__name__}: {exc} (please report this bug)"),
            file=sys.stderr,
        )
        return 2
    return 1


if __name__ == "__main__":
    sys.exit(main())
