"""The old ("long") format: ``Name = value`` lines, ads separated by blank lines (docs/language.md, old format)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from classad import ClassAd, FormatError
from classad.formats import ParserType, format_ad, parseAds
from classad.formats.old_format import old_to_new, parse_line
from classad.parser import _parse, fast_literal


def read(text: str, **kw):
    return list(parseAds(text, ParserType.Old, **kw))


def test_ads_are_separated_by_blank_lines():
    """A blank line ends an ad; several blank lines make no empty ads."""
    ads = read("a = 1\nb = 2\n\n\n\nc = 3\n")
    assert [dict(ad) for ad in ads] == [{"a": 1, "b": 2}, {"c": 3}]


def test_whitespace_only_line_ends_an_ad():
    """Spaces, tabs or a carriage return alone on a line also end an ad."""
    assert len(read("a = 1\n \t \nb = 2\n")) == 2
    assert len(read("a = 1\r\nb = 2\r\n\r\nc = 3\r\n")) == 2


def test_comment_lines_are_skipped_without_ending_the_ad():
    """A line whose first non-blank character is # is a comment."""
    ads = read("# header\na = 1\n   # indented comment\nb = 2\n")
    assert [dict(ad) for ad in ads] == [{"a": 1, "b": 2}]


def test_history_banner_ends_an_ad():
    """A ``***`` line, as condor_history writes between ads, is a delimiter."""
    ads = read("a = 1\n*** ArrivedAt = 123 Offset = 0\nb = 2\n")
    assert [dict(ad) for ad in ads] == [{"a": 1}, {"b": 2}]


def test_name_is_text_before_first_equals_trimmed():
    """Leading and trailing blanks around the name and value are dropped."""
    (ad,) = read('  Owner   =   "alice"  \n')
    assert list(ad) == ["Owner"] and ad["Owner"] == "alice"


def test_value_may_contain_equals_signs():
    """Only the first ``=`` splits the line."""
    (ad,) = read("Requirements = TARGET.x == 1 && y =?= undefined\n")
    assert repr(ad.lookup("Requirements")) == "TARGET.x == 1 && y is undefined"


def test_repeated_name_keeps_first_spelling_last_value():
    """As in HTCondor (oracle: ``a=1`` then ``A=2`` gives ``[ a = 2 ]``)."""
    (ad,) = read("a = 1\nA = 2\n")
    assert list(ad) == ["a"] and ad["a"] == 2


def test_values_are_new_syntax_expressions():
    """Values are expressions, lists and nested ads written in new syntax."""
    (ad,) = read('l = { 1,2.5,"s",[ q = 1 ] }\nn = [ x = 1; y = {  } ]\nr = 1E+20\n')
    assert ad["r"] == 1e20
    assert ad.eval("l")[3]["q"] == 1
    assert ad["n"]["x"] == 1


@pytest.mark.parametrize(
    "line, value",
    [
        ('a = "C:\\path\\"', "C:\\path\\"),  # \" ending the line closes a string ending in \
        ('a = "x\\\\"', "x\\\\"),  # two literal backslashes, then \" at the end
        ('a = "x\\ty\\n"', "x\\ty\\n"),  # no escapes but \"
        ('a = "x\\"y"', 'x"y'),  # \" inside the string is a quote
        ('a = "x\\101"', "x\\101"),  # octal escapes are not decoded
        ('a = "ab\\"cd\\ef"', 'ab"cd\\ef'),  # the spec's printOld example
    ],
)
def test_old_string_lexing(line, value):
    """Backslash is literal except before ``"`` (docs/language.md, strings; oracle-checked cases)."""
    (ad,) = read(line + "\n")
    assert ad["a"] == value


def test_old_strings_inside_expressions():
    """Old string rules hold inside lists and calls too."""
    (ad,) = read('a = { "a\\b", strcat("c\\d", x) }\n')
    assert ad["a"][0] == "a\\b"
    assert repr(ad.lookup("a")) == '{ "a\\\\b",strcat("c\\\\d",x) }'


def test_error_column_maps_through_rewritten_strings():
    """An error after a rewritten string points at the original column."""
    with pytest.raises(FormatError) as info:
        read('a = strcat("x\\y", ) \n')
    assert (info.value.line, info.value.column) == (1, 19)


@pytest.mark.parametrize(
    "text, line, columns, words",
    [
        ("a = 1\nno equals sign\n", 2, (1, 1), "Name = value"),
        ("a = 1\n = 3\n", 2, (2, 2), "name"),
        ("a = \n", 1, (3, 5), "missing value"),
        ("a = 1\nb = 1 +\n", 2, (7, 8), "end of input"),  # at the '+' or just after it
        ('a = 1\nb = "open\n', 2, (5, 5), "unterminated"),
        ("a = 010\n", 1, (5, 5), "number"),
    ],
)
def test_errors_name_line_and_column(text, line, columns, words):
    """Every problem is a FormatError at the line and column of the bad text."""
    with pytest.raises(FormatError) as info:
        read(text)
    err = info.value
    assert (err.file, err.line) == ("<string>", line)
    assert columns[0] <= err.column <= columns[1]
    assert words in err.message
    assert err.kind == "format"


def test_skip_drops_only_the_broken_ad():
    """With on_error="skip" the broken ad is dropped and reading resumes after the blank line."""
    ads = read("a = 1\n\nb = 1 +\nc = 2\n\nd = 4\n", on_error="skip")
    assert [dict(ad) for ad in ads] == [{"a": 1}, {"d": 4}]


def test_callback_sees_each_error():
    """A callable on_error receives every error, in order, and reading goes on."""
    seen = []
    ads = read("x = (\n\ny = 2\n\nz = )\n", on_error=seen.append)
    assert [dict(ad) for ad in ads] == [{"y": 2}]
    assert [e.line for e in seen] == [1, 5]


def test_trailing_text_after_value_is_an_error():
    """HTCondor ignores ``a = 1 junk``; we report it (a deliberate difference)."""
    with pytest.raises(FormatError) as info:
        read("a = 1 junk\n")
    assert info.value.column == 7


def test_quoted_names_lose_their_quotes():
    """printOld() quotes odd names; reading them back removes the quotes (HTCondor keeps them)."""
    ad = ClassAd()
    ad["odd name"] = 1
    ad["it's"] = 2
    text = format_ad(ad, "old")
    assert text == "'it\\'s' = 2\n'odd name' = 1\n"  # classad2's printOld() for this ad
    (back,) = read(text)
    assert dict(back) == {"odd name": 1, "it's": 2}


def test_parse_line_returns_name_and_node():
    """The line parser used by the reader is public for tools that read line by line."""
    name, node = parse_line("Cpus = 4", "f", 1)
    assert name == "Cpus" and node.value == 4


def test_old_to_new_rewrites_only_strings():
    """The string rewrite leaves the rest of the text untouched."""
    text, _ = old_to_new('x + "a\\b" // "c\\d"')
    assert text == 'x + "a\\\\b" // "c\\d"'


LITERAL_TEXTS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: "%.16G" % x),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters='\x00"\\\n\r'), max_size=10).map(
        lambda s: '"' + s + '"'
    ),
    st.sampled_from(["true", "FALSE", "Undefined", "error", "-0", "1.5e3", "01", "1.", "-x"]),
)


@given(LITERAL_TEXTS)
def test_fast_literal_agrees_with_parser(text):
    """The regex shortcut builds exactly the node the Lark parser would, or defers to it."""
    node = fast_literal(text)
    if node is None:
        return
    parsed = _parse(text, "expr", True, None)  # the full parser, bypassing the shortcut
    assert type(parsed.value) is type(node.value)
    assert parsed.value == node.value or (parsed.value != parsed.value and node.value != node.value)


def test_writer_prints_tool_order_and_blank_lines():
    """condor_q -l style: names sorted case-insensitively, a blank line after each ad."""
    import io

    from classad.formats import write_ads

    buf = io.StringIO()
    write_ads([ClassAd('[b = 1; A = "x"; c = a + 1]'), ClassAd("[z = 2]")], buf, "old")
    assert buf.getvalue() == 'A = "x"\nb = 1\nc = a + 1\n\nz = 2\n\n'


# ---- lines read before are read the same again -------------------------------------------------

_OLD_LINES = [
    "A = 1",
    "a = 2",
    'B = "x"',
    "C = A + 1",
    "",
    "   ",
    "# note",
    "/* c */ D = 3",
    "/* open",
    "close */",
    "// line",
    "E = ",
    "bad line",
    "F = [ q = 1 ]",
    "*** banner",
    "G = 1 +",
    "A = 1 ",
    "  H = 5",
    'I = "a\\"b"',
    '/* open\nB = "x"\nclose */',
    'B = "x"\nbad line\nJ = 1',
    "K = -12",
    "K = 0.25",
    "K = -3.5",
    "K = 007",
    "K = 1.",
    'L = ""',
    'L = "a b"',
    "true = 1",
    "M = 99999999999999999999999",
    "M = 1.5e3",
    'N = "x" ',
    "N  = 2",
    'O = "\\n"',
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_OLD_LINES), max_size=25), st.sampled_from(["\n", "\r\n"]))
def test_remembered_lines_read_as_when_first_seen(lines, end):
    """The reader's line cache and its simple-line path: reading with them (cold, then warm)
    gives the ads and errors of the general path alone (lines inside comments, after errors
    or in broken ads included)."""
    from classad.formats import old_format

    text = end.join(lines) + end

    def read() -> tuple:
        errors: list = []
        ads = [
            sorted((k, str(v)) for k, v in ad.items()) for ad in parseAds(text, ParserType.Old, on_error=errors.append)
        ]
        return ads, [(e.line, e.column, e.message) for e in errors]

    remember, simple = old_format._remember, old_format._simple_pair
    old_format._clear_caches()
    old_format._remember = lambda *_args: None
    old_format._simple_pair = lambda _text, _large: None  # and the simple-line path off: the general one alone
    try:
        uncached = read()
    finally:
        old_format._remember, old_format._simple_pair = remember, simple
    assert read() == uncached
    assert read() == uncached


def test_lines_that_never_repeat_are_not_all_kept():
    """The line cache keeps a bounded number of lines per attribute: a value per ad
    (QDate, GlobalJobId) is not held for the whole file, while a line every ad shares
    stays one shared tree, and neighbouring ads still share their repeated lines."""
    from classad.formats import old_format

    old_format._clear_caches()
    limit = old_format._LINES_PER_ATTRIBUTE
    n = limit * 4
    text = "".join(
        f'QDate = {1700000000 + i}\nIwd = "/run{i // 5}"\nRequirements = TARGET.Memory > 64\n\n' for i in range(n)
    )
    ads = read(text)
    assert [ad["QDate"] for ad in ads] == [1700000000 + i for i in range(n)]
    assert [ad["Iwd"] for ad in ads] == [f"/run{i // 5}" for i in range(n)]
    kept = [key for key, _pair in old_format._RAW_LINES.values()]
    assert kept.count("qdate") <= limit and kept.count("iwd") <= limit
    reqs = {id(ad.lookup_node("requirements")) for ad in ads}
    assert len(reqs) == 1
    start = (n // 5 - 1) * 5  # five jobs of one cluster, past the per-attribute limit
    assert len({id(ad.lookup_node("iwd")) for ad in ads[start : start + 5]}) == 1


def test_a_huge_ad_is_read_with_the_collector_paused_and_handed_out_with_it_on() -> None:
    """Reading one very large ad pauses Python's cyclic collector (so the time stays linear);
    the caller never runs with it off, whether the read ends, stops half way or fails."""
    import gc

    huge = "".join(f"Attr{i} = {i}\n" for i in range(30_000))  # over 256 KiB
    assert gc.isenabled()
    ads = parseAds(huge + "\nNext = 1\n", ParserType.Old)
    first = next(ads)
    assert gc.isenabled() and len(first) == 30_000 and first["Attr29999"] == 29_999
    ads.close()
    assert gc.isenabled()
    with pytest.raises(FormatError):
        list(parseAds(huge + "Broken = (\n", ParserType.Old))
    assert gc.isenabled()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(_OLD_LINES), max_size=25),
    st.sampled_from(["\n", "\r\n"]),
    st.sampled_from([1 << 16, 64, 7]),
)
def test_files_read_in_blocks_number_lines_as_text_does(tmp_path_factory, lines, end, block):
    """A file is read a block of lines at a time, its lines counted by the reader: every ad,
    error position, first line of an ad and end of an ad is what reading the same text line
    by line gives, whatever the block size (ads and comments split across blocks)."""
    from classad.formats import old_format, sources
    from classad.formats.detect import detect

    text = end.join(lines) + end
    path = tmp_path_factory.mktemp("blocks") / "ads.txt"
    path.write_text(text, encoding="utf-8", newline="")

    def read(source, look_ahead: bool = False) -> tuple:
        errors: list = []
        out = []
        with sources.open_source(source) as src:
            if look_ahead:
                detect(src)  # reads lines ahead and pushes them back, as parseAds does
            for ad in old_format.iter_ads(src, errors.append):
                out.append((sorted((k, str(v)) for k, v in ad.items()), src.ad_start, src.last_end, src.lineno))
        return out, [(e.line, e.column, e.message) for e in errors]

    saved, sources._BLOCK = sources._BLOCK, block
    try:
        by_blocks, after_look_ahead = read(path), read(path, look_ahead=True)
    finally:
        sources._BLOCK = saved
    by_lines = read(text)
    assert by_blocks == by_lines
    assert after_look_ahead == by_lines
