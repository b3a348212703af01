"""Slot ads written by the claims and releases keep what they write and keep as their own
values even when a value equals the result's template (``equal_values=False``, as job
records are written): the ads of one variant written the same way share one variant,
whatever their values happen to equal.  In a pool of many kinds of machines the
template's values (cores, memory, OS, versions ...) coincide with some ads' and not
others', and leaving the equal ones to the template gave each claim a new pattern of
places, with its own variant and rewrite plans (docs/architecture.md, memory of a large
pool).  Values read back are the same either way."""

from __future__ import annotations

import pytest

from classad import ParserType, layout, parseAds
from classad.ad import ClassAd
from classad.layout import SharedAttrs
from matchmaker.config.settings import Settings
from matchmaker.cycle.claims import CLAIM_ATTRS, claim_matches
from matchmaker.cycle.results import CycleResult, Match
from matchmaker.pool.ads import make_slots, pool_from_ads
from matchmaker.pool.partition import give_back, split
from matchmaker.simulate.loop import released

_PSLOT = (
    'Name = "slot1@{host}"\nMachine = "{host}"\nSlotID = 1\nPartitionableSlot = true\nCpus = {cpus}\n'
    'Memory = {memory}\nDisk = 100000\nOpSys = "{opsys}"\nState = "Unclaimed"\nActivity = "Idle"\n'
    "Requirements = true\n"
)
_STATIC = (
    'Name = "slot1@{host}"\nMachine = "{host}"\nCpus = {cpus}\nMemory = {memory}\nOpSys = "{opsys}"\n'
    'State = "Claimed"\nActivity = "Busy"\nRemoteUser = "{user}"\nRemoteOwner = "{user}"\nJobId = "{job}"\n'
    "CurrentRank = 0.0\nRequirements = true\n"
)


def _ad(text: str) -> ClassAd:
    (ad,) = parseAds(text, ParserType.Old)
    ad.compact()
    return ad


def _variant(ad: ClassAd) -> layout.Variant:
    attrs = ad._attrs
    assert type(attrs) is SharedAttrs
    return tuple.__getitem__(attrs, 0)  # type: ignore[no-any-return]


@pytest.fixture(autouse=True)
def _fresh_layouts(monkeypatch) -> None:
    monkeypatch.setattr(layout, "_LAYOUTS", {})


def test_splits_of_one_variant_share_the_child_variant_whatever_the_values() -> None:
    """Three pslots of one layout: node0 (the template: 8 cores, 4096 MB, "LINUX") and
    node1, node2 (16 cores, 8192 MB, "WINDOWS": they keep those, the variant of the
    differing places).  Splitting node0 for 2 cores and 1024 MB makes the child layout
    (its template: 2 cores, 1024 MB, node0's names).  node1 split for 2 cores / 1024 MB
    writes the template's very values into its child; node2 split for 4 cores / 2048 MB
    writes others: the two children hold different values but one variant, and each reads
    back what was written; the two shrunk pslots (14 and 12 cores left) share node1's
    variant too."""
    node0 = _ad(_PSLOT.format(host="node0", cpus=8, memory=4096, opsys="LINUX"))
    node1 = _ad(_PSLOT.format(host="node1", cpus=16, memory=8192, opsys="WINDOWS"))
    node2 = _ad(_PSLOT.format(host="node2", cpus=16, memory=8192, opsys="WINDOWS"))
    assert _variant(node1) is _variant(node2)
    split(node0, {"Cpus": 2, "Memory": 1024}, "slot1_1@node0")
    shrunk1, child1 = split(node1, {"Cpus": 2, "Memory": 1024}, "slot1_1@node1")
    shrunk2, child2 = split(node2, {"Cpus": 4, "Memory": 2048}, "slot1_1@node2")
    assert _variant(child1) is _variant(child2)
    assert (child1["Cpus"], child1["Memory"], child1["OpSys"]) == (2, 1024, "WINDOWS")
    assert (child2["Cpus"], child2["Memory"], child2["Name"]) == (4, 2048, "slot1_1@node2")
    assert child1["DynamicSlot"] is True and "PartitionableSlot" not in child1
    assert _variant(shrunk1) is _variant(shrunk2) is _variant(node1)
    assert (shrunk1["Cpus"], shrunk1["Memory"], shrunk2["Cpus"], shrunk2["Memory"]) == (14, 7168, 12, 6144)


def test_resources_given_back_keep_the_pslot_variant() -> None:
    """node1's pslot (the variant keeping its 16 cores, 8192 MB) split for 8 cores and
    4096 MB, then given the dynamic slot back: 16 cores and 8192 MB again, node0's
    template values are 8 and 4096 -- the 8 cores left in between equal them and still
    keep node1's variant; so does the pslot given back."""
    _ad(_PSLOT.format(host="node0", cpus=8, memory=4096, opsys="LINUX"))
    node1 = _ad(_PSLOT.format(host="node1", cpus=16, memory=8192, opsys="WINDOWS"))
    shrunk, child = split(node1, {"Cpus": 8, "Memory": 4096}, "slot1_1@node1")
    assert (shrunk["Cpus"], shrunk["Memory"]) == (8, 4096)
    assert _variant(shrunk) is _variant(node1)
    back = give_back(shrunk, child, ("Cpus", "Memory"))
    assert (back["Cpus"], back["Memory"], back["Disk"]) == (16, 8192, 100000)
    assert _variant(back) is _variant(node1)


def test_released_static_slots_share_a_variant_whatever_the_values() -> None:
    """Two claimed static slots of one variant (node1, node2: both keep their own cores,
    memory and OS, unlike the template node0) released at the same time: both become
    Unclaimed/Idle with the claim's attributes gone and the state stamped, in one variant
    -- though node2 has node0's 8 cores and node1 has not."""
    settings = Settings.defaults()
    template = _STATIC.format(host="node0", cpus=8, memory=4096, opsys="LINUX", user="a@x", job="1.0")
    ads = [
        _ad(template),
        _ad(_STATIC.format(host="node1", cpus=16, memory=8192, opsys="WINDOWS", user="b@x", job="2.0")),
        _ad(_STATIC.format(host="node2", cpus=16, memory=8192, opsys="WINDOWS", user="c@x", job="3.0")),
    ]
    ads[2] = ads[2].rewritten(("Cpus",), [8], equal_values=False)  # the template's value, kept as its own
    slots = make_slots([(ad, f"slots:{k}") for k, ad in enumerate(ads)])
    assert _variant(slots[1].ad) is _variant(slots[2].ad)
    released(slots[0], settings, 1000.0)
    one, two = released(slots[1], settings, 1000.0), released(slots[2], settings, 1000.0)
    assert _variant(one.ad) is _variant(two.ad)
    assert (two.ad["State"], two.ad["Activity"], two.ad["Cpus"]) == ("Unclaimed", "Idle", 8)
    assert not any(name in two.ad for name in CLAIM_ATTRS)
    assert two.ad["EnteredCurrentState"] == 1000 and one.state == "unclaimed"


def test_claimed_static_slots_share_a_variant_whatever_the_values() -> None:
    """Three unclaimed static slots, node1 and node2 of one variant (16 cores, 8192 MB,
    "WINDOWS" of their own), claimed at once by jobs 1.0 (alice, on node0: the first
    claimed ad, the claimed layout's template), 1.1 (alice, on node1: the template's
    RemoteUser, JobId aside) and 2.0 (bob, on node2): the claimed node1 and node2 hold
    different users and one variant; each reads back its claim."""
    text = "".join(
        f'Name = "slot1@{host}"\nMachine = "{host}"\nCpus = {cpus}\nMemory = {memory}\nOpSys = "{opsys}"\n'
        'State = "Unclaimed"\nActivity = "Idle"\nRequirements = true\n\n'
        for host, cpus, memory, opsys in (("node0", 8, 4096, "LINUX"), ("node1", 16, 8192, "WINDOWS"))
        + (("node2", 16, 8192, "WINDOWS"),)
    )
    jobs = "".join(
        f'ClusterId = {c}\nProcId = {p}\nOwner = "{o}"\nUser = "{o}@x"\nJobStatus = 1\nRequirements = true\n\n'
        for c, p, o in ((1, 0, "alice"), (1, 1, "alice"), (2, 0, "bob"))
    )
    pool = pool_from_ads(list(parseAds(text, ParserType.Old)), list(parseAds(jobs, ParserType.Old)))
    assert _variant(pool.slots[1].ad) is _variant(pool.slots[2].ad)
    matches = [
        Match(job, user, f"slot1@{host}", "no-preemption", None)
        for job, user, host in (("1.0", "alice@x", "node0"), ("1.1", "alice@x", "node1"), ("2.0", "bob@x", "node2"))
    ]
    out = claim_matches(pool, CycleResult(matches, [], [], [], {}), Settings.defaults(), 1000.0)
    slots = {s.name: s.ad for s in out.pool.slots}
    one, two = slots["slot1@node1"], slots["slot1@node2"]
    assert _variant(one) is _variant(two)
    assert (one["RemoteUser"], one["JobId"], one["State"]) == ("alice@x", "1.1", "Claimed")
    assert (two["RemoteUser"], two["JobId"], two["EnteredCurrentState"]) == ("bob@x", "2.0", 1000)
