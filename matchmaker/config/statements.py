"""The statements of the HTCondor configuration language (docs/knobs.md, the configuration language): lines to definitions.

:class:`Reader` walks one file's logical lines (continuations joined, comment
lines dropped -- also inside a continuation), keeps the ``if``/``elif``/``else``
stack, and hands each live statement to the :class:`~matchmaker.config.language.Config`
it fills: assignments (``=``, ``+=`` with separators, ``@=`` blocks),
``include``, ``error``/``warning`` and ``use``.  Macro expansion and lookup
belong to the config table, which this module only calls.

Of the ``use`` templates only ``use FEATURE : AssignAccountingGroup(map [,
check_request])`` is modelled: it is the schedd-side feature that decides which
accounting group a job negotiates in, and it sets the two declared knobs of
:data:`ACCOUNTING_GROUP_MAP_KNOBS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Protocol

from ..errors import ConfigError

MAX_INCLUDE_DEPTH = 20
ENVIRONMENT = "<environment>"
NAME_RE = re.compile(r"[A-Za-z0-9_.]+\Z")
_ASSIGN_RE = re.compile(r"(?P<name>[^=:]*?)\s*(?P<op>\+[,;|&*]{0,2}=|@=|=|:)\s*(?P<value>.*)\Z", re.S)
_KEYWORD_RE = re.compile(r"(?P<kw>@?include|use|error|warning)\b(?P<args>[^:=]*):\s*(?P<rest>.*)\Z", re.I | re.S)
_CONDITIONALS = ("if", "elif", "else", "endif")
_VERSION_RE = re.compile(r"(!?)\s*version\s*(==|!=|>=|<=|>|<)\s*(\S+)\Z", re.I)
_DEFINED_RE = re.compile(r"(!?)\s*defined\b\s*(.*)\Z", re.I | re.S)
_ASSIGN_GROUP_RE = re.compile(r"AssignAccountingGroup\s*\((.*)\)\s*\Z", re.I | re.S)
# The knobs ``use FEATURE : AssignAccountingGroup(map, check)`` sets (declared in knobs.py).
ACCOUNTING_GROUP_MAP_KNOBS = ("MATCHMAKER_ACCOUNTING_GROUP_MAP_FILE", "MATCHMAKER_ACCOUNTING_GROUP_CHECK_REQUEST")
# The templates HTCondor's ``use ROLE/FEATURE/SECURITY : NAME`` knows (names compared
# without regard to case); any other name is an error there, and so it is here.
KNOWN_TEMPLATES = {
    "ROLE": (
        "CentralManager",
        "Execute",
        "Personal",
        "Submit",
        "get_htcondor_central_manager",
        "get_htcondor_execute",
        "get_htcondor_submit",
    ),
    "FEATURE": (
        "ADSTASH",
        "AssignAccountingGroup",
        "AssignProjectName",
        "ChildCollector",
        "CommonCloudAttributesAWS",
        "CommonCloudAttributesGoogle",
        "ContinuousCronHook",
        "DefaultCheckpointDestination",
        "GANGLIA",
        "GPUs",
        "GPUsMonitor",
        "HPC_ANNEX",
        "JobsHaveInstanceIDs",
        "OneShotCronHook",
        "PartitionableSlot",
        "PelicanCache",
        "PelicanRetryPolicy",
        "PeriodicCronHook",
        "POLICY_EXPR_FRAGMENTS",
        "POLICY_HOURS_TO_START",
        "REMOTE_CONFIG",
        "REMOTE_RUNTIME_CONFIG",
        "ScheddCronContinuous",
        "ScheddCronOneShot",
        "ScheddCronPeriodic",
        "ScheddUsermapFile",
        "SetJobAttrFromUsermap",
        "StartdCronContinuous",
        "StartdCronOneShot",
        "StartdCronPeriodic",
        "StaticSlots",
        "TESTINGMODE_POLICY_VALUES",
        "UWCS_DESKTOP_POLICY_VALUES",
    ),
    "SECURITY": (
        "FIPS",
        "get_htcondor_idtokens",
        "HOST_BASED",
        "recommended",
        "recommended_v24_0",
        "recommended_v9_0",
        "STRONG",
        "USER_BASED",
        "WITH_AUTHENTICATION",
    ),
}
_KNOWN_LOWER = {category: {n.lower() for n in names} for category, names in KNOWN_TEMPLATES.items()}
# One template of a ``use`` line: a name, with arguments in parentheses for some features.
_TEMPLATE_RE = re.compile(r"\s*([A-Za-z0-9_]*)\s*(\([^()]*\))?\s*(,|\Z)")
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


class ConfigTable(Protocol):
    """What a :class:`Reader` fills: the macro table of :mod:`matchmaker.config.language`."""

    version: tuple[int, ...]
    warnings: list[str]
    _table: dict[str, "Definition"]

    def define(self, name: str, value: str, file: str, line: Optional[int]) -> None: ...
    def _set(self, name: str, raw: str, file: str, line: Optional[int]) -> None: ...
    def _replace_self(self, name: str, value: str) -> str: ...
    def defined(self, name: str) -> bool: ...
    def expand(self, text: str, where: Optional["Definition"] = None) -> str: ...
    def read_file(self, path: str, _depth: int = 0) -> None: ...


class Reader:
    """Reads one file's statements into a :class:`~matchmaker.config.language.Config`."""

    def __init__(self, config: ConfigTable, text: str, source: str, depth: int) -> None:
        self.cfg = config
        self.source = source
        self.depth = depth
        self.lines = text.splitlines()
        self.pos = 0
        self.stack: list[_Frame] = []

    def quoted(self, text: str) -> str:
        """``text`` for an error message: quoted in the file given on the command line,
        withheld in included files, which need not be configuration (``include :
        /etc/shadow`` must not print a line of it)."""
        return repr(text) if self.depth == 0 else "(text of an included file not shown)"

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
                    self.pos += (
                        1  # a comment inside a continuation is dropped (docs/knobs.md, the configuration language)
                    )
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
                self.conditional(first, line[len(first) :].strip(), lineno)
            elif self.live:
                self.statement(line, lineno)
            elif (m := _ASSIGN_RE.match(line)) and m.group("op") == "@=":
                self.block(lineno, m.group("value"))  # a dead block is skipped whole
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
        else:  # elif: the condition is only evaluated if no earlier branch was taken
            value = not frame.taken and frame.parent_live and self.condition(cond, lineno)
            frame.live = value
            frame.taken = frame.taken or value

    def condition(self, cond: str, lineno: int) -> bool:
        """Evaluate one ``if``/``elif`` condition (no compound conditions, as HTCondor)."""
        if not cond:
            raise self.fail("if/elif needs a condition", lineno)
        if "&&" in cond or "||" in cond:
            raise self.fail(f"invalid if condition {self.quoted(cond)}: compound conditions are not supported", lineno)
        m = _DEFINED_RE.match(cond)
        if m:
            name = m.group(2).strip()
            if name and not NAME_RE.match(name):
                raise self.fail(f"invalid if condition {self.quoted(cond)}: bad name after defined", lineno)
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
                raise self.fail(
                    f"invalid if condition {self.quoted(cond)}: not a boolean, number, "
                    "'defined NAME' or 'version OP x.y.z'",
                    lineno,
                ) from None
        return value != negate

    def version_test(self, op: str, literal: str, cond: str, lineno: int) -> bool:
        parts = literal.split(".")
        if len(parts) < 2 or not all(p.isdigit() for p in parts):
            raise self.fail(f"invalid if condition {self.quoted(cond)}: version must be x.y or x.y.z", lineno)
        want = tuple(int(p) for p in parts[:3])
        have = self.cfg.version[: len(want)]
        return {
            "==": have == want,
            "!=": have != want,
            ">=": have >= want,
            "<=": have <= want,
            ">": have > want,
            "<": have < want,
        }[op]

    def statement(self, line: str, lineno: int) -> None:
        m = _KEYWORD_RE.match(line)
        if m:
            self.keyword(m.group("kw").lower(), m.group("args").split(), m.group("rest").strip(), lineno)
            return
        m = _ASSIGN_RE.match(line)
        if m is None:
            if line.startswith("["):
                return  # an ini-style section header: HTCondor ignores it
            raise self.fail(f"expected NAME = value, got {self.quoted(line)}", lineno, 1)
        name, op, value = m.group("name"), m.group("op"), m.group("value")
        if not NAME_RE.match(name):
            raise self.fail(f"illegal name {self.quoted(name)} (letters, digits, '_' and '.' only)", lineno, 1)
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
        raise self.fail(f"end of file while looking for @{tag} (block opened at line {lineno})", len(self.lines))

    def keyword(self, kw: str, args: list[str], rest: str, lineno: int) -> None:
        words = [a.lower() for a in args]
        if kw in ("include", "@include"):
            self.include(words, rest, lineno)
        elif kw == "error":
            raise self.fail(f"error statement: {self.expand(rest, lineno)}", lineno)
        elif kw == "warning":
            self.cfg.warnings.append(f"{self.source}:{lineno}: {self.expand(rest, lineno)}")
        else:  # use CATEGORY : templates
            category = words[0].upper() if words else ""
            if category == "FEATURE" and _ASSIGN_GROUP_RE.match(rest):
                self.assign_accounting_group(rest, lineno)
            elif category in ("ROLE", "FEATURE", "SECURITY"):
                self.check_templates(category, rest, lineno)
                self.cfg.warnings.append(
                    f"{self.source}:{lineno}: 'use {category} : {rest}' ignored (templates are not modelled)"
                )
            elif category == "POLICY":
                raise self.fail(
                    f"'use POLICY : {rest}' is not supported: write the policy's knobs out explicitly", lineno
                )
            else:
                raise self.fail(f"unknown use category {category!r}", lineno)

    def check_templates(self, category: str, text: str, lineno: int) -> None:
        """Refuse a template name HTCondor does not know (it stops at such a line too)."""
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TEMPLATE_RE.match(text, pos)
            if m is None or not m.group(1) or m.end() == pos:
                raise self.fail(f"'use {category} : {text}': cannot read the template names", lineno)
            if m.group(1).lower() not in _KNOWN_LOWER[category]:
                raise self.fail(f"unknown template 'use {category} : {m.group(1)}'", lineno)
            pos = m.end()
        if not text:
            raise self.fail(f"'use {category} :' names no template", lineno)

    def assign_accounting_group(self, text: str, lineno: int) -> None:
        """``use FEATURE : AssignAccountingGroup(map_file [, check_request])``: the only
        template the matchmaker models, because it decides which group a job negotiates
        in.  It defines the two declared knobs that stand for the schedd's job transform
        (``ACCOUNTING_GROUP_MAP_KNOBS``); later lines may override them."""
        args = [a.strip() for a in _ASSIGN_GROUP_RE.match(text).group(1).split(",")]  # type: ignore[union-attr]
        if not 1 <= len(args) <= 2 or not args[0]:
            raise self.fail(
                f"AssignAccountingGroup takes a map file name and an optional check_request flag, got {text!r}", lineno
            )
        map_knob, check_knob = ACCOUNTING_GROUP_MAP_KNOBS
        self.cfg.define(map_knob, args[0], self.source, lineno)
        self.cfg.define(check_knob, args[1] if len(args) > 1 else "true", self.source, lineno)

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
            path = Path(self.source).parent / path  # relative to the including file
        if not path.is_file():
            if ifexist:
                return
            why = "not a regular file" if path.exists() else "no such file"
            raise self.fail(f"cannot include {target!r}: {why}", lineno)
        self.cfg.read_file(str(path), self.depth + 1)


__all__ = [
    "ACCOUNTING_GROUP_MAP_KNOBS",
    "ENVIRONMENT",
    "KNOWN_TEMPLATES",
    "MAX_INCLUDE_DEPTH",
    "NAME_RE",
    "Definition",
    "Reader",
]
