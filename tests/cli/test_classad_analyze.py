"""``classad analyze``: the clause view of two ads on the command line, its JSON, its errors."""

from __future__ import annotations

import json
import subprocess

from support import classad_bytes

JOB = "[RequestMemory = 4096; Requirements = TARGET.Memory >= RequestMemory && TARGET.HasDocker && Cpus > 2]"
SLOT = "[Memory = 8192; Cpus = 4; Requirements = START; START = TARGET.RequestMemory < 2048]"


def run(*args: str) -> subprocess.CompletedProcess:
    """``classad analyze ARGS`` in this process; what it wrote, as text."""
    done = classad_bytes("analyze", *args)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def test_text_both_ways():
    proc = run("--my-ad", JOB, "--target-ad", SLOT, "--both")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "MY.Requirements against the TARGET ad:"
    assert "ok [1] TARGET.Memory >= RequestMemory" in lines[1]
    assert "NO [2] TARGET.HasDocker" in lines[2] and "(undefined)" in lines[2]
    assert "ok [3] Cpus > 2" in lines[3]
    assert lines[4].strip() == "whole expression: undefined"
    assert "NO [1] START" in proc.stdout


def test_json(tmp_path):
    slot = tmp_path / "slot.ad"
    slot.write_text("Memory = 8192\nCpus = 4\nHasDocker = true\nRequirements = true\n")
    proc = run("--my-ad", JOB, "--target", str(slot), "--json")
    doc = json.loads(proc.stdout)
    assert [c["outcome"] for c in doc["my"]["clauses"]] == ["true", "true", "true"]
    assert doc["my"]["outcome"] == "true" and "target" not in doc


def test_errors_are_one_line():
    proc = run("--my-ad", "[Requirements = Cpus > ]", "--target-ad", "[]")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("classad: <my-ad>:1:") and len(proc.stderr.splitlines()) == 1
    proc = run("--my", "no-such-file.ad", "--target-ad", "[]")
    assert proc.returncode == 1 and proc.stderr.startswith("classad: no-such-file.ad: io:")
