"""The ``matchmaker`` command line, run in process over examples/negotiator/ and over
broken inputs: exit status, one-line error messages, warnings, and an accountant database
left consistent."""

from __future__ import annotations

import json
import shutil

import pytest
from support import ROOT, Ran, Terminal, run_matchmaker as mm

EXAMPLE = ROOT / "examples" / "negotiator"
NOW = "1700000000"
ALICE, CAROL, GUEST, BOB = "alice@example.org", "carol@example.org", "guest@visitor.org", "bob@example.org"


def negotiate_argv(
    *extra: object,
    config=EXAMPLE / "negotiator.config",
    slots=EXAMPLE / "slots.ads",
    jobs=EXAMPLE / "jobs.ads",
    now: object = NOW,
) -> list[str]:
    """The words of ``matchmaker negotiate`` over the example's files (or those given) at
    ``now``, then ``extra``."""
    argv = ("negotiate", "--config", config, "--slots", slots, "--jobs", jobs, "--now", now, *extra)
    return [str(a) for a in argv]


def negotiate(*extra: object, **files_and_now: object) -> Ran:
    """``matchmaker negotiate`` run in process (arguments as :func:`negotiate_argv`)."""
    return mm(*negotiate_argv(*extra, **files_and_now))


def assert_one_error_line(proc: Ran, prefix: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(prefix), lines[0]


# ---- the example ---------------------------------------------------------------------------------


def test_example_shows_every_reason():
    """The example pool (derivation in examples/negotiator/README.md): alice takes the idle
    slot, then preempts guest (EUP 5e6) twice for priority; carol preempts bob by machine RANK."""
    proc = negotiate("--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(m["job"], m["submitter"], m["slot"], m["reason"], m["preempted"]) for m in doc["matches"]] == [
        ("1.0", ALICE, "slot1@node1.example.org", "no-preemption", None),
        ("1.1", ALICE, "slot1@node2.example.org", "priority", GUEST),
        ("2.0", CAROL, "slot1@node3.example.org", "rank", BOB),
        ("1.2", ALICE, "slot2@node2.example.org", "priority", GUEST),
    ]
    subs = {s["name"]: s for s in doc["submitters"]}
    assert [s["name"] for s in doc["submitters"]] == [ALICE, CAROL, GUEST]
    assert subs[ALICE]["eup"] == 500.0 and subs[GUEST]["eup"] == 5e6
    # Pool of 6; shares (1/500) : (1/500) : (1/5e6) of 6.
    assert subs[ALICE]["limit"] == pytest.approx(6 * 10000 / 20001)
    assert subs[GUEST]["limit"] == pytest.approx(6 / 20001)
    assert [s["matched"] for s in doc["submitters"]] == [3, 1, 0]
    assert [(r["job"], r["reason"], r["mechanism"]) for r in doc["rejected"]] == [
        ("3.4", "no match found", "unavailable")
    ]
    assert set(doc) == {"matches", "submitters", "rejected"}


def test_example_human_output():
    """The table lists matches with their reason and a submitter summary."""
    proc = negotiate()
    assert proc.returncode == 0 and proc.stderr == ""
    out = proc.stdout
    for word in ("no-preemption", "priority", "rank", "SUBMITTER", "EUP", "SLICE", "LIMIT PER SPIN", "MATCHED", "3.4"):
        assert word in out
    assert "Matches: 4" in out


def test_example_limits_of_every_spin():
    """examples/negotiator/README.md, spin by spin: spin 1 alice's slice 6 x 10000/20001
    (2.9999, so 2 + 1 does not fit), guest's 6/20001 less its 4 slots in use, so 0;
    spin 2 without carol: alice 6 x 10000/10001 less her 2 slots, guest 0 again; spin 3
    guest alone: 6 less the 2 slots it still holds."""
    doc = json.loads(negotiate("--json").stdout)
    subs = {s["name"]: s for s in doc["submitters"]}
    assert subs[ALICE]["spin_limits"] == pytest.approx([6 * 10000 / 20001, 6 * 10000 / 10001 - 2])
    assert subs[CAROL]["spin_limits"] == pytest.approx([6 * 10000 / 20001])
    assert subs[GUEST]["spin_limits"] == pytest.approx([0, 0, 6 - 2])
    table = negotiate().stdout
    alice_row = next(line for line in table.splitlines() if line.startswith(ALICE)).split()
    assert alice_row[1:] == ["500.00", "2.9999", "2.9999,", "3.9994", "3"]
    guest_row = next(line for line in table.splitlines() if line.startswith(GUEST)).split()
    assert guest_row[1:] == ["5000000.00", "0.0003", "0,", "0,", "4", "0"]


def test_state_is_charged_and_reported(tmp_path):
    """With --state the matches are charged: userprio shows the usage now in use."""
    db = tmp_path / "acct.db"
    assert negotiate("--state", db).returncode == 0
    proc = mm("userprio", "--state", db, "--json")
    assert proc.returncode == 0, proc.stderr
    users = {u["name"]: u for u in json.loads(proc.stdout)["users"]}
    assert users[ALICE]["weighted_resources_used"] == 3
    assert users[CAROL]["weighted_resources_used"] == 1
    assert users[GUEST]["weighted_resources_used"] == 2  # 4 claims, 2 preempted
    assert users[GUEST]["priority_factor"] == 1e7  # remote domain
    assert json.loads(proc.stdout)["last_update"] == float(NOW)


def test_userprio_edits(tmp_path):
    """--setprio, --setfactor, --resetusage and --delete edit the records."""
    db = tmp_path / "acct.db"
    assert negotiate("--state", db).returncode == 0
    proc = mm(
        "userprio",
        "--state",
        db,
        "--json",
        "--setprio",
        ALICE,
        "10",
        "--setfactor",
        CAROL,
        "2000",
        "--delete",
        BOB,
        "--resetusage",
        GUEST,
        "--now",
        NOW,
    )
    assert proc.returncode == 0, proc.stderr
    users = {u["name"]: u for u in json.loads(proc.stdout)["users"]}
    assert users[ALICE]["effective_priority"] == 10 * 1000
    assert users[CAROL]["priority_factor"] == 2000
    assert BOB not in users
    assert users[GUEST]["accumulated_usage_hours"] == 0
    text = mm("userprio", "--state", db)
    assert text.returncode == 0 and ALICE in text.stdout


def test_priorities_move_between_cycles(tmp_path):
    """A second cycle an hour later ages the RUPs of the users charged in the first."""
    db = tmp_path / "acct.db"
    assert negotiate("--state", db).returncode == 0
    assert negotiate("--state", db, now=int(NOW) + 3600).returncode == 0
    users = {u["name"]: u for u in json.loads(mm("userprio", "--state", db, "--json").stdout)["users"]}
    assert users[ALICE]["real_priority"] > 0.5 and users[BOB]["real_priority"] == 0.5


# ---- bad input -------------------------------------------------------------------------------------


def test_unknown_knob_value(tmp_path):
    cfg = tmp_path / "neg.config"
    cfg.write_text("PRIORITY_HALFLIFE = 86400\nNEGOTIATOR_CONSIDER_PREEMPTION = maybe\n")
    proc = negotiate(config=cfg)
    assert_one_error_line(proc, f"matchmaker: {cfg}:2: config: NEGOTIATOR_CONSIDER_PREEMPTION")


def test_bad_expression_knob(tmp_path):
    cfg = tmp_path / "neg.config"
    cfg.write_text("# comment\nPREEMPTION_REQUIREMENTS = RemoteUserPrio >\n")
    assert_one_error_line(negotiate(config=cfg), f"matchmaker: {cfg}:2: config: PREEMPTION_REQUIREMENTS")


def test_config_syntax_error(tmp_path):
    cfg = tmp_path / "neg.config"
    cfg.write_text("A = 1\nthis line has no operator\n")
    assert_one_error_line(negotiate(config=cfg), f"matchmaker: {cfg}:2: config:")


def test_missing_files(tmp_path):
    cfg, ads, db = tmp_path / "none.config", tmp_path / "none.ads", tmp_path / "none.db"
    assert_one_error_line(negotiate(config=cfg), f"matchmaker: {cfg}: config:")
    assert_one_error_line(negotiate(jobs=ads), f"matchmaker: {ads}: format:")
    assert_one_error_line(mm("userprio", "--state", db), f"matchmaker: {db}: state:")


def test_ad_syntax_error(tmp_path):
    jobs = tmp_path / "jobs.ads"
    jobs.write_text('ClusterId = 1\nUser = "a@d"\n\nClusterId = 2\nRequirements = (TARGET.Memory >\n')
    assert_one_error_line(negotiate(jobs=jobs), f"matchmaker: {jobs}:5: format:")


def test_job_without_identity(tmp_path):
    jobs = tmp_path / "jobs.ads"
    jobs.write_text("ClusterId = 7\nRequirements = true\n")
    assert_one_error_line(negotiate(jobs=jobs), f"matchmaker: {jobs}:1: format: job 7.0 has no User")


def test_ads_missing_requirements_warn(tmp_path):
    """A job or slot without Requirements never matches; each gets a warning, exit status 0."""
    slots = tmp_path / "slots.ads"
    slots.write_text('Name = "s1"\nCpus = 1\n\nName = "s2"\nCpus = 1\nRequirements = true\n')
    jobs = tmp_path / "jobs.ads"
    jobs.write_text('ClusterId = 1\nUser = "a@d"\n\nClusterId = 2\nUser = "a@d"\nRequirements = true\n')
    proc = negotiate("--json", slots=slots, jobs=jobs)
    assert proc.returncode == 0
    assert proc.stderr.splitlines() == [
        f"matchmaker: {slots}:1: warning: slot s1 has no Requirements; it matches no job",
        f"matchmaker: {jobs}:1: warning: job 1.0 has no Requirements; it matches no slot",
    ]
    doc = json.loads(proc.stdout)
    assert [(m["job"], m["slot"]) for m in doc["matches"]] == [("2.0", "s2")]
    assert [(r["job"], r["reason"], r["mechanism"]) for r in doc["rejected"]] == [
        ("1.0", "no match found", "requirements")
    ]


def test_error_valued_slot_rank(tmp_path):
    """A slot whose Rank is an error is warned about; HTCondor's rules still apply (the
    PRE_JOB_RANK it feeds is not a number, so the slot sorts last)."""
    slots = tmp_path / "slots.ads"
    slots.write_text(
        'Name = "bad"\nCpus = 1\nMemory = 1\nRequirements = true\nRank = 1/0 + error\n\n'
        'Name = "good"\nCpus = 1\nMemory = 1\nRequirements = true\nRank = 0\n'
    )
    jobs = tmp_path / "jobs.ads"
    jobs.write_text('ClusterId = 1\nUser = "a@d"\nRequirements = true\n')
    proc = negotiate("--json", slots=slots, jobs=jobs)
    assert proc.returncode == 0
    assert proc.stderr.splitlines() == [
        f"matchmaker: {slots}:1: warning: slot bad has an error-valued Rank; "
        "it is treated as 0 (and NEGOTIATOR_PRE_JOB_RANK ranks the slot last)"
    ]
    assert [m["slot"] for m in json.loads(proc.stdout)["matches"]] == ["good"]


def test_failed_cycle_leaves_the_accountant_unchanged(tmp_path):
    """An error after a good cycle leaves the database exactly as the good cycle left it."""
    db = tmp_path / "acct.db"
    assert negotiate("--state", db).returncode == 0
    before = mm("userprio", "--state", db, "--json").stdout
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    bad_jobs = tmp_path / "jobs.ads"
    bad_jobs.write_text("ClusterId = \n")
    proc = negotiate("--state", db, jobs=bad_jobs, now=int(NOW) + 60)
    assert_one_error_line(proc, f"matchmaker: {bad_jobs}:1: format:")
    assert db.read_bytes() == copy.read_bytes()
    assert mm("userprio", "--state", db, "--json").stdout == before


def test_bad_config_creates_no_database(tmp_path):
    cfg = tmp_path / "neg.config"
    cfg.write_text("DEFAULT_PRIO_FACTOR = lots\n")
    db = tmp_path / "acct.db"
    assert_one_error_line(negotiate("--state", db, config=cfg), f"matchmaker: {cfg}:1: config: DEFAULT_PRIO_FACTOR")
    assert not db.exists()


def test_corrupt_state(tmp_path):
    db = tmp_path / "acct.db"
    db.write_text("not a database\n" * 100)
    assert_one_error_line(negotiate("--state", db), f"matchmaker: {db}: state:")


def test_bad_userprio_value(tmp_path):
    db = tmp_path / "acct.db"
    assert negotiate("--state", db).returncode == 0
    assert_one_error_line(
        mm("userprio", "--state", db, "--setfactor", ALICE, "lots"), f"matchmaker: {db}: error: --setfactor"
    )


def test_in_process_main(capsys):
    """``main(argv)`` returns the exit status without raising."""
    from matchmaker.cli import main

    assert main(negotiate_argv()) == 0
    assert "Matches: 4" in capsys.readouterr().out


def test_group_quotas_charge_group_records(tmp_path):
    """With GROUP_NAMES the cycle runs per group and the accountant charges the group too."""
    cfg = tmp_path / "neg.config"
    cfg.write_text("GROUP_NAMES = group_physics\nGROUP_QUOTA_group_physics = 2\n")
    slots = tmp_path / "slots.ads"
    slots.write_text("\n".join(f'Name = "s{i}"\nCpus = 1\nRequirements = true\n' for i in range(4)))
    jobs = tmp_path / "jobs.ads"
    jobs.write_text(
        "\n".join(
            f'ClusterId = 1\nProcId = {p}\nUser = "u@d"\nAccountingGroup = "group_physics.u"\nRequirements = true\n'
            for p in range(4)
        )
    )
    db = tmp_path / "acct.db"
    proc = negotiate("--json", "--state", db, config=cfg, slots=slots, jobs=jobs)
    assert proc.returncode == 0, proc.stderr
    assert [m["submitter"] for m in json.loads(proc.stdout)["matches"]] == ["group_physics.u@d"] * 2
    users = {u["name"]: u for u in json.loads(mm("userprio", "--state", db, "--json").stdout)["users"]}
    assert users["group_physics"]["is_group"] and users["group_physics"]["weighted_resources_used"] == 2
    assert users["group_physics.u@d"]["weighted_resources_used"] == 2


def _section(text: str, title: str) -> list[str]:
    """The lines of one report section: from the line starting with ``title`` to the next blank line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_summary_counts_what_the_full_report_lists():
    full = negotiate()
    short = negotiate("--summary")
    assert full.returncode == short.returncode == 0
    # Tallied from the full report's rows: REASON is the 4th column of the match table,
    # DECIDED BY the 2nd of the rejection table (one word in both).
    matches = _section(full.stdout, "Matches:")[2:]
    reasons: dict[str, int] = {}
    for row in matches:
        reason = row.split()[3]
        reasons[reason] = reasons.get(reason, 0) + 1
    expected = ", ".join(f"{k} {n}" for k, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    assert _section(short.stdout, "Matches:") == [f"Matches: {len(matches)} ({expected})"]
    assert _section(short.stdout, "Submitters:") == _section(full.stdout, "Submitters:")
    rejected = _section(full.stdout, "Rejected:")[2:] if "Rejected:" in full.stdout else []
    if rejected:
        mechanisms: dict[str, int] = {}
        for row in rejected:
            mechanism = row.split()[1]
            mechanisms[mechanism] = mechanisms.get(mechanism, 0) + 1
        tally = ", ".join(f"{k} {n}" for k, n in sorted(mechanisms.items(), key=lambda kv: (-kv[1], kv[0])))
        assert _section(short.stdout, "Rejected:") == [f"Rejected: {len(rejected)} ({tally})"]
    assert "JOB" not in short.stdout


# ---- progress on a terminal ------------------------------------------------------------------


def _run_cli(err, *extra: str) -> str:
    import io

    from matchmaker.cli.commands import main

    out = io.StringIO()
    assert main(negotiate_argv(*extra), out=out, err=err) == 0
    return out.getvalue()


def test_progress_only_on_a_terminal_and_never_on_stdout(monkeypatch):
    """With stderr a terminal (and the one-second delay set to 0 here), negotiate says on
    stderr which file it reads and which spin it is in; stdout is the same report as
    without progress.  Not on a terminal, or with --no-progress, stderr stays empty."""
    import io

    from matchmaker.cli import progress

    plain_err = io.StringIO()
    plain = _run_cli(plain_err)
    assert plain_err.getvalue() == ""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    tty = Terminal()
    assert _run_cli(tty) == plain
    assert "negotiating: spin" in tty.text
    quiet = Terminal()
    assert _run_cli(quiet, "--no-progress") == plain
    assert quiet.text == ""


def test_api_progress_hears_reading_and_spins():
    """What the status line is fed: each file as it is read, then every spin (three in the
    example, README) with the matches so far, ending at the cycle's 4."""
    from matchmaker import api

    heard: list[str] = []
    loaded = api.load(EXAMPLE / "negotiator.config", EXAMPLE / "slots.ads", EXAMPLE / "jobs.ads", progress=heard.append)
    assert heard == [f"reading {EXAMPLE / 'slots.ads'}", f"reading {EXAMPLE / 'jobs.ads'}"]
    heard.clear()
    result = api.negotiate(loaded, now=float(NOW), progress=heard.append)
    assert len(result.matches) == 4
    assert heard == [
        "negotiating: spin 1, 0 matches",
        "negotiating: spin 2, 3 matches",
        "negotiating: spin 3, 4 matches",
    ]


# ---- the last-resort handler ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "raised, status, message",
    [
        (ValueError("boom"), 2, "matchmaker: <internal>: error: ValueError: boom (please report this bug)\n"),
        (KeyboardInterrupt(), 130, "matchmaker: interrupted\n"),
        (MemoryError(), 2, "matchmaker: error: out of memory\n"),
    ],
)
def test_unexpected_exception_is_one_line(monkeypatch, tmp_path, raised, status, message):
    import io

    from matchmaker.cli import commands

    def broken(args, out, err):
        raise raised

    monkeypatch.setattr(commands, "cmd_userprio", broken)
    err = io.StringIO()
    assert commands.main(["userprio", "--state", str(tmp_path / "p.db")], out=io.StringIO(), err=err) == status
    assert err.getvalue() == message
