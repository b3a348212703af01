"""Cutting a stream of bracketed records into one text per record.

New-syntax files hold ``[ ... ]`` ads and JSON files ``{ ... }`` objects,
concatenated, one per line, or inside a list (``{ [..], [..] }`` and
``[ {..}, {..} ]``).  :func:`split_records` reads lines and returns the text of
each top-level record with its position, without parsing it: the caller hands
each piece to the real parser.  Only the opening/closing pair is counted, and
string literals and comments are skipped, so a record never ends early.

A damaged record must not swallow the ones after it:

* a string literal that is not closed on its line is reported there (neither
  HTCondor's writers nor JSON ever put a raw newline inside a string), and
  reading resumes at the next line that starts a record;
* while a record is still open, a line that *starts* with the opening
  bracket, indented no deeper than the record's first line, after text that
  cannot continue (not ``=``, ``,``, ``(``, ``{``, an operator...), begins a
  new record; the open one is reported as not closed.

Outside records, white space, comments and the list punctuation are skipped;
anything else is reported once and skipped up to the next opening bracket.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, NamedTuple

from ..errors import FormatError
from ..limits import LIMITS
from .sources import LineSource

ErrorHandler = Callable[[FormatError], None]


class Syntax(NamedTuple):
    """How one format writes its records."""

    opener: str  # "[" for new-syntax ads, "{" for JSON objects
    closer: str
    separators: str  # list punctuation allowed between records
    quotes: str  # string delimiters ('"' and "'" for ClassAds, '"' for JSON)
    comments: bool  # C and C++ comments allowed
    continuation: str  # characters after which a line may open a nested record
    what: str  # "ad" or "object", for messages


NEW_SYNTAX = Syntax("[", "]", "{,}", "\"'", True, "=,({[?:+-*/%<>!&|^~", "ad")
JSON_SYNTAX = Syntax("{", "}", "[,]", '"', False, ":,[{", "object")


class Record(NamedTuple):
    """The text of one record and where it starts (1-based line and column)."""

    text: str
    line: int
    column: int
    end_line: int
    end_column: int  # characters of ``end_line`` up to and including the closer


_NON_BLANK = re.compile(r"[^ \t\n\r\f\v]")
_STRING_TAIL = {
    '"': re.compile(r'(?:[^"\\\n]|\\.)*"'),
    "'": re.compile(r"(?:[^'\\\n]|\\.)*'"),
}


_OPEN = "([{"
_CLOSE = ")]}"


def _skipper(syn: Syntax) -> re.Pattern:
    """A pattern that matches, from a position inside a record, everything up to the next
    character the splitter must look at: a bracket, the quote of a string not closed on
    its line, or a comment.  Closed strings (and, where comments exist, a ``/`` that does
    not start one) are passed over whole, in one call, however many the line holds."""
    chars = _OPEN + _CLOSE + syn.quotes + ("/" if syn.comments else "")
    parts = ["[^" + re.escape(chars) + "]++"]
    parts += [f"{re.escape(q)}(?:[^{re.escape(q)}\\\\\n]|\\\\.)*+{re.escape(q)}" for q in syn.quotes]
    if syn.comments:
        parts.append("/(?![/*])")
    return re.compile("(?:" + "|".join(parts) + ")*+")


def _last_significant(text: str) -> str:
    text = text.rstrip(" \t\n\r\f\v")
    return text[-1:] if text else ""


def split_records(src: LineSource, syn: Syntax, handle: ErrorHandler) -> Iterator[Record]:
    """Yield the text of each top-level record of ``src``; report damage to ``handle``."""
    name = src.name
    skip = _skipper(syn).match
    opener, closer = syn.opener, syn.closer
    depth = 0
    pieces: list[str] = []
    start = (0, 0)
    indent = 0
    last_sig = ""
    inner: list[str] = []  # open brackets of every kind inside the record, innermost last
    in_comment = False
    junk = False
    recovering = False  # after an unterminated string: skip to the next record start
    size = 0  # characters of the open record so far

    def fail(message: str, line: int, column: int) -> None:
        handle(FormatError(message, file=name, line=line, column=column))

    for line in src:
        lineno = src.lineno
        n = len(line)
        pos = 0
        seg = 0  # where this line's part of the open record starts
        if recovering:
            m = _NON_BLANK.search(line)
            if m is None or line[m.start()] != opener or m.start() > indent:
                continue
            recovering = False
        if depth and not in_comment:
            m = _NON_BLANK.search(line)
            # After ',' directly inside the record itself (not a list or call), a
            # nested record cannot follow either: ``{"a": 1,`` then ``{"b": 2}``.
            cannot_continue = last_sig not in syn.continuation or (last_sig == "," and inner[-1:] == [opener])
            if m is not None and line[m.start()] == opener and m.start() <= indent and cannot_continue:
                fail(f"{syn.what} opened here is not closed before line {lineno}", *start)
                depth, pieces = 0, []
        while pos < n:
            if in_comment:
                end = line.find("*/", pos)
                if end < 0:
                    pos = n
                    break
                pos, in_comment = end + 2, False
                continue
            if not depth:
                m = _NON_BLANK.search(line, pos)
                if m is None:
                    break
                pos = m.start()
                c = line[pos]
                if c == opener:
                    depth, junk, last_sig, inner = 1, False, c, [c]
                    start, seg = (lineno, pos + 1), pos
                    first = _NON_BLANK.search(line)  # never None: position pos is not blank
                    indent = first.start() if first is not None else pos
                    pos += 1
                elif syn.comments and c == "/" and line.startswith("//", pos):
                    break
                elif syn.comments and c == "/" and line.startswith("/*", pos):
                    in_comment, pos = True, pos + 2
                elif junk:
                    nxt = line.find(opener, pos)
                    pos = n if nxt < 0 else nxt
                elif c in syn.separators:
                    pos += 1
                else:
                    snippet = line[pos : pos + 20].rstrip("\n")
                    fail(f"unexpected {snippet!r} where an {syn.what} should start", lineno, pos + 1)
                    junk = True
                continue
            i = skip(line, pos).end()  # type: ignore[union-attr]  # (the pattern matches empty text)
            if i > pos:
                last_sig = _last_significant(line[pos:i]) or last_sig
            if i >= n:
                pos = n
                break
            c = line[i]
            if c in _OPEN:
                inner.append(c)
                if c == opener:
                    depth += 1
                last_sig, pos = c, i + 1
            elif c in _CLOSE:
                if inner:
                    inner.pop()
                last_sig, pos = c, i + 1
                if c == closer:
                    depth -= 1
                if not depth:
                    pieces.append(line[seg:pos])
                    yield Record("".join(pieces), start[0], start[1], lineno, pos)
                    pieces = []
            elif c in syn.quotes:
                tail = _STRING_TAIL[c].match(line, i + 1)
                if tail is None:
                    kind = "string" if c == '"' else "quoted name"
                    fail(f"unterminated {kind} (strings cannot span lines in an ad file)", lineno, i + 1)
                    depth, pieces, pos, recovering = 0, [], n, True
                    break
                last_sig, pos = c, tail.end()
            elif line.startswith("//", i):
                pos = n
            elif line.startswith("/*", i):
                in_comment, pos = True, i + 2
            else:
                last_sig, pos = c, i + 1
        if depth:
            pieces.append(line[seg:])
            size = size + n - seg if len(pieces) > 1 else n - seg
            if size > LIMITS.max_ad:
                fail(f"{syn.what} opened here is longer than {LIMITS.max_ad} characters", *start)
                depth, pieces, recovering = 0, [], True
    if depth:
        fail(f"{syn.what} opened here is never closed (missing {closer!r})", *start)
    elif in_comment:
        fail("unterminated comment at the end of the input", src.lineno, 1)
