"""``matchmaker diff``: a configuration against itself changes nothing; the groups
example against its "Try" variant changes exactly what examples/groups/README.md derives
by hand; a preemption rule switched on adds the preemption it allows; the series diff of
two simulations and its plots; the command's usage errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from support import ROOT, run_matchmaker as run

from matchmaker.api import diff
from matchmaker.review.cycle_diff import CycleDiff
from matchmaker.review.series_diff import SeriesDiff

GROUPS = ROOT / "examples" / "groups"
NOW = 1_700_000_000
HEP, LEP, CHEM = (
    "group_physics.hep.higgs@example.org",
    "group_physics.lep.fermi@example.org",
    "group_chemistry.curie@example.org",
)


def try_variant(tmp: Path) -> Path:
    """The README's "Try": the groups configuration without the
    NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION line (the map file next to it)."""
    text = (GROUPS / "groups.config").read_text()
    kept = [line for line in text.splitlines() if not line.startswith("NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION")]
    assert len(kept) == len(text.splitlines()) - 1
    shutil.copy(GROUPS / "groups.map", tmp / "groups.map")
    (tmp / "try.config").write_text("\n".join(kept) + "\n")
    return tmp / "try.config"


def test_a_configuration_against_itself_is_empty():
    for name in ("groups", "negotiator"):
        ex = ROOT / "examples" / name
        config = ex / f"{name}.config"
        d = diff(config, config, ex / "slots.ads", ex / "jobs.ads", now=NOW)
        assert isinstance(d, CycleDiff) and d.empty
        assert not (d.only_a or d.only_b or d.slots or d.preemptions_added or d.preemptions_removed)
        assert all(not r.changed for r in d.submitters + d.groups)
    status, out, _ = run(
        "diff",
        "--config",
        str(config),
        "--config",
        str(config),
        "--slots",
        str(ex / "slots.ads"),
        "--jobs",
        str(ex / "jobs.ads"),
        "--now",
        str(NOW),
    )
    assert status == 0 and out.startswith("No differences")


def test_groups_example_against_its_try_variant(tmp_path):
    """The README derives, with oversubscription off (A): hep 18, lep 2, chemistry 10 (30
    slots); deleting the line (B): hep 20, lep 0, chemistry 10.  hep's jobs are offered
    in queue order, so B adds 1.18 and 1.19 and A's lep jobs 2.0 and 2.1 (on slot10 of
    node2 and node3, the README's table) go; group quota decides the other side.  No
    claims exist, so no preemptions; shares are matches over the pool's 30."""
    d = diff(GROUPS / "groups.config", try_variant(tmp_path), GROUPS / "slots.ads", GROUPS / "jobs.ads", now=NOW)
    assert isinstance(d, CycleDiff)
    assert sorted(c.job for c in d.only_a) == ["2.0", "2.1"]
    assert sorted(c.job for c in d.only_b) == ["1.18", "1.19"]
    assert {c.mechanism for c in d.only_a + d.only_b} == {"group-quota"}
    assert {c.submitter for c in d.only_a} == {LEP} and {c.submitter for c in d.only_b} == {HEP}
    assert sorted((s.slot, s.job_a) for s in d.slots) == [
        ("slot10@node2.example.org", "2.0"),
        ("slot10@node3.example.org", "2.1"),
    ]
    assert sorted(s.job_b for s in d.slots) == ["1.18", "1.19"]
    rows = {
        r.name: (r.matched_a, r.matched_b, round(30 * r.share_a, 9), round(30 * r.share_b, 9)) for r in d.submitters
    }
    assert rows == {HEP: (18, 20, 18, 20), LEP: (2, 0, 2, 0), CHEM: (10, 10, 10, 10)}
    groups = {r.name: (r.matched_a, r.matched_b) for r in d.groups if r.changed}
    assert groups == {"group_physics.hep": (18, 20), "group_physics.lep": (2, 0)}
    assert not d.preemptions_added and not d.preemptions_removed


def test_a_preemption_rule_adds_a_preemption(tmp_path):
    """One slot claimed by bob, one idle job of alice, a fresh accountant (both EUPs 500).
    A (PREEMPTION_REQUIREMENTS = False) leaves the claim; B (True) lets alice preempt bob
    by priority.  Reversed, the preemption is removed."""
    (tmp_path / "slots.ads").write_text(
        'Name = "slot1@h"\nSlotID = 1\nCpus = 1\nRequirements = true\nRank = 0\n'
        'State = "Claimed"\nActivity = "Busy"\nRemoteUser = "bob@x"\n'
        'AccountingGroup = "bob@x"\nCurrentRank = 0\n'
    )
    (tmp_path / "jobs.ads").write_text(
        'ClusterId = 1\nProcId = 0\nOwner = "alice"\nUser = "alice@x"\n'
        "JobStatus = 1\nRequestCpus = 1\nRequirements = true\n"
    )
    (tmp_path / "a.config").write_text("PREEMPTION_REQUIREMENTS = False\n")
    (tmp_path / "b.config").write_text("PREEMPTION_REQUIREMENTS = True\n")
    args = (tmp_path / "slots.ads", tmp_path / "jobs.ads")
    d = diff(tmp_path / "a.config", tmp_path / "b.config", *args, now=NOW)
    assert isinstance(d, CycleDiff)
    assert [(p.job, p.slot, p.preempted) for p in d.preemptions_added] == [("1.0", "slot1@h", "bob@x")]
    assert [c.job for c in d.only_b] == ["1.0"] and d.only_b[0].mechanism == "preemption-requirements"
    shares = {r.name: (r.share_a, r.share_b) for r in d.submitters}
    assert shares == {"alice@x": (0.0, 1.0), "bob@x": (1.0, 0.0)}
    back = diff(tmp_path / "b.config", tmp_path / "a.config", *args, now=NOW)
    assert isinstance(back, CycleDiff)
    assert [(p.job, p.preempted) for p in back.preemptions_removed] == [("1.0", "bob@x")]


def test_series_diff_and_plots(tmp_path):
    """Two 2-hour simulations at 30-minute cycles (5 cycles): against itself nothing
    differs; against the Try variant the first cycle's running counts are the one-cycle
    numbers (hep 18 -> 20, lep 2 -> 0), and --plot draws three figures."""
    config, variant = GROUPS / "groups.config", try_variant(tmp_path)
    same = diff(config, config, GROUPS / "slots.ads", GROUPS / "jobs.ads", now=NOW, duration=7200, interval=1800)
    assert isinstance(same, SeriesDiff) and same.empty
    d = diff(config, variant, GROUPS / "slots.ads", GROUPS / "jobs.ads", now=NOW, duration=7200, interval=1800)
    assert isinstance(d, SeriesDiff) and not d.empty
    first = {
        r["name"]: (r["running_a"], r["running_b"]) for r in d.rows if r["cycle"] == 0 and r["kind"] == "submitter"
    }
    assert first == {HEP: (18, 20), LEP: (2, 0), CHEM: (10, 10)}
    assert len({r["cycle"] for r in d.rows}) == 5
    status, out, _ = run(
        "diff",
        "--config",
        str(config),
        "--config",
        str(variant),
        "--slots",
        str(GROUPS / "slots.ads"),
        "--jobs",
        str(GROUPS / "jobs.ads"),
        "--now",
        str(NOW),
        "--duration",
        "2h",
        "--interval",
        "30m",
        "--out",
        str(tmp_path / "out"),
        "--plot",
        "--json",
    )
    assert status == 0 and json.loads(out)["empty"] is False
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "diff-priorities.png",
        "diff-running.png",
        "diff-shares.png",
        "diff.json",
    ]


def test_usage_errors():
    c, s, j = str(GROUPS / "groups.config"), str(GROUPS / "slots.ads"), str(GROUPS / "jobs.ads")
    assert run("diff", "--config", c, "--slots", s, "--jobs", j)[0] == 2
    assert run("diff", "--config", c, "--config", c, "--slots", s, "--jobs", j, "--plot")[0] == 2
    assert run("diff", "--config", c, "--config", c, "--slots", s, "--jobs", j, "--duration", "1h", "--plot")[0] == 2
    status, out, _ = run("diff", "--config", c, "--config", c, "--slots", s, "--jobs", j, "--now", str(NOW), "--json")
    assert status == 0 and json.loads(out)["empty"] is True


def test_reading_warnings_are_passed_on(tmp_path):
    """A group without its parent is ignored with a warning; diff names the side it came
    from and prints it on stderr (nothing else changes)."""
    shutil.copy(GROUPS / "groups.map", tmp_path / "groups.map")
    (tmp_path / "b.config").write_text(
        (GROUPS / "groups.config").read_text() + "GROUP_NAMES = $(GROUP_NAMES), x.y\nGROUP_QUOTA_x.y = 1\n"
    )
    d = diff(GROUPS / "groups.config", tmp_path / "b.config", GROUPS / "slots.ads", GROUPS / "jobs.ads", now=NOW)
    assert d.empty and len(d.warnings) == 1 and d.warnings[0].startswith("B: ") and "'x.y'" in d.warnings[0]
    status, _, err = run(
        "diff",
        "--config",
        str(GROUPS / "groups.config"),
        "--config",
        str(tmp_path / "b.config"),
        "--slots",
        str(GROUPS / "slots.ads"),
        "--jobs",
        str(GROUPS / "jobs.ads"),
        "--now",
        str(NOW),
    )
    assert status == 0 and err.startswith("matchmaker: B: ") and "'x.y'" in err
