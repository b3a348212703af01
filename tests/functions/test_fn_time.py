"""Time functions with a fixed clock and fixed zones, and the time-literal readers/printers."""

from __future__ import annotations

import random

import pytest
from fn_helpers import ours, theirs, timezone
from hypothesis import given, settings, strategies as st

import classad
from classad.evaluate import EvalState
from classad.functions.time import (
    format_abstime,
    format_reltime,
    parse_abstime_literal,
    parse_reltime_literal,
)
from classad.values import AbsTime, RelTime

CLOCK = 1700000000.0  # 2023-11-14T22:13:20Z, a Tuesday

CLOCK_CASES = {
    "UTC": [
        ("time()", ["int", 1700000000]),
        ("currentTime()", ["abstime", 1700000000.0]),
        ("absTime()", ["abstime", 1700000000.0]),
        ("timeZoneOffset()", ["real", "0.0"]),
        ("dayTime()", ["real", "80000.0"]),
        ("string(currentTime())", ["str", "2023-11-14T22:13:20-00:00"]),
        ("getHours(currentTime())", ["int", 22]),
        ("getDayOfWeek(currentTime())", ["int", 2]),
        ("formatTime()", ["str", "Tue Nov 14 22:13:20 2023"]),
        ("interval(time() - 1699999000)", ["str", "16:40"]),
        ("time() - 1700000000", ["int", 0]),
    ],
    "America/Chicago": [
        ("time()", ["int", 1700000000]),
        ("currentTime()", ["abstime", 1700000000.0]),
        ("timeZoneOffset()", ["real", "-21600.0"]),
        ("dayTime()", ["real", "58400.0"]),
        ("string(currentTime())", ["str", "2023-11-14T16:13:20-06:00"]),
        ("getHours(currentTime())", ["int", 16]),
        ("getYear(absTime())", ["int", 2023]),
        ("formatTime()", ["str", "Tue Nov 14 16:13:20 2023"]),
        ("splitTime(currentTime()).Offset", ["int", -21600]),
    ],
}


@pytest.mark.parametrize("tz,expr,expected", [(tz, e, x) for tz, rows in CLOCK_CASES.items() for e, x in rows])
def test_clock_functions(tz: str, expr: str, expected: list) -> None:
    """Clock-reading functions use the evaluation state's clock and the process's zone."""
    with timezone(tz):
        assert ours(expr, clock=CLOCK) == expected


def test_random_uses_state_source() -> None:
    """random() draws from the state's random source, so a seed makes it repeatable."""
    tree = classad.ExprTree("{random(10), random(), random(2.5)}")

    def draw(seed: int) -> list:
        state = EvalState(rng=random.Random(seed))
        return tree.evaluate(None, None, state).evaluate(state)

    first, second = draw(7), draw(7)
    assert first == second
    n, r, r25 = first
    assert type(n) is int and 0 <= n < 10
    assert type(r) is float and 0.0 <= r <= 1.0
    assert type(r25) is float and 0.0 <= r25 <= 2.5


@pytest.mark.parametrize(
    "expr",
    [
        "random(0)",
        "random(-3)",
        "random(-0.5)",
        "random(4294967296)",
        'random("5")',
        "random(true)",
        "random(undefined)",
    ],
)
def test_random_bad_bounds_are_error(expr: str) -> None:
    """A bound that is not positive (a hard failure in the reference) or not a number is Error."""
    assert ours(expr) == "error"


# --- literal readers and printers ------------------------------------------------------


@pytest.mark.parametrize(
    "text,secs,offset",
    [
        ("2020-01-02T03:04:05Z", 1577934245, 0),
        ("2020-01-02T03:04:05+01:30", 1577934245 - 5400, 5400),
        ("2020-01-02T03:04:05-0500", 1577934245 + 18000, -18000),
        ("2020", 1577750400, 0),  # day 0 of January is December 31
        ("2020-02-30T25:61:61", 1583114521, 0),  # normalised as mktime does: 2020-03-02T02:02:01
        ("20200102030405", 1577934245, 0),
    ],
)
def test_parse_abstime_literal_utc(text: str, secs: int, offset: int) -> None:
    """absTime literal strings are read like the reference's scanner (local zone UTC)."""
    with timezone("UTC"):
        assert parse_abstime_literal(text) == AbsTime(secs, offset)


@pytest.mark.parametrize("text", ["garbage", "202", "2020-1-5", "1969-12-31T23:59:59", "2020-01-01T00:00:00:00"])
def test_parse_abstime_literal_rejects(text: str) -> None:
    """Text the reference cannot read gives None (a parse error for the parser)."""
    with timezone("UTC"):
        assert parse_abstime_literal(text) is None


def test_parse_abstime_literal_local_zone() -> None:
    """Without a zone the local offset at that instant applies (daylight time included)."""
    with timezone("America/Chicago"):
        assert parse_abstime_literal("2020-07-01T12:00:00") == AbsTime(1593622800, -18000)
        assert parse_abstime_literal("2020-01-01T12:00:00") == AbsTime(1577901600, -21600)


@pytest.mark.parametrize(
    "text,secs",
    [
        ("90", 90.0),
        ("1:30", 90.0),
        ("1+02:03:04", 93784.0),
        ("1+02:03:04.5", 93784.5),
        ("-1:30", -90.0),
        ("2d3h4m5s", 183845.0),
        ("2D 3H 4M 5S", 183845.0),
        ("", 0.0),
        (" 7 ", 7.0),
        ("5s", 5.0),
    ],
)
def test_parse_reltime_literal(text: str, secs: float) -> None:
    """relTime literal strings: ``[-][D+][hh:][mm:]ss[.fff]`` or ``DdHhMmSs``."""
    assert parse_reltime_literal(text) == RelTime(secs)


@pytest.mark.parametrize("text", ["x", "1.5.5", "1:2:3:4", "1 2"])
def test_parse_reltime_literal_rejects(text: str) -> None:
    """Anything left over before the parsed parts is an error."""
    assert parse_reltime_literal(text) is None


@pytest.mark.parametrize(
    "value,text",
    [
        (AbsTime(0, 0), "1970-01-01T00:00:00-00:00"),
        (AbsTime(0, 3600), "1970-01-01T01:00:00+01:00"),
        (AbsTime(0, -5400), "1969-12-31T22:30:00-01:30"),
        (AbsTime(1577934245, 19800), "2020-01-02T08:34:05+05:30"),
    ],
)
def test_format_abstime(value: AbsTime, text: str) -> None:
    """Absolute times print in their own offset; a zero offset prints as -00:00."""
    assert format_abstime(value) == text


@pytest.mark.parametrize(
    "secs,text",
    [
        (0, "00"),
        (5, "05"),
        (90, "01:30"),
        (3600, "01:00:00"),
        (86400, "1+00:00:00"),
        (93784, "1+02:03:04"),
        (93784.5, "1+02:03:4.5"),
        (1.5, "1.5"),
        (-90, "-01:30"),
        (0.25, "0.25"),
    ],
)
def test_format_reltime(secs: float, text: str) -> None:
    """Relative times drop leading zero units; fractions print with %02g (reference quirk)."""
    assert format_reltime(RelTime(secs)) == text


_ABS_TEXT = st.text(alphabet=st.sampled_from(list("0123456789-:TZz+ ")), max_size=26)
_REL_TEXT = st.text(alphabet=st.sampled_from(list("0123456789:+-.dhmsDHMS ")), max_size=14)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        _ABS_TEXT,
        st.sampled_from(["2020-01-02T03:04:05", "1999-12-31T23:59:59-0130"]).flatmap(
            lambda base: st.integers(0, len(base)).map(lambda k: base[:k])
        ),
    )
)
def test_abstime_literals_match_oracle(oracle, text: str) -> None:
    """absTime("...") reads and prints every text as the reference does (UTC and Chicago)."""
    for tz in ("UTC", "America/Chicago"):
        with timezone(tz):
            expr = f'string(absTime("{text}"))'
            assert ours(expr) == theirs(oracle, expr), (tz, text)


@settings(max_examples=300, deadline=None)
@given(_REL_TEXT)
def test_reltime_literals_match_oracle(oracle, text: str) -> None:
    """relTime("...") reads every text as the reference does, and prints the same."""
    expr = f'relTime("{text}")'
    assert ours(expr) == theirs(oracle, expr), text
    try:
        theirs_text = repr(oracle.ExprTree(expr))
    except Exception:
        return
    assert repr(classad.ExprTree(expr)) == theirs_text
