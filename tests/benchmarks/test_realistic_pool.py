"""The benchmark's pool generator: deterministic, and its ads are what the matchmaker reads.

Small pools only; nothing here is timed (speed lives in ``benchmarks/``).
"""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

from benchmarks import realistic_pool
from classad import ParserType, parseAds
from matchmaker.cli import main as cli_main
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.pool.ads import IDLE, RUNNING, load_pool

SLOTS = 60


@pytest.fixture(scope="module")
def pool_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, realistic_pool.PoolFiles]:
    out = tmp_path_factory.mktemp("pool")
    return out, realistic_pool.write_pool(out, SLOTS, seed=3)


def _bytes(files: realistic_pool.PoolFiles) -> tuple[bytes, bytes, bytes]:
    return files.config.read_bytes(), files.slots.read_bytes(), files.jobs.read_bytes()


def test_same_seed_same_bytes(pool_dir, tmp_path: Path) -> None:
    _, first = pool_dir
    again = realistic_pool.write_pool(tmp_path / "again", SLOTS, seed=3)
    assert _bytes(again) == _bytes(first)
    other = realistic_pool.write_pool(tmp_path / "other", SLOTS, seed=4)
    assert _bytes(other)[1] != _bytes(first)[1]


def test_matchmaker_reads_the_pool(pool_dir) -> None:
    _, files = pool_dir
    settings = Settings.from_knobs(Knobs.from_file(files.config))
    pool = load_pool(files.slots, files.jobs, uid_domain=settings.uid_domain)
    assert pool.warnings == []
    assert len(pool.slots) == files.slot_ads == SLOTS
    assert len({s.name for s in pool.slots}) == SLOTS
    assert sum(1 for j in pool.jobs if j.status == IDLE) == files.idle_jobs == 10 * SLOTS
    assert sum(1 for j in pool.jobs if j.status == RUNNING) == files.running_jobs == files.claimed
    assert sum(1 for s in pool.slots if s.charged) == files.claimed > 0
    assert any(s.partitionable for s in pool.slots)
    assert any(not s.partitionable for s in pool.slots)
    assert len({j.submitter for j in pool.jobs if j.status == IDLE}) == files.submitters == 40
    # Group submitters are charged as their accounting group user.
    assert any(j.submitter.startswith("group_") for j in pool.jobs)


def test_jobs_are_skewed_over_submitters() -> None:
    counts = realistic_pool.job_counts(10_000, 40)
    assert sum(counts) == 10_000
    assert counts == sorted(counts, reverse=True)
    assert counts[0] > 20 * counts[-1] >= 20


def test_slots_have_their_own_values(pool_dir) -> None:
    _, files = pool_dir
    ads = list(parseAds(files.slots.read_text(), ParserType.Old))
    for attr in ("LoadAvg", "KeyboardIdle", "KFlops", "Mips", "EnteredCurrentState"):
        assert len({ad.eval(attr) for ad in ads}) > SLOTS * 0.8, attr
    start = str(ads[0].lookup("START"))
    assert "KeyboardIdle" in start and "LoadAvg" in start and "TARGET.Owner" in start
    assert str(ads[0].lookup("Requirements")).startswith("START")


def test_shapes_count_the_autoclusters(pool_dir) -> None:
    """``shapes`` is the number of distinct (submitter, significant attributes) among idle jobs."""
    _, files = pool_dir
    pool = load_pool(files.slots, files.jobs)
    keys = {
        (
            j.submitter,
            *(
                str(j.ad.lookup(a)) if a in j.ad else None
                for a in ("RequestCpus", "RequestMemory", "RequestDisk", "Requirements", "Rank", "ConcurrencyLimits")
            ),
        )
        for j in pool.jobs
        if j.status == IDLE
    }
    assert len(keys) == files.shapes


def test_about_a_thousand_autoclusters(tmp_path: Path) -> None:
    files = realistic_pool.write_pool(tmp_path, 1000, seed=1)
    assert 950 <= files.shapes <= 40 * realistic_pool.SHAPES_PER_SUBMITTER == 1000


def test_symmetric_match_agrees_with_the_oracle(pool_dir, oracle) -> None:
    """The generated expressions mean the same to HTCondor's library as to ours."""
    import classad

    _, files = pool_dir
    rng = random.Random(5)

    def sample(path: Path, n: int) -> list[str]:
        chunks = [c for c in path.read_text().split("\n\n") if "=" in c]
        return rng.sample(chunks, n)

    slot_texts, job_texts = sample(files.slots, 30), sample(files.jobs, 20)

    def matrix(lib) -> list[bool]:
        slots = [next(iter(lib.parseAds(t, lib.ParserType.Old))) for t in slot_texts]
        jobs = [next(iter(lib.parseAds(t, lib.ParserType.Old))) for t in job_texts]
        return [bool(j.symmetricMatch(s)) for j in jobs for s in slots]

    ours, theirs = matrix(classad), matrix(oracle)
    assert ours == theirs
    assert any(theirs) and not all(theirs)


def test_cli_negotiates_the_pool(pool_dir) -> None:
    _, files = pool_dir
    out, err = io.StringIO(), io.StringIO()
    status = cli_main(
        [
            "negotiate",
            "--config",
            str(files.config),
            "--slots",
            str(files.slots),
            "--jobs",
            str(files.jobs),
            "--now",
            str(realistic_pool.NOW),
        ],
        out,
        err,
    )
    assert status == 0, err.getvalue()
    matches = int(out.getvalue().splitlines()[0].split()[1])
    assert 0 < matches <= SLOTS


@pytest.mark.slow
def test_benchmark_cycle_is_the_cli_cycle(pool_dir) -> None:
    """The benchmark's in-process cycle (its adapter) computes what ``matchmaker negotiate`` does."""
    import json

    from benchmarks import bench_negotiator

    _, files = pool_dir
    loaded = bench_negotiator.load(files.config, files.slots, files.jobs)
    result = bench_negotiator.cycle(loaded, float(realistic_pool.NOW))
    out, err = io.StringIO(), io.StringIO()
    args = bench_negotiator.cli_args(files.config, files.slots, files.jobs, float(realistic_pool.NOW))
    assert cli_main([*args, "--json"], out, err) == 0, err.getvalue()
    doc = json.loads(out.getvalue())
    assert [(m["job"], m["slot"], m["reason"]) for m in doc["matches"]] == [
        (m.job, m.slot, m.reason) for m in result.matches
    ]


@pytest.mark.slow
def test_the_policy_benchmark_runs_every_policy_on_a_small_pool(capsys):
    """The benchmark is not timed here; it must run, one line per policy, each with matches."""
    from benchmarks import bench_policies

    assert bench_policies.main(["--slots", "40", "--repeat", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: int(line.split()[1]) for line in lines[1:]}
    assert set(rows) == set(bench_policies.POLICIES)
    assert all(matches > 0 for matches in rows.values())


def test_mostly_partitionable(pool_dir) -> None:
    """Most slot ads are partitionable slots or their dynamic slots, and each dynamic slot
    holds resources of its own machine: a partitionable slot's Cpus plus its dynamic slots'
    equal the machine's TotalCpus."""
    _, files = pool_dir
    pool = load_pool(files.slots, files.jobs)
    family = [s for s in pool.slots if s.partitionable or s.ad.get("DynamicSlot") is True]
    assert len(family) > len(pool.slots) / 2
    cpus: dict[str, float] = {}
    totals: dict[str, float] = {}
    for s in family:
        machine = s.ad["Machine"]
        cpus[machine] = cpus.get(machine, 0) + s.ad["Cpus"]
        totals[machine] = s.ad["TotalCpus"]
    assert cpus == totals
