"""What ``matchmaker lint`` reports: one :class:`Finding` per mistake, with its place, a
severity, a sentence and a code documented in docs/lint.md.

Findings print as ``file:line:col: severity: message [code]`` and sort by file, line,
column and code, so two runs over the same input print the same lines in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

ERROR, WARNING, NOTE = "error", "warning", "note"

# Every code lint reports, with its severity and what it means (docs/lint.md has an
# example and the fix of each).
CODES: dict[str, tuple[str, str]] = {
    "config-error": (ERROR, "the configuration cannot be read at all"),
    "knob-value": (ERROR, "a knob's value does not fit its type"),
    "expr-syntax": (ERROR, "an expression-valued knob does not parse"),
    "config-warning": (
        WARNING,
        "a statement the configuration reader warns about (ignored template, ':' assignment, ...)",
    ),
    "knob-unknown": (WARNING, "an unknown knob name close to a known one"),
    "group-knob-unknown": (WARNING, "a per-group knob for a group GROUP_NAMES does not list"),
    "macro-undefined": (WARNING, "$(NAME) used but NAME never defined: it expands to nothing"),
    "knob-overridden": (WARNING, "a definition replaced later in the same file"),
    "policy-knob-unused": (WARNING, "a knob of a priority model that is not selected"),
    "attr-unknown": (WARNING, "an attribute no ad of its side has"),
    "attr-partial": (NOTE, "an attribute some ads of its side lack"),
    "clause-dead": (WARNING, "a clause no ad of the other side satisfies"),
    "requirements-unsatisfiable": (WARNING, "a Requirements (or START) no ad of the other side satisfies"),
    "group-dynamic-over-one": (WARNING, "sibling dynamic quotas that sum to more than 1"),
    "group-static-over-pool": (WARNING, "static quotas beyond the pool's weight"),
    "group-no-quota": (WARNING, "a GROUP_NAMES entry without a quota"),
    "group-invalid-name": (WARNING, "a GROUP_NAMES entry the group tree ignores"),
    "group-not-listed": (WARNING, "jobs' accounting group that GROUP_NAMES does not list"),
    "group-sort-not-numeric": (ERROR, "a GROUP_SORT_EXPR that is not a number for some group"),
}


@dataclass(frozen=True)
class Finding:
    """One mistake: where (file, line, column from 1), how bad, what, and its code."""

    file: str
    line: int
    column: int
    code: str
    message: str
    severity: str = ""

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown lint code {self.code!r}")
        if not self.severity:
            object.__setattr__(self, "severity", CODES[self.code][0])

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.code, self.message)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message} [{self.code}]"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class LintReport:
    """Every finding of one lint run, sorted."""

    findings: list[Finding] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.findings = sorted(set(self.findings), key=Finding.sort_key)

    @classmethod
    def of(cls, findings: Iterable[Finding]) -> "LintReport":
        return cls(list(findings))

    def count(self, severity: str) -> int:
        return sum(f.severity == severity for f in self.findings)

    def codes(self) -> list[str]:
        """The codes found, in the order of the findings."""
        return [f.code for f in self.findings]

    def exit_status(self, strict: bool = False) -> int:
        """0 when clean, 1 when there are errors (or, with ``strict``, warnings)."""
        if self.count(ERROR) or (strict and self.count(WARNING)):
            return 1
        return 0

    def text(self) -> str:
        lines = [str(f) for f in self.findings]
        lines.append(f"{self.count(ERROR)} error(s), {self.count(WARNING)} warning(s), {self.count(NOTE)} note(s)")
        return "\n".join(lines) + "\n"

    def to_json(self) -> list[dict[str, Any]]:
        return [f.to_json() for f in self.findings]


__all__ = ["CODES", "ERROR", "NOTE", "WARNING", "Finding", "LintReport"]
