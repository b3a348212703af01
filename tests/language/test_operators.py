"""Each operator's semantics, with the C++ library's answers quoted in docs/language.md (grammar and precedence and evaluation)."""

from __future__ import annotations

import pytest
from lang_helpers import ev

CASES = {
    "strictness (docs/language.md, strict operators)": [
        ("undefined + error", "error"),
        ('"a" + undefined', "undefined"),
        ("{1} + undefined", "undefined"),
        ("undefined[error]", "error"),
    ],
    "arithmetic (docs/language.md, arithmetic)": [
        ('"a" + "b"', "error"),
        ("3000000000*4000000000", "-6446744073709551616"),
        ("-7/2", "-3"),
        ("7/-2", "-3"),
        ("-7 % 3", "-1"),
        ("7 % -3", "1"),
        ("-9223372036854775808 / -1", "9223372036854775807"),
        ("-9223372036854775808 % -1", "0"),
        ("1 + 2.5", "3.500000000000000E+00"),
        ("true + 1", "2"),
        ("0/0.0", 'real("NaN")'),
        ("1e308*10", "error"),
        ("-1e308*10", 'real("-INF")'),
        ("-true", "error"),
        ("+true", "error"),
        ("-undefined", "undefined"),
        ('+"a"', "error"),
        ("- 9223372036854775808", "0"),
    ],
    "comparison (docs/language.md, comparison)": [
        ("1 == 1.0", "true"),
        ("true < 2", "true"),
        ('"_" < "A"', "true"),
        ('true == "true"', "error"),
        ("{1} == {1}", "error"),
        ("0.0 == -0.0", "true"),
        ("1 =?= 1.0", "false"),
        ("true =?= 1", "false"),
        ('"a" =?= 1', "false"),
        ("10 =?= undefined", "false"),
        ("error =?= error", "true"),
        ("undefined is undefined", "true"),
        ('"abc" =?= "ABC"', "false"),
        ('"abc" isnt "ABC"', "true"),
        ("[a=1] =?= [a=1]", "error"),
        ("{} =?= {}", "error"),
    ],
    "logic (docs/language.md, logic)": [
        ("true && 5", "true"),
        ("undefined && true", "undefined"),
        ("undefined && error", "error"),
        ('false && "s"', "false"),
        ('"s" && false', "error"),
        ("true || error", "true"),
        ("false || error", "error"),
        ("undefined || true", "true"),
        ("error || true", "error"),
        ('false || "s"', "error"),
        ("!2.5", "false"),
        ("!0.0", "true"),
        ("!undefined", "undefined"),
        ('!"s"', "error"),
        ("!{1}", "error"),
    ],
    "bitwise and shifts (docs/language.md, bitwise operators and shifts)": [
        ("true & 1", "error"),
        ("~5.0", "error"),
        ("~5", "-6"),
        ("6 & 3", "2"),
        ("6 | 3", "7"),
        ("6 ^ 3", "5"),
        ("1 << 63", "-9223372036854775808"),
        ("1 << -1", "-9223372036854775808"),
        ("8 >> 64", "8"),
        ("8 >> -1", "0"),
        ("-8 >> 70", "-1"),
        ("-8 >> -1", "-8"),
        ("-1 >>> 1", "9223372036854775807"),
        ("-8 >>> 0", "0"),
    ],
    "conditionals (docs/language.md, conditionals)": [
        ("undefined ? 1 : 2", "undefined"),
        ("error ? 1 : 2", "error"),
        ("{1} ? 1 : 2", "error"),
        ("true ? 1 : error", "1"),
        ("2.5 ? 1 : 2", "1"),
        ("error ?: 7", "error"),
        ("0 ?: 7", "0"),
        ('"" ?: 7', '""'),
        ("undefined ?: 7", "7"),
    ],
    "subscripts (docs/language.md, subscripts)": [
        ("{1,2,3}[3]", "error"),
        ("{1,2,3}[-1]", "error"),
        ("{1,2}[4294967296]", "1"),
        ("{1,2}[true]", "error"),
        ("{1,2}[1.0]", "error"),
        ('"abc"[0]', "error"),
        ("[a=1][0]", "error"),
        ('{1}["0"]', "error"),
        ("undefined[0]", "undefined"),
        ('[A=1]["a"]', "1"),
    ],
    "selection (docs/language.md, attribute references and scoping)": [
        ("{[a=1], undefined}.a", "{ 1,undefined }"),
        ("{{[a=1]},[a=2]}.a", "{ { 1 },2 }"),
        ("(1).y", "error"),
        ('"s".y', "error"),
        ("[a = 1; b = [c = a]].b.c", "1"),
        ("[Ab=1].aB", "1"),
    ],
    "circular references (docs/language.md, attribute references and scoping)": [
        ("[a = a + 1].a", "undefined"),
        ("[g = {g}].g", "{ g }"),
    ],
    "time arithmetic (docs/language.md, time arithmetic)": [
        ("absTime(0) + 5", "error"),
        ("relTime(90) + 10", "error"),
        ("relTime(90) == 90", "error"),
    ],
}

ROWS = [(group, expr, expected) for group, rows in CASES.items() for expr, expected in rows]


@pytest.mark.parametrize("group, expr, expected", ROWS, ids=[f"{g}: {e}" for g, e, _ in ROWS])
def test_operator(group: str, expr: str, expected: str) -> None:
    assert ev(expr) == expected


def test_circular_references_with_functions() -> None:
    # docs/language.md, attribute references and scoping: only active re-entry counts
    assert ev("[d = isError(d)].d") == "false"
    assert ev("[e = isUndefined(e)].e") == "true"
    assert ev("[f = f ?: 5].f") == "5"
    assert ev("[h=[x=h]].h.x.x.x") == "[ x = h ]"


def test_string_subscript_detaches_the_ad() -> None:
    # docs/language.md, subscripts: n["d"].e is undefined while n.d.e finds e through the enclosing ad
    assert ev("[n = [a = 2; d = [e = a]]].n.d.e") == "2"
    assert ev('[n = [a = 2; d = [e = a]]].n["d"].e') == "undefined"
