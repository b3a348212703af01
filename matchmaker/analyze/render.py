"""The analyze reports as text (one block per job or slot) and as JSON-ready objects."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .clauses import ClauseCount
from .job import JobReport
from .slot import SlotReport


def _clause_table(clauses: list[ClauseCount], unit: str) -> list[str]:
    if not clauses:
        return ["  (no Requirements)"]
    width = max(len(c.text) for c in clauses)
    lines = [f"  {'#':>3}  {'CLAUSE'.ljust(width)}  {'ALONE':>6}  {'RUNNING':>7}  UNDEFINED/ERROR"]
    for c in clauses:
        odd = f"{c.undefined}/{c.error}" if c.undefined or c.error else ""
        lines.append(f"  {c.index:>3}  {c.text.ljust(width)}  {c.alone:>6}  {c.running:>7}  {odd}".rstrip())
    lines.append(f"  (counts are {unit})")
    return lines


def job_text(r: JobReport) -> str:
    """The human-readable report of one job."""
    lines = [
        f"Job {r.job}"
        + (f" of {r.submitter}" if r.submitter else "")
        + (f" (autocluster {r.autocluster})" if r.autocluster is not None else "")
    ]
    lines.append(f"Verdict: {r.verdict}")
    if r.outcome == "refused":
        return "\n".join(lines) + "\n"
    lines.append(f"Slots: {r.slots_total} in the pool, {r.slots_considered} considered by the cycle")
    lines += [f"Context: {c}" for c in r.context]
    lines.append("The job's Requirements:")
    lines += _clause_table(r.clauses, "slots")
    lines.append(f"Its Requirements accept {r.job_accepts} slot(s); of those, {r.slot_accepts} slot(s) accept it.")
    for text, n in r.slot_rejections[:3]:
        lines.append(f"  slot clause rejecting it most: {text}  ({n} slot{'s' if n != 1 else ''})")
    if r.availability:
        lines.append("At cycle start, the slots both sides accept are:")
        for why, n in sorted(r.availability.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {n:>5}  {why}")
    if r.partitionable:
        lines.append("Partitionable slots:")
        lines += [f"  {p}" for p in r.partitionable]
    if r.matched_elsewhere:
        shown = ", ".join(r.matched_elsewhere[:5]) + (" ..." if len(r.matched_elsewhere) > 5 else "")
        lines.append(f"Matched to other jobs during the cycle: {len(r.matched_elsewhere)} ({shown})")
    if r.history:
        lines.append("Refused earlier in the cycle:" if r.outcome == "matched" else "Refusals during the cycle:")
        lines += [f"  {h}" for h in r.history]
    for note in r.notes:
        lines.append(f"Note: {note}")
    for s in r.suggestions:
        lines.append(f"Suggestion: {s.text()}")
    return "\n".join(lines) + "\n"


def slot_text(r: SlotReport) -> str:
    """The human-readable report of one slot."""
    lines = [
        f"Slot {r.slot}",
        f"Verdict: {r.verdict}",
        f"Requests: {r.requests} autocluster(s) of {r.jobs} idle job(s)",
        "The slot's Requirements:",
    ]
    lines += _clause_table(r.clauses, "requests")
    lines.append(f"Its Requirements accept {len(r.slot_accepts)} request(s); {len(r.both_ways)} accept it back.")
    for text, n in r.rejections[:3]:
        lines.append(f"  clause rejecting the most: {text}  ({n} request{'s' if n != 1 else ''})")
    for note in r.notes:
        lines.append(f"Note: {note}")
    return "\n".join(lines) + "\n"


def job_json(r: JobReport) -> dict[str, Any]:
    """One job's report as a JSON-ready object."""
    doc = asdict(r)
    doc["suggestions"] = [dict(asdict(s), text=s.text()) for s in r.suggestions]
    doc["slot_rejections"] = [{"clause": t, "slots": n} for t, n in r.slot_rejections]
    return doc


def slot_json(r: SlotReport) -> dict[str, Any]:
    """One slot's report as a JSON-ready object."""
    doc = asdict(r)
    doc["rejections"] = [{"clause": t, "requests": n} for t, n in r.rejections]
    return doc


__all__ = ["job_json", "job_text", "slot_json", "slot_text"]
