"""Differential tests: random expressions evaluated here and by HTCondor's C++ library.

The oracle is the ``classad2`` module of the ``htcondor`` wheel, loaded after
``htcondor2`` so that it runs in HTCondor's default (compat) mode.  Every
expression is evaluated in three contexts: a two-ad match (MY and TARGET), a
single ad, and no ad at all.  Expressions the oracle cannot evaluate at all
("hard failure", docs/language.md, evaluation failures) are skipped.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import classad
from classad.testing import CONTEXT_MY, CONTEXT_TARGET, canonical, expressions

c = pytest.importorskip("classad2") if pytest.importorskip("htcondor2") else None

ORACLE_MY, ORACLE_TARGET = c.ClassAd(CONTEXT_MY), c.ClassAd(CONTEXT_TARGET)
OUR_MY, OUR_TARGET = classad.ClassAd(CONTEXT_MY), classad.ClassAd(CONTEXT_TARGET)

CONTEXTS = {
    "match": ((ORACLE_MY, ORACLE_TARGET), (OUR_MY, OUR_TARGET)),
    "single": ((ORACLE_MY,), (OUR_MY,)),
    "none": ((), ()),
}

_SKIP = object()


def oracle_value(text: str, args: tuple):
    try:
        tree = c.ExprTree(text)
    except Exception:
        return "PARSE-ERROR"
    try:
        return canonical(tree.eval(*args))
    except Exception:  # hard evaluation failure in the C++ library
        return _SKIP


def our_value(text: str, args: tuple):
    try:
        tree = classad.ExprTree(text)
    except classad.ParseError:
        return "PARSE-ERROR"
    return canonical(tree.eval(*args))


SETTINGS = settings(max_examples=1200, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@pytest.mark.slow
@pytest.mark.parametrize("context", sorted(CONTEXTS))
@SETTINGS
@given(text=expressions())
def test_same_value_as_htcondor(context: str, text: str) -> None:
    oracle_args, our_args = CONTEXTS[context]
    expected = oracle_value(text, oracle_args)
    if expected is _SKIP:
        return
    assert our_value(text, our_args) == expected


@pytest.mark.slow
@SETTINGS
@given(text=expressions(max_leaves=6))
def test_same_printed_form_as_htcondor(text: str) -> None:
    """``repr`` (the new-syntax unparser) prints what HTCondor prints."""
    try:
        expected = repr(c.ExprTree(text))
    except Exception:
        expected = "PARSE-ERROR"
    try:
        ours = repr(classad.ExprTree(text))
    except classad.ParseError:
        ours = "PARSE-ERROR"
    assert ours == expected
