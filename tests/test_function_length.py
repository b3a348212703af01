"""Functions stay short: one stage or one concept each (docs/architecture.md, "Hot loops").

Every function and method of ``classad`` and ``matchmaker`` is measured from its ``def``
line to its last line (docstring and comments included).  None may be longer than
:data:`MAX_LINES`, except the hot loops that docs/architecture.md names and explains.
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_layers import MODULES, ROOT

MAX_LINES = 80

# The documented hot loops ("module: function" as docs/architecture.md spells them).
HOT_LOOPS = {
    "formats/splitter.py: split_records",
    "formats/old_format.py: _iter_ads",
}


def long_functions(source: str, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """``(qualified name, length in lines)`` of every function in ``source`` longer than
    ``limit`` lines, nested functions and methods included."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                if length > limit:
                    found.append((prefix + child.name, length))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def doc_name(path: Path, function: str) -> str:
    """``formats/splitter.py: split_records`` for ``classad/formats/splitter.py``."""
    return f"{Path(*path.relative_to(ROOT).parts[1:]).as_posix()}: {function}"


def test_the_measure_counts_every_line_of_nested_functions_and_methods():
    """By hand: ``short`` is its ``def`` and three lines (4); ``C.m`` its ``def``, a
    docstring and two lines (4); ``outer`` is ``def``, ``inner`` (4 lines) and a return (6)."""
    source = (
        "def short():\n    a = 1\n\n    return a\n"
        'class C:\n    def m(self):\n        """doc"""\n        b = 2\n        return b\n'
        "def outer():\n    def inner():\n        c = 1\n        d = 2\n        return c + d\n    return inner\n"
    )
    assert long_functions(source, limit=6) == []
    assert long_functions(source, limit=5) == [("outer", 6)]
    assert long_functions(source, limit=3) == [("short", 4), ("C.m", 4), ("outer", 6), ("outer.inner", 4)]


def test_no_function_is_longer_than_the_limit_outside_the_hot_loops():
    offenders = [
        f"{doc_name(path, name)} ({length} lines)"
        for path in MODULES.values()
        for name, length in long_functions(path.read_text(encoding="utf-8"))
        if doc_name(path, name) not in HOT_LOOPS
    ]
    assert not offenders, f"functions over {MAX_LINES} lines (split them by stage or concept): {sorted(offenders)}"


def test_the_hot_loops_are_the_documented_ones():
    """Each allowed exception is named in docs/architecture.md and exists in the code."""
    architecture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    functions = {
        doc_name(path, node.name)
        for path in MODULES.values()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef)
    }
    for loop in HOT_LOOPS:
        assert f"`{loop}`" in architecture, loop
        assert loop in functions, loop
