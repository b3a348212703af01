"""The budgets that keep every evaluation and every read bounded.

One :class:`Limits` object, :data:`LIMITS`, holds every bound the package
enforces; :func:`configure` changes some of them and returns the previous
values, so a caller (or a test) can restore them::

    old = configure(max_string=1 << 20)
    ...
    configure(**old)

Evaluation budgets apply to one *top-level evaluation* (one ``eval``, one
Requirements test of a match): attribute evaluations (``eval_steps``), the
characters and list elements built by functions (``max_string``,
``max_list``, ``alloc_budget``) and the time spent in regular expressions
(``regex_call_seconds`` per match, ``regex_eval_seconds`` in total).
Exceeding one gives the language's ``error`` value.  Reading budgets
(``max_line``, ``max_ad``, ``max_expr``) apply to ad files and expression
text; exceeding one raises :class:`~classad.errors.FormatError` or
:class:`~classad.errors.ParseError` with the position.  docs/reliability.md
lists the defaults and the reasons for them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from typing import Any

from .values import ERROR


@dataclass
class Limits:
    """Every configurable bound (sizes in characters, times in seconds)."""

    eval_steps: int = 200_000
    """Attribute evaluations (memo hits included) in one top-level evaluation."""
    max_string: int = 16 << 20
    """Longest string a function may build."""
    max_list: int = 1 << 20
    """Most elements in a list a function may build."""
    alloc_budget: int = 64 << 20
    """String characters plus list elements all functions together may build in one evaluation."""
    arg_work: int = 2_000_000
    """List elements, plus string characters / 16, that functions walking lists or string lists
    (``member``, ``sum``, ``stringListMember``, ``split``, ...) receive as arguments in one
    evaluation (``member("x", L)`` over a list of a million elements is a million)."""
    regex_call_seconds: float = 0.1
    """Time one regular-expression match may run (PCRE2's match limit stops in milliseconds)."""
    regex_eval_seconds: float = 0.5
    """Time all regular-expression matches of one evaluation may run together."""
    max_line: int = 16 << 20
    """Longest line an ad-file reader accepts."""
    max_ad: int = 64 << 20
    """Most characters of text one ad may span in a file."""
    max_expr: int = 1 << 20
    """Longest expression text the parser accepts (one value, not a whole ad)."""


LIMITS = Limits()


def configure(**changes: Any) -> dict[str, Any]:
    """Change some limits; returns their previous values (pass them back to restore)."""
    names = {f.name for f in fields(Limits)}
    old: dict[str, Any] = {}
    for name, value in changes.items():
        if name not in names:
            raise TypeError(f"unknown limit {name!r}; expected one of {', '.join(sorted(names))}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"limit {name} must be a positive number, not {value!r}")
        old[name] = getattr(LIMITS, name)
    for name, value in changes.items():
        setattr(LIMITS, name, value)
    return old


def current() -> dict[str, Any]:
    """Every limit and its value."""
    return {f.name: getattr(LIMITS, f.name) for f in fields(Limits)}


# ---- helpers the function library uses ---------------------------------------------------


def regex_timeout(state: Any) -> float:
    """Seconds the next match may run: the per-call limit, cut to what the evaluation has left."""
    left = getattr(state, "regex_left", None)
    if left is None:
        return LIMITS.regex_call_seconds
    return min(LIMITS.regex_call_seconds, left)


def run_regex(state: Any, fn: Any, *args: Any, **kw: Any) -> Any:
    """Call ``fn(*args, timeout=..., **kw)`` and charge its time to ``state``'s regex budget."""
    timeout = regex_timeout(state)
    if timeout <= 0:
        return ERROR
    start = time.perf_counter()
    try:
        return fn(*args, timeout=timeout, **kw)
    finally:
        if getattr(state, "regex_left", None) is not None:
            state.regex_left -= time.perf_counter() - start


__all__ = ["Limits", "LIMITS", "configure", "current", "regex_timeout", "run_regex"]
