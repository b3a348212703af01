"""The leftovers' list of idle jobs (matchmaker/cycle/idle_jobs.py): the jobs an ad passes
over at once are exactly those the one-by-one test passes over without evaluating anything,
and claims and simulations come out the same with and without it."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings, strategies as st

import matchmaker
from classad import ParserType, parseAds
from classad.ad import ClassAd
from classad.unparse import unparse
from matchmaker.config.knobs import Knobs
from matchmaker.cycle import claims
from matchmaker.cycle.claims import claim_matches, leftover_limits
from matchmaker.cycle.idle_jobs import IdleJobs
from matchmaker.cycle.results import CycleResult, Match
from matchmaker.cycle.verdicts import Verdicts, job_key
from matchmaker.pool.ads import pool_from_ads
from matchmaker.pool.partition import available, machine_resources, shortfall

START = 1700000000.0
RES = ("Cpus", "Memory", "Disk")
PROPS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


def _ads(text: str) -> list[ClassAd]:
    return list(parseAds(text, ParserType.Old))


def _job(proc: int, owner: str, cpus: str, memory: str, disk: str, limits: str, extra: str = "") -> str:
    text = (
        f'ClusterId = 1\nProcId = {proc}\nOwner = "{owner}"\nUser = "{owner}@example.org"\nJobStatus = 1\n'
        f"RequestCpus = {cpus}\nRequestMemory = {memory}\nRequestDisk = {disk}\nRequirements = true\n{extra}"
    )
    return text + (f"ConcurrencyLimits = {limits}\n" if limits else "") + "\n"


def _pslot(name: str, cpus: int, memory: int, disk: int, requirements: str = "true", rank: str = "0") -> str:
    return (
        f'Name = "{name}"\nMachine = "{name.partition("@")[2]}"\nSlotID = 1\nPartitionableSlot = true\n'
        f'SlotType = "Partitionable"\nCpus = {cpus}\nMemory = {memory}\nDisk = {disk}\nState = "Unclaimed"\n'
        f'Activity = "Idle"\nRequirements = {requirements}\nRank = {rank}\nSlotWeight = Cpus\n\n'
    )


# ---- the passed-over places against the one-by-one rule -----------------------------------------------

_LIMITS = st.sampled_from(["", '""', '"sw"', "undefined", "3", 'ifThenElse(TARGET.Cpus > 2, "sw", "")'])
_AMOUNT = st.one_of(st.integers(0, 9), st.floats(0, 9, allow_nan=False), st.just(2**60))


@st.composite
def _lists(draw):
    """Jobs with concurrency limits of each kind, some requests noted (of numbers, some too
    large for a float64 to hold exactly, some with resources in another order), some jobs
    started, what an ad has left, and a place to start from."""
    n = draw(st.integers(0, 12))
    limits = [draw(_LIMITS) for _ in range(n)]
    jobs = pool_from_ads([], _ads("".join(_job(p, "alice", "1", "1", "1", limits[p]) for p in range(n)))).jobs
    notes = {}
    for k in range(n):
        if draw(st.booleans()):
            values = [draw(_AMOUNT) for _ in RES]
            names = RES if draw(st.integers(0, 5)) else RES[::-1]
            notes[k] = dict(zip(names, values))
    started = [k for k in range(n) if draw(st.integers(0, 4)) == 0]
    left = dict(zip(RES, (draw(_AMOUNT) for _ in RES)))
    return jobs, notes, started, left, draw(st.integers(0, max(n, 0))), draw(st.booleans())


@PROPS
@given(_lists())
def test_stops_are_the_jobs_not_passed_over_one_by_one(case):
    """A place is a stop unless its job started, or it names a literal limit while limits are
    considered, or its noted request (of the resources in order, every number exact in a
    float64) falls short of what is left and its limits need no evaluation."""
    jobs, notes, started, left, start, limited = case
    limits = [claims._claim_limits(j.ad, None, START) if limited else None for j in jobs]
    idle = IdleJobs(jobs, limits, claims._NEEDS_SLOT)
    for k, request in notes.items():
        idle.note(RES, k, request)
    for k in started:
        idle.started(k)
    expected = []
    for k in range(start, len(jobs)):
        if k in started:
            continue
        limits = jobs[k].ad.plain("concurrencylimits")
        literal = limits is None or type(limits) in (bool, int, float, str)
        if limited and literal and type(limits) is str and limits:
            continue  # a literal limit: never started on leftovers
        request = notes.get(k)
        exact = request is not None and tuple(request) == RES and all(v != 2**60 for v in request.values())
        if exact and (literal or not limited) and shortfall(request, left) is not None:
            continue
        expected.append(k)
    got = idle.stops(RES, start, left)
    if any(v == 2**60 for v in left.values()):
        assert got is None
    else:
        assert got is not None and list(got) == expected


def test_stops_run_on_over_the_blocks_they_are_found_in():
    """Stops are found a block at a time (64 places, then 256, ...); none is lost or repeated
    at a block's edge.  400 jobs, every third started (places 0, 3, 6, ...), the requests
    of places 100 to 199 noted as 5 cpus and what is left 4 cpus: from any start, the stops
    are the places from there on that are neither started nor in 100-199."""
    n = 400
    jobs = pool_from_ads([], _ads("".join(_job(p, "alice", "1", "1", "1", "") for p in range(n)))).jobs
    idle = IdleJobs(jobs, [None] * n, claims._NEEDS_SLOT)
    for k in range(0, n, 3):
        idle.started(k)
    for k in range(100, 200):
        idle.note(RES, k, {"Cpus": 5, "Memory": 1, "Disk": 1})
    for start in (0, 1, 63, 64, 65, 100, 150, 151, 320, 399, 400):
        expected = [k for k in range(start, n) if k % 3 and not 100 <= k < 200]
        got = idle.stops(RES, start, {"Cpus": 4, "Memory": 10, "Disk": 10})
        assert got is not None and list(got) == expected


def test_a_job_started_is_passed_over_and_a_first_note_stands():
    jobs = pool_from_ads([], _ads("".join(_job(p, "alice", "1", "1", "1", "") for p in range(3)))).jobs
    idle = IdleJobs(jobs, [None] * 3, claims._NEEDS_SLOT)
    idle.note(RES, 1, {"Cpus": 4, "Memory": 1, "Disk": 1})
    idle.note(RES, 1, {"Cpus": 1, "Memory": 1, "Disk": 1})  # the first note stands
    assert list(idle.stops(RES, 0, {"Cpus": 2, "Memory": 9, "Disk": 9}) or ()) == [0, 2]
    idle.started(2)
    assert list(idle.stops(RES, 0, {"Cpus": 2, "Memory": 9, "Disk": 9}) or ()) == [0]
    assert idle.idle == [True, True, False]


# ---- classes refused by an ad as a walk goes ----------------------------------------------------------

_TEXTS = ('TARGET.Arch == "X86_64"', "TARGET.Memory >= RequestMemory", "RequestDisk > random(3)")


@st.composite
def _walks(draw):
    """Jobs of three Requirements texts (one that draws: never of a class) and a few request
    memories, some with a limit to evaluate against the slot, some requests noted, some jobs
    started; a place to start from and which classes the ad refuses when the walk reaches
    one of their jobs."""
    n = draw(st.integers(0, 40))
    texts = [draw(st.sampled_from(_TEXTS)) for _ in range(n)]
    memories = [draw(st.sampled_from(["1", "2", "2.0"])) for _ in range(n)]
    limits = [draw(st.sampled_from(["", "", 'ifThenElse(TARGET.Cpus > 2, "sw", "")'])) for _ in range(n)]
    text = "".join(
        _job(p, "alice", "1", memories[p], "1", limits[p]).replace("Requirements = true", f"Requirements = {texts[p]}")
        for p in range(n)
    )
    jobs = pool_from_ads([], _ads(text)).jobs
    noted = [k for k in range(n) if draw(st.integers(0, 3))]
    started = [k for k in range(n) if draw(st.integers(0, 5)) == 0]
    refusing = draw(st.lists(st.integers(0, 10), max_size=6))
    return jobs, noted, started, draw(st.integers(0, n)), refusing


@PROPS
@given(_walks())
def test_stops_pass_over_the_jobs_of_a_class_the_ad_refused(case):
    """As a walk goes through the stops and refuses the class of some jobs it reaches, the
    stops from then on are those of the one-by-one rule: a job of a refused class (the same
    tree, the same literal values read) is passed over when its request is known and its
    limits need no slot; not the job's own class (0) when its verdict is not shared, and
    not before the class was refused.  A new ad (a new :meth:`IdleJobs.stops`) has no
    class refused."""
    jobs, noted, started, start, refusing = case
    limits = [claims._claim_limits(j.ad, None, START) for j in jobs]
    idle = IdleJobs(jobs, limits, claims._NEEDS_SLOT)
    for k in noted:
        idle.note(RES, k, {"Cpus": 1, "Memory": 1, "Disk": 1})
    for k in started:
        idle.started(k)
    left = {"Cpus": 9, "Memory": 9, "Disk": 9}
    keys = [job_key(j.ad.get_node("Requirements"), j.ad) for j in jobs]
    distinct = sorted({k for k in keys if k is not None}, key=repr)
    refused_keys = {distinct[i] for i in refusing if i < len(distinct)}
    for _ in range(2):  # the second ad refuses nothing of the first's
        got, refused = [], set()
        expected = []
        for k in range(start, len(jobs)):
            if k in started or (keys[k] in refused and k in noted and limits[k] is None):
                continue
            expected.append(k)
            if keys[k] in refused_keys:
                refused.add(keys[k])
        stops = idle.stops(RES, start, left)
        assert stops is not None
        for k in stops:
            got.append(k)
            c, key = idle.requirements_class(k)
            assert key == keys[k] and (c == 0) == (key is None)
            if key in refused_keys:
                idle.refuse(c)
        assert got == expected


def test_jobs_reading_the_same_literals_share_a_class():
    """Jobs with the same Requirements tree and the same literal values read share a class
    (1 and 1.0 are different values); a tree that draws has none; a class is found once."""
    text = "".join(
        _job(p, "alice", "1", m, "1", "").replace("Requirements = true", f"Requirements = {r}")
        for p, (r, m) in enumerate(
            [
                (_TEXTS[1], "1"),
                (_TEXTS[1], "1"),
                (_TEXTS[1], "1.0"),
                (_TEXTS[0], "1"),
                (_TEXTS[2], "1"),
                (_TEXTS[0], "2"),
            ]
        )
    )
    jobs = pool_from_ads([], _ads(text)).jobs
    idle = IdleJobs(jobs, [None] * 6, claims._NEEDS_SLOT)
    classes = [idle.requirements_class(k)[0] for k in range(6)]
    assert classes == [1, 1, 2, 3, 0, 3]
    key = job_key(jobs[0].ad.get_node("Requirements"), jobs[0].ad)  # type: ignore[arg-type]
    assert key is not None and idle.requirements_class(0) == (1, key)


# ---- claims and simulations with and without passing over -----------------------------------------


def _leftovers_one_by_one(self, m: Match) -> None:
    """The leftovers as they were before the list of idle jobs: every idle job of the
    submitter not started yet gone through one by one for each matched slot."""
    too_large: set[tuple] = set()
    failed: list[dict[str, float]] = []
    idle = [j for j in self._idle_of(m.submitter) if j.id not in self.started]
    read = have = verdicts = None
    resources: tuple[str, ...] = ()
    floor, ranks_below = 0.0, False
    for job in idle:
        slot = self.slot_ads[m.slot]
        if slot is not read:
            read, have = slot, None
            verdicts = None if self.carry is None else Verdicts(slot)
            current = claims.leftover_rank_floor(slot, self.clock)
            floor = 0.0 if current is None else current
            ranks_below = False if current is None else claims._rank_below_for_all(slot, floor)
            if ranks_below:
                return
            listed = machine_resources(slot)
            if listed != resources:
                resources, too_large, failed = listed, set(), []
        if self.settings.claim_recycling_consider_limits and leftover_limits(job.ad, slot, self.clock) is not None:
            continue
        request = self.request(job, slot, resources)
        shape = tuple(request.values())
        if shape in too_large:
            continue
        left = have
        if left is None:
            left = available(slot, resources)
            if all(type(slot.plain(r.lower())) in (bool, int, float, str) for r in resources):
                have = left
        if any(all(request[r] >= f[r] for r in f) for f in failed) or shortfall(request, left) is not None:
            too_large.add(shape)
            failed.append(request)
            continue
        if not claims._mutual_match(job.ad, slot, self.clock, verdicts):
            continue
        if ranks_below is None and claims._ranks_below(job.ad, slot, floor, self.clock):
            continue
        self._split(m, job, request, left, leftover=True)


def _one_by_one(monkeypatch):
    """The leftovers as before the list (:func:`_leftovers_one_by_one`)."""
    monkeypatch.setattr(claims._Claims, "leftovers", _leftovers_one_by_one)


_REQUEST = st.sampled_from(["1", "2", "3", "1 + random(2)"])
_MEMORY = st.sampled_from(["500", "1024", "2048", "2500", "700 + random(2000)"])
_JOB_LIMITS = st.sampled_from(["", "", "", '"sw"', 'ifThenElse(random(3) == 0, "sw", "")'])
_EXTRA = st.sampled_from(
    [
        "",
        "",
        "Requirements = TARGET.Memory > 1000 || random(4) > 0\n",
        # shared verdicts that refuse many jobs of a class as what is left shrinks
        "Requirements = TARGET.Cpus >= 4\n",
        "Requirements = TARGET.Memory >= 3 * RequestMemory\n",
        "Requirements = TARGET.Memory < 4 * RequestMemory\n",  # (true only once little is left)
    ]
)


@st.composite
def _backlogs(draw):
    """2-5 partitionable slots (2-12 cores, 2-24 GB; some ranking jobs of 1 core below 0) and 1-40 idle jobs of alice and bob
    asking 1-3 cores (some drawn at random), various memory, some naming a limit (a literal,
    or an expression that draws), some with Requirements that draw, some with Requirements
    that what is left soon fails for whole classes of jobs; SimJobDuration 300-1500 s."""
    slots = "".join(
        _pslot(
            f"slot1@node{m}",
            draw(st.integers(2, 12)),
            1024 * draw(st.integers(2, 24)),
            100000,
            rank=draw(st.sampled_from(["0", "TARGET.RequestCpus - 2"])),
        )
        for m in range(draw(st.integers(2, 5)))
    )
    jobs = ""
    for p in range(draw(st.integers(1, 40))):
        extra = draw(_EXTRA) + f"SimJobDuration = {draw(st.integers(1, 5)) * 300}\n"
        jobs += _job(
            p, draw(st.sampled_from(["alice", "bob"])), draw(_REQUEST), draw(_MEMORY), "1000", draw(_JOB_LIMITS), extra
        )
    limit = draw(st.sampled_from(["", "SW_LIMIT = 2\n", "SW_LIMIT = 100\n"]))
    recycling = draw(st.sampled_from(["", "CLAIM_RECYCLING_CONSIDER_LIMITS = false\n"]))
    return slots, jobs, limit + recycling


def _run(slots: str, jobs: str, config: str, incremental: bool) -> str:
    loaded = matchmaker.load_ads(Knobs.from_string(config), _ads(slots), _ads(jobs))
    if not incremental:
        import dataclasses

        loaded = dataclasses.replace(loaded, settings=dataclasses.replace(loaded.settings, simulate_incremental=False))
    sim = matchmaker.simulate(loaded, start=START, duration=1500, interval=300, seed=3)
    spans = sorted((s.start, s.slot, s.end) for s in sim.spans)
    return json.dumps([list(sim), spans], sort_keys=True, default=repr)


def _recorded(monkeypatch, run) -> tuple[str, list[tuple]]:
    """``run()`` and what the claims evaluated meanwhile, in order: each request computed
    (by job) and each expression of one ad against another (text, which ads)."""
    seen: list[tuple] = []
    requested, in_match = claims.requested, claims._in_match

    def _who(ad: ClassAd) -> object:
        return ad.plain("procid") if ad.plain("procid") is not None else ad.plain("name")

    def spy_requested(job, slot, resources, rounding):
        seen.append(("request", _who(job), _who(slot), resources))
        return requested(job, slot, resources, rounding)

    def spy_in_match(node, my, target, now):
        seen.append((unparse(node), _who(my), _who(target)))
        return in_match(node, my, target, now)

    with monkeypatch.context() as m:
        m.setattr(claims, "requested", spy_requested)
        m.setattr(claims, "_in_match", spy_in_match)
        return run(), seen


@PROPS
@given(_backlogs(), st.booleans())
def test_simulations_are_the_same_as_one_by_one(monkeypatch, pool, incremental):
    """Series and claim spans (random draws included) equal those of the leftovers going
    through every job one by one, with and without the incremental cycles; and the claims
    evaluate the same requests and expressions in the same order (the jobs passed over at
    once are those the one-by-one walk decides on without evaluating anything)."""
    slots, jobs, config = pool
    fast = _recorded(monkeypatch, lambda: _run(slots, jobs, config, incremental))
    with monkeypatch.context() as m:
        _one_by_one(m)
        slow = _recorded(monkeypatch, lambda: _run(slots, jobs, config, incremental))
    assert fast == slow


def test_a_refused_class_passes_over_only_jobs_whose_request_is_known(monkeypatch):
    """One partitionable slot of 4 cores and alice's jobs of one class (Requirements
    ``TARGET.Cpus >= 4``, one core each): one is matched and claims a core, and what is left
    (3 cores) refuses the class.  The later jobs' requests (``1 + random(1)``: drawn) were
    never computed: each is still computed before the job is refused, as when every job is
    gone through one by one."""
    slots = _pslot("slot1@node0", 4, 16384, 100000)
    jobs = "".join(
        _job(p, "alice", "1 + random(1)", "1000", "1000", "").replace(
            "Requirements = true", "Requirements = TARGET.Cpus >= 4"
        )
        for p in range(6)
    )
    fast = _recorded(monkeypatch, lambda: _run(slots, jobs, "", True))
    requests = [who for what, who, *_ in fast[1] if what == "request"]
    assert sorted(set(requests)) == list(range(6))
    with monkeypatch.context() as m:
        _one_by_one(m)
        assert _recorded(monkeypatch, lambda: _run(slots, jobs, "", True)) == fast


def _claims(slots: str, jobs: str, matches: list[tuple[str, str, str]], config: str = "") -> tuple:
    loaded = matchmaker.load_ads(Knobs.from_string(config), _ads(slots), _ads(jobs))
    result = CycleResult(
        [Match(job, f"{who}@example.org", slot, "no-preemption", None, 1.0) for job, who, slot in matches],
        [],
        [],
        [],
        {},
    )
    out = claim_matches(loaded.pool, result, loaded.settings, now=START)
    return [(s.job, s.slot, s.leftover) for s in out.starts], sorted(
        (s.name, s.ad.get("Cpus"), s.ad.get("Memory")) for s in out.pool.slots
    )


def test_later_slots_pass_over_jobs_too_large_for_them(monkeypatch):
    """alice's jobs 1.0-1.9 ask 4 cores, 1.10 and 1.11 one core.  Matches: 1.0 on node0 (4
    cores: nothing left), 1.1 on node1 (5 cores: one left), 1.2 on node2 (6 cores: two left).
    node0's leftovers go through every job (each request computed there); node1's and
    node2's only through the one-core jobs: 1.10 starts on node1, 1.11 on node2.  The one-by-one
    walk gives the same starts and slots, going through every job each time."""
    slots = _pslot("slot1@node0", 4, 16384, 100000) + _pslot("slot1@node1", 5, 16384, 100000)
    slots += _pslot("slot1@node2", 6, 16384, 100000)
    jobs = "".join(_job(p, "alice", "4", "1000", "1000", "") for p in range(10))
    jobs += "".join(_job(p, "alice", "1", "1000", "1000", "") for p in (10, 11))
    matches = [("1.0", "alice", "slot1@node0"), ("1.1", "alice", "slot1@node1"), ("1.2", "alice", "slot1@node2")]
    seen: list[list[int]] = []
    stops = IdleJobs.stops

    def spy(self, resources, start, left):
        got = list(stops(self, resources, start, left) or ())
        seen.append(got)
        return iter(got)

    monkeypatch.setattr(IdleJobs, "stops", spy)
    fast = _claims(slots, jobs, matches)
    assert fast[0] == [
        ("1.0", "slot1_1@node0", False),
        ("1.1", "slot1_1@node1", False),
        ("1.2", "slot1_1@node2", False),
        ("1.10", "slot1_2@node1", True),
        ("1.11", "slot1_2@node2", True),
    ]
    # node0: every idle job (1.3-1.11); node1: the one-core jobs, then (after 1.10's split,
    # nothing left) none; node2: 1.11 (1.10 started), after which no job is left to go through.
    assert seen == [list(range(9)), [7, 8], [], [8]]
    _one_by_one(monkeypatch)
    assert _claims(slots, jobs, matches) == fast


# ---- requests taken from the last cycle's list --------------------------------------------------------

_QUANTUM = st.sampled_from(["", "", "DiskQuantum = 20000\n", "DiskQuantum = 45000\n", 'DiskQuantum = "x"\n'])


@st.composite
def _quantum_backlogs(draw):
    """Like :func:`_backlogs`, with partitionable slots rounding disk requests to different
    quanta (``DiskQuantum``, read by the default ``MODIFY_REQUEST_EXPR_REQUESTDISK``; absent,
    20,000 or 45,000 KB of 100,000, or not a number): a job's request differs from slot to
    slot, and the job that first reaches it in a cycle decides it (docs/differences.md,
    N15a); jobs asking 1,000 to 30,000 KB of disk."""
    slots, jobs, config = draw(_backlogs())
    quanta = iter([draw(_QUANTUM) for _ in range(slots.count("PartitionableSlot"))])
    slots = "\n\n".join(s + "\n" + next(quanta) if s.strip() else s for s in slots.split("\n\n"))
    disks = iter([draw(st.sampled_from(["1000", "15000", "30000"])) for _ in range(jobs.count("RequestDisk"))])
    jobs = "\n".join(
        f"RequestDisk = {next(disks)}" if line.startswith("RequestDisk") else line for line in jobs.split("\n")
    )
    return slots, jobs, config


@PROPS
@given(_quantum_backlogs())
def test_requests_taken_from_the_last_cycle_are_those_the_rebuild_computes(pool):
    """The incremental cycles' leftovers take each idle job's request from the submitter's
    list of the last cycle where the slot ad first reaching the job this cycle reads the same
    values (IdleJobs.reach / taken): their series and claim spans are the rebuild's, which
    computes every request afresh in every cycle."""
    slots, jobs, config = pool
    assert _run(slots, jobs, config, True) == _run(slots, jobs, config, False)


def test_a_request_is_taken_only_where_the_first_slot_reads_the_same_values(monkeypatch):
    """Two slots of 8 cores, 16 GB and 100,000 KB of disk, node1's ``DiskQuantum`` 45,000 KB;
    a backlog of alice's 30 one-core jobs of 10,000 KB each.  On node0 a job's disk rounds to
    10,240 KB, on node1 to 45,000 KB (two fit).  The leftovers of later cycles take many
    requests from the last cycle's list, and the run is the rebuild's."""
    slots = _pslot("slot1@node0", 8, 16384, 100000) + _pslot("slot1@node1", 8, 16384, 100000).replace(
        "SlotWeight = Cpus\n", "SlotWeight = Cpus\nDiskQuantum = 45000\n"
    )
    jobs = "".join(_job(p, "alice", "1", "1000", "10000", "", "SimJobDuration = 600\n") for p in range(30))
    taken: list[int] = []
    take = IdleJobs.taken

    def spy(self, resources, k):
        out = take(self, resources, k)
        if out is not None:
            taken.append(k)
        return out

    monkeypatch.setattr(IdleJobs, "taken", spy)
    fast = _run(slots, jobs, "", True)
    assert fast == _run(slots, jobs, "", False)
    assert taken
