"""The configuration layer's readers that other packages call instead of reading knobs:
a setting checked as if appended (sweeps), a per-name knob recognised, the digest of a
configuration, and every expression a configuration holds (docs/knobs.md)."""

from __future__ import annotations

import pytest

from classad.ast import Node
from matchmaker.config.knobs import Knobs, check_setting, per_name_knob
from matchmaker.errors import ConfigError


def test_a_per_name_knob_is_recognised_whatever_its_case():
    assert per_name_knob("slurm_shares_Alice") == ("SLURM_SHARES_<a>", "Alice")
    assert per_name_knob("GROUP_QUOTA_group_a.b") == ("GROUP_QUOTA_<g>", "group_a.b")
    assert per_name_knob("PRIORITY_HALFLIFE") is None


def test_a_setting_is_checked_as_if_appended_and_the_configuration_is_left_alone():
    config = Knobs.from_string("MY_MACRO = 3\n", "pool.conf").config
    assert check_setting(config, "PRIORITY_HALFLIFE", "3600", "sweep.toml", 2) is True
    assert check_setting(config, "DIRAC_JOBSHARE_physics", "10", "sweep.toml", 2) is True
    assert check_setting(config, "my_macro", "4", "sweep.toml", 2) is True  # a macro of the file
    assert check_setting(config, "NO_SUCH_THING", "4", "sweep.toml", 2) is False
    with pytest.raises(ConfigError) as err:
        check_setting(config, "PRIORITY_HALFLIFE", "soon", "sweep.toml", 7)
    assert (err.value.file, err.value.line) == ("sweep.toml", 7)
    with pytest.raises(ConfigError):
        check_setting(config, "SLURM_SHARES_alice", "-1", "sweep.toml", 8)  # below the minimum 0
    assert config.definition("PRIORITY_HALFLIFE") is None


def test_the_digest_follows_the_definitions_only():
    def digest(text: str) -> str:
        return Knobs.from_string(text, "pool.conf").config.digest()

    assert digest("A = 1\nB = 2\n") == digest("B = 2\nA = 1\n")  # in name order
    assert digest("A = 1\n") != digest("A = 2\n")
    assert digest("A = 1\n") != digest("A = 1\nB =\n")


def test_the_expressions_of_a_configuration():
    """The expression knobs at their defaults (``PREEMPTION_RANK`` names
    ``RemoteUserPrio``), a definition that parses (``TARGET.Foo > 1``), and not a list of
    names with commas."""
    texts = [str(e) for e in Knobs.from_string("MY_START = TARGET.Foo > 1\nGROUP_NAMES = a, b\n").expressions()]
    assert any("RemoteUserPrio" in t for t in texts)
    assert any("Foo" in t for t in texts)
    assert not any(t in ("a, b", "a") for t in texts)
    assert all(isinstance(e, Node) for e in Knobs.from_string("").expressions())
