"""Time a simulation: seed 002's two-user run (examples/simulate/fair-share).

100 slots, two users with 100 endless five-minute jobs each, the second arriving after
48 hours; 96 hours of five-minute cycles (1,153 cycles, about 100 matches each).
Prints seconds in total and per cycle.

    python benchmarks/bench_simulate.py
    python benchmarks/bench_simulate.py --hours 24 --interval 60
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import matchmaker  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hours", type=float, default=96.0)
    p.add_argument("--interval", type=float, default=300.0, help="seconds between cycles")
    args = p.parse_args()
    d = ROOT / "examples" / "simulate"
    loaded = matchmaker.load(d / "fair-share" / "negotiator.config", d / "slots.ad", d / "fair-share" / "jobs.ad")
    began = time.perf_counter()
    sim = matchmaker.simulate(loaded, start=1700000000, duration=args.hours * 3600, interval=args.interval)
    took = time.perf_counter() - began
    cycles = sim.meta()["cycles"]
    matches = sum(r["matched"] for r in sim if r["kind"] == "pool")
    print(f"{cycles} cycles, {matches} matches: {took:.2f} s, {1000 * took / cycles:.1f} ms per cycle")


if __name__ == "__main__":
    main()
