"""PCRE2 semantics on top of the ``regex`` package: pattern translation and the
reference's match and substitution loops.

The reference uses PCRE2 on bytes without UTF mode.  We run the ``regex``
package on bytes, which has the same byte-oriented semantics (``.`` is one
byte, ``\\w`` and caseless matching are ASCII-only) and supports PCRE's
possessive quantifiers, atomic groups, POSIX classes and verbs.
:func:`pcre_to_python` rewrites the PCRE spellings Python lacks (``\\Q...\\E``,
``\\e``, ``\\z``/``\\Z``, ``\\h``/``\\v``/``\\R``/``\\N``, ``\\x{..}``, ``\\o{..}``,
``\\cX``, ``\\g`` and ``\\k`` references, ``(?#...)``, a ``{,n}`` that PCRE2 before
10.43 reads literally) and rejects what PCRE2 rejects but Python accepts (a
quantified anchor or verb, a repeated quantifier, ``[\\w-z]``, duplicate group
names).  Every match runs with a time limit (given by the caller from the
evaluation's budget, see :mod:`classad.limits`), so a catastrophic pattern
gives Error instead of hanging; a (pattern, subject) pair that ran out of the
full per-call time is remembered and gives Error at once next time.
"""

from __future__ import annotations

import functools
import re as _re
import time as _time
from typing import Any, Optional

import regex as _rx

from ..limits import LIMITS
from ..values import ERROR, string_bytes
from .common import from_bytes

# (pattern, flags, subject, notempty) of matches that used up the full per-call time.
_HOPELESS: dict = {}
_HOPELESS_SIZE = 256


class _Timeout(Exception):
    pass


_BRACE_COMMA = _re.compile(rb",[0-9]*\}")
_SIMPLE = {
    ord("e"): rb"\x1b",
    ord("h"): rb"[\t \xa0]",
    ord("H"): rb"[^\t \xa0]",
    ord("v"): rb"[\n\x0b\x0c\r\x85]",
    ord("V"): rb"[^\n\x0b\x0c\r\x85]",
    ord("R"): rb"(?:\r\n|[\n\x0b\x0c\r\x85])",
    ord("N"): rb"[^\n]",
}
_IN_CLASS = {ord("e"): rb"\x1b", ord("h"): rb"\t \xa0", ord("v"): rb"\n\x0b\x0c\r\x85"}


def _escape_literal(data: bytes, in_class: bool) -> bytes:
    out = bytearray()
    for b in data:
        if chr(b).isalnum() and b < 0x80:
            out.append(b)
        else:
            out += b"\\x%02x" % b
    return bytes(out)


_QUANT = _re.compile(rb"[*+?]|\{[0-9]+(?:,[0-9]*)?\}")
_ANCHOR_ESCAPES = frozenset(b"bBAzZGK")
_NAMED_GROUP = _re.compile(rb"\(\?(?:P?<([A-Za-z_][A-Za-z0-9_]*)>|'([A-Za-z_][A-Za-z0-9_]*)')")


_NAMED_REF = _re.compile(rb"\\k(?:<([A-Za-z_][A-Za-z0-9_]*)>|'([A-Za-z_][A-Za-z0-9_]*)'|\{([A-Za-z_][A-Za-z0-9_]*)\})")


_BRACED_NUM = _re.compile(rb"\\([xo])\{([0-9A-Fa-f]*)\}")
_GREF = _re.compile(
    rb"\\g(?:\{(-?[0-9]+)\}|(-?[0-9]+)|<([A-Za-z_][A-Za-z0-9_]*|[0-9]+)>|'([A-Za-z_][A-Za-z0-9_]*|[0-9]+)')"
)
_CLASS_ESCAPES = frozenset(b"dDsSwWhHvVpPNR")


def _code_escape(p: bytes, i: int) -> Optional[tuple]:
    """``\\x{..}``, ``\\o{..}`` or ``\\cX`` at ``i``: (Python escape, next index); None if absent."""
    m = _BRACED_NUM.match(p, i)
    if m:
        kind, digits = m.group(1), m.group(2)
        try:
            value = int(digits, 16 if kind == b"x" else 8) if digits else 0
        except ValueError:
            raise _Invalid() from None
        if value > 0xFF:
            raise _Invalid()
        return b"\\x%02x" % value, m.end()
    if p[i + 1 : i + 2] == b"c":
        if i + 2 >= len(p) or not 0x20 <= p[i + 2] < 0x7F:
            raise _Invalid()
        return b"\\x%02x" % (ord(chr(p[i + 2]).upper()) ^ 0x40), i + 3
    return None


class _Invalid(Exception):
    """The pattern is one PCRE2 rejects although Python's engine would accept it."""


def pcre_to_python(p: bytes, extended: bool = False) -> bytes:
    """Rewrite the PCRE-only spellings of a pattern for the ``regex`` package.

    Raises :class:`_Invalid` for patterns PCRE2 rejects but Python accepts: a
    quantifier on an anchor (``^*``, ``\\b+``, ``\\A?``), a repeated quantifier
    (``a{2}{3}``) and duplicate group names.
    """
    names = [m.group(1) or m.group(2) for m in _NAMED_GROUP.finditer(p)]
    if len(names) != len(set(names)):
        raise _Invalid()
    return _Translator(p, extended).run()


class _Translator:
    """One pass over a PCRE pattern, copying it to ``out`` with PCRE-only spellings rewritten.

    Each step reads the pattern from ``i`` and moves ``i`` past what it consumed.  ``prev``
    is what a quantifier at ``i`` would apply to (none, atom, anchor, quant, quantmod),
    ``groups`` the capturing groups opened so far (for relative ``\\g{-n}``)."""

    def __init__(self, p: bytes, extended: bool) -> None:
        self.p = p
        self.n = len(p)
        self.extended = extended
        self.out = bytearray()
        self.i = 0
        self.in_class = False
        self.prev = "none"
        self.groups = 0

    def run(self) -> bytes:
        while self.i < self.n:
            if self.in_class:
                self.class_step()
            elif not (
                self.extended_layout()
                or self.quantifier()
                or self.escape()
                or self.group_syntax()
                or self.class_start()
                or self.literal_brace()
            ):
                self.plain()
        return bytes(self.out)

    def quoted(self, in_class: bool) -> None:
        """``\\Q...\\E`` at ``i``: the text between, escaped."""
        p, i = self.p, self.i
        j = p.find(rb"\E", i + 2)
        end = self.n if j < 0 else j
        lit = p[i + 2 : end]
        self.out += _escape_literal(lit, in_class)
        self.i = self.n if j < 0 else j + 2
        if lit and not in_class:
            self.prev = "atom"

    def code(self) -> bool:
        """A ``\\x{..}``, ``\\o{..}`` or ``\\cX`` escape at ``i``, if there is one."""
        code = _code_escape(self.p, self.i)
        if code is None:
            return False
        self.out += code[0]
        self.i = code[1]
        return True

    # ---- inside a character class -------------------------------------------------------

    def class_step(self) -> None:
        p, i, c = self.p, self.i, self.p[self.i]
        if c == 0x5C and i + 1 < self.n:
            self.class_escape()
            return
        if (
            c == ord("-")
            and p[i + 1 : i + 2] == b"\\"
            and p[i + 2 : i + 3]
            and p[i + 2] in _CLASS_ESCAPES
            and self.out[-1:] not in (b"[", b"^")
        ):
            raise _Invalid()  # [a-\\d]
        if c == ord("[") and p[i + 1 : i + 2] == b":":
            j = p.find(b":]", i + 2)
            if j >= 0:
                self.out += p[i : j + 2]
                self.i = j + 2
                return
            self.out += rb"\["
        elif c == ord("]"):
            self.in_class = False
            self.out.append(c)
        elif c == ord("["):
            self.out += rb"\["
        else:
            self.out.append(c)
        self.i += 1

    def class_escape(self) -> None:
        p, i = self.p, self.i
        d = p[i + 1]
        if d == ord("Q"):
            self.quoted(True)
            return
        if d == ord("E"):
            self.i += 2
            return
        if self.code():
            return
        if d in _CLASS_ESCAPES and p[i + 2 : i + 3] == b"-" and p[i + 3 : i + 4] not in (b"]", b""):
            raise _Invalid()  # PCRE2: invalid range in character class ([\\w-z])
        self.out += _IN_CLASS.get(d, p[i : i + 2])
        self.i += 2

    # ---- outside a class ----------------------------------------------------------------

    def extended_layout(self) -> bool:
        """White space and ``#`` comments of extended mode, copied as they are."""
        if not self.extended:
            return False
        p, i, c = self.p, self.i, self.p[self.i]
        if c in b" \t\n\r\x0b\x0c":
            self.out.append(c)
            self.i += 1
            return True
        if c == ord("#"):
            j = p.find(b"\n", i)
            j = self.n if j < 0 else j
            self.out += p[i:j]
            self.i = j
            return True
        return False

    def quantifier(self) -> bool:
        m = _QUANT.match(self.p, self.i)
        if not m:
            return False
        prev = self.prev
        if prev == "anchor" or prev == "quantmod" or (prev == "quant" and m.group(0) not in (b"?", b"+")):
            raise _Invalid()
        self.prev = "quantmod" if prev == "quant" else "quant"
        self.out += m.group(0)
        self.i = m.end()
        return True

    def escape(self) -> bool:
        p, i = self.p, self.i
        if p[i] != 0x5C:
            return False
        if i + 1 >= self.n:
            self.out.append(0x5C)
            self.i += 1
            return True
        d = p[i + 1]
        if d == ord("Q"):
            self.quoted(False)
            return True
        if d == ord("E"):
            self.i += 2
            return True
        self.prev = "anchor" if d in _ANCHOR_ESCAPES else "atom"
        if d == ord("N") and p[i + 2 : i + 3] == b"{" and not _QUANT.match(p, i + 2):
            raise _Invalid()  # \\N{name} exists only in UTF mode
        if self.code() or self.group_reference():
            return True
        if d in _SIMPLE:
            self.out += _SIMPLE[d]
        elif d == ord("z"):
            self.out += rb"\Z"
        elif d == ord("Z"):
            self.out += rb"(?=\n?\Z)"
        else:
            self.out += p[i : i + 2]
        self.i += 2
        return True

    def group_reference(self) -> bool:
        """``\\g`` (by number, relative number or name) and ``\\k`` back-references."""
        gref = _GREF.match(self.p, self.i)
        if gref:
            num = gref.group(1) or gref.group(2)
            if num is not None:
                k = int(num)
                if k < 0:
                    k = self.groups + 1 + k
                if k <= 0:
                    raise _Invalid()
                self.out += b"(?:\\%d)" % k
            else:
                target = gref.group(3) or gref.group(4)
                self.out += b"(?" + (target if target.isdigit() else b"&" + target) + b")"
            self.i = gref.end()
            return True
        ref = _NAMED_REF.match(self.p, self.i)
        if ref:
            self.out += b"(?P=" + (ref.group(1) or ref.group(2) or ref.group(3)) + b")"
            self.i = ref.end()
            return True
        return False

    def group_syntax(self) -> bool:
        """A backtracking verb such as ``(*FAIL)`` (kept), or a ``(?#...)`` comment (dropped)."""
        p, i = self.p, self.i
        if p[i] != ord("("):
            return False
        if p[i + 1 : i + 2] == b"*":
            j = p.find(b")", i)
            j = self.n - 1 if j < 0 else j
            self.out += p[i : j + 1]
            self.i = j + 1
            self.prev = "anchor"  # verbs cannot be repeated
            return True
        if p[i + 1 : i + 3] == b"?#":
            j = p.find(b")", i)
            self.i = self.n if j < 0 else j + 1
            return True
        return False

    def class_start(self) -> bool:
        p = self.p
        if p[self.i] != ord("["):
            return False
        self.out.append(p[self.i])
        self.i += 1
        if self.i < self.n and p[self.i] == ord("^"):
            self.out.append(p[self.i])
            self.i += 1
        if self.i < self.n and p[self.i] == ord("]"):
            self.out += rb"\]"
            self.i += 1
        self.in_class = True
        self.prev = "atom"
        return True

    def literal_brace(self) -> bool:
        """A ``{`` that starts no quantifier PCRE knows (``{,3}``) is a literal brace."""
        if self.p[self.i] == ord("{") and _BRACE_COMMA.match(self.p, self.i + 1):
            self.out += rb"\{"
            self.prev = "atom"
            self.i += 1
            return True
        return False

    def plain(self) -> None:
        p, i, c = self.p, self.i, self.p[self.i]
        if c == ord("(") and (
            p[i + 1 : i + 2] != b"?"
            or p[i + 1 : i + 4] == b"?P<"
            or (p[i + 1 : i + 3] in (b"?<", b"?'") and p[i + 3 : i + 4] not in (b"=", b"!"))
        ):
            self.groups += 1
        if c in b"(|":
            self.prev = "none"
        elif c in b"^$":
            self.prev = "anchor"
        else:
            self.prev = "atom"
        self.out.append(c)
        self.i += 1


def parse_options(opts: str, any_case: bool = False) -> tuple:
    """(regex flags, full, global) for an options string."""
    text = opts if not any_case else opts.lower()
    flags = 0
    if "i" in text:
        flags |= _rx.IGNORECASE
    if "m" in text:
        flags |= _rx.MULTILINE
    if "s" in text:
        flags |= _rx.DOTALL
    if "x" in text:
        flags |= _rx.VERBOSE
    return flags, "f" in text, "g" in text


@functools.lru_cache(maxsize=512)
def _compile(pattern: bytes, flags: int) -> Optional[tuple]:
    """(pattern, anchored-non-empty pattern), or None when PCRE would reject it."""
    if b"\0" in pattern:
        pattern = pattern.split(b"\0", 1)[0]
    try:
        text = pcre_to_python(pattern, bool(flags & _rx.VERBOSE))
        rx = _rx.compile(text, flags | _rx.VERSION0)
        nonempty = _rx.compile(
            b"(?:" + text + b"\n)(?!\\G)" if (flags & _rx.VERBOSE or b"(?x" in text) else b"(?:" + text + b")(?!\\G)",
            flags | _rx.VERSION0,
        )
    except (_Invalid, _rx.error, ValueError, OverflowError, RecursionError):
        return None
    return rx, nonempty


def compile_pattern(pattern: str, flags: int) -> Optional[tuple]:
    """Compile a ClassAd pattern string (bytes semantics); None if it is invalid."""
    return _compile(string_bytes(pattern), flags)


# What the engine may raise at match time for a pattern PCRE2 would have refused
# (runaway recursion such as ``(?R)?+``) or for a time-out: the call gives Error.
_ENGINE_FAILURES = (TimeoutError, MemoryError, RecursionError, RuntimeError, OverflowError, _rx.error)


def _left(deadline: float) -> float:
    left = deadline - _time.perf_counter()
    if left <= 0:
        raise _Timeout()
    return left


def _search(rx: Any, subject: bytes, pos: int, deadline: float) -> Any:
    try:
        return rx.search(subject, pos, timeout=_left(deadline))
    except _ENGINE_FAILURES:
        raise _Timeout() from None


def _match(rx: Any, subject: bytes, pos: int, deadline: float) -> Any:
    try:
        return rx.match(subject, pos, timeout=_left(deadline))
    except _ENGINE_FAILURES:
        raise _Timeout() from None


def _remember_hopeless(key: tuple, timeout: float) -> None:
    small = sum(len(k) for k in key if type(k) is str) <= 1 << 16
    if timeout >= LIMITS.regex_call_seconds and small:
        if len(_HOPELESS) >= _HOPELESS_SIZE:
            _HOPELESS.clear()
        _HOPELESS[key] = True


def search_bytes(
    pattern: str, subject: str, flags: int, notempty: bool = False, timeout: Optional[float] = None
) -> Any:
    """True/False for an unanchored search, or ERROR (bad pattern or time limit)."""
    compiled = compile_pattern(pattern, flags)
    if compiled is None:
        return ERROR
    if timeout is None:
        timeout = LIMITS.regex_call_seconds
    key = (pattern, flags, subject, notempty)
    if key in _HOPELESS:
        return ERROR
    rx, nonempty = compiled
    data = string_bytes(subject)
    deadline = _time.perf_counter() + timeout
    try:
        if not notempty:
            return _search(rx, data, 0, deadline) is not None
        return any(_match(nonempty, data, p, deadline) is not None for p in range(len(data) + 1))
    except _Timeout:
        _remember_hopeless(key, timeout)
        return ERROR


def _group_count(m: Any, groups: int) -> int:
    top = 0
    for g in range(1, groups + 1):
        if m.span(g)[0] >= 0:
            top = g
    return top + 1


def substitute(
    pattern: str, subject: str, repl: str, flags: int, full: bool, every: bool, timeout: Optional[float] = None
) -> Any:
    """The reference's substitution loop (``regexps``/``replace``/``replaceAll``), byte for byte.

    A result longer than the string limit of :mod:`classad.limits` is Error.
    """
    compiled = compile_pattern(pattern, flags)
    if compiled is None:
        return ERROR
    if timeout is None:
        timeout = LIMITS.regex_call_seconds
    key = (pattern, flags, subject, repl, full, every)
    if key in _HOPELESS:
        return ERROR
    cap = LIMITS.max_string
    deadline = _time.perf_counter() + timeout
    rx, nonempty = compiled
    target = string_bytes(subject)
    rbytes = string_bytes(repl).split(b"\0", 1)[0]
    n = len(target)
    out = bytearray()
    idx = 0
    empty = False
    try:
        while True:
            if idx > n:
                return ERROR  # PCRE2_ERROR_BADOFFSET after copying the terminating NUL
            if empty:
                m = _match(nonempty, target, idx, deadline)
                if m is None:
                    out += target[idx : idx + 1] if idx < n else b"\0"
                    idx += 1
                    empty = False
                    if not every:
                        break
                    continue
            else:
                m = _search(rx, target, idx, deadline)
                if m is None:
                    break
            ngroups = _group_count(m, rx.groups)
            if full:
                out += target[idx : m.start()]
            i = 0
            while i < len(rbytes):
                c = rbytes[i]
                if c == 0x5C and i + 1 < len(rbytes) and 0x30 <= rbytes[i + 1] <= 0x39:
                    k = rbytes[i + 1] - 0x30
                    i += 1
                    if k >= ngroups:
                        return ERROR
                    out += m.group(k) or b""
                else:
                    out.append(c)
                i += 1
            idx = m.end()
            if len(out) > cap:
                return ERROR
            if m.start() == m.end():
                empty = True
            if not every:
                break
    except _Timeout:
        _remember_hopeless(key, timeout)
        return ERROR
    if full:
        out += target[idx:]
    return from_bytes(bytes(out))
