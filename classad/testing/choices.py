"""Weighted choices that keep a dump's proportions and shrink towards the simplest case.

Hypothesis's public strategies favour small and boundary values (``integers(0, 999)``
gives values below 100 about half the time), which would distort a dump's proportions.
A biased coin drawn through Hypothesis's own choice primitive (``draw_boolean(p)``)
keeps them, and shrinks towards ``False``: :func:`coin` is ``True`` with probability
``p`` and shrinks to ``False``; :func:`weighted` picks among items in proportion to
their weights and shrinks to the first item (callers list the most common first).
These strategies use two pieces of Hypothesis's internal interface (``do_draw`` and the
choice primitives ``draw_boolean``, ``draw_integer`` and ``draw_float``), the public
strategies having no biased choice and opening spans that Hypothesis copies between
attributes.
"""

from __future__ import annotations

from typing import Any, Sequence, TypeVar

from hypothesis import strategies as st
from hypothesis.internal.conjecture.utils import calc_label_from_name
from hypothesis.strategies import SearchStrategy

T = TypeVar("T")


class Labelled(SearchStrategy):
    """A strategy whose label (what Hypothesis groups its draws by) is its distribution.

    While generating, Hypothesis copies the choices of one draw over another draw with
    the same label, to make repeated values likelier.  Strategies that share a class
    but not a distribution (an attribute present in 6% of the dump and one present in
    half) must not share a label, or the copies would even out the dump's proportions.
    """

    def __init__(self, key: str) -> None:
        super().__init__()
        self._key = key

    def calc_label(self) -> int:
        return calc_label_from_name(f"classad.testing:{type(self).__name__}:{self._key}")


class _Coin(Labelled):
    """``True`` with probability ``p``; shrinks to ``False``."""

    def __init__(self, p: float) -> None:
        super().__init__(repr(p))
        self.p = p

    def do_draw(self, data: Any) -> bool:
        return toss(data, self.p)

    def __repr__(self) -> str:
        return f"coin({self.p!r})"


def toss(data: Any, p: float) -> bool:
    """A biased coin drawn straight from ``data`` (no span of its own, so Hypothesis never
    copies it alone into another draw, which would change what the draws after it mean)."""
    if p <= 0.0:
        return False
    if p >= 1.0:
        return True
    return bool(data.draw_boolean(p))


def pick(data: Any, strategy: SearchStrategy[T]) -> T:
    """A draw of ``strategy`` inside another draw: one of this package's strategies draws
    straight from ``data`` (no span of its own: faster, and never copied alone, like
    :func:`toss`); any other strategy is drawn as usual."""
    if isinstance(strategy, Labelled):
        return strategy.do_draw(data)
    return data.draw(strategy)


def coin(p: float) -> SearchStrategy[bool]:
    """``True`` with probability ``p`` (0 and 1 are certain); shrinks to ``False``."""
    if p <= 0.0:
        return st.just(False)
    if p >= 1.0:
        return st.just(True)
    return _Coin(p)


class _Weighted(Labelled):
    """One of ``items`` in proportion to ``weights``; shrinks to the first.

    The items are halved again and again (a coin for each halving says which half,
    ``True`` for the second with the second's share of the weight), so a choice among
    64 values costs six coins, and all coins ``False`` is the first item."""

    def __init__(self, items: Sequence[Any], weights: Sequence[float]) -> None:
        super().__init__(repr(list(zip(items, weights))))
        self.items = list(items)
        self.tree = _halves(list(range(len(self.items))), [float(w) for w in weights])

    def do_draw(self, data: Any) -> Any:
        node = self.tree
        while type(node) is tuple:
            p, first, second = node
            node = second if toss(data, p) else first
        return self.items[node]

    def __repr__(self) -> str:
        return f"weighted({self.items!r})"


def _halves(indexes: list[int], weights: list[float]) -> Any:
    """An index, or ``(p, first half, second half)`` with ``p`` the second half's share."""
    if len(indexes) == 1:
        return indexes[0]
    middle = len(indexes) // 2
    first, second = indexes[:middle], indexes[middle:]
    w_first, w_second = sum(weights[i] for i in first), sum(weights[i] for i in second)
    total = w_first + w_second
    return (w_second / total if total > 0 else 0.5, _halves(first, weights), _halves(second, weights))


def weighted(pairs: Sequence[tuple[T, float]]) -> SearchStrategy[T]:
    """One item of ``(item, weight)`` pairs in proportion to the weights; shrinks to the
    first item.  ValueError when there is nothing to choose."""
    pairs = [(item, w) for item, w in pairs if w > 0]
    if not pairs:
        raise ValueError("weighted() needs at least one item with a positive weight")
    if len(pairs) == 1:
        return st.just(pairs[0][0])
    return _Weighted([p[0] for p in pairs], [p[1] for p in pairs])


__all__ = ["Labelled", "coin", "pick", "toss", "weighted"]
