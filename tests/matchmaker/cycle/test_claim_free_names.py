"""The number the claims look for a new dynamic slot's name from, given by the caller.

``claim_matches(..., free_from=...)`` takes, per partitionable slot, a number below which
every dynamic slot name of it is taken, looks from there, and leaves in the same dict the
same of the pool it makes (empty when a preempted dynamic slot went away: a number below
may be free again).  The machine of test_partitionable: 16 cores, 8 free, slot1_1 and
slot1_2 running alice's 1.0 and 1.1.
"""

from __future__ import annotations

from typing import Optional

from test_partitionable import PSLOT_PREEMPTION, ads, bob_jobs, dslot_text, pslot_text, running_alice

import matchmaker
from matchmaker.config.knobs import Knobs
from matchmaker.cycle.claims import claim_matches
from matchmaker.cycle.results import CycleResult, Match
from matchmaker.pool.partition import child_name

BOB = "bob@example.org"
PSLOT = "slot1@node1"


def _claims(matches: list[Match], free_from: Optional[dict[str, int]]) -> list[tuple[str, str]]:
    pslot = pslot_text(cpus=8, memory=8192, disk=10000)
    dslots = "".join(dslot_text(k, 4, 4096, "alice@example.org", f"1.{k - 1}") for k in (1, 2))
    jobs = running_alice() + bob_jobs(3, cpus=2, memory=1000, disk=0)
    loaded = matchmaker.load_ads(Knobs.from_string(PSLOT_PREEMPTION), ads(pslot + dslots), ads(jobs))
    claimed = claim_matches(loaded.pool, CycleResult(matches, [], [], [], {}), loaded.settings, free_from=free_from)
    if free_from is not None:  # what is left holds for the pool made
        names = {s.name for s in claimed.pool.slots}
        for parent, below in free_from.items():
            assert all(child_name(parent, n) in names for n in range(1, below))
    return [(s.job, s.slot) for s in claimed.starts]


def test_names_are_looked_for_from_the_number_given_and_the_number_is_kept() -> None:
    """Given 3 (slot1_1 and slot1_2 are taken), bob's 2.0 and 2.1 take slot1_3 and slot1_4,
    and his 2.2 the leftovers' slot1_5, as when looking from 1; the dict then holds 6."""
    matches = [Match("2.0", BOB, PSLOT, "no-preemption", None), Match("2.1", BOB, PSLOT, "no-preemption", None)]
    free_from = {PSLOT: 3}
    assert (
        _claims(matches, free_from)
        == _claims(matches, None)
        == [
            ("2.0", "slot1_3@node1"),
            ("2.1", "slot1_4@node1"),
            ("2.2", "slot1_5@node1"),
        ]
    )
    assert free_from == {PSLOT: 6}


def test_a_preempted_dynamic_slot_empties_the_numbers() -> None:
    """bob's 2.0 takes slot1_3 (from 3), then 2.2 preempts slot1_1, whose number is free
    again: its dynamic slot is slot1_1 (then 2.1 takes the leftovers' slot1_4); what was given
    is forgotten."""
    matches = [
        Match("2.0", BOB, PSLOT, "no-preemption", None),
        Match("2.2", BOB, PSLOT, "priority", "alice@example.org", preempted_slots=("slot1_1@node1",)),
    ]
    free_from = {PSLOT: 3, "slot9@elsewhere": 7}
    want = [("2.0", "slot1_3@node1"), ("2.2", "slot1_1@node1"), ("2.1", "slot1_4@node1")]
    assert _claims(matches, free_from) == _claims(matches, None) == want
    assert "slot9@elsewhere" not in free_from and free_from.get(PSLOT) in (None, 5)
