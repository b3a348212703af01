"""A simulation's output files, written so that no reader ever sees half of them.

Each file is written under a temporary name in the directory it belongs to, flushed to
disk, then renamed over its final name (:func:`.atomic.write_atomically`): a final name
holds a whole old file or a whole new one.  A run's set of files (``series.csv``,
``series.json``, the plots) is replaced together by :class:`StagedOutputs`:

1. :meth:`StagedOutputs.write` writes every new file into a private staging directory
   inside the output directory (same file system, so renames are cheap and atomic);
2. :meth:`~StagedOutputs.swap_in` moves the previous run's files (every name of
   :data:`OUTPUT_FILES` present, also those this run does not produce) into the staging
   directory, then the new files to their final names; a failure moves everything back;
3. :meth:`~StagedOutputs.finish` deletes the previous files, or
   :meth:`~StagedOutputs.roll_back` puts them back (when what follows the swap, the
   store's commit, fails).

A failure names the file and the reason (:class:`~matchmaker.errors.OutputError`), and
the previous outputs are left as they were.  :func:`check_directory` refuses an output
directory that cannot be used before any cycle runs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..errors import OutputError
from .atomic import reason as _reason

if TYPE_CHECKING:
    from .series import Simulation

SERIES_FILES = ("series.csv", "series.json")
PLOT_FILES = (
    "priorities.png",
    "running.png",
    "shares.png",
    "group-priorities.png",
    "group-running.png",
    "group-shares.png",
)
OUTPUT_FILES = SERIES_FILES + PLOT_FILES
_STAGE_PREFIX = ".matchmaker-run-"
PLOT_BYTES = 250_000  # a generous size of one 1000 x 500 PNG plot
ROW_BYTES = 600  # a generous size of one row in the CSV and the JSON together


def _existing_ancestor(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _outermost_missing(path: Path) -> Optional[Path]:
    """The outermost directory of ``path`` that does not exist yet (None: it exists)."""
    if os.path.lexists(path):
        return None
    while not os.path.lexists(path.parent) and path.parent != path:
        path = path.parent
    return path


def check_directory(directory: str | os.PathLike, *, needed: int = 0) -> Path:
    """Refuse, before anything runs, an output directory that cannot take the outputs: a
    path that is not a directory, one where no file can be created, or a file system with
    less than ``needed`` bytes free.  A missing directory is checked at its nearest
    existing parent (it is created when the outputs are written)."""
    out = Path(directory)
    where = _existing_ancestor(out.absolute())
    if not where.is_dir():
        raise OutputError(
            "not a directory" if where == out.absolute() else f"{where} is not a directory", file=str(out)
        )
    try:
        fd, probe = tempfile.mkstemp(prefix=_STAGE_PREFIX, dir=where)
        os.close(fd)
        os.unlink(probe)
        free = shutil.disk_usage(where).free
    except OSError as exc:
        raise OutputError(f"cannot write here: {_reason(exc)}", file=str(out)) from None
    if free < needed:
        raise OutputError(
            f"about {needed / 1e6:.1f} MB are needed for the outputs, {free / 1e6:.1f} MB are free", file=str(out)
        )
    return out


def estimated_size(cycles: int, principals: int, plots: bool) -> int:
    """A generous estimate of the bytes a run's outputs take (for :func:`check_directory`)."""
    return cycles * (principals + 1) * ROW_BYTES + (len(PLOT_FILES) * PLOT_BYTES if plots else 0)


class StagedOutputs:
    """A run's new files, written aside and then swapped in together (see the module doc)."""

    def __init__(self, directory: Path, stage: Path, files: list[str], created: Optional[Path]) -> None:
        self.directory, self.stage, self.files = directory, stage, files
        self._created = created  # the outermost directory this run created, if any
        self._old: list[str] = []  # previous files moved aside
        self._new: list[str] = []  # new files moved to their final names
        self.swapped = False

    @classmethod
    def write(cls, sim: "Simulation", directory: str | os.PathLike, *, plots: bool = False) -> "StagedOutputs":
        """Write ``series.csv``, ``series.json`` and (with ``plots``) the figures into a
        staging directory inside ``directory`` (created if missing); nothing under a final
        name changes yet.  On failure everything written is removed (``OutputError``)."""
        out = Path(directory)
        created = _outermost_missing(out.absolute())
        try:
            out.mkdir(parents=True, exist_ok=True)
            stage = Path(tempfile.mkdtemp(prefix=_STAGE_PREFIX, dir=out))
        except OSError as exc:
            _remove_created(out, created)
            raise OutputError(f"cannot create the output directory: {_reason(exc)}", file=str(out)) from None
        staged = cls(out, stage, [], created)
        try:
            (stage / "new").mkdir()
            (stage / "old").mkdir()
            staged._write_files(sim, plots)
        except BaseException:
            staged.discard()
            raise
        return staged

    def _write_files(self, sim: "Simulation", plots: bool) -> None:
        new = self.stage / "new"
        for name, writer in (("series.csv", sim.write_csv), ("series.json", sim.write_json)):
            try:
                writer(new / name)
            except OutputError as exc:
                raise OutputError(exc.message, file=str(self.directory / name)) from None
            self.files.append(name)
        if plots:
            from .plots import write_plots

            try:
                written = write_plots(sim, new)
            except OSError as exc:
                shown = Path(exc.filename).name if exc.filename else "a plot"
                raise OutputError(f"cannot write: {_reason(exc)}", file=str(self.directory / shown)) from None
            self.files += [p.name for p in written]

    def swap_in(self) -> None:
        """Move the previous files aside and the new ones to their final names; on failure
        put everything back and raise ``OutputError`` naming the file."""
        current = ""
        try:
            for name in OUTPUT_FILES:
                current = name
                if os.path.lexists(self.directory / name):
                    os.replace(self.directory / name, self.stage / "old" / name)
                    self._old.append(name)
            for name in self.files:
                current = name
                os.replace(self.stage / "new" / name, self.directory / name)
                self._new.append(name)
        except BaseException as exc:  # Ctrl-C half-way too: the previous files go back
            self._undo()
            self.discard()
            if isinstance(exc, OSError):
                raise OutputError(
                    f"cannot replace: {_reason(exc)}; the previous outputs are kept", file=str(self.directory / current)
                ) from None
            raise
        self.swapped = True

    def _undo(self) -> None:
        """Put the previous files back (the new ones go back to the staging directory)."""
        for name in reversed(self._new):
            try:
                os.replace(self.directory / name, self.stage / "new" / name)
            except OSError:
                pass
        self._new.clear()
        for name in reversed(self._old):
            try:
                os.replace(self.stage / "old" / name, self.directory / name)
            except OSError:
                pass
        self._old.clear()

    def roll_back(self) -> None:
        """Undo a swap (the step after it failed) and remove the staged files."""
        self._undo()
        self.swapped = False
        self.discard()

    def finish(self) -> None:
        """Delete the previous run's files: the new outputs are final."""
        shutil.rmtree(self.stage, ignore_errors=True)

    def discard(self) -> None:
        """Remove the staging directory, and the output directory if this run created it."""
        shutil.rmtree(self.stage, ignore_errors=True)
        if not self.swapped:
            _remove_created(self.directory, self._created)


def _remove_created(directory: Path, created: Optional[Path]) -> None:
    """Remove the directories a run created for ``directory``, up to ``created``, and only
    while they are empty."""
    if created is None:
        return
    here = directory.absolute()
    while True:
        try:
            here.rmdir()
        except OSError:
            return
        if here == created:
            return
        here = here.parent


__all__ = ["OUTPUT_FILES", "PLOT_FILES", "SERIES_FILES", "StagedOutputs", "check_directory", "estimated_size"]
