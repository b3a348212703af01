"""The pool of one negotiation cycle: slots, jobs and submitters read from ad files.

Design: ads are read once and never modified; everything the cycle needs from
them (slot weight, the user a claim is charged to, a job's submitter and its
place in the schedd's queue) is extracted here into small records that keep a
reference to the ad and to the ``file:line`` it came from, so later messages can
point at the ad.  Problems that make an ad unusable for negotiation (no
``ClusterId``, no ``User``/``Owner``, no ``Name``) raise :class:`FormatError`;
problems HTCondor tolerates (no ``Requirements``, which simply never matches)
become warnings.

Accounting principals (docs/negotiation.md, group membership, seed "Group Accounting"): a job's submitter
is its accounting user within its accounting group when set, else its ``User``;
jobs of different owners with the same accounting user are one submitter, run
first-in first-out.  With an accounting-group map (``use FEATURE :
AssignAccountingGroup``) each job's group is checked as the schedd would at
submit time: a refused job never enters the queue and is listed in
:attr:`Pool.refused` with the reason.

Slot weight (docs/negotiation.md, charging usage): ``SlotWeight`` evaluated in the slot ad, or the
``SLOT_WEIGHT`` expression when the ad has none or ``FORCE_NEGOTIATOR_SLOT_WEIGHT``
is set; a missing, non-numeric or negative value counts as 1.0, and with
``NEGOTIATOR_USE_SLOT_WEIGHTS = false`` every slot weighs 1.0.
"""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, not_
from typing import IO, Any, Callable, Iterable, Iterator, Optional, Sequence, Union

from classad import ParserType
from classad.ad import ClassAd
from classad.ast import AttrRef, Literal, Node
from classad.bulk import collector_paused
from classad.errors import FormatError
from classad.evaluate import EvalState, evaluate_top, new_state
from classad.formats import read_source
from classad.formats.detect import detect
from classad.formats.old_format import forget_lines
from classad.formats.sources import STDIN_NAME, open_input, open_source, source_name
from classad.parser import parse_expr
from classad.values import ERROR, truthiness

from ..groups.membership import GroupMapping

# States in which a slot's claim is charged to its user (docs/negotiation.md, charging usage, CheckMatches).
CHARGED_STATES = frozenset(("claimed", "preempting", "matched"))
IDLE, RUNNING = 1, 2
_SLOT_WEIGHT = parse_expr("Cpus")


@dataclass(eq=False, slots=True)
class Slot:
    """One slot ad and what the cycle reads from it."""

    ad: ClassAd
    name: str
    # Its place in the slot list, the last sort tie-breaker: increasing along the list and
    # its position there, but for a simulation, whose slots keep theirs when one before
    # them goes away (only the order counts).
    index: int
    weight: float  # SlotWeight, already defaulted (see module docstring)
    remote: Optional[str]  # whose claim preemption would end (docs/negotiation.md, candidate slots)
    customer: Optional[str]  # whom the claim is charged to (AccountingGroup, else RemoteUser)
    state: str  # the State attribute, lower-cased ("" when absent)
    partitionable: bool
    source: str  # "file:line" of the ad

    @property
    def charged(self) -> bool:
        """Whether the claim counts as current usage of ``customer`` (docs/negotiation.md, charging usage)."""
        return self.customer is not None and (self.state in CHARGED_STATES or not self.state)

    def at(self, index: int) -> "Slot":
        """This record with index ``index`` (itself when it has it)."""
        if index == self.index:
            return self
        return Slot(
            self.ad,
            self.name,
            index,
            self.weight,
            self.remote,
            self.customer,
            self.state,
            self.partitionable,
            self.source,
        )


# File names of ``file:line`` sources, one string per file for every job read from it.
_FILES: dict[str, str] = {}


class Job:
    """One job ad and its identity in the queue."""

    __slots__ = ("ad", "cluster", "proc", "submitter", "status", "_file", "_line", "_id")

    def __init__(self, ad: ClassAd, cluster: int, proc: int, submitter: str, status: int, source: str) -> None:
        self.ad = ad
        self.cluster = cluster
        self.proc = proc
        self.submitter = submitter  # accounting principal: AccountingGroup@domain, else User
        self.status = status  # JobStatus (1 idle, 2 running, ...)
        # ``source`` ("file:line") is kept as a shared file name and a line number: a
        # queue of 100,000 jobs read from one file then holds the name once.
        self._id: Optional[str] = None  # ``id``, made when first asked for
        file, colon, line = source.rpartition(":")
        if colon and line.isdigit():
            if len(_FILES) >= 1024:
                _FILES.clear()
            self._file: str = _FILES.setdefault(file, file)
            self._line: Optional[int] = int(line)
        else:
            self._file, self._line = source, None

    def with_ad(self, ad: ClassAd, status: int) -> "Job":
        """This job's record for ``ad`` (a rewritten copy of its ad) and ``status``: the same
        identity, submitter and source, copied rather than read again."""
        job = Job.__new__(Job)
        job.ad, job.cluster, job.proc, job.submitter, job.status = ad, self.cluster, self.proc, self.submitter, status
        job._file, job._line, job._id = self._file, self._line, self._id
        return job

    @property
    def source(self) -> str:
        """``file:line`` of the ad (or another description of where it came from)."""
        return self._file if self._line is None else f"{self._file}:{self._line}"

    @property
    def id(self) -> str:
        """``ClusterId.ProcId``."""
        made = self._id
        if made is None:
            made = self._id = f"{self.cluster}.{self.proc}"
        return made

    def __repr__(self) -> str:
        return (
            f"Job(ad={self.ad!r}, cluster={self.cluster}, proc={self.proc}, submitter={self.submitter!r}, "
            f"status={self.status}, source={self.source!r})"
        )


@dataclass
class Pool:
    """Slots and jobs of one cycle plus the warnings found while reading them."""

    slots: list[Slot]
    jobs: list[Job]
    warnings: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (job id, reason): never queued

    def idle_jobs(self) -> list[Job]:
        """Jobs that the schedd would offer (JobStatus idle)."""
        return [j for j in self.jobs if j.status == IDLE]

    def submitter_counts(self) -> dict[str, tuple[int, int]]:
        """``{submitter: (idle, running)}`` in first-seen order."""
        counts: dict[str, list[int]] = {}
        for job in self.jobs:
            c = counts.setdefault(job.submitter, [0, 0])
            if job.status == IDLE:
                c[0] += 1
            elif job.status == RUNNING:
                c[1] += 1
        return {name: (c[0], c[1]) for name, c in counts.items()}


# ---- reading ad files ---------------------------------------------------------------


# Where ads are read from: a path (``"-"`` is standard input) or an open file object.
AdSource = Union[str, os.PathLike, IO[Any]]


def read_ads(source: AdSource) -> list[tuple[ClassAd, str]]:
    """Read an ad file in any format: old (``condor_status -l``), new (``[ ... ]``), JSON
    (``-json``) or XML (``-xml``), told apart by its first characters; gzipped or not.

    ``source`` is a path, ``"-"`` for standard input, a pipe or FIFO, or an open file
    (:func:`classad.formats.sources.open_input`: read once, front to back, never seeked).
    Returns ``(ad, where)`` pairs: ``"file:line"`` of the ad's first attribute line in the
    old format, ``"file: ad N"`` in the others.  A source that cannot be read or parsed
    raises :class:`FormatError` with file and line.
    """
    return list(stream_ads(source))


def source_label(source: AdSource) -> str:
    """The name of ``source`` in messages: its path, ``<stdin>`` for ``-``, a file's name."""
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        return STDIN_NAME if name == "-" else name if isinstance(name, str) else repr(name)
    return source_name(source)


class _NamedBytes(io.BytesIO):
    """Bytes read from a source that cannot be read again, under the source's name."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name


def rereadable(source: AdSource) -> Callable[[], AdSource]:
    """A function giving ``source`` afresh each time it is called, for a command that reads
    the same ads twice (``diff``): a regular file is simply named again; standard input, a
    pipe or a file object is read once, into memory, and handed out as a new stream."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if path != "-" and os.path.isfile(path):
            return lambda: source
    name = source_label(source)
    if isinstance(source, (str, os.PathLike)):
        if os.fspath(source) == "-":
            stdin = sys.stdin
            data = getattr(stdin, "buffer", stdin).read()
        else:
            with open(source, "rb") as fh:
                data = fh.read()
    else:
        data = source.read()
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)
    return lambda: _NamedBytes(raw, name)


def stream_ads(source: AdSource, *, compacted: bool = False) -> Iterator[tuple[ClassAd, str]]:
    """The pairs of :func:`read_ads` one at a time, as the source is read; with ``compacted``
    ads may come compacted (:meth:`ClassAd.compact`), as the pool keeps them."""
    name = source_label(source)
    if "\x00" in name:
        raise FormatError("cannot read ad file: the name holds a NUL character", file=repr(name))
    try:
        with open_input(source, name) as src:
            fmt = detect(src)
            if fmt == ParserType.Old:
                for ad in read_source(src, fmt, compacted=compacted):
                    yield ad, f"{name}:{src.ad_start}"
            else:
                for i, ad in enumerate(read_source(src, fmt), 1):
                    yield ad, f"{name}: ad {i}"
    except OSError as exc:
        raise FormatError(f"cannot read ad file: {exc.strerror or exc}", file=name) from None


def parse_old_ads(text: str, source: str = "<string>") -> list[tuple[ClassAd, str]]:
    """The ads of old-format ``text`` (see :func:`read_ads`)."""
    src = open_source(text, source)
    return [(ad, f"{source}:{src.ad_start}") for ad in read_source(src, ParserType.Old)]


# ---- slots ----------------------------------------------------------------------------


def alone_state(ad: ClassAd) -> EvalState:
    """An evaluation state for ``ad`` alone; its clock is fixed (library code never reads
    the wall clock), so ``time()`` in a weight or name expression gives 0."""
    return new_state(ad, clock=_zero_clock)


def _zero_clock() -> float:
    return 0.0


# The types of the bare values of plain literals (ClassAd.plain), and those but a string's.
_PLAIN = (bool, int, float, str)
_AD, _WEIGHT, _PARTITIONABLE = attrgetter("ad"), attrgetter("weight"), attrgetter("partitionable")
_NOT_STRINGS = (bool, int, float)


def _string_attr(ad: ClassAd, name: str) -> Optional[str]:
    stored = ad.plain(name.lower())
    if type(stored) is str:
        return stored  # the common case, without compiling or evaluating the node
    if stored is None or type(stored) in _NOT_STRINGS:
        return None  # a plain literal that is not a string evaluates to itself
    value = evaluate_top(stored, ad, alone_state(ad))
    return value if type(value) is str else None


def _number(value: object) -> Optional[float]:
    t = type(value)
    if t is int or t is float:
        return float(value)  # type: ignore[arg-type]
    if t is bool:
        return 1.0 if value else 0.0
    return None


def slot_weight(
    ad: ClassAd, *, use_slot_weights: bool = True, slot_weight_expr: Optional[Node] = None, force: bool = False
) -> float:
    """The weight of a slot ad (docs/negotiation.md, charging usage)."""
    if not use_slot_weights:
        return 1.0
    return _weight(ad, ad.get_node("SlotWeight"), slot_weight_expr, force)


def _weight(ad: ClassAd, stored: Any, slot_weight_expr: Optional[Node], force: bool) -> float:
    """:func:`slot_weight` (slot weights used) of ``ad``, which stores ``stored`` as its
    ``SlotWeight`` (a node, a plain literal's bare value, or None)."""
    if stored is None or force:
        node = slot_weight_expr if slot_weight_expr is not None else _SLOT_WEIGHT
    elif type(stored) in _PLAIN:  # (a literal: its value, with nothing to evaluate)
        w = _number(stored)
        return 1.0 if w is None or w < 0 else w
    else:
        node = stored
    if type(node) is AttrRef and not node.absolute:  # ``Cpus``: its value when a number literal
        stored = ad.plain(node.lname)
        if type(stored) is int or type(stored) is float:
            return 1.0 if stored < 0 else float(stored)
    w = _number(evaluate_top(node, ad, alone_state(ad)))
    return 1.0 if w is None or w < 0 else w


def remote_user(ad: ClassAd) -> Optional[str]:
    """First defined of PreemptingAccountingGroup, PreemptingUser, AccountingGroup, RemoteUser."""
    for attr in ("PreemptingAccountingGroup", "PreemptingUser", "AccountingGroup", "RemoteUser"):
        value = _string_attr(ad, attr)
        if value:
            return value
    return None


def make_slots(
    ads: Iterable[tuple[ClassAd, str]],
    *,
    use_slot_weights: bool = True,
    slot_weight_expr: Optional[Node] = None,
    force_slot_weight: bool = False,
    warnings: Optional[list[str]] = None,
    first_index: int = 0,
) -> list[Slot]:
    """Slot records for ``(ad, source)`` pairs, in list order, indexed from ``first_index``.
    Each ad is compacted (:meth:`ClassAd.compact`), as job ads are."""
    slots: list[Slot] = []
    for ad, source in ads:
        ad.compact()
        # Everything the record reads, in one look; each is evaluated (when it is not a
        # plain literal) in the order, and only when, the record needs it.
        name_, group, user, state, pslot, p_group, p_user, weight_ = ad.stored_of(_SLOT_READS)
        # A literal node (a value left to a layout's template, or a dict ad's) is read as
        # _string_of reads it: its value when a string, else None; nothing is evaluated.
        if type(name_) is Literal:
            name_ = _literal_string(name_)
        if type(group) is Literal:
            group = _literal_string(group)
        if type(user) is Literal:
            user = _literal_string(user)
        if type(state) is Literal:
            state = _literal_string(state)
        if type(p_group) is Literal:
            p_group = _literal_string(p_group)
        if type(p_user) is Literal:
            p_user = _literal_string(p_user)
        if (
            type(name_) is str
            and name_
            and type(group) in _STRING_OR_NONE
            and type(user) in _STRING_OR_NONE
            and type(state) in _STRING_OR_NONE
            and type(p_group) in _STRING_OR_NONE
            and type(p_user) in _STRING_OR_NONE
        ):  # strings or missing values (most ads): the record evaluates nothing but its weight
            if warnings is not None and ad.plain("requirements") is None and ad.plain("negotiatorrequirements") is None:
                warnings.append(f"{source}: warning: slot {name_} has no Requirements; it matches no job")
            customer = group or user
            slots.append(
                Slot(
                    ad,
                    name_,
                    first_index + len(slots),
                    _weight(ad, weight_, slot_weight_expr, force_slot_weight) if use_slot_weights else 1.0,
                    p_group or p_user or customer or None,
                    customer,
                    state.lower() if state else "",
                    pslot if type(pslot) is bool else _true_of(ad, pslot),
                    source,
                )
            )
            continue
        name = _string_of(ad, name_)
        if not name:
            raise FormatError("slot ad has no Name", **_where(source))
        if warnings is not None and ad.plain("requirements") is None and ad.plain("negotiatorrequirements") is None:
            warnings.append(f"{source}: warning: slot {name} has no Requirements; it matches no job")
        customer = _string_of(ad, group) or _string_of(ad, user)
        weight = _weight(ad, weight_, slot_weight_expr, force_slot_weight) if use_slot_weights else 1.0
        remote = _string_of(ad, p_group) or _string_of(ad, p_user) or _string_of(ad, group) or _string_of(ad, user)
        slots.append(
            Slot(
                ad=ad,
                name=name,
                index=first_index + len(slots),
                weight=weight,
                remote=remote or None,
                customer=customer,
                state=(_string_of(ad, state) or "").lower(),
                partitionable=_true_of(ad, pslot),
                source=source,
            )
        )
    return slots


_STRING_OR_NONE = (str, type(None))


def _literal_string(node: Literal) -> Optional[str]:
    """:func:`_string_of` of a literal node: its value when a string, else None."""
    v = node.value
    return v if type(v) is str else None


# What make_slots reads of a slot ad (lower-case), in the order it unpacks them.
_SLOT_READS = (
    "name",
    "accountinggroup",
    "remoteuser",
    "state",
    "partitionableslot",
    "preemptingaccountinggroup",
    "preemptinguser",
    "slotweight",
)


def _string_of(ad: ClassAd, stored: Any) -> Optional[str]:
    """:func:`_string_attr` of what ``ad`` stores for the attribute (``stored``, as
    :meth:`ClassAd.stored_of` gives it)."""
    t = type(stored)
    if t is str:
        return stored  # type: ignore[no-any-return]
    if stored is None or t in _NOT_STRINGS:
        return None
    if t is Literal and type(stored.value) in _PLAIN:
        v = stored.value
        return v if type(v) is str else None
    value = evaluate_top(stored, ad, alone_state(ad))
    return value if type(value) is str else None


def _true_of(ad: ClassAd, stored: Any) -> bool:
    """``_is_true(ad, "PartitionableSlot")`` given what the ad stores for it (``stored``)."""
    if stored is None:
        return False
    if type(stored) is bool:
        return stored  # type: ignore[no-any-return]
    if type(stored) is Literal and type(stored.value) is bool:
        return stored.value  # type: ignore[no-any-return]
    return _is_true(ad, "PartitionableSlot")


def _is_true(ad: ClassAd, attr: str) -> bool:
    node = ad.get_node(attr)
    return node is not None and truthiness(evaluate_top(node, ad, alone_state(ad))) is True


def _where(source: str) -> dict:
    file, _, line = source.rpartition(":")
    return {"file": file, "line": int(line)} if line.isdigit() else {"file": source}


# ---- jobs -----------------------------------------------------------------------------


def _int_attr(ad: ClassAd, name: str) -> Optional[int]:
    stored = ad.plain(name.lower())
    if type(stored) is int:
        return stored  # the common case, without compiling or evaluating the node
    if stored is None or type(stored) in _PLAIN:
        value = stored  # a plain literal evaluates to itself
    else:
        value = evaluate_top(stored, ad, alone_state(ad))
    if type(value) is int:
        return value
    if type(value) is float and value == value and abs(value) < 2**63:
        return int(value)
    return None


def owner_name(ad: ClassAd) -> Optional[str]:
    """The job's owner: ``Owner``, else the user part of ``User``."""
    owner = _string_attr(ad, "Owner")
    if owner:
        return owner
    user = _string_attr(ad, "User")
    return user.rpartition("@")[0] or user if user else None


def requested_group(ad: ClassAd) -> tuple[Optional[str], Optional[str]]:
    """``(group, accounting user)`` as the submit side set them (docs/negotiation.md, group membership): ``AcctGroup``
    and ``AcctGroupUser``, else read back from ``AccountingGroup = "group.user"``; a
    dot-free ``AccountingGroup`` is an accounting user alone.  The user defaults to the
    job's owner."""
    group, user = _string_attr(ad, "AcctGroup"), _string_attr(ad, "AcctGroupUser")
    combined = (_string_attr(ad, "AccountingGroup") or "").partition("@")[0]
    if not group and combined:
        head, dot, tail = combined.rpartition(".")
        group, user = (head, user or tail) if dot else (None, user or combined)
    elif group and combined.startswith(group + ".") and not user:
        user = combined[len(group) + 1 :]
    return group or None, user or owner_name(ad)


def submitter_name(ad: ClassAd, uid_domain: Optional[str] = None) -> Optional[str]:
    """The accounting principal of a job: ``AcctGroupUser`` within ``AccountingGroup`` when
    set (``AccountingGroup@domain``, or ``AcctGroup.AcctGroupUser@domain``), else ``User``
    (else ``Owner@UID_DOMAIN``).  The domain is taken from ``User`` when it has one.
    Jobs of different owners with the same accounting user are one submitter."""
    user = _string_attr(ad, "User")
    domain = user.rpartition("@")[2] if user and "@" in user else uid_domain
    name = _string_attr(ad, "AccountingGroup")
    if not name:
        group, acct_user = _string_attr(ad, "AcctGroup"), _string_attr(ad, "AcctGroupUser")
        if group:
            name = f"{group}.{acct_user or owner_name(ad)}"
        elif acct_user:
            name = acct_user
    if name:
        return name if "@" in name or not domain else f"{name}@{domain}"
    if user:
        return user
    owner = _string_attr(ad, "Owner")
    if owner:
        return owner if "@" in owner or not domain else f"{owner}@{domain}"
    return None


def assign_group(ad: ClassAd, mapping: GroupMapping) -> tuple[ClassAd, Optional[str]]:
    """Apply the accounting-group map to a job as the schedd's transform does: a copy of the
    ad with ``AcctGroup``, ``AcctGroupUser`` and ``AccountingGroup`` set to the group it gets,
    and the refusal reason if it claimed a group its owner may not use."""
    requested, user = requested_group(ad)
    group, refusal = mapping.assign(owner_name(ad) or "", requested)
    if refusal is not None or group is None or user is None:
        return ad, refusal
    out = ClassAd(ad)
    out.update({"AcctGroup": group, "AcctGroupUser": user, "AccountingGroup": f"{group}.{user}"})
    return out, None


# What make_jobs reads of a job ad (lower-case), JobStatus last.
_JOB_READS = ("clusterid", "procid", "user", "owner", "accountinggroup", "acctgroup", "acctgroupuser", "jobstatus")


def rewritten_job(record: Job, ad: ClassAd) -> Optional[Job]:
    """What ``make_jobs([(ad, record.source)])`` gives (with the settings ``record`` was
    made with), for ``ad`` a copy of ``record.ad`` in which nothing :func:`make_jobs` reads
    was rewritten but ``JobStatus``: ``record``'s identity and submitter with the new ad
    and status.  None, for :func:`make_jobs` to do, unless all it reads are plain literals
    (so that making the record evaluates nothing) and the status an integer."""
    stored = ad.stored_of(_JOB_READS)
    for v in stored:
        if v is not None and type(v) not in _PLAIN and type(v) is not Literal:
            return None
    status = stored[-1]
    if type(status) is Literal:
        status = status.value
    if type(status) is not int:
        return None
    return record.with_ad(ad.compact(equal_values=False), status)


def make_jobs(
    ads: Iterable[tuple[ClassAd, str]],
    *,
    uid_domain: Optional[str] = None,
    warnings: Optional[list[str]] = None,
    group_mapping: Optional[GroupMapping] = None,
    refused: Optional[list[tuple[str, str]]] = None,
) -> list[Job]:
    """Job records for ``(ad, source)`` pairs.  With ``group_mapping`` each job's group is
    checked first; a refused job is left out and ``(job id, reason)`` goes to ``refused``.
    Each job's ad is compacted (:meth:`ClassAd.compact`): a queue holds many ads with the
    same attribute names."""
    jobs: list[Job] = []
    for ad, source in ads:
        cluster = _int_attr(ad, "ClusterId")
        if cluster is None:
            raise FormatError("job ad has no integer ClusterId", **_where(source))
        proc = _int_attr(ad, "ProcId") or 0
        if group_mapping is not None:
            ad, refusal = assign_group(ad, group_mapping)
            if refusal is not None:
                if refused is not None:
                    refused.append((f"{cluster}.{proc}", refusal))
                continue
        name = submitter_name(ad, uid_domain)
        if name is not None:
            name = sys.intern(name)  # one string per submitter, not one per job
        if name is None:
            raise FormatError(f"job {cluster}.{proc} has no User, Owner or AccountingGroup", **_where(source))
        status = _int_attr(ad, "JobStatus")
        job = Job(ad.compact(equal_values=False), cluster, proc, name, IDLE if status is None else status, source)
        if warnings is not None and job.status == IDLE and ad.plain("requirements") is None:
            warnings.append(f"{source}: warning: job {job.id} has no Requirements; it matches no slot")
        jobs.append(job)
    return jobs


def load_pool(
    slot_source: AdSource,
    job_source: AdSource,
    *,
    use_slot_weights: bool = True,
    slot_weight_expr: Optional[Node] = None,
    force_slot_weight: bool = False,
    uid_domain: Optional[str] = None,
    group_mapping: Optional[GroupMapping] = None,
    progress: Optional[Callable[[str], None]] = None,
    allow_empty: bool = False,
) -> Pool:
    """Read a slot source and a job source (:func:`read_ads`) into a :class:`Pool`;
    ``progress`` hears which.  A source holding no ads raises :class:`FormatError` unless
    ``allow_empty``: an empty dump is far more often a failed ``condor_status`` than an
    empty pool, and a cycle over it would quietly match nothing."""
    warnings: list[str] = []
    refused: list[tuple[str, str]] = []
    with collector_paused(long_lived=True):
        if progress is not None:
            progress(f"reading {source_label(slot_source)}")
        machines, queue = TypeFilter("Machine"), TypeFilter("Job")
        slots = make_slots(
            machines(_nonempty(slot_source, "slot", allow_empty)),
            use_slot_weights=use_slot_weights,
            slot_weight_expr=slot_weight_expr,
            force_slot_weight=force_slot_weight,
            warnings=warnings,
        )
        if progress is not None:
            progress(f"reading {source_label(job_source)}")
        jobs = make_jobs(
            queue(_nonempty(job_source, "job", allow_empty)),
            uid_domain=uid_domain,
            warnings=warnings,
            group_mapping=group_mapping,
            refused=refused,
        )
    for f, source in ((machines, slot_source), (queue, job_source)):
        line = f.summary(source_label(source))
        if line is not None:
            warnings.append(line)
    forget_lines()  # the reader's caches served this read; the cycle can use their memory
    return Pool(slots, jobs, warnings, refused)


def _nonempty(source: AdSource, kind: str, allow_empty: bool) -> Iterator[tuple[ClassAd, str]]:
    """The ads of ``source``; a :class:`FormatError` at its end if it held none (unless allowed)."""
    count = 0
    for pair in stream_ads(source, compacted=True):
        count += 1
        yield pair
    if count == 0 and not allow_empty:
        raise FormatError(
            f"no {kind} ads in this source (an empty {kind} source is refused; --allow-empty accepts it)",
            file=source_label(source),
        )


def pool_from_ads(
    slot_ads: Iterable[ClassAd],
    job_ads: Iterable[ClassAd],
    *,
    use_slot_weights: bool = True,
    slot_weight_expr: Optional[Node] = None,
    force_slot_weight: bool = False,
    uid_domain: Optional[str] = None,
    group_mapping: Optional[GroupMapping] = None,
) -> Pool:
    """A :class:`Pool` from ads built in memory; sources are ``slot#N``/``job#N``.  Keywords as
    :func:`load_pool` (``matchmaker.load_ads`` passes them all from the configuration)."""
    warnings: list[str] = []
    refused: list[tuple[str, str]] = []
    machines, queue = TypeFilter("Machine"), TypeFilter("Job")
    slots = make_slots(
        machines((ad, f"slot#{i}") for i, ad in enumerate(slot_ads)),
        warnings=warnings,
        use_slot_weights=use_slot_weights,
        slot_weight_expr=slot_weight_expr,
        force_slot_weight=force_slot_weight,
    )
    jobs = make_jobs(
        queue((ad, f"job#{i}") for i, ad in enumerate(job_ads)),
        uid_domain=uid_domain,
        warnings=warnings,
        group_mapping=group_mapping,
        refused=refused,
    )
    for f, where in ((machines, "slot ads"), (queue, "job ads")):
        line = f.summary(where)
        if line is not None:
            warnings.append(line)
    return Pool(slots, jobs, warnings, refused)


# ---- condor_status -any dumps ------------------------------------------------------------


class TypeFilter:
    """Keeps the ads of one ``MyType`` (or without one) from a stream of ``(ad, source)``
    pairs and counts the others: a ``condor_status -any -l`` dump holds daemon, scheduler
    and negotiator ads besides the slots ("Machine"), and a queue dump only "Job" ads."""

    def __init__(self, my_type: str) -> None:
        self.my_type = my_type
        self.skipped: dict[str, int] = {}

    def __call__(self, pairs: Iterable[tuple[ClassAd, str]]) -> Iterator[tuple[ClassAd, str]]:
        want = self.my_type.lower()
        for ad, source in pairs:
            kind = _string_attr(ad, "MyType")
            if kind is None or kind.lower() == want:
                yield ad, source
            else:
                self.skipped[kind] = self.skipped.get(kind, 0) + 1

    def summary(self, where: str) -> Optional[str]:
        """One warning line for the skipped ads, or None when there were none."""
        if not self.skipped:
            return None
        n = sum(self.skipped.values())
        kinds = ", ".join(f"{k} {c}" for k, c in sorted(self.skipped.items(), key=lambda kc: (-kc[1], kc[0])))
        return f"{where}: warning: skipped {n} ad{'s' if n != 1 else ''} whose MyType is not {self.my_type!r} ({kinds})"


# ---- pool sizes and usage ---------------------------------------------------------------


@dataclass(frozen=True)
class PoolSize:
    """What the pie is cut from (docs/negotiation.md, reading the pool)."""

    weighted: float  # sum of SlotWeight (or the slot count without weights)
    min_weight: float  # the smallest SlotWeight of any slot ad
    effective: float  # 1 per static/dynamic slot, Cpus per partitionable slot (HGQ, unweighted)


# What a caller may keep of the evaluations of slot ads alone: ``memo(ads, what, compute)``
# gives ``[compute(ad) for ad in ads]``, each computed in that order or what it gave for
# the same ad and ``what`` before (a simulation keeps those of ads that draw no random
# numbers, matchmaker.cycle.slot_carry).
AdMemo = Callable[[Sequence[ClassAd], str, Callable[[ClassAd], Any]], list]


def no_memo(ads: Sequence[ClassAd], what: str, compute: Callable[[ClassAd], Any]) -> list:
    """The :data:`AdMemo` that keeps nothing."""
    return [compute(ad) for ad in ads]


def pool_size(
    slots: Sequence[Slot],
    *,
    use_slot_weights: bool = True,
    constraint: Optional[Node] = None,
    memo: AdMemo = no_memo,
) -> PoolSize:
    """Pool sizes over all slot ads, claimed or not; ``constraint`` restricts the counted
    slots when it matches at least one (``NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT``)."""
    counted = list(slots)
    weights = list(map(_WEIGHT, counted))
    min_weight = min(weights, default=1.0)
    if constraint is not None:
        chosen = [s for s in slots if truthiness(evaluate_top(constraint, s.ad, alone_state(s.ad))) is True]
        if chosen:
            counted, weights = chosen, list(map(_WEIGHT, chosen))
    weighted = sum(weights) if use_slot_weights else float(len(counted))
    flags = list(map(_PARTITIONABLE, counted))
    cores = slot_cores(list(map(_AD, compress(counted, flags))), memo)
    effective = _effective(flags, cores)
    return PoolSize(weighted, min_weight, effective)


def size_counts(weights: list[float], counts: list[float], use_slot_weights: bool = True) -> PoolSize:
    """:func:`pool_size` without a constraint, of the slots' weights and counts (in slot
    order; a slot's count: its cores for a partitionable slot whose cores are positive,
    else 1.0, see :func:`slot_cores`), summed as :func:`pool_size` sums them."""
    weighted = sum(weights) if use_slot_weights else float(len(weights))
    effective = 0.0
    if all(c.is_integer() for c in counts):
        whole = sum(map(int, counts))
        if whole < 2**53:
            return PoolSize(weighted, min(weights, default=1.0), float(whole))
    for c in counts:
        effective += c
    return PoolSize(weighted, min(weights, default=1.0), effective)


def _effective(partitionable: list[bool], cores: list[Optional[float]]) -> float:
    """The effective pool size: each slot counts 1, but a partitionable one (``cores``
    holds theirs, in slot order) its cores when positive, summed in slot order.  When
    every count is a whole number each partial sum is exact (below 2**53), so the sum is
    the integer total whatever the order."""
    counts = [c for c in cores if c is not None and c > 0]
    if all(c.is_integer() for c in counts):
        whole = len(partitionable) - len(counts) + sum(map(int, counts))
        if whole < 2**53:
            return float(whole)
    effective = 0.0
    found = iter(cores)
    for p in partitionable:
        effective += slot_count(next(found)) if p else 1.0
    return effective


def slot_count(cores: Optional[float]) -> float:
    """A partitionable slot's count in the effective pool size: its cores when positive, else 1."""
    return cores if cores is not None and cores > 0 else 1.0


def _cores(ad: ClassAd) -> Optional[float]:
    return _number(ad.evaluate("Cpus", state=alone_state(ad)))


def slot_cores(ads: list[ClassAd], memo: AdMemo) -> list[Optional[float]]:
    """``memo(ads, "cores", _cores)``: the ``Cpus`` of an ad storing it as a plain literal is
    that value (:func:`_cores` evaluates nothing else), read alone; only the others are
    evaluated (or found kept), in order."""
    stored = [ad.plain("cpus") for ad in ads]
    if _NUMBERS.issuperset(map(type, stored)):
        return list(map(float, stored))
    out = list(map(_number, stored))
    others = list(compress(range(len(ads)), map(not_, map(_PLAIN_TYPES.__contains__, map(type, stored)))))
    if others:
        for i, v in zip(others, memo(list(map(ads.__getitem__, others)), "cores", _cores)):
            out[i] = v
    return out


_NUMBERS = frozenset((int, float))
_PLAIN_TYPES = frozenset(_PLAIN)


def usage_by_customer(slots: Iterable[Slot]) -> dict[str, float]:
    """Current weighted usage per user: the weights of the slots charged to them (docs/negotiation.md, charging usage)."""
    usage: dict[str, float] = {}
    for s in slots:
        if s.charged and s.customer is not None:
            usage[s.customer] = usage.get(s.customer, 0.0) + s.weight
    return usage


def error_rank_slots(slots: Iterable[Slot], memo: AdMemo = no_memo) -> list[Slot]:
    """Slots whose Rank is an error on its own (HTCondor then uses 0 for it)."""
    slots = list(slots)
    return list(compress(slots, memo(list(map(_AD, slots)), "rank_error", rank_error)))


def rank_error(ad: ClassAd) -> bool:
    """Whether the slot ad's ``Rank`` is an error on its own (see :func:`error_rank_slots`)."""
    stored = ad.plain("rank")  # a plain literal is no error, with nothing to evaluate
    if stored is None or type(stored) in _PLAIN:
        return False
    node = ad.get_node("Rank")
    return node is not None and evaluate_top(node, ad, alone_state(ad)) is ERROR


def error_rank_warning(s: Slot) -> str:
    """The warning for a slot of :func:`error_rank_slots`."""
    return (
        f"{s.source}: warning: slot {s.name} has an error-valued Rank; "
        f"it is treated as 0 (and NEGOTIATOR_PRE_JOB_RANK ranks the slot last)"
    )


__all__ = [
    "CHARGED_STATES",
    "IDLE",
    "RUNNING",
    "Job",
    "Pool",
    "PoolSize",
    "Slot",
    "TypeFilter",
    "error_rank_slots",
    "error_rank_warning",
    "AdMemo",
    "AdSource",
    "assign_group",
    "load_pool",
    "make_jobs",
    "rewritten_job",
    "make_slots",
    "no_memo",
    "owner_name",
    "parse_old_ads",
    "pool_from_ads",
    "pool_size",
    "size_counts",
    "slot_count",
    "slot_cores",
    "rank_error",
    "read_ads",
    "rereadable",
    "source_label",
    "stream_ads",
    "remote_user",
    "requested_group",
    "slot_weight",
    "submitter_name",
    "usage_by_customer",
]
