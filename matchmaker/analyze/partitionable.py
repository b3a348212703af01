"""What ``analyze`` says about partitionable slots (docs/negotiation.md, partitionable slots).

For one job: does its request, rounded as the startd rounds it, fit what each
partitionable slot has left ("fits what is left: no (needs 8 GB, 2 GB left)"), and
what the schedd does after the cycle with the leftovers of the partitionable slots
its submitter was matched with: start this job there, or why not.  For one
partitionable slot: what it has left and how many requests fit it.
"""

from __future__ import annotations

from ..cycle.claims import claim_matches, leftover_limits, leftover_rank_below, mutual_match, rounding_of
from ..pool.ads import Job, Slot
from ..pool.partition import available, machine_resources, requested, shortfall
from .pool_view import PoolView

SHOWN = 5  # partitionable slots listed one by one; the rest are counted


def amount(resource: str, *values: float) -> list[str]:
    """Resource amounts as people read them, in one unit: cores, and memory (MB) and disk
    (KB) in GB or MB when every value is a whole number of them."""
    key = resource.lower()
    if key == "cpus":
        return [f"{_n(v)} core{'s' if v != 1 else ''}" for v in values]
    if key not in ("memory", "disk"):
        return [f"{_n(v)} {resource}" for v in values]
    kb = [v * 1024 if key == "memory" else v for v in values]
    for unit, size in (("GB", 1024 * 1024), ("MB", 1024)):
        if all(k % size == 0 and (k >= size or k == 0) for k in kb):
            return [f"{_n(k / size)} {unit}" for k in kb]
    return [f"{_n(v)} MB" for v in values] if key == "memory" else [f"{_n(v)} KB" for v in values]


def _n(v: float) -> str:
    """A number as written by hand: whole numbers without a decimal point or exponent."""
    return str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else f"{v:g}"


def _short(resource: str, need: float, left: float) -> str:
    a, b = amount(resource, need, left)
    return f"needs {a}, {b} left"


def fit_lines(view: PoolView, job: Job) -> list[str]:
    """One line per partitionable slot the cycle considered (the first :data:`SHOWN`)."""
    rounding = rounding_of(view.settings)
    lines = []
    pslots = [e for e in view.start.entries if e.slot.partitionable]
    for e in pslots[:SHOWN]:
        ad = e.slot.ad
        resources = machine_resources(ad)
        need = requested(job.ad, ad, resources, rounding)
        left = available(ad, resources)
        short = shortfall(need, left)
        if short is None:
            asks = ", ".join(amount(r, v)[0] for r, v in need.items())
            lines.append(f"{e.slot.name}: fits what is left: yes (needs {asks})")
        else:
            lines.append(f"{e.slot.name}: fits what is left: no ({_short(short, need[short], left[short])})")
    if len(pslots) > SHOWN:
        lines.append(f"... and {len(pslots) - SHOWN} more partitionable slot(s)")
    return lines


def slot_lines(view: PoolView, slot: Slot, jobs: list[Job]) -> list[str]:
    """For a partitionable slot: what it has left, and how many of ``jobs`` (one per
    request) fit it with their rounded requests, naming what the first misfit lacks."""
    if not slot.partitionable:
        return []
    resources = machine_resources(slot.ad)
    left = available(slot.ad, resources)
    has = ", ".join(amount(r, v)[0] for r, v in left.items())
    rounding = rounding_of(view.settings)
    misfits = []
    for job in jobs:
        need = requested(job.ad, slot.ad, resources, rounding)
        short = shortfall(need, left)
        if short is not None:
            misfits.append((job, short, need[short]))
    out = [f"partitionable: {has} left; {len(jobs) - len(misfits)} of {len(jobs)} request(s) fit what is left"]
    if misfits:
        first, res, asked = misfits[0]
        out.append(f"job {first.id} does not fit what is left ({_short(res, asked, left[res])})")
    return out


def leftover_lines(view: PoolView, job: Job) -> list[str]:
    """What the schedd does with the leftovers of the partitionable slots the cycle matched
    to ``job``'s submitter, as far as this job is concerned."""
    partitionable = {s.name for s in view.pool.slots if s.partitionable}
    mine = [m for m in view.result.matches if m.submitter == job.submitter and m.slot in partitionable]
    if not mine or view.match_of(job.id) is not None or job.status != 1:
        return []
    names = ", ".join(dict.fromkeys(m.slot for m in mine))
    if not view.settings.claim_leftovers:
        return [
            f"leftovers of {names} are not claimed: CLAIM_PARTITIONABLE_LEFTOVERS is false, so the job "
            f"waits for a later cycle"
        ]
    claimed = claim_matches(view.pool, view.result, view.settings, view.now)
    start = next((s for s in claimed.starts if s.job == job.id), None)
    if start is not None:
        return [
            f"after the cycle the schedd starts it on the leftovers of {names}, as {start.slot} "
            f"(CLAIM_PARTITIONABLE_LEFTOVERS)"
        ]
    slots = {s.name: s.ad for s in claimed.pool.slots}
    out = []
    for name in dict.fromkeys(m.slot for m in mine):
        ad = slots[name]
        resources = machine_resources(ad)
        need = requested(job.ad, ad, resources, rounding_of(view.settings))
        short = shortfall(need, available(ad, resources))
        if short is not None:
            out.append(
                f"leftovers of {name} after the schedd's claims do not fit it: "
                f"{_short(short, need[short], available(ad, resources)[short])}"
            )
        elif view.settings.claim_recycling_consider_limits and (limits := leftover_limits(job.ad, ad, view.now)):
            out.append(
                f"leftovers of {name} are enough for it, but the schedd starts no job naming a "
                f"concurrency limit ({limits}) on leftovers (CLAIM_RECYCLING_CONSIDER_LIMITS)"
            )
        elif (below := leftover_rank_below(job.ad, ad, view.now)) is not None and mutual_match(job.ad, ad, view.now):
            out.append(
                f"leftovers of {name} are enough for it, but the slot's Rank for it, {_n(below[0])}, is below "
                f"their CurrentRank {_n(below[1])}: the schedd starts no job there that the slot ranks lower"
            )
        else:
            out.append(f"leftovers of {name} are enough for it, but its Requirements or the slot's refuse it")
    return out


__all__ = ["amount", "fit_lines", "leftover_lines", "slot_lines"]
