"""Compiling expression trees into Python closures, and the scope rules they run under.

Every node is compiled once, on first use, into a closure ``fn(ad, state)``:
``ad`` is the ClassAd the expression lives in (its lexical scope) and ``state``
the :class:`EvalState` of the current evaluation (mode, clock, random source,
the partner ad of a match, and the guard against circular references).  The
closure is cached on the node, so every ad sharing a tree shares its code; all
dispatch, operator lookup and name folding happen at compile time.

Scoping (HTCondor's default "compat" mode, docs/language.md, attribute references and scoping): an unscoped name is
looked up in the current ad, then the special names (``parent``, ``self``,
``toplevel``/``root``, and in compat mode ``my`` and ``CurrentTime``), then the
enclosing ads; at the top of the chain ``target``/``other`` name the partner ad
of a match; finally, in compat mode, the lookup is repeated in the partner ad.
A circular reference evaluates to Undefined, as HTCondor 25.x does.

Within one top-level evaluation (the outermost attribute or expression; the
state's ``my``/``target`` cannot change during it) the value of each attribute
of each ad is memoised, so ``e_i = e_(i-1) + e_(i-1)`` costs one step per
attribute.  A value is not memoised when its computation met a circular
reference, the depth limit or ``random()``, since it could then differ on
another path.  The budgets of :mod:`classad.limits` (steps, sizes built by
functions, regular-expression time) are reset at the start of each top-level
evaluation; exceeding one gives Error.
"""

from __future__ import annotations

import operator
import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable, Optional

from . import ast
from .adcore import AdCore
from .functions import registry
from .limits import LIMITS
from .operators import BINARY, UNARY, meta_equal
from .parser import parse_expr, parse_full_expr_lenient
from .values import ERROR, UNDEFINED, ListValue, RelTime, truthiness

# Closures call closures; Python 3.11 does not use the C stack for these calls,
# so a higher limit is safe and lets deep (but legal) expressions evaluate.
if sys.getrecursionlimit() < 20000:
    sys.setrecursionlimit(20000)

# Nested attribute evaluations deeper than this give Error (the C++ limit is 400).
MAX_EVAL_DEPTH = 400


class EvalState:
    """Everything an evaluation needs besides the expression and its ad.

    With a ``target`` the evaluation runs in a match context built like
    HTCondor's ``MatchClassAd``: a synthetic top ad holding ``LEFT`` (= ``my``),
    ``RIGHT`` (= ``target``) and two context ads that name ``my``/``target``/
    ``other``/``ad`` from each side.  The user's ads are never re-parented:
    :meth:`parent_of` supplies those enclosing ads virtually, and they are only
    built when a lookup walks past the top of an ad.
    """

    __slots__ = (
        "strict",
        "clock",
        "random",
        "my",
        "target",
        "active",
        "depth",
        "_match",
        "memo",
        "steps",
        "alloc",
        "work",
        "regex_left",
        "taint",
        "running",
    )

    def __init__(
        self,
        my: Any = None,
        target: Any = None,
        strict: bool = False,
        clock: Optional[Callable[[], float]] = None,
        rng: Optional[random.Random] = None,
    ) -> None:
        self.strict = strict
        self.clock = clock or time.time
        self.random = rng or _default_random
        self.my = my
        self.target = target
        self.active: set = set()
        self.depth = 0
        self._match: Optional[tuple] = None
        self.memo: dict = {}  # (id(ad), lname) -> (ad, value), for one top-level evaluation
        self.taint = 0  # bumped by anything that makes a value path-dependent
        self.running = False  # a top-level evaluation is under way
        self.begin()

    def begin(self) -> None:
        """Start a top-level evaluation: fresh budgets, empty memo."""
        self.steps = LIMITS.eval_steps
        self.alloc = LIMITS.alloc_budget
        self.work = LIMITS.arg_work
        self.regex_left = LIMITS.regex_eval_seconds
        if self.memo:
            self.memo = {}

    def now(self) -> float:
        """The current time in seconds since the epoch (from the state's clock)."""
        return self.clock()

    def evaluate_in(self, node: ast.Node, ad: Any) -> Any:
        """The value of ``node`` in scope ``ad`` under this state (a lazy list's element)."""
        fn = node.fn
        if fn is None:
            fn = compile_node(node)
        return fn(ad, self)

    def partner(self, ad: Any) -> Any:
        """The other top-level ad of a match for an expression living under ``ad``."""
        if self.target is None or ad is None:
            return None
        while ad.parent is not None:
            ad = ad.parent
        if ad is self.my:
            return self.target
        if ad is self.target:
            return self.my
        return None

    def parent_of(self, ad: Any) -> Any:
        """The enclosing ad of ``ad``, including the virtual ones of a match context."""
        parent = ad.parent
        if parent is not None or self.target is None:
            return parent
        lctx, rctx, match = self._match or self._build_match()
        if ad is self.my:
            return lctx
        if ad is self.target:
            return rctx
        if ad is lctx or ad is rctx:
            return match
        return None

    def _build_match(self) -> tuple:
        match = AdCore.from_nodes(tuple((n, parse_expr(t)) for n, t in _MATCH_ATTRS))
        lctx = AdCore.from_nodes(tuple((n, parse_expr(t)) for n, t in _LEFT_CTX), match)
        rctx = AdCore.from_nodes(tuple((n, parse_expr(t)) for n, t in _RIGHT_CTX), match)
        match.set_node("lCtx", ast.Literal(lctx))
        match.set_node("rCtx", ast.Literal(rctx))
        match.set_node("LEFT", ast.Literal(self.my))
        match.set_node("RIGHT", ast.Literal(self.target))
        self._match = (lctx, rctx, match)
        return self._match


_MATCH_ATTRS = (
    ("symmetricMatch", "RIGHT.requirements && LEFT.requirements"),
    ("leftMatchesRight", "RIGHT.requirements"),
    ("rightMatchesLeft", "LEFT.requirements"),
    ("leftRankValue", "LEFT.rank"),
    ("rightRankValue", "RIGHT.rank"),
)
_LEFT_CTX = (("other", ".RIGHT"), ("target", ".RIGHT"), ("my", ".LEFT"), ("ad", ".LEFT"))
_RIGHT_CTX = (("other", ".LEFT"), ("target", ".LEFT"), ("my", ".RIGHT"), ("ad", ".RIGHT"))
# Every name an ad of the match context holds (lower case): a lookup of any other name
# that walks past the top of ``my`` or ``target`` finds nothing there, so it is answered
# without building them (they form a reference cycle, left for the cyclic collector).
_MATCH_CONTEXT_NAMES = frozenset(
    n.lower()
    for n, _ in (*_MATCH_ATTRS, *_LEFT_CTX, *_RIGHT_CTX, ("lCtx", ""), ("rCtx", ""), ("LEFT", ""), ("RIGHT", ""))
)


_default_random = random.Random()


@contextmanager
def seeded_random(seed: Optional[int]) -> Iterator[None]:
    """Within the block, ``random()`` in evaluations without a source of their own draws
    from ``seed`` (None: unchanged); the previous sequence resumes afterwards."""
    if seed is None:
        yield
        return
    saved = _default_random.getstate()
    _default_random.seed(seed)
    try:
        yield
    finally:
        _default_random.setstate(saved)


@contextmanager
def draws_undone(source: Optional[random.Random] = None) -> Iterator[None]:
    """Within the block evaluations may draw; afterwards ``source`` and the shared source
    (that of evaluations without a source of their own) continue as if they had not."""
    sources = [_default_random] if source is None or source is _default_random else [_default_random, source]
    saved = [s.getstate() for s in sources]
    try:
        yield
    finally:
        for s, state in zip(sources, saved):
            s.setstate(state)


_default_mode = {"strict": False}


def set_strict_mode(strict: bool) -> None:
    """Switch the default evaluation mode (HTCondor's ``STRICT_CLASSAD_EVALUATION``)."""
    _default_mode["strict"] = bool(strict)


def default_strict() -> bool:
    """Whether new evaluations run in strict mode."""
    return _default_mode["strict"]


def new_state(my: Any = None, target: Any = None, **kw: Any) -> EvalState:
    """An :class:`EvalState` in the default mode."""
    kw.setdefault("strict", _default_mode["strict"])
    return EvalState(my, target, **kw)


class CallContext:
    """What a built-in function sees: the current ad and the evaluation state."""

    __slots__ = ("ad", "state")

    def __init__(self, ad: Any, state: EvalState) -> None:
        self.ad = ad
        self.state = state

    def eval(self, node: ast.Node) -> Any:
        """Evaluate ``node`` in the current ad."""
        return evaluate_node(node, self.ad, self.state)

    def eval_in(self, node: ast.Node, ad: Any) -> Any:
        """Evaluate ``node`` with ``ad`` as its scope."""
        return evaluate_node(node, ad, self.state)

    def parse(self, text: str) -> ast.Node:
        """Parse expression text (raises ParseError)."""
        return parse_full_expr_lenient(text)


# ---- entry points ---------------------------------------------------------------


def evaluate_node(node: ast.Node, ad: Any, state: EvalState) -> Any:
    """The value of ``node`` evaluated in scope ``ad``."""
    fn = node.fn
    if fn is None:
        fn = compile_node(node)
    return fn(ad, state)


def evaluate_top(node: ast.Node, ad: Any, state: EvalState) -> Any:
    """Like :func:`evaluate_node`, but never raises: runaway depth becomes Error.

    Outside any evaluation this starts a top-level one (fresh budgets and memo).
    """
    if state.running:
        try:
            return evaluate_node(node, ad, state)
        except RecursionError:
            return ERROR
    state.begin()
    state.running = True
    try:
        return evaluate_node(node, ad, state)
    except RecursionError:
        return ERROR
    finally:
        state.running = False
        state.memo = {}


def compile_node(node: ast.Node) -> Callable:
    """Compile ``node`` (and its children) to a closure and cache it on the node."""
    fn = _COMPILERS[type(node)](node)
    object.__setattr__(node, "fn", fn)
    return fn


def _fn(node: ast.Node) -> Callable:
    return node.fn or compile_node(node)


# ---- attribute lookup -------------------------------------------------------------


def _root(ad: Any, state: EvalState) -> Any:
    while True:
        parent = state.parent_of(ad)
        if parent is None:
            return ad
        ad = parent


def eval_attribute(ad: Any, lname: str, node: ast.Node, state: EvalState) -> Any:
    """Evaluate the attribute ``lname`` (whose expression is ``node``) of ``ad``.

    Re-entering an attribute that is already being evaluated is a circular
    reference: the inner use is Undefined.  Values are memoised for the rest of
    the top-level evaluation (see the module notes); every call is one step of
    the evaluation's budget.
    """
    if type(node) is ast.Literal and type(node.value) is not RelTime:
        return node.value  # no references inside: nothing can recurse
    if not state.running:
        return _outermost(ad, lname, node, state)
    state.steps -= 1
    if state.steps < 0:
        return ERROR  # the step budget is spent: every later step fails too
    key = (id(ad), lname)
    hit = state.memo.get(key)
    if hit is not None:
        return hit[1]
    active = state.active
    if key in active:
        state.taint += 1
        return UNDEFINED
    if state.depth >= MAX_EVAL_DEPTH:
        state.taint += 1
        return ERROR
    taint = state.taint
    active.add(key)
    state.depth += 1
    try:
        fn = node.fn or compile_node(node)
        value = fn(ad, state)
    finally:
        state.depth -= 1
        active.discard(key)
    if state.taint == taint:
        state.memo[key] = (ad, value)  # the ad is kept alive so its id is not reused
    return value


def _outermost(ad: Any, lname: str, node: ast.Node, state: EvalState) -> Any:
    """An attribute evaluation that starts a top-level evaluation."""
    state.begin()
    state.running = True
    try:
        return eval_attribute(ad, lname, node, state)
    finally:
        state.running = False
        state.memo = {}


def _special(name: str, ad: Any, state: EvalState) -> Any:
    """The value of a special name at ``ad``, or None when ``name`` is not special there."""
    if name == "parent":
        parent = state.parent_of(ad)
        return parent if parent is not None else UNDEFINED
    if name == "self":
        return ad
    if name == "toplevel" or name == "root":
        return _root(ad, state)
    if not state.strict:
        if name == "my":
            return ad
        if name == "currenttime":
            return int(state.now())
    return None


_SPECIAL = frozenset({"parent", "self", "toplevel", "root", "my", "currenttime"})


def lookup_in_chain(ad: Any, lname: str, state: EvalState) -> Any:
    """Find ``lname`` starting in ``ad``: the ad itself, the special names, then the
    enclosing ads (this is also what selection ``e.name`` does).  Undefined if absent."""
    node = ad.lookup_node(lname)
    if node is not None:
        return eval_attribute(ad, lname, node, state)
    if lname in _SPECIAL:
        v = _special(lname, ad, state)
        if v is not None:
            return v
    cur = ad.parent
    while cur is not None:
        node = cur.lookup_node(lname)
        if node is not None:
            return eval_attribute(cur, lname, node, state)
        ad = cur
        cur = cur.parent
    if state.target is None:
        return UNDEFINED
    # Past the top of a user's ad: the context ads of the match.  Their four names are
    # answered directly, so the synthetic match ad is only built for rarer lookups.
    if lname in _CONTEXT_NAMES and (ad is state.my or ad is state.target):
        if lname == "target" or lname == "other":
            return state.target if ad is state.my else state.my
        return ad
    if lname not in _MATCH_CONTEXT_NAMES and (ad is state.my or ad is state.target):
        return UNDEFINED  # no context ad holds it: the match ad need not be built
    cur = state.parent_of(ad)
    while cur is not None:
        node = cur.lookup_node(lname)
        if node is not None:
            return eval_attribute(cur, lname, node, state)
        cur = state.parent_of(cur)
    return UNDEFINED


_CONTEXT_NAMES = frozenset({"target", "other", "my", "ad"})


def lookup_name(ad: Any, lname: str, state: EvalState) -> Any:
    """Resolve an unscoped name starting in ``ad``; in compat mode a name missing from
    the whole chain of a top-level ad is looked up again in the partner ad of a match."""
    if ad is None:
        return UNDEFINED
    value = lookup_in_chain(ad, lname, state)
    # Only a lookup that starts in a top-level ad goes on to the partner: from inside a
    # nested ad (a record literal, a stored sub-ad) the chain ends at the top-level ad.
    if value is UNDEFINED and not state.strict and state.target is not None and ad.parent is None:
        partner = state.partner(ad)
        if partner is not None and not _found_in_chain(ad, lname, state):
            return lookup_in_chain(partner, lname, state)
    return value


def _found_in_chain(ad: Any, lname: str, state: EvalState) -> bool:
    """Whether ``lname`` exists (as an attribute or special name) in the chain of ``ad``."""
    if lname in _SPECIAL and (lname in ("parent", "self", "toplevel", "root") or not state.strict):
        return True
    cur = ad
    while cur is not None:
        if cur.lookup_node(lname) is not None:
            return True
        if lname not in _MATCH_CONTEXT_NAMES and (cur is state.my or cur is state.target) and cur.parent is None:
            return False  # no context ad holds it: the match ad need not be built
        cur = state.parent_of(cur)
    return False


# ---- compilers, one per node kind ---------------------------------------------------------


def _compile_literal(node: ast.Literal) -> Callable:
    value = node.value
    if type(value) is RelTime:
        # A folded relTime("...") literal prints as relTime but evaluates to a real, as in
        # HTCondor: isRelTime(relTime("5")) is false, relTime("90") + relTime(1) is error.
        secs = float(value.secs)
        return lambda ad, st: secs
    return lambda ad, st: value


def _compile_attr(node: ast.AttrRef) -> Callable:
    lname = node.lname
    if node.absolute:

        def absolute(ad: Any, st: EvalState) -> Any:
            if ad is None or st.my is None:
                # No root ad: a hard evaluation failure in HTCondor, Error here.
                return ERROR
            return lookup_in_chain(_root(ad, st), lname, st)

        return absolute

    literal = ast.Literal

    def ref(ad: Any, st: EvalState) -> Any:
        if ad is not None:
            entry = ad._attrs.get(lname)  # the hot path: an attribute of the ad itself
            if entry is not None:
                found = entry[1]
                if type(found) is literal and type(found.value) is not RelTime:
                    return found.value
                return eval_attribute(ad, lname, found, st)
        return lookup_name(ad, lname, st)

    return ref


def _is_ad(v: Any) -> bool:
    return isinstance(v, AdCore)


def select_value(base: Any, lname: str, state: EvalState) -> Any:
    """``base.name`` for an already evaluated ``base``."""
    if base is UNDEFINED:
        return UNDEFINED
    if base is ERROR:
        return ERROR
    if _is_ad(base):
        return lookup_in_chain(base, lname, state)
    if type(base) is ListValue:
        return ListValue.of([select_value(v, lname, state) for v in base.iter_values(state)])
    return ERROR


def _compile_select(node: ast.Select) -> Callable:
    base_fn = _fn(node.base)
    lname = node.lname
    return lambda ad, st: select_value(base_fn(ad, st), lname, st)


def subscript_value(base: Any, index: Any, state: EvalState) -> Any:
    """``base[index]`` for evaluated operands."""
    if base is ERROR or index is ERROR:
        return ERROR
    if base is UNDEFINED or index is UNDEFINED:
        return UNDEFINED
    if type(base) is ListValue:
        if type(index) is not int:
            return ERROR
        i = index & 0xFFFFFFFF  # the C++ library keeps 32 bits of the index
        if i >= 0x80000000:
            i -= 1 << 32
        if i < 0 or i >= len(base):
            return ERROR
        return base.element(i, state)
    if _is_ad(base) and type(index) is str:
        lname = index.lower()
        node = base.lookup_node(lname)
        if node is None:
            return UNDEFINED
        value = eval_attribute(base, lname, node, state)
        if _is_ad(value):
            return value.detached()
        if type(value) is ListValue and value.nodes is not None:
            return ListValue(value.nodes, None)
        return value
    return ERROR


def _compile_subscript(node: ast.Subscript) -> Callable:
    base_fn, index_fn = _fn(node.base), _fn(node.index)
    return lambda ad, st: subscript_value(base_fn(ad, st), index_fn(ad, st), st)


def _compile_binary(node: ast.Binary) -> Callable:
    op = node.op
    left, right = _fn(node.left), _fn(node.right)
    if op == "&&":

        def and_(ad: Any, st: EvalState) -> Any:
            a = truthiness(left(ad, st))
            if a is False or a is ERROR:
                return a
            b = truthiness(right(ad, st))
            if b is ERROR:
                return ERROR
            if a is UNDEFINED:
                return False if b is False else UNDEFINED
            return b

        return and_
    if op == "||":

        def or_(ad: Any, st: EvalState) -> Any:
            a = truthiness(left(ad, st))
            if a is True or a is ERROR:
                return a
            b = truthiness(right(ad, st))
            if b is ERROR:
                return ERROR
            if a is UNDEFINED:
                return True if b is True else UNDEFINED
            return b

        return or_
    if op == "is":
        return lambda ad, st: meta_equal(left(ad, st), right(ad, st))
    if op == "isnt":

        def isnt(ad: Any, st: EvalState) -> Any:
            r = meta_equal(left(ad, st), right(ad, st))
            return r if r is ERROR else not r

        return isnt
    apply = BINARY[op]
    fast = _FAST_NUMERIC.get(op)
    if fast is not None:
        # Same-type int or real operands are by far the most common: answer them with
        # Python's operator, checking only the 64-bit range / +INF rule of the result.
        def numeric(ad: Any, st: EvalState) -> Any:
            a = left(ad, st)
            b = right(ad, st)
            ta = type(a)
            if ta is type(b) and (ta is int or ta is float):
                r = fast(a, b)
                if (
                    type(r) is bool
                    or (ta is int and -9223372036854775808 <= r <= 9223372036854775807)
                    or (ta is float and r != _INF)
                ):
                    return r
                return apply(a, b)
            if a is ERROR or b is ERROR:
                return ERROR
            if a is UNDEFINED or b is UNDEFINED:
                return UNDEFINED
            return apply(a, b)

        return numeric

    def strict(ad: Any, st: EvalState) -> Any:
        a = left(ad, st)
        b = right(ad, st)
        if a is ERROR or b is ERROR:
            return ERROR
        if a is UNDEFINED or b is UNDEFINED:
            return UNDEFINED
        return apply(a, b)

    return strict


_INF = float("inf")
# Operators whose Python meaning equals the ClassAd meaning for two ints or two reals
# (NaN comparisons included), up to the range checks done in the closure above.
_FAST_NUMERIC: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
}


def _compile_unary(node: ast.Unary) -> Callable:
    operand = _fn(node.operand)
    apply = UNARY[node.op]

    def unary(ad: Any, st: EvalState) -> Any:
        v = operand(ad, st)
        if v is ERROR or v is UNDEFINED:
            return v
        return apply(v)

    return unary


def _compile_conditional(node: ast.Conditional) -> Callable:
    cond, then, other = _fn(node.cond), _fn(node.then), _fn(node.other)

    def conditional(ad: Any, st: EvalState) -> Any:
        c = truthiness(cond(ad, st))
        if c is True:
            return then(ad, st)
        if c is False:
            return other(ad, st)
        return c

    return conditional


def _compile_elvis(node: ast.Elvis) -> Callable:
    left, right = _fn(node.left), _fn(node.right)

    def elvis(ad: Any, st: EvalState) -> Any:
        v = left(ad, st)
        return right(ad, st) if v is UNDEFINED else v

    return elvis


def _compile_paren(node: ast.Paren) -> Callable:
    return _fn(node.inner)


def _compile_list(node: ast.ListExpr) -> Callable:
    items = node.items
    for item in items:
        _fn(item)
    return lambda ad, st: ListValue(items, ad)


def _compile_record(node: ast.Record) -> Callable:
    attrs = node.attrs
    make = AdCore.from_nodes
    return lambda ad, st: make(attrs, parent=ad)


def _compile_call(node: ast.Call) -> Callable:
    lname = node.lname
    args = node.args
    nargs = len(args)
    arg_fns = tuple(_fn(a) for a in args)
    # The registry entry is looked up once and again only after the registry changes.
    resolved: list = [-1, None]  # [registry generation, entry or None]

    def call(ad: Any, st: EvalState) -> Any:
        if resolved[0] != _registry_generation[0]:
            entry = registry.lookup(lname)
            resolved[1] = entry if entry is not None and entry.accepts(nargs) else None
            resolved[0] = _registry_generation[0]
        entry = resolved[1]
        if entry is None:
            return ERROR  # unknown function or wrong arity: arguments are never evaluated
        ctx = CallContext(ad, st)
        kind = entry.kind
        if kind == "eager":
            values = [f(ad, st) for f in arg_fns]
            if walks:
                for v in values:
                    t = type(v)
                    if t is ListValue or t is str:
                        # The function's work grows with its arguments: charge it (LIMITS.arg_work).
                        st.work -= len(v) if t is ListValue else len(v) >> 4
                        if st.work < 0:
                            return ERROR
            result = entry.impl(ctx, *values)
        elif kind == "lazy":
            result = entry.impl(ctx, *[_thunk(f, ad, st) for f in arg_fns])
        else:
            result = entry.impl(ctx, *args)
        if volatile:
            st.taint += 1  # a fresh random number on every use: never memoise what depends on it
        t = type(result)
        if t is str:
            return _charge(result, len(result), LIMITS.max_string, st)
        if t is ListValue and result.nodes is None:
            return _charge(result, len(result), LIMITS.max_list, st)
        return result

    volatile = lname in _VOLATILE
    walks = lname in _WALKING
    return call


# Functions whose value changes from one call to the next.
_VOLATILE = frozenset({"random"})

# Functions that walk a list or a string list element by element in Python: their work,
# charged to LIMITS.arg_work, grows with the size of their arguments.
_WALKING = frozenset(
    name.lower()
    for name in (
        "member",
        "identicalMember",
        "anyCompare",
        "allCompare",
        "sum",
        "avg",
        "min",
        "max",
        "stringListSize",
        "stringListSum",
        "stringListAvg",
        "stringListMin",
        "stringListMax",
        "stringListMember",
        "stringListIMember",
        "stringListSubsetMatch",
        "stringListISubsetMatch",
        "stringListsIntersect",
        "split",
        "evalInEachContext",
        "countMatches",
        "envV1ToV2",
        "mergeEnvironment",
        "argsToList",
        "listToArgs",
    )
)


def _charge(result: Any, size: int, cap: int, st: EvalState) -> Any:
    """``result`` if its size fits the cap and the evaluation's allocation budget, else Error."""
    if size > cap:
        return ERROR
    st.alloc -= size
    return ERROR if st.alloc < 0 else result


def _thunk(f: Callable, ad: Any, st: EvalState) -> Callable[[], Any]:
    return lambda: f(ad, st)


_registry_generation = [0]


def _bump_generation() -> None:
    _registry_generation[0] += 1


registry.on_change(_bump_generation)

_COMPILERS: dict[type, Callable[[Any], Callable]] = {
    ast.Literal: _compile_literal,
    ast.AttrRef: _compile_attr,
    ast.Select: _compile_select,
    ast.Subscript: _compile_subscript,
    ast.Binary: _compile_binary,
    ast.Unary: _compile_unary,
    ast.Conditional: _compile_conditional,
    ast.Elvis: _compile_elvis,
    ast.Paren: _compile_paren,
    ast.ListExpr: _compile_list,
    ast.Record: _compile_record,
    ast.Call: _compile_call,
}
