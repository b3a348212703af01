"""The loop's books of which slots are dynamic, told by the claims and releases.

The claims know each dynamic slot they made and its partitionable slot, and that a
partitionable slot whose resources they wrote is of the kind it was; a release knows the
same of the slot it writes.  The loop takes that (``_Run._known_kinds`` and the release)
instead of reading each new ad again (``_Run._find_parent``).  Its books must then hold
what reading the ads finds: a slot booked under a parent is a dynamic slot of that
parent's name, in the pool as a partitionable slot; a slot booked as not dynamic, with
the very ad it holds, is not a dynamic slot.  The run must be the one made without
being told, and the rebuild's.
"""

from __future__ import annotations

from typing import Any, Optional

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_incremental import (
    busy_pool,
    configs,
    dynamic_slot_texts,
    job_texts,
    running_job_texts,
    simulate,
    slot_texts,
)

from matchmaker.pool.partition import is_dynamic, parent_name
from matchmaker.simulate import loop

_PLAIN = (bool, int, float, str)


def _dynamic(ad: Any) -> Optional[bool]:
    """Whether ``ad`` is a dynamic slot, when telling evaluates nothing (else None: an
    evaluation could draw a random number and change the run)."""
    if any(v is not None and type(v) not in _PLAIN for v in (ad.plain("dynamicslot"), ad.plain("slottype"))):
        return None
    return is_dynamic(ad)


def _books_hold(run: Any) -> int:
    """Check the books against the slots; the number of slots checked."""
    pslots = {s.name for s in run.slots if s.partitionable}
    checked = 0
    for s in run.slots:
        up = run.parent.get(s.name)
        if up is not None:
            assert up in pslots
            assert parent_name(s.name) == up
            assert _dynamic(s.ad) in (True, None)
            checked += 1
        if run._not_dynamic.get(s.name) is s.ad:
            assert _dynamic(s.ad) in (False, None)
            checked += 1
    return checked


def _checking(counts: list[int]) -> Any:
    after = loop._Run.after_cycle

    def checked(run: Any, *args: Any, **kw: Any) -> Any:
        out = after(run, *args, **kw)
        counts.append(_books_hold(run))
        return out

    return checked


def _untold(run: Any, children: Any, resized: Any) -> None:
    return None


def _run(config: str, slots: str, jobs: str, cycles: int, seed: int) -> None:
    counts: list[int] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop._Run, "after_cycle", _checking(counts))
        told = simulate(config, slots, jobs, True, cycles, seed)
    assert len(counts) == cycles
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop._Run, "_known_kinds", _untold)
        assert told == simulate(config, slots, jobs, True, cycles, seed)
    assert told == simulate(config, slots, jobs, False, cycles, seed)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), dynamic_slot_texts(), job_texts(), st.integers(3, 6), st.integers(0, 3))
def test_the_books_of_dynamic_slots_are_what_the_ads_say(
    config: str, slots: str, dynamic: str, jobs: str, cycles: int, seed: int
) -> None:
    """Random pools of test_incremental, with dynamic slots at the start (with and without
    their partitionable slot, marked by literals or by an expression that draws)."""
    _run(config, slots + dynamic, jobs + running_job_texts(dynamic), cycles, seed)


def test_a_busy_run_books_its_new_dynamic_slots_as_told() -> None:
    """The busy pool (a partitionable slot split and given back between cycles, preemption):
    each dynamic slot the claims made is booked under ``slot1@p`` without its ad read
    again, and the partitionable slot's new ads as not dynamic: after the loop's first look
    at every slot, ``slot1@p`` is never read again, nor a dynamic slot in the cycle that
    made it (one claimed again in place later is: its claim rewrote it)."""
    config, slots, jobs = busy_pool()
    found: list[list[str]] = [[]]
    told: list[list[str]] = []
    find, tell = loop._Run._find_parent, loop._Run._known_kinds

    def reading(run: Any, name: str, ad: Any) -> bool:
        found[-1].append(name)
        return find(run, name, ad)  # type: ignore[no-any-return]

    def telling(run: Any, children: Any, resized: Any) -> None:
        told.append(list(children))
        found.append([])
        tell(run, children, resized)

    counts: list[int] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop._Run, "after_cycle", _checking(counts))
        patch.setattr(loop._Run, "_find_parent", reading)
        patch.setattr(loop._Run, "_known_kinds", telling)
        simulate(config, slots, jobs, True, 6, 1)
    assert sum(counts) > 0
    assert len(told) == 6 and sum(map(len, told)) >= 3
    assert found[0].count("slot1@p") == 1
    assert not [n for names in found[1:] for n in names if n == "slot1@p"]
    assert all(not set(names) & set(new) for names, new in zip(found[1:], told))
    _run(config, slots, jobs, 6, 1)
