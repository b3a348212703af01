"""The entries a simulation's cycle takes again from the last cycle (Cycle._carried_entries).

Differential: cycle after cycle over one pool (the very slot records), the entries made
with the carry (last cycle's copies kept, their ``Remote*`` entries rewritten) must read
exactly as the entries a cycle without the carry makes afresh, while the users'
priorities go up and back again and the names of the entries change (a group quota is
known from the second cycle on, then no longer).
"""

from __future__ import annotations

from typing import Any, Optional

from classad import ClassAd
from matchmaker.config.settings import Settings
from matchmaker.cycle.carry import Carried
from matchmaker.cycle.ephemeral import GroupView, StaticPriorities
from matchmaker.cycle.state import Cycle
from matchmaker.pool.ads import Pool, make_slots

NOW = 1_700_000_000.0


def _slot(name: str, user: Optional[str], rank: str = "0") -> str:
    claim = f'; State = "Claimed"; Activity = "Busy"; RemoteUser = "{user}"; RemoteOwner = "{user}"' if user else ""
    return f'[Name = "{name}"; Machine = "m"; Cpus = 1; Memory = 1024; Requirements = true; Rank = {rank}{claim}]'


def _pool() -> Pool:
    texts = [
        _slot("a", "alice@x"),
        _slot("b", "bob@x"),
        _slot("c", None),
        _slot("d", "alice@x", 'TARGET.Owner == "alice"'),
        _slot("e", "carol@x"),
    ]
    return Pool(make_slots([(ClassAd(t), f"slots:{i}") for i, t in enumerate(texts)]), [])


def _read(cycle: Cycle) -> list[tuple[Any, ...]]:
    """What each entry of the cycle holds: its slot, user, idle test and every attribute
    of its copy (name as spelled, node)."""
    return [
        (e.slot.name, e.remote, e.claimed_idle, [(name, e.ad.get_node(name)) for name in e.ad]) for e in cycle.entries
    ]


def test_carried_entries_read_as_the_rebuilt_ones() -> None:
    pool, settings, carry = _pool(), Settings.defaults(), Carried()
    eups = [
        {"alice@x": 500.0, "bob@x": 700.0, "carol@x": 900.0},
        {"alice@x": 510.0, "bob@x": 700.0, "carol@x": 900.0},  # alice's rewritten, the others equal
        {"alice@x": 500.0, "bob@x": 710.0, "carol@x": 900.0},  # alice's back to the first cycle's
        {"alice@x": 500.0, "bob@x": 710.0, "carol@x": 950.0},
        {"alice@x": 520.0, "bob@x": 700.0, "carol@x": 950.0},
        {"alice@x": 520.0, "bob@x": 700.0, "carol@x": 950.0},
    ]
    quotas: list[Optional[dict[str, float]]] = [None, {"g": 5.0}, {"g": 5.0}, {"g": 6.0}, None, None]
    before = None
    for k, (eup, quota) in enumerate(zip(eups, quotas)):
        groups = GroupView(lambda user: "g" if user != "carol@x" else "<none>", quota)
        carried = Cycle(pool, settings, StaticPriorities(eup), NOW + 300 * k, groups=groups, carry=carry)
        rebuilt = Cycle(pool, settings, StaticPriorities(eup), NOW + 300 * k, groups=groups)
        assert _read(carried) == _read(rebuilt), f"cycle {k}"
        if before is not None and quota == quotas[k - 1]:  # the same names: last cycle's copies
            assert all(e.ad is b for e, b in zip(carried.entries, before))
        before = [e.ad for e in carried.entries]
        carried.close()
        rebuilt.close()


def test_carried_entries_without_groups_read_as_the_rebuilt_ones() -> None:
    pool, settings, carry = _pool(), Settings.defaults(), Carried()
    prios = [500.0, 510.0, 500.0, 500.0, 530.0]
    for k, prio in enumerate(prios):
        eup = {"alice@x": prio, "bob@x": 1000.0 - prio, "carol@x": 900.0}
        carried = Cycle(pool, settings, StaticPriorities(eup), NOW + 300 * k, carry=carry)
        rebuilt = Cycle(pool, settings, StaticPriorities(eup), NOW + 300 * k)
        assert _read(carried) == _read(rebuilt), f"cycle {k}"
        carried.close()
        rebuilt.close()


def test_a_slot_ad_listed_twice_gets_a_copy_per_entry() -> None:
    """Two records of one ad object: the first takes the kept copy, the second a copy of
    its own in every cycle (a cycle may write into a copy), as without the carry."""
    ad = ClassAd(_slot("a", "alice@x"))
    pool = Pool(make_slots([(ad, "slots:0"), (ad, "slots:1"), (ClassAd(_slot("b", "bob@x")), "slots:2")]), [])
    settings, carry = Settings.defaults(), Carried()
    for k, prio in enumerate([500.0, 510.0, 500.0, 500.0]):
        eup = {"alice@x": prio, "bob@x": 700.0}
        carried = Cycle(pool, settings, StaticPriorities(eup), NOW + 300 * k, carry=carry)
        rebuilt = Cycle(pool, settings, StaticPriorities(eup), NOW + 300 * k)
        assert _read(carried) == _read(rebuilt), f"cycle {k}"
        first, second = carried.entries[0].ad, carried.entries[1].ad
        assert first is not second
        carried.close()
        rebuilt.close()
