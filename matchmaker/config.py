"""The HTCondor configuration language, as much of it as a negotiator needs (spec §6).

Design: a file is read once, statement by statement, into a table of raw
definitions (name -> unexpanded text plus the file and line that set it).
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
continuation (a comment line inside a continuation is dropped, spec §6),
``include [ifexist] : file`` and ``@include``, ``if/elif/else/endif``,
``error :`` and ``warning :``, ``$(NAME)``, ``$(NAME:default)``, ``$ENV(V[:d])``,
and ``$INT``/``$REAL`` of a plain number.

Not supported, each raising :class:`ConfigError`: command includes
(``include : cmd |``), ``use POLICY : ...`` (policy templates change
negotiator knobs, so ignoring them would silently change matchmaking), and
the other ``$FUNC(...)`` helpers.  ``use ROLE/FEATURE/SECURITY : ...`` only
configure daemons' plumbing, so they are ignored and a warning is recorded.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from .errors import ConfigError

# The HTCondor version ``if version ...`` compares against: the release of the
# reference wheel the differential tests run, so both agree on conditionals.
EMULATED_VERSION = (25, 14, 1)
MAX_INCLUDE_DEPTH = 20
ENVIRONMENT = "<environment>"

# Daemon names whose ``NAME.X`` definitions are per-daemon overrides.  Needed to
# tell ``NEGOTIATOR.X = $(X) y`` (a self-reference) from a dotted group knob.
SUBSYSTEMS = frozenset("""MASTER COLLECTOR NEGOTIATOR SCHEDD STARTD STARTER SHADOW
    SUBMIT TOOL GRIDMANAGER CREDD DEFRAG GANGLIAD HAD REPLICATION KBDD ROOSTER
    JOB_ROUTER SHARED_PORT TRANSFERD ANNEXD""".split())

_NAME_RE = re.compile(r"[A-Za-z0-9_.]+\Z")
_ASSIGN_RE = re.compile(r"(?P<name>[^=:]*?)\s*(?P<op>\+[,;|&*]{0,2}=|@=|=|:)\s*(?P<value>.*)\Z", re.S)
_KEYWORD_RE = re.compile(r"(?P<kw>@?include|use|error|warning)\b(?P<args>[^:=]*):\s*(?P<rest>.*)\Z",
                         re.I | re.S)
_CONDITIONALS = ("if", "elif", "else", "endif")
_VERSION_RE = re.compile(r"(!?)\s*version\s*(==|!=|>=|<=|>|<)\s*(\S+)\Z", re.I)
_DEFINED_RE = re.compile(r"(!?)\s*defined\b\s*(.*)\Z", re.I | re.S)
_OPEN_RE = re.compile(r"\$([A-Za-z_]*)\(")
_TRUE = frozenset(("true", "yes"))
_FALSE = frozenset(("false", "no"))


@dataclass(frozen=True)
class Definition:
    """One winning ``NAME = value``: the raw (unexpanded) text and where it was set."""

    name: str
    value: str
    file: str
    line: Optional[int]

    def location(self) -> str:
        """``file:line`` (or the environment variable) for error messages."""
        if self.file == ENVIRONMENT:
            return f"environment variable _CONDOR_{self.name}"
        return f"{self.file}:{self.line}" if self.line is not None else self.file


class _Frame:
    """One open ``if`` block: whether a branch was taken, whether lines are live."""

    __slots__ = ("parent_live", "taken", "live", "seen_else")

    def __init__(self, parent_live: bool, value: bool) -> None:
        self.parent_live = parent_live
        self.taken = value
        self.live = parent_live and value
        self.seen_else = False


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
        """Add the statements of one file to this configuration."""
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ConfigError(f"cannot read configuration file: {exc.strerror or exc}",
                              file=str(path)) from None
        self.read_text(text, str(path), _depth)

    def read_text(self, text: str, source: str = "<string>", _depth: int = 0) -> None:
        """Add the statements of ``text`` (named ``source`` in errors) to this configuration."""
        _Reader(self, text, source, _depth).run()

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
        if d is None:
            return default
        value = self._expand(d.value, (d.name.upper(),), d).strip()
        return value if value else default

    def names(self) -> list[str]:
        """Every defined name (as first written, full dotted form), sorted case-insensitively."""
        return sorted((d.name for d in self._table.values()), key=str.upper)

    def expand(self, text: str, where: Optional[Definition] = None) -> str:
        """Expand every ``$(...)`` in ``text``; errors are reported at ``where`` if given."""
        return self._expand(text, (), where)

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

    def _expand(self, text: str, active: tuple[str, ...], origin: Optional[Definition]) -> str:
        if "$" not in text:
            return text
        out, pos = [], 0
        for m in _macros(text):
            out.append(text[pos:m.begin])
            out.append(self._macro_value(m, active, origin))
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
            key = d.name.upper()
            if key in active:
                chain = " -> ".join(active + (key,))
                raise _error(f"macro expansion loop: {chain}", origin or d)
            return self._expand(d.value, active + (key,), d)
        body = self._expand(m.body, active, origin)
        if m.func == "ENV":
            var, sep, dflt = body.partition(":")
            value = self._environ.get(var.strip())
            return value if value is not None else (dflt if sep else "UNDEFINED")
        if m.func in ("INT", "REAL"):
            try:
                number = float(body.split(",")[0])
            except ValueError:
                raise _error(f"${m.func}() needs a plain number here, got {body!r}", origin) from None
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
        if close < 0:
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


class _Reader:
    """Reads one file's statements into a :class:`Config`."""

    def __init__(self, config: Config, text: str, source: str, depth: int) -> None:
        self.cfg = config
        self.source = source
        self.depth = depth
        self.lines = text.splitlines()
        self.pos = 0
        self.stack: list[_Frame] = []

    def fail(self, message: str, line: int, column: Optional[int] = None) -> ConfigError:
        return ConfigError(message, file=self.source, line=line, column=column)

    def expand(self, text: str, lineno: int) -> str:
        """Expand macros now (in a condition or statement), reporting errors at this line."""
        return self.cfg.expand(text, Definition("", text, self.source, lineno))

    def next_line(self) -> Optional[tuple[int, str]]:
        """The next logical line (continuations joined, comments and blanks skipped)."""
        while self.pos < len(self.lines):
            lineno = self.pos + 1
            line = self.lines[self.pos].strip()
            self.pos += 1
            if not line or line.startswith("#"):
                continue
            while line.endswith("\\"):
                line = line[:-1]
                while self.pos < len(self.lines) and self.lines[self.pos].lstrip().startswith("#"):
                    self.pos += 1        # a comment inside a continuation is dropped (spec §6)
                if self.pos >= len(self.lines):
                    break
                line += self.lines[self.pos].strip()
                self.pos += 1
            return lineno, line.rstrip()
        return None

    @property
    def live(self) -> bool:
        return not self.stack or self.stack[-1].live

    def run(self) -> None:
        while (item := self.next_line()) is not None:
            lineno, line = item
            first = re.split(r"[\s:]", line, maxsplit=1)[0].lower()
            if first in _CONDITIONALS:
                self.conditional(first, line[len(first):].strip(), lineno)
            elif self.live:
                self.statement(line, lineno)
            elif (m := _ASSIGN_RE.match(line)) and m.group("op") == "@=":
                self.block(lineno, m.group("value"))   # a dead block is skipped whole
        if self.stack:
            raise self.fail("missing endif before end of file", len(self.lines))

    def conditional(self, word: str, cond: str, lineno: int) -> None:
        if word == "if":
            self.stack.append(_Frame(self.live, self.live and self.condition(cond, lineno)))
            return
        if not self.stack:
            raise self.fail(f"{word} without matching if", lineno)
        frame = self.stack[-1]
        if word == "endif":
            self.stack.pop()
        elif frame.seen_else:
            raise self.fail(f"{word} is not allowed after else", lineno)
        elif word == "else":
            frame.seen_else = True
            frame.live = frame.parent_live and not frame.taken
            frame.taken = True
        else:   # elif: the condition is only evaluated if no earlier branch was taken
            value = (not frame.taken and frame.parent_live and self.condition(cond, lineno))
            frame.live = value
            frame.taken = frame.taken or value

    def condition(self, cond: str, lineno: int) -> bool:
        """Evaluate one ``if``/``elif`` condition (no compound conditions, as HTCondor)."""
        if not cond:
            raise self.fail("if/elif needs a condition", lineno)
        if "&&" in cond or "||" in cond:
            raise self.fail(f"invalid if condition {cond!r}: compound conditions are not supported", lineno)
        m = _DEFINED_RE.match(cond)
        if m:
            name = m.group(2).strip()
            if name and not _NAME_RE.match(name):
                raise self.fail(f"invalid if condition {cond!r}: bad name after defined", lineno)
            return bool(name and self.cfg.defined(name)) != bool(m.group(1))
        m = _VERSION_RE.match(cond)
        if m:
            return self.version_test(m.group(2), m.group(3), cond, lineno) != bool(m.group(1))
        negate = cond.startswith("!")
        text = self.expand(cond[1:] if negate else cond, lineno).strip().lower()
        if text in _TRUE or text in _FALSE or text == "":
            value = text in _TRUE
        else:
            try:
                value = float(text) != 0.0
            except ValueError:
                raise self.fail(f"invalid if condition {cond!r}: not a boolean, number, "
                                "'defined NAME' or 'version OP x.y.z'", lineno) from None
        return value != negate

    def version_test(self, op: str, literal: str, cond: str, lineno: int) -> bool:
        parts = literal.split(".")
        if len(parts) < 2 or not all(p.isdigit() for p in parts):
            raise self.fail(f"invalid if condition {cond!r}: version must be x.y or x.y.z", lineno)
        want = tuple(int(p) for p in parts[:3])
        have = self.cfg.version[:len(want)]
        return {"==": have == want, "!=": have != want, ">=": have >= want,
                "<=": have <= want, ">": have > want, "<": have < want}[op]

    def statement(self, line: str, lineno: int) -> None:
        m = _KEYWORD_RE.match(line)
        if m:
            self.keyword(m.group("kw").lower(), m.group("args").split(), m.group("rest").strip(), lineno)
            return
        m = _ASSIGN_RE.match(line)
        if m is None:
            if line.startswith("["):
                return        # an ini-style section header: HTCondor ignores it
            raise self.fail(f"expected NAME = value, got {line!r}", lineno, 1)
        name, op, value = m.group("name"), m.group("op"), m.group("value")
        if not _NAME_RE.match(name):
            raise self.fail(f"illegal name {name!r} (letters, digits, '_' and '.' only)", lineno, 1)
        if op == ":":
            self.cfg.warnings.append(f"{self.source}:{lineno}: obsolete ':' used for assignment of {name}")
        elif op == "@=":
            value = self.block(lineno, value)
        elif op.startswith("+"):
            self.cfg._set(name, self.append(name, op, value), self.source, lineno)
            return
        self.cfg.define(name, value, self.source, lineno)

    def append(self, name: str, op: str, value: str) -> str:
        old = self.cfg._table.get(name.upper())
        value = self.cfg._replace_self(name, value)
        if old is None or old.value == "":
            return value
        seps = op[1:-1]
        joiner = " " if not seps else (f" {seps} " if len(seps) == 2 else seps)
        return old.value + joiner + value

    def block(self, lineno: int, tag: str) -> str:
        """Collect the lines of a ``NAME @=tag`` block up to the line ``@tag``."""
        tag = tag.strip()
        if not re.fullmatch(r"\w+", tag):
            raise self.fail(f"bad @= block tag {tag!r}", lineno)
        body: list[str] = []
        while (item := self.next_line()) is not None:
            if item[1] == "@" + tag:
                return "\n".join(body)
            body.append(item[1])
        raise self.fail(f"end of file while looking for @{tag} (block opened at line {lineno})",
                        len(self.lines))

    def keyword(self, kw: str, args: list[str], rest: str, lineno: int) -> None:
        words = [a.lower() for a in args]
        if kw in ("include", "@include"):
            self.include(words, rest, lineno)
        elif kw == "error":
            raise self.fail(f"error statement: {self.expand(rest, lineno)}", lineno)
        elif kw == "warning":
            self.cfg.warnings.append(f"{self.source}:{lineno}: {self.expand(rest, lineno)}")
        else:   # use CATEGORY : templates
            category = words[0].upper() if words else ""
            if category in ("ROLE", "FEATURE", "SECURITY"):
                self.cfg.warnings.append(f"{self.source}:{lineno}: 'use {category} : {rest}' ignored "
                                         "(templates are not modelled)")
            elif category == "POLICY":
                raise self.fail(f"'use POLICY : {rest}' is not supported: write the policy's "
                                "knobs out explicitly", lineno)
            else:
                raise self.fail(f"unknown use category {category!r}", lineno)

    def include(self, words: list[str], target: str, lineno: int) -> None:
        ifexist = "ifexist" in words
        if "command" in words or "into" in words or target.endswith("|"):
            raise self.fail("command includes are not supported", lineno)
        if set(words) - {"ifexist"}:
            raise self.fail(f"unknown include option(s): {' '.join(words)}", lineno)
        target = self.expand(target, lineno).strip()
        if not target:
            raise self.fail("include needs a file name", lineno)
        if self.depth + 1 > MAX_INCLUDE_DEPTH:
            raise self.fail(f"includes nested more than {MAX_INCLUDE_DEPTH} deep", lineno)
        path = Path(target)
        if not path.is_absolute() and not self.source.startswith("<"):
            path = Path(self.source).parent / path   # relative to the including file
        if not path.is_file():
            if ifexist:
                return
            raise self.fail(f"cannot include {target!r}: no such file", lineno)
        self.cfg.read_file(path, self.depth + 1)
