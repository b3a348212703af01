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
MATCHMAKER_LAYERS = [
    "errors",
    "groups",
    "accounting",
    "config",
    "pool",
    "policies",
    "cycle",
    "simulate",
    "analyze",
    "review",
    "api",
    "sweeps",
    "testing",
    "cli",
    "__main__",
]

# classad's layers, lowest first; names on one line share a layer.  What the evaluator
# needs of an ad is in adcore, below it; the ad's printers are in printing, below the ad.
CLASSAD_LAYERS = [
    ["errors", "bulk"],
    ["values"],
    ["limits", "timetext"],
    ["ast"],
    ["operators", "records", "lexemes", "layout"],
    ["adcore"],
    ["descent", "grammar_parser"],
    ["parser", "unparse"],
    ["printing"],
    ["functions"],
    ["evaluate"],
    ["refs"],
    ["ad"],
    ["formats"],
    ["columnar", "testing", "analyze"],
    ["cli_grammar"],
    ["cli_query"],
    ["cli", "__main__"],
]


# Inside each subpackage, its modules' layers, lowest first (names on one line share a
# layer): a module imports only modules of its own layer and the layers below it.  A new
# module gets a place here; the order is the subpackage's floor plan (docs/architecture.md).
SUBPACKAGE_LAYERS = {
    "classad.columnar": [
        ["column"],
        ["families", "functions", "generations", "memo", "ops", "ranks"],
        ["table"],
        ["rowonly", "stacked"],
        ["compile"],
        ["evaluate"],
        ["select"],
    ],
    "classad.formats": [
        ["names", "old_compact", "sources"],
        ["detect", "old_format", "splitter", "xml_builder"],
        ["json_format", "new_format", "xml_format"],
    ],
    "classad.functions": [
        ["common", "registry"],
        ["htcondor", "lists", "math", "pcre", "stringlists", "strings", "time", "types"],
        ["meta", "regex"],
    ],
    "classad.printing": [["printers"], ["json_text", "new_text", "old_text"]],
    "classad.testing": [["canonical", "choices", "schema"], ["ads", "expressions"]],
    "matchmaker.accounting": [["priority_math"], ["store"], ["reports"]],
    "matchmaker.analyze": [["clauses", "pool_view"], ["partitionable", "suggest"], ["job", "slot"], ["render"]],
    "matchmaker.cli": [
        ["__main__", "arguments", "explained", "policies", "progress"],
        ["analyze", "review", "simulate", "sweep"],
        ["commands"],
    ],
    "matchmaker.config": [
        ["policy_params", "statements"],
        ["language"],
        ["knobs"],
        ["maui_settings"],
        ["policy_settings"],
        ["settings"],
    ],
    "matchmaker.cycle": [
        ["carry", "demand", "draws", "ephemeral", "slot_carry", "table_carry"],
        ["idle_jobs", "verdicts"],
        ["evaluator", "results"],
        ["build_reuse", "candidates", "claims"],
        ["cp_lists"],
        ["row_results"],
        ["columnar_match"],
        ["explain", "matching"],
        ["state"],
        ["group_passes", "ordered", "pie"],
        ["negotiator"],
        ["session"],
    ],
    "matchmaker.groups": [["quotas"], ["membership"]],
    "matchmaker.policies": [
        ["dirac", "htcondor", "jobs", "lsf", "maui", "slurm"],
        ["dirac_runner", "lsf_runner", "maui_runner", "slurm_runner"],
        ["runners"],
    ],
    "matchmaker.pool": [["ads", "partition"], ["autocluster", "concurrency"]],
    "matchmaker.review": [
        ["cycle_diff", "findings", "names", "recording", "series_diff"],
        ["attributes", "config_checks"],
        ["group_checks", "pool_clauses"],
        ["lint"],
    ],
    "matchmaker.simulate": [["atomic", "jobs", "spans"], ["series"], ["loop", "plots"], ["outputs"]],
    "matchmaker.sweeps": [["spec", "summary"], ["worker"], ["engine", "plan", "result", "store"], ["plots"]],
    "matchmaker.testing": [["knobs"], ["reads"], ["pools"], ["runs"], ["properties"]],
}


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
    if len(parts) == 1:  # the facade itself may import everything
        return len(MATCHMAKER_LAYERS)
    return MATCHMAKER_LAYERS.index(parts[1])


def classad_layer(mod: str) -> int:
    parts = mod.split(".")
    if len(parts) == 1:  # the facade itself may import everything
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
                f"{mod}:{line} imports {target}, a higher layer ({CLASSAD_LAYERS[classad_layer(target)]})"
            )


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
                f"{mod}:{line} imports {target}, a higher layer ({MATCHMAKER_LAYERS[matchmaker_layer(target)]})"
            )


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
                return stack[stack.index(t) :] + [t]
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


# ---- back-doors the import graph cannot see ------------------------------------------------


def imported_names(tree: ast.Module) -> set[str]:
    """Names a module binds by importing them from a project module."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (
            node.level or (node.module or "").split(".")[0] in ("classad", "matchmaker")
        ):
            names |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {
                (alias.asname or alias.name).split(".")[0]
                for alias in node.names
                if alias.name.split(".")[0] in ("classad", "matchmaker")
            }
    return names


def root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def registrations(source: str) -> list[str]:
    """Module-level statements that fill a slot of an object imported from another project
    module (``LATE.ad_class = ClassAd``, ``PRINTERS["new"] = write``): a lower layer then
    depends at run time on a higher one, behind the import graph's back."""
    tree = ast.parse(source)
    imported = imported_names(tree)
    found = []
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else ([node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        )
        for target in targets:
            if isinstance(target, (ast.Attribute, ast.Subscript)) and root_name(target) in imported:
                found.append(f"{node.lineno}: {ast.unparse(target)}")
    return found


def private_calls(source: str) -> list[str]:
    """Calls of a private name (``x._name(...)``) that the module does not define itself
    and that are not on ``self``/``cls``: another module's private method."""
    tree = ast.parse(source)
    own = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if not name.startswith("_") or name.startswith("__") or name in own:
                continue
            receiver = node.func.value
            if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
                continue
            found.append(f"{node.lineno}: {ast.unparse(node.func)}")
    return found


def test_the_back_door_detectors_see_what_they_forbid():
    registering = "from .values import LATE\nfrom ..ad import PRINTERS\nLATE.ad_class = object\nPRINTERS['new'] = str\n"
    assert registrations(registering) == ["3: LATE.ad_class", "4: PRINTERS['new']"]
    assert registrations("import os\nos.environ['X'] = '1'\nlocal = {}\nlocal['a'] = 1\n") == []
    calling = "def f(ad):\n    return ad._lookup_node('x')\nclass A:\n    def g(self):\n        return self._h()\n"
    assert private_calls(calling) == ["2: ad._lookup_node"]


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_no_module_fills_another_modules_slots(mod):
    assert not registrations(MODULES[mod].read_text(encoding="utf-8")), mod


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_no_module_calls_another_modules_private_methods(mod):
    assert not private_calls(MODULES[mod].read_text(encoding="utf-8")), mod


# ---- inside the subpackages ------------------------------------------------------------------


def subpackage_layer(mod: str) -> tuple[str, int] | None:
    """``(subpackage, layer)`` of a module inside a subpackage, or None for other modules."""
    parts = mod.split(".")
    if len(parts) < 3:
        return None
    package = ".".join(parts[:2])
    rows = SUBPACKAGE_LAYERS.get(package)
    if rows is None:
        return None
    return package, next((i for i, names in enumerate(rows) if parts[2] in names), -1)


def test_every_subpackage_module_has_a_layer():
    subpackages = {".".join(m.split(".")[:2]) for m in MODULES if len(m.split(".")) >= 3}
    assert subpackages <= set(SUBPACKAGE_LAYERS), (
        f"subpackages without a layer table: {subpackages - set(SUBPACKAGE_LAYERS)}"
    )
    for mod in MODULES:
        place = subpackage_layer(mod)
        assert place is None or place[1] >= 0, f"{mod} has no layer in SUBPACKAGE_LAYERS[{place[0]!r}]"


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if subpackage_layer(m)))
def test_imports_inside_a_subpackage_flow_downward(mod):
    package, mine = subpackage_layer(mod)  # type: ignore[misc]
    for target, line in GRAPH[mod]:
        place = subpackage_layer(target)
        if place is not None and place[0] == package:
            assert place[1] <= mine, (
                f"{mod}:{line} imports {target}, a higher layer of {package} ({SUBPACKAGE_LAYERS[package][place[1]]})"
            )


def test_every_package_is_installed():
    """Each folder of the two packages is listed in pyproject.toml, or a wheel lacks it
    (the tests import the checkout, so they would not notice)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    folders = {module_name(p) for pkg in ("classad", "matchmaker") for p in (ROOT / pkg).rglob("__init__.py")}
    assert folders - listed == set(), f"not in pyproject.toml's packages: {sorted(folders - listed)}"
