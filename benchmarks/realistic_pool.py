"""Write a realistic pool as ad files: what ``condor_status -l`` and ``condor_q -l`` dump.

The pool is shaped like a production dump rather than a toy:

* **Slots.** Mostly partitionable, as production pools are: four machines in five
  are partitionable cluster nodes of 16 to 128 cores (one partitionable slot
  advertising what is left, plus a dynamic slot per running claim: none on about
  half of them, up to six on the rest, each holding its own job's cores, memory
  and disk), the rest static-slot cluster nodes and desktops.  Every slot ad
  carries its own ``LoadAvg``,
  ``CondorLoadAvg``, ``KeyboardIdle``, ``KFlops``, ``Mips``, ``Disk``,
  ``Memory``, ``EnteredCurrentState``, ``MyCurrentTime`` and so on.  ``START``
  reads ``KeyboardIdle``, ``LoadAvg`` and ``TARGET.Owner``; ``Requirements`` is
  ``START && (WithinResourceLimits)`` as a startd publishes it.  Every dynamic
  slot and about one static slot in ten is claimed (``RemoteUser``,
  ``RemoteOwner``, ``CurrentRank``, ``AccountingGroup`` for group submitters):
  nearly half of the slot ads.  Some machines have Docker, a few
  are aarch64, a few belong to a research group and rank its jobs first.
* **Jobs.** Ten idle jobs per slot ad by default, from 40 submitters with
  Zipf-skewed job counts, in clusters of varying size.  Each submitter has 25
  job shapes (requests, Requirements on Arch/OpSys/Memory/Disk, Rank on
  ``TARGET.KFlops`` or ``TARGET.Memory``), so about 1,000 autoclusters; per-job
  values (``QDate``, ``ImageSize``, ``Args``...) differ as they do in a real
  queue.  The jobs running on the claimed slots are in the dump too.
* **Configuration.** A negotiator configuration in HTCondor syntax: a
  UWCS-style ``PREEMPTION_REQUIREMENTS`` and a remote domain whose submitters
  get ``REMOTE_PRIO_FACTOR``.

Everything is drawn from one seeded generator: the same arguments write the
same bytes.  The cycle's clock is :data:`NOW`; pass it as ``--now``.

    python benchmarks/realistic_pool.py --slots 10000 --out /tmp/pool
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence, TextIO

NOW = 1_700_000_000  # the dump's clock: the cycle runs at this time
DOMAIN = "example.org"
GUEST_DOMAIN = "grid.example.net"  # outside ACCOUNTANT_LOCAL_DOMAIN
SHAPES_PER_SUBMITTER = 25
OPSYS = (("AlmaLinux", 9, 0.55), ("AlmaLinux", 8, 0.25), ("CentOS", 7, 0.12), ("Ubuntu", 22, 0.08))

CONFIG = f"""\
# Negotiator configuration for the generated pool (HTCondor configuration syntax).
# Run the cycle at --now {NOW}, the time the ad dumps were taken.
UID_DOMAIN = {DOMAIN}
ACCOUNTANT_LOCAL_DOMAIN = {DOMAIN}
PRIORITY_HALFLIFE = 86400
NEGOTIATOR_USE_SLOT_WEIGHTS = true

# The UWCS template: preempt for priority only claims older than an hour, and only
# when the running user's priority is 20% worse than the candidate's.
PRIO_MARGIN = 1.2
PREEMPTION_REQUIREMENTS = ((CurrentTime - EnteredCurrentState) > (1 * 3600)) \\
                          && (RemoteUserPrio > TARGET.SubmitterUserPrio * $(PRIO_MARGIN))
"""

RESOURCE_LIMITS = (
    "(MY.Cpus > 0 && TARGET.RequestCpus <= MY.Cpus && TARGET.RequestMemory <= MY.Memory"
    " && TARGET.RequestDisk <= MY.Disk)"
)


@dataclass(frozen=True)
class PoolFiles:
    """Where a generated pool was written, and its size."""

    config: Path
    slots: Path
    jobs: Path
    slot_ads: int
    claimed: int
    idle_jobs: int
    running_jobs: int
    submitters: int
    shapes: int  # distinct (submitter, job shape) pairs: the autoclusters

    @property
    def job_ads(self) -> int:
        """All job ads in the job file, idle and running."""
        return self.idle_jobs + self.running_jobs


@dataclass(frozen=True)
class Submitter:
    """One submitter: its owner, the principal it is charged as, and its domain."""

    owner: str
    domain: str
    group: str | None  # accounting group, when the jobs are submitted under one

    @property
    def user(self) -> str:
        return f"{self.owner}@{self.domain}"

    @property
    def principal(self) -> str:
        """The negotiator's submitter name (accounting group user, else User)."""
        return f"{self.group}.{self.owner}@{self.domain}" if self.group else self.user


@dataclass(frozen=True)
class Shape:
    """The significant attributes of one autocluster."""

    cpus: int
    memory: int  # MB
    disk: int  # KB
    requirements: str
    rank: str
    limits: str | None


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _write_ad(out: TextIO, attrs: list[tuple[str, object]]) -> None:
    lines = []
    for name, value in attrs:
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, str):
            text = _q(value)
        elif isinstance(value, float):
            text = repr(round(value, 6))
        elif isinstance(value, Expr):
            text = value.text
        else:
            text = str(value)
        lines.append(f"{name} = {text}")
    out.write("\n".join(lines) + "\n\n")


@dataclass(frozen=True)
class Expr:
    """Text written as an expression, not as a string literal."""

    text: str


# ---- submitters and job shapes ------------------------------------------------------------


def make_submitters(n: int) -> list[Submitter]:
    """``n`` submitters: one in ten from a remote domain, one in five under an accounting group."""
    out = []
    for u in range(n):
        domain = GUEST_DOMAIN if u % 10 == 9 else DOMAIN
        group = ("group_physics", "group_chemistry")[u % 2] if u % 5 == 2 else None
        out.append(Submitter(f"user{u:02d}", domain, group))
    return out


def job_counts(total: int, n: int) -> list[int]:
    """``total`` split over ``n`` submitters by a Zipf law (exponent 1.1), at least 1 each."""
    weights = [1.0 / (k + 1) ** 1.1 for k in range(n)]
    scale = total / sum(weights)
    counts = [max(1, int(w * scale)) for w in weights]
    counts[0] += total - sum(counts)
    return counts


def make_shapes(rng: random.Random, n: int) -> list[Shape]:
    """``n`` distinct job shapes as condor_submit writes them."""
    shapes: list[Shape] = []
    seen: set[tuple] = set()
    while len(shapes) < n:
        cpus = rng.choice((1, 1, 1, 1, 2, 4, 8))
        memory = cpus * rng.choice((512, 1024, 1024, 2048, 2048, 3072, 4096)) + 128 * rng.randrange(8)
        disk = rng.choice((1, 2, 5, 10, 20, 50)) * 1024 * 1024
        clauses = ['(TARGET.Arch == "X86_64")', '(TARGET.OpSys == "LINUX")']
        r = rng.random()
        if r < 0.15:
            clauses[0] = '((TARGET.Arch == "X86_64") || (TARGET.Arch == "aarch64"))'
        elif r < 0.30:
            clauses.append("(TARGET.OpSysMajorVer >= 8)")
        elif r < 0.40:
            clauses.append("(TARGET.HasDocker)")
        clauses += ["(TARGET.Disk >= RequestDisk)", "(TARGET.Memory >= RequestMemory)"]
        if rng.random() < 0.3:
            clauses.append("(TARGET.Cpus >= RequestCpus)")
        clauses.append("(TARGET.HasFileTransfer)")
        rank = rng.choice(("0", "TARGET.KFlops", "TARGET.KFlops", "TARGET.Memory", "TARGET.Mips / 1000"))
        limits = "sw_licence" if rng.random() < 0.03 else None
        shape = Shape(cpus, memory, disk, " && ".join(clauses), rank, limits)
        key = (cpus, memory, disk, shape.requirements, rank, limits)
        if key not in seen:
            seen.add(key)
            shapes.append(shape)
    return shapes


def _job_ad(
    sub: Submitter,
    shape: Shape,
    cluster: int,
    proc: int,
    qdate: int,
    prio: int,
    rng: random.Random,
    running_on: str | None = None,
) -> list[tuple[str, object]]:
    image = rng.randrange(2_000, 4_000_000)
    attrs: list[tuple[str, object]] = [
        ("MyType", "Job"),
        ("TargetType", "Machine"),
        ("ClusterId", cluster),
        ("ProcId", proc),
        ("GlobalJobId", f"submit{cluster % 3 + 1}.{DOMAIN}#{cluster}.{proc}#{qdate}"),
        ("Owner", sub.owner),
        ("User", sub.user),
    ]
    if sub.group:
        attrs += [
            ("AcctGroup", sub.group),
            ("AcctGroupUser", sub.owner),
            ("AccountingGroup", f"{sub.group}.{sub.owner}"),
        ]
    attrs += [
        ("JobUniverse", 5),
        ("JobStatus", 2 if running_on else 1),
        ("JobPrio", prio),
        ("QDate", qdate),
        ("EnteredCurrentStatus", qdate + rng.randrange(0, 600) if not running_on else NOW - rng.randrange(60, 86_400)),
        ("Cmd", f"run_{cluster % 17}.sh"),
        ("Iwd", f"/scratch/{sub.owner}/run{cluster}"),
        ("Args", f"--input part{proc:05d}.dat --seed {rng.randrange(10**9)}"),
        ("Out", f"out.{proc}"),
        ("Err", f"err.{proc}"),
        ("UserLog", f"run{cluster}.log"),
        ("RequestCpus", shape.cpus),
        ("RequestMemory", shape.memory),
        ("RequestDisk", shape.disk),
        ("ImageSize", image),
        ("ImageSize_RAW", image),
        ("DiskUsage", image + rng.randrange(0, 5000)),
        ("ExecutableSize", rng.randrange(1, 5000)),
        ("Requirements", Expr(shape.requirements)),
        ("Rank", Expr(shape.rank)),
        ("ShouldTransferFiles", "YES"),
        ("WhenToTransferOutput", "ON_EXIT"),
        ("TransferIn", False),
        ("NumJobStarts", 1 if running_on else 0),
        ("NumRestarts", 0),
        ("MinHosts", 1),
        ("MaxHosts", 1),
        ("CurrentHosts", 1 if running_on else 0),
        ("CumulativeSlotTime", 0),
        ("CommittedTime", 0),
        ("RemoteUserCpu", 0.0),
        ("RemoteSysCpu", 0.0),
        ("LeaveJobInQueue", False),
        ("OnExitRemove", True),
        ("PeriodicHold", False),
        ("PeriodicRemove", False),
        ("WantRemoteIO", True),
        ("Environment", ""),
    ]
    if shape.limits:
        attrs.append(("ConcurrencyLimits", shape.limits))
    if "HasDocker" in shape.requirements:
        attrs += [("WantDocker", True), ("DockerImage", "registry.example.org/analysis:3.1")]
    if running_on:
        attrs += [
            ("RemoteHost", running_on),
            ("JobCurrentStartDate", NOW - rng.randrange(60, 86_400)),
            ("ShadowBday", NOW - rng.randrange(60, 86_400)),
        ]
    return attrs


# ---- machines and slots ----------------------------------------------------------------


@dataclass
class _Machine:
    name: str
    kind: str  # "pslot", "static", "desktop"
    cpus: int
    memory: int
    disk: int
    arch: str
    opsys: tuple[str, int]
    docker: bool
    group_owners: tuple[str, ...]  # a research group's machine: START only for them, Rank prefers them
    blocked: str | None  # one owner this machine refuses
    kflops: int
    mips: int
    address: str


def _machine(i: int, rng: random.Random, owners: list[str]) -> _Machine:
    r = rng.random()
    kind = "pslot" if r < 0.8 else "static" if r < 0.93 else "desktop"
    if kind == "desktop":
        cpus = rng.choice((4, 8))
    else:
        cpus = rng.choice((16, 24, 32, 48, 64, 96, 128) if kind == "pslot" else (4, 8, 8, 16))
    per_core = rng.choice((2048, 3072, 4096, 4096, 8192))
    pick = rng.random()
    acc = 0.0
    opsys = OPSYS[0][:2]
    for name, ver, share in OPSYS:
        acc += share
        if pick < acc:
            opsys = (name, ver)
            break
    group: tuple[str, ...] = ()
    if rng.random() < 0.05:
        group = tuple(sorted(rng.sample(owners, 3)))
    return _Machine(
        name=f"node{i:05d}.{DOMAIN}" if kind != "desktop" else f"desk{i:05d}.{DOMAIN}",
        kind=kind,
        cpus=cpus,
        memory=cpus * per_core,
        disk=cpus * rng.choice((20, 50, 100)) * 1024 * 1024,
        arch="aarch64" if rng.random() < 0.08 else "X86_64",
        opsys=opsys,
        docker=rng.random() < 0.4,
        group_owners=group,
        blocked=rng.choice(owners) if rng.random() < 0.1 else None,
        kflops=rng.randrange(800_000, 4_000_000),
        mips=rng.randrange(10_000, 60_000),
        address=f"<10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}:9618?addrs=10.{i // 65536 % 256}."
        f"{i // 256 % 256}.{i % 256}-9618&noUDP&sock=startd_{rng.randrange(1000, 9999)}>",
    )


def _start(m: _Machine) -> str:
    clauses = ["(KeyboardIdle > 15 * 60)", '((LoadAvg - CondorLoadAvg) <= 0.3 || State =!= "Unclaimed")']
    if m.group_owners:
        clauses.append("member(TARGET.Owner, {" + ", ".join(_q(o) for o in m.group_owners) + "})")
    elif m.blocked:
        clauses.append(f"(TARGET.Owner =!= {_q(m.blocked)})")
    else:
        clauses.append("(TARGET.Owner =!= undefined)")
    return " && ".join(clauses)


def _rank(m: _Machine) -> str:
    if not m.group_owners:
        return "0.0"
    return "member(TARGET.Owner, {" + ", ".join(_q(o) for o in m.group_owners) + "}) ? 10 : 0"


def _slot_ad(
    m: _Machine,
    slot_id: str,
    slot_type: str,
    cpus: int,
    memory: int,
    disk: int,
    total_slots: int,
    claim: tuple[Submitter, str, int] | None,
    rng: random.Random,
) -> list[tuple[str, object]]:
    """One slot ad; ``claim`` is (submitter, job id, job cpus) for a claimed slot."""
    opname, opver = m.opsys
    busy = claim is not None
    entered = NOW - rng.randrange(30, 3 * 86_400)
    if busy:
        load = cpus * rng.uniform(0.85, 1.05)
    else:  # mostly quiet; now and then a busy owner fails START
        load = rng.uniform(0.0, 0.2) if rng.random() < 0.92 else rng.uniform(0.3, 2.0)
    condor_load = load * rng.uniform(0.9, 1.0) if busy else 0.0
    if m.kind == "desktop":
        keyboard = rng.choice((rng.randrange(0, 900), rng.randrange(900, 200_000)))
    else:
        keyboard = rng.randrange(100_000, 3_000_000)
    attrs: list[tuple[str, object]] = [
        ("MyType", "Machine"),
        ("TargetType", "Job"),
        ("Name", f"slot{slot_id}@{m.name}"),
        ("Machine", m.name),
        ("SlotID", int(slot_id.split("_")[0])),
        ("SlotType", slot_type),
    ]
    if slot_type == "Partitionable":
        attrs.append(("PartitionableSlot", True))
    elif slot_type == "Dynamic":
        attrs += [("DynamicSlot", True), ("SlotTypeID", -1)]
    attrs += [
        ("Arch", m.arch),
        ("OpSys", "LINUX"),
        ("OpSysName", opname),
        ("OpSysMajorVer", opver),
        ("OpSysAndVer", f"{opname}{opver}"),
        ("OpSysLongName", f"{opname} Linux release {opver}.{rng.randrange(4)}"),
        ("Cpus", cpus),
        ("TotalSlotCpus", cpus),
        ("TotalCpus", float(m.cpus)),
        ("DetectedCpus", m.cpus),
        ("Memory", memory),
        ("TotalSlotMemory", memory),
        ("TotalMemory", m.memory),
        ("DetectedMemory", m.memory),
        ("Disk", disk),
        ("TotalSlotDisk", float(disk)),
        ("TotalDisk", m.disk),
        ("TotalSlots", total_slots),
        ("SlotWeight", Expr("Cpus")),
        ("LoadAvg", load),
        ("CondorLoadAvg", condor_load),
        ("TotalLoadAvg", load + rng.uniform(0, 0.5)),
        ("TotalCondorLoadAvg", condor_load),
        ("KeyboardIdle", keyboard),
        ("ConsoleIdle", keyboard),
        ("KFlops", m.kflops + rng.randrange(-20_000, 20_000)),
        ("Mips", m.mips + rng.randrange(-500, 500)),
        ("State", "Claimed" if busy else "Unclaimed"),
        ("Activity", "Busy" if busy else "Idle"),
        ("EnteredCurrentState", entered),
        ("EnteredCurrentActivity", entered + rng.randrange(0, 30)),
        ("MyCurrentTime", NOW - rng.randrange(0, 300)),
        ("LastHeardFrom", NOW - rng.randrange(0, 300)),
        ("DaemonStartTime", NOW - rng.randrange(86_400, 90 * 86_400)),
        ("LastBenchmark", NOW - rng.randrange(3_600, 86_400)),
        ("UpdateSequenceNumber", rng.randrange(1, 20_000)),
        ("MyAddress", m.address),
        ("CondorVersion", f"$CondorVersion: 23.0.{rng.choice((8, 10, 12))} 2024-05-01 BuildID: 7 PackageID: 1 $"),
        ("CondorPlatform", f"$CondorPlatform: {m.arch}_{opname}{opver} $"),
        ("UidDomain", DOMAIN),
        ("FileSystemDomain", DOMAIN),
        ("HasFileTransfer", True),
        ("HasJava", rng.random() < 0.7),
        ("HasSingularity", rng.random() < 0.5),
        ("StarterAbilityList", "HasFileTransfer,HasJava,HasDocker" if m.docker else "HasFileTransfer,HasJava"),
        ("JobStarts", rng.randrange(0, 5000)),
        ("RecentJobStarts", rng.randrange(0, 20)),
        ("IsWakeAble", False),
        ("WantAdRevaluate", True),
    ]
    if m.docker:
        attrs += [("HasDocker", True), ("DockerVersion", "Docker version 24.0.7, build afdd53b")]
    attrs += [
        ("START", Expr(_start(m))),
        ("WithinResourceLimits", Expr(RESOURCE_LIMITS)),
        ("Requirements", Expr("START && (WithinResourceLimits)")),
        ("Rank", Expr(_rank(m))),
    ]
    if claim is None:
        attrs.append(("CurrentRank", 0.0))
    else:
        sub, job_id, _ = claim
        rank = 10.0 if m.group_owners and sub.owner in m.group_owners else 0.0
        start = NOW - rng.randrange(60, 86_400)
        attrs += [
            ("CurrentRank", rank),
            ("RemoteUser", sub.user),
            ("RemoteOwner", sub.user),
            ("ClientMachine", f"submit{rng.randrange(1, 4)}.{DOMAIN}"),
            ("JobId", job_id),
            ("GlobalJobId", f"submit1.{DOMAIN}#{job_id}#{start - 60}"),
            ("JobStart", start),
            ("TotalJobRuntime", NOW - start),
            ("TotalClaimRunTime", NOW - start + 30),
        ]
        if sub.group:
            attrs.append(("AccountingGroup", sub.principal))
    return attrs


# ---- the whole pool --------------------------------------------------------------------------


def _weighted(rng: random.Random, subs: list[Submitter], weights: Sequence[float]) -> Submitter:
    return rng.choices(subs, weights)[0]


def _machines_slots(
    n_slots: int,
    rng: random.Random,
    subs: list[Submitter],
    counts: list[int],
    running: list[tuple[Submitter, int, str]],
) -> Iterator[list[tuple[str, object]]]:
    """Slot ads until ``n_slots`` are written; claims go to submitters by queue size and are
    recorded in ``running`` as (submitter, cpus, slot name) for the running job ads; a running
    job's id is ``N.0`` for the N-th claim."""
    owners = [s.owner for s in subs]
    written = 0
    i = 0
    while written < n_slots:
        m = _machine(i, rng, owners)
        i += 1
        if m.kind == "pslot":
            dyn = rng.choices((0, 1, 2, 3, 4, 6), (0.45, 0.15, 0.12, 0.1, 0.1, 0.08))[0]
            dyn = min(dyn, n_slots - written - 1)
            free_cpus, free_mem, free_disk = m.cpus, m.memory, m.disk
            dynamics = []
            for d in range(dyn):
                sub = _weighted(rng, subs, counts)
                c = rng.choice((1, 1, 2, 4))
                mem = c * 2048
                dk = c * 10 * 1024 * 1024
                free_cpus, free_mem, free_disk = free_cpus - c, free_mem - mem, free_disk - dk
                job = f"{len(running) + 1}.0"
                running.append((sub, c, f"slot1_{d + 1}@{m.name}"))
                dynamics.append(_slot_ad(m, f"1_{d + 1}", "Dynamic", c, mem, dk, 1 + dyn, (sub, job, c), rng))
            yield _slot_ad(m, "1", "Partitionable", free_cpus, free_mem, free_disk, 1 + dyn, None, rng)
            written += 1
            for ad in dynamics:
                yield ad
                written += 1
        else:
            k = min(m.cpus if m.kind == "desktop" else m.cpus // 2, n_slots - written)
            per = max(1, m.cpus // k)
            for s in range(k):
                claim = None
                if rng.random() < 0.1:
                    sub = _weighted(rng, subs, counts)
                    running.append((sub, per, f"slot{s + 1}@{m.name}"))
                    claim = (sub, f"{len(running)}.0", per)
                yield _slot_ad(m, str(s + 1), "Static", per, m.memory // k, m.disk // k, k, claim, rng)
                written += 1


def write_pool(
    out: str | Path, slots: int = 10_000, jobs: int | None = None, submitters: int = 40, seed: int = 1
) -> PoolFiles:
    """Write ``config``, ``slots.ads`` and ``jobs.ads`` under ``out`` (created); ``jobs``
    idle jobs (default ``10 * slots``).  Deterministic for the same arguments."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    n_jobs = 10 * slots if jobs is None else jobs
    rng = random.Random(seed)
    subs = make_submitters(submitters)
    counts = job_counts(n_jobs, submitters)
    shapes = {s.principal: make_shapes(rng, SHAPES_PER_SUBMITTER) for s in subs}
    running: list[tuple[Submitter, int, str]] = []
    paths = PoolFiles(out / "negotiator.config", out / "slots.ads", out / "jobs.ads", 0, 0, 0, 0, submitters, 0)
    paths.config.write_text(CONFIG, encoding="utf-8")
    n_slot_ads = claimed = 0
    with open(paths.slots, "w", encoding="utf-8") as fh:
        fh.write(f"# {slots} slot ads, old (condor_status -l) format; seed {seed}\n")
        for ad in _machines_slots(slots, rng, subs, counts, running):
            _write_ad(fh, ad)
            n_slot_ads += 1
            claimed += any(name == "RemoteUser" for name, _ in ad)
    used_shapes: set[tuple[str, int]] = set()
    with open(paths.jobs, "w", encoding="utf-8") as fh:
        fh.write(f"# {n_jobs} idle jobs and {len(running)} running ones, old (condor_q -l) format; seed {seed}\n")
        # Running jobs first: they are the oldest clusters (ids match the slots' JobId).
        for cluster, (sub, cpus, slot_name) in enumerate(running, 1):
            shape = next((s for s in shapes[sub.principal] if s.cpus == cpus), shapes[sub.principal][0])
            _write_ad(
                fh,
                _job_ad(sub, shape, cluster, 0, NOW - rng.randrange(86_400, 7 * 86_400), 0, rng, running_on=slot_name),
            )
        cluster = len(running)
        for u, (sub, count) in enumerate(zip(subs, counts, strict=True)):
            cap = max(1, count // SHAPES_PER_SUBMITTER)
            left = count
            k = 0
            while left > 0:
                cluster += 1
                size = min(left, cap, rng.choice((1, 1, 5, 10, 20, 50, 100, 250, 500)))
                shape_no = (k * 7 + u) % SHAPES_PER_SUBMITTER
                shape = shapes[sub.principal][shape_no]
                used_shapes.add((sub.principal, shape_no))
                qdate = NOW - rng.randrange(60, 14 * 86_400)
                prio = rng.choice((0, 0, 0, 0, 5, 10, -5))
                for proc in range(size):
                    _write_ad(fh, _job_ad(sub, shape, cluster, proc, qdate, prio, rng))
                left -= size
                k += 1
    return PoolFiles(
        paths.config, paths.slots, paths.jobs, n_slot_ads, claimed, n_jobs, len(running), submitters, len(used_shapes)
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slots", type=int, default=10_000, help="slot ads (default 10,000)")
    p.add_argument("--jobs", type=int, help="idle jobs (default 10 x slots)")
    p.add_argument("--submitters", type=int, default=40)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True, help="directory for negotiator.config, slots.ads, jobs.ads")
    args = p.parse_args(argv)
    if args.slots < 1 or args.submitters < 1 or (args.jobs is not None and args.jobs < args.submitters):
        p.error("need at least one slot and at least one idle job per submitter")
    try:
        f = write_pool(args.out, args.slots, args.jobs, args.submitters, args.seed)
    except OSError as exc:
        print(f"realistic_pool: {exc.filename or args.out}: error: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(
        f"wrote {f.slots} ({f.slot_ads} slot ads, {f.claimed} claimed), {f.jobs} ({f.idle_jobs} idle + "
        f"{f.running_jobs} running jobs, {f.submitters} submitters, {f.shapes} autoclusters), {f.config}; "
        f"run the cycle with --now {NOW}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
