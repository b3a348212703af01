"""How HTCondor lays ads out when it prints them: attribute orders and printers.

Two attribute orders:

* **Container order** (``repr()``, ``printOld()``, ``printJson()``, nested ads
  everywhere): HTCondor keeps attributes sorted by the *byte* length of the
  name, then by ``strcasecmp``, which folds ASCII letters only.
* **Tool order** (``condor_q -l``, ``condor_status -json``...): the tools sort
  the top-level names with ``strcasecmp`` alone.

Both compare UTF-8 bytes, so names outside ASCII sort as HTCondor sorts them.

The core printer (:mod:`classad.unparse`) knows every node kind; the
subclasses here change only what the file formats need to match HTCondor
byte for byte: nested ads in container order, names in old syntax quoted the
way ``printOld()`` quotes them (only ``'`` escaped), and the indented layout
of ``str()`` (ads indented by 4 and lists by 3, one element per line).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Iterable

from .. import ast
from ..unparse import _FOLD, Printer, container_key, quote_name
from ..values import ListValue


def _folded(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape").translate(_FOLD)


def container_items(pairs: Iterable[tuple[str, Any]]) -> list:
    """(name, value) pairs in container order."""
    return sorted(pairs, key=lambda kv: container_key(kv[0]))


def tool_items(pairs: Iterable[tuple[str, Any]]) -> list:
    """(name, value) pairs in the order HTCondor's command-line tools print them."""
    return sorted(pairs, key=lambda kv: _folded(kv[0]))


_AD_INDENT = 4
_LIST_INDENT = 3


def old_name(name: str) -> str:
    """A name as old syntax writes it: quoted only if it must be, escaping only ``'``."""
    escaped = name.replace("'", "\\'")
    return escaped if quote_name(escaped) == escaped else "'" + escaped + "'"


class LinePrinter(Printer):
    """The one-line printer (``repr()`` in new syntax, ``printOld()`` values in old)."""

    def name(self, name: str) -> str:
        return old_name(name) if self.old else quote_name(name)

    def record(self, items: list) -> str:
        return "[ " + "; ".join(self.name(k) + " = " + self.node(v) for k, v in items) + " ]"

    def ad(self, ad: Any) -> str:
        return self.record(container_items(ad.node_items()))

    def node(self, n: ast.Node) -> str:
        if type(n) is ast.Record:
            return self.record(container_items(n.attrs))
        if type(n) is ast.AttrRef and self.old:
            return ("." if n.absolute else "") + old_name(n.name)
        return super().node(n)


class PrettyPrinter(LinePrinter):
    """The indented printer of ``str()``: every ad and list laid out over lines."""

    def __init__(self) -> None:
        super().__init__(False)
        self.level = 0

    def node(self, n: ast.Node) -> str:
        if type(n) is ast.ListExpr:
            return self.layout_list([partial(self.node, item) for item in n.items])
        return super().node(n)

    def value(self, v: Any) -> str:
        if type(v) is ListValue:
            if v.nodes is not None:
                return self.layout_list([partial(self.node, item) for item in v.nodes])
            return self.layout_list([partial(self.value, item) for item in v._values or ()])
        return super().value(v)

    def record(self, items: list) -> str:
        return self.block(_AD_INDENT, "[", "]", "; ", [partial(self.field, name, node) for name, node in items])

    def field(self, name: str, node: ast.Node) -> str:
        return quote_name(name) + " = " + self.node(node)

    def layout_list(self, items: list[Callable[[], str]]) -> str:
        return self.block(_LIST_INDENT, "{", "}", ",", items)

    def block(self, indent: int, opening: str, closing: str, separator: str, items: list[Callable[[], str]]) -> str:
        """``opening`` and ``closing`` on lines of their own, one item per line between them,
        ``indent`` deeper each.  Items render lazily, so that a nested ad or list sees the
        deeper indentation."""
        self.level += indent
        out = ["\n", " " * self.level, opening]
        self.level += indent
        last = len(items) - 1
        for i, render in enumerate(items):
            out.append("\n" + " " * self.level)
            out.append(render())
            if i < last:
                out.append(separator)
        self.level -= indent
        out.append("\n" + " " * self.level + closing)
        self.level -= indent
        return "".join(out)


NEW = LinePrinter(False)
OLD = LinePrinter(True)


def unparse_new(node: ast.Node) -> str:
    """New-syntax text of an expression, nested ads in HTCondor's order."""
    return NEW.node(node)


def unparse_old(node: ast.Node) -> str:
    """Old-syntax text of an expression (``printOld()`` values)."""
    return OLD.node(node)


def ad_line(items: list, old: bool = False) -> str:
    """``[ a = 1; b = 2 ]`` from (name, node) pairs, in the order given."""
    return (OLD if old else NEW).record(items)


def ad_pretty(items: list) -> str:
    """The indented ``str()`` form from (name, node) pairs, in the order given."""
    return PrettyPrinter().record(items)


__all__ = [
    "container_key",
    "container_items",
    "tool_items",
    "LinePrinter",
    "PrettyPrinter",
    "unparse_new",
    "unparse_old",
    "ad_line",
    "ad_pretty",
    "old_name",
]
