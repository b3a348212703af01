"""The outputs quoted in examples/{lsf,maui,dirac,slurm}/README.md are what the commands print."""

from __future__ import annotations

import shlex

import pytest
from support import ROOT, run_matchmaker


def sessions(readme: str) -> list[tuple[list[str], str]]:
    """(argv, expected output) for every ``$ matchmaker ...`` command in console blocks."""
    out: list[tuple[list[str], str]] = []
    in_block = False
    cmd: list[str] = []
    lines: list[str] = []
    pending = ""
    for line in readme.splitlines():
        if line.startswith("```console"):
            in_block = True
            continue
        if in_block and line.startswith("```"):
            if cmd:
                out.append((cmd, "\n".join(lines) + "\n"))
            in_block, cmd, lines = False, [], []
            continue
        if not in_block:
            continue
        if pending or line.startswith("$ "):
            text = pending + (line[2:] if not pending else line.strip())
            if text.endswith("\\"):
                pending = text[:-1] + " "
                continue
            pending = ""
            if cmd:
                out.append((cmd, "\n".join(lines) + "\n"))
            cmd, lines = shlex.split(text), []
        else:
            lines.append(line)
    return out


@pytest.mark.parametrize("policy", ["lsf", "maui", "dirac", "slurm"])
def test_readme_output(policy, tmp_path, monkeypatch):
    """Each command runs in this process, from the repository root as the README's are."""
    monkeypatch.chdir(ROOT)
    readme = (ROOT / "examples" / policy / "README.md").read_text(encoding="utf-8")
    runs = sessions(readme)
    assert len(runs) == 2
    db = str(tmp_path / "state.db")
    for argv, expected in runs:
        assert argv[0] == "matchmaker"
        argv = [db if a == f"{policy}-example.db" else a for a in argv[1:]]
        got = run_matchmaker(*argv)
        assert got.returncode == 0, got.stderr
        assert got.stdout == expected
