"""Every row of the tricky-expression table (docs/language.md, tricky expressions), oracle answers from the spec."""

from __future__ import annotations

import pytest
from lang_helpers import ev

TRICKY = [
    ("7 / -2", "-3"),
    ("-7 % 3", "-1"),
    ("7.0 % 2", "error"),
    ("1 / 0", "error"),
    ("1 / 0.0", "error"),
    ("-1 / 0.0", 'real("-INF")'),
    ("9223372036854775807 + 1", "-9223372036854775808"),
    ("9223372036854775808", "0"),
    ("0x10", "PARSE-ERROR"),
    ("1 =?= 1.0", "false"),
    ('"abc" == "ABC"', "true"),
    ('"a" < "B"', "true"),
    ('10 == "10"', "error"),
    ("true == 1", "true"),
    ("undefined == undefined", "undefined"),
    ("{1} =?= {1}", "error"),
    ("false && error", "false"),
    ("error && false", "error"),
    ("undefined && false", "false"),
    ("undefined || false", "undefined"),
    ('true && "yes"', "error"),
    ("-true", "error"),
    ("6 & 3 == 3", "error"),
    ("x ?: 1 + 10", "11"),
    ("5 + x ?: 1", "6"),
    ("x ?: -y", "PARSE-ERROR"),
    ('"a" ? 1 : 2', "error"),
    ("[a = 1; b = [a = 2; c = parent.a]].b.c", "1"),
    ("[a=1; b=[c=2]].b.a", "1"),
    ("{[a=1], [a=2], 3}.a", "{ 1,2,error }"),
    ('[a=1]["b"]', "undefined"),
    ("{10,20}[2]", "error"),
    ("[a = b; b = a].a", "undefined"),
    ('strcat("x", 1.5)', '"x1.500000000000000E+00"'),
    ('strcat("a", undefined)', "undefined"),
    ('int("  42abc")', "42"),
    ("round(2.5)", "2"),
    ("avg({})", "0"),
    ('anyCompare("<", {undefined, 1}, 2)', "false"),
    ('"a" "b"', '"ab"'),
    ("[b = 7]..b", "7"),
    ("1 << 64", "1"),
    ('real("NaN") == real("NaN")', "false"),
    ('stringListMax("-3,-5")', "0"),
    ("interval(1472523)", '"17+01:02:03"'),
    ('eval("1 ? 2 : 3 junk")', "2"),
    ("[X = 1; x = 2]", "[ X = 2 ]"),
    ('"\\101\\x"', '"Ax"'),
]


@pytest.mark.parametrize("expr, expected", TRICKY, ids=[t[0] for t in TRICKY])
def test_tricky_expression(expr: str, expected: str) -> None:
    assert ev(expr) == expected


CONTEXT = [
    # (expression, MY, TARGET, compat answer)
    ("a", "[a=1]", "[a=3; b=2]", "1"),
    ("b", "[a=1]", "[a=3; b=2]", "2"),
    ("TARGET.a", "[a=1]", "[a=3; b=2]", "3"),
    ("MY.b", "[a=1]", "[a=3; b=2]", "undefined"),
    ("MY.a", "[a=1]", None, "1"),
    ("CurrentTime > 0", "[a=1]", None, "true"),
    ("TARGET.x", "[a=1]", "[x = a + 10]", "11"),
]


@pytest.mark.parametrize("expr, my, target, expected", CONTEXT)
def test_context_rows_compat(expr: str, my: str, target, expected: str) -> None:
    assert ev(expr, my, target) == expected


STRICT = [
    ("a", "[a=1]", "[a=3; b=2]", "1"),
    ("b", "[a=1]", "[a=3; b=2]", "undefined"),
    ("TARGET.a", "[a=1]", "[a=3; b=2]", "3"),
    ("MY.b", "[a=1]", "[a=3; b=2]", "undefined"),
    ("MY.a", "[a=1]", None, "undefined"),
    ("CurrentTime > 0", "[a=1]", None, "undefined"),
    ("TARGET.x", "[a=1]", "[x = a + 10]", "undefined"),
]


@pytest.mark.parametrize("expr, my, target, expected", STRICT)
def test_context_rows_strict(expr: str, my: str, target, expected: str) -> None:
    import classad

    classad.set_strict_mode(True)
    try:
        assert ev(expr, my, target) == expected
    finally:
        classad.set_strict_mode(False)
