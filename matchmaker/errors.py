"""Exceptions the matchmaker raises at its edges: bad configuration, bad saved state.

Both derive from :class:`classad.errors.ClassAdError`, so one ``except`` clause
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


__all__ = ["ConfigError", "StateError"]
