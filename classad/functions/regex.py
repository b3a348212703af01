"""Regular expressions: ``regexp``, ``regexpMember``, ``regexps``, ``replace``, ``replaceAll``
and HTCondor's ``stringList_regexpMember``.

Patterns follow PCRE2 (see :mod:`classad.functions.pcre` for how they run on
Python's ``regex`` package).  Options: ``i`` caseless, ``m`` multiline, ``s``
dot-all, ``x`` extended; for substitutions ``f`` (return the whole subject with
the replacement applied) and ``g`` (every non-overlapping match).  Other
letters are ignored.
"""

from __future__ import annotations

from typing import Any

from ..limits import run_regex
from ..values import ERROR, UNDEFINED, ListValue
from .common import iter_list
from .pcre import compile_pattern, parse_options, search_bytes, substitute
from .registry import builtin
from .stringlists import string_list_items


def _check_args(values: list) -> Any:
    """Error first, then Undefined, then a non-string options argument (the reference's order)."""
    for v in values:
        if v is ERROR:
            return ERROR
    for v in values:
        if v is UNDEFINED:
            return UNDEFINED
    return None


@builtin("regexp", 2, 3)
def regexp(ctx: Any, pattern: Any, subject: Any, *rest: Any) -> Any:
    """True if ``pattern`` matches somewhere in ``subject``: ``regexp("^a.c$", "abc")`` is true.

    Any Error argument gives Error (checked first), then any Undefined gives
    Undefined; non-strings and invalid patterns give Error.
    """
    bad = _check_args([pattern, subject, *rest])
    if bad is not None:
        return bad
    if rest and type(rest[0]) is not str:
        return ERROR
    if type(pattern) is not str or type(subject) is not str:
        return ERROR
    flags = parse_options(rest[0])[0] if rest else 0
    return run_regex(ctx.state, search_bytes, pattern, subject, flags)


@builtin("regexpMember", 2, 3)
def regexp_member(ctx: Any, pattern: Any, lst: Any, *rest: Any) -> Any:
    """True if ``pattern`` matches some string element: ``regexpMember("^b", {"a", "bc"})`` is true.

    A non-string, non-Undefined element reached before a match gives Error; no
    match but an Undefined element gives Undefined.  Quirk kept: an invalid
    pattern never matches (false), it is not an Error.
    """
    bad = _check_args([pattern, lst, *rest])
    if bad is not None:
        return bad
    if rest and type(rest[0]) is not str:
        return ERROR
    if type(pattern) is not str or type(lst) is not ListValue:
        return ERROR
    flags = parse_options(rest[0])[0] if rest else 0
    maybe_undefined = False
    for elem in iter_list(lst, ctx):
        if type(elem) is not str:
            if elem is UNDEFINED:
                maybe_undefined = True
                continue
            return ERROR
        if run_regex(ctx.state, search_bytes, pattern, elem, flags) is True:
            return True
    return UNDEFINED if maybe_undefined else False


def _subst_call(ctx: Any, pattern: Any, subject: Any, repl: Any, rest: tuple, extra: str) -> Any:
    bad = _check_args([pattern, subject, repl, *rest])
    if bad is not None:
        return bad
    if rest and type(rest[0]) is not str:
        return ERROR
    opts = (rest[0] if rest else "") + extra
    if type(pattern) is not str or type(subject) is not str or type(repl) is not str:
        return ERROR
    flags, full, every = parse_options(opts)
    return run_regex(ctx.state, substitute, pattern, subject, repl, flags, full, every)


@builtin("regexps", 3, 4)
def regexps(ctx: Any, pattern: Any, subject: Any, repl: Any, *rest: Any) -> Any:
    """The replacement text for the first match: ``regexps("b(.)", "abc", "[\\1]")`` is ``"[c]"``.

    ``\\0``..``\\9`` in the replacement insert groups; a group number at or
    above the number of groups set in the match is Error.  No match gives ``""``.
    With option ``f`` the whole subject is returned with the match replaced; with
    ``g`` every match is processed.
    """
    return _subst_call(ctx, pattern, subject, repl, rest, "")


@builtin("replace", 3, 4)
def replace(ctx: Any, pattern: Any, subject: Any, repl: Any, *rest: Any) -> Any:
    """Replace the first match in the subject: ``replace("b", "abcb", "X")`` is ``"aXcb"``."""
    return _subst_call(ctx, pattern, subject, repl, rest, "f")


@builtin("replaceAll", 3, 4)
def replace_all(ctx: Any, pattern: Any, subject: Any, repl: Any, *rest: Any) -> Any:
    """Replace every match: ``replaceAll("b", "abcb", "X")`` is ``"aXcX"``.

    Quirk kept: when the pattern can match the empty string at the end of the
    subject the reference runs past the end and gives Error
    (``replaceAll("a*", "baaac", "-")``).
    """
    return _subst_call(ctx, pattern, subject, repl, rest, "fg")


@builtin("stringList_regexpMember", 2, 4)
def string_list_regexp_member(ctx: Any, pattern: Any, lst: Any, *rest: Any) -> Any:
    """True if ``pattern`` matches an item of a string list: ``stringList_regexpMember("^b", "a, bc")``.

    Arguments (pattern, list, delimiters ``", "``, options) must all be strings
    (Undefined is Error); an invalid pattern is Error; an empty list gives Undefined.
    Option letters may be given in either case here.
    """
    delims = rest[0] if rest else ", "
    opts = rest[1] if len(rest) > 1 else ""
    if type(pattern) is not str or type(lst) is not str or type(delims) is not str or type(opts) is not str:
        return ERROR
    flags = parse_options(opts, any_case=True)[0]
    if compile_pattern(pattern, flags) is None:
        return ERROR
    items = string_list_items(lst, delims)
    if not items:
        return UNDEFINED
    found = False
    for item in items:
        r = run_regex(ctx.state, search_bytes, pattern, item, flags)
        if r is ERROR:
            return ERROR
        if r:
            found = True
    return found
