"""String lists (HTCondor's ``"a, b, c"`` convention) and string splitting.

``stringListSize``, ``stringListSum/Avg/Min/Max``, ``stringListMember``,
``stringListIMember``, ``stringListSubsetMatch``, ``stringListISubsetMatch``
are HTCondor extensions; ``stringListsIntersect`` is in the core library;
``split``, ``splitUserName`` and ``splitSlotName`` are HTCondor extensions that
return real lists.

Items are found the way HTCondor's ``StringTokenIterator`` finds them: split at
any delimiter character, trim white space, drop empty items.  Delimiters are
bytes, like everything about ClassAd strings.  ``stringListsIntersect`` uses
the core library's own splitter, which neither trims nor has the same default
delimiters.
"""

from __future__ import annotations

from typing import Any

from ..values import ERROR, FLT_MAX, UNDEFINED, ascii_lower, string_bytes
from .common import from_bytes, make_list, scan_double, trunc64
from .registry import builtin

_C_SPACE = b" \t\n\v\f\r"
_FLT_MIN = 1.1754943508222875e-38


def _split_bytes(data: bytes, delims: bytes) -> list:
    if not delims:
        return [data]
    table = bytes(0 if i in delims else i for i in range(256))
    return data.translate(table).split(b"\0")


def string_list_items(s: str, delims: str) -> list:
    """The items of a string list: split on any delimiter byte, trimmed, empty items dropped."""
    out = []
    for piece in _split_bytes(string_bytes(s), string_bytes(delims)):
        piece = piece.strip(_C_SPACE)
        if piece:
            out.append(from_bytes(piece))
    return out


@builtin("stringListSize", 1, 2)
def string_list_size(ctx: Any, lst: Any, *rest: Any) -> Any:
    """Number of items: ``stringListSize("a, b,,c")`` is 3 (default delimiters ``", "``).

    Every argument must be a string; Undefined is Error.
    """
    delims = rest[0] if rest else ", "
    if type(lst) is not str or type(delims) is not str:
        return ERROR
    return len(string_list_items(lst, delims))


def _summarize(lst: Any, rest: tuple, kind: str) -> Any:
    delims = rest[0] if rest else ", "
    if type(lst) is not str or type(delims) is not str:
        return ERROR
    if kind == "min":
        acc = FLT_MAX
    elif kind == "max":
        acc = _FLT_MIN
    else:
        acc = 0.0
    is_real = False
    count = 0
    for item in string_list_items(lst, delims):
        count += 1
        val = scan_double(item)
        if val is None:
            return ERROR
        if item.strip("+-0123456789"):
            is_real = True
        if kind == "min":
            acc = val if val < acc else acc
        elif kind == "max":
            acc = val if val > acc else acc
        else:
            acc = val + acc
    if count == 0:
        return 0.0 if kind in ("sum", "avg") else UNDEFINED
    if kind == "avg":
        acc = acc / count
    return acc if is_real else trunc64(acc)


@builtin("stringListSum", 1, 2)
def string_list_sum(ctx: Any, lst: Any, *rest: Any) -> Any:
    """Sum of the items: ``stringListSum("1,2,3")`` is 6, ``stringListSum("1,2.5")`` is 3.5.

    The result is an int when every item is written with only ``+-0-9``; an
    item that does not start with a number is Error; an empty list gives 0.0.
    """
    return _summarize(lst, rest, "sum")


@builtin("stringListAvg", 1, 2)
def string_list_avg(ctx: Any, lst: Any, *rest: Any) -> Any:
    """Mean of the items: ``stringListAvg("1,2.0")`` is 1.5.

    Reference bug kept: with integer items the mean is truncated to an int
    (``stringListAvg("1,2")`` is 1).  An empty list gives 0.0.
    """
    return _summarize(lst, rest, "avg")


@builtin("stringListMin", 1, 2)
def string_list_min(ctx: Any, lst: Any, *rest: Any) -> Any:
    """Smallest item: ``stringListMin("3,1,2")`` is 1; an empty list gives Undefined.

    Reference bug kept: the running minimum starts at FLT_MAX, so items above
    3.4e38 are never chosen.
    """
    return _summarize(lst, rest, "min")


@builtin("stringListMax", 1, 2)
def string_list_max(ctx: Any, lst: Any, *rest: Any) -> Any:
    """Largest item: ``stringListMax("3,1,2")`` is 3; an empty list gives Undefined.

    Reference bug kept: the running maximum starts at FLT_MIN (a tiny positive
    number), so ``stringListMax("-3,-5")`` is 0.
    """
    return _summarize(lst, rest, "max")


def _member_args(item: Any, lst: Any, rest: tuple) -> Any:
    delims = ", \t\r\n"
    if (item is not UNDEFINED and type(item) is not str) or (lst is not UNDEFINED and type(lst) is not str):
        return ERROR
    if rest and rest[0] is not UNDEFINED:
        if type(rest[0]) is not str:
            return ERROR
        delims = rest[0]
    if item is UNDEFINED and lst is UNDEFINED:
        return UNDEFINED
    return ("" if item is UNDEFINED else item, "" if lst is UNDEFINED else lst, delims)


@builtin("stringListMember", 2, 3)
def string_list_member(ctx: Any, item: Any, lst: Any, *rest: Any) -> Any:
    """True if ``item`` is exactly one of the items: ``stringListMember("b", "a, b")`` is true.

    Arguments must be strings or Undefined; both Undefined gives Undefined, a
    single Undefined acts as ``""`` (and ``""`` is never a member).  Default
    delimiters are ``", \\t\\r\\n"``.
    """
    args = _member_args(item, lst, rest)
    if type(args) is not tuple:
        return args
    needle, hay, delims = args
    return needle in string_list_items(hay, delims)


@builtin("stringListIMember", 2, 3)
def string_list_imember(ctx: Any, item: Any, lst: Any, *rest: Any) -> Any:
    """Case-insensitive ``stringListMember``: ``stringListIMember("B", "a, b")`` is true."""
    args = _member_args(item, lst, rest)
    if type(args) is not tuple:
        return args
    needle, hay, delims = args
    low = ascii_lower(needle)
    return any(ascii_lower(x) == low for x in string_list_items(hay, delims))


def _subset(item: Any, lst: Any, rest: tuple, fold: bool) -> Any:
    args = _member_args(item, lst, rest)
    if type(args) is not tuple:
        return args
    small, big, delims = args
    if small == "":
        return True
    norm = ascii_lower if fold else (lambda x: x)
    pool = {norm(x) for x in string_list_items(big, delims)}
    found = False
    for x in string_list_items(small, delims):
        found = norm(x) in pool
        if not found:
            break
    return found


@builtin("stringListSubsetMatch", 2, 3)
def string_list_subset_match(ctx: Any, l1: Any, l2: Any, *rest: Any) -> Any:
    """True if every item of ``l1`` is in ``l2``: ``stringListSubsetMatch("a,b", "b,c,a")`` is true.

    ``""`` (or Undefined) ``l1`` is a subset of anything; both Undefined gives
    Undefined.  Quirk kept: an ``l1`` made only of delimiters has no items and
    gives false.
    """
    return _subset(l1, l2, rest, False)


@builtin("stringListISubsetMatch", 2, 3)
def string_list_isubset_match(ctx: Any, l1: Any, l2: Any, *rest: Any) -> Any:
    """Case-insensitive ``stringListSubsetMatch``: ``stringListISubsetMatch("A", "a,b")`` is true."""
    return _subset(l1, l2, rest, True)


def _core_split(s: str, delims: str) -> list:
    """The core library's splitter: any delimiter byte, no trimming, empty pieces dropped."""
    return [p for p in _split_bytes(string_bytes(s), string_bytes(delims or " ,")) if p]


@builtin("stringListsIntersect", 2, 3)
def string_lists_intersect(ctx: Any, l1: Any, l2: Any, *rest: Any) -> Any:
    """True if the two lists share an item: ``stringListsIntersect("a b", "b,c")`` is true.

    Default delimiters are ``" ,"``, items are not trimmed.  Error arguments
    give Error first, then Undefined ones Undefined; non-strings are Error.
    """
    if l1 is ERROR or l2 is ERROR or (rest and rest[0] is ERROR):
        return ERROR
    if l1 is UNDEFINED or l2 is UNDEFINED or (rest and rest[0] is UNDEFINED):
        return UNDEFINED
    if rest and type(rest[0]) is not str:
        return ERROR
    if type(l1) is not str or type(l2) is not str:
        return ERROR
    delims = rest[0] if rest else ""
    pool = set(_core_split(l2, delims))
    return any(p in pool for p in _core_split(l1, delims))


@builtin("split", 1, 2)
def split(ctx: Any, s: Any, *rest: Any) -> Any:
    """Split a string into a list: ``split("a, b c")`` is ``{"a", "b", "c"}``.

    Default separators are ``", \\t"``; white space runs collapse, but two
    adjacent identical non-space separators give an empty item
    (``split("a,,b")`` has three items).  Non-string arguments are Error.
    """
    seps = rest[0] if rest else ", \t"
    if type(s) is not str or type(seps) is not str:
        return ERROR
    data = string_bytes(s)
    sepset = set(string_bytes(seps))
    items = []
    last = 0
    n = len(data)
    if sepset:
        prev = -1
        for ix in range(n):
            c = data[ix]
            if c not in sepset:
                continue
            if ix - last > 0:
                items.append(from_bytes(data[last:ix]))
            elif prev not in _C_SPACE_SET and prev == c:
                items.append("")
            if c not in _C_SPACE_SET:
                prev = c
            last = ix + 1
    if n > last:
        items.append(from_bytes(data[last:]))
    return make_list(items)


_C_SPACE_SET = frozenset(_C_SPACE)


def _split_at(s: Any, slot: bool) -> Any:
    if type(s) is not str:
        return ERROR
    at = s.find("@")
    if at < 0:
        return make_list(["", s] if slot else [s, ""])
    return make_list([s[:at], s[at + 1 :]])


@builtin("splitUserName", 1, 1)
def split_user_name(ctx: Any, s: Any) -> Any:
    """``{user, domain}`` split at the first ``@``: ``splitUserName("bob")`` is ``{"bob", ""}``."""
    return _split_at(s, False)


@builtin("splitSlotName", 1, 1)
def split_slot_name(ctx: Any, s: Any) -> Any:
    """``{slot, machine}`` split at the first ``@``: ``splitSlotName("host")`` is ``{"", "host"}``."""
    return _split_at(s, True)
