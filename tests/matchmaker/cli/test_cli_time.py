"""Times in ``matchmaker userprio`` (docs/cli.md, times): edits without ``--now`` take the
state's own clock, and printed times are UTC, labelled so, whatever ``TZ`` says."""

from __future__ import annotations

import json
import time
from pathlib import Path

from support import ROOT, run_matchmaker as mm

EXAMPLE = ROOT / "examples" / "negotiator"
NOW = 1700000000  # 2023-11-14 22:13:20 UTC; 2023-11-15 07:13:20 in Tokyo (UTC+9)
ALICE = "alice@example.org"


def cycle(db: Path) -> None:
    status, _, err = mm(
        "negotiate",
        "--config",
        EXAMPLE / "negotiator.config",
        "--slots",
        EXAMPLE / "slots.ads",
        "--jobs",
        EXAMPLE / "jobs.ads",
        "--now",
        NOW,
        "--state",
        db,
    )
    assert status == 0, err


def row(db: Path, name: str) -> dict:
    status, out, err = mm("userprio", "--state", db, "--json")
    assert status == 0, err
    return next(r for r in json.loads(out)["users"] if r["name"] == name)


def test_resetusage_without_now_takes_the_state_s_clock(tmp_path):
    """The state's last update is the cycle's time, NOW: usage restarts then, not at the
    wall clock (years later), which would put its start after its last use."""
    db = tmp_path / "a.db"
    cycle(db)
    assert mm("userprio", "--state", db, "--resetusage", ALICE)[0] == 0
    alice = row(db, ALICE)
    assert alice["begin_usage_time"] == NOW and alice["accumulated_usage_hours"] == 0


def test_resetusage_with_now_takes_it(tmp_path):
    db = tmp_path / "a.db"
    cycle(db)
    assert mm("userprio", "-state", db, "-resetusage", ALICE, "-now", NOW + 60)[0] == 0
    assert row(db, ALICE)["begin_usage_time"] == NOW + 60


def test_printed_times_are_utc_and_say_so_under_any_tz(tmp_path, monkeypatch):
    """Alice's usage restarts at NOW (the state's clock): 11/14/2023 22:13 in UTC, which a
    Tokyo clock would show as 11/15/2023 07:13."""
    db = tmp_path / "a.db"
    cycle(db)
    assert mm("userprio", "--state", db, "--resetusage", ALICE)[0] == 0
    shown = {}
    try:
        for zone in ("UTC", "Asia/Tokyo", "America/Chicago"):
            monkeypatch.setenv("TZ", zone)
            time.tzset()
            status, out, err = mm("userprio", "-state", db, "-most")
            assert status == 0, err
            shown[zone] = out
    finally:
        monkeypatch.undo()
        time.tzset()
    assert shown["UTC"] == shown["Asia/Tokyo"] == shown["America/Chicago"]
    head = shown["UTC"].splitlines()[0]
    assert "USAGE START TIME (UTC)" in head and "LAST USAGE TIME (UTC)" in head
    alice = next(line for line in shown["Asia/Tokyo"].splitlines() if line.startswith(ALICE))
    assert "11/14/2023 22:13" in alice
