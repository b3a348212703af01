"""parseAds, parseOne, parseNext: inputs, format detection, error policy, streaming."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import pytest

import classad
from classad import ClassAd, ClassAdError, FormatError
from classad.formats import ParserType, detect, open_source, parseAds, parseNext, parseOne
from classad.formats.detect import classify, to_parser_type

OLD = 'a = 1\nb = "x"\n\na = 2\nb = "y"\n'
NEW = '[a = 1; b = "x"]\n[a = 2; b = "y"]\n'
JSON = '[\n{"a": 1, "b": "x"},\n{"a": 2, "b": "y"}\n]\n'
JSONL = '{"a": 1, "b": "x"}\n{"a": 2, "b": "y"}\n'
XML = (
    '<?xml version="1.0"?>\n<classads>\n<c><a n="a"><i>1</i></a><a n="b"><s>x</s></a></c>\n'
    '<c><a n="a"><i>2</i></a><a n="b"><s>y</s></a></c>\n</classads>\n'
)
LONG_NEW = '{\n[ a = 1; b = "x" ]\n,\n[ a = 2; b = "y" ]\n}\n'
ALL = [OLD, NEW, JSON, JSONL, XML, LONG_NEW]


def pairs(ads):
    return [(ad["a"], ad["b"]) for ad in ads]


def test_parser_type_matches_classad2():
    """Same member names and numbers as classad2.ParserType."""
    assert {m.name: m.value for m in ParserType} == {"Auto": -1, "Old": 0, "XML": 1, "JSON": 2, "New": 3, "FileAuto": 4}
    assert classad.Parser is ParserType and classad.ParserType is ParserType


def test_parser_type_matches_the_oracle(oracle):
    """The numbers agree with the wheel's enum, and its members are accepted."""
    assert {m.name: int(m) for m in oracle.ParserType} == {m.name: int(m) for m in ParserType}
    assert to_parser_type(oracle.ParserType.JSON) is ParserType.JSON


@pytest.mark.parametrize("text", ALL)
@pytest.mark.parametrize("ptype", [ParserType.Auto, ParserType.FileAuto])
def test_auto_detects_every_format(text, ptype):
    """Auto reads old, new, -long:new, JSON list, JSON lines and XML alike."""
    assert pairs(parseAds(text, ptype)) == [(1, "x"), (2, "y")]


@pytest.mark.parametrize(
    "chars, expected",
    [
        ("<?", ParserType.XML),
        ("[{", ParserType.JSON),
        ("[a", ParserType.New),
        ("[]", ParserType.New),
        ("{[", ParserType.New),
        ('{"', ParserType.JSON),
        ("{}", ParserType.JSON),
        ("//", ParserType.New),
        ("a=", ParserType.Old),
        ("#", ParserType.Old),
        ("", ParserType.Old),
    ],
)
def test_classify(chars, expected):
    """The first significant characters decide the format (module docstring of detect)."""
    assert classify(chars) is expected


def test_detect_consumes_nothing():
    """Detection pushes back what it read."""
    src = open_source("\n\n  [a = 1]\n")
    assert detect(src) is ParserType.New
    assert src.readline() == "\n" and src.lineno == 1


@pytest.mark.parametrize(
    "make",
    [
        lambda p, t: t,
        lambda p, t: t.encode(),
        lambda p, t: p,
        lambda p, t: io.StringIO(t),
        lambda p, t: io.BytesIO(t.encode()),
        lambda p, t: iter(t.splitlines(keepends=True)),
        lambda p, t: (t[i : i + 7] for i in range(0, len(t), 7)),  # chunks that cut lines
    ],
)
def test_input_kinds(tmp_path, make):
    """Text, bytes, a Path, text and binary files, and iterables of text pieces."""
    path = tmp_path / "ads.ad"
    path.write_text(OLD)
    assert pairs(parseAds(make(path, OLD))) == [(1, "x"), (2, "y")]


def test_errors_name_the_file(tmp_path):
    """A FormatError from a path carries that path."""
    path = tmp_path / "bad.ad"
    path.write_text("a = 1\nb = (\n")
    with pytest.raises(FormatError) as info:
        list(parseAds(path))
    assert (info.value.file, info.value.line) == (str(path), 2)
    assert info.value.location().startswith(str(path) + ":2:")


def test_invalid_utf8_survives(tmp_path):
    """Invalid UTF-8 bytes are kept (as surrogate escapes) rather than failing the read."""
    path = tmp_path / "bytes.ad"
    path.write_bytes(b'a = "caf\xe9"\n')
    (ad,) = parseAds(path)
    assert ad["a"].encode("utf-8", "surrogateescape") == b"caf\xe9"


def test_parse_ads_is_lazy():
    """Ads come one at a time; a later error does not stop earlier ads from arriving."""
    gen = parseAds("a = 1\n\nb = (\n")
    assert next(gen)["a"] == 1
    with pytest.raises(FormatError):
        next(gen)


def test_on_error_values():
    """on_error accepts "raise", "skip" or a callable; anything else is refused."""
    text = "a = 1\n\nb = (\n\nc = 3\n"
    assert [list(ad) for ad in parseAds(text, on_error="skip")] == [["a"], ["c"]]
    with pytest.raises(ValueError):
        parseAds(text, on_error="ignore")


def test_callback_may_stop_reading():
    """A callback that raises stops the generator with its exception."""

    def stop(exc: FormatError) -> None:
        raise RuntimeError(f"stopped at line {exc.line}")

    with pytest.raises(RuntimeError, match="line 3"):
        list(parseAds("a = 1\n\nb = (\n\nc = 3\n", on_error=stop))


def test_parse_one_merges():
    """parseOne merges every ad; later values win, first spellings stay."""
    ad = parseOne("A = 1\nb = 2\n\na = 3\nc = 4\n")
    assert dict(ad) == {"A": 3, "b": 2, "c": 4}


def test_parse_one_accepts_a_list_of_serialized_ads():
    """Each string of an iterable is one serialized ad, in any format."""
    ad = parseOne(["[a = 1]", "b = 2\n", '{"c": 3}'])
    assert dict(ad) == {"a": 1, "b": 2, "c": 3}


def test_parse_next_on_a_string():
    """The first ad of a string, or None when there is none."""
    assert parseNext(NEW)["a"] == 1
    assert parseNext("  \n") is None


@pytest.mark.parametrize(
    "text, ptype",
    [
        (OLD, ParserType.Auto),
        (NEW, ParserType.Auto),
        ('[a = 1; b = "x"][a = 2; b = "y"]', ParserType.New),
        (JSONL, ParserType.JSON),
        (LONG_NEW, ParserType.New),
    ],
)
def test_parse_next_walks_a_file(tmp_path, text, ptype):
    """Repeated parseNext calls on one seekable file return the ads in turn."""
    path = tmp_path / "ads"
    path.write_text(text)
    for mode in ("r", "rb"):
        with open(path, mode) as f:
            got = [parseNext(f, ptype), parseNext(f, ptype), parseNext(f, ptype)]
        assert [ad and ad["a"] for ad in got] == [1, 2, None]


def test_parse_next_needs_a_parser_for_pipes():
    """Auto-detection on a stream that cannot seek is refused, as in classad2."""

    class Pipe(io.StringIO):
        def seekable(self) -> bool:
            return False

    with pytest.raises(ClassAdError):
        parseNext(Pipe(OLD))
    assert parseNext(Pipe(OLD), ParserType.Old)["a"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["old", "new", "json", "xml"])
def test_streaming_memory_stays_flat(tmp_path, fmt):
    """Reading many ads holds one ad at a time: peak memory does not grow with the file."""
    from classad.formats import write_ads

    one = ClassAd({f"Attr{i}": f"value {i} of a fairly long string" for i in range(20)})
    small, big = tmp_path / "small.ad", tmp_path / "big.ad"
    for path, count in ((small, 100), (big, 1500)):
        with open(path, "w") as out:
            write_ads((one for _ in range(count)), out, fmt)

    def peak(path: Path) -> tuple:
        tracemalloc.start()
        count = sum(1 for _ in parseAds(path))
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return count, top

    (n_small, p_small), (n_big, p_big) = peak(small), peak(big)
    assert (n_small, n_big) == (100, 1500)
    assert p_big < p_small * 2 + 1_000_000, (p_small, p_big)


def test_empty_inputs():
    """No text, or only white space and comments, gives no ads in any format."""
    for text in ("", "\n\n", "# only a comment\n"):
        assert list(parseAds(text)) == []
    assert list(parseAds("", ParserType.XML)) == []
    assert ClassAd() == parseOne("")
