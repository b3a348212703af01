"""One reader of ad sources (``classad.formats.sources.open_input``, docs/cli.md): a path,
``-`` for stdin, a pipe, a file object; gzip by its magic bytes; every format.

Whatever way the same text arrives, the ads are those read from the plain file.  The
reader never seeks (the streams here refuse to), and it reads no further than the ads
asked for: from an endless stream, gzipped or not, the first ads come back.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import threading
import zlib
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from classad import ClassAd
from classad.errors import FormatError
from classad.formats import parseAds, read_source, write_ads
from classad.formats.detect import detect
from classad.formats.sources import open_input
from classad.testing import literals

FORMATS = ["old", "new", "json", "xml"]
NAMES = st.sampled_from(["Name", "Cpus", "Memory", "Owner", "a", "b_2", "Requirements", "Rank"])


@st.composite
def ads(draw: Any) -> list[ClassAd]:
    """A few ads of random literal attributes."""
    result = []
    for _ in range(draw(st.integers(1, 4))):
        attrs = draw(st.dictionaries(NAMES, literals(), min_size=1, max_size=5))
        result.append(ClassAd("[" + "; ".join(f"{k} = {v}" for k, v in attrs.items()) + "]"))
    return result


def text_of(ad_list: list[ClassAd], fmt: str) -> str:
    out = io.StringIO()
    write_ads(ad_list, out, fmt)
    return out.getvalue()


def shapes(ad_list: Any) -> list[str]:
    return [repr(ad) for ad in ad_list]


class OneWay(io.RawIOBase):
    """A binary stream that can only be read forward, as a pipe: no seek, no tell."""

    def __init__(self, data: bytes | Iterator[bytes], piece: int = 7) -> None:
        self._chunks = (
            iter([data[i : i + piece] for i in range(0, len(data), piece)]) if isinstance(data, bytes) else data
        )
        self._left = b""

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def seek(self, *args: Any) -> int:
        raise AssertionError("the reader seeked")

    def tell(self) -> int:
        raise AssertionError("the reader asked for a position")

    def readinto(self, buffer: Any) -> int:
        if not self._left:
            self._left = next(self._chunks, b"")
        count = min(len(buffer), len(self._left))
        buffer[:count] = self._left[:count]
        self._left = self._left[count:]
        return count


def read_all(source: Any) -> list[ClassAd]:
    with open_input(source) as src:
        return list(read_source(src, detect(src)))


def through_fifo(tmp: Path, data: bytes) -> list[ClassAd]:
    """The ads read from a FIFO that a thread writes, as ``<(command)`` gives them."""
    fifo = tmp / "fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        return read_all(str(fifo))
    finally:
        writer.join(timeout=30)


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(ad_list=ads())
def test_every_way_in_gives_the_file_s_ads(tmp_path_factory, monkeypatch, fmt, ad_list):
    tmp = tmp_path_factory.mktemp("src")
    text = text_of(ad_list, fmt)
    data = text.encode("utf-8", "surrogateescape")
    plain = tmp / f"ads.{fmt}"
    plain.write_bytes(data)
    expected = shapes(read_all(str(plain)))
    assert expected == shapes(parseAds(text))  # the file reads as the text does
    packed = tmp / "ads.anything"  # gzip is told by its bytes, not its name
    packed.write_bytes(gzip.compress(data))
    assert shapes(read_all(str(packed))) == expected
    assert shapes(read_all(packed)) == expected  # a path-like
    assert shapes(parseAds(packed)) == expected  # the API on a path
    assert shapes(read_all(OneWay(data))) == expected  # a pipe-like stream
    assert shapes(read_all(OneWay(gzip.compress(data)))) == expected
    assert shapes(parseAds(io.BytesIO(gzip.compress(data)))) == expected  # the API on a file object
    assert shapes(read_all(io.StringIO(text))) == expected  # a text file object
    assert shapes(through_fifo(tmp, gzip.compress(data))) == expected
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(OneWay(data)))  # "-": stdin's bytes
    assert shapes(read_all("-")) == expected


def test_standard_input_and_file_objects_stay_open(monkeypatch):
    stream = io.BytesIO(b"a = 1\n")
    assert shapes(read_all(stream)) == ["[ a = 1 ]"] and not stream.closed
    stdin = io.TextIOWrapper(io.BytesIO(b"[b = 2]\n"))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert shapes(read_all("-")) == ["[ b = 2 ]"] and not stdin.closed


def endless(ad_text: bytes, head: bytes = b"", packed: bool = False) -> Iterator[bytes]:
    """``head`` then ``ad_text`` for ever, gzipped on the fly when ``packed``."""
    squeeze = zlib.compressobj(wbits=31) if packed else None

    def out(data: bytes) -> bytes:
        return squeeze.compress(data) + squeeze.flush(zlib.Z_SYNC_FLUSH) if squeeze else data

    yield out(head)
    while True:
        yield out(ad_text * 100)


ENDLESS = {
    "old": (b"", b'Name = "x"\nCpus = 4\n\n'),
    "new": (b"", b'[ Name = "x"; Cpus = 4 ]\n'),
    "json": (b"[\n", b'{ "Name": "x", "Cpus": 4 },\n'),
    "xml": (b'<?xml version="1.0"?>\n<classads>\n', b'<c><a n="Name"><s>x</s></a><a n="Cpus"><i>4</i></a></c>\n'),
}


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("fmt", FORMATS)
def test_an_endless_stream_gives_its_first_ads(fmt, packed):
    """Reading is streaming: nothing waits for the end of the input (there is none)."""
    head, body = ENDLESS[fmt]
    with open_input(OneWay(endless(body, head, packed))) as src:
        got = []
        for ad in read_source(src, detect(src)):
            got.append(ad)
            if len(got) == 3:
                break
    assert [(ad["Name"], ad["Cpus"]) for ad in got] == [("x", 4)] * 3


def test_damaged_gzip_is_one_format_error(tmp_path):
    bad = tmp_path / "cut.gz"
    whole = gzip.compress(b"".join(b'Name = "x%d"\n\n' % i for i in range(5000)))
    bad.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(FormatError, match="gzip") as info:
        read_all(str(bad))
    assert info.value.file == str(bad)


def test_a_missing_file_is_an_os_error():
    with pytest.raises(FileNotFoundError):
        read_all("no-such-file.ads")
