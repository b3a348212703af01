"""``matchmaker negotiate`` reads slot and job ads in every ad-file format, with the same
result as from the old format."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from support import ROOT, Ran, run_matchmaker

from classad.formats import parseAds, write_ads
from classad.formats.detect import ParserType

EXAMPLE = ROOT / "examples" / "negotiator"


def negotiate(slots: Path, jobs: Path) -> Ran:
    """``matchmaker negotiate --json`` on the example configuration, in this process."""
    return run_matchmaker(
        "negotiate",
        "--config",
        EXAMPLE / "negotiator.config",
        "--slots",
        slots,
        "--jobs",
        jobs,
        "--now",
        "1700000000",
        "--json",
    )


def convert(src: Path, dst: Path, fmt: str) -> Path:
    with open(dst, "w", encoding="utf-8") as out:
        write_ads(parseAds(src, ParserType.Old), out, fmt)
    return dst


@pytest.fixture(scope="module")
def old_format_cycle() -> Ran:
    """The cycle read from the example's old-format files."""
    return negotiate(EXAMPLE / "slots.ads", EXAMPLE / "jobs.ads")


@pytest.mark.parametrize("fmt", ["new", "json", "xml"])
def test_every_format_gives_the_same_cycle(tmp_path, fmt, old_format_cycle):
    expected = old_format_cycle
    assert expected.returncode == 0, expected.stderr
    slots = convert(EXAMPLE / "slots.ads", tmp_path / f"slots.{fmt}", fmt)
    jobs = convert(EXAMPLE / "jobs.ads", tmp_path / f"jobs.{fmt}", fmt)
    got = negotiate(slots, jobs)
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected.stdout


def test_a_broken_json_file_is_one_error_line(tmp_path):
    bad = tmp_path / "slots.json"
    bad.write_text('[{"Name": "slot1", "Cpus": 4,\n')
    proc = negotiate(bad, EXAMPLE / "jobs.ads")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and str(bad) in proc.stderr, proc.stderr


# ---- where each old-format ad starts ----------------------------------------------------------


def _reference_first_lines(text: str) -> list[int]:
    """The rule, line by line: a blank line or a ``***`` banner ends an ad, ``#`` lines are
    comments, and the first other line after a boundary starts the next ad."""
    starts, inside = [], False
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("***"):
            inside = False
        elif not line.startswith("#") and not inside:
            inside = True
            starts.append(lineno)
    return starts


_PIECES = ["a = 1\n", "\n", "  \n", "# c\n", "*** banner\n", "b = 2\n", "\r\n", "x=1\r\n", "   # x\n", "\t\n"]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=15), st.sampled_from(["", "last = 3", "# end"]))
def test_each_ad_is_named_by_its_first_line(tmp_path_factory, pieces, tail):
    from matchmaker.pool.ads import parse_old_ads, read_ads

    text = "".join(pieces) + tail
    expected = _reference_first_lines(text)
    assert [where for _ad, where in parse_old_ads(text, "t")] == [f"t:{n}" for n in expected]
    path = tmp_path_factory.mktemp("ads") / "slots.ad"
    path.write_text(text, encoding="utf-8", newline="")
    assert [where for _ad, where in read_ads(path)] == [f"{path}:{n}" for n in expected]


def test_collector_is_paused_only_while_reading():
    """load_pool pauses the cyclic collector for the read and puts it back as it was,
    also when reading fails, and leaves it off when it was off."""
    import gc

    from matchmaker.pool.ads import collector_paused

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with collector_paused():
            raise RuntimeError("a bad file")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
