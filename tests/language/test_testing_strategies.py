"""``classad.testing``: ads drawn like a dump keep its names, kinds and proportions; values
of every kind; expressions over a site's names; small counterexamples.

Tolerance: over :data:`DRAWS` ads drawn in a Hypothesis run, each attribute's presence
rate and each kind's share are within :data:`TOLERANCE` (absolute) of the rates counted
directly in the dump (counted here by plain Python over the parsed ads, not by
``classad.testing.learn``).  Sampling noise alone is about 0.03 at 300 draws (more for
the share of a kind among the few ads holding an attribute); Hypothesis's search adds
more (it begins each example away from the choices it already explored, and its first
example is the simplest), which is why the bound is 0.15 and not 0.1.  Over many seeds
the rates stray up to about 0.09 (presence) and 0.13 (kind shares).  What must hold
exactly holds exactly: the names and kinds are the dump's, an attribute every ad has is
in every drawn ad, and an attribute clearly commoner in the dump is commoner in the
draws.
"""

from __future__ import annotations

import random
from collections import Counter
from contextlib import contextmanager

import pytest
from hypothesis import find, given, settings, strategies as st
from hypothesis.internal.conjecture import providers
from support import ROOT

from classad import ClassAd, ExprTree, Value, parseAds
from classad.ast import AttrRef, Literal, Select
from classad.parser import parse_expr
from classad.testing import VALUE_KINDS, ads, expressions, from_dict, learn, values
from classad.testing.ads import children

DRAWS = 300
TOLERANCE = 0.15


@contextmanager
def no_local_constants():
    """Hypothesis without the constants it gathers from the project's modules.

    Hypothesis sometimes draws a number among constants read from every local module
    imported so far; how many there are changes how many random bits each such draw
    uses, so a derandomized run draws other examples after another test imported
    another module (another test order, another ``-k``, another xdist worker).  With
    the pool empty, a run draws the same examples in any process."""
    empty = providers.Constants()
    real = providers._get_local_constants
    providers.CONSTANTS_CACHE.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = real
        providers.CONSTANTS_CACHE.cache.clear()


def draw_many(strategy, n: int = DRAWS) -> list:
    """``n`` examples of ``strategy`` as Hypothesis generates them (derandomized, and the
    same in every process: see :func:`no_local_constants`)."""
    out: list = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None)
    @given(strategy)
    def collect(x):
        out.append(x)

    with no_local_constants():
        collect()
    return out


def kind_in_dump(node) -> str:
    """The kind of a stored node, decided independently of classad.testing.schema."""
    if isinstance(node, Literal):
        v = node.value
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, int):
            return "int"
        if isinstance(v, float):
            return "real"
        if isinstance(v, str):
            return "string"
        return {Value.Undefined: "undefined", Value.Error: "error"}.get(
            Value(int(v)) if isinstance(v, Value) else v, "other"
        )
    return type(node).__name__


def rates(ad_list: list[ClassAd]) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """Presence rate per attribute and kind share per (attribute, kind)."""
    present: Counter = Counter()
    kinds: Counter = Counter()
    for ad in ad_list:
        for name, node in ad.node_items():
            present[name.lower()] += 1
            kinds[name.lower(), kind_in_dump(node)] += 1
    return ({k: n / len(ad_list) for k, n in present.items()}, {k: n / present[k[0]] for k, n in kinds.items()})


def assert_same_proportions(dump: list[ClassAd], drawn: list[ClassAd]) -> None:
    want_present, want_kinds = rates(dump)
    got_present, got_kinds = rates(drawn)
    assert set(got_present) == set(want_present), "drawn ads hold other names than the dump"
    assert set(got_kinds) <= set(want_kinds), "drawn ads hold kinds the dump does not"
    for name, rate in want_present.items():
        assert abs(got_present.get(name, 0.0) - rate) <= TOLERANCE, (name, rate, got_present.get(name))
        if rate == 1.0:
            assert got_present[name] == 1.0, name
    for key, share in want_kinds.items():
        assert abs(got_kinds.get(key, 0.0) - share) <= TOLERANCE, (key, share, got_kinds.get(key))
    for a, ra in want_present.items():
        for b, rb in want_present.items():
            if ra >= rb + 0.5:
                assert got_present[a] > got_present[b], (a, ra, got_present[a], b, rb, got_present[b])


@pytest.mark.slow
@pytest.mark.parametrize("dump", ["examples/slots.ad", "examples/jobs.ad"])
def test_drawn_ads_follow_the_example_dumps(dump):
    """Names, presence rates and kind shares of the example dumps (e.g. slots.ad: 16 of
    its 32 slots carry RemoteUser; Start is a literal bool in 23 of 32, an expression in 9)."""
    ads_of_dump = list(parseAds(ROOT / dump))
    assert_same_proportions(ads_of_dump, draw_many(ads(like=ROOT / dump)))


def random_dump(seed: int) -> list[ClassAd]:
    """A dump of 40 ads over 8 attributes, each with its own presence rate and mix of kinds."""
    rng = random.Random(seed)
    makers = {
        "int": lambda: str(rng.randrange(-5, 5000)),
        "real": lambda: repr(rng.uniform(0, 100)),
        "string": lambda: '"' + rng.choice(["a", "bb", "ccc", "LINUX"]) + '"',
        "bool": lambda: rng.choice(["true", "false"]),
        "undefined": lambda: "undefined",
        "error": lambda: "error",
        "expr": lambda: rng.choice(["a1 + 1", "TARGET.x > 3", "ifThenElse(a2, 1, 2)"]),
    }
    attrs = []
    for i in range(8):
        kinds = rng.sample(sorted(makers), rng.randint(1, 3))
        attrs.append((f"a{i}", rng.uniform(0.2, 1.0), kinds, [rng.random() + 0.1 for _ in kinds]))
    out = []
    for _ in range(40):
        parts = [
            f"{name} = {makers[rng.choices(kinds, weights)[0]]()}"
            for name, p, kinds, weights in attrs
            if rng.random() < p
        ]
        out.append(ClassAd("[" + "; ".join(parts) + "]"))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_drawn_ads_follow_random_dumps(seed):
    dump = random_dump(seed)
    assert_same_proportions(dump, draw_many(ads(like=dump), 250))


def test_learn_counts_a_small_dump_by_hand():
    """Three ads: x present in 3 of 3 (int 1, int 5, string "a": ints 2/3 in 1..5), y in 1 of 3."""
    schema = learn([ClassAd("[x = 1; y = a + 1]"), ClassAd("[x = 5]"), ClassAd('[x = "a"]')])
    x, y = schema.get("X"), schema.get("y")
    assert schema.count == 3 and schema.names() == ["x", "y"]
    assert x.present == 1.0 and dict(x.kinds) == pytest.approx({"int": 2 / 3, "string": 1 / 3})
    assert x.ranges["int"] == (1, 5) and dict(x.values["string"]) == {"a": 1}
    assert y.present == pytest.approx(1 / 3) and y.kind == "expr" and dict(y.values["expr"]) == {"a + 1": 1}


def test_numbers_stay_in_the_dump_range_and_strings_in_its_vocabulary():
    dump = [ClassAd(f'[m = {m}; os = "{os}"]') for m, os in [(1024, "LINUX"), (8192, "WINDOWS"), (4096, "LINUX")]]
    for ad in draw_many(ads(like=dump, fresh=0.5), 150):
        assert 1024 <= ad["m"] <= 8192 and ad["os"] in ("LINUX", "WINDOWS")


def test_expressions_are_kept_or_redrawn_in_the_same_shape():
    """``KeyboardIdle > 15 * 60``: kept as written, or the same tree with other numbers."""
    dump = [ClassAd("[Start = KeyboardIdle > 15 * 60]")]
    kept = {str(ad.lookup("Start")) for ad in draw_many(ads(like=dump), 30)}
    assert kept == {"KeyboardIdle > 15 * 60"}
    reshaped = draw_many(ads(like=dump, shapes=True, fresh=0.5), 60)
    shapes = {str(ad.lookup("Start")) for ad in reshaped}
    assert len(shapes) > 3
    for text in shapes:
        tree = parse_expr(text)
        assert tree.op == ">" and tree.left.name == "KeyboardIdle" and tree.right.op == "*"


def test_schema_descriptions_are_followed():
    schema = {
        "Memory": {"type": "int", "min": 1024, "max": 4096},
        "OpSys": {"type": "string", "values": ["LINUX"]},
        "Gpu": {"type": "bool", "missing": 1.0},
        "Rank": {"type": "expr", "values": ["Memory / 1024"]},
    }
    for ad in draw_many(ads(schema=schema), 60):
        assert 1024 <= ad["Memory"] <= 4096 and ad["OpSys"] == "LINUX" and "Gpu" not in ad
        assert ad.eval("Rank") == ad["Memory"] // 1024


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"x": {"type": "integer"}}, "unknown kind"),
        ({"x": {"type": "int", "missing": 2}}, "missing must be a fraction"),
        ({"x": {"type": "int", "min": 5, "max": 1}}, "min 5 is above max 1"),
        ({"x": {"type": "int", "values": ["a"]}}, "not of the kinds"),
        ({"x": {"tpye": "int"}}, "unknown keys"),
        ({"x": {"type": "expr", "values": ["a +"]}}, "is not an expression"),
    ],
)
def test_bad_descriptions_name_the_attribute(bad, message):
    with pytest.raises(ValueError, match=message) as info:
        from_dict(bad)
    assert str(info.value).startswith("x: ")


def test_whole_numbers_describe_a_real():
    assert dict(from_dict({"x": {"type": "real", "values": [1, 2.5]}}).get("x").values["real"]) == {1.0: 0.5, 2.5: 0.5}


def test_ads_needs_exactly_one_source():
    with pytest.raises(ValueError, match="either like="):
        ads()


def test_values_cover_every_kind():
    seen = set()
    for v in draw_many(values(), 300):
        ad = ClassAd()
        ad["v"] = v  # every drawn value can be stored
        seen.add(
            "undefined"
            if v is Value.Undefined
            else "error"
            if v is Value.Error
            else {bool: "bool", int: "int", float: "real", str: "string", list: "list"}.get(type(v))
            or ("ad" if isinstance(v, ClassAd) else "abstime")
        )
    assert seen == set(VALUE_KINDS)


def referenced(tree) -> set[str]:
    if isinstance(tree, AttrRef):
        return {tree.name}
    if isinstance(tree, Select) and isinstance(tree.base, AttrRef) and tree.base.lname in ("my", "target"):
        return {tree.name}
    return set().union(*(referenced(c) for c in children(tree))) if children(tree) else set()


def test_site_expressions_use_only_the_given_names():
    names = {"Memory": "int", "OpSys": "string", "HasGPU": "bool", "Load": "real", "Other": None}
    for text in draw_many(expressions(names=list(names), types=names), 100):
        assert referenced(parse_expr(text)) <= set(names), text


def test_site_expressions_compare_with_the_dump_values():
    schema = learn(ROOT / "examples/slots.ad").only(["OpSysAndVer"])
    texts = draw_many(expressions(names=schema, scopes=("TARGET.",)), 100)
    assert any('"AlmaLinux9"' in t for t in texts) and all("TARGET.OpSysAndVer" in t for t in texts)


def test_default_expressions_still_use_the_test_context():
    for text in draw_many(expressions(), 50):
        parse_expr(text)


def test_a_wrong_policy_shrinks_to_a_few_attributes():
    """Policy meant "slots with at least 4096 MB start", written ``Memory > 4096``.  The
    counterexample found in a random dump is the slot with Memory = 4096 and at most a
    couple of other attributes (the optional ones shrink away)."""
    dump = random_dump(7) + [ClassAd(f'[Memory = {m}; OpSys = "LINUX"]') for m in (2048, 4096, 8192, 16384)]
    wrong_start = ExprTree("Memory > 4096")

    def refuses_big_slot(ad: ClassAd) -> bool:
        memory = ad.get("Memory")
        return isinstance(memory, int) and memory >= 4096 and wrong_start.eval(ad) is not True

    found = find(
        ads(like=dump), refuses_big_slot, settings=settings(database=None, derandomize=True, max_examples=2000)
    )
    assert found["Memory"] == 4096
    assert len(found) <= 3, found


def test_hypothesis_shrinks_within_one_kind_to_the_most_common_value():
    dump = [ClassAd('[os = "LINUX"]')] * 5 + [ClassAd('[os = "WINDOWS"]')]
    assert find(ads(like=dump), lambda ad: True, settings=settings(database=None))["os"] == "LINUX"


@given(st.data())
@settings(max_examples=20)
def test_drawn_ads_print_and_read_back(data):
    ad = data.draw(ads(like=ROOT / "examples/jobs.ad", shapes=True))
    assert ClassAd(repr(ad)) == ad


def test_extra_attributes_are_set_on_every_ad():
    """``extra``: a value, a strategy, or None to remove an attribute the dump has."""
    dump = [ClassAd('[Name = "a"; Memory = 1024]'), ClassAd('[Name = "b"; Memory = 2048]')]
    for ad in draw_many(ads(like=dump, extra={"Name": "slot1", "Memory": None, "Kind": st.sampled_from([1, 2])}), 30):
        assert ad["Name"] == "slot1" and "Memory" not in ad and ad["Kind"] in (1, 2)


def test_schemas_are_adjusted_by_name():
    schema = learn([ClassAd("[a = 1; B = 2; c = 3]")])
    assert schema.only(["A", "b"]).names() == ["a", "B"]
    assert schema.without(["c"]).names() == ["a", "B"]
    added = schema.with_attrs(*from_dict({"c": {"type": "string", "values": ["x"]}}).attrs)
    assert added.names() == ["a", "B", "c"] and added.get("c").kind == "string"
