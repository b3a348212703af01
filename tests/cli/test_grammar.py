"""One command-line grammar for every ``classad`` and ``matchmaker`` subcommand (docs/cli.md).

The option lists are generated from the parsers themselves, so a subcommand added later is
checked with no change here: each long option answers to its one-dash spelling with the
same meaning, no option is ever abbreviated, and every mistake is one line naming the
subcommand, with exit status 2.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest
from support import ROOT

from classad import cli as classad_cli, cli_query
from classad.cli_grammar import CommandParser, UsageError
from matchmaker.cli import commands

EXAMPLE = ROOT / "examples" / "negotiator"
NOW = "1700000000"


def subcommands(parser: CommandParser) -> Iterator[tuple[str, CommandParser]]:
    """``(name, parser)`` of every subcommand of a command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub.get_default("run") is not None or sub._actions[1:]:
                    yield name, sub


PARSERS = {"classad": classad_cli.build_parser(), "matchmaker": commands.build_parser()}
SUBCOMMANDS = [
    (command, name, sub)
    for command, parser in PARSERS.items()
    for name, sub in subcommands(parser)
    if not (command == "classad" and name == "query")
]  # query has its own reader


def _sample_value(action: argparse.Action) -> str:
    """A value the option's type accepts."""
    if action.choices:
        return str(next(iter(action.choices)))
    for candidate in (NOW, "1h", "1", "x", "NEGOTIATOR_INTERVAL=60,120"):
        try:
            if action.type is None or action.type(candidate) is not None:
                return candidate
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            continue
    raise AssertionError(f"no sample value for {action.option_strings}")


def _words(action: argparse.Action, spelling: str) -> list[str]:
    if action.nargs == 0:
        return [spelling]
    count = action.nargs if isinstance(action.nargs, int) else 1
    return [spelling] + [_sample_value(action)] * count


def _required_words(sub: CommandParser, skip: argparse.Action) -> list[str]:
    """Words that satisfy the subcommand's required options, groups and positionals."""
    words: list[str] = []
    grouped = {a for g in sub._mutually_exclusive_groups for a in g._group_actions}
    for group in sub._mutually_exclusive_groups:
        if group.required and skip not in group._group_actions:
            words += _words(group._group_actions[0], group._group_actions[0].option_strings[-1])
    for action in sub._actions:
        if action is skip or action in grouped or action.dest == "help":
            continue
        if action.option_strings and action.required:
            words += _words(action, action.option_strings[-1])
        elif not action.option_strings and action.nargs in ("+", None, 1):
            words.append("1")
    return words


def _long_options() -> list[tuple[str, str, argparse.Action, str]]:
    found = []
    for command, name, sub in SUBCOMMANDS:
        for action in sub._actions:
            for option in action.option_strings:
                if option.startswith("--") and action.dest != "help":
                    found.append((command, name, action, option))
    return found


LONG_OPTIONS = _long_options()


def test_every_subcommand_is_checked():
    names = {(c, n) for c, n, _ in SUBCOMMANDS}
    assert {
        ("matchmaker", "negotiate"),
        ("matchmaker", "analyze"),
        ("matchmaker", "simulate"),
        ("matchmaker", "userprio"),
        ("classad", "eval"),
        ("classad", "convert"),
        ("classad", "analyze"),
    } <= names
    assert len(LONG_OPTIONS) > 40


def _parse(command: str, argv: list[str]) -> argparse.Namespace:
    return PARSERS[command].parse_args(argv)


def _comparable(ns: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in vars(ns).items() if k != "run"}


@pytest.mark.parametrize(
    "command, name, action, option", LONG_OPTIONS, ids=[f"{c}-{n}{o}" for c, n, _, o in LONG_OPTIONS]
)
def test_both_spellings_of_every_long_option(command, name, action, option):
    """``-name`` means what ``--name`` means, with its value after a space (and after ``=``
    for an option of one value)."""
    base = [name] + _required_words(PARSERS[command]._subparsers._group_actions[0].choices[name], action)
    two = _parse(command, base + _words(action, option))
    one = _parse(command, base + _words(action, option[1:]))
    assert _comparable(one) == _comparable(two)
    if action.nargs is None:
        joined = _parse(command, base + [f"{option[1:]}={_sample_value(action)}"])
        assert _comparable(joined) == _comparable(two)


@pytest.mark.parametrize(
    "command, name, action, option", LONG_OPTIONS, ids=[f"{c}-{n}{o}" for c, n, _, o in LONG_OPTIONS]
)
def test_no_option_is_abbreviated(command, name, action, option):
    sub = PARSERS[command]._subparsers._group_actions[0].choices[name]
    sub.one_dash_spellings()
    for prefix in (option[:-1], option[1:-1]):
        if prefix in sub._option_string_actions or len(prefix) < 3:
            continue
        base = [name] + _required_words(sub, action)
        with pytest.raises(UsageError) as info:
            _parse(command, base + _words(action, prefix))
        assert info.value.prog == f"{command} {name}"


QUERY_OPTIONS = sorted(n for n in cli_query._OPTIONS if len(n) > 1 and n not in ("help",))


@pytest.mark.parametrize("option", QUERY_OPTIONS)
def test_query_takes_both_spellings(option):
    value = {
        "constraint": ["true"],
        "sort": ["Name"],
        "limit": ["2"],
        "format": ["%s", "Name"],
        "from": ["old"],
        "attributes": ["Name"],
    }.get(option, [])
    one = cli_query.parse_args(["f.ad", f"-{option}", *value])
    two = cli_query.parse_args(["f.ad", f"--{option}", *value])
    assert vars(one) == vars(two)
    if len(option) > 3:
        with pytest.raises(UsageError):
            cli_query.parse_args(["f.ad", f"-{option[:-1]}", *value])


# ---- mistakes: one line, status 2, the subcommand's own name ----------------------------------


def run_matchmaker(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        status = commands.main(list(argv), out, err)
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


def run_classad(capsys, *argv: str) -> tuple[int, str, str]:
    status = classad_cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


POOL = [
    "--config",
    str(EXAMPLE / "negotiator.config"),
    "--slots",
    str(EXAMPLE / "slots.ads"),
    "--jobs",
    str(EXAMPLE / "jobs.ads"),
]

MATCHMAKER_MISTAKES = [
    (["negotiate", *POOL, "--now", "garbage"], "matchmaker negotiate", "--now"),
    (["analyze", *POOL, "--now", "garbage"], "matchmaker analyze", "--now"),
    (["negotiate", *POOL, "-now", "1e20"], "matchmaker negotiate", "outside 0 .. 253402300799"),
    (["negotiate", *POOL, "-bogus"], "matchmaker negotiate", "unrecognized arguments: -bogus"),
    (["negotiate", "--slots", "x"], "matchmaker negotiate", "required"),
    (["analyze", *POOL, "-jsn"], "matchmaker analyze", "-jsn"),
    (["simulate", *POOL, "--duration", "soon"], "matchmaker simulate", "time span"),
    (["userprio", "--st", NOW], "matchmaker userprio", "--st"),
    (["userprio", "-state", "x.db", "-setfactor", "a@b"], "matchmaker userprio", "-setfactor"),
    (["negotiate", "--config", "c", "--slots", "-", "--jobs", "-"], "matchmaker negotiate", "standard input"),
    (["nosuch"], "matchmaker", "invalid choice"),
    ([], "matchmaker", "required"),
]


@pytest.mark.parametrize("argv, prog, words", MATCHMAKER_MISTAKES)
def test_matchmaker_mistakes_are_one_line_and_status_2(argv, prog, words):
    status, out, err = run_matchmaker(*argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"{prog}: command-line error: ") and words in err, err
    assert f"(see '{prog} -help')" in err
    assert not any(Path(name).exists() for name in (NOW, "x.db"))  # nothing created in the cwd


CLASSAD_MISTAKES = [
    (["eval"], "classad eval", "required"),
    (["eval", "-strictt", "1"], "classad eval", "-strictt"),
    (["convert", "--to", "yaml"], "classad convert", "invalid choice"),
    (["convert", "-t", "json"], "classad convert", "-t"),
    (["query", "-cons", "true", "x.ad"], "classad query", "-cons"),
    (["query"], "classad query", "no input file"),
    (["analyze", "--my-ad", "[a=1]"], "classad analyze", "required"),
    (["frobnicate"], "classad", "invalid choice"),
]


@pytest.mark.parametrize("argv, prog, words", CLASSAD_MISTAKES)
def test_classad_mistakes_are_one_line_and_status_2(capsys, argv, prog, words):
    status, out, err = run_classad(capsys, *argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"{prog}: command-line error: ") and words in err, err


@pytest.mark.parametrize(
    "argv, prog",
    [
        (["negotiate", "-help"], "matchmaker negotiate"),
        (["simulate", "--help"], "matchmaker simulate"),
        (["-h"], "matchmaker"),
    ],
)
def test_help_is_the_subcommands_own(argv, prog):
    status, out, err = run_matchmaker(*argv)
    assert status == 0 and err == "" and out.startswith(f"usage: {prog} ")


@pytest.mark.parametrize("argv", [["--help"], ["eval", "-help"]])
def test_help_says_how_options_are_spelled(capsys, argv):
    status, out, _ = run_classad(capsys, *argv)
    text = " ".join(out.split())
    assert status == 0 and "also takes one dash" in text and "never abbreviated" in text


# ---- pipes, modules, plots, control characters ---------------------------------------------------


class _GoneReader(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_that_goes_away_ends_the_command_quietly_with_0():
    err = io.StringIO()
    status = commands.main(["negotiate", *POOL, "--now", NOW], _GoneReader(), err)
    assert status == 0 and err.getvalue() == ""


@pytest.mark.parametrize(
    "module, words",
    [
        ("classad", ["convert", "--to", "old", str(EXAMPLE / "jobs.ads")]),
        ("matchmaker", ["negotiate", *POOL, "--now", NOW]),
    ],
)
def test_python_m_runs_the_command_and_a_closed_pipe_exits_0(module, words):
    """``python -m classad`` / ``python -m matchmaker``; the reader stops after one line
    (``| head -1``): no message, status 0."""
    proc = subprocess.Popen([sys.executable, "-m", module, *words], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 0 and err == b""


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--config", "missing.config", "--slots", "s", "--jobs", "j", "--duration", "1h"],
        [
            "diff",
            "--config",
            "missing.config",
            "--config",
            "other.config",
            "--slots",
            "s",
            "--jobs",
            "j",
            "--duration",
            "1h",
        ],
    ],
)
def test_plot_without_matplotlib_is_refused_before_any_work(monkeypatch, argv):
    """The configuration named does not even exist: nothing is read before the refusal."""
    import importlib.util

    real = importlib.util.find_spec

    def no_matplotlib(name: str, *args: Any) -> Optional[Any]:
        return None if name == "matplotlib" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", no_matplotlib)
    status, out, err = run_matchmaker(*argv, "--out", "plots", "--plot")
    assert status == 2 and "pip install '.[simulate]'" in err and err.count("\n") == 1
    assert not os.path.exists("plots")


def test_control_characters_in_an_error_are_shown_as_escapes(tmp_path):
    """``--config /bin/ls``: the error quotes the file, but no byte of it reaches the
    terminal raw (no escape sequences, no bell)."""
    config = tmp_path / "binary.config"
    config.write_bytes(b"\x7fELF\x02\x01\x01\x00\x1b[31mRED\x07 = \x9b\xff\n")
    status, out, err = run_matchmaker(
        "negotiate",
        "--config",
        str(config),
        "--slots",
        str(EXAMPLE / "slots.ads"),
        "--jobs",
        str(EXAMPLE / "jobs.ads"),
        "--now",
        NOW,
    )
    assert status == 1 and err.count("\n") == 1, err
    line = err.rstrip("\n")
    assert all(ch == "\t" or (" " <= ch < "\x7f") or ch > "\x9f" for ch in line), repr(line)
    assert "\\x1b" in line


def test_printable_escapes_c0_del_c1_and_undecodable_bytes():
    from classad.cli_grammar import printable

    assert printable("a\x1b[0m\x07\x7f\x85\udcff\tb é") == "a\\x1b[0m\\x07\\x7f\\x85\\xff\tb é"
