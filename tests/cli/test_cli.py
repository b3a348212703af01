"""The ``classad`` command on the example files and on bad input, run in this process
with its streams as bytes; two cases run it as a real process, end to end.

Expected outputs come from HTCondor: the ``classad_eval`` cases of its own test
suite (``src/condor_tests/test_classad_eval.py``), and the htcondor wheel
reading the same example files.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from support import ROOT, classad_bytes

EXAMPLES = ROOT / "examples"
SLOTS = str(EXAMPLES / "slots.ad")
JOBS = str(EXAMPLES / "jobs.ad")
ERROR_LINE = re.compile(r"^classad: [^\n]+:\d+:\d+: (format|syntax): [^\n]+\n$")


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """``classad ARGS`` in this process, its streams as bytes."""
    return classad_bytes(*args, stdin=stdin or b"")


def run_process(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """``python -m classad.cli ARGS``, a real process (for the end-to-end cases)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "classad.cli", *args], input=stdin, capture_output=True, cwd=ROOT, env=env, timeout=120
    )


def ok(*args: str, stdin: bytes | None = None) -> str:
    res = run(*args, stdin=stdin)
    assert res.returncode == 0, res.stderr.decode()
    assert res.stderr == b""
    return res.stdout.decode()


def fails(*args: str, stdin: bytes | None = None) -> str:
    """Run, expect exit status 1 and exactly one error line; return that line."""
    res = run(*args, stdin=stdin)
    err = res.stderr.decode()
    assert res.returncode == 1, (res.returncode, err)
    assert "Traceback" not in err
    assert err.count("\n") == 1, err
    return err


@pytest.fixture(scope="module")
def oracle_ads():
    """The example files as the htcondor wheel reads them."""
    pytest.importorskip("htcondor2")
    import classad2

    return {
        name: list(classad2.parseAds((EXAMPLES / name).read_text(), classad2.ParserType.Old))
        for name in ("slots.ad", "jobs.ad")
    }


# ---- eval: HTCondor's classad_eval test cases ----------------------------------------------

EVAL_CASES = [
    (["1"], "[  ]\n1\n"),
    (["1 + 1"], "[  ]\n2\n"),
    (["x = 7", "x"], "[ x = 7 ]\n7\n"),
    (["x = y", "x"], "[ x = y ]\nundefined\n"),
    (["x = y", "y = 7", "x"], "[ x = y; y = 7 ]\n7\n"),
    (["[ x = y; y = 7; ]", "x"], "[ x = y; y = 7 ]\n7\n"),
    (["--quiet", "x = y", "y = 7", "x"], "7\n"),
    (["x = y", "x", "y = 7", "x"], "[ x = y ]\nundefined\n[ x = y; y = 7 ]\n7\n"),
    (["--quiet", "--my", "{my}", "x"], "7\n"),
    (["--quiet", "--my", "{my}", "MY.x"], "7\n"),
    (["--quiet", "--my", "{my}", "TARGET.x"], "undefined\n"),
    (["--quiet", "--target", "{target}", "x"], "8\n"),
    (["--quiet", "--target", "{target}", "MY.x"], "undefined\n"),
    (["--quiet", "--target", "{target}", "TARGET.x"], "8\n"),
    (["--quiet", "--my", "{my}", "--target", "{target}", "x"], "7\n"),
    (["--quiet", "--my", "{my}", "--target", "{target}", "MY.x"], "7\n"),
    (["--quiet", "--my", "{my}", "--target", "{target}", "TARGET.x"], "8\n"),
    (["--quiet", "--my", "{my}", "--target", "{target}", "y"], "9\n"),
    (["--quiet", "--my", "{my}", "--target", "{target}", "z"], "10\n"),
]


@pytest.mark.parametrize("args, expected", EVAL_CASES)
def test_eval_like_classad_eval(tmp_path, args, expected):
    """The cases of HTCondor's classad_eval test, with our option spellings."""
    (tmp_path / "my.ad").write_text("[ x = 7; z = 10; ]\n")
    (tmp_path / "target.ad").write_text("[ x = 8; y = 9; ]\n")
    argv = [a.format(my=tmp_path / "my.ad", target=tmp_path / "target.ad") for a in args]
    assert ok("eval", *argv) == expected


def test_eval_reads_any_format_and_inline_ads():
    """--my reads the first ad of a file in any format; --my-ad takes the ad itself."""
    assert ok("eval", "-q", "--my", JOBS, "Owner") == '"alice"\n'
    assert (
        ok("eval", "-q", "--my-ad", "[Cpus = 4]", "--target-ad", "[RequestCpus = 2]", "TARGET.RequestCpus <= MY.Cpus")
        == "true\n"
    )


def test_eval_matches_the_oracle_on_the_examples(oracle_ads):
    """Evaluating a slot's Requirements against a job gives the oracle's answer."""
    import classad2

    slot, job = oracle_ads["slots.ad"][0], oracle_ads["jobs.ad"][0]
    expected = repr(classad2.ExprTree("Requirements").simplify(slot, job))
    assert ok("eval", "-q", "--my", SLOTS, "--target", JOBS, "Requirements") == expected + "\n"


def test_eval_strict_mode():
    """--strict turns off the compat-mode fallback to the TARGET ad (docs/language.md, evaluation modes)."""
    args = ["eval", "-q", "--my-ad", "[a = 1]", "--target-ad", "[b = 2]", "b"]
    assert ok(*args) == "2\n"
    assert ok(*args[:1], "--strict", *args[1:]) == "undefined\n"


# ---- query -----------------------------------------------------------------------------------


def _oracle_af(ad, exprs):
    """An -af line computed with the oracle: strings raw, other values as printOld writes them."""
    import classad2

    cols = []
    for expr in exprs:
        value = classad2.ExprTree(expr).eval(ad)
        if isinstance(value, str):
            cols.append(value)
        else:
            holder = classad2.ClassAd()
            holder["v"] = value
            cols.append(holder.printOld().split(" = ", 1)[1].rstrip("\n"))
    return " ".join(cols)


def _oracle_select(ads, constraint):
    import classad2

    return [ad for ad in ads if classad2.ExprTree(constraint).eval(ad) is True]


def test_query_autoformat(oracle_ads):
    """--constraint and --af print what the oracle computes for each selected slot."""
    constraint = 'State == "Unclaimed" && Cpus >= 4'
    exprs = ["Name", "Cpus", "Memory / 1024.0", "OpSysAndVer", "GPUs > 0", "NoSuchAttr"]
    expected = "".join(_oracle_af(ad, exprs) + "\n" for ad in _oracle_select(oracle_ads["slots.ad"], constraint))
    assert expected.count("\n") >= 3
    assert ok("query", SLOTS, "--constraint", constraint, "--af", *exprs) == expected


def test_query_long_output(oracle_ads):
    """--long prints the selected ads in old format; the oracle reads them back as the same ads."""
    import classad2

    out = ok("query", JOBS, "-c", 'Owner == "carol"', "--long")
    theirs = list(classad2.parseAds(out, classad2.ParserType.Old))
    expected = _oracle_select(oracle_ads["jobs.ad"], 'Owner == "carol"')
    assert [t.printJson() for t in theirs] == [e.printJson() for e in expected]


def test_query_json_output(oracle_ads):
    """--json prints a JSON list whose objects are the oracle's printJson of each ad."""
    out = ok("query", JOBS, "-c", "JobStatus == 1", "--json")
    expected = _oracle_select(oracle_ads["jobs.ad"], "JobStatus == 1")
    assert json.loads(out) == [json.loads(ad.printJson()) for ad in expected]


def test_query_several_files_and_stdin():
    """Files are read in order; '-' is standard input (a real process, end to end)."""
    res = run_process("query", SLOTS, "-", "--af", "MyType", stdin=(EXAMPLES / "jobs.ad").read_bytes())
    assert res.returncode == 0 and res.stderr == b"", res.stderr
    out = res.stdout.decode()
    assert out.count("Machine\n") == 32 and out.count("Job\n") == 24


# ---- convert ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt, oracle_type", [("old", "Old"), ("new", "New"), ("jsonl", "JSON"), ("xml", "XML")])
def test_convert_is_read_back_by_the_oracle(oracle_ads, fmt, oracle_type):
    """Each output format, read by classad2, gives the same ads as the original file."""
    import classad2

    out = ok("convert", "--to", fmt, SLOTS)
    theirs = list(classad2.parseAds(out, classad2.ParserType[oracle_type]))
    assert [t.printJson() for t in theirs] == [e.printJson() for e in oracle_ads["slots.ad"]]


def test_convert_json_list(oracle_ads):
    """--to json is condor_q -json: a list of the oracle's printJson objects."""
    out = ok("convert", "--to", "json", JOBS)
    assert json.loads(out) == [json.loads(ad.printJson()) for ad in oracle_ads["jobs.ad"]]


@pytest.mark.parametrize("chain", [["new", "json", "xml", "old"], ["pretty", "jsonl", "old"]])
def test_convert_chain_returns_to_the_start(chain):
    """old -> ... -> old reproduces the original file byte for byte (it is in tool order)."""
    data = (EXAMPLES / "jobs.ad").read_bytes()
    for fmt in chain:
        data = run("convert", "--to", fmt, "-", stdin=data).stdout
    assert data == (EXAMPLES / "jobs.ad").read_bytes()


def test_convert_long_new_list():
    """--to new --list writes the -long:new wrapper, which reads back."""
    out = ok("convert", "--to", "new", "--list", JOBS)
    assert out.startswith("{\n[ ") and out.endswith("]\n}\n")
    assert ok("convert", "--to", "old", "-", stdin=out.encode()) == (EXAMPLES / "jobs.ad").read_text()


# ---- errors ----------------------------------------------------------------------------------


def test_truncated_new_format_file(tmp_path):
    """A new-format file cut in the middle of an ad: one line naming where that ad starts."""
    text = ok("convert", "--to", "new", JOBS)
    bad = tmp_path / "cut.ad"
    bad.write_text(text[: len(text) // 2])
    err = fails("convert", "--to", "json", str(bad))
    assert ERROR_LINE.match(err) and err.startswith(f"classad: {bad}:")


def test_truncated_json_file(tmp_path):
    """A JSON list cut short."""
    bad = tmp_path / "cut.json"
    bad.write_text(ok("convert", "--to", "json", SLOTS)[:5000])
    assert ERROR_LINE.match(fails("query", str(bad), "--af", "Name"))


def test_unterminated_string(tmp_path):
    """An old-format value with an unclosed string: the line and the column of the quote."""
    bad = tmp_path / "open.ad"
    bad.write_text('Owner = "alice"\nCmd = "/bin/sleep\nArgs = "60"\n')
    err = fails("query", str(bad), "--af", "Owner")
    assert err.startswith(f"classad: {bad}:2:7: format: ") and ERROR_LINE.match(err)


def test_binary_garbage(tmp_path):
    """Random bytes give one positioned error line, never a traceback."""
    import random

    rng = random.Random(7)
    bad = tmp_path / "garbage.bin"
    bad.write_bytes(bytes(rng.randrange(256) for _ in range(4000)))
    assert ERROR_LINE.match(fails("convert", "--to", "json", str(bad)))
    assert ERROR_LINE.match(fails("query", "-", "--af", "x", stdin=b"\x00\xff\xfe[\x01\x02 = \x03\n"))


def test_bad_constraint_and_expression():
    """A syntax error in an argument names the argument."""
    assert fails("query", SLOTS, "-c", "Cpus >").startswith("classad: <constraint>:1:")
    assert fails("eval", "1 +").startswith("classad: <expr1>:1:")


def test_missing_file():
    """An unreadable file is one io error line."""
    err = fails("query", "no/such/file.ad")
    assert err == "classad: no/such/file.ad: io: No such file or directory\n"


def test_keep_going_reports_every_bad_ad(tmp_path):
    """--keep-going prints each error, keeps the good ads and exits with status 1."""
    bad = tmp_path / "mixed.ad"
    bad.write_text("a = 1\n\nb = (\n\nc = 3\n\nd = 1 2\n\ne = 5\n")
    res = run("query", str(bad), "-k", "--af", "a ?: c ?: e")
    assert res.returncode == 1
    assert res.stdout.decode() == "1\n3\n5\n"
    lines = res.stderr.decode().splitlines()
    assert [line.split(":")[2] for line in lines] == ["3", "7"]


@pytest.mark.parametrize("command", [[], ["eval"], ["query"], ["convert"]])
def test_help(command):
    """--help works for the command and each subcommand."""
    res = run(*command, "--help")
    assert res.returncode == 0 and b"usage: classad" in res.stdout


def test_usage_errors_exit_non_zero():
    """Missing arguments are argparse usage errors (status 2), not tracebacks (a real
    process, end to end)."""
    res = run_process("convert", SLOTS)
    assert res.returncode == 2 and b"Traceback" not in res.stderr


def test_keyboard_interrupt_exits_130(monkeypatch, capsys):
    """An interrupt ends the command with status 130 and a short message."""
    from classad import cli

    def interrupted(args, out):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_eval", interrupted)
    assert cli.main(["eval", "1"]) == 130
    assert capsys.readouterr().err == "classad: interrupted\n"
