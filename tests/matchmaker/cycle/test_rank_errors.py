"""Which slot ads' Rank is an error, in a simulation (matchmaker.cycle.state): a Rank stored as
a plain literal, or none, is no error and is not evaluated; the others are evaluated as
each slot ad's prep keeps them, in order.  Differential against evaluating every ad."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

from classad.ad import ClassAd
from classad.evaluate import seeded_random
from matchmaker.cycle.slot_carry import SlotPrep
from matchmaker.cycle.state import _rank_errors_kept
from matchmaker.pool.ads import rank_error

PLAIN = [None, "0.0", "10", "true", '"x"', "-1"]
EVALUATED = ["error", "undefined", "1 / 0", '"a" + 1', "random(2) == 0 ? error : 1", "Memory + 1", "{1}", "[a = 1]"]


def _ad(k: int, rank: str | None) -> ClassAd:
    return ClassAd(f'[Name = "s{k}"; Memory = 1' + (f"; Rank = {rank}" if rank is not None else "") + "]")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(PLAIN + EVALUATED), st.booleans()), max_size=10),
    st.integers(0, 2**31),
)
def test_rank_errors_differential(spec: list[tuple[Any, bool]], seed: int) -> None:
    ads = [_ad(k, rank) for k, (rank, _) in enumerate(spec)]
    preps = [SlotPrep(ad, steady) for ad, (_, steady) in zip(ads, spec)]
    with seeded_random(seed):
        got = _rank_errors_kept(preps)
    with seeded_random(seed):  # the same draws, every ad evaluated in order
        expected = [rank_error(ad) for ad in ads]
    assert got == expected
    # Only the steady preps of the ads evaluated keep a verdict.
    kept = [p for p in preps if "rank_error" in p.values]
    assert kept == [p for p, (rank, steady) in zip(preps, spec) if steady and rank not in PLAIN]


def test_rank_errors_by_hand() -> None:
    """Rank 0.0, none, "x", error, 1 / 0 (an error), Memory + 1: the fourth and fifth are errors;
    only the last three are evaluated (kept, the preps being steady)."""
    preps = [SlotPrep(_ad(k, r), True) for k, r in enumerate(["0.0", None, '"x"', "error", "1 / 0", "Memory + 1"])]
    assert _rank_errors_kept(preps) == [False, False, False, True, True, False]
    assert ["rank_error" in p.values for p in preps] == [False, False, False, True, True, True]
