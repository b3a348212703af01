"""Small pools shaped like a site's dumps, drawn by Hypothesis, and written out as ad files.

``pools(slots_like="slots.ad", jobs_like="jobs.ad")`` draws a few slot ads and a few
job ads with :func:`classad.testing.ads` and then gives them what a pool needs to be
read: each slot a unique ``Name``, each job a unique ``ClusterId``/``ProcId`` and, by
default, ``JobStatus = 1`` (idle).  ``submitters`` replaces the jobs' users (and the
claimed slots' ``RemoteUser``) by names drawn from a list; ``groups`` puts jobs in
accounting groups drawn from a list.  :meth:`DrawnPool.write` saves the pool as two
old-format ad files, so a failure found by Hypothesis can be replayed with
``matchmaker negotiate``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from classad.ad import ClassAd
from classad.testing import ads, learn
from classad.testing.choices import Labelled, toss
from classad.testing.schema import AdsLike

from ..pool.ads import CHARGED_STATES
from .reads import MATCHMAKER_READS, PER_SLOT

# Attributes of a running job that an idle job does not carry.
_RUNNING_ONLY = ("RemoteHost", "JobCurrentStartDate", "JobStartDate", "ShadowBday", "LastJobStatus")
# Attributes naming whom a claim is charged to.
_CLAIM_USERS = ("RemoteUser", "RemoteOwner", "AccountingGroup")
_JOB_GROUP = ("AccountingGroup", "AcctGroup", "AcctGroupUser")


@dataclass(frozen=True)
class DrawnPool:
    """Slot ads and job ads of one drawn pool."""

    slots: tuple[ClassAd, ...]
    jobs: tuple[ClassAd, ...]

    def __repr__(self) -> str:
        lines = ["DrawnPool(slots=["] + [f"    {ad!r}," for ad in self.slots] + ["  ], jobs=["]
        lines += [f"    {ad!r}," for ad in self.jobs] + ["])"]
        return "\n".join(lines)

    def write(self, directory: str | os.PathLike) -> tuple[Path, Path]:
        """Write ``slots.ad`` and ``jobs.ad`` (old format, as ``condor_status -l`` prints)
        into ``directory`` and return their paths."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        paths = folder / "slots.ad", folder / "jobs.ad"
        for path, group in zip(paths, (self.slots, self.jobs)):
            path.write_text("".join(ad.printOld().rstrip("\n") + "\n\n" for ad in group), encoding="utf-8")
        return paths

    def command(self, directory: str | os.PathLike, config: str | os.PathLike, now: float) -> str:
        """Write the pool into ``directory`` and return the ``matchmaker negotiate`` command
        that replays one cycle on it."""
        slots, jobs = self.write(directory)
        return f"matchmaker negotiate --config {config} --slots {slots} --jobs {jobs} --now {now:.0f}"


def pools(
    slots_like: AdsLike,
    jobs_like: AdsLike,
    *,
    submitters: Optional[Sequence[str]] = None,
    groups: Optional[Sequence[Optional[str]]] = None,
    min_slots: int = 1,
    max_slots: int = 6,
    min_jobs: int = 1,
    max_jobs: int = 8,
    idle: bool = True,
    fresh: float = 0.25,
    shapes: bool = False,
    attributes: Optional[Iterable[str]] = None,
) -> st.SearchStrategy[DrawnPool]:
    """Pools of ``min_slots``..``max_slots`` slots and ``min_jobs``..``max_jobs`` jobs drawn
    like the two dumps (files, ads or :class:`~classad.testing.Schema`): each of the
    ``max_*`` places is filled with probability one half, the first empty ones too when
    fewer than ``min_*`` are.

    ``submitters`` (``["alice@site.org", ...]``) sets each job's ``User``/``Owner`` and each
    claimed slot's ``RemoteUser`` to one of them, dropping the dump's accounting groups
    (a slot is claimed when its drawn ``State`` says so; the others lose any claim
    attributes they drew);
    ``groups`` then puts each job, and each claim, in one of those accounting groups
    (``None`` in the list: in no group).  ``idle``
    makes every job idle.  ``fresh`` and ``shapes`` are passed to ``ads()``.  ``attributes``
    keeps only those attributes of the dumps (see :func:`names_read`), and always the ones
    the negotiator reads by name."""
    slot_schema, job_schema = learn(slots_like), learn(jobs_like)
    if attributes is not None:
        keep = {a.lower() for a in attributes} | MATCHMAKER_READS
        slot_schema, job_schema = (
            s.only(n for n in s.names() if n.lower() in keep or PER_SLOT.match(n)) for s in (slot_schema, job_schema)
        )
    users = list(submitters) if submitters else None
    slot = ads(like=slot_schema, fresh=fresh, shapes=shapes)
    job = ads(like=job_schema, fresh=fresh, shapes=shapes)
    if users is not None:
        in_group = st.sampled_from(list(groups)) if groups else st.none()
        slot = _Joined(slot, st.sampled_from(users), in_group, _claimed_by)
        job = _Joined(job, st.sampled_from(users), in_group, _submitted_by)

    if not 0 <= min_slots <= max_slots or not 0 <= min_jobs <= max_jobs:
        raise ValueError("pools() needs 0 <= min_slots <= max_slots and 0 <= min_jobs <= max_jobs")
    slot_seat, job_seat = _Seat(slot), _Seat(job)

    @st.composite
    def drawn_pools(draw: Any) -> DrawnPool:  # composite, so a failing example prints as the pool itself
        slot_ads = _seated([draw(slot_seat) for _ in range(max_slots)], min_slots)
        job_ads = _seated([draw(job_seat) for _ in range(max_jobs)], min_jobs)
        return DrawnPool(
            tuple(_named(ad, i) for i, ad in enumerate(slot_ads)),
            tuple(_numbered(ad, i, idle) for i, ad in enumerate(job_ads)),
        )

    return drawn_pools()


class _Seat(Labelled):
    """One place of a pool's slot or job list: whether the pool has it, and an ad.

    Every place is drawn whether the pool has it or not, so dropping one (its coin to
    ``False``, which is what shrinking tries) moves no other ad's choices: with
    ``lists()`` the shrinker could only cut the slot list short by misreading the
    choices of the job list that follows it."""

    def __init__(self, ads: SearchStrategy[ClassAd]) -> None:
        super().__init__(f"seat:{ads!r}")
        self.ads = ads

    def do_draw(self, data: Any) -> tuple[bool, ClassAd]:
        return toss(data, 0.5), data.draw(self.ads)


def _seated(places: list[tuple[bool, ClassAd]], least: int) -> list[ClassAd]:
    """The ads of the places the pool has, in order, and of the first places it does not
    have until there are ``least`` (any place may drop out: the others stay as drawn)."""
    short = least - sum(here for here, _ in places)
    keep = []
    for here, ad in places:
        if not here and short > 0:
            here, short = True, short - 1
        if here:
            keep.append(ad)
    return keep


def _host(ad: ClassAd) -> str:
    name = ad.get("Name")
    host = name.rpartition("@")[2] if isinstance(name, str) and "@" in name else ""
    return host or "pool.test"


def _named(ad: ClassAd, index: int) -> ClassAd:
    """The slot with a name no other slot of the pool has (``slot<N>@<its host>``)."""
    out = ClassAd(ad)
    out["Name"] = f"slot{index + 1}@{_host(ad)}"
    return out


def _numbered(ad: ClassAd, index: int, idle: bool) -> ClassAd:
    """The job as job ``<index + 1>.0``, idle when asked."""
    out = ClassAd(ad)
    out["ClusterId"] = index + 1
    out["ProcId"] = 0
    if idle:
        out["JobStatus"] = 1
        for name in _RUNNING_ONLY:
            out.pop(name, None)
    return out


class _Joined(Labelled):
    """``join(ad, user, group)`` for an ad, a user and a group drawn in turn.  A strategy
    of its own rather than a ``map`` of a tuple, so a failing example prints as the pool."""

    def __init__(
        self,
        ads: SearchStrategy[ClassAd],
        users: SearchStrategy[str],
        groups: SearchStrategy[Optional[str]],
        join: Callable[[ClassAd, str, Optional[str]], ClassAd],
    ) -> None:
        super().__init__(f"{join.__name__}:{ads!r}:{users!r}:{groups!r}")
        self.parts, self.join = (ads, users, groups), join

    def do_draw(self, data: Any) -> ClassAd:
        return self.join(*(data.draw(p) for p in self.parts))


def _claimed_by(ad: ClassAd, user: str, group: Optional[str]) -> ClassAd:
    """The slot, if its ``State`` says it is claimed, charged to ``user`` (within accounting
    group ``group`` when not None) as the startd publishes it; else without a claim's
    attributes (drawn one by one, an unclaimed slot may have got some)."""
    out = ClassAd(ad)
    for name in _CLAIM_USERS:
        out.pop(name, None)
    state = ad.get("State")
    if not (isinstance(state, str) and state.lower() in CHARGED_STATES):
        out.pop("JobId", None)
        return out
    out["RemoteUser"] = user
    out["RemoteOwner"] = user
    if group is not None:
        out["AccountingGroup"] = f"{group}.{user}"
    return out


def _submitted_by(ad: ClassAd, user: str, group: Optional[str]) -> ClassAd:
    """The job submitted by ``user``, in accounting group ``group`` (None: in none)."""
    out = ClassAd(ad)
    for name in _JOB_GROUP:
        out.pop(name, None)
    out["User"] = user
    local = user.partition("@")[0]
    out["Owner"] = local
    if group is not None:
        out["AcctGroup"] = group
        out["AcctGroupUser"] = local
        out["AccountingGroup"] = f"{group}.{local}"
    return out


__all__ = ["DrawnPool", "pools"]
