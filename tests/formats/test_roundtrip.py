"""Writing ads in a format and reading them back gives the same ads (Hypothesis)."""

from __future__ import annotations

import io

import pytest
from fmt_compare import ad_form, assert_same_ads
from fmt_strategies import ANY_ADS, OLD_ADS
from hypothesis import given, settings, strategies as st

from classad.formats import ParserType, format_ad, parseAds, write_ads

SINGLE = {
    "new": ParserType.New,
    "pretty": ParserType.New,
    "json": ParserType.JSON,
    "jsonl": ParserType.JSON,
    "xml": ParserType.XML,
}


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(ANY_ADS, st.sampled_from(sorted(SINGLE)))
def test_single_ad_round_trip(ad, fmt):
    """format_ad then parseAds returns the ad (new, pretty, JSON, XML)."""
    text = format_ad(ad, fmt)
    if fmt == "xml":
        text = "<classads>\n" + text + "</classads>\n"
    (back,) = parseAds(text, SINGLE[fmt])
    assert ad_form(back) == ad_form(ad)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(OLD_ADS.filter(len))
def test_print_old_round_trip(ad):
    """printOld output reads back as the same ad."""
    (back,) = parseAds(ad.printOld(), ParserType.Old)
    assert ad_form(back) == ad_form(ad)


FILE_FORMATS = [
    ("old", "lines"),
    ("new", "lines"),
    ("new", "list"),
    ("new", "pretty"),
    ("json", "lines"),
    ("jsonl", "lines"),
    ("xml", "lines"),
]


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(OLD_ADS.filter(len), max_size=4), st.sampled_from(FILE_FORMATS))
def test_file_round_trip(ads, fmt):
    """write_ads then parseAds (format detected) returns the same list of ads."""
    out = io.StringIO()
    assert write_ads(ads, out, fmt[0], new_style=fmt[1]) == len(ads)
    assert_same_ads(list(parseAds(out.getvalue())), ads)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(OLD_ADS.filter(len))
def test_chain_old_new_json_xml_old(ad):
    """old -> new -> JSON -> XML -> old gives back an equal ad."""
    text = format_ad(ad, "old")
    for fmt in ("new", "json", "xml", "old"):
        (ad_now,) = parseAds(text)
        text = format_ad(ad_now, fmt)
        if fmt == "xml":
            text = '<?xml version="1.0"?>\n<classads>\n' + text + "</classads>\n"
    (final,) = parseAds(text)
    assert ad_form(final) == ad_form(ad)


@pytest.mark.parametrize("fmt", ["old", "new", "json", "xml"])
def test_strings_that_need_escapes(fmt):
    """Quotes, backslashes, tabs and UTF-8 survive every format (no newline in old)."""
    from classad import ClassAd

    ad = ClassAd()
    ad["s"] = 'q"uo\\te\tand é and \\" end'
    ad["l"] = ["a\\b", 'c"d']
    out = io.StringIO()
    write_ads([ad], out, fmt)
    (back,) = parseAds(out.getvalue())
    assert back["s"] == ad["s"] and back["l"] == ad["l"]
