"""The old-format reader's compacted path against its general path, on queue-like dumps.

With ``compacted`` the reader hands out ads compacted, most of them read straight into
that storage: an ad as long as a model ad read before is compared with it, and only its
differing lines are read (``classad/formats/old_compact.py``), by one regular expression
per model once the model has seen a few ads.  Whatever the dump, the ads must be those
of the general path alone (no caches, no simple-line path, a line at a time): the same
names, spellings, order and values (type and printed form), the same ``src.ad_start``,
``src.last_end`` and ``src.lineno`` after each ad, and the same errors at the same line
and column.  Dumps here are made of a few attribute lists whose values mostly repeat, so
that models and their regular expressions are made and used, and of lines that must not
be read by them: other spellings and spacing, comments, repeated names, broken values.
"""

from __future__ import annotations

import gc

import pytest
from hypothesis import given, settings, strategies as st

from classad import ast
from classad.bulk import collector_paused, heap_settled
from classad.formats import old_compact, old_format, sources
from classad.layout import SharedAttrs, own_values

_LISTS = [
    ["MyType", "ClusterId", "ProcId", "Owner", "Requirements", "ImageSize", "Done"],
    ["MyType", "ClusterId", "ProcId", "Cmd", "Rank", "Load"],
    ["MyType", "Name", "Cpus", "Memory", "Start", "Load"],
]
_VALUES = [
    "0", "1", "17", "-3", "-0", "007", "123456789012345678", "99999999999999999999",
    "2.5", "-0.0", "0.0", "1.", "1.5e3", "1e400",
    '"Job"', '""', '"run_1.sh"', '"a b"', '"q\\"uote"', '"C:\\\\dir\\"', '"x\\y"',
    "true", "FALSE", "undefined", "error", "TARGET.Memory >= 1024 && MY.x", "{ 1, 2 }", "[ q = 1 ]",
    "(", "1 +", '"open', "a b",
]  # fmt: skip
_ODD_LINES = [
    "# note",
    "// line comment",
    "/* c */ B = 3",
    "/* open",
    "close */",
    "   ",
    "*** banner",
    "bad line",
    "E = ",
]


@st.composite
def _ad(draw: st.DrawFn, usual: list[list[str]]) -> list[str]:
    """One ad's lines (ends included): an attribute list with its usual values, a few
    values drawn afresh, and now and then a line written otherwise or an odd line."""
    k = draw(st.integers(0, len(_LISTS) - 1))
    lines = []
    for name, value in zip(_LISTS[k], usual[k]):
        if draw(st.integers(0, 3)) == 0:
            value = draw(st.sampled_from(_VALUES))
        text = f"{name} = {value}"
        odd = draw(st.integers(0, 40))
        if odd == 0:
            text = f"{name}={value}"
        elif odd == 1:
            text = f"{name.lower()} = {value}"
        elif odd == 2:
            text = f"{text} "
        elif odd == 3:
            lines.append(draw(st.sampled_from(_ODD_LINES)) + "\n")
        elif odd == 4:
            lines.append(f"{name} = 5\n")  # the name given twice
        lines.append(text + ("\r\n" if odd == 5 else "\n"))
    return lines


@st.composite
def dumps(draw: st.DrawFn) -> str:
    """Up to 60 ads of the attribute lists, each list with usual values of its own."""
    usual = [[draw(st.sampled_from(_VALUES[:21])) for _ in names] for names in _LISTS]
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 60))):
        parts.extend(draw(_ad(usual)))
        parts.append("\n" * draw(st.integers(1, 2)))
    text = "".join(parts)
    if text and draw(st.booleans()):
        text = text.rstrip("\n")
    return text


def _facts(node: ast.Node) -> tuple:
    value = node.value if type(node) is ast.Literal else None  # type: ignore[attr-defined]
    return type(node).__name__, type(value).__name__, str(node)


def _read(source, compacted: bool) -> tuple:
    """Every ad (names, spellings, order, values) with where the reader says it lies, and
    every error (line, column, message); a compacted ad never keeps its template's node."""
    errors: list = []
    out = []
    with sources.open_source(source) as src:
        for ad in old_format.iter_ads(src, errors.append, compacted=compacted):
            items = [(key, name, _facts(node)) for key, (name, node) in ad._attrs.items()]
            if type(ad._attrs) is SharedAttrs:  # as compact() stores it: no template node kept
                template = ad._attrs.layout.template
                assert all(v is not template[p] for p, v in own_values(ad._attrs).items())
            out.append((items, src.ad_start, src.last_end, src.lineno))
    return out, [(e.line, e.column, e.message) for e in errors]


def _general(text: str) -> tuple:
    """What the general path alone reads: no remembered lines, no simple-line path, a line
    at a time (an iterable of text pieces hands its lines out one by one)."""
    remember, simple = old_format._remember, old_format._simple_pair
    old_format.forget_lines()
    old_format._remember = lambda *_args: None
    old_format._simple_pair = lambda _text, _large: None
    try:
        return _read([text], compacted=False)
    finally:
        old_format._remember, old_format._simple_pair = remember, simple
        old_format.forget_lines()


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(dumps(), st.sampled_from([1 << 16, 300]), st.sampled_from([1, 2, 8]), st.sampled_from([1, 12, 500]))
def test_compacted_reading_reads_what_the_general_path_reads(tmp_path_factory, text, block, per_shape, learning):
    """Cold caches and warm ones (models and their expressions made by a first read), any
    block size, a shape made after every model read or every few, and shapes that settle
    where to share values after one ad, a dozen or more than a dump holds: the general
    path's ads, positions and errors."""
    path = tmp_path_factory.mktemp("dump") / "ads.txt"
    path.write_text(text, encoding="utf-8", newline="")
    saved = sources._BLOCK, old_compact._LINE_READS_PER_SHAPE, old_compact._LEARNING
    sources._BLOCK, old_compact._LINE_READS_PER_SHAPE, old_compact._LEARNING = block, per_shape, learning
    try:
        expected = _general(text)
        cold = _read(path, compacted=True)
        warm = _read(path, compacted=True)
        in_memory = _read(text, compacted=True)
    finally:
        sources._BLOCK, old_compact._LINE_READS_PER_SHAPE, old_compact._LEARNING = saved
        old_format.forget_lines()
    assert cold == expected
    assert warm == expected
    assert in_memory == expected


def _queue(n: int) -> str:
    """A queue-like dump: ids, times and sizes of each job's own, the rest shared."""
    return "".join(
        f'MyType = "Job"\nClusterId = {i // 7}\nProcId = {i % 7}\nGlobalJobId = "s#{i}.0#{17 * i}"\n'
        f"QDate = {1700000000 + i // 7}\nRequirements = TARGET.Memory >= {1024 * (i % 3)}\n"
        f'Owner = "u{i % 5}"\nImageSize = {i * 3.5}\nWantIO = {"true" if i % 4 else "false"}\n\n'
        for i in range(n)
    )


def test_a_queue_is_read_by_shapes_into_compacted_ads(tmp_path):
    """2,000 jobs, read cold and warm: every ad the general path's, nearly all of them read by
    a model's regular expression (which settles after 500 ads where values are shared:
    a cluster's QDate, not ids below 256, one object each in Python anyway), and equal
    values of neighbouring ads stored once."""
    text = _queue(2000)
    path = tmp_path / "jobs.ads"
    path.write_text(text, encoding="utf-8")
    expected = _general(text)
    try:
        assert _read(path, compacted=True) == expected
        old_format.forget_lines()
        with sources.open_source(path) as src:
            ads = list(old_format.iter_ads(src, lambda exc: None, compacted=True))
        models = [m for ms in old_compact._MODELS.values() for m in ms]
        assert _read(path, compacted=True) == expected
    finally:
        old_format.forget_lines()
    assert len(ads) == 2000
    assert sum(type(ad._attrs) is SharedAttrs for ad in ads) >= 1990
    # One model; its shape made from the ads read line by line (a few per shape).
    assert len(models) == 1 and models[0].shapes and models[0].made <= 4
    qdates = {id(ad._attrs.plain("qdate")) for ad in ads[700:707]}  # cluster 100
    assert len(qdates) == 1


def test_a_model_is_not_used_for_another_list_of_the_same_length(tmp_path):
    """Two attribute lists of one length, alternating: each ad has its own names."""
    text = "".join((f"A = {i}\nB = 2\nC = 3\n\n" if i % 2 else f'X = {i}\nB = 2\nC = "3"\n\n') for i in range(200))
    expected = _general(text)
    try:
        assert _read(text, compacted=True) == expected
    finally:
        old_format.forget_lines()


def test_a_long_read_goes_to_the_oldest_generation():
    """What a ``long_lived`` pause made is in the collector's oldest generation when it
    ends (no young collection walks it); within a settled heap it is set aside instead."""
    with collector_paused(long_lived=True):
        made = [[i] for i in range(1000)]
    assert gc.isenabled()
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(m) in oldest for m in made)
    with heap_settled():
        frozen = gc.get_freeze_count()
        with collector_paused(long_lived=True):
            more = [[i] for i in range(1000)]
        assert gc.get_freeze_count() >= frozen + len(more)
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(m) in oldest for m in more)


@pytest.mark.parametrize("value", ["123456789012345678", "12345678901234567", "-0", "1.5e3", "007"])
def test_values_a_shape_must_not_read_as_it_reads_an_integer(value):
    """An integer of 18 digits or more, an exponent, leading zeros: read as the general
    path reads them after a model's shape has learnt that the place holds integers."""
    text = "".join(f"A = {i}\nB = 1\n\n" for i in range(1, 30)) + f"A = {value}\nB = 1\n\n"
    expected = _general(text)
    try:
        assert _read(text, compacted=True) == expected
    finally:
        old_format.forget_lines()


@pytest.mark.parametrize("block", [1 << 16, 100])
def test_ads_inside_an_open_comment_are_not_read_whole(block):
    """A ``/*`` comment left open runs over blank lines: the ads within it, though a shape
    would read them, are comment, and reading resumes after its ``*/``."""
    ad = "InComment = {}\nOther = 1\n\n"  # names of this test's own (layouts are kept)
    text = "".join(ad.format(i) for i in range(30)) + "/* open\n\n" + ad.format(7) + "close */\n\n" + ad.format(8)
    expected = _general(text)
    saved, sources._BLOCK = sources._BLOCK, block
    try:
        assert _read(text, compacted=True) == expected
    finally:
        sources._BLOCK = saved
        old_format.forget_lines()
    assert len(expected[0]) == 31
