"""What a variant's run comes to: utilisation, shares against targets, fairness, waits.

Pure functions over one variant's simulation rows (:mod:`matchmaker.simulate.series`)
and its jobs' waits.  Definitions (docs/sweep.md says the same):

* **utilisation** -- the pool's claimed weight over its total weight, averaged over
  the cycles (the pool row's ``share``);
* a submitter's **share** -- its claimed weight over all submitters' claimed weight,
  summed over the cycles; its **target** -- ``(1/f) / sum(1/f_j)`` over the variant's
  submitters, ``f`` being its priority factor (``EUP / RUP`` of its last row), which
  is what HTCondor's fair share gives submitters of equal demand;
* **Jain's fairness index** of a cycle -- ``(sum x)^2 / (n * sum x^2)`` over the ``n``
  submitters with jobs queued (idle or running) at that cycle, ``x`` being a
  submitter's share of the claimed weight divided by its target among those ``n``;
  1 is perfectly fair, ``1/n`` is one submitter holding everything.  Undefined when
  nothing is claimed;
* **wait** -- seconds a job spent idle before a start: from its arrival, from the
  completion of its previous run (``SimJobRepeat``) or from its preemption.  Jobs
  still waiting at the end are counted apart (``never_started``);
* **preemptions**, and the **final** RUP and EUP of the last cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Optional

import numpy as np

SUMMARY_COLUMNS = (
    "kind",
    "name",
    "utilisation",
    "share",
    "target",
    "share_vs_target",
    "jain_mean",
    "jain_min",
    "wait_mean",
    "wait_p95",
    "starts",
    "never_started",
    "preemptions",
    "final_rup",
    "final_eup",
)


def factor_of(row: dict[str, Any]) -> Optional[float]:
    """The priority factor behind a row: its EUP over its RUP (``None`` without a priority)."""
    rup, eup = row.get("rup"), row.get("eup")
    if rup is None or eup is None or not rup:
        return None
    return eup / rup


def targets(factors: dict[str, Optional[float]]) -> dict[str, float]:
    """Each name's fair fraction ``(1/f) / sum(1/f)`` (a missing factor counts as 1)."""
    inverse = {n: 1.0 / (f if f else 1.0) for n, f in factors.items()}
    total = sum(inverse.values())
    return {n: v / total for n, v in inverse.items()} if total > 0 else {}


def jain(values: Sequence[float]) -> Optional[float]:
    """Jain's fairness index of ``values`` (``None`` when they are all zero or none)."""
    squares = sum(v * v for v in values)
    if not values or squares == 0:
        return None
    return sum(values) ** 2 / (len(values) * squares)


def jain_by_cycle(rows: Iterable[dict[str, Any]]) -> list[tuple[int, float, Optional[float]]]:
    """``(cycle, hours, index)`` for every cycle of one variant's rows."""
    cycles: dict[int, list[dict[str, Any]]] = {}
    hours: dict[int, float] = {}
    for r in rows:
        if r["kind"] == "submitter":
            cycles.setdefault(r["cycle"], []).append(r)
        hours.setdefault(r["cycle"], r["hours"])
    out = []
    for k in sorted(hours):
        active = [r for r in cycles.get(k, []) if r["running"] + r["idle"] > 0]
        claimed = sum(r["usage"] for r in active)
        index = None
        if claimed > 0:
            aim = targets({r["name"]: factor_of(r) for r in active})
            index = jain([r["usage"] / claimed / aim[r["name"]] for r in active])
        out.append((k, hours[k], index))
    return out


def _percentile(values: Sequence[float], q: float) -> Optional[float]:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if values else None


def _mean(values: Sequence[float]) -> Optional[float]:
    return float(np.mean(np.asarray(values, dtype=float))) if values else None


def summarise(
    rows: Sequence[dict[str, Any]], waits: Sequence[tuple[str, float]], never_started: dict[str, int]
) -> list[dict[str, Any]]:
    """One row for the pool and one per submitter and group (columns :data:`SUMMARY_COLUMNS`)."""
    by_name: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by_name.setdefault((r["kind"], r["name"]), []).append(r)
    submitters = [name for kind, name in by_name if kind == "submitter"]
    claimed = {n: sum(r["usage"] for r in by_name[("submitter", n)]) for n in submitters}
    total = sum(claimed.values())
    aim = targets({n: factor_of(by_name[("submitter", n)][-1]) for n in submitters})
    index = [j for _, _, j in jain_by_cycle(rows) if j is not None]
    group_of = {n: by_name[("submitter", n)][0]["group"] for n in submitters}
    waits_of: dict[tuple[str, str], list[float]] = {("pool", "pool"): [w for _, w in waits]}
    for s, w in waits:
        waits_of.setdefault(("submitter", s), []).append(w)
        if group_of.get(s) is not None:
            waits_of.setdefault(("group", group_of[s]), []).append(w)
    out = []
    for (kind, name), series in by_name.items():
        mine = waits_of.get((kind, name), [])
        share = claimed[name] / total if kind == "submitter" and total > 0 else None
        target = aim.get(name) if kind == "submitter" else None
        last = series[-1]
        row = dict(
            kind=kind,
            name=name,
            utilisation=_mean([r["share"] for r in series]),
            share=share,
            target=target,
            share_vs_target=share / target if share is not None and target else None,
            jain_mean=_mean(index) if kind == "pool" else None,
            jain_min=min(index) if kind == "pool" and index else None,
            wait_mean=_mean(mine),
            wait_p95=_percentile(mine, 95),
            starts=len(mine),
            never_started=_never(never_started, group_of, kind, name),
            preemptions=sum(r["preempted"] for r in series),
            final_rup=last["rup"],
            final_eup=last["eup"],
        )
        out.append(row)
    order = {"pool": 0, "submitter": 1, "group": 2}
    return sorted(out, key=lambda r: order.get(r["kind"], 3))


def _never(counts: dict[str, int], group_of: dict[str, Optional[str]], kind: str, name: str) -> int:
    if kind == "pool":
        return sum(counts.values())
    if kind == "group":
        return sum(n for s, n in counts.items() if group_of.get(s) == name)
    return counts.get(name, 0)


__all__ = ["SUMMARY_COLUMNS", "factor_of", "jain", "jain_by_cycle", "summarise", "targets"]
