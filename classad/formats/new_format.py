"""The new ad format: ``[ Name = expr; ... ]`` records.

Files hold ads concatenated (``[..][..]``), one per line (HTCondor's "newl"
form), inside a list (``{ [..], [..] }``, the ``condor_q -long:new`` form), or
pretty-printed over many lines.  The
:mod:`~classad.formats.splitter` cuts the stream into one text per ad, which
the expression parser reads (value by value, through the expression cache);
a syntax error is reported at its line and column in the file and only that
ad is lost.

The writers (:func:`write_ad`, the one-line form of ``repr()``;
:func:`write_ad_pretty`, the indented form of ``str()``) live in
:mod:`classad.printing.new_text` and are re-exported here.
"""

from __future__ import annotations

from typing import Callable, Iterator, Optional

from ..ad import ClassAd
from ..errors import FormatError, ParseError
from ..parser import KEYWORDS, SHARE_VALUES_UP_TO, parse_expr, parse_record
from ..printing.new_text import STYLES, write_ad, write_ad_pretty, write_ads
from ..records import split_attributes
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
        yield ClassAd.from_nodes(pairs)


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
    return FormatError(exc.message, file=name, line=line + exc.line - 1, column=col, context=exc.context)


__all__ = ["iter_ads", "write_ad", "write_ad_pretty", "write_ads", "STYLES"]
