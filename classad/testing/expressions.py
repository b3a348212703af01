"""Strategies for expression text: over a fixed test context, or over a site's own names.

``expressions()`` with no names draws the nested, mixed-type expressions over the names
of :data:`CONTEXT_MY` / :data:`CONTEXT_TARGET` that the project's differential tests
compare with HTCondor's library.  ``expressions(names=..., types=...)`` draws policy-like
expressions over a site's attributes instead: comparisons of each attribute with values
of its kind, joined by ``&&``, ``||``, ``!`` and ``?:``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Optional

from hypothesis import strategies as st

from ..unparse import quote_string
from .choices import weighted
from .schema import Schema

#: Names defined in :data:`CONTEXT_MY` / :data:`CONTEXT_TARGET`, plus some that are not.
REF_NAMES = [
    "a",
    "b",
    "s",
    "u",
    "e",
    "l",
    "r",
    "t",
    "n",
    "z",
    "f",
    "cyc",
    "nested",
    "missing",
    "tb",
    "ts",
    "A",
    "S",
    "x",
    "parent",
    "self",
    "root",
    "toplevel",
]
# CurrentTime is left out: the two libraries would read the clock at different instants.

CONTEXT_MY = """[
    a = 1; b = 2.5; s = "Str"; u = undefined; e = error; l = {1, "x", 3.0, a};
    r = [a = 10; c = a; d = parent.a]; t = true; n = -3; z = 0; f = false;
    cyc = cyc + 1; nested = {[a = 5], [b = 6]}; x = tb + 1
]"""

CONTEXT_TARGET = """[
    a = 3; b = "x"; tb = 7; ts = "target"; l = {2, 4}; u = 42; y = a + b
]"""

_INT_EDGES = [0, 1, 2, 3, 7, 10, 63, 64, 65, 100, 2147483647, 4294967296, 9223372036854775807, -9223372036854775808]


def _int_literal() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(-20, 100).map(str),
        st.sampled_from(_INT_EDGES).map(str),
        st.integers(-(1 << 63), (1 << 63) - 1).map(str),
    )


def _real_literal() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(
            [
                "0.0",
                "1.5",
                "-2.5",
                ".5",
                "1e3",
                "1E-3",
                "2.5e+2",
                "1e308",
                "-1e308",
                "0.1",
                "3.0",
                "1e400",
                "123456.789",
                "-0.0",
            ]
        ),
        st.floats(allow_nan=False, allow_infinity=False, width=64)
        .map(lambda x: repr(x) if "e" in repr(x) or "." in repr(x) else repr(x) + ".0")
        .filter(lambda t: "inf" not in t and "nan" not in t),
    )


def _string_literal() -> st.SearchStrategy[str]:
    body = st.text(alphabet=st.sampled_from(list("abcABC xyz_-.,;0123")), max_size=6)
    escaped = st.sampled_from(['"a\\tb"', '"\\101"', '"q\\"q"', '"\\\\"', '"\\n"', '"\\x"', '"é"'])
    return st.one_of(body.map(lambda s: '"' + s + '"'), escaped)


def literals() -> st.SearchStrategy[str]:
    """Text of literal expressions of every kind."""
    return st.one_of(
        _int_literal(),
        _real_literal(),
        _string_literal(),
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


_BINARY_OPS = [
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "=?=",
    "=!=",
    "is",
    "isnt",
    "&&",
    "||",
    "&",
    "|",
    "^",
    "<<",
    ">>",
    ">>>",
]
_UNARY_OPS = ["-", "+", "!", "~"]


def expressions(
    max_leaves: int = 12,
    *,
    names: Optional[Iterable[str] | Schema] = None,
    types: Optional[Mapping[str, Any] | Schema] = None,
    scopes: Iterable[str] = ("", "MY.", "TARGET."),
) -> st.SearchStrategy[str]:
    """Text of random expressions.

    Without ``names``: nested operators, mixed types and scoped references over the
    names of the test context (:data:`REF_NAMES`).  With ``names`` (a list, or a
    :class:`Schema` whose attributes and values are used): policy-like expressions
    over those attributes, each compared with values of its kind.  ``types`` maps a
    name to its kind (``"int"``, ``"real"``, ``"string"``, ``"bool"``) or is a schema;
    a name of unknown kind is tested with ``=?=``/``=!=`` against undefined.  Each
    reference gets one of the ``scopes`` prefixes."""
    if names is not None:
        return site_expressions(names, types, max_leaves=max_leaves, scopes=tuple(scopes))
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
                lambda kv: "[" + "; ".join(f"{k} = {v}" for k, v in kv) + "]"
            ),
            st.tuples(inner, st.sampled_from(["a", "b", "c", "r", "d"])).map(lambda t: f"({t[0]}).{t[1]}"),
            st.tuples(inner, inner).map(lambda t: f"({t[0]})[{t[1]}]"),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


# ---- expressions over a site's own names ---------------------------------------------------------

_NUMBER_TESTS = ["<", "<=", ">", ">=", "==", "!="]
_LOGIC = ["&&", "||"]


def _kind_and_values(name: str, types: Optional[Mapping[str, Any] | Schema]) -> tuple[str, tuple]:
    """The kind of ``name`` and values to compare it with (from a schema when given)."""
    if isinstance(types, Schema):
        spec = types.get(name)
        if spec is None:
            return "unknown", ()
        kinds = [k for k, _ in spec.kinds if k in ("int", "real", "string", "bool")]
        if not kinds:
            return "unknown", ()
        kind = kinds[0]
        seen = tuple(v for v, _ in spec.values.get(kind, ()))
        low_high = spec.ranges.get(kind)
        return kind, seen + (tuple(low_high) if low_high else ())
    kind = (types or {}).get(name, "unknown")
    return (kind if kind in ("int", "real", "string", "bool") else "unknown"), ()


def _operand(kind: str, seen: tuple) -> st.SearchStrategy[str]:
    """Text of a literal to compare an attribute of ``kind`` with."""
    if kind == "int":
        drawn: st.SearchStrategy[Any] = st.integers(-10, 10**6)
    elif kind == "real":
        drawn = st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: float(round(x, 3)))
    elif kind == "bool":
        drawn = st.booleans()
    else:
        drawn = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.@", max_size=8)
    if seen:
        drawn = st.one_of(weighted([(v, 1.0) for v in seen]), drawn)
    return drawn.map(_literal_text)


def _literal_text(v: Any) -> str:
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) is str:
        return quote_string(v)
    if type(v) is float:
        return repr(v) if ("." in repr(v) or "e" in repr(v)) else repr(v) + ".0"
    return str(v)


def _test_of(name: str, kind: str, seen: tuple, scopes: tuple) -> st.SearchStrategy[str]:
    ref = st.sampled_from(scopes).map(lambda scope: scope + name)
    if kind in ("int", "real"):
        return st.tuples(ref, st.sampled_from(_NUMBER_TESTS), _operand(kind, seen)).map(" ".join)
    if kind == "string":
        return st.one_of(
            st.tuples(ref, st.sampled_from(["==", "!=", "=?=", "=!="]), _operand(kind, seen)).map(" ".join),
            st.tuples(_operand(kind, seen), ref).map(lambda t: f"regexp({t[0]}, {t[1]})"),
        )
    if kind == "bool":
        return st.one_of(
            ref, ref.map(lambda r: "!" + r), st.tuples(ref, _operand(kind, seen)).map(lambda t: f"{t[0]} =?= {t[1]}")
        )
    return st.tuples(ref, st.sampled_from(["=?=", "=!="])).map(lambda t: f"{t[0]} {t[1]} undefined")


def site_expressions(
    names: Iterable[str] | Schema,
    types: Optional[Mapping[str, Any] | Schema] = None,
    *,
    max_leaves: int = 8,
    scopes: tuple = ("", "MY.", "TARGET."),
) -> st.SearchStrategy[str]:
    """Policy-like expressions over a site's attribute names (see :func:`expressions`)."""
    if isinstance(names, Schema):
        types = names if types is None else types
        names = names.names()
    names = list(names)
    if not names:
        raise ValueError("expressions(names=...) needs at least one name")
    tests = [_test_of(n, *_kind_and_values(n, types), scopes) for n in names]
    leaves = st.one_of(*tests)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(_LOGIC), inner).map(lambda t: f"({t[0]}) {t[1]} ({t[2]})"),
            inner.map(lambda e: f"!({e})"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]}) ? ({t[1]}) : ({t[2]})"),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)
