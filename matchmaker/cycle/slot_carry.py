"""What the cycles of a simulation read and make of each slot ad, kept from one cycle to the next.

Every cycle reads each slot ad of its pool: its weight, whether the cycle trims it
(``RetirementTimeRemaining``, ``WantMatching``), whether a claimed slot is idle
(``Activity``), its cores for the pool size, the concurrency limits of its claim, whether
its ``Rank`` is an error, its consumption policy; and it makes the ad's annotated copy
(:func:`~matchmaker.cycle.ephemeral.annotate_slot`).  A pool's slot ads are never changed
in place (a claim or a release makes a new ad), so :class:`SlotCarry` keeps these per ad
object, by identity, while the ad stays in the pool and the settings stay the same:

* what the ad stores under a name (:meth:`SlotPrep.stored`), for any ad;
* what an evaluation of the ad alone gives (:meth:`SlotPrep.evaluated`), only for a
  steady ad (none of its expressions draws a random number or calls ``eval``, see
  :meth:`~matchmaker.cycle.carry.Carried.steady`); an unsteady ad is evaluated again in
  every cycle, at the same point as the rebuild evaluates it, so the draws stay in step;
  what reads the cycle's clock is evaluated in every cycle;
* the annotated copy (:meth:`SlotCarry.annotated`): a copy is its slot ad plus the
  entries the cycle adds, and only the ``Remote*`` entries of a claimed slot depend on the
  cycle (the user's priority).  Last cycle's copy is kept and those entries are rewritten
  in place when they differ; the slot table is told which (:meth:`TableLine.note
  <matchmaker.cycle.table_carry.TableLine.note>`).  A copy the cycle may write into (a
  consumption-policy slot's) is never kept, and with ``NEGOTIATOR_CROSS_SLOT_PRIOS``
  (entries evaluated at the cycle's time) every copy is made afresh.  The copies of one
  user's claimed slots that add the same other entries share one table of them
  (:class:`~matchmaker.cycle.ephemeral.SharedEntries`, :meth:`SlotCarry.share`), rewritten
  once for them all (:meth:`SlotCarry.rewrite_shared`); what a row is coded by is kept by
  place (:meth:`SlotCarry.again_codes`).
"""

from __future__ import annotations

from collections import deque
from itertools import compress, repeat
from math import copysign
from operator import attrgetter, is_, is_not, itemgetter
from typing import Any, Callable, Optional, Sequence

import numpy as np

from classad import ast
from classad.ad import ClassAd
from classad.layout import plain_form

from ..pool.ads import AdMemo, PoolSize, Slot, size_counts, slot_cores, slot_count
from ..pool.autocluster import SlotReferences
from .ephemeral import NegotiationAd, RemoteEntries, SharedEntries
from .table_carry import TableLine, same_entry

_UNSET = object()
_MISS: tuple[Any, Any] = (None, None)  # what values() finds of an ad it did not keep
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_VALUES = attrgetter("values")
CODES = "codes"  # what Cycle._carried_entries keeps by place: each pair's user code (again_codes)
_CODE_LIMIT = 100_000  # users coded before the codes start again
_TABLE_LIMIT = 4096  # objects placed_distinct numbers before it starts again
_PLAIN = (bool, int, float, str)
_SIZE = "pool_size"  # what SlotCarry.pool_size keeps by place: each slot's weight and count
_AD, _WEIGHT, _PARTITIONABLE = attrgetter("ad"), attrgetter("weight"), attrgetter("partitionable")
_NO_PAIRS, _NO_FLAGS, _NO_IDS = np.empty(0, object), np.zeros(0, bool), np.zeros(0, np.uint64)
_SAMPLE = 64  # SlotCarry._told checks every this many places


class SlotPrep:
    """What the cycles read and made of one slot ad."""

    __slots__ = (
        "ad",
        "steady",
        "reads",
        "values",
        "refs",
        "weighed",
        "keep",
        "idle",
        "copy",
        "entries",
        "spelled",
        "stamp",
    )

    def __init__(self, ad: ClassAd, steady: bool) -> None:
        self.ad, self.steady = ad, steady
        self.reads: dict[str, Any] = {}  # lower-case name -> what the ad stores (ClassAd.plain)
        self.values: dict[str, Any] = {}  # what an evaluation of the ad alone gave, by what
        self.refs: Optional[frozenset[str]] = None  # what its Requirements and Rank read of a job
        # What the cycle decided of the ad and its record, as the cycle keeps it
        # (matchmaker.cycle.state: a record's weight object found equal to the ad's weight,
        # the trim and the claimed-idle test, with the record's fields they read).
        self.weighed: Any = None
        self.keep: Optional[tuple] = None
        self.idle: Optional[tuple] = None
        self.copy: Optional[NegotiationAd] = None  # the last annotated copy, if it may be kept
        self.entries: RemoteEntries = ()  # the Remote* entries that copy holds
        self.spelled = False  # whether the copy spells their names as they do
        self.stamp = -1  # the last cycle that used the copy

    def stored(self, lname: str) -> Any:
        """``ad.plain(lname)``."""
        v = self.reads.get(lname, _UNSET)
        if v is _UNSET:
            v = self.reads[lname] = self.ad.plain(lname)
        return v

    def literal(self, lnames: tuple[str, ...]) -> bool:
        """Whether the ad stores each of ``lnames`` as a plain literal or not at all, so that
        reading them evaluates nothing."""
        return all(v is None or type(v) in _PLAIN for v in map(self.stored, lnames))

    def references(self, refs: SlotReferences, exprs: Sequence[ast.Node]) -> frozenset[str]:
        """The names the ad reads with the negotiator's ``exprs`` (:meth:`SlotReferences.of`),
        kept: the expressions come from the settings, which the carry keeps nothing across."""
        if self.refs is None:
            self.refs = refs.of(self.ad, exprs)
        return self.refs

    def evaluated(self, what: str, compute: Callable[[ClassAd], Any]) -> Any:
        """``compute(ad)``, an evaluation of the ad alone (no clock), kept when the ad is steady."""
        if not self.steady:
            return compute(self.ad)
        v = self.values.get(what, _UNSET)
        if v is _UNSET:
            v = self.values[what] = compute(self.ad)
        return v


class SlotCarry:
    """The :class:`SlotPrep` of each slot ad of the last cycle and of this one."""

    def __init__(
        self, steady: Callable[[ClassAd], bool], line: TableLine, refs: Optional[SlotReferences] = None
    ) -> None:
        self._steady = steady
        self.line = line
        self._refs = refs  # what found the preps' refs, if known (SlotReferences.decisive)
        self._settings: Any = None
        self._before: dict[int, SlotPrep] = {}
        self._now: dict[int, SlotPrep] = {}
        self._gone: Optional[list[int]] = None  # the ids of last cycle's ads that left the pool, if known
        self._cycle = 0
        # Last cycle's slot records (by identity, held) and, at the same places, the pair
        # (weighed record, prep) it took for each, whether that pair is to be taken again,
        # and the ids of their ads.
        self._records: list[Slot] = []
        self._pairs: np.ndarray = _NO_PAIRS
        self._again: np.ndarray = _NO_FLAGS
        self._ad_ids: np.ndarray = _NO_IDS
        self._record_ids: Optional[np.ndarray] = None  # the records' own ids, if read in that cycle
        # With follow(): for each record of the list the caller keeps (the next records),
        # its place in last cycle's records, -1 where it is new since (renewed, grown,
        # removed); None when not known (lost).
        self._following = False
        self._origin: Optional[np.ndarray] = None
        # Where each pair of this cycle was in last cycle's, -1 for a pair not taken again
        # (None: this cycle's pairs were not made by pairs()); what placed() gave in last
        # cycle's order and in this one's, by kind.
        self._at: Optional[np.ndarray] = None
        self._others: list[int] = []  # the places of this cycle's pairs made anew (-1 in _at)
        self._placed: dict[str, Any] = {}
        self._placing: dict[str, Any] = {}
        # What placed_distinct numbered, by kind: the objects (held) and their numbers by id.
        self._tables: dict[str, tuple[list, dict[int, int]]] = {}
        self.distinct = False  # whether each of this cycle's pairs holds its own ad (pairs())
        # The codes of the Remote* entries lists (matchmaker.cycle.state, Cycle._carried_entries):
        # each user by its code, 0 for none, kept for the run (the same settings) so that a
        # code kept by place means the same user in the next cycle; and the entries the
        # copies of each code held when the codes were put.
        self.user_codes: dict[Any, int] = {None: 0}
        self.code_users: list[Optional[str]] = [None]
        self.shared: list[Optional[SharedEntries]] = [None]  # the table the copies of each code share
        # Of last cycle's entries: those it ended (a match, a preemption, a consumption
        # policy), and whether any may hold memo keys (Cycle.close says when none does).
        self.ended: list[Any] = []
        self.keyed = True
        # What values() gave for each kind of value last: id(ad) -> (ad, value).
        self._kept: dict[str, dict[int, tuple[ClassAd, Any]]] = {}
        # (id of the Remote* entries a copy holds, id of the ones it is given) -> both and
        # the change from one to the other: found once per pair in a cycle.
        self._changes: dict[tuple[int, int], tuple[Any, Any, Optional[_Change]]] = {}
        # What the cycles decided of a record by literals its ad stores, for the ads of one
        # variant of a layout (matchmaker.cycle.state, Cycle._decide): id of the variant ->
        # its places (held: a variant is known by them, not held itself; see
        # classad.layout, Layout._recycled) and the decisions by the values they read.
        self.decided: dict[int, tuple[tuple[int, ...], dict[tuple, Any]]] = {}
        # The ads the claims and the loop wrote since this cycle's ads were read, each of an
        # ad of this cycle (see derive): id(ad) -> (ad, that ad, the names written since,
        # None: not only written); and those written before this cycle, for prep.
        self._pending: dict[int, tuple[ClassAd, ClassAd, Optional[_Written]]] = {}
        self._arriving: dict[int, tuple[ClassAd, ClassAd, Optional[_Written]]] = {}
        # What the ads written from an ad whose references were a result read, by (id of
        # the result, the names written that decided it, what the ads store under those:
        # _READ_SHAPES) -> the result (held), what such an ad reads (None: not known yet)
        # and the prep of one such ad whose references the cycle will find (_carried_refs).
        self._reads: dict[tuple[int, int], _RefsPlan] = {}

    def begin(self, settings: Any) -> None:
        """Start a cycle under ``settings`` (other settings than last cycle's: keep nothing)."""
        self._arriving, self._pending = self._pending, {}
        if settings is not self._settings:
            self._settings, self._now, self._kept, self.decided = settings, {}, {}, {}
            self._arriving, self._reads = {}, {}
            self._records, self._pairs, self._again, self._ad_ids = [], _NO_PAIRS, _NO_FLAGS, _NO_IDS
            self._placing, self._record_ids, self._tables, self._origin = {}, None, {}, None
            self.user_codes, self.code_users, self.shared = {None: 0}, [None], [None]
        elif len(self.code_users) > _CODE_LIMIT:  # too many users seen: codes start again
            self.user_codes, self.code_users, self.shared = {None: 0}, [None], [None]
            self._placing.pop(CODES, None)
        self._before, self._now, self._gone = self._now, {}, None
        self._changes = {}
        self._cycle += 1
        self._at, self._placed, self._placing = None, self._placing, {}
        self.distinct = False

    def read(self) -> None:
        """The cycle has read its slot ads (:meth:`prep`): forget the ads that left the pool."""
        now, gone = self._now.keys(), self._gone
        for kept in self._kept.values():  # each value was kept for an ad of the last cycle
            if gone is None:
                deque(map(kept.__delitem__, kept.keys() - now), maxlen=0)
            else:  # the ads that left are known (see pairs)
                deque(map(kept.pop, gone, repeat(None)), maxlen=0)
        self._before, self._gone = {}, None

    def prep(self, ad: ClassAd) -> SlotPrep:
        """The :class:`SlotPrep` of ``ad`` in this cycle."""
        key = id(ad)
        p = self._before.get(key)
        if p is None or p.ad is not ad:
            p = self._now.get(key)
            if p is None or p.ad is not ad:
                p = self._derived(ad) or SlotPrep(ad, self._steady(ad))
        self._now[key] = p
        return p

    def derive(
        self,
        ad: ClassAd,
        base: ClassAd,
        written: Optional[tuple[str, ...]],
        settings: Any,
        deleted: tuple[str, ...] = (),
    ) -> None:
        """``ad`` is a copy of ``base`` with nothing else changed than this (None: other
        changes too): under each name of ``written`` (any case) a plain value written or
        what ``base`` stores, under each name of ``deleted`` nothing or what ``base`` stores
        (under a name of both, any of the three); its record made by
        :func:`~matchmaker.pool.ads.make_slots` under ``settings``, and ``base`` draws no
        random numbers (:meth:`~matchmaker.cycle.carry.Carried.derived`).
        Told by the claims and the loop between two cycles; ``base`` is an ad of the last
        cycle or one told here since.  The next cycle's prep of ``ad`` takes over what is
        kept of the ad of the last cycle it comes from where the writes cannot change it
        (:meth:`_derived`)."""
        if settings is not self._settings:
            return  # (what is kept is of other settings)
        names = None if written is None else _written(written, deleted)
        hit = self._pending.get(id(base))
        if hit is not None and hit[0] is base:
            base = hit[1]
            names = None if names is None or hit[2] is None else _union(hit[2], names)
        self._pending[id(ad)] = (ad, base, names)

    def _derived(self, ad: ClassAd) -> Optional[SlotPrep]:
        """The prep of ``ad``, written from an ad of the last cycle since (:meth:`derive`),
        with what is kept of that ad's prep that the writes cannot change: its record's
        weight is the one a cycle finds (:data:`MADE`); the trim and the claimed-idle
        decisions when no name they read was written; the references of its Requirements
        and Rank when the reference walk sees the same in both ads (:func:`_same_reads`)
        under each name written that decided them (:meth:`SlotReferences.decisive`; each
        name written when not known).  None when ``ad`` was not so written."""
        hit = self._arriving.get(id(ad))
        if hit is None or hit[0] is not ad:
            return None
        base, names = hit[1], hit[2]
        was = self._before.get(id(base))
        if was is None or was.ad is not base or not was.steady:
            return None
        p = SlotPrep(ad, True)  # (a copy of a steady ad with plain values written is steady)
        p.weighed = MADE
        if names is not None:
            if names.decided:
                p.keep, p.idle = was.keep, was.idle
            if was.refs is not None:
                p.refs = self._carried_refs(ad, base, was.refs, names, p)
        return p

    def _carried_refs(
        self, ad: ClassAd, base: ClassAd, refs: frozenset[str], names: _Written, p: SlotPrep
    ) -> Optional[frozenset[str]]:
        """What the Requirements and Rank of ``ad`` (prep ``p``), written from ``base``
        (whose references are ``refs``) under ``names`` alone, read of a job, when known
        without a walk; else None.

        Only the names written that decided ``refs`` matter (:meth:`SlotReferences.decisive`;
        each name written when not known), and the values ``base`` stores under those are
        the ones the walk that made ``refs`` met (one walk made each result).  Where a name
        cannot have changed what the walk sees (a literal not deleted, nothing not
        written), ``ad`` is not read; when none can, ``ad`` reads ``refs``.  Otherwise what
        the walk of ``ad`` sees under the others (nothing, a literal, the node ``base``
        holds: then it looks up no name the walk of ``base`` did not) decides its result
        with ``refs``: the same as ``refs`` when the same as ``base``, else what the first
        ad so written was found to read (its references found by the cycle's queues; that
        ad stands for the next ones until then)."""
        key = (id(refs), id(names))
        plan = self._reads.get(key)
        if plan is None or plan.refs is not refs or plan.names is not names:
            decisive = self._refs.decisive(refs) if self._refs is not None else None
            if decisive is None:
                among = names.lnames
                return refs if _same_reads(base.stored_of(among), ad.stored_of(among)) else None
            if len(self._reads) > _READS_LIMIT:
                self._reads.clear()
            plan = self._reads[key] = _RefsPlan(refs, names, decisive, base)
        if not plan.read:
            return refs
        shapes = tuple(map(_shape_against, map(ad.plain, plan.read), plan.held))
        if None in shapes:  # another node: the walk may look up other names
            return None
        found = plan.found.get(shapes, _UNSET)
        if found is _UNSET:
            if shapes == plan.shapes:
                found = plan.found[shapes] = refs
            else:
                plan.found[shapes] = p  # stands for the next ones
                return None
        if type(found) is SlotPrep:
            if found.refs is None:
                plan.found[shapes] = p  # (not found for that one: this one)
                return None
            found = plan.found[shapes] = found.refs
        return found  # type: ignore[no-any-return]

    def pairs(self, records: list[Slot], weighed: Callable[[Slot, SlotPrep], Slot]) -> list[tuple[Slot, SlotPrep]]:
        """``[(weighed(s, p), p) for s, p in zip(records, map(self.prep, ads))]`` (``ads``:
        the records' ads), with ``weighed`` called in order.  A record of last cycle (the very
        object) whose ad is steady and that was its own weighed record takes last cycle's
        pair again: found by the records' identities at C speed, without reading the
        records or their preps (a weight evaluated of a steady ad is kept, so the record
        weighs the same); only the other records are read."""
        n = len(records)
        ids = None  # the records' ids, as _places found them
        at = self._told(records) if len(self._ad_ids) else None
        if at is None and len(self._ad_ids):
            at, ids = self._places(records)
        if at is None:
            at, again = np.full(n, -1, np.int64), np.zeros(n, bool)
            out, ad_ids = np.empty(n, object), np.zeros(n, np.uint64)
        else:  # (a place -1 reads last cycle's last pair here, made anew below)
            again = self._again[at] & (at >= 0)
            out, ad_ids = self._pairs[at], self._ad_ids[at]
        others = np.flatnonzero(~again).tolist()  # the pairs made anew (-1 in at below)
        at[others] = -1
        made, ids_made, kept = [], [], []  # (the pairs, their ads' ids, their places if kept)
        before, now = self._before.get, self._now
        for i in others:  # (prep() inlined: a step per new record)
            s = records[i]
            ad = s.ad
            key = id(ad)
            p = before(key)
            if p is None or p.ad is not ad:
                p = now.get(key)
                if p is None or p.ad is not ad:
                    p = self._derived(ad) or SlotPrep(ad, self._steady(ad))
            now[key] = p
            w = weighed(s, p)
            made.append((w, p))
            ids_made.append(key)
            if w is s and p.steady:
                kept.append(i)
        if others:
            out[others] = np.fromiter(made, object, len(made))
            ad_ids[others] = ids_made
            again[kept] = True
        if len(self._ad_ids) and len(self._before) == len(self._ad_ids):
            self._now = self._carried_now(at)
        else:
            self._now.update(zip(ad_ids.tolist(), map(_SECOND, out.tolist())))
        self._records, self._pairs, self._again, self._ad_ids = records, out, again, ad_ids
        self._record_ids = ids
        self._at, self._others = at, others
        self._origin = np.arange(n) if self._following else None
        self.distinct = len(self._now) == n
        return out.tolist()  # type: ignore[no-any-return]

    def follow(self) -> None:
        """The caller hands :meth:`pairs` the list of slot records it keeps and tells every
        change it makes to that list between two cycles (:meth:`renewed`, :meth:`grown`,
        :meth:`removed`, :meth:`lost`): :meth:`pairs` then finds where each record was in
        last cycle's records by those changes, without reading the records."""
        self._following = True

    def renewed(self, places: Sequence[int]) -> None:
        """The list holds new records at ``places``."""
        if self._origin is not None and len(places):
            self._origin[list(places)] = -1

    def grown(self, n: int) -> None:
        """The list holds ``n`` records, those past its former end new."""
        origin = self._origin
        if origin is not None and n != len(origin):
            grew = n > len(origin)
            self._origin = np.concatenate((origin, np.full(n - len(origin), -1, np.int64))) if grew else None

    def removed(self, places: Sequence[int]) -> None:
        """The records at ``places`` (of the list before) went away; the others keep their order."""
        if self._origin is not None and len(places):
            self._origin = np.delete(self._origin, list(places))

    def lost(self) -> None:
        """The list was made otherwise: where its records were is not known."""
        self._origin = None

    def _told(self, records: list[Slot]) -> Optional[np.ndarray]:
        """Where each of ``records`` was in last cycle's records, by the changes told since
        (:meth:`follow`); None when not known.  A sample of the places is checked (the same
        record object), so that a list not followed is not taken for one that is."""
        origin, self._origin = self._origin, None
        n = len(records)
        if origin is None or len(origin) != n:
            return None
        picks = np.arange(0, n, _SAMPLE)
        if n:
            picks = np.append(picks, n - 1)
        picks = picks[origin[picks] >= 0].tolist()
        last = self._records
        if not all(map(is_, map(records.__getitem__, picks), map(last.__getitem__, origin[picks].tolist()))):
            return None
        return origin

    def _places(self, records: list[Slot]) -> tuple[np.ndarray, Optional[np.ndarray]]:
        """Where each of ``records`` was in last cycle's records, by identity (-1: not
        there; a record listed twice there: its last place), found by sorting the ids
        rather than hashing them into a dict; and the records' ids (None if not read so)."""
        n, last = len(records), self._record_ids
        if last is None or len(last) != len(self._records):
            last = np.fromiter(map(id, self._records), np.uint64, len(self._records))
        order = np.argsort(last, kind="stable")
        ranked = last[order]
        if not len(ranked) or (len(ranked) > 1 and bool((ranked[1:] == ranked[:-1]).any())):
            where = dict(zip(map(id, self._records), range(len(self._records))))
            return np.fromiter(map(where.get, map(id, records), repeat(-1)), np.int64, n), None
        ids = np.fromiter(map(id, records), np.uint64, n)
        pos = np.minimum(np.searchsorted(ranked, ids), len(ranked) - 1)
        return np.where(ranked[pos] == ids, order[pos], -1), ids

    def _carried_now(self, at: np.ndarray) -> dict[int, SlotPrep]:
        """This cycle's preps by ad id, made of last cycle's (which held each of its ads
        once, by the place of its pair): the ads of the pairs taken again (``at``: the
        place of each in last cycle's pairs, -1 for a pair made anew) and of the pairs
        made anew (:meth:`prep` put those in ``_now``) stay, the others left the pool
        (kept in ``_gone`` for :meth:`read`); found at C speed without a step per pair."""
        now, new = self._before, self._now
        taken = np.zeros(len(self._ad_ids), bool)
        taken[at[at >= 0]] = True
        gone = self._gone = [k for k in self._ad_ids[~taken].tolist() if k not in new]
        deque(map(now.__delitem__, gone), maxlen=0)
        now.update(new)
        return now

    def find(self, ad: ClassAd) -> Optional[SlotPrep]:
        """The :class:`SlotPrep` of ``ad`` in this cycle or the last, if any."""
        p = self._now.get(id(ad)) or self._before.get(id(ad))
        return p if p is not None and p.ad is ad else None

    def values(self, ads: Sequence[ClassAd], what: str, compute: Callable[[ClassAd], Any]) -> list:
        """``[compute(ad) for ad in ads]`` (ads of this cycle), each kept as
        :meth:`SlotPrep.evaluated` keeps it: an :data:`~matchmaker.pool.ads.AdMemo`.  The
        values kept for ``what`` are found again at C speed (by the ad's identity, checked);
        the others are computed in order, as the rebuild computes them, and kept from then
        on (until the ad leaves the pool, see :meth:`read`)."""
        kept = self._kept.get(what)
        if kept is None:
            kept = self._kept[what] = {}
        ids = list(map(id, ads))
        hits = list(map(kept.get, ids, repeat(_MISS)))
        out = list(map(_SECOND, hits))
        now = self._now
        for i in compress(range(len(ads)), map(is_not, map(_FIRST, hits), ads)):
            ad = ads[i]
            p = now.get(ids[i])
            if p is None or p.ad is not ad or not p.steady:
                out[i] = compute(ad)  # not to be found again next time
                continue
            v = p.values.get(what, _UNSET)
            if v is _UNSET:
                v = p.values[what] = compute(ad)
            out[i] = v
            kept[ids[i]] = (ad, v)
        return out

    def each(self, preps: Sequence[SlotPrep], what: str, compute: Callable[[ClassAd], Any]) -> list:
        """``[p.evaluated(what, compute) for p in preps]`` (preps of this cycle): what
        :meth:`values` gives for their ads, the values kept read in one pass over the preps
        without finding them again; the others computed in order."""
        out = list(map(dict.get, map(_VALUES, preps), repeat(what), repeat(_UNSET)))
        for i in compress(range(len(out)), map(is_, out, repeat(_UNSET))):
            out[i] = preps[i].evaluated(what, compute)
        return out

    def placed(self, items: Sequence[Any], what: str, get: Callable[[Any], Any]) -> list:
        """``list(map(get, items))`` for this cycle's :meth:`pairs` (or their preps), in
        their order, where ``get`` gives what is kept of the pair under ``what`` (of its
        record and its prep, computed once, as :meth:`SlotPrep.evaluated` or
        :meth:`SlotPrep.references` keep it): a pair taken again from last cycle gives
        what it gave then (the same record, and its ad is steady, so that is what is
        kept), found by its place at C speed without reading the pair; ``get`` is called
        for the others, in order.  Without such pairs, ``get`` for each item."""
        return self.placed_each(items, what, lambda others: list(map(get, others)))

    def placed_each(self, items: Sequence[Any], what: str, get_each: Callable[[list], list]) -> list:
        """:meth:`placed` with ``get_each``, which gives what is kept of each of a list of
        items, called once with the items that are not taken again, in order (if any)."""
        at, last = self._at, self._placed.get(what)
        if at is None or not last or len(at) != len(items):
            out = get_each(list(items)) if len(items) else []
        else:
            # A pair made anew (-1) reads last's last value here, replaced below.
            out = np.fromiter(last, object, len(last))[at].tolist()
            others = self._others
            if others:
                for i, v in zip(others, get_each(list(map(items.__getitem__, others)))):
                    out[i] = v
        if at is not None and len(at) == len(items):
            self._placing[what] = out
        return out

    def placed_sparse(
        self, items: Sequence[Any], what: str, get_each: Callable[[list], list]
    ) -> tuple[list[int], list]:
        """The places, in order, of the items whose value (what :meth:`placed_each` gives,
        ``get_each`` called the same way) is truthy, and those values: what few rows hold
        one (the limits of a claim, an error-valued Rank), without a list of every row.
        Kept by place are only which rows hold a value and those values, found for the
        pairs taken again by a pass over the places at C speed, without reading the pairs."""
        at, n = self._at, len(items)
        last = self._placed.get(what)
        if at is None or last is None or len(at) != n or not len(last[0]):
            others: Sequence[int] = range(n)
            flags = np.zeros(n, bool)
            held: dict[int, Any] = {}
        else:
            places = self._places_array()
            flags = last[0][places]  # a place made anew (-1) reads last's last flag here, cleared below
            others = self._others
            flags[others] = False
            flagged = np.flatnonzero(flags)
            held = dict(zip(flagged.tolist(), map(last[1].__getitem__, at[flagged].tolist())))
        if len(others):
            for i, v in zip(others, get_each(list(map(items.__getitem__, others)))):
                if v:
                    flags[i], held[i] = True, v
        if at is not None and len(at) == n:
            self._placing[what] = (flags, held)
        found = np.flatnonzero(flags).tolist()
        return found, list(map(held.__getitem__, found))

    def placed_among(
        self, chosen: list[int], items: Sequence[Any], what: str, get_each: Callable[[list], list]
    ) -> Optional[list[tuple[int, Any]]]:
        """For the pairs at the places ``chosen`` (in order; ``items``: what is asked of each),
        the values ``get_each`` gives that are not None, as (index in ``chosen``, value):
        a pair taken again from last cycle that was chosen then too gives what it gave then
        (the same record, and its ad is steady), found by a pass over the places at C speed;
        ``get_each`` is called once with the other items, in order.  None when nothing is
        kept by place in this cycle (the caller asks every item itself)."""
        at = self._at
        if at is None or not self.distinct:
            return None
        n, last = len(at), self._placed.get(what)
        ask: Sequence[int] = range(len(chosen))
        found: dict[int, Any] = {}
        if last is not None and len(last[0]):
            places = self._places_array()
            asked = last[0][places]  # a place made anew (-1) reads last's last flag here, cleared below
            asked[self._others] = False
            known = asked[chosen]
            ask = np.flatnonzero(~known).tolist()
            old, known_at = last[1], np.flatnonzero(known)
            for j, k in zip(known_at.tolist(), at[np.array(chosen, np.int64)[known_at]].tolist()):
                v = old.get(k)
                if v is not None:
                    found[j] = v
        if len(ask):
            for j, v in zip(ask, get_each(list(map(items.__getitem__, ask)))):
                if v is not None:
                    found[j] = v
        flags = np.zeros(n, bool)
        flags[chosen] = True
        self._placing[what] = (flags, {chosen[j]: v for j, v in found.items()})
        return sorted(found.items())

    def placed_distinct(self, items: Sequence[Any], what: str, get_each: Callable[[list], list]) -> list:
        """The distinct values (by identity, in no particular order) among those
        :meth:`placed_each` gives (``get_each`` called the same way), when few objects are
        shared by many rows (what a slot ad's ``Requirements`` and ``Rank`` read of a job):
        each object is numbered once and the numbers are kept by place, found for the pairs
        taken again at C speed, without reading the pairs or the objects; the numbers of
        the objects of the others are found at C speed too, by their identities."""
        at, n = self._at, len(items)
        table = self._tables.get(what)
        if table is None or len(table[0]) > _TABLE_LIMIT:
            table = self._tables[what] = ([], {})
            self._placed.pop(what, None)  # numbers of the table forgotten
        held, numbers = table

        def numbered(values: list) -> list:
            out = list(map(numbers.get, map(id, values)))
            for i in compress(range(len(out)), map(is_, out, repeat(None))):  # (few: objects not met yet)
                v = values[i]
                k = numbers.get(id(v))
                if k is None:
                    k = numbers[id(v)] = len(held)
                    held.append(v)  # held: its id stays its own
                out[i] = k
            return out

        last = self._placed.get(what)
        if at is None or last is None or len(at) != n or not len(last):
            codes = np.array(numbered(get_each(list(items))) if n else [], np.int64)
        else:
            codes = last[self._places_array()]
            others = self._others
            if others:
                codes[others] = numbered(get_each(list(map(items.__getitem__, others))))
        if at is not None and len(at) == n:
            self._placing[what] = codes
        return list(map(held.__getitem__, np.flatnonzero(np.bincount(codes, minlength=len(held))).tolist()))

    def pool_size(self, slots: list[Slot], use_slot_weights: bool, memo: AdMemo) -> PoolSize:
        """:func:`~matchmaker.pool.ads.pool_size` of this cycle's :meth:`pairs`' records
        ``slots`` (no constraint).  Each slot's weight and count (its cores for a
        partitionable slot, else 1) are kept by place, a pair taken again giving what it gave
        last cycle (the same record, of a steady ad) at C speed; only the others are read
        (their cores through ``memo``, in order).  While every weight is a positive whole
        float and every count whole, the sums are exact in any order (below 2**53) and are
        taken over the arrays; otherwise they are summed in slot order, as the rebuild does."""
        at, n = self._at, len(slots)
        last = self._placed.get(_SIZE)
        others: Sequence[int]
        if at is None or len(at) != n or last is None or not len(last[0]):
            others, weights, counts = range(n), np.empty(n), np.empty(n)
        else:
            places = self._places_array()
            weights, counts, others = last[0][places], last[1][places], self._others
        chosen = list(map(slots.__getitem__, others))
        ws = list(map(_WEIGHT, chosen))
        flags = list(map(_PARTITIONABLE, chosen))
        cores = iter(slot_cores(list(map(_AD, compress(chosen, flags))), memo))
        cs = [slot_count(next(cores)) if f else 1.0 for f in flags]
        if not (n and all(map(_whole_weight, ws)) and all(map(float.is_integer, cs))):
            wl, cl = weights.tolist(), counts.tolist()  # (the kept ones: whole floats)
            for i, w, c in zip(others, ws, cs):
                wl[i], cl[i] = w, c
            return size_counts(wl, cl, use_slot_weights)
        if len(chosen):
            weights[others], counts[others] = ws, cs
        total, whole = float(weights.sum()), float(counts.sum())
        if total >= 2**53 or whole >= 2**53:  # (a partial sum may have been rounded)
            return size_counts(weights.tolist(), counts.tolist(), use_slot_weights)
        if at is not None and len(at) == n:
            self._placing[_SIZE] = (weights, counts)
        return PoolSize(total if use_slot_weights else float(n), float(weights.min()), whole)

    def _places_array(self) -> np.ndarray:
        """:attr:`_at`, this cycle's places in last cycle's pairs."""
        assert self._at is not None
        return self._at

    def again(self, pairs: Sequence[Any], what: str) -> list:
        """For each of this cycle's :meth:`pairs`, what :meth:`put` kept under ``what`` at its
        place in last cycle's pairs when the pair is taken again from last cycle (what this
        returned then, if nothing was put), else None."""
        return self.placed(pairs, what, _nothing)

    def again_codes(self, what: str, fill: int = -1) -> Optional[np.ndarray]:
        """:meth:`again` of an array of integer codes kept by :meth:`put`: for each of this
        cycle's :meth:`pairs`, the code at its place in last cycle's pairs when the pair is
        taken again from last cycle, else ``fill``; None when none was kept."""
        at, last = self._at, self._placed.get(what)
        if at is None or last is None or not len(last):
            return None
        places = self._places_array()
        out = last[places]  # type: ignore[call-overload]
        out[places < 0] = fill
        return out  # type: ignore[no-any-return]

    def put(self, what: str, values: Any) -> None:
        """Keep ``values`` (one per pair of this cycle, in order) for :meth:`again` in the next
        cycle."""
        if self._at is not None and len(self._at) == len(values):
            self._placing[what] = values

    def annotated(
        self, slot: Slot, p: SlotPrep, entries: RemoteEntries, make: Callable[[Slot], NegotiationAd]
    ) -> NegotiationAd:
        """The annotated copy of ``slot`` (whose prep is ``p``) holding the ``Remote*``
        entries ``entries``: last cycle's copy, its entries rewritten in place where they
        differ, else ``make(slot)``, which must hold exactly ``entries`` and be kept.
        The rewrites of copies that spell the names as the entries do wait for
        :meth:`settle`, which makes each change to all its copies at once."""
        copy = p.copy
        if copy is not None and p.stamp != self._cycle:
            attrs = copy._attrs
            if type(attrs.own) is SharedEntries:  # type: ignore[union-attr]
                before = attrs.own.entries  # type: ignore[union-attr]  # what the copies sharing it hold
                if before is not entries:
                    attrs.unshare()  # type: ignore[union-attr]  # to be rewritten alone, not the others
                p.entries = before
            before = p.entries
            if before is entries:
                p.stamp = self._cycle
                return copy
            hit = self._changes.get((id(before), id(entries)))  # found once per pair in a cycle
            change = hit[2] if hit is not None else self._change(before, entries)
            if change is not None:
                p.stamp, p.entries = self._cycle, entries
                if not change.names:
                    return copy
                if p.spelled:
                    change.copies.append(copy)
                else:
                    copy.set_entries(change.entries.items())
                    self.line.note(copy, change.names)
                return copy
        fresh = make(slot)
        if p.stamp != self._cycle:  # the first copy of the ad in this cycle is the one kept
            p.copy, p.entries, p.stamp = fresh, entries, self._cycle
            p.spelled = fresh.holds_entries(entries)
        return fresh

    def last(self, what: str) -> Any:
        """What :meth:`put` kept under ``what`` in last cycle, in last cycle's order (None if nothing)."""
        return self._placed.get(what)

    def rewrite_shared(self, code: int, entries: RemoteEntries, noted: np.ndarray) -> bool:
        """Give the copies that share the table of ``code`` (:class:`SharedEntries`) the
        ``Remote*`` entries ``entries``, all at once, and tell the slot table which copies
        (``noted``: the ids of every copy of the last table that shares it).  False when
        the names differ (nothing done: each copy is to be annotated alone)."""
        shared = self.shared[code]
        if shared is None:
            return False
        before = shared.entries
        if before is entries:
            return True
        change = self._change(before, entries)
        if change is None:
            return False
        if change.names:
            shared.update(change.entries)
            self.line.note_ids(noted, change.names, change.plains)
        shared.entries = entries
        return True

    def share(self, user: str, copy: NegotiationAd, entries: RemoteEntries) -> int:
        """Make ``copy``, which holds the ``Remote*`` entries ``entries`` as they are spelled
        (of ``user``), share the table of the copies of ``user`` that hold the same other
        entries of their own (the same nodes, ``SlotWeight``...); give its code (kept by
        place for the next cycle, :meth:`rewrite_shared`), -1 when it does not hold them so
        (it keeps its own table)."""
        attrs: Any = copy._attrs
        own = attrs.own
        if type(own) is SharedEntries:
            shared = self.shared[own.code] if own.code < len(self.shared) else None
            return own.code if own is shared and own.entries is entries else -1
        names = dict(entries)
        if not all(map(_same_held, map(own.get, names), names.values())):
            return -1
        others = tuple((key, entry[0], id(entry[1])) for key, entry in own.items() if key not in names)
        code = self.user_codes.get((user, others))
        if code is None:
            code = self.user_codes[(user, others)] = len(self.code_users)
            self.code_users.append(user)
            self.shared.append(None)
        shared = self.shared[code]
        if shared is None or shared.entries is not entries:  # the others' nodes held by it: ids stay theirs
            shared = self.shared[code] = SharedEntries(own)
            shared.entries, shared.code = entries, code
        attrs.own = shared
        return code

    def settle(self) -> None:
        """Make the rewrites :meth:`annotated` left waiting, each change to all its copies
        at C speed, and tell the slot table which (:meth:`TableLine.note_all`).  To be
        called once the cycle's copies are made, before any is read."""
        for _, _, change in self._changes.values():
            if change is not None and change.copies:
                entries = change.entries
                for copy in change.copies:  # faster than attrgetter("_attrs.own") over them
                    copy._attrs.own.update(entries)  # type: ignore[union-attr]
                self.line.note_all(change.copies, change.names, change.plains)
                change.copies = []

    def consumed(self, copy: NegotiationAd, ad: ClassAd) -> None:
        """``copy``, made of the slot ad ``ad``, may be written into during this cycle: it
        is not kept for the next."""
        p = self.find(ad)
        if p is not None and p.copy is copy:
            p.copy = None
        self.line.note(copy, None)

    def _change(self, before: RemoteEntries, after: RemoteEntries) -> Optional["_Change"]:
        """What turns a copy holding the entries ``before`` into one holding ``after``;
        None when their names differ."""
        key = (id(before), id(after))
        hit = self._changes.get(key)
        if hit is None:
            hit = self._changes[key] = (before, after, _Change.of(before, after))  # held: ids stay theirs
        return hit[2]


class _Written:
    """Names written with plain values or deleted (lower-case, sorted: ``lnames``), those
    that may be written and those that may be deleted, and whether the trim and the
    claimed-idle test read none of them."""

    __slots__ = ("lnames", "writes", "deletes", "decided")

    def __init__(self, writes: frozenset[str], deletes: frozenset[str]) -> None:
        self.lnames = tuple(sorted(writes | deletes))
        self.writes, self.deletes = writes, deletes
        self.decided = _DECIDE_READS.isdisjoint(self.lnames)


def _written(names: tuple[str, ...], deleted: tuple[str, ...] = ()) -> _Written:
    """The :class:`_Written` of ``names`` written and ``deleted`` (remembered: a few lists
    are written again and again)."""
    hit = _WRITTEN.get((names, deleted))
    if hit is None:
        if len(_WRITTEN) > 1024:
            _WRITTEN.clear()
        hit = _WRITTEN[(names, deleted)] = _Written(
            frozenset(n.lower() for n in names), frozenset(n.lower() for n in deleted)
        )
    return hit


def _union(a: _Written, b: _Written) -> _Written:
    """The names of both."""
    if a is b:
        return a
    key = (id(a), id(b))
    hit = _UNIONS.get(key)
    if hit is None or hit[0] is not a or hit[1] is not b:
        if len(_UNIONS) > 1024:
            _UNIONS.clear()
        hit = _UNIONS[key] = (a, b, _Written(a.writes | b.writes, a.deletes | b.deletes))
    return hit[2]


class _RefsPlan:
    """What :meth:`SlotCarry._carried_refs` reads of the ads written under some names from
    an ad whose references are a result: the names written that decided it and might
    read otherwise (``read``), what the ad stores under them (``held``) and what the
    walk saw of those (``shapes``); the results found for what the ads store there."""

    __slots__ = ("refs", "names", "read", "held", "shapes", "found")

    def __init__(self, refs: frozenset[str], names: _Written, decisive: frozenset[str], base: ClassAd) -> None:
        self.refs, self.names = refs, names  # (held: their ids stay theirs)
        among = tuple(filter(decisive.__contains__, names.lnames))
        read: list[str] = []
        held: list[Any] = []
        for name, stored in zip(among, base.stored_of(among)):
            shape = _READ_SHAPES.get(type(stored))
            if shape == 1 and name not in names.deletes or shape == 0 and name not in names.writes:
                continue  # (a literal stays one, nothing stays nothing)
            read.append(name)
            held.append(stored)
        self.read, self.held = tuple(read), tuple(held)
        self.shapes = tuple(map(_shape_against, held, held))
        self.found: dict[tuple, Any] = {}  # what the walk sees -> the result, or an ad's prep standing for it


def _shape_against(stored: Any, before: Any) -> Optional[int]:
    """What the reference walk sees of a stored value: nothing (0), a literal (1), the
    node ``before`` (2); None for another node."""
    shape = _READ_SHAPES.get(type(stored))
    if shape is None and stored is before:
        return 2
    return shape


_UNIONS: dict[tuple[int, int], tuple[_Written, _Written, _Written]] = {}
_WRITTEN: dict[tuple[tuple[str, ...], tuple[str, ...]], _Written] = {}
_LITERALS = frozenset((bool, int, float, str, ast.Literal))
# What the reference walk sees of a stored value, by its type: nothing (0), a literal (1);
# an expression node is none of these.
_READ_SHAPES: dict[type, int] = {type(None): 0, **dict.fromkeys(_LITERALS, 1)}
_READS_LIMIT = 4096
# What the trim and the claimed-idle test read of a slot ad (lower-case; matchmaker.cycle.state).
TRIM_READS = ("retirementtimeremaining", "wantmatching")
IDLE_READS = ("activity",)
_DECIDE_READS = frozenset(TRIM_READS + IDLE_READS)
# SlotPrep.weighed of a prep made by SlotCarry._derived: its record (made by make_slots under
# the cycle's settings) weighs what the cycle finds.
MADE = object()


def _same_reads(before: Sequence[Any], after: Sequence[Any]) -> bool:
    """Whether the reference walk sees the same in each pair of stored values: nothing in
    both, the very same node, or a literal in both (:class:`SlotReferences`)."""
    for a, b in zip(before, after):
        if a is not b and (type(a) not in _LITERALS or type(b) not in _LITERALS):
            return False
    return True


def _same_held(held: Any, entry: tuple[str, ast.Node]) -> bool:
    """Whether an entry a copy holds gives what ``entry`` gives: the same spelling and node
    (:func:`same_entry`)."""
    return held is entry or (held is not None and held[0] == entry[0] and same_entry(held[1], entry[1]))


def _whole_weight(w: Any) -> bool:
    """Whether a slot weight is a whole float in [0, 2**53), not -0.0 (summed exactly in any
    order, and its minimum the same float whichever is found)."""
    return type(w) is float and 0 <= w < 2**53 and w.is_integer() and (w > 0 or copysign(1.0, w) > 0)


def _nothing(_item: Any) -> None:
    return None


class _Change:
    """The entries of one list that differ from another's, by lower-case name."""

    __slots__ = ("entries", "names", "plains", "copies")

    def __init__(self, entries: dict[str, Any]) -> None:
        self.entries = entries
        self.names = tuple(entries)
        self.plains = tuple(plain_form(entry[1]) for entry in entries.values())  # what a copy reads so
        self.copies: list[NegotiationAd] = []  # copies waiting for it (SlotCarry.settle)

    @staticmethod
    def of(before: RemoteEntries, after: RemoteEntries) -> Optional["_Change"]:
        """The change from ``before`` to ``after``, None when their names differ."""
        if len(before) != len(after) or any(b[0] != a[0] or b[1][0] != a[1][0] for b, a in zip(before, after)):
            return None
        return _Change({a[0]: a[1] for b, a in zip(before, after) if not same_entry(b[1][1], a[1][1])})


__all__ = ["IDLE_READS", "MADE", "TRIM_READS", "SlotCarry", "SlotPrep"]
