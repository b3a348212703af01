"""The priority models' knobs read once into typed records (docs/policies.md, docs/knobs.md).

The configuration layer resolves every per-name value the runners ask for when the file is
read; these tests hold the resolved values to the knob semantics of docs/knobs.md: names
are case-insensitive, a ``NEGOTIATOR.`` definition wins over the plain one, and an
unconfigured name gets the documented default (DIRAC share 1000, Slurm shares 1,
QOS priority 0).
"""

from __future__ import annotations

import pickle

import pytest

from matchmaker.config.knobs import PATTERNS, Knobs
from matchmaker.config.policy_params import PolicyConfig
from matchmaker.config.policy_settings import policy_params
from matchmaker.config.settings import Settings
from matchmaker.errors import ConfigError


def test_settings_carry_the_chosen_model_and_none_for_htcondor():
    slurm = Settings.from_knobs(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = slurm\nSLURM_PRIORITYWEIGHTAGE = 7\n"))
    assert isinstance(slurm.priority_policy, PolicyConfig)
    assert slurm.priority_policy.name == "slurm"
    assert slurm.priority_policy.slurm.weight_age == 7.0
    assert Settings.from_knobs(Knobs.from_string("")).priority_policy is None
    assert Settings.from_knobs(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = HTCondor\n")).priority_policy is None


def test_dirac_shares_are_resolved_case_insensitively_with_the_documented_default():
    """``DIRAC_JOBSHARE_Physics = 3000`` names group ``physics`` too; an unset group has 1000."""
    cfg = policy_params(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = dirac\nDIRAC_JOBSHARE_Physics = 3000\n"))
    assert cfg.dirac_share("physics") == 3000.0
    assert cfg.dirac_share("PHYSICS") == 3000.0
    assert cfg.dirac_share("chemistry") == 1000.0


def test_slurm_shares_take_the_subsystem_definition_and_the_name_before_the_at():
    """``NEGOTIATOR.SLURM_SHARES_alice`` wins over ``SLURM_SHARES_alice`` (the daemon's own
    prefix first); ``alice@example.org`` reads the knob of ``alice``; others have 1."""
    text = "MATCHMAKER_PRIORITY_POLICY = slurm\nSLURM_SHARES_alice = 2\nNEGOTIATOR.SLURM_SHARES_alice = 4\n"
    cfg = policy_params(Knobs.from_string(text))
    assert cfg.slurm_shares("alice@example.org") == 4.0
    assert cfg.slurm_shares("bob@example.org") == 1.0


def test_a_qos_priority_is_read_once_and_an_unknown_qos_has_zero():
    cfg = policy_params(Knobs.from_string("MATCHMAKER_PRIORITY_POLICY = slurm\nSLURM_QOS_PRIORITY_High = 100\n"))
    assert cfg.slurm_qos("high") == 100.0
    assert cfg.slurm_qos("low") == 0.0


def test_the_records_stand_alone_without_the_configuration():
    """A record holds values, not a reader of the configuration: it pickles on its own
    and compares by value."""
    text = "MATCHMAKER_PRIORITY_POLICY = dirac\nDIRAC_JOBSHARE_a = 5\n"
    cfg = policy_params(Knobs.from_string(text))
    copy = pickle.loads(pickle.dumps(cfg))
    assert copy == cfg
    assert copy.dirac_share("A") == 5.0
    assert b"Knobs" not in pickle.dumps(cfg)


def test_a_bad_per_name_value_is_refused_at_load_with_file_and_line():
    with pytest.raises(ConfigError) as err:
        Settings.from_knobs(Knobs.from_string("X = 1\nDIRAC_JOBSHARE_a = lots\n", "pool.conf"))
    assert (err.value.file, err.value.line) == ("pool.conf", 2)
    assert "DIRAC_JOBSHARE_a" in str(err.value)


def test_the_records_defaults_for_unset_names_are_the_knob_tables():
    """An unconfigured group or association gets what the knob table declares for it
    (docs/knobs.md: ``DIRAC_JOBSHARE_<g>`` 1000, ``SLURM_SHARES_<a>`` 1)."""
    cfg = PolicyConfig()
    assert cfg.dirac_share("anyone") == float(PATTERNS["DIRAC_JOBSHARE_<g>"].default or "nan") == 1000.0
    assert cfg.slurm_shares("anyone@d") == float(PATTERNS["SLURM_SHARES_<a>"].default or "nan") == 1.0
