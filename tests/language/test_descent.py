"""The hand-written parser (classad.descent) against the Lark grammar it stands in for.

The Lark parser is the reference: for every text the fast parser either gives up or
builds exactly the tree Lark builds (same node kinds, values and name spellings), and it
never accepts a text Lark refuses.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from classad import descent, grammar_parser, parser
from classad.errors import ParseError

WS = st.sampled_from(["", " ", "  ", "\t", "\n", " /* c */ ", "\r\n", "\v", "\f", " // c\n", "// c", "/*/ c */"])
NAMES = st.sampled_from(
    [
        "a",
        "B",
        "x_1",
        "_y",
        "Memory",
        "TARGET",
        "my",
        "absTime",
        "relTime",
        "strcat",
        "'q n'",
        "'a\\'b'",
        "'x' 'y'",
        "''",
        "'\\0'",
        "is",
        "ISNT",
        "isX",
        "trueish",
        "True",
        "error",
        "UNDEFINED",
        "e5",
        "E",
    ]
)
LITERALS = st.sampled_from(
    [
        "0",
        "1",
        "42",
        "010",
        "0x1F",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "123456789012345678901234",
        "-0",
        "-5",
        "1.5",
        "-1.5",
        ".5",
        "-.5",
        "1e5",
        "1E-3",
        "2.5e+10",
        "1.",
        "1.e5",
        "5.x",
        "3x",
        "1e",
        '""',
        '"s"',
        '"a\\"b"',
        '"\\n\\t\\101\\0"',
        '"\\\\"',
        '"x" "y"',
        '"x"\n"y"',
        '"x" /* c */ "y"',
        '"\\u00e9"',
        '"\\400"',
        '"\\x"',
        "true",
        "FALSE",
        "Undefined",
        "error",
        '"2020-01-02T03:04:05Z"',
    ]
)
BINARY = st.sampled_from(
    [
        "||",
        "&&",
        "|",
        "^",
        "&",
        "==",
        "!=",
        "=?=",
        "=!=",
        " is ",
        " isnt ",
        " IS ",
        "<",
        "<=",
        ">",
        ">=",
        "<<",
        ">>",
        ">>>",
        "+",
        "-",
        "*",
        "/",
        "%",
    ]
)
UNARY = st.sampled_from(["-", "+", "!", "~", "- ", "!!"])
ELVIS = st.sampled_from(["?:", "? :", "?\n:", "? /*c*/ :"])


def _exprs() -> st.SearchStrategy[str]:
    leaf = st.one_of(NAMES, LITERALS, NAMES.map(lambda n: "." + n), NAMES.map(lambda n: ".." + n))

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        sep = st.sampled_from([",", ";", ", "])
        attr = st.tuples(NAMES, WS, inner).map(lambda t: f"{t[0]}{t[1]}={t[2]}")
        return st.one_of(
            st.tuples(inner, WS, BINARY, WS, inner).map("".join),
            st.tuples(UNARY, inner).map("".join),
            st.tuples(inner, WS, ELVIS, WS, inner).map("".join),
            st.tuples(inner, WS, st.just("?"), WS, inner, WS, st.just(":"), WS, inner).map("".join),
            st.tuples(inner, st.sampled_from([".", "..", ". "]), NAMES).map("".join),
            st.tuples(inner, WS, inner).map(lambda t: f"{t[0]}[{t[1]}{t[2]}]"),
            inner.map(lambda e: f"({e})"),
            st.lists(inner, max_size=3).map(lambda xs: "{" + ", ".join(xs) + "}"),
            st.tuples(NAMES, WS, st.lists(inner, max_size=3), sep).map(
                lambda t: f"{t[0]}{t[1]}(" + t[3].join(t[2]) + ")"
            ),
            st.tuples(st.sampled_from(["absTime", "RELTIME", "relTime"]), LITERALS).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(
                st.sampled_from(["[", "[;", "[ ;; "]),
                st.lists(attr, max_size=3),
                st.sampled_from(["; ", ";", ";;"]),
                st.sampled_from(["]", ";]", " ; ]"]),
            ).map(lambda t: t[0] + t[2].join(t[1]) + t[3]),
        )

    return st.recursive(leaf, extend, max_leaves=12)


EXPRS = _exprs()


def _mutate(text: str, data: st.DataObject) -> str:
    if not text or not data.draw(st.booleans()):
        return text
    i = data.draw(st.integers(0, len(text) - 1))
    how = data.draw(st.sampled_from(["drop", "double", "insert"]))
    if how == "drop":
        return text[:i] + text[i + 1 :]
    if how == "double":
        return text[:i] + text[i] + text[i:]
    return text[:i] + data.draw(st.sampled_from(list("-.?:;,[](){}\"'/*=!<>0e "))) + text[i:]


def _lark(text: str, start: str, old: bool):
    """What the reference parser makes of ``text``: the tree, or the ParseError."""
    try:
        return grammar_parser.parse_with_grammar(text, start, old)
    except grammar_parser.GrammarError as exc:  # any refusal, whatever Lark or the builder raised
        return ParseError(exc.message)


def _same(fast, ref) -> bool:
    return fast == ref and repr(fast) == repr(ref)


@pytest.mark.slow
@settings(max_examples=2500, deadline=None)
@given(EXPRS, st.booleans(), st.data())
def test_fast_parser_builds_the_lark_tree_or_gives_up(text, old, data):
    """Random expressions (with random one-character damage): the fast parser's tree is
    Lark's, and where Lark refuses the text the fast parser gives up too."""
    text = _mutate(text, data) + data.draw(WS)
    fast = descent.parse(text, "expr", old)
    ref = _lark(text, "expr", old)
    if isinstance(ref, ParseError):
        assert fast is None, (text, fast)
    elif fast is not None:
        assert _same(fast, ref), (text, fast, ref)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(NAMES, EXPRS), min_size=0, max_size=5), st.sampled_from(["; ", ";", ";\n"]), st.data())
def test_fast_parser_reads_whole_ads_as_lark_does(attrs, sep, data):
    """``[ name = expr; ... ]`` as a whole ad (start rule ``classad``)."""
    text = _mutate("[ " + sep.join(f"{n} = {e}" for n, e in attrs) + " ]", data)
    fast = descent.parse(text, "classad")
    ref = _lark(text, "classad", False)
    if isinstance(ref, ParseError):
        assert fast is None, (text, fast)
    elif fast is not None:
        assert _same(fast, ref), (text, fast, ref)


@pytest.mark.parametrize(
    "text",
    [
        "a + b * c - d / e % f",
        "a || b && c | d ^ e & f == g < h << i + j * k",
        "2 == 2 == 2",
        "x ?: 1 + 10",
        "-x ?: 5",
        "x ?: -1",
        "x ?: y.z",
        "a ?: b ?: c",
        "3 -5",
        "3 - -5",
        "3-5",
        "a-.5",
        "-9223372036854775808",
        "- 5",
        "-5[0]",
        "-x.y",
        "a ? b : c ? d : e",
        "a ? b ? c : d : e",
        "a ? : b",
        '"a" "b" == "ab"',
        "[b = 7]..b",
        ".Memory",
        "[ ; a = 1 ;; b = 2 ; ]",
        "[]",
        "{}",
        "{1, {2}, [x = 1]}",
        'strcat("a";"b")',
        "f()",
        "'true' + 1",
        "'a' 'b'",
        "A is B",
        "a ISNT b",
        "a =?= b =!= c",
        'relTime("1+01:00:00")',
        'absTime("2020-01-02T03:04:05Z")',
        "[a = 1; A = 2].a",
        "1e5",
        ".5e-3",
        "1.5.x",
        "TARGET.Memory >= RequestMemory && (TARGET.Disk > 10) // trailing",
        "a + 1\n",
        " [ a = 1 ]\r\n\t ",
        "x // y",
        "x /* y */",
        "/* c */ a /* d */ // e",
        "a /*/ b */ + c",
    ],
)
def test_quirks_read_the_same(text):
    """Each lexing and precedence quirk of the grammar, read by both parsers."""
    fast = descent.parse(text)
    ref = _lark(text, "expr", False)
    assert not isinstance(ref, ParseError)
    assert fast is not None and _same(fast, ref), (fast, ref)


@pytest.mark.parametrize(
    "text",
    [
        "x ?: -y",
        "010",
        "0x1F",
        "1.",
        "a.5",
        "a..",
        "[ ; ]",
        "[ a = 1 , b = 2 ]",
        "{1,}",
        "f(1,)",
        "true(1)",
        "a.true",
        "is",
        '"a" /* c */ "b"',
        '"\\0"',
        "'\\0'",
        "''",
        'absTime("never")',
        "(a",
        "a)",
        "",
        "a /* open",
        "1 +",
        "a ? b",
        "a b",
        "a + // c",
        "a + /* c */",
        "a /* x",
        "a @b",
        "  ",
        "a\0",
        "\u00b2",
        "1 + \u0663",
        "0123",
        "a\u00a0+ 1",
    ],
)
def test_what_lark_refuses_the_fast_parser_leaves_to_it(text):
    """Texts that are errors: the fast parser gives up, so Lark reports the error."""
    assert isinstance(_lark(text, "expr", False), ParseError)
    assert descent.parse(text) is None
    with pytest.raises(ParseError):
        parser.parse_expr(text)


def test_old_format_lines():
    """``Name = value`` with the old string syntax (only ``\\"`` is an escape)."""
    for text in ['Cmd = "a\\nb"', "Memory = 2048", 'Requirements = TARGET.Arch == "X86_64"', "'q' = 1"]:
        fast = descent.parse(text, "old_line", old_strings=True)
        assert fast is not None and _same(fast, _lark(text, "old_line", True))


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40), st.sampled_from(["expr", "classad", "old_line"]))
def test_any_text_either_parses_as_lark_reads_it_or_is_left_to_lark(text, start):
    """Arbitrary characters: no exception escapes the fast parser, and what it accepts Lark
    reads the same way."""
    fast = descent.parse(text, start)
    if fast is not None:
        ref = _lark(text, start, False)
        assert not isinstance(ref, ParseError) and _same(fast, ref), (text, fast, ref)


def test_a_valid_but_too_deep_text_is_refused_without_lark():
    """A long operator chain (valid text, a tree deeper than the evaluator may go) is
    refused from the fast parser's tree: before, Lark re-read the whole text first (seconds
    for a megabyte)."""
    from classad.parser import MAX_DEPTH, parse_expr

    text = "+".join(["1"] * (MAX_DEPTH + 5))
    assert descent.parse(text) is descent.TOO_DEEP
    with pytest.raises(ParseError, match=f"nested more than {MAX_DEPTH} levels deep"):
        parse_expr(text)
    assert descent.parse("+".join(["1"] * (MAX_DEPTH - 5))) not in (None, descent.TOO_DEEP)
