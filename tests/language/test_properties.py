"""Hypothesis properties of the language that hold without consulting the oracle."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import classad
from classad.ast import same_tree
from classad.parser import parse_expr
from classad.testing import CONTEXT_MY, CONTEXT_TARGET, canonical, expressions, literals

MY, TARGET = classad.ClassAd(CONTEXT_MY), classad.ClassAd(CONTEXT_TARGET)
SETTINGS = settings(max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _parse_or_none(text: str):
    try:
        return parse_expr(text)
    except classad.ParseError:
        return None


@pytest.mark.slow
@SETTINGS
@given(expressions())
def test_unparse_then_parse_gives_the_same_tree(text: str) -> None:
    """parse(unparse(e)) is e.

    HTCondor prints reals with 16 significant digits (%1.15E), which cannot hold every
    double, so the property is stated from the first printed form on: printing is then
    a fixed point and re-parsing gives the same tree.  INF and NaN print as the call
    real("INF"), as in HTCondor, and are left out of the tree comparison.
    """
    node = _parse_or_none(text)
    assume(node is not None)
    printed = repr(classad.ExprTree(text))
    reparsed = _parse_or_none(printed)
    assert reparsed is not None
    again = repr(classad.ExprTree(printed))
    assume('real("' not in printed and 'real("' not in again)
    assert again == printed
    assert same_tree(parse_expr(again), reparsed)


@pytest.mark.slow
@SETTINGS
@given(expressions())
def test_evaluation_never_raises(text: str) -> None:
    tree = classad.ExprTree(text) if _parse_or_none(text) is not None else None
    assume(tree is not None)
    tree.eval(MY, TARGET)
    tree.eval(MY)
    tree.eval()


@SETTINGS
@given(literals())
def test_every_literal_is_identical_to_itself(text: str) -> None:
    # x =?= x is true for every scalar literal (lists and ads excepted: they give error)
    assert classad.ExprTree(f"({text}) =?= ({text})").eval() is True


def _is_data(v) -> bool:
    return type(v) in (bool, int, float, str)


@pytest.mark.slow
@settings(SETTINGS, max_examples=100)
@given(expressions(max_leaves=5), expressions(max_leaves=5))
def test_and_or_commute_on_boolean_operands(a: str, b: str) -> None:
    """For operands that are true, false or undefined, && and || are commutative.

    The law is about the operands' values, three of them, so nine pairs: the 100 pairs of
    expressions drawn meet all nine (two thirds of them undefined with undefined), and
    Hypothesis throws away about twelve drawn pairs for each one whose values are all
    three-valued."""
    ta, tb = _parse_or_none(a), _parse_or_none(b)
    assume(ta is not None and tb is not None)
    va = classad.ExprTree(a).eval(MY, TARGET)
    vb = classad.ExprTree(b).eval(MY, TARGET)
    assume(all(v is True or v is False or v is classad.Value.Undefined for v in (va, vb)))
    for op in ("&&", "||"):
        left = classad.ExprTree(f"({a}) {op} ({b})").eval(MY, TARGET)
        right = classad.ExprTree(f"({b}) {op} ({a})").eval(MY, TARGET)
        assert canonical(left) == canonical(right)


@SETTINGS
@given(st.integers(-(1 << 63), (1 << 63) - 1), st.integers(-(1 << 63), (1 << 63) - 1))
def test_integer_arithmetic_wraps_to_64_bits(x: int, y: int) -> None:
    def wrap(n: int) -> int:
        n &= (1 << 64) - 1
        return n - (1 << 64) if n >= 1 << 63 else n

    assert classad.ExprTree(f"({x}) + ({y})").eval() == wrap(x + y)
    assert classad.ExprTree(f"({x}) * ({y})").eval() == wrap(x * y)
