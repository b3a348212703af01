"""The time series of a simulation: one row per cycle and per submitter, group and pool.

Each row is a flat dict with the columns of :data:`COLUMNS`:

* ``time`` (seconds since the epoch), ``hours`` (since the start), ``cycle`` (from 0);
* ``kind`` (``submitter``, ``group`` or ``pool``), ``name``, ``group`` (a submitter's group);
* ``running``, ``idle``, ``pending`` (not yet arrived), ``done`` -- job counts after the cycle;
* ``matched``, ``preempted`` -- in this cycle;
* ``usage`` -- weighted slots claimed after the cycle; ``share`` -- usage / pool weight;
* ``rup``, ``eup`` -- the accountant's priorities at the cycle (aged to ``time``);
* ``charged`` -- weighted usage charged so far, in slot-seconds.

:class:`Simulation` holds the rows with the run's parameters, the claim spans (for
checking what was charged) and the jobs' outcomes; it writes CSV and JSON (each file atomically) and, when
pandas is installed, gives a DataFrame.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any, Optional, TextIO

from ..cycle.results import CycleResult
from .atomic import write_atomically
from .spans import ClaimSpan, ClaimSpans

if TYPE_CHECKING:
    from .jobs import SimJob

COLUMNS = (
    "time",
    "hours",
    "cycle",
    "kind",
    "name",
    "group",
    "running",
    "idle",
    "pending",
    "done",
    "matched",
    "preempted",
    "usage",
    "share",
    "rup",
    "eup",
    "charged",
)
POOL = "pool"


@dataclass(slots=True)
class JobOutcome:
    """How one job fared: its final phase, runs completed, starts, preemptions and the
    time it waited idle before each start."""

    id: str
    submitter: str
    phase: str
    runs: int
    starts: int
    preemptions: int
    waits: tuple[float, ...] = ()  # seconds idle before each start (from arrival, requeue, preemption)


@dataclass
class Simulation:
    """The rows of a run plus its parameters (a sequence of row dicts)."""

    start: float
    interval: float
    duration: float
    seed: Optional[int]
    job_duration: float
    pool_weight: float
    rows: list[dict[str, Any]] = field(default_factory=list)
    spans: ClaimSpans = field(default_factory=ClaimSpans)  # a sequence of ClaimSpan
    jobs: list[JobOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    # ---- the sequence of rows -------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.rows[i]

    def names(self, kind: str = "submitter") -> list[str]:
        """Names with rows of ``kind``, in first-seen order."""
        return list(dict.fromkeys(r["name"] for r in self.rows if r["kind"] == kind))

    def column(self, name: str, field_name: str, kind: str = "submitter") -> list[Any]:
        """One column of one name's rows, in time order."""
        return [r[field_name] for r in self.rows if r["kind"] == kind and r["name"] == name]

    def at(self, hours: float, name: str, kind: str = "submitter") -> dict[str, Any]:
        """The row of ``name`` at the cycle ``hours`` after the start (KeyError if none)."""
        for r in self.rows:
            if r["kind"] == kind and r["name"] == name and math.isclose(r["hours"], hours, abs_tol=1e-9):
                return r
        raise KeyError(f"no {kind} row for {name} at {hours} h")

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "Simulation.to_frame needs pandas (pip install pandas); the rows are also available as a list of dicts"
            ) from None
        return pd.DataFrame(self.rows, columns=list(COLUMNS))

    # ---- building -------------------------------------------------------------------------

    def record(self, k: int, t: float, run: Any, result: CycleResult, preempted: dict[str, int]) -> None:
        """Append the rows of cycle ``k`` at ``t`` (``run`` is the loop's state)."""
        none = dict(running=0, idle=0, pending=0, done=0)
        usage: dict[str, float] = {}
        for c in run.charged:  # the charged slots' claims, in slot order
            usage[c.customer] = usage.get(c.customer, 0.0) + c.weight
        matched: dict[str, int] = {}
        for m in result.matches:
            matched[m.submitter] = matched.get(m.submitter, 0) + 1
        known = set(run.submitters)
        for name in chain(run.timeline.counts, usage, matched, preempted):
            if name not in known:  # first seen now: a job whose ad names another submitter than it did
                known.add(name)
                run.submitters.append(name)
        counts: dict[str, dict[str, int]] = {n: run.timeline.counts.get(n, none) for n in run.submitters}
        hours = (t - self.start) / 3600.0
        base = dict(time=t, hours=hours, cycle=k)
        rows = []
        for name in run.submitters:
            rows.append(
                dict(
                    base,
                    kind="submitter",
                    name=name,
                    group=run.group_of(name),
                    **counts[name],
                    matched=matched.get(name, 0),
                    preempted=preempted.get(name, 0),
                    usage=usage.get(name, 0.0),
                    **self._prio(run, name),
                )
            )
        groups: dict[str, dict[str, Any]] = {}
        for r in rows:
            if r["group"] is None:
                continue
            g = groups.setdefault(
                r["group"],
                dict(
                    base,
                    kind="group",
                    name=r["group"],
                    group=r["group"],
                    running=0,
                    idle=0,
                    pending=0,
                    done=0,
                    matched=0,
                    preempted=0,
                    usage=0.0,
                ),
            )
            for key in ("running", "idle", "pending", "done", "matched", "preempted", "usage"):
                g[key] += r[key]
        for g in groups.values():
            g.update(self._prio(run, g["name"]))
        total = dict(base, kind=POOL, name=POOL, group=None)
        for key in ("running", "idle", "pending", "done", "matched", "preempted", "usage", "charged"):
            total[key] = sum(r[key] for r in rows)
        total.update(rup=None, eup=None)
        for r in [*rows, *groups.values(), total]:
            r["share"] = r["usage"] / self.pool_weight if self.pool_weight > 0 else 0.0
            self.rows.append({c: r[c] for c in COLUMNS})

    def _prio(self, run: Any, name: str) -> dict[str, Any]:
        c = run.acct.get(name)
        return dict(
            rup=run.acct.rup(name), eup=run.eup(name), charged=c.weighted_accumulated_usage if c is not None else 0.0
        )

    def finish(self, jobs: Sequence["SimJob"], spans: Sequence[ClaimSpan], warnings: Sequence[str]) -> None:
        """Store the jobs' outcomes, the claim spans (ordered by start, then slot) and the
        warnings at the end of the run."""
        self.jobs = [JobOutcome(j.id, j.submitter, j.phase, j.runs, j.starts, j.preemptions, j.waits) for j in jobs]
        self.spans = (spans if isinstance(spans, ClaimSpans) else ClaimSpans(spans)).by_start()
        self.warnings = list(dict.fromkeys(warnings))

    # ---- writing --------------------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        """The run's parameters."""
        return dict(
            start=self.start,
            interval=self.interval,
            duration=self.duration,
            seed=self.seed,
            job_duration=self.job_duration,
            pool_weight=self.pool_weight,
            cycles=len({r["cycle"] for r in self.rows}),
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON document: ``meta``, ``rows``, ``jobs`` and ``warnings``."""
        return dict(meta=self.meta(), rows=self.rows, jobs=[asdict(j) for j in self.jobs], warnings=self.warnings)

    def write_csv(self, path: str | os.PathLike) -> None:
        """The rows as CSV with a header line (empty cells for None), written atomically
        (:func:`~matchmaker.simulate.atomic.write_atomically`)."""

        def write(fh: TextIO) -> None:
            w = csv.DictWriter(fh, fieldnames=list(COLUMNS))
            w.writeheader()
            w.writerows(self.rows)

        write_atomically(path, write, newline="")

    def write_json(self, path: str | os.PathLike) -> None:
        """The :meth:`to_json` document, written atomically."""

        def write(fh: TextIO) -> None:
            json.dump(self.to_json(), fh, indent=1)
            fh.write("\n")

        write_atomically(path, write)


__all__ = ["COLUMNS", "POOL", "ClaimSpan", "ClaimSpans", "JobOutcome", "Simulation"]
