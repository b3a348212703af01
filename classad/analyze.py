"""Clause-by-clause analysis of one expression (usually ``Requirements``) against a target ad.

An expression ``a && b && c`` is split into its *conjuncts* ``a``, ``b``, ``c`` (nested
``&&`` and parentheses around a whole ``&&`` chain are flattened, anything else is one
clause).  Each conjunct is evaluated on its own, in the same two-ad match context as the
whole expression, and reported as ``true``, ``false``, ``undefined``, ``error`` or
``other`` (a value of another type), the first three being what a match reads as
accept, reject, reject.  The ``classad analyze`` subcommand prints that view for two ads,
in both directions with ``--both``; :mod:`matchmaker.analyze` uses the same functions
over a whole pool.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, TextIO

from . import ast
from .ad import ClassAd
from .errors import FormatError, ParseError
from .evaluate import evaluate_top, new_state
from .unparse import unparse, unparse_value
from .values import ERROR, UNDEFINED, truthiness

TRUE, FALSE, UNDEF, ERR, OTHER = "true", "false", "undefined", "error", "other"


@dataclass(frozen=True)
class Conjunct:
    """One clause of an ``&&`` chain: its place (from 1), tree and source text."""

    index: int
    node: ast.Node
    text: str


def split_conjuncts(node: Optional[ast.Node]) -> list[Conjunct]:
    """The top-level ``&&`` clauses of ``node`` in source order (none for None)."""
    if node is None:
        return []
    out: list[ast.Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        while type(n) is ast.Paren and type(n.inner) is ast.Binary and n.inner.op == "&&":
            n = n.inner
        if type(n) is ast.Binary and n.op == "&&":
            stack.append(n.right)
            stack.append(n.left)
        else:
            out.append(n)
    return [Conjunct(i, n, unparse(n).strip()) for i, n in enumerate(out, 1)]


def outcome(value: object) -> str:
    """How a match reads a clause's value: true or false (numbers count, non-zero is true),
    undefined, error, or other (a string, list, ... : rejects like an error)."""
    t = truthiness(value)
    if t is True:
        return TRUE
    if t is False:
        return FALSE
    if value is UNDEFINED:
        return UNDEF
    if value is ERROR:
        return ERR
    return OTHER


def evaluate_in_match(node: ast.Node, my: ClassAd, target: Optional[ClassAd], state: Any = None) -> object:
    """``node`` evaluated in ``my`` with ``target`` as TARGET; ``state`` (an ``EvalState``
    whose ``my``/``target`` are set here) lets callers fix the clock or add context."""
    st = new_state(my, target) if state is None else state
    st.my, st.target = my, target
    return evaluate_top(node, my, st)


@dataclass(frozen=True)
class ClauseResult:
    """One conjunct's value and outcome for one pair of ads."""

    conjunct: Conjunct
    value: object
    outcome: str


def analyze_clauses(
    my: ClassAd, target: Optional[ClassAd], attribute: str = "Requirements", state: Any = None
) -> list[ClauseResult]:
    """Each conjunct of ``my.attribute`` evaluated against ``target``."""
    out = []
    for c in split_conjuncts(my.get_node(attribute)):
        v = evaluate_in_match(c.node, my, target, state)
        out.append(ClauseResult(c, v, outcome(v)))
    return out


def clauses_json(results: Sequence[ClauseResult]) -> list[dict[str, Any]]:
    """The clauses as JSON-ready objects."""
    return [
        {"index": r.conjunct.index, "clause": r.conjunct.text, "value": unparse_value(r.value), "outcome": r.outcome}
        for r in results
    ]


def format_clauses(title: str, results: Sequence[ClauseResult], whole: object) -> str:
    """A small table: one line per clause, then the value of the whole expression."""
    lines = [title]
    if not results:
        lines.append("  (no such attribute: the expression is undefined)")
    width = max((len(r.conjunct.text) for r in results), default=0)
    for r in results:
        mark = "ok " if r.outcome == TRUE else "NO "
        lines.append(
            f"  {mark}[{r.conjunct.index}] {r.conjunct.text.ljust(width)}  -> {unparse_value(r.value)}"
            + ("" if r.outcome in (TRUE, FALSE) else f"  ({r.outcome})")
        )
    lines.append(f"  whole expression: {unparse_value(whole)}")
    return "\n".join(lines) + "\n"


# ---- the ``classad analyze`` subcommand ------------------------------------------------------


def _load(path: Optional[str], text: Optional[str], label: str) -> ClassAd:
    if text is not None:
        candidates = (text,) if text.lstrip().startswith("[") else (text, "[" + text + "]")
        first: Optional[ParseError] = None
        for candidate in candidates:
            try:
                return ClassAd(candidate)
            except ParseError as exc:
                first = first or exc
        assert first is not None
        raise ParseError(first.message, file=label, line=first.line, column=first.column)
    from .formats import parseAds  # the readers sit above this module

    assert path is not None
    ads = parseAds(Path(path), on_error="raise")
    try:
        ad = next(iter(ads), None)
    finally:
        close = getattr(ads, "close", None)
        if close is not None:
            close()
    if ad is None:
        raise FormatError("no ad in the input", file=path, line=1, column=1)
    return ad


def cmd_analyze(args: argparse.Namespace, out: TextIO) -> int:
    """Print the clause-by-clause view of MY's attribute against TARGET (and back)."""
    my = _load(args.my, args.my_ad, "<my-ad>")
    target = _load(args.target, args.target_ad, "<target-ad>")
    sides = [("my", my, target)] + ([("target", target, my)] if args.both else [])
    doc: dict[str, Any] = {}
    for name, a, b in sides:
        results = analyze_clauses(a, b, args.attribute)
        node = a.get_node(args.attribute)
        whole = evaluate_in_match(node, a, b) if node is not None else UNDEFINED
        if args.json:
            doc[name] = {
                "attribute": args.attribute,
                "clauses": clauses_json(results),
                "value": unparse_value(whole),
                "outcome": outcome(whole),
            }
        else:
            title = (
                f"{'MY' if name == 'my' else 'TARGET'}.{args.attribute} against the "
                f"{'TARGET' if name == 'my' else 'MY'} ad:"
            )
            out.write(format_clauses(title, results, whole))
    if args.json:
        json.dump(doc, out, indent=2)
        out.write("\n")
    return 0


def register(subparsers: Any) -> None:
    """Add ``analyze`` to the ``classad`` command's subparsers."""
    an = subparsers.add_parser(
        "analyze",
        help="clause-by-clause view of Requirements against another ad",
        description="Split MY's Requirements (or --attribute) into its && clauses "
        "and evaluate each against the TARGET ad.",
    )
    mine = an.add_mutually_exclusive_group(required=True)
    mine.add_argument("--my", metavar="FILE", help="file holding the ad whose expression is analyzed")
    mine.add_argument("--my-ad", metavar="TEXT", help="that ad itself, e.g. '[Requirements = Cpus > 2]'")
    theirs = an.add_mutually_exclusive_group(required=True)
    theirs.add_argument("--target", metavar="FILE", help="file holding the TARGET ad (its first ad)")
    theirs.add_argument("--target-ad", metavar="TEXT", help="the TARGET ad itself")
    an.add_argument("--attribute", default="Requirements", help="the expression to split (default Requirements)")
    an.add_argument("--both", action="store_true", help="also the TARGET's expression against MY")
    an.add_argument("--json", action="store_true", help="print one JSON object")
    an.set_defaults(run=cmd_analyze)


__all__ = [
    "ERR",
    "FALSE",
    "OTHER",
    "TRUE",
    "UNDEF",
    "ClauseResult",
    "Conjunct",
    "analyze_clauses",
    "clauses_json",
    "evaluate_in_match",
    "format_clauses",
    "outcome",
    "register",
    "split_conjuncts",
]
