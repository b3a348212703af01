"""The context ads of a match (``LEFT``, ``RIGHT``, ``lCtx``, ``rCtx``, ``symmetricMatch``...)
are built only for a lookup that can find something in them; every other lookup past the
top of the two ads is Undefined without building them (they form a reference cycle)."""

from __future__ import annotations

from classad import ClassAd
from classad.evaluate import new_state
from classad.values import UNDEFINED

_MY = """[
    Requirements = TARGET.x > 1;
    Rank = 3;
    missing = NoSuchName;
    left_rank = leftRankValue;
    other_x = lCtx.other.x;
    both = symmetricMatch;
    partner_x = x;
    right_ad_x = RIGHT.x
]"""
_TARGET = "[ x = 5; Requirements = true; Rank = 7 ]"


def _eval(attr: str, *, strict: bool = False) -> tuple[object, bool]:
    """The value of ``attr`` of the job-side ad matched against the other, and whether the
    evaluation built the match context."""
    my, target = ClassAd(_MY), ClassAd(_TARGET)
    state = new_state(my, target, strict=strict)
    value = my.evaluate(attr, target, state)
    return value, state._match is not None


def test_a_name_no_ad_holds_builds_no_context() -> None:
    """``NoSuchName`` is in neither ad nor in any context ad: Undefined, in both modes,
    with the context never built (compat mode also looks in the partner, which lacks it)."""
    assert _eval("missing") == (UNDEFINED, False)
    assert _eval("missing", strict=True) == (UNDEFINED, False)


def test_a_partner_attribute_builds_no_context() -> None:
    """Compat mode finds the unscoped ``x`` in the partner ad: 5, without the context."""
    assert _eval("partner_x") == (5, False)


def test_the_context_names_still_resolve() -> None:
    """By hand: ``leftRankValue`` = LEFT.rank = this ad's Rank = 3; ``lCtx.other`` = RIGHT =
    the target, whose x is 5; ``symmetricMatch`` = RIGHT.requirements && LEFT.requirements =
    true && (5 > 1) = true; ``RIGHT.x`` = 5.  Each lookup builds the context."""
    assert _eval("left_rank") == (3, True)
    assert _eval("other_x") == (5, True)
    assert _eval("both") == (True, True)
    assert _eval("right_ad_x") == (5, True)
    assert _eval("left_rank", strict=True) == (3, True)
