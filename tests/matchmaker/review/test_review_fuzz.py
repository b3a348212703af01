"""``lint`` and ``diff`` on random argument lists and hostile configurations: a status of
0, 1 or 2, one clear line on stderr at most per problem, never a traceback nor the
last-resort "please report this bug" line."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support import ROOT

from matchmaker.cli import main

HOSTILE = {
    "loop.config": "A = $(B)\nB = $(A)\nSTART = $(A)\nGROUP_NAMES = $(A)\nPREEMPTION_REQUIREMENTS = $(B)\n",
    "weird.config": (
        "GROUP_NAMES = a, a.b, <none>, c..d, A\nGROUP_QUOTA_DYNAMIC_a = 2\nGROUP_QUOTA_a.b = -1\n"
        "GROUP_SORT_EXPR = [x=1]\nSTART = \\\n  Memory >\nX @=end\nfoo $(BAR\n@end\n"
        "MATCHMAKER_PRIORITY_POLICY = nope\n"
    ),
    "bad.config": "PRIORITY_HALFLIFE = abc\nif\nA = $(A)\n",
    "broken.ad": 'Cpus = 4\nMemory = = 2\nName = "x\n\n[ a = ; ]\n',
    "empty.ad": "",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    d = tmp_path_factory.mktemp("reviewfuzz")
    for name, text in HOSTILE.items():
        (d / name).write_text(text)
    (d / "binary.ad").write_bytes(bytes(range(256)) * 4)
    ex = ROOT / "examples"
    return (
        [
            str(p)
            for p in (
                ex / "slots.ad",
                ex / "jobs.ad",
                ex / "groups" / "groups.config",
                ex / "groups" / "slots.ads",
                ex / "groups" / "jobs.ads",
            )
        ]
        + [str(d / n) for n in (*HOSTILE, "binary.ad", "missing.ad")]
        + [str(d)]
    )


def run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            status = main(argv, out, err)
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 2
    return status, err.getvalue()


WORDS = [
    "--config",
    "--slots",
    "--jobs",
    "--now",
    "--json",
    "--strict",
    "--duration",
    "--interval",
    "--seed",
    "--plot",
    "--state",
    "1700000000",
    "nan",
    "-1",
    "1h",
    "x",
    "",
]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_lint_and_diff_never_fail_badly(files, data):
    command = data.draw(st.sampled_from(["lint", "diff"]))
    pick = st.sampled_from(files)
    if data.draw(st.booleans()):
        argv = [command, "--config", data.draw(pick)]
        if command == "diff":
            argv += ["--config", data.draw(pick), "--now", "1700000000"]
        if data.draw(st.booleans()):
            argv += ["--slots", data.draw(pick), "--jobs", data.draw(pick)]
    else:
        argv = [command, *data.draw(st.lists(st.one_of(st.sampled_from(WORDS), pick), max_size=8))]
    status, err = run(argv)
    assert status in (0, 1, 2), (argv, status, err)
    assert "Traceback" not in err and "please report" not in err, (argv, err)


def test_hostile_configurations_are_findings(files):
    """Each hostile file gives findings with a place, and exit 1 (errors among them)."""
    for name in ("loop.config", "weird.config", "bad.config"):
        path = next(f for f in files if f.endswith(name))
        out = io.StringIO()
        assert main(["lint", "--config", path], out, io.StringIO()) == 1
        lines = out.getvalue().splitlines()
        assert lines[-1].split()[0] != "0" and all(line.startswith(path + ":") for line in lines[:-1]), lines
