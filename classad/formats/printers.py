"""Expression printers that lay nested ads out exactly as HTCondor does.

The core printer (:mod:`classad.unparse`) knows every node kind; these
subclasses change only what the file formats need to match HTCondor byte for
byte: nested ads in container order (byte length of the name, then
``strcasecmp``; see :mod:`.order`), names in old syntax quoted the way
``printOld()`` quotes them (only ``'`` escaped), and the indented layout of
``str()`` (ads indented by 4 and lists by 3, one element per line).
"""

from __future__ import annotations

from typing import Any, Callable

from .. import ast
from ..unparse import _Printer, quote_name
from ..values import ListValue
from .order import container_items

_AD_INDENT = 4
_LIST_INDENT = 3


def old_name(name: str) -> str:
    """A name as old syntax writes it: quoted only if it must be, escaping only ``'``."""
    escaped = name.replace("'", "\\'")
    return escaped if quote_name(escaped) == escaped else "'" + escaped + "'"


class LinePrinter(_Printer):
    """The one-line printer (``repr()`` in new syntax, ``printOld()`` values in old)."""

    def name(self, name: str) -> str:
        return old_name(name) if self.old else quote_name(name)

    def record(self, items: list) -> str:
        return "[ " + "; ".join(self.name(k) + " = " + self.node(v) for k, v in items) + " ]"

    def ad(self, ad: Any) -> str:
        return self.record(container_items(ad.node_items()))

    def node(self, n: ast.Node) -> str:
        t = type(n)
        if t is ast.Record:
            return self.record(container_items(n.attrs))
        if t is ast.AttrRef and self.old:
            return ("." if n.absolute else "") + old_name(n.name)
        return super().node(n)


class PrettyPrinter(LinePrinter):
    """The indented printer of ``str()``: every ad and list laid out over lines."""

    def __init__(self) -> None:
        super().__init__(False)
        self.level = 0

    def node(self, n: ast.Node) -> str:
        if type(n) is ast.ListExpr:
            return self.layout_list([lambda item=item: self.node(item) for item in n.items])
        return super().node(n)

    def value(self, v: Any) -> str:
        if type(v) is ListValue:
            if v.nodes is not None:
                return self.layout_list([lambda item=item: self.node(item) for item in v.nodes])
            return self.layout_list([lambda item=item: self.value(item) for item in v._values])
        return super().value(v)

    def record(self, items: list) -> str:
        self.level += _AD_INDENT
        out = ["\n", " " * self.level, "["]
        self.level += _AD_INDENT
        last = len(items) - 1
        for i, (name, node) in enumerate(items):
            out.append("\n" + " " * self.level + quote_name(name) + " = ")
            out.append(self.node(node))
            if i < last:
                out.append("; ")
        self.level -= _AD_INDENT
        out.append("\n" + " " * self.level + "]")
        self.level -= _AD_INDENT
        return "".join(out)

    def layout_list(self, items: list[Callable[[], str]]) -> str:
        # Items render lazily, so that a nested ad sees the deeper indentation.
        self.level += _LIST_INDENT
        out = ["\n", " " * self.level, "{"]
        self.level += _LIST_INDENT
        last = len(items) - 1
        for i, render in enumerate(items):
            out.append("\n" + " " * self.level)
            out.append(render())
            if i < last:
                out.append(",")
        self.level -= _LIST_INDENT
        out.append("\n" + " " * self.level + "}")
        self.level -= _LIST_INDENT
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


__all__ = ["LinePrinter", "PrettyPrinter", "unparse_new", "unparse_old", "ad_line", "ad_pretty",
           "old_name"]
