"""Old-format ads read straight into compacted storage (:mod:`classad.layout`).

A queue dump holds many ads with the same attribute names in the same order, and such
ads differ in a few lines each (ids, times, sizes).  Once the reader has read an ad line
by line and compacted it, that ad serves as the *model* of the later ads with as many
lines: a later ad's lines are compared with the model's at C speed, and only the lines
that differ are read, each as ``Name = literal`` with the model's name at that place
(a literal as :mod:`classad.formats.old_format` reads a simple line), or as a whole line
the reader has read before.  The ad's storage is then built at once from the model's and
the new values, without a dict or a node per line.  An ad with any other differing line
(a name in another place, an expression never seen, a comment, an error) is left to the
reader's other paths, which give the same ad (``tests/formats/test_old_compact.py``).
"""

from __future__ import annotations

import re
from itertools import compress
from operator import add, is_not, itemgetter, ne
from typing import Any, Callable, Iterator, Optional, Sequence

from .. import ast
from ..layout import Layout, SharedAttrs, Stored, Variant, own_values, plain_form, shared_attrs
from ..lexemes import to_int, to_real
from .sources import lines_of

# What a raw line read before gives: (lower-case key, (spelling, node)), or None.
KnownLine = Callable[[str], Optional[tuple[str, tuple[str, ast.Node]]]]

# A value that the old-format reader turns into a literal at once: an integer, a plain
# real, or a string without escapes; read alike in either string syntax.
SIMPLE_VALUE = re.compile(r'(-?(?:0|[1-9][0-9]*))|(-?[0-9]+\.[0-9]+)|"([^"\\\n\0]*)"')
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def simple_value(m: re.Match) -> object:
    """The value of a :data:`SIMPLE_VALUE` match, as the reader's literal holds it."""
    whole, real, string = m.groups()
    if string is not None:
        return string
    if whole is not None:
        return int(whole) if len(whole) < 19 else to_int(whole)  # to_int: past int64
    return to_real(real)


def simple_value_of(whole: Optional[str], real: Optional[str], string: Optional[str]) -> object:
    """:func:`simple_value` from the three groups of a match."""
    if string is not None:
        return string
    if whole is not None:
        return int(whole) if len(whole) < 19 else to_int(whole)
    return to_real(real)  # type: ignore[arg-type]


# Value text with its "\n" -> the stored (bare) value: ids, times and sizes repeat among
# neighbouring ads (a cluster's jobs), and one object serves them all.  Forgotten in bulk.
_VALUES: dict[str, Stored] = {}
_VALUES_LIMIT = 1 << 16

_BARE = (bool, int, float, str)


# How a shape reads the value of a place that varies: an integer (at most 17 digits, so
# that int() gives what the reader gives), a plain real, a string without escapes, any
# simple value, or a whole line read before (an expression, a boolean).
_INT, _REAL, _STRING, _ANY, _LINE = "i", "r", "s", "g", "x"
_PATTERNS = {
    _INT: r"(-?(?:0|[1-9][0-9]{0,16}))",
    _REAL: r"(-?[0-9]+\.[0-9]+)",
    _STRING: r'"([^"\\\n\0]*)"',
    _ANY: "(" + SIMPLE_VALUE.pattern + ")",
}


def _kind(value: Stored) -> str:
    t = type(value)
    return _INT if t is int else _REAL if t is float else _STRING if t is str else _LINE


def _pick(indices: list[int]) -> Callable[[Sequence[Any]], tuple]:
    """A function giving the items at ``indices`` of a tuple, as a tuple."""
    if not indices:
        return lambda _g: ()
    if len(indices) == 1:
        i = indices[0]
        return lambda g: (g[i],)
    return itemgetter(*indices)


class _Shape:
    """The ads of a model whose lines differ from the model's only at some places (the
    variable ones), each value there of one kind: one regular expression reads such an ad
    whole, the model's other lines taken literally.

    Equal integers and strings read are one object (see :data:`_SHARED_INTS`) at the places
    where that was seen to pay while the shape read its first ads; the values of the
    other places (an id, a time of the ad's own) are kept as read."""

    __slots__ = (
        "pattern",
        "kinds",
        "groups",
        "ints",
        "plain_ints",
        "reals",
        "strings",
        "plain_strings",
        "others",
        "order",
        "variant",
        "keys",
        "spellings",
        "template",
        "seen",
        "own",
        "helds",
        "lines",
        "learning",
        "int_hits",
        "string_hits",
    )

    def __init__(self, model: "_Model", kinds: dict[int, str], variant: Variant) -> None:
        parts: list[str] = []
        groups: dict[str, list[int]] = {_INT: [], _REAL: [], _STRING: [], _ANY: [], _LINE: []}
        g = 0
        for p, line in enumerate(model.lines):
            kind = kinds.get(p)
            if kind is None:
                parts.append(re.escape(line))
                continue
            prefix = re.escape(model.prefixes[p])
            parts.append(f"({prefix}[^\n]*\n)" if kind == _LINE else f"{prefix}{_PATTERNS[kind]}\n")
            groups[kind].append(g)
            g += 4 if kind == _ANY else 1
        self.pattern = re.compile("".join(parts) + "\n")  # (the blank line after the ad)
        self.lines = len(model.lines)
        self.kinds, self.groups = kinds, groups
        self.own = tuple(sorted(kinds))
        # The places read in Python: (group, kind, place) in place order.
        slow = sorted(groups[_ANY] + groups[_LINE])
        by_group = dict(zip(sorted([*groups[_INT], *groups[_REAL], *groups[_STRING], *slow]), self.own))
        self.others = tuple((g, _ANY if g in groups[_ANY] else _LINE, by_group[g]) for g in slow)
        # Places held by the template (see _held) -> their variant, and which values stay.
        self.helds: dict[tuple[int, ...], tuple[Optional[Variant], tuple[bool, ...]]] = {}
        self.variant = variant
        self.keys, self.spellings = model.layout.keys, model.layout.spellings
        self.template = model.layout.template
        self.seen: dict[str, Stored] = {}  # whole lines read before -> their stored values
        self.learning = _LEARNING  # ads still to read sharing every value and counting hits
        self.int_hits = [0] * len(groups[_INT])
        self.string_hits = [0] * len(groups[_STRING])
        self._arrange(groups[_INT], groups[_STRING])

    def _arrange(self, shared_ints: list[int], shared_strings: list[int]) -> None:
        """Pickers for the groups whose values are shared and for the others, and the order
        that puts ``shared ints + other ints + reals + shared strings + other strings +
        others`` in place order."""
        groups = self.groups
        plain_ints = [g for g in groups[_INT] if g not in shared_ints]
        plain_strings = [g for g in groups[_STRING] if g not in shared_strings]
        self.ints, self.plain_ints = _pick(shared_ints), _pick(plain_ints)
        self.reals = _pick(groups[_REAL])
        self.strings, self.plain_strings = _pick(shared_strings), _pick(plain_strings)
        sequence = [*shared_ints, *plain_ints, *groups[_REAL], *shared_strings, *plain_strings]
        at = {g: i for i, g in enumerate(sequence + [g for g, _, _ in self.others])}
        self.order = _pick([at[g] for g in sorted(at)])

    def _settle(self) -> None:
        """Share values from now on only at the places where at least one ad in ten found
        its value read before."""
        least = (_LEARNING - 1) // 10
        ints = [g for g, hits in zip(self.groups[_INT], self.int_hits) if hits >= least]
        strings = [g for g, hits in zip(self.groups[_STRING], self.string_hits) if hits >= least]
        self._arrange(ints, strings)

    def read(self, text: str, known: KnownLine) -> Optional[SharedAttrs]:
        """The storage of the ad whose lines and the blank line after it are ``text``, or None."""
        m = self.pattern.fullmatch(text)
        return None if m is None else self.read_match(m, known)

    def read_match(self, m: re.Match, known: KnownLine) -> Optional[SharedAttrs]:
        """The storage of the ad that :attr:`pattern` matched, or None."""
        g = m.groups()
        counting = self.learning > 0
        if counting:
            self.learning -= 1
            if not self.learning:
                self._settle()  # before anything is picked: this ad is read as the next ones
                counting = False
        if len(_SHARED_INTS) > _SHARED_LIMIT or len(_SHARED_STRINGS) > _SHARED_LIMIT:
            _SHARED_INTS.clear()
            _SHARED_STRINGS.clear()
        ints, strings = list(map(int, self.ints(g))), self.strings(g)
        shared_ints = list(map(_SHARED_INTS.setdefault, ints, ints))
        shared_strings = list(map(_SHARED_STRINGS.setdefault, strings, strings))
        if counting:
            self._count(ints, shared_ints, strings, shared_strings)
        got = [
            *shared_ints,
            *map(int, self.plain_ints(g)),
            *map(float, self.reals(g)),
            *shared_strings,
            *self.plain_strings(g),
        ]
        held: list[int] = []  # places whose line gives the template's very node
        for i, kind, place in self.others:
            if kind == _ANY:
                value: Optional[Stored] = simple_value_of(g[i + 1], g[i + 2], g[i + 3])
            else:
                value = self.seen.get(g[i])
                if value is None:
                    hit = known(g[i])
                    if hit is None or hit[0] != self.keys[place] or hit[1][0] != self.spellings[place]:
                        return None
                    value = plain_form(hit[1][1])
                    if len(self.seen) >= 256:
                        self.seen.clear()
                    self.seen[g[i]] = value
                if value is self.template[place]:
                    held.append(place)
            got.append(value)
        if held:
            return self._held(self.order(got), held)
        return tuple.__new__(SharedAttrs, (self.variant, *self.order(got)))

    def _count(self, ints: list, shared_ints: list, strings: Sequence, shared_strings: list) -> None:
        """Count, per place, the values found read before (a small integer, one object in
        Python anyway, counts as not found)."""
        self.int_hits = list(map(add, self.int_hits, map(is_not, shared_ints, ints)))
        self.string_hits = list(map(add, self.string_hits, map(is_not, shared_strings, strings)))

    def _held(self, values: Sequence[Stored], held: list[int]) -> Optional[SharedAttrs]:
        """The storage of an ad of this shape whose values at the places ``held`` are the
        template's very nodes: the template holds those (as :func:`compact` leaves them)."""
        key = tuple(held)
        found = self.helds.get(key)
        if found is None:
            keep = tuple(p not in held for p in self.own)
            found = self.helds[key] = (self.variant.layout.variant(tuple(compress(self.own, keep))), keep)
        variant, keep = found
        if variant is None:
            return None
        return tuple.__new__(SharedAttrs, (variant, *compress(values, keep)))


class _Model:
    """An ad read before, as the model of later ads with as many lines: its lines, its
    layout, what it stores at each place, how a differing line must begin there, and the
    shapes of the ads read after it."""

    __slots__ = ("layout", "lines", "prefixes", "cuts", "places", "base", "shapes", "made", "kinds", "pending")

    def __init__(self, lines: list[str], attrs: SharedAttrs) -> None:
        layout = attrs.layout
        self.layout: Layout = layout
        self.lines = lines
        # "Name = " where the spelling is an identifier; a line never begins with "\n".
        self.prefixes = tuple(s + " = " if _IDENTIFIER.fullmatch(s) else "\n" for s in layout.spellings)
        self.cuts = tuple(slice(len(p), None) for p in self.prefixes)  # the value text, "\n" kept
        self.places = range(len(lines))
        self.base = own_values(attrs)  # what the model itself holds apart from the template
        self.shapes: list[_Shape] = []  # the one shape made last, if any
        self.made = 0  # shapes made so far
        self.kinds: dict[int, str] = {}  # the places seen varying, and their kinds
        self.pending = 0  # ads read line by line since the last shape was made

    def read(self, seg: list[str], text: str, known: KnownLine) -> Optional[SharedAttrs]:
        """The storage of the ad of lines ``seg`` (as many as the model's; ``text`` is them
        and the blank line after them, joined), or None."""
        for shape in self.shapes:
            got = shape.read(text, known)
            if got is not None:
                return got
        mine = self._read_lines(seg, known)
        if mine is None:
            return None
        if self.made < _SHAPES_MADE:
            self._note(mine)
        own = tuple(mine)
        return shared_attrs(self.layout, own, list(map(mine.__getitem__, own)))

    def _read_lines(self, seg: list[str], known: KnownLine) -> Optional[dict[int, Stored]]:
        """The places where the ad of ``seg`` holds values of its own (the model's and the
        lines that differ from the model's), with those values; None if a differing line is
        not read here."""
        differs = list(map(ne, seg, self.lines))
        places = list(compress(self.places, differs)) if True in differs else []
        texts = list(compress(seg, differs)) if places else []
        if not all(map(str.startswith, texts, map(self.prefixes.__getitem__, places))):
            return None
        cuts = list(map(self.cuts.__getitem__, places))
        values = list(map(_VALUES.get, map(str.__getitem__, texts, cuts)))
        if None in values:
            k = -1
            for _ in range(values.count(None)):
                k = values.index(None, k + 1)
                value = self._value(texts[k], cuts[k].start, places[k], known)
                if value is None:
                    return None
                values[k] = value
        mine = dict(self.base)
        mine.update(zip(places, values))
        # A line read before may give the template's very node: the template holds it.
        template = self.layout.template
        return {p: v for p, v in sorted(mine.items()) if v is not template[p]}

    def _note(self, mine: dict[int, Stored]) -> None:
        """Count the places of ``mine`` as varying, each with the kind of value read there
        (any simple value where kinds disagree); every few such ads, a shape for all the
        ads seen takes the place of the one before (making one costs a few milliseconds),
        so that a model soon has the one shape its ads need."""
        kinds = self.kinds
        for p, value in mine.items():
            # (a place seen varying for the first time held the template's value before)
            now, before = _kind(value), kinds.get(p) or _kind(plain_form(self.layout.template[p]))
            kinds[p] = now if now == before else _ANY if _LINE not in (now, before) else _LINE
        self.pending += 1
        if self.pending < _LINE_READS_PER_SHAPE:
            return
        self.pending = 0
        variant = self.layout.variant(tuple(sorted(kinds)))
        if variant is None:
            return
        self.made += 1
        self.shapes = [_Shape(self, dict(sorted(kinds.items())), variant)]

    def _value(self, text: str, start: int, place: int, known: KnownLine) -> Optional[Stored]:
        """The stored value of differing line ``text`` (its value from ``start``), None when
        it is neither a simple line nor a line read before with the model's name."""
        if text[-1:] == "\n":
            m = SIMPLE_VALUE.fullmatch(text, start, len(text) - 1)
            if m is not None:
                value = simple_value(m)
                if len(_VALUES) >= _VALUES_LIMIT:
                    _VALUES.clear()
                _VALUES[text[start:]] = value
                return value
        hit = known(text)
        if hit is None or hit[0] != self.layout.keys[place] or hit[1][0] != self.layout.spellings[place]:
            return None
        return plain_form(hit[1][1])


# Values read by shapes, one object for equal ones (a cluster's jobs share their Cmd, QDate,
# Iwd...).  Integers and strings apart (1 and True, or 0.0 and -0.0, are equal keys).
_SHARED_INTS: dict[int, int] = {}
_SHARED_STRINGS: dict[str, str] = {}
_SHARED_LIMIT = 1 << 13  # small enough to stay in the processor's cache
_LEARNING = 500  # ads a shape reads before it settles where values are worth sharing

_SHAPES_MADE = 32
_LINE_READS_PER_SHAPE = 8


# Number of lines -> the models of that length, the last one used first.
_MODELS: dict[int, list[_Model]] = {}
_MODELS_PER_LENGTH = 8
_MODELS_LIMIT = 512
_model_count = 0


def read_compacted(seg: list[str], text: str, known: KnownLine) -> Optional[SharedAttrs]:
    """The compacted storage of the ad of lines ``seg`` (each ended by ``"\\n"``, no blank
    line among them; ``text`` is them and the blank line after them, joined) when a model
    of its length reads it; None otherwise."""
    models = _MODELS.get(len(seg))
    if models is None:
        return None
    for i, model in enumerate(models):
        got = model.read(seg, text, known)
        if got is not None:
            if i:
                models.insert(0, models.pop(i))
            return got
    return None


def read_text(text: str, start: int, end: int, lines: int, known: KnownLine) -> "Optional[Ready]":
    """The ad of ``text[start:end]`` (``lines`` lines, each ended by ``"\\n"``, none blank,
    then a blank line) when a shape of a model of its length reads it; None otherwise (its
    lines then go to :func:`read_compacted`, which may make that shape)."""
    for model in _MODELS.get(lines, ()):
        for shape in model.shapes:
            m = shape.pattern.fullmatch(text, start, end)
            got = None if m is None else shape.read_match(m, known)
            if got is not None:
                return Ready(got, lines, shape)
    return None


class Ready:
    """An ad that :class:`Pieces` read whole, its number of lines and the shape that read it."""

    __slots__ = ("attrs", "lines", "shape")

    def __init__(self, attrs: SharedAttrs, lines: int, shape: _Shape) -> None:
        self.attrs, self.lines, self.shape = attrs, lines, shape


class Pieces:
    """What a text source gives an old-format reader that compacts: an ad that a shape reads
    whole (with the blank line after it) as a :class:`Ready`, everything else as lists of
    lines (an ad with the blank line after it, a stretch of blank lines, the rest of the
    text), so that a file's lines are made only for the ads a shape does not read.  Ads
    are read whole only while the reader says it is ``between`` ads (no comment open);
    otherwise its lines go to the reader one at a time."""

    def __init__(self, texts: Iterator[str], known: KnownLine, whole_ad: int) -> None:
        self.texts, self.known, self.whole_ad = texts, known, whole_ad
        self.between = True
        self.last: Optional[_Shape] = None  # the shape that read the last ad read whole

    def __iter__(self) -> Iterator["Ready | list[str]"]:
        carry = ""
        for body in self.texts:
            text = carry + body if carry else body
            carry = ""
            pos, n = 0, len(text)
            while pos < n:
                if not self.between:  # inside a comment the reader reads line by line
                    stop = text.find("\n", pos) + 1
                elif text[pos] == "\n":  # a blank line between ads
                    stop = pos + 1
                else:
                    # The shape that read the last ad most often reads this one (a cluster's
                    # jobs): tried first, without looking for the ad's end.
                    shape = self.last
                    m = None if shape is None else shape.pattern.match(text, pos)
                    if shape is not None and m is not None and m.end() - 1 - pos <= self.whole_ad:
                        got = shape.read_match(m, self.known)
                        if got is not None:
                            yield Ready(got, shape.lines, shape)
                            pos = m.end()
                            continue
                    found = text.find("\n\n", pos)
                    stop = found + 2 if found >= 0 else 0  # after the blank line ending the ad
                    if stop and stop - 1 - pos <= self.whole_ad:
                        ready = read_text(text, pos, stop, text.count("\n", pos, stop - 1), self.known)
                        if ready is not None:
                            self.last = ready.shape
                            yield ready
                            pos = stop
                            continue
                if not stop:  # no end in this block: the rest goes with the next one
                    carry = text[pos:]
                    break
                yield lines_of(text[pos:stop])
                pos = stop
        if carry:
            yield lines_of(carry)


def learn(seg: list[str], attrs: object) -> None:
    """Keep the ad of lines ``seg``, stored as ``attrs`` (one attribute per line, in order),
    as a model, unless its layout has one of that length already."""
    global _model_count
    if type(attrs) is not SharedAttrs:
        return
    layout = attrs.layout
    if len(layout.keys) != len(seg):
        return
    models = _MODELS.setdefault(len(seg), [])
    if any(m.layout is layout for m in models):
        return
    if _model_count >= _MODELS_LIMIT:
        forget()
        models = _MODELS.setdefault(len(seg), [])
    if len(models) >= _MODELS_PER_LENGTH:
        models.pop()
        _model_count -= 1
    models.insert(0, _Model(seg, attrs))
    _model_count += 1


def forget() -> None:
    """Drop every model and remembered value."""
    global _model_count
    _MODELS.clear()
    _VALUES.clear()
    _SHARED_INTS.clear()
    _SHARED_STRINGS.clear()
    _model_count = 0


__all__ = ["SIMPLE_VALUE", "Pieces", "Ready", "forget", "learn", "read_compacted", "read_text", "simple_value"]
