"""``matchmaker lint``: every finding code triggered by a small configuration (and pool)
and silenced by its correction, positions worked out by hand, the exit statuses, the
examples of the repository (which must lint clean), and a property test of the knob-name
suggestions."""

from __future__ import annotations

import io
import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from support import ROOT

from matchmaker.api import lint
from matchmaker.cli import main
from matchmaker.config.knobs import KNOBS
from matchmaker.review.findings import CODES
from matchmaker.review.names import known_names


def slot(name: str, memory: int = 2048, extra: str = "") -> str:
    return (
        f'Name = "{name}"\nCpus = 1\nMemory = {memory}\nOpSys = "LINUX"\n'
        f"Requirements = START\nSTART = TARGET.RequestMemory <= MY.Memory\nRank = 0\n{extra}"
    )


def job(cluster: int, requirements: str, extra: str = "") -> str:
    return (
        f'ClusterId = {cluster}\nProcId = 0\nOwner = "alice"\nUser = "alice@x"\nJobStatus = 1\n'
        f"RequestCpus = 1\nRequestMemory = 1024\nRequirements = {requirements}\n{extra}"
    )


SLOTS = "\n".join([slot("slot1@a", 2048), slot("slot2@a", 4096, "GPUs = 1\n")])
GOOD_JOB = job(1, 'TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory')

# code -> (configuration, job ads or None (no pool), the corrected configuration, corrected job ads)
CASES: dict[str, tuple[str, str | None, str, str | None]] = {
    "config-error": ("if true\nX = 1\n", None, "if true\nX = 1\nendif\n", None),
    "knob-value": ("PRIORITY_HALFLIFE = abc\n", None, "PRIORITY_HALFLIFE = 3600\n", None),
    "expr-syntax": ("START = Memory >\n", None, "START = Memory > 1\n", None),
    "config-warning": ("use ROLE : Personal\nX = 1\n", None, "X = 1\n", None),
    "knob-unknown": ("PREEMPTION_REQUIRMENTS = False\n", None, "PREEMPTION_REQUIREMENTS = False\n", None),
    "group-knob-unknown": (
        "GROUP_NAMES = group_a\nGROUP_QUOTA_group_a = 1\nGROUP_QUOTA_group_b = 3\n",
        None,
        "GROUP_NAMES = group_a, group_b\nGROUP_QUOTA_group_a = 1\nGROUP_QUOTA_group_b = 3\n",
        None,
    ),
    "macro-undefined": (
        "PREEMPTION_RANK = RemoteUserPrio * $(FACTOR)\n",
        None,
        "FACTOR = 2\nPREEMPTION_RANK = RemoteUserPrio * $(FACTOR)\n",
        None,
    ),
    "knob-overridden": (
        "PRIORITY_HALFLIFE = 3600\nPRIORITY_HALFLIFE = 7200\n",
        None,
        "PRIORITY_HALFLIFE = 3600\nPRIORITY_HALFLIFE = $(PRIORITY_HALFLIFE) * 2\n",
        None,
    ),
    "policy-knob-unused": (
        "MATCHMAKER_PRIORITY_POLICY = slurm\nLSF_USER_SHARES = [alice, 10]\n",
        None,
        "MATCHMAKER_PRIORITY_POLICY = lsf\nLSF_USER_SHARES = [alice, 10]\n",
        None,
    ),
    "attr-unknown": ("", job(1, "TARGET.Memroy >= RequestMemory"), "", job(1, "TARGET.Memory >= RequestMemory")),
    "attr-partial": ("", job(1, "TARGET.GPUs >= 0"), "", job(1, "(TARGET.GPUs ?: 0) >= 0")),
    "clause-dead": (
        "",
        job(1, 'TARGET.OpSys == "Linux64" && TARGET.Memory >= 1'),
        "",
        job(1, 'TARGET.OpSys == "LINUX" && TARGET.Memory >= 1'),
    ),
    "requirements-unsatisfiable": (
        "",
        job(1, "TARGET.Memory >= 3000 && TARGET.Memory < 3000"),
        "",
        job(1, "TARGET.Memory >= 3000 && TARGET.Memory < 5000"),
    ),
    "group-dynamic-over-one": (
        "GROUP_NAMES = a, b\nGROUP_QUOTA_DYNAMIC_a = 0.7\nGROUP_QUOTA_DYNAMIC_b = 0.6\n",
        None,
        "GROUP_NAMES = a, b\nGROUP_QUOTA_DYNAMIC_a = 0.4\nGROUP_QUOTA_DYNAMIC_b = 0.6\n",
        None,
    ),
    "group-static-over-pool": (
        "GROUP_NAMES = a\nGROUP_QUOTA_a = 50\n",
        GOOD_JOB,
        "GROUP_NAMES = a\nGROUP_QUOTA_a = 2\n",
        GOOD_JOB,
    ),
    "group-no-quota": (
        "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 1\n",
        None,
        "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 1\nGROUP_QUOTA_DYNAMIC_b = 0.5\n",
        None,
    ),
    "group-invalid-name": (
        "GROUP_NAMES = a.sub\nGROUP_QUOTA_a.sub = 1\n",
        None,
        "GROUP_NAMES = a, a.sub\nGROUP_QUOTA_a = 1\nGROUP_QUOTA_a.sub = 1\n",
        None,
    ),
    "group-not-listed": (
        "GROUP_NAMES = a\nGROUP_QUOTA_a = 1\n",
        job(1, "true", 'AccountingGroup = "bio.alice"\n'),
        "GROUP_NAMES = a, bio\nGROUP_QUOTA_a = 1\nGROUP_QUOTA_bio = 1\n",
        job(1, "true", 'AccountingGroup = "bio.alice"\n'),
    ),
    "group-sort-not-numeric": (
        "GROUP_NAMES = a\nGROUP_QUOTA_a = 1\nGROUP_SORT_EXPR = AccountingGroup\n",
        None,
        "GROUP_NAMES = a\nGROUP_QUOTA_a = 1\nGROUP_SORT_EXPR = GroupQuota\n",
        None,
    ),
}


def run_lint(tmp: Path, config: str, jobs: str | None):
    (tmp / "c.config").write_text(config)
    if jobs is None:
        return lint(tmp / "c.config", environ={})
    (tmp / "slots.ads").write_text(SLOTS)
    (tmp / "jobs.ads").write_text(jobs)
    return lint(tmp / "c.config", tmp / "slots.ads", tmp / "jobs.ads", environ={})


def test_every_code_has_a_case():
    assert set(CASES) == set(CODES)


@pytest.mark.parametrize("code", sorted(CASES))
def test_code_is_found_and_its_fix_silences_it(tmp_path, code):
    config, jobs, fixed, fixed_jobs = CASES[code]
    bad = run_lint(tmp_path, config, jobs)
    assert code in bad.codes(), bad.text()
    good = run_lint(tmp_path, fixed, fixed_jobs)
    assert code not in good.codes(), good.text()


def test_every_code_is_documented_with_an_example_and_a_fix():
    text = (ROOT / "docs" / "lint.md").read_text()
    for code in CODES:
        m = re.search(rf"^### `{re.escape(code)}`.*?(?=^### |\Z)", text, re.S | re.M)
        assert m, f"docs/lint.md has no section for {code}"
        assert "Example" in m.group(0) and "Fix" in m.group(0), code


def test_positions_and_text(tmp_path):
    """Positions by hand: ``PREEMPTION_REQUIRMENTS`` starts line 2 column 1; in
    ``START = Memory > 1 &&`` the value starts at column 9 and the parser reports the
    dangling ``&&``, at column 20; ``$(FACTOR)`` is at column 23 of line 4
    (``DEFAULT_PRIO_FACTOR = `` is 22 characters)."""
    text = "# a comment\nPREEMPTION_REQUIRMENTS = False\nSTART = Memory > 1 &&\nDEFAULT_PRIO_FACTOR = $(FACTOR)\n"
    report = run_lint(tmp_path, text, None)
    lines = report.text().splitlines()
    where = str(tmp_path / "c.config")
    assert lines[0] == (
        f"{where}:2:1: warning: unknown knob PREEMPTION_REQUIRMENTS; did you mean "
        "PREEMPTION_REQUIREMENTS? (an unknown name is ignored) [knob-unknown]"
    )
    assert lines[1].startswith(f"{where}:3:") and lines[1].endswith("[expr-syntax]")
    assert lines[1].startswith(f"{where}:3:20: error: START is not a valid expression")
    assert lines[2].startswith(f"{where}:4:23: warning: $(FACTOR) in DEFAULT_PRIO_FACTOR is never defined")
    assert report.exit_status() == 1


def test_override_names_both_lines(tmp_path):
    report = run_lint(tmp_path, "A = 1\nB = 2\nA = 3\n", None)
    assert [str(f).split(": ", 1)[1] for f in report.findings] == [
        "warning: A is defined at line 1 and again here at line 3: only this definition counts, "
        "the one at line 1 has no effect [knob-overridden]"
    ]


def test_attribute_suggestion_and_counts(tmp_path):
    """Two slots, one with ``GPUs``: ``TARGET.GPUs`` is missing from 1 of 2; ``Memroy`` is
    one swap from ``Memory``; the dead clause is clause 1 and false for both slots."""
    jobs = job(1, 'TARGET.OpSys == "Linux64" && TARGET.Memroy >= 1 && TARGET.GPUs >= 0')
    report = run_lint(tmp_path, "", jobs)
    messages = {f.code: f.message for f in report.findings}
    assert "did you mean Memory?" in messages["attr-unknown"]
    assert "1 of 2 slot ads lack GPUs" in messages["attr-partial"]
    dead = [f.message for f in report.findings if f.code == "clause-dead"]
    assert any(
        'clause 1 of job 1.0\'s Requirements, TARGET.OpSys == "Linux64", is true for no slot: '
        "false for 2 of 2 slots" == m
        for m in dead
    ), dead
    assert any("clause 2" in m and "undefined for 2 of 2 slots" in m for m in dead), dead


def test_ephemeral_attributes_count_as_present(tmp_path):
    config = "PREEMPTION_REQUIREMENTS = RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2\n"
    report = run_lint(tmp_path, config, GOOD_JOB)
    assert report.findings == []


def test_cli_exit_statuses_and_json(tmp_path):
    (tmp_path / "warn.config").write_text("PREEMPTION_REQUIRMENTS = False\n")
    (tmp_path / "clean.config").write_text("PREEMPTION_REQUIREMENTS = False\n")
    (tmp_path / "bad.config").write_text("START = (\n")

    def run(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        return main(list(argv), out, err), out.getvalue(), err.getvalue()

    assert run("lint", "--config", str(tmp_path / "clean.config"))[0] == 0
    assert run("lint", "--config", str(tmp_path / "warn.config"))[0] == 0
    assert run("lint", "--config", str(tmp_path / "warn.config"), "--strict")[0] == 1
    assert run("lint", "--config", str(tmp_path / "bad.config"))[0] == 1
    status, out, _ = run("lint", "--config", str(tmp_path / "warn.config"), "--json")
    doc = json.loads(out)
    assert status == 0 and [d["code"] for d in doc] == ["knob-unknown"] and doc[0]["line"] == 1
    assert run("lint", "--config", str(tmp_path / "missing.config"))[0] == 2
    assert run("lint", "--config", str(tmp_path / "clean.config"), "--slots", "x")[0] == 2
    status, out, err = run("lint")  # the shared grammar: one line, status 2 (docs/cli.md)
    assert status == 2 and out == "" and err.startswith("matchmaker lint: command-line error: ")
    assert err.count("\n") == 1


EXAMPLES = [
    ("groups/groups.config", "groups/slots.ads", "groups/jobs.ads"),
    ("negotiator/negotiator.config", "negotiator/slots.ads", "negotiator/jobs.ads"),
    *[(f"{p}/{p}.config", "policy-pool/slots.ads", "policy-pool/jobs.ads") for p in ("lsf", "maui", "dirac", "slurm")],
    *[
        (f"simulate/{d}/negotiator.config", "simulate/slots.ad", f"simulate/{d}/jobs.ad")
        for d in ("fair-share", "grow-decay", "rup-growth")
    ],
    *[
        (f"partitionable/{c}.config", "partitionable/slots.ad", "partitionable/jobs.ad")
        for c in ("leftovers", "no-leftovers")
    ],
    # The wrong policy is wrong in what it decides (a law fails), not in what lint sees.
    *[(f"property-testing/{c}.config", "slots.ad", "jobs.ad") for c in ("policy", "wrong-policy")],
]


def test_examples_are_clean():
    configs = {str(p.relative_to(ROOT / "examples")) for p in (ROOT / "examples").rglob("*.config")}
    assert configs == {c for c, _, _ in EXAMPLES}, "a new example configuration: add it to EXAMPLES"
    for config, slots, jobs in EXAMPLES:
        ex = ROOT / "examples"
        report = lint(ex / config, ex / slots, ex / jobs, environ={})
        assert report.findings == [], report.text()


def test_example_pool_under_defaults_is_clean(tmp_path):
    """The repository's realistic pool (examples/slots.ad, jobs.ad): guarded reads such as
    ``(TARGET.RequestGPUs ?: 0)`` are no finding."""
    (tmp_path / "empty.config").write_text("")
    report = lint(tmp_path / "empty.config", ROOT / "examples" / "slots.ad", ROOT / "examples" / "jobs.ad", environ={})
    assert report.findings == [], report.text()


CONCRETE = sorted(n for n in KNOBS if len(n) >= 6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CONCRETE), st.data())
def test_one_letter_changed_is_suggested(name, data):
    """Any declared knob with one letter replaced is reported as knob-unknown, and the
    original is among the suggestions (all names at the smallest distance are listed)."""
    pos = data.draw(st.integers(0, len(name) - 1))
    letter = data.draw(st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZ_"))
    assume(letter != name[pos])
    changed = name[:pos] + letter + name[pos + 1 :]
    assume(changed not in known_names().names)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "c.config").write_text(f"{changed} = 1\n")
        report = lint(Path(tmp) / "c.config", environ={})
    found = [f for f in report.findings if f.code == "knob-unknown"]
    assert len(found) == 1, report.text()
    suggested = re.search(r"did you mean (.*)\?", found[0].message).group(1)  # type: ignore[union-attr]
    assert name in re.split(r", | or ", suggested)


def test_one_bad_expression_does_not_hide_the_group_findings(tmp_path):
    """A broken PREEMPTION_RANK stops the settings, not the group checks; a broken value
    continued over two lines is reported at the value's start (column 9 of line 1)."""
    text = "GROUP_NAMES = a, x.y\nGROUP_QUOTA_a = 1\nPREEMPTION_RANK = (\nSTART = \\\n  Memory >\n"
    report = run_lint(tmp_path, text, None)
    assert sorted(report.codes()) == ["expr-syntax", "expr-syntax", "group-invalid-name"]  # x.y is ignored
    start = next(f for f in report.findings if f.message.startswith("START"))
    assert (start.line, start.column) == (4, 9)


def test_a_clause_of_the_slots_own_state_is_no_finding(tmp_path):
    """A desktop in use (``KeyboardIdle`` 0) refuses every job through ``KeyboardIdle >
    15 * 60``: the machine's state, not a mistake.  The clause on the job beside it is."""
    slots = (
        'Name = "desk1"\nCpus = 1\nMemory = 2048\nOpSys = "LINUX"\nKeyboardIdle = 0\nRequirements = START\n'
        'START = KeyboardIdle > 15 * 60 && TARGET.Owner == "nobody"\n'
    )
    (tmp_path / "c.config").write_text("")
    (tmp_path / "slots.ads").write_text(slots)
    (tmp_path / "jobs.ads").write_text(GOOD_JOB)
    report = lint(tmp_path / "c.config", tmp_path / "slots.ads", tmp_path / "jobs.ads", environ={})
    dead = [f.message for f in report.findings if f.code == "clause-dead"]
    assert len(dead) == 1 and 'TARGET.Owner == "nobody"' in dead[0] and "clause 2" in dead[0], report.text()


def test_realistic_pool(tmp_path):
    """The benchmark's realistic pool (100 slot ads, desktops, Docker nodes, groups):
    nothing wrong except the slots lacking ``HasDocker`` that some jobs ask for (notes)."""
    from benchmarks import realistic_pool

    realistic_pool.write_pool(tmp_path, slots=100)
    config = next(tmp_path.glob("*.config"))
    report = lint(config, tmp_path / "slots.ads", tmp_path / "jobs.ads", now=realistic_pool.NOW, environ={})
    assert report.count("error") == 0 and report.count("warning") == 0, report.text()
    assert {f.code for f in report.findings} <= {"attr-partial"}
    assert all("HasDocker" in f.message for f in report.findings)


def test_slots_differing_only_in_what_start_reads_are_checked_apart(tmp_path):
    """Both slots say ``Requirements = START`` with the same START, which reads
    ``MY.Memory``: 4096 accepts the job's 1024, 512 does not.  The 512 slot's clause is
    dead though the first slot with the same expression is fine."""
    (tmp_path / "c.config").write_text("")
    (tmp_path / "slots.ads").write_text(slot("big@a", 4096) + "\n" + slot("small@a", 512))
    (tmp_path / "jobs.ads").write_text(GOOD_JOB)
    report = lint(tmp_path / "c.config", tmp_path / "slots.ads", tmp_path / "jobs.ads", environ={})
    dead = [f for f in report.findings if f.code == "clause-dead"]
    assert len(dead) == 1 and dead[0].message.startswith("clause 1 of slot small@a's Requirements"), report.text()
    assert dead[0].line == 14  # small@a starts on line 9 (7 lines and a blank before it); START is its 6th


def test_owners_sharing_expression_objects_are_still_told_apart_by_what_they_read():
    """The same START object in both slot ads (as a dump reader shares equal values), read
    through ``Requirements = START``; only ``Memory`` differs, and it decides."""
    from classad.ad import ClassAd
    from classad.parser import parse_expr
    from matchmaker.review.pool_clauses import Owner, dead_clauses
    from matchmaker.review.recording import SourceText

    start, requirements = parse_expr("TARGET.RequestMemory <= MY.Memory"), parse_expr("START")
    slots = []
    for name, memory in (("big", 4096), ("small", 512)):
        ad = ClassAd({"Name": name, "Memory": memory})
        ad.set_node("START", start)
        ad.set_node("Requirements", requirements)
        slots.append(Owner(ad, f"slot {name}", f"<{name}>"))
    found = dead_clauses(slots, "slot", [ClassAd({"RequestMemory": 1024})], "job", SourceText())
    assert [f.message.split("'s")[0] for f in found] == ["clause 1 of slot small"]
