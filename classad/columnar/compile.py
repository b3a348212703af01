"""Evaluating one expression over every row of an :class:`AdTable` at once.

An evaluation has two sides: the *rows* (each ad of the table in turn) and an
optional *fixed* ad, the same for every row.  An expression lives on one side
(its scope); ``MY`` is that side's ad and ``TARGET`` the other side's, and an
unscoped name missing from its own ad is looked up in the other one (except in
strict mode), exactly as :mod:`classad.evaluate` resolves names in a match.

The walk mirrors the scalar evaluator node by node.  Values that do not depend
on the row stay :class:`Const` (so the fixed ad's own attributes are computed
once), the rest become :class:`Column` objects.  Lazy operators evaluate their
right side only on the rows that need it.  Whatever has no vector form -- list
and ad values, times, special names such as ``parent``, most functions -- is
handed to the scalar evaluator for just the rows concerned, with an evaluation
state that reproduces the scalar one (partner ad, circular-reference guard).
"""

from __future__ import annotations

import copy
import weakref
from typing import Any, Callable, Iterator, Optional, Union

import numpy as np

from .. import ast
from ..evaluate import MAX_EVAL_DEPTH, CallContext, evaluate_node
from ..functions import registry
from ..operators import BINARY, UNARY, meta_equal as scalar_meta_equal
from ..values import ERROR, UNDEFINED, ListValue, RelTime, truthiness
from . import ops
from .column import (
    K_BOOL,
    K_ERROR,
    K_INT,
    K_OTHER,
    K_REAL,
    K_STR,
    K_UNDEF,
    Column,
    Const,
    Packed,
    Values,
    as_column,
    kinds,
)
from .families import Family, Hole, Variants, variants
from .functions import NUMERIC
from .memo import ABSENT, CallResults, MemoEntry, Reads, SharedMemo, token
from .rowonly import Kept, RowOnly
from .stacked import StackedRows
from .table import HOLDS_EXPR, HOLDS_NOTHING, AdTable

ROW, FIXED = 0, 1

# A combination's value on each row as one boolean array, or one boolean for all rows alike.
Bits = Union[np.ndarray, np.bool_]

# No variants found among an attribute's expressions (AttrColumn.variants).
_NO_VARIANTS = False


class _TemplateFallback(Exception):
    """A family's template met what the scalar evaluator would have to answer."""


class _NotEager(Exception):
    """An evaluation made ahead of need (see :meth:`Run.logical`) met something it must not
    do for rows nobody asked for: a scalar fallback, an expression to evaluate."""


class _WouldDraw(Exception):
    """An evaluation for rows nobody asked for was about to draw a random number."""


class _NoDraws:
    """A random source that refuses every draw (see :meth:`Run._unasked`)."""

    def __getattr__(self, name: str) -> Any:
        raise _WouldDraw


_NO_DRAWS = _NoDraws()
# What :meth:`Run._bring_stored` answers when bringing a result up to date would draw.
_DRAWS = object()
# What :meth:`Run._stored_result` answers for a result of an older generation not to be brought.
_OLDER = object()


# At most this many rows are computed in one walk for several shared results (Run._stacked_parts).
_STACKED_ROWS = 1 << 18
# A shared result not asked for in this many generations is no longer brought along by another's.
_STACKED_IDLE = 8


class _NotStackable(Exception):
    """A walk standing for several runs met what it cannot do for them (see :class:`_Stacked`)."""


# Names whose lookup involves more than the ad's own attributes and its partner: the
# names of a whole ad or of a match's context ads, and ``currenttime`` (the clock where no
# ad defines it).
SPECIAL_NAMES = frozenset(
    {
        "parent",
        "self",
        "toplevel",
        "root",
        "my",
        "currenttime",
        "target",
        "other",
        "ad",
        "symmetricmatch",
        "leftmatchesright",
        "rightmatchesleft",
        "leftrankvalue",
        "rightrankvalue",
        "lctx",
        "rctx",
        "left",
        "right",
    }
)
_COMPOUND = frozenset({ast.Binary, ast.Unary, ast.Conditional, ast.Elvis, ast.Call})
_ARITH = frozenset("+-*/%")
_COMPARE = frozenset({"==", "!=", "<", "<=", ">", ">="})
_BITWISE = frozenset({"&", "|", "^", "<<", ">>", ">>>"})
_PURE_MODULES = frozenset(
    {
        "classad.functions.types",
        "classad.functions.math",
        "classad.functions.strings",
        "classad.functions.stringlists",
        "classad.functions.lists",
        "classad.functions.regex",
        "classad.functions.pcre",
    }
)
# Modules whose functions (but ``random``) give results that depend on their argument
# values alone; the list functions read a list argument by its elements' values.
_VALUE_ONLY_MODULES = frozenset(
    {
        "classad.functions.types",
        "classad.functions.math",
        "classad.functions.strings",
        "classad.functions.stringlists",
        "classad.functions.lists",
    }
)
# Operators whose column forms decide every row of numbers, strings, Undefined and Error.
_EAGER_OPS = _COMPARE | _ARITH | frozenset({"is", "isnt"})
# A combination that failed to be one boolean array (Run._fused) in this many runs in a row is
# tried again only once in _FUSED_RETRY runs.
_FUSED_FAILURES = 8
_FUSED_RETRY = 32
# Fewer rows than this: a side is evaluated only where needed (picking those rows costs little).
_AHEAD_ROWS = 2048
_TYPE_TESTS = {
    "isundefined": (K_UNDEF,),
    "iserror": (K_ERROR,),
    "isstring": (K_STR,),
    "isinteger": (K_INT,),
    "isreal": (K_REAL,),
    "isboolean": (K_BOOL,),
}


def _pure(entry: Any) -> bool:
    """Whether a registered function's result depends on its argument values only, at
    least within one evaluation (an implementation may say so with a true
    ``stable_in_evaluation`` attribute)."""
    if entry.kind != "eager":
        return False
    if getattr(entry.impl, "stable_in_evaluation", False):
        return True
    return getattr(entry.impl, "__module__", "") in _PURE_MODULES and entry.name.lower() != "random"


class _Entries:
    """The fixed ad's attribute entries as one run sees them: each read from the ad's
    storage once, on first use (a run reads a few of the fixed ad's many attributes)."""

    __slots__ = ("_source", "_seen")

    def __init__(self, source: Any) -> None:
        self._source = source
        self._seen: dict[str, Any] = {}

    def get(self, lname: str) -> Any:
        """The ``(spelling, node)`` entry of ``lname``, None when the ad has none."""
        try:
            return self._seen[lname]
        except KeyError:
            entry = self._seen[lname] = self._source.get(lname)
            return entry

    def __contains__(self, lname: str) -> bool:
        return self.get(lname) is not None

    def __getitem__(self, lname: str) -> Any:
        entry = self.get(lname)
        if entry is None:
            raise KeyError(lname)
        return entry


class Run:
    """One evaluation over a table: the two sides, the state, per-run caches."""

    def __init__(self, table: AdTable, fixed: Any, state: Any, row_is_my: bool) -> None:
        self.t = table
        self.fixed = fixed
        self.st = state
        self.strict = bool(state.strict)
        self.row_is_my = row_is_my
        self.pool = table.pool
        self.fixed_attrs = _Entries(fixed._attrs if fixed is not None else {})
        self._fixed_memo: dict = {}
        self._row_memo: dict = {}
        self.fallbacks = 0
        # Row attributes are shared with other runs over the table, keyed by what they
        # read of the fixed ad; ``recording`` holds the reads of the attributes being
        # evaluated (innermost last).
        self.shared: Optional[SharedMemo] = None if table.nested else table.shared_memo()
        # Results of value-only function calls (the table's, see CallResults).
        self.calls: Optional[CallResults] = None if self.shared is None else self.shared.calls
        self.recording: list[Reads] = []
        # Row-only sub-expressions shared across evaluations (off while computing one).
        if table.row_only is None and not table.nested:
            table.row_only = RowOnly(table, SPECIAL_NAMES, _pure)
        self.row_only: Optional[RowOnly] = table.row_only
        # TARGET.x / OTHER.x in the fixed ad's expressions name the row's attributes, unless
        # the fixed ad defines ``target`` or ``other`` itself.
        self.partner_plain = "target" not in self.fixed_attrs and "other" not in self.fixed_attrs
        # The families being evaluated (classad.columnar.families): their rows and hole
        # columns by family key, and the ids of their template nodes.
        self._holes: dict[int, _Held] = {}
        self._template_ids: frozenset = frozenset()
        # Set while a side is evaluated ahead of need (see :meth:`logical`).
        self.eager = False
        # Ids of combinations found not to evaluate as one boolean array (see :meth:`_fused`).
        self._unfused: set[int] = set()

    def note(self, key: Any, tok: Any) -> None:
        """Record a read of the fixed ad (token None: a read that cannot be shared)."""
        for reads in self.recording:
            reads.note(key, tok)

    # ---- the scalar fallback ------------------------------------------------------------

    def scalar(self, node: ast.Node, scope: int, rows: np.ndarray, active: frozenset) -> Column:
        """``node`` evaluated by the scalar evaluator on ``rows``."""
        if self.eager and len(rows):
            raise _NotEager
        if self._template_ids and id(node) in self._template_ids:
            raise _TemplateFallback
        st, fixed, ads = self.st, self.fixed, self.t.ads
        if self.recording and len(rows):
            self.note(("scalar",), None)
        if len(rows):
            self.t.read_any()
        saved = (st.my, st.target, st.active, st.depth, st._match)
        out = []
        self.fallbacks += len(rows)
        try:
            for r in rows.tolist():
                ad = ads[r]
                if self.row_is_my:
                    st.my, st.target = ad, fixed
                else:
                    st.my, st.target = fixed, ad
                st._match = None
                st.active = {(id(ad) if side == ROW else id(fixed), name) for side, name in active}
                st.depth = len(active)
                try:
                    v = evaluate_node(node, ad if scope == ROW else fixed, st)
                except RecursionError:
                    v = ERROR
                out.append(v)
        finally:
            st.my, st.target, st.active, st.depth, st._match = saved
        return Column.of_values(out, self.pool)

    def merge_fallback(
        self, node: ast.Node, scope: int, rows: np.ndarray, active: frozenset, result: Column, fb: Optional[np.ndarray]
    ) -> Column:
        """``result`` with the rows of mask ``fb`` replaced by scalar evaluation."""
        if fb is not None:
            pos = fb.nonzero()[0]
            result.put(pos, self.scalar(node, scope, rows[pos], active))
        return result

    # ---- the walk -------------------------------------------------------------------------

    def ev(self, node: Any, scope: int, rows: np.ndarray, active: frozenset) -> Values:
        """The value of ``node`` (scope ``scope``) on each of ``rows``."""
        t = type(node)
        if t is ast.Literal:
            v = node.value
            return Const(float(v.secs) if type(v) is RelTime else v)
        if t is ast.Paren:
            return self.ev(node.inner, scope, rows, active)
        if t in _COMPOUND and self.row_only is not None:
            if scope == ROW:
                shared = self.row_only_value(node, rows, active)
                if shared is not None:
                    return shared
            elif self.partner_plain:
                twin = self.row_only.partner_form(node)
                if twin is not None:
                    shared = self.row_only_value(twin, rows, active)
                    if shared is not None:
                        return shared
        if t is ast.Binary:
            return self.binary(node, scope, rows, active)
        if t is ast.AttrRef:
            if node.absolute:
                return self.scalar(node, scope, rows, active)
            r = self.name(node.lname, scope, rows, active)
            return self.scalar(node, scope, rows, active) if r is None else r
        if t is ast.Select:
            r = self.select(node, scope, rows, active)
            return self.scalar(node, scope, rows, active) if r is None else r
        if t is ast.Unary:
            return self.unary(node, scope, rows, active)
        if t is ast.Conditional:
            return self.choose(node, node.cond, node.then, node.other, scope, rows, active)
        if t is ast.Elvis:
            return self.elvis(node, scope, rows, active)
        if t is ast.Call:
            return self.call(node, scope, rows, active)
        if t is ast.ListExpr and all(type(i) is ast.Literal for i in node.items):
            return Const(ListValue(node.items, self.fixed if scope == FIXED else None))
        if t is Hole:
            held, cols = self._holes[node.family][:2]
            col = cols[node.k]
            return col if len(rows) == len(held) else col.take(held.searchsorted(rows))
        return self.scalar(node, scope, rows, active)

    def row_only_value(self, node: Any, rows: np.ndarray, active: frozenset, as_bools: bool = False) -> Any:
        """``node``'s value on ``rows`` from the table's row-only values (None: evaluate it
        here); with ``as_bools``, a kept value of booleans only as a boolean array."""
        ro = self.row_only
        assert ro is not None
        code, depth = ro.shape(node)
        if depth < 0 or len(active) + depth + 1 >= MAX_EVAL_DEPTH:
            return None
        key = (code, self.strict, self.fixed is None)
        every = rows is self.t.all_rows
        kept = ro.get(key)
        if kept is not None and kept.generation != self.t.generation:
            kept = self._bring_row_only(ro, key, kept)
        if kept is not None:
            self.depends(kept.deps)
            held = kept.value
            if type(held) is Const:
                return held
            if as_bools:
                bits = held.bits_at(None if every else rows)  # type: ignore[union-attr]
                if bits is not None:
                    return bits.view(bool)
            return held.unpack(None if every else rows)  # type: ignore[union-attr]
        if not ro.worth_computing(key):
            return None
        v, deps = self._row_only_compute(node, self.t.all_rows)
        ro.put(key, v, node, deps)
        if type(v) is Const or every:
            return v
        return v.take(rows)  # type: ignore[union-attr]

    def _row_only_compute(self, node: Any, rows: np.ndarray) -> tuple[Values, frozenset]:
        """A row-only ``node`` on ``rows``, and the attributes it read."""
        recording, self.recording, ro, self.row_only = self.recording, [], self.row_only, None
        eager, self.eager = self.eager, False
        deps: set = set()
        watch = self.t.watch
        watch.append(deps)
        try:
            v = self.ev(node, ROW, rows, frozenset())
        finally:
            watch.pop()
            self.recording, self.row_only, self.eager = recording, ro, eager
        return v, frozenset(deps)

    def _bring_row_only(self, ro: RowOnly, key: tuple, kept: Kept) -> Optional[Kept]:
        """A row-only value of an older generation of the table brought to this one: its
        rows moved, the rows where an attribute it read changed computed again."""
        moved = self.t.history.bring(kept.generation, kept.deps)
        if moved is None:
            ro.drop(key)
            return None
        rows, stale = moved
        value = kept.value
        if stale is None and type(value) is Const:
            kept.generation = self.t.generation
            return kept
        n = self.t.n
        col = as_column(value, n, self.pool) if type(value) is Const else value.unpack(self.t.history.clipped(rows))  # type: ignore[union-attr, arg-type]
        deps = kept.deps
        if stale is not None:
            pos = self.t.history.positions(stale)
            part, more = self._row_only_compute(kept.node, pos)
            col.put(pos, part)
            deps = deps | more
        ro.put(key, col, kept.node, deps)
        return ro.get(key)

    def depends(self, deps: frozenset) -> None:
        """Note that the value being computed read the row attributes ``deps`` too."""
        for names in self.t.watch:
            names |= deps

    # ---- names ----------------------------------------------------------------------------

    def name(self, lname: str, scope: int, rows: np.ndarray, active: frozenset) -> Optional[Values]:
        """An unscoped name (None: leave it to the scalar evaluator)."""
        if lname in SPECIAL_NAMES:
            if lname != "currenttime":
                return None
            if scope == FIXED:
                if lname in self.fixed_attrs:
                    return self.fixed_attr(lname, rows, active)
                now = UNDEFINED if self.strict else int(self.st.now())
                if self.recording:
                    self.note(("a", lname, active), ABSENT)
                    self.note(("now",), token(now))
                return Const(now)
            ac = self.t.column(lname)
            if len(rows) and (ac.held_nowhere or (ac.holds[rows] == HOLDS_NOTHING).all()):
                # no row defines it (the usual case): the clock's
                now = UNDEFINED if self.strict else int(self.st.now())
                if self.recording:
                    self.note(("now",), token(now))
                return Const(now)
            col = self.row_attr(lname, rows, active)
            missing = ac.holds[rows] == HOLDS_NOTHING
            if missing.any():
                now = UNDEFINED if self.strict else int(self.st.now())
                if self.recording:
                    self.note(("now",), token(now))
                col = col.copy()
                col.put(missing.nonzero()[0], Const(now))
            return col
        if scope == FIXED:
            if lname in self.fixed_attrs:
                return self.fixed_attr(lname, rows, active)
            if self.recording:
                self.note(("a", lname, active), ABSENT)
            if self.strict:
                return Const(UNDEFINED)
            return self.row_attr(lname, rows, active)
        col = self.row_attr(lname, rows, active)
        if self.fixed is None or self.strict:
            return col
        ac = self.t.column(lname)
        if not ac.any_missing:  # every row holds it
            return col
        missing = ac.holds[rows] == HOLDS_NOTHING
        if not missing.any():
            return col
        if lname not in self.fixed_attrs:
            if self.recording:
                self.note(("a", lname, active), ABSENT)
            return col
        pos = missing.nonzero()[0]
        col = col.copy()
        col.put(pos, self.fixed_attr(lname, rows[pos], active))
        return col

    def chain(self, lname: str, side: int, rows: np.ndarray, active: frozenset) -> Optional[Values]:
        """``lname`` looked up in one side's ad only (what ``ad.name`` does)."""
        if lname in SPECIAL_NAMES:
            return None
        if side == FIXED:
            if lname in self.fixed_attrs:
                return self.fixed_attr(lname, rows, active)
            if self.recording:
                self.note(("a", lname, active), ABSENT)
            return Const(UNDEFINED)
        return self.row_attr(lname, rows, active)

    def select(self, node: ast.Select, scope: int, rows: np.ndarray, active: frozenset) -> Optional[Values]:
        """``MY.x``, ``TARGET.x``, ``OTHER.x``; None for any other selection."""
        base = node.base
        if type(base) is not ast.AttrRef or base.absolute or base.lname not in ("my", "target", "other"):
            return None
        b = base.lname
        if scope == FIXED:
            if b in self.fixed_attrs:
                return None
            if self.recording:
                self.note(("a", b, active), ABSENT)
        else:
            held = self.t.column(b)
            if not held.held_nowhere and (held.holds[rows] != HOLDS_NOTHING).any():
                return None
        has_target = self.fixed is not None
        if b == "my":
            if self.strict and not has_target:
                return Const(UNDEFINED)
            side = scope
        else:
            if not has_target:
                return Const(UNDEFINED)
            side = FIXED if scope == ROW else ROW
        return self.chain(node.lname, side, rows, active)

    def fixed_attr(self, lname: str, rows: np.ndarray, active: frozenset) -> Values:
        """Attribute ``lname`` of the fixed ad, evaluated in its scope."""
        recording = self.recording
        if not recording:
            return self._fixed_value(lname, rows, active)
        self.recording = []
        try:
            v = self._fixed_value(lname, rows, active)
        finally:
            self.recording = recording
        self.note(("a", lname, active), token(v.value) if type(v) is Const else None)
        return v

    def _fixed_value(self, lname: str, rows: np.ndarray, active: frozenset) -> Values:
        node = self.fixed_attrs[lname][1]
        if type(node) is ast.Literal:
            return Const(node.value)
        key = (FIXED, lname)
        if key in active:
            return Const(UNDEFINED)
        if len(active) >= MAX_EVAL_DEPTH:
            return Const(ERROR)
        memo_key = (lname, active)
        hit = self._fixed_memo.get(memo_key)
        if hit is not None:
            return hit
        if self.eager:
            raise _NotEager
        v = self.ev(node, FIXED, rows, active | {key})
        if type(v) is Const:
            self._fixed_memo[memo_key] = v
        return v

    def row_attr(self, lname: str, rows: np.ndarray, active: frozenset) -> Column:
        """Attribute ``lname`` of each row's ad in its own scope (Undefined where absent)."""
        ac = self.t.column(lname)
        if not ac.nodes:
            return ac.values if rows is self.t.all_rows else ac.take(rows)
        if self.eager and (self.shared is None or not self._plain_attr(lname)):
            # Ahead of need, but for one cheap expression (itself evaluated ahead of need).
            raise _NotEager
        if self.shared is not None:
            return self._shared_row_attr(lname, rows, active)
        full = rows is self.t.all_rows
        memo_key = (lname, active)
        if full:
            hit = self._row_memo.get(memo_key)
            if hit is not None:
                return hit
        col = self._row_values(lname, rows, active)
        if full:
            self._row_memo[memo_key] = col
        return col

    def _row_values(self, lname: str, rows: np.ndarray, active: frozenset) -> Column:
        ac = self.t.column(lname)
        key = (ROW, lname)
        if ac.one_expr and key not in active and len(active) < MAX_EVAL_DEPTH:
            # The expression's values are the column: no placeholder rows to fill in.
            v = self.ev(ac.nodes[0], ROW, rows, active | {key})
            return v.copy() if type(v) is Column else as_column(v, len(rows), self.pool)  # type: ignore[union-attr]
        col = ac.take(rows)
        pos = (ac.holds[rows] == HOLDS_EXPR).nonzero()[0]
        if key in active:
            col.put(pos, Const(UNDEFINED))
        elif len(active) >= MAX_EVAL_DEPTH:
            col.put(pos, Const(ERROR))
        else:
            inner = active | {key}
            groups = ac.group[rows[pos]]
            if len(ac.nodes) == 1:
                col.put(pos, self.ev(ac.nodes[0], ROW, rows[pos], inner))
            elif len(pos):
                pos, groups = self._by_family(ac, col, rows, pos, groups, inner)
            if len(ac.nodes) > 1 and len(pos):
                # Each group's positions in one pass (a stable sort keeps them ascending),
                # the groups in ascending order.
                order = np.argsort(groups, kind="stable")
                ordered = groups[order]
                cuts = (np.flatnonzero(ordered[1:] != ordered[:-1]) + 1).tolist()
                for start, end in zip([0, *cuts], [*cuts, len(order)]):
                    gpos = pos[order[start:end]]
                    col.put(gpos, self.ev(ac.nodes[int(ordered[start])], ROW, rows[gpos], inner))
        return col

    def _by_family(
        self, ac: Any, col: Column, rows: np.ndarray, pos: np.ndarray, groups: np.ndarray, inner: frozenset
    ) -> tuple[np.ndarray, np.ndarray]:
        """Put into ``col`` the values of the expression rows at ``pos`` whose expression
        belongs to a family (:mod:`classad.columnar.families`), each family evaluated once;
        the positions and groups left to evaluate one expression at a time."""
        found = ac.variants
        if found is None:
            found = ac.variants = variants(ac.nodes, _pure) or _NO_VARIANTS
        if found is _NO_VARIANTS:
            return pos, groups
        fam_of = found.family_codes[groups]
        left = fam_of < 0
        for f, fam in enumerate(found.families):
            at = (fam_of == f).nonzero()[0]
            if len(at) < 2:
                left[at] = True
                continue
            v = self.family_values(fam, self._hole_columns(found, f), rows[pos[at]], groups[at], inner, found.calls)
            if v is None:
                left[at] = True
            else:
                col.put(pos[at], v)
        return pos[left], groups[left]

    def _hole_columns(self, found: Variants, f: int) -> list[Column]:
        """Family ``f``'s literals as one column per hole, indexed by expression node (a
        node outside the family holds the first member's literals, never read)."""
        cols = found.holes.get(f)
        if cols is None:
            first = found.family_of.index(f)
            lits = [found.values[g] if fam == f else found.values[first] for g, fam in enumerate(found.family_of)]
            at = found.families[f].positions
            cols = found.holes[f] = [Column.of_values([v[k] for v in lits], self.pool) for k in at]
        return cols

    def family_values(
        self,
        fam: Family,
        hole_columns: list[Column],
        rows: np.ndarray,
        groups: np.ndarray,
        inner: frozenset,
        calls: Optional[dict] = None,
    ) -> Optional[Values]:
        """The template of ``fam`` on ``rows`` (each row's literals those of its expression,
        ``groups``, from the family's ``hole_columns``), None when it cannot stand for the
        expressions: it names a row attribute that holds expressions, or it meets a scalar
        fallback.  ``calls`` keeps the results of calls on the holes (:meth:`_variant_call`)."""
        for name in fam.names:
            if self.t.column(name).nodes:
                return None
        holes = [col.take(groups) for col in hole_columns]
        saved = self._holes.get(fam.key), self._template_ids
        self._holes[fam.key] = (rows, holes, groups, hole_columns, {} if calls is None else calls)
        self._template_ids = saved[1] | fam.ids
        try:
            return self.ev(fam.template, ROW, rows, inner)
        except _TemplateFallback:
            return None
        finally:
            self._template_ids = saved[1]
            if saved[0] is None:
                del self._holes[fam.key]
            else:
                self._holes[fam.key] = saved[0]

    def _current_tokens(self, keys: tuple, rows: np.ndarray) -> Optional[tuple]:
        """What this run's fixed ad gives for the reads ``keys`` (None: not comparable).

        Whether a run gets here depends on what its memo holds (the shapes stored for the
        key, whether it is computed afresh), so it draws no random number: a read that
        would draw (``RequestCpus = 1 + random(2)``) is not comparable."""
        outer = self.recording
        self.recording = []
        st = self.st
        source, st.random = st.random, _NO_DRAWS
        try:
            out: list[Any] = []
            entries = self.fixed_attrs
            for key in keys:
                if key[0] == "a":
                    entry = entries.get(key[1])
                    if entry is None:
                        out.append(ABSENT)
                        continue
                    node = entry[1]
                    if type(node) is ast.Literal:  # what _fixed_value gives a literal, at once
                        tok = token(node.value)
                    else:
                        v = self._fixed_value(key[1], rows, key[2])
                        tok = token(v.value) if type(v) is Const else None
                elif key[0] == "now":
                    tok = token(int(self.st.now()))
                else:
                    tok = None
                if tok is None:
                    return None
                out.append(tok)
            return tuple(out)
        except _WouldDraw:
            if source is _NO_DRAWS:
                raise  # the whole evaluation, made for rows not asked for, would draw
            return None
        finally:
            st.random = source
            self.recording = outer

    def _shared_row_attr(self, lname: str, rows: np.ndarray, active: frozenset) -> Column:
        """:meth:`row_attr` through the table's :class:`SharedMemo` (but for an attribute
        that only combines others, see :meth:`_combines`)."""
        if self._combines(lname):
            return self._row_values(lname, rows, active)
        return self._through_memo(
            (lname, active, self.strict, self.fixed is None),
            rows,
            lambda at: self._row_values(lname, at, active),
            self._plain_attr(lname),
        )

    def _plain_attr(self, lname: str) -> bool:
        """Whether every row holds ``lname`` as one expression, and that one :meth:`_plain`."""
        nodes = self.t.column(lname).nodes
        return len(nodes) == 1 and self._plain(nodes[0])

    def _plain(self, node: Any) -> bool:
        """Whether ``node`` is cheap to evaluate afresh over a table: comparisons (of
        arithmetic) of literals, names and ``MY``/``TARGET``/``OTHER`` selections (see
        :meth:`_simple`), such names and selections, and literals, combined with ``&&``,
        ``||`` and ``!`` (remembered by node in the table's memo).  Such an expression whose stored results seldom serve a later run
        as they are is computed for each run instead (:meth:`_memo_result`)."""
        shared = self.shared
        if shared is None:
            return _plain_shape(node)
        return _verdict(shared.plain, node, _plain_shape)

    def _combines(self, lname: str) -> bool:
        """Whether every expression the rows hold for ``lname`` only combines other attributes
        with ``&&``, ``||`` and ``!`` (``Requirements = START && WithinResourceLimits``).  Such
        an attribute is not stored in the shared memo: its parts are, each under what it
        reads of the fixed ad, and combining them costs less than keeping one more result
        per fixed ad and bringing it to every new generation of the table."""
        shared = self.shared
        assert shared is not None
        known = shared.combines
        for node in self.t.column(lname).nodes:
            seen = known.get(id(node))
            if seen is None or seen[0] is not node:
                if len(known) >= 1 << 16:
                    known.clear()
                seen = known[id(node)] = (node, _combination(node))
            if not seen[1]:
                return False
        return True

    def row_attr_true(self, lname: str, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` hold a true value of :meth:`row_attr` (at the top), read from a
        shared boolean result's bits where one holds it (see :meth:`_memo_true`)."""
        if self.shared is None or not self.t.column(lname).nodes:
            return self.row_attr(lname, rows, frozenset()).is_true()
        if self._combines(lname):
            chained = self._chain_true(lname, rows)
            return self.row_attr(lname, rows, frozenset()).is_true() if chained is None else chained
        return self._attr_true(lname, rows, frozenset())

    def _attr_true(self, lname: str, rows: np.ndarray, active: frozenset) -> np.ndarray:
        """:meth:`row_attr_true` of a row attribute kept in the shared memo (``active``: the
        attributes being evaluated around it)."""
        plain = self._plain_attr(lname)
        return self._memo_true(
            (lname, active, self.strict, self.fixed is None),
            rows,
            lambda at: self._row_values(lname, at, active),
            plain,
            (lambda at: self._attr_bits(lname, at, active)) if plain else None,
        )

    def _attr_bits(self, lname: str, rows: np.ndarray, active: frozenset) -> Optional[np.ndarray]:
        """Where the row attribute ``lname``, one :meth:`_plain` combination on every row, is
        true on ``rows``, as :meth:`_fused_true` finds it (None: not so)."""
        key, ac = (ROW, lname), self.t.column(lname)
        if not ac.one_expr or key in active or len(active) >= MAX_EVAL_DEPTH:
            return None  # not what _row_values evaluates
        return self._fused_true(ac.nodes[0], ROW, rows, active | {key})

    def _chain_true(self, lname: str, rows: np.ndarray) -> Optional[np.ndarray]:
        """:meth:`row_attr_true` of an attribute every row holds as one ``&&`` of names
        (``Requirements = START && (WithinResourceLimits)``), each name's true rows read as
        :meth:`row_attr_true` reads a shared attribute's (a stored result's bits, a cheap
        one's boolean array), never made into columns and combined.  Each name is evaluated
        on the rows the lazy walk evaluates it on (those where the names before it are true
        or Undefined), so no other row draws a random number; the rows where all of them
        are true are the rows where the combination is.  None (nothing evaluated) when the
        attribute is not of that form."""
        ac = self.t.column(lname)
        if not ac.one_expr or len(rows) == 0:
            return None
        names = _and_names(ac.nodes[0], self.row_only)
        if names is None:
            return None
        active = frozenset({(ROW, lname)})
        true: Optional[np.ndarray] = None  # the rows where every name so far is true
        go: Optional[np.ndarray] = None  # the rows where every name so far is true or Undefined
        last = len(names) - 1
        # A fused name's array holds its true rows only, losing the rows where it is
        # Undefined, where the names after it are still evaluated (and may draw): it serves
        # for the last name only.
        for j, name in enumerate(names):
            if go is None:
                true, u = self._name_truths(name, rows, active, j == last)
                go = true if u is None else true | u
                continue
            if not go.any():
                break
            ahead = self._ahead_true(name, rows, active) if j == last else None
            if ahead is not None:
                true, go = true & ahead, go & ahead  # type: ignore[operator]
                continue
            pos = go.nonzero()[0]
            t, u = self._name_truths(name, rows[pos], active, j == last)
            true = true.copy()  # type: ignore[union-attr]
            true[pos] &= t
            if j < last:
                go = go.copy()
                go[pos] = t if u is None else t | u
        return true

    def _ahead_true(self, lname: str, rows: np.ndarray, active: frozenset) -> Optional[np.ndarray]:
        """Where the name ``lname`` is true on every one of ``rows``, when it is a cheap
        attribute computed afresh for each run (:meth:`_memo_result`) that evaluates as one
        fused combination: evaluated ahead of need, as :meth:`logical` evaluates such a
        right side, which draws nothing and falls back to nothing.  None (nothing done but
        a failed fusion, not tried again in this run) otherwise."""
        shared = self.shared
        assert shared is not None
        if len(rows) < _AHEAD_ROWS:
            return None  # picking the rows needed costs little (see logical)
        ac = self.t.column(lname)
        if not ac.nodes or ac.any_missing or self._combines(lname) or not self._plain_attr(lname):
            return None
        key = (lname, active, self.strict, self.fixed is None)
        if key in shared.unshareable or key not in shared.direct:
            return None
        got: Optional[np.ndarray] = self._afresh(rows, lambda at: self._attr_bits(lname, at, active), True)
        return got

    def _name_truths(
        self, lname: str, rows: np.ndarray, active: frozenset, fused: bool = True
    ) -> tuple[np.ndarray, Optional[np.ndarray]]:
        """The rows where the name ``lname`` (in the rows' scope) is true, and those where
        it is Undefined (None: nowhere), as ``&&`` reads it.  ``fused``: a cheap name may
        give its fused true rows alone (where it is Undefined then counts as nowhere)."""
        ac = self.t.column(lname)
        if ac.nodes and not ac.any_missing and not self._combines(lname):
            # Every row holds it, so it never falls through to the fixed ad: the shared memo's.
            got = self._memo_result(
                (lname, active, self.strict, self.fixed is None),
                rows,
                lambda at: self._row_values(lname, at, active),
                self._plain_attr(lname),
                (lambda at: self._attr_bits(lname, at, active)) if fused and self._plain_attr(lname) else None,
            )
            if type(got) is np.ndarray:
                return got, None
            if type(got) is MemoEntry:
                at = None if rows is self.t.all_rows else rows
                bits = got.bits_at(at)
                if bits is not None:
                    return bits.view(bool), None
                got = got.column(at)
            col = ops.truth(got)
        else:
            col = ops.truth(as_column(self.name(lname, ROW, rows, active), len(rows), self.pool))  # type: ignore[arg-type]
        k = col.kind
        return (k == K_BOOL) & (col.i != 0), (k == K_UNDEF)

    def shared_expr(self, node: Any, rows: np.ndarray) -> Values:
        """``node`` in the rows' scope, shared through the table's :class:`SharedMemo` with
        later runs whose fixed ad gives the same values to what it reads (an expression
        evaluated for many requests, such as a negotiator knob)."""
        shared = self.shared
        if shared is None:
            return self.ev(node, ROW, rows, frozenset())
        shared.pin(node)
        key: tuple = (("expr", id(node)), frozenset(), self.strict, self.fixed is None)
        return self._through_memo(
            key, rows, lambda at: as_column(self.ev(node, ROW, at, frozenset()), len(at), self.pool), self._plain(node)
        )

    def shared_fixed_attr(self, lname: str, rows: np.ndarray) -> Values:
        """:meth:`fixed_attr` at the top (the fixed ad's attribute against each row), shared
        through the table's :class:`SharedMemo` with later runs whose fixed ad gives the
        same values to everything the evaluation read of it (a job's ``Requirements``,
        read by every request of its autocluster and by others that agree on what it reads)."""
        shared = self._shared_fixed(lname)
        if shared is None:
            return self.fixed_attr(lname, rows, frozenset())
        return self._through_memo(shared[0], rows, shared[1], shared[2])

    def shared_fixed_true(self, lname: str, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` :meth:`shared_fixed_attr` gives a true value, read from a shared
        boolean result's bits where one holds it (see :meth:`_memo_true`)."""
        shared = self._shared_fixed(lname)
        if shared is None:
            return as_column(self.fixed_attr(lname, rows, frozenset()), len(rows), self.pool).is_true()
        bits = None
        if shared[2]:
            node = self.fixed_attrs[lname][1]
            inner = frozenset({(FIXED, lname)})

            def bits(at: np.ndarray) -> Optional[np.ndarray]:
                self.note(("a", "target", frozenset()), ABSENT)  # as the column's computation notes
                self.note(("a", "other", frozenset()), ABSENT)
                return self._fused_true(node, FIXED, at, inner)

        return self._memo_true(shared[0], rows, shared[1], shared[2], bits)

    def _shared_fixed(self, lname: str) -> Optional[tuple[tuple, Any, bool]]:
        """The memo key of the fixed ad's attribute ``lname``, how to compute it and whether
        it is :meth:`_plain` (for :meth:`shared_fixed_attr`); None when it is not shared."""
        node = self.fixed_attrs[lname][1]
        if type(node) is ast.Literal or self.shared is None or not self.partner_plain:
            return None
        self.shared.pin(node)
        key: tuple = (("fixed", lname, id(node)), frozenset(), self.strict, False)
        inner = frozenset({(FIXED, lname)})

        def compute(at: np.ndarray) -> Column:
            # TARGET and OTHER name the rows because the fixed ad has neither: a read too.
            self.note(("a", "target", frozenset()), ABSENT)
            self.note(("a", "other", frozenset()), ABSENT)
            col = as_column(self.ev(node, FIXED, at, inner), len(at), self.pool)
            if col.o is not None:
                self.note(("value",), None)  # a list or ad value may refer to the fixed ad
            return col

        return key, compute, self._plain(node)

    def _through_memo(self, key: Any, rows: np.ndarray, compute: Any, plain: bool = False) -> Column:
        """``compute(rows)`` (a column), found in or added to the shared memo under ``key``
        and the values it read of the fixed ad.  Computed over every row, so that later
        runs find all the rows they ask for -- unless ``key`` was found unshareable before,
        when only ``rows`` are computed (see :meth:`_memo_result` for ``plain``)."""
        got = self._memo_result(key, rows, compute, plain)
        if type(got) is MemoEntry:
            return got.column(None if rows is self.t.all_rows else rows)
        return got  # type: ignore[return-value]

    def _memo_true(self, key: Any, rows: np.ndarray, compute: Any, plain: bool = False, bits: Any = None) -> np.ndarray:
        """Which of ``rows`` hold a true value (:meth:`Column.is_true`) in :meth:`_through_memo`'s
        column: for a stored result of booleans only, its bits at ``rows``, the column never
        made; for a key computed afresh, ``bits(rows)`` where it answers (see :meth:`_memo_result`)."""
        got = self._memo_result(key, rows, compute, plain, bits)
        if type(got) is np.ndarray:
            return got
        if type(got) is not MemoEntry:
            return got.is_true()  # type: ignore[no-any-return]
        at = None if rows is self.t.all_rows else rows
        bits = got.bits_at(at)
        return got.column(at).is_true() if bits is None else bits.view(bool)

    def _memo_result(self, key: Any, rows: np.ndarray, compute: Any, plain: bool = False, bits: Any = None) -> Any:
        """:meth:`_through_memo`'s work: the stored entry that holds the rows' values, or
        their column made here (when it is not kept, or kept as computed).  ``plain``: the
        expression is cheap to compute afresh (:meth:`_plain`), so once its stored results
        are seen to seldom serve a run as they are, it is computed for each run
        (:meth:`SharedMemo.served`, :meth:`_afresh`); then, when the caller wants only the
        true rows and gives ``bits`` (the true rows of ``at`` as one boolean array, or None
        having done nothing), those are the answer, no column made."""
        shared = self.shared
        assert shared is not None
        if key in shared.unshareable:
            return compute(rows)
        if not plain:
            return self._stored_result(key, rows, compute)
        if key in shared.direct:
            return self._computed_afresh(rows, compute, bits)
        before = shared.as_is
        got = self._stored_result(key, rows, compute, shared.worth_bringing(key))
        if got is _OLDER:  # not worth bringing up to date: computed as a direct key is
            got = self._computed_afresh(rows, compute, bits)
            shared.served(key, False)
            return got
        shared.served(key, shared.as_is != before)
        return got

    def _computed_afresh(self, rows: np.ndarray, compute: Any, bits: Any) -> Any:
        """:meth:`_memo_result` of a cheap key computed for this run (:meth:`_afresh`): the
        true rows from ``bits`` where it answers, else the column."""
        if bits is not None:
            got = self._afresh(rows, bits, True)
            if got is not None:
                return got
        return self._afresh(rows, compute)

    def _afresh(self, rows: np.ndarray, compute: Any, as_bits: bool = False) -> Any:
        """``compute(rows)`` for a key no longer stored: over every row (then picked), which
        costs less than picking each column's rows when most are asked for -- unless that
        would draw a random number for a row not asked for.  ``as_bits``: ``compute`` gives
        a boolean array, or None when it does not apply (then None); such an array is
        computed over every row from a quarter of them asked for (a fused combination over
        every row reads the table's columns as they are, no column taken at the rows)."""
        every = self.t.all_rows
        if rows is not every and (2 if not as_bits else 4) * len(rows) >= len(every):
            st = self.st
            source, st.random = st.random, _NO_DRAWS
            try:
                col: Any = compute(every)
            except _WouldDraw:
                col = None
            finally:
                st.random = source
            if col is not None:
                return col.take(rows)  # a boolean array or a column: both pick so
            if as_bits:
                return None
        return compute(rows)

    def _fused_true(
        self, node: Any, scope: int, rows: np.ndarray, active: frozenset, row_chain: bool = False
    ) -> Optional[np.ndarray]:
        """Where ``node`` (an expression's top, in ``scope``) is true on ``rows``, when :meth:`ev`
        would evaluate it as one fused combination (:meth:`_fused`): read from the fused
        truth values, no column made.  None when :meth:`ev` would take another way (a
        row-only value, the lazy walk), having done nothing or only what :meth:`ev` then
        finds done (a failed fusion, which it does not try again).  ``row_chain``: a rows'
        ``&&`` chain may be read from a plan of its parts (:meth:`_row_chain_true`)."""
        if len(rows) < _AHEAD_ROWS:
            return None
        while type(node) is ast.Paren:
            node = node.inner
        t = type(node)
        if not (t is ast.Binary and (node.op == "&&" or node.op == "||")):
            return None
        ro = self.row_only
        if ro is not None:
            if scope == ROW:
                if ro.shape(node)[1] >= 0:
                    return None
            elif self.partner_plain and ro.partner_form(node) is not None:
                return None
        if id(node) in self._unfused or not self._plain(node):
            return None
        if scope == FIXED and node.op == "&&" and ro is not None:
            plan = self._conjunction_plan(node, rows, active, ro)
            if plan is not None:
                bits = self._conjunction_true(plan, rows, active)
                if bits is not None:
                    return bits
        if row_chain and scope == ROW and node.op == "&&" and ro is not None:
            row_plan = self._row_chain_plan(node, active, ro)
            if row_plan is not None:
                bits = self._row_chain_true(row_plan, rows, active)
                if bits is not None:
                    return bits
        got = self._fused(node, scope, rows, active)
        if got is None:
            return None
        if type(got) is _Tri:
            got = got.t  # type: ignore[union-attr]
        if type(got) is np.ndarray:
            return got
        return np.full(len(rows), bool(got))

    def _conjunction_plan(self, node: ast.Binary, rows: np.ndarray, active: frozenset, ro: RowOnly) -> Optional[_Plan]:
        """How :meth:`_conjunction_true` evaluates the fixed ad's ``&&`` chain ``node`` on
        every row of this generation of the table (kept in the table's memo, made on first
        use); None when it does not apply: not every row asked for, a run recording what it
        reads, or a part that is not a non-constant truth value on the rows."""
        shared = self.shared
        if shared is None or rows is not self.t.all_rows or self.recording or self.t.watch or not self.partner_plain:
            return None
        known = shared.conjunctions.get(id(node))
        if known is not None and known.node is node and known.fits(self.t, self.strict, active):
            return known if known.usable else None
        plan = _Plan(node, self.t, self.strict, active)
        saved, self.eager = self.eager, True
        try:
            plan.usable = self._plan_parts(plan, _conjuncts(node, ro), rows, active, ro)
        except _NotEager:
            plan.usable = False
        finally:
            self.eager = saved
        if len(shared.conjunctions) >= 1 << 12:
            shared.conjunctions.clear()
        shared.conjunctions[id(node)] = plan
        return plan if plan.usable else None

    def _plan_parts(self, plan: _Plan, parts: list, rows: np.ndarray, active: frozenset, ro: RowOnly) -> bool:
        """Fill ``plan`` from the conjuncts ``parts``: the row-only ones evaluated now (their
        true rows and-ed into ``plan.fixed_true``), a comparison of a row value with a
        value of the fixed ad kept as its row side's column, any other left to :meth:`_bools`;
        False when a row-only part is a constant (which could decide the chain alone)."""
        n = len(rows)
        for part in parts:
            if ro.partner_form(part) is not None:
                true = _varying_true(self._bools(part, FIXED, rows, active), n)
                if true is None:
                    return False
                plan.fixed_true = true if plan.fixed_true is None else plan.fixed_true & true
                continue
            if type(part) is ast.Binary and part.op in _COMPARE:
                row_left = ro.partner_form(part.left) is not None
                if row_left != (ro.partner_form(part.right) is not None):
                    side = part.left if row_left else part.right
                    values = self.ev(side, FIXED, rows, active)
                    if type(values) is Column:
                        plan.steps.append((part, values, part.right if row_left else part.left, not row_left))
                        continue
            plan.steps.append((part, None, None, False))
        return True

    def _conjunction_true(self, plan: _Plan, rows: np.ndarray, active: frozenset) -> Optional[np.ndarray]:
        """Where the fixed ad's ``&&`` chain of ``plan`` is true on every row (``rows``), as
        :meth:`_fused` finds it: the true rows of its row-only parts (the same for every
        fixed ad) and-ed with each other part's, evaluated in order as :meth:`_bools` does.
        Every part is a truth value that is not one constant, so none decides the chain
        alone and the true rows of the chain are those where every part is true; None
        (then :meth:`_fused` evaluates it) when a part is a constant or cannot be
        evaluated ahead of need."""
        out = self._and_steps(plan.steps, FIXED, rows, active, plan.fixed_true, _same, _varying_true)
        if out is None:
            return None
        return out.copy() if out is plan.fixed_true or not out.flags.writeable else out

    def _and_steps(
        self,
        steps: list,
        scope: int,
        rows: np.ndarray,
        active: frozenset,
        out: Optional[np.ndarray],
        at: Any,
        true_of: Any,
    ) -> Optional[np.ndarray]:
        """``out`` (None for none yet) and-ed with the true rows of each of a plan's
        ``steps`` in order, as :meth:`_bools` evaluates them: a kept column (taken at the
        rows by ``at``) compared with the other side's value straight into booleans, any
        other part's truth value made true rows by ``true_of``.  None when ``true_of``
        gives None or a part cannot be evaluated ahead of need."""
        n = len(rows)
        saved, self.eager = self.eager, True
        try:
            for part, values, other, swapped in steps:
                true = None
                if values is not None:
                    b = self.ev(other, scope, rows, active)
                    if type(b) is Const:
                        true = self.t.number_bools(part.op, at(values), b.value, swapped)
                if true is None:
                    true = true_of(self._bools(part, scope, rows, active), n)
                    if true is None:
                        return None
                out = true if out is None else out & true
        except _NotEager:
            return None
        finally:
            self.eager = saved
        return out

    def expression_true(self, node: Any, scope: int, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` hold a true value (:meth:`Column.is_true`) of ``node`` at the top:
        as :meth:`_fused_true` finds them where it answers, else of :meth:`ev`'s value."""
        got = self._fused_true(node, scope, rows, frozenset(), True)
        if got is not None:
            return got
        return as_column(self.ev(node, scope, rows, frozenset()), len(rows), self.pool).is_true()

    def _row_chain_plan(self, node: ast.Binary, active: frozenset, ro: RowOnly) -> Optional[_RowPlan]:
        """How :meth:`_row_chain_true` evaluates the rows' ``&&`` chain ``node`` on this
        generation of the table (kept in the table's memo, made on first use over every
        row); None when it does not apply: a run recording what it reads, or a part that
        cannot be evaluated ahead of need."""
        shared = self.shared
        if shared is None or self.recording or self.t.watch:
            return None
        known = shared.row_chains.get(id(node))
        if known is not None and known.node is node and known.fits(self.t, self.strict, active, self.fixed is None):
            return known if known.usable else None
        plan = _RowPlan(node, self.t, self.strict, active, self.fixed is None)
        st = self.st
        saved, self.eager = self.eager, True
        source, st.random = st.random, _NO_DRAWS
        try:
            self._row_plan_parts(plan, _row_conjuncts(node, ro), active)
        except (_NotEager, _WouldDraw):
            plan.usable = False
        finally:
            self.eager = saved
            st.random = source
        if len(shared.row_chains) >= 1 << 12:
            shared.row_chains.clear()
        shared.row_chains[id(node)] = plan
        return plan if plan.usable else None

    def _row_plan_parts(self, plan: _RowPlan, parts: list, active: frozenset) -> None:
        """Fill ``plan`` from the conjuncts ``parts``, each evaluated over every row: one that
        reads of the fixed ad at most the clock and names it lacks has its true rows and-ed
        into ``plan.fixed_true``; a comparison with such a side keeps that side's column
        (compared with the other side's value in each run); any other is left to
        :meth:`_bools`.  What the kept values read is the plan's ``keys`` and ``tokens``."""
        every = self.t.all_rows
        n = len(every)
        keys: dict[Any, Any] = {}
        for part in parts:
            got, reads = self._noted(self._bools, part, ROW, every, active)
            if _fixed_free(reads):
                true = _true_of(got, n)
                plan.fixed_true = true.copy() if plan.fixed_true is None else plan.fixed_true & true
                keys.update(reads.keys)
                continue
            step: tuple[Any, Optional[Column], Any, bool] = (part, None, None, False)
            if type(part) is ast.Binary and part.op in _COMPARE:
                for side, other, swapped in ((part.left, part.right, False), (part.right, part.left, True)):
                    values, reads = self._noted(self.ev, side, ROW, every, active)
                    if type(values) is Column and _fixed_free(reads):
                        step = (part, values, other, swapped)
                        keys.update(reads.keys)
                        break
            plan.steps.append(step)
        plan.keys, plan.tokens = tuple(keys), tuple(keys.values())

    def _noted(self, compute: Callable[..., Any], *args: Any) -> tuple[Any, Reads]:
        """``compute(*args)`` and what it read of the fixed ad (this run records nothing else)."""
        reads = Reads()
        self.recording = [reads]
        try:
            return compute(*args), reads
        finally:
            self.recording = []

    def _row_chain_true(self, plan: _RowPlan, rows: np.ndarray, active: frozenset) -> Optional[np.ndarray]:
        """Where the rows' ``&&`` chain of ``plan`` is true on ``rows``, as :meth:`_fused`
        finds it (the true rows of a chain are those where every part is true): the true
        rows of the parts kept over every row and-ed with each other part's, evaluated in
        order as :meth:`_bools` does, a kept column compared with the other side's value
        straight into booleans.  None (then :meth:`_fused` evaluates it) when this run's
        fixed ad or clock gives other values to what the kept parts read, or a part cannot
        be evaluated ahead of need."""
        if plan.keys and self._current_tokens(plan.keys, rows) != plan.tokens:
            return None
        every = rows is self.t.all_rows
        kept = plan.fixed_true
        start: Optional[np.ndarray] = kept if kept is None or every else kept[rows]
        out = self._and_steps(
            plan.steps, ROW, rows, active, start, _same if every else (lambda values: values.take(rows)), _true_of
        )
        if out is None:
            return None
        return out.copy() if out is kept or not out.flags.writeable else out

    def _stored_result(self, key: Any, rows: np.ndarray, compute: Any, bring: bool = True) -> Any:
        """:meth:`_memo_result` of a key whose results are stored; ``_OLDER`` (nothing done
        but reading what the results read of the fixed ad) when the result found is of an
        older generation of the table and not to be brought up to date (``bring`` false)."""
        shared = self.shared
        assert shared is not None
        every = self.t.all_rows
        for keys in shared.shapes_of(key):
            tokens = self._current_tokens(keys, rows)
            if tokens is None:
                continue
            stored = shared.find(key, keys, tokens)
            if stored is None:
                continue
            if not bring and stored.generation != self.t.generation:
                return _OLDER
            if self.recording:
                for k, tok in zip(keys, tokens):
                    self.note(k, tok)
            shared.hits += 1
            stored.asked = self.t.generation
            if stored.generation == self.t.generation:
                shared.as_is += 1
            else:
                brought = self._bring_stored(key, stored, compute)
                if brought is _DRAWS:
                    shared.unshareable.add(key)
                    return compute(rows)
                if brought is None:
                    break
                if isinstance(brought, Column):
                    return brought if rows is every else brought.take(rows)
                stored = brought
            self.depends(stored.deps)
            return stored
        shared.misses += 1
        reads = Reads()
        deps: set = set()
        if rows is every:
            col = self._recorded(reads, deps, compute, every)
        else:
            found = self._unasked(reads, deps, compute, every)
            if found is None:  # it draws: only the rows asked for, as any other run computes them
                shared.unshareable.add(key)
                return compute(rows)
            col = found
        shared.store(key, reads, col, self.t.generation, frozenset(deps))
        return col if rows is every else col.take(rows)

    def _recorded(self, reads: Reads, deps: set, compute: Any, rows: np.ndarray) -> Column:
        """``compute(rows)``, its reads of the fixed ad noted in ``reads`` and the row
        attributes it read added to ``deps``."""
        outer = self.recording
        self.recording = outer + [reads]
        watch = self.t.watch
        watch.append(deps)
        try:
            return compute(rows)
        finally:
            watch.pop()
            self.recording = outer

    def _unasked(self, reads: Reads, deps: set, compute: Any, rows: np.ndarray) -> Optional[Column]:
        """:meth:`_recorded` on ``rows``, which include rows the caller did not ask for;
        None, with no random number drawn, when the evaluation would draw one.

        A draw made for a row not asked for would shift every later draw of the run's
        seeded source, and whether a run gets here depends on what its memo holds (a
        table carried from the last cycle holds more than a new one): so an evaluation
        that draws is made on the rows asked for alone, by every run alike."""
        st = self.st
        source = st.random
        st.random = _NO_DRAWS
        try:
            return self._recorded(reads, deps, compute, rows)
        except _WouldDraw:
            return None
        finally:
            st.random = source

    def _bring_stored(self, key: Any, stored: MemoEntry, compute: Any) -> Any:
        """A shared result of an older generation of the table, brought to this one: its
        rows moved (``stored`` itself, when nothing it read changed), else the rows where
        an attribute it read changed computed again with this run's fixed ad, which gives
        the same values to what the result read, and stored again (the new entry, or the
        column when the results could not be moved as kept, see :meth:`_patched`); None
        when it is too old; ``_DRAWS``
        (nothing drawn, the result forgotten) when computing those rows would draw a
        random number.  The other results of ``key`` that were asked for since they were
        last computed and have the same rows to compute again (those of the other
        owners, say) are brought up to date with it, all in one walk, when that walk can
        stand for theirs (:meth:`_stacked_parts`)."""
        shared = self.shared
        assert shared is not None
        history = self.t.history
        moved = history.bring(stored.generation, stored.deps)
        if moved is None:
            shared.drop(key, stored)
            return None
        rows, stale = moved
        if stale is None and rows is not None and stored.rowmap is None:
            stored.moved(rows, self.t.generation)  # the row map is shared with the results moved alike
            return stored
        shared.drop(key, stored)
        source = history.clipped(rows)
        reads = Reads()
        reads.keys.update(zip(stored.keys, stored.tokens))
        deps = set(stored.deps)
        pos: Optional[np.ndarray] = None
        part: Optional[Column] = None
        if stale is not None:
            pos = self.t.history.positions(stale)
            stacked = self._stacked_parts(key, stored, moved, pos)
            if stacked is None:
                part = self._unasked(reads, deps, compute, pos)
                if part is None:
                    return _DRAWS
            else:
                more, pos, parts = stacked
                deps |= more
                for other, its_part in parts[1:]:
                    shared.drop(key, other)
                    its_reads = Reads()
                    its_reads.keys.update(zip(other.keys, other.tokens))
                    self._patched(key, other, its_reads, source, pos, its_part, other.deps | more)
                part = parts[0][1]
        read = frozenset(deps)
        self.depends(read)
        return self._patched(key, stored, reads, source, pos, part, read)

    def _patched(
        self,
        key: Any,
        stored: MemoEntry,
        reads: Reads,
        source: Optional[np.ndarray],
        pos: Optional[np.ndarray],
        part: Optional[Column],
        read: frozenset,
    ) -> Any:
        """``stored``'s results moved to the current rows (``source``) with ``part`` put at
        the positions ``pos``, stored under ``reads`` as read at the current generation
        (``read``: the row attributes they read): the new entry, moved and patched as the
        results are kept (a bit per row for booleans, else :meth:`Packed.moved`: each
        payload picked in its kept type, not unpacked to every row and packed again), or,
        when that cannot be, the column made of every row (see :meth:`_bring_stored`)."""
        shared = self.shared
        assert shared is not None
        generation = self.t.generation
        bits = stored.bits_at(source)
        if bits is not None and (part is None or ops.uniform(part) == K_BOOL):
            # Booleans before and after: moved and patched a bit per row, never unpacked.
            if part is not None:
                bits[pos] = (part.i != 0).view(np.uint8)
            packed = Packed.of_bits(bits, self.pool)
            kept = shared.store(key, reads, packed, generation, read, stored)
            return kept if kept is not None else MemoEntry(packed, (), (), generation, read)
        m = stored.rowmap
        moved = stored.packed.moved(source if m is None else m if source is None else m.take(source), pos, part)
        if moved is not None:  # moved and patched as kept, never unpacked to every row
            kept = shared.store(key, reads, moved, generation, read, stored)
            return kept if kept is not None else MemoEntry(moved, (), (), generation, read)
        col = stored.column(source)
        if part is not None:
            col.put(pos, part)  # type: ignore[arg-type]
        shared.store(key, reads, col, generation, read, stored)
        return col

    def _stacked_parts(
        self, key: Any, stored: MemoEntry, moved: tuple, pos: np.ndarray
    ) -> Optional[tuple[frozenset, np.ndarray, list[tuple[MemoEntry, Column]]]]:
        """The rows ``pos`` of ``stored``, and of the other results of ``key`` stored at
        the same generation (whose rows moved alike, ``moved``, see :meth:`_bring_stored`)
        and asked for in the last ``_STACKED_IDLE`` generations, the rows any of them has
        to compute again (computing a row that did not have to be gives the value it
        holds), in one walk over those rows laid out once per result
        (:class:`StackedRows`), each copy reading its result's values of the fixed ad
        (:class:`_Stacked`): the attributes that walk read, the positions computed, and
        each result with its values there, ``stored`` first.  A row's value is made of
        that row's values alone, so a row that read no value of the fixed ad differing
        between the results has the same value in every copy: the walk takes the rows
        once, for ``stored``, and then once per other result the rows that read such a
        value (all at once when most rows did last time, ``SharedMemo.stacked_whole``:
        PRE_JOB_RANK for each owner reads the owner only through the few slots whose
        Rank names it, START often on every row).  None (nothing changed)
        when no other result is to be brought, or the walk cannot stand for each run's own:
        it would read of the fixed ad what the results did not read (or the clock), fall
        back to the scalar evaluator, draw a random number or call a function whose value
        may change between calls; then the key is left to each run."""
        shared = self.shared
        assert shared is not None
        if key in shared.unstacked or self.fixed is None or not stored.keys:
            return None
        keys = stored.keys
        if any(k[0] != "a" for k in keys):
            return None
        present = [tok != ABSENT for tok in stored.tokens]
        group = [stored]
        stale, width = moved[1], len(pos)
        history = self.t.history
        recent = self.t.generation - _STACKED_IDLE
        for other in shared.entries.get(key, {}).values():
            if (
                other.keys != keys
                or other.asked < recent
                or other.generation != stored.generation
                or [tok != ABSENT for tok in other.tokens] != present
            ):
                continue
            its = history.bring(other.generation, other.deps)
            if its is None or its[0] is not moved[0] or its[1] is None:
                continue  # too old, or only moved (which costs nothing)
            wider, count = stale, width
            if its[1] is not moved[1]:
                wider = stale | its[1]
                count = int(np.count_nonzero(wider))
            if count * (len(group) + 1) > _STACKED_ROWS:
                continue
            group.append(other)
            stale, width = wider, count
        if len(group) < 2:
            return None
        if stale is not moved[1]:
            pos = np.flatnonzero(stale)
        compute = self._stacked_compute(key)
        if compute is None:
            shared.unstacked.add(key)
            return None
        deps: set = set()
        try:
            cols = self._stacked_values(key, compute, pos, group, deps)
        except (_NotStackable, _WouldDraw, RecursionError):
            shared.unstacked.add(key)
            return None
        return frozenset(deps), pos, list(zip(group, cols))

    def _stacked_values(
        self,
        key: Any,
        compute: Callable[["Run", np.ndarray], Column],
        pos: np.ndarray,
        group: list[MemoEntry],
        deps: set,
    ) -> list[Column]:
        """The values of each result of ``group`` at the rows ``pos`` for
        :meth:`_stacked_parts`: the rows walked for the first result, then for the others
        where their values may differ (or every row for each at once), noting in
        ``SharedMemo.stacked_whole`` which way the next walk of ``key`` takes."""
        shared = self.shared
        assert shared is not None
        copies, width = len(group), len(pos)
        if key in shared.stacked_whole:
            col, varying = self._stacked_walk(compute, pos, group, copies, deps)
            cols = [col.take(np.arange(j * width, (j + 1) * width)) for j in range(copies)]
            differ = 0 if varying is None else int(np.count_nonzero(varying.reshape(copies, width).any(axis=0)))
        else:
            first, varying = self._stacked_walk(compute, pos, group, 1, deps)
            cols = [first] * copies
            vary = np.flatnonzero(varying) if varying is not None else None
            differ = 0 if vary is None else len(vary)
            if vary is not None and differ:
                col = self._stacked_walk(compute, pos[vary], group[1:], copies - 1, deps)[0]
                for j in range(1, copies):
                    theirs = cols[j] = first.copy()
                    theirs.put(vary, col.take(np.arange((j - 1) * differ, j * differ)))
        if 2 * differ > width:
            shared.stacked_whole.add(key)
        else:
            shared.stacked_whole.discard(key)
        return cols

    def _stacked_walk(
        self,
        compute: Callable[["Run", np.ndarray], Column],
        at: np.ndarray,
        group: list[MemoEntry],
        copies: int,
        deps: set,
    ) -> tuple[Column, Optional[np.ndarray]]:
        """One walk of :meth:`_stacked_parts` over the rows ``at`` laid out ``copies``
        times, copy ``j`` reading the values ``group[j]`` read of the fixed ad, the
        attributes it read added to ``deps``: the values, and which rows read a value of
        the fixed ad that differs between the results of ``group`` (None: none did; see
        :class:`_Stacked`).  Raises :class:`_NotStackable` when the walk cannot stand for
        the runs (so too when it changed the state's taint)."""
        view = StackedRows(self.t, at, copies)
        run = _Stacked(view, self, group)
        view.watch.append(deps)
        watch = self.t.watch  # where the row-only values the walk reads note what they read
        watch.append(deps)
        try:
            col = compute(run, view.all_rows)
        finally:
            watch.pop()
        if run.st.taint != self.st.taint:
            raise _NotStackable
        return col, run.marked()

    def _stacked_compute(self, key: Any) -> Optional[Callable[["Run", np.ndarray], Column]]:
        """What a result stored under ``key`` computes, for a run over other rows: a row
        attribute (:meth:`_shared_row_attr`) or an expression (:meth:`shared_expr`); None
        for any other key."""
        first = key[0]
        if type(first) is str:
            active = key[1]
            return lambda run, at: run._row_values(first, at, active)
        if type(first) is tuple and first[0] == "expr":
            shared = self.shared
            assert shared is not None
            node = shared._pinned.get(first[1])
            if node is None:
                return None
            return lambda run, at: as_column(run.ev(node, ROW, at, frozenset()), len(at), run.pool)
        return None

    # ---- operators -------------------------------------------------------------------------

    def binary(self, node: ast.Binary, scope: int, rows: np.ndarray, active: frozenset) -> Values:
        op = node.op
        if op == "&&" or op == "||":
            return self.logical(node, op == "&&", scope, rows, active)
        a = self.ev(node.left, scope, rows, active)
        b = self.ev(node.right, scope, rows, active)
        return self._operate(node, a, b, scope, rows, active)

    def _operate(
        self, node: ast.Binary, a: Values, b: Values, scope: int, rows: np.ndarray, active: frozenset
    ) -> Values:
        """:meth:`binary` (but ``&&`` and ``||``) of the operands' values ``a`` and ``b``."""
        op = node.op
        if type(a) is Const and type(b) is Const:
            x, y = a.value, b.value
            if op == "is":
                return Const(scalar_meta_equal(x, y))
            if op == "isnt":
                r = scalar_meta_equal(x, y)
                return Const(r if r is ERROR else not r)
            if x is ERROR or y is ERROR:
                return Const(ERROR)
            if x is UNDEFINED or y is UNDEFINED:
                return Const(UNDEFINED)
            if type(x) is ListValue or type(y) is ListValue:
                return self.scalar(node, scope, rows, active)
            return Const(BINARY[op](x, y))
        if op in _COMPARE:
            if type(b) is Const:
                fast = ops.compare_number(op, a, b.value, False)  # type: ignore[arg-type]
            elif type(a) is Const:
                fast = ops.compare_number(op, b, a.value, True)  # type: ignore[arg-type]
            else:
                fast = None
            if fast is not None:
                return fast
        n, pool = len(rows), self.pool
        ca, cb = as_column(a, n, pool), as_column(b, n, pool)
        if op in _ARITH:
            res, fb = ops.arithmetic(op, ca, cb)
        elif op in _COMPARE:
            res, fb = ops.compare(op, ca, cb)
        elif op == "is" or op == "isnt":
            res, fb = ops.meta_equal(ca, cb, op == "isnt")
        elif op in _BITWISE:
            res, fb = ops.bitwise(op, ca, cb)
        else:
            return self.scalar(node, scope, rows, active)
        return self.merge_fallback(node, scope, rows, active, res, fb)

    def logical(self, node: ast.Binary, is_and: bool, scope: int, rows: np.ndarray, active: frozenset) -> Values:
        """``&&`` / ``||`` with the three-valued tables; the right side only where needed."""
        if len(rows) >= _AHEAD_ROWS and id(node) not in self._unfused and self._plain(node):
            fused = self._fused_value(node, scope, rows, active)
            if fused is not None:
                return fused
        stop = not is_and
        a = self.ev(node.left, scope, rows, active)
        if type(a) is Const:
            ta = truthiness(a.value)
            if ta is stop or ta is ERROR:
                return Const(ta)
            b = self.ev(node.right, scope, rows, active)
            if type(b) is Const:
                tb = truthiness(b.value)
                if tb is ERROR:
                    return Const(ERROR)
                if ta is UNDEFINED:
                    return Const(stop if tb is stop else UNDEFINED)
                return Const(tb)
            tcol = ops.truth(b)  # type: ignore[arg-type]
            if ta is UNDEFINED:
                out = Column.empty(len(rows), self.pool, K_UNDEF)
                out.kind[tcol.kind == K_ERROR] = K_ERROR
                hit = (tcol.kind == K_BOOL) & (tcol.i == int(stop))
                out.kind[hit] = K_BOOL
                out.i[hit] = int(stop)
                return out
            return tcol
        ca = ops.truth(a)  # type: ignore[arg-type]
        k = ca.kind
        left_bool = ca is a or ops.uniform(ca) == K_BOOL  # truth() gives a column of booleans back as is
        need = ca.i != int(stop) if left_bool else (k == K_UNDEF) | ((k == K_BOOL) & (ca.i != int(stop)))
        count = int(np.count_nonzero(need))
        if not count:
            return ca
        everywhere = count == len(rows)
        if left_bool and not everywhere and len(rows) >= _AHEAD_ROWS and self._simple(node.right):
            # Where the right side costs less than picking the rows it is needed on.
            ahead = self._ahead(node.right, scope, rows, active)
            if ahead is not None:
                return self._logical_ahead(ca, need, ahead, stop)
        pos = need.nonzero()[0]
        sub = rows if everywhere else rows[pos]
        b = self.ev(node.right, scope, sub, active)
        if left_bool:
            # Every row left is the non-deciding boolean: the right side's truth value is the answer.
            if type(b) is Const:
                tb = truthiness(b.value)
                if tb is True or tb is False:
                    if everywhere:
                        return Const(tb)
                    out = ca.copy()
                    out.i[pos] = int(tb)
                    return out
            else:
                tb_col = ops.truth(b)  # type: ignore[arg-type]
                if tb_col is b or ops.uniform(tb_col) == K_BOOL:
                    if everywhere:
                        return tb_col
                    out = ca.copy()
                    out.i[pos] = tb_col.i
                    return out
        cb = ops.truth(as_column(b, len(sub), self.pool))
        ka = k[pos]
        kb = cb.kind
        res = Column.empty(len(sub), self.pool, K_BOOL)
        res.i[:] = cb.i
        res.kind[:] = kb
        und_a = ka == K_UNDEF
        # Undefined on the left: the right's stopping value wins, anything else stays Undefined.
        keep_undef = und_a & (kb != K_ERROR) & ~((kb == K_BOOL) & (cb.i == int(stop)))
        res.kind[keep_undef] = K_UNDEF
        out = ca.copy() if len(pos) != len(rows) else res
        if out is not res:
            out.put(pos, res)
        return out

    def _fused_value(self, node: ast.Binary, scope: int, rows: np.ndarray, active: frozenset) -> Optional[Values]:
        """:meth:`_fused` as a value: a column, or a constant where the lazy walk gives one."""
        bits = self._fused(node, scope, rows, active)
        if type(bits) is np.ndarray:
            return Column.of_bools(bits, self.pool)
        if type(bits) is _Tri:
            return bits.values(len(rows), self.pool)  # type: ignore[union-attr]
        if bits is not None:
            return Const(bool(bits))  # from constants only, as the lazy walk gives it
        return None

    def _fused(self, node: ast.Binary, scope: int, rows: np.ndarray, active: frozenset) -> Optional[Truths]:
        """A :meth:`_plain` combination ``node`` evaluated on every one of ``rows`` as one
        boolean array, each of its operands evaluated ahead of need (see :meth:`_ahead`);
        a :class:`_Tri` when some row is Undefined or Error; None when an operand cannot be
        evaluated ahead of need (then ``node`` and its parts are evaluated as usual in this
        run).  One boolean (``np.bool_``) where the lazy walk gives a constant: operands that
        are constants, or a constant left side that decides alone.

        Over booleans ``&&``, ``||`` and ``!`` are the element-wise and, or and not, and
        an operand evaluated on rows where its value is not needed gives the same values
        on the rows where it is: so this is the value the lazy walk gives, without a
        column made, truth-tested and combined at every operator.  Undefined and Error
        follow the three-valued tables row by row (:func:`_tri_and`, :func:`_tri_or`)."""
        shared = self.shared
        failed = shared.unfused.get(id(node)) if shared is not None else None
        if failed is not None and failed[0] is not node:
            failed = None  # another node's, gone
        if failed is not None:
            # Failed in each of the last runs: tried again only now and then.
            failed[1] += 1
            if failed[1] >= _FUSED_FAILURES and failed[1] % _FUSED_RETRY:
                self._unfused.update(_combination_ids(node))
                return None
        saved, self.eager = self.eager, True
        try:
            bits = self._bools(node, scope, rows, active)
        except _NotEager:
            bits = None
        finally:
            self.eager = saved
        if bits is None:
            self._unfused.update(_combination_ids(node))
            if shared is not None and failed is None:
                if len(shared.unfused) >= 1 << 16:
                    shared.unfused.clear()
                shared.unfused[id(node)] = [node, 1]
        elif failed is not None:
            del shared.unfused[id(node)]  # type: ignore[union-attr]
        return bits

    def _bools(self, node: Any, scope: int, rows: np.ndarray, active: frozenset) -> Truths:
        """:meth:`_fused`'s walk: the truth value of ``node`` (as ``&&``, ``||`` and ``!``
        read their operands) on each of ``rows``, as booleans where it is a boolean on every
        row, else as a :class:`_Tri`; one ``np.bool_`` (or a :class:`_Tri` of single values)
        where :meth:`logical`, :meth:`unary` and :meth:`binary` give a constant."""
        t = type(node)
        while t is ast.Paren:
            node = node.inner
            t = type(node)
        op = node.op if t is ast.Binary or t is ast.Unary else None
        if op == "&&" or op == "||" or (op == "!" and t is ast.Unary):
            shared = self._row_only_part(node, scope, rows, active)
            if shared is not None:
                return shared if type(shared) is np.ndarray else _truths(shared, len(rows), True)
            if t is ast.Unary:
                a = self._bools(node.operand, scope, rows, active)
                return a.negated() if type(a) is _Tri else ~a  # type: ignore[union-attr, operator]
            stop = op == "||"
            a = self._bools(node.left, scope, rows, active)
            if type(a) is _Tri:
                if a.decides():  # type: ignore[union-attr]
                    return a  # a constant Error: the right side is not looked at
            elif type(a) is np.bool_ and a == stop:
                return a  # a constant deciding alone: the right side is not looked at
            b = self._bools(node.right, scope, rows, active)
            if type(a) is _Tri or type(b) is _Tri:
                return _tri_or(a, b) if stop else _tri_and(a, b)
            if type(b) is np.bool_ and type(a) is np.ndarray and not (a == stop).any():
                return b  # no row decided on the left: the constant right side is the value
            return a & b if op == "&&" else a | b  # type: ignore[operator]
        if t is ast.Binary and op in _COMPARE:
            return self._compared(node, scope, rows, active)
        return _truths(self.ev(node, scope, rows, active), len(rows))

    def _compared(self, node: ast.Binary, scope: int, rows: np.ndarray, active: frozenset) -> Truths:
        """:meth:`_bools` of a comparison (as :meth:`ev` walks it): a number column against a
        number compared straight into a boolean array."""
        shared = self._row_only_part(node, scope, rows, active)
        if shared is not None:
            return shared if type(shared) is np.ndarray else _truths(shared, len(rows), True)
        a = self.ev(node.left, scope, rows, active)
        b = self.ev(node.right, scope, rows, active)
        if type(b) is Const:
            if type(a) is Column:
                fast = self.t.number_bools(node.op, a, b.value, False)
                if fast is not None:
                    return fast
        elif type(a) is Const:
            fast = self.t.number_bools(node.op, b, a.value, True)  # type: ignore[arg-type]
            if fast is not None:
                return fast
        return _truths(self._operate(node, a, b, scope, rows, active), len(rows))

    def _row_only_part(self, node: Any, scope: int, rows: np.ndarray, active: frozenset) -> Any:
        """What :meth:`ev` finds for a compound ``node`` among the table's row-only values
        (None: evaluate it), a kept value of booleans only as a boolean array."""
        ro = self.row_only
        if ro is None:
            return None
        if scope == ROW:
            return self.row_only_value(node, rows, active, True)
        if self.partner_plain:
            twin = ro.partner_form(node)
            if twin is not None:
                return self.row_only_value(twin, rows, active, True)
        return None

    def _simple(self, node: Any) -> bool:
        """Whether ``node`` may be evaluated ahead of need (:meth:`_ahead`): operators whose
        column forms decide every row, on literals, names and ``MY``/``TARGET``/``OTHER``
        selections (remembered by node in the table's memo)."""
        shared = self.shared
        if shared is None:
            return False
        return _verdict(shared.simple, node, _simple_shape)

    def _ahead(self, node: Any, scope: int, rows: np.ndarray, active: frozenset) -> Optional[Values]:
        """``node`` on every one of ``rows``, including rows where its value is not needed;
        None when that would take a scalar fallback or evaluate an expression (nothing is
        then done that the evaluation of the rows needed would not do, but for looking
        at more attributes: reads of the fixed ad and dependencies are only ever added)."""
        saved, self.eager = self.eager, True
        try:
            return self.ev(node, scope, rows, active)
        except _NotEager:
            return None
        finally:
            self.eager = saved

    def _logical_ahead(self, ca: Column, need: np.ndarray, b: Values, stop: bool) -> Column:
        """:meth:`logical` of a left side of booleans only (``ca``), ``need`` marking the rows
        it does not decide, and the right side ``b`` evaluated on every row: the truth value
        of ``b`` where needed, ``ca`` elsewhere, as evaluating ``b`` only where needed gives."""
        n = len(ca.kind)
        if type(b) is Const:
            tb = truthiness(b.value)
            out = ca.copy()
            if tb is True or tb is False:
                out.i[need] = int(tb)
            else:
                out.uni = -1
                out.kind[need] = K_ERROR if tb is ERROR else K_UNDEF
                out.i[need] = 0
            return out
        tb_col = ops.truth(b)  # type: ignore[arg-type]
        if tb_col is b or ops.uniform(tb_col) == K_BOOL:
            x, y = ca.i != 0, tb_col.i != 0
            i = (x | y if stop else x & y).astype(np.int64)
            return Column(kinds(n, K_BOOL), i, None, None, None, self.pool, K_BOOL)
        out = ca.copy()
        out.uni = -1
        out.kind[need] = tb_col.kind[need]
        out.i[need] = tb_col.i[need]
        return out

    def unary(self, node: ast.Unary, scope: int, rows: np.ndarray, active: frozenset) -> Values:
        a = self.ev(node.operand, scope, rows, active)
        if type(a) is Const:
            v = a.value
            if v is ERROR or v is UNDEFINED:
                return a
            return Const(UNARY[node.op](v))
        res, fb = ops.unary(node.op, a)  # type: ignore[arg-type]
        return self.merge_fallback(node, scope, rows, active, res, fb)

    def choose(
        self,
        node: ast.Node,
        cond: ast.Node,
        then: ast.Node,
        other: ast.Node,
        scope: int,
        rows: np.ndarray,
        active: frozenset,
    ) -> Values:
        """``c ? a : b`` and ``ifThenElse(c, a, b)``: each branch only on its rows."""
        c = self.ev(cond, scope, rows, active)
        if type(c) is Const:
            tc = truthiness(c.value)
            if tc is True:
                return self.ev(then, scope, rows, active)
            if tc is False:
                return self.ev(other, scope, rows, active)
            return Const(tc)
        cc = ops.truth(c)  # type: ignore[arg-type]
        out = cc
        for want, branch in ((1, then), (0, other)):
            m = (cc.kind == K_BOOL) & (cc.i == want)
            if m.all():
                return self.ev(branch, scope, rows, active)
            if m.any():
                pos = m.nonzero()[0]
                if out is cc:
                    out = cc.copy()
                out.put(pos, self.ev(branch, scope, rows[pos], active))
        return out

    def elvis(self, node: ast.Elvis, scope: int, rows: np.ndarray, active: frozenset) -> Values:
        a = self.ev(node.left, scope, rows, active)
        if type(a) is Const:
            return self.ev(node.right, scope, rows, active) if a.value is UNDEFINED else a
        m = a.kind == K_UNDEF  # type: ignore[union-attr]
        if not m.any():
            return a
        if m.all():
            return self.ev(node.right, scope, rows, active)
        pos = m.nonzero()[0]
        out = a.copy()  # type: ignore[union-attr]
        out.put(pos, self.ev(node.right, scope, rows[pos], active))
        return out

    # ---- functions ---------------------------------------------------------------------------

    def call(self, node: ast.Call, scope: int, rows: np.ndarray, active: frozenset) -> Values:
        entry = registry.lookup(node.lname)
        if entry is None or not entry.accepts(len(node.args)):
            return Const(ERROR)
        lname = node.lname
        if lname == "ifthenelse" and entry.impl.__module__ == "classad.functions.meta":
            cond, then, other = node.args
            return self.choose(node, cond, then, other, scope, rows, active)
        tests = _TYPE_TESTS.get(lname)
        if tests is not None and entry.impl.__module__ == "classad.functions.types":
            a = self.ev(node.args[0], scope, rows, active)
            if type(a) is Const:
                return Const(ops.is_kind(Column.broadcast(a.value, 1, self.pool), tests).value(0))
            return ops.is_kind(a, tests)  # type: ignore[arg-type]
        if not _pure(entry):
            return self.scalar(node, scope, rows, active)
        if self.recording and getattr(entry.impl, "stable_in_evaluation", False):
            self.note(("volatile",), None)  # its value may change between evaluations
        args = [self.ev(a, scope, rows, active) for a in node.args]
        ctx = CallContext(self.fixed if scope == FIXED else None, self.st)
        if all(type(a) is Const for a in args):
            return Const(entry.impl(ctx, *[a.value for a in args]))
        if self._holes:
            per_variant = self._variant_call(node, entry, ctx, args, rows)
            if per_variant is not None:
                return per_variant
        vector = NUMERIC.get(lname)
        arg = args[0]
        if vector is not None and entry.impl.__module__ == vector[0] and len(args) == 1 and type(arg) is Column:
            out, rest = vector[1](arg)
            if rest.any():
                pos = rest.nonzero()[0]
                out.put(pos, self.distinct_calls(node, entry, ctx, [arg.take(pos)], scope, rows[pos], active))
            return out
        return self.distinct_calls(node, entry, ctx, args, scope, rows, active)

    def _variant_call(self, node: ast.Call, entry: Any, ctx: Any, args: list, rows: np.ndarray) -> Optional[Column]:
        """A list function called in a family's template with holes of the family and
        constants (``member(TARGET.Owner, HOLE)``): its value on ``rows`` from one result per
        variant, computed once for the constants' values and kept with the family's
        literals (so a request of the same owner, in any later cycle, only picks each row's);
        None when the call is not of that form (the caller then calls it row by row)."""
        family = -1
        for a, v in zip(node.args, args):
            if type(a) is Hole:
                if family >= 0 and a.family != family:
                    return None
                family = a.family
            elif type(v) is not Const:
                return None
        held = self._holes.get(family)
        remembered = self._call_results(entry)
        if held is None or remembered is None:
            return None
        at, _, groups, per_variant, kept = held
        toks = tuple(None if type(a) is Hole else remembered.argument_token(v.value) for a, v in zip(node.args, args))
        if any(t is None for a, t in zip(node.args, toks) if type(a) is not Hole):
            return None
        key = (id(node), toks)
        seen = kept.get(key)
        if seen is None or seen[0] is not node:
            whole = [per_variant[a.k] if type(a) is Hole else v for a, v in zip(node.args, args)]
            result = _calls_on_lists(remembered, entry, ctx, whole, self.pool)
            if result is None:
                return None
            if len(kept) >= 1 << 12:
                kept.clear()
            seen = kept[key] = (node, result)
        variant = groups if len(rows) == len(at) else groups[at.searchsorted(rows)]
        return seen[1].take(variant)  # type: ignore[no-any-return]

    def _call_results(self, entry: Any) -> Optional[CallResults]:
        """The table's remembered results of ``entry``'s calls, None when its calls are not
        remembered (it may answer differently for the same argument values)."""
        if self.calls is None or not _value_only(entry):
            return None
        return self.calls

    def distinct_calls(
        self, node: ast.Call, entry: Any, ctx: Any, args: list, scope: int, rows: np.ndarray, active: frozenset
    ) -> Column:
        """A pure function called once per distinct combination of argument values."""
        remembered = self._call_results(entry)
        if remembered is not None:
            on_lists = _calls_on_lists(remembered, entry, ctx, args, self.pool)
            if on_lists is not None:
                return on_lists
        n = len(rows)
        cols = [a for a in args if type(a) is Column]
        other = np.zeros(n, bool)
        keys = []
        for c in cols:
            k = c.kind
            objects = _literal_lists(c, self.calls)
            if objects is None:
                other |= k == K_OTHER
            payload = np.where(
                (k == K_INT) | (k == K_BOOL),
                c.i,
                np.where(
                    k == K_REAL, c.f.view(np.int64), np.where(k == K_STR, c.s, objects if objects is not None else 0)
                ),
            )
            keys.append(k.astype(np.int64))
            keys.append(payload)
        ok = (~other).nonzero()[0]
        out = Column.empty(n, self.pool)
        if len(ok):
            first, inverse = _distinct(keys if len(ok) == n else [k[ok] for k in keys])
            if remembered is not None:
                results = remembered.calls(entry, ctx, args, ok[first].tolist())
            else:
                results = []
                for r in ok[first].tolist():
                    results.append(entry.impl(ctx, *[a.value if type(a) is Const else a.value(r) for a in args]))
            out.put(ok, Column.of_values(results, self.pool).take(inverse))
        if other.any():
            pos = other.nonzero()[0]
            out.put(pos, self.scalar(node, scope, rows[pos], active))
        return out


def _combination(node: Any) -> bool:
    """See :meth:`Run._combines`: names and ``MY.x`` under ``&&``, ``||``, ``!`` and parentheses."""
    t = type(node)
    if t is ast.Paren:
        return _combination(node.inner)
    if t is ast.Binary:
        return (node.op == "&&" or node.op == "||") and _combination(node.left) and _combination(node.right)
    if t is ast.Unary:
        return node.op == "!" and _combination(node.operand)
    if t is ast.AttrRef:
        return not node.absolute and node.lname not in SPECIAL_NAMES
    if t is ast.Select:
        base = node.base
        return (
            type(base) is ast.AttrRef and not base.absolute and base.lname == "my" and node.lname not in SPECIAL_NAMES
        )
    return False


def _and_names(node: Any, row_only: Optional[RowOnly]) -> Optional[list[str]]:
    """The names of a ``&&`` of two or more unscoped names (in parentheses or not), left to
    right, when no ``&&`` of them is a row-only value (:meth:`Run.ev` would look that up
    first); else None."""
    names: list[str] = []
    for n, combines in _combined(node, _AND, False):
        if combines:
            if row_only is not None and row_only.shape(n)[1] >= 0:
                return None
        elif type(n) is ast.AttrRef and not n.absolute and n.lname not in SPECIAL_NAMES:
            names.append(n.lname)
        else:
            return None
    return names if len(names) >= 2 else None


def _verdict(known: dict[int, tuple[Any, bool]], node: Any, shape: Callable[[Any], bool]) -> bool:
    """``shape(node)``, remembered in ``known`` by node (with the node, so that its id is not
    reused; ``known`` emptied at 65,536 entries)."""
    seen = known.get(id(node))
    if seen is not None and seen[0] is node:
        return seen[1]
    verdict = shape(node)
    if len(known) >= 1 << 16:
        known.clear()
    known[id(node)] = (node, verdict)
    return verdict


def _plain_shape(node: Any) -> bool:
    """See :meth:`Run._plain`."""
    t = type(node)
    if t is ast.Paren:
        return _plain_shape(node.inner)
    if t is ast.Binary and (node.op == "&&" or node.op == "||"):
        return _plain_shape(node.left) and _plain_shape(node.right)
    if t is ast.Unary and node.op == "!":
        return _plain_shape(node.operand)
    if t is ast.Binary and node.op not in _COMPARE and node.op != "is" and node.op != "isnt":
        return False  # arithmetic at the top: a rank, whose column forms cost more
    return t is not Hole and _simple_shape(node)


def _combination_ids(node: Any) -> set[int]:
    """The ids of ``node`` and of the ``&&``, ``||`` and ``!`` nodes it combines directly."""
    return {id(n) for n, combines in _combined(node, _AND_OR, True) if combines}


def _combined(node: Any, ops: frozenset[str], negation: bool) -> Iterator[tuple[Any, bool]]:
    """The nodes of ``node`` as a combination of the binary operators ``ops`` (and of ``!``
    when ``negation``), parentheses looked through, left to right: each such operator's
    node (True) before its operands, each other node met (False) in place of its subtree."""
    todo = [node]
    while todo:
        n = todo.pop()
        t = type(n)
        if t is ast.Paren:
            todo.append(n.inner)
        elif t is ast.Binary and n.op in ops:
            yield n, True
            todo += (n.right, n.left)
        elif negation and t is ast.Unary and n.op == "!":
            yield n, True
            todo.append(n.operand)
        else:
            yield n, False


_AND = frozenset({"&&"})
_AND_OR = frozenset({"&&", "||"})


def _bool_array(v: Values, n: int) -> Optional[np.ndarray]:
    """``v`` on ``n`` rows as a boolean array when it is a boolean on every row, else None."""
    if type(v) is Const:
        value = v.value
        return np.full(n, value) if type(value) is bool else None
    col: Column = v  # type: ignore[assignment]
    if col.uni == K_BOOL or ops.uniform(col) == K_BOOL:
        return col.i != 0
    return None


# A family being evaluated (Run.family_values): its rows, each hole's literal on each of them,
# each row's expression (its group), each hole's literal per expression, results of calls.
_Held = tuple[np.ndarray, list[Column], np.ndarray, list[Column], dict]


class _Plan:
    """How :meth:`Run._conjunction_true` evaluates one ``&&`` chain of the fixed ad on every
    row of one generation of a table: the true rows of its row-only parts and-ed together
    (None: it has none), and its other parts in order, each ``(part, row values, other
    side, swapped)`` for a comparison of the row values (a column) with a value of the
    fixed ad, ``(part, None, None, False)`` for a part evaluated as :meth:`Run._bools` does."""

    __slots__ = ("node", "table", "generation", "strict", "active", "fixed_true", "steps", "usable")

    def __init__(self, node: Any, table: AdTable, strict: bool, active: frozenset) -> None:
        self.node = node
        self.table = weakref.ref(table)
        self.generation = table.generation
        self.strict, self.active = strict, active
        self.fixed_true: Optional[np.ndarray] = None
        self.steps: list[tuple[Any, Optional[Column], Any, bool]] = []
        self.usable = True

    def fits(self, table: AdTable, strict: bool, active: frozenset) -> bool:
        """Whether this plan was made for ``table`` as it is now, in the same mode and context."""
        return (
            self.table() is table
            and self.generation == table.generation
            and self.strict == strict
            and self.active == active
        )


class _RowPlan:
    """How :meth:`Run._row_chain_true` evaluates one ``&&`` chain of the rows on one
    generation of a table: the true rows of its parts that read of the fixed ad at most
    the clock and names it lacks, and-ed together (None: it has none); its other parts in
    order, each ``(part, column, other side, swapped)`` for a comparison of such a side's
    column over every row with the other side's value, ``(part, None, None, False)`` for a
    part evaluated as :meth:`Run._bools` does; and what the kept values read of the fixed
    ad (``keys``, ``tokens``: any run using them gives the same)."""

    __slots__ = (
        "node",
        "table",
        "generation",
        "strict",
        "active",
        "no_fixed",
        "fixed_true",
        "steps",
        "keys",
        "tokens",
        "usable",
    )

    def __init__(self, node: Any, table: AdTable, strict: bool, active: frozenset, no_fixed: bool) -> None:
        self.node = node
        self.table = weakref.ref(table)
        self.generation = table.generation
        self.strict, self.active, self.no_fixed = strict, active, no_fixed
        self.fixed_true: Optional[np.ndarray] = None
        self.steps: list[tuple[Any, Optional[Column], Any, bool]] = []
        self.keys: tuple = ()
        self.tokens: tuple = ()
        self.usable = True

    def fits(self, table: AdTable, strict: bool, active: frozenset, no_fixed: bool) -> bool:
        """Whether this plan was made for ``table`` as it is now, in the same mode and context."""
        return (
            self.table() is table
            and self.generation == table.generation
            and self.strict == strict
            and self.active == active
            and self.no_fixed == no_fixed
        )


def _row_conjuncts(node: Any, ro: RowOnly) -> list:
    """The operands of the rows' ``&&`` chain ``node`` in the order :meth:`Run._bools`
    evaluates them; a row-only ``&&`` is one operand, as :meth:`Run._bools` takes it whole."""
    while type(node) is ast.Paren:
        node = node.inner
    if type(node) is ast.Binary and node.op == "&&" and ro.shape(node)[1] < 0:
        return _row_conjuncts(node.left, ro) + _row_conjuncts(node.right, ro)
    return [node]


def _fixed_free(reads: Reads) -> bool:
    """Whether what ``reads`` noted of the fixed ad is at most the clock and names it lacks."""
    return reads.shareable and all(key == ("now",) or tok is ABSENT for key, tok in reads.keys.items())


def _same(values: Any) -> Any:
    """``values`` as they are (a kept column read on every row)."""
    return values


def _true_of(got: Truths, n: int) -> np.ndarray:
    """The true rows of the truth value ``got`` on ``n`` rows, as one boolean array."""
    if type(got) is _Tri:
        got = got.t  # type: ignore[union-attr]
    if type(got) is np.ndarray:
        return got
    return np.full(n, bool(got))


def _conjuncts(node: Any, ro: RowOnly) -> list:
    """The operands of the ``&&`` chain ``node`` (in the fixed ad's scope) in the order
    :meth:`Run._bools` evaluates them; a row-only ``&&`` is one operand, as :meth:`Run._bools`
    takes it whole."""
    while type(node) is ast.Paren:
        node = node.inner
    if type(node) is ast.Binary and node.op == "&&" and ro.partner_form(node) is None:
        return _conjuncts(node.left, ro) + _conjuncts(node.right, ro)
    return [node]


def _varying_true(got: Truths, n: int) -> Optional[np.ndarray]:
    """The true rows of a truth value that is not one constant for all rows (one that
    varies, or a boolean array); None for a constant (which may decide a chain alone)."""
    if type(got) is np.ndarray:
        return got
    if type(got) is _Tri and (type(got.t) is np.ndarray or type(got.u) is np.ndarray or type(got.e) is np.ndarray):  # type: ignore[union-attr]
        return np.broadcast_to(got.t, n)  # type: ignore[union-attr]
    return None


class _Tri:
    """A truth value on each row (or one for all rows, each part an ``np.bool_``) that is
    not a boolean everywhere: true where ``t``, Undefined where ``u``, Error where ``e``
    (no two on one row), false elsewhere."""

    __slots__ = ("t", "u", "e")

    def __init__(self, t: Bits, u: Bits, e: Bits) -> None:
        self.t, self.u, self.e = t, u, e

    def false(self) -> Bits:
        """Where the value is false: neither true, Undefined nor Error."""
        return ~(self.t | self.u | self.e)

    def decides(self) -> bool:
        """Whether this is one Error for all rows (a left side of ``&&``/``||`` that decides alone)."""
        return type(self.e) is np.bool_ and bool(self.e)

    def negated(self) -> "_Tri":
        """``!``: true and false swapped, Undefined and Error kept."""
        return _Tri(self.false(), self.u, self.e)

    def values(self, n: int, pool: Any) -> Values:
        """The value on ``n`` rows: a constant when every part is one value, else a column."""
        t, u, e = self.t, self.u, self.e
        if type(t) is np.bool_ and type(u) is np.bool_ and type(e) is np.bool_:
            return Const(UNDEFINED if u else ERROR if e else bool(t))
        kind = np.full(n, K_BOOL, np.int8)
        kind[np.broadcast_to(u, n)] = K_UNDEF
        kind[np.broadcast_to(e, n)] = K_ERROR
        return Column(kind, np.broadcast_to(t, n).astype(np.int64), None, None, None, pool)


# A truth value of a combination (see Run._bools): booleans, or a _Tri.
Truths = Union[np.ndarray, np.bool_, _Tri]


def _as_tri(x: Truths) -> _Tri:
    return x if type(x) is _Tri else _Tri(x, np.False_, np.False_)  # type: ignore[arg-type, return-value]


def _tri_result(t: Bits, u: Bits, e: Bits) -> Truths:
    """The truth value with parts ``t``, ``u`` and ``e``: booleans when no row is Undefined or Error."""
    if np.any(u) or np.any(e):
        return _Tri(t, u, e)
    if type(t) is not np.ndarray and (type(u) is np.ndarray or type(e) is np.ndarray):
        return t | u | e  # an array of t's value: u and e are false on every row
    return t


def _tri_and(a: Truths, b: Truths) -> Truths:
    """``a && b`` row by row: false on the left decides, Error on the left is Error, true
    gives the right side, Undefined gives false where the right is false, Error where it
    is Error, Undefined elsewhere."""
    x, y = _as_tri(a), _as_tri(b)
    go = x.t | x.u
    return _tri_result(x.t & y.t, (x.t & y.u) | (x.u & (y.t | y.u)), x.e | (go & y.e))


def _tri_or(a: Truths, b: Truths) -> Truths:
    """``a || b`` row by row: true on the left decides, Error on the left is Error, false
    gives the right side, Undefined gives true where the right is true, Error where it
    is Error, Undefined elsewhere."""
    x, y = _as_tri(a), _as_tri(b)
    xf = x.false()
    go = xf | x.u
    return _tri_result(x.t | (go & y.t), (xf & y.u) | (x.u & ~y.t & ~y.e), x.e | (go & y.e))


def _truths(v: Values, n: int, keep_shape: bool = False) -> Truths:
    """The truth value of ``v`` on ``n`` rows (what ``&&``, ``||`` and ``!`` read of an
    operand): :func:`_bits` when it is a boolean on every row, else a :class:`_Tri`.  With
    ``keep_shape``, a constant boolean as an array of ``n`` (:func:`_bool_array`)."""
    got = _bool_array(v, n) if keep_shape else _bits(v, n)
    if got is not None:
        return got
    if type(v) is Const:
        tv = truthiness(v.value)
        if tv is True or tv is False:
            return np.full(n, tv) if keep_shape else np.bool_(tv)
        return _Tri(np.False_, np.bool_(tv is UNDEFINED), np.bool_(tv is ERROR))
    tc = ops.truth(v)  # type: ignore[arg-type]
    k = tc.kind
    t = (k == K_BOOL) & (tc.i != 0)
    u, e = k == K_UNDEF, k == K_ERROR
    return _tri_result(t, u, e)


def _bits(v: Values, n: int) -> Optional[Bits]:
    """:func:`_bool_array`, but a constant boolean as one ``np.bool_``."""
    if type(v) is Const:
        value = v.value
        return np.bool_(value) if type(value) is bool else None
    return _bool_array(v, n)


def _simple_shape(node: Any) -> bool:
    """See :meth:`Run._simple`."""
    t = type(node)
    if t is ast.Literal:
        return token(node.value) is not None
    if t is ast.Paren:
        return _simple_shape(node.inner)
    if t is ast.Binary:
        return node.op in _EAGER_OPS and _simple_shape(node.left) and _simple_shape(node.right)
    if t is ast.AttrRef:
        # CurrentTime is the clock where no ad defines it: a constant for the whole run.
        return not node.absolute and (node.lname not in SPECIAL_NAMES or node.lname == "currenttime")
    if t is ast.Select:
        base = node.base
        return (
            type(base) is ast.AttrRef
            and not base.absolute
            and base.lname in ("my", "target", "other")
            and node.lname not in SPECIAL_NAMES
        )
    return t is Hole


def _distinct(keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct combinations of ``keys`` (arrays of equal length, at least one row):
    the first position of each, and each position's combination (an index into those)."""
    order = np.lexsort(keys[::-1])  # stable: each combination's positions stay ascending
    starts = np.zeros(len(order), bool)
    starts[0] = True
    for k in keys:
        ordered = k[order]
        starts[1:] |= ordered[1:] != ordered[:-1]
    inverse = np.empty(len(order), np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return order[starts], inverse


def _value_only(entry: Any) -> bool:
    """Whether a registered function's result depends on nothing but its argument values,
    in every evaluation (not on a clock, a random source, a time budget or the ad it is
    called in)."""
    module = getattr(entry.impl, "__module__", "")
    return (
        module in _VALUE_ONLY_MODULES
        and entry.kind == "eager"
        and entry.name.lower() != "random"
        and not getattr(entry.impl, "stable_in_evaluation", False)
    )


def _is_literal_list(v: Any) -> bool:
    """Whether ``v`` is a list written as literals only."""
    return type(v) is ListValue and v.nodes is not None and all(type(x) is ast.Literal for x in v.nodes)


def _calls_on_lists(known: CallResults, entry: Any, ctx: Any, args: list, pool: Any) -> Optional[Column]:
    """:meth:`Run.distinct_calls` of a list function whose arguments are constants but one,
    a column of lists on every row (``member(TARGET.Owner, {...})`` over the rows of a
    family of ``START`` variants): called once per distinct list object, through
    :meth:`CallResults.on_lists`; None when that does not apply (nothing called)."""
    at = -1
    for j, a in enumerate(args):
        if type(a) is not Const:
            if at >= 0:
                return None
            at = j
    if at < 0:
        return None
    col: Column = args[at]
    if col.o is None or ops.uniform(col) != K_OTHER:
        return None
    objects = col.o.tolist()
    ids = np.fromiter(map(id, objects), np.int64, len(objects))
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    lists = [objects[j] for j in first.tolist()]
    results = known.on_lists(entry, ctx, args, at, lists, _is_literal_list)
    if results is None:
        return None
    return Column.of_values(results, pool).take(inverse.reshape(-1))


def _literal_lists(col: Column, known: Optional[CallResults] = None) -> Optional[np.ndarray]:
    """For a column whose other values (if any) are all lists of literals: a number per row
    telling those lists apart by identity (a function of such a list depends on its
    elements alone, whatever ad it was written in); None when some other value is not one.
    ``known`` remembers which lists were found to be of literals."""
    if col.o is None:
        return None
    at = (col.kind == K_OTHER).nonzero()[0]
    out = np.zeros(len(col.kind), np.int64)
    if not len(at):
        return out
    objects = col.o[at].tolist()
    ids = np.fromiter(map(id, objects), np.int64, len(objects))
    _, first, codes = np.unique(ids, return_index=True, return_inverse=True)
    for j in first.tolist():
        if not (_is_literal_list(objects[j]) if known is None else known.literal_list(objects[j], _is_literal_list)):
            return None
    out[at] = codes.reshape(-1)
    return out


__all__ = ["FIXED", "ROW", "Run"]


class _Stacked(Run):
    """One walk over :class:`StackedRows` standing for the runs of several fixed ads that
    each stored a result of one key (:meth:`Run._stacked_parts`): copy ``j`` of the rows
    reads of the fixed ad the values the ``j``-th result recorded (by its tokens, the
    values every fixed ad that finds it gives).  It reads nothing else of the fixed ad
    (:class:`_NotStackable` otherwise), never falls back to the scalar evaluator, and
    refuses random numbers; it keeps no shared results, but reads the table's row-only
    values and remembered function calls.  It notes which rows read a value of the fixed
    ad that differs between the results (with fewer copies than results, the walk stands
    for the first results, and those rows still are the ones whose values may differ)."""

    def __init__(self, view: StackedRows, run: Run, results: list[MemoEntry]) -> None:
        state = copy.copy(run.st)
        state.random = _NO_DRAWS
        super().__init__(view, run.fixed, state, run.row_is_my)  # type: ignore[arg-type]
        self.view = view
        self.calls = run.calls
        self.owner = run  # the run over the table, whose row-only values serve every copy
        self.row_only = run.row_only
        first = results[0]
        # read key -> the value of every copy (a constant when they agree), or ABSENT
        self.read_values: dict[Any, Any] = {}
        attrs: dict[str, Any] = {}
        for i, key in enumerate(first.keys):
            toks = [entry.tokens[i] for entry in results]
            if toks[0] == ABSENT:
                self.read_values[key] = ABSENT
                continue
            values = [_token_value(tok) for tok in toks]
            if all(tok == toks[0] for tok in toks):
                self.read_values[key] = Const(values[0])
            else:
                self.read_values[key] = Column.of_values(values, view.pool)
            attrs[key[1]] = (key[1], ast.Literal(values[0]))
        self.fixed_attrs = _Entries(attrs)
        self.partner_plain = "target" not in self.fixed_attrs and "other" not in self.fixed_attrs
        self.recording = [Reads()]  # so that reads are noted (see note)
        # id -> (a column fixed_attr made, its values by copy): a value of the fixed ad per row
        self._per_copy: dict[int, tuple[Column, Column]] = {}
        # The rows that read such a value (made at the first read).
        self.varying: Optional[np.ndarray] = None
        # id -> (a column fixed_attr made, the rows it was made for): not yet marked in
        # ``varying`` (see :meth:`_operate`; the rest are marked by :meth:`marked`).
        self._unmarked: dict[int, tuple[Column, np.ndarray]] = {}

    def note(self, key: Any, tok: Any) -> None:
        if self.read_values.get(key) is not ABSENT or tok != ABSENT:
            raise _NotStackable

    def row_only_value(self, node: Any, rows: np.ndarray, active: frozenset, as_bools: bool = False) -> Any:
        """The table's row-only value of ``node`` at the rows the stacked ``rows`` copy."""
        return self.owner.row_only_value(node, self.view.base[rows], active, as_bools)

    def fixed_attr(self, lname: str, rows: np.ndarray, active: frozenset) -> Values:
        got = self.read_values.get(("a", lname, active))
        if got is None or got is ABSENT:
            raise _NotStackable
        if type(got) is Const:
            return got  # type: ignore[no-any-return]
        col: Column = got.take(self.view.copy_of(rows))
        self._per_copy[id(col)] = (col, got)
        self._unmarked[id(col)] = (col, rows)
        return col

    def marked(self) -> Optional[np.ndarray]:
        """``varying`` once the walk is over: the rows of every value of the fixed ad read
        marked but where :meth:`_operate` found the values of the copies to give one result."""
        for _, rows in self._unmarked.values():
            self._mark(rows)
        self._unmarked.clear()
        return self.varying

    def _mark(self, rows: np.ndarray) -> None:
        if self.varying is None:
            self.varying = np.zeros(self.view.n, dtype=bool)
        self.varying[rows] = True

    def _operate(
        self, node: ast.Binary, a: Values, b: Values, scope: int, rows: np.ndarray, active: frozenset
    ) -> Values:
        """:meth:`Run._operate`, noting which rows read a value of the fixed ad that differs
        between the copies: a value compared by ``=?=`` or ``=!=`` (as it came from
        :meth:`fixed_attr`) with a value that is none of the copies' values gives every copy
        one result (``TARGET.Owner =!= undefined`` is true for every owner), so only the rows
        where the other side is one of them (a START's ``TARGET.Owner =!= "user14"``) are."""
        if node.op == "is" or node.op == "isnt":
            for mine, other in ((a, b), (b, a)):
                held = self._unmarked.get(id(mine)) if type(mine) is Column else None
                if held is None or held[0] is not mine:
                    continue
                if type(other) is Column and id(other) in self._unmarked:
                    break  # both sides differ between copies: both stay to be marked
                del self._unmarked[id(mine)]
                same = _meta_matches(self._per_copy[id(mine)][1], other, len(held[1]))
                if same is True:
                    self._mark(held[1])
                elif same is not False:
                    self._mark(held[1][same])
                break
        return super()._operate(node, a, b, scope, rows, active)

    def _variant_call(self, node: ast.Call, entry: Any, ctx: Any, args: list, rows: np.ndarray) -> Optional[Column]:
        """:meth:`Run._variant_call` of each copy, where an argument is the fixed ad's value
        (one constant per copy, as each run's own call gets it)."""
        varying = {}
        for i, v in enumerate(args):
            seen = self._per_copy.get(id(v)) if type(v) is Column else None
            if seen is not None and seen[0] is v:
                varying[i] = seen[1]
        if not varying:
            return super()._variant_call(node, entry, ctx, args, rows)
        copies = self.view.copy_of(rows)
        cuts = np.flatnonzero(copies[1:] != copies[:-1]) + 1
        out = Column.empty(len(rows), self.pool)
        for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(rows)]):
            at = np.arange(lo, hi)
            j = int(copies[lo])
            mine = [
                Const(varying[i].value(j)) if i in varying else v if type(v) is Const else v.take(at)
                for i, v in enumerate(args)
            ]
            got = super()._variant_call(node, entry, ctx, mine, rows[lo:hi])
            if got is None:
                return None
            out.put(at, got)
        return out

    def scalar(self, node: ast.Node, scope: int, rows: np.ndarray, active: frozenset) -> Column:
        if len(rows) and not self.eager and not (self._template_ids and id(node) in self._template_ids):
            raise _NotStackable
        return super().scalar(node, scope, rows, active)


def _meta_matches(values: Column, other: Values, n: int) -> Union[bool, np.ndarray]:
    """Where ``other`` (a constant, or a column of ``n`` rows) may be ``=?=`` to one of
    ``values`` (the copies' values of a fixed ad's attribute, one per copy): False
    nowhere, True everywhere, else a mask of the rows.  It may say so of a row where it is
    not (never the other way round): there the copies' values are taken to differ."""
    kinds_of = values.kind
    if bool((kinds_of == K_OTHER).any()):
        return True
    if type(other) is Const:
        v = other.value
        if type(v) not in (bool, int, float, str) and v is not UNDEFINED and v is not ERROR:
            return True
        return any(scalar_meta_equal(values.value(j), v) is not False for j in range(len(kinds_of)))
    if type(other) is not Column or other.pool is not values.pool or len(other.kind) != n:
        return True
    k = other.kind
    out = k == K_OTHER
    for kind in np.unique(kinds_of).tolist():
        at = kinds_of == kind
        here = k == kind
        if kind == K_UNDEF or kind == K_ERROR:
            out |= here
        elif kind == K_INT or kind == K_BOOL:
            out |= here & np.isin(other.i, values.i[at])
        elif kind == K_REAL:
            out |= here & np.isin(other.f, values.f[at])
        elif kind == K_STR:
            out |= here & np.isin(other.s, values.s[at])
        else:
            return True
    return out if bool(out.any()) else False


def _token_value(tok: Any) -> Any:
    """The value a :func:`~classad.columnar.memo.token` stands for."""
    if type(tok) is tuple:
        t, v = tok
        return float.fromhex(v) if t is float else v
    return tok  # Undefined, Error
