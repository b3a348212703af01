"""Time one negotiation cycle under each priority policy on the same realistic pool.

The pool is written by ``realistic_pool.py`` (default here: 2,000 slots, partitionable
and static, with per-machine values, and 20,000 idle jobs from 40 submitters) and read
once; each policy then runs one cycle on it with the same fixed user priorities.
Prints the matches and the seconds of each cycle (the median of ``--repeat`` runs).

    python benchmarks/bench_policies.py
    python benchmarks/bench_policies.py --slots 10000 --policies lsf,slurm
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import realistic_pool

from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.pool.ads import load_pool

POLICIES = ("htcondor", "lsf", "maui", "dirac", "slurm")

# What each model needs beyond the pool's own configuration to have every term at work.
POLICY_KNOBS = {
    "slurm": "SLURM_PRIORITYWEIGHTAGE = 1000\nSLURM_PRIORITYWEIGHTFAIRSHARE = 10000\n",
}


def policy_cycle(config_text: str, policy: str, pool, eups: dict[str, float], now: float):
    """One cycle of ``pool`` under ``policy`` with the pool's configuration."""
    knobs = Knobs.from_string(f"{config_text}\nMATCHMAKER_PRIORITY_POLICY = {policy}\n{POLICY_KNOBS.get(policy, '')}")
    return negotiate(pool, Settings.from_knobs(knobs), StaticPriorities(eups), now)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slots", type=int, default=2_000)
    p.add_argument("--jobs", type=int, default=None, help="idle jobs (default: 10 per slot)")
    p.add_argument("--submitters", type=int, default=40)
    p.add_argument("--policies", default=",".join(POLICIES))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        files = realistic_pool.write_pool(tmp, args.slots, args.jobs, args.submitters, seed=args.seed)
        config_text = files.config.read_text(encoding="utf-8")
        settings = Settings.from_knobs(Knobs.from_file(files.config))
        pool = load_pool(
            files.slots,
            files.jobs,
            use_slot_weights=settings.use_slot_weights,
            slot_weight_expr=settings.slot_weight_expr,
            force_slot_weight=settings.force_slot_weight,
            uid_domain=settings.uid_domain,
            group_mapping=settings.group_mapping,
        )
    rng = random.Random(args.seed)
    eups = {name: 500.0 + 1000.0 * rng.random() for name in sorted(pool.submitter_counts())}
    print(
        f"pool: {files.slot_ads:,} slot ads, {len(pool.jobs):,} jobs, {args.submitters} submitters "
        f"(median of {args.repeat} cycles each)"
    )
    for name in args.policies.split(","):
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            result = policy_cycle(config_text, name, pool, eups, float(realistic_pool.NOW))
            times.append(time.perf_counter() - t)
        print(f"{name:9s} {len(result.matches):6d} matches  {statistics.median(times):7.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
