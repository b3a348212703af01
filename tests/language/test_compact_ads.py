"""Ads stored in a shared layout (``ClassAd.compact()``) behave exactly as other ads.

Compaction is a storage change only, so the oracle is HTCondor's C++ library on the
same ad: evaluation, mapping access, printing, and changes made after compaction.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import classad
from classad.layout import SharedAttrs
from classad.testing import CONTEXT_MY, CONTEXT_TARGET, canonical, expressions

c = pytest.importorskip("classad2") if pytest.importorskip("htcondor2") else None

SETTINGS = settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def compacted(text: str) -> classad.ClassAd:
    ad = classad.ClassAd(text).compact()
    assert type(ad._attrs) is SharedAttrs
    return ad


def test_two_ads_with_the_same_names_share_one_layout() -> None:
    a, b = compacted("[x = 1; Y = 2]"), compacted("[x = 3; Y = 4]")
    assert a._attrs.layout is b._attrs.layout
    assert (a["x"], b["Y"]) == (1, 4)


@pytest.mark.slow
@SETTINGS
@given(text=expressions())
def test_evaluation_matches_htcondor(text: str) -> None:
    try:
        oracle_tree = c.ExprTree(text)
    except Exception:
        return
    try:
        expected = canonical(oracle_tree.eval(c.ClassAd(CONTEXT_MY), c.ClassAd(CONTEXT_TARGET)))
    except Exception:
        return  # a hard evaluation failure in the C++ library
    my, target = compacted(CONTEXT_MY), compacted(CONTEXT_TARGET)
    assert canonical(classad.ExprTree(text).eval(my, target)) == expected


def test_mapping_access_and_printing_match_htcondor() -> None:
    ours, theirs = compacted(CONTEXT_MY), c.ClassAd(CONTEXT_MY)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)
    assert ("CYC" in ours, "missing" in ours) == ("CYC" in theirs, "missing" in theirs)
    assert {k: canonical(ours[k]) for k in ours} == {k: canonical(theirs[k]) for k in theirs}
    assert ours.printOld() == theirs.printOld()
    assert str(ours) == str(theirs)
    assert ours.printJson() == theirs.printJson()
    assert ours.externalRefs(classad.ExprTree("a + zz")) == theirs.externalRefs(c.ExprTree("a + zz"))


_EDITS = st.lists(
    st.tuples(st.sampled_from(["set", "del"]), st.sampled_from(["a", "B", "s", "new", "Cyc"]), st.integers(-5, 5)),
    max_size=6,
)


@pytest.mark.slow
@SETTINGS
@given(edits=_EDITS)
def test_changes_after_compaction_match_htcondor(edits: list[tuple[str, str, int]]) -> None:
    ours, theirs = compacted(CONTEXT_MY), c.ClassAd(CONTEXT_MY)
    shared = compacted(CONTEXT_MY)  # same layout: must not see the edits
    for op, name, value in edits:
        if op == "set":
            ours[name], theirs[name] = value, value
        elif name in theirs:
            del ours[name]
            del theirs[name]
        else:
            with pytest.raises(KeyError):
                del ours[name]
    assert ours.printOld() == theirs.printOld()
    assert shared.printOld() == c.ClassAd(CONTEXT_MY).printOld()


def test_copies_and_equality() -> None:
    ad = compacted(CONTEXT_MY)
    plain = classad.ClassAd(CONTEXT_MY)
    assert ad == plain and plain == ad
    copy = classad.ClassAd(ad)
    copy["a"] = 99
    assert ad["a"] == 1 and copy["a"] == 99
    assert ad.copy() == plain
    for req in ("TARGET.a == 1", "MY.a == 1", "b > a"):
        other = f"[Requirements = {req}; a = 2]"
        assert ad.matches(compacted(other)) == c.ClassAd(CONTEXT_MY).matches(c.ClassAd(other))


def test_pickle_and_copies_keep_the_ad():
    """Ads cross process boundaries (multiprocessing, a distributed engine) by pickle."""
    import copy
    import pickle

    ad = compacted(CONTEXT_MY)
    classad.ExprTree("x + a").eval(ad, compacted(CONTEXT_TARGET))  # evaluated nodes hold compiled closures
    for clone in (pickle.loads(pickle.dumps(ad)), copy.deepcopy(ad), copy.copy(ad)):
        assert clone == ad
        assert clone.printOld() == c.ClassAd(CONTEXT_MY).printOld()
        assert classad.ExprTree("x + a").eval(clone, compacted(CONTEXT_TARGET)) == c.ExprTree("x + a").eval(
            c.ClassAd(CONTEXT_MY), c.ClassAd(CONTEXT_TARGET)
        )


# ---- ads that share a layout keep only what differs from its template ----------------------

_VALUES_TEXT = st.sampled_from(
    [
        "0",
        "1",
        "-1",
        "true",
        "false",
        "0.0",
        "-0.0",
        "1.0",
        "1e3",
        '"a"',
        '"A"',
        '""',
        "undefined",
        "error",
        "x + 1",
        "{1, 2}",
        "[q = 1]",
        "9223372036854775807",
    ]
)
_NAMES = ("Alpha", "beta", "GAMMA", "x")


@pytest.mark.slow
@SETTINGS
@given(rows=st.lists(st.tuples(*[_VALUES_TEXT] * len(_NAMES)), min_size=2, max_size=5), tag=st.integers(0, 10**9))
def test_ads_sharing_a_layout_keep_their_own_values(rows: list[tuple[str, ...]], tag: int) -> None:
    """The first ad compacted with a list of names is its layout's template; the others keep
    what differs from it (bare values for plain literals).  Every ad still reads, prints
    and evaluates as HTCondor's library reads the same text -- including values that are
    equal but not identical (1 and true, 0.0 and -0.0, "a" and "A")."""
    names = (*_NAMES, f"Tag{tag}")  # a fresh layout for each example
    texts = ["[" + "; ".join(f"{n} = {v}" for n, v in zip(names, (*row, "0"))) + "]" for row in rows]
    ours = [compacted(t) for t in texts]
    assert len({id(a._attrs.layout) for a in ours}) == 1
    for ad, text in zip(ours, texts):
        theirs = c.ClassAd(text)
        assert ad.printOld() == theirs.printOld()
        assert {k: canonical(ad.eval(k)) for k in ad} == {k: canonical(theirs.eval(k)) for k in theirs}
        for expr in ("Alpha + beta", "GAMMA =?= x", "strcat(Alpha, beta)", "real(x) / 2"):
            assert canonical(classad.ExprTree(expr).eval(ad)) == canonical(c.ExprTree(expr).eval(theirs))
        ad["Extra"], theirs["Extra"] = 1, 1  # the ad's own storage again, from the shared one
        assert ad.printOld() == theirs.printOld()
        assert {k: canonical(ad.eval(k)) for k in ad} == {k: canonical(theirs.eval(k)) for k in theirs}


def test_an_ad_like_the_template_keeps_nothing_of_its_own() -> None:
    names = "; ".join(f"A{i} = {i}" for i in range(40))
    first = compacted(f'[{names}; Which = "first"]')
    again = compacted(f'[{names}; Which = "second"]')
    assert first._attrs.layout is again._attrs.layout
    assert tuple.__len__(first._attrs) == 1  # the variant alone
    assert tuple.__len__(again._attrs) == 2  # the variant and "second"
    assert again["Which"] == "second" and again["A39"] == 39


def test_stored_values_keep_their_identity() -> None:
    """Callers key caches by the identity of what ``stored_of`` returns (autoclusters)."""
    ad = compacted('[Own = "unique text"; Expr = a + b; N = 123456789]')
    first, second = ad.stored_of(("own", "expr", "n", "missing")), ad.stored_of(("own", "expr", "n", "missing"))
    assert all(a is b for a, b in zip(first, second))
    assert first[3] is None


@pytest.mark.slow
def test_a_long_dump_keeps_sharing_its_common_values(tmp_path) -> None:
    """Past the old-format reader's value table (65,536 distinct values) a value common to
    every ad keeps one node, so the last ads of a long dump leave it to their template as
    the first ones do, and every ad still reads its own values."""
    from matchmaker.pool.ads import make_jobs, stream_ads

    lines = []
    for i in range(8000):
        own = "".join(f"Own{k} = {i * 10 + k + 1_000_000}\n" for k in range(10))
        lines.append(f'ClusterId = {i}\nProcId = 0\nUser = "u@d"\nCommon = "same for all"\nSize = 4096\n{own}\n')
    path = tmp_path / "jobs.ads"
    path.write_text("".join(lines))
    jobs = make_jobs(stream_ads(path))
    assert len(jobs) == 8000
    sizes = {tuple.__len__(j.ad._attrs) for j in jobs[1:]}
    assert sizes == {12}  # the variant, ClusterId and the ten Own values
    last = jobs[-1].ad
    assert (last["Common"], last["Size"], last["Own9"], last["ClusterId"]) == ("same for all", 4096, 1_079_999, 7999)


def test_the_value_table_keeps_what_ads_still_share() -> None:
    """When the old-format reader's value table fills, the values that something else still
    holds (a layout's template) keep their node; the others are forgotten."""
    from classad.formats import old_format

    old_format.forget_lines()
    try:
        held = old_format._VALUES["7"] = classad.ast.Literal(7)
        for i in range(old_format._VALUES_LIMIT - 1):
            old_format._VALUES[f'"v{i}"'] = classad.ast.Literal(f"v{i}")
        old_format._thin_values()
        assert old_format._VALUES == {"7": held}
    finally:
        old_format.forget_lines()
