"""Group membership: submitter name -> negotiating group (docs/negotiation.md, group membership) and the
accounting-group map file of seed 002 ("Setting Accounting Group automatically per user"):
its syntax, how it is applied to jobs at submit time, and the knobs that name it."""

from __future__ import annotations

import pytest

from classad.ad import ClassAd
from matchmaker.config.knobs import Knobs
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.errors import ConfigError
from matchmaker.groups.membership import (
    GroupMapping,
    MapFileError,
    group_demand,
    group_of_submitter,
    group_prio_factor,
    negotiating_members,
    parse_group_map,
)
from matchmaker.groups.quotas import ROOT, GroupConfig, build_tree
from matchmaker.pool.ads import pool_from_ads

SEED_MAP = """\
* Alice\tgroup_physics
* Bob\tgroup_atlas
* Carol group_physics
* /^student_.*/\tgroup_students
"""


def tree():
    return build_tree(
        [
            GroupConfig("group_physics", 20, prio_factor=2.0),
            GroupConfig("group_physics.hep", 15, prio_factor=0.0),
            GroupConfig("group_chemistry", 10, autoregroup=True),
        ]
    )


# ----------------------------------------------------------------- submitter -> group


@pytest.mark.parametrize(
    "submitter, group",
    [
        ("group_physics.hep.higgs@cern.ch", "group_physics.hep"),
        ("GROUP_PHYSICS.Hep.higgs@cern.ch", "group_physics.hep"),  # case-insensitive
        ("group_physics.einstein@ias.edu", "group_physics"),
        ("group_physics.undefined.user@x", "group_physics"),  # nearest defined ancestor
        ("group_physics.hep.a.b@x", "group_physics.hep"),
        ("nosuch.user@x", ROOT),
        ("einstein@ias.edu", ROOT),  # no group part
        ("group_physics@x", ROOT),  # no '.' before '@'
        ("group_physics.user@host@x", "group_physics"),  # the last '@' counts
        ("group_physics.hep", "group_physics.hep"),  # no '@': a group name
        ("Group_Chemistry", "group_chemistry"),
        ("unknown_group", ROOT),
        ("<none>.group_physics.u@x", ROOT),  # not a path component
    ],
)
def test_group_of_submitter(submitter, group):
    """4.2: drop the user part, walk the group path, keep the deepest configured group."""
    assert group_of_submitter(submitter, tree()) == group


def test_members_demand_and_autoregroup():
    """Submitters grouped per negotiating group; autoregroup members also join <none>;
    names without '@' are skipped, as the reference skips such ads."""
    t = tree()
    subs = ["group_chemistry.curie@x", "bob@x", "group_physics.hep.higgs@x", "bad"]
    members = negotiating_members(t, subs)
    assert members[ROOT] == ["bob@x", "group_chemistry.curie@x"]
    assert members["group_chemistry"] == ["group_chemistry.curie@x"]
    assert members["group_physics"] == []
    demand = group_demand(t, [(s, 3.0) for s in subs] + [("group_physics.hep.w@x", 2.5)])
    assert demand == {ROOT: 3.0, "group_physics": 0.0, "group_chemistry": 3.0, "group_physics.hep": 5.5}


def test_group_prio_factor():
    """GROUP_PRIO_FACTOR of the submitter's group; unset and 0 both mean none."""
    t = tree()
    assert group_prio_factor("group_physics.einstein@x", t) == 2.0
    assert group_prio_factor("group_physics.hep.higgs@x", t) is None
    assert group_prio_factor("bob@x", t) is None


# ----------------------------------------------------------------- map file


def test_seed_example():
    """Seed 002's four lines: literal users and a /regex/ user."""
    gmap = parse_group_map(SEED_MAP)
    assert gmap.default_group("Alice") == "group_physics"
    assert gmap.default_group("Bob") == "group_atlas"
    assert gmap.default_group("Carol") == "group_physics"
    assert gmap.default_group("student_17") == "group_students"
    assert gmap.allowed_groups("Dave") is None and gmap.default_group("Dave") is None
    assert gmap.default_group("alice") is None  # literal names are case-sensitive


def test_group_list_first_is_default():
    """Seed 002: a comma-separated list is the set a user may request, first = default."""
    gmap = parse_group_map('* alice "group_a, group_b,group_c"\n* bob group_x,group_y\n')
    assert gmap.allowed_groups("alice") == ["group_a", "group_b", "group_c"]
    assert gmap.default_group("alice") == "group_a"
    assert gmap.resolve("alice") == "group_a"
    assert gmap.resolve("alice", "GROUP_B") == "group_b"  # group names ignore case
    assert gmap.resolve("alice", "group_z") == "group_a"
    assert gmap.resolve("mallory", "group_a") is None
    assert gmap.allowed_groups("bob") == ["group_x", "group_y"]


def test_first_matching_line_wins_and_regex_details():
    """Lines are tried in order; regexes search anywhere, take an `i` flag and `\\N`."""
    gmap = parse_group_map(
        "# comment\n"
        "\n"
        "   # indented comment\n"
        "* /bob/ group_bobs   # trailing comment\n"
        "* bobby group_never\n"
        "* /^USER_(\\w+)$/i group_\\1,group_users\n"
        '* "two words" "group_quoted"\n'
        "* /a\\/b/ group_slash\r\n"
    )
    assert gmap.default_group("bobby") == "group_bobs"
    assert gmap.allowed_groups("user_ann") == ["group_ann", "group_users"]
    assert gmap.default_group("two words") == "group_quoted"
    assert gmap.default_group("xa/b") == "group_slash"
    assert [r.line for r in gmap.rules] == [4, 5, 6, 7, 8]


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        ("* Alice\n", 1, 8, "missing accounting group"),
        ("* \n", 1, 3, "missing user"),
        ("Alice group_a\n", 1, 1, "first field"),
        ("* Alice group_a\n  GSI bob group_b\n", 2, 3, "first field"),
        ("# ok\n* /^student_.*\tgroup_s\n", 2, 3, "unterminated regular expression"),
        ("* /a(/ group_a\n", 1, 3, "bad regular expression"),
        ("* /a/U group_a\n", 1, 6, "flags"),
        ('* "alice group_a\n', 1, 3, "unterminated quoted string"),
        ('* "alice"x group_a\n', 1, 10, "after a closing quote"),
        ("* alice group_a,,group_b\n", 1, 9, "empty group name"),
        ("* alice group_a, group_b\n", 1, 18, "unexpected text"),
        ("\n\n@include other.map\n", 3, 1, "@include"),
    ],
)
def test_bad_lines_raise_with_position(text, line, column, words):
    """A malformed line raises MapFileError (a ValueError) with its line and column."""
    with pytest.raises(MapFileError) as info:
        parse_group_map(text)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.line, err.column) == (line, column)
    assert words in err.message and f"line {line}" in str(err)


# ----------------------------------------------------------------- applying a map to jobs


def mapping(check_request: bool = True) -> GroupMapping:
    return GroupMapping(
        parse_group_map("* alice group_physics,group_chemistry\n* bob group_atlas\n"), "groups.map", check_request
    )


def test_assign_requested_default_and_refused():
    """Seed: the first group of the list is the default, the list is what the user may opt
    into; a request outside it is refused, naming group, user, allowed groups and map."""
    m = mapping()
    assert m.assign("alice", None) == ("group_physics", None)
    assert m.assign("alice", "GROUP_CHEMISTRY") == ("group_chemistry", None)  # the map's spelling
    group, reason = m.assign("alice", "group_atlas")
    assert group is None
    assert reason == (
        "accounting group 'group_atlas' is not allowed for user 'alice' "
        "(it may use group_physics, group_chemistry; map file groups.map)"
    )
    assert m.assign("carol", None) == (None, None)  # no rule: no group
    assert "no rule of the map names that user" in (m.assign("carol", "group_atlas")[1] or "")


def test_assign_without_check_moves_to_the_default():
    """``AssignAccountingGroup(map, false)``: an invalid request is ignored, not refused."""
    m = mapping(check_request=False)
    assert m.assign("alice", "group_atlas") == ("group_physics", None)
    assert m.assign("carol", "group_atlas") == (None, None)


def _job(cluster: int, owner: str, **attrs: object) -> ClassAd:
    return ClassAd(
        {
            "ClusterId": cluster,
            "ProcId": 0,
            "Owner": owner,
            "User": f"{owner}@d",
            "JobStatus": 1,
            "Requirements": True,
            **attrs,
        }
    )


def test_pool_applies_the_map_at_submit_time():
    """A job without a group gets its owner's default group (AcctGroup, AcctGroupUser and
    AccountingGroup set, as the transform does); a job claiming a forbidden group never
    enters the queue and is listed as refused; a permitted claim is kept."""
    pool = pool_from_ads(
        [],
        [
            _job(1, "alice"),
            _job(2, "alice", AccountingGroup="group_atlas.alice"),
            _job(3, "alice", AcctGroup="group_chemistry", AcctGroupUser="x"),
        ],
        group_mapping=mapping(),
    )
    assert [(j.id, j.submitter) for j in pool.jobs] == [
        ("1.0", "group_physics.alice@d"),
        ("3.0", "group_chemistry.x@d"),
    ]
    assert pool.jobs[0].ad["AccountingGroup"] == "group_physics.alice"
    assert pool.jobs[0].ad["AcctGroup"] == "group_physics"
    assert [job for job, _ in pool.refused] == ["2.0"]


def test_refused_jobs_are_reported_by_the_cycle():
    """The cycle lists refused requests first among the rejected, with the reason, and
    never matches them."""
    slots = [ClassAd({"Name": f"s{i}", "Cpus": 1, "Requirements": True}) for i in range(3)]
    pool = pool_from_ads(
        slots, [_job(1, "bob", AccountingGroup="group_physics.bob"), _job(2, "bob")], group_mapping=mapping()
    )
    r = negotiate(pool, Settings.defaults(), StaticPriorities(), 0.0)
    assert [(m.job, m.submitter) for m in r.matches] == [("2.0", "group_atlas.bob@d")]
    assert r.rejected[0].job == "1.0"
    assert "accounting group 'group_physics' is not allowed for user 'bob'" in r.rejected[0].reason


# ----------------------------------------------------------------- the configuration knobs


def test_use_feature_assign_accounting_group_reads_the_map(tmp_path):
    """``use FEATURE : AssignAccountingGroup(map)`` (the seed's spelling) sets the map file,
    found next to the config file; a second argument ``false`` turns the check off."""
    (tmp_path / "groups.map").write_text("* alice group_physics\n")
    config = tmp_path / "negotiator.config"
    config.write_text("use FEATURE : AssignAccountingGroup(groups.map)\n")
    m = Settings.from_knobs(Knobs.from_file(config)).group_mapping
    assert m is not None and m.check_request is True
    assert m.groups.default_group("alice") == "group_physics"
    config.write_text("use feature : assignaccountinggroup( groups.map , false )\n")
    m = Settings.from_knobs(Knobs.from_file(config)).group_mapping
    assert m is not None and m.check_request is False
    assert Settings.from_knobs(Knobs.from_string("")).group_mapping is None


def test_bad_map_line_is_a_config_error_naming_the_map(tmp_path):
    """A malformed map line is a ConfigError with the map file, line and column."""
    (tmp_path / "groups.map").write_text("* alice group_physics\n* bob\n")
    config = tmp_path / "negotiator.config"
    config.write_text("MATCHMAKER_ACCOUNTING_GROUP_MAP_FILE = groups.map\n")
    with pytest.raises(ConfigError) as info:
        Settings.from_knobs(Knobs.from_file(config))
    err = info.value
    assert (err.file, err.line, err.column) == (str(tmp_path / "groups.map"), 2, 6)
    assert "missing accounting group" in err.message


def test_missing_map_file_and_bad_template_arguments(tmp_path):
    """A map file that cannot be read is reported at the config line naming it; the
    template needs one or two arguments."""
    config = tmp_path / "negotiator.config"
    config.write_text("# groups\nuse FEATURE : AssignAccountingGroup(nosuch.map)\n")
    with pytest.raises(ConfigError) as info:
        Settings.from_knobs(Knobs.from_file(config))
    assert (info.value.file, info.value.line) == (str(config), 2)
    assert "nosuch.map" in info.value.message
    with pytest.raises(ConfigError, match="map file name"):
        Knobs.from_string("use FEATURE : AssignAccountingGroup(a, b, c)\n")
