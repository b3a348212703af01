"""Numbers the accountant and the configuration accept: finite and within a documented
range (docs/knobs.md, ranges; docs/reliability.md, number checks), refused with one line and
nothing written; macro chains expanded without recursion, bounded, with file and line."""

from __future__ import annotations

import re

import pytest
from support import ROOT, run_matchmaker as run

from matchmaker.accounting.priority_math import MAX_AMOUNT, MAX_FACTOR, MAX_TIME
from matchmaker.accounting.store import Accountant
from matchmaker.config.knobs import INT_LIMIT, KNOBS, PATTERNS, Knobs
from matchmaker.config.language import MAX_MACRO_DEPTH
from matchmaker.errors import ConfigError

# ---- userprio edits ----------------------------------------------------------------------------


REFUSED = [
    ("--setfactor", "1e308", "at most 1e+30"),  # the case: accepted and stored before
    ("--setfactor", "1e31", "at most 1e+30"),
    ("--setfactor", "0.5", "at least 1"),
    ("--setfactor", "inf", "not a finite number"),
    ("--setfactor", "nan", "not a finite number"),
    ("--setprio", "0", "greater than 0"),
    ("--setprio", "2e15", "at most 1e+15"),
    ("--setaccum", "-1", "non-negative"),
    ("--setaccum", "1e300", "at most 1e+15"),
    ("--setfloor", "-0.5", "non-negative"),
    ("--setfloor", "1e16", "at most 1e+15"),
    ("--setceiling", "-2", "or -1 for none"),
    ("--setceiling", "1e16", "at most 1e+15"),
    ("--setbegin", "1e20", "the end of the year 9999"),
    ("--setlast", "-5", "non-negative"),
]


@pytest.mark.parametrize("option,value,words", REFUSED)
def test_an_edit_out_of_range_is_refused_and_nothing_written(tmp_path, option, value, words):
    db = tmp_path / "s.db"
    with Accountant.load(db) as a:
        a.set_factor("u@d", 2.0)
    before = db.read_bytes()
    status, _out, err = run("userprio", "--state", db, option, "u@d", value)
    assert status == 1 and len(err.splitlines()) == 1 and words in err, err
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    "option,value",
    [
        ("--setfactor", f"{MAX_FACTOR:g}"),
        ("--setfactor", "1"),
        ("--setprio", f"{MAX_AMOUNT:g}"),
        ("--setceiling", "-1"),
        ("--setceiling", "0"),
        ("--setfloor", "0"),
        ("--setbegin", f"{MAX_TIME:.0f}"),
        ("--setaccum", "0"),
    ],
)
def test_the_ends_of_each_range_are_accepted(tmp_path, option, value):
    status, _out, err = run("userprio", "--state", tmp_path / "s.db", option, "u@d", value)
    assert status == 0, err


def test_simulate_setfactor_has_the_same_range(tmp_path):
    cfg, slots, jobs = tmp_path / "c", tmp_path / "s", tmp_path / "j"
    cfg.write_text("NEGOTIATOR_INTERVAL = 60\n")
    slots.write_text('Name = "s0"\nCpus = 1\nRequirements = true\n')
    jobs.write_text('ClusterId = 1\nProcId = 0\nOwner = "a"\nUser = "a@d"\nJobStatus = 1\nRequirements = true\n')
    status, _out, err = run(
        "simulate",
        "--config",
        cfg,
        "--slots",
        slots,
        "--jobs",
        jobs,
        "--start",
        0,
        "--duration",
        "1m",
        "--setfactor",
        "a@d",
        "1e308",
    )
    assert status == 1 and len(err.splitlines()) == 1 and "at most 1e+30" in err, err


# ---- knob values -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,words",
    [
        ("PRIORITY_HALFLIFE = 1e309", "not a finite number"),
        ("DEFAULT_PRIO_FACTOR = -1e400", "not a finite number"),
        ("CONCURRENCY_LIMIT_DEFAULT = 1e999", "not a finite number"),
        ("DEFAULT_PRIO_FACTOR = 1e31", "above the maximum 1e+30"),
        ("GROUP_PRIO_FACTOR_g = 2e30", "above the maximum 1e+30"),
        ("NEGOTIATOR_INTERVAL = 0", "below the minimum 1"),
        ("NEGOTIATOR_INTERVAL = 2147483648", "outside the integers"),
        ("NEGOTIATOR_TIMEOUT = -99999999999999999999", "outside the integers"),
    ],
)
def test_a_knob_out_of_range_names_file_and_line(text, words):
    knobs = Knobs.from_string("# a comment\n" + text + "\n", "neg.config", environ={})
    name = text.split()[0]
    with pytest.raises(ConfigError) as info:
        knobs.pattern("GROUP_PRIO_FACTOR_<g>", "g") if name.startswith("GROUP_PRIO") else knobs.get(name)
    assert (info.value.file, info.value.line) == ("neg.config", 2) and words in info.value.message


def test_the_ends_of_the_integer_range_are_accepted():
    knobs = Knobs.from_string(f"NEGOTIATOR_TIMEOUT = {INT_LIMIT}\nDIRAC_SEED = -{INT_LIMIT}\n", environ={})
    assert knobs.get("NEGOTIATOR_TIMEOUT") == INT_LIMIT and knobs.get("DIRAC_SEED") == -INT_LIMIT


def test_the_documented_ranges_are_the_knob_table():
    """docs/knobs.md's range table lists exactly the knobs with a minimum or a maximum."""
    text = (ROOT / "docs" / "knobs.md").read_text()
    section = text[text.index("## Ranges") :]
    section = section[: section.index("\n## ", 1)]
    documented = {
        m[0]: (m[1], m[2], m[3])
        for m in re.findall(r"^\| `([^`]+)` \| (\w+) \| ([^|]+?) \| ([^|]+?) \|$", section, re.M)
    }

    def shown(x: float | None) -> str:
        return "-" if x is None else f"{x:g}"

    declared = {
        k.name: (k.type, shown(k.minimum), shown(k.maximum))
        for k in [*KNOBS.values(), *PATTERNS.values()]
        if k.minimum is not None or k.maximum is not None
    }
    rows = "\n".join(f"| `{name}` | {t} | {lo} | {hi} |" for name, (t, lo, hi) in declared.items())
    assert documented == declared, f"docs/knobs.md's range table should read:\n{rows}"


# ---- macro chains ------------------------------------------------------------------------------


def chain(n: int) -> str:
    """``M0 = 5``, ``M1 = $(M0)`` ... ``PRIORITY_HALFLIFE = $(M<n-1>)`` on line n + 1."""
    return "M0 = 5\n" + "".join(f"M{i} = $(M{i - 1})\n" for i in range(1, n)) + f"PRIORITY_HALFLIFE = $(M{n - 1})\n"


def test_a_chain_of_ten_thousand_macros_is_a_clear_error():
    """The issue's case: 10,000 macros gave RecursionError; now one ConfigError at the
    knob's line (10,001), naming the start of the chain."""
    knobs = Knobs.from_string(chain(10_000), "deep.config", environ={})
    with pytest.raises(ConfigError) as info:
        knobs.get("PRIORITY_HALFLIFE")
    assert (info.value.file, info.value.line) == ("deep.config", 10_001)
    assert f"nested more than {MAX_MACRO_DEPTH} deep" in info.value.message
    assert "PRIORITY_HALFLIFE -> M9999 -> M9998" in info.value.message


def test_a_chain_within_the_bound_expands():
    """MAX_MACRO_DEPTH - 1 frames: the knob's own text and 199 macros below it."""
    assert Knobs.from_string(chain(MAX_MACRO_DEPTH - 1), environ={}).get("PRIORITY_HALFLIFE") == 5.0


def test_nested_defaults_are_bounded_too():
    """``$(X:$(X:...7...))`` nests by defaults, not definitions: the same bound, no recursion."""
    deep = "PRIORITY_HALFLIFE = " + "$(X:" * 5000 + "7" + ")" * 5000 + "\n"
    with pytest.raises(ConfigError, match="nested more than"):
        Knobs.from_string(deep, "d.config", environ={}).get("PRIORITY_HALFLIFE")
    shallow = "PRIORITY_HALFLIFE = " + "$(X:" * 50 + "7" + ")" * 50 + "\n"
    assert Knobs.from_string(shallow, environ={}).get("PRIORITY_HALFLIFE") == 7.0


def test_the_cli_prints_one_line_for_a_deep_chain(tmp_path):
    cfg = tmp_path / "deep.config"
    cfg.write_text(chain(10_000))
    slots, jobs = tmp_path / "s", tmp_path / "j"
    slots.write_text('Name = "s0"\nCpus = 1\nRequirements = true\n')
    jobs.write_text('ClusterId = 1\nProcId = 0\nOwner = "a"\nUser = "a@d"\nJobStatus = 1\nRequirements = true\n')
    status, _out, err = run("negotiate", "--config", cfg, "--slots", slots, "--jobs", jobs, "--now", 0)
    assert status == 1 and err.startswith(f"matchmaker: {cfg}:10001: config:") and len(err.splitlines()) == 1, err


# ---- a negative number is a value ---------------------------------------------------------------


@pytest.mark.parametrize(
    "value,words",
    [
        ("-inf", "-inf is not a finite number"),
        ("-Infinity", "-inf is not a finite number"),
        ("-nan", "nan is not a finite number"),
        ("-1e5", "at least 1 and at most 1e+30, not -100000"),
        ("-.5", "not -0.5"),
    ],
)
def test_a_negative_number_after_an_option_is_its_value(tmp_path, value, words):
    """The issue's case: ``-setfactor u@d -inf`` printed nine lines of usage; it is the
    edit's value, refused in one line, with nothing written."""
    db = tmp_path / "s.db"
    with Accountant.load(db) as a:
        a.set_factor("u@d", 2.0)
    before = db.read_bytes()
    for spelling in ("-setfactor", "--setfactor"):
        status, _out, err = run("userprio", "--state", db, spelling, "u@d", value)
        assert status == 1 and len(err.splitlines()) == 1, err
        assert err.startswith(f"matchmaker: {db}: error: --setfactor: ") and words in err, err
    assert db.read_bytes() == before


def test_a_negative_ceiling_of_minus_one_is_stored(tmp_path):
    db = tmp_path / "s.db"
    status, _out, err = run("userprio", "--state", db, "-setceiling", "u@d", "-1", "-setfloor", "u@d", "0")
    assert status == 0, err
    with Accountant.load(db, read_only=True) as a:
        assert a.get("u@d").ceiling == -1.0
