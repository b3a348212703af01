"""The old-format reader's block path against its general path, on random dumps.

A file is read a block of lines at a time, and an ad whose lines are all lines read
before or simple ``Name = literal`` lines is read at once (its lines looked up together,
its dict built in one step).  Everything else goes a line at a time through the general
path.  Reading a dump through the block path, with cold and warm caches and any block
size, must give what the general path alone gives (no caches, no simple-line path, one
line at a time): the same ads with the same names, spellings, order and values, the
same ``src.ad_start``, ``src.last_end`` and ``src.lineno`` after each ad, and the same
errors at the same line and column.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from classad.formats import old_format, sources
from classad.formats.detect import detect
from classad.limits import configure

_NAMES = ["MyType", "ClusterId", "ProcId", "Owner", "Requirements", "Rank", "Args", "a", "A", "x_1"]
_VALUES = [
    "1",
    "-12",
    "0",
    "007",
    "99999999999999999999999",
    "2.5",
    "-3.25",
    "1.",
    "1.5e3",
    '"x"',
    '""',
    '"a b"',
    '"C:\\\\dir\\"',
    '"q\\"uote"',
    "true",
    "undefined",
    "TARGET.Memory >= 1024 && MY.x",
    "{ 1, 2 }",
    "[ q = 1 ]",
    "(",
    "1 +",
    '"open',
    "a b",
]
_SPACING = [("", " = ", ""), ("", "=", ""), ("  ", "  =  ", "  "), ("", " = ", "\t")]
_OTHER_LINES = [
    "# note",
    "   # indented note",
    "// line comment",
    "/* c */ B = 3",
    "/* open",
    "close */",
    "*** banner",
    "   ",
    "bad line",
    "E = ",
    "'odd name' = 4",
]


@st.composite
def _lines(draw: st.DrawFn) -> str:
    """One line without its end: mostly ``Name = value`` drawn from small pools (so lines
    repeat across ads), sometimes with odd spacing, sometimes a comment or a broken line."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(_OTHER_LINES))
    name, value = draw(st.sampled_from(_NAMES)), draw(st.sampled_from(_VALUES))
    if draw(st.integers(0, 5)) == 0:
        lead, eq, trail = draw(st.sampled_from(_SPACING))
        return f"{lead}{name}{eq}{value}{trail}"
    return f"{name} = {value}"


@st.composite
def dumps(draw: st.DrawFn) -> str:
    """A dump: ads of random lines, separated by one to three blank lines, each line ended
    by ``\\n`` (now and then ``\\r\\n``), the last one sometimes without an end."""
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 8))):
        for line in draw(st.lists(_lines(), max_size=12)):
            parts.append(line + draw(st.sampled_from(["\n"] * 9 + ["\r\n"])))
        parts.append("\n" * draw(st.integers(1, 3)))
    text = "".join(parts)
    if text and draw(st.booleans()):
        text = text.rstrip("\n") + draw(st.sampled_from(["", "\nZ = 1", "\nZ = ("]))
    return text


def _read(source, look_ahead: bool = False) -> tuple:
    """Every ad (its items in order, with spellings and printed values) and where the reader
    says it lies, and every error (line, column, message)."""
    errors: list = []
    out = []
    with sources.open_source(source) as src:
        if look_ahead:
            detect(src)
        for ad in old_format.iter_ads(src, errors.append):
            items = [(name, str(node)) for name, node in ad.node_items()]
            out.append((items, src.ad_start, src.last_end, src.lineno))
    return out, [(e.file == src.name, e.line, e.column, e.message) for e in errors]


def _general(text: str) -> tuple:
    """What the general path alone reads: no remembered lines, no simple-line path, a line
    at a time (an iterable of text pieces hands its lines out one by one)."""
    remember, simple = old_format._remember, old_format._simple_pair
    old_format._clear_caches()
    old_format._remember = lambda *_args: None
    old_format._simple_pair = lambda _text, _large: None
    try:
        return _read([text])
    finally:
        old_format._remember, old_format._simple_pair = remember, simple
        old_format._clear_caches()


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(dumps(), st.sampled_from([1 << 16, 200, 64, 7]), st.sampled_from([None, 60]))
def test_block_path_reads_what_the_general_path_reads(tmp_path_factory, text, block, max_ad):
    """Cold caches, warm caches and a look-ahead (as format detection does) all give the
    general path's ads, positions and errors; so does a small ``max_ad`` (ads longer than
    it are refused, at the line where they pass it)."""
    path = tmp_path_factory.mktemp("dump") / "ads.txt"
    path.write_text(text, encoding="utf-8", newline="")
    saved_block, sources._BLOCK = sources._BLOCK, block
    old = configure(max_ad=max_ad) if max_ad is not None else {}
    try:
        expected = _general(text)
        cold = _read(path)
        warm = _read(path)
        ahead = _read(path, look_ahead=True)
        in_memory = _read(text)  # a str is read in blocks too
    finally:
        sources._BLOCK = saved_block
        configure(**old)
    assert cold == expected
    assert warm == expected
    assert ahead == expected
    assert in_memory == expected


def test_a_dump_of_repeated_ads_reads_the_same_by_blocks_and_by_lines(tmp_path):
    """A queue-like dump (2,000 ads sharing most lines, each with its own id and times) read
    by blocks gives, ad for ad, what the general path gives; a repeated line is one pair
    shared by the ads that hold it."""
    text = "".join(
        f'MyType = "Job"\nClusterId = {i // 7}\nProcId = {i % 7}\nGlobalJobId = "s#{i}.0#{17 * i}"\n'
        f"QDate = {1700000000 + i // 7}\nRequirements = TARGET.Memory >= {1024 * (i % 3)}\n"
        f'Owner = "u{i % 5}"\nImageSize = {i * 3.5}\n\n'
        for i in range(2000)
    )
    path = tmp_path / "jobs.ads"
    path.write_text(text, encoding="utf-8")
    expected = _general(text)
    assert _read(path) == expected
    with sources.open_source(path) as src:
        ads = list(old_format.iter_ads(src, lambda exc: None))
    assert len(ads) == 2000
    assert len({id(ad._attrs["mytype"]) for ad in ads}) == 1


_PIECES = ["A", "a_1", "_", "1x", "x y", "true", "", " ", "=", "-", "0", "7", "12", "007", ".", "5", "e3", '"']
_PIECES += ["\\", "\\n", "\t", "\x00", "\r", "é", "q", "A = 1"]
_LINE_PARTS = st.tuples(
    st.lists(st.sampled_from(_PIECES), max_size=2).map("".join),
    st.sampled_from([" = ", "=", "  = ", " =  ", " == "]),
    st.lists(st.sampled_from(_PIECES), max_size=4).map("".join),
).map("".join)


@settings(max_examples=500, deadline=None)
@given(_LINE_PARTS, st.sampled_from(["\n", "", "\r\n"]))
def test_simple_lines_are_what_the_simple_line_pattern_says(body, end):
    """The simple-line path (name and value checked apart, each once per distinct text)
    takes exactly the lines that ``_SIMPLE_LINE`` describes in one pattern, and reads each
    as the general parser reads its value."""
    from classad.parser import parse_old_value

    text = body + end
    old_format._clear_caches()
    hit = old_format._simple_pair(text, True)
    match = old_format._SIMPLE_LINE.match(text)
    assert (hit is not None) == (match is not None)
    if hit is not None:
        name, value_text = text[:-1].split(" = ", 1)
        assert hit[0] == name.lower() and hit[1][0] == name
        assert str(hit[1][1]) == str(parse_old_value(value_text))
