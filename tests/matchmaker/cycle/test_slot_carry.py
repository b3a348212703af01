"""What a simulation keeps of each slot ad between cycles (matchmaker.cycle.slot_carry).

Expected values by hand: which copy each cycle gets (last cycle's, rewritten in place, or
a new one), which rows of the slot table the rewrites change, and which evaluations are
made again.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

from classad import ClassAd, ast
from matchmaker.cycle.ephemeral import NegotiationAd, RemoteEntries
from matchmaker.cycle.slot_carry import SlotCarry
from matchmaker.cycle.table_carry import TableLine
from matchmaker.pool.ads import make_slots

SETTINGS = object()  # the carry only asks whether the settings are the same object


def _entries(prio: float, user: str = "alice@x") -> RemoteEntries:
    call = ast.call("ResourcesInUseByUser", (ast.Literal(user),))
    return (
        ("remoteuserprio", ("RemoteUserPrio", ast.Literal(prio))),
        ("remoteuserresourcesinuse", ("RemoteUserResourcesInUse", call)),
    )


def _maker(made: list):
    def make(slot, entries=None):
        copy = NegotiationAd(slot.ad)
        copy.set_entries(entries or ())
        made.append(copy)
        return copy

    return make


def _cycle(carry: SlotCarry, slots: list, entries: list, made: list) -> list:
    carry.begin(SETTINGS)
    preps = [carry.prep(s.ad) for s in slots]
    carry.read()
    copies = [
        carry.annotated(s, p, e, lambda slot, e=e: _maker(made)(slot, e)) for s, p, e in zip(slots, preps, entries)
    ]
    carry.settle()
    return copies


def _slots(*texts: str) -> list:
    return make_slots([(ClassAd(t), f"slots:{i}") for i, t in enumerate(texts)])


def test_a_copy_is_kept_and_its_changed_entries_are_rewritten_and_told() -> None:
    """Cycle 1: a claimed slot a (priority 500.0) and an unclaimed slot b: two new copies.
    Cycle 2: a's user has priority 510.0, b is the same: both copies are last cycle's;
    a's RemoteUserPrio is 510.0 now and the table re-reads that column on row 0 only
    (the usage call is the same node); b's row is unchanged.  Cycle 3: a's priority is
    510.0 again in a new node: nothing to rewrite."""
    line = TableLine()
    carry = SlotCarry(lambda _ad: True, line)
    a, b = _slots('[Name = "a"; RemoteUser = "alice@x"]', '[Name = "b"]')
    made: list = []
    first = _cycle(carry, [a, b], [_entries(500.0), ()], made)
    assert len(made) == 2
    line.table_of(first, [a.ad, b.ad]).column("remoteuserprio")
    second = _cycle(carry, [a, b], [_entries(510.0), ()], made)
    assert len(made) == 2 and second[0] is first[0] and second[1] is first[1]
    assert second[0]["RemoteUserPrio"] == 510.0
    table = line.table_of(second, [a.ad, b.ad])
    step = table.history.steps[-1]
    assert step.source.tolist() == [0, 1] and not step.dirty.any()
    assert {k: v.tolist() for k, v in step.changed.items()} == {"remoteuserprio": [True, False]}
    assert table.column("remoteuserprio").values.to_values()[0] == 510.0
    third = _cycle(carry, [a, b], [_entries(510.0), ()], made)
    assert third[0] is first[0]
    assert line.table_of(third, [a.ad, b.ad]).history.steps[-1].changed == {}


def test_other_names_a_written_copy_and_a_second_slot_of_one_ad_get_new_copies() -> None:
    """a's entries gain a name (another list): a new copy.  b's copy was written into by
    the cycle (a consumption policy): a new copy next cycle, and its row is read again.  A
    pool listing the ad of c twice: the first keeps the copy, the second gets its own."""
    line = TableLine()
    carry = SlotCarry(lambda _ad: True, line)
    a, b, c = _slots('[Name = "a"; RemoteUser = "alice@x"]', '[Name = "b"]', '[Name = "c"]')
    made: list = []
    first = _cycle(carry, [a, b, c], [_entries(1.0), (), ()], made)
    line.table_of(first, [a.ad, b.ad, c.ad]).column("remotegroup")  # a column is followed once read
    carry.consumed(first[1], b.ad)
    more = _entries(1.0) + (("remotegroup", ("RemoteGroup", ast.Literal("g"))),)
    second = _cycle(carry, [a, b, c, c], [more, (), (), ()], made)
    assert second[0] is not first[0] and second[1] is not first[1]
    assert second[2] is first[2] and second[3] is not first[2]
    assert len(made) == 3 + 3
    step = line.table_of(second, [a.ad, b.ad, c.ad, c.ad]).history.steps[-1]
    assert step.source.tolist() == [0, -1, 2, -1]
    assert step.dirty.tolist() == [False, True, False, True]
    assert {k: v.tolist() for k, v in step.changed.items()} == {"remotegroup": [True, False, False, False]}


def test_evaluations_are_kept_for_steady_ads_only() -> None:
    """An evaluation of a steady ad is made once; one of an unsteady ad in every call."""
    steady = {"s": True, "u": False}
    carry = SlotCarry(lambda ad: steady[ad["Name"]], TableLine())
    s, u = _slots('[Name = "s"]', '[Name = "u"]')
    calls: list = []

    def compute(ad: ClassAd) -> int:
        calls.append(ad["Name"])
        return len(calls)

    for _ in range(3):
        carry.begin(SETTINGS)
        for slot in (s, u):
            carry.prep(slot.ad)
        carry.read()
        assert carry.values([s.ad, u.ad], "x", compute)[0] == 1
    assert calls == ["s", "u", "u", "u"]
    carry.begin(object())  # other settings: nothing is kept
    carry.prep(s.ad)
    assert carry.values([s.ad], "x", compute) == [5]


def test_kept_values_come_back_and_the_others_are_computed_in_the_order_of_the_ads() -> None:
    """Cycle 1: a, u, b (u unsteady): computed 1, 2, 3 in that order.  Cycle 2: c (new), a,
    u, b, a: c is computed (4), a and b come back (1, 3), u is computed again after c (5).
    Cycle 3: only a: 1.  Cycle 4: a, and b again after a cycle away: b is computed (6)."""
    steady = {"a": True, "b": True, "c": True, "u": False}
    carry = SlotCarry(lambda ad: steady[ad["Name"]], TableLine())
    a, u, b, c = _slots('[Name = "a"]', '[Name = "u"]', '[Name = "b"]', '[Name = "c"]')
    calls: list = []

    def compute(ad: ClassAd) -> int:
        calls.append(ad["Name"])
        return len(calls)

    def cycle(slots: list) -> list:
        carry.begin(SETTINGS)
        for slot in slots:
            carry.prep(slot.ad)
        carry.read()
        return carry.values([s.ad for s in slots], "x", compute)

    assert cycle([a, u, b]) == [1, 2, 3]
    assert cycle([c, a, u, b, a]) == [4, 1, 5, 3, 1]
    assert calls == ["a", "u", "b", "c", "u"]
    assert cycle([a]) == [1]
    assert cycle([a, b]) == [1, 6]
    assert calls[-1] == "b"


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_kept_values_differential(data: Any) -> None:
    """Differential against a plain model of what may be kept: over cycles that read random
    lists of six ads (steady or not, repeated, absent for a cycle), each asking one or
    two kinds of values of random lists of the cycle's ads, a value comes back exactly
    when the ad is steady, it was computed for that kind while the ad stayed in the pool
    (read in every cycle since), and each other value is computed in the order asked;
    asked by the ads (``values``) or by their preps (``each``), which share what is kept."""
    names = [f"a{k}" for k in range(6)]
    steady = {n: data.draw(st.booleans()) for n in names}
    carry = SlotCarry(lambda ad: steady[ad["Name"]], TableLine())
    ads = {n: ClassAd(f'[Name = "{n}"]') for n in names}
    calls: list = []
    kept: dict[tuple[str, str], int] = {}  # the model: (ad, kind) -> its value while kept

    def compute(ad: ClassAd) -> int:
        calls.append(ad["Name"])
        return len(calls)

    for _ in range(data.draw(st.integers(1, 5))):
        read = data.draw(st.lists(st.sampled_from(names), max_size=8))
        kept = {k: v for k, v in kept.items() if k[0] in read}  # ads that left are forgotten
        carry.begin(SETTINGS)
        for n in read:
            carry.prep(ads[n])
        carry.read()
        if not read:
            continue
        for kind in data.draw(st.lists(st.sampled_from(["x", "y"]), min_size=1, max_size=2)):
            asked = data.draw(st.lists(st.sampled_from(read), max_size=8))
            expected, computed = [], []
            for n in asked:
                if (n, kind) not in kept:
                    computed.append(n)
                    value = len(calls) + len(computed)
                    if not steady[n]:
                        expected.append(value)
                        continue
                    kept[(n, kind)] = value
                expected.append(kept[(n, kind)])
            before = len(calls)
            if data.draw(st.booleans()):
                assert carry.values([ads[n] for n in asked], kind, compute) == expected
            else:  # the same through the ads' preps
                assert carry.each([carry.find(ads[n]) for n in asked], kind, compute) == expected  # type: ignore[misc]
            assert calls[before:] == computed


def test_pairs_take_last_cycles_pair_of_the_same_steady_record_that_weighs_itself() -> None:
    """Cycle 1: records a, u (unsteady), w (weighs another record), each weighed once.
    Cycle 2: the same records and a new record a2 of a's ad: a's pair is last cycle's (not
    weighed again); u and w are weighed again, and a2, in their order; a2 shares a's prep.
    Cycle 3 under other settings: every record is weighed again."""
    steady = {"a": True, "u": False, "w": True}
    carry = SlotCarry(lambda ad: steady[ad["Name"]], TableLine())
    a, u, w = _slots('[Name = "a"]', '[Name = "u"]', '[Name = "w"]')
    (a2,) = make_slots([(a.ad, "slots:9")])
    heavier = make_slots([(w.ad, "slots:8")])[0]
    calls: list = []

    def weighed(s: Any, p: Any) -> Any:
        calls.append(s)
        return heavier if s is w else s

    def cycle(records: list, settings: object = SETTINGS) -> list:
        carry.begin(settings)
        out = carry.pairs(records, weighed)
        carry.read()
        return out

    first = cycle([a, u, w])
    assert calls == [a, u, w] and [x[0] for x in first] == [a, u, heavier]
    assert [x[1] for x in first] == [carry.find(s.ad) for s in (a, u, w)]
    second = cycle([a, u, w, a2])
    assert second[0] is first[0] and calls[3:] == [u, w, a2]
    assert second[3][0] is a2 and second[3][1] is first[0][1]
    assert [x[1] for x in second[:3]] == [x[1] for x in first]
    cycle([a, u, w], object())
    assert calls[6:] == [a, u, w]


def test_what_is_kept_by_place_is_asked_of_new_pairs_only() -> None:
    """Cycle 1: a and u (unsteady): both asked, a's answer 1, u's 2.  Cycle 2: u, a and a
    new record of a's ad: a's pair is taken again and gives 1 without being asked; u and
    the new record are asked, in order (3, 4).  Cycle 3, a alone: 1 again, nothing asked."""
    steady = {"a": True, "u": False}
    carry = SlotCarry(lambda ad: steady[ad["Name"]], TableLine())
    a, u = _slots('[Name = "a"]', '[Name = "u"]')
    (a2,) = make_slots([(a.ad, "slots:9")])
    asked: list = []

    def get(p: Any) -> int:
        asked.append(p.ad["Name"])
        return len(asked)

    def cycle(records: list) -> list:
        carry.begin(SETTINGS)
        pairs = carry.pairs(records, lambda s, p: s)
        carry.read()
        return carry.placed([p for _, p in pairs], "k", get)

    assert cycle([a, u]) == [1, 2]
    assert cycle([u, a, a2]) == [3, 1, 4] and asked == ["a", "u", "u", "a"]
    assert cycle([a]) == [1] and len(asked) == 4


def test_what_is_kept_by_place_is_asked_of_new_pairs_in_one_list() -> None:
    """As above, by lists: cycle 1 asks [a, u] (answers 1, 2); cycle 2 asks [u, a2] once
    (3, 4) and a gives 1; cycle 3, a alone, asks nothing."""
    steady = {"a": True, "u": False}
    carry = SlotCarry(lambda ad: steady[ad["Name"]], TableLine())
    a, u = _slots('[Name = "a"]', '[Name = "u"]')
    (a2,) = make_slots([(a.ad, "slots:9")])
    asked: list = []

    def get_each(preps: list) -> list:
        asked.append([p.ad["Name"] for p in preps])
        return [sum(map(len, asked)) - len(preps) + k for k in range(1, len(preps) + 1)]

    def cycle(records: list) -> list:
        carry.begin(SETTINGS)
        pairs = carry.pairs(records, lambda s, p: s)
        carry.read()
        return carry.placed_each([p for _, p in pairs], "k", get_each)

    assert cycle([a, u]) == [1, 2]
    assert cycle([u, a, a2]) == [3, 1, 4] and asked == [["a", "u"], ["u", "a"]]
    assert cycle([a]) == [1] and len(asked) == 2


def test_what_is_put_by_place_comes_back_for_pairs_taken_again_only() -> None:
    """Cycle 1: a and u (unsteady): nothing kept yet; "ra" and "ru" put.  Cycle 2: u, a and
    a new record a2 of a's ad: only a's pair is taken again and gets "ra"; "x", "ra2", "y"
    put.  Cycle 3: a and a2 (the very records of cycle 2): "ra2" and "y".  Cycle 4 puts
    nothing: what it found stays, for cycle 5; cycle 6 under other settings gets nothing."""
    steady = {"a": True, "u": False}
    carry = SlotCarry(lambda ad: steady[ad["Name"]], TableLine())
    a, u = _slots('[Name = "a"]', '[Name = "u"]')
    (a2,) = make_slots([(a.ad, "slots:9")])

    def cycle(records: list, put: Any = None, settings: object = SETTINGS) -> list:
        carry.begin(settings)
        pairs = carry.pairs(records, lambda s, p: s)
        carry.read()
        found = carry.again(pairs, "rows")
        if put is not None:
            carry.put("rows", put)
        return found

    assert cycle([a, u], ["ra", "ru"]) == [None, None]
    assert cycle([u, a, a2], ["x", "ra2", "y"]) == [None, "ra", None]
    assert cycle([a, a2], ["ra3", "y3"]) == ["ra2", "y"]
    assert cycle([a, a2]) == ["ra3", "y3"]
    assert cycle([a, a2], ["ra5", "y5"]) == ["ra3", "y3"]
    assert cycle([a, a2], ["ra6", "y6"], object()) == [None, None]


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_pairs_differential(data: Any) -> None:
    """Differential against taking each record's prep and weighing it anew: over cycles of
    random lists of records (four ads, steady or not; records made again or kept; listed
    twice or absent for a cycle), each pair is the record weighed and its ad's prep, and
    weighed is called, in order, for every record but those of last cycle (the very
    object) whose ad is steady and that weighed as themselves.  What is kept of each prep
    by place (``placed``) is what the prep keeps, asked in order of the other pairs only."""
    names = [f"a{k}" for k in range(4)]
    steady = {n: data.draw(st.booleans()) for n in names}
    itself = {n: data.draw(st.booleans()) for n in names}  # whether the record weighs as itself
    carry = SlotCarry(lambda ad: steady[ad["Name"]], TableLine())
    ads = {n: ClassAd(f'[Name = "{n}"]') for n in names}
    records = {n: make_slots([(ads[n], n)])[0] for n in names}
    calls: list = []
    shared = {flag: frozenset((f"x{flag}",)) for flag in (False, True)}  # two objects many preps share
    last_chosen: set[int] = set()  # the records chosen last cycle (placed_among)

    def weighed(s: Any, p: Any) -> Any:
        assert p is carry.find(s.ad)
        calls.append(s)
        return s if itself[s.ad["Name"]] else make_slots([(s.ad, "other")])[0]

    last: dict[int, Any] = {}  # the model: id(record) -> its pair last cycle
    for _ in range(data.draw(st.integers(1, 5))):
        for n in data.draw(st.lists(st.sampled_from(names), max_size=2)):
            records[n] = make_slots([(ads[n], n)])[0]  # a record made again
        listed = [records[n] for n in data.draw(st.lists(st.sampled_from(names), max_size=6))]
        carry.begin(SETTINGS)
        before = len(calls)
        pairs = carry.pairs(listed, weighed)
        carry.read()
        expected_calls = []
        for s, pair in zip(listed, pairs):
            assert pair[1] is carry.find(s.ad)
            hit = last.get(id(s))
            if hit is not None and hit[0][0] is s and steady[s.ad["Name"]]:
                assert pair is hit[0]
            else:
                expected_calls.append(s)
                assert (pair[0] is s) == itself[s.ad["Name"]]
        assert calls[before:] == expected_calls
        # What is kept of each prep, by its place: asked only of the pairs not taken again.
        asked: list = []

        def get(p: Any, asked: list = asked) -> Any:
            asked.append(p)
            return p.evaluated("x", lambda ad: (ad["Name"], len(asked)))

        values = carry.placed([pair[1] for pair in pairs], "x", get)
        taken = [
            hit is not None and hit[0][0] is s and steady[s.ad["Name"]]
            for s, hit in zip(listed, map(last.get, map(id, listed)))
        ]
        assert asked == [pair[1] for pair, again in zip(pairs, taken) if not again]
        for (_, prep), value in zip(pairs, values):
            assert value[0] == prep.ad["Name"]
            if prep.steady:
                assert value is prep.values["x"]
        # The same by lists: the pairs not taken again asked once, together, in order.
        lists: list = []

        def get_each(preps: list, lists: list = lists) -> list:
            lists.append(preps)
            return [p.evaluated("y", lambda ad: (ad["Name"], len(lists))) for p in preps]

        values = carry.placed_each([pair[1] for pair in pairs], "y", get_each)
        assert lists == ([asked] if asked else [])
        for (_, prep), value in zip(pairs, values):
            assert value[0] == prep.ad["Name"]
            if prep.steady:
                assert value is prep.values["y"]
        # The few truthy values by their places, and the distinct values: what the same
        # values by place give, the others asked in the same order and lists.
        sparse_lists: list = []

        def get_sparse(preps: list, lists: list = sparse_lists) -> list:
            lists.append(preps)
            return [p.evaluated("z", lambda ad: (ad["Name"], len(lists)) if ad["Name"] < "a2" else ()) for p in preps]

        places, held = carry.placed_sparse([pair[1] for pair in pairs], "z", get_sparse)
        assert sparse_lists == ([asked] if asked else [])
        expected = [
            (i, p.values["z"] if p.steady else (p.ad["Name"], 1) if p.ad["Name"] < "a2" else ())
            for i, (_, p) in enumerate(pairs)
        ]
        assert list(zip(places, held)) == [(i, v) for i, v in expected if v]
        distinct_lists: list = []

        def get_distinct(preps: list, lists: list = distinct_lists) -> list:
            lists.append(preps)
            return [p.evaluated("w", lambda ad: shared[ad["Name"] < "a2"]) for p in preps]

        found = carry.placed_distinct([pair[1] for pair in pairs], "w", get_distinct)
        assert distinct_lists == ([asked] if asked else [])
        assert sorted(map(id, found)) == sorted({id(shared[p.ad["Name"] < "a2"]) for _, p in pairs})
        # Some places chosen: the values not None of those, those taken again and chosen
        # last cycle too found by place, the others asked in one list, in order.
        chosen = [i for i in range(len(pairs)) if data.draw(st.booleans())]
        among_lists: list = []

        def get_among(preps: list, lists: list = among_lists) -> list:
            lists.append(preps)
            return [p.evaluated("v", lambda ad: (ad["Name"], len(lists)) if ad["Name"] < "a2" else None) for p in preps]

        chosen_preps = [pairs[i][1] for i in chosen]
        among = carry.placed_among(chosen, chosen_preps, "v", get_among)
        distinct = len({id(s.ad) for s in listed}) == len(listed)
        if not distinct:
            assert among is None
        else:
            again = [taken[i] and id(listed[i]) in last_chosen for i in chosen]  # taken again, chosen last cycle too
            assert among_lists == ([[p for p, a in zip(chosen_preps, again) if not a]] if not all(again) else [])
            expected_among = [
                (j, p.values["v"] if p.steady else (p.ad["Name"], 1))
                for j, p in enumerate(chosen_preps)
                if p.ad["Name"] < "a2"
            ]
            assert among == expected_among
        last_chosen = {id(listed[i]) for i in chosen} if distinct else set()
        last = {id(s): (pair, s) for s, pair in zip(listed, pairs)}


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_followed_list_pairs_as_the_records_identities_do(data: Any) -> None:
    """Differential of a carry told each change of its list of records (follow: places
    renewed, the list grown, places removed, the list made otherwise) against one that
    finds last cycle's records by their identities, over cycles of random changes as the
    loop makes them (records made again at some places, new ones last, some places gone).
    Both weigh the same records in the same order, pair each with its ad's prep and keep
    the same values by place; the one told never searches the identities but after a
    list made otherwise."""
    names = [f"a{k}" for k in range(5)]
    steady = {n: data.draw(st.booleans()) for n in names}
    itself = {n: data.draw(st.booleans()) for n in names}
    ads = {n: ClassAd(f'[Name = "{n}"]') for n in names}
    heavier: dict[int, Any] = {}  # the record each record weighs as, when not itself

    def record() -> Any:
        n = data.draw(st.sampled_from(names))
        return make_slots([(ads[n] if data.draw(st.booleans()) else ClassAd(f'[Name = "{n}"]'), n)])[0]

    def weigher(calls: list) -> Any:
        def weighed(s: Any, p: Any) -> Any:
            calls.append(s)
            if itself[s.ad["Name"]]:
                return s
            return heavier.setdefault(id(s), make_slots([(s.ad, "other")])[0])

        return weighed

    told = SlotCarry(lambda ad: steady[ad["Name"]], TableLine())
    told.follow()
    plain = SlotCarry(lambda ad: steady[ad["Name"]], TableLine())
    searched: list = []
    search = told._places
    told._places = lambda records: searched.append(1) or search(records)  # type: ignore[method-assign]
    slots = [record() for _ in range(data.draw(st.integers(0, 12)))]
    kept: list = []  # every record made (held: ids stay theirs)
    lost, last = True, []
    for _ in range(data.draw(st.integers(1, 6))):
        calls: dict[str, list] = {"told": [], "plain": []}
        out = {}
        for key, carry in (("told", told), ("plain", plain)):
            carry.begin(SETTINGS)
            out[key] = carry.pairs(list(slots), weigher(calls[key]))
            carry.read()
        assert calls["told"] == calls["plain"]
        assert [pair[0] for pair in out["told"]] == [pair[0] for pair in out["plain"]]
        assert all(pair[1] is told.find(s.ad) for s, pair in zip(slots, out["told"]))
        before = {id(s) for s in last}
        assert calls["told"] == [
            s for s in slots if id(s) not in before or not steady[s.ad["Name"]] or not itself[s.ad["Name"]]
        ]
        asked = {key: [] for key in out}
        for key, carry in (("told", told), ("plain", plain)):
            values = carry.placed([pair[1] for pair in out[key]], "x", lambda p, a=asked[key]: a.append(p.ad) or p.ad)
            assert [v is pair[1].ad for v, pair in zip(values, out[key])] == [True] * len(slots)
        assert asked["told"] == asked["plain"]
        assert searched == ([1] if lost and last else [])
        searched.clear()
        kept += slots
        last, lost = list(slots), False
        # The claims: records made again at some places, new ones last.
        if data.draw(st.booleans()):
            n = len(slots)
            places = data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=3, unique=True)) if n else []
            for k in places:
                slots[k] = record()
            slots += [record() for _ in range(data.draw(st.integers(0, 3)))]
            told.grown(len(slots))
            told.renewed(sorted(places) + (list(range(n, len(slots))) if data.draw(st.booleans()) else []))
        # The releases: records made again at some places, then some places gone.
        if data.draw(st.booleans()):
            n = len(slots)
            places = data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=3, unique=True)) if n else []
            for k in places:
                slots[k] = record()
            told.renewed(places)
            gone = sorted(data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=3, unique=True))) if n else []
            slots = [s for k, s in enumerate(slots) if k not in set(gone)]
            told.removed(gone)
        if data.draw(st.integers(0, 5)) == 0:  # the list made otherwise
            slots = [record() if data.draw(st.booleans()) else s for s in data.draw(st.permutations(slots))]
            told.lost()
            lost = True


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_ads_that_leave_are_forgotten_differential(data: Any) -> None:
    """Differential against a plain model of the ads a run holds: over cycles of random
    lists of records (four slots, steady or not; a slot's ad made anew, its record made
    again or kept; listed twice or absent for a cycle), after the cycle has read its
    records (``pairs``) exactly its ads have a prep (``find``), and a value kept of an ad
    (``values``) comes back exactly when the ad is steady and was read in every cycle
    since the value was computed: an ad that left the pool is forgotten."""
    names = [f"a{k}" for k in range(4)]
    steady = {n: data.draw(st.booleans()) for n in names}
    carry = SlotCarry(lambda ad: steady[ad["Name"]], TableLine())
    ads = {n: ClassAd(f'[Name = "{n}"]') for n in names}
    records = {n: make_slots([(ads[n], n)])[0] for n in names}
    seen: list = list(ads.values())  # every ad so far (held: their ids stay theirs)
    kept: dict[int, int] = {}  # the model: id(ad) -> its value while kept
    calls: list = []

    def compute(ad: ClassAd) -> int:
        calls.append(ad)
        return len(calls)

    for _ in range(data.draw(st.integers(1, 6))):
        for n in data.draw(st.lists(st.sampled_from(names), max_size=2)):
            if data.draw(st.booleans()):
                ads[n] = ClassAd(f'[Name = "{n}"]')  # a new ad (a claim rewrote the slot's)
                seen.append(ads[n])
            records[n] = make_slots([(ads[n], n)])[0]
        listed = [records[n] for n in data.draw(st.lists(st.sampled_from(names), max_size=6))]
        carry.begin(SETTINGS)
        carry.pairs(listed, lambda s, p: s)
        carry.read()
        present = {id(s.ad) for s in listed}
        assert [carry.find(ad) is not None for ad in seen] == [id(ad) in present for ad in seen]
        kept = {k: v for k, v in kept.items() if k in present}
        asked = [s.ad for s in listed]
        expected, computed = [], []
        for ad in asked:
            if id(ad) in kept:
                expected.append(kept[id(ad)])
                continue
            computed.append(ad)
            expected.append(len(calls) + len(computed))
            if steady[ad["Name"]]:
                kept[id(ad)] = expected[-1]
        before = len(calls)
        assert carry.values(asked, "x", compute) == expected
        assert calls[before:] == computed


def test_pairs_follow_their_records_when_the_order_changes() -> None:
    """The records of last cycle are found again by identity wherever they stand now:
    two steady records swapped every cycle each get their own pair back, and nothing is
    weighed again after the first cycle (a place remembered from an older cycle would
    give a record the other's pair)."""
    carry = SlotCarry(lambda ad: True, TableLine())
    records = _slots('[Name = "a"]', '[Name = "b"]', '[Name = "c"]')
    calls: list = []

    def weighed(s: Any, p: Any) -> Any:
        calls.append(s)
        return s

    for listed in ([0, 1, 2], [2, 1, 0], [0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1]):
        slots = [records[i] for i in listed]
        carry.begin(SETTINGS)
        pairs = carry.pairs(slots, weighed)
        carry.read()
        assert [pair[0] for pair in pairs] == slots
        assert [pair[1].ad for pair in pairs] == [s.ad for s in slots]
    assert calls == records  # weighed in the first cycle only
