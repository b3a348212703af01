"""The HTCondor configuration language, as much of it as a negotiator needs (docs/knobs.md, the configuration language).

Design: a file is read once, statement by statement (the statements are
:mod:`matchmaker.config.statements`'s), into this module's table of raw definitions
(name -> unexpanded text plus the file and line that set it).
``$(NAME)`` references are expanded only when a value is looked up, so a later
redefinition of a referenced macro is seen, as in HTCondor.  Two things happen
while reading, because HTCondor does them then: a self-reference
(``A = $(A) x``, ``A += x``) is replaced at once by the previous raw value, and
``if`` conditions are evaluated against the table as it stands at that line.

Lookup follows one daemon's view (the subsystem, ``NEGOTIATOR`` by default):
``NEGOTIATOR.X`` wins over ``X``; other daemons' prefixed names are stored
under their full dotted name and never found by a plain lookup.  Environment
variables ``_CONDOR_NAME`` (prefix in any case) override file definitions.

Supported: ``=`` (and the obsolete ``:``), ``+=`` with an optional separator
(``+,=``; doubled ``+&&=`` inserts `` && ``), ``@=tag`` blocks, backslash
continuation (a comment line inside a continuation is dropped, docs/knobs.md, the configuration language),
``include [ifexist] : file`` and ``@include``, ``if/elif/else/endif``,
``error :`` and ``warning :``, ``$(NAME)``, ``$(NAME:default)``, ``$ENV(V[:d])``,
and ``$INT``/``$REAL`` of a plain number.

Not supported, each raising :class:`ConfigError`: command includes
(``include : cmd |``), ``use POLICY : ...`` (policy templates change
negotiator knobs, so ignoring them would silently change matchmaking), and
the other ``$FUNC(...)`` helpers.  ``use ROLE/FEATURE/SECURITY : ...`` only
configure daemons' plumbing, so they are ignored and a warning is recorded --
except ``use FEATURE : AssignAccountingGroup(map [, check_request])``, the
schedd-side template that maps users to accounting groups, which sets the
matchmaker's map-file knobs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ..errors import ConfigError
from .statements import ENVIRONMENT, MAX_INCLUDE_DEPTH, NAME_RE as _NAME_RE, Definition, Reader

# The HTCondor version ``if version ...`` compares against: the release of the
# reference wheel the differential tests run, so both agree on conditionals.
EMULATED_VERSION = (25, 14, 1)

# Daemon names whose ``NAME.X`` definitions are per-daemon overrides.  Needed to
# tell ``NEGOTIATOR.X = $(X) y`` (a self-reference) from a dotted group knob.
SUBSYSTEMS = frozenset("""MASTER COLLECTOR NEGOTIATOR SCHEDD STARTD STARTER SHADOW
    SUBMIT TOOL GRIDMANAGER CREDD DEFRAG GANGLIAD HAD REPLICATION KBDD ROOSTER
    JOB_ROUTER SHARED_PORT TRANSFERD ANNEXD""".split())

_OPEN_RE = re.compile(r"\$([A-Za-z_]*)\(")

# The longest text one macro expansion may produce: ``M2 = $(M1)$(M1)``, ``M3 = $(M2)$(M2)``
# ... doubles at each step, and a few lines would otherwise expand for minutes.
MAX_EXPANSION = 1 << 20


# The longest configuration (or map) file read: real ones are kilobytes.
MAX_FILE_CHARS = 16 << 20


def read_bounded(path: str | os.PathLike, what: str) -> str:
    """The text of a small file, or ``ConfigError`` when it cannot be read or is longer than
    :data:`MAX_FILE_CHARS` characters."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_FILE_CHARS + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror or exc}", file=str(path)) from None
    except ValueError:      # a NUL in the name
        raise ConfigError(f"cannot read {what}: the name holds a NUL character", file=repr(str(path))) from None
    if len(text) > MAX_FILE_CHARS:
        raise ConfigError(f"{what} longer than {MAX_FILE_CHARS:,} characters", file=str(path))
    return text


class Config:
    """A parsed configuration as one daemon (``subsystem``) sees it."""

    def __init__(self, *, subsystem: str = "NEGOTIATOR", environ: Optional[Mapping[str, str]] = None,
                 defaults: Optional[Mapping[str, str]] = None,
                 version: tuple[int, ...] = EMULATED_VERSION) -> None:
        self.subsystem = subsystem.upper()
        self.version = version
        self.warnings: list[str] = []
        self._table: dict[str, Definition] = {}
        # Defaults (the knob table's) answer ``$(X)`` and ``defined X`` for unset names,
        # as HTCondor's built-in parameter table does.
        self._defaults = {k.upper(): v for k, v in (defaults or {}).items()}
        self._environ = os.environ if environ is None else environ
        self._memo: Optional[dict[str, str]] = None    # macro values during one expansion
        # Files read through ``include``: their text is not quoted in errors (they need not
        # be configuration), and neither is a value built from their definitions.
        self.included: set[str] = set()
        self._touched_included = False
        self.last_from_included = False    # whether the last get_raw used an included file

    # ---- construction -------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | os.PathLike, environ: Optional[Mapping[str, str]] = None,
                  **kw: Any) -> "Config":
        """Read ``path`` (and its includes), then apply ``_CONDOR_*`` overrides."""
        cfg = cls(environ=environ, **kw)
        cfg.read_file(path)
        cfg.apply_environment()
        return cfg

    @classmethod
    def from_string(cls, text: str, source: str = "<string>",
                    environ: Optional[Mapping[str, str]] = None, **kw: Any) -> "Config":
        """Read configuration text named ``source`` (relative includes resolve next to
        ``source``, or from the current directory for a ``<...>`` name)."""
        cfg = cls(environ=environ, **kw)
        cfg.read_text(text, source)
        cfg.apply_environment()
        return cfg

    def read_file(self, path: str | os.PathLike, _depth: int = 0) -> None:
        """Add the statements of one file to this configuration (at most
        :data:`MAX_FILE_CHARS` characters: ``/dev/zero`` is refused, not read forever)."""
        text = read_bounded(path, "configuration file")
        if _depth > 0:
            self.included.add(str(path))
        self.read_text(text, str(path), _depth)

    def read_text(self, text: str, source: str = "<string>", _depth: int = 0) -> None:
        """Add the statements of ``text`` (named ``source`` in errors) to this configuration."""
        Reader(self, text, source, _depth).run()

    def apply_environment(self) -> None:
        """Let ``_CONDOR_NAME`` variables override every file definition of NAME."""
        for var, value in self._environ.items():
            if var[:8].lower() != "_condor_" or not _NAME_RE.match(var[8:]):
                continue
            self.define(var[8:], value, ENVIRONMENT, None)

    def define(self, name: str, value: str, file: str, line: Optional[int]) -> None:
        """Set ``name`` to raw ``value`` (self-references replaced now), last one wins."""
        self._set(name, self._replace_self(name, value), file, line)

    def _set(self, name: str, raw: str, file: str, line: Optional[int]) -> None:
        self._table[name.upper()] = Definition(name, raw, file, line)

    # ---- lookup -------------------------------------------------------------------

    def definition(self, name: str) -> Optional[Definition]:
        """The definition a lookup of ``name`` uses (subsystem prefix first), if any."""
        key = name.upper()
        if "." not in key or key.split(".", 1)[0] not in SUBSYSTEMS:
            d = self._table.get(f"{self.subsystem}.{key}")
            if d is not None:
                return d
        return self._table.get(key)

    def defined(self, name: str) -> bool:
        """True if ``name`` has a non-empty raw value (in the files or the defaults)."""
        d = self.definition(name)
        if d is not None:
            return d.value != ""
        return bool(self._defaults.get(name.upper()))

    def get_raw(self, name: str, default: Optional[str] = None) -> Optional[str]:
        """The fully expanded value of ``name``; ``default`` if unset or expanding to empty.

        As HTCondor's ``param()``, an empty value counts as unset.
        """
        d = self.definition(name)
        self.last_from_included = False
        if d is None:
            return default
        self._touched_included = d.file in self.included
        value = self._top_expand(d.value, (d.name.upper(),), d).strip()
        self.last_from_included = self._touched_included
        return value if value else default

    def names(self) -> list[str]:
        """Every defined name (as first written, full dotted form), sorted case-insensitively."""
        return sorted((d.name for d in self._table.values()), key=str.upper)

    def expand(self, text: str, where: Optional[Definition] = None) -> str:
        """Expand every ``$(...)`` in ``text``; errors are reported at ``where`` if given."""
        return self._top_expand(text, (), where)

    # ---- macro expansion ----------------------------------------------------------

    def _replace_self(self, name: str, value: str) -> str:
        """Substitute references to ``name`` itself with its previous raw value."""
        key = name.upper()
        selves = {key}
        head, _, rest = key.partition(".")
        if rest and head in SUBSYSTEMS:
            selves.add(rest)   # NEGOTIATOR.A = $(A) x builds on A
        if "$" not in value:
            return value

        def previous(ref: str) -> Optional[str]:
            d = self._table.get(key) or self._table.get(ref)
            return d.value if d is not None and d.value != "" else None

        out, pos = [], 0
        for m in _macros(value):
            if m.func is None and m.name.upper() in selves:
                old = previous(m.name.upper())
                out.append(value[pos:m.begin])
                out.append(old if old is not None else (m.default or ""))
                pos = m.end
        out.append(value[pos:])
        return "".join(out)

    def _top_expand(self, text: str, active: tuple[str, ...], origin: Optional[Definition]) -> str:
        """One whole expansion: each macro's value is expanded once and remembered for the
        rest of it, and no text longer than :data:`MAX_EXPANSION` is built."""
        outer = self._memo
        self._memo = {} if outer is None else outer
        try:
            return self._expand(text, active, origin)
        finally:
            self._memo = outer

    def _expand(self, text: str, active: tuple[str, ...], origin: Optional[Definition]) -> str:
        if "$" not in text:
            return text
        out, pos, size = [], 0, 0
        for m in _macros(text):
            piece = text[pos:m.begin] + self._macro_value(m, active, origin)
            size += len(piece)
            if size > MAX_EXPANSION:
                raise _error(f"macro expansion longer than {MAX_EXPANSION} characters "
                             "(a definition that doubles its own size?)", origin)
            out.append(piece)
            pos = m.end
        out.append(text[pos:])
        return "".join(out)

    def _macro_value(self, m: "_Macro", active: tuple[str, ...], origin: Optional[Definition]) -> str:
        if m.func is None:
            d = self.definition(m.name)
            if d is None or d.value == "":
                if m.default is not None:
                    return self._expand(m.default, active, origin)
                return self._expand(self._defaults.get(m.name.upper(), ""), active, origin)
            if d.file in self.included:
                self._touched_included = True
            key = d.name.upper()
            if key in active:
                chain = " -> ".join(active + (key,))
                raise _error(f"macro expansion loop: {chain}", origin or d)
            memo = self._memo
            if memo is not None and key in memo:
                return memo[key]
            value = self._expand(d.value, active + (key,), d)
            if memo is not None:
                memo[key] = value
            return value
        body = self._expand(m.body, active, origin)
        if m.func == "ENV":
            var, sep, dflt = body.partition(":")
            found = self._environ.get(var.strip())
            return found if found is not None else (dflt if sep else "UNDEFINED")
        if m.func in ("INT", "REAL"):
            try:
                number = float(body.split(",")[0])
            except ValueError:
                shown = "text from an included file" if self._touched_included else repr(body)
                raise _error(f"${m.func}() needs a plain number here, got {shown}", origin) from None
            return str(int(number)) if m.func == "INT" else repr(number)
        raise _error(f"${m.func}() is not supported by this implementation", origin)


@dataclass(frozen=True)
class _Macro:
    begin: int
    end: int
    func: Optional[str]      # None for $(NAME), else ENV, INT, ...
    name: str
    default: Optional[str]
    body: str


def _macros(text: str):
    """Yield each well-formed ``$(...)`` / ``$FUNC(...)`` in ``text``; anything else is literal."""
    i = 0
    while (i := text.find("$", i)) >= 0:
        if text.startswith("$$", i):      # $$(...) is a match-time construct: keep as text
            i += 2
            continue
        m = _OPEN_RE.match(text, i)
        close = _matching_paren(text, m.end() - 1) if m else -1
        if m is None or close < 0:
            i += 1
            continue
        func, body = m.group(1).upper() or None, text[m.end():close]
        if func is None:
            name, sep, default = body.partition(":")
            if not _NAME_RE.match(name):
                i += 1
                continue
            yield _Macro(i, close + 1, None, name, default if sep else None, body)
        else:
            yield _Macro(i, close + 1, func, "", None, body)
        i = close + 1


def _matching_paren(text: str, open_at: int) -> int:
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    return -1


def _error(message: str, where: Optional[Definition]) -> ConfigError:
    if where is None:
        return ConfigError(message)
    if where.file == ENVIRONMENT:
        return ConfigError(f"{message} (in {where.location()})", file=ENVIRONMENT)
    return ConfigError(message, file=where.file, line=where.line)


__all__ = ["EMULATED_VERSION", "ENVIRONMENT", "MAX_FILE_CHARS", "MAX_INCLUDE_DEPTH", "SUBSYSTEMS", "Config",
           "Definition", "read_bounded"]
