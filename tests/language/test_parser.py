"""Lexing and parsing: literal forms, quirks of the C++ lexer, and parse errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from lang_helpers import ev

import classad
from classad.errors import ParseError
from classad.parser import parse_expr, parse_record


@pytest.mark.parametrize(
    "text, printed",
    [
        # docs/language.md, numbers: "-" glued to a number is part of the literal where an operand starts
        ("-5", "-5"),
        ("- 5", " -5"),
        ("--5", " --5"),
        ("2 - -5", "2 - -5"),
        ("3 -5", "3 - 5"),
        ("x ?: -1", "x ?: -1"),
        ("-9223372036854775808", "-9223372036854775808"),
        # reals print as %1.15E
        ("1.5e3", "1.500000000000000E+03"),
        (".5", "5.000000000000000E-01"),
        ("1E5", "1.000000000000000E+05"),
        ("1e400", 'real("INF")'),
        # keywords are case-insensitive; names keep their spelling (docs/language.md, keywords and names)
        ("TRUE", "true"),
        ("Undefined", "undefined"),
        ("x =?= y", "x is y"),
        ("x =!= y", "x isnt y"),
        ("trueish", "trueish"),
        # quoted names; 'parent' is quoted by the printer
        ("'a b'", "'a b'"),
        ("parent", "'parent'"),
        ("PARENT.x", "'PARENT'.x"),
        # adjacent string literals join; octal and C escapes (docs/language.md, strings)
        ('"a" "b"', '"ab"'),
        ('"\\101\\x"', '"Ax"'),
        ('"\\1234"', '"S4"'),
        ('"\\477"', '"\'7"'),
        ('"é"', '"\\303\\251"'),
        # ".." is one selection token; "? :" is Elvis (docs/language.md, operator tokens)
        ("a..b", "a.b"),
        ("x ? : 4", "x ?: 4"),
        # printing of compound forms (docs/language.md, new format)
        ("(1+2)*3", "(1 + 2) * 3"),
        ("f( 1 , 2 )", "f(1,2)"),
        ("{}", "{  }"),
        ("{1, 2}", "{ 1,2 }"),
        ("[]", "[  ]"),
        ("[b=2; a=3; Zed=1; aa=4]", "[ a = 3; b = 2; aa = 4; Zed = 1 ]"),
        ("[ ; a = 1 ;; b = 2 ; ]", "[ a = 1; b = 2 ]"),
        ("!x", " !x"),
        (".x", ".x"),
        ("a.'a b'", "a.a b"),
        # docs/language.md, evaluation modes: in HTCondor's default mode ";" also separates function arguments
        ('strcat("a";"b","c")', 'strcat("a","b","c")'),
    ],
)
def test_printed_form(text: str, printed: str) -> None:
    assert repr(classad.ExprTree(text)) == printed


@pytest.mark.parametrize(
    "text",
    [
        "x ?: -y",
        "x ?: !y",
        "x ?: - 1",  # Elvis' right side is a postfix expression
        "0x10",
        "010",
        "00",
        "5.",
        "1.e5",  # compat mode: no leading zeros, no bare dots
        "[true = 1]",
        "[is = 1]",
        "a.true",  # keywords are not names
        "''",  # empty quoted name
        '"\\0"',
        '"\\000"',  # NUL bytes
        '"a" /*c*/ "b"',  # a comment breaks string joining
        "[;]",
        "[a = 1, b = 2]",
        "[a = 1 b = 2]",  # record separators
        "{1,2,}",
        "{,}",
        "f(1,)",
        "f(,1)",  # no stray commas
        "1 + 2 3",
        "1 +",
        "(1",
        '"abc',
        "/* open",
        "é",  # non-ASCII outside a string
        "f(1;)",
        "{1;2}",  # ";" separates call arguments only
    ],
)
def test_parse_errors(text: str) -> None:
    with pytest.raises(ParseError):
        parse_expr(text)


def test_parse_error_names_position_and_expectation() -> None:
    with pytest.raises(ParseError) as info:
        parse_expr("a + (b * ]")
    err = info.value
    assert (err.line, err.column) == (1, 10)
    assert "expected" in err.message
    assert err.kind == "syntax"
    assert "^" in str(err)


def test_parse_error_is_the_documented_type() -> None:
    assert issubclass(ParseError, classad.ClassAdError)
    with pytest.raises(classad.ClassAdException):
        classad.ExprTree("1 +")


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    text = "(" * 10000 + "1" + ")" * 10000
    with pytest.raises(ParseError):
        parse_expr(text)
    text = "-" * 10000 + "1"
    with pytest.raises(ParseError):
        parse_expr(text)


def test_moderate_nesting_evaluates() -> None:
    assert classad.ExprTree("(" * 200 + "1" + ")" * 200).eval() == 1


def test_identical_text_shares_one_tree() -> None:
    assert parse_expr("MY.Cpus >= TARGET.RequestCpus") is parse_expr("MY.Cpus >= TARGET.RequestCpus")


def test_record_duplicates_keep_first_spelling_last_value() -> None:
    assert ev("[X = 1; x = 2]") == "[ X = 2 ]"
    ad = classad.ClassAd("[X = 1; x = 2]")
    assert list(ad) == ["X"] and ad["x"] == 2


def test_whole_ad_parse_error_position() -> None:
    with pytest.raises(ParseError) as info:
        parse_record("[\n  a = 1;\n  b = ;\n]", source="job.ad")
    assert info.value.file == "job.ad" and info.value.line == 3


def test_ternary_binds_loosest_and_is_right_associative() -> None:
    assert ev("true ? false : true ? 1 : 2") == "false"
    assert ev("1 < 2 < 3") == "true"
    assert ev("3 > 2 > 1") == "false"
    assert ev("2 == 2 == 2") == "false"


def test_elvis_binds_tightest() -> None:
    assert ev("-x ?: 5") == "-5"
    assert ev("!x ?: true") == "false"
    assert ev("x ?: y ?: 3") == "3"


def test_grammar_has_no_conflicts() -> None:
    """Build the grammar with Lark's strict mode: a new conflict or regex collision fails here."""
    pytest.importorskip("interegular")
    from lark import Lark

    from classad.grammar_parser import _grammar_path

    Lark(
        Path(_grammar_path()).read_text(),
        parser="lalr",
        lexer="contextual",
        start=["expr", "classad", "old_line"],
        strict=True,
    )
