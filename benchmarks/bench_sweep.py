"""Time a sweep: 8 variants of the realistic 2,000-slot pool over 24 hours, sequentially
in one process and on an embedded Dask cluster of 2 worker processes, in one run.

The pool is :mod:`realistic_pool`'s (2,000 slot ads, 20,000 idle jobs from 40 submitters).
The variants are ``PRIORITY_HALFLIFE`` at 1 hour, 1, 3 and 7 days, each with seeds 1 and 2.

* **Sequential**: every variant's task run one after the other in this process, by the
  same function a worker runs (the pool read once and kept, as a worker keeps it).
* **Parallel**: the same tasks through :func:`matchmaker.sweeps.run_plan` on a
  ``LocalCluster`` of ``--workers`` single-threaded processes, started before the clock
  starts (its start-up is printed apart).

It prints both times, the speed-up, whether every variant's rows are identical in both
runs, and what shipping costs: the bytes scattered once (the ad files), a task's pickled
size (its variant, knobs and settings), the pool reads on the workers, and the
per-variant overhead, ``(workers x parallel time - compute time) / variants`` -- the time
per variant a worker spent on anything but simulating (receiving inputs, reading the
pool, sending rows back, waiting for the last variants).

    python benchmarks/bench_sweep.py                       # 24 h in cycles of 1 h
    python benchmarks/bench_sweep.py --interval 8h         # fewer cycles on a busy machine

One run on the idle 2-core machine (default ``--interval 1h``): sequential 64.7 s,
2 workers 37.5 s, speed-up 1.73x, rows identical; 28.0 MB scattered once, 13.5 kB per
task, 2 pool reads (1.7 s), a per-variant overhead of 0.18 s beside 9.2 s of simulation
(docs/sweep.md, with the spread between runs).
"""

from __future__ import annotations

import argparse
import logging
import pickle
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from realistic_pool import NOW, write_pool  # noqa: E402

from matchmaker.cli.simulate import parse_span  # noqa: E402
from matchmaker.sweeps import (  # noqa: E402
    make_plan,
    read_config,
    run_plan,
    variants_of,
    worker as sweep_worker,
)
from matchmaker.sweeps.plan import Times  # noqa: E402

VARY = {"PRIORITY_HALFLIFE": ["3600", "86400", "259200", "604800"], "seed": ["1", "2"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--slots", type=int, default=2000)
    p.add_argument("--hours", type=float, default=24.0)
    p.add_argument("--interval", type=parse_span, default=3600.0, help="time between cycles (default 1h)")
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    from distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory() as tmp:
        files = write_pool(tmp, slots=args.slots)
        config = read_config(files.config)
        variants = variants_of(config, None, VARY)
        plan = make_plan(
            config,
            str(files.config),
            str(files.slots),
            str(files.jobs),
            variants,
            Times(float(NOW), args.hours * 3600, args.interval),
        )
        cycles = int(args.hours * 3600 // args.interval) + 1
        print(
            f"{len(variants)} variants of {args.slots} slots, {files.idle_jobs} idle jobs; {args.hours:g} h "
            f"in {cycles} cycles of {args.interval:g} s"
        )

        began = time.perf_counter()
        sequential = [sweep_worker.run_variant(t, plan.inputs) for t in plan.tasks]
        seq_time = time.perf_counter() - began
        print(f"sequential: {seq_time:.1f} s ({sequential[0].load_seconds:.1f} s reading the pool once)")

        began = time.perf_counter()
        with (
            LocalCluster(
                n_workers=args.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            ) as cluster,
            Client(cluster) as client,
        ):
            startup = time.perf_counter() - began
            began = time.perf_counter()
            result = run_plan(plan, client=client)
            par_time = time.perf_counter() - began
        report(args.workers, seq_time, par_time, startup, sequential, result.outcomes, plan)


def report(
    workers: int, seq_time: float, par_time: float, startup: float, sequential: list, parallel: list, plan
) -> None:
    n = len(parallel)
    compute = sum(o.seconds + o.load_seconds for o in parallel)
    loads = [o.load_seconds for o in parallel if o.load_seconds > 0]
    identical = all(a.rows == b.rows for a, b in zip(sequential, parallel)) and all(o.ok for o in parallel)
    task_bytes = sum(len(pickle.dumps(t)) for t in plan.tasks) / len(plan.tasks)
    shipped = sum(len(b) for b in plan.inputs.files.values())
    print(f"{workers} workers: {par_time:.1f} s (cluster start-up {startup:.1f} s, not counted)")
    print(f"speed-up: {seq_time / par_time:.2f}x; rows identical to the sequential run: {identical}")
    print(
        f"shipping: {shipped / 1e6:.1f} MB of ad files scattered once; {task_bytes / 1e3:.1f} kB per task; "
        f"{len(loads)} pool reads on the workers ({sum(loads):.1f} s in all)"
    )
    print(f"per-variant overhead: {(workers * par_time - compute) / n:.2f} s (compute {compute / n:.1f} s per variant)")


if __name__ == "__main__":
    main()
