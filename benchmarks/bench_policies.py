"""Time one negotiation cycle under each priority policy on the same generated pool.

Reuses the pool generator of ``bench_negotiator.py`` (default here: 2,000 slots and
20,000 idle jobs from 40 submitters).  Prints the seconds per cycle for each policy.

    python benchmarks/bench_policies.py
    python benchmarks/bench_policies.py --slots 10000 --jobs 100000 --policies lsf,slurm
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_negotiator import make_jobs, make_slots

from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.policies.params import policy_params
from matchmaker.pool.ads import pool_from_ads


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slots", type=int, default=2_000)
    p.add_argument("--jobs", type=int, default=20_000)
    p.add_argument("--submitters", type=int, default=40)
    p.add_argument("--autoclusters", type=int, default=25, help="per submitter")
    p.add_argument("--policies", default="htcondor,lsf,maui,dirac,slurm")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    users = [f"user{u:02d}@example.org" for u in range(args.submitters)]
    pool = pool_from_ads(make_slots(args.slots, users, rng), make_jobs(args.jobs, users, args.autoclusters))
    eups = {u: 500.0 + 1000.0 * rng.random() for u in users}
    print(f"pool: {args.slots} slots, {len(pool.jobs)} jobs, {args.submitters} submitters")
    for name in args.policies.split(","):
        knobs = Knobs.from_string(f"MATCHMAKER_PRIORITY_POLICY = {name}\nSLURM_PRIORITYWEIGHTAGE = 1000\n"
                                  "SLURM_PRIORITYWEIGHTFAIRSHARE = 10000\n")
        cfg = policy_params(knobs)
        settings = replace(Settings.from_knobs(knobs), priority_policy=cfg if cfg.name != "htcondor" else None)
        t = time.perf_counter()
        result = negotiate(pool, settings, StaticPriorities(eups), 1_700_000_000.0)
        print(f"{name:9s} {len(result.matches):6d} matches  {time.perf_counter() - t:7.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
