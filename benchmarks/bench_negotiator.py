"""Time one negotiation cycle on a generated pool.

Default size: 10,000 slots and 100,000 idle jobs from 40 submitters in about
1,000 autoclusters (25 per submitter).  One slot in ten is claimed by one of the
submitters, so the preemption paths run too.  Prints the seconds per cycle
(setup -- autoclusters, slot annotation -- included) and the peak resident
memory of the process (``resource.getrusage``).  Deterministic for a given
``--seed``.

    python benchmarks/bench_negotiator.py                  # full size
    python benchmarks/bench_negotiator.py --slots 1000 --jobs 10000
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from classad.ad import ClassAd
from classad.parser import parse_expr
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.pool.ads import pool_from_ads

SLOT_REQ = parse_expr("START && TARGET.RequestCpus <= MY.Cpus && TARGET.RequestMemory <= MY.Memory")
JOB_REQ = (parse_expr('TARGET.Arch == "X86_64" && TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory'),
           parse_expr('TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory'))
JOB_RANK = (parse_expr("0"), parse_expr("TARGET.Memory"), parse_expr("TARGET.Cpus"))


def make_slots(n: int, users: list[str], rng: random.Random) -> list[ClassAd]:
    """``n`` slot ads: a few machine shapes, one in ten claimed."""
    shapes = [(1, 2048), (2, 4096), (4, 8192), (8, 16384), (1, 4096), (2, 8192)]
    slots = []
    for i in range(n):
        cpus, mem = shapes[i % len(shapes)]
        ad = ClassAd({"Name": f"slot{i % 8 + 1}@node{i // 8:05d}", "SlotID": i % 8 + 1, "Cpus": cpus,
                      "Memory": mem, "Arch": "X86_64" if i % 10 else "ARM64", "OpSys": "LINUX",
                      "KFlops": 1000000 + (i * 7919) % 500000, "START": True, "Rank": 0.0,
                      "CurrentRank": 0.0})
        ad.set_node("Requirements", SLOT_REQ)
        if i % 10 == 3:
            user = rng.choice(users)
            ad.update({"State": "Claimed", "Activity": "Busy", "RemoteUser": user, "RemoteOwner": user,
                       "TotalJobRuntime": rng.randrange(10, 10000)})
        else:
            ad.update({"State": "Unclaimed", "Activity": "Idle"})
        slots.append(ad)
    return slots


def make_jobs(n: int, users: list[str], per_user_clusters: int) -> list[ClassAd]:
    """``n`` idle jobs spread evenly over ``users``, ``per_user_clusters`` autoclusters each."""
    jobs = []
    per_user = max(1, n // len(users))
    cluster = 0
    for u, user in enumerate(users):
        per_ac = max(1, per_user // per_user_clusters)
        for k in range(per_user_clusters):
            cluster += 1
            for p in range(per_ac):
                ad = ClassAd({"ClusterId": cluster, "ProcId": p, "User": user, "Owner": user.split("@")[0],
                              "JobStatus": 1, "RequestCpus": 1 + (k % 2), "JobPrio": k % 3,
                              "RequestMemory": 512 + 16 * (u * per_user_clusters + k) % 4096})
                ad.set_node("Requirements", JOB_REQ[k % 2])
                ad.set_node("Rank", JOB_RANK[k % 3])
                jobs.append(ad)
    return jobs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slots", type=int, default=10_000)
    p.add_argument("--jobs", type=int, default=100_000)
    p.add_argument("--submitters", type=int, default=40)
    p.add_argument("--autoclusters", type=int, default=25, help="per submitter")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--profile", action="store_true", help="print the top of a cProfile run")
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    users = [f"user{u:02d}@example.org" for u in range(args.submitters)]
    t0 = time.perf_counter()
    pool = pool_from_ads(make_slots(args.slots, users, rng), make_jobs(args.jobs, users, args.autoclusters))
    eups = {u: 500.0 + 100.0 * rng.random() * 10 for u in users}
    t1 = time.perf_counter()
    settings = Settings.defaults()
    if args.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        result = prof.runcall(negotiate, pool, settings, StaticPriorities(eups), 0.0)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    else:
        result = negotiate(pool, settings, StaticPriorities(eups), now=0.0)
    t2 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reasons: dict[str, int] = {}
    for m in result.matches:
        reasons[m.reason] = reasons.get(m.reason, 0) + 1
    print(f"pool: {args.slots} slots, {len(pool.jobs)} jobs, {args.submitters} submitters "
          f"(generated in {t1 - t0:.1f} s)")
    print(f"cycle: {len(result.matches)} matches {reasons}, {len(result.rejected)} rejected requests, "
          f"{result.spins} spins")
    print(f"seconds per cycle: {t2 - t1:.2f}")
    print(f"peak memory (max RSS): {peak / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
