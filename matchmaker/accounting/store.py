"""The accountant's durable store (docs/negotiation.md, the accountant's records, charging usage and editing priorities): one SQLite file.

:class:`Accountant` keeps one record per principal (a submitter ``user@domain``
or a group name such as ``group_physics`` or ``<none>``) and one per claimed
slot, in memory, and writes them to SQLite at the end of each transaction; the
priority math it applies lives in :mod:`matchmaker.accounting.priority_math`.  A
transaction that raises is discarded and the last committed state reloaded, so
a crash mid-cycle loses nothing committed.  Use ``with acct.transaction():``
around one negotiation cycle; each public mutator outside such a block commits
on its own.

Usage model (docs/negotiation.md, charging usage): a match adds its slot weight to the submitter's and
its group's in-use usage at once, and a negative "uncharged time" so the next
:meth:`Accountant.update_priorities` charges only the part of the interval
after the match; ending a match adds the used part back.  Group records also
carry hierarchical usage summed over the group and every dotted ancestor.

The store also keeps the quota table of the last negotiation cycle (one
:class:`QuotaRecord` per group, its last allocation round): the next cycle
reads it for ``RemoteGroupQuota`` (docs/negotiation.md, on slots: slot ads are annotated before
the cycle computes its own quotas) and ``matchmaker userprio --quotas`` prints
it, as ``condor_userprio -quotas`` prints the negotiator's last report.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from itertools import compress, repeat
from operator import attrgetter, ne, or_
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Collection, Iterable, Iterator, Optional

from ..errors import StateError
from .priority_math import (
    MIN_PRIORITY,
    FactorPolicy,
    default_prio_factor,
    effective_priority,
    group_ancestors,
    match_end_charge,
    match_start_charge,
    recent_usage,
    updated_priority,
)

SCHEMA_VERSION = 3


@dataclass
class Customer:
    """One principal's accounting record (HTCondor's ``Customer.<name>`` ad)."""

    name: str
    is_group: bool = False
    priority: float = 0.0  # stored RUP; below 0.5 reads as 0.5
    factor: float = 0.0  # stored priority factor; < 1 means "not yet set"
    resources_used: float = 0.0  # claims held (count)
    weighted_resources_used: float = 0.0
    hier_weighted_resources_used: float = 0.0  # groups: own and all subgroups' usage
    uncharged_time: float = 0.0
    weighted_uncharged_time: float = 0.0
    accumulated_usage: float = 0.0  # slot-seconds
    weighted_accumulated_usage: float = 0.0
    begin_usage_time: float = 0.0
    last_usage_time: float = 0.0
    ceiling: float = -1.0  # cap on weighted usage; -1: none
    floor: float = 0.0  # guaranteed weighted usage; 0: none

    @property
    def rup(self) -> float:
        """The real user priority (never below 0.5)."""
        return max(self.priority, MIN_PRIORITY)


@dataclass
class Claim:
    """A slot charged to a principal (HTCondor's ``Resource.<slot>`` ad)."""

    slot: str
    customer: str
    weight: float = 1.0
    group: Optional[str] = None
    start_time: float = 0.0
    limits: str = ""  # matched concurrency limits


@dataclass
class QuotaRecord:
    """One group of the last cycle's quota table (what ``condor_userprio -quotas`` shows)."""

    name: str
    quota: float = 0.0  # effective quota of the last allocation round
    config_quota: float = 0.0  # GROUP_QUOTA_<g>, or the GROUP_QUOTA_DYNAMIC_<g> fraction
    is_static: bool = True
    subtree_quota: float = 0.0
    surplus: str = "no"  # "no", "ByQuota" (accepts surplus) or "Regroup" (autoregroup)
    requested: float = 0.0  # demand at cycle start: running + idle, weighted
    allocated: float = 0.0  # GroupResourcesAllocated of the last round
    usage: float = 0.0  # weighted usage of the group node after the cycle
    sort_key: float = 0.0  # GROUP_SORT_EXPR value of the last round
    position: int = 0  # place in the last round's group order, from 1
    matched: int = 0  # matches its submitters made in the cycle


_CUSTOMER_COLUMNS = [f.name for f in fields(Customer)]
_CLAIM_COLUMNS = [f.name for f in fields(Claim)]
_QUOTA_COLUMNS = [f.name for f in fields(QuotaRecord)]
# A record as its table row, in column order: its fields hold plain values, so this is
# what dataclasses.astuple gives, without the deep copy (thousands of claims a cycle).
_CUSTOMER_ROW = attrgetter(*_CUSTOMER_COLUMNS)
_CLAIM_ROW = attrgetter(*_CLAIM_COLUMNS)
# What sync_claims compares of a claim, and what it finds of a slot no longer claimed.
_SLOT, _HOLDER, _WEIGHT = attrgetter("slot"), attrgetter("customer", "group"), attrgetter("weight")
_NO_CLAIM: Any = SimpleNamespace(customer=object(), group=None, weight=0.0)
# sync_claims finds the records of fewer slots than this part of the records by their places.
_FEW_SLOTS = 0.25
_QUOTA_ROW = attrgetter(*_QUOTA_COLUMNS)


def _columns(names: list[str]) -> str:
    """A quoted column list (quoted because ``group`` is an SQL keyword)."""
    return ", ".join(f'"{n}"' for n in names)


_QUOTA_TABLE = f'CREATE TABLE group_quotas ({_columns(_QUOTA_COLUMNS)}, PRIMARY KEY ("name"));'
# Priority policies other than HTCondor's: decayed usage per entity (with Maui's buckets
# as JSON) and the breakdown rows of the last cycle, per policy.
_POLICY_TABLES = """
CREATE TABLE IF NOT EXISTS policy_usage (policy TEXT, entity TEXT, value REAL, buckets TEXT, updated REAL,
                           PRIMARY KEY (policy, entity));
CREATE TABLE IF NOT EXISTS policy_report (policy TEXT PRIMARY KEY, time REAL, rows TEXT);
"""
_SCHEMA = f"""
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value REAL);
CREATE TABLE customers ({_columns(_CUSTOMER_COLUMNS)}, PRIMARY KEY ("name"));
CREATE TABLE claims ({_columns(_CLAIM_COLUMNS)}, PRIMARY KEY ("slot"));
{_QUOTA_TABLE}
{_POLICY_TABLES}
INSERT INTO schema_version VALUES ({SCHEMA_VERSION});
"""
# Version 1 had no quota table, version 2 no policy tables; adding them is the whole upgrade.
_UPGRADES = {1: _QUOTA_TABLE + _POLICY_TABLES, 2: _POLICY_TABLES}


# ---- what a stored value may be ------------------------------------------------------------
# The tables declare no column types (SQLite would then convert some values silently), so
# every value read is checked here: a value of the wrong type is damage, refused when the
# store is opened, before any command writes anything.


def _finite(v: Any) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


def _real(v: Any) -> bool:  # any number but NaN (SQLite keeps infinities)
    return type(v) in (int, float) and v == v


_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "str": (lambda v: type(v) is str, "text"),
    "Optional[str]": (lambda v: v is None or type(v) is str, "text or NULL"),
    "bool": (lambda v: type(v) is int and v in (0, 1), "0 or 1"),
    "int": (lambda v: type(v) is int, "an integer"),
    "float": (_finite, "a finite number"),
    "real": (_real, "a number"),
}


def _row_checks(record: type, reals: bool = False) -> list[tuple[str, Callable[[Any], bool], str]]:
    """(column, test, what it must hold) for each field of ``record``; ``reals``: its
    floats may be infinite (a quota table's sort key may be)."""
    out = []
    for f in fields(record):
        kind = "real" if reals and f.type == "float" else str(f.type)
        out.append((f.name, *_CHECKS[kind]))
    return out


_CUSTOMER_CHECKS = _row_checks(Customer)
_CLAIM_CHECKS = _row_checks(Claim)
_QUOTA_CHECKS = _row_checks(QuotaRecord, reals=True)


def _type_name(v: Any) -> str:
    return {type(None): "NULL", str: "text", bytes: "a blob", int: "an integer", float: "a number"}.get(
        type(v), type(v).__name__
    )


def _checked(table: str, row: tuple, checks: list[tuple[str, Callable[[Any], bool], str]]) -> tuple:
    """``row`` if every value has its column's type, else ``ValueError`` saying where."""
    if len(row) != len(checks):
        raise ValueError(f"{table}: a row has {len(row)} columns, not {len(checks)}")
    for value, (column, test, wanted) in zip(row, checks):
        if not test(value):
            shown = repr(value) if not isinstance(value, (str, bytes)) or len(value) < 40 else "a long value"
            raise ValueError(
                f"{table} row {row[0]!r}: column {column} holds {shown} ({_type_name(value)}), not {wanted}"
            )
    return row


def _json_numbers(text: Any, where: str) -> tuple[float, ...]:
    items = json.loads(text) if type(text) is str else None
    if type(items) is not list or not all(_finite(x) for x in items):
        raise ValueError(f"{where}: not a JSON list of numbers")
    return tuple(items)


def _json_rows(text: Any, where: str) -> list[dict]:
    rows = json.loads(text) if type(text) is str else None
    if type(rows) is not list or not all(type(r) is dict for r in rows):
        raise ValueError(f"{where}: not a JSON list of objects")
    return rows


def _meta(conn: sqlite3.Connection) -> dict[str, Any]:
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    for key in ("last_update_time", "generation"):
        if key in meta and not _finite(meta[key]):
            raise ValueError(f"meta {key} holds {meta[key]!r} ({_type_name(meta[key])}), not a finite number")
    return meta


BUSY_TIMEOUT = 10.0  # seconds a command waits for another one's write lock before failing


def _prepare_schema(conn: sqlite3.Connection, path: str, *, create: bool) -> None:
    """Create the schema in a database without tables (when ``create``), upgrade an older
    version, or refuse anything else: one transaction, so a kill half-way leaves either no
    tables or all of them."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables and create:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
        elif "schema_version" not in tables:
            raise StateError("not an accountant database (no schema_version table)", file=path)
        else:
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            if row is not None and row[0] in _UPGRADES:
                for statement in _UPGRADES[row[0]].split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
                row = (SCHEMA_VERSION,)
            if row is None or row[0] != SCHEMA_VERSION:
                raise StateError(
                    f"accountant schema version {row and row[0]}, this program reads version {SCHEMA_VERSION}",
                    file=path,
                )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _connect(path: str) -> sqlite3.Connection:
    """Open ``path`` for reading and writing, creating the schema in a new (or empty) file
    and checking it in an old one; a database another command is writing is waited for at
    most :data:`BUSY_TIMEOUT` seconds."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    try:
        _prepare_schema(conn, path, create=True)
        conn.isolation_level = "DEFERRED"  # back to Python's default: implicit BEGIN before writes
    except BaseException:
        conn.close()
        raise
    return conn


def read_only_uri(path: str) -> str:
    """An SQLite URI opening the file ``path`` read-only, whatever characters its name holds:
    the name is percent-escaped (``%``, ``?``, ``#`` are part of the name, never of the URI)."""
    return Path(path).absolute().as_uri() + "?mode=ro"


def _memory_copy(path: str) -> sqlite3.Connection:
    """A private in-memory copy of the database file ``path``, its schema checked (an older
    version is upgraded in the copy only); the file is opened read-only and never written."""
    memory = sqlite3.connect(":memory:", isolation_level=None)
    try:
        source = sqlite3.connect(read_only_uri(path), uri=True, timeout=BUSY_TIMEOUT)
        try:
            source.backup(memory)
        finally:
            source.close()
        _prepare_schema(memory, path, create=False)
        memory.isolation_level = "DEFERRED"
    except BaseException:
        memory.close()
        raise
    return memory


def store_absent(path: str | Path) -> bool:
    """True when ``path`` holds no store yet: it does not exist, or it is an empty (0-byte)
    file.  Both are treated alike by every command: one that writes the store creates it
    there, one that only reads it refuses."""
    try:
        return os.stat(path).st_size == 0 and os.path.isfile(path)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False  # unreadable or an impossible name: opening it says why


def _generation(conn: sqlite3.Connection) -> float:
    """The store's write counter: every committed write adds one."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return row[0] if row is not None and row[0] is not None else 0.0


class _Conflict(Exception):
    """Another command committed between this one's read and its write."""


# ---- the store --------------------------------------------------------------------------


class Accountant:
    """Priorities and usage of every principal, persisted in one SQLite file."""

    def __init__(
        self, conn: sqlite3.Connection, path: str, *, halflife: float = 86400.0, factors: FactorPolicy = FactorPolicy()
    ) -> None:
        self._conn = conn
        self.path = path
        self.halflife = halflife
        self.factors = factors
        self._depth = 0
        self._load()

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        halflife: float = 86400.0,
        factors: FactorPolicy = FactorPolicy(),
        read_only: bool = False,
        must_exist: bool = False,
    ) -> "Accountant":
        """Open the store at ``path``; ``":memory:"`` for a throw-away one.

        A missing or empty (0-byte) file is created as a new store, unless ``must_exist`` or
        ``read_only``: then it is refused.  ``read_only`` reads the file into a private
        in-memory copy (the file is opened read-only, by a URI that escapes its name) and
        never writes it.  Either way the schema and every stored value are checked: a file
        that is not an accountant database of this schema, or a row holding a value of the
        wrong type, raises :class:`StateError` before anything is written.
        """
        path = str(path)
        if path != ":memory:" and (read_only or must_exist) and store_absent(path):
            empty = os.path.exists(path)
            raise StateError(
                "empty file, not an accountant database" if empty else "no such accountant database", file=path
            )
        try:
            conn = _memory_copy(path) if read_only and path != ":memory:" else _connect(path)
        except sqlite3.Error as exc:
            raise StateError(f"cannot use accountant database: {exc}", file=path) from None
        except ValueError as exc:  # a NUL in the name
            raise StateError(f"cannot use accountant database: {exc}", file=repr(path)) from None
        try:
            return cls(conn, path, halflife=halflife, factors=factors)
        except BaseException:
            conn.close()
            raise

    def close(self) -> None:
        """Close the database (uncommitted changes of an open transaction are lost)."""
        self._conn.close()

    def __enter__(self) -> "Accountant":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _load(self) -> None:
        """(Re)read every record from the database, discarding in-memory changes."""
        conn = self._conn
        try:
            meta = _meta(conn)
            customers = {
                r[0]: Customer(*_checked("customers", r, _CUSTOMER_CHECKS))
                for r in conn.execute(f"SELECT {_columns(_CUSTOMER_COLUMNS)} FROM customers")
            }
            claims = {
                r[0]: Claim(*_checked("claims", r, _CLAIM_CHECKS))
                for r in conn.execute(f"SELECT {_columns(_CLAIM_COLUMNS)} FROM claims")
            }
            quotas = [
                QuotaRecord(*_checked("group_quotas", r, _QUOTA_CHECKS))
                for r in conn.execute(f"SELECT {_columns(_QUOTA_COLUMNS)} FROM group_quotas ORDER BY position, name")
            ]
            policy_usage: dict[str, dict[str, tuple[float, tuple[float, ...], float]]] = {}
            for pol, entity, value, buckets, updated in conn.execute(
                "SELECT policy, entity, value, buckets, updated FROM policy_usage"
            ):
                where = f"policy_usage row {pol!r}, {entity!r}"
                if type(pol) is not str or type(entity) is not str or not (_finite(value) and _finite(updated)):
                    raise ValueError(f"{where}: a value of the wrong type")
                policy_usage.setdefault(pol, {})[entity] = (value, _json_numbers(buckets, where), updated)
            reports = {}
            for pol, t, rows in conn.execute("SELECT policy, time, rows FROM policy_report"):
                if type(pol) is not str or not _finite(t):
                    raise ValueError(f"policy_report row {pol!r}: a value of the wrong type")
                reports[pol] = (t, _json_rows(rows, f"policy_report row {pol!r}"))
        except (sqlite3.Error, TypeError, ValueError, RecursionError) as exc:
            raise StateError(f"damaged accountant database: {exc}", file=self.path) from None
        for c in customers.values():
            c.is_group = bool(c.is_group)
        for q in quotas:
            q.is_static = bool(q.is_static)
        self._quotas: Optional[list[QuotaRecord]] = None  # None: unchanged since the load
        self._stored_quotas = quotas
        self._policy_usage = policy_usage
        self._policy_reports = reports
        self._policy_dirty: set[str] = set()
        self._customers = customers
        self._claims = claims
        # Each claim's place in the order of ``_claims`` (a number that grows with each
        # claim put in; a claim put in again goes last), so sync_claims finds a few slots'
        # records in that order without walking every record.
        self._claim_place = dict(zip(claims, range(len(claims))))
        self._claim_count = len(claims)
        self._last_update: Optional[float] = meta.get("last_update_time")
        self._loaded_generation = meta.get("generation") or 0.0
        self._stored_last_update = self._last_update
        self._dirty: set[str] = set()
        self._gone: set[str] = set()
        self._dirty_claims: set[str] = set()
        self._gone_claims: set[str] = set()

    @contextmanager
    def transaction(self) -> Iterator["Accountant"]:
        """Group changes into one commit; nested blocks join the outermost one.

        If the block raises, every change since the last commit is discarded.
        """
        if self._depth == 0 and not self._has_changes():
            self._refresh()
        self._depth += 1
        try:
            yield self
        except BaseException:
            self._depth -= 1
            if self._depth == 0:
                self._load()
            raise
        self._depth -= 1
        if self._depth == 0:
            self._flush()

    def _has_changes(self) -> bool:
        return bool(
            self._dirty
            or self._gone
            or self._dirty_claims
            or self._gone_claims
            or self._quotas is not None
            or self._policy_dirty
        )

    def _refresh(self) -> None:
        """Reread the store if another command committed since it was read."""
        try:
            changed = _generation(self._conn) != self._loaded_generation
        except sqlite3.Error as exc:
            raise StateError(f"cannot read accountant database: {exc}", file=self.path) from None
        if changed:
            self._load()

    def _flush(self) -> None:
        if not self._has_changes() and self._last_update == self._stored_last_update:
            return
        customers = [_CUSTOMER_ROW(self._customers[n]) for n in self._dirty if n in self._customers]
        claims = [_CLAIM_ROW(self._claims[s]) for s in self._dirty_claims if s in self._claims]
        try:
            with self._conn:  # one SQLite transaction: all of it lands or none
                self._conn.execute("BEGIN IMMEDIATE")
                generation = _generation(self._conn)
                if generation != self._loaded_generation:
                    raise _Conflict()
                self._conn.executemany("DELETE FROM customers WHERE name = ?", [(n,) for n in self._gone])
                self._conn.executemany(
                    f"INSERT OR REPLACE INTO customers VALUES ({', '.join('?' * len(_CUSTOMER_COLUMNS))})", customers
                )
                self._conn.executemany("DELETE FROM claims WHERE slot = ?", [(s,) for s in self._gone_claims])
                self._conn.executemany(
                    f"INSERT OR REPLACE INTO claims VALUES ({', '.join('?' * len(_CLAIM_COLUMNS))})", claims
                )
                if self._last_update is not None:
                    self._conn.execute(
                        "INSERT OR REPLACE INTO meta VALUES ('last_update_time', ?)", (self._last_update,)
                    )
                else:  # a store started over (clear) has no clock yet
                    self._conn.execute("DELETE FROM meta WHERE key = 'last_update_time'")
                self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (generation + 1,))
                if self._quotas is not None:
                    self._conn.execute("DELETE FROM group_quotas")
                    self._conn.executemany(
                        f"INSERT INTO group_quotas VALUES ({', '.join('?' * len(_QUOTA_COLUMNS))})",
                        [_QUOTA_ROW(q) for q in self._quotas],
                    )
                for pol in self._policy_dirty:
                    self._conn.execute("DELETE FROM policy_usage WHERE policy = ?", (pol,))
                    self._conn.executemany(
                        "INSERT INTO policy_usage VALUES (?, ?, ?, ?, ?)",
                        [
                            (pol, e, v, json.dumps(list(b)), u)
                            for e, (v, b, u) in sorted(self._policy_usage.get(pol, {}).items())
                        ],
                    )
                    if pol in self._policy_reports:
                        t, rows = self._policy_reports[pol]
                        self._conn.execute(
                            "INSERT OR REPLACE INTO policy_report VALUES (?, ?, ?)", (pol, t, json.dumps(rows))
                        )
                    else:
                        self._conn.execute("DELETE FROM policy_report WHERE policy = ?", (pol,))
        except _Conflict:
            self._load()
            raise StateError(
                "the accountant database changed while this command ran (another command "
                "wrote it); nothing was written: run the command again",
                file=self.path,
            ) from None
        except (sqlite3.Error, TypeError, ValueError) as exc:
            self._load()
            raise StateError(f"cannot write accountant database: {exc}", file=self.path) from None
        self._loaded_generation = generation + 1
        self._stored_last_update = self._last_update
        self._policy_dirty.clear()
        self._dirty.clear()
        self._gone.clear()
        self._dirty_claims.clear()
        self._gone_claims.clear()
        if self._quotas is not None:
            self._stored_quotas, self._quotas = self._quotas, None

    # ---- reading ------------------------------------------------------------------------

    @property
    def last_update_time(self) -> Optional[float]:
        """When priorities were last aged (``None`` for a new store)."""
        return self._last_update

    def check_clock(self, now: float, *, allow_skew: bool = False) -> None:
        """The clock rule of every command that writes the store: a cycle at ``now`` earlier
        than the last update is refused (``StateError``), since it would charge again hours
        already charged, unless ``allow_skew`` explicitly accepts it (the interval restarts)."""
        last = self._last_update
        if not allow_skew and last is not None and now < last:
            raise StateError(
                f"the time of this cycle ({now:.0f}) is earlier than the accountant's last update "
                f"({last:.0f}); use the right time, or allow clock skew explicitly",
                file=self.path,
            )

    def names(self) -> list[str]:
        """Every principal with a record, sorted."""
        return sorted(self._customers)

    def customers(self) -> list[Customer]:
        """Copies of every principal's record, sorted by name."""
        return [replace(self._customers[n]) for n in sorted(self._customers)]

    def get(self, name: str) -> Optional[Customer]:
        """A copy of ``name``'s record, or ``None``."""
        c = self._customers.get(name)
        return replace(c) if c is not None else None

    def claims(self) -> list[Claim]:
        """Copies of the slot records, sorted by slot name."""
        return [replace(self._claims[s]) for s in sorted(self._claims)]

    def group_quotas(self) -> list[QuotaRecord]:
        """The last cycle's quota table, in that cycle's group order (empty before any
        cycle with groups, and after a cycle without them)."""
        rows = self._quotas if self._quotas is not None else self._stored_quotas
        return [replace(q) for q in rows]

    def previous_quotas(self) -> Optional[dict[str, float]]:
        """Effective quota per group of the last cycle; None when there is no table."""
        rows = self.group_quotas()
        return {q.name: q.quota for q in rows} if rows else None

    def rup(self, name: str) -> float:
        """Real user priority (0.5 for an unknown principal)."""
        c = self._customers.get(name)
        return c.rup if c is not None else MIN_PRIORITY

    def prio_factor(self, name: str) -> float:
        """The priority factor; a default is stored on first use, so a later config change
        does not affect an existing principal (as in HTCondor)."""
        c = self._customers.get(name)
        if c is not None and c.factor >= 1.0:
            return c.factor
        factor = default_prio_factor(name, self.factors)
        with self.transaction():
            self._record(name).factor = factor
        return factor

    def eup(self, name: str) -> float:
        """Effective user priority: RUP × factor."""
        return effective_priority(self.rup(name), self.prio_factor(name))

    def usage(self, name: str, hierarchical: bool = False) -> float:
        """Weighted resources in use; ``hierarchical`` gives a group's subtree total."""
        c = self._customers.get(name)
        if c is None:
            return 0.0
        if hierarchical and c.hier_weighted_resources_used > 0:
            return c.hier_weighted_resources_used
        return c.weighted_resources_used

    # ---- aging and charging -------------------------------------------------------------

    def _record(self, name: str, is_group: bool = False) -> Customer:
        c = self._customers.get(name)
        if c is None:
            c = self._customers[name] = Customer(name, is_group=is_group)
            self._gone.discard(name)
        c.is_group = c.is_group or is_group
        self._dirty.add(name)
        return c

    def _clock(self, now: float) -> float:
        """The start of the current charging interval (``now`` on a new store)."""
        if self._last_update is None:
            self._last_update = now
        return self._last_update

    def update_priorities(self, now: float) -> None:
        """Age every record to ``now`` and charge the interval's usage (start of a cycle)."""
        with self.transaction():
            dt = now - self._clock(now)
            self._last_update = now  # also restarts the interval if the clock went back
            if dt <= 0:
                return
            for c in self._customers.values():
                self._dirty.add(c.name)
                recent = recent_usage(
                    c.weighted_resources_used, c.weighted_uncharged_time, dt, c.hier_weighted_resources_used
                )
                c.priority = updated_priority(c.priority, recent, dt, self.halflife)
                c.accumulated_usage += c.resources_used * dt + c.uncharged_time
                c.weighted_accumulated_usage += c.weighted_resources_used * dt + c.weighted_uncharged_time
                if c.accumulated_usage > 0 and c.begin_usage_time == 0:
                    c.begin_usage_time = now
                if recent > 0 or c.resources_used + c.uncharged_time / dt > 0:
                    c.last_usage_time = now
                c.uncharged_time = c.weighted_uncharged_time = 0.0

    def _charge(self, claim: Claim, sign: int, now: float) -> None:
        """Add (sign=+1) or take away (-1) one claim's usage for its customer and group."""
        last = self._clock(now)
        w = claim.weight
        per_slot = match_start_charge(1.0, now, last) if sign > 0 else match_end_charge(1.0, now, last)
        owners = [self._record(claim.customer)]
        if claim.group:
            owners.append(self._record(claim.group, is_group=True))
        for c in owners:
            c.resources_used = max(0.0, c.resources_used + sign)
            c.weighted_resources_used = max(0.0, c.weighted_resources_used + sign * w)
            c.uncharged_time += per_slot
            c.weighted_uncharged_time += per_slot * w
        for g in group_ancestors(claim.group):
            rec = self._record(g, is_group=True)
            rec.hier_weighted_resources_used = max(0.0, rec.hier_weighted_resources_used + sign * w)

    def add_match(
        self, customer: str, slot: str, weight: float, now: float, *, group: Optional[str] = None, limits: str = ""
    ) -> None:
        """Charge ``slot`` (of ``weight``) to ``customer`` and its assigned ``group`` from ``now``."""
        with self.transaction():
            self._start_claim(Claim(slot, customer, weight, group, now, limits), now)

    def add_matches(self, claims: Iterable[Claim], now: float) -> None:
        """:meth:`add_match` for each claim in turn, in one transaction (its ``start_time`` is ``now``)."""
        with self.transaction():
            for c in claims:
                self._start_claim(Claim(c.slot, c.customer, c.weight, c.group, now, c.limits), now)

    def _start_claim(self, claim: Claim, now: float) -> None:
        """:meth:`add_match` inside a transaction the caller holds."""
        if claim.slot in self._claims:
            self._end_claim(claim.slot, now)
        self._charge(claim, +1, now)
        self._claims[claim.slot] = claim
        self._claim_place[claim.slot] = self._claim_count
        self._claim_count += 1
        self._dirty_claims.add(claim.slot)
        self._gone_claims.discard(claim.slot)

    def remove_match(self, slot: str, now: float) -> None:
        """End the claim on ``slot`` at ``now`` (no-op for an unknown slot)."""
        with self.transaction():
            self._end_claim(slot, now)

    def _end_claim(self, slot: str, now: float) -> None:
        """:meth:`remove_match` inside a transaction the caller holds."""
        claim = self._claims.pop(slot, None)
        if claim is None:
            return
        del self._claim_place[slot]
        self._charge(claim, -1, now)
        self._gone_claims.add(slot)
        self._dirty_claims.discard(slot)

    def sync_claims(self, current: Iterable[Claim], now: float, only: Optional[Collection[str]] = None) -> None:
        """Make the slot records match the claimed slots seen at ``now`` (HTCondor's CheckMatches).

        Records of slots no longer claimed by the same principal end now; new claims start
        now; a claim whose weight changed is charged at the new weight from now.  Call it
        right after :meth:`update_priorities` with the same ``now``.  One transaction.
        The records are compared with the claims at C speed; only those that differ are
        ended or charged again, in the order of the records, then the new claims in the
        order given.  A claim's own start time is not read (a new claim starts ``now``).
        ``only``: the names of the only slots whose records may differ from the claims (the
        caller knows every other record matches); ``current`` then needs only those slots'
        claims, and the result is the same as with every claim given.  A few such slots
        are found by their records' places, without walking every record.
        """
        with self.transaction():
            current = list(current)
            seen = dict(zip(map(_SLOT, current), current))
            claims = self._claims
            if only is None:
                slots: Iterable[str] = claims
            elif len(only) < _FEW_SLOTS * len(claims):  # a few: in the records' order by their places
                slots = sorted(filter(claims.__contains__, set(only)), key=self._claim_place.__getitem__)
            else:
                slots = list(compress(claims, map(only.__contains__, claims)))
            olds = list(claims.values()) if only is None else list(map(claims.__getitem__, slots))
            curs: list[Any] = list(map(seen.get, slots, repeat(_NO_CLAIM)))
            held = map(ne, map(_HOLDER, olds), map(_HOLDER, curs))
            weighed = map(ne, map(_WEIGHT, olds), map(_WEIGHT, curs))
            for k in compress(range(len(olds)), map(or_, held, weighed)):
                old, cur = olds[k], curs[k]
                slot = old.slot
                if cur is _NO_CLAIM or cur.customer != old.customer or cur.group != old.group:
                    self._end_claim(slot, now)
                elif cur.weight != old.weight:
                    self._start_claim(Claim(slot, old.customer, cur.weight, old.group, now, old.limits), now)
                    self._claims[slot].start_time = old.start_time
            for slot in [slot for slot in seen if slot not in claims]:
                cur = seen[slot]
                self._start_claim(Claim(slot, cur.customer, cur.weight, cur.group, now, cur.limits), now)

    def set_usage(self, name: str, weighted: float, now: float, count: Optional[float] = None) -> None:
        """Set ``name``'s in-use usage from ``now`` on, without slot records (for simulations).

        The part of the current interval before ``now`` stays charged at the old usage.
        """
        with self.transaction():
            c = self._record(name)
            elapsed = now - self._clock(now)
            c.weighted_uncharged_time += (c.weighted_resources_used - weighted) * elapsed
            c.weighted_resources_used = weighted
            count = weighted if count is None else count
            c.uncharged_time += (c.resources_used - count) * elapsed
            c.resources_used = count

    def set_group_quotas(self, rows: Iterable[QuotaRecord]) -> None:
        """Replace the quota table with this cycle's (an empty list clears it)."""
        with self.transaction():
            self._quotas = [replace(q) for q in rows]

    def policy_usage(self, policy: str) -> dict[str, tuple[float, tuple[float, ...], float]]:
        """A priority policy's stored usage: entity -> (value, buckets, time of update)."""
        return dict(self._policy_usage.get(policy, {}))

    def policy_report(self, policy: Optional[str] = None) -> Optional[tuple[str, float, list[dict]]]:
        """(policy, time, rows) of ``policy``'s last cycle, or of the latest policy cycle."""
        if policy is None:
            if not self._policy_reports:
                return None
            policy = max(self._policy_reports, key=lambda p: (self._policy_reports[p][0], p))
        if policy not in self._policy_reports:
            return None
        t, rows = self._policy_reports[policy]
        return policy, t, [dict(r) for r in rows]

    def set_policy_state(
        self, policy: str, usage: dict[str, tuple[float, tuple[float, ...], float]], now: float, rows: list[dict]
    ) -> None:
        """Replace a policy's usage and its report rows (part of the current transaction)."""
        with self.transaction():
            self._policy_usage[policy] = dict(usage)
            self._policy_reports[policy] = (now, [dict(r) for r in rows])
            self._policy_dirty.add(policy)

    def clear(self) -> None:
        """Forget every record, claim, quota table and policy state, and the clock: the
        store starts over as a new one (part of the current transaction, so nothing is
        lost until it commits)."""
        with self.transaction():
            self._gone |= set(self._customers)
            self._customers.clear()
            self._dirty.clear()
            self._gone_claims |= set(self._claims)
            self._claims.clear()
            self._claim_place.clear()
            self._dirty_claims.clear()
            self._quotas = []
            self._policy_dirty |= set(self._policy_usage) | set(self._policy_reports)
            self._policy_usage.clear()
            self._policy_reports.clear()
            self._last_update = None

    # ---- condor_userprio edits (docs/negotiation.md, editing priorities) ----------------------------------------------

    def _edit(self, name: str, **values: float) -> None:
        with self.transaction():
            c = self._record(name)
            for key, value in values.items():
                setattr(c, key, float(value))

    def set_priority(self, name: str, value: float) -> None:
        """``-setprio``: overwrite the stored RUP."""
        self._edit(name, priority=value)

    def set_factor(self, name: str, value: float) -> None:
        """``-setfactor``: store a priority factor; below 1 is raised to 1 (HTCondor clamps)."""
        self._edit(name, factor=max(1.0, float(value)))

    def set_accumulated_usage(self, name: str, value: float) -> None:
        """``-setaccum``: overwrite the weighted accumulated usage (slot-seconds)."""
        self._edit(name, weighted_accumulated_usage=value)

    def set_begin_usage_time(self, name: str, value: float) -> None:
        """``-setbegin``."""
        self._edit(name, begin_usage_time=value)

    def set_last_usage_time(self, name: str, value: float) -> None:
        """``-setlast``."""
        self._edit(name, last_usage_time=value)

    def set_ceiling(self, name: str, value: float) -> None:
        """``-setceiling``: cap on weighted usage (-1: none)."""
        self._edit(name, ceiling=value)

    def set_floor(self, name: str, value: float) -> None:
        """``-setfloor``: guaranteed weighted usage (0: none)."""
        self._edit(name, floor=value)

    def reset_usage(self, name: str, now: float) -> None:
        """``-resetusage``: accumulated usage to 0, usage start time to ``now``."""
        self._edit(name, accumulated_usage=0.0, weighted_accumulated_usage=0.0, begin_usage_time=now)

    def delete(self, name: str) -> None:
        """``-delete``: remove the record (a later use starts afresh)."""
        with self.transaction():
            if self._customers.pop(name, None) is not None:
                self._gone.add(name)
                self._dirty.discard(name)


__all__ = ["SCHEMA_VERSION", "Accountant", "Claim", "Customer", "QuotaRecord"]
