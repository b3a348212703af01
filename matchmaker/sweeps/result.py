"""The result of a sweep: every variant's outcome in the sweep's order, as tables.

:meth:`SweepResult.rows` is the tidy table -- one row per variant, cycle and principal,
the simulation's columns (:data:`matchmaker.simulate.COLUMNS`) after the variant's
name and parameters -- and :meth:`SweepResult.summary_rows` the per-variant summary
(:mod:`.summary`).  ``to_frame()`` and ``summary()`` give them as pandas DataFrames;
pandas is optional (``pip install pandas``), everything else works without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..simulate.series import COLUMNS
from .summary import SUMMARY_COLUMNS, jain_by_cycle, summarise
from .worker import Outcome

VARIANT = "variant"


@dataclass
class SweepResult:
    """Outcomes in the sweep's order; ``failed`` are those with an error."""

    outcomes: list[Outcome]

    def __iter__(self) -> Iterator[Outcome]:
        return iter(self.outcomes)

    def __len__(self) -> int:
        return len(self.outcomes)

    @property
    def finished(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.ok]

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok]

    def parameters(self) -> list[str]:
        """The parameter columns: every name any variant changes, in first-seen order."""
        return list(dict.fromkeys(p for o in self.outcomes for p in o.variant.parameters()))

    def columns(self) -> list[str]:
        """The tidy table's columns."""
        return [VARIANT, *self.parameters(), *COLUMNS]

    def rows(self) -> list[dict[str, Any]]:
        """The tidy table as dicts (a parameter a variant leaves as in the base is None)."""
        names = self.parameters()
        out = []
        for o in self.finished:
            params = o.variant.parameters()
            head = {VARIANT: o.variant.name, **{p: params.get(p) for p in names}}
            out += [{**head, **r} for r in o.rows]
        return out

    def summary_columns(self) -> list[str]:
        return [VARIANT, *self.parameters(), *SUMMARY_COLUMNS]

    def summary_rows(self) -> list[dict[str, Any]]:
        """One row for each finished variant's pool, submitters and groups."""
        names = self.parameters()
        out = []
        for o in self.finished:
            params = o.variant.parameters()
            head = {VARIANT: o.variant.name, **{p: params.get(p) for p in names}}
            out += [{**head, **r} for r in summarise(o.rows, o.waits, o.idle_at_end)]
        return out

    def fairness(self) -> dict[str, list[tuple[int, float, Any]]]:
        """Jain's index per cycle of each finished variant: ``(cycle, hours, index)``."""
        return {o.variant.name: jain_by_cycle(o.rows) for o in self.finished}

    def to_frame(self) -> Any:
        """The tidy table as a pandas DataFrame (needs pandas)."""
        return _frame(self.rows(), self.columns(), "to_frame")

    def summary(self) -> Any:
        """The summary as a pandas DataFrame (needs pandas)."""
        return _frame(self.summary_rows(), self.summary_columns(), "summary")


def _frame(rows: list[dict[str, Any]], columns: list[str], what: str) -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            f"SweepResult.{what} needs pandas (pip install pandas); the rows are also "
            f"available as dicts ({'rows' if what == 'to_frame' else 'summary_rows'}())"
        ) from None
    return pd.DataFrame(rows, columns=columns)


__all__ = ["VARIANT", "SweepResult"]
