"""Hypothesis strategies for ClassAd expressions, and a canonical value encoding.

Public so that users can property-test their own policy expressions::

    from hypothesis import given
    from classad.testing import expressions

    @given(expressions())
    def test_never_raises(text): ...

Requires the ``hypothesis`` package (a test dependency, not a runtime one).
:func:`canonical` encodes an evaluation result of this library or of the
``classad2`` module the same way, so the two can be compared.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

try:
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - exercised by tests/language/test_testing_module.py
    raise ImportError("classad.testing provides Hypothesis strategies and needs the 'hypothesis' package: "
                      "pip install hypothesis (it is in the project's [test] extra)") from None

#: Names defined in :data:`CONTEXT_MY` / :data:`CONTEXT_TARGET`, plus some that are not.
REF_NAMES = ["a", "b", "s", "u", "e", "l", "r", "t", "n", "z", "f", "cyc", "nested", "missing",
             "tb", "ts", "A", "S", "x", "parent", "self", "root", "toplevel"]
# CurrentTime is left out: the two libraries would read the clock at different instants.

CONTEXT_MY = """[
    a = 1; b = 2.5; s = "Str"; u = undefined; e = error; l = {1, "x", 3.0, a};
    r = [a = 10; c = a; d = parent.a]; t = true; n = -3; z = 0; f = false;
    cyc = cyc + 1; nested = {[a = 5], [b = 6]}; x = tb + 1
]"""

CONTEXT_TARGET = """[
    a = 3; b = "x"; tb = 7; ts = "target"; l = {2, 4}; u = 42; y = a + b
]"""

_INT_EDGES = [0, 1, 2, 3, 7, 10, 63, 64, 65, 100, 2147483647, 4294967296,
              9223372036854775807, -9223372036854775808]


def _int_literal() -> st.SearchStrategy[str]:
    return st.one_of(st.integers(-20, 100).map(str), st.sampled_from(_INT_EDGES).map(str),
                     st.integers(-(1 << 63), (1 << 63) - 1).map(str))


def _real_literal() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(["0.0", "1.5", "-2.5", ".5", "1e3", "1E-3", "2.5e+2", "1e308", "-1e308",
                         "0.1", "3.0", "1e400", "123456.789", "-0.0"]),
        st.floats(allow_nan=False, allow_infinity=False, width=64).map(
            lambda x: repr(x) if "e" in repr(x) or "." in repr(x) else repr(x) + ".0")
        .filter(lambda t: "inf" not in t and "nan" not in t),
    )


def _string_literal() -> st.SearchStrategy[str]:
    body = st.text(alphabet=st.sampled_from(list("abcABC xyz_-.,;0123")), max_size=6)
    escaped = st.sampled_from(['"a\\tb"', '"\\101"', '"q\\"q"', '"\\\\"', '"\\n"', '"\\x"', '"é"'])
    return st.one_of(body.map(lambda s: '"' + s + '"'), escaped)


def literals() -> st.SearchStrategy[str]:
    """Text of literal expressions of every kind."""
    return st.one_of(
        _int_literal(), _real_literal(), _string_literal(),
        st.sampled_from(["true", "false", "undefined", "error", "TRUE", "False", "UNDEFINED"]),
    )


def _refs() -> st.SearchStrategy[str]:
    name = st.sampled_from(REF_NAMES)
    return st.one_of(
        name,
        name.map(lambda n: "MY." + n),
        name.map(lambda n: "TARGET." + n),
        name.map(lambda n: "." + n),
    )


_BINARY_OPS = ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "=?=", "=!=", "is",
               "isnt", "&&", "||", "&", "|", "^", "<<", ">>", ">>>"]
_UNARY_OPS = ["-", "+", "!", "~"]


def expressions(max_leaves: int = 12) -> st.SearchStrategy[str]:
    """Text of random expressions: nested operators, mixed types, scoped references."""
    leaves = st.one_of(literals(), _refs())

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(_BINARY_OPS), inner).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
            st.tuples(st.sampled_from(_UNARY_OPS), inner).map(lambda t: f"{t[0]}({t[1]})"),
            inner.map(lambda e: f"({e})"),
            st.tuples(inner, inner, inner).map(lambda t: f"{t[0]} ? {t[1]} : {t[2]}"),
            st.tuples(inner, inner).map(lambda t: f"({t[0]}) ?: ({t[1]})"),
            st.lists(inner, max_size=3).map(lambda xs: "{" + ", ".join(xs) + "}"),
            st.lists(st.tuples(st.sampled_from(["a", "b", "c", "A"]), inner), max_size=3).map(
                lambda kv: "[" + "; ".join(f"{k} = {v}" for k, v in kv) + "]"),
            st.tuples(inner, st.sampled_from(["a", "b", "c", "r", "d"])).map(lambda t: f"({t[0]}).{t[1]}"),
            st.tuples(inner, inner).map(lambda t: f"({t[0]})[{t[1]}]"),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


def canonical(value: Any) -> Any:
    """A comparable encoding of a result of ``eval()`` (this library's or ``classad2``'s)."""
    name = type(value).__name__
    if name == "Value":
        return "undefined" if int(value) == 2 else "error"
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) is int:
        return ("int", value)
    if type(value) is float:
        if math.isnan(value):
            return ("real", "nan")
        return ("real", repr(value))
    if type(value) is str:
        return ("str", value)
    if isinstance(value, list):
        return ("list", tuple(canonical(v) for v in value))
    if isinstance(value, datetime.datetime):
        return ("abstime", value.timestamp())
    if name == "ExprTree":
        return ("expr", repr(value))
    if name == "ClassAd":
        return ("ad", tuple(sorted((k.lower(), repr(value.lookup(k))) for k in value.keys())))
    return ("other", repr(value))
