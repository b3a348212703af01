"""The ``matchmaker`` command line with accounting groups: the ``groups`` list of
``negotiate --json`` and its human table, ``userprio --quotas`` (the manual's
``condor_userprio -quotas`` illustration), the quota table kept in the state database
for the next cycle's ``RemoteGroupQuota``, the accounting-group map file, and the
example in examples/groups/ (numbers derived by hand in its README)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from support import ROOT, Ran, run_matchmaker as mm

EXAMPLE = ROOT / "examples" / "groups"
NOW = "1700000000"

HEP_LEP = """\
GROUP_NAMES = group_physics, group_physics.hep, group_physics.lep, group_chemistry
GROUP_QUOTA_group_physics     =   20
GROUP_QUOTA_group_physics.hep =   15
GROUP_QUOTA_group_physics.lep =    5
GROUP_QUOTA_group_chemistry   =   10
"""


def slots_text(n: int, claimed_by: Optional[str] = None) -> str:
    ads = []
    for i in range(1, n + 1):
        ad = f'Name = "slot{i}@host"\nSlotID = {i}\nCpus = 1\nRequirements = true\n'
        if claimed_by:
            ad += (
                f'State = "Claimed"\nActivity = "Busy"\nRemoteUser = "{claimed_by}"\n'
                f'AccountingGroup = "{claimed_by}"\nCurrentRank = 0\n'
            )
        ads.append(ad)
    return "\n".join(ads)


def jobs_text(*clusters: tuple[str, int, int]) -> str:
    """``(group.user, count, JobStatus)`` per cluster; users are in domain d."""
    ads = []
    for cluster, (name, n, status) in enumerate(clusters, 1):
        owner = name.rpartition(".")[2]
        for proc in range(n):
            ads.append(
                f'ClusterId = {cluster}\nProcId = {proc}\nOwner = "{owner}"\nUser = "{owner}@d"\n'
                f'AccountingGroup = "{name}"\nJobStatus = {status}\nRequirements = true\n'
            )
    return "\n".join(ads)


def negotiate_example(*extra: object, folder: Path = EXAMPLE, config: object = None, now: object = NOW) -> Ran:
    """``matchmaker negotiate`` over the groups example in ``folder`` (with ``config`` in
    place of its groups.config) at ``now``, then ``extra``."""
    config = folder / "groups.config" if config is None else config
    example = ("--config", config, "--slots", folder / "slots.ads", "--jobs", folder / "jobs.ads")
    return mm("negotiate", *example, "--now", now, *extra)


def files(tmp: Path, config: str, slots: str, jobs: str, tag: str = "") -> list[str]:
    (tmp / f"neg{tag}.config").write_text(config)
    (tmp / f"slots{tag}.ads").write_text(slots)
    (tmp / f"jobs{tag}.ads").write_text(jobs)
    return [
        "--config",
        str(tmp / f"neg{tag}.config"),
        "--slots",
        str(tmp / f"slots{tag}.ads"),
        "--jobs",
        str(tmp / f"jobs{tag}.ads"),
    ]


def _hep_lep_cycle(tmp_path: Path) -> Path:
    """The manual's hep/lep groups (HEP_LEP) over 30 slots with 60 jobs queued in each of
    hep and lep, negotiated once at NOW: the state database it leaves."""
    db = tmp_path / "acct.db"
    args = files(
        tmp_path,
        HEP_LEP,
        slots_text(30),
        jobs_text(("group_physics.hep.higgs", 60, 1), ("group_physics.lep.fermi", 60, 1)),
    )
    assert mm("negotiate", *args, "--now", NOW, "--state", db).returncode == 0
    return db


def test_userprio_quotas_reproduces_the_manuals_table(tmp_path):
    """docs/negotiation.md, reports / seed: the hep/lep example with 60 jobs queued in each group gives
    exactly the manual's ``condor_userprio -quotas`` rows and footer (2 users, ByQuota)."""
    db = _hep_lep_cycle(tmp_path)
    proc = mm("userprio", "--state", db, "--quotas")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Last Priority Update: 11/14 22:13 UTC"  # 1700000000 in UTC
    assert lines[1:] == [
        "Group                    Effective  Config     Use    Subtree  Requested",
        "Name                       Quota     Quota   Surplus   Quota   Resources",
        "------------------------ --------- --------- ------- --------- ----------",
        "group_physics.hep            15.00     15.00 no          15.00         60",
        "group_physics.lep             5.00      5.00 no           5.00         60",
        "------------------------ --------- --------- ------- --------- ----------",
        "Number of users: 2                                 ByQuota",
    ]


def test_userprio_quotas_json_and_allusers(tmp_path):
    """``--json`` gives the same rows as data; ``--allusers`` adds the groups without
    demand or usage and `<none>` (physics keeps its subtree quota 20 as its own under the
    default oversubscription; `<none>` keeps 30 - (20 + 10) = 0 of the pool of 30)."""
    db = _hep_lep_cycle(tmp_path)
    doc = json.loads(mm("userprio", "--state", db, "--quotas", "--json").stdout)
    assert (doc["users"], doc["surplus_policy"]) == (2, "ByQuota")
    assert [
        (g["name"], g["effective_quota"], g["config_quota"], g["use_surplus"], g["subtree_quota"], g["requested"])
        for g in doc["groups"]
    ] == [("group_physics.hep", 15, 15, "no", 15, 60), ("group_physics.lep", 5, 5, "no", 5, 60)]
    every = json.loads(mm("userprio", "--state", db, "--quotas", "--allusers", "--json").stdout)
    quotas = {g["name"]: g["effective_quota"] for g in every["groups"]}
    assert quotas == {
        "group_chemistry": 10,
        "group_physics": 20,
        "group_physics.hep": 15,
        "group_physics.lep": 5,
        "<none>": 0,
    }


def test_negotiate_json_has_a_groups_list(tmp_path):
    """``negotiate --json`` lists each group with quota, allocation, usage, matches and
    order.  hep and lep are allocated and matched their quotas 15 and 5; all sort keys tie
    at 0 except `<none>` (3.4e38), so the order is breadth-first: chemistry, physics,
    hep, lep, `<none>`."""
    args = files(
        tmp_path,
        HEP_LEP,
        slots_text(30),
        jobs_text(("group_physics.hep.higgs", 60, 1), ("group_physics.lep.fermi", 60, 1)),
    )
    proc = mm("negotiate", *args, "--now", NOW, "--json")
    assert proc.returncode == 0, proc.stderr
    groups = json.loads(proc.stdout)["groups"]
    assert [(g["name"], g["quota"], g["allocated"], g["usage"], g["matched"], g["order"]) for g in groups] == [
        ("group_chemistry", 10, 0, 0, 0, 1),
        ("group_physics", 20, 0, 0, 0, 2),
        ("group_physics.hep", 15, 15, 15, 15, 3),
        ("group_physics.lep", 5, 5, 5, 5, 4),
        ("<none>", 0, 0, 0, 0, 5),
    ]
    match = json.loads(proc.stdout)["matches"][0]
    assert (match["group"], match["negotiating_group"], match["autoregroup"]) == (
        "group_physics.hep",
        "group_physics.hep",
        False,
    )


def test_human_output_has_a_groups_table_only_with_groups(tmp_path):
    """The human report adds a "Groups" table (and a PASS column) when groups exist."""
    args = files(tmp_path, HEP_LEP, slots_text(4), jobs_text(("group_physics.hep.higgs", 2, 1)))
    out = mm("negotiate", *args, "--now", NOW).stdout
    assert "\nGroups: 5\n" in out and "PASS" in out
    args = files(tmp_path, "", slots_text(4), jobs_text(("u", 2, 1)), tag="2")
    out = mm("negotiate", *args, "--now", NOW).stdout
    assert "Groups:" not in out and "PASS" not in out


def test_quota_table_in_the_state_feeds_remote_group_quota(tmp_path):
    """Cycle 1 (a alone) takes all 10 slots with surplus and stores quotas a 5, b 5.
    Cycle 2, same database: b preempts a while a is over its previous quota
    (``RemoteGroupResourcesInUse > RemoteGroupQuota``): 5 slots.  The same cycle-2 files
    with a new database have no RemoteGroupQuota, and nothing is preempted."""
    config = (
        "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 5\nGROUP_QUOTA_b = 5\nGROUP_ACCEPT_SURPLUS = true\n"
        "PREEMPTION_REQUIREMENTS = RemoteGroupResourcesInUse > RemoteGroupQuota\n"
        "PREEMPTION_REQUIREMENTS_STABLE = false\n"
    )
    db = tmp_path / "acct.db"
    first = files(tmp_path, config, slots_text(10), jobs_text(("a.user", 20, 1)), tag="1")
    doc = json.loads(mm("negotiate", *first, "--now", NOW, "--state", db, "--json").stdout)
    assert len(doc["matches"]) == 10
    second = files(
        tmp_path,
        config,
        slots_text(10, claimed_by="a.user@d"),
        jobs_text(("a.user", 10, 2), ("a.user", 10, 1), ("b.user", 10, 1)),
        tag="2",
    )
    doc = json.loads(mm("negotiate", *second, "--now", str(int(NOW) + 60), "--state", db, "--json").stdout)
    assert [(m["submitter"], m["reason"], m["preempted"]) for m in doc["matches"]] == [
        ("b.user@d", "priority", "a.user@d")
    ] * 5
    doc = json.loads(mm("negotiate", *second, "--now", NOW, "--state", tmp_path / "new.db", "--json").stdout)
    assert doc["matches"] == []


def test_userprio_quotas_without_groups_and_with_edits(tmp_path):
    """A database from a cycle without groups has no quota table; --quotas does no edits."""
    db = tmp_path / "acct.db"
    args = files(tmp_path, "", slots_text(2), jobs_text(("u", 1, 1)))
    assert mm("negotiate", *args, "--now", NOW, "--state", db).returncode == 0
    proc = mm("userprio", "--state", db, "--quotas")
    assert proc.returncode == 0 and "No group quotas" in proc.stdout
    proc = mm("userprio", "--state", db, "--quotas", "--delete", "u@d")
    assert proc.returncode == 2 and "--quotas only shows" in proc.stderr  # a command-line mistake


def test_bad_map_line_is_one_error_line(tmp_path):
    """A malformed accounting-group map line: exit 1, one line naming map file, line, column."""
    (tmp_path / "groups.map").write_text("* alice group_physics\n* bob\n")
    args = files(tmp_path, "use FEATURE : AssignAccountingGroup(groups.map)\n", slots_text(1), jobs_text(("u", 1, 1)))
    proc = mm("negotiate", *args, "--now", NOW)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"matchmaker: {tmp_path / 'groups.map'}:2: config: column 6: "
        "accounting-group map: missing accounting group list"
    ]


def test_groups_example_numbers(tmp_path):
    """examples/groups (README): quotas 20/10 and 15/5 fit the 30 slots; demand hep 24,
    lep 2 (fermi's jobs get their default group from the map), chemistry 12; lep's 3
    unused go to hep as surplus: chemistry 10, hep 18, lep 2.  Curie's job claiming hep
    is refused with the map's reason."""
    proc = negotiate_example("--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    by_group = {g["name"]: (g["requested"], g["allocated"], g["matched"]) for g in doc["groups"]}
    assert by_group["group_chemistry"] == (12, 10, 10)
    assert by_group["group_physics.hep"] == (24, 18, 18)
    assert by_group["group_physics.lep"] == (2, 2, 2)
    assert {m["submitter"] for m in doc["matches"] if m["group"] == "group_physics.lep"} == {
        "group_physics.lep.fermi@example.org"
    }
    refused = doc["rejected"][0]
    assert refused["job"] == "4.0"
    assert refused["reason"].startswith("accounting group 'group_physics.hep' is not allowed for user 'curie'")


def test_allocation_of_every_round_is_reported(tmp_path):
    """examples/groups/README.md, "Try": without NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION
    line physics keeps its 20 and passes it down as surplus, so round 1 allocates hep all
    24 it asks for and lep its 2; strict enforcement caps physics at 20 and hep, first in
    order, takes it all; round 2 re-allocates from what is left: hep 20, lep 0."""
    config = tmp_path / "groups.config"
    text = (EXAMPLE / "groups.config").read_text()
    config.write_text(
        "\n".join(line for line in text.splitlines() if "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION" not in line) + "\n"
    )
    (tmp_path / "groups.map").write_text((EXAMPLE / "groups.map").read_text())
    proc = negotiate_example("--json", config=config)
    assert proc.returncode == 0, proc.stderr
    groups = {g["name"]: g for g in json.loads(proc.stdout)["groups"]}
    assert groups["group_physics.hep"]["allocated_by_round"] == [24, 20]
    assert groups["group_physics.lep"]["allocated_by_round"] == [2, 0]
    assert groups["group_physics.hep"]["allocated"] == 20 and groups["group_physics.hep"]["matched"] == 20
    table = negotiate_example(config=config).stdout
    hep = next(line for line in table.splitlines() if "group_physics.hep " in line)
    assert "24, 20" in hep


def test_groups_example_readme_shows_the_real_output(tmp_path, monkeypatch):
    """The outputs quoted in examples/groups/README.md are what the commands print, run
    from the project's root as the README shows them (file names as typed there)."""
    readme = (EXAMPLE / "README.md").read_text()
    db = tmp_path / "groups.db"
    monkeypatch.chdir(ROOT)
    proc = negotiate_example("--state", db, folder=Path("examples/groups"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in readme
    for extra in ((), ("--allusers",)):
        shown = mm("userprio", "--state", db, "--quotas", *extra)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.strip() in readme


# ---- userprio display options, as condor_userprio users type them ---------------------------------


def _two_cycles(tmp_path: Path) -> Path:
    """The groups example negotiated at NOW and again an hour later: every match of the
    first cycle (chemistry 10, hep 18, lep 2: README) has then run for one hour."""
    db = tmp_path / "groups.db"
    for now in (int(NOW), int(NOW) + 3600):
        proc = negotiate_example("--state", db, now=now)
        assert proc.returncode == 0, proc.stderr
    return db


def _rows(text: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split()[1:] for line in text.splitlines()[1:] if line.strip()}


def test_userprio_usage_most_activefrom_and_grouprollup(tmp_path):
    """-usage: hours and the times usage began and last grew (the second cycle, 2023-11-14
    23:13 UTC, charged the first hour); -most adds priorities and use; -grouprollup adds
    hep's 18 and lep's 2 to group_physics; -activefrom keeps records used since that date."""
    db = _two_cycles(tmp_path)
    usage = mm("userprio", "-state", db, "-usage")
    assert usage.returncode == 0, usage.stderr
    rows = _rows(usage.stdout)
    assert usage.stdout.split("\n")[0].split() == [
        "USER",
        "USAGE",
        "(HRS)",
        "USAGE",
        "START",
        "TIME",
        "(UTC)",
        "LAST",
        "USAGE",
        "TIME",
        "(UTC)",
    ]
    assert rows["group_physics.hep.higgs@example.org"] == ["18.00", "11/14/2023", "23:13", "11/14/2023", "23:13"]
    assert rows["group_chemistry"][0] == "10.00" and rows["group_physics.lep"][0] == "2.00"
    most = _rows(mm("userprio", "--state", db, "--most").stdout)
    assert most["group_physics"][3:5] == ["0", "0.00"]
    rolled = _rows(mm("userprio", "-state", db, "-most", "-grouprollup").stdout)
    assert rolled["group_physics"][3:5] == ["20", "20.00"]
    assert rolled["group_physics.hep"][3:5] == ["18", "18.00"]  # no subgroups: unchanged
    assert len(_rows(mm("userprio", "-state", db, "-activefrom", "11", "14", "2023").stdout)) == 7
    assert mm("userprio", "-state", db, "-activefrom", "11", "15", "2023").stdout == "No users.\n"
    bad = mm("userprio", "-state", db, "-activefrom", "13", "1", "2023")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip() == (
        "matchmaker userprio: command-line error: --activefrom: 13 1 2023 is not a date "
        "(MONTH DAY YEAR) (see 'matchmaker userprio -help')"
    )
    assert mm("userprio", "-state", db, "-usage", "-most").returncode == 2  # one view at a time


def test_userprio_single_dash_edits(tmp_path):
    """condor_userprio's spellings: -setfactor NAME VALUE, -allusers, -quotas."""
    db = _two_cycles(tmp_path)
    proc = mm("userprio", "-state", db, "-setfactor", "group_chemistry.curie@example.org", "2000")
    assert proc.returncode == 0, proc.stderr
    assert _rows(proc.stdout)["group_chemistry.curie@example.org"][2] == "2000.00"
    assert (
        mm("userprio", "-state", db, "-quotas", "-allusers").stdout
        == mm("userprio", "--state", db, "--quotas", "--allusers").stdout
    )
