"""The two attribute orders HTCondor prints ads in.

* **Container order** (``repr()``, ``printOld()``, ``printJson()``, nested ads
  everywhere): HTCondor keeps attributes sorted by the *byte* length of the
  name, then by ``strcasecmp``, which folds ASCII letters only.
* **Tool order** (``condor_q -l``, ``condor_status -json``...): the tools sort
  the top-level names with ``strcasecmp`` alone.

Both compare UTF-8 bytes, so names outside ASCII sort as HTCondor sorts them.
"""

from __future__ import annotations

from typing import Any, Iterable

_FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


def _folded(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape").translate(_FOLD)


def container_key(name: str) -> tuple[int, bytes]:
    """Sort key of HTCondor's attribute container: byte length, then ``strcasecmp``."""
    raw = name.encode("utf-8", "surrogateescape")
    return len(raw), raw.translate(_FOLD)


def container_items(pairs: Iterable[tuple[str, Any]]) -> list:
    """(name, value) pairs in container order."""
    return sorted(pairs, key=lambda kv: container_key(kv[0]))


def tool_items(pairs: Iterable[tuple[str, Any]]) -> list:
    """(name, value) pairs in the order HTCondor's command-line tools print them."""
    return sorted(pairs, key=lambda kv: _folded(kv[0]))
