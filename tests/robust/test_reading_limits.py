"""Bounded reading: line and ad sizes, huge expressions and literals, attribute names,
JSON output that is always valid JSON."""

from __future__ import annotations

import io
import itertools
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import classad
from classad import limits
from classad.errors import ClassAdError, FormatError, ParseError
from classad.formats import ParserType, format_ad, parseAds, parseOne, write_ads


@pytest.fixture
def restore_limits():
    saved = limits.current()
    yield limits
    limits.configure(**saved)


def read(text, parser=ParserType.Auto, **kw):
    return list(parseAds(text, parser, **kw))


# ---- line and ad sizes -----------------------------------------------------------------------


class Zeros(io.RawIOBase):
    """An endless binary stream of NUL bytes (``/dev/zero`` anywhere) that counts what it gave."""

    def __init__(self) -> None:
        self.given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        buf[:] = b"\0" * len(buf)
        self.given += len(buf)
        return len(buf)


@pytest.mark.parametrize("parser", [ParserType.Old, ParserType.New, ParserType.JSON, ParserType.XML])
def test_endless_line_is_refused(restore_limits, parser):
    limits.configure(max_line=10_000)
    stream = Zeros()
    with pytest.raises(FormatError) as info:
        read(io.BufferedReader(stream), parser)
    assert info.value.line == 1 and "longer than 10000" in info.value.message
    assert stream.given < 100_000  # stopped soon after the limit, not at the end of memory


def test_endless_iterable_is_refused(restore_limits):
    limits.configure(max_line=10_000)
    with pytest.raises(FormatError) as info:
        read(itertools.repeat("x" * 1000), ParserType.Old)
    assert info.value.line == 1


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_is_refused(restore_limits):
    limits.configure(max_line=100_000)
    with pytest.raises(FormatError) as info:
        read(Path("/dev/zero"), ParserType.Old)
    assert info.value.file == "/dev/zero" and info.value.line == 1


def test_long_line_after_good_lines_names_its_line(restore_limits):
    limits.configure(max_line=100)
    with pytest.raises(FormatError) as info:
        read('a = 1\nb = 2\nc = "' + "x" * 200 + '"\n', ParserType.Old)
    assert info.value.line == 3


def test_big_old_ad_is_skipped_and_reading_goes_on(restore_limits):
    limits.configure(max_ad=1000)
    big = "".join(f"a{i} = {i}\n" for i in range(200))
    errors = []
    ads = read(big + "\nsmall = 1\n", ParserType.Old, on_error=errors.append)
    assert [dict(ad) for ad in ads] == [{"small": 1}]
    assert len(errors) == 1 and "longer than 1000" in errors[0].message


@pytest.mark.parametrize(
    "parser,opener,closer,fmt",
    [
        (ParserType.New, "[", "]", "a{i} = {i};"),
        (ParserType.JSON, "{", "}", '"a{i}": {i},'),
    ],
)
def test_big_bracketed_ad_is_refused(restore_limits, parser, opener, closer, fmt):
    limits.configure(max_ad=1000)
    body = "\n".join(fmt.format(i=i) for i in range(200))
    errors = []
    ads = read(
        f'{opener}\n{body}\n{closer}\n{opener} "small" {closer}\n'.replace(
            '"small"', "small = 1" if parser is ParserType.New else '"small": 1'
        ),
        parser,
        on_error=errors.append,
    )
    assert [dict(ad) for ad in ads] == [{"small": 1}]
    assert errors and errors[0].line == 1


def test_three_megabyte_expression_is_refused_quickly():
    n = 1_500_000
    with pytest.raises(FormatError) as info:
        read("a = " + "(" * n + "1" + ")" * n + "\n", ParserType.Old)
    assert "nested more than 500" in info.value.message and info.value.line == 1
    with pytest.raises(FormatError) as info:
        read("a = " + "+".join(["1"] * n) + "\n", ParserType.Old)
    assert "longer than" in info.value.message
    with pytest.raises(ParseError):
        classad.ExprTree("-" * 3_000_000 + "1")


@pytest.mark.slow
def test_long_string_literal_is_not_long_code():
    text = "x" * 2_000_000
    (ad,) = read(f'a = strcat("{text}", "y")\n', ParserType.Old)
    assert ad.eval("a") == text + "y"


# ---- literals --------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1" * 5000, "-" + "9" * 5000, "99999999999999999999"])
def test_huge_integer_literal_matches_oracle(oracle, text):
    theirs = oracle.ExprTree(text).eval()
    assert classad.ExprTree(text).eval() == theirs
    (ad,) = read(f"a = {text}\n", ParserType.Old)
    assert ad["a"] == theirs
    (ad,) = read(f'{{"a": {text}}}', ParserType.JSON)
    assert ad["a"] == theirs


def test_json_integers_out_of_range_inside_lists_and_ads_match_oracle(oracle):
    text = '{"a": [99999999999999999999, 1, 9223372036854775808], "b": {"c": -9223372036854775809}}'
    (theirs,) = oracle.parseAds(text, oracle.ParserType.JSON)
    (ours,) = read(text, ParserType.JSON)
    assert ours["a"] == list(theirs["a"]) == [0, 1, 0]
    assert ours["b"]["c"] == theirs["b"]["c"] == 0


@pytest.mark.parametrize("text", ["1" * 5000, "9223372036854775808", "-9223372036854775809", "12"])
def test_xml_integers_match_oracle(oracle, text):
    xml = f'<classads><c><a n="M"><i>{text}</i></a></c></classads>'
    (theirs,) = oracle.parseAds(xml, oracle.ParserType.XML)
    (ours,) = read(xml, ParserType.XML)
    expected = theirs["M"]
    assert ours["M"] == (classad.Value.Error if expected == oracle.Value.Error else expected)


def test_nul_in_a_string_is_refused():
    with pytest.raises(FormatError):
        read('a = "x\0y"\n', ParserType.Old)
    with pytest.raises(ParseError):
        classad.ExprTree('"x\0y"')


# ---- attribute names -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,parser,column",
    [
        ("\ufeffMemory = 1024\n", ParserType.Old, 1),
        ("Cpus = 1\n\0Memory = 1024\n", ParserType.Old, 1),
        ("Cpus = 1\n  Mem\0ory = 1024\n", ParserType.Old, 6),
        ('{"\ufeffMemory": 1}', ParserType.JSON, 1),
        ('{"\\ufeffMemory": 1}', ParserType.JSON, 1),
        ('{"a": 1, "\\uFEFFMemory": 1}', ParserType.JSON, 1),
        ('{"": 1}', ParserType.JSON, 1),
        ('{"\\u0000Memory": 1}', ParserType.JSON, 3),
        ('<classads><c><a n="\ufeffMemory"><i>1</i></a></c></classads>', ParserType.XML, 14),
    ],
)
def test_bad_names_are_refused_with_position(text, parser, column):
    with pytest.raises(FormatError) as info:
        read(text, parser)
    assert info.value.line == text.count("\n", 0, max(text.find("\ufeff"), text.find("\0"), 0)) + 1
    assert info.value.column == column


def test_bom_name_never_becomes_an_attribute(oracle):
    # classad2 makes an attribute '\ufeffMemory', so Memory is undefined; we refuse instead.
    (theirs,) = oracle.parseAds("\ufeffMemory = 1024\n", oracle.ParserType.Old)
    assert "Memory" not in theirs
    errors = []
    assert read("\ufeffMemory = 1024\n", ParserType.Old, on_error=errors.append) == []
    assert len(errors) == 1


# ---- JSON output -----------------------------------------------------------------------------


def test_json_output_escapes_nul_and_control_characters():
    ad = classad.ClassAd({"a": "x\0y\x01\x1f", "b\0c": 1})
    text = format_ad(ad, "json")
    assert "\0" not in text and json.loads(text) == {"a": "x\0y\x01\x1f", "b\0c": 1}


def test_json_output_of_invalid_utf8_is_valid_and_round_trips():
    (ad,) = read(b'a = "caf\xe9 \xff"\n', ParserType.Old)
    out = io.StringIO()
    write_ads([ad], out, "json")
    text = out.getvalue()
    text.encode("utf-8")  # no lone surrogates left: the text is valid UTF-8
    assert "\\uDCE9" in text and "\\uDCFF" in text
    (back,) = read(text, ParserType.JSON)
    assert back == ad
    assert format_ad(back, "old").encode("utf-8", "surrogateescape") == b'a = "caf\xe9 \xff"\n'


def test_lone_surrogate_in_json_input_is_refused():
    with pytest.raises(FormatError) as info:
        read('{"a": 1,\n "b": "x\\ud800y"}', ParserType.JSON)
    assert (info.value.line, info.value.column) == (2, 9)  # the backslash of the escape
    (ad,) = read('{"a": "\\ud83d\\ude00"}', ParserType.JSON)  # a real pair is one character
    assert ad["a"] == "\U0001f600"


# ---- formatTime ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1000, 1022, 1023, 2000])
def test_format_time_is_cut_like_the_oracle(oracle, n):
    expr = f'formatTime(0, "{"x" * n}")'
    assert classad.ExprTree(expr).eval() == oracle.ExprTree(expr).eval()


@pytest.mark.parametrize("junk", ["\0\0\0", "[", "{", "<c>", "a = (", '{"a": "\\ud800"}'])
def test_broken_text_is_one_documented_error_with_its_position(junk):
    """classad2's parseOne gives an empty ad for each of these; here each is a FormatError
    naming its place (docs/differences.md, R5), and no other exception type escapes."""
    with pytest.raises(ClassAdError) as caught:
        parseOne(junk)
    assert isinstance(caught.value, FormatError)
    assert str(caught.value).startswith("<string>:1:")


# ---- large records -------------------------------------------------------------------------


def test_large_record_quick_path_equals_the_parser():
    from classad.parser import _parse

    body = "; ".join(f"A{i} = {{ {i}, a{i} + 1, [ x = {i} ] }}" for i in range(400))
    for text in (f'[ {body}; a1 = 5; B = "s;]" ]', f"  [ {body}; ]\n"):
        assert len(text) > 4096
        quick = classad.ClassAd(text)
        slow = classad.ClassAd.from_nodes(_parse(text, "classad", False, None).attrs)
        assert quick == slow and list(quick) == list(slow)
    with pytest.raises(ParseError):
        classad.ClassAd(f"[ {body} ] junk")
    with pytest.raises(ParseError):
        classad.ClassAd(f"[ {body} ")


@pytest.mark.slow
def test_hundred_thousand_attributes():
    text = "[ " + "; ".join(f"Attr{i} = {i}" for i in range(100_000)) + " ]"
    ad = classad.ClassAd(text)
    assert len(ad) == 100_000 and ad["Attr99999"] == 99999
    (ad,) = read(text, ParserType.New)
    assert len(ad) == 100_000


def test_file_like_object_without_sized_readline(restore_limits):
    class Lines:
        name = "<wrapped>"

        def __init__(self, data: bytes) -> None:
            self._f = io.BytesIO(data)

        def readline(self):
            return self._f.readline()

    (ad,) = read(Lines(b"a = 1\n"), ParserType.Old)
    assert ad["a"] == 1
    limits.configure(max_line=10)
    with pytest.raises(FormatError) as info:
        read(Lines(b"a = 1\nb = 12345678901234567890\n"), ParserType.Old)
    assert (info.value.file, info.value.line) == ("<wrapped>", 2)


# ---- files read in blocks ---------------------------------------------------------------------

_LINE_PIECES = [
    "a = 1",
    "",
    "x" * 50,
    "\r",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1d",
    "\x1e",
    "\u2028",
    "\u2029",
    "\x85",
    "é",
    "y" * 200,
]


def _block_and_line_reads(tmp_path: Path, text: str) -> tuple:
    from classad.formats import sources

    path = tmp_path / "ads.txt"
    path.write_text(text, encoding="utf-8", newline="")

    def run(reader):
        with sources.open_text(path) as f:
            try:
                return list(reader(f, "f")), None
            except FormatError as exc:
                return None, (exc.line, exc.message)

    return run(sources.block_lines), run(sources._file_lines)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(st.lists(st.sampled_from(_LINE_PIECES), max_size=6), st.booleans()), max_size=40),
    st.sampled_from([1 << 16, 64, 7]),
    st.sampled_from([10_000, 120]),
)
def test_block_reading_gives_the_lines_of_line_reading(tmp_path, restore_limits, lines, block, max_line):
    """Blocks of any size give exactly the lines (and the same too-long error) as reading
    line by line; only "\\n" ends a line, whatever else str.splitlines() would break at."""
    from classad.formats import sources

    limits.configure(max_line=max_line)
    text = "".join("".join(parts) + ("\n" if newline else "") for parts, newline in lines)
    saved, sources._BLOCK = sources._BLOCK, block
    try:
        by_block, by_line = _block_and_line_reads(tmp_path, text)
    finally:
        sources._BLOCK = saved
    assert by_block == by_line
