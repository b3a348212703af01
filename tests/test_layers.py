"""The import rule of the house: packages import downward only, with no cycles.

Every import statement in ``classad`` and ``matchmaker`` (module level or inside a
function) is read from the source; the test fails when a module imports a layer above
its own, when ``classad`` imports ``matchmaker``, or when the module graph has a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# matchmaker's layers, lowest first: a module may import its own layer and those below.
MATCHMAKER_LAYERS = ["errors", "groups", "accounting", "config", "pool", "policies", "cycle", "simulate", "analyze",
                     "review", "api", "cli"]

# classad's layers, lowest first; names on one line share a layer.  The values hold
# two late-bound slots (the ad class, the list element evaluator) that classad.ad and
# classad.evaluate fill at import, and the ad's printers are registered by the formats.
CLASSAD_LAYERS = [
    ["errors", "bulk"],
    ["values"],
    ["limits", "timetext"],
    ["ast"],
    ["operators", "records", "lexemes", "layout"],
    ["descent", "grammar_parser"],
    ["parser", "unparse"],
    ["functions"],
    ["evaluate"],
    ["refs"],
    ["ad"],
    ["formats"],
    ["columnar", "testing", "analyze"],
    ["cli_query"],
    ["cli"],
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def imports_of(path: Path, known: set[str]) -> list[tuple[str, int]]:
    """The project modules ``path`` imports, resolved (``from pkg import sub`` -> ``pkg.sub``)."""
    mod = module_name(path)
    package = mod if is_package(path) else mod.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub if sub in known else target, node.lineno))
    return [(m, line) for m, line in found if m.split(".")[0] in ("classad", "matchmaker")]


def project_modules() -> dict[str, Path]:
    files = [p for pkg in ("classad", "matchmaker") for p in (ROOT / pkg).rglob("*.py")]
    return {module_name(p): p for p in files}


MODULES = project_modules()
GRAPH = {m: imports_of(p, set(MODULES)) for m, p in MODULES.items()}


def matchmaker_layer(mod: str) -> int:
    parts = mod.split(".")
    if len(parts) == 1:           # the facade itself may import everything
        return len(MATCHMAKER_LAYERS)
    return MATCHMAKER_LAYERS.index(parts[1])


def classad_layer(mod: str) -> int:
    parts = mod.split(".")
    if len(parts) == 1:           # the facade itself may import everything
        return len(CLASSAD_LAYERS)
    return next(i for i, names in enumerate(CLASSAD_LAYERS) if parts[1] in names)


def test_every_classad_module_belongs_to_a_layer():
    known = {name for names in CLASSAD_LAYERS for name in names}
    for mod in MODULES:
        if mod.startswith("classad."):
            assert mod.split(".")[1] in known, f"{mod} is in no layer of CLASSAD_LAYERS"


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if m.startswith("classad.")))
def test_classad_imports_flow_downward(mod):
    mine = classad_layer(mod)
    for target, line in GRAPH[mod]:
        if target.startswith("classad"):
            assert target != "classad", f"{mod}:{line} imports the package itself; import the module"
            assert classad_layer(target) <= mine, (
                f"{mod}:{line} imports {target}, a higher layer ({CLASSAD_LAYERS[classad_layer(target)]})")


def test_every_matchmaker_module_belongs_to_a_layer():
    for mod in MODULES:
        if mod.startswith("matchmaker."):
            assert mod.split(".")[1] in MATCHMAKER_LAYERS, f"{mod} is in no layer of MATCHMAKER_LAYERS"


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if m.startswith("matchmaker.")))
def test_matchmaker_imports_flow_downward(mod):
    mine = matchmaker_layer(mod)
    for target, line in GRAPH[mod]:
        if target.startswith("matchmaker"):
            assert target != "matchmaker", f"{mod}:{line} imports the facade; import the module itself"
            assert matchmaker_layer(target) <= mine, (
                f"{mod}:{line} imports {target}, a higher layer ({MATCHMAKER_LAYERS[matchmaker_layer(target)]})")


def test_the_language_never_imports_the_matchmaker():
    for mod, imports in GRAPH.items():
        if mod.startswith("classad"):
            bad = [f"{mod}:{line} imports {t}" for t, line in imports if t.startswith("matchmaker")]
            assert not bad, bad


def find_cycle(prefix: str) -> list[str] | None:
    """A cycle among the modules under ``prefix`` (packages excluded: importing a
    submodule runs its package's ``__init__``, which may re-export it), or None."""
    nodes = {m for m in MODULES if m.startswith(prefix) and not is_package(MODULES[m])}
    edges = {m: {t for t, _ in GRAPH[m] if t in nodes and t != m} for m in nodes}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                return stack[stack.index(t):] + [t]
            if t not in state:
                found = visit(t)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(nodes):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_matchmaker_has_no_import_cycle():
    assert find_cycle("matchmaker.") is None, " -> ".join(find_cycle("matchmaker.") or [])


def test_classad_has_no_import_cycle():
    assert find_cycle("classad.") is None, " -> ".join(find_cycle("classad.") or [])
