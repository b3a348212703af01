"""Ads in new syntax: the one-line form of ``repr()`` and the indented form of ``str()``."""

from __future__ import annotations

from typing import Iterable, Optional, TextIO

from ..adcore import AdCore
from .printers import ad_line, ad_pretty, container_items, tool_items


def write_ad(ad: AdCore, items: Optional[list] = None) -> str:
    """One-line text ``[ a = 1; b = 2 ]``, as ``repr()`` of a ``classad2`` ad.

    Attributes in HTCondor's container order unless ``items`` gives them.
    """
    return ad_line(container_items(ad.node_items()) if items is None else items)


def write_ad_pretty(ad: AdCore, items: Optional[list] = None) -> str:
    """The indented form, exactly as ``str()`` of a ``classad2.ClassAd`` prints it."""
    return ad_pretty(container_items(ad.node_items()) if items is None else items)


# ---- files of many ads ---------------------------------------------------------------------

STYLES = ("lines", "list", "pretty")


def write_ads(ads: Iterable[AdCore], out: TextIO, style: str = "lines") -> int:
    """Write ads in new syntax, attributes in tool order.  Returns the count.

    ``lines``: one ad per line; ``list``: the ``condor_q -long:new`` wrapper
    ``{`` / ``,`` / ``}``; ``pretty``: the indented form, one ad after another.
    """
    if style not in STYLES:
        raise ValueError(f"unknown new-format style {style!r}; expected one of {', '.join(STYLES)}")
    count = 0
    for ad in ads:
        items = tool_items(ad.node_items())
        if style == "pretty":
            out.write(write_ad_pretty(ad, items) + "\n")
        elif style == "list":
            out.write(("{\n" if count == 0 else ",\n") + write_ad(ad, items) + "\n")
        else:
            out.write(write_ad(ad, items) + "\n")
        count += 1
    if style == "list" and count:
        out.write("}\n")
    return count


__all__ = ["STYLES", "write_ad", "write_ad_pretty", "write_ads"]
