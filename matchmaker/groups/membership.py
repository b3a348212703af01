"""Who belongs to which accounting group.

Two directions, both pure: the negotiator reads a submitter name (`group.sub.user@domain`)
and finds the configured group it negotiates in (docs/negotiation.md, group membership); the submit
side maps a user to the groups they may use with an accounting-group map file (the
AssignAccountingGroup feature).

:class:`GroupMapping` applies a map to a job as that transform does: a job
without a group gets its owner's default group, and a job that claims a group
its owner may not use is refused (or, with ``check_request`` off, moved to the
default group) -- the claim is never simply trusted.

Map file format, one rule per line (blank lines and lines whose first field starts with
`#` are skipped)::

    * Alice             group_physics
    * /^student_.*/i    group_students,group_teaching

Field 1 is `*` (the method column of every ClassAd user map).  Field 2 is a user name,
matched exactly and case-sensitively, or `/regex/` with an optional `i` flag, searched
anywhere in the name (unanchored, like the reference's PCRE match).  Field 3 is a
comma-separated list of groups: the first is the user's default, the list is what the
user may request; `\\0`..`\\9` in it are replaced by the regex's groups.  Fields may be
double-quoted (`\\"` inside); a list with blanks in it must be.  Rules are tried in file
order and the first match wins.  The reference logs and skips a malformed line and ignores
text after field 3; here both raise `MapFileError` (only a trailing `# comment` is
allowed), so a typo cannot silently drop a rule.  `@include` is not supported (no I/O
here), nor the PCRE-only `U` flag; regexes run on Python's `re`, which agrees with PCRE
on ordinary patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

from .quotas import ROOT, GroupTree, fold


def group_of_submitter(submitter: str, tree: GroupTree) -> str:
    """The group a submitter negotiates in.  For `g.sub.user@domain`, walk `g`, `g.sub`
    down the tree and keep the deepest configured group (an undefined subgroup falls back
    to its nearest defined ancestor); no `.` before the last `@` means the root.  A name
    without `@` is a group name: itself if configured, else the root."""
    at = submitter.rfind("@")
    if at < 0:
        return tree.lookup(submitter) or ROOT
    path = submitter[:at]
    dot = path.rfind(".")
    if dot < 0:
        return ROOT
    node = ROOT
    for part in path[:dot].split("."):
        deeper = tree.lookup(part if node == ROOT else f"{node}.{part}")
        if deeper is None or deeper == ROOT:  # `<none>` is never a path component
            break
        node = deeper
    return node


def group_prio_factor(submitter: str, tree: GroupTree) -> Optional[float]:
    """GROUP_PRIO_FACTOR of the submitter's group, the default factor of its members;
    None when unset or 0 (the reference treats 0 as unset)."""
    factor = tree.nodes[group_of_submitter(submitter, tree)].prio_factor
    return factor if factor else None


def negotiating_members(tree: GroupTree, submitters: Iterable[str]) -> dict[str, list[str]]:
    """Submitter names per negotiating group, every group present.  Names without `@`
    are skipped (the reference ignores such ads).  Under autoregroup the root's list also
    holds every autoregroup group's submitters, after its own, in tree order."""
    members: dict[str, list[str]] = {name: [] for name in tree.order}
    for sub in submitters:
        if "@" in sub:
            members[group_of_submitter(sub, tree)].append(sub)
    if tree.autoregroup:
        for name in tree.order[1:]:
            if tree.nodes[name].autoregroup:
                members[ROOT].extend(members[name])
    return members


def group_demand(tree: GroupTree, requests: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Sum `(submitter, running + idle)` pairs per group (weighted or plain counts, as
    NEGOTIATOR_USE_WEIGHTED_DEMAND says); names without `@` are skipped."""
    demand = {name: 0.0 for name in tree.order}
    for sub, amount in requests:
        if "@" in sub:
            demand[group_of_submitter(sub, tree)] += amount
    return demand


class MapFileError(ValueError):
    """A malformed accounting-group map line; `line` and `column` count from 1."""

    def __init__(self, message: str, line: int, column: int) -> None:
        self.message = message
        self.line = line
        self.column = column
        super().__init__(f"line {line}, column {column}: {message}")


@dataclass(frozen=True)
class MapRule:
    """One rule: a literal user or a compiled regex, and the raw group list text."""

    line: int
    user: str
    pattern: Optional[re.Pattern[str]]
    groups: str

    def match(self, user: str) -> Optional[list[str]]:
        """The captured texts (`\\0` first) if the rule applies to `user`, else None."""
        if self.pattern is None:
            return [user] if user == self.user else None
        found = self.pattern.search(user)
        if found is None:
            return None
        return [found.group(0)] + [g or "" for g in found.groups()]


@dataclass(frozen=True)
class GroupMap:
    """A parsed map file: lookups of the groups a user may use."""

    rules: tuple[MapRule, ...]

    def allowed_groups(self, user: str) -> Optional[list[str]]:
        """The groups of the first rule matching `user`, default first; None if no rule."""
        for rule in self.rules:
            captured = rule.match(user)
            if captured is not None:
                text = _substitute(rule.groups, captured)
                return [g.strip() for g in text.split(",") if g.strip()]
        return None

    def default_group(self, user: str) -> Optional[str]:
        """The group a user's job gets when it asks for none; None if no rule matches."""
        groups = self.allowed_groups(user)
        return groups[0] if groups else None

    def resolve(self, user: str, requested: Optional[str] = None) -> Optional[str]:
        """The requested group if the user may use it (compared case-insensitively, as
        group names are), else the default; None if no rule matches."""
        groups = self.allowed_groups(user)
        if not groups:
            return None
        if requested is not None:
            for group in groups:
                if fold(group) == fold(requested):
                    return group
        return groups[0]


@dataclass(frozen=True)
class GroupMapping:
    """The map file in force, as the schedd's AssignAccountingGroup transform applies it."""

    groups: GroupMap
    source: str  # the map file, as named in refusals
    check_request: bool = True  # refuse a job that asks for a group its owner may not use

    def assign(self, owner: str, requested: Optional[str]) -> tuple[Optional[str], Optional[str]]:
        """``(group, refusal)`` for a job of ``owner`` that asked for ``requested`` (None: no
        group).  The job gets the requested group if the owner may use it (spelled as the
        map spells it), else -- with ``check_request`` off -- the owner's default; with it
        on, the job is refused and ``refusal`` says why.  A job without a group gets the
        owner's default group; an owner no rule names may use no group at all."""
        allowed = self.groups.allowed_groups(owner) or []
        if requested is None:
            return (allowed[0] if allowed else None), None
        for group in allowed:
            if fold(group) == fold(requested):
                return group, None
        if not self.check_request:
            return (allowed[0] if allowed else None), None
        why = f"it may use {', '.join(allowed)}" if allowed else "no rule of the map names that user"
        return None, (
            f"accounting group {requested!r} is not allowed for user {owner!r} ({why}; map file {self.source})"
        )


def _substitute(template: str, captured: list[str]) -> str:
    """Replace `\\N` by captured text N; a backslash not followed by a known group stays."""

    def one(m: re.Match[str]) -> str:
        index = int(m.group(1))
        return captured[index] if index < len(captured) else m.group(0)

    return re.sub(r"\\([0-9])", one, template)


_BLANK = " \t"


def _field(text: str, pos: int, line: int, allow_regex: bool) -> tuple[str, bool, str, int]:
    """Read the field at `pos` (leading blanks skipped): (value, is_regex, flags, end)."""
    while pos < len(text) and text[pos] in _BLANK:
        pos += 1
    start = pos
    if pos >= len(text):
        return "", False, "", pos
    quote = text[pos]
    if quote == '"' or (quote == "/" and allow_regex):
        value, pos = [], pos + 1
        while pos < len(text) and text[pos] != quote:
            if text[pos] == "\\" and pos + 1 < len(text) and text[pos + 1] in (quote, "\\"):
                # `\"` (or `\/` in a regex) is the delimiter itself and `\\` one backslash,
                # as in the reference; any other backslash is kept for the regex engine.
                value.append(text[pos + 1])
                pos += 2
                continue
            value.append(text[pos])
            pos += 1
        if pos >= len(text):
            kind = "quoted string" if quote == '"' else "regular expression"
            raise MapFileError(f"unterminated {kind}", line, start + 1)
        pos += 1
        flags_start = pos
        while pos < len(text) and text[pos] not in _BLANK:
            pos += 1
        flags = text[flags_start:pos]
        if quote == '"' and flags:
            raise MapFileError("text directly after a closing quote", line, flags_start + 1)
        if flags.strip("i"):
            raise MapFileError(f"unsupported regular expression flags {flags!r} (only 'i')", line, flags_start + 1)
        return "".join(value), quote == "/", flags, pos
    while pos < len(text) and text[pos] not in _BLANK:
        pos += 1
    return text[start:pos], False, "", pos


def parse_group_map(text: str) -> GroupMap:
    """Parse map-file text (see the module docstring); raises MapFileError on a bad line."""
    rules = []
    for number, raw in enumerate(text.split("\n"), start=1):
        raw = raw.removesuffix("\r")
        method, _, _, pos = _field(raw, 0, number, allow_regex=False)
        if method == "" or method.startswith("#"):
            continue
        column = len(raw) - len(raw.lstrip(_BLANK)) + 1
        if method == "@include":
            raise MapFileError("@include is not supported; pass the included text", number, column)
        if method != "*":
            raise MapFileError(f"first field must be '*', not {method!r}", number, column)
        user_col = len(raw) - len(raw[pos:].lstrip(_BLANK)) + 1
        user, is_regex, flags, pos = _field(raw, pos, number, allow_regex=True)
        if user == "":
            raise MapFileError("missing user name or /regex/", number, user_col)
        groups_col = len(raw) - len(raw[pos:].lstrip(_BLANK)) + 1
        groups, _, _, pos = _field(raw, pos, number, allow_regex=False)
        if groups == "":
            raise MapFileError("missing accounting group list", number, groups_col)
        rest = raw[pos:].strip(_BLANK)
        if rest and not rest.startswith("#"):
            raise MapFileError(
                f"unexpected text {rest!r} after the group list", number, len(raw) - len(raw[pos:].lstrip(_BLANK)) + 1
            )
        if any(not item.strip() for item in groups.split(",")):
            raise MapFileError(f"empty group name in list {groups!r}", number, groups_col)
        pattern = None
        if is_regex:
            try:
                pattern = re.compile(user, re.IGNORECASE if "i" in flags else 0)
            except re.error as exc:
                raise MapFileError(f"bad regular expression /{user}/: {exc}", number, user_col) from None
        rules.append(MapRule(number, user, pattern, groups))
    return GroupMap(tuple(rules))
