"""Hypothesis strategies for ads whose every value survives a trip through a file format.

HTCondor's formats are lossy in known ways, so each strategy stays inside what
a format can carry:

* reals keep 15 significant digits (the writers print 16, which round-trips
  a 15-digit decimal but not every double);
* old-format strings hold no newline or carriage return (values are one
  line), and none ends with a backslash (``\\"`` at the end of a line is
  read as a backslash closing the string);
* relative times are left out (HTCondor 25 writes them to JSON and XML as
  plain reals);
* names in the old format are identifiers (the format has no quoting).
"""

from __future__ import annotations

from hypothesis import strategies as st

from classad import ast
from classad.ad import ClassAd
from classad.parser import KEYWORDS, parse_expr
from classad.values import ERROR, UNDEFINED

IDENTIFIERS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True).filter(lambda s: s.lower() not in KEYWORDS)

# Any non-empty name without NUL; the new, JSON and XML formats quote it.
ANY_NAMES = st.one_of(
    IDENTIFIERS,
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=8),
)

# 15 significant digits, finite after rounding; -0.0 becomes 0.0 (XML prints both as 0.0).
REALS = (
    st.floats(allow_nan=False, allow_infinity=False)
    .map(lambda x: float("%.15G" % x) + 0.0)
    .filter(lambda x: abs(x) != float("inf"))
)
INTS = st.integers(-(2**63), 2**63 - 1)

_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
ANY_STRINGS = st.text(_CHARS, max_size=12)
OLD_STRINGS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\n\r"), max_size=12).filter(
    lambda s: not s.endswith("\\")
)

# Expression texts built from a few shapes; each is parsed by our parser.
_OPERATORS = [
    "+",
    "-",
    "*",
    "/",
    "%",
    "<",
    "<=",
    ">=",
    ">",
    "==",
    "!=",
    "=?=",
    "=!=",
    "&&",
    "||",
    "&",
    "|",
    "^",
    "<<",
    ">>",
    "is",
    "isnt",
]
_SIMPLE_EXPRS = [
    "TARGET.RequestCpus <= MY.Cpus",
    "x ?: 3",
    "!y",
    " -z",
    "a[1]",
    "{ 1,2 }[0]",
    "(a + b) * c",
    'ifThenElse(x, "yes", "no")',
    "x ? 1 : 2",
    "[ a = 1; b = a + 1 ].b",
    'strcat(Owner, "@", UidDomain)',
    'real("NaN")',
    'real("INF")',
    'absTime("2020-01-02T03:04:05Z")',
    ".abs",
    "parent.x",
    'member("a", { "a","b" })',
    "error",
    "undefined",
    "x =?= undefined",
]


def _expr_text(names: st.SearchStrategy) -> st.SearchStrategy:
    operand = st.one_of(IDENTIFIERS, INTS.map(str), st.sampled_from(["1.5", '"s"', "true"]))
    binary = st.builds(lambda a, op, b: f"{a} {op} {b}", operand, st.sampled_from(_OPERATORS), operand)
    return st.one_of(st.sampled_from(_SIMPLE_EXPRS), binary)


EXPRESSIONS = _expr_text(IDENTIFIERS).map(parse_expr)


def scalars(strings: st.SearchStrategy) -> st.SearchStrategy:
    """Literal nodes: numbers, strings, booleans, undefined, error."""
    return st.one_of(
        INTS,
        REALS,
        strings,
        st.booleans(),
        st.just(UNDEFINED),
        st.just(ERROR),
    ).map(ast.Literal)


def values(strings: st.SearchStrategy, names: st.SearchStrategy) -> st.SearchStrategy:
    """Attribute values: scalars, expressions, and lists and nested ads of them."""
    leaves = st.one_of(scalars(strings), EXPRESSIONS)
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4).map(lambda xs: ast.ListExpr(tuple(xs))),
            _attr_pairs(names, inner, 3).map(ast.Record),
        ),
        max_leaves=8,
    )


def _attr_pairs(names: st.SearchStrategy, vals: st.SearchStrategy, max_size: int) -> st.SearchStrategy:
    return st.lists(st.tuples(names, vals), max_size=max_size, unique_by=lambda kv: kv[0].lower()).map(tuple)


def ads(
    strings: st.SearchStrategy = ANY_STRINGS, names: st.SearchStrategy = ANY_NAMES, max_size: int = 6
) -> st.SearchStrategy:
    """Whole ClassAds."""
    return _attr_pairs(names, values(strings, names), max_size).map(ClassAd.from_nodes)


OLD_ADS = ads(OLD_STRINGS, IDENTIFIERS)
ANY_ADS = ads()
