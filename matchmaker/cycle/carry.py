"""What a run of cycles carries from one cycle to the next (``SIMULATE_INCREMENTAL``).

A simulation runs cycle after cycle over a pool that barely changes between two of
them.  :class:`Carried` holds what stays valid from one cycle to the next, each part
keyed so that a change it depends on is noticed and only that part is recomputed
(docs/simulate.md, incremental cycles):

* each slot ad's references (the significant attributes of the autoclusters), by the
  ad's identity (:class:`~matchmaker.pool.autocluster.SlotReferences`);
* each idle job record's place in the queue order and autocluster
  (:class:`~matchmaker.pool.autocluster.QueueKeys`), by the record's identity;
* what each cycle reads and makes of each slot ad (its weight, trims, cores, limits,
  annotated copy...), by the slot ad's identity (:class:`~matchmaker.cycle.slot_carry.SlotCarry`;
  evaluations not for an ad whose expressions draw random numbers: each evaluation draws);
* the slot and job records of the pool: after the claims only the slots and jobs
  whose ads were rewritten get new records (:func:`~matchmaker.cycle.claims.claim_matches`),
  unless making the record may draw random numbers (a slot ad with an expression that
  calls ``random``; a job ad whose identity, submitter or status is such an expression);
* which slots and jobs of the pool hold an ad that may draw random numbers, so that the
  claims visit only those, the ones they wrote and the ones the simulation changed since;
* what the group quotas' demand reads of each job record (its weight, or that it does not
  count), by the record (:class:`~matchmaker.cycle.demand.JobWeights`);
* the rounded request of a job on a partitionable slot (:meth:`Carried.request`), by
  the literal values it reads of the job and the slot;
* the columnar slot table with its columns and shared results
  (:class:`~matchmaker.cycle.table_carry.TableLine`): only the rows whose slot ad or
  added attributes changed are read again, and a shared result is computed again only
  on the rows where an attribute it read changed.

Every part gives exactly what the rebuild would; with the knob off a simulation passes
no :class:`Carried` and every cycle starts from nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

from classad import ast
from classad.ad import ClassAd
from classad.layout import Layout, SharedAttrs, Variant

from ..pool.autocluster import QueueKeys, SlotReferences, references
from ..pool.partition import Rounding
from .demand import JobWeights
from .slot_carry import SlotCarry
from .table_carry import TableLine

# Functions whose value is not fixed by their arguments (random draws from the run's
# seeded source: skipping an evaluation would shift every later draw).
_UNSTEADY = frozenset(("random", "eval"))


class Carried:
    """The state kept between the cycles of one simulation."""

    def __init__(self, weight_expr: Optional[ast.Node] = None) -> None:
        self.slot_refs = SlotReferences()
        self.queue_keys = QueueKeys()  # each idle job record's order key and autocluster
        self.slot_table = TableLine()
        self.weight_expr = weight_expr  # SLOT_WEIGHT: read with every slot ad
        self.slots = SlotCarry(self.steady, self.slot_table, self.slot_refs)
        self._steady: dict[int, tuple[ClassAd, bool]] = {}
        self._seen_steady: dict[int, tuple[ClassAd, bool]] = {}
        self._job_steady: dict[int, tuple[ClassAd, bool]] = {}
        self._seen_job_steady: dict[int, tuple[ClassAd, bool]] = {}
        # The rounded request of a job on a partitionable slot, by the literal values it
        # was computed from (see :meth:`request`); the names those are, per resource list.
        self._requests: dict[tuple, dict[str, float]] = {}
        self._request_names: dict[tuple[str, ...], Optional[tuple[str, ...]]] = {}
        # What a request's key reads of each ad asked (its values under those names as
        # exact keys; None when one is not a literal), by the ad's identity: an idle job is
        # asked again in cycle after cycle, a slot ad for each job its leftovers try.  Those
        # asked in this cycle or the last are kept.
        self._parts: dict[int, tuple[ClassAd, tuple[str, ...], Optional[tuple]]] = {}
        self._last_parts: dict[int, tuple[ClassAd, tuple[str, ...], Optional[tuple]]] = {}
        # The keys of the values a way of reading names of a compacted ad's variant takes of
        # its template (see :meth:`_read_part`), by the plan's identity (the plan held).
        self._plan_parts: dict[int, tuple[Any, list, tuple]] = {}
        # The claims' view of the pool (matchmaker.cycle.claims): the slot names and job ids
        # whose ads may draw random numbers (None until the claims first saw the pool), and
        # those the simulation gave a new ad or a place in the queue since.
        self.unsteady_slots: Optional[set[str]] = None
        self.unsteady_jobs: Optional[set[str]] = None
        self.new_slots: set[str] = set()
        self.new_jobs: set[str] = set()
        self.job_weights = JobWeights()  # each job ad's demand weight (group quotas)
        # Each submitter's last list of idle jobs for the leftovers (matchmaker.cycle.idle_jobs),
        # and a number for each set of slot values a request read (see :meth:`request_code`).
        self.leftover_lists: dict[str, Any] = {}  # (IdleJobs: a higher layer)
        self._slot_codes: dict[tuple, int] = {}

    def close(self) -> None:
        """Forget everything carried (the simulation is over).  The slots' carry holds this
        object's :meth:`steady`, a reference cycle: without it, reference counting frees
        the carried state at once rather than a later full collection walking all of it."""
        vars(self).clear()

    def steady(self, ad: ClassAd) -> bool:
        """Whether the record made of ``ad`` is the same each time: none of its expressions
        (nor ``SLOT_WEIGHT``) draws a random number.  Remembered per ad."""
        hit = self._steady.get(id(ad))
        if hit is None or hit[0] is not ad:
            hit = self._seen_steady.get(id(ad))  # asked since the last cycle (the claims)
        if hit is None or hit[0] is not ad:
            known = self.slots.find(ad)
            hit = (ad, known.steady if known is not None else _steady(ad, self.weight_expr))
        self._seen_steady[id(ad)] = hit
        return hit[1]

    def derived(self, ad: ClassAd, base: ClassAd, also: Optional[ClassAd] = None) -> None:
        """``ad`` is a copy of ``base`` with some attributes deleted and plain literals
        written: it holds none of the expressions ``base`` lacks, so when ``base`` is steady
        so is ``ad`` (:meth:`steady` then knows it without a look at its expressions).
        ``also`` is another such copy of ``base``, when given."""
        if self.steady(base):
            self._seen_steady[id(ad)] = (ad, True)
            if also is not None:
                self._seen_steady[id(also)] = (also, True)

    def steady_job(self, ad: ClassAd) -> bool:
        """Whether the job record made of ``ad`` is the same each time: every attribute the
        record reads (:func:`~matchmaker.pool.ads.make_jobs`) is a literal or absent, so
        making it evaluates nothing; otherwise as :meth:`steady`.  Remembered per ad."""
        hit = self._job_steady.get(id(ad))
        if hit is None or hit[0] is not ad:
            hit = self._seen_job_steady.get(id(ad))
        if hit is None or hit[0] is not ad:
            steady = True
            for v in ad.stored_of(_JOB_RECORD):
                if v is not None and type(v) not in _PLAIN and type(v) is not ast.Literal:
                    steady = self.steady(ad)
                    break
            hit = (ad, steady)
        self._seen_job_steady[id(ad)] = hit
        return hit[1]

    def request(
        self,
        job: ClassAd,
        slot: ClassAd,
        resources: tuple[str, ...],
        rounding: Rounding,
        compute: Callable[[], dict[str, float]],
    ) -> dict[str, float]:
        """The job's rounded request on ``slot`` (``compute``, :func:`~matchmaker.pool.partition.requested`),
        shared by every job and slot that hold the same literal values for each name it
        reads: the job's ``Request<Res>`` and the names the rounding expressions read, in
        either ad.  Computed afresh when one of those is an expression, or when a rounding
        expression draws random numbers or calls ``eval``."""
        names = self._request_names.get(resources, ())
        if names == ():
            names = self._request_names[resources] = _request_names(resources, rounding)
        if names is None:
            return compute()
        job_part = self._part(job, names)
        slot_part = self._part(slot, names) if job_part is not None else None
        if slot_part is None:
            return compute()
        key = (resources, job_part, slot_part)
        hit = self._requests.get(key)
        if hit is None:
            if len(self._requests) > _LIMIT:
                self._requests.clear()
            hit = self._requests[key] = compute()
        return dict(hit)

    def request_code(self, job: ClassAd, slot: ClassAd, resources: tuple[str, ...]) -> Optional[int]:
        """When the job's request on ``slot`` is one :meth:`request` shares (both ads' values
        literals), a number for the slot's values it read: the same request of the same job
        ad on a slot of the same number is the same; else None (call :meth:`request` first)."""
        names = self._request_names.get(resources)
        if names is None or self._part(job, names) is None:
            return None
        return self.slot_code(slot, resources)

    def slot_code(self, slot: ClassAd, resources: tuple[str, ...]) -> Optional[int]:
        """The number of ``slot``'s values under what a request on ``resources`` reads (see
        :meth:`request_code`), None when one is not a literal (or not known)."""
        names = self._request_names.get(resources)
        part = None if names is None else self._part(slot, names)
        if part is None:
            return None
        code = self._slot_codes.get((names, part))
        if code is None:
            code = self._slot_codes[(names, part)] = len(self._slot_codes)
        return code

    def _part(self, ad: ClassAd, names: tuple[str, ...]) -> Optional[tuple]:
        """``ad``'s values under ``names`` as exact keys (None when one is not a plain
        literal), remembered by the ad's identity (ads are never changed in place; the
        memo holds the ad, so no other ad takes its identity meanwhile)."""
        hit = self._parts.get(id(ad))
        if hit is None or hit[1] is not names:
            hit = self._last_parts.get(id(ad))
            if hit is None or hit[1] is not names:
                hit = (ad, names, self._read_part(ad, names))
            self._parts[id(ad)] = hit
        return hit[2]

    def _read_part(self, ad: ClassAd, names: tuple[str, ...]) -> Optional[tuple]:
        """:meth:`_part` read of ``ad``: a compacted ad's values that its layout's template
        gives are the same for every ad of its variant, so their keys are made once per
        way of reading ``names`` of the variant (its plan, :meth:`classad.layout.Variant.plan`),
        and only the values the ad keeps itself are looked at (none, for most slot ads:
        a partitionable slot's shrunk copies keep their resources, not what a request reads)."""
        attrs = ad._attrs
        if type(attrs) is not SharedAttrs:
            part = tuple(map(exact_key, ad.stored_of(names)))
        else:
            plan = _item(attrs, 0).plan(names)
            known = self._plan_parts.get(id(plan))
            if known is None or known[0] is not plan:
                if len(self._plan_parts) > _LIMIT:
                    self._plan_parts.clear()
                fixed = list(map(exact_key, plan.fixed))
                known = self._plan_parts[id(plan)] = (plan, fixed, tuple(fixed))
            if plan.rows:
                keys = known[1].copy()
                for r, s in zip(plan.rows, plan.at):
                    keys[r] = exact_key(_item(attrs, s))
                part = tuple(keys)
            else:
                part = known[2]
        return None if NOT_LITERAL in part else part  # type: ignore[operator]

    def cycle_done(self) -> None:
        """The cycle has read its slot ads: forget what belongs to ads neither it nor the
        claims since read."""
        self.slots.read()
        self._steady, self._seen_steady = self._seen_steady, {}
        self._job_steady, self._seen_job_steady = self._seen_job_steady, {}
        self._last_parts, self._parts = self._parts, {}


_PLAIN = (bool, int, float, str)
_PLAIN_TYPES = frozenset(_PLAIN)
# What a job record reads of its ad (matchmaker.pool.ads.make_jobs), lower-case.
_JOB_RECORD = ("clusterid", "procid", "user", "owner", "accountinggroup", "acctgroup", "acctgroupuser", "jobstatus")
_LIMIT = 100_000
_node_steady_cache: dict[int, tuple[ast.Node, bool]] = {}
_lowered: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}
_template_cache: dict[int, tuple[Layout, frozenset[int]]] = {}
_item = tuple.__getitem__  # a compacted ad's storage read as the tuple it is
_OWN = slice(1, None)  # the values such an ad keeps itself


NOT_LITERAL = object()
_SCOPES = frozenset(("target", "my", "other", "parent", "root", "self", "toplevel"))


def exact_key(stored: object) -> object:
    """A stored value as a key that tells apart what Python calls equal (``1``, ``1.0`` and
    ``true``; ``0.0`` and ``-0.0``); a node that is not a plain literal: :data:`NOT_LITERAL`."""
    t = type(stored)
    if stored is None or t is bool or t is int or t is str:
        return (t, stored)
    if t is float:
        return (t, stored.hex())  # type: ignore[attr-defined]
    if t is ast.Literal and type(stored.value) in _PLAIN:  # type: ignore[attr-defined]
        return exact_key(stored.value)  # type: ignore[attr-defined]
    return NOT_LITERAL


def _request_names(resources: tuple[str, ...], rounding: Rounding) -> Optional[tuple[str, ...]]:
    """What a request on ``resources`` reads (lower-case), or None when a rounding expression
    is not steady (see :func:`node_steady`)."""
    names = {"request" + r.lower() for r in resources}
    for r in resources:
        expr = rounding.of(r) if r.lower() in ("cpus", "memory", "disk") else None
        if expr is None:
            continue
        if not node_steady(expr):
            return None
        own, other = references(expr)
        if own & _SCOPES:
            return None  # reads a whole ad, not names
        names |= own | other
    return tuple(sorted(names))


def _steady(ad: ClassAd, extra: Optional[ast.Node]) -> bool:
    """Whether no expression of ``ad`` (nor ``extra``) calls ``random`` or ``eval``."""
    if extra is not None and not node_steady(extra):
        return False
    attrs = ad._attrs
    if type(attrs) is SharedAttrs:
        # The layout's template is shared by its ads: only the values an ad keeps itself,
        # and the template's unsteady places its variant does not override, need a look.
        if not _variant_steady(_item(attrs, 0)):
            return False
        held = _item(attrs, _OWN)
        if _PLAIN_TYPES.issuperset(map(type, held)):
            return True  # bare values only: nothing to walk
        return all([node_steady(v) for v in held if type(v) not in _PLAIN])
    spellings = ad.spellings()
    hit = _lowered.get(id(spellings))
    if hit is None or hit[0] is not spellings:
        if len(_lowered) > _LIMIT:
            _lowered.clear()
        hit = _lowered[id(spellings)] = (spellings, tuple(s.lower() for s in spellings))
    for v in ad.stored_of(hit[1]):
        if v is not None and type(v) not in _PLAIN and not node_steady(v):
            return False
    return True


def steady_ad(ad: ClassAd, extra: Optional[ast.Node] = None) -> bool:
    """Whether no expression of ``ad`` (nor ``extra``) calls ``random`` or ``eval``."""
    return _steady(ad, extra)


def _variant_steady(variant: Variant) -> bool:
    """Whether the values of its layout's template at the places the ads of ``variant`` do
    not keep themselves are steady (the unsteady places of each template are remembered
    per layout; nothing is kept per variant, so that a layout may forget the variants no
    ad holds any more)."""
    layout = variant.layout
    hit = _template_cache.get(id(layout))
    if hit is None or hit[0] is not layout:
        if len(_template_cache) > _LIMIT:
            _template_cache.clear()
        places = frozenset(p for p, node in enumerate(layout.template) if not node_steady(node))
        hit = _template_cache[id(layout)] = (layout, places)
    source = variant.source  # 0 at the places the template holds for the variant's ads
    return all([source[p] for p in hit[1]])


def node_steady(node: ast.Node) -> bool:
    """Whether the tree calls neither ``random`` nor ``eval``; remembered per node (trees
    are immutable and shared by the ads that hold the same text)."""
    if type(node) is ast.Literal:
        return True
    hit = _node_steady_cache.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    todo: list = [node]
    steady = True
    while todo and steady:
        n = todo.pop()
        if isinstance(n, tuple):
            todo.extend(n)
        elif isinstance(n, ast.Node) and type(n) is not ast.Literal:
            steady = not (type(n) is ast.Call and n.lname in _UNSTEADY)
            todo.extend(getattr(n, f.name) for f in dataclasses.fields(n))
    if len(_node_steady_cache) > _LIMIT:
        _node_steady_cache.clear()  # keeps a long run from holding every tree
    _node_steady_cache[id(node)] = (node, steady)
    return steady


__all__ = ["NOT_LITERAL", "Carried", "exact_key", "node_steady", "steady_ad"]
