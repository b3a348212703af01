"""``negotiate --explain`` and the explained parts of ``negotiate --json``: what allowed each
preemption (the claim's job and user, ``RemoteUserPrio``, ``SubmitterUserPrio``, the slot's
Rank before and after) and which mechanism decided each rejection."""

from __future__ import annotations

from typing import Any, TextIO

from ..cycle.results import CycleResult, Preemption


def preemption_json(p: Preemption) -> dict[str, Any]:
    """One preemption as the ``preemption`` object of a ``--json`` match."""
    return {
        "job": p.job,
        "user": p.user,
        "RemoteUserPrio": p.remote_user_prio,
        "SubmitterUserPrio": p.submitter_user_prio,
        "rank_before": p.rank_before,
        "rank_after": p.rank_after,
    }


def _n(x: float) -> str:
    return f"{x:.0f}" if x == int(x) and abs(x) < 1e15 else f"{x:.4g}"


def preemption_text(reason: str, p: Preemption) -> str:
    """One sentence: whose claim ended and the values that allowed it."""
    job = f"job {p.job} of {p.user}" if p.job else f"the claim of {p.user}"
    if reason == "rank":
        why = f"the slot's Rank for this job is {_n(p.rank_after)}, better than its CurrentRank {_n(p.rank_before)}"
    else:
        why = (
            f"RemoteUserPrio {_n(p.remote_user_prio)} vs SubmitterUserPrio {_n(p.submitter_user_prio)}, "
            f"PREEMPTION_REQUIREMENTS true, slot Rank {_n(p.rank_after)} not below CurrentRank {_n(p.rank_before)}"
        )
    return f"preempts {job} by {reason}: {why}"


def print_explanations(result: CycleResult, out: TextIO) -> None:
    """The ``--explain`` section: one line per preemption, one per rejection."""
    pre = [m for m in result.matches if m.preemption is not None]
    if pre:
        out.write(f"\nPreemptions: {len(pre)}\n")
        for m in pre:
            out.write(f"{m.job} on {m.slot}: {preemption_text(m.reason, m.preemption)}\n")  # type: ignore[arg-type]
    if result.rejected:
        out.write(f"\nWhy rejected: {len(result.rejected)}\n")
        for r in result.rejected:
            out.write(f"{r.job} [{r.mechanism or 'unknown'}]: {r.explanation or r.reason}\n")


__all__ = ["preemption_json", "preemption_text", "print_explanations"]
