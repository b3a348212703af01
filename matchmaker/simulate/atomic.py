"""One file written atomically: under a temporary name in its own directory, flushed to
disk, then renamed over its final name, so the final name always holds a whole file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable, Optional, TextIO

from ..errors import OutputError

_NEW_FILE_MODE = 0o666


def _umask() -> int:
    """The process's file-creation mask (reading it means setting it: it is put back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def reason(exc: OSError) -> str:
    """The system's words for a failed file operation (``No space left on device``)."""
    return exc.strerror or str(exc)


def write_atomically(
    path: str | os.PathLike, write: Callable[[TextIO], None], *, newline: Optional[str] = None
) -> None:
    """Write a text file through ``write(fh)`` under a temporary name next to ``path``, flush
    it to disk and rename it to ``path``; on failure ``path`` is untouched and the temporary
    file removed (``OutputError`` naming ``path``)."""
    final = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent or ".")
    except OSError as exc:
        raise OutputError(f"cannot write: {reason(exc)}", file=str(final)) from None
    try:
        os.fchmod(fd, _NEW_FILE_MODE & ~_umask())  # as open() would make it, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    except BaseException as exc:
        _remove(tmp)
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write: {reason(exc)}", file=str(final)) from None
        raise


def _remove(path: str | os.PathLike) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


__all__ = ["reason", "write_atomically"]
