"""The new ad format: ``[ Name = expr; ... ]`` records, and its printers.

Files hold ads concatenated (``[..][..]``), one per line (HTCondor's "newl"
form), inside a list (``{ [..], [..] }``, the ``condor_q -long:new`` form), or
pretty-printed over many lines.  The
:mod:`~classad.formats.splitter` cuts the stream into one text per ad, which
the expression parser reads (value by value, through the expression cache);
a syntax error is reported at its line and column in the file and only that
ad is lost.

Printers: :func:`write_ad` is the one-line form (``repr()`` of an ad);
:func:`write_ad_pretty` is the indented form of ``str()`` in ``classad2``
(ads indented by 4, lists by 3, one attribute per line).
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, Optional, TextIO

from ..ad import PRINTERS, ClassAd
from ..errors import FormatError, ParseError
from ..parser import KEYWORDS, SHARE_VALUES_UP_TO, parse_expr, parse_record
from ..records import split_attributes
from .printers import ad_line, ad_pretty, container_items, tool_items
from .sources import LineSource
from .splitter import NEW_SYNTAX, split_records

ErrorHandler = Callable[[FormatError], None]


def iter_ads(src: LineSource, handle: ErrorHandler) -> Iterator[ClassAd]:
    """Ads from new-syntax text; each broken ad goes to ``handle`` and is skipped."""
    name = src.name
    for rec in split_records(src, NEW_SYNTAX, handle):
        # Ads of ordinary size are read value by value (values shared between ads);
        # a very large one in a single pass of the full parser.
        pairs = _split_attributes(rec.text) if len(rec.text) <= SHARE_VALUES_UP_TO else None
        if pairs is None:
            try:
                pairs = parse_record(rec.text).attrs
            except ParseError as exc:
                handle(_located(exc, name, rec.line, rec.column))
                continue
        src.last_end = (rec.end_line, rec.end_column)
        yield ClassAd._from_nodes(pairs)


def _split_attributes(text: str) -> Optional[tuple]:
    """The (name, node) pairs of a plain ``[ a = 1; b = 2 ]`` ad, or None to use the full parser."""
    return split_attributes(text, parse_expr, KEYWORDS)


def _located(exc: ParseError, name: str, line: int, column: int) -> FormatError:
    """A parse error inside a record, placed in the file (the record starts at line:column)."""
    if exc.line is None:
        return FormatError(exc.message, file=name, line=line, column=column, context=exc.context)
    col = exc.column or 1
    if exc.line == 1:
        col += column - 1
    return FormatError(exc.message, file=name, line=line + exc.line - 1, column=col,
                       context=exc.context)


# ---- printing ------------------------------------------------------------------------------


def write_ad(ad: ClassAd, items: Optional[list] = None) -> str:
    """One-line text ``[ a = 1; b = 2 ]``, as ``repr()`` of a ``classad2`` ad.

    Attributes in HTCondor's container order unless ``items`` gives them.
    """
    return ad_line(container_items(ad.node_items()) if items is None else items)


def write_ad_pretty(ad: ClassAd, items: Optional[list] = None) -> str:
    """The indented form, exactly as ``str()`` of a ``classad2.ClassAd`` prints it."""
    return ad_pretty(container_items(ad.node_items()) if items is None else items)


# ---- files of many ads ---------------------------------------------------------------------

STYLES = ("lines", "list", "pretty")


def write_ads(ads: Iterable[ClassAd], out: TextIO, style: str = "lines") -> int:
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


__all__ = ["iter_ads", "write_ad", "write_ad_pretty", "write_ads", "STYLES"]


PRINTERS["new"] = write_ad_pretty  # str() / printOld() / printJson() of an ad (see classad.ad.PRINTERS)
