"""The knob names lint knows, and near-miss suggestions for the ones it does not.

The known names are the project's knob table (:mod:`matchmaker.config.knobs`, with the
older names it reads as aliases) and the list of HTCondor's documented matchmaking
knobs shipped as :file:`htcondor_knobs.txt` (its header names the source).  A name with
a ``<x>`` placeholder (``GROUP_QUOTA_<g>``) stands for every name it matches.

A suggestion is a known name within a small edit distance (insertions, deletions,
substitutions and swaps of two neighbouring letters, case ignored): one edit for names
of up to six letters, two for longer ones.  Every known name at the smallest distance
is suggested.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..config.knobs import KNOBS, PATTERNS

DATA_FILE = "htcondor_knobs.txt"


@dataclass(frozen=True)
class KnownNames:
    """Concrete names (upper case), patterns as regular expressions, expression knobs."""

    names: frozenset[str]
    patterns: tuple[re.Pattern[str], ...]
    expressions: frozenset[str]

    def known(self, name: str) -> bool:
        key = name.upper()
        return key in self.names or any(p.fullmatch(key) for p in self.patterns)


def _pattern(name: str) -> re.Pattern[str]:
    parts = re.split(r"<\w+>", name.upper())
    return re.compile(".+".join(re.escape(p) for p in parts))


def read_data() -> list[tuple[str, bool]]:
    """The shipped list: (name, is an expression) per line."""
    text = resources.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            out.append((words[0], words[1:] == ["expr"]))
    return out


@lru_cache(maxsize=1)
def known_names() -> KnownNames:
    """Every name lint accepts as a knob."""
    data = read_data()
    names = {k.upper() for k in KNOBS} | {k.alias.upper() for k in KNOBS.values() if k.alias}
    names |= {n.upper() for n, _ in data if "<" not in n}
    patterns = [n for n in PATTERNS] + [n for n, _ in data if "<" in n]
    expressions = {k.upper() for k, knob in KNOBS.items() if knob.type == "expr"}
    expressions |= {n.upper() for n, is_expr in data if is_expr and "<" not in n}
    return KnownNames(frozenset(names), tuple(_pattern(p) for p in dict.fromkeys(patterns)), frozenset(expressions))


def distance(a: str, b: str, limit: int) -> int:
    """Edit distance of ``a`` and ``b`` counting a swap of neighbours as one edit;
    ``limit + 1`` as soon as it is certain to exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def allowed_edits(name: str) -> int:
    return 1 if len(name) <= 6 else 2


def suggestions(name: str, candidates: frozenset[str] | set[str] | list[str]) -> list[str]:
    """The candidates closest to ``name`` (case ignored) within :func:`allowed_edits`,
    sorted; empty when none is that close or ``name`` is itself a candidate."""
    key = name.upper()
    limit = allowed_edits(key)
    best, found = limit + 1, []
    for cand in candidates:
        d = distance(key, cand.upper(), limit)
        if d == 0:
            return []
        if d < best:
            best, found = d, [cand]
        elif d == best:
            found.append(cand)
    return sorted(found) if best <= limit else []


def or_list(names: list[str]) -> str:
    """``A``, ``A or B``, ``A, B or C``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


__all__ = ["DATA_FILE", "KnownNames", "allowed_edits", "distance", "known_names", "or_list", "read_data", "suggestions"]
