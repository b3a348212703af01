"""The old ("long") ad format of ``condor_status -l`` and ``condor_q -l``.

One attribute per line, ``Name = value``; ads are separated by blank lines.  The
reader follows HTCondor's line reader: the name is the text before the first
``=`` (surrounding blanks trimmed), the value is the rest, parsed as a
new-syntax expression with *old* string lexing (a backslash is literal except
before ``"``, and a ``\\"`` that ends the line ends the string).  Lines whose
first non-blank character is ``#`` are comments, and so are lines that start with
``//`` or with a ``/* ... */`` block (which may span lines); a line of white space, or
a ``***`` banner as ``condor_history`` writes, ends an ad.

Most values in real dumps are plain numbers and strings, so those skip the
parser (a regular expression recognises them and builds the literal at once);
everything else goes through the cached expression parser, so identical text
is parsed once.  A broken line spoils its ad only: the reader reports it and
resumes after the next blank line.
"""

from __future__ import annotations

import re
import sys
from itertools import chain
from typing import Callable, Iterator, Optional

from .. import ast
from ..ad import ClassAd, lower_key
from ..bulk import CollectorPause
from ..errors import FormatError, ParseError
from ..layout import SharedAttrs, compact
from ..lexemes import to_int, to_real
from ..limits import LIMITS
from ..parser import fast_literal, parse_expr, parse_old_value
from ..printing.old_text import print_old, write_ad, write_ads
from ..unparse import quote_name, quote_string
from . import old_compact
from .names import check_name
from .old_compact import SIMPLE_VALUE as _SIMPLE_VALUE, Pieces, Ready, learn, read_compacted
from .sources import LineSource

ErrorHandler = Callable[[FormatError], None]


def _read_old_string(text: str, start: int, delim: str) -> Optional[tuple[str, int]]:
    """Decode an old-syntax string (or quoted name) opening at ``start``.

    Returns the value and the index after the closing quote, or None if the
    string is not closed.  ``\\"`` is a quote inside the string unless it is the
    last thing on the line, where it closes a string ending in a backslash.
    """
    parts = []
    j = start + 1
    while True:
        k = text.find(delim, j)
        if k < 0:
            return None
        if k > j and text[k - 1] == "\\":
            if k + 1 < len(text):
                parts.append(text[j : k - 1])
                parts.append(delim)
                j = k + 1
                continue
            parts.append(text[j:k])
            return "".join(parts), k + 1
        parts.append(text[j:k])
        return "".join(parts), k + 1


def old_to_new(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Rewrite the string literals of an old-syntax value in new syntax.

    Returns the new text and a list of ``(new offset, old offset)`` pairs, one per
    rewritten piece, to map parse-error columns back to the original line.
    """
    out: list[str] = []
    marks: list[tuple[int, int]] = [(0, 0)]
    size = 0
    i = last = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            break  # a comment runs to the end of the line; nothing more to rewrite
        if c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if c != '"' and c != "'":
            i += 1
            continue
        decoded = _read_old_string(text, i, c)
        if decoded is None:
            break  # unterminated: leave it for the parser to report
        value, after = decoded
        out.append(text[last:i])
        size += i - last
        marks.append((size, i))
        piece = quote_string(value) if c == '"' else quote_name(value)
        out.append(piece)
        size += len(piece)
        marks.append((size, after))
        i = last = after
    out.append(text[last:])
    return "".join(out), marks


def _map_column(marks: list[tuple[int, int]], column: int) -> int:
    """Map a 1-based column in rewritten text to the original text."""
    offset = column - 1
    new_start, old_start = 0, 0
    for new_pos, old_pos in marks:
        if new_pos > offset:
            break
        new_start, old_start = new_pos, old_pos
    return old_start + (offset - new_start) + 1


def parse_value(text: str, source: str, line: int, column: int) -> ast.Node:
    """Parse an old-format value that starts at ``column`` of ``line``."""
    node = fast_literal(text)
    if node is not None:
        return node
    marks = None
    try:
        if "\\" in text:
            new_text, marks = old_to_new(text)
            return parse_expr(new_text)
        return parse_old_value(text)
    except ParseError as exc:
        col = exc.column or 1
        if marks is not None:
            col = _map_column(marks, col)
        raise FormatError(exc.message, file=source, line=line, column=column + col - 1, context=exc.context) from None


_BLANKS = " \t\n\r\f\v"


# Name, "=", value: the common case in one match; anything odd goes to the slow path.
_LINE = re.compile(r"[ \t\n\r\f\v]*([^=]*?)[ \t]*= *(.*)", re.S)


# A whole raw line that is an identifier, " = " and an integer, a plain real or a string
# without escapes, ended by "\n": what fast_literal reads the same way in either string
# syntax.  Anything else (other spacing, "\r\n", escapes, exponents) takes the general path.
_SIMPLE_LINE = re.compile(
    r'([A-Za-z_][A-Za-z0-9_]*) = (?:(-?(?:0|[1-9][0-9]*))|(-?[0-9]+\.[0-9]+)|"([^"\\\n\0]*)")\n\Z'
)

_SPELLINGS: dict[str, str] = {}


def _name(text: str) -> str:
    """The attribute name; ``'odd name'`` (as ``printOld()`` quotes it) loses its quotes.
    One string per distinct spelling, shared by every ad that uses it."""
    if len(text) > 1 and text[0] == "'" and text[-1] == "'":
        text = text[1:-1].replace("\\'", "'")
    shared = _SPELLINGS.get(text)
    if shared is None:
        if len(_SPELLINGS) >= 100_000:
            return text
        shared = _SPELLINGS[text] = text
    return shared


# Whole lines repeat across the ads of a dump (MyType, Requirements, Arch, ...), so
# each distinct line is parsed once; the result is immutable and safe to share.
_LINE_CACHE: dict[str, tuple[str, ast.Node]] = {}
_LINE_CACHE_LIMIT = 200_000


# Raw lines (terminator included) -> (key, pair), for the reader's hot path: a line
# read before without error and outside a comment reads the same again.
_RAW_LINES: dict[str, tuple[str, tuple[str, ast.Node]]] = {}


# Lines remembered per attribute (lower-case name).  An attribute whose lines keep
# being new (QDate, GlobalJobId, LoadAvg: a value per ad) stops being remembered once
# it has this many: caching lines that never repeat would only hold their memory.
_LINES_PER_ATTRIBUTE = 256
_REMEMBERED: dict[str, int] = {}


def _admit(key: str) -> bool:
    """Whether one more distinct line of attribute ``key`` may be cached."""
    count = _REMEMBERED.get(key, 0)
    if count >= _LINES_PER_ATTRIBUTE:
        return False
    _REMEMBERED[key] = count + 1
    return True


# Lines of such attributes still repeat among neighbouring ads (a cluster's jobs share
# QDate, Iwd, UserLog...): the most recent ones are kept here, forgotten in bulk.
_RECENT: dict[str, tuple[str, tuple[str, ast.Node]]] = {}
_RECENT_LIMIT = 4096


# Literal values -> their node, whatever the attribute: "out.23", 17 or 4096 recur across
# attributes and ads (a ProcId, a file name, a size) long after their lines stopped
# being remembered, and one shared node costs nothing per ad.  Forgotten in bulk.
_VALUES: dict[str, ast.Node] = {}
_VALUES_LIMIT = 65536


def _reference_counts(table: dict) -> list[int]:
    return [sys.getrefcount(node) for node in table.values()]


# What _reference_counts says of a value that only its table holds.
_UNSHARED = _reference_counts({"": object()})[0]


def _thin_values() -> None:
    """Make room in :data:`_VALUES`: forget the values no ad shares any more, keep those
    that something besides this table holds (a shared template of compacted ads, the line
    caches, ads not yet compacted), so that a long dump keeps one node for a common value
    from its first ad to its last.  All are forgotten when too few can go."""
    keep = {text: node for (text, node), refs in zip(_VALUES.items(), _reference_counts(_VALUES)) if refs > _UNSHARED}
    _VALUES.clear()
    if len(keep) <= _VALUES_LIMIT // 2:
        _VALUES.update(keep)


def _clear_caches() -> None:
    _RAW_LINES.clear()
    _LINE_CACHE.clear()
    _REMEMBERED.clear()
    _RECENT.clear()


def forget_lines() -> None:
    """Drop every line and value remembered while reading (the ads read keep what they
    share); for a caller that has read a large dump and will read no more soon."""
    _clear_caches()
    _VALUES.clear()
    old_compact.forget()


def _remember(raw: str, key: str, pair: tuple[str, ast.Node]) -> None:
    if len(raw) > 4096:
        return
    if not _admit(key):
        if len(_RECENT) >= _RECENT_LIMIT:
            _RECENT.clear()
        _RECENT[raw] = (key, pair)
        return
    if len(_RAW_LINES) >= _LINE_CACHE_LIMIT:
        _clear_caches()
    _RAW_LINES[raw] = (key, pair)


def parse_line(text: str, source: str, line: int, cache: bool = True) -> tuple[str, ast.Node]:
    """``(name, node)`` from one ``Name = value`` line (its terminator removed).  With
    ``cache`` false the line is only looked up, not added (the reader adds its raw lines)."""
    hit = _LINE_CACHE.get(text)
    if hit is not None:
        return hit
    result = _parse_line(text, source, line)
    check_name(result[0], source, line, len(text) - len(text.lstrip(_BLANKS)) + 1)
    if not cache or len(text) > 4096:
        return result  # long lines rarely repeat; do not keep them alive
    if len(_LINE_CACHE) >= _LINE_CACHE_LIMIT:
        _clear_caches()
    _LINE_CACHE[text] = result
    return result


def _parse_line(text: str, source: str, line: int) -> tuple[str, ast.Node]:
    m = _LINE.match(text)
    if m is not None and m.group(1) and m.group(2):
        value = m.group(2)
        node = fast_literal(value)
        if node is not None:
            return _name(m.group(1)), node
        if value.strip(_BLANKS):
            return _name(m.group(1)), parse_value(value, source, line, m.start(2) + 1)
    return _parse_line_slowly(text, source, line)


def _parse_line_slowly(text: str, source: str, line: int) -> tuple[str, ast.Node]:
    start = len(text) - len(text.lstrip(_BLANKS))
    eq = text.find("=", start)
    if eq < 0:
        raise FormatError("expected 'Name = value'", file=source, line=line, column=start + 1)
    name = text[start:eq].rstrip(" \t")
    if not name:
        raise FormatError("missing attribute name before '='", file=source, line=line, column=eq + 1)
    value_start = eq + 1
    while value_start < len(text) and text[value_start] == " ":
        value_start += 1
    value = text[value_start:]
    if not value.strip(_BLANKS):
        raise FormatError(f"missing value after '{name} ='", file=source, line=line, column=eq + 2)
    return _name(name), parse_value(value, source, line, value_start + 1)


# An ad longer than this (characters) is read with the cyclic collector paused: the
# collector's walks over a growing heap would make reading one huge ad take more than
# linear time.  It is back on before each ad is handed out.  The rest of such an ad's
# lines and values are not remembered (its attribute names are its own).
_LARGE_AD = 1 << 18


# A literal made without the frozen dataclass's __init__ (one per new value read: the
# slot setters are what that __init__ calls, here called directly).
_new_literal = ast.Literal.__new__
_set_value = vars(ast.Literal)["value"].__set__
_set_fn = vars(ast.Node)["fn"].__set__  # the slot of the base class


# The parts of a simple line (what _SIMPLE_LINE matches), checked apart: the name once per
# distinct name (_SIMPLE_NAMES), the value once per distinct value text (_VALUES).
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Name as written -> (lower-case key, shared spelling), for names that are identifiers.
_SIMPLE_NAMES: dict[str, tuple[str, str]] = {}


def _simple_pair(text: str, large: bool) -> Optional[tuple[str, tuple[str, ast.Node]]]:
    """``(key, (name, node))`` of a new ``Name = 12`` / ``= 1.5`` / ``= "text"`` line, read as
    the general path reads it (see _SIMPLE_LINE) and remembered unless the line belongs to
    a ``large`` ad; None for any other line."""
    name, eq, rest = text.partition(" = ")
    if rest[-1:] != "\n":
        return None
    spelled = _SIMPLE_NAMES.get(name)
    if spelled is None:
        if not eq or _IDENTIFIER.fullmatch(name) is None:
            return None
        spelled = (lower_key(name), _SPELLINGS.get(name) or _name(name))
        if len(_SIMPLE_NAMES) < 100_000:
            _SIMPLE_NAMES[name] = spelled
    value_text = rest[:-1]
    node = _VALUES.get(value_text)
    if node is None:
        m = _SIMPLE_VALUE.fullmatch(value_text)
        if m is None:
            return None
        whole, real, string = m.groups()
        if string is not None:
            value: object = string
        elif whole is not None:
            value = int(whole) if len(whole) < 19 else to_int(whole)  # to_int: past int64
        else:
            value = to_real(real)
        node = _new_literal(ast.Literal)
        _set_value(node, value)
        _set_fn(node, None)
        if not large:
            if len(_VALUES) >= _VALUES_LIMIT:
                _thin_values()
            _VALUES[value_text] = node
    key = spelled[0]
    hit = (key, (spelled[1], node))
    if not large:  # a huge ad's lines are its own: not worth remembering
        if _REMEMBERED.get(key, 0) >= _LINES_PER_ATTRIBUTE and len(_RECENT) < _RECENT_LIMIT and len(text) <= 4096:
            _RECENT[text] = hit  # what _remember does for such a line, inline
        else:
            _remember(text, key, hit[1])
    return hit


def _known_pairs(lines: list[str]) -> Optional[list[tuple[str, tuple[str, ast.Node]]]]:
    """The ``(key, (name, node))`` of every line of ``lines`` (one ad's lines, no blank line
    among them) when each is a line read before or a simple one; None as soon as one is
    neither (a comment, an expression never seen, an error), for the general path."""
    pairs = list(map(_RAW_LINES.get, lines))
    if None not in pairs:
        return pairs  # type: ignore[return-value]
    recent = _RECENT.get
    k = -1
    for _ in range(pairs.count(None)):
        k = pairs.index(None, k + 1)
        text = lines[k]
        hit = recent(text) or _simple_pair(text, False)
        if hit is None:
            return None
        pairs[k] = hit
    return pairs  # type: ignore[return-value]


def iter_ads(src: LineSource, handle: ErrorHandler, *, compacted: bool = False) -> Iterator[ClassAd]:
    """Ads from old-format lines; bad lines go to ``handle`` and spoil only their ad.  With
    ``compacted``, ads read in one step are handed out compacted (:meth:`ClassAd.compact`),
    most of them read straight into that storage (:mod:`.old_compact`)."""
    pause = CollectorPause()
    try:
        yield from _iter_ads(src, handle, pause, compacted)
    finally:
        pause.give_back()


def _read_before(text: str) -> Optional[tuple[str, tuple[str, ast.Node]]]:
    """What a raw line read before gives (see _remember), or None."""
    return _RAW_LINES.get(text) or _RECENT.get(text)


def _compacted(seg: list[str], text: str, room: int) -> "Optional[dict | SharedAttrs]":
    """The storage of the ad of lines ``seg`` (``text`` is them and the blank line after
    them) no longer than ``room``, compacted: read by a model of its length (old_compact),
    else from its known or simple lines, compacted and kept as a model; None for an ad
    the general path must read (a line neither known nor simple, a repeated name)."""
    if len(text) - 1 > room:
        return None
    shared = read_compacted(seg, text, _read_before)
    if shared is not None:
        return shared
    pairs = _known_pairs(seg)
    if pairs is None:
        return None
    whole = dict(pairs)
    if len(whole) != len(seg):
        return None
    stored = compact(whole)
    learn(seg, stored)
    return stored


def _iter_ads(src: LineSource, handle: ErrorHandler, pause: CollectorPause, compacted: bool) -> Iterator[ClassAd]:
    attrs: dict[str, tuple[str, ast.Node]] = {}
    broken = False
    name_of = src.name
    comment_at: Optional[tuple[int, int]] = None  # where an open /* ... */ began
    size = 0
    max_ad = LIMITS.max_ad
    whole_ad = min(max_ad, _LARGE_AD)  # the longest ad the block path reads at once
    known, recent = _RAW_LINES.get, _RECENT.get
    first = 0  # line of the current ad's first attribute
    lineno = src.lineno  # of the line last read: counted here, given to src when needed
    carry: list[str] = []  # the start of an ad that a block cut, read with the next block
    # Compacted, from text: ads a model's shape reads come whole, the rest as lines.
    texts = src.texts() if compacted else None
    pieces = Pieces(texts, _read_before, whole_ad) if texts is not None else None
    for run in chain(src.runs() if pieces is None else pieces, (None,)):
        if run.__class__ is Ready:
            lineno += run.lines + 1  # (and the blank line after it)
            src.lineno, src.last_end, src.ad_start = lineno, (lineno + 1, 0), lineno - run.lines
            size = 0
            pause.give_back()
            yield ClassAd.adopt(run.attrs)  # type: ignore[union-attr]
            continue
        lines = carry + run if run is not None else carry  # type: ignore[operator]
        carry = []
        i, n = 0, len(lines)
        while i < n:
            stop = n
            if not attrs and not broken and comment_at is None and n > 1:
                # Between ads, in a block of lines: an ad whose lines are all known or simple
                # is read at once (its lines looked up at C speed, its dict built from them).
                try:
                    j = lines.index("\n", i)
                except ValueError:
                    if i and run is not None:
                        carry = lines[i:]
                        break
                else:
                    stop = j + 1
                    if j == i:  # a blank line between ads
                        lineno += 1
                        size = 0
                        i += 1
                        continue
                    seg = lines[i:j]
                    whole: "Optional[dict | SharedAttrs]" = None
                    if compacted:  # (the blank line after the ad goes with its text)
                        whole = _compacted(seg, "".join(lines[i:stop]), whole_ad - size)
                    else:
                        pairs = _known_pairs(seg)
                        if pairs is not None and size + sum(map(len, seg)) <= whole_ad:
                            whole = dict(pairs)
                            if len(whole) != j - i:  # a repeated name takes the general path
                                whole = None
                    if whole is not None:
                        lineno += stop - i
                        src.lineno, src.last_end, src.ad_start = lineno, (lineno + 1, 0), lineno - (j - i)
                        size = 0
                        i = stop
                        pause.give_back()
                        yield ClassAd.adopt(whole)  # type: ignore[arg-type]
                        continue
            elif n > 1:
                try:
                    stop = lines.index("\n", i) + 1
                except ValueError:
                    stop = n
            # The general path, a line at a time, to the end of the ad (or of the block).
            for text in lines[i:stop] if i or stop < n else lines:
                lineno += 1
                size += len(text)
                # A line seen before, read as it was then (see _remember), or a simple one.
                hit = known(text) or recent(text)
                if hit is None and comment_at is None and not broken and size <= max_ad:
                    large = size > _LARGE_AD
                    if large:
                        pause.take()
                    hit = _simple_pair(text, large)
                if hit is not None and comment_at is None and not broken and size <= max_ad:
                    key, pair = hit
                    if not attrs:
                        first = lineno
                    old = attrs.get(key)
                    attrs[key] = (old[0], pair[1]) if old else pair
                    continue
                if size > max_ad and not broken:
                    attrs, broken = {}, True
                    handle(FormatError(f"ad longer than {LIMITS.max_ad} characters", file=name_of, line=lineno))
                raw = text
                if text[-1:] == "\n":
                    text = text[:-2] if text[-2:] == "\r\n" else text[:-1]
                if comment_at is not None or text.lstrip(" \t").startswith("/"):
                    raw = ""  # the line is not read as it stands: never remember it
                    text, comment_at = _skip_comment(text, comment_at, lineno)
                    if not text:
                        continue
                # White space alone, or a condor_history "***" banner, ends the ad.
                if not text.strip(_BLANKS) or text.startswith("***"):
                    if attrs and not broken:
                        src.lineno, src.last_end, src.ad_start = lineno, (lineno + 1, 0), first
                        pause.give_back()
                        yield ClassAd.adopt(attrs)
                    attrs = {}
                    broken = False
                    size = 0
                    continue
                if broken or text.lstrip(" \t").startswith("#"):
                    continue
                if size > _LARGE_AD:
                    pause.take()
                try:
                    pair = parse_line(text, name_of, lineno, cache=not raw)
                except FormatError as exc:
                    attrs = {}
                    broken = True
                    handle(exc)
                    continue
                key = lower_key(pair[0])
                if raw and size <= _LARGE_AD:
                    _remember(raw, key, pair)
                if not attrs:
                    first = lineno
                old = attrs.get(key)
                # A repeated name: the last value wins, the first spelling stays.  Otherwise the
                # (cached) pair itself is kept, so a line repeated across ads is stored once.
                attrs[key] = (old[0], pair[1]) if old else pair
            i = stop
        if pieces is not None:
            pieces.between = not attrs and not broken and comment_at is None and not carry
    if comment_at is not None:
        handle(FormatError("unterminated /* comment", file=name_of, line=comment_at[0], column=comment_at[1]))
        broken = True
    if attrs and not broken:
        src.lineno, src.last_end, src.ad_start = lineno, (lineno + 1, 0), first
        pause.give_back()
        yield ClassAd.adopt(attrs)


def _skip_comment(text: str, open_at: Optional[tuple[int, int]], lineno: int) -> tuple[str, Optional[tuple[int, int]]]:
    """Drop whole-line comments: ``// ...`` and ``/* ... */`` starting a line (a block may
    span lines; blank lines inside it do not end the ad).  Returns the text left to read
    (empty for none) and where a still-open block began."""
    while True:
        if open_at is None:
            body = text.lstrip(" \t")
            if body.startswith("//"):
                return "", None
            if not body.startswith("/*"):
                return text, None
            open_at = (lineno, len(text) - len(body) + 1)
            text = body[2:]
        end = text.find("*/")
        if end < 0:
            return "", open_at
        text, open_at = text[end + 2 :], None
        if not text.strip(_BLANKS):
            return "", None


__all__ = ["forget_lines", "iter_ads", "parse_line", "parse_value", "old_to_new", "write_ad", "write_ads", "print_old"]
