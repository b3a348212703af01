"""Time: ``time``, ``currentTime``, ``timeZoneOffset``, ``dayTime``, ``absTime``, ``relTime``,
``splitTime``, ``formatTime``, ``interval`` and the ``get*`` field accessors.

The clock is ``ctx.state.now()`` (never the wall clock directly), the zone is
the process's local zone (``TZ``), as the reference uses ``localtime``.
Absolute times are whole seconds plus a zone offset in seconds east of UTC;
relative times are seconds (a real).

Also here, for the parser and the printers: :func:`parse_abstime_literal` and
:func:`parse_reltime_literal` read the string of an ``absTime("...")`` /
``relTime("...")`` literal exactly as the reference does (its lenient digit
scanner, ``mktime`` normalisation and all), and :func:`format_abstime` /
:func:`format_reltime` print time values (spec §5.5).

Reference quirks reproduced: integer seconds given to ``absTime``/``relTime``
are read through a C ``int`` (``absTime(2**32)`` is the epoch); a string that
is not a literal makes ``absTime`` return the string and ``relTime`` zero; a
relative time read as ``time_t`` keeps only whole seconds.
"""

from __future__ import annotations

import ctypes
import math
import sys
import time as _time
from typing import Any, Optional

from ..values import ERROR, UNDEFINED, AbsTime, RelTime, string_bytes
from .common import (
    c_div, c_mod, is_ad, make_ad, reltime_secs_int, to_int, trunc32, wrap32,
)
from .registry import builtin

# --- libc helpers --------------------------------------------------------------------


class _TM(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int) for n in
                ("tm_sec", "tm_min", "tm_hour", "tm_mday", "tm_mon", "tm_year", "tm_wday", "tm_yday",
                 "tm_isdst")] + [("tm_gmtoff", ctypes.c_long), ("tm_zone", ctypes.c_char_p)]


def _load_strftime() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None).strftime
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_size_t
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(_TM)]
    return fn


_STRFTIME = _load_strftime()


def c_strftime(fmt: str, fields: tuple, isdst: int = 0, gmtoff: int = 0, zone: Optional[str] = None) -> str:
    """C ``strftime`` into a 1024-byte buffer; ``fields`` is the C ``struct tm`` prefix
    (sec, min, hour, mday, mon, year-1900, wday, yday)."""
    fmt_b = string_bytes(fmt).split(b"\0", 1)[0]
    if _STRFTIME is not None:
        tm = _TM(*[wrap32(int(f)) for f in fields], isdst, gmtoff,
                 zone.encode() if zone is not None else None)
        buf = ctypes.create_string_buffer(1024)
        _STRFTIME(buf, 1023, fmt_b, ctypes.byref(tm))
        return buf.value.decode("utf-8", "surrogateescape")
    sec, mn, hour, mday, mon, year, wday, yday = fields
    try:
        return _time.strftime(fmt, (year + 1900, mon + 1, mday, hour, mn, sec, (wday + 6) % 7, yday + 1, isdst))
    except (ValueError, OverflowError):
        return ""


def _gm_fields(secs: int) -> Optional[tuple]:
    try:
        t = _time.gmtime(secs)
    except (OverflowError, OSError, ValueError):
        return None
    return (t.tm_sec, t.tm_min, t.tm_hour, t.tm_mday, t.tm_mon - 1, t.tm_year - 1900, (t.tm_wday + 1) % 7,
            t.tm_yday - 1)


def _local(secs: int) -> Optional[_time.struct_time]:
    try:
        return _time.localtime(secs)
    except (OverflowError, OSError, ValueError):
        return None


def local_offset(secs: int) -> int:
    """The local zone's offset east of UTC at ``secs`` (``tm_gmtoff``)."""
    t = _local(secs)
    return int(t.tm_gmtoff) if t is not None else 0


def _now(ctx: Any) -> int:
    return int(math.floor(ctx.state.now()))


# --- printing ---------------------------------------------------------------------------


def format_abstime(v: AbsTime) -> str:
    """``YYYY-MM-DDThh:mm:ss±hh:mm`` in the time's own offset (zero prints as ``-00:00``)."""
    secs = int(v.secs)
    offset = wrap32(int(v.offset))
    fields = _gm_fields(secs + offset)
    text = c_strftime("%Y-%m-%dT%H:%M:%S", fields) if fields is not None else ""
    sign = "+" if offset > 0 else "-"
    tz = abs(offset)
    return "%s%c%02d:%02d" % (text, sign, tz // 3600, (tz // 60) % 60)


def format_reltime(v: RelTime) -> str:
    """``[-][D+]hh:mm:ss`` dropping leading zero units: 90 → ``01:30``, 1.5 → ``1.5``."""
    rsecs = float(v.secs)
    sign = ""
    if rsecs < 0:
        sign = "-"
        rsecs = -rsecs
    frac = rsecs - math.floor(rsecs) if math.isfinite(rsecs) else 0.0
    days = trunc32(rsecs)
    hrs = c_mod(days, 86400)
    mins = c_mod(hrs, 3600)
    secs = c_mod(mins, 60) + frac
    days = c_div(days, 86400)
    hrs = c_div(hrs, 3600)
    mins = c_div(mins, 60)
    whole = frac == 0
    if days:
        text = ("%d+%02d:%02d:%02d" % (days, hrs, mins, int(secs)) if whole
                else "%d+%02d:%02d:%02g" % (days, hrs, mins, secs))
    elif hrs:
        text = "%02d:%02d:%02d" % (hrs, mins, int(secs)) if whole else "%02d:%02d:%02g" % (hrs, mins, secs)
    elif mins:
        text = "%02d:%02d" % (mins, int(secs)) if whole else "%02d:%02g" % (mins, secs)
    else:
        text = "%02d" % int(secs) if whole else "%02g" % secs
    return sign + text


# --- literal parsing ----------------------------------------------------------------------

_SPACE = b" \t\n\v\f\r"


def _isdigit(c: int) -> bool:
    return 0x30 <= c <= 0x39


def _atoi(data: bytes) -> int:
    """C ``atoi`` of a short field that starts with a digit."""
    n = 0
    for c in data:
        if not _isdigit(c):
            break
        n = n * 10 + (c - 0x30)
    return n


def parse_abstime_literal(text: str) -> Optional[AbsTime]:
    """The value of ``absTime("text")``, or None when the reference rejects it (a parse error).

    Reads ``YYYY[-MM[-DD[Thh[:mm[:ss]]]]]`` with any non-digits between fields and
    an optional zone ``Z``, ``±hhmm`` or ``±hh:mm`` at the very end; without a
    zone the local offset applies.  Missing month and day are 0 and normalised
    as C ``mktime`` does (``"2020"`` is 2019-12-31).
    """
    s = bytearray(string_bytes(text))
    length = len(s)
    i = length - 1
    while i >= 0 and s[i] in _SPACE:
        i -= 1
    has_zone = False
    tzhr = tzmin = 0
    if i > 0 and s[i] in b"zZ":
        has_zone = True
        del s[i]
    elif length > 5 and s[length - 5] in b"+-":
        has_zone, tzhr, tzmin = _extract_zone(s)
    elif length > 6 and s[length - 6] in b"+-" and s[length - 3] == 0x3A:
        del s[length - 3]
        has_zone, tzhr, tzmin = _extract_zone(s)
    n = len(s)
    i = 0

    def skip(j: int) -> int:
        while j < n and not _isdigit(s[j]):
            j += 1
        return j

    i = skip(i)
    if i > n - 4:
        return None
    fields = [_atoi(bytes(s[i:i + 4])) - 1900, 0, 0, 0, 0, 0]  # year, mon, mday, hour, min, sec
    i = skip(i + 4)
    for k, adjust in ((1, -1), (2, 0), (3, 0), (4, 0), (5, 0)):
        if i <= n - 2:
            fields[k] = _atoi(bytes(s[i:i + 2])) + adjust
            i += 2
        i = skip(i)
    if i <= n - 1 and _isdigit(s[i]):
        return None
    year, mon, mday, hour, minute, sec = fields
    try:
        t = _time.mktime((year + 1900, mon + 1, mday, hour, minute, sec, 0, 0, 0))
    except (OverflowError, ValueError):
        return None
    if t == -1:
        return None
    secs = int(t)
    local = _local(secs)
    offset = tzhr * 3600 + tzmin * 60 if has_zone else (int(local.tm_gmtoff) if local else 0)
    std = (int(local.tm_gmtoff) - (3600 if local.tm_isdst else 0)) if local else 0
    secs = secs + std - offset
    if offset == -1:
        return None
    return AbsTime(secs, offset)


def _extract_zone(s: bytearray) -> tuple:
    n = len(s)
    off = s[n - 5:n]
    if len(off) == 5 and off[0] in b"+-" and all(_isdigit(c) for c in off[1:]):
        del s[n - 5:n]
        hr, mn = _atoi(bytes(off[1:3])), _atoi(bytes(off[3:5]))
        if off[0] == 0x2D:
            hr, mn = -hr, -mn
        return True, hr, mn
    return False, 0, 0


def _rev_int(digits: bytes) -> int:
    if not digits:
        return 0
    n = int(digits)
    return n if n <= 0x7FFFFFFF else 0


def parse_reltime_literal(text: str) -> Optional[RelTime]:
    """The value of ``relTime("text")``, or None when the reference rejects it.

    Reads ``[-][D+|Dd][hh:|Hh][mm:|Mm]ss[.fff][s]`` from the right, white space
    allowed between parts: ``"1+02:03:04"`` is 93784 seconds, ``"90"`` is 90.
    Note: the reference evaluates such a *literal* to a real, not a relative time.
    """
    s = string_bytes(text)
    i = len(s) - 1

    def back_space(j: int) -> int:
        while j >= 0 and s[j] in _SPACE:
            j -= 1
        return j

    def digits_back(j: int) -> tuple:
        start = j
        while j >= 0 and _isdigit(s[j]):
            j -= 1
        return s[j + 1:start + 1], j

    secs = 0.0
    i = back_space(i)
    if i >= 0 and (s[i] in b"sS" or _isdigit(s[i])):
        if s[i] in b"sS":
            i -= 1
        i = back_space(i)
        frac, i = digits_back(i)
        num = frac
        if i >= 0 and s[i] == 0x2E:
            whole, i = digits_back(i - 1)
            num = whole + b"." + frac
        try:
            secs = float(num) if num not in (b"", b".") else 0.0
        except ValueError:
            secs = 0.0
    parts = [0, 0, 0]  # mins, hrs, days
    for k, marks in ((0, b"mM:"), (1, b"hH:"), (2, b"dD+")):
        i = back_space(i)
        if i >= 0 and s[i] in marks:
            i = back_space(i - 1)
            num, i = digits_back(i)
            parts[k] = _rev_int(num)
    i = back_space(i)
    negative = False
    if i >= 0 and s[i] == 0x2D:
        negative = True
        i -= 1
    i = back_space(i)
    if i >= 0 and s[i] not in _SPACE:
        return None
    mins, hrs, days = parts
    whole_secs = wrap32(days * 86400 + hrs * 3600 + mins * 60)
    value = (whole_secs + secs)
    return RelTime(-value if negative else value)


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
    t = _local(_now(ctx))
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
            t = _local(int(v.secs))
            return ERROR if t is None else get(t)
        if type(v) is RelTime:
            get = _REL_FIELDS.get(key)
            return ERROR if get is None else get(reltime_secs_int(v))
        return ERROR

    impl.__name__ = key
    impl.__doc__ = (f"``{name}(t)``: {example}.  Absolute times are read in the local zone; "
                    "any other argument (even Undefined) gives Error.")
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
    fields = _gm_fields(secs + offset)
    if fields is None:
        return ERROR
    sec, mn, hour, mday, mon, year = fields[:6]
    return make_ad([("Type", "AbsoluteTime"), ("Year", year + 1900), ("Month", mon + 1), ("Day", mday),
                    ("Hours", hour), ("Minutes", mn), ("Seconds", sec), ("Offset", offset)])


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
    return make_ad([("Type", "RelativeTime"), ("Days", days), ("Hours", hrs), ("Minutes", mins),
                    ("Seconds", float(secs))])


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
    node = ad._lookup_node(name.lower())
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
        t = _local(now)
        if t is None:
            return ERROR
        fields = (t.tm_sec, t.tm_min, t.tm_hour, t.tm_mday, t.tm_mon - 1, t.tm_year - 1900,
                  (t.tm_wday + 1) % 7, t.tm_yday - 1)
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
    fields = (vals["Seconds"], vals["Minutes"], vals["Hours"], vals["Day"], mon, year, wrap32(wday),
              wrap32(yday))
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
