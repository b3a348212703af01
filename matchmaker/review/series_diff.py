"""``matchmaker diff --duration``: two simulations of the same pool, under configuration A
and under B, and the difference of their per-submitter (and per-group) series.

The two :class:`~matchmaker.simulate.Simulation` runs share the start, the interval and
the seed, so their cycles line up; each row of the difference holds one principal at one
cycle with its ``running``, ``matched``, ``share``, ``eup`` and ``charged`` under A and
under B.  The summary per principal gives the mean share, the jobs matched in all, and
the final running count, EUP and charged usage under both.  :func:`write_diff_plots`
draws A (solid) against B (dashed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..simulate.plots import new_figure, save_figure
from ..simulate.series import Simulation

FIELDS = ("running", "matched", "share", "eup", "charged")
KINDS = ("submitter", "group")


@dataclass
class SeriesDiff:
    """The aligned rows of two simulations and a summary per principal."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    summary: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # reading the configurations and ads, and the runs

    @property
    def empty(self) -> bool:
        """Both simulations gave the same series."""
        return all(_same(r[f"{f}_a"], r[f"{f}_b"]) for r in self.rows for f in FIELDS)

    def to_json(self) -> dict[str, Any]:
        return {
            "meta": self.meta,
            "empty": self.empty,
            "summary": self.summary,
            "rows": self.rows,
            "warnings": self.warnings,
        }


def _same(x: Optional[float], y: Optional[float]) -> bool:
    if x is None or y is None:
        return x is y
    return abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y))


def _index(sim: Simulation) -> dict[tuple[int, str, str], dict[str, Any]]:
    return {(r["cycle"], r["kind"], r["name"]): r for r in sim.rows if r["kind"] in KINDS}


def series_diff(a: Simulation, b: Simulation) -> SeriesDiff:
    """The difference of two simulations over the same cycles (A first)."""
    ia, ib = _index(a), _index(b)
    times = {r["cycle"]: (r["time"], r["hours"]) for r in [*a.rows, *b.rows]}
    out = SeriesDiff(meta={"a": a.meta(), "b": b.meta()})
    for key in sorted(set(ia) | set(ib), key=lambda k: (k[0], KINDS.index(k[1]), k[2])):
        ra, rb = ia.get(key, {}), ib.get(key, {})
        cycle, kind, name = key
        row: dict[str, Any] = {
            "cycle": cycle,
            "time": times[cycle][0],
            "hours": times[cycle][1],
            "kind": kind,
            "name": name,
        }
        for f in FIELDS:
            row[f"{f}_a"] = ra.get(f, 0 if f != "eup" else None)
            row[f"{f}_b"] = rb.get(f, 0 if f != "eup" else None)
        out.rows.append(row)
    out.summary = _summary(out.rows)
    return out


def _summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    per: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        per.setdefault((r["kind"], r["name"]), []).append(r)
    out = []
    for (kind, name), rs in per.items():
        last = rs[-1]
        entry: dict[str, Any] = {"kind": kind, "name": name}
        for side in ("a", "b"):
            entry[f"mean_share_{side}"] = sum(r[f"share_{side}"] for r in rs) / len(rs)
            entry[f"matched_{side}"] = sum(r[f"matched_{side}"] for r in rs)
            entry[f"running_{side}"] = last[f"running_{side}"]
            entry[f"eup_{side}"] = last[f"eup_{side}"]
            entry[f"charged_{side}"] = last[f"charged_{side}"]
        out.append(entry)
    return out


def format_series_diff(d: SeriesDiff, a: str = "A", b: str = "B") -> str:
    """A table per principal: mean share, jobs matched, and the last cycle's running and EUP."""
    if d.empty:
        return f"No differences: {a} and {b} give the same series.\n"
    meta = d.meta.get("a", {})
    head = ("KIND", "NAME", "MEAN SHARE A", "B", "MATCHED A", "B", "RUNNING A", "B", "EUP A", "B")
    table = [head]
    for s in d.summary:
        table.append(
            (
                s["kind"],
                s["name"],
                f"{100 * s['mean_share_a']:.1f}%",
                f"{100 * s['mean_share_b']:.1f}%",
                str(s["matched_a"]),
                str(s["matched_b"]),
                str(s["running_a"]),
                str(s["running_b"]),
                _eup(s["eup_a"]),
                _eup(s["eup_b"]),
            )
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    lines = [
        f"A = {a}",
        f"B = {b}",
        f"{meta.get('cycles', 0)} cycles of {meta.get('interval', 0):g} s under each configuration",
        "",
    ]
    lines += [
        "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in table
    ]
    return "\n".join(lines) + "\n"


def _eup(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.3f}"


def write_diff_plots(d: SeriesDiff, directory: str | os.PathLike) -> list[Path]:
    """``diff-shares.png``, ``diff-running.png`` and ``diff-priorities.png`` (submitters):
    each submitter's value under A (solid) and B (dashed) over hours since the start."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for f, title, scale in (
        ("share", "Share of the pool (%)", 100.0),
        ("running", "Running jobs", 1.0),
        ("eup", "Effective user priority", 1.0),
    ):
        name = "priorities" if f == "eup" else "shares" if f == "share" else f
        files.append(_plot(d, f, title, scale, out / f"diff-{name}.png"))
    return files


def _plot(d: SeriesDiff, f: str, title: str, scale: float, path: Path) -> Path:
    fig, ax = new_figure(f"{title}: A solid, B dashed", title)
    names = list(dict.fromkeys(r["name"] for r in d.rows if r["kind"] == "submitter"))
    for i, name in enumerate(names):
        rows = [r for r in d.rows if r["kind"] == "submitter" and r["name"] == name]
        hours = [r["hours"] for r in rows]
        for side, style in (("a", "-"), ("b", "--")):
            values = [float("nan") if r[f"{f}_{side}"] is None else scale * r[f"{f}_{side}"] for r in rows]
            ax.step(hours, values, where="post", color=f"C{i % 10}", linestyle=style, label=f"{name} {side.upper()}")
    return save_figure(fig, ax, path)


__all__ = ["SeriesDiff", "format_series_diff", "series_diff", "write_diff_plots"]
