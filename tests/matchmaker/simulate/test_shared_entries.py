"""Copies of one user's claimed slots share one table of ``Remote*`` entries across cycles.

A carried cycle takes a slot row again from last cycle by its user's code, kept by place
(``Cycle._taken_again``), without visiting the row: the copies of the user's claimed
slots that add nothing else share one table of entries (``SharedEntries``), rewritten
once when the user's priority changes, and the slot table is told which of last cycle's
copies share it (``SlotCarry.rewrite_shared``).  The expected values are those of a
rebuild: in every carried cycle each entry's copy must read exactly as a copy annotated
afresh for the cycle (``Cycle._annotated``), the carried slot table must read in each
column what a table built afresh of the same copies reads, and the run must be the
rebuild's.  Checked on random pools and runs (the strategies of test_incremental) and on
one busy run in which users' priorities change while their slots stay claimed.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_incremental import busy_pool, configs, job_texts, simulate, simulate_patched, slot_texts

from classad.columnar import AdTable
from matchmaker.cycle.slot_carry import SlotCarry
from matchmaker.cycle.state import Cycle
from matchmaker.cycle.table_carry import TableLine
from matchmaker.pool.partition import consumption_policy

# What a slot table's columns are compared in: the names the cycle adds, and a few of the ads'.
_NAMES = (
    "remoteuserprio",
    "remoteuserfloor",
    "remoteuserresourcesinuse",
    "remotegroup",
    "remotegroupresourcesinuse",
    "remotegroupquota",
    "requirements",
    "name",
    "state",
    "cpus",
)


def _read(ad: Any) -> list[tuple[str, str, str]]:
    """Every attribute of a copy: its name as spelled, its node's type and text."""
    return sorted((name, type(ad.get_node(name)).__name__, repr(ad.get_node(name))) for name in ad)


def _column(table: Any, name: str) -> list:
    """What a column says of each row (holds, value or expression node)."""
    col = table.column(name)
    values = col.values.to_values()
    return [
        (int(col.holds[r]), id(col.nodes[col.group[r]]) if col.group[r] >= 0 else (type(values[r]), repr(values[r])))
        for r in range(table.n)
    ]


def _checking(seen: dict[str, int]) -> tuple[Any, Any, Any, Any]:
    """Cycle._classes (called once the cycle's entries are made), TableLine.table_of,
    SlotCarry.rewrite_shared and Cycle._kept_rows, checking the copies and the tables
    against fresh ones, and the entries of no remote user and the entries' ids kept by
    place against those of every entry."""
    classes, table_of, rewrite, kept_rows = (
        Cycle._classes,
        TableLine.table_of,
        SlotCarry.rewrite_shared,
        Cycle._kept_rows,
    )

    def checked_kept_rows(self: Cycle, *args: Any) -> Any:
        entries, rows, unclaimed, free = kept_rows(self, *args)
        assert list(map(id, unclaimed)) == [id(e) for e in entries if e.remote is None]
        placing = self.carry.slots._placing
        if "entry_ids" in placing:  # kept by place (the pairs were taken by SlotCarry.pairs)
            assert placing["entry_ids"].tolist() == [id(e) for e in placing["entries"]]
            seen["ids"] += 1
        return entries, rows, unclaimed, free

    def checked_classes(self: Cycle, pool: Any, entries: Any, rows: Any) -> Any:
        if self.carry is not None:
            for e in entries:
                if e.cp is None:  # a consumption policy's copy is its own (made afresh each cycle)
                    assert _read(e.ad) == _read(self._annotated(e.slot)), e.slot.name
                # Each entry of no remote user has its copy's policy, found by place or asked.
                assert e.cp == (consumption_policy(e.ad) if e.remote is None else None), e.slot.name
            assert list(map(id, self.matcher.cp_entries)) == [id(e) for e in entries if e.cp is not None]
            seen["policies"] += len(self.matcher.cp_entries)
            seen["cycles"] += 1
        return classes(self, pool, entries, rows)

    def checked_table_of(self: TableLine, ads: Any, sources: Any, names: Any = None) -> Any:
        table = table_of(self, ads, sources, names)
        fresh = AdTable(list(ads))
        for name in _NAMES:
            assert _column(table, name) == _column(fresh, name), name
        return table

    def counted_rewrite(self: SlotCarry, code: int, entries: Any, noted: Any) -> bool:
        seen["rewrites"] += 1
        return rewrite(self, code, entries, noted)

    return checked_classes, checked_table_of, counted_rewrite, checked_kept_rows


def _run_checked(config: str, slots: str, jobs: str, cycles: int, seed: int) -> tuple[tuple, dict[str, int]]:
    seen = {"cycles": 0, "rewrites": 0, "ids": 0, "policies": 0}
    checked_classes, checked_table_of, counted_rewrite, checked_kept_rows = _checking(seen)
    patches = [
        (Cycle, "_kept_rows", checked_kept_rows),
        (Cycle, "_classes", checked_classes),
        (TableLine, "table_of", checked_table_of),
        (SlotCarry, "rewrite_shared", counted_rewrite),
    ]
    return simulate_patched(patches, config, slots, jobs, cycles, seed), seen


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), job_texts(), st.integers(2, 6), st.integers(0, 3))
def test_shared_entries_read_as_the_rebuilt_ones(config: str, slots: str, jobs: str, cycles: int, seed: int) -> None:
    on, _ = _run_checked(config, slots, jobs, cycles, seed)
    assert on == simulate(config, slots, jobs, False, cycles, seed)


@pytest.mark.parametrize("columnar", ["true", "false"])
def test_a_busy_run_rewrites_shared_entries(columnar: str) -> None:
    """Claims, releases, splits, priority preemption and a group between cycles, with the
    users' priorities changing every cycle (a half-life of ten minutes): later cycles take
    claimed rows again by their users' codes and rewrite the users' shared tables, and
    every copy and table reads as a fresh one; the run is the rebuild's (by the columnar
    matcher and by the scalar one, which writes memo keys into the entries it reads)."""
    config, slots, jobs = busy_pool()
    config += f"MATCHMAKER_COLUMNAR = {columnar}\n"
    on, seen = _run_checked(config, slots, jobs, 12, 5)
    assert seen["cycles"] == 12 and seen["ids"] == 12
    if columnar == "true":  # the scalar matcher's memo keys make its entries anew: read one by one
        assert seen["rewrites"] > 0
    assert on == simulate(config, slots, jobs, False, 12, 5)
