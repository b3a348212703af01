"""What the configuration reader warns about reaches every command that reads it.

``warning : message`` records a warning and ``use ROLE : ...`` is ignored with one
(docs/knobs.md, include, use and conditionals; errors); ``lint`` reports them as
``config-warning``, and ``negotiate``, ``simulate`` and ``analyze`` print them on
standard error with the file and line, as they print the group tree's warnings.
"""

from __future__ import annotations

from pathlib import Path

from support import run_matchmaker

from matchmaker.api import load

CONFIG = "X = 1\nwarning : check the quotas\nuse ROLE : Personal\n"
SLOT = 'Name = "slot1@h"\nCpus = 1\nMemory = 1024\nRequirements = true\n'
JOB = 'ClusterId = 1\nProcId = 0\nOwner = "u"\nUser = "u@d"\nJobStatus = 1\nRequestCpus = 1\nRequirements = true\n'


def inputs(tmp: Path) -> list[str]:
    (tmp / "pool.conf").write_text(CONFIG)
    (tmp / "slots.ad").write_text(SLOT)
    (tmp / "jobs.ad").write_text(JOB)
    return ["--config", str(tmp / "pool.conf"), "--slots", str(tmp / "slots.ad"), "--jobs", str(tmp / "jobs.ad")]


def expected(tmp: Path) -> list[str]:
    conf = tmp / "pool.conf"
    return [
        f"matchmaker: {conf}:2: warning: check the quotas",
        f"matchmaker: {conf}:3: warning: 'use ROLE : Personal' ignored (templates are not modelled)",
    ]


def test_load_carries_the_reader_warnings_with_file_and_line(tmp_path):
    args = inputs(tmp_path)
    loaded = load(args[1], args[3], args[5])
    assert [f"matchmaker: {w}" for w in loaded.warnings] == expected(tmp_path)


def test_negotiate_prints_the_reader_warnings(tmp_path):
    ran = run_matchmaker("negotiate", *inputs(tmp_path), "--now", 1700000000, "--no-progress")
    assert ran.returncode == 0, ran.stderr
    assert [line for line in ran.stderr.splitlines() if "warning:" in line] == expected(tmp_path)


def test_simulate_and_analyze_print_them_too(tmp_path):
    sim = run_matchmaker(
        "simulate", *inputs(tmp_path), "--start", 1700000000, "--duration", "2m", "--interval", "1m", "--no-progress"
    )
    assert sim.returncode == 0, sim.stderr
    assert [line for line in sim.stderr.splitlines() if "warning:" in line][:2] == expected(tmp_path)
    why = run_matchmaker("analyze", *inputs(tmp_path), "--job", "1.0")
    assert why.returncode == 0, why.stderr
    assert [line for line in why.stderr.splitlines() if "warning:" in line] == expected(tmp_path)


def test_lint_reports_the_same_warnings_at_the_same_lines(tmp_path):
    args = inputs(tmp_path)
    ran = run_matchmaker("lint", "--config", args[1])
    lines = [line for line in ran.stdout.splitlines() + ran.stderr.splitlines() if "config-warning" in line]
    assert len(lines) == 2
    assert ":2:" in lines[0] and "check the quotas" in lines[0]
    assert ":3:" in lines[1] and "use ROLE : Personal" in lines[1]
