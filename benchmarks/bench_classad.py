"""Time this library against HTCondor's C++ library (the ``htcondor`` wheel) in one run.

Three workloads on the same generated ads:

* parse:  old-format (``condor_status -l``) ads parsed per second;
* match:  ``symmetricMatch`` of job ads against slot ads, per second;
* eval:   evaluations per second of a typical policy expression against an ad.

Each workload runs ``--repeat`` times per library; the median rate is reported
with the ratio ours / C++ (above 1 means this library is faster).

    python benchmarks/bench_classad.py [--slots 200] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import classad
from classad.formats.old_format import forget_lines

try:
    # isort: off
    import htcondor2  # noqa: F401  (must precede classad2: HTCondor's default mode)
    import classad2
    # isort: on
except ImportError:  # pragma: no cover
    classad2 = None

OPSYS = ["CentOS7", "AlmaLinux8", "AlmaLinux9", "Ubuntu22"]


def slot_ad_text(i: int, rng: random.Random) -> str:
    """One realistic slot ad in old format."""
    cpus = rng.choice([1, 2, 4, 8, 16])
    memory = cpus * rng.choice([2048, 4096])
    opsys = rng.choice(OPSYS)
    lines = [
        f'Name = "slot{i % 8 + 1}@node{i // 8:04d}.example.org"',
        f'Machine = "node{i // 8:04d}.example.org"',
        'MyType = "Machine"',
        'TargetType = "Job"',
        f"Cpus = {cpus}",
        f"TotalCpus = {cpus * 2}",
        f"Memory = {memory}",
        f"Disk = {rng.randint(10**6, 10**8)}",
        f"Gpus = {rng.choice([0, 0, 0, 1, 2])}",
        'Arch = "X86_64"',
        'OpSys = "LINUX"',
        f'OpSysAndVer = "{opsys}"',
        f"KFlops = {rng.randint(500000, 3000000)}",
        f"Mips = {rng.randint(10000, 40000)}",
        'State = "Unclaimed"',
        'Activity = "Idle"',
        f"LoadAvg = {rng.random():.2f}",
        "SlotWeight = Cpus",
        "Rank = 0.0",
        "CurrentRank = 0.0",
        f"SlotID = {i % 8 + 1}",
        "HasFileTransfer = true",
        "HasJava = false",
        'StarterAbilityList = "HasFileTransfer,HasVM,HasDocker"',
        f'CondorVersion = "$CondorVersion: 24.0.{rng.randint(1, 9)} 2024-01-01 BuildID: 1 $"',
        "Start = true",
        "Requirements = START && (TARGET.RequestCpus <= MY.Cpus) && (TARGET.RequestMemory <= MY.Memory)",
        "IsWakeAble = false",
        "TotalSlots = 8",
        "WantAdRevaluate = true",
        f"DetectedMemory = {memory * 2}",
        f"UpdateSequenceNumber = {rng.randint(1, 1000)}",
    ]
    return "\n".join(lines) + "\n"


def job_ad(i: int, rng: random.Random, lib) -> object:
    """A job ad in the way condor_submit writes Requirements and Rank."""
    return lib.ClassAd(
        f"""[ ClusterId = {100 + i}; ProcId = 0; Owner = "user{i % 7}"; RequestCpus = {rng.choice([1, 2, 4])};
        RequestMemory = {rng.choice([1024, 2048, 8192])}; RequestDisk = 1000; JobPrio = 0;
        Requirements = (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") &&
            (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) &&
            (TARGET.Cpus >= RequestCpus) && (TARGET.HasFileTransfer);
        Rank = TARGET.KFlops / 1000 + (TARGET.OpSysAndVer == "AlmaLinux9") * 10 ]"""
    )


def rate(fn: Callable[[int], int], repeat: int) -> float:
    """Median operations per second over ``repeat`` runs of ``fn(run)`` (returns its op count)."""
    rates = []
    for run in range(repeat):
        start = time.perf_counter()
        n = fn(run)
        rates.append(n / (time.perf_counter() - start))
    return statistics.median(rates)


def pool_text(n_slots: int, seed: int) -> str:
    """An old-format dump of ``n_slots`` slot ads; different seeds give different machines."""
    rng = random.Random(seed)
    return "\n".join(slot_ad_text(seed * n_slots + i, rng) for i in range(n_slots))


def bench(n_slots: int, repeat: int) -> list[tuple[str, float, float]]:
    # Every parse run reads a different dump, so this library's parse caches only help
    # with what repeats inside one dump (as in a real condor_status -l), never across runs.
    texts = [pool_text(n_slots, 1000 + run) for run in range(repeat)]
    text = pool_text(n_slots, 42)
    results = []

    def parse_ours(run: int) -> int:
        forget_lines()  # no line of an earlier run is remembered
        return sum(1 for _ in classad.parseAds(texts[run], classad.ParserType.Old))

    def parse_theirs(run: int) -> int:
        return sum(1 for _ in classad2.parseAds(texts[run], classad2.ParserType.Old))

    results.append(("old-format ads parsed / s", rate(parse_ours, repeat), rate(parse_theirs, repeat)))

    our_slots = list(classad.parseAds(text, classad.ParserType.Old))
    their_slots = list(classad2.parseAds(text, classad2.ParserType.Old))
    jrng = random.Random(7)
    our_jobs = [job_ad(i, jrng, classad) for i in range(20)]
    jrng = random.Random(7)
    their_jobs = [job_ad(i, jrng, classad2) for i in range(20)]

    def match(jobs, slots) -> Callable[[int], int]:
        def run(_run: int) -> int:
            n = 0
            for job in jobs:
                for slot in slots:
                    job.symmetricMatch(slot)
                    n += 1
            return n

        return run

    results.append(
        (
            "symmetric matches / s",
            rate(match(our_jobs, our_slots), repeat),
            rate(match(their_jobs, their_slots), repeat),
        )
    )

    policy = (
        '(TARGET.Memory >= 2048 && Cpus > 1) ? KFlops / 1000 + ifThenElse(OpSysAndVer == "AlmaLinux9", 10, 0)'
        ' : strcat(Name, "-", SlotID) =!= undefined'
    )
    our_expr, their_expr = classad.ExprTree(policy), classad2.ExprTree(policy)

    def evaluate(expr, slots) -> Callable[[int], int]:
        def run(_run: int) -> int:
            for slot in slots:
                expr.eval(slot)
            return len(slots)

        return run

    results.append(
        (
            "expression evaluations / s",
            rate(evaluate(our_expr, our_slots), repeat),
            rate(evaluate(their_expr, their_slots), repeat),
        )
    )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=200, help="number of slot ads (default 200)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (default 5)")
    args = parser.parse_args(argv)
    if classad2 is None:
        print("the htcondor wheel is not installed: pip install htcondor", file=sys.stderr)
        return 1
    print(f"{'workload':32} {'this library':>14} {'C++ (classad2)':>15} {'ratio':>8}")
    for name, ours, theirs in bench(args.slots, args.repeat):
        print(f"{name:32} {ours:14,.0f} {theirs:15,.0f} {ours / theirs:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
