"""The project's documents link to each other by heading anchors: every such link must land.

Anchors are GitHub's automatic heading anchors (lower case, punctuation dropped, spaces
as hyphens), so renaming a heading breaks the links to it; this test says which.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import ROOT

DOCS = ("docs/negotiation.md", "docs/knobs.md", "docs/language.md", "docs/differences.md", "docs/testing.md")
LINK = re.compile(r"\]\(([^)\s]+?\.md)(?:#([^)\s]+))?\)")
TEXT_REF = re.compile(r"\b(docs/[a-z_]+\.md)#([a-z0-9_-]+)")


def github_anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6}\s+(.*?)\s*$", line)):
            found.add(github_anchor(m.group(1)))
    return found


def markdown_files() -> list[Path]:
    files = [ROOT / d for d in DOCS if (ROOT / d).exists()]
    files += sorted((ROOT / "examples").glob("*/README.md")) + [ROOT / "README.md"]
    return [f for f in files if f.exists()]


def test_anchor_rule_matches_github():
    assert github_anchor("One submitter's session") == "one-submitters-session"
    assert github_anchor("Example 7.12") == "example-712"
    assert github_anchor("Manual or code 1: priority preemption") == "manual-or-code-1-priority-preemption"
    assert github_anchor("include, use and conditionals") == "include-use-and-conditionals"


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_markdown_links_land_on_headings(path: Path):
    broken = []
    for target, anchor in LINK.findall(path.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        doc = path.parent / target if target else path
        if not doc.exists():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(doc):
            broken.append(f"{target}#{anchor}: no such heading")
    assert not broken, broken


def test_code_references_land_on_headings():
    """Links of the form ``docs/<page>.md#<anchor>`` written in code or comments."""
    broken = []
    for path in sorted(ROOT.glob("**/*.py")):
        if any(part.startswith(".") or part in ("build", "venv") for part in path.relative_to(ROOT).parts):
            continue
        for doc, anchor in TEXT_REF.findall(path.read_text(encoding="utf-8", errors="replace")):
            if not (ROOT / doc).exists() or anchor not in anchors(ROOT / doc):
                broken.append(f"{path.relative_to(ROOT)}: {doc}#{anchor}")
    assert not broken, broken
