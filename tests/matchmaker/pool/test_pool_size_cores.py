"""The cores of the partitionable slots in the effective pool size (matchmaker.pool.ads.pool_size):
a ``Cpus`` stored as a plain literal is read, not evaluated; the others are evaluated
(through the caller's memo), in slot order.  Differential against evaluating every ad."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

from classad.ad import ClassAd
from classad.evaluate import seeded_random
from matchmaker.pool.ads import _cores, make_slots, no_memo, pool_size

# Cpus as a plain literal (read), or anything else (evaluated): missing, expressions,
# errors, undefined, draws.
PLAIN = ["8", "3", "0", "-2", "2.5", "0.1", "1e16", "true", "false", '"four"']
EVALUATED = [None, "1 + 2", "undefined", "error", '"a" + 1', "random(4)", "random(3) + 0.5", "Memory / 1024", "{1, 2}"]


def _slot(k: int, cpus: str | None, partitionable: bool) -> str:
    lines = [f'Name = "s{k}"', "Memory = 4096"]
    if partitionable:
        lines.append("PartitionableSlot = true")
    if cpus is not None:
        lines.append(f"Cpus = {cpus}")
    return "[" + "; ".join(lines) + "]"


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(PLAIN + EVALUATED), st.booleans()), min_size=1, max_size=12),
    st.integers(0, 2**31),
)
def test_effective_size_differential(spec: list[tuple[Any, bool]], seed: int) -> None:
    slots = make_slots([(ClassAd(_slot(k, cpus, p)), f"s:{k}") for k, (cpus, p) in enumerate(spec)])
    asked: list = []

    def memo(ads: Any, what: str, compute: Any) -> list:
        assert what == "cores"
        asked.extend(ads)
        return no_memo(ads, what, compute)

    with seeded_random(seed):
        got = pool_size(slots, memo=memo)
    # The reference: every partitionable slot's Cpus evaluated, in slot order, from the same draws.
    pslots = [s for s in slots if s.partitionable]
    with seeded_random(seed):
        cores = [_cores(s.ad) for s in pslots]
    expected = 0.0
    found = iter(cores)
    for s in slots:
        c = next(found) if s.partitionable else None
        expected += c if c is not None and c > 0 else 1.0
    assert got.effective == expected
    # Only the ads whose Cpus is not a plain literal are evaluated, in slot order.
    assert asked == [s.ad for s, (cpus, _) in zip(slots, spec) if s.partitionable and cpus not in PLAIN]


def test_plain_cpus_by_hand() -> None:
    """p1 Cpus 8, p2 Cpus true (1 core), p3 Cpus "four" (no number: counts 1), p4 Cpus 1 + 2
    (evaluated: 3), s a static slot (1): 8 + 1 + 1 + 3 + 1 = 14; only p4 is evaluated."""
    texts = [_slot(1, "8", True), _slot(2, "true", True), _slot(3, '"four"', True), _slot(4, "1 + 2", True)]
    slots = make_slots([(ClassAd(t), "s") for t in [*texts, _slot(5, "1", False)]])
    asked: list = []

    def memo(ads: Any, what: str, compute: Any) -> list:
        asked.extend(ads)
        return no_memo(ads, what, compute)

    assert pool_size(slots, memo=memo).effective == 14.0
    assert [ad["Name"] for ad in asked] == ["s4"]
