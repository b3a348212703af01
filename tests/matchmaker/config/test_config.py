"""The HTCondor configuration language (docs/knobs.md, the configuration language): statements, macros, conditionals, errors.

Expected values come from the statements of docs/knobs.md (the configuration language); the differential cases at the
end are checked against the ``htcondor`` wheel's own config reader (run in a
subprocess per subsystem, because its configuration is process-wide).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from classad.errors import ClassAdError
from matchmaker.config.language import Config
from matchmaker.config.statements import ENVIRONMENT
from matchmaker.errors import ConfigError


def cfg(text: str, **kw) -> Config:
    kw.setdefault("environ", {})
    return Config.from_string(text, source="t.conf", **kw)


def raises_at(text: str, line: int, match: str = "", **kw) -> ConfigError:
    with pytest.raises(ConfigError, match=match) as info:
        cfg(text, **kw)
    assert info.value.file == "t.conf" and info.value.line == line, str(info.value)
    return info.value


# ---- statements ---------------------------------------------------------------------------


def test_assignment_names_are_case_insensitive_and_last_wins():
    """NAME = value; later definitions override earlier ones; lookup ignores case."""
    c = cfg("Foo = 1\nFOO=2\n  foo   =   three  words  \n")
    assert c.get_raw("foo") == "three  words"
    assert c.get_raw("FOO") == "three  words"
    assert c.names() == ["foo"]


def test_no_trailing_comments_and_comment_lines_ignored():
    """``A = 1 # x`` keeps ``1 # x``; ``#`` lines, blank lines and ``[section]`` lines are skipped."""
    c = cfg("# comment\n\n   # indented comment\n[section]\nA = 1 # x\n")
    assert c.get_raw("A") == "1 # x"


def test_line_without_operator_is_an_error_with_file_and_line():
    """Any other operator-less line is a syntax error naming file, line and column."""
    err = raises_at("A = 1\nfoo\n", 2, "expected NAME = value")
    assert err.column == 1
    assert str(err).startswith("t.conf:2:1: config: ")


def test_config_errors_are_classad_errors():
    """ConfigError is one of the project's ClassAdError kinds."""
    err = raises_at("A B = 1\n", 1, "illegal name")
    assert isinstance(err, ClassAdError) and err.kind == "config"


def test_illegal_names():
    """Names are letters, digits, '_' and '.'; a missing name is an error too."""
    raises_at("GROUP_QUOTA_group-a = 3\n", 1, "illegal name")
    raises_at("A = 1\n= 2\n", 2, "illegal name")


def test_dotted_names_are_plain_names():
    """Group knobs such as ``GROUP_QUOTA_group_physics.hep`` are ordinary names."""
    c = cfg("GROUP_QUOTA_group_physics.hep = 15\n")
    assert c.get_raw("group_quota_GROUP_PHYSICS.HEP") == "15"


def test_colon_assignment_is_accepted_with_a_warning():
    """On a non-keyword name ``:`` acts as ``=`` with a warning."""
    c = cfg("A : x\n")
    assert c.get_raw("A") == "x"
    assert any("obsolete" in w for w in c.warnings)


def test_continuation_lines():
    """A trailing backslash joins the next line (its leading blanks dropped)."""
    c = cfg("A = a \\\n    b\nB = x\\\ny\nC = 1 \\\n\\\n2\n")
    assert c.get_raw("A") == "a b"
    assert c.get_raw("B") == "xy"
    assert c.get_raw("C") == "1 2"


def test_comment_inside_continuation_is_dropped():
    """The example in docs/knobs.md (the configuration language): ``A = $(B) \\`` / ``# $(C)`` / ``$(D)`` gives ``$(B) $(D)``."""
    c = cfg("B = b\nC = c\nD = d\nA = $(B) \\\n# $(C)\n$(D)\n")
    assert c.get_raw("A") == "b d"


def test_multiline_block():
    """``NAME @=tag`` ... ``@tag`` keeps the lines (stripped, comments dropped)."""
    c = cfg("A @=end\n  x\n# not part of it\n  y\n@end\nB = 2\n")
    assert c.get_raw("A") == "x\ny"
    assert c.get_raw("B") == "2"


def test_unterminated_block_is_an_error():
    """A block without its closing ``@tag`` fails at end of file."""
    raises_at("A @=end\nx\n@end junk\n", 3, "@end")


# ---- macros -------------------------------------------------------------------------------


def test_expansion_happens_at_lookup():
    """docs/knobs.md, the configuration language: ``A=x; C=$(A); A=y`` gives C = y."""
    c = cfg("A = x\nC = $(A)\nA = y\n")
    assert c.get_raw("C") == "y"


def test_self_reference_is_expanded_immediately():
    """docs/knobs.md, the configuration language: ``A = $(A)zzz`` appends to the previous value (raw, so later macros still apply)."""
    assert cfg("A = x\nA = $(A)zzz\n").get_raw("A") == "xzzz"
    c = cfg("A = $(B)\nB = 1\nA = $(A) z\nB = 2\n")
    assert c.get_raw("A") == "2 z"


def test_undefined_macro_is_empty_and_default_applies():
    """Undefined expands to ''; ``$(NAME:default)`` uses default, which may itself be a macro."""
    c = cfg(
        "A = x $(NOPE) y\nB = $(NOPE:dflt)\nC = $(NOPE:$(D))\nD = dd\nE = $(D:unused)\n"
        "F = $(NOPE:a:b)\nG = $(EMPTY:e)\nEMPTY =\n"
    )
    assert c.get_raw("A") == "x  y"
    assert c.get_raw("B") == "dflt"
    assert c.get_raw("C") == "dd"
    assert c.get_raw("E") == "dd"
    assert c.get_raw("F") == "a:b"
    assert c.get_raw("G") == "e"


def test_malformed_references_stay_literal():
    """``$(B`` and ``$(B )`` are not references; ``$$(X)`` is a match-time construct."""
    c = cfg("A = a$(B\nC = $(B )\nD = $$(X)\n")
    assert c.get_raw("A") == "a$(B"
    assert c.get_raw("C") == "$(B )"
    assert c.get_raw("D") == "$$(X)"


def test_mutual_recursion_is_an_error_naming_file_and_line():
    """``A = $(B)`` / ``B = $(A)`` fails at lookup with the definition's location."""
    c = cfg("A = $(B)\nB = $(C)\nC = $(B)\n")
    with pytest.raises(ConfigError, match="loop") as info:
        c.get_raw("A")
    assert info.value.file == "t.conf" and info.value.line in (2, 3)


def test_recursion_guard_handles_deep_chains():
    """A long but finite chain expands fine."""
    text = "".join(f"M{i} = $(M{i + 1})\n" for i in range(200)) + "M200 = end\n"
    assert cfg(text).get_raw("M0") == "end"


def test_env_function_uses_the_given_environment():
    """``$ENV(V)`` reads the environ mapping; ``$ENV(V:d)`` has a default."""
    c = cfg("A = $ENV(HOME_X)\nB = $ENV(NOPE:d)\n", environ={"HOME_X": "/h"})
    assert c.get_raw("A") == "/h" and c.get_raw("B") == "d"


def test_errors_while_reading_name_a_line():
    """A loop met in ``if $(A)`` names the definition closing the loop; an unsupported
    helper in a condition names the ``if`` line."""
    raises_at("A = $(B)\nB = $(A)\n\nif $(A)\nendif\n", 2, "loop")
    raises_at("A = 1\nif $RANDOM_INTEGER(0,1)\nendif\n", 2, "RANDOM_INTEGER")


def test_unsupported_function_is_a_config_error():
    """Helpers this implementation does not model fail loudly, with the definition's line."""
    c = cfg("X = 1\nA = $RANDOM_CHOICE(a,b)\n")
    with pytest.raises(ConfigError, match="RANDOM_CHOICE") as info:
        c.get_raw("A")
    assert info.value.line == 2


def test_empty_value_counts_as_unset():
    """As ``param()``: an empty (or empty-expanding) value reads as unset; ``defined`` looks at
    the raw text."""
    c = cfg("A =\nB = $(NOPE)\n")
    assert c.get_raw("A") is None and c.get_raw("B") is None and c.get_raw("C") is None
    assert c.get_raw("A", "fallback") == "fallback"
    assert not c.defined("A") and c.defined("B") and not c.defined("C")


# ---- appending ----------------------------------------------------------------------------


def test_append_operators():
    """``+=`` appends with a space, ``+,=`` with a comma, ``+&&=`` with `` && ``."""
    c = cfg("A = a\nA += b\nB =\nB += only\nC = 1\nC +,= 2\nC +,= 3\nD = x\nD +&&= y\nE = e\nE += $(E)\n")
    assert c.get_raw("A") == "a b"
    assert c.get_raw("B") == "only"
    assert c.get_raw("C") == "1,2,3"
    assert c.get_raw("D") == "x && y"
    assert c.get_raw("E") == "e e"


# ---- subsystems and the environment -------------------------------------------------------


def test_subsystem_prefix_overrides_for_that_daemon_only():
    """``NEGOTIATOR.X`` wins over X for the negotiator; other daemons' prefixes are ignored."""
    text = "NEGOTIATOR.X = nx\nX = plain\nSCHEDD.Y = sy\nY = y\nZ = $(X)\n"
    neg = cfg(text)  # the negotiator is the default subsystem
    assert (neg.get_raw("X"), neg.get_raw("Y"), neg.get_raw("Z")) == ("nx", "y", "nx")
    schedd = cfg(text, subsystem="SCHEDD")
    assert (schedd.get_raw("X"), schedd.get_raw("Y")) == ("plain", "sy")


def test_subsystem_definition_can_build_on_the_plain_value():
    """In ``NEGOTIATOR.A = $(A) y``, ``$(A)`` means the plain A (a self-reference)."""
    assert cfg("A = x\nNEGOTIATOR.A = $(A) y\n").get_raw("A") == "x y"


def test_environment_overrides_files():
    """``_CONDOR_NAME`` (prefix in any case) overrides every file definition of NAME."""
    env = {"_CONDOR_F": "envf", "_condor_lower": "l", "_CONDOR_G": "$(F)x", "OTHER": "o"}
    c = cfg("F = plain\nLOWER = file\nX = $(F)\n", environ=env)
    assert c.get_raw("F") == "envf" and c.get_raw("lower") == "l"
    assert c.get_raw("X") == "envf" and c.get_raw("G") == "envfx"
    assert c.get_raw("OTHER") is None
    assert c.definition("F").file == ENVIRONMENT
    assert c.definition("F").location() == "environment variable _CONDOR_F"


def test_environment_is_applied_after_files():
    """Conditionals in files do not see environment overrides; a subsystem-prefixed file
    definition still beats a plain environment one."""
    c = cfg("if defined G\nH = 1\nendif\nNEGOTIATOR.F = neg\n", environ={"_CONDOR_G": "x", "_CONDOR_F": "e"})
    assert c.get_raw("H") is None
    assert c.get_raw("F") == "neg"


def test_environ_defaults_to_os_environ(monkeypatch):
    """Without an ``environ`` argument the process environment is used."""
    monkeypatch.setenv("_CONDOR_FROM_OS_ENV", "yes")
    assert Config.from_string("").get_raw("FROM_OS_ENV") == "yes"


# ---- includes -----------------------------------------------------------------------------


def test_include_is_relative_to_the_including_file(tmp_path, monkeypatch):
    """``include : f`` reads f next to the including file, whatever the working directory."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "main.conf").write_text("A = 1\ninclude : sub/one.conf\nC = $(B)\n")
    (tmp_path / "sub" / "one.conf").write_text("B = from_one\n@include : two.conf\n")
    (tmp_path / "sub" / "two.conf").write_text("A = 2\n")
    monkeypatch.chdir("/")
    c = Config.from_file(tmp_path / "main.conf", environ={})
    assert (c.get_raw("A"), c.get_raw("C")) == ("2", "from_one")
    assert c.definition("A").file == str(tmp_path / "sub" / "two.conf")
    assert c.definition("A").line == 1


def test_missing_include_names_file_and_line(tmp_path):
    """A missing file without ``ifexist`` is a ConfigError at the include line."""
    main = tmp_path / "main.conf"
    main.write_text("A = 1\ninclude ifexist : nope.conf\n\ninclude : nope.conf\n")
    with pytest.raises(ConfigError, match="nope.conf") as info:
        Config.from_file(main, environ={})
    assert info.value.file == str(main) and info.value.line == 4


def test_error_inside_included_file_names_that_file(tmp_path):
    """Errors report the file they are in, not the including one."""
    (tmp_path / "main.conf").write_text("include : bad.conf\n")
    (tmp_path / "bad.conf").write_text("A = 1\n\nbroken line\n")
    with pytest.raises(ConfigError) as info:
        Config.from_file(tmp_path / "main.conf", environ={})
    assert info.value.file == str(tmp_path / "bad.conf") and info.value.line == 3


def test_include_loop_is_an_error(tmp_path):
    """A file including itself stops at the nesting limit instead of recursing forever."""
    (tmp_path / "loop.conf").write_text("include : loop.conf\n")
    with pytest.raises(ConfigError, match="nested"):
        Config.from_file(tmp_path / "loop.conf", environ={})


def test_missing_top_file_and_command_include():
    """An unreadable top file and command includes are ConfigErrors."""
    with pytest.raises(ConfigError, match="cannot read"):
        Config.from_file("/nonexistent/dir/x.conf", environ={})
    raises_at("include : cat x.conf |\n", 1, "command")


# ---- conditionals -------------------------------------------------------------------------


def test_if_defined_and_else():
    """``if defined NAME`` / ``if !defined NAME`` see the table at that line."""
    c = cfg("if !defined B\nA = 1\nelse\nA = 2\nendif\nB = x\nif defined b\nC = 3\nendif\n")
    assert c.get_raw("A") == "1" and c.get_raw("C") == "3"


def test_if_defined_sees_defaults_and_subsystem_names():
    """``defined`` counts knob defaults and ``NEGOTIATOR.X`` for the negotiator."""
    c = cfg(
        "NEGOTIATOR.X = 1\nif defined X\nA = 1\nendif\nif defined PRIORITY_HALFLIFE\nB = 1\nendif\n",
        defaults={"PRIORITY_HALFLIFE": "86400"},
    )
    assert c.get_raw("A") == "1" and c.get_raw("B") == "1"


@pytest.mark.parametrize(
    "cond, expected",
    [
        ("version >= 8.0.0", True),
        ("version >= 25.14", True),
        ("version > 25.14.1", False),
        ("version == 25.14.1", True),
        ("version != 25.14.1", False),
        ("version < 100.0", True),
        ("version <= 25.13.99", False),
        ("! version >= 8.0", False),
    ],
)
def test_version_conditions(cond, expected):
    """``version OP x.y[.z]`` compares with the emulated HTCondor version (25.14.1)."""
    c = cfg(f"if {cond}\nA = yes\nelse\nA = no\nendif\n")
    assert c.get_raw("A") == ("yes" if expected else "no")


@pytest.mark.parametrize(
    "cond, expected",
    [
        ("true", True),
        ("TRUE", True),
        ("yes", True),
        ("1", True),
        ("2", True),
        ("1.5", True),
        ("false", False),
        ("No", False),
        ("0", False),
        ("!true", False),
        ("! false", True),
    ],
)
def test_boolean_conditions(cond, expected):
    """Literal booleans and numbers (non-zero is true)."""
    c = cfg(f"if {cond}\nA = yes\nelse\nA = no\nendif\n")
    assert c.get_raw("A") == ("yes" if expected else "no")


def test_macro_conditions_are_expanded_at_that_line():
    """``if $(X)`` uses X as defined so far; undefined (empty) is false."""
    c = cfg("X = true\nif $(X)\nA = 1\nendif\nX = false\nif $(NOPE)\nB = 1\nendif\nif !$(NOPE)\nC = 1\nendif\n")
    assert (c.get_raw("A"), c.get_raw("B"), c.get_raw("C")) == ("1", None, "1")


def test_elif_chain_and_nesting():
    """The first true branch wins; nested blocks inside dead branches are skipped entirely."""
    c = cfg(
        "if false\nA = 1\nelif true\nA = 2\nelif true\nA = 3\nelse\nA = 4\nendif\n"
        "if true\n  if false\n    B = 1\n  else\n    B = 2\n  endif\nendif\n"
        "if false\n  if maybe\n  endif\n  garbage line\n  X @=t\n  if\n  @t\nendif\nD = ok\n"
    )
    assert (c.get_raw("A"), c.get_raw("B"), c.get_raw("D")) == ("2", "2", "ok")
    assert c.get_raw("X") is None


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("endif\n", 1, "without matching if"),
        ("else\n", 1, "without matching if"),
        ("if true\nA = 1\n", 2, "missing endif"),
        ("if true\nelse\nelif true\nendif\n", 3, "after else"),
        ("if true\nelse\nelse\nendif\n", 3, "after else"),
        ("if defined A && defined B\nendif\n", 1, "compound"),
        ("if maybe\nendif\n", 1, "invalid if condition"),
        ("if\nendif\n", 1, "needs a condition"),
        ("if version == 25\nendif\n", 1, "x.y"),
        ("if version >= 8.a\nendif\n", 1, "x.y"),
    ],
)
def test_conditional_errors(text, line, message):
    """Malformed conditionals name the file and line."""
    raises_at(text, line, message)


# ---- error, warning, use ------------------------------------------------------------------


def test_error_and_warning_statements():
    """``error : msg`` aborts reading; ``warning : msg`` is recorded."""
    c = cfg("A = 1\nwarning : careful $(A)\n")
    assert c.warnings == ["t.conf:2: careful 1"]
    raises_at("A = 1\nerror : boom\n", 2, "boom")


def test_use_statements():
    """``use ROLE/FEATURE/SECURITY`` are ignored with a warning; ``use POLICY`` and unknown
    categories are errors (a policy template would change negotiator knobs)."""
    c = cfg("use ROLE : CentralManager\n")
    assert any("ignored" in w for w in c.warnings)
    raises_at("use POLICY : UWCS_DESKTOP\n", 1, "POLICY")
    raises_at("use NONSENSE : X\n", 1, "category")


# ---- differential: the htcondor wheel's config reader -------------------------------------

# Each case: (text, names, subsystem, environment).  Only plain macro names, so the
# wheel answers with raw strings rather than typed knob values.
DIFF_CASES = [
    ("A = x\nC = $(A)\nA = y\n", ["A", "C"], "TOOL", {}),
    ("A = x\nA = $(A)zzz\n", ["A"], "TOOL", {}),
    ("A = $(B)\nB = 1\nA = $(A) z\nB = 2\n", ["A"], "TOOL", {}),
    ("A = $(B:$(C))\nC = cc\nD = $(B:$(C:dd))\nE = $(B:x:y)\nF = $(b:1) $(F:q)\n", ["A", "D", "E", "F"], "TOOL", {}),
    ("A = a\nA += b\nB =\nB += b\nC = 1\nC +,= 2\nC +,= 3\nD = d\nD += $(D)\n", ["A", "B", "C", "D"], "TOOL", {}),
    ("A : x\n[sec]\nB = 1 # not a comment\n", ["A", "B"], "TOOL", {}),
    ("J = a \\\n  b\nK = a\\\nb\nL = 1 \\\n\\\n2\n", ["J", "K", "L"], "TOOL", {}),
    ("A @=end\n  x\n# c\n\n y\n@end\n", ["A"], "TOOL", {}),
    ("if !defined B\nA=1\nelse\nA=2\nendif\nif defined A\nC=3\nendif\n", ["A", "C"], "TOOL", {}),
    (
        "if version >= 25.14\nA=1\nelse\nA=2\nendif\nif version > 25.14.1\nB=1\nelse\nB=2\nendif\n",
        ["A", "B"],
        "TOOL",
        {},
    ),
    (
        "if Yes\nA=1\nendif\nX=false\nif $(X)\nB=1\nelse\nB=2\nendif\nif 0\nC=1\nelse\nC=2\nendif\n",
        ["A", "B", "C"],
        "TOOL",
        {},
    ),
    ("if false\nA=1\nelif true\nA=3\nelse\nA=2\nendif\n", ["A"], "TOOL", {}),
    (
        "if true\n  if false\n  A=1\n  else\n  A=2\n  endif\nendif\nif false\nif maybe\nendif\nfoo\nendif\n",
        ["A"],
        "TOOL",
        {},
    ),
    ("A=\nif defined A\nB=1\nendif\nC = $(NOPE)\nif defined C\nD=1\nendif\n", ["B", "C", "D"], "TOOL", {}),
    (
        "A = a$(B\nC = $(B )\nD = $$(X)\nE = $ENV(NOPE_NOT_SET)\nF = $ENV(NOPE_NOT_SET:dflt)\n",
        ["A", "C", "D", "E", "F"],
        "TOOL",
        {},
    ),
    ("IF true\nA=1\nENDIF\nif true\nB=1\nendif junk\n", ["A", "B"], "TOOL", {}),
    (
        "NEGOTIATOR.F = neg\nF = plain\nX = 1\nNEGOTIATOR.X = nx\nSCHEDD.Y = s\nY = y\nZ = $(X)\n",
        ["F", "X", "Y", "Z", "NEGOTIATOR.X"],
        "NEGOTIATOR",
        {},
    ),
    ("A = x\nNEGOTIATOR.A = $(A) y\nNEGOTIATOR.B = 1\nif defined B\nC = 1\nendif\n", ["A", "C"], "NEGOTIATOR", {}),
    (
        "F = plain\nX = $(F)\nif defined G\nH = 1\nendif\nNEGOTIATOR.N = file\n",
        ["F", "X", "G", "H", "N"],
        "NEGOTIATOR",
        {"_CONDOR_F": "envf", "_condor_G": "$(F)x", "_CONDOR_N": "env"},
    ),
]

ERROR_CASES = [
    "A = 1\nfoo\n",
    "GROUP_QUOTA_group-a = 3\n",
    "A=1\n=2\n",
    "if version == 25\nA=1\nendif\n",
    "if maybe\nA=1\nendif\n",
    "if true\nA=1\nelse\nA=2\nelif true\nA=3\nendif\n",
    "endif\n",
    "else\n",
    "if true\nA=1\n",
    "if defined A && defined B\nA=1\nendif\n",
    "if\nA=1\nendif\n",
    "A = 1\nerror : boom\n",
    "A @=end\nx\n@end junk\n",
    "A = 1\ninclude : nofile_here.conf\n",
]

_ORACLE = r"""
import json, os, sys
import htcondor2 as h
subsystem, cases = json.load(sys.stdin)
if subsystem != "TOOL":
    h.set_subsystem(subsystem)
out = []
for path, names, env in cases:
    for k in [k for k in os.environ if k.lower().startswith("_condor_")]:
        del os.environ[k]
    os.environ.update(env)
    os.environ["CONDOR_CONFIG"] = path
    h.reload_config()
    out.append([h.param.get(n) for n in names])
print(json.dumps(out))
"""


def _clean_env(path: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("_condor_")}
    env["CONDOR_CONFIG"] = path
    return env


@pytest.fixture(scope="module")
def oracle_values(tmp_path_factory):
    """The wheel's answers for DIFF_CASES, keyed by case index."""
    pytest.importorskip("htcondor2")
    d = tmp_path_factory.mktemp("oracle")
    (d / "empty.conf").write_text("")
    answers = {}
    for subsystem in sorted({c[2] for c in DIFF_CASES}):
        batch, idx = [], []
        for i, (text, names, sub, env) in enumerate(DIFF_CASES):
            if sub == subsystem:
                path = d / f"case{i}.conf"
                path.write_text(text)
                batch.append([str(path), names, env])
                idx.append(i)
        run = subprocess.run(
            [sys.executable, "-c", _ORACLE],
            input=json.dumps([subsystem, batch]),
            capture_output=True,
            text=True,
            timeout=120,
            env=_clean_env(str(d / "empty.conf")),
        )
        assert run.returncode == 0, run.stderr
        answers.update(zip(idx, json.loads(run.stdout)))
    return answers


@pytest.mark.parametrize("index", range(len(DIFF_CASES)))
def test_same_values_as_htcondor(index, oracle_values):
    """Each case reads the same as in HTCondor (values compared without outer blanks)."""
    text, names, subsystem, env = DIFF_CASES[index]
    ours = cfg(text, subsystem=subsystem, environ=env)
    expected = [v.strip() if isinstance(v, str) else v for v in oracle_values[index]]
    assert [ours.get_raw(n) for n in names] == expected


@pytest.fixture(scope="module")
def oracle_error_lines(tmp_path_factory):
    """For each ERROR_CASES text: the line HTCondor reports (it must reject the text)."""
    pytest.importorskip("htcondor2")
    d = tmp_path_factory.mktemp("oracle_errors")
    procs = []
    for i, text in enumerate(ERROR_CASES):
        path = d / f"err{i}.conf"
        path.write_text(text)
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", "import htcondor2"],
                env=_clean_env(str(path)),
                cwd=str(d),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    lines = []
    for p in procs:
        out, _ = p.communicate(timeout=120)
        m = re.search(r"Configuration Error Line (\d+)", out)
        lines.append(int(m.group(1)) if p.returncode != 0 and m else None)
    return lines


@pytest.mark.parametrize("index", range(len(ERROR_CASES)))
def test_same_errors_as_htcondor(index, oracle_error_lines, tmp_path):
    """Text HTCondor rejects is rejected here too, at the same line."""
    path = tmp_path / "c.conf"
    path.write_text(ERROR_CASES[index])
    assert oracle_error_lines[index] is not None, "HTCondor accepted this text"
    with pytest.raises(ConfigError) as info:
        Config.from_file(path, environ={})
    assert info.value.line == oracle_error_lines[index]


# ---- use templates: known names only -----------------------------------------------------------


@pytest.mark.parametrize(
    "text, line, name",
    [
        ("use FEATURE : NoSuchFeature\n", 1, "NoSuchFeature"),
        ("A = 1\nuse ROLE : Personal, Nope\n", 2, "Nope"),
        ("if true\nuse SECURITY : Weak\nendif\n", 2, "Weak"),
    ],
)
def test_an_unknown_template_is_an_error_with_file_and_line(text, line, name):
    """HTCondor stops at ``use CATEGORY : NAME`` for a NAME it does not know (checked with the
    wheel below); so does this reader, naming the file, the line and the template."""
    raises_at(text, line, f"unknown template 'use .* : {name}'")


def test_known_templates_are_accepted_in_any_case():
    c = cfg("use role : personal, SUBMIT\nuse feature : gpus\nuse Security : recommended_v9_0\n")
    assert sum("ignored" in w for w in c.warnings) == 3


# Arguments the templates that take them need (the wheel refuses them without).
_TEMPLATE_ARGS = {
    "AssignAccountingGroup": "(m)",
    "AssignProjectName": "(p)",
    "ScheddUsermapFile": "(a, b)",
    "SetJobAttrFromUsermap": "(a, b, c)",
    "StartdCronOneShot": "(a, b)",
    "StartdCronPeriodic": "(a, b, c)",
    "StartdCronContinuous": "(a, b)",
    "ScheddCronOneShot": "(a, b)",
    "ScheddCronPeriodic": "(a, b, c)",
    "ScheddCronContinuous": "(a, b)",
    "OneShotCronHook": "(STARTD_CRON, a, b)",
    "PeriodicCronHook": "(STARTD_CRON, a, b, c)",
    "ContinuousCronHook": "(STARTD_CRON, a, b)",
}


def _wheel_reads(path: Path) -> bool:
    run = subprocess.run(
        [sys.executable, "-c", "import htcondor2 as h; h.reload_config(); print('read')"],
        env=_clean_env(str(path)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return run.stdout.strip() == "read"


def test_the_known_templates_are_htcondor_s(tmp_path):
    """Every name of KNOWN_TEMPLATES is one the wheel's configuration reader accepts, and
    a name it does not know stops it, as it stops this reader."""
    pytest.importorskip("htcondor2")
    from matchmaker.config.statements import KNOWN_TEMPLATES

    every = tmp_path / "every.conf"
    every.write_text(
        "".join(
            f"use {category} : {name}{_TEMPLATE_ARGS.get(name, '')}\n"
            for category, names in KNOWN_TEMPLATES.items()
            for name in names
        )
    )
    assert _wheel_reads(every)
    cfg(every.read_text())
    unknown = tmp_path / "unknown.conf"
    unknown.write_text("use FEATURE : NoSuchFeature\n")
    assert not _wheel_reads(unknown)
