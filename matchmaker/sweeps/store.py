"""A sweep's output directory: each variant's result as it finishes, then the tables.

    OUT/parts/<key>.json      one finished variant
    OUT/rows.parquet          the tidy table (rows.csv without pyarrow)
    OUT/summary.parquet       one row per variant and principal (summary.csv without pyarrow)
    OUT/variants.csv          every variant: key, name, status, error, seconds, parameters

Every file is written under a temporary name and renamed into place.  A part is JSON, so its numbers read back exactly as they were computed; ``--resume``
takes the parts whose key (a digest of the variant and every input) is still in the
sweep and runs only the rest.  An interrupted sweep keeps every part already written.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ..errors import OutputError
from ..simulate.atomic import reason, write_atomically
from .spec import Variant
from .worker import Outcome

PARTS = "parts"


def write_part(out: str | os.PathLike, outcome: Outcome) -> Path:
    """Store a finished variant (atomically: a reader never sees half a part)."""
    directory = Path(out) / PARTS
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{outcome.key}.json"
    doc = dict(
        key=outcome.key,
        name=outcome.variant.name,
        rows=outcome.rows,
        waits=outcome.waits,
        idle_at_end=outcome.idle_at_end,
        warnings=outcome.warnings,
        meta=outcome.meta,
        seconds=outcome.seconds,
        load_seconds=outcome.load_seconds,
    )
    write_atomically(path, lambda fh: json.dump(doc, fh))
    return path


def read_parts(out: str | os.PathLike, variants: dict[str, Variant]) -> dict[str, Outcome]:
    """The finished variants stored under ``out`` whose keys are in ``variants``."""
    found: dict[str, Outcome] = {}
    directory = Path(out) / PARTS
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.json")):
        key = path.stem
        if key not in variants:
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # unreadable: the variant runs again
        found[key] = Outcome(
            key,
            variants[key],
            rows=doc["rows"],
            waits=[tuple(w) for w in doc["waits"]],
            idle_at_end=doc["idle_at_end"],
            warnings=doc["warnings"],
            meta=doc["meta"],
            seconds=doc["seconds"],
            load_seconds=doc["load_seconds"],
        )
    return found


def write_table(rows: Sequence[dict[str, Any]], columns: Sequence[str], path_stem: Path) -> Path:
    """``rows`` as Parquet when pyarrow is installed, else as CSV; returns the file written."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        path = path_stem.with_suffix(".csv")

        def write(fh: TextIO) -> None:
            w = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)

        write_atomically(path, write, newline="")
        return path
    path = path_stem.with_suffix(".parquet")
    tmp = path.with_name(f".{path.name}.tmp")
    data = {c: [r.get(c) for r in rows] for c in columns}
    try:
        pq.write_table(pa.table({c: _array(pa, values) for c, values in data.items()}), tmp)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"cannot write: {reason(exc)}", file=str(path)) from None
    return path


def _array(pa: Any, values: list[Any]) -> Any:
    """A column of one type: integers that meet reals become reals; mixed kinds become text."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int, bool} or kinds <= {float} or kinds <= {str}:
        return pa.array(values)
    if kinds <= {int, float}:
        return pa.array([None if v is None else float(v) for v in values])
    return pa.array([None if v is None else str(v) for v in values])


def write_variants(out: str | os.PathLike, outcomes: Sequence[Outcome], parameters: Sequence[str]) -> Path:
    """``variants.csv``: one line per variant, finished or failed."""
    path = Path(out) / "variants.csv"
    head = ["key", "variant", "status", "error", "seconds", "load_seconds", *parameters]

    def write(fh: TextIO) -> None:
        w = csv.writer(fh)
        w.writerow(head)
        for o in outcomes:
            params = o.variant.parameters()
            w.writerow(
                [
                    o.key,
                    o.variant.name,
                    o.status,
                    o.error or "",
                    f"{o.seconds:.3f}",
                    f"{o.load_seconds:.3f}",
                    *[params.get(p, "") for p in parameters],
                ]
            )

    write_atomically(path, write, newline="")
    return path


__all__ = ["PARTS", "read_parts", "write_part", "write_table", "write_variants"]
