"""Bulk work without the cyclic garbage collector.

Reading a large ad or a dump of many ads creates millions of objects that form no
reference cycles.  Python's cyclic collector, triggered by that many allocations, would
walk the ever larger heap again and again -- a third of the reading time on a
100,000-job dump.  Memory is still freed as usual by reference counting while the
collector is paused.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the ``with`` block; afterwards it is on again if it
    was on before (also when the block raises)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


__all__ = ["collector_paused"]
