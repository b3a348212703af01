"""``matchmaker negotiate`` prints the same whichever way the ad files are read.

Files are read a block at a time, most ads straight into their compacted storage by a
model's regular expression (``classad/formats/old_compact.py``), the others an ad of known
or simple lines at once (``classad/formats/old_format.py``); a text stream is read a line
at a time through the general path.  On a realistic pool (the benchmark's generator, small), the output of the
block path with the reader's caches cold or warm is the output of the general path alone
with every cache and the simple-line path off: the same matches, rejections, usage and
warnings, byte for byte.
"""

from __future__ import annotations

import io
import sys

import pytest

from benchmarks import realistic_pool
from classad.formats import old_format
from matchmaker.cli import main as cli_main


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> realistic_pool.PoolFiles:
    return realistic_pool.write_pool(tmp_path_factory.mktemp("pool"), 80, seed=5)


def _negotiate(files: realistic_pool.PoolFiles, jobs: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    argv = ["negotiate", "--config", str(files.config), "--slots", str(files.slots), "--jobs", jobs]
    status = cli_main([*argv, "--now", str(realistic_pool.NOW)], out, err)
    assert status == 0, err.getvalue()
    return out.getvalue() + err.getvalue()


@pytest.mark.slow
def test_negotiate_output_is_the_same_by_blocks_and_by_lines(pool, monkeypatch) -> None:
    old_format.forget_lines()
    cold = _negotiate(pool, str(pool.jobs))
    warm = _negotiate(pool, str(pool.jobs))
    # The general path alone: no remembered lines, no simple-line path, and the job ads
    # handed over as a text stream, which the reader takes a line at a time.
    monkeypatch.setattr(old_format, "_remember", lambda *_args: None)
    monkeypatch.setattr(old_format, "_simple_pair", lambda _text, _large: None)
    monkeypatch.setattr(sys, "stdin", io.StringIO(pool.jobs.read_text(encoding="utf-8")))
    old_format.forget_lines()
    general = _negotiate(pool, "-")
    assert "matches" in cold.lower() or "match" in cold.lower()
    assert cold == warm
    assert cold == general.replace("<stdin>", str(pool.jobs))


def _pool_facts(slots, jobs) -> list:
    from matchmaker.pool.ads import load_pool

    p = load_pool(slots, jobs, uid_domain="example.org")
    slot_facts = [(s.name, s.source, s.weight, s.customer, s.state, dict(s.ad.items())) for s in p.slots]
    job_facts = [(j.id, j.source, j.submitter, j.status, dict(j.ad.items())) for j in p.jobs]
    return [slot_facts, job_facts, p.warnings]


def test_load_pool_reads_the_same_by_blocks_and_by_lines(pool, monkeypatch) -> None:
    """Every slot and job (name, ``file:line`` source, weight, submitter, every value) and
    every warning is the same through the block path and through the general path alone."""
    old_format.forget_lines()
    blocks = _pool_facts(pool.slots, pool.jobs)
    monkeypatch.setattr(old_format, "_remember", lambda *_args: None)
    monkeypatch.setattr(old_format, "_simple_pair", lambda _text, _large: None)
    old_format.forget_lines()
    slots = io.StringIO(pool.slots.read_text(encoding="utf-8"))
    jobs = io.StringIO(pool.jobs.read_text(encoding="utf-8"))
    slots.name, jobs.name = str(pool.slots), str(pool.jobs)
    lines = _pool_facts(slots, jobs)
    assert len(blocks[1]) > 500
    assert blocks == lines
