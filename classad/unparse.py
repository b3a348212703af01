"""Printing expression trees and values as ClassAd text, in new and old syntax.

New syntax is what ``repr()``/``str()`` of an expression and the one-line ad
printer give: reals as ``%1.15E``, strings with C escapes and every other
non-printable or non-ASCII byte in octal, unary operators with a leading space
(`` -x``), parentheses only where the source had them.  Old syntax (long
``Name = value`` ad files) writes strings raw except for ``\\"``, reals as
``%.16G`` and ``=?=``/``=!=`` for ``is``/``isnt``.  How each operator is spelled
lives in one table, :data:`OLD_SPELLING`.
"""

from __future__ import annotations

import re
from typing import Any

from . import ast
from .timetext import format_abstime, format_reltime
from .values import (
    ERROR,
    UNDEFINED,
    AbsTime,
    ListValue,
    RelTime,
    format_real,
    format_real_old,
    string_bytes,
)

RESERVED_NAMES = frozenset({"error", "false", "is", "isnt", "parent", "true", "undefined"})
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Operators spelled differently in old syntax; all others print as stored.
OLD_SPELLING = {"is": "=?=", "isnt": "=!="}

_ESCAPES = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v", 0x5C: "\\\\", 0x22: '\\"'}


def quote_string(s: str) -> str:
    """A new-syntax string literal for ``s``."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return '"' + s + '"'
    out = ['"']
    for b in string_bytes(s):
        esc = _ESCAPES.get(b)
        if esc is not None:
            out.append(esc)
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append("\\%03o" % b)
    out.append('"')
    return "".join(out)


def quote_old_string(s: str) -> str:
    """An old-syntax string literal: only ``"`` is escaped."""
    return '"' + s.replace('"', '\\"') + '"'


def quote_name(name: str) -> str:
    """An attribute name, single-quoted when it is not a plain identifier or is reserved."""
    if _PLAIN_NAME.match(name) and name.lower() not in RESERVED_NAMES:
        return name
    out = ["'"]
    for b in string_bytes(name):
        if b == 0x27:
            out.append("\\'")
        elif b == 0x5C:
            out.append("\\\\")
        elif b in _ESCAPES and b != 0x22:
            out.append(_ESCAPES[b])
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append("\\%03o" % b)
    out.append("'")
    return "".join(out)


def _time_text(v: Any) -> str:
    return format_abstime(v) if type(v) is AbsTime else format_reltime(v)


_FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


def container_key(name: str) -> tuple[int, bytes]:
    """Sort key of HTCondor's attribute container: byte length, then ``strcasecmp``."""
    raw = name.encode("utf-8", "surrogateescape")
    return len(raw), raw.translate(_FOLD)


def ad_items_in_print_order(ad: Any) -> list:
    """(name, node) pairs of an ad in the order HTCondor's container prints them."""
    return sorted(ad.node_items(), key=lambda kv: container_key(kv[0]))


class Printer:
    """One printer; ``old`` selects old-syntax spelling."""

    def __init__(self, old: bool = False) -> None:
        self.old = old

    def value(self, v: Any) -> str:
        t = type(v)
        if t is bool:
            return "true" if v else "false"
        if t is int:
            return str(v)
        if t is float:
            return format_real_old(v) if self.old else format_real(v)
        if t is str:
            return quote_old_string(v) if self.old else quote_string(v)
        if v is UNDEFINED:
            return "undefined"
        if v is ERROR:
            return "error"
        if t is AbsTime:
            return 'absTime("' + _time_text(v) + '")'
        if t is RelTime:
            return 'relTime("' + _time_text(v) + '")'
        if t is ListValue:
            if v.nodes is not None:
                return self.list_items([self.node(n) for n in v.nodes])
            return self.list_items([self.value(x) for x in v._values])
        if hasattr(v, "node_items"):
            return self.ad(v)
        return str(v)

    @staticmethod
    def list_items(parts: list) -> str:
        return "{ " + ",".join(parts) + " }"

    def ad(self, ad: Any) -> str:
        parts = [quote_name(name) + " = " + self.node(node) for name, node in ad_items_in_print_order(ad)]
        return "[ " + "; ".join(parts) + " ]"

    def node(self, n: ast.Node) -> str:
        if type(n) is ast.Literal:
            return self.value(n.value)
        if type(n) is ast.AttrRef:
            return ("." if n.absolute else "") + quote_name(n.name)
        if type(n) is ast.Binary:
            op = OLD_SPELLING.get(n.op, n.op) if self.old else n.op
            return self.node(n.left) + " " + op + " " + self.node(n.right)
        if type(n) is ast.Select:
            return self.node(n.base) + "." + n.name  # HTCondor prints selected names raw
        if type(n) is ast.Call:
            return n.name + "(" + ",".join(self.node(a) for a in n.args) + ")"
        if type(n) is ast.Paren:
            return "(" + self.node(n.inner) + ")"
        if type(n) is ast.Unary:
            return " " + n.op + self.node(n.operand)
        if type(n) is ast.Subscript:
            return self.node(n.base) + "[" + self.node(n.index) + "]"
        if type(n) is ast.Conditional:
            return self.node(n.cond) + " ? " + self.node(n.then) + " : " + self.node(n.other)
        if type(n) is ast.Elvis:
            return self.node(n.left) + " ?: " + self.node(n.right)
        if type(n) is ast.ListExpr:
            return self.list_items([self.node(i) for i in n.items])
        if type(n) is ast.Record:
            items = sorted(n.attrs, key=lambda kv: container_key(kv[0]))
            return "[ " + "; ".join(quote_name(k) + " = " + self.node(v) for k, v in items) + " ]"
        raise TypeError(f"cannot print {n!r}")


# The old private name, kept for subclasses written against it.
_Printer = Printer

_NEW = Printer(False)
_OLD = Printer(True)


def unparse(node: ast.Node) -> str:
    """New-syntax text of an expression tree (as ``repr()`` of ``classad2.ExprTree``)."""
    try:
        return _NEW.node(node)
    except RecursionError:
        return "error"


def unparse_old(node: ast.Node) -> str:
    """Old-syntax text of an expression tree (as ``printOld()`` writes values)."""
    return _OLD.node(node)


def unparse_value(v: Any) -> str:
    """New-syntax literal text of a value."""
    return _NEW.value(v)


def unparse_ad(ad: Any) -> str:
    """One-line new-syntax text of an ad: ``[ a = 1; b = 2 ]``."""
    return _NEW.ad(ad)


def value_to_string(v: Any) -> str:
    """What ``string(v)`` gives for a non-Undefined, non-Error value.

    Reals print as the unparser prints them (``%1.15E``, ``0.0``, ``real("NaN")``);
    strings are themselves; times print without the
    ``absTime(...)`` wrapper; lists and ads are unparsed.
    """
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is float:
        return format_real(v)
    if t is AbsTime:
        return _time_text(v)
    if t is RelTime:  # read through a time_t: whole seconds only
        secs = v.secs
        return _time_text(RelTime(float(int(secs))))
    return _NEW.value(v)
