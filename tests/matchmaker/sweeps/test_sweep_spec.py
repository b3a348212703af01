"""Sweep files and ``--vary``: the variants they make, and one clear line for each mistake.

Every mistake is found before any cluster starts: the CLI prints exactly one line naming
the sweep file and the line of the offending key, exits with 1 and writes nothing.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from support import ROOT

from matchmaker.cli import main
from matchmaker.sweeps import SweepError, variants_of
from matchmaker.sweeps.plan import read_config

EXAMPLES = ROOT / "examples" / "simulate"
CONFIG = EXAMPLES / "fair-share" / "negotiator.config"
JOBS = EXAMPLES / "fair-share" / "jobs.ad"


def variants(tmp_path: Path, text: str, vary=None):
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return variants_of(read_config(CONFIG), path, vary)


def test_axes_make_their_product_in_order(tmp_path):
    """2 half-lives x 3 seeds = 6 variants, the first axis varying slowest."""
    vs = variants(tmp_path, "[axes]\nPRIORITY_HALFLIFE = [3600, 86400]\nseed = [1, 2, 3]\n")
    assert [v.name for v in vs] == [f"PRIORITY_HALFLIFE={h} seed={s}" for h in (3600, 86400) for s in (1, 2, 3)]
    assert vs[4].parameters() == {"PRIORITY_HALFLIFE": "86400", "seed": 2}
    assert vs[4].knobs[0].line == 2 and vs[4].knobs[0].file.endswith("sweep.toml")


def test_explicit_variants_are_crossed_with_the_axes_and_vary(tmp_path):
    """2 explicit variants x 2 seeds (file) x 2 knob values (--vary) = 8."""
    vs = variants(
        tmp_path,
        '[axes]\nseed = [1, 2]\n\n[[variant]]\nname = "condor"\n\n[[variant]]\nname = "slurm"\n'
        'MATCHMAKER_PRIORITY_POLICY = "slurm"\nsetfactor = {"bob@example.org" = 2}\n',
        vary={"DEFAULT_PRIO_FACTOR": ["1", "10"]},
    )
    assert len(vs) == 8
    slurm = [v for v in vs if v.name.startswith("slurm")]
    assert slurm[0].name == "slurm seed=1 DEFAULT_PRIO_FACTOR=1"
    assert slurm[0].parameters() == {
        "MATCHMAKER_PRIORITY_POLICY": "slurm",
        "DEFAULT_PRIO_FACTOR": "1",
        "setfactor": "bob@example.org=2",
        "seed": 1,
    }


def test_values_become_configuration_text(tmp_path):
    vs = variants(
        tmp_path,
        "[axes]\nNEGOTIATOR_CONSIDER_PREEMPTION = [true, false]\nPRIORITY_HALFLIFE = [1.5e3]\n"
        'PREEMPTION_REQUIREMENTS = ["RemoteUserPrio > SubmitterUserPrio * 1.2"]\n',
    )
    assert [k.text for k in vs[0].knobs] == ["true", "1500.0", "RemoteUserPrio > SubmitterUserPrio * 1.2"]
    assert vs[1].knobs[0].text == "false"


def test_a_job_file_is_found_next_to_the_sweep_file(tmp_path):
    (tmp_path / "other.ad").write_text(JOBS.read_text())
    vs = variants(tmp_path, '[axes]\njobs = ["other.ad"]\n')
    assert vs[0].jobs == str(tmp_path / "other.ad") and vs[0].name == "jobs=other.ad"


def test_a_macro_of_the_configuration_may_vary(tmp_path):
    """Not a knob, but defined by the base configuration, so knobs can refer to it."""
    config = tmp_path / "c.config"
    config.write_text("HALF_DAYS = 1\nPRIORITY_HALFLIFE = $(HALF_DAYS) * 86400\n")
    (tmp_path / "sweep.toml").write_text("[axes]\nHALF_DAYS = [1, 7]\n")
    vs = variants_of(read_config(config), tmp_path / "sweep.toml")
    assert [v.knobs[0].text for v in vs] == ["1", "7"]


def test_repeated_values_are_refused(tmp_path):
    with pytest.raises(SweepError, match="same simulation"):
        variants(tmp_path, "[axes]\nseed = [1, 1]\n")


def run_cli(tmp_path: Path, sweep_text: str | None, *extra: str) -> tuple[int, str, str]:
    args = [
        "sweep",
        "--config",
        str(CONFIG),
        "--slots",
        str(EXAMPLES / "slots.ad"),
        "--jobs",
        str(JOBS),
        "--duration",
        "1h",
        "--start",
        "1700000000",
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    ]
    if sweep_text is not None:
        (tmp_path / "sweep.toml").write_text(sweep_text)
        args += ["--sweep", str(tmp_path / "sweep.toml")]
    out, err = io.StringIO(), io.StringIO()
    rc = main(args + list(extra), out, err)
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("[axes]\nseed = [1]\nNO_SUCH_KNOB = [1, 2]\n", 3, "NO_SUCH_KNOB is not a knob"),
        ("# halflives\n[axes]\n\nPRIORITY_HALFLIFE = []\n", 4, "axis PRIORITY_HALFLIFE is empty"),
        ('[axes]\nPRIORITY_HALFLIFE = [3600, "soon"]\n', 2, "PRIORITY_HALFLIFE: 'soon' is not a number"),
        ("[axes]\nPRIORITY_HALFLIFE = [86400, -5]\n", 2, "below the minimum"),
        (
            '[axes]\nseed = [1]\n\n[[variant]]\nname = "a"\n\n[[variant]]\nPRIORITY_HALFLIFE = "x"\n',
            8,
            "PRIORITY_HALFLIFE: 'x' is not a number",
        ),
        ('[axes]\nseed = [1, "two"]\n', 2, "seed: 'two' is not a non-negative integer"),
        ('[axes]\njobs = ["missing.ad"]\n', 2, "jobs: no such file"),
        ('[axes]\nsetfactor = [{"bob@example.org" = 0.5}]\n', 2, "must be a finite number >= 1"),
        ("[axes]\nPRIORITY_HALFLIFE = 3600\n", 2, "give a list of values"),
        ("[axes]\nPRIORITY_HALFLIFE = [3600\nseed = [1]\n", 3, "TOML: Unclosed array"),  # found at line 3
        ("[axis]\nseed = [1]\n", 1, "unknown section 'axis'"),
    ],
)
def test_bad_sweep_files_get_one_line_naming_file_and_line(tmp_path, text, line, message):
    rc, out, err = run_cli(tmp_path, text)
    assert rc == 1 and out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"matchmaker: {tmp_path / 'sweep.toml'}:{line}: "), err
    assert message in err
    assert not (tmp_path / "out").exists()  # nothing written


@pytest.mark.parametrize("option", ["PRIORITY_HALFLIFE", "=1,2", "PRIORITY_HALFLIFE=,"])
def test_a_malformed_vary_is_a_command_line_mistake(tmp_path, option):
    rc, out, err = run_cli(tmp_path, None, "--vary", option)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "write NAME=value1,value2" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (("--vary", "PRIORITY_HALFLIFE=abc"), "'abc' is not a number"),
        (("--vary", "MY_KNOB=1,2"), "MY_KNOB is not a knob"),
        ((), "nothing to sweep"),
    ],
)
def test_bad_vary_options_get_one_line(tmp_path, extra, message):
    rc, out, err = run_cli(tmp_path, None, *extra)
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and message in err and err.startswith("matchmaker: <command line>: sweep: "), err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "missing, extra, message",
    [
        ("distributed", (), "matchmaker sweep needs Dask: pip install 'dask[distributed]'"),
        ("matplotlib", ("--plot",), "--plot needs matplotlib"),
    ],
)
def test_a_missing_library_is_refused_before_any_work(tmp_path, monkeypatch, missing, extra, message):
    import sys

    monkeypatch.setitem(sys.modules, missing, None)
    rc, out, err = run_cli(tmp_path, "[axes]\nseed = [1, 2]\n", *extra)
    assert rc == 1 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def test_a_scheduler_that_cannot_be_reached_is_one_line(tmp_path):
    pytest.importorskip("distributed")
    rc, out, err = run_cli(tmp_path, "[axes]\nseed = [1, 2]\n", "--scheduler", "nonsense://host:8786")
    assert rc == 1 and err.count("\n") == 1, err
    assert err.startswith("matchmaker: nonsense://host:8786: sweep: cannot reach the Dask scheduler: "), err


def test_resuming_without_start_takes_the_resumed_sweeps_start(tmp_path):
    """The default start is the clock, which would give every variant a new key; a resumed
    sweep takes the start it recorded instead (and --start still wins)."""
    import argparse

    from matchmaker.cli.sweep import _start
    from matchmaker.sweeps import write_meta

    write_meta(tmp_path, dict(start=1234.5, duration=60.0))
    assert _start(argparse.Namespace(start=None, out=str(tmp_path), resume=True)) == 1234.5
    assert _start(argparse.Namespace(start=99.0, out=str(tmp_path), resume=True)) == 99.0
    assert _start(argparse.Namespace(start=None, out=str(tmp_path), resume=False)) > 1.7e9


def test_a_sweeps_ads_come_from_stdin_or_a_pipe_read_once(tmp_path, monkeypatch):
    """``--jobs -`` reads standard input once; a FIFO (what ``<(condor_q -json)`` gives) is
    read whole and never reopened, so both ship the same bytes as the file itself."""
    import io
    import os
    import threading

    from matchmaker.sweeps.worker import Inputs

    slots = tmp_path / "slots.ads"
    slots.write_bytes(b'Name = "s1"\nCpus = 1\n')
    jobs = b'ClusterId = 1\nProcId = 0\nOwner = "u"\n'
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(jobs)))
    from_stdin = Inputs.read(str(slots), ["-"])
    assert from_stdin.files == {str(slots): slots.read_bytes(), "-": jobs}
    fifo = tmp_path / "jobs.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(jobs,))
    writer.start()
    from_pipe = Inputs.read(str(slots), [str(fifo)])
    writer.join()
    assert from_pipe.files[str(fifo)] == jobs
