"""Cutting a stream into records (classad/formats/splitter.py): whatever strings, comments,
divisions and nested brackets a record holds, the splitter gives back exactly its text."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from classad.formats.sources import open_source
from classad.formats.splitter import JSON_SYNTAX, NEW_SYNTAX, split_records

# Pieces of record bodies that could fool a scanner: brackets and quotes inside strings,
# escaped quotes, slashes that divide, comments holding closers, nested lists and ads.
_NEW_PIECES = [
    "a = 1",
    "; ",
    '"]"',
    '"[{("',
    '"\\""',
    '"\\\\"',
    "'odd]name'",
    "'it\\'s'",
    " / 2",
    "x/y",
    "/* ] } */",
    '{ 1, [b = 2], "]" }',
    "f(\"(\", ')')",
    " ",
    "\t",
    'r = [s = "]"]',
]
_JSON_PIECES = [
    '"a": 1',
    ", ",
    '"]}"',
    '"\\"{"',
    '"\\\\"',
    '"b": [1, {"c": "]"}]',
    " ",
    '"/*"',
    '"//"',
]


def _records(pieces: list[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.lists(st.sampled_from(pieces), max_size=8).map("".join), min_size=1, max_size=5)


def _split(text: str, syntax) -> tuple[list[str], list]:
    errors: list = []
    with open_source(text) as src:
        got = [rec.text for rec in split_records(src, syntax, errors.append)]
    return got, errors


@settings(max_examples=300, deadline=None)
@given(_records(_NEW_PIECES), st.sampled_from(["", "\n", " // end\n", "\n/* between */\n"]))
def test_new_syntax_records_come_back_whole(bodies, between):
    records = ["[" + body + "]" for body in bodies]
    got, errors = _split(between.join(records) + "\n", NEW_SYNTAX)
    assert errors == []
    assert got == records


@settings(max_examples=300, deadline=None)
@given(_records(_JSON_PIECES), st.sampled_from(["", "\n", ",\n"]))
def test_json_records_come_back_whole(bodies, between):
    records = ["{" + body + "}" for body in bodies]
    got, errors = _split("[" + between.join(records) + "]\n", JSON_SYNTAX)
    assert errors == []
    assert got == records


def test_a_string_left_open_is_reported_on_its_line_and_the_next_record_read():
    got, errors = _split('[a = "open]\n[b = 2]\n', NEW_SYNTAX)
    assert got == ["[b = 2]"]
    assert [(e.line, e.column) for e in errors] == [(1, 6)]
    assert "unterminated string" in errors[0].message
