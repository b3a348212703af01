"""Partitionable slots as a startd splits them (docs/negotiation.md, partitionable slots).

A partitionable slot advertises what is left of its machine share.  A claim on it
carves a *dynamic slot* sized by the job's request: ``RequestCpus``,
``RequestMemory`` (MB), ``RequestDisk`` (KB) and ``Request<Res>`` for every other
resource the slot lists in ``MachineResources`` (swap is never requested).  The
first three are first rewritten by the ``MODIFY_REQUEST_EXPR_REQUEST{CPUS,MEMORY,DISK}``
expressions, evaluated with the job as ``MY`` and the slot as ``TARGET`` (HTCondor's
defaults: ``quantize(RequestCpus, {1})``, ``quantize(RequestMemory, {128})``,
``quantize(RequestDisk, {1024})`` give or take data catalogs; see
docs/knobs.md).  The parent's resources shrink by the dynamic
slot's, and grow back when the dynamic slot goes away.

Everything here is pure: ads in, new ads out.  The ads written keep what they write and
what they keep as their own values even when one equals their layout's template
(:func:`with_values` by default): in a pool of many kinds of machines the
template's values coincide with some ads' and not others', and leaving the equal ones to
the template would give nearly every claim a new pattern of places (a new variant and new
rewrite plans); this way the ads of one variant written alike share one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import count
from typing import Iterator, Optional

from classad.ad import ClassAd, python_to_node
from classad.ast import Node
from classad.evaluate import evaluate_top, new_state
from classad.layout import plain_form
from classad.parser import parse_expr

DEFAULT_RESOURCES = ("Cpus", "Memory", "Disk")
# A job without a request for these asks for this much before rounding (docs/differences.md, N15).
_MISSING = {"cpus": 1, "memory": 0, "disk": 0}
_DEFAULT_ROUNDING = {
    "cpus": "quantize(RequestCpus, {1})",
    "memory": "quantize(RequestMemory, {128})",
    "disk": "quantize(RequestDisk, {TARGET.DiskQuantum ?: 1024})",
}
# Attributes a dynamic slot does not inherit from its parent.
_PARENT_ONLY = (
    "PartitionableSlot",
    "ChildCpus",
    "ChildMemory",
    "ChildDisk",
    "ChildName",
    "ChildState",
    "ChildActivity",
    "ChildRemoteUser",
    "ChildAccountingGroup",
    "NumDynamicSlots",
    "ChildCurrentRank",
    "ChildRemoteOwner",
    "ChildEnteredCurrentState",
    "ChildGPUs",
    "ChildSlotWeight",
)


def _zero_clock() -> float:
    return 0.0


@dataclass(frozen=True)
class Rounding:
    """The ``MODIFY_REQUEST_EXPR_REQUEST*`` expressions (None: leave that request as it is)."""

    cpus: Optional[Node] = None
    memory: Optional[Node] = None
    disk: Optional[Node] = None

    @classmethod
    def defaults(cls) -> "Rounding":
        """HTCondor's default rounding: cores unchanged, memory up to 128 MB, disk up to 1024 KB."""
        return cls(*(parse_expr(_DEFAULT_ROUNDING[k]) for k in ("cpus", "memory", "disk")))

    def of(self, resource: str) -> Optional[Node]:
        """The expression for ``resource`` (one of ``Cpus``, ``Memory``, ``Disk``), if any."""
        return getattr(self, resource.lower(), None)


def is_partitionable(ad: ClassAd) -> bool:
    """Whether ``PartitionableSlot`` is true in the ad."""
    return _value(ad, "PartitionableSlot") is True


def is_dynamic(ad: ClassAd) -> bool:
    """Whether the ad is a dynamic slot (``DynamicSlot`` true, or ``SlotType`` "Dynamic")."""
    slot_type = ad.plain("slottype")  # plain literals (or nothing) as they are, without a call
    if slot_type is not None and type(slot_type) not in _PLAIN:
        slot_type = _value(ad, "SlotType")
    dynamic = ad.plain("dynamicslot")
    if dynamic is not None and type(dynamic) not in _PLAIN:
        dynamic = _value(ad, "DynamicSlot")
    return dynamic is True or (type(slot_type) is str and slot_type.lower() == "dynamic")


def writes_kind(resources: tuple[str, ...]) -> bool:
    """Whether writing ``resources`` may change :func:`is_dynamic` of a slot ad (a resource
    named ``DynamicSlot`` or ``SlotType``)."""
    hit = _KIND_WRITES.get(resources)
    if hit is None:
        if len(_KIND_WRITES) > 1000:
            _KIND_WRITES.clear()
        hit = _KIND_WRITES[resources] = not _KIND_NAMES.isdisjoint(r.lower() for r in resources)
    return hit


_KIND_NAMES = frozenset(("dynamicslot", "slottype"))
# A list of resources -> whether it names one of those.
_KIND_WRITES: dict[tuple[str, ...], bool] = {}


def machine_resources(ad: ClassAd) -> tuple[str, ...]:
    """The resources a partitionable slot hands out: its ``MachineResources`` list without
    swap, else ``Cpus Memory Disk`` (plus ``GPUs`` when the ad has it)."""
    listed = _value(ad, "MachineResources")
    if type(listed) is str:
        names = _LISTED.get(listed)
        if names is None:
            if len(_LISTED) > 1000:
                _LISTED.clear()
            split = [n for n in re.split(r"[\s,]+", listed.strip()) if n and n.lower() != "swap"]
            names = _LISTED[listed] = tuple(dict.fromkeys(split))
        if names:
            return names
    extra = ("GPUs",) if ad.get_node("GPUs") is not None else ()
    return DEFAULT_RESOURCES + extra


def available(ad: ClassAd, resources: tuple[str, ...]) -> dict[str, float]:
    """What the slot has left of each resource (a missing or non-numeric value is 0)."""
    lnames = _LOWER.get(resources)
    if lnames is None:
        if len(_LOWER) > 1000:
            _LOWER.clear()
        lnames = _LOWER[resources] = tuple(r.lower() for r in resources)
    out: dict[str, float] = {}
    for res, stored in zip(resources, ad.stored_of(lnames)):  # read in one look
        if stored is not None and type(stored) not in _PLAIN:
            stored = plain_form(stored)
            if type(stored) not in _PLAIN:  # an expression: evaluated as _value does
                stored = _value(ad, res)
        out[res] = _number(stored, 0)
    return out


# A MachineResources list as written -> the resources it names (none: the defaults).
_LISTED: dict[str, tuple[str, ...]] = {}
# Resource names as given -> lower-case, per tuple of them.
_LOWER: dict[tuple[str, ...], tuple[str, ...]] = {}


def requested(job: ClassAd, slot: ClassAd, resources: tuple[str, ...], rounding: Rounding) -> dict[str, float]:
    """The dynamic slot ``job`` would get from ``slot``: each resource's request, rounded
    for cores, memory and disk.  A missing or non-numeric request counts as 1 core, 0 MB,
    0 KB (before rounding) or none of any other resource."""
    out: dict[str, float] = {}
    adjusted: Optional[ClassAd] = None
    for res in resources:
        attr = "Request" + res
        raw = _pair_value(job, slot, job.get_node(attr))
        v = _number(raw, _MISSING.get(res.lower(), 0))
        expr = rounding.of(res) if res.lower() in _MISSING else None
        if expr is not None:
            if raw is not v:  # the job's own value is not the request: a copy holds it
                if adjusted is None:
                    adjusted = ClassAd(job)
                adjusted[attr] = v
            my = adjusted if adjusted is not None else job
            v = _number(_pair_value(my, slot, expr), v)
        out[res] = v
    return out


def shortfall(request: dict[str, float], left: dict[str, float]) -> Optional[str]:
    """The first resource the request needs more of than is left, or None when it fits."""
    for res, need in request.items():
        if need > left.get(res, 0):
            return res
    return None


def split(
    parent: ClassAd,
    request: dict[str, float],
    name: str,
    then: Optional[dict[str, object]] = None,
    *,
    left: Optional[dict[str, float]] = None,
    deleted: tuple[str, ...] = (),
) -> tuple[ClassAd, ClassAd]:
    """``(parent after the split, the dynamic slot)``: the dynamic slot is a copy of the
    parent holding ``request``'s resources, named ``name``; the parent keeps the rest.
    With ``then``, the dynamic slot as :func:`with_values` then writes those values in it
    without the attributes ``deleted`` (one copy instead of two).  ``left`` is
    ``available(parent, tuple(request))`` when the caller has it already."""
    if left is None:
        left = available(parent, tuple(request))
    shrunk = with_values(parent, {res: _tidy(left[res] - need) for res, need in request.items()})
    # The dynamic slot: the parent's attributes but those of a partitionable slot, then its own.
    sizes = {res: _tidy(need) for res, need in request.items()}
    own: dict[str, object] = {**sizes, "Name": name, "DynamicSlot": True, "SlotType": "Dynamic"}
    slot_id = parent.plain("slotid")  # a plain literal is its value, with nothing to evaluate
    if slot_id is not None and type(slot_id) not in _PLAIN:
        slot_id = _value(parent, "SlotID")
    if type(slot_id) is int:
        own["ParentSlotId"] = slot_id
    for res, size in sizes.items():
        total = _TOTAL_SLOT.get(res)
        if total is None:
            if len(_TOTAL_SLOT) > 1000:
                _TOTAL_SLOT.clear()
            total = _TOTAL_SLOT[res] = (f"TotalSlot{res}", f"TotalSlot{res}".lower())
        if shrunk.plain(total[1]) is not None:  # (what ``total[0] in shrunk`` says)
            own[total[0]] = size
    # Writing ``then`` after ``own`` in one copy gives what a second copy would: a name
    # written twice keeps its first place and takes the second value.
    if then:
        return shrunk, with_values(shrunk, {**own, **then}, deleted=_PARENT_ONLY + deleted)
    return shrunk, with_values(shrunk, own, deleted=_PARENT_ONLY)


# A resource's name -> (``TotalSlot<Res>``, the same lower-case).
_TOTAL_SLOT: dict[str, tuple[str, str]] = {}


def split_writes(
    resources: tuple[str, ...], then: Optional[dict[str, object]] = None, deleted: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(written, dropped)``: the names under which the dynamic slot :func:`split` makes
    of a parent (for a request of ``resources``, with ``then`` and ``deleted``) may store
    a plain value written (``written``) or nothing (``dropped``) where the parent stores
    other.  Under any other name it stores what the parent stores."""
    key = (resources, tuple(then) if then else (), deleted if then else ())
    hit = _SPLIT_WRITES.get(key)
    if hit is None:
        if len(_SPLIT_WRITES) > 1000:
            _SPLIT_WRITES.clear()
        totals = tuple(f"TotalSlot{res}" for res in resources)
        hit = _SPLIT_WRITES[key] = (resources + totals + _CHILD_OWN + key[1], _PARENT_ONLY + key[2])
    return hit


# What split writes in each dynamic slot besides its resources (and their totals).
_CHILD_OWN = ("Name", "DynamicSlot", "SlotType", "ParentSlotId")
_SPLIT_WRITES: dict[tuple, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def give_back(parent: ClassAd, child: ClassAd, resources: tuple[str, ...]) -> ClassAd:
    """The parent after the dynamic slot ``child`` went away: its resources are back."""
    left, held = available(parent, resources), available(child, resources)
    return with_values(parent, {res: _tidy(left[res] + held[res]) for res in resources})


def consumption_policy(ad: ClassAd) -> Optional[tuple[str, ...]]:
    """The resources of a partitionable slot that advertises a consumption policy, as a
    startd with ``CONSUMPTION_POLICY = True`` does: ``MachineResources`` and a
    ``Consumption<Res>`` for each resource listed there except swap.  None otherwise."""
    if not is_partitionable(ad) or ad.get_node("MachineResources") is None:
        return None
    resources = machine_resources(ad)
    if all(ad.get_node("Consumption" + res) is not None for res in resources):
        return resources
    return None


def consumption(slot: ClassAd, job: ClassAd, resources: tuple[str, ...]) -> Optional[dict[str, float]]:
    """What a match of ``job`` takes from ``slot`` under its consumption policy: each
    ``Consumption<Res>`` with the slot as ``MY`` and the job as ``TARGET``; None when one
    is not a non-negative number, or when the slot has too little of a resource left."""
    out: dict[str, float] = {}
    for res in resources:
        v = _pair_value(slot, job, slot.get_node("Consumption" + res))
        if type(v) not in (int, float) or not 0 <= v < float("inf"):  # type: ignore[operator]
            return None
        out[res] = v  # type: ignore[assignment]
    return out if shortfall(out, available(slot, resources)) is None else None


def jobs_that_fit(slot: ClassAd, job: ClassAd) -> int:
    """How many jobs like ``job`` the slot's ``Cpus`` and ``Memory`` hold, by the requests as
    the job states them (``NEGOTIATOR_DEPTH_FIRST``): ``min(Cpus // RequestCpus, Memory //
    RequestMemory)``; a missing or zero request does not limit, and at least 1."""
    counts = []
    for res, default in (("Cpus", 1), ("Memory", 0)):
        need = _number(_pair_value(job, slot, job.get_node("Request" + res)), default)
        have = _number(_value(slot, res), 0)
        if need > 0:
            counts.append(int(have // need))
    return max(1, min(counts, default=1))


def child_name(parent_name: str, number: int) -> str:
    """``slot1@host`` -> ``slot1_<number>@host``, as a startd names its dynamic slots."""
    head, at, host = parent_name.partition("@")
    return f"{head}_{number}{at}{host}"


def child_names(parent_name: str, start: int) -> Iterator[tuple[int, str]]:
    """``(number, child_name(parent_name, number))`` for each number from ``start`` on."""
    head, at, host = parent_name.partition("@")
    for number in count(start):
        yield number, f"{head}_{number}{at}{host}"


def parent_name(name: str) -> Optional[str]:
    """``slot1_3@host`` -> ``slot1@host``; None for a name without the ``_<number>`` part."""
    head, at, host = name.partition("@")
    m = re.fullmatch(r"(.+)_\d+", head)
    return f"{m.group(1)}{at}{host}" if m else None


def put(ad: ClassAd, values: dict[str, object]) -> None:
    """``ad.update(values)`` for a dict of Python values, without the generic mapping update."""
    for name, value in values.items():
        ad.set_node(name, python_to_node(value))


def with_values(
    ad: ClassAd, values: dict[str, object], *, deleted: tuple[str, ...] = (), equal_values: bool = False
) -> ClassAd:
    """A copy of ``ad`` without the attributes ``deleted``, then with ``values`` (Python
    values) written: a compacted ad's copy stays compacted, as the slot records compact it
    (``equal_values``: see :meth:`classad.ClassAd.compact`; by default a value written or
    kept stays the copy's own even when it equals the template's, as this module's
    docstring explains), without a dict of all its attributes on the way
    (:meth:`classad.adcore.AdCore.rewritten`)."""
    nodes = list(values.values())
    if not _PLAIN_TYPES.issuperset(map(type, nodes)):
        nodes = [v if type(v) in _PLAIN else python_to_node(v) for v in nodes]
    return ad.rewritten(tuple(values), nodes, deleted=deleted, equal_values=equal_values)  # type: ignore[no-any-return]


def _tidy(v: float) -> float:
    """Whole numbers as integers (``Cpus = 3``, not ``3.0``)."""
    return int(v) if type(v) is float and v.is_integer() and abs(v) < 2**53 else v


def _number(v: object, default: float) -> float:
    """``v`` when it is a non-negative finite number (not a boolean), else ``default``."""
    if type(v) in (int, float) and v == v and 0 <= v < float("inf"):  # type: ignore[operator]
        return v  # type: ignore[return-value]
    return default


def _value(ad: ClassAd, attr: str) -> object:
    stored = ad.plain(attr.lower())  # a plain literal is its value, with nothing to evaluate
    if stored is None or type(stored) in _PLAIN:
        return stored
    node = ad.get_node(attr)
    if node is None:
        return None
    return evaluate_top(node, ad, new_state(ad, clock=_zero_clock))


_PLAIN = (bool, int, float, str)
_PLAIN_TYPES = frozenset(_PLAIN)


def _pair_value(my: ClassAd, target: ClassAd, node: Optional[Node]) -> object:
    if node is None:
        return None
    return evaluate_top(node, my, new_state(my, target, clock=_zero_clock))


__all__ = [
    "DEFAULT_RESOURCES",
    "Rounding",
    "available",
    "child_name",
    "child_names",
    "give_back",
    "is_dynamic",
    "is_partitionable",
    "consumption",
    "consumption_policy",
    "jobs_that_fit",
    "machine_resources",
    "parent_name",
    "put",
    "requested",
    "shortfall",
    "split_writes",
    "split",
    "with_values",
    "writes_kind",
]
