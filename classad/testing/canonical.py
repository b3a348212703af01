"""A comparable encoding of evaluation results, this library's and ``classad2``'s alike."""

from __future__ import annotations

import datetime
import math
from typing import Any


def canonical(value: Any) -> Any:
    """A comparable encoding of a result of ``eval()`` (this library's or ``classad2``'s)."""
    name = type(value).__name__
    if name == "Value":
        return "undefined" if int(value) == 2 else "error"
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) is int:
        return ("int", value)
    if type(value) is float:
        if math.isnan(value):
            return ("real", "nan")
        return ("real", repr(value))
    if type(value) is str:
        return ("str", value)
    if isinstance(value, list):
        return ("list", tuple(canonical(v) for v in value))
    if isinstance(value, datetime.datetime):
        return ("abstime", value.timestamp())
    if name == "ExprTree":
        return ("expr", repr(value))
    if name == "ClassAd":
        return ("ad", tuple(sorted((k.lower(), repr(value.lookup(k))) for k in value.keys())))
    return ("other", repr(value))


__all__ = ["canonical"]
