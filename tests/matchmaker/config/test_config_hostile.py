"""Hostile configuration: macro bombs end with an error, included files are not echoed,
and no configuration text makes the reader raise anything but ConfigError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support import ROOT

from matchmaker.config.knobs import Knobs
from matchmaker.config.language import MAX_EXPANSION, Config
from matchmaker.config.settings import Settings
from matchmaker.errors import ConfigError


def doubling(levels: int) -> str:
    lines = ["M0 = x"] + [f"M{i} = $(M{i - 1})$(M{i - 1})" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_a_macro_bomb_is_a_config_error_naming_its_line():
    cfg = Config.from_string(doubling(60), "bomb.config", environ={})
    with pytest.raises(ConfigError, match="longer than") as info:
        cfg.get_raw("M60")
    assert info.value.file == "bomb.config" and info.value.line is not None


def test_doubling_below_the_limit_gives_the_whole_value():
    """Twenty doublings stay under the limit: the value is complete (each macro expanded once)."""
    assert 2**20 <= MAX_EXPANSION
    cfg = Config.from_string(doubling(20), "ok.config", environ={})
    assert cfg.get_raw("M20") == "x" * 2**20


def test_an_included_non_config_file_is_not_echoed(tmp_path):
    private = tmp_path / "private.txt"
    private.write_text("password hunter2 is here\n")
    config = tmp_path / "neg.config"
    config.write_text(f"include : {private}\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "matchmaker.cli",
            "negotiate",
            "--config",
            str(config),
            "--slots",
            str(ROOT / "examples/negotiator/slots.ads"),
            "--jobs",
            str(ROOT / "examples/negotiator/jobs.ads"),
            "--now",
            "1700000000",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert f"{private}:1:" in proc.stderr and "hunter2" not in proc.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_file_is_refused_not_read_forever(tmp_path):
    with pytest.raises(ConfigError, match="longer than"):
        Config.from_file("/dev/zero", environ={})
    config = tmp_path / "neg.config"
    config.write_text("include : /dev/zero\n")
    with pytest.raises(ConfigError, match="not a regular file"):
        Config.from_file(config, environ={})


@pytest.mark.parametrize(
    "use",
    [
        "PRIORITY_HALFLIFE = $(root)",
        "PRIORITY_HALFLIFE = 1 + $(root)",
        "X = $(root)\nPREEMPTION_REQUIREMENTS = $(X) &&",
        "PRIORITY_HALFLIFE = $INT($(root))",
    ],
)
def test_a_value_built_from_an_included_file_is_not_echoed(tmp_path, use):
    """A line of a file that is not configuration can still parse as ``name : value``: a
    knob built from it must not print it back."""
    private = tmp_path / "shadow"
    private.write_text("root:$6$SECRETHASH:19000:0:99999:7:::\n")
    config = tmp_path / "neg.config"
    config.write_text(f"include : {private}\n{use}\n")
    knob = use.splitlines()[-1].split("=")[0].strip()
    with pytest.raises(ConfigError) as info:
        Knobs.from_file(config).get(knob)
    assert "SECRETHASH" not in str(info.value)
    assert "not shown" in str(info.value) or "from an included file" in str(info.value)


def test_the_top_level_file_is_still_quoted():
    with pytest.raises(ConfigError, match="'not a statement'"):
        Config.from_string("not a statement\n", "neg.config", environ={})


_PIECES = st.sampled_from(
    [
        "A = 1",
        "B = $(A)$(A)",
        "C = $(C)",
        "if defined A",
        "else",
        "endif",
        "elif version > 8.0",
        "use FEATURE : x",
        "include : nowhere",
        "D @= end",
        "@end",
        "E = $ENV(HOME)",
        "F = $INT(3.5)",
        "G = $(",
        "H = $(A:default)",
        "PRIORITY_HALFLIFE = $(A)",
        "PRIORITY_HALFLIFE = -1",
        "GROUP_NAMES = a, b",
        "GROUP_QUOTA_a = x",
        "PREEMPTION_REQUIREMENTS = (",
        "NEGOTIATOR_PRE_JOB_RANK = 1 +",
        "SLOT_WEIGHT = Cpus",
        "\\",
        "#",
        "[section]",
        "A = 1 \\",
        "error : stop",
        "warning : careful",
        "X.Y.Z = 1",
        "1 = 2",
        "=",
        "A += 2",
        "A +,= 3",
    ]
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_PIECES, st.text(max_size=30)), max_size=12))
def test_any_configuration_text_reads_or_fails_with_config_error(lines):
    text = "\n".join(lines) + "\n"
    try:
        Settings.from_knobs(Knobs.from_string(text, "fuzz.config", environ={}))
    except ConfigError as exc:
        assert exc.file is not None or exc.message
    except (ValueError, KeyError, TypeError, RecursionError) as exc:  # pragma: no cover - the bug we look for
        raise AssertionError(f"{type(exc).__name__} escaped for {text!r}: {exc}") from exc
