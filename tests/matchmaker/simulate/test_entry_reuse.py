"""A carried cycle gives a slot row taken again from last cycle last cycle's entry.

The expected state of every entry a cycle starts from is that of a new entry of its slot,
copy, user and claimed-idle test (alive, no memo keys, no class, no consumption policy,
costing its slot's weight): an entry the last cycle matched, preempted, consumed from or
read through the scalar matcher must not serve again as it is.  On random pools and runs
(the strategies of test_incremental, the scalar matcher among them) every entry the
carried cycle starts from must be as new, and the run must be the rebuild's.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_incremental import busy_pool, configs, job_texts, simulate, slot_texts

from matchmaker.cycle.evaluator import SlotEntry
from matchmaker.cycle.state import Cycle


def _as_new(e: SlotEntry) -> bool:
    """Whether ``e`` holds what a new entry of its slot, copy, user and test holds."""
    fresh = SlotEntry(e.slot, e.ad, e.remote, e.claimed_idle)
    return all(getattr(e, name) == getattr(fresh, name) for name in SlotEntry.__slots__) and e.weight is e.slot.weight


def _checking(seen: list) -> Any:
    carried = Cycle._carried_entries
    before: dict[int, SlotEntry] = {}  # last cycle's entries, held, by identity

    def entries(self: Cycle, pairs: Any) -> Any:
        out, rows, *more = carried(self, pairs)
        assert all(map(_as_new, out))
        seen.append(sum(id(e) in before for e in out))
        before.clear()
        before.update((id(e), e) for e in out)
        return (out, rows, *more)

    return entries


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), job_texts(), st.integers(2, 5), st.integers(0, 3))
def test_carried_entries_are_as_new(config: str, slots: str, jobs: str, cycles: int, seed: int) -> None:
    seen: list = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Cycle, "_carried_entries", _checking(seen))
        on = simulate(config, slots, jobs, True, cycles, seed)
    off = simulate(config, slots, jobs, False, cycles, seed)
    assert on == off


@pytest.mark.parametrize("columnar", ["true", "false"])
def test_a_busy_run_takes_entries_again(columnar: str) -> None:
    """Claims, releases, splits, preemption and groups between cycles, by the columnar
    matcher and by the scalar one (which writes memo keys into the entries it reads):
    later cycles start from entries each as new (the columnar matcher's taken again from
    the last cycle), and the run is the rebuild's."""
    config, slots, jobs = busy_pool()
    config += f"MATCHMAKER_COLUMNAR = {columnar}\n"
    seen: list = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Cycle, "_carried_entries", _checking(seen))
        on = simulate(config, slots, jobs, True, 12, 5)
    off = simulate(config, slots, jobs, False, 12, 5)
    assert any(seen[1:]) is (columnar == "true")  # entries taken again
    assert on == off
