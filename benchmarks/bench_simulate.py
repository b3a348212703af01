"""Time a simulation: the realistic pool with a job stream, or seed 002's small two-user run.

``realistic`` (the default): :mod:`realistic_pool`'s pool of ``--slots`` slot ads (1k,
10k, 50k...) with a job stream.  Of the idle jobs, a tenth are in the queue at the
start and the rest arrive one every ``--arrival`` seconds; each runs 0.5-2.5 hours
(``SimJobDuration = 1800 + random(7200)``) and runs again two more times
(``SimJobRepeat = 2``).  The 40 submitters include two accounting groups with
quotas (``GROUP_NAMES``), and the UWCS ``PREEMPTION_REQUIREMENTS`` of the pool's
configuration preempts for priority.  Prints the CPU cost of the first cycle, the median
per-cycle cost in steady state (after the first hour), the whole run and the peak
memory (``ru_maxrss`` of the process that reads and simulates; a child writes the
pool), and the cost of
a week of five-minute cycles at that per-cycle cost.  ``--window H`` also prints the
median of every ``H`` hours of virtual time, so that a drift over a long run shows.  ``--compare`` runs the same
simulation with ``SIMULATE_INCREMENTAL = false`` too, alternating, and prints both.

``small``: seed 002's two-user run (examples/simulate/fair-share): 100 slots, two users
with 100 endless five-minute jobs each, the second arriving after 48 hours; 96 hours
of five-minute cycles (1,153 cycles, about 100 matches each).

    python benchmarks/bench_simulate.py --slots 10000 --hours 6
    python benchmarks/bench_simulate.py --slots 10000 --hours 24 --window 6
    python benchmarks/bench_simulate.py --slots 2000 --hours 2 --compare
    python benchmarks/bench_simulate.py small --hours 24 --interval 60
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import resource
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from realistic_pool import NOW, write_pool  # noqa: E402

import matchmaker  # noqa: E402

GROUPS = """
GROUP_NAMES = group_physics, group_chemistry
GROUP_QUOTA_DYNAMIC_group_physics = 0.3
GROUP_QUOTA_DYNAMIC_group_chemistry = 0.2
GROUP_ACCEPT_SURPLUS = true
NEGOTIATOR_INTERVAL = 300
"""
WEEK_CYCLES = 7 * 24 * 12 + 1


def stream_pool(out: Path, slots: int, jobs: int | None, arrival: float, seed: int) -> Path:
    """Write the realistic pool under ``out`` and turn its idle jobs into a stream."""
    files = write_pool(out, slots, jobs, seed=seed)
    files.config.write_text(files.config.read_text(encoding="utf-8") + GROUPS, encoding="utf-8")
    text = files.jobs.read_text(encoding="utf-8")
    idle = [0]

    def one(m: re.Match[str]) -> str:
        ad = m.group(0)
        if "JobStatus = 1" not in ad:
            return ad + "SimJobDuration = 1800 + random(7200)\n"
        k = idle[0]
        idle[0] += 1
        qdate = NOW - 60 if k % 10 == 0 else NOW + int(arrival * (k - k // 10))
        ad = re.sub(r"^QDate = .*$", f"QDate = {qdate}", ad, flags=re.M)
        return ad + "SimJobDuration = 1800 + random(7200)\nSimJobRepeat = 2\n"

    files.jobs.write_text(re.sub(r"(?ms)^MyType = \"Job\".*?(?=^\n|\Z)", one, text), encoding="utf-8")
    return out


def run(loaded: matchmaker.Loaded, hours: float, interval: float, incremental: bool) -> list[float]:
    """CPU seconds per cycle of one simulation (the process's CPU time: on a shared
    machine it varies far less than the wall clock)."""
    loaded = dataclasses.replace(
        loaded, settings=dataclasses.replace(loaded.settings, simulate_incremental=incremental)
    )
    marks = [time.process_time()]
    matchmaker.simulate(
        loaded,
        start=NOW,
        duration=hours * 3600,
        interval=interval,
        seed=7,
        progress=lambda _done, _total: marks.append(time.process_time()),
    )
    return [b - a for a, b in zip(marks, marks[1:])]


def report(name: str, costs: list[float], interval: float, window: float | None) -> None:
    steady = costs[max(1, int(3600 // interval)) :] or costs[1:] or costs
    per = statistics.median(steady)
    print(
        f"{name}: {len(costs)} cycles in {sum(costs):.1f} s of CPU; first {costs[0]:.2f} s; steady median "
        f"{per:.3f} s per cycle; a week of 5-minute cycles at that cost: {per * WEEK_CYCLES / 60:.1f} min"
    )
    if window:
        print(f"  median per {window:g} h of virtual time: {windowed(costs, interval, window)}")


def windowed(costs: list[float], interval: float, window: float) -> str:
    """The median per-cycle cost of each ``window`` hours of virtual time (cycle ``i`` runs
    at ``i * interval`` seconds), the first cycle left out: a drift over a long run shows."""
    per_window = max(1, int(window * 3600 // interval))
    parts = []
    for start in range(0, len(costs), per_window):
        part = costs[max(1, start) : start + per_window]
        hours = start * interval / 3600
        if start + per_window <= len(costs):
            parts.append(f"{hours:g}-{hours + window:g} h {statistics.median(part):.3f} s")
        elif part:  # the last window is cut short by the end of the run
            n = len(part)
            parts.append(f"from {hours:g} h ({n} cycle{'' if n == 1 else 's'}) {statistics.median(part):.3f} s")
    return "; ".join(parts)


def realistic(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # Written by a child process, so that the peak memory below is the simulation's own.
        with ProcessPoolExecutor(1) as child:
            d = child.submit(stream_pool, Path(tmp), args.slots, args.jobs, args.arrival, args.seed).result()
        began = time.perf_counter()
        loaded = matchmaker.load(d / "negotiator.config", d / "slots.ads", d / "jobs.ads")
        print(f"{args.slots} slots, {len(loaded.pool.jobs)} jobs read in {time.perf_counter() - began:.1f} s")
    modes = [True, False] * args.repeat if args.compare else [True] * args.repeat
    results: dict[bool, list[list[float]]] = {True: [], False: []}
    for mode in modes:
        results[mode].append(run(loaded, args.hours, args.interval, mode))
    for mode, runs in results.items():
        for costs in runs:
            report("incremental" if mode else "rebuild    ", costs, args.interval, args.window)
    print(f"peak memory (ru_maxrss): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


def small(args: argparse.Namespace) -> None:
    d = ROOT / "examples" / "simulate"
    loaded = matchmaker.load(d / "fair-share" / "negotiator.config", d / "slots.ad", d / "fair-share" / "jobs.ad")
    began = time.perf_counter()
    sim = matchmaker.simulate(loaded, start=1700000000, duration=args.hours * 3600, interval=args.interval)
    took = time.perf_counter() - began
    cycles = sim.meta()["cycles"]
    matches = sum(r["matched"] for r in sim if r["kind"] == "pool")
    print(f"{cycles} cycles, {matches} matches: {took:.2f} s, {1000 * took / cycles:.1f} ms per cycle")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("case", nargs="?", choices=("realistic", "small"), default="realistic")
    p.add_argument("--hours", type=float, help="virtual time (default 6 h realistic, 96 h small)")
    p.add_argument("--interval", type=float, default=300.0, help="seconds between cycles")
    p.add_argument("--slots", type=int, default=1000, help="realistic: slot ads (default 1,000)")
    p.add_argument("--jobs", type=int, help="realistic: idle jobs (default 10 x slots)")
    p.add_argument("--arrival", type=float, default=1.0, help="realistic: seconds between arrivals")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--compare", action="store_true", help="realistic: also rebuild every cycle, alternating")
    p.add_argument("--repeat", type=int, default=1, help="realistic: runs of each mode")
    p.add_argument("--window", type=float, help="realistic: also print the median per this many hours")
    args = p.parse_args()
    if args.case == "small":
        args.hours = 96.0 if args.hours is None else args.hours
        small(args)
    else:
        args.hours = 6.0 if args.hours is None else args.hours
        realistic(args)


if __name__ == "__main__":
    main()
