"""Table-driven tests of every built-in: expected values recorded from HTCondor's library.

The tables live in ``data/*.json``, one file per theme (plus a second time table
run in America/Chicago).  Each case is an expression and the typed result
``classad2`` gave for it in HTCondor's default mode; ``"hard-failure"`` marks an
evaluation the reference aborts (we answer Error), ``"parse-error"`` text it
rejects.  Set ``FN_TABLE=<stem>`` to run one file.
"""

from __future__ import annotations

import os

import pytest
from fn_helpers import expected_for, load_tables, ours, theirs, timezone

ROWS = [r for r in load_tables() if not os.environ.get("FN_TABLE") or r[0] == os.environ["FN_TABLE"]]
IDS = [f"{stem}:{expr}" for stem, _tz, expr, _exp in ROWS]


@pytest.mark.parametrize("stem,tz,expr,recorded", ROWS, ids=IDS)
def test_recorded_result(stem: str, tz: str, expr: str, recorded: object) -> None:
    """Our value for the expression equals the one HTCondor gave."""
    with timezone(tz):
        got = ours(expr)
    assert got == expected_for(recorded), f"{expr}: expected {recorded!r}, got {got!r}"


# userHome() answers depend on the host's user database, so they are not re-checked live.
LIVE_ROWS = [r for r in ROWS if not r[2].startswith("userHome(")]


@pytest.mark.parametrize("stem,tz,expr,recorded", LIVE_ROWS, ids=[f"{s}:{e}" for s, _t, e, _r in LIVE_ROWS])
def test_recording_matches_live_oracle(oracle, stem: str, tz: str, expr: str, recorded: object) -> None:
    """The installed HTCondor still gives the recorded value (guards the tables)."""
    with timezone(tz):
        live = theirs(oracle, expr)
    assert live == recorded, f"{expr}: recorded {recorded!r}, oracle now {live!r}"
