"""Autoclusters and the schedd's job order: how idle jobs become resource requests.

The schedd groups jobs whose *significant attributes* have identical values into
autoclusters (docs/negotiation.md, requests and autoclusters).  The significant attributes are the job attributes the
negotiator may read: those referenced by slot ads' Requirements and Rank and by
the negotiator's expressions (PREEMPTION_REQUIREMENTS, PREEMPTION_RANK,
NEGOTIATOR_PRE/POST_JOB_RANK, NEGOTIATOR_JOB_CONSTRAINT), plus what each job's
own Requirements and Rank reference, with ``ADD_``/``REMOVE_SIGNIFICANT_ATTRIBUTES``
applied; ``SIGNIFICANT_ATTRIBUTES`` replaces the computed list.

Each submitter's idle jobs are sorted by HTCondor's order -- PreJobPrio1,
PreJobPrio2, JobPrio, PostJobPrio1, PostJobPrio2 (each descending, missing = 0),
then ClusterId, ProcId -- and consecutive jobs of one autocluster form one
request (a :class:`Run`) that the negotiator reuses once per job.

References are found by walking expression trees; a tree is walked once and the
result cached by node identity (identical text shares one tree).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import Any, Callable, Iterable, Optional, Sequence

from classad import ast
from classad.ad import ClassAd
from classad.evaluate import evaluate_top, new_state
from classad.layout import SharedAttrs, Variant
from classad.unparse import unparse
from classad.values import truthiness

from .ads import IDLE, Job

# Names the negotiator never sends as significant: slot-side or ephemeral attributes.
_NEVER = frozenset(
    ("currenttime", "kflops", "mips", "slotid", "target", "my", "other", "ad", "parent", "self", "toplevel", "root")
)
_NEVER_PREFIXES = ("remoteuser", "remotegroup", "submitter")
_ALWAYS = ("Requirements", "Rank", "ConcurrencyLimits")

_refs_cache: dict[int, tuple[ast.Node, frozenset[str], frozenset[str]]] = {}
_CACHE_LIMIT = 100_000
_NONE: frozenset[str] = frozenset()


def references(node: ast.Node) -> tuple[frozenset[str], frozenset[str]]:
    """``(unscoped, target)`` lower-cased attribute names read by ``node``.

    ``unscoped`` holds plain names and ``MY.x`` (resolved in the ad itself first);
    ``target`` holds ``TARGET.x`` / ``OTHER.x``.  Cached by node identity.
    """
    if type(node) is ast.Literal:
        return _NONE, _NONE
    hit = _refs_cache.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1], hit[2]
    own: set[str] = set()
    other: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if type(n) is ast.AttrRef:
            own.add(n.lname)
        elif type(n) is ast.Select:
            base = n.base
            if type(base) is ast.AttrRef and base.lname in ("target", "other"):
                other.add(n.lname)
            elif type(base) is ast.AttrRef and base.lname == "my":
                own.add(n.lname)
            else:
                stack.append(base)
        elif type(n) is ast.Literal:
            continue
        else:
            stack.extend(_children(n))
    result = (frozenset(own), frozenset(other))
    if len(_refs_cache) > _CACHE_LIMIT:
        _refs_cache.clear()  # keeps a long-running process from holding every tree
    _refs_cache[id(node)] = (node, *result)
    return result


def _children(n: ast.Node) -> Iterable[ast.Node]:
    if type(n) is ast.Binary:
        return (n.left, n.right)
    if type(n) is ast.Unary:
        return (n.operand,)
    if type(n) is ast.Conditional:
        return (n.cond, n.then, n.other)
    if type(n) is ast.Elvis:
        return (n.left, n.right)
    if type(n) is ast.Paren:
        return (n.inner,)
    if type(n) is ast.ListExpr:
        return n.items
    if type(n) is ast.Call:
        return n.args
    if type(n) is ast.Subscript:
        return (n.base, n.index)
    if type(n) is ast.Record:
        return tuple(v for _, v in n.attrs)
    return ()


def external_references(ad: ClassAd, attrs: Iterable[str], extra: Iterable[ast.Node] = ()) -> set[str]:
    """Names that ``attrs`` of ``ad`` (and the ``extra`` expressions, evaluated with ``ad``
    as MY) read from the other ad of a match: ``TARGET.x`` and plain names ``ad`` lacks.
    Names defined in ``ad`` are followed to their own references."""
    return _walk(ad, attrs, extra)[0]


def _walk(ad: ClassAd, attrs: Iterable[str], extra: Iterable[ast.Node]) -> tuple[set[str], set[str]]:
    """:func:`external_references` and the names of ``ad`` it looked up on the way."""
    out: set[str] = set()
    seen: set[str] = set()
    todo = [n for n in (ad.get_node(a) for a in attrs) if n is not None] + list(extra)
    while todo:
        own, other = references(todo.pop())
        out |= other
        for name in own:
            if name in seen:
                continue
            seen.add(name)
            node = ad.get_node(name)
            if node is None:
                out.add(name)
            else:
                todo.append(node)
    return out, seen


def internal_references(ad: ClassAd, attrs: Iterable[str]) -> set[str]:
    """Names of ``ad`` that ``attrs`` read, transitively (plus the external ones)."""
    out: set[str] = set()
    todo = [n for n in (ad.get_node(a) for a in attrs) if n is not None]
    while todo:
        own, other = references(todo.pop())
        out |= other
        for name in own - out:
            out.add(name)
            node = ad.get_node(name)
            if node is not None:
                todo.append(node)
    return out


# Functions whose reads cannot be known from the tree: they evaluate text or other ads.
_DYNAMIC_CALLS = frozenset(("eval", "evalineachcontext", "countmatches", "unresolved"))
_dynamic_cache: dict[int, tuple[ast.Node, bool]] = {}


def is_dynamic(node: ast.Node) -> bool:
    """Whether ``node`` may read attributes that its tree does not name (``eval("x")``,
    ``ad["x"]``, ``parent.x``, nested ads): then no static list of reads is complete."""
    if type(node) is ast.Literal:
        return False
    hit = _dynamic_cache.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    found = False
    stack = [node]
    while stack and not found:
        n = stack.pop()
        if type(n) is ast.Call and n.lname in _DYNAMIC_CALLS or type(n) is ast.Subscript or type(n) is ast.Record:
            found = True
        elif type(n) is ast.Select:
            base = n.base
            found = not (type(base) is ast.AttrRef and base.lname in ("target", "other", "my"))
        else:
            stack.extend(_children(n))
    if len(_dynamic_cache) > _CACHE_LIMIT:
        _dynamic_cache.clear()
    _dynamic_cache[id(node)] = (node, found)
    return found


def decisive_names(
    slot_ads: Sequence[ClassAd],
    job_ads: Sequence[ClassAd],
    slot_attrs: Sequence[str] = ("Requirements", "Rank", "CurrentRank"),
    job_attrs: Sequence[str] = ("Requirements",),
) -> Optional[frozenset[str]]:
    """Every name that evaluating ``slot_attrs`` of a slot and ``job_attrs`` of a job against
    each other can look up in either ad, or None when that cannot be known statically.

    Names are followed through both populations (a name a slot lacks is looked up in
    the job, whose expression may read the slot again), so two slots that agree on
    all of these names give the same results against any of the jobs.
    """
    nodes_of: dict[str, list[ast.Node]] = {}

    def nodes_named(name: str) -> list[ast.Node]:
        found: dict[int, ast.Node] = {}
        for ads in (slot_ads, job_ads):
            for ad in ads:
                n = ad.get_node(name)
                if n is not None and type(n) is not ast.Literal:  # literals read nothing
                    found[id(n)] = n
        return list(found.values())

    names: set[str] = set()
    todo: list[ast.Node] = []
    for attr in (*slot_attrs, *job_attrs):
        names.add(attr.lower())
        todo.extend(nodes_of.setdefault(attr.lower(), nodes_named(attr)))
    seen: set[int] = set()
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if is_dynamic(node):
            return None
        own, other = references(node)
        for name in own | other:
            if name not in names:
                names.add(name)
                todo.extend(nodes_named(name))
    return frozenset(names)


def _keep(name: str, drop: frozenset[str], drop_re: Optional[re.Pattern[str]]) -> bool:
    if name in _NEVER or name in drop or name.startswith(_NEVER_PREFIXES):
        return False
    return drop_re is None or drop_re.search(name) is None


class SlotReferences:
    """What each slot ad's Requirements and Rank (with the negotiator's expressions) read
    of a job, kept from one cycle to the next by the ad's identity.  A pool's slot ads are
    never changed in place (a claim or a release makes a new ad), so an ad that is still
    in the pool reads what it read before; ads that left the pool are forgotten."""

    def __init__(self) -> None:
        self._exprs: tuple[ast.Node, ...] = ()
        self._checked: Optional[Sequence[ast.Node]] = None  # the sequence last found to hold them
        self._by_ad: dict[int, tuple[ClassAd, frozenset[str]]] = {}
        # A new ad (a claim rewrites a slot's ad) mostly holds the expressions of the ad it
        # was made from.  What the walk read of an ad -- for each name it looked up, nothing,
        # a literal (it reads nothing) or an expression node (by identity) -- decides its
        # result, so ads that agree on those share it.  By the Requirements and Rank read,
        # then by the names the walk looked up, then by what the ad holds for them.
        self._by_shape: dict[tuple, dict[tuple[str, ...], dict[tuple, tuple[tuple, frozenset[str]]]]] = {}
        # The same for compacted ads, by their variant: such an ad holds the template's
        # very values wherever it keeps none of its own, so the result is decided by what
        # it keeps itself at the places the walk looked up (``at``, indices in the ad's
        # tuple), found at C speed when those are all literals.  The variant is not held
        # (a cache must not keep alive a variant no ad holds, see classad.layout,
        # Layout._recycled) but known by its tuple of places, its own object, held.
        self._by_variant: dict[int, tuple[tuple[int, ...], dict[tuple[int, ...], dict]]] = {}
        # Each result made by a walk (its own object, held) -> the names whose stored values
        # decided it (see decisive).
        self._decisive: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
        self._decisive_names: dict[tuple[str, ...], frozenset[str]] = {}

    def union(self, slot_ads: Iterable[ClassAd], exprs: Sequence[ast.Node]) -> set[str]:
        """The names every ad of ``slot_ads`` reads (see :func:`external_references`)."""
        self._use(exprs)
        old, kept = self._by_ad, {}
        found: dict[int, frozenset[str]] = {}  # each distinct result once (most ads share one)
        for ad in slot_ads:
            hit = old.get(id(ad))
            if hit is None or hit[0] is not ad:
                hit = (ad, self._references(ad, exprs))
            kept[id(ad)] = hit
            found[id(hit[1])] = hit[1]
        self._by_ad = kept
        names: set[str] = set()
        for result in found.values():
            names |= result
        return names

    def of(self, ad: ClassAd, exprs: Sequence[ast.Node]) -> frozenset[str]:
        """The names ``ad`` reads, as :meth:`union` finds them, for a caller that keeps each
        ad's result itself (the same object for every ad that shares it)."""
        self._use(exprs)
        return self._references(ad, exprs)

    def each(self, ads: Sequence[ClassAd], exprs: Sequence[ast.Node]) -> list[frozenset[str]]:
        """``[self.of(ad, exprs) for ad in ads]``: a compacted ad whose result is kept for its
        variant found without a call of its own."""
        self._use(exprs)
        out = []
        by_variant, references, shared = self._by_variant, self._references, SharedAttrs
        for ad in ads:
            attrs = ad._attrs
            if type(attrs) is shared:
                variant = _item(attrs, 0)
                kept = by_variant.get(id(variant))
                if kept is not None and kept[0] is variant.source:
                    for at, results in kept[1].items():
                        own = tuple(map(_item, repeat(attrs, len(at)), at))
                        hit = results.get(tuple(map(_SHAPE_OF_TYPE.get, map(type, own), map(id, own))))
                        if hit is not None:
                            out.append(hit[1])
                            break
                    else:
                        out.append(references(ad, exprs))
                    continue
            out.append(references(ad, exprs))
        return out

    def decisive(self, result: frozenset[str]) -> Optional[frozenset[str]]:
        """The names (lower-case) whose stored values decided ``result``, a result this gave
        for an ad: ``Requirements``, ``Rank`` and the names the walk looked up.  Any ad
        storing under each of them what the walk sees as the same (nothing, a literal, the
        very expression node: :func:`_shape`) reads ``result``, whatever it stores under
        other names.  None when not known (then any name may decide)."""
        hit = self._decisive.get(id(result))
        return hit[1] if hit is not None and hit[0] is result else None

    def _use(self, exprs: Sequence[ast.Node]) -> None:
        """Forget everything when the negotiator's expressions are other ones."""
        if exprs is self._checked:
            return  # the very sequence checked last (a cycle asks with one list for every ad)
        if len(exprs) != len(self._exprs) or any(a is not b for a, b in zip(exprs, self._exprs)):
            self._exprs, self._by_ad, self._by_shape, self._by_variant = tuple(exprs), {}, {}, {}
            self._decisive = {}
        self._checked = exprs

    def _references(self, ad: ClassAd, exprs: Sequence[ast.Node]) -> frozenset[str]:
        attrs = ad._attrs
        if type(attrs) is not SharedAttrs:
            return self._by_walk(ad, exprs)[0]
        variant: Variant = _item(attrs, 0)
        kept = self._by_variant.get(id(variant))
        if kept is None or kept[0] is not variant.source:
            if len(self._by_variant) > _VARIANT_LIMIT:
                self._by_variant.clear()
            kept = self._by_variant[id(variant)] = (variant.source, {})
        known = kept[1]
        for at, results in known.items():
            hit = results.get(_own_shapes(attrs, at))
            if hit is not None:
                return hit[1]  # type: ignore[no-any-return]
        out, looked = self._by_walk(ad, exprs)
        at = variant.plan(_HEAD + looked).at
        results = known.setdefault(at, {})
        if len(results) >= 1024:
            results.clear()
        own = tuple(map(_item, repeat(attrs, len(at)), at))
        results[_own_shapes(attrs, at)] = (own, out)  # the own values held: the identities in the key stay theirs
        return out

    def _by_walk(self, ad: ClassAd, exprs: Sequence[ast.Node]) -> tuple[frozenset[str], tuple[str, ...]]:
        """The names ``ad`` reads, and the names the walk looked up for them (found by
        what the ad holds under those, else walked)."""
        held = ad.stored_of(_HEAD)
        key = tuple(map(_shape, held))
        known = self._by_shape.get(key)
        if known is None:
            if len(self._by_shape) > _CACHE_LIMIT:
                self._by_shape.clear()
            known = self._by_shape[key] = {}
        for looked, results in known.items():
            hit = results.get(tuple(map(_shape, ad.stored_of(looked))))
            if hit is not None:
                return hit[1], looked
        out, seen = _walk(ad, ("Requirements", "Rank"), exprs)
        looked = tuple(sorted(seen))
        stored = ad.stored_of(looked)
        if looked not in known and len(known) >= 8:
            del known[next(iter(known))]
        results = known.setdefault(looked, {})
        if len(results) >= 1024:
            results.clear()
        # The stored values are held with the result, so the identities in its key stay theirs.
        hit = results[tuple(map(_shape, stored))] = ((held, stored), frozenset(out))
        if len(self._decisive) >= _DECISIVE_LIMIT:
            self._decisive.clear()
        names = self._decisive_names.get(looked)  # (one set for each list of names looked up)
        if names is None:
            if len(self._decisive_names) >= _DECISIVE_LIMIT:
                self._decisive_names.clear()
            names = self._decisive_names[looked] = frozenset(_HEAD + looked)
        self._decisive[id(hit[1])] = (hit[1], names)  # the result held: its id stays its own
        return hit[1], looked


_HEAD = ("requirements", "rank")
_LITERAL_SHAPE = ("literal",)
_LITERAL_TYPES = frozenset((bool, int, float, str, ast.Literal))
# What _own_shapes makes of a stored value by its type: a literal's shape, else (the
# default) the value's identity.
_SHAPE_OF_TYPE = dict.fromkeys(_LITERAL_TYPES, _LITERAL_SHAPE)
_VARIANT_LIMIT = 4096
_DECISIVE_LIMIT = 4096
_item = tuple.__getitem__  # a compacted ad's storage read as the tuple it is


def _own_shapes(attrs: SharedAttrs, at: tuple[int, ...]) -> tuple:
    """What the reference walk sees of each value a compacted ad keeps itself at the
    indices ``at``, as :func:`_shape` (nothing stored being the identity of None), found at
    C speed."""
    own = tuple(map(_item, repeat(attrs, len(at)), at))
    return tuple(map(_SHAPE_OF_TYPE.get, map(type, own), map(id, own)))


def _shape(stored: object) -> object:
    """What the reference walk sees of a stored value: nothing (None), a literal (which
    reads nothing), or an expression node, by identity (the caller holds the node)."""
    if stored is None:
        return None
    t = type(stored)
    if t is bool or t is int or t is float or t is str or t is ast.Literal:
        return _LITERAL_SHAPE
    return id(stored)


def significant_attributes(
    slot_ads: Iterable[ClassAd],
    expressions: Iterable[Optional[ast.Node]] = (),
    *,
    add: Sequence[str] = (),
    remove: Sequence[str] = (),
    remove_regex: Optional[str] = "^Slot[0-9]*_",
    memo: Optional[SlotReferences] = None,
    read: Optional[Callable[[Sequence[ast.Node]], Iterable[frozenset[str]]]] = None,
) -> frozenset[str]:
    """The negotiator-supplied significant attributes (lower-cased), docs/negotiation.md (reading the pool and requests and autoclusters).
    ``memo`` keeps each slot ad's references for the next call; ``read``, given the
    expressions, says what the slot ads read instead (:meth:`SlotReferences.of` of each:
    every result at least once, in any order)."""
    exprs = [e for e in expressions if e is not None]
    if read is not None:
        found = list(read(exprs))
        names: set[str] = set().union(*dict(zip(map(id, found), found)).values())  # each distinct result once
    else:
        # Without a memo kept between calls, one for this call: ads that hold the same
        # expressions under the names the walk looks up share one walk.
        names = (memo if memo is not None else SlotReferences()).union(slot_ads, exprs)
    drop = frozenset(n.lower() for n in remove)
    drop_re = re.compile(remove_regex, re.I) if remove_regex else None
    kept = {n for n in names if _keep(n, drop, drop_re)}
    kept |= {n.lower() for n in add}
    return frozenset(kept - drop)


# ---- autocluster keys --------------------------------------------------------------------


class Autoclusters:
    """Assigns autocluster ids to jobs by the values of their significant attributes."""

    def __init__(
        self,
        significant: frozenset[str],
        *,
        fixed: Optional[Sequence[str]] = None,
        remove: Sequence[str] = (),
        every_job_alone: bool = False,
    ) -> None:
        self.significant = significant
        self.fixed = tuple(a.lower() for a in fixed) if fixed is not None else None
        self.remove = frozenset(a.lower() for a in remove)
        self.every_job_alone = every_job_alone
        self._names: dict[tuple, tuple[Any, tuple[str, ...]]] = {}
        self._text: dict[int, tuple[ast.Node, str]] = {}
        self._ids: dict[tuple, int] = {}
        # (names, identities of the job's nodes for them) -> (the nodes, autocluster): jobs
        # read from one dump share their nodes for equal values, so most jobs are a hit
        # here.  The nodes are held, so their identities stay theirs.
        self._by_nodes: dict[int, dict[tuple, tuple[Any, int]]] = {}  # by id of the names' tuple
        self._by_nodes_size = 0
        self._count = 0

    def names_for(self, ad: ClassAd) -> tuple[str, ...]:
        """The significant attribute names for one job (sorted, lower-cased)."""
        if self.fixed is not None:
            return self.fixed
        key, held = ad.stored_key(_OWN_EXPRS)
        hit = self._names.get(key)
        if hit is None:
            own = internal_references(ad, ("Requirements", "Rank"))
            own |= {a.lower() for a in _ALWAYS}
            hit = self._names[key] = (held, tuple(sorted((self.significant | own) - self.remove)))
        return hit[1]  # the stored values are held, so the identities stay theirs

    def _value_key(self, node: Optional[ast.Node]) -> object:
        if node is None:
            return None
        if type(node) is ast.Literal:
            v = node.value
            return (type(v), v) if type(v) in _PLAIN else self._value_text(node)
        return self._value_text(node)

    def _value_text(self, node: ast.Node) -> str:
        hit = self._text.get(id(node))
        if hit is None or hit[0] is not node:
            hit = (node, unparse(node))
            self._text[id(node)] = hit
        return hit[1]

    def id_of(self, job: Job) -> int:
        """The autocluster id of ``job`` (a fresh id per job with NEGOTIATE_ALL_JOBS_IN_CLUSTER)."""
        if self.every_job_alone:
            self._count += 1
            return self._count
        ad = job.ad
        names = self.names_for(ad)
        nodes_key, held = ad.stored_key(names)
        # One table per list of names (the lists are held in ``_names``, so each is one
        # object): the key is not hashed together with the names each time.
        by_nodes = self._by_nodes.get(id(names))
        if by_nodes is None:
            by_nodes = self._by_nodes[id(names)] = {}
        hit = by_nodes.get(nodes_key)
        if hit is not None:
            return hit[1]
        stored = ad.stored_of(names)
        literal, value_key = ast.Literal, self._value_key
        values: list[object] = []
        for node in stored:
            t = type(node)
            if node is None:
                values.append(None)
            elif t in _PLAIN:  # the bare value of a literal
                values.append((t, node))
            elif t is literal and type(node.value) in _PLAIN:
                values.append((type(node.value), node.value))
            else:
                values.append(value_key(node))
        key = (names, tuple(values))
        ac = self._ids.get(key)
        if ac is None:
            self._count += 1
            ac = self._ids[key] = self._count
        if self._by_nodes_size < 65536:
            self._by_nodes_size += 1
            by_nodes[nodes_key] = (held, ac)  # held, so the identities stay theirs
        return ac

    def __len__(self) -> int:
        return len(self._ids) if not self.every_job_alone else self._count

    def full(self) -> bool:
        """Whether it holds :data:`_KEPT_LIMIT` keys or more, or its table by nodes is full
        (see :class:`QueueKeys`)."""
        return (
            len(self._ids) >= _KEPT_LIMIT
            or len(self._names) >= _KEPT_LIMIT
            or len(self._text) >= _KEPT_LIMIT
            or self._by_nodes_size >= 65536
        )


_PLAIN = frozenset({bool, int, float, str})
_OWN_EXPRS = ("requirements", "rank")


# ---- job order and requests ------------------------------------------------------------------


def _zero_clock() -> float:
    return 0.0  # library code never reads the wall clock


def _prio(ad: ClassAd, name: str, node: Any) -> int:
    """The integer value of attribute ``name`` (lower-case, stored as ``node``, see
    :meth:`ClassAd.stored_of`) of a job, 0 when not an integer."""
    if node is None:
        return 0
    if type(node) is int:
        return node
    if type(node) is ast.Literal and type(node.value) is int:
        return node.value
    v = ad.evaluate(name, state=new_state(ad, clock=_zero_clock))
    if type(v) is int:
        return v
    if type(v) is float and v == v and abs(v) < 2**63:
        return int(v)
    return 0


def _order_value(ad: ClassAd, name: str, stored: Any) -> int:
    """A queue-order attribute the job does not store as a bare integer: 0 when absent."""
    return 0 if stored is None else _prio(ad, name, stored)


_ORDER_NAMES = ("prejobprio1", "prejobprio2", "jobprio", "postjobprio1", "postjobprio2", "qdate")


def job_order_key(job: Job, *, by_qdate: bool = False) -> tuple:
    """HTCondor's queue order (docs/negotiation.md, requests and autoclusters): priorities descending, then ClusterId, ProcId.
    ``by_qdate`` puts QDate before ClusterId/ProcId, as the manual describes."""
    return _order_key(job, job.ad.stored_of(_ORDER_NAMES), by_qdate)


def _literal_order(stored: Sequence[Any]) -> bool:
    """Whether reading a job's queue order from what it stores (``stored``, see
    :data:`_ORDER_NAMES`) evaluates nothing: each is absent, a bare integer or an integer literal."""
    for v in stored:
        if v is not None and type(v) is not int and not (type(v) is ast.Literal and type(v.value) is int):
            return False
    return True


def _order_key(job: Job, stored: Sequence[Any], by_qdate: bool) -> tuple:
    """:func:`job_order_key` of ``job``, which stores ``stored`` under :data:`_ORDER_NAMES`."""
    ad = job.ad
    p1, p2, prio, q1, q2, qdate = stored
    # Most jobs store bare integers or nothing: the general path only for the others.
    p1 = p1 if type(p1) is int else _order_value(ad, "prejobprio1", p1)
    p2 = p2 if type(p2) is int else _order_value(ad, "prejobprio2", p2)
    prio = prio if type(prio) is int else _order_value(ad, "jobprio", prio)
    q1 = q1 if type(q1) is int else _order_value(ad, "postjobprio1", q1)
    q2 = q2 if type(q2) is int else _order_value(ad, "postjobprio2", q2)
    qdate = qdate if type(qdate) is int else _order_value(ad, "qdate", qdate)
    if by_qdate:
        return (-p1, -p2, -prio, -q1, -q2, qdate, job.cluster, job.proc)
    return (-p1, -p2, -prio, -q1, -q2, job.cluster, job.proc)


@dataclass(eq=False)
class Run:
    """Consecutive jobs of one autocluster: one resource request reused ``len(jobs)`` times."""

    autocluster: int
    jobs: list[Job]
    next: int = 0  # index of the first job not matched yet

    @property
    def remaining(self) -> int:
        """Jobs of this run still idle."""
        return len(self.jobs) - self.next

    def current(self) -> Job:
        """The job the next match of this request is reported for."""
        return self.jobs[self.next]


@dataclass(eq=False)
class Queue:
    """One submitter's requests in the schedd's order."""

    submitter: str
    runs: list[Run] = field(default_factory=list)

    @property
    def idle(self) -> int:
        """Idle jobs not matched yet."""
        return sum(r.remaining for r in self.runs)


def build_queues(
    jobs: Iterable[Job],
    autoclusters: Autoclusters,
    *,
    by_qdate: bool = False,
    job_constraint: Optional[ast.Node] = None,
    kept: Optional[QueueKeys] = None,
) -> dict[str, Queue]:
    """Each submitter's idle jobs as runs of one autocluster, in queue order.

    Jobs for which ``job_constraint`` (``NEGOTIATOR_JOB_CONSTRAINT``) is not true are
    left out, as the schedd leaves their autoclusters out.  ``kept``: what the last
    calls found of each job record, with ``autoclusters`` from its
    :meth:`QueueKeys.autoclusters` (a simulation's cycles).
    """
    if kept is not None:
        kept.begin(by_qdate)
    per: dict[str, list] = {}
    jobs = jobs if type(jobs) is list else list(jobs)
    # The idle ones: a comprehension reads a record's slot faster than attrgetter does.
    for job in [job for job in jobs if job.status == IDLE]:
        if (
            job_constraint is not None
            and truthiness(evaluate_top(job_constraint, job.ad, new_state(job.ad, clock=_zero_clock))) is not True
        ):
            continue
        keyed = per.get(job.submitter)
        if keyed is None:
            keyed = per[job.submitter] = []
        keyed.append((job_order_key(job, by_qdate=by_qdate), job) if kept is None else kept.keyed(job, by_qdate))
    if kept is not None:
        return kept.queues(per, autoclusters)
    queues: dict[str, Queue] = {}
    id_of = autoclusters.id_of
    for name, keyed in per.items():
        keyed.sort(key=_order_of)
        q = queues[name] = Queue(name)
        runs = q.runs
        last: Optional[Run] = None
        for _, job in keyed:
            ac = id_of(job)
            if last is not None and last.autocluster == ac:
                last.jobs.append(job)
            else:
                last = Run(ac, [job])
                runs.append(last)
    return queues


_order_of = itemgetter(0)  # a keyed job's order key


class QueueKeys:
    """What :func:`build_queues` finds of each idle job record, kept from one call to the
    next (a simulation's cycles): its place in the queue order and its autocluster.

    A job record is never changed, nor its ad in place (a change makes a new record), so a
    record seen in the last call has the same autocluster under the same significant
    attributes: the same :class:`Autoclusters` is kept while those and the other knobs it
    reads stay the same, and what it numbered a record's key is kept with the record.
    Each call numbers the autoclusters again in the order it first meets them, as a fresh
    :class:`Autoclusters` does.  A record's order key is kept only when reading it evaluated
    nothing (:func:`_literal_order`); otherwise it is evaluated in every call, in the same
    order as without a carry (an expression may draw random numbers).  The records that
    left the queue are forgotten."""

    def __init__(self) -> None:
        self._acs: Optional[Autoclusters] = None
        self._knobs: tuple = ()
        self._by_qdate = False
        # id(record) -> [record, its order key or None, its autocluster's number in _acs or
        # -1 until found]: last call's and this one's.
        self._before: dict[int, list] = {}
        self._now: dict[int, list] = {}

    def autoclusters(
        self,
        significant: frozenset[str],
        *,
        fixed: Optional[Sequence[str]] = None,
        remove: Sequence[str] = (),
        every_job_alone: bool = False,
    ) -> Autoclusters:
        """``Autoclusters(significant, ...)`` for this call: last call's when it was made the
        same way and holds fewer than :data:`_KEPT_LIMIT` keys, with what it knew kept."""
        knobs = (significant, None if fixed is None else tuple(fixed), tuple(remove), every_job_alone)
        acs = self._acs
        if acs is None or knobs != self._knobs or every_job_alone or acs.full():
            acs = self._acs = Autoclusters(significant, fixed=fixed, remove=remove, every_job_alone=every_job_alone)
            self._knobs, self._before, self._now = knobs, {}, {}
        return acs

    def begin(self, by_qdate: bool) -> None:
        """Start a call (see :func:`build_queues`)."""
        if by_qdate != self._by_qdate:
            self._by_qdate, self._now = by_qdate, {}
        self._before, self._now = self._now, {}

    def keyed(self, job: Job, by_qdate: bool) -> tuple[tuple, Job, list]:
        """``(job_order_key(job), job, what is kept of the record)``: last call's order key
        for a record seen then that evaluated nothing."""
        hit = self._before.get(id(job))
        if hit is not None and hit[0] is job:
            self._now[id(job)] = hit
            key = hit[1]
            return (job_order_key(job, by_qdate=by_qdate) if key is None else key), job, hit
        stored = job.ad.stored_of(_ORDER_NAMES)
        key = _order_key(job, stored, by_qdate)
        hit = self._now[id(job)] = [job, key if _literal_order(stored) else None, -1]
        return key, job, hit

    def order_key(self, job: Job, by_qdate: bool) -> tuple:
        """``job_order_key(job)``, as the last call kept it for the record when it was read
        without evaluating anything (the claims' schedd order of the same records)."""
        hit = self._now.get(id(job))
        if hit is not None and hit[0] is job and hit[1] is not None and by_qdate == self._by_qdate:
            return hit[1]  # type: ignore[no-any-return]
        return job_order_key(job, by_qdate=by_qdate)

    def queues(self, per: dict[str, list[tuple[tuple, Job, list]]], autoclusters: Autoclusters) -> dict[str, Queue]:
        """The rest of :func:`build_queues`: each submitter's keyed jobs (``per``, see
        :meth:`keyed`) sorted and cut into runs, each record's autocluster found once and kept."""
        queues: dict[str, Queue] = {}
        id_of = autoclusters.id_of
        number: dict[int, int] = {}  # the autoclusters' numbers in _acs -> in this call
        for name, keyed in per.items():
            keyed.sort(key=_order_of)
            q = queues[name] = Queue(name)
            runs = q.runs
            last: Optional[Run] = None
            for _, job, hit in keyed:
                kept = hit[2]
                if kept < 0:
                    kept = hit[2] = id_of(job)
                ac = number.get(kept)
                if ac is None:
                    ac = number[kept] = len(number) + 1
                if last is not None and last.autocluster == ac:
                    last.jobs.append(job)
                else:
                    last = Run(ac, [job])
                    runs.append(last)
        self._before = {}
        return queues


_KEPT_LIMIT = 100_000  # keys an Autoclusters kept across calls may hold before it starts again


__all__ = [
    "Autoclusters",
    "Queue",
    "QueueKeys",
    "Run",
    "build_queues",
    "decisive_names",
    "external_references",
    "internal_references",
    "is_dynamic",
    "job_order_key",
    "references",
    "significant_attributes",
]
