"""Time one negotiation cycle, from ad files to matches, on a generated pool.

Pools (``--pool``):

* ``realistic`` (default): written by ``benchmarks/realistic_pool.py`` -- 10,000
  slot ads and 100,000 idle jobs by default, 40 submitters with skewed queues,
  ~1,000 autoclusters, every slot with its own load, benchmark and idle-time
  values, a START that reads them, mostly partitionable slots with their dynamic
  slots, nearly half of the ads claimed.  Every slot differs
  on what the expressions read, so no two slots share an evaluation.
* ``homogeneous``: a synthetic pool of six slot shapes that agree on
  everything the expressions read, so the matcher's per-class caching collapses
  the slots to a handful.  A best case, not a realistic one; its in-process
  cycle uses fixed random EUPs (the CLI run starts from an empty accountant).

Reported, each the median of ``--repeat`` runs (a phase whose first run takes
longer than ``--once-over`` seconds runs once):

* read: the configuration and both ad files into the matchmaker's pool;
* cycle: one negotiation cycle alone, with a fresh in-memory accountant, as the
  CLI runs it;
* CLI: ``python -m matchmaker.cli negotiate`` end to end in a child process,
  with its peak memory (peak RSS of the child's own address space) and bytes
  per job ad, also less the peak of a process that only imports the CLI;
* for reference, symmetric matches per second of HTCondor's C++ library
  (``classad2.symmetricMatch``) and of this library on a sample of the same ads,
  measured in the same run.

``--scaling`` times the cycle on realistic pools of 1k, 10k and 50k slots (jobs
x10) instead (with the scalar match engine the 10k cycle alone takes minutes);
``--profile`` adds a cProfile summary of reading and of the cycle (cProfile
slows the profiled run several times); ``--read-only`` stops after reading.

    python benchmarks/bench_negotiator.py                          # 10,000 slots
    python benchmarks/bench_negotiator.py --slots 1000
    python benchmarks/bench_negotiator.py --pool homogeneous --slots 1000
    python benchmarks/bench_negotiator.py --scaling --sizes 1000,2000
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

# ---- adapter: the matchmaker's entry points, in one place so they move together ----------------

from classad.ad import ClassAd  # noqa: E402
from classad.parser import parse_expr  # noqa: E402
from matchmaker.config.knobs import Knobs  # noqa: E402
from matchmaker.config.settings import Settings  # noqa: E402
from matchmaker.cycle.ephemeral import StaticPriorities  # noqa: E402
from matchmaker.cycle.negotiator import negotiate  # noqa: E402
from matchmaker.cycle.session import open_accountant, run_cycle as session_cycle  # noqa: E402
from matchmaker.pool.ads import load_pool  # noqa: E402

CLI_MODULE = "matchmaker.cli"


class Loaded(NamedTuple):
    """What reading produces: the knobs, the settings built from them, and the pool."""

    knobs: Any
    settings: Any
    pool: Any


def load(config: Path, slots: Path, jobs: Path) -> Loaded:
    """Read the configuration and the two ad files as ``matchmaker negotiate`` does."""
    knobs = Knobs.from_file(config)
    settings = Settings.from_knobs(knobs)
    pool = load_pool(
        slots,
        jobs,
        use_slot_weights=settings.use_slot_weights,
        slot_weight_expr=settings.slot_weight_expr,
        force_slot_weight=settings.force_slot_weight,
        uid_domain=settings.uid_domain,
        group_mapping=settings.group_mapping,
    )
    return Loaded(knobs, settings, pool)


def cycle(loaded: Loaded, now: float, eups: Optional[dict[str, float]] = None) -> Any:
    """One cycle: with ``eups``, fixed priorities; else a fresh in-memory accountant, as the CLI."""
    if eups is not None:
        return negotiate(loaded.pool, loaded.settings, StaticPriorities(eups), now)
    acct = open_accountant(":memory:", loaded.settings)
    try:
        return session_cycle(loaded.pool, loaded.settings, acct, now)
    finally:
        acct.close()


def cli_args(config: Path, slots: Path, jobs: Path, now: float) -> list[str]:
    """The arguments of one ``python -m matchmaker.cli negotiate`` (see ``CLI_MODULE``)."""
    return ["negotiate", "--config", str(config), "--slots", str(slots), "--jobs", str(jobs), "--now", repr(now)]


# ---- pools ---------------------------------------------------------------------------------

import realistic_pool  # noqa: E402


class PoolSpec:
    """Files of one pool and what the report needs to know about it."""

    def __init__(
        self,
        label: str,
        config: Path,
        slots: Path,
        jobs: Path,
        now: float,
        slot_ads: int,
        job_ads: int,
        autoclusters: Optional[int],
        eups: Optional[dict[str, float]] = None,
    ) -> None:
        self.label, self.config, self.slots, self.jobs, self.now = label, config, slots, jobs, now
        self.slot_ads, self.job_ads, self.autoclusters, self.eups = slot_ads, job_ads, autoclusters, eups


def realistic(out: Path, slots: int, seed: int) -> PoolSpec:
    f = realistic_pool.write_pool(out, slots, seed=seed)
    label = (
        f"realistic: {f.slot_ads:,} slot ads ({f.claimed:,} claimed), {f.idle_jobs:,} idle + "
        f"{f.running_jobs:,} running jobs, {f.submitters} submitters, {f.shapes:,} autoclusters"
    )
    return PoolSpec(label, f.config, f.slots, f.jobs, float(realistic_pool.NOW), f.slot_ads, f.job_ads, f.shapes)


_SLOT_REQ = "START && TARGET.RequestCpus <= MY.Cpus && TARGET.RequestMemory <= MY.Memory"
_JOB_REQ = (
    'TARGET.Arch == "X86_64" && TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory',
    'TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory',
)
_JOB_RANK = ("0", "TARGET.Memory", "TARGET.Cpus")


def homogeneous(out: Path, slots: int, seed: int, submitters: int = 40, per_user_clusters: int = 25) -> PoolSpec:
    """The homogeneous synthetic pool: six slot shapes, evenly spread jobs (see the module docstring)."""
    rng = random.Random(seed)
    users = [f"user{u:02d}@example.org" for u in range(submitters)]
    slot_req = parse_expr(_SLOT_REQ)
    shapes = [(1, 2048), (2, 4096), (4, 8192), (8, 16384), (1, 4096), (2, 8192)]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "slots.ads", "w", encoding="utf-8") as fh:
        for i in range(slots):
            cpus, mem = shapes[i % len(shapes)]
            ad = ClassAd(
                {
                    "Name": f"slot{i % 8 + 1}@node{i // 8:05d}",
                    "SlotID": i % 8 + 1,
                    "Cpus": cpus,
                    "Memory": mem,
                    "Arch": "X86_64" if i % 10 else "ARM64",
                    "OpSys": "LINUX",
                    "KFlops": 1000000 + (i * 7919) % 500000,
                    "START": True,
                    "Rank": 0.0,
                    "CurrentRank": 0.0,
                }
            )
            ad.set_node("Requirements", slot_req)
            if i % 10 == 3:
                user = rng.choice(users)
                ad.update(
                    {
                        "State": "Claimed",
                        "Activity": "Busy",
                        "RemoteUser": user,
                        "RemoteOwner": user,
                        "TotalJobRuntime": rng.randrange(10, 10000),
                    }
                )
            else:
                ad.update({"State": "Unclaimed", "Activity": "Idle"})
            fh.write(ad.printOld().rstrip("\n") + "\n\n")
    n_jobs = 10 * slots
    per_user = max(1, n_jobs // submitters)
    per_ac = max(1, per_user // per_user_clusters)
    written = cluster = 0
    with open(out / "jobs.ads", "w", encoding="utf-8") as fh:
        for u, user in enumerate(users):
            for k in range(per_user_clusters):
                cluster += 1
                for p in range(per_ac):
                    fh.write(
                        f'ClusterId = {cluster}\nProcId = {p}\nUser = "{user}"\n'
                        f'Owner = "{user.split("@")[0]}"\nJobStatus = 1\nRequestCpus = {1 + k % 2}\n'
                        f"JobPrio = {k % 3}\nRequestMemory = {512 + 16 * (u * per_user_clusters + k) % 4096}\n"
                        f"Requirements = {_JOB_REQ[k % 2]}\nRank = {_JOB_RANK[k % 3]}\n\n"
                    )
                    written += 1
    (out / "negotiator.config").write_text("# HTCondor's defaults\n", encoding="utf-8")
    eups = {u: 500.0 + 100.0 * rng.random() * 10 for u in users}
    label = (
        f"homogeneous (synthetic best case: six slot shapes): {slots:,} slot ads, {written:,} idle jobs, "
        f"{submitters} submitters, {submitters * per_user_clusters:,} autoclusters"
    )
    return PoolSpec(
        label,
        out / "negotiator.config",
        out / "slots.ads",
        out / "jobs.ads",
        0.0,
        slots,
        written,
        submitters * per_user_clusters,
        eups,
    )


# ---- measuring -------------------------------------------------------------------------------


def timed(fn: Callable[[], Any], repeat: int, once_over: float) -> tuple[float, int, Any]:
    """``(median seconds, runs, last result)`` of ``fn``; one run only when the first is slow."""
    times: list[float] = []
    result = None
    for _ in range(repeat):
        result = None
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        if times[0] > once_over:
            break
    return statistics.median(times), len(times), result


# Run in the child: note the process's own peak RSS (VmHWM) when it exits.  The kernel's
# ru_maxrss of a child starts from its parent's peak (the fork), so it would count this
# benchmark's own pools; VmHWM belongs to the child's fresh address space.
_CHILD = """
import atexit, os, runpy, sys
def _peak():
    try:
        with open("/proc/self/status") as fh:
            kb = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        import resource
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with open(os.environ["BENCH_PEAK_FILE"], "w") as out:
        out.write(str(kb * 1024))
atexit.register(_peak)
sys.argv = [{module!r}] + sys.argv[2:]
runpy.run_module({module!r}, run_name={run_name!r}, alter_sys=True)
"""


def own_peak() -> int:
    """This process's peak resident memory in bytes."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_child(args: list[str], module: str = "", run_name: str = "__main__") -> tuple[float, int, int]:
    """``(seconds, exit status, peak RSS in bytes)`` of ``python -m module args`` in a child
    process (``module`` empty: only import the CLI), its output discarded."""
    code = _CHILD.format(module=module or CLI_MODULE, run_name=run_name if module else "__import_only__")
    with tempfile.NamedTemporaryFile(prefix="bench-peak-", delete=False) as tmp:
        peak_file = tmp.name
    try:
        env = dict(os.environ, BENCH_PEAK_FILE=peak_file)
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", code, "-", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr.decode(errors="replace"))
        text = Path(peak_file).read_text() or "0"
    finally:
        os.unlink(peak_file)
    return seconds, proc.returncode, int(text)


def sample_ads(path: Path, n: int, rng: random.Random) -> list[str]:
    """The texts of ``n`` ads drawn from an old-format file (comments dropped)."""
    text = path.read_text(encoding="utf-8")
    chunks = [
        c
        for c in (
            "\n".join(line for line in block.splitlines() if not line.startswith("#")) for block in text.split("\n\n")
        )
        if c.strip()
    ]
    return rng.sample(chunks, min(n, len(chunks)))


def _match_all(jobs: list[Any], slots: list[Any]) -> int:
    """How many (job, slot) pairs match both ways."""
    return sum(1 for job in jobs for slot in slots if job.symmetricMatch(slot))


def match_rates(spec: PoolSpec, n_slots: int, n_jobs: int, repeat: int, seed: int) -> list[tuple[str, float, int]]:
    """Symmetric matches per second, ours and (if installed) the C++ library's, on one sample."""
    import classad

    rng = random.Random(seed)
    slot_texts = sample_ads(spec.slots, n_slots, rng)
    job_texts = sample_ads(spec.jobs, n_jobs, rng)
    libs: list[tuple[str, Any]] = [("this library (classad)", classad)]
    try:
        # isort: off
        import htcondor2  # noqa: F401  (must precede classad2: it sets HTCondor's default mode)
        import classad2

        # isort: on
        libs.insert(0, ("C++ library (classad2)", classad2))
    except ImportError:  # pragma: no cover
        pass
    rows = []
    for name, lib in libs:
        slots = [next(iter(lib.parseAds(t, lib.ParserType.Old))) for t in slot_texts]
        jobs = [next(iter(lib.parseAds(t, lib.ParserType.Old))) for t in job_texts]
        seconds, _, matched = timed(partial(_match_all, jobs, slots), repeat, 30.0)
        rows.append((name, len(jobs) * len(slots) / seconds, matched))
    return rows


def profile(label: str, fn: Callable[[], Any], top: int = 15) -> Any:
    """Run ``fn`` under cProfile and print the top ``top`` functions by cumulative time."""
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    result = prof.runcall(fn)
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(top)
    lines = buf.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    print(f"\n-- profile of {label}: top {top} by cumulative time --")
    print("\n".join(line.replace(str(ROOT) + os.sep, "") for line in lines[max(0, start - 4) :] if line.strip()))
    return result


# ---- reports ---------------------------------------------------------------------------------


def summary(result: Any) -> str:
    reasons: dict[str, int] = {}
    for m in result.matches:
        reasons[m.reason] = reasons.get(m.reason, 0) + 1
    detail = ", ".join(f"{k} {v:,}" for k, v in sorted(reasons.items()))
    return (
        f"{len(result.matches):,} matches ({detail}), {len(result.rejected):,} rejected requests, {result.spins} spins"
    )


def make_pool(kind: str, out: Path, slots: int, seed: int) -> PoolSpec:
    return realistic(out, slots, seed) if kind == "realistic" else homogeneous(out, slots, seed)


def bench(args: argparse.Namespace, out: Path) -> int:
    t0 = time.perf_counter()
    spec = make_pool(args.pool, out, args.slots, args.seed)
    print(
        f"pool: {spec.label} (written in {time.perf_counter() - t0:.1f} s, "
        f"{(spec.slots.stat().st_size + spec.jobs.stat().st_size) / 2**20:.0f} MiB of ads)"
    )
    rep, once = args.repeat, args.once_over

    def do_load() -> Loaded:
        return load(spec.config, spec.slots, spec.jobs)

    if args.profile:
        profile("reading", do_load)
    t_read, n_read, loaded = timed(do_load, rep, once)
    print(f"read config + ad files:   {t_read:8.2f} s  (median of {n_read})")
    if args.read_only:
        peak = own_peak()
        print(
            f"this process's peak memory: {peak / 2**20:8.0f} MiB = {peak / spec.job_ads:,.0f} bytes per job ad "
            f"(generation and {n_read} read(s) included)"
        )
        return 0
    if args.profile:
        profile("the cycle", partial(cycle, loaded, spec.now, spec.eups))
    t_cycle, n_cycle, result = timed(partial(cycle, loaded, spec.now, spec.eups), rep, once)
    print(f"cycle alone:              {t_cycle:8.2f} s  (median of {n_cycle}): {summary(result)}")
    loaded = result = None  # free the pool before the CLI runs
    gc.collect()

    baseline = statistics.median(run_child([])[2] for _ in range(3))
    runs = []
    for _ in range(rep):
        runs.append(run_child(cli_args(spec.config, spec.slots, spec.jobs, spec.now), CLI_MODULE))
        if runs[0][1] != 0 or runs[0][0] > once:
            break
    if any(r[1] != 0 for r in runs):
        print("matchmaker negotiate failed", file=sys.stderr)
        return 1
    t_cli = statistics.median(r[0] for r in runs)
    rss = max(r[2] for r in runs)
    print(f"CLI end to end:           {t_cli:8.2f} s  (median of {len(runs)})")
    print(
        f"CLI peak memory:          {rss / 2**20:8.0f} MiB max RSS = {rss / spec.job_ads:,.0f} bytes per job ad; "
        f"{(rss - baseline) / spec.job_ads:,.0f} bytes per job ad above the {baseline / 2**20:.0f} MiB "
        f"of a process that only imports the CLI"
    )
    if not args.no_reference:
        rows = match_rates(spec, args.sample_slots, args.sample_jobs, rep, args.seed)
        print(f"symmetric matches on {args.sample_slots} slot x {args.sample_jobs} job ads sampled from this pool:")
        for name, rate, matched in rows:
            print(f"  {name:24} {rate:12,.0f} pairs/s  ({matched:,} pairs match)")
    return 0


def scaling(args: argparse.Namespace, out: Path) -> int:
    print(f"{'slots':>7} {'jobs':>8} {'autoclusters':>12} {'read s':>8} {'cycle s':>8} {'us/(slot*AC)':>12}  result")
    for n in (int(x) for x in args.sizes.split(",")):
        spec = make_pool(args.pool, out / str(n), n, args.seed)
        t0 = time.perf_counter()
        loaded = load(spec.config, spec.slots, spec.jobs)
        t_read = time.perf_counter() - t0
        t_cycle, n_cycle, result = timed(partial(cycle, loaded, spec.now, spec.eups), args.repeat, args.once_over)
        per = t_cycle / (spec.slot_ads * (spec.autoclusters or 1)) * 1e6
        print(
            f"{spec.slot_ads:7,} {spec.job_ads:8,} {spec.autoclusters or 0:12,} {t_read:8.2f} "
            f"{t_cycle:8.2f} {per:12.3f}  {summary(result)} (cycle: median of {n_cycle})",
            flush=True,
        )
        del loaded, result
        gc.collect()
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pool", choices=("realistic", "homogeneous"), default="realistic")
    p.add_argument("--slots", type=int, default=10_000, help="slot ads (jobs: 10 x slots)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    p.add_argument(
        "--once-over", type=float, default=20.0, help="seconds: a phase whose first run takes longer runs once"
    )
    p.add_argument("--out", help="keep the generated files in this directory (default: a temporary one)")
    p.add_argument("--profile", action="store_true", help="cProfile summaries of reading and of the cycle")
    p.add_argument("--read-only", action="store_true", help="time reading only (no cycle, no CLI)")
    p.add_argument("--no-reference", action="store_true", help="skip the symmetric-match rates")
    p.add_argument("--sample-slots", type=int, default=200)
    p.add_argument("--sample-jobs", type=int, default=50)
    p.add_argument("--scaling", action="store_true", help="the cycle at --sizes slots (jobs x10)")
    p.add_argument("--sizes", default="1000,10000,50000", help="comma-separated slot counts for --scaling")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-negotiator-") as tmp:
        out = Path(args.out) if args.out else Path(tmp)
        return scaling(args, out) if args.scaling else bench(args, out)


if __name__ == "__main__":
    sys.exit(main())
