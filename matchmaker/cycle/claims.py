"""What the schedd and the startds make of a cycle's matches (docs/negotiation.md, partitionable slots).

:func:`claim_matches` turns a :class:`~matchmaker.cycle.results.CycleResult` into the
pool the next cycle finds when every match was claimed and nothing finished:

* a match on a static or dynamic slot claims it: Claimed/Busy by the submitter,
  publishing ``RemoteUser``, ``CurrentRank``, the ``Remote*`` group attributes and the
  job's ``ConcurrencyLimits`` (which the next cycle counts as held), and, given the
  time, stamped with it: ``EnteredCurrentState``, ``EnteredCurrentActivity`` and
  ``JobStart`` (so a claim made by preemption starts its state timer again, as the slot
  went through Preempting).  Nothing of an earlier claim stays (:data:`CLAIM_ATTRS`):
  the startd publishes a claim's attributes afresh.  A job it preempts goes back to idle;
* a match on a partitionable slot makes the startd carve a dynamic slot sized by the
  job's rounded request (:mod:`matchmaker.pool.partition`) and claim that; the
  partitionable slot keeps the rest.  A job whose request does not fit what is left
  is refused by the startd and stays idle;
* a match that preempts dynamic slots of a partitionable slot (``ALLOW_PSLOT_PREEMPTION``)
  first ends them: their jobs go back to idle, their resources back to the
  partitionable slot, which is then split for the new job;
* with ``CLAIM_PARTITIONABLE_LEFTOVERS`` the schedd then starts more of the same
  submitter's idle jobs on what is left of each partitionable slot it was matched
  with, in its own queue order, each one that fits (resources and both
  ``Requirements``) taking its own dynamic slot, until none fits.  With
  ``CLAIM_RECYCLING_CONSIDER_LIMITS`` (the default) a job whose ``ConcurrencyLimits``
  names a limit is not started there: the negotiator counted the match's limits for
  the matched job alone, so the leftovers carry none.  Nor is a job the slot's ``Rank``
  ranks below the leftovers' ``CurrentRank`` (0.0 as the startd publishes it for a
  partitionable slot).  All of this happens after the cycle's matches, in match order
  (docs/differences.md, N15).

Matched jobs are running on their slot (``RemoteHost``).
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import compress, repeat
from operator import attrgetter, eq
from typing import Any, Callable, Iterable, Iterator, Optional

from classad import ast
from classad.ad import ClassAd
from classad.evaluate import evaluate_top
from classad.values import truthiness

from ..config.settings import Settings
from ..pool.ads import IDLE, RUNNING, Job, Pool, Slot, make_jobs, make_slots, rewritten_job
from ..pool.autocluster import job_order_key, references
from ..pool.partition import (
    Rounding,
    available,
    child_names,
    give_back,
    machine_resources,
    requested,
    shortfall,
    split,
    split_writes,
    with_values,
    writes_kind,
)
from .carry import Carried
from .ephemeral import MatchState
from .evaluator import rank_value
from .idle_jobs import IdleJobs
from .results import CycleResult, Match
from .verdicts import Verdicts


@dataclass(frozen=True)
class Start:
    """A job started on a slot after the cycle: by a match, or on a partitionable slot's leftovers."""

    job: str
    slot: str
    submitter: str
    leftover: bool = False


@dataclass
class Claimed:
    """The pool after the claims, the jobs started and the matches the startds refused."""

    pool: Pool
    starts: list[Start] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (job id, why)
    # The records of the slots and jobs whose ads were written (by slot name, by job id).
    slots_made: dict[str, Slot] = field(default_factory=dict)
    jobs_made: dict[str, Job] = field(default_factory=dict)
    # The places in ``pool.slots`` of the records that are not the input's (replaced or
    # added), in increasing order; None when every place may hold another record.
    changed: Optional[list[int]] = None
    # What the claims know of the kinds of the slots they wrote: each dynamic slot they made
    # (and that is still there) by name, with its partitionable slot's name; and each
    # partitionable slot of the input they rewrote only by writing its resources (plain
    # values), with its ad before and after (which is a dynamic slot if and only if that
    # one is).  See :meth:`_Claims.kinds`.
    children: dict[str, str] = field(default_factory=dict)
    resized: dict[str, tuple[ClassAd, ClassAd]] = field(default_factory=dict)


def rounding_of(settings: Settings) -> Rounding:
    """The ``MODIFY_REQUEST_EXPR_*`` expressions of the settings."""
    return Rounding(settings.modify_request_cpus, settings.modify_request_memory, settings.modify_request_disk)


class _SlotAds:
    """The slot ads by name as the claims change them, like a dict first filled with the
    pool's (``before``): a written name keeps its place, a name added (or added again
    after :meth:`pop`) goes last.  Only what changed is stored."""

    def __init__(self, before: dict[str, Slot]) -> None:
        self.before = before
        self.written: dict[str, ClassAd] = {}
        self.gone: set[str] = set()  # names of ``before`` taken away
        self.added: dict[str, None] = {}  # names that go after ``before``'s, in order

    def __getitem__(self, name: str) -> ClassAd:
        ad = self.written.get(name)
        if ad is not None:
            return ad
        if name in self.gone:
            raise KeyError(name)
        return self.before[name].ad

    def __contains__(self, name: str) -> bool:
        return name in self.written or (name in self.before and name not in self.gone)

    def __setitem__(self, name: str, ad: ClassAd) -> None:
        if name not in self:
            self.added[name] = None
        self.written[name] = ad

    def first_free(self, names: Iterator[tuple[int, str]]) -> tuple[int, str]:
        """The first ``(number, name)`` of ``names`` whose name no ad has."""
        written, before, gone = self.written, self.before, self.gone
        for k, name in names:
            if name not in written and (name not in before or name in gone):
                return k, name
        raise ValueError("no free name")

    def pop(self, name: str, default: Optional[ClassAd] = None) -> Optional[ClassAd]:
        if name not in self:
            return default
        ad = self[name]
        self.written.pop(name, None)
        if name in self.added:
            del self.added[name]
        else:
            self.gone.add(name)
        return ad

    def items(self) -> list[tuple[str, ClassAd]]:
        """(name, ad) in the dict's order."""
        written, gone = self.written, self.gone
        out = [(n, written.get(n, s.ad)) for n, s in self.before.items() if n not in gone]
        out += [(n, written[n]) for n in self.added]
        return out


class _Queue:
    """The pool's jobs by id: found by ``place`` (where a job id is in the list, None when
    it is not there, for a list whose ids are all different), or else by a dict of them
    all made here (the last job of an id given twice)."""

    def __init__(self, jobs: list[Job], place: Optional[Callable[[str], Optional[int]]]) -> None:
        self.jobs = jobs
        self._place = place
        self._ids: Optional[list[str]] = None
        self._by_id: dict[str, Job] = {}
        self._at: Optional[dict[str, int]] = None
        self._asked: dict[str, Optional[int]] = {}
        self._found: dict[str, Optional[Job]] = {}  # by ``place``: each id looked up once
        if place is None:
            self._ids = list(map(_ID, jobs))
            self._by_id = dict(zip(self._ids, jobs))

    def get(self, job_id: str) -> Optional[Job]:
        if self._place is None:
            return self._by_id.get(job_id)
        job = self._found.get(job_id, _MISSING)
        if job is _MISSING:
            k = self.place(job_id)
            job = self._found[job_id] = None if k is None else self.jobs[k]
        return job  # type: ignore[return-value]

    def __getitem__(self, job_id: str) -> Job:
        job = self._found.get(job_id) or self.get(job_id)
        if job is None:
            raise KeyError(job_id)
        return job

    def __contains__(self, job_id: str) -> bool:
        return (self._found.get(job_id) or self.get(job_id)) is not None

    def unique(self) -> bool:
        """Whether the ids are all different."""
        return self._place is not None or len(self._by_id) == len(self.jobs)

    def place(self, job_id: str) -> Optional[int]:
        """Where the job is in the list (the last place of an id given twice)."""
        if self._place is not None:  # asked once per job (the claims ask for some twice)
            at = self._asked.get(job_id, -1)
            if at == -1:
                at = self._asked[job_id] = self._place(job_id)
            return at
        if self._at is None:
            self._at = dict(zip(self.ids(), range(len(self.jobs))))
        return self._at.get(job_id)

    def ids(self) -> list[str]:
        """The id of each job of the list, in order."""
        if self._ids is None:
            self._ids = list(map(_ID, self.jobs))
        return self._ids

    def by_id(self) -> Iterable[Job]:
        """The job of each id, in the order the ids first come."""
        return self._by_id.values() if self._place is None else self.jobs


class _JobAds:
    """The job ads by id as the claims change them (only what changed is stored)."""

    def __init__(self, jobs: _Queue) -> None:
        self.jobs = jobs
        self.written: dict[str, ClassAd] = {}

    def __getitem__(self, job_id: str) -> ClassAd:
        ad = self.written.get(job_id)
        return ad if ad is not None else self.jobs[job_id].ad

    def __contains__(self, job_id: str) -> bool:
        return job_id in self.jobs

    def __setitem__(self, job_id: str, ad: ClassAd) -> None:
        if job_id not in self.jobs:
            raise KeyError(job_id)
        self.written[job_id] = ad


class _Claims:
    """The ads being rewritten while the matches are claimed."""

    def __init__(
        self,
        pool: Pool,
        settings: Settings,
        now: Optional[float] = None,
        job_place: Optional[Callable[[str], Optional[int]]] = None,
        slots_by_name: Optional[dict[str, Slot]] = None,
        slot_indices: Optional[list[int]] = None,
        free_from: Optional[dict[str, int]] = None,
        idle_count: Optional[Callable[[str], int]] = None,
    ) -> None:
        self.settings = settings
        self.slot_indices = slot_indices
        self.started_at = (
            {} if now is None else dict.fromkeys(("JobCurrentStartDate", "EnteredCurrentStatus"), int(now))
        )
        # A claimed slot enters a new state and activity (Claimed/Busy) when claimed, as the
        # startd stamps them (whole seconds, as ``CurrentTime`` reads the clock).
        self.claimed_at = {} if now is None else dict.fromkeys((*STATE_STAMPS, "JobStart"), int(now))
        # The time the claims' expressions read (``time()``, ``CurrentTime``): the startd
        # evaluates a slot's Rank and both Requirements when it is claimed.
        self.clock = 0.0 if now is None else now
        self.rounding = rounding_of(settings)
        # By job id and slot name (built with C-speed maps: a pool has tens of thousands).
        self.jobs = _Queue(pool.jobs, job_place)
        self.job_ads = _JobAds(self.jobs)
        # The input's records by name: the caller's table (names all different), else made
        # here in list order with the partitionable slots' names.
        self._pslots: Optional[set[str]] = None
        self.before = slots_by_name if slots_by_name is not None else self._in_order(pool)
        self.slot_ads = _SlotAds(self.before)
        self.sources: dict[str, str] = {}  # of the dynamic slots made here (see _source)
        self.children: dict[str, str] = {}  # the same, each with its partitionable slot's name
        # Whether a partitionable slot was written more than its resources (see kinds).
        self._kinds_unknown = False
        # Per partitionable slot, the number its next dynamic slot's name may start from:
        # every number below it is taken (see claim_matches).
        self._free_from: dict[str, int] = {} if free_from is None else free_from
        self.started: set[str] = set()
        # How many of the pool's jobs are idle records of a submitter (None: not told), and
        # how many of those started here: a submitter whose idle jobs all started has none
        # for its leftovers.
        self.idle_count = idle_count if job_place is not None else None
        self._started_idle: dict[str, int] = {}
        self.out = Claimed(pool)
        self._requests: dict[tuple[str, ...], dict[str, dict[str, float]]] = {}  # by resources, job id
        # With the carry, the same's number of the slot values each was computed with (see
        # Carried.request_code; None: not one the next cycle's leftovers may take).
        self._request_codes: dict[tuple[str, ...], dict[str, Optional[int]]] = {}
        # The same with each request's values as a tuple (the leftovers' shapes).
        self._shapes: dict[tuple[str, ...], dict[str, tuple[dict[str, float], tuple]]] = {}
        self._idle: dict[str, list[Job]] = {}
        self._idle_jobs: Optional[dict[str, list[Job]]] = None
        self._leftover_jobs: dict[str, IdleJobs] = {}  # see _not_started
        self.carry: Optional[Carried] = None
        # What the claims wrote, in order (slot names, job ids), and whether a slot went away.
        self.written_slots: dict[str, None] = {}
        self.written_jobs: dict[str, None] = {}
        self.vacated = False

    def claim(self, m: Match) -> None:
        """One match, as the startd takes it."""
        old = self.slot_ads[m.slot]
        job = self.jobs[m.job]
        if not self.partitionable(m.slot):
            if m.preempted is not None:
                was = old.evaluate("JobId", state=MatchState(None, 0.0))
                if type(was) is str and was in self.job_ads:
                    self._put_job(was, _job_with(self.job_ads[was], {"JobStatus": IDLE}))
            self._run(m, job, m.slot, old, leftover=False)
            return
        if m.preempted_slots:
            for name in m.preempted_slots:  # ALLOW_PSLOT_PREEMPTION: the dynamic slots go first
                self._vacate(m.slot, name)
            old = self.slot_ads[m.slot]
        request = self.request(job, old, machine_resources(old))
        left = available(old, tuple(request))
        short = shortfall(request, left)
        if short is not None:
            self.out.refused.append(
                (m.job, f"the startd refused it: it asks for more {short} than slot {m.slot} has left")
            )
            return
        self._split(m, job, request, left, leftover=False, parent=old)

    def partitionable(self, name: str) -> bool:
        """Whether slot ``name`` of the input is a partitionable slot."""
        if self._pslots is not None:
            return name in self._pslots
        record = self.before.get(name)
        return record is not None and record.partitionable

    def _in_order(self, pool: Pool) -> dict[str, Slot]:
        """The input's records by name in list order (the last of a name given twice), and
        the names of the partitionable ones."""
        names = list(map(_NAME, pool.slots))
        self._pslots = set(compress(names, map(_PARTITIONABLE, pool.slots)))
        return dict(zip(names, pool.slots))

    def _vacate(self, parent: str, name: str) -> None:
        """A preempted dynamic slot: its job is idle again, its resources back in ``parent``."""
        ad = self.slot_ads.pop(name, None)
        if ad is None:
            return
        self.vacated = True
        self._free_from.clear()  # a number below a hint may be free again
        was = ad.evaluate("JobId", state=MatchState(None, 0.0))
        if type(was) is str and was in self.job_ads:
            self._put_job(was, _job_with(self.job_ads[was], {"JobStatus": IDLE}))
        before = self.slot_ads[parent]
        resources = machine_resources(before)
        if writes_kind(resources):
            self._kinds_unknown = True
        self._put_slot(parent, self._derived(give_back(before, ad, resources), before, resources))

    def leftovers(self, m: Match) -> None:
        """The schedd starts ``m.submitter``'s idle jobs that fit what is left of ``m.slot``
        (with ``CLAIM_RECYCLING_CONSIDER_LIMITS``, only jobs whose ``ConcurrencyLimits``,
        evaluated against what is left, names no limit: the limits matched for it), and
        only those the slot's ``Rank`` does not rank below what is left's ``CurrentRank``
        (:func:`leftover_rank_below`)."""
        if self.idle_count is not None and self.idle_count(m.submitter) == self._started_idle.get(m.submitter, 0):
            return  # every idle job of the submitter started: none is left to start here
        # What is left only shrinks, so a request as large as one that did not fit never will
        # (requests for the same resources: those the slot lists, read with each new ad).
        too_large: set[tuple] = set()
        failed: list[dict[str, float]] = []
        read: Optional[ClassAd] = None
        resources: tuple[str, ...] = ()
        have: Optional[dict[str, float]] = None  # what the slot has left, read once per ad of literals
        verdicts: Optional[Verdicts] = None  # (with the carry) the jobs' Requirements against the ad
        floor = 0.0  # the ad's CurrentRank, below which its Rank refuses a job
        ranks_below: Optional[bool] = False  # whether it refuses every job; None: each job is asked
        shapes: dict[str, tuple[dict[str, float], tuple]] = {}
        slot = self.slot_ads[m.slot]  # (only a start changes it)
        idle = self._not_started(m.submitter)
        jobs, ids, limits_of, still, n = idle.jobs, idle.ids, idle.limits, idle.idle, len(idle.jobs)
        # With an ad of literals, the places of the jobs it does not pass over at once (see
        # idle_jobs.py): the others would come to nothing but the notes of what did not fit,
        # and what is left only shrinks (requests are never negative, a split writes
        # literals), so a job those notes pass over does not fit what is left either.
        stops: Optional[Iterator[int]] = None
        k, begin = -1, 0  # (begin: where the walk began for its resources, see IdleJobs.walked)
        while True:
            if stops is not None:
                k = next(stops, n)
            else:
                k += 1
                while k < n and not still[k]:
                    k += 1
            if k >= n:
                idle.walked(resources, begin, n)
                break
            job, job_id, limits = jobs[k], ids[k], limits_of[k]
            if slot is not read:
                read, have = slot, None
                verdicts = None if self.carry is None else Verdicts(slot)
                current = leftover_rank_floor(slot, self.clock)
                floor = 0.0 if current is None else current
                ranks_below = False if current is None else _rank_below_for_all(slot, floor)
                if ranks_below:
                    idle.walked(resources, begin, k)
                    return  # its Rank ranks every job below: none starts, the ad stays as it is
                listed = machine_resources(slot)
                if listed != resources:  # (a MachineResources reading what is left): start afresh
                    idle.walked(resources, begin, k)
                    resources, too_large, failed, begin = listed, set(), [], k
                    shapes = self._shapes.setdefault(resources, {})
                self._reach(idle, resources, k, slot)
                if all(type(slot.plain(r.lower())) in _PLAIN for r in resources):
                    have = available(slot, resources)  # literals: reading them evaluates nothing
                    stops = idle.stops(resources, k, have)
                    if stops is not None:
                        continue  # (this job again, if not passed over)
            if limits is not None and (limits is not _NEEDS_SLOT or leftover_limits(job.ad, slot, self.clock)):
                continue  # the leftovers were matched with no limit (docs/differences.md, N15b)
            known = shapes.get(job_id) or self._shape(idle, k, job, slot, resources, shapes)
            request, shape = known
            if shape in too_large:
                continue
            left = have  # (None: the ad's resources are not all literals, read them for each job)
            if left is None:
                left = available(slot, resources)
            if any(all(request[r] >= f[r] for r in f) for f in failed) or shortfall(request, left) is not None:
                too_large.add(shape)
                failed.append(request)
                continue
            if not self._accepts(idle, k, job.ad, slot, verdicts, refusing=stops is not None):
                continue
            if ranks_below is None and _ranks_below(job.ad, slot, floor, self.clock):
                continue  # the slot ranks it below the leftovers' CurrentRank (docs/differences.md, N15b)
            self._split(m, job, request, left, leftover=True)
            slot = self.slot_ads[m.slot]
            idle.started(k)
            stops = None  # the next job reads the slot's new ad

    def _reach(self, idle: IdleJobs, resources: tuple[str, ...], k: int, slot: ClassAd) -> None:
        """A walk of ``idle`` at place ``k`` reads ``slot`` (see :meth:`IdleJobs.reach`)."""
        if self.carry is not None and idle.carries(resources):
            idle.reach(resources, k, self.carry.slot_code(slot, resources))

    def _shape(
        self,
        idle: IdleJobs,
        k: int,
        job: Job,
        slot: ClassAd,
        resources: tuple[str, ...],
        shapes: dict[str, tuple[dict[str, float], tuple]],
    ) -> tuple[dict[str, float], tuple]:
        """The request of the job at place ``k`` of ``idle`` (taken from the last cycle's
        list, else computed on ``slot`` and noted) and its values as a tuple, kept in ``shapes``."""
        request = idle.taken(resources, k)
        if request is None:
            request = self.request(job, slot, resources)
            idle.note(resources, k, request, self._request_codes.get(resources, {}).get(job.id))
        known = shapes[job.id] = (request, tuple(request.values()))
        return known

    def _accepts(
        self, idle: IdleJobs, k: int, job: ClassAd, slot: ClassAd, verdicts: Optional[Verdicts], refusing: bool
    ) -> bool:
        """:func:`_mutual_match` of ``job``, at place ``k`` of ``idle``, and ``slot``, the
        job's verdict shared through ``verdicts`` (of ``slot``) when given; when ``refusing``
        (the walk goes through ``slot``'s stops) a false shared verdict refuses the job's
        class there."""
        if verdicts is None:
            return _mutual_match(job, slot, self.clock)
        wants = job.get_node("Requirements")
        if wants is None:
            return False
        c, key = idle.requirements_class(k)
        if key is None or not verdicts.shared(wants):
            accepts = _requirements_true(wants, job, slot, self.clock)
        else:
            accepts = verdicts.known(key, lambda: _requirements_true(wants, job, slot, self.clock))
            if not accepts and refusing:
                idle.refuse(c)
        if not accepts:
            return False
        takes = slot.get_node("Requirements")
        return takes is not None and _requirements_true(takes, slot, job, self.clock)

    def _not_started(self, submitter: str) -> IdleJobs:
        """The submitter's idle jobs not started yet, in the schedd's order, each with its
        ``ConcurrencyLimits`` as far as it is known without a slot (:func:`_claim_limits`,
        with ``CLAIM_RECYCLING_CONSIDER_LIMITS``; else None).  Made once, after every
        match's claim; the leftovers then note the jobs they start."""
        idle = self._leftover_jobs.get(submitter)
        if idle is None:
            jobs = self._idle_of(submitter)
            if self.settings.claim_recycling_consider_limits:
                limits: list[object] = [_claim_limits(j.ad, None, self.clock) for j in jobs]
            else:
                limits = [None] * len(jobs)
            carry = self.carry
            if carry is None:
                idle = IdleJobs(jobs, limits, _NEEDS_SLOT)
            else:  # (the requests of the submitter's last list stand where its job ads are the same)
                prior = carry.leftover_lists.get(submitter)
                idle = carry.leftover_lists[submitter] = IdleJobs(jobs, limits, _NEEDS_SLOT, prior, self._requests)
            self._leftover_jobs[submitter] = idle
        return idle

    def request(self, job: Job, slot: ClassAd, resources: tuple[str, ...]) -> dict[str, float]:
        """The job's rounded request for ``resources``, the resources ``slot`` lists
        (computed once per job and list of resources; see docs/differences.md, N15a)."""
        requests = self._requests.get(resources)
        if requests is None:
            requests = self._requests[resources] = {}
        jid = job.id
        r = requests.get(jid)
        if r is None:
            carry = self.carry
            if carry is None:
                r = requested(job.ad, slot, resources, self.rounding)
            else:
                r = carry.request(
                    job.ad, slot, resources, self.rounding, lambda: requested(job.ad, slot, resources, self.rounding)
                )
                codes = self._request_codes.get(resources)
                if codes is None:
                    codes = self._request_codes[resources] = {}
                codes[jid] = carry.request_code(job.ad, slot, resources)
            requests[jid] = r
        return r

    def _split(
        self,
        m: Match,
        job: Job,
        request: dict[str, float],
        left: dict[str, float],
        leftover: bool,
        parent: Optional[ClassAd] = None,
    ) -> None:
        """Carve ``job``'s dynamic slot out of partitionable slot ``m.slot``, which has
        ``left`` of each resource of ``request``, and run the job there (``parent`` is the
        slot's ad when the caller has it)."""
        if parent is None:
            parent = self.slot_ads[m.slot]
        # The lowest free number: every number below the last one taken here is taken.
        k = self._free_from.get(m.slot, 1)
        k, name = self.slot_ads.first_free(child_names(m.slot, k))
        self._free_from[m.slot] = k + 1
        # The dynamic slot is written claimed at once when its Rank for the job is known
        # without it (the same as in the parent); otherwise it is claimed once made.
        ad, clock, keys = job.ad, self.clock, tuple(request)
        rank = _rank_as_in_parent(parent, ad, keys, clock)
        limits = _claim_limits(ad, None, clock)
        claim = None if rank is None or limits is _NEEDS_SLOT else self._claim(m, job, rank, limits)
        if writes_kind(keys):
            self._kinds_unknown = True
        shrunk, child = split(parent, request, name, claim, left=left, deleted=CLAIM_ATTRS)
        carry = self.carry
        if carry is not None:
            carry.derived(shrunk, parent, also=child)
            if carry.steady(parent):  # (what the carry knows of the two: SlotCarry.derive)
                carry.slots.derive(shrunk, parent, keys, self.settings)
                writes, drops = split_writes(keys, claim, CLAIM_ATTRS)
                carry.slots.derive(child, parent, writes, self.settings, drops)
        # (the parent's name has an ad, the new one none: see _SlotAds.__setitem__)
        ads, written = self.slot_ads, self.written_slots
        ads.written[m.slot] = shrunk
        ads.written[name] = child
        ads.added[name] = None
        written[m.slot] = written[name] = None
        self.sources[name] = f"{self._source(m.slot)} ({name})"
        self.children[name] = m.slot
        self._run(m, job, name, child, leftover, claimed=claim is not None)

    def _claim(self, m: Match, job: Job, rank: float, limits: object) -> dict[str, object]:
        """What the startd publishes for ``m``'s claim of a slot whose Rank for the job is
        ``rank``, the job's ``ConcurrencyLimits`` being ``limits`` (:func:`_claim_limits`)."""
        claim: dict[str, object] = {
            "State": "Claimed",
            "Activity": "Busy",
            "RemoteUser": m.submitter,
            "RemoteOwner": m.submitter,
            "JobId": job.id,
            "CurrentRank": rank,
            **self.claimed_at,
        }
        if type(limits) is str:
            claim["ConcurrencyLimits"] = limits
        if m.submitter != _user(job.ad):
            claim["AccountingGroup"] = m.submitter  # the startd publishes the charged principal
        if m.group is not None:
            claim.update(
                {
                    "RemoteGroup": m.group,
                    "RemoteNegotiatingGroup": m.negotiating_group,
                    "RemoteAutoregroup": m.autoregroup,
                }
            )
        return claim

    def _run(self, m: Match, job: Job, slot: str, ad: ClassAd, leftover: bool, claimed: bool = False) -> None:
        """Claim ``slot`` (whose ad is ``ad``, already claimed if ``claimed``) for ``job``, which then runs."""
        if not claimed:
            limits = _claim_limits(job.ad, ad, self.clock)
            claim = self._claim(m, job, slot_rank(ad, job.ad, self.clock), limits)
            made = with_values(ad, claim, deleted=CLAIM_ATTRS)
            self._put_slot(slot, self._derived(made, ad, tuple(claim), CLAIM_ATTRS))
        jid = job.id  # (a job of the queue: see claim and _not_started)
        self.job_ads.written[jid] = _job_with(job.ad, {"JobStatus": RUNNING, "RemoteHost": slot, **self.started_at})
        self.written_jobs[jid] = None
        started = self.started
        if job.status == IDLE and jid not in started:  # (an idle record of the pool)
            self._started_idle[job.submitter] = self._started_idle.get(job.submitter, 0) + 1
        started.add(jid)
        self.out.starts.append(Start(jid, slot, m.submitter, leftover))

    def kinds(self) -> None:
        """Fill the output's ``children`` and ``resized`` (see :class:`Claimed`): a
        partitionable slot's ads are written by splits and give-backs, which write its
        resources and nothing else, unless a resource is named ``DynamicSlot`` or
        ``SlotType`` (then nothing is told)."""
        if self._kinds_unknown:
            return
        # A name written here has an ad when it holds a written one (a name taken away is no
        # longer written: _SlotAds.pop), and that is the one it has.
        written, before, out, pslots = self.slot_ads.written, self.before, self.out, self._pslots
        out.children = {n: p for n, p in self.children.items() if n in written}
        if pslots is not None:
            names = [n for n in self.written_slots if n in pslots and n in written and n in before]
        else:
            names = [
                n for n in self.written_slots if n in written and (r := before.get(n)) is not None and r.partitionable
            ]
        out.resized = {n: (before[n].ad, written[n]) for n in names}

    def _derived(
        self, ad: ClassAd, base: ClassAd, names: Optional[tuple[str, ...]] = None, deleted: tuple[str, ...] = ()
    ) -> ClassAd:
        """``ad``, a copy of ``base`` written with plain values (:meth:`Carried.derived`)
        under ``names`` alone, if given, without ``deleted`` (:meth:`SlotCarry.derive`)."""
        carry = self.carry
        if carry is not None:
            carry.derived(ad, base)
            if carry.steady(base):
                carry.slots.derive(ad, base, names, self.settings, deleted)
        return ad

    def _put_slot(self, name: str, ad: ClassAd) -> None:
        self.slot_ads[name] = ad
        self.written_slots[name] = None

    def _put_job(self, job_id: str, ad: ClassAd) -> None:
        self.job_ads[job_id] = ad
        self.written_jobs[job_id] = None

    def _source(self, name: str) -> str:
        """Where slot ``name``'s ad came from."""
        made = self.sources.get(name)
        return made if made is not None else self.before[name].source

    def _idle_of(self, submitter: str) -> list[Job]:
        """The submitter's idle jobs not started when first asked, in the schedd's order
        (those started are left out before the sort: after a cycle's matches a submitter's
        idle jobs have often all started, and there is then nothing to sort)."""
        if submitter not in self._idle:
            if self._idle_jobs is None:  # every submitter's, the idle jobs found at C speed
                self._idle_jobs = {}
                jobs = list(self.jobs.by_id())
                for j in compress(jobs, map(eq, map(_STATUS, jobs), repeat(IDLE))):
                    self._idle_jobs.setdefault(j.submitter, []).append(j)
            by_qdate = self.settings.job_order_by_qdate
            if self.carry is not None:  # the keys the cycle's queues read of the same records
                key = partial(self.carry.queue_keys.order_key, by_qdate=by_qdate)
            else:
                key = partial(job_order_key, by_qdate=by_qdate)
            started = self.started
            idle = [j for j in self._idle_jobs.get(submitter, ()) if j.id not in started]
            self._idle[submitter] = sorted(idle, key=key) if idle else idle
        return self._idle[submitter]

    def pool(self, pool: Pool, carry: Optional[Carried] = None) -> Pool:
        """The pool with the rewritten ads; with ``carry`` a slot or job whose ad was not
        rewritten keeps its record when making it again could not draw a random number
        (the record of the same ad is then the same)."""
        if carry is not None:
            self.carry = carry
            slots = self._slots_reused(pool) if not self._checked_slots(carry, pool) else self._slots_changed(pool)
            jobs = self._jobs_reused(pool) if not self._checked_jobs(carry, pool) else self._jobs_changed(pool)
            return replace(pool, slots=slots, jobs=jobs, refused=[])
        st = self.settings
        self.before = self.slot_ads.before = self._in_order(pool)  # the order of the records made
        slots = make_slots(
            [(ad, self._source(name)) for name, ad in self.slot_ads.items()],
            use_slot_weights=st.use_slot_weights,
            slot_weight_expr=st.slot_weight_expr,
            force_slot_weight=st.force_slot_weight,
        )
        jobs = make_jobs([(self.job_ads[j.id], j.source) for j in pool.jobs], uid_domain=st.uid_domain)
        self.out.slots_made = {s.name: s for s in slots}
        self.out.jobs_made = {j.id: j for j in jobs}
        return replace(pool, slots=slots, jobs=jobs, refused=[])

    def _slots_reused(self, pool: Pool) -> list[Slot]:
        st, carry = self.settings, self.carry
        assert carry is not None
        self.before = self.slot_ads.before = self._in_order(pool)  # the order of the records made
        before, steady = self.before, carry.steady
        slots: list[Slot] = []
        made = self.out.slots_made
        unsteady: set[str] = set()
        # A slot whose ad is the one it had keeps its source too (only new ads get new sources).
        for name, ad in self.slot_ads.items():
            old = before.get(name)
            if not steady(ad):
                unsteady.add(name)
                old = None
            if old is None or old.ad is not ad:
                (old,) = make_slots(
                    [(ad, self._source(name))],
                    use_slot_weights=st.use_slot_weights,
                    slot_weight_expr=st.slot_weight_expr,
                    force_slot_weight=st.force_slot_weight,
                )
                old = made[name] = old.at(len(slots))
            elif old.index != len(slots):
                old = old.at(len(slots))
            slots.append(old)
        carry.unsteady_slots = unsteady
        carry.new_slots.clear()
        return slots

    # ---- with the carry, only what may have changed is visited ----------------------------
    #
    # The carry knows which slots and jobs of the pool hold an ad that may draw random numbers
    # (their records are made again each cycle, as the rebuild makes every record) and which
    # ones the loop gave a new ad since the last claims (Carried.unsteady_*, Carried.new_*).
    # The other records are kept without looking at them.  Until the carry knows a pool (the
    # first cycle), when a slot went away here, or when names repeat, every record is visited.

    def _checked_slots(self, carry: Carried, pool: Pool) -> bool:
        return carry.unsteady_slots is not None and not self.vacated and len(self.before) == len(pool.slots)

    def _checked_jobs(self, carry: Carried, pool: Pool) -> bool:
        return carry.unsteady_jobs is not None and self.jobs.unique()

    def _slots_changed(self, pool: Pool) -> list[Slot]:
        """:meth:`_slots_reused`, visiting only the slots written, new or unsteady."""
        carry, before = self.carry, self.before
        assert carry is not None and carry.unsteady_slots is not None
        visit = {n for n in (*self.written_slots, *carry.unsteady_slots, *carry.new_slots) if n in before}
        slots = list(pool.slots)
        # A record keeps its index (increasing along the list, with gaps where slots went
        # away: see Slot.index), which finds its place; a new dynamic slot takes the next
        # one after the last.  Each name is there once (see _checked_slots).
        changed = self.out.changed = []
        indices = self.slot_indices  # searched without a key function
        if indices is None:
            indices = list(map(_INDEX, slots))
        for i in sorted(bisect_left(indices, before[n].index) for n in visit):
            old = slots[i]
            slots[i] = self._slot_record(old.name, old, old.index)
            if slots[i] is not old:
                changed.append(i)
        for name in self.written_slots:
            if name not in before:  # a dynamic slot made here, in the order made
                changed.append(len(slots))
                slots.append(self._slot_record(name, None, slots[-1].index + 1 if slots else 0))
        # A written ad's record, made now, is made again next time only when it may draw.
        carry.new_slots.clear()
        steady, unsteady, ads = carry.steady, carry.unsteady_slots, self.slot_ads
        for name in self.written_slots:
            (unsteady.discard if steady(ads[name]) else unsteady.add)(name)
        return slots

    def _slot_record(self, name: str, old: Optional[Slot], at: int) -> Slot:
        """The record of slot ``name`` with index ``at``: ``old`` when its ad is the same and
        steady (the carry learns whether it is), else made again."""
        carry, st = self.carry, self.settings
        assert carry is not None and carry.unsteady_slots is not None
        ad = self.slot_ads[name]
        if old is not None and old.ad is ad:
            if carry.steady(ad):
                carry.unsteady_slots.discard(name)
                return old.at(at)
            carry.unsteady_slots.add(name)
        (made,) = make_slots(
            [(ad, self._source(name))],
            use_slot_weights=st.use_slot_weights,
            slot_weight_expr=st.slot_weight_expr,
            force_slot_weight=st.force_slot_weight,
            first_index=at,
        )
        self.out.slots_made[name] = made
        return made

    def _jobs_changed(self, pool: Pool) -> list[Job]:
        """:meth:`_jobs_reused`, visiting only the jobs written, new or unsteady."""
        carry = self.carry
        assert carry is not None and carry.unsteady_jobs is not None
        places = map(self.jobs.place, {*self.written_jobs, *carry.unsteady_jobs, *carry.new_jobs})
        visit = {k for k in places if k is not None}
        jobs, uid, made = list(pool.jobs), self.settings.uid_domain, self.out.jobs_made
        literal: set[str] = set()  # written jobs whose record reads only literals: steady
        for k in sorted(visit):
            j = jobs[k]
            jid = j.id
            ad = self.job_ads[jid]
            if ad is j.ad:
                if carry.steady_job(ad):
                    carry.unsteady_jobs.discard(jid)
                    continue
                carry.unsteady_jobs.add(jid)
                fresh = None
            else:  # the claims write only JobStatus, RemoteHost and the start dates (_job_with)
                fresh = rewritten_job(j, ad)
                if fresh is not None:
                    literal.add(jid)
            jobs[k] = made[jid] = fresh if fresh is not None else make_jobs([(ad, j.source)], uid_domain=uid)[0]
        carry.new_jobs.clear()
        steady, unsteady, job_ads = carry.steady_job, carry.unsteady_jobs, self.job_ads
        for jid in self.written_jobs:  # as a written slot (see _slots_changed)
            # (rewritten_job made a record only of literals, which Carried.steady_job calls steady)
            (unsteady.discard if jid in literal or steady(job_ads[jid]) else unsteady.add)(jid)
        return jobs

    def _jobs_reused(self, pool: Pool) -> list[Job]:
        uid, carry = self.settings.uid_domain, self.carry
        assert carry is not None
        job_ads, made, steady = self.job_ads, self.out.jobs_made, carry.steady_job
        out = []
        unsteady: set[str] = set()
        for jid, j in zip(self.jobs.ids(), pool.jobs):
            ad = job_ads[jid]
            if not steady(ad):
                unsteady.add(jid)
                j = made[jid] = make_jobs([(ad, j.source)], uid_domain=uid)[0]
            elif ad is not j.ad:
                j = made[jid] = make_jobs([(ad, j.source)], uid_domain=uid)[0]
            out.append(j)
        carry.unsteady_jobs = unsteady
        carry.new_jobs.clear()
        return out


def claim_matches(
    pool: Pool,
    result: CycleResult,
    settings: Settings,
    now: Optional[float] = None,
    *,
    carry: Optional[Carried] = None,
    job_place: Optional[Callable[[str], Optional[int]]] = None,
    slots_by_name: Optional[dict[str, Slot]] = None,
    slot_indices: Optional[list[int]] = None,
    free_from: Optional[dict[str, int]] = None,
    idle_count: Optional[Callable[[str], int]] = None,
) -> Claimed:
    """The pool after ``result``'s matches were claimed (see the module docstring); with
    ``now``, a started job's ``JobCurrentStartDate`` and ``EnteredCurrentStatus`` are ``now``,
    so a priority policy can tell how long it has run.  With ``carry`` (a simulation's
    incremental cycles) the slots and jobs whose ads were not rewritten keep their
    records (see :meth:`_Claims.pool`).  ``job_place`` tells where a job id is in
    ``pool.jobs`` (None when it is not there) when the ids are all different: the claims
    then make no table of the jobs.  ``slots_by_name`` is ``pool.slots``' records by name
    when the names are all different (the claims then make no table of the slots; it is
    not changed), and ``slot_indices`` their indices (:attr:`Slot.index`) in order, when the
    caller has them (not changed either).  ``free_from`` gives, per partitionable slot's
    name, a number such that every dynamic slot name :func:`~matchmaker.pool.partition.child_name`
    makes of it with a number below is a slot of ``pool``: a new dynamic slot's name is looked
    for from there on.  The claims keep it so for the pool they leave (a caller carries it
    to the next claims, telling of the names freed in between); they empty it when a slot
    went away.  ``idle_count`` tells how many jobs of ``pool`` are idle records
    (:attr:`Job.status`) of a submitter (:attr:`Job.submitter`), when the caller keeps count
    and the job ids are all different: the leftovers of a submitter whose idle jobs all
    started then look for none (a steady cycle starts every idle job it can)."""
    run = _Claims(pool, settings, now, job_place, slots_by_name, slot_indices, free_from, idle_count)
    run.carry = carry
    for m in result.matches:
        run.claim(m)
    if settings.claim_leftovers:
        done: set[str] = set()
        for m in result.matches:
            if run.partitionable(m.slot) and m.slot not in done and m.job in run.started:
                done.add(m.slot)
                run.leftovers(m)
    run.out.pool = run.pool(pool, carry)
    run.kinds()
    return run.out


_PLAIN = (bool, int, float, str)
# What a startd publishes for a claim and no longer once the claim ended (or gave way to
# another one): a released slot drops them, a claim writes its own in their place.  The
# run-time totals (``TotalJobRunTime``, ...) are published only while above 0: a claim
# starts them from 0, so a new claim has none (docs/differences.md, S-table).
CLAIM_ATTRS = (
    "RemoteUser",
    "RemoteOwner",
    "AccountingGroup",
    "JobId",
    "CurrentRank",
    "RemoteGroup",
    "RemoteNegotiatingGroup",
    "RemoteAutoregroup",
    "PreemptingUser",
    "PreemptingAccountingGroup",
    "PreemptingRank",
    "PreemptingConcurrencyLimits",
    "RemoteGroupQuota",
    "RemoteUserPrio",
    "RemoteUserResourcesInUse",
    "RemoteGroupResourcesInUse",
    "GlobalJobId",
    "ClientMachine",
    "JobStart",
    "ConcurrencyLimits",
    "TotalJobRunTime",
    "TotalClaimRunTime",
    "TotalJobSuspendTime",
    "TotalClaimSuspendTime",
)
# What a startd stamps with the time when a slot enters a new state and a new activity
# (policies read them, e.g. ``CurrentTime - EnteredCurrentState``).
STATE_STAMPS = ("EnteredCurrentState", "EnteredCurrentActivity")
_MISSING = object()
_ID, _NAME, _INDEX, _STATUS = attrgetter("id"), attrgetter("name"), attrgetter("index"), attrgetter("status")
_PARTITIONABLE = attrgetter("partitionable")


def _mutual_match(job: ClassAd, slot: ClassAd, now: float, verdicts: Optional[Verdicts] = None) -> bool:
    """Both Requirements true in the two-ad context (a missing one is false, as in matching);
    the job's verdict shared through ``verdicts`` (of ``slot``) when given."""
    wants = job.get_node("Requirements")
    if wants is None:
        return False
    if verdicts is None:
        accepts = _requirements_true(wants, job, slot, now)
    else:
        accepts = verdicts.verdict(wants, job, lambda: _requirements_true(wants, job, slot, now))
    if not accepts:
        return False
    takes = slot.get_node("Requirements")
    return takes is not None and _requirements_true(takes, slot, job, now)


def _in_match(node: ast.Node, my: ClassAd, target: ClassAd, now: float) -> Any:
    """The value of ``node``, an expression of ``my``, against ``target`` at ``now`` (the
    two-ad context a startd evaluates a claim in)."""
    state = MatchState(None, now)
    state.my, state.target = my, target
    return evaluate_top(node, my, state)


def _requirements_true(node: ast.Node, my: ClassAd, target: ClassAd, now: float) -> bool:
    """Whether ``node``, ``my``'s Requirements, is true against ``target`` at ``now``."""
    return truthiness(_in_match(node, my, target, now)) is True


def _job_with(ad: ClassAd, values: dict[str, object]) -> ClassAd:
    """A job ad with ``values`` written, compacted as job records compact it."""
    return with_values(ad, values)


def _claim_limits(job: ClassAd, slot: Optional[ClassAd], now: float) -> object:
    """The job's ``ConcurrencyLimits`` as the startd keeps it for the claim: evaluated with
    the job as ``MY`` and the claimed ``slot`` as ``TARGET``, kept when a non-empty string,
    else None.  :data:`_NEEDS_SLOT` when it is not a literal and ``slot`` is None."""
    v = job.plain("concurrencylimits")  # a missing or literal value: nothing to evaluate
    node = None if v is None or type(v) in _PLAIN else job.get_node("ConcurrencyLimits")
    if node is not None:
        if slot is None:
            return _NEEDS_SLOT
        v = _in_match(node, job, slot, now)
    return v if type(v) is str and v else None


_NEEDS_SLOT = object()


def leftover_limits(job: ClassAd, slot: ClassAd, now: float) -> Optional[str]:
    """The concurrency limits ``job`` names against partitionable slot ``slot``'s
    leftovers (``ConcurrencyLimits`` evaluated with ``slot`` as ``TARGET``), None when it
    names none; with ``CLAIM_RECYCLING_CONSIDER_LIMITS`` the schedd starts it there only then."""
    v = _claim_limits(job, slot, now)
    return v if type(v) is str else None


def leftover_rank_floor(slot: ClassAd, now: float) -> Optional[float]:
    """The ``CurrentRank`` of partitionable slot ``slot``'s leftovers as the schedd reads it
    (the ad alone): a number, a bool as 0/1; 0.0 when the ad has none (a startd publishes
    one for every slot, 0.0 for a partitionable slot's own unclaimed claim); None when it
    is not a number, and then the schedd refuses no job for its rank."""
    v = slot.plain("currentrank")
    if v is None:
        return 0.0
    if type(v) not in _PLAIN:
        v = slot.evaluate("CurrentRank", state=MatchState(None, now))
    return rank_value(v)


def _rank_below_for_all(slot: ClassAd, floor: float) -> Optional[bool]:
    """Whether ``slot``'s ``Rank`` is below ``floor`` for every job, when its Rank is
    missing (the startd publishes 0.0) or a literal; None when it must be evaluated per job."""
    node = slot.get_node("Rank")
    if node is not None and type(node) is not ast.Literal:
        return None
    r = _rank_without_job(node)
    return r is not None and r < floor


def _rank_without_job(node: Optional[ast.Node]) -> Optional[float]:
    """A slot's ``Rank`` as the schedd reads it when it is missing (0.0) or the literal
    ``node``: a number, a bool as 0/1, else None."""
    return 0.0 if node is None else rank_value(node.value)  # type: ignore[attr-defined]


def _ranks_below(job: ClassAd, slot: ClassAd, floor: float, now: float) -> bool:
    """Whether ``slot``'s ``Rank`` (an expression), evaluated with ``job`` as ``TARGET``,
    is a number (a bool as 0/1) below ``floor``."""
    r = rank_value(_in_match(slot.get_node("Rank"), slot, job, now))  # type: ignore[arg-type]
    return r is not None and r < floor


def leftover_rank_below(job: ClassAd, slot: ClassAd, now: float) -> Optional[tuple[float, float]]:
    """``(rank, current)`` when the schedd refuses ``job`` on partitionable slot ``slot``'s
    leftovers for its rank: the slot's ``Rank`` for the job (slot as ``MY``, job as
    ``TARGET``; 0.0 when missing), a number, is below :func:`leftover_rank_floor`; None
    when it is not (or either is not a number)."""
    floor = leftover_rank_floor(slot, now)
    if floor is None:
        return None
    node = slot.get_node("Rank")
    if node is None or type(node) is ast.Literal:
        r = _rank_without_job(node)
    else:
        r = rank_value(_in_match(node, slot, job, now))
    return (r, floor) if r is not None and r < floor else None


def mutual_match(job: ClassAd, slot: ClassAd, now: float) -> bool:
    """Whether both ``Requirements`` hold in the two-ad context at ``now``, as the schedd
    tests a job for a claim (a missing one is false)."""
    return _mutual_match(job, slot, now)


def _user(ad: ClassAd) -> Optional[str]:
    """The job's ``User`` when it is a string."""
    v = ad.plain("user")  # a plain literal (or nothing) is its value, without evaluating
    if v is None or type(v) in _PLAIN:
        return v if type(v) is str else None
    v = ad.evaluate("User", state=MatchState(None, 0.0))
    return v if type(v) is str else None


def _rank_as_in_parent(parent: ClassAd, job: ClassAd, resources: tuple[str, ...], now: float) -> Optional[float]:
    """The ``CurrentRank`` of a dynamic slot split from ``parent`` for ``job`` (its
    :func:`slot_rank`), the dynamic slot holding ``resources``, when it is known without
    the dynamic slot: when the parent's ``Rank`` (which the dynamic slot inherits) is
    missing or a literal, or reads nothing of the slot and only plain literals of the job.
    None otherwise."""
    if _names_rank(resources):
        return None  # a resource named Rank: the dynamic slot holds its own
    node = parent.get_node("Rank")
    if node is None or type(node) is ast.Literal:
        return _literal_rank(node)
    read = _job_names_read(node)
    if read is None or any(v is not None and type(v) not in _PLAIN for v in map(job.plain, read)):
        return None
    return slot_rank(parent, job, now)


def _names_rank(resources: tuple[str, ...]) -> bool:
    """Whether one of ``resources`` is named ``Rank`` (in any case)."""
    hit = _RANK_NAMED.get(resources)
    if hit is None:
        if len(_RANK_NAMED) > 1000:
            _RANK_NAMED.clear()
        hit = _RANK_NAMED[resources] = "rank" in map(str.lower, resources)
    return hit


# A list of resources -> whether it names Rank.
_RANK_NAMED: dict[tuple[str, ...], bool] = {}


def _job_names_read(node: ast.Node) -> Optional[tuple[str, ...]]:
    """The names (lower-case) an expression reads as ``TARGET.x`` when it reads nothing else
    of either ad (no plain name, no ``MY.x``, no whole ad, no ``eval``); else None."""
    hit = _names_read.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    own, other = references(node)
    read: Optional[tuple[str, ...]] = None if own or _calls(node, "eval") else tuple(sorted(other))
    if len(_names_read) > 10_000:
        _names_read.clear()
    _names_read[id(node)] = (node, read)
    return read


_names_read: dict[int, tuple[ast.Node, Optional[tuple[str, ...]]]] = {}


def _calls(node: ast.Node, function: str) -> bool:
    """Whether the tree calls ``function`` (lower-case)."""
    todo: list = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, tuple):
            todo.extend(n)
        elif isinstance(n, ast.Node) and type(n) is not ast.Literal:
            if type(n) is ast.Call and n.lname == function:
                return True
            todo.extend(getattr(n, f.name) for f in dataclasses.fields(n))
    return False


def _literal_rank(node: Optional[ast.Node]) -> float:
    """:func:`slot_rank` of a slot whose ``Rank`` is missing (None) or the literal ``node``."""
    r = None if node is None else rank_value(node.value)  # type: ignore[attr-defined]
    return 0.0 if r is None else r


def slot_rank(slot: ClassAd, job: ClassAd, now: float) -> float:
    """The slot's Rank for the job it now runs, evaluated at ``now``: its CurrentRank (a
    bool as 0/1, as the startd's ``EvalFloat`` reads it; 0 if not a number)."""
    node = slot.get_node("Rank")
    if node is None or type(node) is ast.Literal:  # its value, with nothing to evaluate
        return _literal_rank(node)
    r = rank_value(_in_match(node, slot, job, now))
    return 0.0 if r is None else r


__all__ = [
    "CLAIM_ATTRS",
    "Claimed",
    "Start",
    "claim_matches",
    "leftover_limits",
    "leftover_rank_floor",
    "leftover_rank_below",
    "mutual_match",
    "rounding_of",
    "slot_rank",
]
