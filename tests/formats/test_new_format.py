"""The new format: ``[ ... ]`` ads, concatenated, one per line, in a list, or pretty (docs/language.md, new format)."""

from __future__ import annotations

import io

import pytest
from fmt_compare import canonical
from fmt_strategies import ANY_ADS
from hypothesis import given, settings, strategies as st

from classad import ClassAd, FormatError
from classad.formats import ParserType, format_ad, parseAds, write_ads
from classad.formats.new_format import _split_attributes
from classad.parser import parse_record


def read(text: str, **kw):
    return list(parseAds(text, ParserType.New, **kw))


def names(ads):
    return [sorted(ad) for ad in ads]


@pytest.mark.parametrize(
    "text",
    [
        "[a = 1][b = 2]",  # concatenated, no space
        "[a = 1]\n[b = 2]\n",  # one per line ("newl")
        "{\n[ a = 1 ]\n,\n[ b = 2 ]\n}\n",  # condor_q -long:new
        "// comment\n[a = 1]\n/* two */ [b = 2] // end\n",  # comments between ads
        "\n    [\n        a = 1\n    ]\n\n    [\n        b = 2\n    ]",  # str() of two ads
    ],
)
def test_stream_shapes(text):
    """Every way HTCondor writes several new-syntax ads reads as the same two ads."""
    assert names(read(text)) == [["a"], ["b"]]


def test_strings_and_brackets_inside_ads_do_not_end_them():
    """Brackets inside strings, quoted names and comments are not counted."""
    (ad,) = read("[ s = \"]][\"; 'odd]name' = 1; c = 2 /* ] */; l = { [x = 1] }[0].x ]")
    assert ad["s"] == "]][" and ad["odd]name"] == 1 and ad.eval("l") == 1


def test_syntax_error_is_placed_in_the_file():
    """A parse error inside an ad is reported at its line and column in the file."""
    text = "[a = 1]\n[\n  b = 2;\n  c = 3 +;\n]\n"
    with pytest.raises(FormatError) as info:
        read(text)
    assert (info.value.line, info.value.column) == (4, 10)


def test_error_on_first_line_of_ad_counts_the_ad_offset():
    """On the ad's first line, columns count from the start of the line, not the ad."""
    with pytest.raises(FormatError) as info:
        read("[a = 1]  [b = ]")
    assert (info.value.line, info.value.column) == (1, 15)


def test_broken_ad_does_not_swallow_the_next():
    """Skipping a bad ad still yields the ads after it."""
    ads = read("[a = 1]\n[b = 1 2]\n[c = 3]\n", on_error="skip")
    assert names(ads) == [["a"], ["c"]]


def test_unterminated_string_is_reported_on_its_line():
    """A string not closed on its line is an error there, and the next ad is still read."""
    errors = []
    ads = read('[a = "open]\n[b = 2]\n', on_error=errors.append)
    assert names(ads) == [["b"]]
    assert [(e.line, e.column) for e in errors] == [(1, 6)]


def test_unclosed_ad_is_cut_at_the_next_ad():
    """A missing ']' is reported at the ad that lacks it; the following ad survives."""
    errors = []
    ads = read("[a = 1;\n[b = 2]\n", on_error=errors.append)
    assert names(ads) == [["b"]]
    assert [(e.line, e.column) for e in errors] == [(1, 1)]


def test_nested_ad_at_line_start_is_not_mistaken_for_a_new_ad():
    """A nested ad on its own line after '=' stays inside the ad."""
    (ad,) = read("[\na = 1;\nb =\n[ x = 1 ]\n]\n")
    assert ad["b"]["x"] == 1


def test_unclosed_ad_at_end_of_input():
    """Reaching the end inside an ad is an error at the ad's opening bracket."""
    with pytest.raises(FormatError) as info:
        read("[a = 1]\n\n  [b = 2;\n c = 3\n")
    assert (info.value.line, info.value.column) == (3, 3)
    assert "never closed" in info.value.message


def test_text_between_ads_is_reported_once():
    """Junk between ads is one error; reading resumes at the next '['."""
    errors = []
    ads = read("[a = 1]\njunk junk\nmore [b = 2]\n", on_error=errors.append)
    assert names(ads) == [["a"], ["b"]]
    assert [(e.line, e.column) for e in errors] == [(2, 1)]


def test_empty_ad_is_an_ad():
    """``[]`` reads as an empty ad."""
    assert [len(ad) for ad in read("[][a = 1]")] == [0, 1]


# ---- printing: expected texts are classad2's own repr() and str() -------------------------

NESTED = "[a=1;b={1,[x=1;y={}]}; c = x + [q = 1].q; d = {}; e = []; f = {{1,2}}]"
# str(classad2.ClassAd(NESTED)) as printed by the htcondor 25.14.1 wheel.
NESTED_PRETTY = (
    "\n    [\n        a = 1; \n        b = \n           {\n              1,\n              \n"
    "                  [\n                      x = 1; \n                      y = \n"
    "                         {\n                         }\n                  ]\n           }; \n"
    "        c = x + \n            [\n                q = 1\n            ].q; \n        d = \n"
    "           {\n           }; \n        e = \n            [\n            ]; \n        f = \n"
    "           {\n              \n                 {\n                    1,\n"
    "                    2\n                 }\n           }\n    ]"
)


def test_pretty_form_matches_classad2_str():
    """The indented printer reproduces str() of a classad2 ad."""
    assert format_ad(ClassAd(NESTED), "pretty") == NESTED_PRETTY
    assert format_ad(ClassAd(), "pretty") == "\n    [\n    ]"


def test_pretty_form_reads_back():
    """The pretty form is valid input."""
    (ad,) = read(NESTED_PRETTY)
    assert format_ad(ad, "new") == format_ad(ClassAd(NESTED), "new")


def test_one_line_form_uses_container_order():
    """``[b=2; a=3; Zed=1; aa=4]`` prints ``[ a = 3; b = 2; aa = 4; Zed = 1 ]`` (docs/language.md, new format)."""
    assert format_ad(ClassAd("[b=2; a=3; Zed=1; aa=4]"), "new") == "[ a = 3; b = 2; aa = 4; Zed = 1 ]"


@pytest.mark.parametrize(
    "style, expected",
    [
        ("lines", "[ a = 1; B = 2 ]\n[ c = 3 ]\n"),
        ("list", "{\n[ a = 1; B = 2 ]\n,\n[ c = 3 ]\n}\n"),
    ],
)
def test_file_writer_styles(style, expected):
    """One ad per line, or the -long:new list; names sorted case-insensitively."""
    buf = io.StringIO()
    write_ads([ClassAd("[B = 2; a = 1]"), ClassAd("[c = 3]")], buf, "new", new_style=style)
    assert buf.getvalue() == expected
    assert names(read(buf.getvalue())) == [["B", "a"], ["c"]]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(ANY_ADS, st.sampled_from(["new", "pretty"]))
def test_attribute_cutting_agrees_with_the_parser(ad, fmt):
    """The fast path (one cached parse per value) builds what the whole-ad parser builds."""
    text = format_ad(ad, fmt).strip()
    pairs = _split_attributes(text)
    full = parse_record(text).attrs
    if pairs is not None:
        assert [(n, canonical(v)) for n, v in pairs] == [(n, canonical(v)) for n, v in full]


@pytest.mark.parametrize(
    "text",
    [
        "[ a = 1; // note\n b = 2 ]",
        "[ 'q n' = 1 ]",
        "[ ; ]",
        "[ a = 1 b = 2 ]",
        "[ true = 1 ]",
        "[ a = ]",
    ],
)
def test_attribute_cutting_defers_on_unusual_text(text):
    """Comments between attributes, quoted names and errors go to the whole-ad parser."""
    assert _split_attributes(text) is None
