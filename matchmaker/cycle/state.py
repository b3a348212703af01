"""The state of one negotiation cycle: the trimmed, annotated pool and each submitter's queue.

:class:`Cycle` is built once per cycle (pool sizes over all slot ads, usage from the
claimed slots, the annotated slot list, autoclusters and request queues, EUPs frozen
for the cycle) and shared by the pie (:mod:`matchmaker.cycle.pie`) and the group
passes (:mod:`matchmaker.cycle.group_passes`); :meth:`Cycle.result` turns it into a
:class:`~matchmaker.cycle.results.CycleResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import compress, repeat
from operator import attrgetter, is_, is_not, itemgetter, not_
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from classad import ast
from classad.ad import ClassAd
from classad.evaluate import evaluate_top
from classad.layout import SharedAttrs
from classad.values import UNDEFINED, truthiness

from ..config.settings import Settings
from ..pool.ads import (
    IDLE,
    AdMemo,
    Pool,
    Slot,
    error_rank_slots,
    error_rank_warning,
    no_memo,
    pool_size,
    rank_error,
    slot_weight,
    usage_by_customer,
)
from ..pool.autocluster import Autoclusters, Queue, build_queues, decisive_names, significant_attributes
from ..pool.concurrency import ConcurrencyLimits, claim_limits, claimed_limits, counted_limits, limits_reason
from ..pool.partition import (
    available,
    consumption,
    consumption_policy,
    is_dynamic,
    jobs_that_fit,
    parent_name,
)
from .candidates import NO_PREEMPTION, REASONS, Budget, CandidateList
from .carry import Carried, steady_ad
from .cp_lists import ConsumptionLists
from .ephemeral import (
    ROOT_GROUP,
    GroupContext,
    GroupView,
    LiveUsage,
    MatchState,
    NegotiationAd,
    Priorities,
    RemoteEntries,
    annotate_slot,
    remote_entries,
)
from .evaluator import EachAlone, Evaluator, SlotClass, SlotEntry, SlotRows, each_alone, group_slots
from .explain import GROUP_MAP, preemption
from .matching import Matcher
from .results import CycleResult, GroupSummary, Match, Rejection, SubmitterSummary
from .slot_carry import CODES, IDLE_READS, MADE, TRIM_READS, SlotPrep


@dataclass(eq=False)
class SubmitterState:
    """A submitter during the cycle."""

    name: str
    eup: float
    floor: float
    ceiling: float
    queue: Queue
    idle: int
    running: int
    share: float = 0.0
    limit: float = 0.0
    starvation: float = 0.0
    matched: int = 0
    spin_limits: list[float] = field(default_factory=list)  # the limit each session was given


class Cycle:
    """State shared by the phases of one negotiation cycle."""

    def __init__(
        self,
        pool: Pool,
        settings: Settings,
        priorities: Priorities,
        now: float,
        *,
        usage: Optional[Mapping[str, float]] = None,
        group_of: Optional[Callable[[str], str]] = None,
        groups: Optional[GroupView] = None,
        progress: Optional[Callable[[str], None]] = None,
        carry: Optional[Carried] = None,
        explain: bool = True,
    ) -> None:
        self.settings, self.priorities, self.now, self.groups = settings, priorities, now, groups
        # Whether a rejection gets its mechanism and sentence (cycle.explain); a simulation,
        # whose series never shows them, leaves them out.
        self.explains = explain
        self.carry = carry  # what the previous cycle of a simulation left (cycle.carry)
        self.progress = progress  # told what the cycle is doing (a short text), if set
        pol = settings.policy
        pairs = self._read_slots(pool)
        slots = list(map(_FIRST, pairs))
        memo: AdMemo = carry.slots.values if carry is not None else no_memo
        if carry is not None and settings.poolsize_constraint is None:  # each slot's part kept by place
            size = carry.slots.pool_size(slots, settings.use_slot_weights, memo)
        else:
            size = pool_size(
                slots, use_slot_weights=settings.use_slot_weights, constraint=settings.poolsize_constraint, memo=memo
            )
        self.pool_weight, self.min_weight, self.effective_pool = size.weighted, size.min_weight, size.effective
        self.usage = LiveUsage(usage_by_customer(slots) if usage is None else usage, group_of)
        self.limits = self._claimed_limits(pairs, slots, memo)
        self.state = MatchState(self.usage, now)
        self.evaluator = Evaluator(self.state, pol)
        self.matcher = Matcher(self.evaluator, self.limits, priorities.eup)
        self.matcher.table_line = carry.slot_table if carry is not None else None
        self._remote_memo: dict = {}  # each remote user's slot attributes (ephemeral.annotate_slot)
        self._ended: Optional[list[SlotEntry]] = None  # in a simulation: the entries it ends (commit)
        rows: Optional[SlotRows] = None  # what the slot table reads of each entry, if gathered
        free: Optional[list[int]]  # the places of the entries of no remote user, if known
        if carry is None or settings.cross_slot_prios:
            entries = [self._entry(s, p) for s, p in pairs if self._keep(s, p)]
            unclaimed, free = [e for e in entries if e.remote is None], None
        else:
            entries, rows, unclaimed, free = self._carried_entries(pairs)
        if carry is not None:
            carry.slots.settle()  # the copies' rewrites left waiting (SlotCarry.annotated)
        self.queues = self._queues(pool, pairs)
        self.matcher.cp_entries = self._consumption_policies(unclaimed, free)  # only those have one
        self._parent = self._dslot_parents(entries)
        self.classes, self._rows = self._classes(pool, entries, rows)
        self.matcher.cp_cost = self._consumption_cost
        if self.matcher.cp_entries:
            weight = self._weight if settings.use_slot_weights else None
            self.matcher.cp_lists = ConsumptionLists(self.matcher.cp_entries, weight, self._weight_steady)
        self.matcher.weight_of = self._weight
        if self._pslot_preemption:
            self._set_partitionable(entries)
        self.cp_matches = 0  # matches made on consumption-policy slots so far
        self.entries = entries
        self.explain_groups: Any = None  # built by cycle.explain on the first rejection
        self.pass_cap: tuple[Optional[str], float, Optional[Mapping[str, float]]] = (None, float("inf"), None)
        self._available = len(entries)
        self.submitters = self._submitters(pool)
        self.matches: list[Match] = []
        self._rejected: dict[str, tuple[str, str, str]] = {}
        self.history: list[Rejection] = []  # every rejection in order, later matched or not
        self._matched_jobs: set[str] = set()
        self.pie_left = 0.0
        self.spins = 0
        self.refused = list(pool.refused)
        bad_rank = self._error_rank_slots(pairs, slots, memo)
        self.warnings = list(pool.warnings) + [error_rank_warning(s) for s in bad_rank]
        self.evaluator.quiet = {s.index for s in bad_rank}  # reported once, here

    def _classes(
        self, pool: Pool, entries: list[SlotEntry], rows: Optional[SlotRows]
    ) -> tuple[Sequence[SlotClass], Optional[SlotRows]]:
        """The slot classes of the entries matched as they are (no consumption policy, not
        a dynamic slot preempted through its parent), and what the columnar slot table
        reads of those entries, if gathered (``rows``: of every entry)."""
        parents, pol = self._parent, self.settings.policy
        if not parents and not self.matcher.cp_entries:  # every entry matched as it is
            kept: Optional[list[bool]] = None
            plain = entries
        else:
            kept = (
                [e.cp is None and e.slot.name not in parents for e in entries]
                if parents
                else [e.cp is None for e in entries]
            )
            plain = list(compress(entries, kept))
        # The slot classes serve the scalar matcher; the columnar one evaluates every slot anyway.
        names = (
            decisive_names([e.ad for e in plain], [j.ad for j in pool.jobs if j.status == IDLE])
            if plain and not pol.columnar
            else None
        )
        if names is not None or not pol.columnar:
            return group_slots(plain, names), None
        if rows is not None and kept is not None and len(plain) != len(entries):
            rows = rows.only(kept)
        return each_alone(plain, rows), rows

    def _claimed_limits(self, pairs: list, slots: list[Slot], memo: AdMemo) -> ConcurrencyLimits:
        """The concurrency limits the claimed slots hold: from each charged slot ad's kept
        prep in a simulation, else read from the slots."""
        carry, capacity = self.carry, self.settings.concurrency_capacity
        if carry is None:
            return claimed_limits(slots, capacity, memo)
        _, held = carry.slots.placed_sparse(pairs, "claim_limits", _claim_limits_each)  # the few claims holding any
        return counted_limits(held, capacity)

    def _error_rank_slots(self, pairs: list, slots: list[Slot], memo: AdMemo) -> list[Slot]:
        """The slots whose Rank is an error: from each slot ad's kept prep in a simulation,
        else evaluated on the slots."""
        carry = self.carry
        if carry is None:
            return error_rank_slots(slots, memo)
        errors, _ = carry.slots.placed_sparse(_Preps(pairs), "rank_error", _rank_errors_kept)
        return list(map(slots.__getitem__, errors))  # no step over the others

    def _set_partitionable(self, entries: Sequence[SlotEntry]) -> None:
        """Tell the matcher the partitionable slots and each one's dynamic children in the
        cycle (for pslot preemption)."""
        pslots = [e for e in entries if e.slot.partitionable and e.cp is None]
        children: dict[int, list[SlotEntry]] = {}
        for e in entries:
            parent = self._parent.get(e.slot.name)
            if parent is not None:
                children.setdefault(parent.index, []).append(e)
        self.matcher.set_partitionable(pslots, children)

    def _dslot_parents(self, entries: Sequence[SlotEntry]) -> dict[str, SlotEntry]:
        """With ``ALLOW_PSLOT_PREEMPTION`` (and preemption considered) a claimed dynamic slot
        whose partitionable slot is in the cycle is preempted only through its parent, never
        matched on its own: each such dynamic slot's name -> its parent's entry."""
        if not self._pslot_preemption:
            return {}
        names = {x.slot.name: x for x in entries if x.slot.partitionable and x.cp is None}
        out = {}
        for x in entries:
            parent = names.get(parent_name(x.slot.name) or "")
            if parent is not None and x.remote is not None and is_dynamic(x.slot.ad):
                out[x.slot.name] = parent
        return out

    @property
    def _pslot_preemption(self) -> bool:
        return self.settings.allow_pslot_preemption and self.settings.policy.consider_preemption

    def _read_slots(self, pool: Pool) -> list[tuple[Slot, Optional[SlotPrep]]]:
        """The slots of the cycle (``NEGOTIATOR_SLOT_CONSTRAINT``), each weighed under this
        cycle's settings, whatever the pool was loaded with; in a simulation with what the
        last cycles read of its ad (:mod:`matchmaker.cycle.slot_carry`)."""
        constraint, carry = self.settings.slot_constraint, self.carry
        if carry is None:
            return [(self._weighed(s, None), None) for s in pool.slots if self._accepts(constraint, s.ad)]
        carry.slots.begin(self.settings)
        pairs: list[tuple[Slot, Optional[SlotPrep]]] = []
        if constraint is None:  # no evaluation between two slots' weights: last cycle's pairs taken again
            pairs = list(carry.slots.pairs(list(pool.slots), self._weighed))  # type: ignore[arg-type]
        else:
            prep = carry.slots.prep
            for s in pool.slots:
                if self._accepts(constraint, s.ad):
                    p = prep(s.ad)
                    pairs.append((s if p.weighed is s.weight else self._weighed(s, p), p))
        carry.cycle_done()
        return pairs

    def _weighed(self, s: Slot, p: Optional[SlotPrep]) -> Slot:
        """The slot with its weight under this cycle's settings (the record itself when equal)."""
        if p is None:
            w = self._weight(s.ad)
        elif p.weighed is s.weight:
            return s  # this very weight was found equal to the ad's before
        elif p.weighed is MADE:  # its record weighs what this evaluation gives (SlotCarry.derive)
            p.weighed = s.weight
            return s
        else:
            w = p.evaluated("weight", self._weight)
        same = type(w) is type(s.weight) and w == s.weight and str(w) == str(s.weight)
        if same and p is not None and p.steady:
            p.weighed = s.weight
        return s if same else replace(s, weight=w)

    def _accepts(self, constraint: Optional[ast.Node], ad: ClassAd) -> bool:
        if constraint is None:
            return True
        return truthiness(evaluate_top(constraint, ad, MatchState(None, self.now))) is True

    def _keep(self, s: Slot, p: Optional[SlotPrep]) -> bool:
        """The trim of docs/negotiation.md (reading the pool); in a simulation kept per slot
        ad when it read only literals (it depends on the record's state too)."""
        if p is None:
            return self._trim(s, None)
        known = p.keep
        if known is not None and known[0] == s.state and known[1] == s.partitionable:
            return known[2]  # type: ignore[no-any-return]
        keep = self._trim(s, p)
        if p.literal(_TRIM_READS):
            p.keep = (s.state, s.partitionable, keep)
        return keep

    def _trim(self, s: Slot, p: Optional[SlotPrep]) -> bool:
        cp = self.settings.policy.consider_preemption
        ad = s.ad
        if cp and not self.settings.consider_early_preemption:
            v = self._value(ad, "retirementtimeremaining", p)
            if type(v) in (int, float) and v > 0:
                return False
        if not cp and s.state in ("claimed", "preempting") and not s.partitionable:
            return False
        if s.partitionable and s.state == "claimed" and self._value(ad, "wantmatching", p) is False:
            return False
        return True

    def _value(self, ad: ClassAd, lname: str, p: Optional[SlotPrep] = None) -> Any:
        """Attribute ``lname`` (lower-case) of a slot ad alone, evaluated at the cycle's time
        (a plain literal is its value, with nothing to evaluate); ``p``: the ad's prep."""
        v = ad.plain(lname) if p is None else p.stored(lname)
        if v is None:
            return UNDEFINED
        if type(v) in _PLAIN:
            return v
        return ad.evaluate(lname, state=MatchState(None, self.now))

    def _entry(self, s: Slot, p: Optional[SlotPrep]) -> SlotEntry:
        st, pr = self.settings, self.priorities
        cp = st.policy.consider_preemption
        if p is None or st.cross_slot_prios:
            ad = self._annotated(s)
        else:
            remote = (
                remote_entries("", s.remote, pr.eup, pr.floor, self.groups, self._remote_memo)
                if cp and s.remote
                else ()
            )
            ad = self.carry.slots.annotated(s, p, remote, self._annotated)  # type: ignore[union-attr]
        return SlotEntry(s, ad, s.remote if cp else None, claimed_idle=self._claimed_idle(s, p))

    def _claimed_idle(self, s: Slot, p: Optional[SlotPrep]) -> bool:
        """Whether the slot is claimed and idle (its ``Activity``); kept as :meth:`_keep` is."""
        if p is not None and p.idle is not None and p.idle[0] == s.state:
            return p.idle[1]
        activity = self._value(s.ad, "activity", p)
        idle = s.state == "claimed" and type(activity) is str and activity.lower() == "idle"
        if p is not None and p.literal(_IDLE_READS):
            p.idle = (s.state, idle)
        return idle

    def _carried_entries(
        self, pairs: list[tuple[Slot, Optional[SlotPrep]]]
    ) -> tuple[list[SlotEntry], SlotRows, list[SlotEntry], list[int]]:
        """``[self._entry(s, p) for s, p in pairs if self._keep(s, p)]`` in a simulation,
        what the slot table reads of each entry (:class:`SlotRows`), gathered at the same
        time, and the entries of no remote user among them (in order) with their places.  A pair taken again from last cycle (the very record, see
        :meth:`SlotCarry.pairs <matchmaker.cycle.slot_carry.SlotCarry.pairs>`) whose trim and
        claimed-idle test read only literals gives last cycle's row again, found by its
        place: the same trim, user and test, nothing read or evaluated; only its copy is
        found again (:meth:`SlotCarry.annotated`), and last cycle's entry serves again when
        that copy is the same and the cycle left the entry as it was made (alive, no memo
        keys).  The rows taken again are found again by their users' codes kept by place
        (:meth:`_taken_again`), each user's at once without a step per row (their copies
        share the user's table of entries); the other pairs are read as :meth:`_entry_row`
        reads them, in order, and coded for the next cycle (:meth:`_code`)."""
        pr, groups, memo = self.priorities, self.groups, self._remote_memo
        slots = self.carry.slots  # type: ignore[union-attr]
        users = _UserEntries(lambda user: remote_entries("", user, pr.eup, pr.floor, groups, memo))
        self._ended = []
        # Per pair, for the next cycle: its row, False if trimmed, None to be read again;
        # its entry (None if trimmed); and this cycle's row of it (False if trimmed).
        kept = slots.again(pairs, _ENTRY_ROWS)
        made = slots.again(pairs, _ENTRIES)
        codes = slots.again_codes(CODES) if slots.distinct else None
        if codes is None:
            visit = list(compress(range(len(pairs)), map(is_not, kept, repeat(False))))
        else:
            visit = self._taken_again(pairs, kept, made, codes, users)
        # What this cycle ends of its entries, for the next (see commit and close).
        slots.ended, slots.keyed = self._ended, True
        read: dict[int, tuple] = {}  # the rows read one by one, by place
        for i in visit:
            s, p = pairs[i]
            row, e = kept[i], made[i]
            if row is None:
                row, literal = self._entry_row(s, p, users)  # type: ignore[arg-type]
                kept[i] = row if literal else None
                if not row:
                    made[i] = None
                    continue
                e = SlotEntry(s, row[1], row[2], row[3])
            elif not row:
                continue
            else:
                user = row[2]
                ad = slots.annotated(s, p, users[user] if user else (), self._annotated)  # type: ignore[arg-type]
                if ad is not row[1]:
                    row = kept[i] = (row[0], ad, *row[2:])
                    e = None
                # Last cycle's entry of the same row, unless the cycle changed it: a match
                # (or a preemption) ended it, or the scalar matcher wrote its memo keys.  A
                # copy under a consumption policy is never kept (a new copy, a new entry),
                # and the cycle's close() cleared the classes.
                if e is None or not e.alive or e.keys:
                    e = SlotEntry(s, row[1], row[2], row[3])
            made[i], read[i] = e, row
        slots.settle()  # the rewrites of the copies read one by one, before they are coded
        return self._kept_rows(pairs, kept, made, codes, visit, read, users)

    def _kept_rows(
        self,
        pairs: list,
        kept: list,
        made: list,
        codes: Optional[np.ndarray],
        visit: list[int],
        read: dict[int, tuple],
        users: "_UserEntries",
    ) -> tuple[list[SlotEntry], SlotRows, list[SlotEntry], list[int]]:
        """What :meth:`_carried_entries` keeps by place for the next cycle (each row read one
        by one coded by :meth:`_code`), and the cycle's entries and rows, in order, and the
        entries of no remote user: those of the rows coded 0 (taken again or read, see
        :meth:`_code`) and those read of no user that are coded otherwise, found by place
        without a step over the others."""
        slots = self.carry.slots  # type: ignore[union-attr]
        if codes is None:
            codes = np.full(len(pairs), -1, np.int64)
            codes[np.fromiter(map(is_, kept, repeat(False)), bool, len(kept))] = -2
        copy_ids = slots.again_codes(_COPY_IDS, 0)
        if copy_ids is None:
            copy_ids = np.zeros(len(pairs), np.uint64)
        live = codes >= 0  # the rows taken again by their codes, and those read below
        live[list(read)] = True
        # The entries' ids by place: those not read are last cycle's at their places.
        entry_ids = slots.again_codes(_ENTRY_IDS, 0)
        if entry_ids is None:
            entry_ids = np.fromiter(map(id, made), np.uint64, len(made))
        for i in visit:  # the code each row read again is found by in the next cycle, if any
            codes[i] = self._code(pairs[i][1], kept[i], users)  # type: ignore[arg-type]
            if kept[i]:
                copy_ids[i] = id(kept[i][1])
            entry_ids[i] = id(made[i])
        free = codes == 0  # rows of no remote user (see _code), and those read so coded otherwise
        for i, row in read.items():
            if row[2] is None:
                free[i] = True
        slots.put(_ENTRY_ROWS, kept)
        slots.put(_ENTRIES, made)
        slots.put(CODES, codes)
        slots.put(_COPY_IDS, copy_ids)
        slots.put(_ENTRY_IDS, entry_ids)  # ids, not the entries
        # The rows in order: those read again but not kept for the next cycle put in place
        # for a moment (a list of every row would visit each).
        unkept = [i for i, row in read.items() if kept[i] is not row]
        for i in unkept:
            kept[i] = read[i]
        chosen = live.tolist()
        rows = list(compress(kept, chosen))
        for i in unkept:
            kept[i] = None
        free_places = np.flatnonzero(free).tolist()
        unclaimed = list(map(made.__getitem__, free_places))
        return list(compress(made, chosen)), SlotRows(rows), unclaimed, free_places

    def _taken_again(self, pairs: list, kept: list, made: list, codes: np.ndarray, users: "_UserEntries") -> list[int]:
        """The rows taken again from last cycle by their users' codes (``codes``: by place,
        see :meth:`SlotCarry.again_codes`), each user's at once: the same row and entry,
        whose copy shares its user's table of entries with the others (rewritten once,
        :meth:`SlotCarry.rewrite_shared`).  Gives the places to read one by one
        (:meth:`_carried_entries`), in order: the others but those trimmed, and those whose
        entry last cycle ended (a match, a preemption, a consumption policy) or read
        through the scalar matcher (memo keys).  The rows taken so are not visited: what
        a code stands for holds until the row is read again (see :meth:`_code`)."""
        slots = self.carry.slots  # type: ignore[union-attr]
        coded = np.flatnonzero(codes >= 0)
        ids = slots.again_codes(_ENTRY_IDS, 0)  # the entries' ids, kept by place: none visited
        last_codes, last_copies = slots.last(CODES), slots.last(_COPY_IDS)
        if ids is None or last_codes is None or last_copies is None:
            codes[coded] = -1
            coded = coded[:0]
        elif slots.ended or slots.keyed:
            ended = np.isin(ids[coded], np.fromiter(map(id, slots.ended), np.uint64, len(slots.ended)))
            if slots.keyed:
                entries = list(map(made.__getitem__, coded.tolist()))
                ended |= np.fromiter(map(bool, map(_KEYS, entries)), bool, len(entries))
            codes[coded[ended]] = -1
            coded = coded[~ended]
        alone = codes == -1
        users_now = np.unique(codes[coded])
        if len(users_now) and users_now[-1] > 0:
            order = np.argsort(last_codes, kind="stable")  # last cycle's copies of each code
            ranked = last_codes[order]
            starts = np.searchsorted(ranked, users_now, "left")
            ends = np.searchsorted(ranked, users_now, "right")
            for code, a, b in zip(users_now.tolist(), starts.tolist(), ends.tolist()):
                if not code:
                    continue  # no user: the copy as it was (a copy consumed from ended its entry)
                user = slots.code_users[code]
                if not slots.rewrite_shared(code, users[user], last_copies[order[a:b]]):  # type: ignore[index]
                    alone[codes == code] = True
        return np.flatnonzero(alone).tolist()  # type: ignore[no-any-return]

    def _code(self, p: SlotPrep, row: Any, users: "_UserEntries") -> int:
        """The code of a row read one by one in this cycle (after the copies' rewrites), for
        the next cycle (:meth:`_taken_again`): -2 trimmed, -1 read again one by one, 0 taken
        again as it is (no user), else its user's code, its copy sharing the user's table of
        entries (:meth:`SlotCarry.share`) as it does from now on."""
        if row is None:
            return -1
        if not row:
            return -2
        copy, user = row[1], row[2]
        if p.copy is not copy:
            return -1
        if user is None:
            return -1 if p.entries else 0
        return self.carry.slots.share(user, copy, users[user])  # type: ignore[union-attr, arg-type]

    def _entry_row(self, s: Slot, p: SlotPrep, users: _UserEntries) -> tuple[Any, bool]:
        """What :meth:`_carried_entries` gathers of one slot: False when the trim drops it,
        else its row (:class:`SlotRows`), with what :meth:`_keep`, :meth:`_entry` and
        :meth:`_claimed_idle` keep of its ad read in place (the same steps in the same
        order); and whether the trim and the claimed-idle test read only literals (then
        the next cycle may take the row again for the same record)."""
        known = p.keep
        if known is None or known[0] != s.state or known[1] != s.partitionable:
            self._decide(s, p)
            known = p.keep
        if known is None or known[0] != s.state or known[1] != s.partitionable:
            keep = self._keep(s, p)
            known = p.keep
            literal = known is not None and known[0] == s.state and known[1] == s.partitionable
            if not keep:
                return False, literal
        elif not known[2]:
            return False, True
        else:
            literal = True
        user = s.remote if self.settings.policy.consider_preemption else None
        ad = self.carry.slots.annotated(s, p, users[user] if user else (), self._annotated)  # type: ignore[union-attr]
        idle = p.idle
        if idle is None or idle[0] != s.state:
            claimed_idle = self._claimed_idle(s, p)
            idle = p.idle
            literal = literal and idle is not None and idle[0] == s.state
        else:
            claimed_idle = idle[1]
        return (s.index, ad, user, claimed_idle, s.weight, s.ad, s.name), literal

    def _decide(self, s: Slot, p: SlotPrep) -> None:
        """What :meth:`_keep` and (for a slot it keeps) :meth:`_claimed_idle` decide of the
        record, kept with the prep as they keep it, when its ad is compacted and stores each
        name they read as a plain literal or not at all: then the decisions are those of
        the record's state and partitionability and those literals alone (and of the
        settings: the carry forgets them with other settings), found again for the ads of
        one variant that store the same values (a claim's rewrites mostly share variants).
        Otherwise nothing is decided here."""
        attrs = p.ad._attrs
        if type(attrs) is not SharedAttrs:
            return
        values = attrs.plains(_DECIDE_READS)
        if not _LITERAL_OR_NONE.issuperset(map(type, values)):
            return
        variant = _item(attrs, 0)
        memo = self.carry.slots.decided  # type: ignore[union-attr]
        kept = memo.get(id(variant))
        if kept is None or kept[0] is not variant.source:
            if len(memo) > _DECIDED_LIMIT:
                memo.clear()
            kept = memo[id(variant)] = (variant.source, {})
        key = (s.state, s.partitionable, *values, *map(type, values))
        known = kept[1].get(key)
        if known is None:
            keep = self._keep(s, p)  # literals only: kept with the prep, nothing evaluated
            kept[1][key] = (keep, self._claimed_idle(s, p) if keep else None)
            return
        p.keep = (s.state, s.partitionable, known[0])
        if known[0]:
            p.idle = (s.state, known[1])

    def _annotated(self, s: Slot) -> NegotiationAd:
        """The slot's annotated copy for this cycle (:func:`~matchmaker.cycle.ephemeral.annotate_slot`)."""
        st, pr = self.settings, self.priorities
        return annotate_slot(
            s,
            now=self.now,
            eup_of=pr.eup,
            floor_of=pr.floor,
            consider_preemption=st.policy.consider_preemption,
            cross_slot_prios=st.cross_slot_prios,
            resource_prefix=st.resource_prefix,
            slot_weight_expr=st.slot_weight_expr,
            force_slot_weight=st.force_slot_weight,
            groups=self.groups,
            memo=self._remote_memo,
        )

    def _consumption_policies(self, entries: list[SlotEntry], places: Optional[list[int]]) -> list[SlotEntry]:
        """Give each entry its consumption policy's resources (``cp``, see
        :func:`consumption_policy`) and the entries that have one, in order; in a
        simulation kept per slot ad, and the copy of an entry that has one, which the
        matches write into, is not kept for the next cycle.  ``places``: the entries'
        places among the cycle's pairs, if known; then the policy of a pair taken again
        whose entry was asked last cycle too is found by place (:meth:`SlotCarry.placed_among`):
        none (an entry of last cycle that had one is never made again), or a new entry given it."""
        found = None
        if places is not None and self.carry is not None:
            found = self.carry.slots.placed_among(places, entries, "consumption_policy", self._policies)
        if found is None:
            found = [(i, cp) for i, cp in enumerate(self._policies(entries)) if cp is not None]
            for e in entries:
                e.cp = None
        out = []
        slots = self.carry.slots if self.carry is not None else None
        for i, cp in found:
            e = entries[i]
            e.cp = cp
            out.append(e)
            if slots is not None:
                slots.consumed(e.ad, e.slot.ad)
                if self._ended is not None:
                    self._ended.append(e)  # its copy is not kept: nor is its entry
        return out

    def _policies(self, entries: list[SlotEntry]) -> list[Optional[tuple[str, ...]]]:
        """The resources of each entry's consumption policy, in order (see :meth:`_consumption_policies`)."""
        if self.carry is None:
            return [consumption_policy(e.ad) for e in entries]
        copies = {id(e.slot.ad): e.ad for e in entries}
        if len(copies) != len(entries):  # a slot ad listed twice: each entry reads its own copy
            return [self._policies([e])[0] for e in entries]
        return self.carry.slots.values(
            [e.slot.ad for e in entries], "consumption_policy", lambda ad: consumption_policy(copies[id(ad)])
        )

    def _queues(self, pool: Pool, pairs: Sequence[tuple[Slot, Optional[SlotPrep]]]) -> dict[str, Queue]:
        st, pol = self.settings, self.settings.policy
        read = None
        carry = self.carry
        if carry is not None:  # what each slot ad reads is kept with the rest of what the cycles read of it
            refs = carry.slot_refs

            def read(exprs: Sequence[ast.Node]) -> list[frozenset[str]]:
                def references(chosen: list[tuple[Slot, SlotPrep]]) -> list[frozenset[str]]:
                    preps = list(map(_SECOND, chosen))
                    out = list(map(_REFS, preps))
                    missing = list(compress(range(len(out)), map(is_, out, repeat(None))))
                    if missing:  # (kept with the prep, as SlotPrep.references keeps it)
                        for i, found in zip(missing, refs.each([preps[i].ad for i in missing], exprs)):
                            out[i] = preps[i].refs = found
                    return out

                return carry.slots.placed_distinct(pairs, "refs", references)  # each result once

        sig = significant_attributes(
            (s.ad for s, _ in pairs),
            (pol.preemption_requirements, pol.preemption_rank, pol.pre_job_rank, pol.post_job_rank, st.job_constraint),
            add=st.add_significant,
            remove=st.remove_significant,
            remove_regex=st.remove_significant_regex,
            read=read,
        )
        # In a simulation what each job record gave is kept (unless every job is its own autocluster).
        kept = carry.queue_keys if carry is not None and not st.negotiate_all_jobs_in_cluster else None
        acs = (Autoclusters if kept is None else kept.autoclusters)(
            sig,
            fixed=st.significant_attributes,
            remove=st.remove_significant,
            every_job_alone=st.negotiate_all_jobs_in_cluster,
        )
        return build_queues(pool.jobs, acs, by_qdate=st.job_order_by_qdate, job_constraint=st.job_constraint, kept=kept)

    def _submitters(self, pool: Pool) -> list[SubmitterState]:
        out = []
        pr = self.priorities
        # (in a simulation kept from cycle to cycle, as the changes to the queue are told)
        counts = pool.submitter_counts() if self.carry is None else self.carry.job_weights.counts(pool.jobs)
        for name, (_idle, running) in sorted(counts.items()):
            queue = self.queues.get(name) or Queue(name)
            idle = queue.idle
            if idle + running <= 0:
                continue
            if self.settings.submitter_constraint is not None:
                ad = ClassAd({"Name": name, "IdleJobs": idle, "RunningJobs": running})
                if not self._accepts(self.settings.submitter_constraint, ad):
                    continue
            out.append(SubmitterState(name, pr.eup(name), pr.floor(name), pr.ceiling(name), queue, idle, running))
        return out

    # ---- what the phases call --------------------------------------------------------------

    def slots_left(self) -> bool:
        """Whether any slot is still available."""
        return self._available > 0

    def commit(
        self,
        s: SubmitterState,
        run: Any,
        cand: Any,
        req: NegotiationAd,
        budget: Budget,
        context: Optional[GroupContext] = None,
    ) -> None:
        """Record a match: the slot leaves the cycle, usage and limits are charged at once."""
        e = cand.entry
        slot, cost = e.slot, e.slot.weight
        if self._rows is not None:
            self._rows.fresh = False  # the entries change from here on
        job = run.current()
        run.next += 1
        s.idle -= 1
        s.matched += 1
        if e.cp is not None:
            cost = self._consume(e, req)
        else:
            e.alive = False
            if self._ended is not None:
                self._ended.append(e)
            if e.cls is not None:  # None: each slot its own class, none made (EachAlone)
                e.cls.dead += 1
            self._available -= 1
        preempted = e.remote if cand.state != NO_PREEMPTION else None
        if preempted is not None and slot.charged:
            self.usage.remove(slot.customer, cost)  # AddMatch ends the previous claim
        victims = cand.preempts
        if victims:
            cost = cand.cost
            preempted = victims[0].remote
            if self._ended is not None:
                self._ended += victims
            for d in victims:
                d.alive = False
                if d.slot.charged:
                    self.usage.remove(d.slot.customer, d.slot.weight)
        self.usage.add(s.name, cost)
        self.limits.charge(self.matcher.matched_limits(req, e))
        budget.used += cost
        if e.remote is None and not victims:
            budget.used_unclaimed += cost
        self.pie_left -= cost
        self._matched_jobs.add(job.id)
        self._rejected.pop(job.id, None)
        grouped = context is not None and context.quotas is not None
        why = (
            preemption(victims[0] if victims else e, req, s.eup, self.priorities.eup, self.usage, self.now)
            if preempted is not None
            else None
        )
        self.matches.append(
            Match(
                job.id,
                s.name,
                slot.name,
                REASONS[cand.state],
                preempted,
                cost,
                self.usage.group_of(s.name) if grouped else None,
                context.negotiating_group if context else ROOT_GROUP,
                bool(context and context.autoregroup),
                why,
                tuple(d.slot.name for d in victims),
            )
        )
        if self.settings.depth_first and slot.partitionable and e.cp is None and hasattr(run, "jobs"):
            self._pack(s, run, e, req)
        if self.progress is not None and len(self.matches) % 100 == 0:
            self.report()

    def _weight(self, ad: ClassAd) -> float:
        st = self.settings
        return slot_weight(
            ad, use_slot_weights=st.use_slot_weights, slot_weight_expr=st.slot_weight_expr, force=st.force_slot_weight
        )

    def _consumption_cost(self, e: SlotEntry, req: NegotiationAd) -> Optional[float]:
        """What matching ``req`` on a consumption-policy slot costs: its weight now less its
        weight after the consumption (1 without slot weights); None when it does not fit."""
        used = consumption(e.ad, req, e.cp or ())
        if used is None:
            return None
        if not self.settings.use_slot_weights:
            return 1.0
        after = ClassAd(e.ad)
        left = available(e.ad, e.cp or ())
        after.update({res: left[res] - v for res, v in used.items()})
        return e.weight - self._weight(after)

    def _weight_steady(self, e: SlotEntry) -> bool:
        """Whether no expression of the entry's copy (nor ``SLOT_WEIGHT``) draws, so that its
        weight after a consumption is the same each time."""
        return steady_ad(e.ad, self.settings.slot_weight_expr)

    def _consume(self, e: SlotEntry, req: NegotiationAd) -> float:
        """Take ``req``'s consumption from the slot's resources in this cycle; the slot
        stays a candidate with its new weight.  Returns the match's cost."""
        cost = self._consumption_cost(e, req)
        used = consumption(e.ad, req, e.cp or ()) or {}
        left = available(e.ad, e.cp or ())
        for res, v in used.items():
            e.ad[res] = _whole(left[res] - v)
        e.keys = {}  # its memo keys hold the old values
        if self.matcher.cp_lists is not None:
            self.matcher.cp_lists.consumed(e)
        e.weight = self._weight(e.ad)
        self.cp_matches += 1
        return e.cost if cost is None else cost

    def _pack(self, s: SubmitterState, run: Any, e: Any, req: NegotiationAd) -> None:
        """``NEGOTIATOR_DEPTH_FIRST``: the schedd is told that the partitionable slot just
        matched takes as many more jobs of this request as fit it, so they are not offered
        again in this cycle (its leftover claims start them)."""
        more = min(jobs_that_fit(e.slot.ad, req) - 1, len(run.jobs) - run.next)
        if more > 0:
            run.next += more
            s.idle -= more

    def reject(self, job_id: str, reason: str, mechanism: str = "", explanation: str = "") -> None:
        """Record a rejected request (the last reason wins) and what decided it."""
        self._rejected.pop(job_id, None)
        self._rejected[job_id] = (reason, mechanism, explanation or reason)
        self.history.append(Rejection(job_id, *self._rejected[job_id]))

    def find(
        self, req: NegotiationAd, autocluster: int, s: SubmitterState, only_rank: bool, budget: Budget, cache: list
    ) -> tuple[Any, str, bool]:
        """The best candidate for ``req``, else ``(None, reason, limited)``: ``limited`` says
        whether the submitter limit turned any slot away.  ``cache`` holds the match list."""
        m, pol = self.matcher, self.settings.policy
        static = m.request_limits(req)
        if static:
            full = self.limits.exhausted(static)
            if full:
                return None, limits_reason(full), False
        cl: Optional[CandidateList] = cache[0]
        if (
            cl is not None
            and cl.autocluster == autocluster
            and cl.only_rank == only_rank
            and cl.version == self.cp_matches
        ):
            cand, rebuild = m.pop(cl, req, s.name, budget)
            if cand is not None:
                return cand, "", False
            if not rebuild:
                return None, cl.reason(), cl.limited
        cl = m.build(req, autocluster, s.name, self.classes, only_rank, budget, static is not None)
        cl.version = self.cp_matches
        cache[0] = cl if pol.matchlist_caching else None
        cand, _ = m.pop(cl, req, s.name, budget)
        return (cand, "", False) if cand is not None else (None, cl.reason(), cl.limited)

    def report(self) -> None:
        """Tell ``progress`` where the cycle is: the spin and the matches so far."""
        if self.progress is not None:
            self.progress(f"negotiating: spin {self.spins}, {len(self.matches):,} matches")

    def close(self) -> None:
        """Drop what the cycle holds once its result is made.  Its state refers to itself
        (slot entries and their classes, the matcher and the cycle's methods it calls), so
        without this only the cyclic collector could free it; with it, reference counting
        does, and a simulation's collector walks far fewer objects after each cycle."""
        if self._ended is not None and not self.evaluator.evaluations:
            self.carry.slots.keyed = False  # type: ignore[union-attr]  # no entry read by the scalar matcher
        if type(self.classes) is not EachAlone or self.classes.made:
            for e in self.entries:
                e.cls = None
            for c in self.classes:
                c.entries, c.claimed = [], []
        self.__dict__.clear()

    def result(self, order: Sequence[SubmitterState], groups: Sequence[GroupSummary] = ()) -> CycleResult:
        """The cycle's outcome; requests refused at submit time come first among the rejected."""
        subs = [SubmitterSummary(s.name, s.eup, s.limit, s.matched, tuple(s.spin_limits)) for s in order]
        rejected = [Rejection(j, r, GROUP_MAP, r) for j, r in self.refused] + [
            Rejection(j, *r) for j, r in self._rejected.items() if j not in self._matched_jobs
        ]
        warnings = self.warnings + list(self.evaluator.warnings.values())
        return CycleResult(
            self.matches, subs, rejected, warnings, dict(self.usage.user), self.spins, list(groups), list(self.history)
        )


_PLAIN = (bool, int, float, str)


def _claim_limits_kept(pair: tuple[Slot, SlotPrep]) -> tuple:
    """The limits the slot's claim holds (none when it is not charged), kept with its prep
    (:meth:`SlotPrep.evaluated`)."""
    s, p = pair
    return p.evaluated("claim_limits", claim_limits) if s.charged else ()


def _claim_limits_each(pairs: list[tuple[Slot, SlotPrep]]) -> list[tuple]:
    """``[_claim_limits_kept(pair) for pair in pairs]``."""
    return list(map(_claim_limits_kept, pairs))


def _rank_error_kept(p: SlotPrep) -> bool:
    """Whether the slot ad's Rank is an error, kept with its prep (:meth:`SlotPrep.evaluated`)."""
    return p.evaluated("rank_error", rank_error)  # type: ignore[no-any-return]


def _rank_errors_kept(preps: list[SlotPrep]) -> list[bool]:
    """``[_rank_error_kept(p) for p in preps]``: a slot ad storing its Rank as a plain literal,
    or none, has no error (:func:`rank_error` evaluates nothing then), found by reading the
    Rank alone; the others as kept, in order."""
    stored = [p.ad.plain("rank") for p in preps]
    out = [False] * len(preps)
    for i in compress(range(len(out)), map(not_, map(_NO_ERROR.__contains__, map(type, stored)))):
        out[i] = _rank_error_kept(preps[i])
    return out


_NO_ERROR = frozenset((type(None), *_PLAIN))  # what a Rank stored thus is (ClassAd.plain): no error
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_REFS = attrgetter("refs")
_KEYS = attrgetter("keys")
_ENTRY_ROWS = "entry_rows"  # what Cycle._carried_entries keeps by place (SlotCarry.put)
_ENTRIES = "entries"  # the entries it made, by place
_ENTRY_IDS = "entry_ids"  # their ids, by place
_COPY_IDS = "copy_ids"  # the ids of the rows' copies, by place


class _Preps(Sequence[SlotPrep]):
    """The preps of a cycle's pairs, each read only when asked for: what is kept by place
    (:meth:`SlotCarry.placed_each <matchmaker.cycle.slot_carry.SlotCarry.placed_each>`) reads
    those of the pairs made anew, and a list of them all would visit every pair."""

    __slots__ = ("_pairs",)

    def __init__(self, pairs: Sequence[tuple[Slot, Optional[SlotPrep]]]) -> None:
        self._pairs = pairs

    def __len__(self) -> int:
        return len(self._pairs)

    def __getitem__(self, i: Any) -> Any:
        if type(i) is slice:
            return list(map(_SECOND, self._pairs[i]))
        return self._pairs[i][1]


class _UserEntries(dict[str, RemoteEntries]):
    """Each remote user's entries for one cycle (:func:`remote_entries`), made by ``make``
    the first time the user is looked up."""

    def __init__(self, make: Callable[[str], RemoteEntries]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, user: str) -> RemoteEntries:
        entries = self[user] = self._make(user)
        return entries


# What the trim and the claimed-idle test read of a slot ad (lower-case).
_TRIM_READS, _IDLE_READS = TRIM_READS, IDLE_READS
_DECIDE_READS = _TRIM_READS + _IDLE_READS
_LITERAL_OR_NONE = frozenset((type(None), *_PLAIN))  # what ClassAd.plain gives for a literal or nothing
_DECIDED_LIMIT = 4096  # variants whose decisions are kept (Cycle._decide)
_item = tuple.__getitem__  # a compacted ad's storage read as the tuple it is


def _whole(v: float) -> float:
    """Whole numbers as integers (a slot's ``Cpus = 3``, not ``3.0``)."""
    return int(v) if type(v) is float and v.is_integer() and abs(v) < 2**53 else v


__all__ = ["Cycle", "SubmitterState"]
