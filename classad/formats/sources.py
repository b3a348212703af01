"""Where ad text comes from: strings, bytes, files, paths, as numbered lines.

Every reader consumes a :class:`LineSource`.  It hands out one line at a time
(terminator included, as ``file.readline`` does), or a file's lines a 64 KiB block
at a time (:meth:`LineSource.runs`), so a reader never holds more than the ad it is
building and a block: a multi-gigabyte ``condor_q -l`` dump streams in flat memory.  Bytes are decoded as UTF-8 with ``surrogateescape``, the same
convention the language uses for its byte strings, so invalid UTF-8 survives a
round trip instead of stopping the read.  Lines end at ``\\n`` only; a ``\\r``
is left for the format reader to judge (old-format files may hold raw ``\\r``
inside string values).  A line longer than ``max_line`` of
:mod:`classad.limits` raises :class:`~classad.errors.FormatError` (file and
line) before more of it is read, so endless input such as ``/dev/zero``
cannot exhaust memory.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import sys
import zlib
from itertools import chain
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

from ..errors import FormatError
from ..limits import LIMITS

_T = TypeVar("_T")

ENCODING = "utf-8"
ERRORS = "surrogateescape"


def _too_long(name: str, line: int, limit: int) -> FormatError:
    return FormatError(
        f"line longer than {limit} characters (is this an ad file?)", file=name, line=line, column=limit + 1
    )


def _split_chunks(chunks: Iterable[Any], name: str = "<string>") -> Iterator[str]:
    """Lines from text (or bytes) pieces of any size, split at ``\\n``."""
    limit = LIMITS.max_line
    count = 0
    for line in _split_unbounded(chunks, name, limit):
        count += 1
        if len(line) > limit:
            raise _too_long(name, count, limit)
        yield line


def _split_unbounded(chunks: Iterable[Any], name: str, limit: int) -> Iterator[str]:
    partial = ""
    for chunk in chunks:
        if isinstance(chunk, (bytes, bytearray)):
            chunk = bytes(chunk).decode(ENCODING, ERRORS)
        elif not isinstance(chunk, str):
            raise TypeError(f"expected text, got {type(chunk).__name__}")
        if not chunk:
            continue
        start = 0
        if partial:
            end = chunk.find("\n")
            if end < 0:
                partial += chunk
                if len(partial) > limit:
                    yield partial  # the caller refuses it; nothing more is gathered
                    return
                continue
            yield partial + chunk[: end + 1]
            partial = ""
            start = end + 1
        while True:
            end = chunk.find("\n", start)
            if end < 0:
                partial = chunk[start:]
                if len(partial) > limit:
                    yield partial
                    return
                break
            yield chunk[start : end + 1]
            start = end + 1
    if partial:
        yield partial


class LineSource:
    """Numbered lines of one input, with push-back for format detection.

    ``lineno`` is the number of the line last returned.  Given ``tell``, the
    file position before each line is remembered (for ``parseNext``, which
    must leave a file just after the ad it read).  :meth:`push_back` is for
    looking ahead before reading starts, not during iteration.
    """

    def __init__(
        self,
        lines: Iterator[str],
        name: str,
        closer: Optional[Callable[[], None]] = None,
        tell: Optional[Callable[[], Any]] = None,
    ) -> None:
        self._blocks: Optional[Iterator[list[str]]] = None
        self._texts: Optional[_Blocks] = None  # the text the blocks are cut from
        self._rest: list[str] = []  # the unread lines of a block readline() began, last first
        self.name = name
        self.lineno = 0
        # (line, column) just after the last ad a reader returned; column 0 = line start
        self.last_end: tuple[int, int] = (1, 0)
        self._lines = lines
        self._pending: list[str] = []
        self._closer = closer
        self._tell = tell
        # line number -> (file position before the line, the line), when tracking
        self.positions: dict[int, tuple] = {}
        # the first line of the last ad a reader returned, where the reader records it
        self.ad_start = 0

    @classmethod
    def of_file(cls, f: Any, name: str, closer: Optional[Callable[[], None]] = None) -> "LineSource":
        """A source over a text file read in blocks (:func:`line_blocks`); :meth:`texts` can
        hand out the blocks still to read as text instead."""
        blocks = _Blocks(f, name)
        src = cls.of_blocks(_readable(blocks.lines(), name), name, closer)
        src._texts = blocks
        return src

    @classmethod
    def of_blocks(
        cls, blocks: Iterator[list[str]], name: str, closer: Optional[Callable[[], None]] = None
    ) -> "LineSource":
        """A source over lines that come in lists (:func:`line_blocks`): iterating it then
        walks each list instead of resuming a generator per line."""
        src = cls(iter(()), name, closer)
        src._blocks = blocks
        return src

    def _next_line(self) -> Optional[str]:
        if self._blocks is None:
            return next(self._lines, None)
        while not self._rest:
            block = next(self._blocks, None)
            if block is None:
                return None
            self._rest = block[::-1]
        return self._rest.pop()

    def readline(self) -> Optional[str]:
        """The next line (with its ``\\n``), or None at the end of the input."""
        line: Optional[str]
        if self._pending:
            line = self._pending.pop()
        else:
            cookie = self._tell() if self._tell is not None else None
            line = self._next_line()
            if line is None:
                return None
            if cookie is not None:
                self.positions[self.lineno + 1] = (cookie, line)
        self.lineno += 1
        return line

    def push_back(self, line: str) -> None:
        """Return ``line`` to the source; the next :meth:`readline` gives it again."""
        self._pending.append(line)
        self.lineno -= 1

    def __iter__(self) -> Iterator[str]:
        # Pushed-back lines first; then, unless positions are tracked, the lines
        # themselves without a method call per line (this loop is the hot path).
        while self._pending:
            self.lineno += 1
            yield self._pending.pop()
        if self._tell is not None:
            while True:
                line = self.readline()
                if line is None:
                    return
                yield line
        if self._blocks is not None:
            while self._rest:
                self.lineno += 1
                yield self._rest.pop()
            for block in self._blocks:
                for line in block:
                    self.lineno += 1
                    yield line
            return
        for line in self._lines:
            self.lineno += 1
            yield line

    def runs(self) -> Iterator[list[str]]:
        """Every line still to read, in lists: pushed-back lines, then each block of a
        block source (:meth:`of_blocks`); one line per list from other sources and when
        positions are tracked.  For a reader that walks many lines per step and counts
        them itself; after each list ``lineno`` counts the lines handed out so far."""
        if self._blocks is None or self._tell is not None:
            for line in self:
                yield [line]
            return
        pending: list[list[str]] = []
        if self._pending:
            pending.append(self._pending[::-1])
            self._pending = []
        if self._rest:
            pending.append(self._rest[::-1])
            self._rest = []
        for run in chain(pending, self._blocks):
            start = self.lineno
            yield run
            self.lineno = start + len(run)

    def texts(self) -> Optional[Iterator[str]]:
        """Everything still to read as text in pieces, each but the last ended by ``\\n``
        (pushed-back lines first), for a source made by :meth:`of_texts` whose positions
        are not tracked; None for any other source (read it by :meth:`runs`).  After each
        piece ``lineno`` counts the lines handed out so far."""
        if self._texts is None or self._tell is not None:
            return None
        return self._text_pieces(self._texts)

    def _text_pieces(self, blocks: "_Blocks") -> Iterator[str]:
        head = self._pending[::-1] + self._rest[::-1]
        self._pending, self._rest = [], []
        if head:
            start = self.lineno
            yield "".join(head)
            self.lineno = start + len(head)
        offset = self.lineno - blocks.count  # lines handed out besides the blocks' (none from a file)
        for text in _readable(blocks.texts(), self.name):
            yield text
            self.lineno = blocks.count + offset

    def close(self) -> None:
        """Close the underlying file if this source opened it."""
        if self._closer is not None:
            closer, self._closer = self._closer, None
            closer()

    def __enter__(self) -> "LineSource":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _file_lines(f: Any, name: str = "<stream>") -> Iterator[str]:
    """Lines of a file object, decoding bytes; uses ``readline`` so ``tell`` stays valid.

    Each read is capped just past the line limit, so a file without newlines
    is refused after ``max_line`` characters instead of being read whole (when
    ``readline`` takes a size, as every file object of :mod:`io` does).
    """
    readline = f.readline
    limit = LIMITS.max_line
    count = 0
    sized = True
    while True:
        if sized:
            try:
                line = readline(limit + 1)
            except TypeError:  # a file-like object whose readline takes no size
                sized = False
                line = readline()
        else:
            line = readline()
        if not line:
            return
        count += 1
        if len(line) > limit:
            raise _too_long(name, count, limit)
        if isinstance(line, (bytes, bytearray)):
            line = bytes(line).decode(ENCODING, ERRORS)
        yield line


_BLOCK = 1 << 16


# Characters str.splitlines() breaks at besides "\n": a block holding none of them can be
# split by it (at C speed) into exactly the lines a split at "\n" gives.
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_ASCII_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e"  # the ones an ASCII text can hold


def _splits_at_newlines_only(body: str) -> bool:
    """Whether ``body.splitlines()`` breaks only at ``\n``.  For ASCII text (nearly every
    ad file) a substring test per character, several times faster than the pattern."""
    if body.isascii():
        return not any(c in body for c in _ASCII_BREAKS)
    return _OTHER_BREAKS.search(body) is None


def lines_of(text: str) -> list[str]:
    """The lines of ``text`` split at ``\n`` only, each ended by it but a last one without."""
    if text.endswith("\n") and _splits_at_newlines_only(text):
        return text.splitlines(True)
    return list(_split_unbounded((text,), "", len(text)))


def block_lines(f: Any, name: str) -> Iterator[str]:
    """Lines of a text file read in blocks of 64 KiB: the same lines as
    :func:`_file_lines` (split at ``\n`` only, each at most ``max_line`` characters),
    with the splitting done a block at a time."""
    return chain.from_iterable(line_blocks(f, name))


def line_blocks(f: Any, name: str) -> Iterator[list[str]]:
    """The lines of :func:`block_lines`, one list per 64 KiB block read."""
    return _Blocks(f, name).lines()


def text_blocks(f: Any, name: str) -> Iterator[str]:
    """The text of :func:`block_lines` a 64 KiB block at a time, each block cut after its
    last ``\n`` (the rest goes with the next); the end of a text without a last ``\n``
    comes alone."""
    return _Blocks(f, name).texts()


class _Blocks:
    """A text file cut into blocks that end at a ``\n`` (the rest goes with the next block),
    handed out as lists of lines (:meth:`lines`) or as text (:meth:`texts`), one way after
    the other if need be; ``count`` is the number of lines in the blocks handed out.  A
    line longer than ``max_line`` raises FormatError (file and line) before more of it
    is read."""

    def __init__(self, f: Any, name: str) -> None:
        self.f, self.name = f, name
        self.count = 0
        self.partial = ""
        self.limit = LIMITS.max_line

    def _body(self) -> Optional[str]:
        """The next block, or the end of the text without a ``\n``; None at the end."""
        limit = self.limit
        while True:
            if len(self.partial) > limit:
                raise _too_long(self.name, self.count + 1, limit)
            chunk = self.f.read(_BLOCK)
            if not chunk:
                partial, self.partial = self.partial, ""
                return partial or None
            if self.partial:
                chunk = self.partial + chunk
            cut = chunk.rfind("\n") + 1
            body, self.partial = chunk[:cut], chunk[cut:]
            if body:
                return body

    def _check(self, body: str, lines: list[str]) -> None:
        if len(body) > self.limit and max(map(len, lines)) > self.limit:
            first = next(i for i, line in enumerate(lines) if len(line) > self.limit)
            raise _too_long(self.name, self.count + first + 1, self.limit)

    def lines(self) -> Iterator[list[str]]:
        """The blocks' lines, a list per block."""
        while True:
            body = self._body()
            if body is None:
                return
            lines = lines_of(body)
            self._check(body, lines)
            self.count += len(lines)
            yield lines

    def texts(self) -> Iterator[str]:
        """The blocks' text."""
        while True:
            body = self._body()
            if body is None:
                return
            if len(body) > self.limit:
                self._check(body, lines_of(body))
            self.count += body.count("\n") + (not body.endswith("\n"))
            yield body


def open_text(path: Any) -> io.TextIOWrapper:
    """A file opened for ad reading: UTF-8 with surrogate escapes, lines split at ``\\n`` only."""
    return open(path, encoding=ENCODING, errors=ERRORS, newline="\n")


# The first two bytes of every gzip member.
GZIP_MAGIC = b"\x1f\x8b"


class _Rejoined(io.RawIOBase):
    """A binary stream whose first bytes were already read (to look at them): they are
    given again before the rest.  Closing it leaves the underlying stream open."""

    def __init__(self, head: bytes, rest: Any) -> None:
        super().__init__()
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            count = min(len(buffer), len(self._head))
            buffer[:count] = self._head[:count]
            self._head = self._head[count:]
            return count
        read = getattr(self._rest, "read1", None) or self._rest.read  # what is there, not a whole block
        data = read(len(buffer))
        if data is None:  # a non-blocking stream with nothing yet
            return 0
        buffer[: len(data)] = data
        return len(data)


def _look_ahead(binary: Any) -> tuple[bytes, Any]:
    """The first two bytes of ``binary`` and a stream that still gives them, without seeking."""
    peek = getattr(binary, "peek", None)
    if peek is not None:
        try:
            head = peek(2)[:2]
        except (OSError, ValueError):
            head = b""
        if len(head) == 2:
            return head, binary
    head = b""
    while len(head) < 2:
        more = binary.read(2 - len(head))
        if not more:
            break
        head += more
    return head, io.BufferedReader(_Rejoined(head, binary), _BLOCK)


def decoded(binary: Any, name: str) -> io.TextIOWrapper:
    """The text of a binary stream, gunzipped when it starts with the gzip magic bytes
    (whatever its name), decoded as UTF-8 with surrogate escapes; nothing is seeked."""
    head, binary = _look_ahead(binary)
    if head == GZIP_MAGIC:
        binary = gzip.GzipFile(fileobj=binary, mode="rb", filename=name)
    return io.TextIOWrapper(binary, encoding=ENCODING, errors=ERRORS, newline="\n")


def _readable(items: Iterator[_T], name: str) -> Iterator[_T]:
    """``items``, with a damaged gzip stream or a failing read reported as a FormatError."""
    try:
        yield from items
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise FormatError(f"damaged gzip data: {exc}", file=name) from None
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", file=name) from None


def _unowned(stream: Any) -> Any:
    """``stream`` behind a layer whose closing (or collection) leaves it open."""
    return io.BufferedReader(_Rejoined(b"", stream), _BLOCK)


STDIN_NAME = "<stdin>"


def open_input(input: Any, name: Optional[str] = None) -> LineSource:
    """A :class:`LineSource` over an ad file wherever it is: a path (``str`` or path-like;
    ``"-"`` is standard input), a pipe or FIFO (``<(condor_q -json)``), or an open file
    object (binary or text).  Gzipped input is recognised by its magic bytes.  The input
    is read once, front to back, a block at a time: it is never seeked or reopened, so
    pipes work, and memory stays bounded whatever its length.  Files this opens are
    closed with the source; standard input and file objects passed in are left open."""
    if isinstance(input, (str, os.PathLike)):
        path = os.fspath(input)
        if isinstance(path, str) and path == "-":
            stdin = sys.stdin
            return open_input(getattr(stdin, "buffer", stdin), name or STDIN_NAME)
        label = name or (path if isinstance(path, str) else repr(path))
        binary = open(path, "rb")  # closed by LineSource.close
        try:
            text = decoded(binary, label)
        except BaseException:
            binary.close()
            raise
        return LineSource.of_file(text, label, closer=text.close)
    label = name or source_name(input)
    if not hasattr(input, "read"):
        return open_source(input, label)
    if isinstance(input, io.TextIOBase) or isinstance(getattr(input, "encoding", None), str):
        return LineSource(_file_lines(input, label), label)
    text = decoded(_unowned(input), label)
    return LineSource.of_file(text, label)


def source_name(input: Any) -> str:
    """The name used for ``input`` in error messages."""
    if isinstance(input, (str, bytes, bytearray)):
        return "<string>"
    if isinstance(input, os.PathLike):
        return os.fspath(input) if isinstance(os.fspath(input), str) else repr(input)
    name = getattr(input, "name", None)
    if isinstance(name, str) and name:
        return name
    return "<stream>"


def open_source(input: Any, name: Optional[str] = None, track: bool = False) -> LineSource:
    """A :class:`LineSource` for a string, bytes, path, file object or iterable of strings.

    A ``str`` is ad text (as in ``classad2``); use a :class:`pathlib.Path` for a
    file name.  Paths and file objects are read by :func:`open_input` (gzip recognised,
    never seeked) unless ``track`` asks for the file positions of each line (``parseNext``).
    """
    label = name or source_name(input)
    if isinstance(input, str):  # in memory already: read in blocks, as a file is
        return LineSource.of_file(io.StringIO(input, newline=""), label)
    if isinstance(input, (bytes, bytearray, memoryview)):
        return LineSource(_split_chunks((bytes(input),), label), label)
    if isinstance(input, os.PathLike):
        return open_input(input, label)
    if track and hasattr(input, "readline"):
        tell = None
        try:
            if input.seekable():
                tell = input.tell
        except (AttributeError, OSError, ValueError):
            tell = None
        return LineSource(_file_lines(input, label), label, tell=tell)
    if hasattr(input, "read"):
        return open_input(input, label)
    if hasattr(input, "readline"):
        return LineSource(_file_lines(input, label), label)
    if isinstance(input, Iterable):
        return LineSource(_split_chunks(input, label), label)
    raise TypeError(
        f"cannot read ads from {type(input).__name__}; pass a string, bytes, a file object or a pathlib.Path"
    )


def seek_after(input: Any, src: LineSource, line: int, column: int) -> None:
    """Leave file ``input`` positioned just after ``column`` characters of ``line``.

    ``column`` 0 means the start of ``line``.  Only possible when positions were
    tracked (a seekable file); otherwise the file stays where reading stopped.
    """
    entry = src.positions.get(line)
    if entry is None:
        return
    cookie, text = entry
    try:
        input.seek(cookie)
        if column:
            prefix = text[:column]
            if isinstance(input, io.TextIOBase):
                input.read(len(prefix))
            else:
                input.read(len(prefix.encode(ENCODING, ERRORS)))
    except (OSError, ValueError):
        pass
