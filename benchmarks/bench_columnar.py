"""Time one negotiation cycle with the columnar and the scalar match engines.

The pool is heterogeneous the way real ones are: every slot has its own
``LoadAvg``, ``KeyboardIdle``, ``KFlops``, ``Mips``, ``Memory`` and ``Disk``;
``START`` reads ``KeyboardIdle`` and ``LoadAvg`` (and ``TARGET.Owner``); jobs
rank by ``TARGET.KFlops`` or ``TARGET.Memory``; mostly partitionable slots, nearly half of the ads claimed.
40 submitters, 25 autoclusters each.  Prints the cycle time (setup included)
of the columnar engine (``MATCHMAKER_COLUMNAR = true``), and with ``--compare``
of the scalar one too, and whether the two cycles decided the same.

    python benchmarks/bench_columnar.py --slots 2000 --jobs 20000 --compare
    python benchmarks/bench_columnar.py --slots 10000 --jobs 100000
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from classad.ad import ClassAd
from classad.parser import parse_expr
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.pool.ads import pool_from_ads

START = parse_expr('(KeyboardIdle > 15 * 60) && ((LoadAvg - CondorLoadAvg) <= 0.3) && TARGET.Owner =!= "nobody"')
SLOT_REQ = parse_expr("START && TARGET.RequestCpus <= MY.Cpus && TARGET.RequestMemory <= MY.Memory")
SLOT_RANK = parse_expr("TARGET.JobPrio")
JOB_REQ = (
    parse_expr(
        'TARGET.Arch == "X86_64" && TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory '
        "&& TARGET.Disk >= RequestDisk"
    ),
    parse_expr('TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory && TARGET.KFlops > 200000'),
)
JOB_RANK = (parse_expr("0"), parse_expr("TARGET.KFlops"), parse_expr("TARGET.Memory"))
PREEMPTION_REQUIREMENTS = parse_expr("RemoteUserResourcesInUse > 1 && RemoteUserPrio > SubmitterUserPrio * 1.2")


def make_slots(n: int, users: list[str], rng: random.Random) -> list[ClassAd]:
    """``n`` slots, each with its own load, idle time, speed and memory; one in ten claimed."""
    slots = []
    for i in range(n):
        cpus = rng.choice([1, 1, 2, 4, 8])
        ad = ClassAd(
            {
                "Name": f"slot{i % 8 + 1}@node{i // 8:05d}",
                "SlotID": i % 8 + 1,
                "Cpus": cpus,
                "Memory": cpus * rng.choice([1024, 2048, 4096]) + rng.randrange(0, 512),
                "Disk": rng.randrange(1_000_000, 50_000_000),
                "Arch": "X86_64" if i % 10 else "aarch64",
                "OpSys": "LINUX",
                "KFlops": rng.randrange(100_000, 3_000_000),
                "Mips": rng.randrange(1000, 40000),
                "LoadAvg": round(rng.random() * 0.6, 3),
                "CondorLoadAvg": 0.0,
                "KeyboardIdle": rng.randrange(0, 100_000),
                "EnteredCurrentState": 1_700_000_000 - rng.randrange(0, 10**6),
                "CurrentRank": 0.0,
            }
        )
        ad.set_node("START", START)
        ad.set_node("Requirements", SLOT_REQ)
        ad.set_node("Rank", SLOT_RANK)
        if i % 10 == 3:
            user = rng.choice(users)
            ad.update({"State": "Claimed", "Activity": "Busy", "RemoteUser": user, "RemoteOwner": user})
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
                ad = ClassAd(
                    {
                        "ClusterId": cluster,
                        "ProcId": p,
                        "User": user,
                        "Owner": user.split("@")[0],
                        "JobStatus": 1,
                        "RequestCpus": 1 + (k % 2),
                        "JobPrio": k % 3,
                        "RequestDisk": 100000 * (k % 5),
                        "RequestMemory": 512 + 16 * (u * per_user_clusters + k) % 4096,
                    }
                )
                ad.set_node("Requirements", JOB_REQ[k % 2])
                ad.set_node("Rank", JOB_RANK[k % 3])
                jobs.append(ad)
    return jobs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slots", type=int, default=10_000)
    p.add_argument("--jobs", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--compare", action="store_true", help="also run the scalar engine and compare")
    p.add_argument(
        "--preemption-requirements",
        action="store_true",
        help="a PREEMPTION_REQUIREMENTS reading RemoteUserResourcesInUse",
    )
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    users = [f"user{u:02d}@example.org" for u in range(40)]
    pool = pool_from_ads(make_slots(args.slots, users, rng), make_jobs(args.jobs, users, 25))
    eups = {u: 500.0 + 1000.0 * rng.random() for u in users}
    base = (
        Settings.defaults(preemption_requirements=PREEMPTION_REQUIREMENTS)
        if args.preemption_requirements
        else Settings.defaults()
    )
    results = []
    for columnar in (True, False) if args.compare else (True,):
        settings = replace(base, policy=replace(base.policy, columnar=columnar))
        t0 = time.perf_counter()
        result = negotiate(pool, settings, StaticPriorities(eups), 0.0)
        seconds = time.perf_counter() - t0
        results.append(result)
        print(
            f"{'columnar' if columnar else 'scalar'}: {args.slots} slots x {len(pool.jobs)} jobs: "
            f"{len(result.matches)} matches, {result.spins} spins: {seconds:.2f} s per cycle"
        )
    if args.compare:
        a, b = results
        same = (a.matches, a.rejected, a.usage, a.warnings) == (b.matches, b.rejected, b.usage, b.warnings)
        print(f"same cycle results: {same}")
    print(f"peak memory (max RSS): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
