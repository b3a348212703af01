"""Columns of ClassAd values: a kind code per row plus typed payload arrays.

A :class:`Column` holds one value per row.  ``kind`` says which payload is
meaningful: ``i`` (int64) for integers and booleans (0/1), ``f`` (float64) for
reals, ``s`` (codes into a :class:`StringPool`) for strings, and the object
array ``o`` for everything else (lists, nested ads, times).  Undefined and
Error need no payload.  A :class:`Const` is a value that is the same on every
row; operators keep constants scalar as long as they can, which is what makes
one side of a match cost nothing per row.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Union

import numpy as np

from ..values import ERROR, UNDEFINED, ascii_lower

# Kind codes of a column.
K_UNDEF, K_ERROR, K_BOOL, K_INT, K_REAL, K_STR, K_OTHER = range(7)
KIND_NAMES = ("undefined", "error", "bool", "int", "real", "string", "other")


class StringPool:
    """Interned strings shared by the columns of one table.

    Every distinct string gets a code; ``fold`` maps a code to the code of its
    ASCII-lower-cased form, so case-insensitive equality is an integer test.
    """

    __slots__ = ("codes", "strings", "_fold", "_fold_arr", "_fcodes")

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.strings: list[str] = []
        self._fold: list[int] = []
        self._fcodes: dict[str, int] = {}
        self._fold_arr: Optional[np.ndarray] = None

    def code(self, s: str) -> int:
        """The code of ``s`` (interned on first sight)."""
        c = self.codes.get(s)
        if c is None:
            c = self.codes[s] = len(self.strings)
            self.strings.append(s)
            low = ascii_lower(s)
            fc = self._fcodes.get(low)
            if fc is None:
                fc = self._fcodes[low] = len(self._fcodes)
            self._fold.append(fc)
            self._fold_arr = None
        return c

    def folded(self) -> np.ndarray:
        """Code -> case-folded code, as an array."""
        if self._fold_arr is None:
            self._fold_arr = np.asarray(self._fold, dtype=np.int64)
        return self._fold_arr


class Const:
    """A value that is the same on every row."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Const({self.value!r})"


def kind_of(v: Any) -> int:
    """The kind code of one scalar value."""
    t = type(v)
    if t is bool:
        return K_BOOL
    if t is int:
        return K_INT
    if t is float:
        return K_REAL
    if t is str:
        return K_STR
    if v is UNDEFINED:
        return K_UNDEF
    if v is ERROR:
        return K_ERROR
    return K_OTHER


def kinds(n: int, kind: int) -> np.ndarray:
    """A kind array of ``n`` rows all ``kind`` (``np.full`` without its Python-level steps)."""
    out = np.empty(n, np.int8)
    out.fill(kind)
    return out


class Column:
    """Values of a sequence of rows (see the module docstring for the layout).

    The real and string payloads may be held as None, standing for all zeros: most
    columns (booleans, integers) never use them, and a column that does not hold them
    costs nothing to take, copy or put for them.  Reading ``f`` or ``s`` gives the array
    (made on first read); :meth:`f_or_none` and :meth:`s_or_none` tell whether there is one.

    ``uni`` is the kind of every row when the column was made so (a comparison's
    booleans, a table column of one kind), -1 when not known: it spares looking at the
    kinds again.  Only :meth:`put` writes into a column marked so (and clears the mark);
    code that writes into ``kind`` directly does so on columns it made unmarked."""

    __slots__ = ("kind", "i", "_f", "_s", "o", "pool", "uni")

    def __init__(
        self,
        kind: np.ndarray,
        i: np.ndarray,
        f: Optional[np.ndarray],
        s: Optional[np.ndarray],
        o: Optional[np.ndarray],
        pool: StringPool,
        uni: int = -1,
    ) -> None:
        self.kind, self.i, self._f, self._s, self.o, self.pool = kind, i, f, s, o, pool
        self.uni = uni

    @property
    def f(self) -> np.ndarray:
        """The real payload (float64)."""
        a = self._f
        if a is None:
            a = self._f = np.zeros(len(self.kind), np.float64)
        return a

    @f.setter
    def f(self, a: np.ndarray) -> None:
        self._f = a

    @property
    def s(self) -> np.ndarray:
        """The string payload (codes into the pool, int64)."""
        a = self._s
        if a is None:
            a = self._s = np.zeros(len(self.kind), np.int64)
        return a

    @s.setter
    def s(self, a: np.ndarray) -> None:
        self._s = a

    def f_or_none(self) -> Optional[np.ndarray]:
        """The real payload, None when it is zero on every row and was never made."""
        return self._f

    def s_or_none(self) -> Optional[np.ndarray]:
        """The string payload, None when it is zero on every row and was never made."""
        return self._s

    def __len__(self) -> int:
        return len(self.kind)

    # ---- building ---------------------------------------------------------------------

    @classmethod
    def empty(cls, n: int, pool: StringPool, kind: int = K_UNDEF) -> "Column":
        """``n`` rows all of ``kind`` with zero payloads."""
        return cls(kinds(n, kind), np.zeros(n, np.int64), None, None, None, pool)

    @classmethod
    def of_bools(cls, b: np.ndarray, pool: StringPool) -> "Column":
        """A boolean column from a bool array."""
        n = len(b)
        return cls(kinds(n, K_BOOL), b.astype(np.int64), None, None, None, pool, K_BOOL)

    @classmethod
    def of_values(cls, values: Iterable[Any], pool: StringPool) -> "Column":
        """A column from language values (as the scalar evaluator returns them)."""
        values = list(values)
        n = len(values)
        col = cls.empty(n, pool)
        kind, iv, fv, sv = col.kind, col.i, col.f, col.s
        obj = None
        for r, v in enumerate(values):
            t = type(v)
            if t is bool:
                kind[r] = K_BOOL
                iv[r] = v
            elif t is int:
                kind[r] = K_INT
                iv[r] = v
            elif t is float:
                kind[r] = K_REAL
                fv[r] = v
            elif t is str:
                kind[r] = K_STR
                sv[r] = pool.code(v)
            elif v is UNDEFINED:
                pass
            elif v is ERROR:
                kind[r] = K_ERROR
            else:
                kind[r] = K_OTHER
                if obj is None:
                    obj = np.empty(n, dtype=object)
                obj[r] = v
        col.o = obj
        return col

    @classmethod
    def broadcast(cls, value: Any, n: int, pool: StringPool) -> "Column":
        """``n`` rows holding ``value``."""
        k = kind_of(value)
        col = cls.empty(n, pool, k)
        if k == K_BOOL or k == K_INT:
            col.i[:] = int(value)
        elif k == K_REAL:
            col.f[:] = value
        elif k == K_STR:
            col.s[:] = pool.code(value)
        elif k == K_OTHER:
            col.o = np.empty(n, dtype=object)
            col.o[:] = [value] * n
        col.uni = k
        return col

    # ---- reading ----------------------------------------------------------------------

    def value(self, r: int) -> Any:
        """The language value of row ``r``."""
        k = self.kind[r]
        if k == K_BOOL:
            return bool(self.i[r])
        if k == K_INT:
            return int(self.i[r])
        if k == K_REAL:
            return float(self.f[r])
        if k == K_STR:
            return self.pool.strings[self.s[r]]
        if k == K_UNDEF:
            return UNDEFINED
        if k == K_ERROR:
            return ERROR
        return self.o[r]  # type: ignore[index]

    def values_at(self, rows: list[int]) -> list:
        """The language values of ``rows`` (what :meth:`value` gives for each), read in one
        pass when the rows are all of one kind."""
        if not rows:
            return []
        k = self.kind[rows]
        first = int(k[0])
        if (k != first).any():
            return [self.value(r) for r in rows]
        if first == K_OTHER:
            return self.o[rows].tolist()  # type: ignore[index, no-any-return]
        if first == K_INT:
            return self.i[rows].tolist()  # type: ignore[no-any-return]
        if first == K_BOOL:
            return (self.i[rows] != 0).tolist()  # type: ignore[no-any-return]
        if first == K_REAL:
            return self.f[rows].tolist()  # type: ignore[no-any-return]
        if first == K_STR:
            strings = self.pool.strings
            return [strings[c] for c in self.s[rows].tolist()]
        return [UNDEFINED if first == K_UNDEF else ERROR] * len(rows)

    def to_values(self) -> list:
        """Every row's value, as the scalar evaluator returns values."""
        return [self.value(r) for r in range(len(self.kind))]

    def take(self, idx: np.ndarray) -> "Column":
        """The rows at positions ``idx``."""
        # ``take`` gathers numbers faster than indexing; objects the other way round.
        f, s, o = self._f, self._s, self.o
        return Column(
            self.kind.take(idx),
            self.i.take(idx),
            None if f is None else f.take(idx),
            None if s is None else s.take(idx),
            None if o is None else o[idx],
            self.pool,
            self.uni,
        )

    def put(self, pos: np.ndarray, part: "Values") -> None:
        """Overwrite the rows at positions ``pos`` with ``part``."""
        if len(pos) == 0:
            return
        self.uni = -1
        col = as_column(part, len(pos), self.pool)
        self.kind[pos] = col.kind
        self.i[pos] = col.i
        f = col._f
        if f is not None:
            self.f[pos] = f
        elif self._f is not None:
            self._f[pos] = 0.0
        s = col._s
        if s is not None:
            self.s[pos] = s
        elif self._s is not None:
            self._s[pos] = 0
        if col.o is not None:
            if self.o is None:
                self.o = np.empty(len(self.kind), dtype=object)
            self.o[pos] = col.o

    def copy(self) -> "Column":
        """An independent copy."""
        f, s, o = self._f, self._s, self.o
        return Column(
            self.kind.copy(),
            self.i.copy(),
            None if f is None else f.copy(),
            None if s is None else s.copy(),
            None if o is None else o.copy(),
            self.pool,
            self.uni,
        )

    def is_true(self) -> np.ndarray:
        """Rows whose value counts as true (bool, or a non-zero number)."""
        k = self.kind
        out = ((k == K_BOOL) | (k == K_INT)) & (self.i != 0)
        if self._f is not None:
            out |= (k == K_REAL) & (self._f != 0.0)
        return out

    def numbers(self) -> tuple[np.ndarray, np.ndarray]:
        """(float value, is-number mask): int, real and bool (as 0/1) rows are numbers."""
        k = self.kind
        isnum = (k >= K_BOOL) & (k <= K_REAL)  # the number kinds are consecutive codes
        vals = np.where(k == K_REAL, 0.0 if self._f is None else self._f, self.i.astype(np.float64))
        return vals, isnum


Values = Union[Column, Const]


def _narrow(a: np.ndarray) -> Optional[np.ndarray]:
    """``a`` (integers) in the smallest integer type that holds it exactly; None when all zero."""
    if not a.any():
        return None
    lo, hi = int(a.min()), int(a.max())
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= lo and hi <= info.max:
            return a.astype(dtype)
    return a.copy()


def _narrow_real(a: np.ndarray) -> Optional[np.ndarray]:
    """Reals as float32 when that keeps every bit of every value (small integers, halves);
    None when all are +0.0 (compared by bits: -0.0 is kept)."""
    bits = a.view(np.int64)
    if not bits.any():
        return None
    with np.errstate(over="ignore", invalid="ignore"):  # too large: inf, then refused below
        small = a.astype(np.float32)
    if np.array_equal(small.astype(np.float64).view(np.int64), bits):
        return small
    return a.copy()


class Packed:
    """A column set aside for later (a memo entry) in as few bytes as its values need:
    one kind code when every row has the same kind, a bit per row for a boolean column,
    integer payloads in the smallest type that holds them, payloads that are all zero
    not at all.  A boolean column of 10,000 rows takes 1.25 KB instead of 250 KB."""

    __slots__ = ("n", "kind", "bits", "i", "f", "s", "o", "pool", "nbytes")

    def __init__(self, col: Column) -> None:
        k = col.kind
        self.n = n = len(k)
        first = int(k[0]) if n else K_UNDEF
        self.kind: Union[int, np.ndarray] = first if n == 0 or not (k != first).any() else k.copy()
        self.bits: Optional[np.ndarray] = None
        self.i: Optional[np.ndarray] = None
        if type(self.kind) is int and self.kind == K_BOOL:
            self.bits = np.packbits(col.i != 0)
        else:
            self.i = _narrow(col.i)
        self.f = None if col._f is None else _narrow_real(col._f)
        self.s = None if col._s is None else _narrow(col._s)
        self.o = None if col.o is None else col.o.copy()
        self.pool = col.pool
        self.nbytes = (
            64
            + sum(a.nbytes for a in (self.bits, self.i, self.f, self.s, self.o) if a is not None)
            + (0 if type(self.kind) is int else n)
        )

    @classmethod
    def of_bits(cls, bits: np.ndarray, pool: StringPool) -> "Packed":
        """A boolean column packed from ``bits`` (one 0/1 byte per row)."""
        out = cls.__new__(cls)
        out.n = len(bits)
        out.kind, out.bits, out.i, out.f, out.s, out.o, out.pool = (
            K_BOOL,
            np.packbits(bits),
            None,
            None,
            None,
            None,
            pool,
        )
        out.nbytes = 64 + out.bits.nbytes
        return out

    def moved(
        self, rows: Optional[np.ndarray], pos: Optional[np.ndarray], part: Optional[Column]
    ) -> Optional["Packed"]:
        """What ``Packed`` makes of ``self.unpack(rows)`` with ``part`` put at the positions
        ``pos`` (None: nothing put), made in the packed form: each payload picked at
        ``rows`` (None: every row, in order) as it is kept, ``part`` written into it (a
        payload widened only when ``part``'s values need it), never unpacked to full width.
        The same values, though a payload may be kept wider than :func:`_narrow` would keep
        it.  None (nothing made) for a column of bits or of other values, or when the
        result would be a column of booleans alone (kept as bits): made the long way then."""
        if self.bits is not None or self.o is not None:
            return None
        if part is not None and (pos is None or not len(pos)):
            part = None
        if part is not None and part.o is not None:
            return None
        n = self.n if rows is None else len(rows)
        kind: Any = self.kind
        if type(kind) is int:
            if part is not None and bool((part.kind != kind).any()):
                kind = kinds(n, kind)
                kind[pos] = part.kind
        else:
            kind = _picked(kind, rows)
            if part is not None:
                kind[pos] = part.kind
            first = int(kind[0]) if n else K_UNDEF
            if n == 0 or not (kind != first).any():
                kind = first
        if type(kind) is int and kind == K_BOOL:
            return None
        out = Packed.__new__(Packed)
        out.n, out.kind, out.bits, out.pool, out.o = n, kind, None, self.pool, None
        if part is None:
            out.i, out.f, out.s = (None if a is None else _picked(a, rows) for a in (self.i, self.f, self.s))
        else:
            out.i = _written_ints(self.i, rows, pos, part.i, n)  # type: ignore[arg-type]
            out.f = _written_reals(self.f, rows, pos, part._f, n)  # type: ignore[arg-type]
            out.s = _written_ints(self.s, rows, pos, part._s, n)  # type: ignore[arg-type]
        out.nbytes = (
            64 + sum(a.nbytes for a in (out.i, out.f, out.s) if a is not None) + (0 if type(out.kind) is int else n)
        )
        return out

    def bits_at(self, rows: Optional[np.ndarray]) -> Optional[np.ndarray]:
        """For a column of booleans only: each row's bit (0/1 bytes, a new array), of every
        row or of the rows at positions ``rows``; None for any other column."""
        if self.bits is None:
            return None
        every = np.unpackbits(self.bits, count=self.n)
        return every if rows is None else every.take(rows)

    def unpack(self, rows: Optional[np.ndarray] = None) -> Column:
        """A new column of every row, or of the rows at positions ``rows``."""
        m = self.n if rows is None else len(rows)

        def part(a: np.ndarray, dtype: Any) -> np.ndarray:
            # Picking rows makes a new array already: widened only if it must be.
            return a.astype(dtype) if rows is None else a.take(rows).astype(dtype, copy=False)

        kind = self.kind
        if self.bits is None:
            ints = np.zeros(m, np.int64) if self.i is None else part(self.i, np.int64)
        elif rows is None:
            ints = np.unpackbits(self.bits, count=self.n).astype(np.int64)
        else:  # the bits asked for (unpacking them all and picking is faster than picking bits)
            ints = np.unpackbits(self.bits, count=self.n).take(rows).astype(np.int64)
        return Column(
            part(kind, np.int8) if isinstance(kind, np.ndarray) else kinds(m, kind),
            ints,
            None if self.f is None else part(self.f, np.float64),
            None if self.s is None else part(self.s, np.int64),
            None if self.o is None else (self.o.copy() if rows is None else self.o[rows]),
            self.pool,
            -1 if isinstance(kind, np.ndarray) else kind,
        )


def _picked(a: np.ndarray, rows: Optional[np.ndarray]) -> np.ndarray:
    """A new array of ``a``'s values at the positions ``rows`` (None: every one)."""
    return a.copy() if rows is None else a.take(rows)


def _written_ints(
    a: Optional[np.ndarray], rows: Optional[np.ndarray], pos: np.ndarray, values: Optional[np.ndarray], n: int
) -> Optional[np.ndarray]:
    """A packed integer payload (``a``, None for all zeros) picked at ``rows`` with
    ``values`` (int64, None for zeros) written at ``pos``, in ``a``'s type unless the
    values need a wider one (see :func:`_narrow`)."""
    if values is None or not values.any():
        if a is None:
            return None
        out = _picked(a, rows)
        out[pos] = 0
        return out
    lo, hi = int(values.min()), int(values.max())
    if a is not None:
        info = np.iinfo(a.dtype)
        if info.min <= lo and hi <= info.max:
            out = _picked(a, rows)
            out[pos] = values
            return out
        lo, hi = min(lo, int(info.min)), max(hi, int(info.max))
    dtype: Any = np.int64
    for small in (np.int8, np.int16, np.int32):
        info = np.iinfo(small)
        if info.min <= lo and hi <= info.max:
            dtype = small
            break
    out = np.zeros(n, dtype) if a is None else _picked(a, rows).astype(dtype)
    out[pos] = values
    return out


def _written_reals(
    a: Optional[np.ndarray], rows: Optional[np.ndarray], pos: np.ndarray, values: Optional[np.ndarray], n: int
) -> Optional[np.ndarray]:
    """A packed real payload (``a``, None for all +0.0) picked at ``rows`` with ``values``
    (float64, None for zeros) written at ``pos``, in ``a``'s type unless single precision
    does not hold the values bit for bit (see :func:`_narrow_real`)."""
    if values is None or not values.view(np.int64).any():
        if a is None:
            return None
        out = _picked(a, rows)
        out[pos] = 0.0
        return out
    if a is None or a.dtype == np.float32:
        with np.errstate(over="ignore", invalid="ignore"):
            single = values.astype(np.float32)
        if not np.array_equal(single.astype(np.float64).view(np.int64), values.view(np.int64)):
            out = np.zeros(n, np.float64) if a is None else _picked(a, rows).astype(np.float64)
            out[pos] = values
            return out
        out = np.zeros(n, np.float32) if a is None else _picked(a, rows)
        out[pos] = single
        return out
    out = _picked(a, rows)
    out[pos] = values
    return out


def as_column(v: Values, n: int, pool: StringPool) -> Column:
    """``v`` as a column of ``n`` rows."""
    return v if type(v) is Column else Column.broadcast(v.value, n, pool)  # type: ignore[union-attr]


def merge(n: int, parts: list[tuple[np.ndarray, Values]], pool: StringPool) -> Column:
    """A column of ``n`` rows assembled from (positions, values) parts; rows no part
    covers are Undefined."""
    out = Column.empty(n, pool)
    for pos, part in parts:
        out.put(pos, part)
    return out


__all__ = [
    "Column",
    "Const",
    "Packed",
    "StringPool",
    "Values",
    "as_column",
    "kind_of",
    "kinds",
    "merge",
    "K_UNDEF",
    "K_ERROR",
    "K_BOOL",
    "K_INT",
    "K_REAL",
    "K_STR",
    "K_OTHER",
    "KIND_NAMES",
]
