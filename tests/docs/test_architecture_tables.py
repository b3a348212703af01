"""docs/architecture.md names every module: the floor plan is complete.

Each package's section has a table of layers.  A top-level module (``classad/ad.py``)
must be named in the first cell of a row of its package's table; a subpackage's module
(``matchmaker/cycle/pie.py``) must be named, as ``pie.py``, in the row whose first cell
names the subpackage (``cycle/``).
"""

from __future__ import annotations

import pytest
from support import ROOT

ARCHITECTURE = ROOT / "docs" / "architecture.md"
SECTIONS = {"classad": "## The language: `classad/`", "matchmaker": "## The matchmaker: `matchmaker/`"}


def table_rows(text: str, heading: str) -> list[tuple[str, str]]:
    """``(first cell, whole row)`` of each row of the first table under ``heading``."""
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [(row.split("|")[1], row) for row in rows]


def unnamed(modules: list[str], rows: list[tuple[str, str]]) -> list[str]:
    """The ``modules`` (paths inside one package, ``ad.py``, ``cycle/pie.py``) that the
    package's table ``rows`` does not name."""
    missing = []
    for module in modules:
        parts = module.split("/")
        if len(parts) == 1:
            named = any(f"`{parts[0]}`" in first for first, _ in rows)
        else:
            named = any(f"`{parts[0]}/`" in first and f"`{parts[-1]}`" in row for first, row in rows)
        if not named:
            missing.append(module)
    return missing


def modules_of(package: str) -> list[str]:
    """Every module of ``package`` as a path inside it, without the packages' own ``__init__.py``."""
    paths = [p.relative_to(ROOT / package).as_posix() for p in sorted((ROOT / package).rglob("*.py"))]
    return [p for p in paths if not (p.endswith("__init__.py") and p.count("/") <= 1)]


def test_the_check_sees_a_module_missing_from_its_row():
    text = (
        "## T\n\n| layer | owns |\n|---|---|\n| `a.py` | the a |\n"
        "| `sub/`, `b.py` | the sub (`x.py` the x) and the b |\n\n## U\n\n| `c.py` | c |\n"
    )
    rows = table_rows(text, "## T")
    assert [first for first, _ in rows] == [" `a.py` ", " `sub/`, `b.py` "]
    assert unnamed(["a.py", "b.py", "sub/x.py"], rows) == []
    # c.py is in another section; y.py is in no row; x.py is not a top-level module
    assert unnamed(["c.py", "sub/y.py", "x.py", "other/x.py"], rows) == ["c.py", "sub/y.py", "x.py", "other/x.py"]


@pytest.mark.parametrize("package", sorted(SECTIONS))
def test_every_module_has_its_place_in_the_floor_plan(package):
    rows = table_rows(ARCHITECTURE.read_text(encoding="utf-8"), SECTIONS[package])
    assert rows, f"no table under {SECTIONS[package]!r}"
    missing = unnamed(modules_of(package), rows)
    assert not missing, f"docs/architecture.md does not name these modules in their package's row: {missing}"
