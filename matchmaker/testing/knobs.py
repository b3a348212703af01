"""A configuration given as Knobs, a file or text, read once per distinct file or text."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from ..config.knobs import Knobs


def knobs_of(config: str | os.PathLike | Knobs) -> Knobs:
    """A configuration as :class:`Knobs`: given as Knobs, as a file (a path, or a string
    naming an existing file) or as configuration text."""
    if isinstance(config, Knobs):
        return config
    if isinstance(config, os.PathLike) or (
        isinstance(config, str) and "\n" not in config and "=" not in config and Path(config).is_file()
    ):
        path = Path(config).resolve()
        return _file_knobs(str(path), path.stat().st_mtime_ns)
    return _text_knobs(str(config))


@functools.lru_cache(maxsize=64)
def _file_knobs(path: str, _mtime: int) -> Knobs:
    return Knobs.from_file(path)


@functools.lru_cache(maxsize=64)
def _text_knobs(text: str) -> Knobs:
    return Knobs.from_string(text)


__all__ = ["knobs_of"]
