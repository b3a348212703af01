"""Fuzz targets for every ad-file reader: random bytes and mutated valid ads.

A reader may only fail with :class:`~classad.errors.ClassAdError` (``FormatError``
for files); any other exception is a bug.  The number of examples is small in
CI; set ``CLASSAD_FUZZ_EXAMPLES`` for a longer run (docs/reliability.md).
"""

from __future__ import annotations

import io
import os

from hypothesis import HealthCheck, example, given, settings, strategies as st

from classad import limits
from classad.errors import ClassAdError
from classad.formats import ParserType, format_ad, parseAds, write_ads

EXAMPLES = int(os.environ.get("CLASSAD_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SEEDS = {
    ParserType.Old: b'MyType = "Job"\nCpus = 1\nMemory = 2048\nRequirements = TARGET.Memory >= MY.Memory && '
    b'regexp("^x", Owner)\nOwner = "al\\"ice"\nL = { 1, 2.5, "s", [ a = 1 ] }\n\nA = 1\n',
    ParserType.New: b'[ MyType = "Job"; Cpus = 1; Requirements = TARGET.Memory >= 2048; L = { 1, "x" }; '
    b"'odd name' = [ a = 1 ] ]\n[ b = \"\\101\\n\" /* c */ ]\n",
    ParserType.JSON: b'[\n{ "MyType": "Job", "Cpus": 1, "R": "\\/Expr(TARGET.Memory >= 2048)\\/", '
    b'"L": [1, 2.5, null, {"a": true}] },\n{ "b": "\\u00e9" }\n]\n',
    ParserType.XML: b'<?xml version="1.0"?>\n<classads>\n<c>\n<a n="Cpus"><i>1</i></a>\n'
    b'<a n="R"><e>TARGET.Memory &gt;= 2048</e></a>\n<a n="L"><l><r>2.5</r><s>x</s></l></a>\n'
    b"</c>\n</classads>\n",
}
PARSERS = [ParserType.Old, ParserType.New, ParserType.JSON, ParserType.XML, ParserType.Auto]


def consume(data: bytes, parser: ParserType) -> None:
    """Read everything, then write what was read in every format (no exception but ClassAdError)."""
    for on_error in ("raise", "skip"):
        try:
            ads = list(parseAds(data, parser, on_error=on_error))
        except ClassAdError:
            continue
        for ad in ads:
            for fmt in ("old", "new", "json", "xml"):
                format_ad(ad, fmt)
            out = io.StringIO()
            write_ads([ad], out, "json")
            out.getvalue().encode("utf-8")  # JSON output is always valid UTF-8


def mutate(seed: bytes, edits: list) -> bytes:
    data = bytearray(seed)
    for kind, pos, blob in edits:
        if not data:
            data += blob
            continue
        i = pos % len(data)
        if kind == 0:
            data[i:i] = blob
        elif kind == 1:
            del data[i : i + len(blob) + 1]
        else:
            data[i : i + len(blob)] = blob
    return bytes(data)


_edit = st.tuples(
    st.integers(0, 2),
    st.integers(0, 10_000),
    st.binary(min_size=1, max_size=4)
    | st.sampled_from(
        [
            b"\0",
            b"\xef\xbb\xbf",
            b"\xff",
            b"\n",
            b"[",
            b"]",
            b"{",
            b"}",
            b'"',
            b"'",
            b"\\",
            b"<",
            b">",
            b"/*",
            b"=",
            b";",
            b",",
            b"\\ud800",
            b"9" * 30,
        ]
    ),
)


@FUZZ
@given(st.binary(max_size=300), st.sampled_from(PARSERS))
def test_random_bytes(data, parser):
    consume(data, parser)


@FUZZ
@given(st.sampled_from(list(SEEDS)), st.lists(_edit, min_size=1, max_size=6), st.sampled_from(PARSERS))
@example(ParserType.JSON, [(0, 45, b"\0")], ParserType.JSON)  # a raw NUL inside "\/Expr(...)\/"
def test_mutated_valid_ads(kind, edits, parser):
    consume(mutate(SEEDS[kind], edits), parser)


@settings(max_examples=max(20, EXAMPLES // 5), deadline=None)
@given(st.sampled_from(list(SEEDS)), st.lists(_edit, max_size=4))
def test_mutated_ads_under_tight_limits(kind, edits):
    saved = limits.current()
    limits.configure(max_line=40, max_ad=120, max_expr=30)
    try:
        consume(mutate(SEEDS[kind], edits), kind)
    finally:
        limits.configure(**saved)


def test_seeds_are_valid():
    for kind, data in SEEDS.items():
        assert list(parseAds(data, kind)), kind
