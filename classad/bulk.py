"""Bulk work without the cyclic garbage collector.

Reading a large ad or a dump of many ads creates millions of objects that form no
reference cycles.  Python's cyclic collector, triggered by that many allocations, would
walk the ever larger heap again and again -- a third of the reading time on a
100,000-job dump.  Memory is still freed as usual by reference counting while the
collector is paused.

Work that runs *after* such a read (a negotiation cycle over the ads read) allocates
and frees as usual, but each full collection would still walk every ad read before:
:func:`heap_settled` sets those aside for the duration of the work.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator

_settled_depth = 0  # how many heap_settled blocks are open


@contextlib.contextmanager
def collector_paused(*, long_lived: bool = False) -> Iterator[None]:
    """Pause the cyclic collector for the ``with`` block; afterwards it is on again if it
    was on before (also when the block raises).

    ``long_lived`` says that what the block made is kept (a pool read from files): it then
    goes straight to the collector's oldest generation (see :func:`_promote`).  Otherwise
    the first allocation after the block starts a young collection that walks every object
    the block made, only to find them all alive (a second or more for a large pool), and
    the next older generation's collection walks them again."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            if long_lived:
                _promote()
            gc.enable()


def _promote() -> None:
    """Move every object the collector tracks to its oldest generation, at once; within a
    :func:`heap_settled` block, set them aside with that block's objects instead."""
    gc.freeze()  # every generation into the permanent one (and the young count reset)
    if _settled_depth == 0:
        gc.unfreeze()  # the permanent generation into the oldest one


class CollectorPause:
    """A pause of the cyclic collector that a generator takes while it builds one large
    object and gives back before it yields (so the caller never runs with the collector
    off); taking it twice, or giving back a pause not taken, does nothing."""

    __slots__ = ("_taken",)

    def __init__(self) -> None:
        self._taken = False

    def take(self) -> None:
        """Pause the collector, if it is on and this pause does not hold it already."""
        if not self._taken and gc.isenabled():
            gc.disable()
            self._taken = True

    def give_back(self) -> None:
        """Turn the collector on again if this pause turned it off."""
        if self._taken:
            self._taken = False
            gc.enable()


@contextlib.contextmanager
def heap_settled() -> Iterator[None]:
    """Within the block, the cyclic collector ignores every object that existed when it
    began (``gc.freeze``); they are collectable again afterwards (``gc.unfreeze``).  New
    objects are collected as usual.  Nested blocks act only at the outermost."""
    global _settled_depth
    if _settled_depth == 0:
        gc.freeze()
    _settled_depth += 1
    try:
        yield
    finally:
        _settled_depth -= 1
        if _settled_depth == 0:
            gc.unfreeze()


__all__ = ["CollectorPause", "collector_paused", "heap_settled"]
