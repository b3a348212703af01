"""Which attribute names the ad-file readers accept.

HTCondor's old-format and JSON readers take almost any text as a name, so a
byte-order mark left by an editor, or a NUL byte, silently makes a *different*
attribute (``\\ufeffMemory`` instead of ``Memory``) and the real one reads as
undefined.  Every reader here refuses such a name instead, with its position:
an empty name, or one holding a NUL or U+FEFF anywhere.  Other unusual
characters (blanks, control characters) are kept, as HTCondor keeps them:
they cannot be mistaken for an ordinary name.
"""

from __future__ import annotations

import re
from typing import Optional

from ..errors import FormatError

_BAD = re.compile("[\x00\ufeff]")


def name_problem(name: str) -> Optional[tuple[int, str]]:
    """``(index, reason)`` of the first thing wrong with ``name``, or None if it is acceptable."""
    if not name:
        return 0, "empty attribute name"
    m = _BAD.search(name)
    if m is None:
        return None
    c = m.group()
    what = "a byte-order mark (U+FEFF)" if c == "\ufeff" else "a NUL character"
    return m.start(), f"attribute name {name!r} contains {what}"


def check_name(name: str, source: str, line: int, column: int) -> None:
    """Raise :class:`FormatError` if ``name`` (starting at ``column`` of ``line``) is refused."""
    problem = name_problem(name)
    if problem is not None:
        index, reason = problem
        raise FormatError(reason, file=source, line=line, column=column + index)


__all__ = ["name_problem", "check_name"]
