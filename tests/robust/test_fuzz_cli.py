"""Fuzz targets for both command lines: random argument lists over their own vocabulary.

Whatever the arguments, a command ends with a status (0, 1 or 2; argparse's usage
errors exit 2), never with a traceback, and never with the last-resort handler's
"please report this bug" line, which is kept for real bugs.  Files named on the line
include valid ad files, broken and binary ones, a directory and a missing path.  The
number of examples is small in CI; ``CLASSAD_FUZZ_EXAMPLES`` raises it (docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support import ROOT

EXAMPLES = max(20, int(os.environ.get("CLASSAD_FUZZ_EXAMPLES", "150")) // 3)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    """Paths the arguments may name: good, broken, binary, empty, a directory, missing."""
    d = tmp_path_factory.mktemp("fuzzcli")
    (d / "broken.ad").write_text('Cpus = 4\nMemory = = 2\nName = "x\n\n[ a = ; ]\n')
    (d / "binary.ad").write_bytes(bytes(range(256)) * 4)
    (d / "empty.ad").write_text("")
    (d / "bad.config").write_text("PRIORITY_HALFLIFE = abc\nif\nA = $(A)\n")
    return [
        str(ROOT / "examples" / "slots.ad"),
        str(ROOT / "examples" / "jobs.ad"),
        str(ROOT / "examples" / "negotiator" / "slots.ads"),
        str(ROOT / "examples" / "negotiator" / "jobs.ads"),
        str(ROOT / "examples" / "negotiator" / "negotiator.config"),
        str(d / "broken.ad"),
        str(d / "binary.ad"),
        str(d / "empty.ad"),
        str(d / "bad.config"),
        str(d),
        str(d / "missing.ad"),
    ]


VALUES = [
    "Cpus * 2",
    "MY.Requirements",
    "[a = 1]",
    '"x"',
    "(",
    "Memory >",
    "undefined",
    "",
    "\x00",
    "é",
    "-1",
    "0",
    "1700000000",
    "99999999999999999999",
    "nan",
    "inf",
    "1e300",
    "%d",
    "%s %v",
    "%.3f",
    "Name",
    "a@b",
    "alice@example.org",
    "5",
    "1h",
    "0.5",
    "-",
    "--",
    'regexp("(a+)+$", Name)',
]


def run_cli(main, argv: list[str]) -> tuple[int, str]:
    """``main(argv)`` with empty stdin and captured output: (status, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO("")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:  # argparse: usage errors and --help
                status = exc.code if isinstance(exc.code, int) else 2
    finally:
        sys.stdin = saved
    return status, err.getvalue()


def arguments(words: list[str], files: list[str]) -> st.SearchStrategy[list[str]]:
    token = st.one_of(st.sampled_from(words), st.sampled_from(VALUES), st.sampled_from(files))
    return st.lists(token, max_size=9)


def check(status: int, err: str, argv: list[str]) -> None:
    assert status in (0, 1, 2), (argv, status, err)
    assert "Traceback" not in err and "please report" not in err, (argv, err)


CLASSAD_WORDS = [
    "eval",
    "query",
    "convert",
    "analyze",
    "-q",
    "--my",
    "--target-ad",
    "--my-ad",
    "--constraint",
    "-constraint",
    "-af",
    "-af:h",
    "-af:jlr",
    "-format",
    "-sort",
    "-limit",
    "-l",
    "-json",
    "-xml",
    "--to",
    "json",
    "old",
    "new",
    "xml",
    "-k",
    "--strict",
]


@FUZZ
@given(data=st.data())
def test_classad_command_never_fails_badly(files, data):
    from classad import cli

    command = data.draw(st.sampled_from(["eval", "query", "convert", "analyze"]))
    argv = [command, *data.draw(arguments(CLASSAD_WORDS, files))]
    check(*run_cli(cli.main, argv), argv)


MATCHMAKER_WORDS = [
    "--config",
    "--slots",
    "--jobs",
    "--now",
    "--state",
    "--json",
    "--explain",
    "--summary",
    "--no-progress",
    "--allow-clock-skew",
    "--setfactor",
    "--setprio",
    "--resetusage",
    "--delete",
    "--quotas",
    "--job",
    "--submitter",
    "--slot",
    "--duration",
    "--interval",
    "--start",
]


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_matchmaker_command_never_fails_badly(files, tmp_path_factory, data):
    from matchmaker.cli import commands

    command = data.draw(st.sampled_from(["negotiate", "userprio", "analyze", "simulate"]))
    argv = [command, *data.draw(arguments(MATCHMAKER_WORDS, files))]
    # Every state file lives in a fresh directory of the test's.
    state = str(tmp_path_factory.mktemp("state") / "p.db")
    argv = [state if a.endswith(".db") else a for a in argv]
    if data.draw(st.booleans()):
        argv += ["--state", state]
    check(*run_cli(lambda a: commands.main(a, sys.stdout, sys.stderr), argv), argv)


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_matchmaker_negotiate_with_mostly_valid_arguments(files, data):
    """Closer to real use: the required files present, one or two arguments off."""
    from matchmaker.cli import commands

    ex = ROOT / "examples" / "negotiator"
    argv = [
        "negotiate",
        "--config",
        str(ex / "negotiator.config"),
        "--slots",
        str(ex / "slots.ads"),
        "--jobs",
        str(ex / "jobs.ads"),
        "--now",
        "1700000000",
    ]
    for _ in range(data.draw(st.integers(1, 2))):
        i = data.draw(st.integers(1, len(argv) - 1))
        argv[i] = data.draw(
            st.one_of(st.sampled_from(VALUES), st.sampled_from(files), st.sampled_from(MATCHMAKER_WORDS))
        )
    check(*run_cli(lambda a: commands.main(a, sys.stdout, sys.stderr), argv), argv)


def test_a_nul_in_an_argument_is_a_usage_error():
    """Found by the fuzz target: open() refuses a name with NUL (ValueError)."""
    from classad import cli
    from matchmaker.cli import commands

    status, err = run_cli(cli.main, ["query", "x\x00y"])
    assert (status, err) == (
        2,
        "classad: command-line error: an argument holds a NUL character (see 'classad -help')\n",
    )
    status, err = run_cli(lambda a: commands.main(a, sys.stdout, sys.stderr), ["negotiate", "--config", "\x00"])
    assert (status, err) == (
        2,
        "matchmaker: command-line error: an argument holds a NUL character (see 'matchmaker -help')\n",
    )
