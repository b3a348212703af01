"""Progress on a terminal: what a long command is doing, on stderr, never on stdout.

Both displays stay silent unless stderr is a terminal and the command has already run
for a second, so quick runs, pipes and files never see them; they clear themselves when
the command ends.  ``rich`` draws them.
"""

from __future__ import annotations

import time
from typing import Any, TextIO

# A command shows progress only after running this long (seconds).
DELAY = 1.0


class ProgressBar:
    """A bar of ``done`` out of ``total`` steps (``simulate``'s cycles, ``sweep``'s variants)."""

    def __init__(self, err: TextIO, enabled: bool, label: str = "cycles") -> None:
        self.err, self.enabled, self.label = err, enabled, label
        self.began = time.monotonic()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.began < DELAY:
                return
            from rich.console import Console  # loaded only when a bar is shown
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            self.bar = Progress(
                self.label,
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.err),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done)

    def close(self) -> None:
        """Clear the bar (if it was shown)."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


class StatusLine:
    """One line saying what the command is doing (``negotiate``: the file being read, the
    spin and the matches so far), with a spinner."""

    def __init__(self, err: TextIO, enabled: bool) -> None:
        self.err, self.enabled = err, enabled
        self.began = time.monotonic()
        self.status: Any = None
        self.text = ""

    def __call__(self, text: str) -> None:
        if not self.enabled:
            return
        self.text = text
        if self.status is None:
            if time.monotonic() - self.began < DELAY:
                return
            from rich.console import Console  # loaded only when the line is shown

            self.status = Console(file=self.err).status(text)
            self.status.start()
        else:
            self.status.update(text)

    def close(self) -> None:
        """Clear the line (if it was shown)."""
        if self.status is not None:
            self.status.stop()
            self.status = None


def wanted(err: TextIO, disabled: bool) -> bool:
    """Whether to show progress: not turned off, and stderr is a terminal."""
    isatty = getattr(err, "isatty", None)
    return not disabled and isatty is not None and bool(isatty())


__all__ = ["DELAY", "ProgressBar", "StatusLine", "wanted"]
