"""Reading and writing ad files in every HTCondor format: old, new, JSON and XML.

The reading API is ``classad2``'s: :func:`parseAds` (a generator),
:func:`parseOne` (all ads merged into one) and :func:`parseNext` (the first
ad; a file is left just after it), each taking a :class:`ParserType`.  Input
may be ad text (``str``), ``bytes``, an open file (text or binary) or, as a
Pythonic addition, a :class:`pathlib.Path`.  Files are read line by line, so
memory stays flat however long the file is.

Bad input raises :class:`~classad.errors.FormatError` with file, line and
column.  ``on_error`` chooses what happens next: ``"raise"`` (the default)
stops; ``"skip"`` drops the broken ad and goes on with the next one; a
callable receives each error and reading goes on unless it raises.  A broken
ad never takes the following ad down with it.

Writers: :func:`format_ad` gives one ad as ``classad2`` prints it
(``printOld``, ``repr``, ``str``, ``printJson``, HTCondor's XML);
:func:`write_ads` writes a whole file as HTCondor's tools do.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Iterator, Optional, TextIO, Union

from ..ad import ClassAd
from ..errors import ClassAdError, FormatError
from . import json_format, new_format, old_format, xml_format
from .detect import ParserType, detect, to_parser_type
from .sources import LineSource, open_source, seek_after

Parser = ParserType  # the name classad2 keeps for compatibility with version 1

OnError = Union[str, Callable[[FormatError], Any]]

_READERS: dict[ParserType, Callable[[LineSource, Callable[[FormatError], None]], Iterator[ClassAd]]] = {
    ParserType.Old: old_format.iter_ads,
    ParserType.New: new_format.iter_ads,
    ParserType.JSON: json_format.iter_ads,
    ParserType.XML: xml_format.iter_ads,
}


def _raise(exc: FormatError) -> None:
    raise exc


def _ignore(exc: FormatError) -> None:
    return None


def error_handler(on_error: OnError) -> Callable[[FormatError], Any]:
    """The callable behind an ``on_error`` choice."""
    if on_error == "raise":
        return _raise
    if on_error == "skip":
        return _ignore
    if callable(on_error):
        return on_error
    raise ValueError(f"on_error must be 'raise', 'skip' or a callable, not {on_error!r}")


def read_source(
    src: LineSource, parser: Any = ParserType.Auto, on_error: OnError = "raise", *, compacted: bool = False
) -> Iterator[ClassAd]:
    """Ads from an open :class:`LineSource` (the format detected when ``parser`` is Auto).
    ``compacted`` lets the old-format reader hand out ads already compacted
    (:meth:`ClassAd.compact`), for a caller that compacts every ad it keeps."""
    ptype = to_parser_type(parser)
    if ptype in (ParserType.Auto, ParserType.FileAuto):
        ptype = detect(src)
    if ptype == ParserType.Old:
        return old_format.iter_ads(src, error_handler(on_error), compacted=compacted)
    return _READERS[ptype](src, error_handler(on_error))


def parseAds(
    input: Any,
    parser: Any = ParserType.Auto,
    *,  # classad2 name
    on_error: OnError = "raise",
) -> Iterator[ClassAd]:
    """A generator of the ads in ``input`` (text, bytes, open file or path)."""
    handle = error_handler(on_error)
    ptype = to_parser_type(parser)
    src = open_source(input)

    def generate() -> Iterator[ClassAd]:
        with src:
            yield from read_source(src, ptype, handle)

    return generate()


def _is_ad_sequence(input: Any) -> bool:
    return (
        not isinstance(input, (str, bytes, bytearray, memoryview, os.PathLike))
        and not hasattr(input, "readline")
        and isinstance(input, Iterable)
    )


def parseOne(
    input: Any,
    parser: Any = ParserType.Auto,
    *,  # classad2 name
    on_error: OnError = "raise",
) -> ClassAd:
    """All ads in ``input`` merged into one (later attributes win).

    ``input`` may also be an iterable of strings, each holding one serialized ad.
    """
    result = ClassAd()
    pieces = input if _is_ad_sequence(input) else (input,)
    for piece in pieces:
        for ad in parseAds(piece, parser, on_error=on_error):
            for name, node in ad.node_items():
                result.set_node(name, node)
    return result


def parseNext(
    input: Any,
    parser: Any = ParserType.Auto,
    *,  # classad2 name
    on_error: OnError = "raise",
) -> Optional[ClassAd]:
    """The first ad of ``input``, or None if there is none.

    A seekable file is left positioned just after that ad, so calling again
    reads the next one.  Auto-detection needs to look ahead, so a stream that
    cannot seek needs an explicit ``parser`` (as in ``classad2``).
    """
    ptype = to_parser_type(parser)
    is_file = hasattr(input, "readline") and not isinstance(input, (str, bytes))
    if is_file and ptype in (ParserType.Auto, ParserType.FileAuto):
        try:
            seekable = input.seekable()
        except (AttributeError, OSError, ValueError):
            seekable = False
        if not seekable:
            raise ClassAdError("cannot look ahead in this stream; pass an explicit parser type")
    src = open_source(input, track=is_file)
    try:
        ad = next(read_source(src, ptype, on_error), None)
        if is_file and ad is not None:
            seek_after(input, src, *src.last_end)
        return ad
    finally:
        src.close()


# ---- writing -------------------------------------------------------------------------------

FORMATS = ("old", "new", "pretty", "json", "jsonl", "xml")


def format_ad(ad: ClassAd, fmt: str = "old") -> str:
    """One ad as ``classad2`` prints it: ``old`` (``printOld``), ``new`` (``repr``),
    ``pretty`` (``str``), ``json`` (``printJson``), ``jsonl`` (one-line JSON) or ``xml``."""
    if fmt == "old":
        return old_format.print_old(ad)
    if fmt == "new":
        return new_format.write_ad(ad)
    if fmt == "pretty":
        return new_format.write_ad_pretty(ad)
    if fmt == "json":
        return json_format.write_ad(ad)
    if fmt == "jsonl":
        return json_format.write_ad(ad, oneline=True)
    if fmt == "xml":
        return xml_format.write_ad(ad)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def write_ads(ads: Iterable[ClassAd], out: TextIO, fmt: str = "old", *, new_style: str = "lines") -> int:
    """Write a file of ads as HTCondor's tools do (attributes sorted case-insensitively).

    ``old``: ``condor_q -l``; ``new``: one ad per line (``new_style`` ``list`` gives
    the ``-long:new`` wrapper, ``pretty`` the indented form); ``pretty``; ``json``:
    ``condor_q -json``; ``jsonl``: one object per line; ``xml``: ``condor_q -xml``.
    Returns the number of ads written.
    """
    if fmt == "old":
        return old_format.write_ads(ads, out)
    if fmt == "new":
        return new_format.write_ads(ads, out, new_style)
    if fmt == "pretty":
        return new_format.write_ads(ads, out, "pretty")
    if fmt in ("json", "jsonl"):
        return json_format.write_ads(ads, out, lines=fmt == "jsonl")
    if fmt == "xml":
        return xml_format.write_ads(ads, out)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


# Pythonic spellings of the classad2 names.
parse_ads = parseAds
parse_one = parseOne
parse_next = parseNext

__all__ = [
    "ParserType",
    "Parser",
    "parseAds",
    "parseOne",
    "parseNext",
    "parse_ads",
    "parse_one",
    "parse_next",
    "read_source",
    "error_handler",
    "format_ad",
    "write_ads",
    "FORMATS",
    "FormatError",
    "LineSource",
    "open_source",
    "detect",
]
