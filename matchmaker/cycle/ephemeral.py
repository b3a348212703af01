"""Ephemeral attributes: what the negotiator adds to ads while it negotiates (docs/negotiation.md, ephemeral attributes),
and the per-cycle facts about users they come from (EUPs frozen, usage live).

The ads read from files are never modified.  The cycle works on copies (cheap:
expression trees are shared) of type :class:`NegotiationAd`, which can record
the attribute names an evaluation reads from it (the matcher memoizes results
on those reads).

* A **request** (job) copy gets ``SubmitterUserPrio``/``SubmittorPrio`` (the EUP,
  fixed for the cycle), ``SubmitterUserResourcesInUse`` (usage *now*, refreshed
  before every match attempt), ``SubmitterNegotiatingGroup``,
  ``SubmitterAutoregroup``, and with groups ``SubmitterGroup``,
  ``SubmitterGroupResourcesInUse``, ``SubmitterGroupQuota``.
* A **slot** copy gets, when preemption is considered and the slot is claimed,
  ``RemoteUserPrio``, ``RemoteUserFloor`` and ``RemoteUserResourcesInUse``: the
  last is the *expression* ``ResourcesInUseByUser("<user>")``, so it reads the
  usage at evaluation time.  With groups also ``RemoteGroup``,
  ``RemoteGroupResourcesInUse`` (``ResourcesInUseByUsersGroup``) and
  ``RemoteGroupQuota``; with ``NEGOTIATOR_CROSS_SLOT_PRIOS`` the same set under
  ``slot<N>_`` names.  ``CurrentRank`` becomes ``PreemptingRank`` when present.

The two ClassAd functions are registered in the language's registry; they find
the live usage through the evaluation state (:class:`MatchState`), never through
a global, and give Error outside a negotiation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping, Optional, Protocol

from classad import ast
from classad.ad import ClassAd
from classad.evaluate import EvalState, default_strict, evaluate_top, new_state
from classad.functions.registry import register
from classad.layout import SharedAttrs, Stored, plain_form, plain_of
from classad.values import ERROR

from ..pool.ads import Slot

ROOT_GROUP = "<none>"


class SharedEntries(dict):  # type: ignore[type-arg]
    """The ``Remote*`` entries (lower-case name -> entry) of the annotated copies of one
    user's claimed slots that add the same other entries (``SlotWeight``...), one table for them all (see
    :mod:`matchmaker.cycle.slot_carry`): rewritten once for them all when the user's
    entries change; ``entries``: the list it holds (:func:`remote_entries`), ``code``: its place
    among the tables of a run.  A copy never
    writes into it: a write gives the copy a table of its own first."""

    __slots__ = ("entries", "code")
    entries: Any
    code: int


class _RecordingAttrs:
    """An ad's attribute table that can log the names looked up in it.

    The language's evaluator reads attributes straight from this table on its hot path
    (``_attrs.get``) as well as through ``AdCore.lookup_node``, so the log sits here,
    where every lookup passes, rather than on a method the evaluator may bypass.

    The table reads through to the original ad's storage (``base``, never written) and
    keeps only what the cycle adds or replaces (``own``): a cycle's copies of 10,000 slot
    ads then cost a few attributes each, not a dictionary of every attribute.  It reads
    like the ``dict`` of :class:`~classad.ad.ClassAd` (insertion order: the base's names,
    then new ones)."""

    __slots__ = ("base", "own", "reads")

    def __init__(self, base: Any) -> None:
        self.base = base
        self.own: dict[str, Any] = {}
        self.reads: Optional[list[str]] = None

    def get(self, key: Any, default: Any = None) -> Any:
        if self.reads is not None:
            self.reads.append(key)
        entry = self.own.get(key)
        if entry is None:
            entry = self.base.get(key)
        return default if entry is None else entry

    def __getitem__(self, key: Any) -> Any:
        if self.reads is not None:
            self.reads.append(key)
        entry = self.own.get(key)
        return self.base[key] if entry is None else entry

    def plain(self, key: str) -> Stored:
        """What :meth:`classad.ClassAd.plain` gives for ``key``, read as :meth:`get` reads."""
        if self.reads is not None:
            self.reads.append(key)
        entry = self.own.get(key)
        return plain_of(self.base, key) if entry is None else plain_form(entry[1])

    def __contains__(self, key: object) -> bool:
        if self.reads is not None:
            self.reads.append(key)  # type: ignore[arg-type]
        return key in self.own or key in self.base

    def __setitem__(self, key: str, entry: Any) -> None:
        own = self.own
        if type(own) is not dict:  # shared (SharedEntries): not written
            own = self.own = dict(own)
        own[key] = entry

    def unshare(self) -> dict[str, Any]:
        """The table of the copy's own entries, its own (not shared) from now on."""
        own = self.own
        if type(own) is not dict:
            own = self.own = dict(own)
        return own

    def __delitem__(self, key: str) -> None:
        merged = dict(self.items())
        del merged[key]
        self.base, self.own = {}, merged

    def keys(self) -> list[str]:
        own = self.own
        return [*self.base.keys(), *(k for k in own if k not in self.base)]

    def __iter__(self) -> Any:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.base) + sum(1 for k in self.own if k not in self.base)

    def items(self) -> list[tuple[str, Any]]:
        own, base = self.own, self.base
        return [(k, own[k] if k in own else base[k]) for k in self.keys()]

    def values(self) -> list[Any]:
        return [entry for _, entry in self.items()]


class NegotiationAd(ClassAd):
    """A copy of an ad used during negotiation; records attribute reads when asked.

    ``reads`` is None normally; set it to a list and every lookup of a name in this
    ad appends the (lower-case) name, whether or not the ad has it.  The matcher's
    memo (:mod:`matchmaker.cycle.evaluator`) is keyed on these reads, so a lookup that
    escaped the log would make two different evaluations look alike.
    """

    __slots__ = ()

    def __init__(self, source: Optional[ClassAd] = None) -> None:
        super().__init__(source)  # shares a compacted source's storage, copies a dict
        self._attrs = _RecordingAttrs(self._attrs)  # type: ignore[assignment]

    def set_entries(
        self, entries: Iterable[tuple[str, tuple[str, ast.Node]]], names: Optional[Mapping[str, str]] = None
    ) -> None:
        """Store each ``(lower-case name, (spelling, node))``, as :meth:`set_node` would
        (an existing spelling is kept).  The entry itself is stored when the spelling is
        its own, so copies given one list of entries share them.  ``names``: the source
        ad's names, lower-case -> as written (see :func:`_spelled`), if known."""
        table: _RecordingAttrs = self._attrs  # type: ignore[assignment]
        base, own = table.base, table.unshare()
        if names is None:
            for key, entry in entries:
                old = own.get(key) or base.get(key)
                own[key] = entry if not old or old[0] == entry[0] else (old[0], entry[1])
            return
        for key, entry in entries:
            old = own.get(key)
            spelling = old[0] if old else names.get(key)
            own[key] = entry if spelling is None or spelling == entry[0] else (spelling, entry[1])

    def plain(self, lname: str) -> Stored:
        """:meth:`ClassAd.plain <classad.adcore.AdCore.plain>`, read straight through the copy's
        own entries and its source's storage (a table reads every row of a column so)."""
        attrs: _RecordingAttrs = self._attrs  # type: ignore[assignment]
        if attrs.reads is not None:
            attrs.reads.append(lname)
        entry = attrs.own.get(lname)
        if entry is not None:
            return plain_form(entry[1])
        base = attrs.base
        return base.plain(lname) if type(base) is SharedAttrs else plain_of(base, lname)

    def plains(self, lnames: tuple[str, ...]) -> list[Stored]:
        """:meth:`plain` of each of ``lnames``, in one call (a table re-reading a row)."""
        attrs: _RecordingAttrs = self._attrs  # type: ignore[assignment]
        if attrs.reads is not None:
            attrs.reads.extend(lnames)
        base = attrs.base
        out = base.plains(lnames) if type(base) is SharedAttrs else [plain_of(base, k) for k in lnames]
        own = attrs.own
        for key in own.keys() & lnames:  # the copy's own entries (names are distinct)
            entry = own[key]
            if entry is not None:
                out[lnames.index(key)] = plain_form(entry[1])
        return out

    def put_entries(self, entries: Mapping[str, tuple[str, ast.Node]]) -> None:
        """Store each ``lower-case name -> (spelling, node)`` entry as it is, over what the
        copy holds under that name: for a caller that knows the copy spells the names so."""
        self._attrs.unshare().update(entries)  # type: ignore[union-attr]

    def holds_entries(self, entries: Iterable[tuple[str, tuple[str, ast.Node]]]) -> bool:
        """Whether the copy holds each ``(lower-case name, entry)`` as that very entry."""
        own = self._attrs.own  # type: ignore[union-attr]
        return all(own.get(key) is entry for key, entry in entries)

    @property
    def reads(self) -> Optional[list[str]]:
        """The list lookups are appended to, or None when not recording."""
        return self._attrs.reads  # type: ignore[union-attr]

    @reads.setter
    def reads(self, value: Optional[list[str]]) -> None:
        self._attrs.reads = value  # type: ignore[union-attr]


class LiveUsage:
    """Weighted usage per user and per group node, changing as matches are made."""

    def __init__(self, usage: Mapping[str, float] = {}, group_of: Optional[Callable[[str], str]] = None) -> None:
        self.user: dict[str, float] = {k: float(v) for k, v in usage.items()}
        self._group_of = group_of
        self.group: dict[str, float] = {}
        for name, amount in self.user.items():
            g = self.group_of(name)
            self.group[g] = self.group.get(g, 0.0) + amount

    def group_of(self, name: str) -> str:
        """The group node a user is charged to (``<none>`` without groups)."""
        return ROOT_GROUP if self._group_of is None else self._group_of(name)

    def of(self, name: str) -> float:
        """Current weighted usage of ``name``."""
        return self.user.get(name, 0.0)

    def of_group(self, group: str) -> float:
        """Current weighted usage of one group node (not its subtree)."""
        return self.group.get(group, 0.0)

    def add(self, name: str, weight: float) -> None:
        """Charge a new match (accountant AddMatch)."""
        self.user[name] = self.user.get(name, 0.0) + weight
        g = self.group_of(name)
        self.group[g] = self.group.get(g, 0.0) + weight

    def remove(self, name: str, weight: float) -> None:
        """End a match (accountant RemoveMatch); usage never goes below 0."""
        self.user[name] = max(0.0, self.user.get(name, 0.0) - weight)
        g = self.group_of(name)
        self.group[g] = max(0.0, self.group.get(g, 0.0) - weight)


# ---- priorities (frozen for the cycle) -------------------------------------------------------


class Priorities(Protocol):
    """What the cycle asks the accountant (values frozen at cycle start)."""

    def eup(self, name: str) -> float: ...
    def floor(self, name: str) -> float: ...
    def ceiling(self, name: str) -> float: ...


@dataclass
class StaticPriorities:
    """Priorities given directly (tests, examples): EUP per name, else 0.5 x default factor."""

    eups: Mapping[str, float] = field(default_factory=dict)
    default_factor: float = 1000.0
    floors: Mapping[str, float] = field(default_factory=dict)
    ceilings: Mapping[str, float] = field(default_factory=dict)

    def eup(self, name: str) -> float:
        return float(self.eups.get(name, 0.5 * self.default_factor))

    def floor(self, name: str) -> float:
        return float(self.floors.get(name, 0.0))

    def ceiling(self, name: str) -> float:
        return float(self.ceilings.get(name, -1.0))


class MatchState(EvalState):
    """Evaluation state of the matchmaker: a fixed clock, the live usage, and a flag
    raised when an evaluation read something that changes during the cycle."""

    __slots__ = ("usage", "volatile")

    def __init__(self, usage: Optional[LiveUsage], now: float) -> None:
        super().__init__(None, None, strict=default_strict(), clock=lambda: now)
        self.usage = usage
        self.volatile = False


def _in_use_by_user(ctx: object, name: object) -> object:
    """``ResourcesInUseByUser("u@d")``: u's weighted usage at evaluation time."""
    state = ctx.state  # type: ignore[attr-defined]
    usage = getattr(state, "usage", None)
    if usage is None or type(name) is not str:
        return ERROR
    state.volatile = True
    return usage.of(name)


def _in_use_by_group(ctx: object, name: object) -> object:
    """``ResourcesInUseByUsersGroup("g.u@d")``: usage of the group u is charged to."""
    state = ctx.state  # type: ignore[attr-defined]
    usage = getattr(state, "usage", None)
    if usage is None or type(name) is not str:
        return ERROR
    state.volatile = True
    return usage.of_group(usage.group_of(name))


# Both read the usage at evaluation time, so any two calls with the same argument in one
# evaluation agree: the columnar engine may call them once per distinct argument.
_in_use_by_user.stable_in_evaluation = True  # type: ignore[attr-defined]
_in_use_by_group.stable_in_evaluation = True  # type: ignore[attr-defined]
register("ResourcesInUseByUser", _in_use_by_user, 1, 1, kind="eager")
register("ResourcesInUseByUsersGroup", _in_use_by_group, 1, 1, kind="eager")


def _literal(value: object) -> ast.Literal:
    return ast.Literal(value)


# ---- requests ----------------------------------------------------------------------------


def annotate_request(
    job_ad: ClassAd,
    *,
    eup: float,
    usage: float,
    negotiating_group: Optional[str] = None,
    autoregroup: bool = False,
    group: Optional[str] = None,
    group_usage: Optional[float] = None,
    group_quota: Optional[float] = None,
) -> NegotiationAd:
    """A copy of a job ad carrying the Submitter* attributes of docs/negotiation.md (on requests).

    Written as :meth:`~classad.adcore.AdCore.set_node` writes each, in the same order
    (an existing spelling kept), straight into the fresh copy's own entries: nothing is
    recorded as read (a new copy records nothing) and nothing else is in its table yet."""
    req = NegotiationAd(job_ad)
    table: _RecordingAttrs = req._attrs  # type: ignore[assignment]
    base, own = table.base, table.unshare()
    prio = ast.Literal(float(eup))
    nodes: tuple[ast.Node, ...] = (
        ast.Literal(negotiating_group or ROOT_GROUP),
        ast.Literal(bool(autoregroup)),
        prio,
        prio,
        ast.Literal(float(usage)),
    )
    if group is not None:
        nodes += (ast.Literal(group), ast.Literal(float(group_usage or 0.0)))
        if group_quota is not None:
            nodes += (ast.Literal(float(group_quota)),)
    for (key, name), node in zip(_REQUEST_NAMES, nodes):  # (as many names as nodes)
        old = base.get(key)
        own[key] = (old[0] if old else name, node)
    return req


# The names annotate_request writes into a request, in order.
REQUEST_NAMES = (
    "SubmitterNegotiatingGroup",
    "SubmitterAutoregroup",
    "SubmittorPrio",
    "SubmitterUserPrio",
    "SubmitterUserResourcesInUse",
    "SubmitterGroup",
    "SubmitterGroupResourcesInUse",
    "SubmitterGroupQuota",
)
# The same as (lower-case, as written).
_REQUEST_NAMES = tuple((name.lower(), name) for name in REQUEST_NAMES)


@dataclass(frozen=True)
class GroupContext:
    """Where a pie call sits in the group-quota loop: what its requests are told (docs/negotiation.md, on requests)."""

    negotiating_group: str = ROOT_GROUP  # SubmitterNegotiatingGroup
    autoregroup: bool = False  # SubmitterAutoregroup
    quotas: Optional[Mapping[str, float]] = None  # SubmitterGroupQuota per group; None: no groups


def annotate_for(
    job_ad: ClassAd, submitter: str, eup: float, usage: LiveUsage, ctx: Optional[GroupContext] = None
) -> NegotiationAd:
    """The request copy for ``submitter``'s job in a pie call with context ``ctx``."""
    if ctx is None or ctx.quotas is None:
        return annotate_request(
            job_ad,
            eup=eup,
            usage=usage.of(submitter),
            negotiating_group=ctx.negotiating_group if ctx else None,
            autoregroup=bool(ctx and ctx.autoregroup),
        )
    group = usage.group_of(submitter)
    return annotate_request(
        job_ad,
        eup=eup,
        usage=usage.of(submitter),
        negotiating_group=ctx.negotiating_group,
        autoregroup=ctx.autoregroup,
        group=group,
        group_usage=usage.of_group(group),
        group_quota=ctx.quotas.get(group),
    )


def refresh_request(req: ClassAd, usage: float, group_usage: Optional[float] = None) -> None:
    """Update the usage attributes of a request before the next match attempt.  A copy
    not recording its reads (:class:`NegotiationAd`) is written straight into its own
    entries, as :meth:`~classad.adcore.AdCore.set_node` writes them."""
    table: Any = req._attrs
    if type(table) is _RecordingAttrs and table.reads is None:
        own, base = table.unshare(), table.base
        old = own.get("submitteruserresourcesinuse") or base.get("submitteruserresourcesinuse")
        own["submitteruserresourcesinuse"] = (
            old[0] if old else "SubmitterUserResourcesInUse",
            ast.Literal(float(usage)),
        )
        group = own.get("submittergroup") or base.get("submittergroup")
        if group_usage is not None and group is not None and group[1] is not None:
            old = own.get("submittergroupresourcesinuse") or base.get("submittergroupresourcesinuse")
            own["submittergroupresourcesinuse"] = (
                old[0] if old else "SubmitterGroupResourcesInUse",
                ast.Literal(float(group_usage)),
            )
        return
    req.set_node("SubmitterUserResourcesInUse", _literal(float(usage)))
    if group_usage is not None and req.get_node("SubmitterGroup") is not None:
        req.set_node("SubmitterGroupResourcesInUse", _literal(float(group_usage)))


# ---- slots ---------------------------------------------------------------------------------

_REMOTE_SOURCES = ("PreemptingAccountingGroup", "PreemptingUser", "AccountingGroup", "RemoteUser")


def _first_string(ad: ClassAd, names: Iterable[str], now: float) -> Optional[str]:
    for name in names:
        node = ad.get_node(name)
        if node is None:
            continue
        v = evaluate_top(node, ad, new_state(ad, clock=lambda: now))
        if type(v) is str and v:
            return v
    return None


@lru_cache(maxsize=4096)
def _usage_call(function: str, user: str) -> ast.Call:
    """``function("<user>")``; one shared node per user, so slots of one user form one group."""
    return ast.call(function, (_literal(user),))


RemoteEntries = tuple[tuple[str, tuple[str, ast.Node]], ...]


def _remote_entries(
    prefix: str,
    user: str,
    eup_of: Callable[[str], float],
    floor_of: Callable[[str], float],
    groups: Optional["GroupView"],
) -> RemoteEntries:
    """The ``Remote*`` attributes of a slot claimed by ``user``, as ``(key, (name, node))``."""
    out = [
        (prefix + "RemoteUserPrio", _literal(float(eup_of(user)))),
        (prefix + "RemoteUserFloor", _literal(float(floor_of(user)))),
        (prefix + "RemoteUserResourcesInUse", _usage_call("ResourcesInUseByUser", user)),
    ]
    if groups is not None:
        group = groups.group_of(user)
        out.append((prefix + "RemoteGroup", _literal(group)))
        out.append((prefix + "RemoteGroupResourcesInUse", _usage_call("ResourcesInUseByUsersGroup", user)))
        quota = groups.previous_quota(group)
        if quota is not None:
            out.append((prefix + "RemoteGroupQuota", _literal(float(quota))))
    return tuple((name.lower(), (name, node)) for name, node in out)


def remote_entries(
    prefix: str,
    user: str,
    eup_of: Callable[[str], float],
    floor_of: Callable[[str], float],
    groups: Optional["GroupView"],
    memo: Optional[dict[tuple[str, str], RemoteEntries]],
) -> RemoteEntries:
    """The ``Remote*`` entries :func:`annotate_slot` gives a slot claimed by ``user`` under
    ``prefix``, as ``(lower-case name, (name, node))``; ``memo`` keeps each user's for the
    cycle (one tuple shared by all their slots)."""
    if memo is None:
        return _remote_entries(prefix, user, eup_of, floor_of, groups)
    entries = memo.get((prefix, user))
    if entries is None:
        entries = memo[(prefix, user)] = _remote_entries(prefix, user, eup_of, floor_of, groups)
    return entries


_SPELLED: dict[int, tuple[tuple[str, ...], dict[str, str]]] = {}


def _spelled(ad: ClassAd) -> Optional[dict[str, str]]:
    """The ad's names, lower-case -> as written, when a layout shares them with other ads
    (:meth:`ClassAd.spellings` gives the layout's one tuple): one map per layout, so a
    copy of the ad learns which names it holds without a lookup each.  None otherwise."""
    spellings = ad.spellings()
    if spellings is not ad.spellings():
        return None  # the ad's own names, listed afresh
    hit = _SPELLED.get(id(spellings))
    if hit is None or hit[0] is not spellings:
        if len(_SPELLED) > 4096:
            _SPELLED.clear()
        hit = _SPELLED[id(spellings)] = (spellings, {name.lower(): name for name in spellings})
    return hit[1]


class GroupView:
    """What slot annotation needs to know about groups (only when groups exist)."""

    def __init__(self, group_of: Callable[[str], str], previous_quotas: Optional[Mapping[str, float]] = None) -> None:
        self.group_of = group_of
        self._quotas = previous_quotas

    def previous_quota(self, group: str) -> Optional[float]:
        """The group's quota from the previous cycle's last round (None on the first cycle)."""
        return None if self._quotas is None else self._quotas.get(group)


def annotate_slot(
    slot: Slot,
    *,
    now: float,
    eup_of: Callable[[str], float],
    floor_of: Callable[[str], float] = lambda _u: 0.0,
    consider_preemption: bool = True,
    cross_slot_prios: bool = False,
    resource_prefix: str = "slot",
    slot_weight_expr: Optional[ast.Node] = None,
    force_slot_weight: bool = False,
    groups: Optional[GroupView] = None,
    memo: Optional[dict[tuple[str, str], RemoteEntries]] = None,
) -> NegotiationAd:
    """A copy of a slot ad prepared for this cycle (docs/negotiation.md, reading the pool and on slots).
    ``memo`` (a dict kept for one cycle) shares each remote user's attributes among their slots."""
    ad = slot.ad
    copy = NegotiationAd(ad)
    # ``plain`` first: it tells a missing attribute without making a node
    if ad.plain("negotiatorrequirements") is not None:
        copy.set_node("Requirements", ad.get_node("NegotiatorRequirements"))  # type: ignore[arg-type]
    if slot_weight_expr is not None and (force_slot_weight or ad.plain("slotweight") is None):
        copy.set_node("SlotWeight", slot_weight_expr)
    if not consider_preemption:
        return copy
    names = _spelled(ad) if slot.remote or cross_slot_prios else None
    if slot.remote:
        copy.set_entries(remote_entries("", slot.remote, eup_of, floor_of, groups, memo), names)
    if ad.plain("preemptingrank") is not None:
        copy.set_node("CurrentRank", ad.get_node("PreemptingRank"))  # type: ignore[arg-type]
    if cross_slot_prios:
        total = evaluate_top(ad.get_node("TotalSlots") or _literal(0), ad, new_state(ad, clock=lambda: now))
        count = total if type(total) is int else 0
        for n in range(1, count + 1):
            prefix = f"{resource_prefix}{n}_"
            user = _first_string(ad, [prefix + s for s in _REMOTE_SOURCES], now)
            if user:
                copy.set_entries(remote_entries(prefix, user, eup_of, floor_of, groups, memo), names)
    return copy


__all__ = [
    "REQUEST_NAMES",
    "ROOT_GROUP",
    "GroupContext",
    "GroupView",
    "LiveUsage",
    "MatchState",
    "NegotiationAd",
    "Priorities",
    "StaticPriorities",
    "annotate_for",
    "annotate_request",
    "annotate_slot",
    "refresh_request",
    "remote_entries",
    "SharedEntries",
]
