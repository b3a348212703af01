"""Evaluate like HTCondor's ``classad_eval``: ``repr(ExprTree(expr).simplify(my, target))``."""

from __future__ import annotations

from typing import Optional

import classad


def ev(expr: str, my: str = "[]", target: Optional[str] = None) -> str:
    """The classad_eval-style text of ``expr``'s value ("PARSE-ERROR" if it does not parse)."""
    try:
        tree = classad.ExprTree(expr)
    except classad.ParseError:
        return "PARSE-ERROR"
    return repr(tree.simplify(classad.ClassAd(my), classad.ClassAd(target) if target else None))
