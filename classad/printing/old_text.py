"""Ads in old syntax (``Name = value`` lines), as ``condor_q -l`` and ``printOld()`` print them."""

from __future__ import annotations

from typing import Iterable, Optional, TextIO

from ..adcore import AdCore
from .printers import container_items, old_name, tool_items, unparse_old


def write_ad(ad: AdCore, items: Optional[list] = None) -> str:
    """An ad as ``condor_q -l`` prints it: ``Name = value`` lines, names as they are,
    in tool order unless ``items`` is given."""
    pairs = tool_items(ad.node_items()) if items is None else items
    return "".join(f"{name} = {unparse_old(node)}\n" for name, node in pairs)


def print_old(ad: AdCore) -> str:
    """An ad exactly as ``classad2.ClassAd.printOld()`` prints it (container order)."""
    items = container_items(ad.node_items())
    return "".join(f"{old_name(n)} = {unparse_old(v)}\n" for n, v in items) or "\n"


def write_ads(ads: Iterable[AdCore], out: TextIO) -> int:
    """Write ads as ``condor_q -l`` does: each followed by a blank line.  Returns the count."""
    count = 0
    for ad in ads:
        out.write(write_ad(ad))
        out.write("\n")
        count += 1
    return count


__all__ = ["print_old", "write_ad", "write_ads"]
