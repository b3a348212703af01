"""The exceptions raised at the edges of the language (bad text, bad files).

Inside the language, problems are values (Undefined, Error).  Outside it, one
base exception, :class:`ClassAdError`, carries the position of the problem.
Subclasses have a stable ``kind`` that the CLI prints as the stderr prefix:
``syntax`` for expression text, ``format`` for ad files.
"""

from __future__ import annotations

from typing import Optional


class ClassAdError(Exception):
    """Base of every error this package (and the matchmaker) raises on bad input."""

    kind = "error"

    def __init__(
        self,
        message: str,
        *,
        file: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
        context: Optional[str] = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.context = context
        super().__init__(str(self))

    def location(self) -> str:
        """``file:line:column`` with the parts that are known."""
        parts = [self.file or "<string>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        text = f"{self.location()}: {self.kind}: {self.message}"
        if self.context:
            text += "\n" + self.context
        return text


class ParseError(ClassAdError):
    """Expression or ad text that is not valid ClassAd syntax."""

    kind = "syntax"


class FormatError(ClassAdError):
    """An ad file that cannot be read in the requested format."""

    kind = "format"


# The library's last error message (``classad.lastError()``), as the C++ library keeps it:
# set by the few evaluation failures that explain themselves, never cleared by success.
_last_error = [""]


def last_error() -> str:
    """The message of the last explained error ("" if there was none)."""
    return _last_error[0]


def set_last_error(message: str) -> None:
    """Record ``message`` as the last error."""
    _last_error[0] = message


# The name the ``classad2`` module uses for its one exception type.
ClassAdException = ClassAdError
