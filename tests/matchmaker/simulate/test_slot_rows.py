"""What a simulation's cycle gathers for the slot table as it makes its entries (SlotRows).

A carried cycle gathers, per slot entry, what the columnar slot table would otherwise
read of the entry (its slot's index, its copy, its remote user, whether it is claimed
and idle, its slot's weight, slot ad and name), and the table takes it from there
while no entry has changed.  The expected value of each row is the entry itself: on
random pools and runs (the strategies of test_incremental: consumption policies that
leave entries out of the table, pslot preemption, slot weights that draw, trims by
expressions...) every table made from gathered rows must hold exactly what it reads
of its entries, and a table made after a match must read the entries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_incremental import START, busy_pool, configs, job_texts, simulate, slot_texts

from matchmaker.cycle import columnar_match
from matchmaker.cycle.columnar_match import SlotTable
from matchmaker.cycle.evaluator import EachAlone, SlotRows
from matchmaker.cycle.state import Cycle


def _entry_row(e: Any) -> tuple:
    return (e.index, e.ad, e.remote, e.claimed_idle, e.weight, e.slot.ad, e.slot.name)


def _same(a: tuple, b: tuple) -> bool:
    """The same objects, or equal values of the same type (a weight 1 is not 1.0)."""
    return all(x is y or (type(x) is type(y) and x == y) for x, y in zip(a, b)) and len(a) == len(b)


def _checking(seen: list) -> Any:
    made = SlotTable.__init__

    def init(self: SlotTable, classes: Any, line: Any = None) -> None:
        rows = classes.rows if type(classes) is EachAlone and not classes.made else None
        if rows is not None:
            entries = classes.entries
            if rows.fresh:
                assert all(e.alive for e in entries)
                assert len(rows.rows) == len(entries)
                assert all(_same(r, _entry_row(e)) for r, e in zip(rows.rows, entries))
            seen.append((rows.fresh, all(e.alive for e in entries)))
        made(self, classes, line)
        if rows is not None:  # the table's arrays are the entries' own
            assert self.alive.tolist() == [e.alive for e in self.entries]
            assert self.weight.tolist() == [e.weight for e in self.entries]
            assert self.index.tolist() == [e.index for e in self.entries]
            assert all(a is e.ad for a, e in zip(self.table.ads, self.entries))

    return init


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), job_texts(), st.integers(2, 5), st.integers(0, 3))
def test_gathered_rows_are_the_entries(config: str, slots: str, jobs: str, cycles: int, seed: int) -> None:
    seen: list = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SlotTable, "__init__", _checking(seen))
        on = simulate(config, slots, jobs, True, cycles, seed)
    off = simulate(config, slots, jobs, False, cycles, seed)
    assert on == off
    assert all(alive for fresh, alive in seen if fresh)


def test_a_busy_run_makes_its_tables_from_gathered_rows() -> None:
    """Four static slots and a partitionable one, twelve jobs of three users arriving over
    four cycles, two of them a group's, priority preemption: the claims rewrite, split
    and release slots between cycles.  Every carried cycle that builds a list makes its
    table from gathered rows (the first build of a cycle comes before its first match),
    and the run is the rebuild's."""
    config, slots, jobs = busy_pool()
    seen: list = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SlotTable, "__init__", _checking(seen))
        on = simulate(config, slots, jobs, True, 12, 5)
    assert on == simulate(config, slots, jobs, False, 12, 5)
    assert len(seen) >= 10 and all(fresh for fresh, _ in seen)


def test_a_table_made_after_a_match_reads_the_entries(monkeypatch: Any) -> None:
    """A cycle's table made only after its first match (here: every build of three
    submitters' jobs makes the table again) reads which entries are still alive from
    the entries: the matched slot's row is not available."""
    config = "NEGOTIATOR_INTERVAL = 300\n"
    slots = "".join(
        f'Name = "slot{i}@n"\nCpus = 1\nMemory = 1024\nDisk = 1000\nState = "Unclaimed"\n'
        "Requirements = true\nRank = 0\n\n"
        for i in range(3)
    )
    jobs = "".join(
        f'ClusterId = {p + 1}\nProcId = 0\nOwner = "{o}"\nUser = "{o}@example.org"\nJobStatus = 1\n'
        f"RequestCpus = 1\nRequestMemory = 256\nRequestDisk = 10\nRequirements = true\nQDate = {START}\n"
        "SimJobDuration = 900\n\n"
        for p, o in enumerate(("alice", "bob", "carol"))
    )
    seen: list = []
    build = columnar_match.build

    def forgetting(matcher: Any, *args: Any) -> Any:
        matcher.columnar_slots = None  # every build makes the table again
        return build(matcher, *args)

    monkeypatch.setattr(columnar_match, "build", forgetting)
    monkeypatch.setattr("matchmaker.cycle.matching.build_columnar", forgetting)
    monkeypatch.setattr(SlotTable, "__init__", _checking(seen))
    on = simulate(config, slots, jobs, True, 3, 0)
    monkeypatch.undo()
    assert on == simulate(config, slots, jobs, False, 3, 0)
    assert (True, True) in seen and (False, False) in seen  # before and after a match


def test_rows_taken_again_follow_their_users_priorities(monkeypatch: Any) -> None:
    """The busy run (claims, releases, splits, preemption, a group): in a carried cycle, a
    slot whose record is last cycle's and whose trim and idle test read literals gives
    last cycle's row again without being read (``Cycle._entry_row``); a claimed one keeps
    its copy, whose ``RemoteUserPrio`` is its user's priority of this cycle (asked of the
    cycle's priorities here).  Some copies are kept while their user's priority changes;
    every gathered row is its entry, and the run is the rebuild's."""
    config, slots, jobs = busy_pool()
    read: list = []
    taken: list[int] = []  # per carried cycle, the pairs not read
    changed: list = []  # copies kept from last cycle with another priority
    last: dict[int, float] = {}  # id(copy) -> its priority last cycle
    entry_row, carried, init = Cycle._entry_row, Cycle._carried_entries, Cycle.__init__

    def reading(self: Cycle, s: Any, p: Any, users: Any) -> Any:
        read.append(s)
        return entry_row(self, s, p, users)

    def carrying(self: Cycle, pairs: Any) -> Any:
        before = len(read)
        out = carried(self, pairs)
        taken.append(len(pairs) - (len(read) - before))
        return out

    def checking(self: Cycle, *args: Any, **kwargs: Any) -> None:
        nonlocal last
        init(self, *args, **kwargs)
        now: dict[int, float] = {}
        for e in self.entries:
            if e.remote is not None and e.cp is None:
                prio = e.ad["RemoteUserPrio"]
                assert prio == self.priorities.eup(e.remote)
                if id(e.ad) in last and last[id(e.ad)] != prio:
                    changed.append(e.ad)
                now[id(e.ad)] = prio
        last = now

    seen: list = []
    monkeypatch.setattr(SlotTable, "__init__", _checking(seen))
    monkeypatch.setattr(Cycle, "_entry_row", reading)
    monkeypatch.setattr(Cycle, "_carried_entries", carrying)
    monkeypatch.setattr(Cycle, "__init__", checking)
    on = simulate(config, slots, jobs, True, 12, 5)
    monkeypatch.undo()
    assert on == simulate(config, slots, jobs, False, 12, 5)
    assert len(taken) == 12 and taken[0] == 0 and sum(taken[1:]) > 20
    assert changed


@pytest.mark.parametrize(
    ("indexes", "distinct"),
    [([], True), ([7], True), ([1, 2, 5], True), ([1, 5, 2], True), ([1, 2, 2], False), ([3, 1, 3], False)],
)
def test_gathered_rows_say_whether_each_slot_index_is_listed_once(indexes: list, distinct: bool) -> None:
    """SlotRows.distinct (each_alone's test): indexes increasing along the rows are distinct,
    others are counted (a dynamic slot listed out of order, an index listed twice); the
    fields are the rows' columns, the indexes as int64."""
    rows = SlotRows([(i, None, None, False, 1.0, None, f"s{i}") for i in indexes])
    assert rows.distinct() is distinct
    assert rows.index().dtype == np.int64 and rows.index().tolist() == indexes
    fields = rows.fields()
    assert len(fields) == 7 and fields[0] == indexes and fields[6] == [f"s{i}" for i in indexes]
