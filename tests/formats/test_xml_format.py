"""HTCondor's XML: the writer's exact layout and the tag reader (docs/language.md, XML)."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given, settings, strategies as st

from classad import ClassAd, FormatError, Value
from classad.formats import ParserType, format_ad, parseAds, write_ads
from classad.formats.xml_format import FOOTER, HEADER

SAMPLE = (
    '[a = 1; b = "x\\"y<&>\\\\"; r = 1.5; z = -0.0; u = undefined; e = error; l = {1, "s", [q = 1]}; '
    "n = [x = 1; y = {}]; ex = a + 1 < 3 && b; t = true; f = false; "
    'at = absTime("2020-01-02T03:04:05Z"); rt = relTime("1+02:03:04"); tab = "a\\tb\\303\\251"; '
    "'we\"ird<' = 1]"
)

# HTCondor's sPrintAdAsXML() for SAMPLE, from the htcondor 25.14.1 wheel's libcondor_utils.
SAMPLE_XML = (
    '<c>\n    <a n="a"><i>1</i></a>\n    <a n="b"><s>x"y&lt;&amp;&gt;\\\\</s></a>\n    <a n="e"><er/></a>\n'
    '    <a n="f"><b v="f"/></a>\n    <a n="l"><l><i>1</i><s>s</s><c>\n        <a n="q"><i>1</i></a>\n'
    '    </c></l></a>\n    <a n="n"><c>\n        <a n="x"><i>1</i></a>\n        <a n="y"><l></l></a>\n'
    '    </c></a>\n    <a n="r"><r>1.500000000000000E+00</r></a>\n    <a n="t"><b v="t"/></a>\n'
    '    <a n="u"><un/></a>\n    <a n="z"><r>0.0</r></a>\n    <a n="at"><at>2020-01-02T03:04:05-00:00</at></a>\n'
    '    <a n="ex"><e>a + 1 &lt; 3 &amp;&amp; b</e></a>\n    <a n="rt"><r>9.378400000000000E+04</r></a>\n'
    '    <a n="tab"><s>a\\tb\\303\\251</s></a>\n    <a n="we\\"ird&lt;"><i>1</i></a>\n</c>\n'
)


def read(text: str, **kw):
    return list(parseAds(text, ParserType.XML, **kw))


def test_writer_matches_htcondor():
    """Tags, escapes, real formats and indentation as HTCondor's XML printer writes them."""
    assert format_ad(ClassAd(SAMPLE), "xml") == SAMPLE_XML


def test_reader_reads_the_writer():
    """Everything the printer writes reads back (a relative time comes back as its seconds)."""
    (ad,) = read(HEADER + SAMPLE_XML + FOOTER)
    assert ad["b"] == 'x"y<&>\\' and ad['we"ird<'] == 1 and ad["tab"] == "a\tbé"
    assert ad["rt"] == 93784.0 and ad["u"] is Value.Undefined and ad["e"] is Value.Error
    assert repr(ad.lookup("ex")) == "a + 1 < 3 && b"
    assert ad["l"][2]["q"] == 1 and ad["n"]["y"] == []


def test_file_writer():
    """condor_q -xml: the header, each ad, the footer; names sorted case-insensitively."""
    buf = io.StringIO()
    write_ads([ClassAd("[b = 1; A = 2]"), ClassAd("[c = 3]")], buf, "xml")
    assert buf.getvalue() == (
        HEADER + '<c>\n    <a n="A"><i>2</i></a>\n    <a n="b"><i>1</i></a>\n</c>\n'
        '<c>\n    <a n="c"><i>3</i></a>\n</c>\n' + FOOTER
    )


def test_spec_example():
    """The example of docs/language.md (XML) reads as written."""
    (ad,) = read(
        '<?xml version="1.0"?>\n<!DOCTYPE classads SYSTEM "classads.dtd">\n<classads>\n<c>\n'
        '    <a n="ClusterId"><i>1</i></a>\n    <a n="Owner"><s>Bob &amp; co</s></a>\n</c>\n</classads>\n'
    )
    assert dict(ad) == {"ClusterId": 1, "Owner": "Bob & co"}


@pytest.mark.parametrize(
    "element, value",
    [
        ("<i>12abc</i>", 12),  # strtoll reads the number prefix
        ("<i> 7 </i>", 7),
        ("<i>x</i>", Value.Error),  # no number at all: Error
        ("<r>NaN</r>", "nan"),
        ("<r>-INF</r>", float("-inf")),
        ("<r>2.5E+00</r>", 2.5),
        ("<s>  two  spaces  </s>", "  two  spaces  "),
        ("<s></s>", ""),
        ("<s/>", ""),
        ("<s>\\101\\n</s>", "A\n"),  # ClassAd escapes are decoded
        ('<b v="T"/>', True),
        ('<b v="t"></b>', True),
        ('<b v="x"/>', False),
        ("<un></un>", Value.Undefined),
        ("<l/>", []),
        ("<l><i>1</i> <s>a</s></l>", [1, "a"]),
    ],
)
def test_values(element, value):
    """Each value element, read as HTCondor's XML reader reads it."""
    (ad,) = read(f'<c><a n="v">{element}</a></c>')
    got = ad["v"]
    if value == "nan":
        assert got != got
    else:
        assert got == value and type(got) is type(value)


def test_time_elements():
    """``<at>`` and ``<rt>`` hold time literals."""
    (ad,) = read('<c><a n="t"><at>2020-01-02T03:04:05-00:00</at></a><a n="d"><rt>1+02:03:04</rt></a></c>')
    assert format_ad(ad, "new") == '[ d = relTime("1+02:03:04"); t = absTime("2020-01-02T03:04:05-00:00") ]'


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        ('<c>\n  <a n="x"><e>1 +</e></a>\n</c>', 2, 12, "<e>"),
        ('<c>\n  <a n="x"><i>1</i></a>\n  <q/>\n</c>', 3, 3, "<a>"),
        ('<c>\n  <a n="x"></a>\n</c>', 2, 12, "no value"),
        ("<c>\n  <a><i>1</i></a>\n</c>", 2, 3, "name"),
        ('<c>\n  <a n="x"><s>\\0</s></a>\n</c>', 2, 12, "NUL"),
        ("junk", 1, 1, "outside"),
    ],
)
def test_errors_name_line_and_column(text, line, column, words):
    """Malformed XML is a FormatError at the element that is wrong."""
    with pytest.raises(FormatError) as info:
        read(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert words in info.value.message


def test_broken_ad_does_not_swallow_the_next():
    """Skipping a bad ad still yields the next one, even when its </c> is missing."""
    errors = []
    ads = read(
        '<c><a n="a"><e>(</e></a></c>\n<c><a n="b"><i>1</i></a>\n<c><a n="c"><i>2</i></a></c>', on_error=errors.append
    )
    assert [list(ad) for ad in ads] == [["c"]]
    assert [e.line for e in errors] == [1, 2]


def test_unclosed_ad_at_end():
    """An ad still open at the end of the input is reported where it starts."""
    with pytest.raises(FormatError) as info:
        read('<classads>\n<c>\n<a n="a"><i>1</i></a>\n')
    assert (info.value.line, info.value.column) == (2, 1)


def test_comments_are_skipped():
    """XML comments may appear between elements."""
    (ad,) = read('<!-- a > b --><c><!-- x --><a n="a"><i>1</i></a></c>')
    assert ad["a"] == 1


# ---- the one-token path for simple attributes ---------------------------------------------------

_NAMES = ["a", "Owner", "we\\\\ird", "x\\u0000y", "", "\ufeffMem", 'q\\"r', "A"]
_TEXTS = [
    "1",
    " 42 ",
    "-9223372036854775809",
    "abc",
    "1.5e3",
    "nan",
    "x &lt; y &amp;&amp; z",
    "a\\tb",
    "\\000",
    "",
    "1 +",
    "TARGET.Cpus &gt;= 1",
    "&bogus;",
]
_PIECES = st.one_of(
    st.builds(
        lambda n, t, tag: f'<a n="{n}"><{tag}>{t}</{tag}></a>',
        st.sampled_from(_NAMES),
        st.sampled_from(_TEXTS),
        st.sampled_from(["i", "r", "s", "e"]),
    ),
    st.sampled_from(
        [
            "<c>",
            "</c>",
            "\n",
            "  ",
            "<l>",
            "</l>",
            '<a n="v">',
            "</a>",
            "<i>2</i>",
            "<un/>",
            "text",
            "<!-- c -->",
            '<a n="w"><i>3</i></a>\n<a n="w"><s>x</s></a>',
        ]
    ),
)


def _read_both(text: str) -> tuple:
    from classad.formats import xml_format

    def run() -> tuple:
        errors: list = []
        ads = read(text, on_error=errors.append)
        return [sorted((k, repr(ad.lookup(k))) for k in ad) for ad in ads], [
            (e.line, e.column, e.message) for e in errors
        ]

    fast = run()
    saved = xml_format._SIMPLE_ATTR
    xml_format._SIMPLE_ATTR = re.compile(r"(?!)")  # never matches: every tag on its own
    try:
        slow = run()
    finally:
        xml_format._SIMPLE_ATTR = saved
    return fast, slow


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=14))
def test_simple_attributes_read_as_their_tags_do(pieces):
    """An attribute read in one step gives the ad, and every error with its line and
    column, that reading its five tags one by one gives -- in an ad or anywhere else."""
    fast, slow = _read_both("<classads>" + "".join(pieces) + "</classads>\n")
    assert fast == slow
