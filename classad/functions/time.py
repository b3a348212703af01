"""Time: ``time``, ``currentTime``, ``timeZoneOffset``, ``dayTime``, ``absTime``, ``relTime``,
``splitTime``, ``formatTime``, ``interval`` and the ``get*`` field accessors.

The clock is ``ctx.state.now()`` (never the wall clock directly), the zone is
the process's local zone (``TZ``), as the reference uses ``localtime``.
Absolute times are whole seconds plus a zone offset in seconds east of UTC;
relative times are seconds (a real).

The readers and printers of time literals (:func:`parse_abstime_literal`,
:func:`parse_reltime_literal`, :func:`format_abstime`, :func:`format_reltime`)
live in :mod:`classad.timetext` (below the parser and the unparser, which use
them) and are re-exported here.

Reference quirks reproduced: integer seconds given to ``absTime``/``relTime``
are read through a C ``int`` (``absTime(2**32)`` is the epoch); a string that
is not a literal makes ``absTime`` return the string and ``relTime`` zero; a
relative time read as ``time_t`` keeps only whole seconds.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from ..timetext import (  # also re-exported: the time functions' public helpers
    c_strftime,
    format_abstime,
    format_reltime,
    gm_fields,
    local_offset,
    local_tm,
    parse_abstime_literal,
    parse_reltime_literal,
)
from ..values import ERROR, UNDEFINED, AbsTime, RelTime
from .common import ad_node, c_div, c_mod, is_ad, make_ad, reltime_secs_int, to_int, trunc32, wrap32
from .registry import builtin


def _now(ctx: Any) -> int:
    return int(math.floor(ctx.state.now()))


# --- functions ------------------------------------------------------------------------


@builtin("time", 0, 0)
def time_(ctx: Any) -> int:
    """Seconds since the epoch now, an integer: ``time() > 0``."""
    return _now(ctx)


@builtin("currentTime", 0, 0)
def current_time(ctx: Any) -> AbsTime:
    """Now as an absolute time in the local zone: ``currentTime() > absTime(0)``."""
    now = _now(ctx)
    return AbsTime(now, local_offset(now))


@builtin("timeZoneOffset", 0, 0)
def time_zone_offset(ctx: Any) -> RelTime:
    """The local zone's offset east of UTC now, a relative time (``relTime(-21600)`` in Chicago winter)."""
    return RelTime(float(local_offset(_now(ctx))))


@builtin("dayTime", 0, 0)
def day_time(ctx: Any) -> Any:
    """Seconds since local midnight now, as a relative time."""
    t = local_tm(_now(ctx))
    if t is None:
        return ERROR
    return RelTime(float(t.tm_hour * 3600 + t.tm_min * 60 + t.tm_sec))


@builtin("absTime", 0, 2)
def abs_time(ctx: Any, *args: Any) -> Any:
    """An absolute time: ``absTime()`` is now, ``absTime(0)`` the epoch in the local zone,
    ``absTime(0, 3600)`` the epoch with offset +01:00.

    Numbers are seconds since the epoch (read through a C ``int``), a relative
    time counts from the epoch, an absolute time is returned as is.  Undefined
    gives Undefined; bools, lists, ads, Error and a bad offset type give Error.
    """
    if not args:
        return current_time(ctx)
    arg = args[0]
    explicit: Optional[int] = None
    if len(args) == 2:
        a2 = args[1]
        if type(a2) is int:
            explicit = wrap32(a2)
        elif type(a2) is float:
            explicit = trunc32(a2)
        elif type(a2) is RelTime:
            explicit = reltime_secs_int(a2)
        else:
            return ERROR
    t = type(arg)
    if arg is UNDEFINED:
        return UNDEFINED
    if t is int or t is float or t is RelTime:
        if t is int:
            secs = wrap32(arg)
        elif t is float:
            secs = trunc32(arg)
        else:
            secs = reltime_secs_int(arg)
        offset = explicit if explicit is not None else local_offset(secs)
        if t is int and offset == -1:
            return ERROR
        return AbsTime(secs, offset)
    if t is str or t is AbsTime:
        return arg
    return ERROR


@builtin("relTime", 1, 1)
def rel_time(ctx: Any, arg: Any) -> Any:
    """A relative time: ``relTime(90)`` prints as ``relTime("01:30")``.

    Numbers are seconds (an integer read through a C ``int``); an absolute time
    gives its seconds since the epoch; Undefined gives Undefined; bools, lists,
    ads and Error give Error.  Quirk kept: a non-literal string gives zero.
    """
    t = type(arg)
    if t is int:
        return RelTime(float(wrap32(arg)))
    if t is float:
        return RelTime(arg)
    if t is RelTime:
        return arg
    if t is AbsTime:
        return RelTime(float(arg.secs))
    if t is str:
        return RelTime(0.0)
    if arg is UNDEFINED:
        return UNDEFINED
    return ERROR


_ABS_FIELDS = {
    "getyear": lambda t: t.tm_year,
    "getmonth": lambda t: t.tm_mon,
    "getdayofyear": lambda t: t.tm_yday - 1,
    "getdayofmonth": lambda t: t.tm_mday,
    "getdayofweek": lambda t: (t.tm_wday + 1) % 7,
    "gethours": lambda t: t.tm_hour,
    "getminutes": lambda t: t.tm_min,
    "getseconds": lambda t: t.tm_sec,
}
_REL_FIELDS = {
    "getdays": lambda r: c_div(r, 86400),
    "gethours": lambda r: c_div(c_mod(r, 86400), 3600),
    "getminutes": lambda r: c_div(c_mod(r, 3600), 60),
    "getseconds": lambda r: c_mod(r, 60),
}


def _field_function(name: str, example: str) -> None:
    key = name.lower()

    def impl(ctx: Any, v: Any) -> Any:
        if type(v) is AbsTime:
            get = _ABS_FIELDS.get(key)
            if get is None:
                return ERROR
            t = local_tm(int(v.secs))
            return ERROR if t is None else get(t)
        if type(v) is RelTime:
            get = _REL_FIELDS.get(key)
            return ERROR if get is None else get(reltime_secs_int(v))
        return ERROR

    impl.__name__ = key
    impl.__doc__ = (
        f"``{name}(t)``: {example}.  Absolute times are read in the local zone; "
        "any other argument (even Undefined) gives Error."
    )
    builtin(name, 1, 1)(impl)


_field_function("getYear", "the year of an absolute time")
_field_function("getMonth", "the month 1-12 of an absolute time")
_field_function("getDayOfYear", "the day of the year 0-365 of an absolute time")
_field_function("getDayOfMonth", "the day of the month 1-31 of an absolute time")
_field_function("getDayOfWeek", "the weekday 0-6 (0 is Sunday) of an absolute time")
_field_function("getDays", "whole days of a relative time (``getDays(relTime(90000))`` is 1)")
_field_function("getHours", "the hour of an absolute time, or hours 0-23 past whole days of a relative time")
_field_function("getMinutes", "the minute of an absolute time, or minutes past whole hours of a relative time")
_field_function("getSeconds", "the second of an absolute time, or seconds past whole minutes of a relative time")


def _split_abs(secs: int, offset: int) -> Any:
    fields = gm_fields(secs + offset)
    if fields is None:
        return ERROR
    sec, mn, hour, mday, mon, year = fields[:6]
    return make_ad(
        [
            ("Type", "AbsoluteTime"),
            ("Year", year + 1900),
            ("Month", mon + 1),
            ("Day", mday),
            ("Hours", hour),
            ("Minutes", mn),
            ("Seconds", sec),
            ("Offset", offset),
        ]
    )


def _split_rel(rsecs: float) -> Any:
    negative = rsecs < 0
    if negative:
        rsecs = -rsecs
    days = trunc32(rsecs)
    hrs = c_mod(days, 86400)
    mins = c_mod(hrs, 3600)
    frac = rsecs - math.floor(rsecs) if math.isfinite(rsecs) else math.nan
    secs = c_mod(mins, 60) + frac
    days = c_div(days, 86400)
    hrs = c_div(hrs, 3600)
    mins = c_div(mins, 60)
    if negative:
        if days > 0:
            days = -days
        elif hrs > 0:
            hrs = -hrs
        elif mins > 0:
            mins = -mins
        else:
            secs = -secs
    return make_ad(
        [("Type", "RelativeTime"), ("Days", days), ("Hours", hrs), ("Minutes", mins), ("Seconds", float(secs))]
    )


def _split(v: Any) -> Any:
    t = type(v)
    if t is int:
        return _split_abs(v, local_offset(v))
    if t is float:
        secs = trunc32(v)
        return _split_abs(secs, local_offset(secs))
    if t is AbsTime:
        return _split_abs(int(v.secs), int(v.offset))
    if t is RelTime:
        return _split_rel(float(v.secs))
    return ERROR


@builtin("splitTime", 1, 1)
def split_time(ctx: Any, v: Any) -> Any:
    """Fields of a time as an ad: ``splitTime(0).Year`` is 1970 (in the local zone).

    Numbers and absolute times give ``[Type="AbsoluteTime"; Year; Month; Day;
    Hours; Minutes; Seconds; Offset]``; relative times ``[Type="RelativeTime";
    Days; Hours; Minutes; Seconds]`` (Seconds a real).  Undefined gives
    Undefined, an ad or any other type Error.
    """
    if v is UNDEFINED:
        return UNDEFINED
    if is_ad(v):
        return ERROR
    return _split(v)


def _ad_int(ctx: Any, ad: Any, name: str) -> Optional[int]:
    node = ad_node(ad, name.lower())
    if node is None:
        return None
    val = ctx.eval_in(node, ad)
    return wrap32(val) if type(val) is int else None


def _day_numbers(year: int, month: int, day: int) -> tuple:
    def leap(y: int) -> bool:
        return c_mod(y, 4) == 0 and c_mod(y, 400) not in (100, 200, 300)

    def fixed(y: int, m: int, d: int) -> int:
        # C int arithmetic: every step wraps at 32 bits, as in the reference.
        adj = 0 if m <= 2 else (-1 if leap(y) else -2)
        ym1 = wrap32(y - 1)
        total = wrap32(365 * ym1)
        for part in (c_div(ym1, 4), -c_div(ym1, 100), c_div(ym1, 400), c_div(wrap32(367 * m - 362), 12), adj, d):
            total = wrap32(total + part)
        return total

    f = fixed(year, month, day)
    return c_mod(f, 7), wrap32(f - fixed(year, 1, 1))


@builtin("formatTime", 0, 2)
def format_time(ctx: Any, *args: Any) -> Any:
    """``strftime`` of a time: ``formatTime(0, "%Y")`` is ``"1970"`` in UTC; default format ``%c``.

    The time may be a number, an absolute time (printed in its own offset) or a
    ``splitTime`` ad; no argument means now.  Relative times, Undefined and
    other types give Error, as does a non-string format.
    """
    if not args:
        now = _now(ctx)
        t = local_tm(now)
        if t is None:
            return ERROR
        fields = (
            t.tm_sec,
            t.tm_min,
            t.tm_hour,
            t.tm_mday,
            t.tm_mon - 1,
            t.tm_year - 1900,
            (t.tm_wday + 1) % 7,
            t.tm_yday - 1,
        )
        return c_strftime("%c", fields, t.tm_isdst, int(t.tm_gmtoff), t.tm_zone)
    v = args[0]
    if type(v) is RelTime:
        return ERROR
    split = v if is_ad(v) else _split(v)
    if split is ERROR:
        return ERROR
    got = {name: _ad_int(ctx, split, name) for name in ("Seconds", "Minutes", "Hours", "Day", "Month", "Year")}
    vals = {name: (0 if g is None else g) for name, g in got.items()}
    mon = vals["Month"] - 1 if got["Month"] is not None else 0
    year = vals["Year"] - 1900 if got["Year"] is not None else 0
    wday, yday = _day_numbers(wrap32(year + 1900), wrap32(mon + 1), vals["Day"])
    fmt = "%c"
    if len(args) == 2:
        if type(args[1]) is not str:
            return ERROR
        fmt = args[1]
    fields = (vals["Seconds"], vals["Minutes"], vals["Hours"], vals["Day"], mon, year, wrap32(wday), wrap32(yday))
    return c_strftime(fmt, fields)


@builtin("interval", 1, 1)
def interval(ctx: Any, v: Any) -> Any:
    """Seconds as ``[D+]h:mm:ss`` with leading zero units dropped: ``interval(67)`` is ``"1:07"``,
    ``interval(1472523)`` is ``"17+01:02:03"``.

    The argument converts with ``int()`` rules and is read through a C ``int``;
    Undefined gives Error.
    """
    n = to_int(v)
    if type(n) is not int:
        return ERROR
    total = wrap32(n)
    days = c_div(total, 86400)
    total = c_mod(total, 86400)
    hours = c_div(total, 3600)
    total = c_mod(total, 3600)
    mins = c_div(total, 60)
    secs = c_mod(total, 60)
    if days != 0:
        return "%d+%02d:%02d:%02d" % (days, abs(hours), abs(mins), abs(secs))
    if hours != 0:
        return "%d:%02d:%02d" % (hours, abs(mins), abs(secs))
    if mins != 0:
        return "%d:%02d" % (mins, abs(secs))
    return "%d" % secs


__all__ = ["format_abstime", "format_reltime", "parse_abstime_literal", "parse_reltime_literal"]
