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
configure daemons' plumbing, so they are ignored and a warning is recorded (a
template name HTCondor does not know is an error, as there) --
except ``use FEATURE : AssignAccountingGroup(map [, check_request])``, the
schedd-side template that maps users to accounting groups, which sets the
matchmaker's map-file knobs.
"""

from __future__ import annotations

import hashlib
import json
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
SUBSYSTEMS = frozenset(
    """MASTER COLLECTOR NEGOTIATOR SCHEDD STARTD STARTER SHADOW
    SUBMIT TOOL GRIDMANAGER CREDD DEFRAG GANGLIAD HAD REPLICATION KBDD ROOSTER
    JOB_ROUTER SHARED_PORT TRANSFERD ANNEXD""".split()
)

_OPEN_RE = re.compile(r"\$([A-Za-z_]*)\(")

# The longest text one macro expansion may produce: ``M2 = $(M1)$(M1)``, ``M3 = $(M2)$(M2)``
# ... doubles at each step, and a few lines would otherwise expand for minutes.
MAX_EXPANSION = 1 << 20


# The deepest nesting of macro references (``A = $(B)``, ``B = $(C)``, ... and defaults or
# function arguments inside one another) one expansion follows; real configurations nest
# a handful deep.
MAX_MACRO_DEPTH = 200


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
    except ValueError:  # a NUL in the name
        raise ConfigError(f"cannot read {what}: the name holds a NUL character", file=repr(str(path))) from None
    if len(text) > MAX_FILE_CHARS:
        raise ConfigError(f"{what} longer than {MAX_FILE_CHARS:,} characters", file=str(path))
    return text


class Config:
    """A parsed configuration as one daemon (``subsystem``) sees it."""

    def __init__(
        self,
        *,
        subsystem: str = "NEGOTIATOR",
        environ: Optional[Mapping[str, str]] = None,
        defaults: Optional[Mapping[str, str]] = None,
        version: tuple[int, ...] = EMULATED_VERSION,
    ) -> None:
        self.subsystem = subsystem.upper()
        self.version = version
        self.warnings: list[str] = []
        self._table: dict[str, Definition] = {}
        # Defaults (the knob table's) answer ``$(X)`` and ``defined X`` for unset names,
        # as HTCondor's built-in parameter table does.
        self._defaults = {k.upper(): v for k, v in (defaults or {}).items()}
        self._environ = os.environ if environ is None else environ
        self._memo: Optional[dict[str, str]] = None  # macro values during one expansion
        # Files read through ``include``: their text is not quoted in errors (they need not
        # be configuration), and neither is a value built from their definitions.
        self.included: set[str] = set()
        self._touched_included = False
        self.last_from_included = False  # whether the last get_raw used an included file

    # ---- construction -------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | os.PathLike, environ: Optional[Mapping[str, str]] = None, **kw: Any) -> "Config":
        """Read ``path`` (and its includes), then apply ``_CONDOR_*`` overrides."""
        cfg = cls(environ=environ, **kw)
        cfg.read_file(path)
        cfg.apply_environment()
        return cfg

    @classmethod
    def from_string(
        cls, text: str, source: str = "<string>", environ: Optional[Mapping[str, str]] = None, **kw: Any
    ) -> "Config":
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

    def detach_environment(self) -> None:
        """Keep only the environment variables the definitions name in ``$ENV(...)``, as a
        copy: the configuration can then be sent to another machine, without the rest of
        this process's environment, and expand there as it does here."""
        used = {m.group(1).strip() for d in self._table.values() for m in _ENV_REF.finditer(d.value)}
        self._environ = {k: v for k, v in self._environ.items() if k in used}

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

    def digest(self) -> str:
        """A stable digest of every definition (name and raw text, in :meth:`names` order)."""
        table = [[d.name, d.value] for d in map(self.definition, self.names()) if d is not None]
        return hashlib.sha256(json.dumps(table).encode()).hexdigest()

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
            selves.add(rest)  # NEGOTIATOR.A = $(A) x builds on A
        if "$" not in value:
            return value

        def previous(ref: str) -> Optional[str]:
            d = self._table.get(key) or self._table.get(ref)
            return d.value if d is not None and d.value != "" else None

        out, pos = [], 0
        for m in _macros(value):
            if m.func is None and m.name.upper() in selves:
                old = previous(m.name.upper())
                out.append(value[pos : m.begin])
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
        """Expand ``text`` with an explicit stack of frames (one per text being expanded),
        never recursing on Python's stack: a chain of ten thousand macros is refused at
        :data:`MAX_MACRO_DEPTH` with the file and line, not a ``RecursionError``."""
        if "$" not in text:
            return text
        stack = [_Frame(text, active, origin)]
        while True:
            frame = stack[-1]
            if frame.index == len(frame.macros):
                value = frame.result()
                stack.pop()
                if not stack:
                    return value
                stack[-1].take(self._finish(stack[-1], value))
                continue
            child = self._start(frame)
            if child is None:
                continue  # the macro's value was known: already taken
            if "$" not in child.text:
                frame.take(self._finish(frame, child.text))
                continue
            if len(stack) >= MAX_MACRO_DEPTH:
                raise _depth_error(stack, child)
            stack.append(child)

    def _start(self, frame: "_Frame") -> Optional["_Frame"]:
        """The frame that expands what ``frame``'s next macro needs (its definition, its
        default or its function's argument), or None when its value is known already."""
        m = frame.macros[frame.index]
        frame.pending = None
        if m.func is not None:
            return _Frame(m.body, frame.active, frame.origin)
        d = self.definition(m.name)
        if d is None or d.value == "":
            text = m.default if m.default is not None else self._defaults.get(m.name.upper(), "")
            return _Frame(text, frame.active, frame.origin)
        if d.file in self.included:
            self._touched_included = True
        key = d.name.upper()
        if key in frame.active:
            chain = " -> ".join(frame.active + (key,))
            raise _error(f"macro expansion loop: {chain}", frame.origin or d)
        memo = self._memo
        if memo is not None and key in memo:
            frame.take(memo[key])
            return None
        frame.pending = key
        return _Frame(d.value, frame.active + (key,), d)

    def _finish(self, frame: "_Frame", value: str) -> str:
        """The value of ``frame``'s current macro, given the expansion of what it needed."""
        m = frame.macros[frame.index]
        if m.func is None:
            if frame.pending is not None and self._memo is not None:
                self._memo[frame.pending] = value
            return value
        if m.func == "ENV":
            var, sep, dflt = value.partition(":")
            found = self._environ.get(var.strip())
            return found if found is not None else (dflt if sep else "UNDEFINED")
        if m.func in ("INT", "REAL"):
            try:
                number = float(value.split(",")[0])
            except ValueError:
                shown = "text from an included file" if self._touched_included else repr(value)
                raise _error(f"${m.func}() needs a plain number here, got {shown}", frame.origin) from None
            return str(int(number)) if m.func == "INT" else repr(number)
        raise _error(f"${m.func}() is not supported by this implementation", frame.origin)


class _Frame:
    """One text being expanded: its macros, how far it got, and the pieces built so far."""

    __slots__ = ("text", "active", "origin", "macros", "index", "pos", "out", "size", "pending")

    def __init__(self, text: str, active: tuple[str, ...], origin: Optional[Definition]) -> None:
        self.text, self.active, self.origin = text, active, origin
        self.macros = list(_macros(text)) if "$" in text else []
        self.index = self.pos = self.size = 0
        self.out: list[str] = []
        self.pending: Optional[str] = None  # the macro name whose value is being expanded

    def take(self, value: str) -> None:
        """Put the current macro's ``value`` in place and move on to the next macro."""
        m = self.macros[self.index]
        piece = self.text[self.pos : m.begin] + value
        self.size += len(piece)
        if self.size > MAX_EXPANSION:
            raise _error(
                f"macro expansion longer than {MAX_EXPANSION} characters (a definition that doubles its own size?)",
                self.origin,
            )
        self.out.append(piece)
        self.pos = m.end
        self.index += 1

    def result(self) -> str:
        self.out.append(self.text[self.pos :])
        return "".join(self.out)


def _depth_error(stack: list[_Frame], child: _Frame) -> ConfigError:
    """Macros nested deeper than :data:`MAX_MACRO_DEPTH`: reported at the outermost
    definition, with the start of the chain."""
    names = child.active
    shown = " -> ".join(names[:3]) + (" -> ..." if len(names) > 3 else "")
    where = next((f.origin for f in stack if f.origin is not None), None)
    return _error(
        f"macros nested more than {MAX_MACRO_DEPTH} deep ({shown or 'defaults and functions'}); expansion stopped",
        where,
    )


_ENV_REF = re.compile(r"\$ENV\(([^):]+)", re.IGNORECASE)


@dataclass(frozen=True)
class _Macro:
    begin: int
    end: int
    func: Optional[str]  # None for $(NAME), else ENV, INT, ...
    name: str
    default: Optional[str]
    body: str


def _macros(text: str):
    """Yield each well-formed ``$(...)`` / ``$FUNC(...)`` in ``text``; anything else is literal."""
    i = 0
    while (i := text.find("$", i)) >= 0:
        if text.startswith("$$", i):  # $$(...) is a match-time construct: keep as text
            i += 2
            continue
        m = _OPEN_RE.match(text, i)
        close = _matching_paren(text, m.end() - 1) if m else -1
        if m is None or close < 0:
            i += 1
            continue
        func, body = m.group(1).upper() or None, text[m.end() : close]
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


__all__ = [
    "EMULATED_VERSION",
    "ENVIRONMENT",
    "MAX_EXPANSION",
    "MAX_FILE_CHARS",
    "MAX_MACRO_DEPTH",
    "MAX_INCLUDE_DEPTH",
    "SUBSYSTEMS",
    "Config",
    "Definition",
    "read_bounded",
]
