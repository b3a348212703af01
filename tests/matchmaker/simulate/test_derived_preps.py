"""What a new slot ad takes over from the ad it was written from (SlotCarry.derive).

The claims and the loop write new slot ads between two cycles (a split's shrunk
partitionable slot, a give-back, a claim, a release), each a copy of an ad of the last
cycle with plain values written.  The next cycle's prep of such an ad takes over what is
kept of the older ad's prep where the names written cannot change it: the trim and the
claimed-idle decisions, the references of its Requirements and Rank, and (for any copy)
its record's weight.  The expected values are computed afresh for the new ad: the
decisions by the cycle's own steps on a fresh prep, the references by a fresh walk, the
weight by a fresh evaluation.  Random ads and random chains of writes and deletions, and
simulations whose every carried fact is checked against a fresh one, and whose every
write told to the carry is checked against the ads (the names told cover every change).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_incremental import busy_pool, configs, job_texts, simulate, simulate_patched, slot_texts

from classad import ClassAd, parse_expr
from matchmaker.api import settings_from
from matchmaker.config.knobs import Knobs
from matchmaker.cycle.slot_carry import MADE, SlotCarry, SlotPrep
from matchmaker.cycle.state import Cycle
from matchmaker.cycle.table_carry import TableLine
from matchmaker.pool.ads import make_slots
from matchmaker.pool.autocluster import SlotReferences
from matchmaker.pool.partition import with_values

START = 1_700_000_000
SETTINGS = settings_from(Knobs.from_string(""))
EXPRS = (parse_expr("RemoteUserPrio > TARGET.SubmitterUserPrio && CurrentTime - EnteredCurrentState > Foo"),)
# Each name a slot ad may hold, and what it may hold (None: nothing).
CHOICES = {
    "Cpus": ["1", "4"],
    "Memory": ["1024", "Cpus * 512"],
    "Activity": [None, '"Idle"', '"Busy"', 'ifThenElse(Cpus > 2, "Idle", "Busy")'],
    "WantMatching": [None, "true", "false", "Cpus > 2"],
    "RetirementTimeRemaining": [None, "0", "100", "Cpus - 2"],
    "Foo": [None, "3", "Cpus + Bar"],
    "Bar": [None, "1", "TARGET.Y"],
    "Requirements": ["TARGET.RequestCpus <= MY.Cpus", "Foo > 2 && TARGET.X", "Bar =?= undefined || Memory > 9"],
    "Rank": ["0", "Foo", "TARGET.Y + Bar"],
    "State": ['"Unclaimed"', '"Claimed"'],
    "PartitionableSlot": [None, "true"],
}
# What a write may put under a name: plain values only.
WRITES = {
    "Cpus": [1, 2, 3],
    "Memory": [512, 2048.0],
    "Activity": ["Idle", "Busy"],
    "WantMatching": [True, False],
    "RetirementTimeRemaining": [0, 60],
    "Foo": [1, 5, "x"],
    "Bar": [1, True],
    "Rank": [0, 2.5],
    "State": ["Claimed", "Unclaimed"],
}


class _Decider:
    """The cycle's own trim and claimed-idle steps (Cycle._keep, Cycle._claimed_idle) on a
    prep, under a cycle's settings and time."""

    _keep = Cycle._keep
    _trim = Cycle._trim
    _value = Cycle._value
    _claimed_idle = Cycle._claimed_idle

    def __init__(self, settings: Any) -> None:
        self.settings, self.now = settings, START


def _decisions(decide: Any, slot: Any, ad: ClassAd, state: str, partitionable: bool) -> tuple[bool, bool]:
    """What the cycle decides afresh of a record of ``ad`` in ``state``: kept, and claimed idle."""
    record = dataclasses.replace(slot, ad=ad, state=state, partitionable=partitionable)
    fresh = SlotPrep(ad, True)
    return decide._keep(record, fresh), decide._claimed_idle(record, fresh)


@st.composite
def slot_ads(draw: Any) -> ClassAd:
    attrs = ['Name = "s@n"']
    for name, options in CHOICES.items():
        text = draw(st.sampled_from(options))
        if text is not None:
            attrs.append(f"{name} = {text}")
    return ClassAd("[" + "; ".join(attrs) + "]")


@st.composite
def writes(draw: Any) -> list[dict[str, object]]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        names = draw(st.lists(st.sampled_from(sorted(WRITES)), min_size=1, max_size=3, unique=True))
        out.append({n: draw(st.sampled_from(WRITES[n])) for n in names})
    return out


# What a write may delete.
DELETES = ("Activity", "WantMatching", "Foo", "Bar", "PartitionableSlot", "Rank")


@st.composite
def deletions(draw: Any) -> list[tuple[str, ...]]:
    return [tuple(draw(st.lists(st.sampled_from(DELETES), max_size=2, unique=True))) for _ in range(3)]


def _carried(
    base: ClassAd, chain: list[dict[str, object]], deleted: Any = (), refs: Any = None
) -> tuple[Any, SlotPrep, SlotPrep, ClassAd]:
    """Base's record and prep as a cycle leaves them (decided, references read), the ad the
    chain of writes (and the deletions ``deleted``, one tuple per write) makes of it, told to
    the carry write by write, and that ad's prep in the next cycle.  With ``refs`` (a
    SlotReferences) the carry knows what decided the references (SlotReferences.decisive)."""
    (slot,) = make_slots([(base, "slots:1")])  # (compacts the ad, as a pool's slot ads are)
    carry = SlotCarry(lambda _ad: True, TableLine(), refs)
    decide = _Decider(SETTINGS)
    carry.begin(SETTINGS)
    was = carry.prep(slot.ad)
    if decide._keep(slot, was):
        decide._claimed_idle(slot, was)
    was.references(refs if refs is not None else SlotReferences(), EXPRS)
    carry.read()
    ad = slot.ad
    for values, gone in zip(chain, list(deleted) + [()] * len(chain)):
        new = with_values(ad, values, deleted=gone)
        carry.derive(new, ad, tuple(values), SETTINGS, gone)
        ad = new
    carry.begin(SETTINGS)
    return slot, was, carry.prep(ad), ad


@settings(max_examples=300, deadline=None)
@given(slot_ads(), writes())
def test_carried_facts_are_the_fresh_ones(base: ClassAd, chain: list[dict[str, object]]) -> None:
    slot, was, p, ad = _carried(base, chain)
    assert p is not was and p.ad is ad and p.weighed is MADE
    decide = _Decider(SETTINGS)
    if p.keep is not None:
        state, partitionable, keep = p.keep
        assert keep == _decisions(decide, slot, ad, state, partitionable)[0]
    if p.idle is not None:
        state, idle = p.idle
        assert idle == _decisions(decide, slot, ad, state, slot.partitionable)[1]
    if p.refs is not None:
        assert p.refs == SlotReferences().of(ad, EXPRS)


@settings(max_examples=300, deadline=None)
@given(slot_ads(), writes(), deletions())
def test_carried_references_are_the_fresh_ones_with_deletions(
    base: ClassAd, chain: list[dict[str, object]], deleted: list[tuple[str, ...]]
) -> None:
    """Writes and deletions, the carry knowing what decided the references: the carried
    ones are a fresh walk's.  Two ads written alike from the same ad in one cycle: the
    second takes what the first was found to read, and that is a fresh walk's too."""
    refs = SlotReferences()
    slot, was, p, ad = _carried(base, chain, deleted, refs)
    if p.refs is not None:
        assert p.refs == SlotReferences().of(ad, EXPRS)
    carry = SlotCarry(lambda _ad: True, TableLine(), refs)
    carry.begin(SETTINGS)
    first = carry.prep(slot.ad)
    first.references(refs, EXPRS)
    carry.read()
    made = []
    for _ in range(3):
        ad = slot.ad
        for values, gone in zip(chain, deleted):
            new = with_values(ad, values, deleted=gone)
            carry.derive(new, ad, tuple(values), SETTINGS, gone)
            ad = new
        made.append(ad)
    carry.begin(SETTINGS)
    for ad in made:
        p = carry.prep(ad)
        if p.refs is not None:
            assert p.refs == SlotReferences().of(ad, EXPRS)
        p.references(refs, EXPRS)  # (as the cycle's queues find it)


def test_a_resize_takes_over_the_decisions_and_the_references() -> None:
    """Cpus and Memory written (a split, a give-back): the decisions and the references
    are the older ad's; Activity written too: the decisions are made again; a name the
    Requirements reads that the older ad lacked: the references are read again."""
    base = ClassAd(
        '[Name = "s@n"; Cpus = 4; Memory = 4096; State = "Unclaimed"; Activity = "Idle"; '
        "Requirements = TARGET.RequestCpus <= MY.Cpus && Foo; Rank = 0]"
    )
    slot, was, p, _ = _carried(base, [{"Cpus": 3, "Memory": 3072}, {"Cpus": 2}])
    assert was.keep is not None and was.idle is not None and was.refs is not None
    assert (p.keep, p.idle, p.refs) == (was.keep, was.idle, was.refs) and p.refs is was.refs
    _, was, p, _ = _carried(base, [{"Cpus": 3}, {"Activity": "Busy"}])
    assert p.keep is None and p.idle is None and p.refs is was.refs
    _, was, p, _ = _carried(base, [{"Cpus": 3}, {"Foo": True}])
    assert p.keep == was.keep and p.refs is None


def test_nothing_is_taken_over_under_other_settings_or_from_an_ad_not_of_the_last_cycle() -> None:
    """A write told under other settings than the cycle's, or from an ad no cycle read,
    gives a prep made afresh (nothing kept: no decisions, no references, no weight)."""
    base = ClassAd('[Name = "s@n"; Cpus = 4; State = "Unclaimed"; Requirements = true; Rank = 0]')
    (slot,) = make_slots([(base, "slots:1")])
    carry = SlotCarry(lambda _ad: True, TableLine())
    carry.begin(SETTINGS)
    carry.prep(slot.ad)
    carry.read()
    other = with_values(slot.ad, {"Cpus": 3})
    carry.derive(other, slot.ad, ("Cpus",), object())
    stranger = ClassAd('[Name = "t@n"; Cpus = 4]')
    unseen = with_values(stranger, {"Cpus": 3})
    carry.derive(unseen, stranger, ("Cpus",), SETTINGS)
    carry.begin(SETTINGS)
    for ad in (other, unseen):
        p = carry.prep(ad)
        assert (p.weighed, p.keep, p.refs) == (None, None, None)


# ---- in simulations: every carried fact against a fresh one -----------------------------


def _checking(seen: dict[str, int]) -> tuple[Any, Any, Any, Any]:
    """SlotCarry._derived (noting the preps it makes), Cycle._weighed, Cycle._entry_row and
    Cycle._queues, checking what each such prep carries against a fresh computation."""
    derived, weighed, entry_row, queues = SlotCarry._derived, Cycle._weighed, Cycle._entry_row, Cycle._queues
    made: dict[int, SlotPrep] = {}

    def noting(self: SlotCarry, ad: Any) -> Any:
        p = derived(self, ad)
        if p is not None:
            made[id(p)] = p
        return p

    def checked_weighed(self: Cycle, s: Any, p: Any) -> Any:
        if p is not None and p.weighed is MADE:
            w = self._weight(s.ad)
            assert (type(w), w, str(w)) == (type(s.weight), s.weight, str(s.weight)), s.name
            seen["weights"] += 1
        return weighed(self, s, p)

    def checked_entry_row(self: Cycle, s: Any, p: Any, users: Any) -> Any:
        if made.get(id(p)) is p and p.keep is not None and p.keep[:2] == (s.state, s.partitionable):
            fresh = SlotPrep(p.ad, True)
            assert p.keep[2] == self._keep(s, fresh), s.name
            if p.idle is not None and p.idle[0] == s.state:
                assert p.idle[1] == self._claimed_idle(s, fresh), s.name
            seen["decisions"] += 1
        return entry_row(self, s, p, users)

    def checked_queues(self: Cycle, pool: Any, pairs: Any) -> Any:
        out = queues(self, pool, pairs)
        st_, pol = self.settings, self.settings.policy
        exprs = [
            e
            for e in (pol.preemption_requirements, pol.preemption_rank, pol.pre_job_rank, pol.post_job_rank)
            + (st_.job_constraint,)
            if e is not None
        ]
        for _, p in pairs:
            if made.get(id(p)) is p and p.refs is not None:
                assert p.refs == SlotReferences().of(p.ad, exprs), p.ad.get("Name")
                seen["references"] += 1
        made.clear()
        return out

    return noting, checked_weighed, checked_entry_row, checked_queues


def _run_checked(
    config: str, slots: str, jobs: str, cycles: int, seed: int, more: Any = ()
) -> tuple[tuple, dict[str, int]]:
    seen = {"weights": 0, "decisions": 0, "references": 0}
    noting, checked_weighed, checked_entry_row, checked_queues = _checking(seen)
    patches = [
        *more,
        (SlotCarry, "_derived", noting),
        (Cycle, "_weighed", checked_weighed),
        (Cycle, "_entry_row", checked_entry_row),
        (Cycle, "_queues", checked_queues),
    ]
    return simulate_patched(patches, config, slots, jobs, cycles, seed), seen


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_carried_facts_in_simulations_are_the_fresh_ones(data: Any) -> None:
    config, slots, jobs = data.draw(configs()), data.draw(slot_texts()), data.draw(job_texts())
    cycles, seed = data.draw(st.integers(2, 6)), data.draw(st.integers(0, 3))
    on, _ = _run_checked(config, slots, jobs, cycles, seed)
    assert on == simulate(config, slots, jobs, False, cycles, seed)


def test_a_busy_run_carries_facts_to_new_ads() -> None:
    """Claims, releases, splits and give-backs between cycles: the new ads' records weigh
    as evaluated afresh, and the shrunk and grown partitionable slot takes over its
    decisions and references, each as found afresh; the run is the rebuild's."""
    config, slots, jobs = busy_pool()
    on, seen = _run_checked(config, slots, jobs, 12, 5)
    assert seen["weights"] > 10 and seen["decisions"] > 0 and seen["references"] > 0
    assert on == simulate(config, slots, jobs, False, 12, 5)


def _telling(told: dict[str, int]) -> Any:
    """SlotCarry.derive, checking each write told against the two ads: every name under
    which they store other is among the names told; under a name only written the new ad
    stores a plain literal, under a name only deleted nothing."""
    derive = SlotCarry.derive

    def checked(self: SlotCarry, ad: Any, base: Any, written: Any, settings: Any, deleted: Any = ()) -> None:
        if written is not None:
            writes, deletes = {n.lower() for n in written}, {n.lower() for n in deleted}
            for name in set(ad._attrs.keys()) | set(base._attrs.keys()):
                now, before = ad.plain(name), base.plain(name)
                if now is before or (
                    type(now) is type(before) and type(now) in (bool, int, float, str) and now == before
                ):
                    continue  # (the same node, or an equal plain literal)
                assert name in writes or name in deletes, (name, before, now)
                if name not in deletes:
                    assert type(now) in (bool, int, float, str), (name, now)
                if name not in writes:
                    assert now is None, (name, now)
            told["writes"] += 1
        return derive(self, ad, base, written, settings, deleted)

    return checked


def test_a_busy_run_tells_the_carry_every_name_written() -> None:
    """Splits, claims, releases and give-backs: each new ad told to the carry differs from
    the ad it was written from only under the names told, and the new ads' references,
    decided by RemoteOwner (a name a claim writes and a release deletes), are each a fresh
    walk's; the run is the rebuild's."""
    config, slots, jobs = busy_pool()
    slots = slots.replace(
        "Rank = 0\n", 'Rank = ifThenElse(RemoteOwner =?= undefined, 0, 1) + (TARGET.Owner == "bob")\n'
    )
    told = {"writes": 0}
    on, seen = _run_checked(config, slots, jobs, 12, 5, [(SlotCarry, "derive", _telling(told))])
    assert told["writes"] > 20 and seen["references"] > 20
    assert on == simulate(config, slots, jobs, False, 12, 5)
