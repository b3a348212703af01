"""Configuration is read in one layer (docs/architecture.md, rule 4).

Only ``matchmaker/config/`` reads configuration values: the other packages get typed
:class:`~matchmaker.config.settings.Settings` (and the records they carry).  The one
exception is ``lint`` (``matchmaker/review``'s configuration checks), which inspects the
raw configuration on purpose: which names are set, where, and to what text.

The check reads every module's source and fails on what a raw read is spelled with:
importing the knob table itself (``KNOBS``, ``PATTERNS``, ``DEFAULTS``), calling the
macro table's readers (``definition``, ``defined``, ``get_raw``, ``expand``), or using
anything of a ``Knobs`` object held as ``knobs`` or ``<x>.knobs`` (``knobs.get(...)``,
``loaded.knobs.pattern(...)``, ``g = knobs.get``).  Passing a ``Knobs`` along, or
building one (``Knobs.from_file``), is no read.
"""

from __future__ import annotations

import ast

import pytest
from test_layers import MODULES

TABLE_NAMES = {"KNOBS", "PATTERNS", "DEFAULTS"}
RAW_READERS = {"definition", "defined", "get_raw", "expand"}
# lint: the configuration's own review, which inspects its raw text on purpose
INSPECTORS = {
    "matchmaker.review.config_checks",
    "matchmaker.review.group_checks",
    "matchmaker.review.lint",
    "matchmaker.review.names",
    "matchmaker.review.recording",
}


def raw_reads(source: str) -> list[str]:
    """The raw configuration reads of a module's source, as ``line: text`` in line order."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("config.knobs"):
            found += [(node.lineno, f"imports {a.name}") for a in node.names if a.name in TABLE_NAMES]
        elif isinstance(node, ast.Attribute):
            held = node.value
            on_knobs = (isinstance(held, ast.Name) and held.id == "knobs") or (
                isinstance(held, ast.Attribute) and held.attr == "knobs"
            )
            if on_knobs:
                found.append((node.lineno, ast.unparse(node)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RAW_READERS:
            found.append((node.lineno, f"{ast.unparse(node.func)}(...)"))
    return [f"{line}: {text}" for line, text in sorted(found)]


def test_the_detector_sees_every_spelling_of_a_raw_read():
    source = (
        "from ..config.knobs import KNOBS, Knobs\n"
        "def f(knobs, loaded, cfg):\n"
        "    g = knobs.get\n"
        "    loaded.knobs.pattern('SLURM_SHARES_<a>', 'x')\n"
        "    cfg.get_raw('X')\n"
        "    return knobs.priority_halflife\n"
    )
    assert raw_reads(source) == [
        "1: imports KNOBS",
        "3: knobs.get",
        "4: loaded.knobs.pattern",
        "5: cfg.get_raw(...)",
        "6: knobs.priority_halflife",
    ]
    passing = (
        "from ..config.knobs import Knobs\ndef f(path, loaded):\n    return run(Knobs.from_file(path), loaded.knobs)\n"
    )
    assert raw_reads(passing) == []


def outside_config(mod: str) -> bool:
    return mod.startswith("matchmaker") and not mod.startswith("matchmaker.config") and mod not in INSPECTORS


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if outside_config(m)))
def test_only_the_config_layer_reads_configuration(mod):
    reads = raw_reads(MODULES[mod].read_text(encoding="utf-8"))
    assert not reads, f"{mod} reads raw configuration (read it in matchmaker/config/ instead): {reads}"


def test_the_inspectors_exist():
    """The exceptions name real modules (a renamed one must not leave a stale pass)."""
    assert INSPECTORS <= set(MODULES)
