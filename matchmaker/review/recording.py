"""A configuration table that remembers every assignment, and where text sits in a file.

:class:`RecordingConfig` is the configuration language's table
(:class:`~matchmaker.config.language.Config`) with one addition: every live assignment
(``=``, ``+=``, ``@=``, ``use FEATURE`` knobs) is kept in :attr:`assignments` in the
order read, with the text as written, so lint can see definitions that a later one
replaced.  :class:`SourceText` finds the column of a piece of text on a line of a file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Optional

from classad.formats.sources import GZIP_MAGIC

from ..config.knobs import DEFAULTS, Knobs
from ..config.language import ENVIRONMENT, SUBSYSTEMS, Config, read_bounded


@dataclass(frozen=True)
class Assignment:
    """One assignment as read: the name, the value as written, where, and whether it
    builds on the previous value (``+=``, or a reference to its own name)."""

    name: str
    written: str
    file: str
    line: Optional[int]
    builds_on_previous: bool

    @property
    def key(self) -> str:
        """The name without a subsystem prefix, upper case (``NEGOTIATOR.X`` -> ``X``)."""
        head, dot, rest = self.name.upper().partition(".")
        return rest if dot and head in SUBSYSTEMS else self.name.upper()


class RecordingConfig(Config):
    """:class:`Config` that keeps every assignment in :attr:`assignments`."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.assignments: list[Assignment] = []
        self._written: Optional[str] = None

    def define(self, name: str, value: str, file: str, line: Optional[int]) -> None:
        self._written = value
        try:
            super().define(name, value, file, line)
        finally:
            self._written = None

    def _set(self, name: str, raw: str, file: str, line: Optional[int]) -> None:
        written = self._written
        if file != ENVIRONMENT:
            builds = written is None or _refers_to(written, name)
            if written is None:  # ``+=``: the text added to the previous value
                old = self._table.get(name.upper())
                written = raw[len(old.value) :] if old is not None and raw.startswith(old.value) else raw
            self.assignments.append(Assignment(name, written, file, line, builds))
        super()._set(name, raw, file, line)


def _refers_to(text: str, name: str) -> bool:
    names = {name.upper()}
    head, dot, rest = name.upper().partition(".")
    if dot and head in SUBSYSTEMS:
        names.add(rest)
    return any(m.group(1).upper() in names for m in MACRO_RE.finditer(text))


# $(NAME) and $(NAME:default); not $$(NAME), which is expanded at match time.
MACRO_RE = re.compile(r"(?<!\$)\$\(([A-Za-z0-9_.]+)(:[^)]*)?\)")


def recorded_knobs(path: str, environ: Optional[dict[str, str]] = None) -> tuple[Knobs, RecordingConfig]:
    """The knobs of the file at ``path`` over a recording table (``ConfigError`` when the
    file cannot be read or holds a statement error)."""
    cfg = RecordingConfig(environ=environ, defaults=DEFAULTS)
    cfg.read_file(path)
    cfg.apply_environment()
    return Knobs(cfg), cfg


def _gzipped(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == GZIP_MAGIC
    except OSError:
        return False


class SourceText:
    """The lines of files, read once, for finding columns."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}

    def lines(self, file: str) -> list[str]:
        if file not in self._lines:
            self._lines[file] = []  # a file gone since, not a regular file, or gzipped: no columns
            if os.path.isfile(file) and not _gzipped(file):  # a pipe cannot be read a second time
                try:
                    self._lines[file] = read_bounded(file, "file").splitlines()
                except Exception:
                    pass
        return self._lines[file]

    def line_text(self, file: str, line: Optional[int]) -> str:
        lines = self.lines(file)
        return lines[line - 1] if line is not None and 0 < line <= len(lines) else ""

    def locate(
        self, file: str, line: Optional[int], needle: str, *, word: bool = True, span: int = 1, after: int = 0
    ) -> Optional[tuple[int, int]]:
        """(line, column) of ``needle`` (case ignored; as a whole word when ``word``) on
        ``line`` or the ``span - 1`` lines after it, searching each line from column
        ``after`` + 1; None when it is not there."""
        start = line or 1
        pattern = re.compile((r"(?<!\w)" if word else "") + re.escape(needle) + (r"(?!\w)" if word else ""), re.I)
        lines = self.lines(file)
        for n in range(start, min(start + span, len(lines) + 1)):
            m = pattern.search(lines[n - 1], after if n == start else 0)
            if m:
                return n, m.start() + 1
        return None

    def find(
        self, file: str, line: Optional[int], needle: str, *, word: bool = True, span: int = 1, after: int = 0
    ) -> tuple[int, int]:
        """:meth:`locate`, or ``(line, 1)`` when ``needle`` is not there."""
        return self.locate(file, line, needle, word=word, span=span, after=after) or (line or 1, 1)

    def attribute_line(self, file: str, line: Optional[int], attribute: str, span: int = 5000) -> Optional[int]:
        """The first line from ``line`` on that assigns ``attribute`` (``Name = ...``,
        ``"Name": ...``), or None."""
        pattern = re.compile(r'\s*"?' + re.escape(attribute) + r'"?\s*[=:]', re.I)
        lines = self.lines(file)
        start = line or 1
        for n in range(start, min(start + span, len(lines) + 1)):
            if pattern.match(lines[n - 1]):
                return n
        return None

    def value_column(self, file: str, line: Optional[int]) -> int:
        """The column where the value of ``NAME = value`` on ``line`` begins (1 if unknown)."""
        text = self.line_text(file, line)
        m = re.match(r"\s*[^=:]*?\s*(?:\+[,;|&*]{0,2}=|@=|=|:)\s*", text)
        return m.end() + 1 if m else 1


__all__ = ["MACRO_RE", "Assignment", "RecordingConfig", "SourceText", "recorded_knobs"]
