"""``matchmaker diff`` for one cycle: the same pool negotiated under configuration A and
under configuration B, and what differs.

Each side is the cycle ``negotiate`` would run (:func:`matchmaker.analyze.prepare`, on a
private copy of the accountant), so the diff also knows, for a job matched under one
configuration only, what decided it under the other (the ``analyze`` verdict: the
mechanism and its sentence).  Reported:

* jobs matched under A only and under B only, with the other side's mechanism;
* slots whose match changed (the job under A, the job under B);
* each submitter's and group's match count and share under A and B (share: the weighted
  slots it holds when the cycle ends, over the pool's weight);
* preemptions added (B only) and removed (A only).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from ..analyze.job import decided_by
from ..analyze.pool_view import PoolView
from ..cycle.results import Match


@dataclass(frozen=True)
class JobChange:
    """A job matched under one configuration only: where, and what decided the other."""

    job: str
    submitter: str
    slot: str  # its slot where it was matched
    mechanism: str  # what decided it under the other configuration ("" if unknown)
    why: str  # the other configuration's verdict sentence


@dataclass(frozen=True)
class SlotChange:
    """A slot whose match differs: the job under A and under B (None: no match)."""

    slot: str
    job_a: Optional[str]
    job_b: Optional[str]


@dataclass(frozen=True)
class ShareRow:
    """A submitter's or group's matches this cycle and share after it, under A and B."""

    name: str
    matched_a: int
    matched_b: int
    share_a: float
    share_b: float

    @property
    def changed(self) -> bool:
        return self.matched_a != self.matched_b or abs(self.share_a - self.share_b) > 1e-12


@dataclass(frozen=True)
class PreemptionRow:
    job: str
    slot: str
    preempted: str
    reason: str


@dataclass
class CycleDiff:
    """What changes for one cycle when configuration B replaces A."""

    only_a: list[JobChange] = field(default_factory=list)
    only_b: list[JobChange] = field(default_factory=list)
    slots: list[SlotChange] = field(default_factory=list)
    submitters: list[ShareRow] = field(default_factory=list)
    groups: list[ShareRow] = field(default_factory=list)
    preemptions_added: list[PreemptionRow] = field(default_factory=list)
    preemptions_removed: list[PreemptionRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # reading the configurations and ads

    @property
    def empty(self) -> bool:
        """No difference at all."""
        return not (
            self.only_a
            or self.only_b
            or self.slots
            or self.preemptions_added
            or self.preemptions_removed
            or any(r.changed for r in self.submitters + self.groups)
        )

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["empty"] = self.empty
        return doc


def cycle_diff(a: PoolView, b: PoolView) -> CycleDiff:
    """The difference of two prepared cycles over the same ads (A first)."""
    ma = {m.job: m for m in a.result.matches}
    mb = {m.job: m for m in b.result.matches}
    out = CycleDiff()
    out.only_a = [_change(m, b) for job, m in ma.items() if job not in mb]
    out.only_b = [_change(m, a) for job, m in mb.items() if job not in ma]
    sa = {m.slot: m.job for m in a.result.matches}
    sb = {m.slot: m.job for m in b.result.matches}
    out.slots = [SlotChange(s, sa.get(s), sb.get(s)) for s in _union(sa, sb) if sa.get(s) != sb.get(s)]
    out.submitters = _rows(_submitters(a), _submitters(b))
    out.groups = _rows(_groups(a), _groups(b))
    pa, pb = _preemptions(a.result.matches), _preemptions(b.result.matches)
    out.preemptions_added = [p for k, p in pb.items() if k not in pa]
    out.preemptions_removed = [p for k, p in pa.items() if k not in pb]
    return out


def _union(x: dict[str, Any], y: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys([*x, *y]))


def _change(m: Match, other: PoolView) -> JobChange:
    """``m``'s job, with what decided it in the ``other`` cycle."""
    job = other.job(m.job)
    if job is None:
        refused = dict(other.pool.refused)
        reason = refused.get(m.job, "not in the queue")
        return JobChange(m.job, m.submitter, m.slot, "accounting-group-map" if m.job in refused else "", reason)
    _, mechanism, why = decided_by(other, job)
    return JobChange(m.job, m.submitter, m.slot, mechanism or "not-reached", why)


def _pool_weight(view: PoolView) -> float:
    return sum(s.weight for s in view.pool.slots) or 1.0


def _submitters(view: PoolView) -> dict[str, tuple[int, float]]:
    weight = _pool_weight(view)
    names = [s.name for s in view.result.submitters] + sorted(view.result.usage)
    return {
        n: (sum(m.submitter == n for m in view.result.matches), view.result.usage.get(n, 0.0) / weight)
        for n in dict.fromkeys(names)
    }


def _groups(view: PoolView) -> dict[str, tuple[int, float]]:
    weight = _pool_weight(view)
    return {g.name: (g.matched, g.usage / weight) for g in view.result.groups}


def _rows(a: dict[str, tuple[int, float]], b: dict[str, tuple[int, float]]) -> list[ShareRow]:
    rows = []
    for name in sorted(_union(a, b)):
        ma, sa = a.get(name, (0, 0.0))
        mb, sb = b.get(name, (0, 0.0))
        rows.append(ShareRow(name, ma, mb, sa, sb))
    return rows


def _preemptions(matches: list[Match]) -> dict[tuple[str, str, str], PreemptionRow]:
    return {
        (m.job, m.slot, m.preempted): PreemptionRow(m.job, m.slot, m.preempted, m.reason)
        for m in matches
        if m.preempted
    }


def format_cycle_diff(d: CycleDiff, a: str = "A", b: str = "B") -> str:
    """The human-readable report (``a`` and ``b`` name the two configurations)."""
    if d.empty:
        return f"No differences: {a} and {b} give the same cycle.\n"
    lines: list[str] = [f"A = {a}", f"B = {b}", ""]
    for title, rows in (
        (f"Matched under A only: {len(d.only_a)}", d.only_a),
        (f"Matched under B only: {len(d.only_b)}", d.only_b),
    ):
        lines.append(title)
        other = "B" if rows is d.only_a else "A"
        lines += [f"  {c.job} ({c.submitter}) on {c.slot}; under {other}: [{c.mechanism}] {c.why}" for c in rows]
    lines.append(f"Slots whose match changed: {len(d.slots)}")
    lines += [f"  {s.slot}: {s.job_a or '-'} -> {s.job_b or '-'}" for s in d.slots]
    for title, share_rows in (("Submitters", d.submitters), ("Groups", d.groups)):
        if share_rows:
            lines.append(f"{title} (matched A -> B, share after the cycle A -> B):")
            lines += [
                f"  {'*' if r.changed else ' '} {r.name}: {r.matched_a} -> {r.matched_b}, "
                f"{100 * r.share_a:.1f}% -> {100 * r.share_b:.1f}%"
                for r in share_rows
            ]
    lines.append(f"Preemptions added: {len(d.preemptions_added)}")
    lines += [f"  {p.job} on {p.slot} preempts {p.preempted} ({p.reason})" for p in d.preemptions_added]
    lines.append(f"Preemptions removed: {len(d.preemptions_removed)}")
    lines += [f"  {p.job} on {p.slot} preempted {p.preempted} ({p.reason})" for p in d.preemptions_removed]
    return "\n".join(lines) + "\n"


__all__ = ["CycleDiff", "JobChange", "PreemptionRow", "ShareRow", "SlotChange", "cycle_diff", "format_cycle_diff"]
