"""Filtering a stream of ads by a constraint, a batch of rows at a time."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .evaluate import evaluate_column
from .table import AdTable

BATCH = 4096


def _true_ads(node: Any, batch: list) -> list:
    if not batch:
        return []
    mask = evaluate_column(node, AdTable(batch)).is_true()
    return [ad for ad, keep in zip(batch, mask.tolist()) if keep]


def select_ads(constraint: Any, ads: Iterable[Any], batch: int = BATCH) -> Iterator[Any]:
    """The ads of ``ads`` for which ``constraint`` (text, ExprTree or node; evaluated with
    the ad as MY and no TARGET) is true, in order.  Ads are read ``batch`` at a time; if
    reading fails, the ads already read are still yielded before the error propagates."""
    from ..ad import ExprTree
    from ..parser import parse_expr

    node = (
        parse_expr(constraint)
        if isinstance(constraint, str)
        else constraint.node
        if isinstance(constraint, ExprTree)
        else constraint
    )
    pending: list = []
    try:
        for ad in ads:
            pending.append(ad)
            if len(pending) >= batch:
                done, pending = pending, []
                yield from _true_ads(node, done)
    except Exception:
        yield from _true_ads(node, pending)
        raise
    yield from _true_ads(node, pending)


__all__ = ["select_ads"]
