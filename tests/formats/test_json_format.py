"""JSON: ``printJson()`` byte for byte, and the readers of ``condor_q -json`` output (docs/language.md, JSON)."""

from __future__ import annotations

import io

import pytest

from classad import ClassAd, FormatError, Value
from classad.formats import ParserType, format_ad, parseAds, write_ads

SAMPLE = (
    '[a = 1; b = "x\\"y"; r = 1.5; r2 = 100.0; r3 = 1e20; u = undefined; e = error; '
    'l = {1, 2.5, "s", [q = 1]}; n = [x = 1; y = {}]; ex = a + 1; t = true; f = false; '
    'nan = real("NaN"); at = absTime("2020-01-02T03:04:05Z"); rt = relTime("1+02:03:04"); '
    'tab = "a\\tb\\303\\251\\001"; isn = a isnt b; ea = []]'
)

# classad2.ClassAd(SAMPLE).printJson() from the htcondor 25.14.1 wheel.
SAMPLE_JSON = (
    '{\n  "a": 1,\n  "b": "x\\"y",\n  "e": "\\/Expr(error)\\/",\n  "f": false,\n  "l": [\n    1,\n'
    '    2.5,\n    "s",\n    {\n      "q": 1\n    }\n  ],\n  "n": {\n    "x": 1,\n    "y": [\n    ]\n'
    '  },\n  "r": 1.5,\n  "t": true,\n  "u": null,\n'
    '  "at": "\\/Expr(absTime(\\"2020-01-02T03:04:05-00:00\\"))\\/",\n  "ea": {\n  },\n'
    '  "ex": "\\/Expr(a + 1)\\/",\n  "r2": 100.0,\n  "r3": 1E+20,\n  "rt": 93784.0,\n'
    '  "isn": "\\/Expr(a isnt b)\\/",\n  "nan": "\\/Expr(real(\\"NaN\\"))\\/",\n'
    '  "tab": "a\\tb\u00e9\\u0001"\n}'
)


def read(text: str, **kw):
    return list(parseAds(text, ParserType.JSON, **kw))


def test_print_json_matches_classad2():
    """Order, indentation, reals, escapes and quoted expressions as printJson() writes them."""
    assert ClassAd(SAMPLE).printJson() == SAMPLE_JSON
    assert format_ad(ClassAd(SAMPLE), "json") == SAMPLE_JSON


def test_empty_ad_and_special_reals():
    """``{`` newline ``}`` for an empty ad; -0.0 keeps its sign; infinities become expressions."""
    assert ClassAd().printJson() == "{\n}"
    ad = ClassAd()
    ad["m"] = -0.0
    ad["z"] = 0.0
    ad["i"] = float("-inf")
    assert ad.printJson() == '{\n  "i": "\\/Expr(real(\\"-INF\\"))\\/",\n  "m": -0.0,\n  "z": 0.0\n}'


def test_control_characters_use_uppercase_hex():
    """Characters below 0x20 without a short escape print as ``\\u00XX`` (uppercase)."""
    ad = ClassAd('[s = "\\037\\177"]')
    assert ad.printJson() == '{\n  "s": "\\u001F\x7f"\n}'


@pytest.mark.parametrize(
    "text",
    [
        '[{"a": 1}, {"b": 2}]',
        '[\n{"a": 1}\n,\n{"b": 2}\n]\n',
        '{"a": 1}\n{"b": 2}\n',
        '{"a": 1}{"b": 2}',
    ],
)
def test_stream_shapes(text):
    """A list (condor_q -json), one object per line, or objects back to back."""
    assert [list(ad) for ad in read(text)] == [["a"], ["b"]]


def test_values():
    """null is Undefined; nested objects are ads; arrays are lists; Expr strings are parsed."""
    (ad,) = read(
        '{"u": null, "n": {"x": [1, 2.5, true, "s"]}, "e": "\\/Expr(x + 1)\\/", '
        '"plain": "/Expr(x)/", "half": "\\/Expr(x)/"}'
    )
    assert ad["u"] is Value.Undefined
    assert ad["n"]["x"] == [1, 2.5, True, "s"]
    assert repr(ad.lookup("e")) == "x + 1"
    assert ad["plain"] == "/Expr(x)/" and ad["half"] == "/Expr(x)/"


def test_duplicate_keys_keep_first_spelling_last_value():
    """As HTCondor: ``{"a": .., "A": 3}`` reads as ``[ a = 3 ]``."""
    (ad,) = read('{"a": [1], "A": 3}')
    assert list(ad) == ["a"] and ad["a"] == 3


def test_htcondor_leniencies():
    """Trailing commas and TRUE/False are accepted, as HTCondor's JSON reader does."""
    (ad,) = read('{"a": TRUE, "b": False, "c": [1, 2,],}')
    assert ad["a"] is True and ad["b"] is False and ad["c"] == [1, 2]


def test_integer_overflow_reads_as_zero():
    """Like the C++ lexer (oracle: ``99999999999999999999`` gives 0)."""
    (ad,) = read('{"a": 99999999999999999999, "b": 9223372036854775807}')
    assert ad["a"] == 0 and ad["b"] == 9223372036854775807


def test_unicode_escapes_decode_correctly():
    """``\\u00e9`` is é (HTCondor 25 decodes it to garbage; a deliberate difference)."""
    (ad,) = read('{"a": "\\u00e9", "b": "\\ud83d\\ude00"}')
    assert ad["a"] == "é" and ad["b"] == "\U0001f600"


@pytest.mark.parametrize(
    "text, line, columns",
    [
        ('{"a": 01}', 1, (8, 8)),
        ('{"a": NaN}', 1, (1, 7)),
        ('\n  {"a": 1,\n   "b": }', 3, (9, 9)),
        ('{"a": "\\/Expr(1 +)\\/"}', 1, (17, 18)),  # at the '+' inside the expression, or after it
    ],
)
def test_errors_name_line_and_column(text, line, columns):
    """Bad JSON and bad Expr strings are FormatErrors placed in the file."""
    with pytest.raises(FormatError) as info:
        read(text)
    assert info.value.line == line
    assert columns[0] <= info.value.column <= columns[1]


def test_string_may_not_span_lines():
    """A raw newline in a string (invalid JSON) is reported and the next object read."""
    errors = []
    ads = read('{"a": "open\n{"b": 2}\n', on_error=errors.append)
    assert [list(ad) for ad in ads] == [["b"]]
    assert [(e.line, e.column) for e in errors] == [(1, 7)]


def test_broken_object_does_not_swallow_the_next():
    """A missing brace is reported at the object that lacks it."""
    errors = []
    ads = read('[\n{"a": 1,\n{"b": 2}\n]\n', on_error=errors.append)
    assert [list(ad) for ad in ads] == [["b"]]
    assert [(e.line, e.column) for e in errors] == [(2, 1)]


def test_list_writer_and_json_lines():
    """condor_q -json wraps ads in a list; jsonl writes one compact object per line."""
    ads = [ClassAd("[b = 2; A = {1, [x = 1]}]"), ClassAd("[c = 3]")]
    buf = io.StringIO()
    write_ads(ads, buf, "json")
    assert buf.getvalue() == (
        '[\n{\n  "A": [\n    1,\n    {\n      "x": 1\n    }\n  ],\n  "b": 2\n}\n,\n{\n  "c": 3\n}\n]\n'
    )
    buf = io.StringIO()
    write_ads(ads, buf, "jsonl")
    assert buf.getvalue() == '{"A": [1,{"x": 1}],"b": 2}\n{"c": 3}\n'
    assert [sorted(ad) for ad in read(buf.getvalue())] == [["A", "b"], ["c"]]


def test_no_ads_writes_nothing():
    """Like the tools, an empty result prints no list brackets."""
    buf = io.StringIO()
    assert write_ads([], buf, "json") == 0 and buf.getvalue() == ""
