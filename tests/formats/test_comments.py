"""``//`` and ``/* */`` comment lines in old-format text.

Where ``classad2`` reads the text, the expected ads are what it returns (compared live
when the oracle is installed).  ``classad2`` treats such a line as a broken attribute
and silently drops the rest of its ad; here the line is a comment (docs/differences.md R16).
"""

from __future__ import annotations

import textwrap

import pytest

import classad
from classad import FormatError, ParserType


def ads(text: str, parser: ParserType = ParserType.Old) -> list[dict]:
    return [dict(ad) for ad in classad.parseAds(text, parser)]


# Text that classad2 reads, with what it returns.
AGREED = [
    ("foo = 1\n\n/* c */\n", [{"foo": 1}]),
    ('foo = "bar"\n\nfoo = "wiz"\n\n/* this is a comment */\n', [{"foo": "bar"}, {"foo": "wiz"}]),
    ("foo = 1 // trailing\n", [{"foo": 1}]),
    ("foo = 1\n/**/\n", [{"foo": 1}]),
    ("foo = 1\n/* x */ /* y */\n", [{"foo": 1}]),
    ("foo = 1\n  // c\n", [{"foo": 1}]),
    ("foo = 1\n# c\nbar = 2\n", [{"foo": 1, "bar": 2}]),
]


@pytest.mark.parametrize("text, expected", AGREED)
def test_comment_lines_as_classad2_reads_them(text: str, expected: list) -> None:
    assert ads(text) == expected
    assert ads(text, ParserType.Auto) == expected


@pytest.mark.parametrize("text, expected", AGREED)
def test_comment_lines_match_classad2_live(oracle, text: str, expected: list) -> None:
    assert [dict(ad) for ad in oracle.parseAds(text, oracle.ParserType.Old)] == expected


def test_htcondor_binding_fixture_reads_both_ads() -> None:
    text = textwrap.dedent("""
        foo = "bar"

        foo = "wiz"

        /* this is a comment */
        """).strip()
    got = list(classad.parseAds(text))
    assert got[0]["foo"] == "bar" and got[1]["foo"] == "wiz"
    assert classad.parseOne(text)["foo"] == "wiz"


@pytest.mark.parametrize(
    "text, expected",
    [
        # classad2: [{"foo": 1}] (bar is dropped silently)
        ("foo = 1\n// c\nbar = 2\n", [{"foo": 1, "bar": 2}]),
        ("foo = 1\n/* a\n\nb */\nbar = 2\n", [{"foo": 1, "bar": 2}]),
        # classad2: ValueError (a comment line starting an ad is an unreadable ad)
        ("foo = 1\n\n// c\n\nbar = 2\n", [{"foo": 1}, {"bar": 2}]),
        # classad2 names the attribute "/* d */ bar"
        ("foo = 1\n/* d */ bar = 2\n", [{"foo": 1, "bar": 2}]),
    ],
)
def test_comment_lines_are_comments_anywhere(text: str, expected: list) -> None:
    assert ads(text) == expected


def test_auto_detection_looks_past_leading_comments() -> None:
    assert ads("// x\nfoo = 1\n", ParserType.Auto) == [{"foo": 1}]
    assert ads("/* a\n b */ [a = 1]", ParserType.Auto) == [{"a": 1}]
    assert ads("// only a comment\n", ParserType.Auto) == []


def test_unterminated_block_comment_is_reported_where_it_opens() -> None:
    with pytest.raises(FormatError) as info:
        ads("foo = 1\n  /* x\nbar = 2\n")
    assert (info.value.line, info.value.column) == (2, 3)
