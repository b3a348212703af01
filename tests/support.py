"""What many test files share: where the repository is, and the two ways to run a command.

``run_matchmaker``/``run_classad`` call the command's ``main`` in this process (fast: no
interpreter start, no re-import); ``classad_bytes`` does the same with the standard
streams as bytes, as a process sees them (input given as bytes, undecodable output
bytes kept); ``matchmaker_process`` starts ``python -m matchmaker.cli`` for the few tests
that need a real process (signals, concurrent writers, a fresh process-wide
configuration).  ``Terminal`` is a stream that says it is a terminal.  ``idle_job_ads``
builds the idle jobs of the random pools the match engines are compared on."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, NamedTuple

if TYPE_CHECKING:
    from classad.ad import ClassAd

ROOT = Path(__file__).resolve().parent.parent  # the repository
EXAMPLES = ROOT / "examples"


class Ran(NamedTuple):
    """A finished command: exit status and what it wrote (as ``subprocess.CompletedProcess``;
    also unpacked as ``status, out, err``)."""

    returncode: int
    stdout: str
    stderr: str


def run_in_process(main: Callable, *args: object, streams: bool = True) -> Ran:
    """``main(argv, out, err)`` (``main(argv)`` without ``streams``) with its output captured;
    argparse's exits become the status."""
    out, err = io.StringIO(), io.StringIO()
    argv = [str(a) for a in args]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv, out, err) if streams else main(argv)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    return Ran(code, out.getvalue(), err.getvalue())


def run_matchmaker(*args: object) -> Ran:
    """``matchmaker ARGS`` in this process."""
    from matchmaker.cli.commands import main

    return run_in_process(main, *args)


def run_classad(*args: object) -> Ran:
    """``classad ARGS`` in this process."""
    from classad.cli import main

    return run_in_process(main, *args, streams=False)


def classad_bytes(*args: object, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """``classad ARGS`` in this process, with standard input, output and error as a process
    has them (UTF-8 text over bytes): returns the status and the bytes written."""
    from classad.cli import main

    argv = [str(a) for a in args]
    out, err = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"),
        io.TextIOWrapper(out, encoding="utf-8", write_through=True),
        io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True),
    )
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = streams
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        for stream in streams[1:]:
            stream.flush()
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def matchmaker_process(*args: object, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m matchmaker.cli ARGS`` in a child process started in the repository."""
    return subprocess.run(
        [sys.executable, "-m", "matchmaker.cli", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class Terminal:
    """A text stream that says it is a terminal and keeps what is written to it."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True

    @property
    def text(self) -> str:
        return "".join(self.parts)


def unclaimed_slot_ads(memories: Iterable[int]) -> list[ClassAd]:
    """Unclaimed one-core slots ``s1``, ``s2``, ... with the given memory (MB) each, Rank 0
    and Requirements true."""
    from classad.ad import ClassAd

    return [
        ClassAd(
            {
                "Name": f"s{i}",
                "Cpus": 1,
                "Memory": memory,
                "Rank": 0,
                "Requirements": True,
                "State": "Unclaimed",
                "Activity": "Idle",
            }
        )
        for i, memory in enumerate(memories, start=1)
    ]


def idle_job_ads(clusters: Iterable[Mapping[str, Any]]) -> list[ClassAd]:
    """Idle jobs, ``count`` of them (procs 0, 1, ...) per cluster, clusters numbered from 1.
    A cluster gives ``user`` (``name@domain``, the owner is ``name``), ``memory``, ``prio``,
    ``count`` and the ``requirements`` text; ``cpus`` (1 unless given), and the ``rank`` and
    ``limits`` (ConcurrencyLimits) texts where not None."""
    from classad.ad import ClassAd
    from classad.parser import parse_expr

    out = []
    for c, d in enumerate(clusters):
        for p in range(d["count"]):
            ad = ClassAd(
                {
                    "ClusterId": c + 1,
                    "ProcId": p,
                    "User": d["user"],
                    "Owner": d["user"].split("@")[0],
                    "JobStatus": 1,
                    "RequestMemory": d["memory"],
                    "RequestCpus": d.get("cpus", 1),
                    "JobPrio": d["prio"],
                }
            )
            ad.set_node("Requirements", parse_expr(d["requirements"]))
            for name, key in (("Rank", "rank"), ("ConcurrencyLimits", "limits")):
                if d.get(key) is not None:
                    ad.set_node(name, parse_expr(d[key]))
            out.append(ad)
    return out
