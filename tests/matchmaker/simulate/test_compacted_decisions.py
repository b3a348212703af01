"""What a carried cycle decides of a compacted slot ad by the literals it stores
(matchmaker.cycle.state, Cycle._decide): whether the trim keeps the slot and whether a
claimed one is idle, found again for the ads of one variant that store the same values.

The expected values are the rebuild's (no carry) on random compacted pools (the
strategies of test_incremental: trims and activities by literals, by expressions that
read the clock and by draws; claims, splits and releases rewrite the ads between
cycles), pools read by the file loader whose slots of a few machine shapes share one
variant each while their literals differ, and a by-hand pool whose ads share one variant
but differ in their state and activity.
"""

from __future__ import annotations

import dataclasses
import io
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_incremental import OWNERS, START, _ads, configs, job_texts, outputs, slot_texts

from classad.evaluate import seeded_random
from classad.layout import SharedAttrs
from matchmaker.api import pool_options, settings_from
from matchmaker.config.knobs import Knobs
from matchmaker.cycle import state
from matchmaker.cycle.session import open_accountant
from matchmaker.pool.ads import load_pool, pool_from_ads
from matchmaker.simulate.loop import run_simulation


def _simulate(config: str, slots: str, jobs: str, incremental: bool, cycles: int, seed: int) -> tuple:
    """The simulation's outputs, its slot ads compacted (as a pool read from a dump is)."""
    knobs = Knobs.from_string(config + f"SIMULATE_INCREMENTAL = {str(incremental).lower()}\n")
    s = settings_from(knobs)
    with seeded_random(seed):
        pool = pool_from_ads([ad.compact() for ad in _ads(slots)], _ads(jobs), **pool_options(s))
    acct = open_accountant(":memory:", s)
    sim = run_simulation(
        pool, s, acct, start=START, duration=(cycles - 1) * 300, interval=300, job_duration=900, seed=seed
    )
    return sim.rows, sim.jobs, [dataclasses.astuple(x) for x in sim.spans], sim.warnings, acct.customers()


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), slot_texts(), job_texts(), st.integers(2, 5), st.integers(0, 3))
def test_compacted_pools_carried_equal_rebuild(config: str, slots: str, jobs: str, cycles: int, seed: int) -> None:
    assert _simulate(config, slots, jobs, True, cycles, seed) == _simulate(config, slots, jobs, False, cycles, seed)


def _slot(name: str, state_: str, activity: str) -> str:
    return (
        f'Name = "{name}"\nCpus = 1\nMemory = 1024\nDisk = 100000\nState = "{state_}"\nActivity = "{activity}"\n'
        'RemoteUser = "alice@x"\nRemoteOwner = "alice@x"\nRequirements = TARGET.RequestCpus <= MY.Cpus\n'
        "Rank = 0\nStart = true\n"
    )


def test_ads_of_one_variant_are_decided_by_their_own_literals(monkeypatch: Any) -> None:
    """Four slots whose ads share one variant (the same names, each keeping its State and
    Activity): claimed and busy, claimed and idle, claimed and busy again, unclaimed and
    idle.  The cycle decides each as the rebuild does -- only the second is claimed and
    idle -- though the third ad is decided by what the first one's values gave (one
    decision made for each of the others, none for the third)."""
    texts = [_slot("t", "Owner", "Unknown")]  # the layout's template: the others keep their own values
    texts += [_slot("a", "Claimed", "Busy"), _slot("b", "Claimed", "Idle"), _slot("c", "Claimed", "Busy")]
    texts += [_slot("d", "Unclaimed", "Idle")]
    ads = [ad.compact(equal_values=False) for ad in _ads("\n".join(texts))][1:]
    assert all(type(ad._attrs) is SharedAttrs for ad in ads)
    assert len({id(tuple.__getitem__(ad._attrs, 0)) for ad in ads}) == 1
    s = settings_from(Knobs.from_string("SIMULATE_INCREMENTAL = true\n"))
    pool = pool_from_ads(ads, [], **pool_options(s))
    made: list = []
    decide = state.Cycle._decide

    def counting(self: Any, slot: Any, p: Any) -> None:
        before = {k: dict(v[1]) for k, v in self.carry.slots.decided.items()}
        decide(self, slot, p)
        after = {k: dict(v[1]) for k, v in self.carry.slots.decided.items()}
        made.append(sum(map(len, after.values())) - sum(map(len, before.values())))

    monkeypatch.setattr(state.Cycle, "_decide", counting)
    idle: list = []
    cycle = state.Cycle.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        cycle(self, *args, **kwargs)
        idle.append([(e.slot.name, e.claimed_idle) for e in self.entries])

    monkeypatch.setattr(state.Cycle, "__init__", init)
    acct = open_accountant(":memory:", s)
    run_simulation(pool, s, acct, start=START, duration=0, interval=300, job_duration=900, seed=0)
    assert idle == [[("a", False), ("b", True), ("c", False), ("d", False)]]
    assert made == [1, 1, 0, 1]


# ---- many slots of one variant, each with its own literals ---------------------------------
#
# Random pools of test_incremental rarely give two ads of one variant that store different
# values of what the trim and the claimed-idle test read.  Here every slot is one of three
# machine shapes (the same names in the same order: one layout each, read by the file
# loader) and draws its own plain literals of RetirementTimeRemaining, WantMatching and
# Activity from an example's palettes.  Each shape's layout is first made from an ad whose
# values of those names are none of the drawn ones, so the slots of a shape share one
# variant whatever they draw.

# Palettes: the values of one name that the slots of an example draw from; two values that
# Python calls equal but the trim tells apart (1 and true, 0 and false) make one palette.
RETIREMENTS = (("0", "1"), ("1", "true"), ("1", "true"), ("true", "600"), ("0",))
WANTS = (("true", "false"), ("0", "false"), ("true",))
ACTIVITIES = (('"Idle"', '"Busy"'), ('"IDLE"', '"Suspended"'), ('"Idle"', "false"), ('"Busy"',))


def _shape_text(shape: int, name: str, owner: str, state_: str, retirement: str, want: str, activity: str) -> str:
    """One slot ad of ``shape``: 0 a claimed static slot, 1 an unclaimed static slot, 2 a
    partitionable slot (in ``state_``, the only shape whose State is drawn)."""
    lines = [f'Name = "{name}"', "VariantShape = %d" % shape]
    if shape == 2:
        lines += ["Cpus = 4", "Memory = 4096", "Disk = 4400", f'State = "{state_}"']
    else:
        lines += ["Cpus = 1", "Memory = 1024", "Disk = 100000"]
        lines.append('State = "Claimed"' if shape == 0 else 'State = "Unclaimed"')
    lines += [
        f"Activity = {activity}",
        f"RetirementTimeRemaining = {retirement}",
        f"WantMatching = {want}",
        "Requirements = TARGET.RequestCpus <= MY.Cpus",
        'Rank = TARGET.Owner == "bob"',
    ]
    if shape == 0:
        lines += [
            f'RemoteUser = "{owner}@example.org"',
            f'RemoteOwner = "{owner}@example.org"',
            "CurrentRank = 0",
            f"EnteredCurrentState = {START - 7200}",
        ]
    if shape == 2:
        lines += [
            "PartitionableSlot = true",
            'SlotType = "Partitionable"',
            "TotalSlotCpus = 4",
            "TotalSlotMemory = 4096",
            "TotalSlotDisk = 4400",
            "DiskQuantum = 1000",
        ]
    return "\n".join(lines) + "\n\n"


def _load(slots: str, jobs: str, s: Any) -> Any:
    """The pool as the file loader reads it (ads compacted as they are read)."""
    return load_pool(io.BytesIO(slots.encode()), io.BytesIO(jobs.encode()), allow_empty=True, **pool_options(s))


def _first_of_each_shape() -> None:
    """Make each shape's layout (once a process: layouts outlive a pool) from an ad whose
    trim and idle values are none of those drawn, and whose name, owner and state are none
    of the slots' either."""
    texts = "".join(_shape_text(k, "template", "nobody", "Owner", "12345", '"w"', '"Template"') for k in range(3))
    _load(texts, "", settings_from(Knobs.from_string("")))


@st.composite
def shaped_slot_texts(draw: Any) -> str:
    retirements, wants, activities = (
        st.sampled_from(draw(st.sampled_from(p))) for p in (RETIREMENTS, WANTS, ACTIVITIES)
    )
    out = []
    for i in range(draw(st.integers(2, 8))):
        shape = draw(st.integers(0, 2))
        out.append(
            _shape_text(
                shape,
                f"slot{i}@node{shape}",
                draw(st.sampled_from(OWNERS)),
                draw(st.sampled_from(("Unclaimed", "Claimed"))),
                draw(retirements),
                draw(wants),
                draw(activities),
            )
        )
    return "".join(out)


@st.composite
def trim_configs(draw: Any) -> str:
    """test_incremental's configurations, with the knobs that decide what the trim reads."""
    lines = [draw(configs())]
    lines += draw(st.sampled_from(([], ["PREEMPTION_REQUIREMENTS = true"])))
    lines.append("NEGOTIATOR_CONSIDER_PREEMPTION = " + draw(st.sampled_from(("true", "true", "true", "false"))))
    lines.append("NEGOTIATOR_CONSIDER_EARLY_PREEMPTION = " + draw(st.sampled_from(("false", "false", "false", "true"))))
    return "\n".join(lines) + "\n"


def _simulate_loaded(config: str, slots: str, jobs: str, incremental: bool, cycles: int, seed: int) -> tuple:
    """The simulation's outputs over the pool read by the file loader."""
    knobs = Knobs.from_string(config + f"SIMULATE_INCREMENTAL = {str(incremental).lower()}\n")
    s = settings_from(knobs)
    with seeded_random(seed):
        pool = _load(slots, jobs, s)
    shapes: dict[Any, set] = {}
    for slot in pool.slots:
        attrs = slot.ad._attrs
        assert type(attrs) is SharedAttrs  # compacted as read
        shapes.setdefault(attrs.plain("variantshape"), set()).add(id(tuple.__getitem__(attrs, 0)))
    assert all(len(ids) == 1 for ids in shapes.values())  # one variant a shape, whatever the values
    return outputs(pool, s, cycles, seed)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trim_configs(), shaped_slot_texts(), job_texts(), st.integers(2, 4), st.integers(0, 3))
def test_slots_of_one_variant_with_their_own_literals_carried_equal_rebuild(
    config: str, slots: str, jobs: str, cycles: int, seed: int
) -> None:
    _first_of_each_shape()
    on = _simulate_loaded(config, slots, jobs, True, cycles, seed)
    assert on == _simulate_loaded(config, slots, jobs, False, cycles, seed)
