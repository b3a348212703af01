"""``matchmaker userprio`` under a priority policy: the policy's own breakdown.

When the last cycle stored in the accountant ran under ``MATCHMAKER_PRIORITY_POLICY``
other than ``htcondor`` (or with ``--policy NAME``), ``userprio`` prints that policy's
rows as its own tool would: LSF ``bhpart -r`` (each level of the share tree under its
path, group rows included: shares, priority, started slots, CPU, run and historical run
hours, the fair-share adjustment), Maui ``mdiag -p`` (per-component priorities), DIRAC TaskQueue priorities,
Slurm ``sprio`` (priority and factors); ``--json`` prints them as one object.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from ..accounting.store import Accountant, store_absent
from ..errors import StateError

COLUMNS = {
    "lsf": (
        ("SHARE_INFO_FOR", "parent"),
        ("USER/GROUP", "name"),
        ("SHARES", "shares"),
        ("PRIORITY", "priority"),
        ("STARTED", "started"),
        ("CPU_HOURS", "cpu_hours"),
        ("RUN_HOURS", "run_hours"),
        ("HIST_RUN_HOURS", "hist_run_hours"),
        ("ADJUST", "adjust"),
    ),
    "maui": (
        ("JOB", "name"),
        ("PRIORITY", "priority"),
        ("SERV", "serv"),
        ("TARG", "targ"),
        ("CRED", "cred"),
        ("FS", "fs"),
        ("RES", "res"),
    ),
    "dirac": (
        ("TASKQUEUE", "name"),
        ("OWNER", "owner"),
        ("GROUP", "group"),
        ("CORRECTION", "correction"),
        ("PRIORITY", "priority"),
    ),
    "slurm": (
        ("JOBID", "name"),
        ("PRIORITY", "priority"),
        ("AGE", "age"),
        ("FAIRSHARE", "fairshare"),
        ("JOBSIZE", "jobsize"),
        ("QOS", "qos"),
        ("NICE", "nice"),
    ),
}


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e7 else f"{v:.6e}"
    return str(v)


# Columns of names, left-aligned; the others are numbers, right-aligned.
NAME_COLUMNS = frozenset({"name", "parent"})


def format_report(policy: str, rows: list[dict[str, Any]]) -> str:
    """The breakdown as a fixed-width table, name columns left-aligned."""
    cols = COLUMNS[policy]
    table = [[h for h, _ in cols]] + [[_cell(r.get(k)) for _, k in cols] for r in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(cols))]
    left = [k in NAME_COLUMNS for _, k in cols]
    lines = [
        "  ".join(c.ljust(w) if left[i] else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in table
    ]
    return f"Priority policy: {policy}\n" + "\n".join(lines) + "\n"


def _wants_policy(args: argparse.Namespace) -> bool:
    return not (args.quotas or args.setprio or args.setfactor or args.resetusage or args.delete)


def register(userprio: argparse.ArgumentParser) -> None:
    """Add ``--policy`` to the ``userprio`` parser and route to the policy breakdown."""
    userprio.add_argument(
        "--policy", choices=sorted(COLUMNS), help="show this priority policy's breakdown from the last cycle under it"
    )
    plain = userprio.get_default("run")

    def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        if not _wants_policy(args) or store_absent(args.state):
            return plain(args, out, err)
        acct = Accountant.load(args.state)
        try:
            report = acct.policy_report(args.policy)
            latest = report is not None and report[1] == acct.last_update_time
        finally:
            acct.close()
        if args.policy is not None and report is None:
            raise StateError(f"no cycle has run under the {args.policy} policy", file=args.state)
        if report is None or (args.policy is None and not latest):
            return plain(args, out, err)
        policy, time, rows = report
        if args.json:
            json.dump({"policy": policy, "time": time, "rows": rows}, out, indent=2)
            out.write("\n")
        else:
            out.write(format_report(policy, rows))
        return 0

    userprio.set_defaults(run=run)


__all__ = ["COLUMNS", "format_report", "register"]
