"""Ad sources in every command and the API (docs/cli.md): for each format, slots and jobs
read through a pipe (a FIFO, as ``<(condor_q -json)`` gives), through standard input and
gzipped give exactly the output of the plain files, in ``negotiate``, ``simulate``,
``analyze``, ``lint``, ``diff`` (which reads its sources once for both configurations),
``classad query`` and ``matchmaker.load``; an empty source is refused by the
cycle commands (unless ``--allow-empty``) and is an empty answer for ``query``."""

from __future__ import annotations

import gzip
import io
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from support import ROOT

import matchmaker
from classad import cli as classad_cli
from classad.formats import parseAds, write_ads
from classad.formats.detect import ParserType
from matchmaker.cli import commands

EXAMPLE = ROOT / "examples" / "negotiator"
CONFIG = str(EXAMPLE / "negotiator.config")
NOW = "1700000000"
FORMATS = ["old", "new", "json", "xml"]
WAYS = ["fifo", "stdin", "gzip"]


def converted(tmp: Path, name: str, fmt: str) -> bytes:
    out = io.StringIO()
    write_ads(parseAds(EXAMPLE / name, ParserType.Old), out, fmt)
    return out.getvalue().encode()


class Source:
    """The job ads handed over one way: ``arg`` names them on the command line; ``stdin`` is
    what standard input holds; a FIFO is written by a thread while the command reads it."""

    def __init__(self, tmp: Path, data: bytes, way: str) -> None:
        self.stdin = b""
        self._writer: threading.Thread | None = None
        if way == "gzip":
            self.arg = str(tmp / "jobs.ads.gz")
            Path(self.arg).write_bytes(gzip.compress(data))
        elif way == "stdin":
            self.arg, self.stdin = "-", data
        else:
            self.arg = str(tmp / f"jobs-fifo-{len(list(tmp.iterdir()))}")
            os.mkfifo(self.arg)
            self._data = data

    def __enter__(self) -> "Source":
        if hasattr(self, "_data"):

            def write() -> None:
                with open(self.arg, "wb") as f:
                    f.write(self._data)

            self._writer = threading.Thread(target=write, daemon=True)
            self._writer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._writer is not None and self._writer.is_alive():
            # The command never opened the FIFO (it failed first): open it here so the writer
            # can finish, rather than leave a thread blocked for ever.
            fd = os.open(self.arg, os.O_RDONLY | os.O_NONBLOCK)
            try:
                self._writer.join(timeout=60)
            finally:
                os.close(fd)


def with_stdin(data: bytes, run: Callable[[], Any]) -> Any:
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(data))
    try:
        return run()
    finally:
        sys.stdin = saved


def matchmaker_run(argv: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = with_stdin(stdin, lambda: commands.main(argv, out, err))
    return status, out.getvalue(), err.getvalue()


def command_lines(slots: str, jobs: str) -> dict[str, list[str]]:
    pool = ["--config", CONFIG, "--slots", slots, "--jobs", jobs]
    return {
        "negotiate": ["negotiate", *pool, "--now", NOW, "--json", "--explain"],
        "simulate": [
            "simulate",
            *pool,
            "--start",
            NOW,
            "--duration",
            "30m",
            "--interval",
            "10m",
            "--json",
            "--no-progress",
        ],
        "analyze": ["analyze", *pool, "--now", NOW, "--json"],
        "lint": ["lint", "--config", CONFIG, "--slots", slots, "--jobs", jobs, "--now", NOW, "--json"],
        "diff": [
            "diff",
            "--config",
            CONFIG,
            "--config",
            str(EXAMPLE.parent / "groups" / "groups.config"),
            "--slots",
            slots,
            "--jobs",
            jobs,
            "--now",
            NOW,
            "--json",
        ],
    }


@pytest.fixture(scope="module")
def expected() -> dict[str, tuple[int, str, str]]:
    """Each command over the plain old-format example files."""
    lines = command_lines(str(EXAMPLE / "slots.ads"), str(EXAMPLE / "jobs.ads"))
    found = {name: matchmaker_run(argv) for name, argv in lines.items()}
    assert all(status in (0, 1) and out for status, out, _ in found.values()), found
    return found


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_command_reads_jobs_every_way(tmp_path, expected, fmt, way):
    slots = tmp_path / f"slots.{fmt}"
    slots.write_bytes(converted(tmp_path, "slots.ads", fmt))
    data = converted(tmp_path, "jobs.ads", fmt)
    for name in ("negotiate", "simulate", "analyze", "lint", "diff"):
        with Source(tmp_path, data, way) as source:
            status, out, err = matchmaker_run(command_lines(str(slots), source.arg)[name], source.stdin)
        assert status == expected[name][0], err
        assert out == expected[name][1], (name, fmt, way)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_query_reads_every_way(tmp_path, capsys, fmt, way):
    data = converted(tmp_path, "jobs.ads", fmt)
    argv = ["query", "-constraint", "JobStatus == 1", "-af:j", "Owner", "RequestMemory"]
    assert classad_cli.main([*argv, str(EXAMPLE / "jobs.ads")]) == 0
    plain = capsys.readouterr().out
    assert plain.count("\n") >= 3
    with Source(tmp_path, data, way) as source:
        status = with_stdin(source.stdin, lambda: classad_cli.main([*argv, source.arg]))
    assert status == 0 and capsys.readouterr().out == plain


def _pool_shape(loaded: Any) -> list[Any]:
    return [(s.name, repr(s.ad)) for s in loaded.pool.slots] + [
        (j.id, j.submitter, j.status, repr(j.ad)) for j in loaded.pool.jobs
    ]


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_api_loads_a_file_object_stdin_and_gzip(tmp_path, monkeypatch, fmt):
    data = converted(tmp_path, "jobs.ads", fmt)
    reference = _pool_shape(matchmaker.load(CONFIG, EXAMPLE / "slots.ads", EXAMPLE / "jobs.ads"))
    packed = tmp_path / "jobs.gz"
    packed.write_bytes(gzip.compress(data))
    assert _pool_shape(matchmaker.load(CONFIG, EXAMPLE / "slots.ads", packed)) == reference
    assert _pool_shape(matchmaker.load(CONFIG, EXAMPLE / "slots.ads", io.BytesIO(data))) == reference
    with open(packed, "rb") as f:
        assert _pool_shape(matchmaker.load(CONFIG, EXAMPLE / "slots.ads", f)) == reference
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(data))))
    assert _pool_shape(matchmaker.load(CONFIG, EXAMPLE / "slots.ads", "-")) == reference


# ---- an empty source --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["negotiate", "simulate", "analyze"])
@pytest.mark.parametrize("empty", ["", "\n\n  \n", "# nothing\n", '<?xml version="1.0"?>\n<classads>\n</classads>\n'])
def test_an_empty_source_is_refused_by_the_cycle_commands(tmp_path, name, empty):
    path = tmp_path / "empty.ads"
    path.write_text(empty)
    for slots, jobs, kind in (
        (str(path), str(EXAMPLE / "jobs.ads"), "slot"),
        (str(EXAMPLE / "slots.ads"), str(path), "job"),
    ):
        status, out, err = matchmaker_run(command_lines(slots, jobs)[name])
        assert status == 1 and out == "" and err.count("\n") == 1, err
        assert err.startswith(f"matchmaker: {path}: format: no {kind} ads"), err
    status, out, err = matchmaker_run([*command_lines(str(EXAMPLE / "slots.ads"), str(path))[name], "--allow-empty"])
    assert status == 0, err


def test_an_empty_job_source_admitted_matches_nothing(tmp_path):
    path = tmp_path / "none.ads"
    path.write_text("")
    status, out, err = matchmaker_run(
        [*command_lines(str(EXAMPLE / "slots.ads"), str(path))["negotiate"], "--allow-empty"]
    )
    assert status == 0 and '"matches": []' in out


def test_the_api_refuses_an_empty_source_unless_allowed(tmp_path):
    from classad.errors import FormatError

    path = tmp_path / "none.ads"
    path.write_text("\n")
    with pytest.raises(FormatError, match="no job ads"):
        matchmaker.load(CONFIG, EXAMPLE / "slots.ads", path)
    assert matchmaker.load(CONFIG, EXAMPLE / "slots.ads", path, allow_empty=True).pool.jobs == []


@pytest.mark.parametrize("empty", ["", "# nothing\n", "\n"])
def test_query_and_convert_answer_an_empty_source_with_nothing(tmp_path, capsys, empty):
    path = tmp_path / "empty.ads"
    path.write_text(empty)
    assert classad_cli.main(["query", str(path), "-af", "Name"]) == 0
    assert classad_cli.main(["convert", "--to", "old", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
