"""Time values as text, and the C time helpers the time functions share.

:func:`parse_abstime_literal` and :func:`parse_reltime_literal` read the string
of an ``absTime("...")`` / ``relTime("...")`` literal exactly as the reference
does (its lenient digit scanner, ``mktime`` normalisation and all); the parser
calls them to fold such literals.  :func:`format_abstime` and
:func:`format_reltime` print time values (docs/language.md, printing times) for the unparser and for
``string()``.  :func:`c_strftime` is the C library's ``strftime`` (through
``ctypes`` where available) so ``formatTime`` and the printers format exactly as
the reference, including out-of-range fields.
"""

from __future__ import annotations

import ctypes
import math
import sys
import time as _time
from typing import Any, Optional

from .values import AbsTime, RelTime, c_div, c_mod, string_bytes, trunc32, wrap32

# --- libc helpers --------------------------------------------------------------------


class _TM(ctypes.Structure):
    _fields_ = [
        *(
            (n, ctypes.c_int)
            for n in ("tm_sec", "tm_min", "tm_hour", "tm_mday", "tm_mon", "tm_year", "tm_wday", "tm_yday", "tm_isdst")
        ),
        ("tm_gmtoff", ctypes.c_long),
        ("tm_zone", ctypes.c_char_p),
    ]


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
        tm = _TM(*[wrap32(int(f)) for f in fields], isdst, gmtoff, zone.encode() if zone is not None else None)
        buf = ctypes.create_string_buffer(1024)
        _STRFTIME(buf, 1023, fmt_b, ctypes.byref(tm))
        return buf.value.decode("utf-8", "surrogateescape")
    sec, mn, hour, mday, mon, year, wday, yday = fields
    try:
        return _time.strftime(fmt, (year + 1900, mon + 1, mday, hour, mn, sec, (wday + 6) % 7, yday + 1, isdst))
    except (ValueError, OverflowError):
        return ""


def gm_fields(secs: int) -> Optional[tuple]:
    try:
        t = _time.gmtime(secs)
    except (OverflowError, OSError, ValueError):
        return None
    return (
        t.tm_sec,
        t.tm_min,
        t.tm_hour,
        t.tm_mday,
        t.tm_mon - 1,
        t.tm_year - 1900,
        (t.tm_wday + 1) % 7,
        t.tm_yday - 1,
    )


def local_tm(secs: int) -> Optional[_time.struct_time]:
    try:
        return _time.localtime(secs)
    except (OverflowError, OSError, ValueError):
        return None


def local_offset(secs: int) -> int:
    """The local zone's offset east of UTC at ``secs`` (``tm_gmtoff``)."""
    t = local_tm(secs)
    return int(t.tm_gmtoff) if t is not None else 0


# --- printing ---------------------------------------------------------------------------


def format_abstime(v: AbsTime) -> str:
    """``YYYY-MM-DDThh:mm:ss±hh:mm`` in the time's own offset (zero prints as ``-00:00``)."""
    secs = int(v.secs)
    offset = wrap32(int(v.offset))
    fields = gm_fields(secs + offset)
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
        text = (
            "%d+%02d:%02d:%02d" % (days, hrs, mins, int(secs))
            if whole
            else "%d+%02d:%02d:%02g" % (days, hrs, mins, secs)
        )
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
    fields = [_atoi(bytes(s[i : i + 4])) - 1900, 0, 0, 0, 0, 0]  # year, mon, mday, hour, min, sec
    i = skip(i + 4)
    for k, adjust in ((1, -1), (2, 0), (3, 0), (4, 0), (5, 0)):
        if i <= n - 2:
            fields[k] = _atoi(bytes(s[i : i + 2])) + adjust
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
    local = local_tm(secs)
    offset = tzhr * 3600 + tzmin * 60 if has_zone else (int(local.tm_gmtoff) if local else 0)
    std = (int(local.tm_gmtoff) - (3600 if local.tm_isdst else 0)) if local else 0
    secs = secs + std - offset
    if offset == -1:
        return None
    return AbsTime(secs, offset)


def _extract_zone(s: bytearray) -> tuple:
    n = len(s)
    off = s[n - 5 : n]
    if len(off) == 5 and off[0] in b"+-" and all(_isdigit(c) for c in off[1:]):
        del s[n - 5 : n]
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
        return s[j + 1 : start + 1], j

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
    value = whole_secs + secs
    return RelTime(-value if negative else value)
