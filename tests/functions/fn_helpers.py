"""Helpers for the function-library tests: evaluation in both libraries, canonical values, TZ."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any, Iterator, Optional

import classad
from classad.evaluate import EvalState
from classad.testing import canonical

DATA = Path(__file__).parent / "data"
_TRACE = os.environ.get("FN_TRACE")


def normalize(value: Any) -> Any:
    """A canonical value as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(value))


def ours(expr: str, scope: Optional[str] = None, clock: Optional[float] = None) -> Any:
    """Canonical value of ``expr`` evaluated by this library ("parse-error" if it does not parse)."""
    try:
        tree = classad.ExprTree(expr)
    except classad.ParseError:
        return "parse-error"
    ad = classad.ClassAd(scope) if scope else None
    if clock is None:
        try:
            return normalize(canonical(tree.eval(ad)))
        except (OverflowError, ValueError):  # an absolute time outside Python's datetime range
            return "unconvertible"
    state = EvalState(ad, None, clock=lambda: clock)
    from classad.ad import value_to_python

    return normalize(canonical(value_to_python(tree.evaluate(ad, None, state))))


def theirs(oracle: Any, expr: str, scope: Optional[str] = None) -> Any:
    """Canonical value of ``expr`` evaluated by HTCondor's library (``classad2``).

    "parse-error" for text it rejects, "hard-failure" for an evaluation failure
    (which this library reports as Error), "unconvertible" for an absolute time
    outside Python's ``datetime`` range, None when the result is a string that
    is not UTF-8.
    """
    if _TRACE:  # FN_TRACE=<file>: the last expression sent to the oracle (to find a crash)
        with open(_TRACE, "w", encoding="utf-8") as f:
            f.write(f"{expr}\n{scope}\n")
    try:
        tree = oracle.ExprTree(expr)
    except Exception:
        return "parse-error"
    try:
        value = tree.eval(oracle.ClassAd(scope)) if scope else tree.eval()
    except UnicodeDecodeError:
        return None
    except (OverflowError, ValueError):
        return "unconvertible"
    except Exception:
        return "hard-failure"
    return normalize(canonical(value))


def expected_for(recorded: Any) -> Any:
    """What this library should answer for a recorded oracle result."""
    return "error" if recorded == "hard-failure" else recorded


def _forget_parsed() -> None:
    # absTime("...") literals are folded with the local zone at parse time, and parses
    # are cached by text: a zone change must start from fresh parses.
    from classad import parser

    for fn in (parser.parse_expr, getattr(parser, "parse_old_value", None)):
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()


@contextlib.contextmanager
def timezone(tz: str) -> Iterator[None]:
    """Run with the process's local zone set to ``tz`` (both libraries read ``TZ``)."""
    old = os.environ.get("TZ")
    if old == tz:
        yield
        return
    os.environ["TZ"] = tz
    time.tzset()
    _forget_parsed()
    try:
        yield
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()
        _forget_parsed()


def load_tables() -> list:
    """(file stem, zone, expression, recorded result) for every recorded case."""
    rows = []
    for path in sorted(DATA.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for case in data["cases"]:
            rows.append((path.stem, data["tz"], case["expr"], case["expect"]))
    return rows
