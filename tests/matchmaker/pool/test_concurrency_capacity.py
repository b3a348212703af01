"""The capacities of concurrency limits are checked when the pool is loaded (docs/knobs.md).

A limit's capacity is ``<NAME>_LIMIT``, else ``CONCURRENCY_LIMIT_DEFAULT_<prefix>`` for
``prefix.name``, else ``CONCURRENCY_LIMIT_DEFAULT``.  The defaults are read with the rest of
the configuration; ``<NAME>_LIMIT`` is read for the limits the pool's ads name, so that a
bad value is one error naming the knob's file and line before any cycle runs, while a
``..._LIMIT`` name no ad asks for (possibly another daemon's knob) is not read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import run_matchmaker

import matchmaker
from classad import ClassAd
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.errors import ConfigError
from matchmaker.pool.ads import pool_from_ads
from matchmaker.pool.concurrency import named_limits

NOW = 1_700_000_000


def slot(name: str, **extra: object) -> ClassAd:
    return ClassAd(
        {"Name": name, "Cpus": 1, "Memory": 1024, "State": "Unclaimed", "Requirements": True, "Rank": 0} | extra
    )


def job(proc: int, **extra: object) -> ClassAd:
    base = {"ClusterId": 1, "ProcId": proc, "Owner": "u", "User": "u@d", "JobStatus": 1, "Requirements": True}
    return ClassAd(base | extra)


def test_the_names_come_from_jobs_and_claimed_slots_evaluated_alone():
    """``foo`` and ``bar.x`` (twice, the second time as an expression) from the jobs, ``baz``
    and ``qux`` from a claimed slot; a value that needs the slot names nothing."""
    claimed = slot(
        "slot2@n",
        State="Claimed",
        RemoteOwner="v@d",
        AccountingGroup="v@d",
        ConcurrencyLimits="baz",
        PreemptingConcurrencyLimits="QUX:2",
    )
    jobs = [
        job(0, ConcurrencyLimits="foo, bar.x:2"),
        job(1),
        job(2, ConcurrencyLimits=ClassAd('[a = strcat("BAR", ".x")]').lookup("a")),
        job(3, ConcurrencyLimits=ClassAd('[a = strcat("lic_", TARGET.Arch)]').lookup("a")),
    ]
    pool = pool_from_ads([slot("slot1@n"), claimed], jobs)
    named = named_limits(pool.jobs, pool.slots)
    assert sorted(named) == ["bar.x", "baz", "foo", "qux"]
    assert named["foo"] == named["bar.x"] == pool.jobs[0].source
    assert named["baz"] == named["qux"] == pool.slots[1].source


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "negotiator.config"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_bad_capacity_of_a_named_limit_fails_at_load_with_file_and_line(tmp_path):
    config = write_config(tmp_path, "# capacities\nLICENCE_LIMIT = 4\nFOO_LIMIT = abc\n")
    with pytest.raises(ConfigError) as info:
        matchmaker.load_ads(config, [slot("slot1@n")], [job(0, ConcurrencyLimits="licence, foo")])
    error = info.value
    assert (error.file, error.line) == (str(config), 3)
    assert error.message.startswith("FOO_LIMIT: 'abc' is not a number")
    assert "concurrency limit 'foo'" in error.message and "named at job#0" in error.message


def test_a_limit_no_ad_names_is_not_read(tmp_path):
    """``OTHER_LIMIT`` holds text; no ad asks for ``other``, so the cycle runs."""
    config = write_config(tmp_path, "OTHER_LIMIT = not a number\nFOO_LIMIT = 1\n")
    loaded = matchmaker.load_ads(config, [slot("slot1@n"), slot("slot2@n")], [job(0, ConcurrencyLimits="foo")])
    result = matchmaker.negotiate(loaded, now=NOW)
    assert len(result.matches) == 1


@pytest.mark.parametrize(
    ("text", "line", "knob"),
    [
        ("CONCURRENCY_LIMIT_DEFAULT = lots\n", 1, "CONCURRENCY_LIMIT_DEFAULT"),
        ("X = 1\nCONCURRENCY_LIMIT_DEFAULT_LICENCE = some\n", 2, "CONCURRENCY_LIMIT_DEFAULT_LICENCE"),
    ],
)
def test_a_bad_default_fails_with_the_configuration_even_when_no_ad_names_a_limit(tmp_path, text, line, knob):
    config = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        Settings.from_knobs(Knobs.from_file(str(config)))
    assert (info.value.file, info.value.line) == (str(config), line)
    assert info.value.message.startswith(f"{knob}: ")


def test_capacities_are_found_whatever_the_case_of_the_knob_or_the_limit():
    settings = Settings.from_knobs(
        Knobs.from_string("licence_limit = 3\nConcurrency_Limit_Default_Site = 5\nCONCURRENCY_LIMIT_DEFAULT = 7\n")
    )
    assert settings.concurrency_capacity("LICENCE") == 3
    assert settings.concurrency_capacity("site.anything") == 5
    assert settings.concurrency_capacity("unnamed") == 7


def write_ads_naming_foo(tmp_path: Path) -> tuple[Path, Path]:
    """One unclaimed slot and one job whose ``ConcurrencyLimits`` names ``foo``."""
    slots, jobs = tmp_path / "slots.ads", tmp_path / "jobs.ads"
    slots.write_text('Name = "slot1@n"\nCpus = 1\nMemory = 1024\nState = "Unclaimed"\nRequirements = true\n')
    jobs.write_text(
        'ClusterId = 1\nProcId = 0\nOwner = "u"\nUser = "u@d"\nJobStatus = 1\n'
        'Requirements = true\nConcurrencyLimits = "foo"\n'
    )
    return slots, jobs


def test_the_command_says_so_in_one_line_and_stores_nothing(tmp_path):
    config = write_config(tmp_path, "FOO_LIMIT = abc\n")
    slots, jobs = write_ads_naming_foo(tmp_path)
    db = tmp_path / "state.db"
    args = ("--config", config, "--slots", slots, "--jobs", jobs, "--state", db, "--now", NOW)
    status, out, err = run_matchmaker("negotiate", *args)
    assert status == 1 and out == ""
    assert err.splitlines() == [
        f"matchmaker: {config}:1: config: FOO_LIMIT: 'abc' is not a number "
        f"(the capacity of concurrency limit 'foo', named at {jobs}:1)"
    ]
    assert not db.exists()


def test_lint_reports_it_with_the_ads_and_not_without(tmp_path):
    """The same files: lint with the ads finds the knob-value error at line 2; without the
    ads no limit is named, and ``OTHER_LIMIT`` is never read."""
    config = write_config(tmp_path, "OTHER_LIMIT = text\nFOO_LIMIT = abc\n")
    slots, jobs = write_ads_naming_foo(tmp_path)
    status, out, _ = run_matchmaker("lint", "--config", config, "--slots", slots, "--jobs", jobs)
    assert status == 1
    assert out.splitlines()[0] == (
        f"{config}:2:1: error: FOO_LIMIT: 'abc' is not a number "
        f"(the capacity of concurrency limit 'foo', named at {jobs}:1) [knob-value]"
    )
    assert out.splitlines()[-1].startswith("1 error(s)")
    assert run_matchmaker("lint", "--config", config).returncode == 0
