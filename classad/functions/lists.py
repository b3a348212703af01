"""Lists: ``member``, ``identicalMember``, ``anyCompare``, ``allCompare``, ``sum``, ``avg``,
``min``, ``max`` and ``size``.

Elements are evaluated one at a time, in the scope the list was written in,
and compared with the language's own operators (``==`` is case-insensitive on
strings and promotes numbers).  As in the reference, the numeric promotion a
comparison performs sticks to the running operand, so ``min({1, 2.5})`` is
``1.0`` and ``min({true, 5})`` is ``1``.
"""

from __future__ import annotations

from typing import Any

from ..values import ERROR, UNDEFINED, ListValue, byte_length
from .common import Cell, add, compare, divide_real, is_ad, iter_list
from .registry import builtin

_NUMERIC = (bool, int, float)


@builtin("member", 2, 2)
def member(ctx: Any, x: Any, lst: Any) -> Any:
    """True if some element ``== x``: ``member("b", {"a", "B"})`` is true, ``member(1, {1.0})`` too.

    Undefined ``x`` or list gives Undefined; an Error ``x``, a list or ad ``x``
    or a non-list second argument gives Error.  Element comparisons that give
    Undefined or Error are skipped.
    """
    if lst is UNDEFINED or x is UNDEFINED:
        return UNDEFINED
    if type(lst) is not ListValue or type(x) is ListValue or is_ad(x):
        return ERROR
    if x is ERROR:
        return ERROR
    target = Cell(x)
    for elem in iter_list(lst, ctx):
        if compare("==", Cell(elem), target) is True:
            return True
    return False


@builtin("identicalMember", 2, 2)
def identical_member(ctx: Any, x: Any, lst: Any) -> Any:
    """True if some element ``is`` x (same type and value): ``identicalMember(1, {1.0})`` is false.

    ``x`` may be Undefined or Error (``identicalMember(undefined, {undefined})``
    is true); an Undefined list gives Undefined.
    """
    if lst is UNDEFINED:
        return UNDEFINED
    if type(lst) is not ListValue or type(x) is ListValue or is_ad(x):
        return ERROR
    target = Cell(x)
    for elem in iter_list(lst, ctx):
        if compare("is", Cell(elem), target) is True:
            return True
    return False


_COMPARE_OPS = ("<", "<=", "!=", "==", ">", ">=", "is", "isnt")


def _list_compare(ctx: Any, op: Any, lst: Any, value: Any, need_all: bool) -> Any:
    if op is UNDEFINED:
        return UNDEFINED
    if type(op) is not str or op not in _COMPARE_OPS:
        return ERROR
    if lst is UNDEFINED:
        return UNDEFINED
    if type(lst) is not ListValue:
        return ERROR
    target = Cell(value)
    for elem in iter_list(lst, ctx):
        r = compare(op, Cell(elem), target)
        if r is True:
            if not need_all:
                return True
        elif r is False:
            if need_all:
                return False
        elif r is UNDEFINED:
            return False
        else:
            return ERROR
    return need_all


@builtin("anyCompare", 3, 3)
def any_compare(ctx: Any, op: Any, lst: Any, value: Any) -> Any:
    """True if ``element op value`` holds for some element: ``anyCompare("<", {1, 5}, 2)`` is true.

    ``op`` is one of ``< <= == != > >= is isnt`` (case-sensitive); an element
    comparison giving Undefined ends the scan with false
    (``anyCompare("<", {undefined, 1}, 2)`` is false), one giving Error gives Error.
    """
    return _list_compare(ctx, op, lst, value, False)


@builtin("allCompare", 3, 3)
def all_compare(ctx: Any, op: Any, lst: Any, value: Any) -> Any:
    """True if ``element op value`` holds for every element: ``allCompare(">", {3, 5}, 2)`` is true.

    An empty list gives true; an Undefined element comparison gives false.
    """
    return _list_compare(ctx, op, lst, value, True)


def _sum(ctx: Any, lst: Any, average: bool) -> Any:
    if lst is UNDEFINED:
        return UNDEFINED
    if type(lst) is not ListValue:
        return ERROR
    total = Cell(0)
    count = 0
    first = True
    for elem in iter_list(lst, ctx):
        if elem is UNDEFINED:
            continue
        if type(elem) not in _NUMERIC:
            return ERROR
        count += 1
        if first:
            total.v = elem
            first = False
        else:
            total.v = add(total, Cell(elem))
    if not average or count == 0:
        return total.v
    return divide_real(total.v, float(count))


@builtin("sum", 1, 1)
def sum_(ctx: Any, lst: Any) -> Any:
    """Sum of the numeric elements: ``sum({1, 2.5})`` is 3.5; Undefined elements are skipped.

    An empty (or all-Undefined) list gives 0; a non-number element gives Error.
    As in the reference, a one-element list returns that element as it is
    (``sum({true})`` is true).
    """
    return _sum(ctx, lst, False)


@builtin("avg", 1, 1)
def avg(ctx: Any, lst: Any) -> Any:
    """Mean of the numeric elements as a real: ``avg({1, 2})`` is 1.5; ``avg({})`` is 0 (an int)."""
    return _sum(ctx, lst, True)


def _bound(ctx: Any, lst: Any, op: str) -> Any:
    if lst is UNDEFINED:
        return UNDEFINED
    if type(lst) is not ListValue:
        return ERROR
    result: Any = None
    for elem in iter_list(lst, ctx):
        if elem is UNDEFINED:
            continue
        if type(elem) not in _NUMERIC:
            return ERROR
        if result is None:
            result = Cell(elem)
        else:
            cell = Cell(elem)
            if compare(op, cell, result) is True:
                result = cell
    return UNDEFINED if result is None else result.v


@builtin("min", 1, 1)
def min_(ctx: Any, lst: Any) -> Any:
    """Smallest numeric element: ``min({3, 1, 2})`` is 1, ``min({1, 2.5})`` is 1.0; empty gives Undefined."""
    return _bound(ctx, lst, "<")


@builtin("max", 1, 1)
def max_(ctx: Any, lst: Any) -> Any:
    """Largest numeric element: ``max({3, 1, 2})`` is 3; a non-number element gives Error."""
    return _bound(ctx, lst, ">")


@builtin("size", 1, 1)
def size(ctx: Any, v: Any) -> Any:
    """Length of a list, attribute count of an ad, or byte length of a string: ``size("héllo")`` is 6.

    Undefined gives Undefined; any other type gives Error.
    """
    if v is UNDEFINED:
        return UNDEFINED
    t = type(v)
    if t is ListValue:
        return len(v)
    if t is str:
        return byte_length(v)
    if is_ad(v):
        return len(v)
    return ERROR
