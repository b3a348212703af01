"""What ``condor_userprio`` shows and edits (docs/negotiation.md, editing priorities and reports), over the accountant store.

Two views of :class:`~matchmaker.accounting.store.Accountant`:

* the priority table: one :class:`PrioRow` per principal (EUP, RUP, factor, usage),
  best effective priority first;
* the quota table (``-quotas``): the group quotas of the last negotiation cycle,
  which the cycle stores in the accountant (:class:`~matchmaker.accounting.store.QuotaRecord`),
  so the view needs no configuration and shows what the negotiator last used --
  as ``condor_userprio`` asks the running negotiator rather than reading config.

Design: rows are plain data built by pure functions; the text renderers return
strings and never touch a terminal, so the CLI only chooses and prints.  Dates
are printed in UTC, and the headings say so (``Last Priority Update: ... UTC``,
``USAGE START TIME (UTC)``): the output does not depend on the machine's time zone
(``TZ``), unlike ``condor_userprio``'s local times, and cannot be mistaken for them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, Iterable, Optional, Sequence

from .priority_math import MAX_AMOUNT, MAX_FACTOR, MAX_TIME, NONE_GROUP, effective_priority, resolve_prio_factor
from .store import Accountant, QuotaRecord

DAY = 86400.0
_RULE = "-" * 24 + " " + "-" * 9 + " " + "-" * 9 + " " + "-" * 7 + " " + "-" * 9 + " " + "-" * 10


@dataclass(frozen=True)
class PrioRow:
    """One line of ``condor_userprio`` (docs/negotiation.md, reports)."""

    name: str
    is_group: bool
    effective_priority: float
    real_priority: float
    priority_factor: float
    resources_used: float
    weighted_resources_used: float
    accumulated_usage_hours: float  # weighted
    begin_usage_time: float
    last_usage_time: float
    time_since_last_usage: float  # LastUpdate − LastUsageTime; 0 prints as "<now>"
    floor: float
    ceiling: float


def priority_report(
    acct: Accountant,
    *,
    names: Optional[Iterable[str]] = None,
    all_users: bool = False,
    now: Optional[float] = None,
    window: float = DAY,
    active_since: Optional[float] = None,
) -> list[PrioRow]:
    """The rows ``condor_userprio`` shows, best (smallest) effective priority first.

    By default only principals used within ``window`` seconds of ``now`` (default: the
    last update); ``all_users`` shows every record, ``names`` exactly those named, and
    ``active_since`` (``-activefrom``) those whose last usage is at or after that time.
    """
    last = acct.last_update_time or 0.0
    ref = last if now is None else now
    wanted = set(names) if names is not None else None
    rows = []
    for c in acct.customers():
        if wanted is not None:
            if c.name not in wanted:
                continue
        elif active_since is not None:
            if c.last_usage_time <= 0 or c.last_usage_time < active_since:
                continue
        elif not all_users and (c.last_usage_time <= 0 or c.last_usage_time < ref - window):
            continue
        factor = resolve_prio_factor(c.factor, c.name, acct.factors)
        rows.append(
            PrioRow(
                name=c.name,
                is_group=c.is_group,
                effective_priority=effective_priority(c.rup, factor),
                real_priority=c.rup,
                priority_factor=factor,
                resources_used=c.resources_used,
                weighted_resources_used=c.weighted_resources_used,
                accumulated_usage_hours=c.weighted_accumulated_usage / 3600.0,
                begin_usage_time=c.begin_usage_time,
                last_usage_time=c.last_usage_time,
                time_since_last_usage=max(0.0, last - c.last_usage_time) if c.last_usage_time else 0.0,
                floor=c.floor,
                ceiling=c.ceiling,
            )
        )
    rows.sort(key=lambda r: (r.effective_priority, r.name))
    return rows


# The edits of ``condor_userprio`` this store supports, in the order the CLI applies them,
# with what each one's value means (the CLI's help text).
EDITS = {
    "setprio": f"set the real user priority (RUP; a number > 0, at most {MAX_AMOUNT:g})",
    "setfactor": f"set the priority factor (a number from 1, as condor_userprio requires, to {MAX_FACTOR:g})",
    "setaccum": f"set the accumulated usage (weighted slot-seconds, 0 to {MAX_AMOUNT:g})",
    "setbegin": "set the time usage began (seconds since the epoch, up to the end of the year 9999)",
    "setlast": "set the time of the last usage (seconds since the epoch, up to the end of the year 9999)",
    "setfloor": f"set the floor: weighted usage guaranteed before the pie (0 to {MAX_AMOUNT:g})",
    "setceiling": f"set the ceiling: the most weighted usage allowed (0 to {MAX_AMOUNT:g}, or -1 for none)",
}

# The range of each edit's value: (lowest, lowest included, highest); a ceiling may also be -1.
_RANGES = {
    "setprio": (0.0, False, MAX_AMOUNT),
    "setfactor": (1.0, True, MAX_FACTOR),
    "setaccum": (0.0, True, MAX_AMOUNT),
    "setbegin": (0.0, True, MAX_TIME),
    "setlast": (0.0, True, MAX_TIME),
    "setfloor": (0.0, True, MAX_AMOUNT),
    "setceiling": (0.0, True, MAX_AMOUNT),
}


def check_edit(acct: Accountant, command: str, name: str, value: Optional[float]) -> None:
    """Refuse an edit ``condor_userprio`` would refuse, one whose value is out of its range
    (see :data:`EDITS`), or one that would create a record by mistake: ``ValueError``
    stating the rule."""
    if not name or any(c.isspace() or not c.isprintable() for c in name):
        raise ValueError(f"{command}: {name!r} is not a submitter or group name")
    user, at, domain = name.rpartition("@")
    if at and (not user or not domain or "@" in user):
        raise ValueError(f"{command}: {name!r} is not of the form user@domain")
    if "@" not in name and acct.get(name) is None:
        raise ValueError(
            f"{command}: {name!r} is neither user@domain nor a principal in the store "
            "(a group gets a record at its first cycle)"
        )
    if value is None:
        return
    if not math.isfinite(value):
        raise ValueError(f"{command}: {value!r} is not a finite number")
    if command == "setceiling" and value == -1.0:
        return
    low, inclusive, high = _RANGES.get(command, (-math.inf, True, math.inf))
    if value < low or (value == low and not inclusive) or value > high:
        what = {
            "setfactor": "the priority factor",
            "setprio": "the priority",
            "setceiling": "the ceiling",
            "setfloor": "the floor",
            "setbegin": "the time",
            "setlast": "the time",
        }.get(command, "the value")
        lowest = ("non-negative" if low == 0 else f"at least {low:g}") if inclusive else f"greater than {low:g}"
        extra = " (or -1 for none)" if command == "setceiling" else ""
        highest = f"{high:.0f} (the end of the year 9999)" if high == MAX_TIME else f"{high:g}"
        raise ValueError(f"{command}: {what} must be {lowest} and at most {highest}{extra}, not {value:g}")


def admin(acct: Accountant, command: str, name: str, value: Optional[str] = None, *, now: float = 0.0) -> None:
    """Apply one ``condor_userprio`` edit by its option name (``setprio``, ``-delete``, ...),
    after :func:`check_edit`; a refused edit raises ``ValueError`` and changes nothing."""
    numeric = {
        "setprio": acct.set_priority,
        "setfactor": acct.set_factor,
        "setaccum": acct.set_accumulated_usage,
        "setbegin": acct.set_begin_usage_time,
        "setlast": acct.set_last_usage_time,
        "setceiling": acct.set_ceiling,
        "setfloor": acct.set_floor,
    }
    command = command.lstrip("-").lower()
    if command in numeric:
        if value is None:
            raise ValueError(f"{command} needs a value")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"{command}: {value!r} is not a number") from None
        check_edit(acct, command, name, number)
        numeric[command](name, number)
    elif command == "resetusage":
        check_edit(acct, command, name, None)
        acct.reset_usage(name, now)
    elif command == "delete":
        if acct.get(name) is None:
            raise ValueError(f"delete: no principal {name!r} in the store")
        acct.delete(name)
    else:
        raise ValueError(f"unknown condor_userprio edit {command!r}")


# ---- the quota table (-quotas) ---------------------------------------------------------------


def quota_report(acct: Accountant, *, all_groups: bool = False) -> list[QuotaRecord]:
    """The groups ``-quotas`` lists, in the last cycle's group order.

    Like ``condor_userprio``'s default of showing only active records, a group is listed
    when it had demand or usage in the last cycle; ``all_groups`` lists every configured
    group and the root ``<none>``.
    """
    rows = acct.group_quotas()
    if not all_groups:
        rows = [q for q in rows if q.name != NONE_GROUP and (q.requested > 0 or q.usage > 0)]
    return rows


def surplus_policy(rows: Sequence[QuotaRecord]) -> str:
    """The footer's pool-wide policy: surplus is shared in proportion to quota
    (``ByQuota``), or ``Regroup`` when some group also negotiates in ``<none>``."""
    return "Regroup" if any(q.surplus == "Regroup" for q in rows) else "ByQuota"


def user_count(acct: Accountant) -> int:
    """Submitter records (not groups) in the accountant: the footer's "Number of users"."""
    return sum(1 for c in acct.customers() if not c.is_group)


def _quantity(x: float) -> str:
    """A demand: whole numbers without decimals (job counts), else two decimals."""
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2f}"


def format_time(epoch: Optional[float]) -> str:
    """``MM/DD HH:MM UTC``, or ``never``."""
    if epoch is None:
        return "never"
    return time.strftime("%m/%d %H:%M UTC", time.gmtime(epoch))


def format_quotas(rows: Sequence[QuotaRecord], *, last_update: Optional[float], users: int, policy: str) -> str:
    """The ``condor_userprio -quotas`` table (column layout of docs/negotiation.md, reports)."""
    lines = [
        f"Last Priority Update: {format_time(last_update)}",
        "Group                    Effective  Config     Use    Subtree  Requested",
        "Name                       Quota     Quota   Surplus   Quota   Resources",
        _RULE,
    ]
    for q in rows:
        lines.append(
            f"{q.name:<24} {q.quota:9.2f} {q.config_quota:9.2f} {q.surplus:<7} "
            f"{q.subtree_quota:9.2f} {_quantity(q.requested):>10}"
        )
    lines.append(_RULE)
    lines.append(f"{'Number of users: ' + str(users):<51}{policy}")
    return "\n".join(lines) + "\n"


def quotas_json(
    rows: Sequence[QuotaRecord], *, last_update: Optional[float], users: int, policy: str
) -> dict[str, Any]:
    """The ``--quotas --json`` document."""
    return {
        "last_update": last_update,
        "users": users,
        "surplus_policy": policy,
        "groups": [
            {
                "name": q.name,
                "effective_quota": q.quota,
                "config_quota": q.config_quota,
                "quota_is_static": q.is_static,
                "use_surplus": q.surplus,
                "subtree_quota": q.subtree_quota,
                "requested": q.requested,
                "allocated": q.allocated,
                "usage": q.usage,
                "sort_key": q.sort_key if math.isfinite(q.sort_key) else None,
                "order": q.position,
                "matched": q.matched,
            }
            for q in rows
        ],
    }


# ---- the priority table ----------------------------------------------------------------------


def _table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out) + "\n"


def roll_up(rows: Sequence[PrioRow]) -> list[PrioRow]:
    """``-grouprollup``: each group's row with its subgroups' usage added (resources in use
    and accumulated usage; a subgroup of ``g`` is a group named ``g.<something>``), so a
    parent shows the whole subtree's use.  Submitter rows are unchanged."""
    groups = [r for r in rows if r.is_group]
    out = []
    for r in rows:
        if not r.is_group:
            out.append(r)
            continue
        below = [g for g in groups if g.name.lower().startswith(r.name.lower() + ".")]
        out.append(
            replace(
                r,
                resources_used=r.resources_used + sum(g.resources_used for g in below),
                weighted_resources_used=r.weighted_resources_used + sum(g.weighted_resources_used for g in below),
                accumulated_usage_hours=r.accumulated_usage_hours + sum(g.accumulated_usage_hours for g in below),
            )
        )
    return out


def format_date(epoch: float) -> str:
    """``M/DD/YYYY HH:MM`` in UTC as ``condor_userprio`` prints usage times; ``-`` for none."""
    if epoch <= 0:
        return "-"
    t = time.gmtime(epoch)
    return f"{t.tm_mon}/{t.tm_mday:02d}/{t.tm_year} {t.tm_hour:02d}:{t.tm_min:02d}"


def format_usage(rows: Sequence[PrioRow]) -> str:
    """``condor_userprio -usage``: accumulated usage with the times it began and last grew."""
    if not rows:
        return "No users.\n"
    return _table(
        [("USER", "USAGE (HRS)", "USAGE START TIME (UTC)", "LAST USAGE TIME (UTC)")]
        + [
            (
                r.name,
                f"{r.accumulated_usage_hours:.2f}",
                format_date(r.begin_usage_time),
                format_date(r.last_usage_time),
            )
            for r in rows
        ],
        right=(1,),
    )


def format_most(rows: Sequence[PrioRow]) -> str:
    """``condor_userprio -most``: priorities, factor, use and the usage columns in one table."""
    if not rows:
        return "No users.\n"
    return _table(
        [
            (
                "USER",
                "EFFECTIVE",
                "REAL",
                "FACTOR",
                "IN USE",
                "USAGE (HRS)",
                "USAGE START TIME (UTC)",
                "LAST USAGE TIME (UTC)",
            )
        ]
        + [
            (
                r.name,
                f"{r.effective_priority:.2f}",
                f"{r.real_priority:.2f}",
                f"{r.priority_factor:.2f}",
                f"{r.weighted_resources_used:g}",
                f"{r.accumulated_usage_hours:.2f}",
                format_date(r.begin_usage_time),
                format_date(r.last_usage_time),
            )
            for r in rows
        ],
        right=(1, 2, 3, 4, 5),
    )


def format_priorities(rows: Sequence[PrioRow]) -> str:
    """A ``condor_userprio``-like table of priorities and usage."""
    if not rows:
        return "No users.\n"
    return _table(
        [("USER", "EFFECTIVE", "REAL", "FACTOR", "IN USE", "USAGE (HRS)", "FLOOR", "CEILING")]
        + [
            (
                r.name,
                f"{r.effective_priority:.2f}",
                f"{r.real_priority:.2f}",
                f"{r.priority_factor:.2f}",
                f"{r.weighted_resources_used:g}",
                f"{r.accumulated_usage_hours:.2f}",
                f"{r.floor:g}" if r.floor else "",
                f"{r.ceiling:g}" if r.ceiling >= 0 else "",
            )
            for r in rows
        ],
        right=(1, 2, 3, 4, 5, 6, 7),
    )


def priorities_json(rows: Sequence[PrioRow], last_update: Optional[float]) -> dict[str, Any]:
    """The ``--json`` document of the priority table."""
    return {
        "last_update": last_update,
        "users": [
            {
                "name": r.name,
                "is_group": r.is_group,
                "effective_priority": r.effective_priority,
                "real_priority": r.real_priority,
                "priority_factor": r.priority_factor,
                "resources_used": r.resources_used,
                "weighted_resources_used": r.weighted_resources_used,
                "accumulated_usage_hours": r.accumulated_usage_hours,
                "begin_usage_time": r.begin_usage_time,
                "last_usage_time": r.last_usage_time,
                "floor": r.floor,
                "ceiling": r.ceiling,
            }
            for r in rows
        ],
    }


__all__ = [
    "PrioRow",
    "admin",
    "format_date",
    "format_most",
    "format_priorities",
    "format_quotas",
    "format_time",
    "format_usage",
    "priorities_json",
    "priority_report",
    "quota_report",
    "quotas_json",
    "roll_up",
    "surplus_policy",
    "user_count",
]
