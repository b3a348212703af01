"""Group membership: submitter name -> negotiating group (negotiator.md 4.2) and the
accounting-group map file of seed 002 ("Setting Accounting Group automatically per user")."""

from __future__ import annotations

import pytest

from matchmaker.groupmap import (MapFileError, group_demand, group_of_submitter,
                                 group_prio_factor, negotiating_members, parse_group_map)
from matchmaker.groups import ROOT, GroupConfig, build_tree

SEED_MAP = """\
* Alice\tgroup_physics
* Bob\tgroup_atlas
* Carol group_physics
* /^student_.*/\tgroup_students
"""


def tree():
    return build_tree([GroupConfig("group_physics", 20, prio_factor=2.0),
                       GroupConfig("group_physics.hep", 15, prio_factor=0.0),
                       GroupConfig("group_chemistry", 10, autoregroup=True)])


# ----------------------------------------------------------------- submitter -> group

@pytest.mark.parametrize("submitter, group", [
    ("group_physics.hep.higgs@cern.ch", "group_physics.hep"),
    ("GROUP_PHYSICS.Hep.higgs@cern.ch", "group_physics.hep"),       # case-insensitive
    ("group_physics.einstein@ias.edu", "group_physics"),
    ("group_physics.undefined.user@x", "group_physics"),            # nearest defined ancestor
    ("group_physics.hep.a.b@x", "group_physics.hep"),
    ("nosuch.user@x", ROOT),
    ("einstein@ias.edu", ROOT),                                     # no group part
    ("group_physics@x", ROOT),                                      # no '.' before '@'
    ("group_physics.user@host@x", "group_physics"),                 # the last '@' counts
    ("group_physics.hep", "group_physics.hep"),                     # no '@': a group name
    ("Group_Chemistry", "group_chemistry"),
    ("unknown_group", ROOT),
    ("<none>.group_physics.u@x", ROOT),                             # not a path component
])
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
    assert demand == {ROOT: 3.0, "group_physics": 0.0, "group_chemistry": 3.0,
                      "group_physics.hep": 5.5}


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
    assert gmap.default_group("alice") is None           # literal names are case-sensitive


def test_group_list_first_is_default():
    """Seed 002: a comma-separated list is the set a user may request, first = default."""
    gmap = parse_group_map('* alice "group_a, group_b,group_c"\n* bob group_x,group_y\n')
    assert gmap.allowed_groups("alice") == ["group_a", "group_b", "group_c"]
    assert gmap.default_group("alice") == "group_a"
    assert gmap.resolve("alice") == "group_a"
    assert gmap.resolve("alice", "GROUP_B") == "group_b"     # group names ignore case
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
        "* /a\\/b/ group_slash\r\n")
    assert gmap.default_group("bobby") == "group_bobs"
    assert gmap.allowed_groups("user_ann") == ["group_ann", "group_users"]
    assert gmap.default_group("two words") == "group_quoted"
    assert gmap.default_group("xa/b") == "group_slash"
    assert [r.line for r in gmap.rules] == [4, 5, 6, 7, 8]


@pytest.mark.parametrize("text, line, column, words", [
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
])
def test_bad_lines_raise_with_position(text, line, column, words):
    """A malformed line raises MapFileError (a ValueError) with its line and column."""
    with pytest.raises(MapFileError) as info:
        parse_group_map(text)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.line, err.column) == (line, column)
    assert words in err.message and f"line {line}" in str(err)
