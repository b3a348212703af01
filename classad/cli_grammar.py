"""The command-line grammar shared by every ``classad`` and ``matchmaker`` subcommand.

A command builds its parser with :func:`command_parser` and adds subcommands with
``parser.add_subparsers().add_parser(...)`` exactly as with :mod:`argparse`; each
subcommand's parser is a :class:`CommandParser` too, so it follows the grammar with
nothing more to do:

* every long option ``--name`` also answers to HTCondor's one-dash spelling ``-name``
  (``-json``, ``-now 1700000000``, ``-constraint=...``), unless ``-name`` already means
  something else in that parser;
* no abbreviations: ``--st`` is not ``--state`` (a guessed option could silently take
  the next word as a file name);
* a mistake raises :class:`UsageError` under the subcommand's own name
  (``matchmaker negotiate``), printed as one line; the command exits with
  :data:`USAGE_STATUS`;
* ``-h``, ``-help`` and ``--help`` raise :class:`HelpRequested` carrying the
  subcommand's own help text.

:func:`parse_command_line` turns both into an exit status, :func:`broken_pipe_status`
is how a command ends when its reader goes away (``| head``), and :func:`printable`
keeps control characters out of the terminal in error messages.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
from typing import Any, Optional, Sequence, TextIO

# Exit status of a command-line mistake (argparse's, and HTCondor's tools').
USAGE_STATUS = 2
# Exit status after an interrupt (128 + SIGINT, as a shell reports it).
INTERRUPT_STATUS = 130


# The last words of every help text.
SPELLING = "Every option also takes one dash (-json as well as --json); options are never abbreviated."


class UsageError(Exception):
    """A mistake on the command line of ``prog``: printed as one line, exit status 2."""

    def __init__(self, message: str, prog: str) -> None:
        super().__init__(message)
        self.message = message
        self.prog = prog

    def line(self) -> str:
        """``<prog>: command-line error: <message> (see '<prog> -help')``."""
        return f"{self.prog}: command-line error: {printable(self.message)} (see '{self.prog} -help')"


class HelpRequested(Exception):
    """``-h``, ``-help`` or ``--help`` was given; ``text`` is the parser's help."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class _Help(argparse.Action):
    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: Any = argparse.SUPPRESS,
        help: Optional[str] = None,
    ) -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: Optional[str] = None,
    ) -> None:
        raise HelpRequested(parser.format_help())


class _Subcommands(argparse._SubParsersAction):
    """Subcommand parsers are :class:`CommandParser`\\ s that report their own mistakes."""

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        kwargs.setdefault("epilog", SPELLING)
        parser = super().add_parser(name, **kwargs)
        parser.is_subcommand = True
        return parser


class CommandParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` following the grammar of this module."""

    is_subcommand = False

    def __init__(self, *args: Any, add_help: bool = True, **kwargs: Any) -> None:
        kwargs.update(allow_abbrev=False, add_help=False)
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", _Subcommands)
        if add_help:
            self.add_argument("-h", "--help", action=_Help, help="show this help and exit")

    def one_dash_spellings(self) -> dict[str, str]:
        """Give every ``--name`` its ``-name`` twin (where free); returns twin -> long form.

        The twins are only looked up, not listed: the help shows each option once."""
        twins: dict[str, str] = {}
        for action in self._actions:
            for option in action.option_strings:
                if not option.startswith("--") or len(option) < 4:
                    continue
                twin = option[1:]
                owner = self._option_string_actions.get(twin)
                if owner is None:
                    self._option_string_actions[twin] = action
                    owner = action
                if owner is action:
                    twins[twin] = option
        return twins

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.one_dash_spellings()
        parsed, extras = super().parse_known_args(args, namespace)
        if self.is_subcommand and extras:
            self.error("unrecognized arguments: " + " ".join(extras))
        return parsed, extras

    def _get_option_tuples(self, option_string: str) -> Any:
        """Only a one-letter option with its value attached (``-k5``); never an abbreviation."""
        if option_string[1:2] in self.prefix_chars:
            return []
        short = self._option_string_actions.get(option_string[:2])
        return [(short, option_string[:2], option_string[2:])] if short is not None else []

    def error(self, message: str) -> Any:
        raise UsageError(message, self.prog)


def command_parser(prog: str, description: str) -> CommandParser:
    """The top-level parser of a command; add subcommands with ``add_subparsers``."""
    return CommandParser(prog=prog, description=description, epilog=SPELLING)


def parse_command_line(
    parser: CommandParser, argv: Sequence[str], out: TextIO, err: TextIO
) -> argparse.Namespace | int:
    """The parsed arguments, or the exit status after help (0) or a mistake (2)."""
    if any("\x00" in a for a in argv):
        # A process's arguments cannot hold NUL; only a caller from Python can pass one.
        err.write(UsageError("an argument holds a NUL character", parser.prog).line() + "\n")
        return USAGE_STATUS
    try:
        return parser.parse_args(argv)
    except HelpRequested as exc:
        out.write(exc.text)
        return 0
    except UsageError as exc:
        err.write(exc.line() + "\n")
        return USAGE_STATUS


def broken_pipe_status(out: TextIO) -> int:
    """After a broken pipe (the reader of ``out`` went away, as with ``| head``): when ``out``
    is the process's stdout, send the rest of it, and the interpreter's last flush, nowhere.
    The command ends quietly with status 0, as ``cat`` does under ``head``."""
    if out is sys.stdout:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError, io.UnsupportedOperation):
            pass
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
    return 0


# C0 controls but tab, DEL and C1 controls; lone surrogates stand for bytes that were not UTF-8.
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\udc80-\udcff]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code - 0xDC00 if code >= 0xDC80 else code:02x}"


def printable(text: str) -> str:
    """``text`` with control characters (and undecodable bytes) shown as ``\\xNN``, so an
    error message quoting a binary file cannot move the cursor or ring the bell."""
    return _UNPRINTABLE.sub(_escape, text)


__all__ = [
    "INTERRUPT_STATUS",
    "USAGE_STATUS",
    "CommandParser",
    "HelpRequested",
    "UsageError",
    "broken_pipe_status",
    "command_parser",
    "parse_command_line",
    "printable",
]
