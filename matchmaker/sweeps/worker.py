"""One variant, run where a Dask worker runs it: the inputs shipped, the pool kept, the outcome.

The client reads the configuration (includes, map files and the environment it uses)
and sends each variant's :class:`Task` -- its knobs and typed settings, a few
kilobytes -- while the slot and job files travel once, as bytes (:class:`Inputs`,
scattered to every worker), because a remote worker cannot be assumed to see the
client's files.  A worker reads those bytes into a :class:`~matchmaker.pool.ads.Pool`
the first time a variant needs it and keeps it for the later variants with the same
job file and pool-shaping settings (slot weights, ``UID_DOMAIN``, the group map).

:func:`run_variant` never raises for a bad variant: the error is part of its
:class:`Outcome`, so one variant's failure does not stop the sweep.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Optional

from classad.errors import ClassAdError

from ..api import Loaded, check_limits, pool_options, simulate
from ..config.knobs import Knobs
from ..config.settings import Settings
from ..pool.ads import Pool, load_pool
from .spec import Variant

# Pools a worker keeps, most recently used first (a 2,000-slot pool is tens of megabytes).
POOLS_KEPT = 4


@dataclass(frozen=True)
class Inputs:
    """The ad files of a sweep as bytes, by the name the client gave them."""

    slots: str
    files: dict[str, bytes]
    digest: str

    @classmethod
    def read(cls, slots: str, jobs: list[str]) -> "Inputs":
        """Read the slot file and every job file (names as given) into memory."""
        files: dict[str, bytes] = {}
        h = hashlib.sha256()
        for name in [slots, *jobs]:
            if name in files:
                continue
            try:
                if name == "-":  # standard input, read once (a pipe cannot be read again)
                    files[name] = sys.stdin.buffer.read()
                else:  # a path, or a pipe or FIFO such as <(condor_q -json): read whole, never reopened
                    with open(name, "rb") as fh:
                        files[name] = fh.read()
            except OSError as exc:
                raise ClassAdError(f"cannot read ad file: {exc.strerror or exc}", file=name) from None
            h.update(name.encode("utf-8", "surrogateescape") + b"\0" + files[name] + b"\0")
        return cls(slots, files, h.hexdigest())


@dataclass(frozen=True)
class Task:
    """What a worker needs besides :class:`Inputs` to run one variant."""

    key: str
    variant: Variant
    knobs: Knobs
    settings: Settings
    warnings: tuple[str, ...]  # the configuration's warnings
    jobs: str  # which of the inputs' files holds the jobs
    pool_key: str  # variants with equal keys share one loaded pool
    start: float
    duration: float
    interval: Optional[float]
    job_duration: float
    factors: tuple[tuple[str, float], ...]


@dataclass
class Outcome:
    """A finished variant: its rows, jobs' waits and warnings, or its error and exit status."""

    key: str
    variant: Variant
    status: int = 0  # 0 done, 1 bad input, 2 internal error
    error: Optional[str] = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    waits: list[tuple[str, float]] = field(default_factory=list)  # (submitter, seconds) per start
    idle_at_end: dict[str, int] = field(default_factory=dict)  # jobs never started, per submitter
    warnings: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0  # running the simulation
    load_seconds: float = 0.0  # reading the pool (0 when the worker kept it)

    @property
    def ok(self) -> bool:
        return self.status == 0


_POOLS: "OrderedDict[tuple[str, str, str], Pool]" = OrderedDict()


def pool_key(settings: Settings) -> str:
    """A digest of the settings that shape a pool read from ads (see ``api.pool_options``)."""
    import pickle

    try:
        return hashlib.sha256(pickle.dumps(pool_options(settings))).hexdigest()
    except Exception:  # unpicklable: no sharing, never a wrong pool
        return f"unshared-{id(settings)}"


def _pool(inputs: Inputs, task: Task) -> tuple[Pool, float]:
    """The task's pool, from this worker's store or read now; and the seconds spent reading."""
    key = (inputs.digest, task.jobs, task.pool_key)
    if key in _POOLS:
        _POOLS.move_to_end(key)
        return _POOLS[key], 0.0
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="matchmaker-sweep-") as tmp:
        paths = []
        for i, name in enumerate((inputs.slots, task.jobs)):
            path = os.path.join(tmp, f"{i}-{os.path.basename(name) or 'ads'}")
            with open(path, "wb") as fh:
                fh.write(inputs.files[name])
            paths.append(path)
        pool = load_pool(paths[0], paths[1], **pool_options(task.settings))
        pool = _renamed(pool, {paths[0]: inputs.slots, paths[1]: task.jobs})
    _POOLS[key] = pool
    while len(_POOLS) > POOLS_KEPT:
        _POOLS.popitem(last=False)
    return pool, time.perf_counter() - began


def _renamed(pool: Pool, names: dict[str, str]) -> Pool:
    """The pool's warnings naming the client's files rather than this worker's copies."""

    def fix(text: str) -> str:
        for tmp, name in names.items():
            text = text.replace(tmp, name)
        return text

    return Pool(pool.slots, pool.jobs, [fix(w) for w in pool.warnings], [(fix(a), fix(b)) for a, b in pool.refused])


def run_variant(task: Task, inputs: Inputs) -> Outcome:
    """Simulate one variant; a failure is returned in the outcome, not raised."""
    out = Outcome(task.key, task.variant)
    try:
        pool, out.load_seconds = _pool(inputs, task)
        check_limits(pool, task.settings)  # a variant may set a limit's capacity
        began = time.perf_counter()
        loaded = Loaded(task.knobs, task.settings, pool, task.warnings)
        sim = simulate(
            loaded,
            start=task.start,
            duration=task.duration,
            interval=task.interval,
            seed=task.variant.seed,
            job_duration=task.job_duration,
            factors=dict(task.factors),
        )
        out.seconds = time.perf_counter() - began
    except ClassAdError as exc:
        out.status, out.error = 1, _one_line(exc)
        return out
    except (ValueError, OverflowError) as exc:
        out.status, out.error = 1, f"error: {exc}"
        return out
    except Exception as exc:  # reported with the variant, never lost in a worker's log
        out.status, out.error = 2, f"internal error: {type(exc).__name__}: {exc}"
        return out
    out.rows = sim.rows
    out.waits = [(j.submitter, w) for j in sim.jobs for w in j.waits]
    for j in sim.jobs:
        if j.starts == 0 and j.phase == "idle":
            out.idle_at_end[j.submitter] = out.idle_at_end.get(j.submitter, 0) + 1
    out.warnings = list(task.warnings) + list(sim.warnings)
    out.meta = sim.meta()
    return out


def _one_line(exc: ClassAdError) -> str:
    where = exc.file or "<input>"
    if exc.line is not None:
        where += f":{exc.line}"
    message = exc.message if exc.column is None else f"column {exc.column}: {exc.message}"
    return f"{where}: {exc.kind}: {' '.join(message.split())}"


__all__ = ["POOLS_KEPT", "Inputs", "Outcome", "Task", "pool_key", "run_variant"]
