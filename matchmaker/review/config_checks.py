"""Lint of a configuration file on its own: knob names, macros, overrides, knobs of an
unselected priority model, expressions that do not parse and values of the wrong type.

:func:`check_config` reads the file over a recording table
(:mod:`matchmaker.review.recording`) and returns a :class:`ConfigReview`: the typed
knobs and settings when the file is usable, and the findings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from classad.errors import ClassAdError
from classad.parser import parse_expr

from ..config.knobs import DEFAULTS, KNOBS, Knobs
from ..config.settings import Settings, group_tree_from_knobs
from ..errors import ConfigError
from ..groups.quotas import GroupTree
from .findings import Finding
from .names import known_names, or_list, suggestions
from .recording import MACRO_RE, Assignment, RecordingConfig, SourceText, recorded_knobs

# Per-group knobs, longest prefix first (GROUP_QUOTA_DYNAMIC_ before GROUP_QUOTA_).
GROUP_PREFIXES = (
    "GROUP_QUOTA_DYNAMIC_",
    "GROUP_ACCEPT_SURPLUS_",
    "GROUP_AUTOREGROUP_",
    "GROUP_PRIO_FACTOR_",
    "GROUP_QUOTA_",
)
# Knob prefixes of the priority models, and the knob only some models read.
POLICY_PREFIXES = {"LSF_": "lsf", "MAUI_": "maui", "DIRAC_": "dirac", "SLURM_": "slurm"}
EXPR_POLICIES = ("lsf", "maui", "slurm")


@dataclass
class ConfigReview:
    """A configuration as lint read it: knobs and settings (None when unusable), findings."""

    path: str
    knobs: Optional[Knobs] = None
    config: Optional[RecordingConfig] = None
    settings: Optional[Settings] = None
    group_tree: Optional[GroupTree] = None
    findings: list[Finding] = field(default_factory=list)
    source: SourceText = field(default_factory=SourceText)

    def at(self, file: str, line: Optional[int], code: str, message: str, column: int = 1) -> None:
        self.findings.append(Finding(file, line or 1, column, code, message))

    def at_name(self, a: Assignment, code: str, message: str) -> None:
        """A finding at the name of assignment ``a``."""
        line, col = self.source.find(a.file, a.line, a.name)
        self.at(a.file, line, code, message, col)

    def error(self, exc: ClassAdError, code: str) -> None:
        self.at(exc.file or self.path, exc.line, code, " ".join(exc.message.split()), exc.column or 1)


def check_config(path: str, environ: Optional[dict[str, str]] = None) -> ConfigReview:
    """Every configuration finding of the file at ``path`` (see the module doc)."""
    review = ConfigReview(path)
    try:
        review.knobs, review.config = recorded_knobs(path, environ)
    except ConfigError as exc:
        review.error(exc, "config-error")
        return review
    check_reader_warnings(review)
    check_names(review)
    check_macros(review)
    check_overrides(review)
    check_policy_knobs(review)
    check_expressions(review)
    check_values(review)
    return review


def _live(review: ConfigReview) -> list[Assignment]:
    cfg = review.config
    assert cfg is not None
    return list({(a.file, a.line, a.name.upper()): a for a in cfg.assignments}.values())


def _group_names(review: ConfigReview) -> list[str]:
    try:
        return review.knobs.group_names() if review.knobs is not None else []
    except ConfigError:
        return []


_WARNING_RE = re.compile(r"(?P<file>.+?):(?P<line>\d+): (?P<message>.*)\Z", re.S)


def check_reader_warnings(review: ConfigReview) -> None:
    """config-warning: what the reader itself warns about (``warning :`` statements,
    ignored ``use`` templates, the obsolete ``:`` assignment)."""
    assert review.config is not None
    for w in review.config.warnings:
        m = _WARNING_RE.match(w)
        if m is None:
            review.at(review.path, 1, "config-warning", w)
        else:
            review.at(m.group("file"), int(m.group("line")), "config-warning", " ".join(m.group("message").split()))


def check_names(review: ConfigReview) -> None:
    """knob-unknown and group-knob-unknown."""
    known = known_names()
    groups = _group_names(review)
    folded = {g.upper() for g in groups}
    for a in _live(review):
        key = a.key
        if key in known.names:
            continue
        prefix = next((p for p in GROUP_PREFIXES if key.startswith(p) and len(key) > len(p)), None)
        group = a.name[len(a.name) - len(key) + len(prefix) :] if prefix else ""
        if prefix is not None and group.upper() in folded:
            continue
        near = suggestions(key, known.names)
        if near:
            review.at_name(
                a, "knob-unknown", f"unknown knob {a.name}; did you mean {or_list(near)}? (an unknown name is ignored)"
            )
        elif prefix is not None:
            review.at_name(a, "group-knob-unknown", _group_knob_message(a.name, group, groups))


def _group_knob_message(name: str, group: str, groups: list[str]) -> str:
    if not groups:
        return f"{name} is for group {group!r}, but GROUP_NAMES is not set: it has no effect"
    text = f"{name} is for group {group!r}, which GROUP_NAMES does not list: it has no effect"
    near = suggestions(name, [p + g for p in GROUP_PREFIXES for g in groups])
    return text + (f"; did you mean {or_list(near)}?" if near else "")


def check_macros(review: ConfigReview) -> None:
    """macro-undefined: ``$(NAME)`` (without a default) of a name defined nowhere."""
    cfg = review.config
    assert cfg is not None
    defined = cfg.names()
    for a in _live(review):
        for m in MACRO_RE.finditer(a.written):
            name = m.group(1)
            if m.group(2) is not None or name.upper() in DEFAULTS:
                continue
            d = cfg.definition(name)
            if d is not None and d.value != "":
                continue
            line, col = review.source.find(a.file, a.line, "$(" + name, word=False, span=200)
            near = suggestions(name, defined)
            hint = f"; did you mean $({or_list(near)})?" if near else ""
            review.at(
                a.file,
                line,
                "macro-undefined",
                f"$({name}) in {a.name} is never defined, so it expands to nothing{hint}",
                col,
            )


def check_overrides(review: ConfigReview) -> None:
    """knob-overridden: a name assigned again later in the same file (not building on
    the earlier value)."""
    seen: dict[tuple[str, str], Assignment] = {}
    cfg = review.config
    assert cfg is not None
    for a in cfg.assignments:
        k = (a.file, a.name.upper())
        earlier = seen.get(k)
        if earlier is not None and not a.builds_on_previous and earlier.line != a.line:
            review.at_name(
                a,
                "knob-overridden",
                f"{a.name} is defined at line {earlier.line} and again here at line {a.line}: "
                f"only this definition counts, the one at line {earlier.line} has no effect",
            )
        seen[k] = a


def check_policy_knobs(review: ConfigReview) -> None:
    """policy-knob-unused: knobs of a priority model other than the selected one."""
    try:
        selected = str(review.knobs.get("MATCHMAKER_PRIORITY_POLICY") or "htcondor").lower()  # type: ignore[union-attr]
    except ConfigError:
        return
    for a in _live(review):
        key = a.key
        model = next((m for p, m in POLICY_PREFIXES.items() if key.startswith(p)), None)
        if model is not None and model != selected and known_names().known(key):
            review.at_name(
                a,
                "policy-knob-unused",
                f"{a.name} belongs to the {model} priority model, but MATCHMAKER_PRIORITY_POLICY "
                f"selects {selected}: it has no effect",
            )
        elif key == "MATCHMAKER_POLICY_PRIORITY_EXPR" and selected not in EXPR_POLICIES:
            review.at_name(
                a,
                "policy-knob-unused",
                f"{a.name} is read only by the {', '.join(EXPR_POLICIES)} priority models, but "
                f"MATCHMAKER_PRIORITY_POLICY selects {selected}: it has no effect",
            )


def check_expressions(review: ConfigReview) -> None:
    """expr-syntax: every expression-valued knob that is set must parse."""
    cfg = review.config
    assert cfg is not None
    for name in sorted(known_names().expressions):
        d = cfg.definition(name)
        if d is None or d.value == "" or d.line is None:
            continue
        try:
            raw = cfg.get_raw(name)
        except ConfigError as exc:
            review.error(exc, "config-error")
            continue
        if raw is None:
            continue
        try:
            parse_expr(raw)
        except ClassAdError as exc:
            start = review.source.value_column(d.file, d.line)
            message = f"{d.name} is not a valid expression: {' '.join(exc.message.split())}"
            one_line = not review.source.line_text(d.file, d.line).rstrip().endswith("\\")
            if raw == d.value.strip() and "\n" not in raw and one_line and exc.column is not None:
                review.at(d.file, d.line, "expr-syntax", message, start + exc.column - 1)
            else:
                shown = f" (line {exc.line}, column {exc.column} of its expanded value)" if exc.column else ""
                review.at(d.file, d.line, "expr-syntax", message + shown, start)


def check_values(review: ConfigReview) -> None:
    """knob-value: every declared knob that is set must have a value of its type; then
    the settings are built (group tree, map file, priority model) as a cycle builds them."""
    knobs, cfg = review.knobs, review.config
    assert knobs is not None and cfg is not None
    failed = False
    for name, knob in KNOBS.items():
        if knob.type == "expr" or (
            cfg.definition(name) is None and (knob.alias is None or cfg.definition(knob.alias) is None)
        ):
            continue
        try:
            knobs.get(name)
        except ConfigError as exc:
            review.error(exc, "knob-value")
            failed = True
    try:
        review.group_tree = group_tree_from_knobs(knobs)
    except ConfigError as exc:
        _once(review, exc)
    if failed:
        return
    try:
        review.settings = Settings.from_knobs(knobs)
    except ConfigError as exc:
        _once(review, exc)


def _once(review: ConfigReview, exc: ConfigError) -> None:
    """``exc`` as a finding, unless one is already reported on its line."""
    if not any(f.file == exc.file and f.line == exc.line for f in review.findings):
        review.error(exc, "knob-value" if exc.line is not None else "config-error")


__all__ = ["ConfigReview", "GROUP_PREFIXES", "check_config"]
