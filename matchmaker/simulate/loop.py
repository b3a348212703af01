"""The virtual-time loop: negotiation cycles every ``interval`` seconds with the books kept.

Cycles run at ``start``, ``start + interval``, ... up to and including ``start +
duration``.  Before each cycle, at its time ``t``:

1. jobs whose run ended by ``t`` complete: their slot is released (the accountant
   sees the claim end at ``t``, as HTCondor's negotiator notices a released claim
   at its next cycle) and the job is done, or idle again when it repeats;
2. jobs whose ``QDate`` is at or before ``t`` join the queue.

Then :func:`~matchmaker.cycle.session.run_cycle` ages priorities to ``t``, brings the
claims in line with the claimed slots, negotiates and charges the matches, and
:func:`~matchmaker.cycle.claims.claim_matches` turns the matches into claimed slots
and running jobs (a preempted job goes back to idle; a partitionable slot is split
into dynamic slots, and with ``CLAIM_PARTITIONABLE_LEFTOVERS`` the submitter's other
idle jobs that fit start on what is left).  The accountant then sees the claims as
the startds report them, each dynamic slot charged its own weight from ``t``.  A
dynamic slot whose job ends goes away and gives its resources back to its
partitionable slot.  One row per submitter, per
group and for the pool is recorded after every cycle (see :mod:`.series`).
"""

from __future__ import annotations

import gc
from bisect import bisect_left
from collections.abc import Callable
from itertools import compress, repeat
from operator import attrgetter, is_, itemgetter, ne, not_, or_
from typing import Optional

from classad.ad import ClassAd
from classad.bulk import collector_paused, heap_settled
from classad.evaluate import seeded_random

from ..accounting.priority_math import effective_priority, resolve_prio_factor
from ..accounting.store import Accountant, Claim
from ..config.settings import Settings
from ..cycle.carry import Carried
from ..cycle.claims import CLAIM_ATTRS, STATE_STAMPS, claim_matches
from ..cycle.results import CycleResult
from ..cycle.session import claim_names, group_function, remembered, run_cycle
from ..pool.ads import Pool, Slot, make_slots
from ..pool.partition import give_back, is_dynamic, machine_resources, parent_name, with_values, writes_kind
from .jobs import (
    DONE,
    PENDING,
    QUEUED_IDLE,
    QUEUED_RUNNING,
    DurationSource,
    SimJob,
    Timeline,
    idle_record,
    initial_jobs,
    job_start_date,
)
from .series import Simulation
from .spans import ClaimSpan, ClaimSpans

Progress = Callable[[int, int], None]
_NAME, _AD, _PARTITIONABLE = attrgetter("name"), attrgetter("ad"), attrgetter("partitionable")
_INDEX = attrgetter("index")
# What a slot's claim depends on besides its name, and the parts of a remembered claim.
_CLAIM_FIELDS = attrgetter("customer", "weight", "state")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_NO_CLAIM: tuple = (None, None)


def _generation(k: int) -> Optional[int]:
    """The generation the collector walks after cycle ``k``, None for no collection.

    The objects that existed when the cycles began (the pool read, the jobs) are set
    aside from the collector for the whole run (:func:`classad.bulk.heap_settled`): they
    form no reference cycles.  What each cycle makes stays in the youngest generation
    until a collection.  A cycle's state breaks its own reference cycles when its result
    is made (``Cycle.close``), so reference counting frees most of it, and the garbage a
    cycle leaves in reference cycles is a few small objects (at 10,000 slots about seven
    a cycle).  A walk costs what is alive of what it walks, and that is mostly not
    garbage: at 10,000 slots ten cycles leave some 400,000 new objects alive (ads and
    records in the pool, the claim spans kept for the run), which take about 0.3 s to
    walk to free about seventy.  So every fiftieth cycle the youngest generation is
    walked -- what is alive then of what fifty cycles made (0.78 s there): an ad
    replaced in the meantime is never walked -- and what survives it is set aside with
    the pool (see :func:`run_simulation`)."""
    return 0 if k % _YOUNG_EVERY == _YOUNG_EVERY - 1 else None


# How often (in cycles) the collector walks the youngest generation.
_YOUNG_EVERY = 50


def _without(items: list, at: list[int]) -> list:
    """``items`` without the places ``at`` (increasing), copied a stretch at a time."""
    kept = items[: at[0]]
    for a, b in zip(at, at[1:] + [len(items)]):
        kept.extend(items[a + 1 : b])
    return kept


def released(slot: Slot, settings: Settings, now: float) -> Slot:
    """The slot record after its claim ended at ``now``: Unclaimed/Idle since then
    (:data:`~matchmaker.cycle.claims.STATE_STAMPS`), without the claim's attributes
    (:data:`~matchmaker.cycle.claims.CLAIM_ATTRS`)."""
    values: dict[str, object] = {"State": "Unclaimed", "Activity": "Idle", **dict.fromkeys(STATE_STAMPS, int(now))}
    ad = with_values(slot.ad, values, deleted=CLAIM_ATTRS)  # (RELEASE_WRITES, CLAIM_ATTRS)
    (fresh,) = make_slots(
        [(ad, slot.source)],
        use_slot_weights=settings.use_slot_weights,
        slot_weight_expr=settings.slot_weight_expr,
        force_slot_weight=settings.force_slot_weight,
        first_index=slot.index,
    )
    return fresh


# The names released() writes in a slot's ad (and it deletes CLAIM_ATTRS).
RELEASE_WRITES = ("State", "Activity", *STATE_STAMPS)


class _Run:
    """The mutable state of one simulation."""

    def __init__(
        self, pool: Pool, settings: Settings, acct: Accountant, start: float, durations: DurationSource
    ) -> None:
        self.settings, self.acct, self.durations = settings, acct, durations
        # SIMULATE_INCREMENTAL: what one cycle leaves the next (matchmaker.cycle.carry)
        self.carry = Carried(settings.slot_weight_expr) if settings.simulate_incremental else None
        self.slots = list(pool.slots)
        if self.carry is not None:  # told each change of self.slots (SlotCarry.renewed, ...)
            self.carry.slots.follow()
        self.refused = list(pool.refused)
        self.warnings = list(pool.warnings)
        self.jobs = initial_jobs(pool.jobs, start)
        # Each job's record as read, by its place in the queue (SimJob.seq): a done job goes back
        # to it (when it has the same id and submitter), so that the copies the run made of its
        # ad are let go; the pool holds these anyway.
        self.read_records = [j.record for j in self.jobs]
        self.by_id = {j.id: j for j in self.jobs}
        # Whether the claims may find a job's place in the pool by its id (all different).
        self._ids_unique = len(self.by_id) == len(self.jobs)
        self.on_slot: dict[str, SimJob] = {}
        self.open: dict[str, ClaimSpan] = {}
        self.spans = ClaimSpans()  # the closed ones, as columns
        self.group_of = remembered(group_function(settings))
        self.pool_weight = sum(s.weight for s in self.slots)
        self.parent: dict[str, str] = {}  # dynamic slot -> its partitionable slot
        self.pslots: set[str] = set()
        # Per slot name, the customer, weight and state its claim (or absence of one) was
        # made for, and that claim; the slot ad last found not to be a dynamic slot.
        self._claims: dict[str, tuple[tuple, Optional[Claim]]] = {}
        self._not_dynamic: dict[str, ClassAd] = {}
        self.charged: list[Claim] = []  # the claims of the charged slots after the last cycle, in slot order
        # SIMULATE_INCREMENTAL: the names of the slots whose records changed since the claims
        # were last synced (None: not synced yet, or rebuilding: the cycle syncs every slot).
        self.claims_changed: Optional[set[str]] = None
        # Each slot's claim (or None), place by place, as of the last look at the slots; the
        # places whose records are new since (None: look at every slot next time); see _renewed.
        self._claim_at: Optional[list[Optional[Claim]]] = None
        self._dirty: Optional[list[int]] = None
        # Per partitionable slot's name, a number below which each dynamic slot name made of
        # it is taken (the claims' free_from: they keep it, the releases lower it).
        self.free_from: dict[str, int] = {}
        # Each slot's record by name, kept up to date as records change (None: make it again).
        self._by_name: Optional[dict[str, Slot]] = None
        # Each slot's index (Slot.index), place by place, as the records hold them (None: read
        # them again); a new list each time they change, never one changed in place.
        self._indices: Optional[list[int]] = None
        self._find_parents()
        for s in self.slots:
            if s.charged:
                self._open(s.name, s.customer or "", s.weight, start)
        for j in self.jobs:
            if j.phase == QUEUED_RUNNING:
                host = j.record.ad.get("RemoteHost")
                began = job_start_date(j, start)
                j.starts, j.end = 1, began + durations.duration(j.record, began)
                if isinstance(host, str) and host in self.open and host not in self.on_slot:
                    j.slot = host
                    self.on_slot[host] = j
                j.began = began
        customers = [s.customer for s in self.slots if s.charged and s.customer]
        self.submitters = list(dict.fromkeys([j.submitter for j in self.jobs] + customers))
        self.timeline = Timeline(self.jobs)
        for j in self.jobs:
            if j.phase == QUEUED_RUNNING and j.end is not None:
                self.timeline.runs_until(j)

    def _queued_place(self, job_id: str) -> Optional[int]:
        """Where job ``job_id`` is in :meth:`pool`'s jobs, None when it is not queued."""
        job = self.by_id.get(job_id)
        return None if job is None else self.timeline.place(job)

    def _idle_count(self, submitter: str) -> int:
        """How many of :meth:`pool`'s jobs are idle records of ``submitter``: its queued jobs
        in the idle phase (whose records are idle ones, :func:`idle_record` or as read)."""
        by_phase = self.timeline.counts.get(submitter)
        return 0 if by_phase is None else by_phase[QUEUED_IDLE]

    def _open(self, slot: str, customer: str, weight: float, t: float) -> None:
        self.open[slot] = ClaimSpan(slot, customer, weight, t)

    def _close(self, slot: str, t: float) -> None:
        span = self.open.pop(slot, None)
        if span is not None:
            span.end = t
            self.spans.append(span)

    def before_cycle(self, t: float) -> None:
        """Completions, then arrivals, at ``t``."""
        ended: list[str] = []
        timeline = self.timeline
        for j in timeline.due(t):
            self._new_record(j, j.record.ad)
            if j.phase == PENDING:
                timeline.move(j, QUEUED_IDLE)
                continue
            if j.slot is not None:
                self.on_slot.pop(j.slot, None)
                self._close(j.slot, t)
                ended.append(j.slot)
            j.runs += 1
            finished_at, j.slot, j.end = j.end, None, None
            if j.repeats_left != 0:
                j.repeats_left -= 1 if j.repeats_left > 0 else 0
                timeline.move(j, QUEUED_IDLE, idle_record(j.record, t if finished_at is None else finished_at))
                j.idle_since = finished_at
            else:
                read = self.read_records[j.seq]
                timeline.move(j, DONE, read if read.id == j.id and read.submitter == j.submitter else None)
        if ended:
            self._release(ended, t)

    def _release(self, names: list[str], t: float) -> None:
        """End the claims on ``names`` at ``t``: a dynamic slot goes away and its resources go
        back to its partitionable slot; any other slot is Unclaimed again."""
        slots, by_name = self.slots, self.slots_by_name()
        place = self._places(by_name)
        # (an ad found not to be a dynamic slot is not one once released, nor once its
        # resources are written: see _known_kinds)
        checked = self._not_dynamic
        gone: set[str] = set()
        renewed: list[int] = []  # the places of the new records
        if self.claims_changed is not None:
            self.claims_changed.update(names)
        moves = self.carry.slots if self.carry is not None else None
        for name in names:
            i = place(name)
            parent = self.parent.pop(name, None)
            if parent is None:
                before = slots[i]
                self._replace(i, released(before, self.settings, t), renewed)
                self._new_ad(name, slots[i].ad, before.ad, RELEASE_WRITES, CLAIM_ATTRS)
                if checked.get(name) is before.ad:
                    checked[name] = slots[i].ad
                continue
            p = place(parent)
            self._freed(parent, name)
            if self.claims_changed is not None:
                self.claims_changed.add(parent)
            base = slots[p].ad
            resources = machine_resources(base)
            back = give_back(base, slots[i].ad, resources)
            self._replace(p, self._remade(back, slots[p]), renewed)
            self._new_ad(parent, back, base, resources)
            if checked.get(parent) is base and not writes_kind(resources):
                checked[parent] = back
            gone.add(name)
        if moves is not None:
            moves.renewed(renewed)
        if by_name is None:  # names given twice: every slot of a gone name goes
            self._dirty = None
            if gone:
                self.slots = [s.at(k) for k, s in enumerate(s for s in slots if s.name not in gone)]
                self._indices = None
                if moves is not None:
                    moves.lost()
            return
        at = sorted(map(place, gone))
        if self._by_name is not None:
            for name in gone:
                del self._by_name[name]
        if self._dirty is not None:
            if any(slots[k].partitionable for k in at):
                self._dirty = None
            else:  # the places of the new records once the gone ones are out
                out = set(at)
                self._dirty += [k - bisect_left(at, k) for k in renewed if k not in out]
        if not gone:
            return
        # The slots between the gone ones, copied a stretch at a time; the records after
        # them keep their indices (Slot.index: increasing along the list, gaps allowed).
        self.slots = _without(slots, at)
        if moves is not None:
            moves.removed(at)
        if self._indices is not None:
            self._indices = _without(self._indices, at)
        if self._claim_at is not None:
            self._claim_at = _without(self._claim_at, at)

    def _freed(self, parent: str, name: str) -> None:
        """Dynamic slot ``name`` of partitionable slot ``parent`` goes away: its number (in
        ``slot1_<n>@host``) is free from now on (see :attr:`free_from`)."""
        hint = self.free_from.get(parent)
        if hint is None:
            return
        digits = name.partition("@")[0].rpartition("_")[2]
        if digits.isascii() and digits.isdigit() and int(digits) >= hint:
            return
        if digits.isascii() and digits.isdigit():
            self.free_from[parent] = max(1, int(digits))
        else:
            del self.free_from[parent]

    def _replace(self, i: int, record: Slot, renewed: list[int]) -> None:
        """Put ``record`` at place ``i`` of the slots; a record of another name or kind (partitionable
        or not) makes the next :meth:`_renewed` look at every slot."""
        old = self.slots[i]
        if record.name != old.name or record.partitionable != old.partitionable:
            self._dirty = None
            self._by_name = None
        if record.index != old.index:
            self._indices = None
        self.slots[i] = record
        renewed.append(i)
        if self._by_name is not None:
            self._by_name[record.name] = record

    def slots_by_name(self) -> Optional[dict[str, Slot]]:
        """Each slot's record by name (kept from cycle to cycle), None when names repeat."""
        if self._by_name is None:
            by_name = dict(zip(map(_NAME, self.slots), self.slots))
            if len(by_name) == len(self.slots):
                self._by_name = by_name
        return self._by_name

    def _places(self, by_name: Optional[dict[str, Slot]]) -> Callable[[str], int]:
        """Where each slot name is in the list (the last place of a name given twice), with
        :meth:`slots_by_name`'s answer ``by_name``."""
        slots = self.slots
        if by_name is None:
            return dict(zip(map(_NAME, slots), range(len(slots)))).__getitem__
        # A record's index is increasing along the list (Slot.index): it finds the place.
        indices = self._slot_indices()  # searched without a key function
        return lambda name: bisect_left(indices, by_name[name].index)

    def _slot_indices(self) -> list[int]:
        """Each slot's index, place by place (kept while the records keep theirs)."""
        if self._indices is None:
            self._indices = list(map(_INDEX, self.slots))
        return self._indices

    def _new_ad(
        self, slot: str, ad: ClassAd, base: ClassAd, names: Optional[tuple[str, ...]], deleted: tuple[str, ...] = ()
    ) -> None:
        """Slot ``slot`` holds ``ad``, a copy of ``base`` with attributes deleted and plain
        values written (under ``names`` alone, if given, and without ``deleted``), its
        record made here.  When
        ``base`` draws no random numbers neither does ``ad`` (the carry is told,
        :meth:`Carried.derived` and :meth:`SlotCarry.derive`), and the record made of it
        here is the one the carried claims would make again: they need not look at it.
        Otherwise they do."""
        carry = self.carry
        if carry is None:
            return
        if carry.steady(base):
            carry.derived(ad, base)
            carry.slots.derive(ad, base, names, self.settings, deleted)
        else:
            carry.new_slots.add(slot)

    def _new_record(self, job: SimJob, base: ClassAd) -> None:
        """``job``, whose ad was ``base``, enters the queue with its record or gets one made
        of a copy of ``base`` with attributes deleted and plain values written (an idle
        record).  When making a record of ``base`` draws no random numbers, neither does
        making one of such a copy, and the record the loop holds is the one the carried
        claims would make again: they need not look at it.  Otherwise they do."""
        carry = self.carry
        if carry is not None and not carry.steady_job(base):
            carry.new_jobs.add(job.id)

    def _remade(self, ad: ClassAd, slot: Slot) -> Slot:
        st = self.settings
        (fresh,) = make_slots(
            [(ad, slot.source)],
            use_slot_weights=st.use_slot_weights,
            slot_weight_expr=st.slot_weight_expr,
            force_slot_weight=st.force_slot_weight,
            first_index=slot.index,
        )
        return fresh

    def pool(self, first: bool) -> Pool:
        """The pool of the next cycle; the carry is told how its jobs changed since the last."""
        queued = list(self.timeline.records)  # (the records of timeline.queued, in order)
        left, joined = self.timeline.changes()
        if self.carry is not None:
            self.carry.job_weights.tell(queued, left, joined)
        return Pool(self.slots, queued, [], self.refused if first else [])

    def after_cycle(self, pool: Pool, result: CycleResult, t: float) -> dict[str, int]:
        """Apply the matches, the splits and the leftovers; returns preemptions per submitter."""
        claimed = claim_matches(
            pool,
            result,
            self.settings,
            t,
            carry=self.carry,
            # (the bound method is not kept: it would hold the run in a reference cycle)
            job_place=self._queued_place if self._ids_unique else None,
            slots_by_name=self.slots_by_name(),
            slot_indices=self._slot_indices(),
            free_from=self.free_from,
            idle_count=self._idle_count if self.carry is not None and self._ids_unique else None,
        )
        timeline = self.timeline
        preempted: dict[str, int] = {}
        for m in result.matches:
            ended = list(m.preempted_slots) + ([m.slot] if m.slot not in self.pslots else [])
            for name in ended:
                victim = self.on_slot.pop(name, None)
                if victim is not None and victim.id != m.job:
                    victim.slot, victim.end, victim.idle_since = None, None, t
                    victim.preemptions += 1
                    base = victim.record.ad
                    timeline.move(victim, QUEUED_IDLE, idle_record(victim.record, t))
                    self._new_record(victim, base)
                    preempted[victim.submitter] = preempted.get(victim.submitter, 0) + 1
                self._close(name, t)
                self.parent.pop(name, None)
        for st in claimed.starts:
            job = self.by_id[st.job]
            timeline.move(job, QUEUED_RUNNING, claimed.jobs_made[st.job])
            job.slot = st.slot
            job.starts += 1
            job.started(t)
            job.began = t
            job.end = t + self.durations.duration(job.record, t)
            timeline.runs_until(job)
            self.on_slot[st.slot] = job
            self._open(st.slot, st.submitter, claimed.slots_made[st.slot].weight, t)
        before = self._slot_indices()
        self.slots = list(claimed.pool.slots)
        if self.carry is not None:  # the claims put new records at the places changed, new ones last
            if claimed.changed is None:
                self.carry.slots.lost()
            else:
                self.carry.slots.grown(len(self.slots))
                self.carry.slots.renewed(claimed.changed)
        # The records the claims put in place of others keep their indices; new ones go last.
        self._indices = None if claimed.changed is None else before + [s.index for s in self.slots[len(before) :]]
        self._new_records(claimed.changed)
        self._known_kinds(claimed.children, claimed.resized)
        if not self._renewed(pool.slots, claimed.changed):
            self._every_slot()
        # The startds report the dynamic slots at once: charge each its own weight from now on.
        assert self._claim_at is not None
        self.charged = list(filter(None, self._claim_at))
        only = self._claims_to_sync(result, claimed.changed)
        with self.acct.transaction():
            if only is None:
                self.acct.sync_claims(self.charged, t)
            else:
                self.acct.sync_claims(only[1], t, only[0])
        self.claims_changed = set() if self.carry is not None else None
        return preempted

    def _claims_to_sync(
        self, result: CycleResult, changed: Optional[list[int]]
    ) -> Optional[tuple[set[str], list[Claim]]]:
        """``(names, claims)``: the names of the only slots whose claims may differ from the
        accountant's records after the claims put new records at the places ``changed``
        (None: any place), and the claims of those slots in slot order; None when any
        slot's may.  The cycle left the accountant holding the claims of the pool it
        negotiated (it synced the slots released since the last sync) and the matches it
        charged (by :func:`claim_names`); the claims changed only the records at ``changed``."""
        by_name, claim_at = self._by_name, self._claim_at
        if self.carry is None or changed is None or by_name is None or claim_at is None:
            return None
        names = set(claim_names(result.matches))
        place = self._places(by_name)
        at = set(changed)
        at.update(place(n) for n in names if n in by_name)
        slots = self.slots
        names.update(slots[k].name for k in at)
        return names, [c for c in map(claim_at.__getitem__, sorted(at)) if c is not None]

    def _new_records(self, changed: Optional[list[int]]) -> None:
        """The slots' records by name after the claims put new ones at the places ``changed``
        (None: any place)."""
        by_name, slots = self._by_name, self.slots
        if by_name is None or changed is None:
            self._by_name = None
            return
        for k in changed:
            s = slots[k]
            by_name[s.name] = s
        if len(by_name) != len(slots):  # a name the claims added was there already
            self._by_name = None

    def _current_claims(self) -> None:
        """Each slot's claim (``_claim_at``), or None when it is not charged.  A slot keeps its
        claim while its record holds the same customer, weight and state (a claim depends on
        nothing else but the name): the records are compared at C speed, and only the others
        looked at."""
        slots, known = self.slots, self._claims
        if len(known) > 2 * len(slots) + 1000:
            known.clear()  # names of slots long gone
        names, fields = list(map(_NAME, slots)), list(map(_CLAIM_FIELDS, slots))
        hits = list(map(known.get, names, repeat(_NO_CLAIM)))
        for k in compress(range(len(slots)), map(ne, map(_FIRST, hits), fields)):
            hits[k] = known[names[k]] = (fields[k], self._claim(slots[k]))
        self._claim_at = list(map(_SECOND, hits))

    def _claim(self, s: Slot) -> Optional[Claim]:
        return Claim(s.name, s.customer, s.weight, self.group_of(s.customer)) if s.charged else None  # type: ignore[arg-type]

    def _every_slot(self) -> None:
        """:meth:`_find_parents` and :meth:`_current_claims`, looking at every slot."""
        orphans = self._find_parents()
        self._current_claims()
        # Looking at only the changed slots next time needs each name once and no orphan.
        names = set(map(_NAME, self.slots))
        self._dirty = [] if not orphans and len(names) == len(self.slots) else None

    def _known_kinds(self, children: dict[str, str], resized: dict[str, tuple[ClassAd, ClassAd]]) -> None:
        """What :meth:`_find_parent` would find of slots whose kinds are known: each dynamic
        slot ``children`` names belongs to the partitionable slot named with it, and each
        ad of ``resized`` (before, after) is not a dynamic slot when the one before it was
        found not to be.  (A partitionable slot ``slot1@host`` names its dynamic slots
        ``slot1_<n>@host``, whose :func:`parent_name` it is when ``slot1`` is not empty.)"""
        parent, checked = self.parent, self._not_dynamic
        for name, up in children.items():
            if up.partition("@")[0]:
                parent[name] = up
        for name, (base, ad) in resized.items():
            if checked.get(name) is base:
                checked[name] = ad

    def _find_parents(self) -> bool:
        """Which partitionable slot each dynamic slot belongs to (by name, ``slot1_3@host`` ->
        ``slot1@host``); a dynamic slot whose parent is not in the pool has none.  A slot ad
        once found not to be dynamic is not evaluated again (compared at C speed).  Whether
        a dynamic slot had no parent."""
        slots, checked = self.slots, self._not_dynamic
        if len(checked) > 2 * len(slots) + 1000:
            checked.clear()
        names, ads = list(map(_NAME, slots)), list(map(_AD, slots))
        self.pslots = set(compress(names, map(_PARTITIONABLE, slots)))
        known = map(or_, map(self.parent.__contains__, names), map(is_, map(checked.get, names), ads))
        orphans = False
        for k in compress(range(len(names)), map(not_, known)):
            orphans |= self._find_parent(names[k], ads[k])
        return orphans

    def _find_parent(self, name: str, ad: ClassAd) -> bool:
        """Whether slot ``name`` (holding ``ad``) is a dynamic slot without a parent in the pool."""
        if is_dynamic(ad):
            up = parent_name(name)
            if up in self.pslots:
                self.parent[name] = up  # type: ignore[assignment]
                return False
            return True
        self._not_dynamic[name] = ad
        return False

    def _renewed(self, before: list[Slot], changed: Optional[list[int]]) -> bool:
        """:meth:`_find_parents` and :meth:`_current_claims` looking only at the slots with new
        records since they last ran: those :meth:`_release` made (``_dirty``) and those the
        claims made (``changed``, places in ``self.slots``; ``before`` is the list they
        changed).  The places of every other slot hold what those would find again: it holds
        the same record, or one moved down the list.  False, having done nothing, when that
        may not be so: when a slot's name or kind (partitionable or not) changed, names
        repeat, a dynamic slot has no parent in the pool, or a table of known slots is full."""
        slots, dirty, claim_at = self.slots, self._dirty, self._claim_at
        if changed is None or dirty is None or claim_at is None or len(claim_at) != len(before):
            return False
        limit = 2 * len(slots) + 1000
        if len(self._not_dynamic) > limit or len(self._claims) > limit:
            return False
        for k in changed:
            old = before[k] if k < len(before) else None
            s = slots[k]
            if s.partitionable if old is None else (s.name != old.name or s.partitionable != old.partitionable):
                return False
        parent, checked, known = self.parent, self._not_dynamic, self._claims
        claim_at.extend(repeat(None, len(slots) - len(claim_at)))
        for k in sorted(set(dirty).union(changed)):
            s = slots[k]
            name, ad = s.name, s.ad
            if name not in parent and checked.get(name) is not ad and self._find_parent(name, ad):
                self._dirty = None  # an orphan: look at every slot next time
            hit = known.get(name, _NO_CLAIM)
            fields = _CLAIM_FIELDS(s)
            if hit[0] != fields:
                hit = known[name] = (fields, self._claim(s))
            claim_at[k] = hit[1]
        if self._dirty is not None:
            self._dirty = []
        return True

    def eup(self, name: str) -> float:
        """EUP without storing a default factor for a principal not yet seen."""
        c = self.acct.get(name)
        factor = resolve_prio_factor(c.factor if c is not None else 0.0, name, self.acct.factors)
        return effective_priority(self.acct.rup(name), factor)


def _step(run: _Run, sim: Simulation, k: int, t: float, settings: Settings, acct: Accountant) -> None:
    """Cycle ``k`` at ``t``: completions and arrivals, the cycle, the claims, the rows."""
    run.before_cycle(t)
    cur = run.pool(first=k == 0)
    # The series reads the matches only: the rejections go unexplained (cycle.explain).
    result = run_cycle(cur, settings, acct, t, carry=run.carry, claims_changed=run.claims_changed, explain=False)
    preempted = run.after_cycle(cur, result, t)
    sim.record(k, t, run, result, preempted)
    run.warnings.extend(w for w in result.warnings if w not in run.warnings)


def run_simulation(
    pool: Pool,
    settings: Settings,
    acct: Accountant,
    *,
    start: float,
    duration: float,
    interval: float,
    job_duration: float,
    seed: Optional[int] = None,
    progress: Optional[Progress] = None,
) -> Simulation:
    """Run the cycles (see the module docstring) against ``acct`` and return the series.

    ``seed`` seeds ``random()`` in ``SimJobDuration`` and, for the run, in every other
    expression the cycles evaluate (``Rank``, ``Requirements``, policy knobs)."""
    if interval <= 0:
        raise ValueError("the interval must be positive")
    if duration < 0:
        raise ValueError("the duration must not be negative")
    # The cyclic collector rests during a cycle: its collections would walk every ad of the
    # pool and the cycle's new ads again and again.  Between cycles it walks the young
    # objects now and then (see _generation).
    with collector_paused(), seeded_random(seed):
        durations = DurationSource(job_duration, seed)
        run = _Run(pool, settings, acct, start, durations)  # may evaluate expressions that draw
        cycles = int(duration // interval) + 1
        sim = Simulation(
            start=start,
            interval=interval,
            duration=duration,
            seed=seed,
            job_duration=job_duration,
            pool_weight=run.pool_weight,
        )
        with heap_settled():
            for k in range(cycles):
                _step(run, sim, k, start + k * interval, settings, acct)
                generation = _generation(k)
                if generation is not None:
                    gc.collect(generation)
                    # What survived is set aside until the run ends, as the pool is: each
                    # object is walked once, not again by every later full collection of
                    # an ever larger heap (docs/simulate.md).
                    gc.freeze()
                if progress is not None:
                    progress(k + 1, cycles)
        for span in run.open.values():
            run.spans.append(span)
        sim.finish(run.jobs, run.spans, run.warnings + durations.warnings)
        if run.carry is not None:
            run.carry.close()  # what it holds is freed now, not by a later full collection
    return sim


__all__ = ["released", "run_simulation"]
