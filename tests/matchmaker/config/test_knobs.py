"""The declared knob table (docs/knobs.md): types, HTCondor's defaults, per-group lookups, bad values.

Defaults are checked against the table in docs/knobs.md and against the ``htcondor``
wheel's parameter table (a subprocess with an empty configuration).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import classad.parser
from matchmaker.config.knobs import DEFAULTS, KNOBS, PATTERNS, TYPES, Knobs
from matchmaker.config.language import Config
from matchmaker.errors import ConfigError


def knobs(text: str = "", environ: dict | None = None) -> Knobs:
    return Knobs.from_string(text, source="k.conf", environ=environ or {})


def bad(text: str, name: str, line: int, match: str = "", environ: dict | None = None) -> ConfigError:
    with pytest.raises(ConfigError, match=match) as info:
        knobs(text, environ).get(name)
    assert name in info.value.message
    assert info.value.file == "k.conf" and info.value.line == line, str(info.value)
    return info.value


# ---- the table ----------------------------------------------------------------------------

REQUIRED = """PRIORITY_HALFLIFE DEFAULT_PRIO_FACTOR NICE_USER_PRIO_FACTOR REMOTE_PRIO_FACTOR
    ACCOUNTANT_LOCAL_DOMAIN UID_DOMAIN PREEMPTION_REQUIREMENTS PREEMPTION_RANK NEGOTIATOR_PRE_JOB_RANK
    NEGOTIATOR_POST_JOB_RANK NEGOTIATOR_CONSIDER_PREEMPTION SLOT_WEIGHT NEGOTIATOR_USE_SLOT_WEIGHTS
    NEGOTIATE_ALL_JOBS_IN_CLUSTER SIGNIFICANT_ATTRIBUTES CONCURRENCY_LIMIT_DEFAULT
    PREEMPTION_REQUIREMENTS_STABLE PREEMPTION_RANK_STABLE NEGOTIATOR_CROSS_SLOT_PRIOS
    NEGOTIATOR_IGNORE_USER_PRIORITIES NEGOTIATOR_DEPTH_FIRST GROUP_NAMES GROUP_ACCEPT_SURPLUS
    GROUP_AUTOREGROUP GROUP_SORT_EXPR NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION
    GROUP_QUOTA_ROUND_ROBIN_RATE GROUP_QUOTA_MAX_ALLOCATION_ROUNDS NEGOTIATOR_STRICT_ENFORCE_QUOTA
    MATCHMAKER_PREEMPTION_NEEDS_BETTER_EUP MATCHMAKER_SKIP_CLAIMED_IDLE MATCHMAKER_JOB_ORDER_BY_QDATE
    MATCHMAKER_ACCOUNTING_GROUP_MAP_FILE MATCHMAKER_ACCOUNTING_GROUP_CHECK_REQUEST""".split()


def test_required_knobs_are_declared_with_a_type_and_doc():
    """Every knob the matchmaker reads is in the one table, with a known type and a doc line."""
    assert set(REQUIRED) <= set(KNOBS)
    for knob in list(KNOBS.values()) + list(PATTERNS.values()):
        assert knob.type in TYPES and knob.doc, knob.name
    assert {
        "GROUP_QUOTA_<g>",
        "GROUP_QUOTA_DYNAMIC_<g>",
        "GROUP_ACCEPT_SURPLUS_<g>",
        "GROUP_AUTOREGROUP_<g>",
        "GROUP_PRIO_FACTOR_<g>",
        "<x>_LIMIT",
        "CONCURRENCY_LIMIT_DEFAULT_<p>",
    } <= set(PATTERNS)


_PYTYPE = {"bool": bool, "int": int, "float": float, "string": str, "list": list}


def test_every_default_converts_to_its_type():
    """With an empty configuration each knob gives its default, of its declared type."""
    k = knobs()
    for name, knob in KNOBS.items():
        value = k.get(name)
        if knob.default is None:
            assert value is None, name
        elif knob.type == "expr":
            assert value is classad.parser.parse_expr(knob.default), name
        else:
            assert type(value) is _PYTYPE[knob.type], name


@pytest.mark.parametrize(
    "name, value",
    [
        ("PRIORITY_HALFLIFE", 86400.0),
        ("DEFAULT_PRIO_FACTOR", 1000.0),
        ("NICE_USER_PRIO_FACTOR", 1e10),
        ("REMOTE_PRIO_FACTOR", 1e7),
        ("ACCOUNTANT_LOCAL_DOMAIN", None),
        ("NEGOTIATOR_CONSIDER_PREEMPTION", True),
        ("NEGOTIATOR_USE_SLOT_WEIGHTS", True),
        ("NEGOTIATE_ALL_JOBS_IN_CLUSTER", False),
        ("SIGNIFICANT_ATTRIBUTES", None),
        ("CONCURRENCY_LIMIT_DEFAULT", 2308032.0),
        ("PREEMPTION_REQUIREMENTS_STABLE", True),
        ("PREEMPTION_RANK_STABLE", True),
        ("NEGOTIATOR_CROSS_SLOT_PRIOS", False),
        ("NEGOTIATOR_IGNORE_USER_PRIORITIES", False),
        ("NEGOTIATOR_DEPTH_FIRST", False),
        ("GROUP_NAMES", None),
        ("GROUP_ACCEPT_SURPLUS", False),
        ("GROUP_AUTOREGROUP", False),
        ("NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION", True),
        ("GROUP_QUOTA_ROUND_ROBIN_RATE", 1e100),
        ("GROUP_QUOTA_MAX_ALLOCATION_ROUNDS", 3),
        ("NEGOTIATOR_STRICT_ENFORCE_QUOTA", True),
        ("NEGOTIATOR_INTERVAL", 60),
        ("NEGOTIATOR_CYCLE_DELAY", 20),
        ("NEGOTIATOR_MAX_TIME_PER_CYCLE", 1200),
        ("NICE_USER_ACCOUNTING_GROUP_NAME", "nice-user"),
        ("NEGOTIATOR_RESOURCE_REQUEST_LIST_SIZE", 200),
        ("REMOVE_SIGNIFICANT_ATTRIBUTES_REGEX", "^Slot[0-9]*_"),
    ],
)
def test_defaults_from_the_spec_table(name, value):
    """docs/knobs.md defaults, value and type."""
    got = knobs().get(name)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    "name, text",
    [
        ("PREEMPTION_REQUIREMENTS", "False"),
        ("SLOT_WEIGHT", "Cpus"),
        (
            "PREEMPTION_RANK",
            "(RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, TotalJobRuntime)",
        ),
        (
            "NEGOTIATOR_PRE_JOB_RANK",
            "(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory",
        ),
        (
            "NEGOTIATOR_POST_JOB_RANK",
            "(RemoteOwner =?= UNDEFINED) * (ifthenElse(isUndefined(KFlops), 1000, Kflops)"
            " - SlotID - 1.0e10*(Offline=?=True))",
        ),
        (
            "GROUP_SORT_EXPR",
            'ifThenElse(AccountingGroup=?="<none>",3.4e+38,ifThenElse(GroupQuota>0,'
            "GroupResourcesInUse/GroupQuota,3.3e+38))",
        ),
    ],
)
def test_expression_defaults_from_the_spec(name, text):
    """Expression knobs default to the spec's expressions, parsed once (same shared tree)."""
    k = knobs()
    assert k.get(name) == classad.parser.parse_expr(text)
    assert k.get(name) is k.get(name)


_ORACLE = r"""
import json, sys
import htcondor2 as h
print(json.dumps({n: h.param.get(n) for n in json.load(sys.stdin)}))
"""


@pytest.fixture(scope="module")
def oracle_defaults(tmp_path_factory):
    """HTCondor's parameter-table values for our knob names, with an empty configuration."""
    pytest.importorskip("htcondor2")
    path = tmp_path_factory.mktemp("knobs") / "empty.conf"
    path.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("_condor_")}
    env["CONDOR_CONFIG"] = str(path)
    run = subprocess.run(
        [sys.executable, "-c", _ORACLE],
        input=json.dumps(sorted(KNOBS)),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


# Knobs whose default is not HTCondor's on purpose (the reason is in each knob's doc line).
_NOT_COMPARED = {"UID_DOMAIN", "ACCOUNTANT_DATABASE_FILE", "NEGOTIATOR_NAME"}


def test_defaults_match_htcondor(oracle_defaults):
    """Where HTCondor's parameter table has a default, ours is the same value.

    Knobs without a table default (code defaults, or unset) have nothing to compare."""
    compared = 0
    for name in sorted(set(KNOBS) - _NOT_COMPARED):
        theirs = oracle_defaults[name]
        if theirs is None:
            continue
        compared += 1
        knob, ours = KNOBS[name], knobs().get(name)
        if knob.type == "expr":
            assert ours == classad.parser.parse_expr(theirs), name
        elif knob.type == "list":
            assert ours == [s for s in theirs.replace(",", " ").split()], name
        elif knob.type == "bool" and isinstance(theirs, str):
            assert ours == (theirs.lower() == "true"), name
        else:
            assert ours == theirs, name
    assert compared >= 40


# ---- reading values -----------------------------------------------------------------------


def test_numbers_and_booleans_may_be_constant_expressions():
    """``3600*24`` is a number, ``TRUE``/``yes``/``0`` are booleans (docs/knobs.md, values)."""
    k = knobs(
        "PRIORITY_HALFLIFE = 3600*24\nNEGOTIATOR_INTERVAL = 2*30\nNEGOTIATOR_DEPTH_FIRST = TRUE\n"
        "NEGOTIATOR_CROSS_SLOT_PRIOS = yes\nNEGOTIATOR_CONSIDER_PREEMPTION = 0\n"
        "NEGOTIATOR_USE_SLOT_WEIGHTS = 1 == 2\nDEFAULT_PRIO_FACTOR = 5\n"
    )
    assert k.get("PRIORITY_HALFLIFE") == 86400.0 and type(k.get("PRIORITY_HALFLIFE")) is float
    assert k.get("NEGOTIATOR_INTERVAL") == 60 and type(k.get("NEGOTIATOR_INTERVAL")) is int
    assert k.get("NEGOTIATOR_DEPTH_FIRST") is True and k.get("NEGOTIATOR_CROSS_SLOT_PRIOS") is True
    assert k.get("NEGOTIATOR_CONSIDER_PREEMPTION") is False and k.get("NEGOTIATOR_USE_SLOT_WEIGHTS") is False
    assert k.get("DEFAULT_PRIO_FACTOR") == 5.0 and type(k.get("DEFAULT_PRIO_FACTOR")) is float


def test_attribute_access_and_unknown_names():
    """``knobs.priority_halflife`` works; an undeclared knob is a programming error."""
    k = knobs("PRIORITY_HALFLIFE = 60\n")
    assert k.priority_halflife == 60.0
    with pytest.raises(KeyError):
        k.get("NOT_A_KNOB")
    with pytest.raises(AttributeError):
        k.not_a_knob  # noqa: B018 - the attribute access is what raises


def test_values_come_through_macros_subsystems_and_environment():
    """Knob values are expanded config values: ``$(X)``, NEGOTIATOR.X and _CONDOR_X all apply."""
    k = knobs(
        "H = 7200\nPRIORITY_HALFLIFE = $(H)\nNEGOTIATOR.NEGOTIATOR_INTERVAL = 30\nNEGOTIATOR_INTERVAL = 90\n",
        environ={"_CONDOR_NEGOTIATOR_DEPTH_FIRST": "true"},
    )
    assert k.get("PRIORITY_HALFLIFE") == 7200.0
    assert k.get("NEGOTIATOR_INTERVAL") == 30
    assert k.get("NEGOTIATOR_DEPTH_FIRST") is True


def test_defaults_are_visible_to_macros_and_conditionals():
    """``$(PRIORITY_HALFLIFE)`` and ``defined PRIORITY_HALFLIFE`` see the default, as in HTCondor;
    a default written as a macro follows the knob it names."""
    k = knobs(
        "A = $(PRIORITY_HALFLIFE)\nif defined PRIORITY_HALFLIFE\nB = 1\nendif\nNEGOTIATOR_USE_SLOT_WEIGHTS = false\n"
    )
    assert k.config.get_raw("A") == "86400" and k.config.get_raw("B") == "1"
    assert k.get("CLAIM_PARTITIONABLE_LEFTOVERS") is False


def test_empty_definition():
    """``X =`` unsets an expression/string knob but leaves numbers and booleans at their default."""
    k = knobs(
        "PREEMPTION_REQUIREMENTS =\nPRIORITY_HALFLIFE =\nNEGOTIATOR_CONSIDER_PREEMPTION =\n"
        "NICE_USER_ACCOUNTING_GROUP_NAME =\n"
    )
    assert k.get("PREEMPTION_REQUIREMENTS") is None
    assert k.get("PRIORITY_HALFLIFE") == 86400.0
    assert k.get("NEGOTIATOR_CONSIDER_PREEMPTION") is True
    assert k.get("NICE_USER_ACCOUNTING_GROUP_NAME") is None


def test_old_names_are_read_when_the_new_one_is_unset():
    """HFS_ROUND_ROBIN_RATE / HFS_MAX_ALLOCATION_ROUNDS / GROUP_DYNAMIC_MACH_CONSTRAINT."""
    k = knobs(
        "HFS_ROUND_ROBIN_RATE = 1\nHFS_MAX_ALLOCATION_ROUNDS = 5\nGROUP_QUOTA_MAX_ALLOCATION_ROUNDS = 2\n"
        "GROUP_DYNAMIC_MACH_CONSTRAINT = Cpus > 1\n"
    )
    assert k.get("GROUP_QUOTA_ROUND_ROBIN_RATE") == 1.0
    assert k.get("GROUP_QUOTA_MAX_ALLOCATION_ROUNDS") == 2
    assert k.get("NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT") == classad.parser.parse_expr("Cpus > 1")


def test_lists():
    """List knobs split on commas and blanks."""
    k = knobs("GROUP_NAMES = group_physics, group_physics.hep,group_chemistry  other\n")
    assert k.group_names() == ["group_physics", "group_physics.hep", "group_chemistry", "other"]
    assert knobs().group_names() == []


# ---- bad values ---------------------------------------------------------------------------


def test_bad_number_names_knob_file_and_line():
    """``PRIORITY_HALFLIFE = abc`` is a ConfigError at its definition (HTCondor silently uses
    the default)."""
    err = bad("A = 1\n\nPRIORITY_HALFLIFE = abc\n", "PRIORITY_HALFLIFE", 3, "not a number")
    assert str(err).startswith("k.conf:3: config: PRIORITY_HALFLIFE")


def test_bad_boolean():
    """A boolean knob set to ``maybe`` is a ConfigError."""
    bad("NEGOTIATOR_DEPTH_FIRST = maybe\n", "NEGOTIATOR_DEPTH_FIRST", 1, "not a boolean")
    bad('NEGOTIATOR_DEPTH_FIRST = "yes"\n', "NEGOTIATOR_DEPTH_FIRST", 1, "not a boolean")


def test_bad_integer_and_minimum():
    """Integers must be integral; PRIORITY_HALFLIFE has a minimum of 1e-5."""
    bad("NEGOTIATOR_INTERVAL = 2.5\n", "NEGOTIATOR_INTERVAL", 1, "not an integer")
    bad("X = 1\nPRIORITY_HALFLIFE = 0\n", "PRIORITY_HALFLIFE", 2, "minimum")


def test_bad_value_through_a_macro_points_at_the_knob():
    """The error names the line of the knob's definition, not of the macro it uses."""
    bad("H = abc\nPRIORITY_HALFLIFE = $(H)\n", "PRIORITY_HALFLIFE", 2, "abc")


def test_bad_value_from_the_environment():
    """An environment override is named as such."""
    with pytest.raises(ConfigError, match="_CONDOR_PRIORITY_HALFLIFE"):
        knobs(environ={"_CONDOR_PRIORITY_HALFLIFE": "soon"}).get("PRIORITY_HALFLIFE")


def test_expression_syntax_error_names_knob_file_and_line():
    """A ClassAd syntax error in an expression knob becomes a ConfigError at its definition."""
    bad("\nPREEMPTION_REQUIREMENTS = (RemoteUserPrio >\n", "PREEMPTION_REQUIREMENTS", 2, "ClassAd expression")


def test_values_are_checked_lazily():
    """A bad value only fails when its knob is read, so other knobs stay usable."""
    k = knobs("PRIORITY_HALFLIFE = abc\nNEGOTIATOR_INTERVAL = 30\n")
    assert k.get("NEGOTIATOR_INTERVAL") == 30


def test_where_reports_the_definition():
    """``where`` gives file:line of the definition, or None for a default."""
    k = knobs("\nPRIORITY_HALFLIFE = 5\n")
    assert k.where("PRIORITY_HALFLIFE") == "k.conf:2" and k.where("DEFAULT_PRIO_FACTOR") is None


def test_from_file(tmp_path):
    """Knobs.from_file reads a file with its includes."""
    (tmp_path / "a.conf").write_text("include : b.conf\n")
    (tmp_path / "b.conf").write_text("PRIORITY_HALFLIFE = 100\n")
    assert Knobs.from_file(tmp_path / "a.conf", environ={}).get("PRIORITY_HALFLIFE") == 100.0


def test_plain_config_without_defaults():
    """A Config built without the defaults table still yields the defaults through Knobs."""
    k = Knobs(Config.from_string("", environ={}))
    assert k.get("PRIORITY_HALFLIFE") == 86400.0 and "PRIORITY_HALFLIFE" in DEFAULTS


# ---- per-group and per-limit knobs --------------------------------------------------------

GROUPS = """GROUP_NAMES = group_physics, group_physics.hep, group_chemistry
GROUP_QUOTA_group_physics = 20
GROUP_QUOTA_group_physics.hep = 15
GROUP_QUOTA_DYNAMIC_group_chemistry = 0.33
GROUP_ACCEPT_SURPLUS = false
GROUP_ACCEPT_SURPLUS_group_physics.hep = true
GROUP_AUTOREGROUP = TRUE
GROUP_AUTOREGROUP_group_chemistry = false
GROUP_PRIO_FACTOR_group_physics = 2000
GROUP_PRIO_FACTOR_group_chemistry = 0
"""


def test_group_quotas():
    """Static and dynamic quotas per group; unset is None; names are case-insensitive."""
    k = knobs(GROUPS)
    assert k.group_quota("group_physics") == 20.0 and k.group_quota("GROUP_PHYSICS.HEP") == 15.0
    assert k.group_quota("group_chemistry") is None
    assert k.group_quota_dynamic("group_chemistry") == 0.33 and k.group_quota_dynamic("group_physics") is None


def test_group_flags_fall_back_to_the_global_knob():
    """GROUP_ACCEPT_SURPLUS_<g> / GROUP_AUTOREGROUP_<g> default to the global setting."""
    k = knobs(GROUPS)
    assert k.group_accept_surplus("group_physics.hep") is True
    assert k.group_accept_surplus("group_physics") is False
    assert k.group_autoregroup("group_physics") is True and k.group_autoregroup("group_chemistry") is False


def test_group_prio_factor_zero_means_unset():
    """GROUP_PRIO_FACTOR_<g> of 0 or unset gives None (docs/negotiation.md, priority factors and EUP)."""
    k = knobs(GROUPS)
    assert k.group_prio_factor("group_physics") == 2000.0
    assert k.group_prio_factor("group_chemistry") is None and k.group_prio_factor("group_physics.hep") is None


def test_bad_group_quota():
    """Per-group values are checked like any knob."""
    with pytest.raises(ConfigError, match="GROUP_QUOTA_a") as info:
        knobs("GROUP_QUOTA_a = -1\n").group_quota("a")
    assert info.value.line == 1


def test_concurrency_limits_spec_example():
    """docs/negotiation.md, example 7.12: XSW_LIMIT=3; CONCURRENCY_LIMIT_DEFAULT=5; CONCURRENCY_LIMIT_DEFAULT_LARGE=100."""
    k = knobs("XSW_LIMIT = 3\nCONCURRENCY_LIMIT_DEFAULT = 5\nCONCURRENCY_LIMIT_DEFAULT_LARGE = 100\n")
    assert k.concurrency_limit("xsw") == 3.0
    assert k.concurrency_limit("large.swlicense") == 100.0
    assert k.concurrency_limit("other.license") == 5.0
    assert k.concurrency_limit("fileserver") == 5.0
    assert knobs().concurrency_limit("anything") == 2308032.0


def test_manual_behaviour_switches_reach_the_settings():
    """The three docs/negotiation.md (where HTCondor's manual and code disagree) switches are declared knobs, off by default (the code's
    behaviour), and Settings carries them to the cycle."""
    from matchmaker.config.settings import Settings

    default = Settings.from_knobs(knobs())
    assert (
        default.policy.preemption_needs_better_eup,
        default.policy.skip_claimed_idle,
        default.job_order_by_qdate,
    ) == (False, False, False)
    on = Settings.from_knobs(
        knobs(
            "MATCHMAKER_PREEMPTION_NEEDS_BETTER_EUP = true\n"
            "MATCHMAKER_SKIP_CLAIMED_IDLE = yes\nMATCHMAKER_JOB_ORDER_BY_QDATE = 1\n"
        )
    )
    assert (on.policy.preemption_needs_better_eup, on.policy.skip_claimed_idle, on.job_order_by_qdate) == (
        True,
        True,
        True,
    )
    bad("MATCHMAKER_SKIP_CLAIMED_IDLE = perhaps\n", "MATCHMAKER_SKIP_CLAIMED_IDLE", 1, "boolean")
