"""Hypothesis strategies that build random built-in function calls, for differential tests.

Calls are drawn from the whole registry except the functions whose answer
depends on the wall clock or a random source (``time``, ``random``, ...), with
mostly valid and sometimes invalid argument counts.  Arguments are literals of
every type, values that exercise string lists, regular expressions and times,
and nested calls.
"""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from classad.functions import FUNCTIONS
from classad.testing import literals

# Answers depend on the clock or a random source (or on host-specific pointer garbage).
EXCLUDED = frozenset({"time", "currenttime", "timezoneoffset", "daytime", "random"})

NAMES = sorted({b.name for key, b in FUNCTIONS.items() if key not in EXCLUDED})

# With no arguments these read the clock.
NEEDS_ARGS = frozenset({"abstime", "formattime"})

EXTRA_VALUES = [
    "{}",
    "{1, 2, 3}",
    '{"a", "B", "c"}',
    "{1, undefined, 2.5}",
    "{true, 1, 1.0}",
    "{error}",
    "{[a = 1], [a = 2], 3}",
    "{{1}, 2}",
    "[a = 1]",
    '[x = 1; y = "s"]',
    "[Year = 2020; Month = 2; Day = 3]",
    '"a, b,c"',
    '"1,2,3"',
    '"-3,-5"',
    '" 1.5 , 2"',
    '"x@y"',
    '"a b  c"',
    '"A=1 B=2"',
    "\"a 'b c'\"",
    '"^a.*"',
    '"[a-c]+"',
    '"(a)|(b)"',
    '"\\\\d+"',
    '"i"',
    '"fg"',
    '"im"',
    '"7.10"',
    '"7.9"',
    '"0x10"',
    '"  42abc"',
    '"1e3"',
    '"INF"',
    '"nan"',
    '"true"',
    '"FALSE"',
    '"2020-01-02T03:04:05"',
    '"1+02:03:04"',
    '"%Y-%m-%d"',
    '"%H:%M:%S"',
    "absTime(0)",
    "absTime(1700000000, 3600)",
    "relTime(90)",
    "relTime(-3.5)",
    'absTime("2021-06-01T12:30:00Z")',
    'relTime("1:30")',
    'real("INF")',
    'real("NaN")',
    "-0.0",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967297",
    "-1",
    "86400",
    '"a + 1"',
    '"l[1]"',
    '"{1, 2"',
    '"strcat(s, 1)"',
]

# Attribute references that resolve in ``classad.testing.CONTEXT_MY`` (and some that do not).
REFS = [
    "a",
    "b",
    "s",
    "u",
    "e",
    "l",
    "r",
    "t",
    "n",
    "nested",
    "missing",
    "cyc",
    "x",
    "MY.a",
    "r.c",
    ".a",
    "TARGET.a",
    "r.d",
]


@functools.cache
def arguments() -> st.SearchStrategy[str]:
    """Text of a leaf argument (one strategy, built once: Hypothesis checks a strategy the
    first time it draws from it, which costs more than the draw)."""
    return st.one_of(literals(), st.sampled_from(EXTRA_VALUES), st.sampled_from(REFS))


@functools.cache
def calls(max_depth: int = 2) -> st.SearchStrategy[str]:
    """Text of a random function call, possibly with nested calls as arguments (one
    strategy per depth, built once, like :func:`arguments`)."""

    @st.composite
    def call(draw: st.DrawFn, depth: int) -> str:
        name = draw(st.sampled_from(NAMES))
        entry = FUNCTIONS[name.lower()]
        hi = entry.max_args if entry.max_args is not None else entry.min_args + 3
        lo = max(entry.min_args, 1) if name.lower() in NEEDS_ARGS else entry.min_args
        if draw(st.integers(0, 19)) == 0:
            n = draw(st.integers(lo if name.lower() in NEEDS_ARGS else 0, hi + 1))
        else:
            n = draw(st.integers(lo, hi))
        args = []
        for _ in range(n):
            if depth > 0 and draw(st.integers(0, 3)) == 0:
                args.append(draw(calls(depth - 1)))
            else:
                args.append(draw(arguments()))
        if draw(st.booleans()):
            name = draw(st.sampled_from([name, name.lower(), name.upper()]))
        return f"{name}({', '.join(args)})"

    return call(max_depth)


# --- regular expressions ---------------------------------------------------------------

REGEX_ATOMS = [
    "a",
    "b",
    "ab",
    ".",
    "\\d",
    "\\w",
    "\\s",
    "\\b",
    "^",
    "$",
    "[ab]",
    "[^a]",
    "[a-c]",
    "(a)",
    "(a|b)",
    "(?:ab)",
    "x",
    " ",
    "\\.",
    "(?i)a",
    "\\n",
    "[[:alpha:]]",
    "\\A",
    "\\z",
    "\\Z",
    "(?=a)",
    "(?!b)",
    "(?<=a)",
    "\\1",
    "[]a]",
    "\\Qa.\\E",
    "\\h",
    "é",
    "\\x41",
    "\\e",
    "(?P<n>a)",
    "\\k<n>",
    "[\\d]",
    "(?#c)",
    "\\g1",
    "\\x{41}",
    "\\o{101}",
    "\\cA",
    "[[:^alpha:]]",
    "[\\w-z]",
    "\\N",
    "\\v",
    "(*FAIL)",
    "(?s:.)",
    "[a-]",
    "{x}",
]
REGEX_QUANTIFIERS = ["", "", "", "*", "+", "?", "*?", "+?", "{1,2}", "{,2}", "{2,}", "*+", "{2}"]
REGEX_SUBJECTS = ["", "a", "b", "ab", "aab", "ba", "abab", "a b", "A", "AB", "a\nb", "x1", "é", "aaa", "1 2"]
REGEX_REPLACEMENTS = ["-", "\\0", "\\1", "[\\1]", "\\2", "x\\", "\\\\", ""]
REGEX_OPTIONS = ["", "i", "m", "s", "x", "g", "f", "fg", "ig", "I", "msx"]


def regex_calls() -> st.SearchStrategy[str]:
    """Text of a random call of a regular-expression function with a random PCRE pattern."""
    from classad.unparse import quote_string

    pieces_of = st.lists(
        st.tuples(st.sampled_from(REGEX_ATOMS), st.sampled_from(REGEX_QUANTIFIERS)), min_size=1, max_size=3
    )
    subjects, options = st.sampled_from(REGEX_SUBJECTS), st.sampled_from(REGEX_OPTIONS)
    replacements, kinds = st.sampled_from(REGEX_REPLACEMENTS), st.integers(0, 5)

    @st.composite
    def call(draw: st.DrawFn) -> str:
        pieces = draw(pieces_of)
        pat = quote_string("".join(a + q for a, q in pieces))
        subj = quote_string(draw(subjects) + draw(subjects))
        opts = quote_string(draw(options))
        repl = quote_string(draw(replacements))
        kind = draw(kinds)
        if kind == 0:
            return f"regexp({pat}, {subj}, {opts})"
        if kind == 1:
            return f"regexps({pat}, {subj}, {repl}, {opts})"
        if kind == 2:
            return f"replaceAll({pat}, {subj}, {repl}, {opts})"
        if kind == 3:
            return f"replace({pat}, {subj}, {repl})"
        if kind == 4:
            return f'regexpMember({pat}, {{{subj}, "b"}}, {opts})'
        return f'stringList_regexpMember({pat}, {subj}, ",", {opts})'

    return call()
