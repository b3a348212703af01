"""The built-in function library.

Importing this package registers every built-in in :mod:`classad.functions.registry`:
the core library's functions and the extensions HTCondor registers in every
daemon and tool (string lists, ``split``, ``evalInEachContext``, ...).  Modules
are grouped by theme; each function's docstring names the reference behaviour
it follows.
"""

from __future__ import annotations

from . import htcondor, lists, math, meta, regex, registry, stringlists, strings, time, types  # noqa: F401
from .registry import FUNCTIONS, builtin, lookup, register

__all__ = ["FUNCTIONS", "builtin", "lookup", "register", "registry"]
