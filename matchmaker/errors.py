"""Exceptions the matchmaker raises at its edges: bad configuration, bad saved state, outputs
that cannot be written.

All derive from :class:`classad.errors.ClassAdError`, so one ``except`` clause
(and one CLI error path) covers the language and the matchmaker.  Each has a
stable ``kind`` that the CLI prints as its stderr prefix.
"""

from __future__ import annotations

from classad.errors import ClassAdError


class ConfigError(ClassAdError):
    """A configuration file or knob value that cannot be used (names file and line)."""

    kind = "config"


class StateError(ClassAdError):
    """Saved matchmaker state (the accountant database) that is corrupt or of a wrong schema."""

    kind = "state"


class OutputError(ClassAdError):
    """An output file (a simulation's series or plots) that could not be written; names the file."""

    kind = "output"


__all__ = ["ConfigError", "OutputError", "StateError"]
