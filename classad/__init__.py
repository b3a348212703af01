"""A pure-Python ClassAd language with HTCondor's semantics.

The API mirrors the ``classad2`` module of the ``htcondor`` wheel, so a script
can switch by changing its import::

    import classad
    ad = classad.ClassAd('[Cpus = 4; Requirements = TARGET.RequestCpus <= MY.Cpus]')
    classad.ExprTree("Cpus * 2").eval(ad)   # 8
"""

from __future__ import annotations

from . import (
    ast as _ast,
    functions as _functions,  # noqa: F401  (registers the built-in library)
)
from .ad import ClassAd, ExprTree
from .errors import ClassAdError, ClassAdException, FormatError, ParseError, last_error as _last_error
from .evaluate import default_strict, set_strict_mode
from .formats import Parser, ParserType, parseAds, parseNext, parseOne  # re-exported
from .parser import parse_expr
from .unparse import quote_string as _quote_string
from .values import Value


def quote(s: str) -> str:
    """``s`` as a new-syntax string literal: ``quote('a"b')`` is ``'"a\\\\"b"'``."""
    return _quote_string(s)


def lastError() -> str:  # classad2 name
    """The message of the library's last explained error, as ``classad2.lastError()``:
    after ``ExprTree('7 == "7"').eval()`` it is ``"strings can only be compared to strings"``.
    Success does not clear it; "" until the first such error."""
    return _last_error()


def unquote(s: str) -> str:
    """The string value of a new-syntax string literal (inverse of :func:`quote`)."""
    node = parse_expr(s)
    if type(node) is not _ast.Literal or type(node.value) is not str:
        raise ParseError(f"not a string literal: {s!r}")
    return node.value


__all__ = [
    "ClassAd",
    "ExprTree",
    "Value",
    "ClassAdError",
    "ClassAdException",
    "ParseError",
    "FormatError",
    "parse_expr",
    "quote",
    "unquote",
    "lastError",
    "set_strict_mode",
    "default_strict",
    "parseAds",
    "parseOne",
    "parseNext",
    "ParserType",
    "Parser",
]
