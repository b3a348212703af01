"""The slot references kept between cycles (``SlotReferences``) follow what each ad holds.

Ads made from one another share their expression nodes (a claim copies the slot ad and
sets a few literals), and the kept references are shared by ads that hold the same
things under the names the walk looked up.  Expected names by hand: ``Requirements =
TARGET.RequestCpus <= Cpus && Foo`` reads ``RequestCpus`` of the job, and ``Foo`` too
when the slot lacks it; when the slot's ``Foo`` is ``TARGET.Bar``, ``Bar`` instead; when
it is ``Baz``, nothing more if the slot has ``Baz``, else the job's ``Baz``.
"""

from __future__ import annotations

from classad.ad import ClassAd
from matchmaker.pool.autocluster import SlotReferences, external_references


def test_ads_sharing_nodes_get_each_their_own_references() -> None:
    base = ClassAd("[Requirements = TARGET.RequestCpus <= Cpus && Foo; Cpus = 4; Foo = true; Rank = 0]").compact()
    claimed = ClassAd(base)
    claimed["State"] = "Claimed"  # a literal more: reads nothing
    lacking = ClassAd(base)
    del lacking["Foo"]
    pointing = ClassAd(base)
    pointing["Foo"] = ClassAd("[x = TARGET.Bar]").lookup("x")
    # Foo read through a name of the slot: the walk looks up one name more (Baz), and
    # when the slot lacks Baz, the job's Baz is read.
    through = ClassAd(base)
    through["Foo"] = ClassAd("[x = Baz]").lookup("x")
    through_lacking = ClassAd(through)
    through["Baz"] = True
    memo = SlotReferences()
    for _ in range(2):  # the second round is served from what the first kept
        assert memo.union([base], []) == {"requestcpus"}
        assert memo.union([claimed], []) == {"requestcpus"}
        assert memo.union([lacking], []) == {"requestcpus", "foo"}
        assert memo.union([pointing], []) == {"requestcpus", "bar"}
        assert memo.union([through], []) == {"requestcpus"}
        assert memo.union([through_lacking], []) == {"requestcpus", "baz"}
        assert memo.union([base, lacking, pointing], []) == {"requestcpus", "foo", "bar"}
    for ad in (base, claimed, lacking, pointing, through, through_lacking):
        assert memo.union([ad], []) == external_references(ad, ("Requirements", "Rank"))


def test_references_one_ad_at_a_time_and_significant_attributes_from_them() -> None:
    """``SlotReferences.of`` gives each ad the names ``union`` finds (by hand, as above),
    and ``significant_attributes`` takes them from a caller that keeps them per ad: the
    same set as when it walks the ads, here with PREEMPTION_REQUIREMENTS reading the job's
    ``JobPrio`` besides, and ``RemoteUserPrio``, which these slot ads lack (a name the
    slot lacks is an external reference, whatever its scope)."""
    from classad.parser import parse_expr
    from matchmaker.pool.autocluster import significant_attributes

    base = ClassAd("[Requirements = TARGET.RequestCpus <= Cpus && Foo; Cpus = 4; Foo = true; Rank = 0]").compact()
    lacking = ClassAd(base)
    del lacking["Foo"]
    pointing = ClassAd(base)
    pointing["Foo"] = ClassAd("[x = TARGET.Bar]").lookup("x")
    exprs = [parse_expr("MY.RemoteUserPrio > TARGET.JobPrio")]
    refs = SlotReferences()
    assert [refs.of(ad, exprs) for ad in (base, lacking, pointing)] == [
        {"requestcpus", "jobprio", "remoteuserprio"},
        {"requestcpus", "foo", "jobprio", "remoteuserprio"},
        {"requestcpus", "bar", "jobprio", "remoteuserprio"},
    ]
    ads = [base, lacking, pointing, base]
    walked = significant_attributes(ads, exprs, remove_regex=None)
    kept = significant_attributes([], exprs, remove_regex=None, read=lambda e: [refs.of(ad, e) for ad in ads])
    # Names of what the negotiator adds (RemoteUser*, RemoteGroup*, Submitter*) are never significant.
    assert walked == kept == {"requestcpus", "foo", "bar", "jobprio"}


def test_compacted_ads_of_one_layout_get_each_their_own_references() -> None:
    """Compacted ads of one attribute list share a layout and keep their differing values
    themselves; what one of them reads is kept by the values it keeps at the places the
    walk looked up (a literal, whichever, reads nothing; an expression by identity).  By
    hand, as above: ``Foo`` true or false reads nothing more; ``Foo = TARGET.Bar`` reads
    ``Bar``; ``Foo = Baz`` reads nothing more while ``Baz`` is a literal, and ``Qux`` when
    ``Baz = TARGET.Qux``.  Every ad is asked twice, in two orders (the second time served
    from what the first kept), and always gets what a walk of it alone finds."""
    texts = [
        "Foo = true; Baz = 1",
        "Foo = TARGET.Bar; Baz = 1",
        "Foo = false; Baz = 2",
        "Foo = Baz; Baz = true",
        "Foo = Baz; Baz = TARGET.Qux",
        "Foo = true; Baz = TARGET.Qux",
    ]
    expected = [
        {"requestcpus"},
        {"requestcpus", "bar"},
        {"requestcpus"},
        {"requestcpus"},
        {"requestcpus", "qux"},
        {"requestcpus"},
    ]
    from classad.parser import parse_expr

    requirements = parse_expr("TARGET.RequestCpus <= Cpus && Foo")  # one node, as a claim's copies share it
    ads = []
    for k, text in enumerate(texts):
        given = ClassAd(f"[{text}]")
        ad = ClassAd()
        ad.set_node("Requirements", requirements)
        ad["Cpus"] = 2 + k
        ad.set_node("Foo", given.get_node("Foo"))
        ad.set_node("Baz", given.get_node("Baz"))
        ad["Rank"] = 0
        ads.append(ad.compact())
    assert len({id(ad._attrs.layout) for ad in ads}) == 1  # one layout, several variants
    refs = SlotReferences()
    for order in (range(len(ads)), reversed(range(len(ads))), range(len(ads))):
        for k in order:
            assert refs.of(ads[k], []) == expected[k]
            assert refs.of(ads[k], []) == external_references(ads[k], ("Requirements", "Rank"))
    # The same asked a list at a time (SlotReferences.each), with what is kept shared
    # between ads of one variant: the first list walks, the later ones find what it kept.
    listed = SlotReferences()
    for order in (list(range(len(ads))), list(reversed(range(len(ads)))), [0, 2, 4, 1, 3, 5, 5, 0]):
        got = listed.each([ads[k] for k in order], [])
        assert got == [expected[k] for k in order]
