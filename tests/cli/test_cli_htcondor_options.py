"""``classad query`` / ``convert`` as HTCondor users type them.

The option semantics come from the condor_status manual (``-af[:jlhVr,tng]``,
``-constraint``, ``-sort``, ``-limit``, ``-format``, ``-long``, ``-json``, ``-xml``);
the values printed come from the htcondor wheel reading the same example files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import ROOT, classad_bytes

SLOTS = str(ROOT / "examples" / "slots.ad")
JOBS = str(ROOT / "examples" / "jobs.ad")


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """``classad ARGS`` in this process, its streams as bytes."""
    return classad_bytes(*args, stdin=stdin or b"")


def ok(*args: str, stdin: bytes | None = None) -> str:
    res = run(*args, stdin=stdin)
    assert res.returncode == 0, res.stderr.decode()
    assert res.stderr == b""
    return res.stdout.decode()


@pytest.fixture(scope="module")
def oracle_ads():
    """The example files as the htcondor wheel reads them."""
    pytest.importorskip("htcondor2")
    import classad2

    return {name: list(classad2.parseAds((ROOT / name).read_text(), classad2.ParserType.Old)) for name in (SLOTS, JOBS)}


def _af(value) -> str:
    """How -af prints a value (%v): strings bare, numbers as ClassAd literals."""
    return value if isinstance(value, str) else str(value)


# ---- files anywhere, single-dash spellings -------------------------------------------------------


def test_files_before_or_after_the_af_list(oracle_ads):
    expected = "".join(f"{ad['Name']} {ad['Cpus']}\n" for ad in oracle_ads[SLOTS])
    assert ok("query", "--af", "Name", "Cpus", SLOTS) == expected
    assert ok("query", SLOTS, "-af", "Name", "Cpus") == expected
    assert ok("query", "-autoformat", "Name", "Cpus", SLOTS) == expected


def test_single_dash_constraint_and_values_after_equals(oracle_ads):
    expected = "".join(f"{ad['Name']}\n" for ad in oracle_ads[SLOTS] if ad.get("State") == "Unclaimed")
    assert ok("query", SLOTS, "-constraint", 'State == "Unclaimed"', "-af", "Name") == expected
    assert ok("query", '--constraint=State == "Unclaimed"', SLOTS, "-af", "Name") == expected
    assert ok("query", "-af", "Name", SLOTS, '-constraint=State == "Unclaimed"') == expected


@pytest.mark.parametrize(
    "single, double", [("-l", "--long"), ("-long", "--long"), ("-json", "--json"), ("-xml", "--xml")]
)
def test_single_dash_output_shapes(single: str, double: str):
    assert ok("query", JOBS, single, "-limit", "2") == ok("query", JOBS, double, "--limit", "2")


def test_json_output_is_what_the_oracle_reads(oracle_ads):
    got = json.loads(ok("query", JOBS, "-json", "-limit", "3"))
    assert [ad["GlobalJobId"] for ad in got] == [ad["GlobalJobId"] for ad in oracle_ads[JOBS][:3]]


# ---- -af qualifiers (condor_status manual) ------------------------------------------------------


def _jobs(oracle_ads, n=3):
    return oracle_ads[JOBS][:n]


def test_af_headings_pad_columns_to_the_widest_value(oracle_ads):
    ads = _jobs(oracle_ads)
    rows = [("Owner", "RequestMemory")] + [(ad["Owner"], str(ad["RequestMemory"])) for ad in ads]
    w0, w1 = (max(len(r[i]) for r in rows) for i in (0, 1))
    expected = "".join(f"{a.ljust(w0)} {b.ljust(w1)}\n" for a, b in rows)
    assert ok("query", JOBS, "-af:h", "Owner", "RequestMemory", "-limit", "3") == expected


def test_af_job_id_label_comma_tab(oracle_ads):
    ads = _jobs(oracle_ads)
    ids = [f"{ad['ClusterId']}.{ad['ProcId']}" for ad in ads]
    assert ok("query", JOBS, "-af:j", "Owner", "-limit", "3") == "".join(
        f"{i} {ad['Owner']}\n" for i, ad in zip(ids, ads)
    )
    assert ok("query", JOBS, "-af:l", "Owner", "ProcId", "-limit", "3") == "".join(
        f"Owner = {ad['Owner']} ProcId = {ad['ProcId']}\n" for ad in ads
    )
    assert ok("query", JOBS, "-af:,", "Owner", "ProcId", "-limit", "3") == "".join(
        f"{ad['Owner']}, {ad['ProcId']}\n" for ad in ads
    )
    assert ok("query", JOBS, "-af:t", "Owner", "ProcId", "-limit", "3") == "".join(
        f"{ad['Owner']}\t{ad['ProcId']}\n" for ad in ads
    )


def test_af_newline_and_blank_line_between_ads(oracle_ads):
    ads = _jobs(oracle_ads, 2)
    # -af:lrng is the manual's "-long equivalent": one "Name = raw value" per line, ads apart
    assert ok("query", JOBS, "-af:lrng", "Owner", "RequestCpus", "-limit", "2") == "".join(
        f'\nOwner = "{ad["Owner"]}"\nRequestCpus = {ad.lookup("RequestCpus")}\n' for ad in ads
    )


def test_af_capital_v_quotes_strings(oracle_ads):
    ads = _jobs(oracle_ads, 2)
    assert ok("query", JOBS, "-af:V", "Owner", "-limit", "2") == "".join(f'"{ad["Owner"]}"\n' for ad in ads)


def test_af_undefined_prints_undefined():
    assert ok("query", JOBS, "-af", "NoSuchAttribute", "-limit", "1") == "undefined\n"


# ---- -sort, -limit, -format ----------------------------------------------------------------------


def test_sort_is_ascending_and_strings_ignore_case(oracle_ads):
    ads = sorted(oracle_ads[JOBS], key=lambda ad: (ad["Owner"].lower(), -ad["ProcId"]))
    expected = "".join(f"{ad['Owner']} {ad['ProcId']}\n" for ad in ads)
    assert ok("query", JOBS, "-sort", "Owner", "-sort", "-ProcId", "-af", "Owner", "ProcId") == expected


def test_limit(oracle_ads):
    out = ok("query", SLOTS, "-limit", "4", "-af", "Name")
    assert out.splitlines() == [ad["Name"] for ad in oracle_ads[SLOTS][:4]]


def test_format_is_printf_like(oracle_ads):
    ads = _jobs(oracle_ads)
    out = ok(
        "query",
        JOBS,
        "-format",
        "%d.",
        "ClusterId",
        "-format",
        "%-3d|",
        "ProcId",
        "-format",
        "%s",
        "Owner",
        "-format",
        " %.1f\\n",
        "RequestMemory / 1024.0",
        "-limit",
        "3",
    )
    assert out == "".join(
        f"{ad['ClusterId']}.{ad['ProcId']:<3d}|{ad['Owner']} {ad['RequestMemory'] / 1024:.1f}\n" for ad in ads
    )


def test_format_skips_an_undefined_value():
    assert (
        ok("query", JOBS, "-format", "[%s]", "NoSuchAttribute", "-format", "%s\\n", "Owner", "-limit", "1") == "alice\n"
    )


# ---- errors, help, convert ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["-bogus"],
        ["-af"],
        ["-af:q", "Name"],
        ["-limit", "x"],
        ["-af:lh", "Name"],
        ["-format", "%d"],
        ["-cons", "true"],
        ["-autof", "Name"],
    ],
)
def test_usage_errors(args):
    """Mistakes, abbreviations among them (options are never abbreviated): one line, status 2."""
    res = run("query", SLOTS, *args)
    assert res.returncode == 2 and b"Traceback" not in res.stderr
    lines = res.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("classad query: command-line error: "), lines


def test_help_documents_the_file_rule():
    out = ok("query", "-help")
    assert out.startswith("usage: classad query") and "names an existing file" in out


def test_convert_takes_several_files():
    both = ok("convert", "--to", "old", SLOTS, JOBS)
    assert both == ok("convert", "--to", "old", SLOTS) + ok("convert", "--to", "old", JOBS)


# ---- the last-resort handler, encodings, broken pipes ----------------------------------------------


def test_unexpected_exception_is_one_line_and_status_2(monkeypatch, capsys):
    from classad import cli

    def broken(args, out):
        raise ValueError("boom")

    monkeypatch.setattr(cli, "cmd_convert", broken)
    assert cli.main(["convert", "--to", "old", SLOTS]) == 2
    err = capsys.readouterr().err
    assert err == "classad: <internal>: error: ValueError: boom (please report this bug)\n"


def test_lone_surrogate_is_one_error_line_not_a_traceback():
    """A lone surrogate escape is no character: the reader refuses it at its position
    (docs/differences.md R26), and the command says so in one line."""
    res = run("convert", "--to", "old", stdin=b'{"a": "x\\ud800y"}\n')
    assert res.returncode == 1 and b"Traceback" not in res.stderr
    assert len(res.stderr.splitlines()) == 1 and b"surrogate" in res.stderr.lower(), res.stderr


def test_undecodable_bytes_in_a_string_are_written_back_unchanged():
    """Bytes that are not UTF-8 survive a conversion (R20, R25)."""
    res = run("convert", "--to", "old", stdin=b'a = "x\xffy"\n')
    assert res.returncode == 0, res.stderr
    assert res.stdout == b'a = "x\xffy"\n\n'


def test_broken_pipe_is_quiet(tmp_path):
    big = tmp_path / "big.ad"
    big.write_text(((ROOT / SLOTS).read_text() + "\n") * 100)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "classad.cli", "convert", "--to", "old", str(big)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert err == b"" and proc.returncode == 0  # SIGPIPE ends quietly with 0 (docs/cli.md)


@pytest.mark.slow
def test_endless_stdin_is_refused_not_read_forever():
    """``classad query -`` over a stream without newlines stops at the line limit."""
    proc = subprocess.run(
        [sys.executable, "-m", "classad.cli", "query", "-"],
        input=b"\0" * 17_000_000,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert b"<stdin>:1:" in proc.stderr and b"line longer than" in proc.stderr


@pytest.mark.parametrize("fmt", ["%999999999d", "%.99999999999f", "x%4097s\\n"])
def test_huge_format_widths_are_a_usage_error(fmt, capsys):
    """printf would build a field of that size for every ad."""
    from classad import cli

    assert cli.main(["query", SLOTS, "-format", fmt, "Memory"]) == 2
    err = capsys.readouterr().err
    assert "at most 4096" in err and "Traceback" not in err


# ---- -attributes and -af:j -------------------------------------------------------------------------


def test_attributes_projects_whole_ads(oracle_ads):
    """condor_q -attributes A,B: whole ads with only the attributes named (in any case)."""
    ads = oracle_ads[JOBS][:2]
    expected = "".join(f'ClusterId = {ad["ClusterId"]}\nOwner = "{ad["Owner"]}"\n\n' for ad in ads)
    assert ok("query", JOBS, "-attributes", "Owner,clusterid", "-limit", "2") == expected
    got = json.loads(ok("query", JOBS, "--attributes=Owner,NoSuchAttr", "-json", "-limit", "2"))
    assert got == [{"Owner": ad["Owner"]} for ad in ads]


def test_af_j_is_the_job_id(oracle_ads):
    """``j`` prints ClusterId.ProcId first, as -format "%d" ClusterId -format ".%d" ProcId would:
    a slot ad has neither, so its id is empty (never ``undefined.undefined``)."""
    jobs = oracle_ads[JOBS][:3]
    assert ok("query", JOBS, "-af:j", "Owner", "-limit", "3") == "".join(
        f"{ad['ClusterId']}.{ad['ProcId']} {ad['Owner']}\n" for ad in jobs
    )
    slots = oracle_ads[SLOTS][:2]
    out = ok("query", SLOTS, "-af:j", "Name", "-limit", "2")
    assert out == "".join(f" {ad['Name']}\n" for ad in slots) and "undefined" not in out
