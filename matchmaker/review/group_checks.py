"""Group quota mistakes: quotas that cannot all be honoured, groups without a quota,
jobs in groups the configuration does not list, and a sort expression that is no number.

Each finding is placed at the knob that causes it (``GROUP_QUOTA_<g>``, the
``GROUP_NAMES`` entry, ``GROUP_SORT_EXPR``) or, for jobs, at the first job's ad.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from classad.ad import ClassAd
from classad.evaluate import evaluate_top
from classad.values import UNDEFINED

from ..cycle.ephemeral import MatchState
from ..errors import ConfigError
from ..groups.membership import group_of_submitter
from ..groups.quotas import ROOT, GroupTree
from ..pool.ads import Job
from .config_checks import ConfigReview
from .findings import Finding


def _place(review: ConfigReview, knob: str, needle: Optional[str] = None) -> tuple[str, int, int]:
    """(file, line, column) of the definition of ``knob`` (of ``needle`` on its line)."""
    d = review.config.definition(knob) if review.config is not None else None
    if d is None or d.line is None:
        return review.path, 1, 1
    line, col = review.source.find(d.file, d.line, needle or d.name, span=50)
    return d.file, line, col


def _at(review: ConfigReview, knob: str, code: str, message: str, needle: Optional[str] = None) -> Finding:
    file, line, col = _place(review, knob, needle)
    return Finding(file, line, col, code, message)


def check_groups(review: ConfigReview, pool_weight: Optional[float] = None, jobs: Sequence[Job] = ()) -> list[Finding]:
    """Every group finding; ``pool_weight`` and ``jobs`` enable the checks that need ads."""
    tree = review.group_tree
    if tree is None:
        return []
    out = _tree_warnings(review, tree) + _dynamic_sums(review, tree) + _no_quota(review, tree)
    if pool_weight is not None:
        out += _static_over_pool(review, tree, pool_weight)
    out += _unlisted(review, tree, jobs)
    out += _sort_expr(review, tree)
    return out


def _tree_warnings(review: ConfigReview, tree: GroupTree) -> list[Finding]:
    out = []
    for w in tree.warnings:
        if w.startswith("group name "):
            name = w.split("'")[1] if "'" in w else None
            out.append(_at(review, "GROUP_NAMES", "group-invalid-name", f"GROUP_NAMES: {w}", name))
    return out


def _dynamic_sums(review: ConfigReview, tree: GroupTree) -> list[Finding]:
    out = []
    for name in tree.order:
        dynamic = [
            c
            for c in tree.nodes[name].children
            if not tree.nodes[c].is_static
            and review.knobs is not None
            and review.knobs.group_quota_dynamic(c) is not None
        ]
        total = sum(tree.nodes[c].config_quota for c in dynamic)
        if total > 1 + 1e-9:
            parts = " + ".join(f"{tree.nodes[c].config_quota:g} ({c})" for c in dynamic)
            last = dynamic[-1]
            out.append(
                _at(
                    review,
                    f"GROUP_QUOTA_DYNAMIC_{last}",
                    "group-dynamic-over-one",
                    f"the dynamic quotas of {name}'s children sum to {total:g} > 1: {parts}; each is "
                    f"scaled down by {total:g}, so none gets the fraction written",
                )
            )
    return out


def _no_quota(review: ConfigReview, tree: GroupTree) -> list[Finding]:
    knobs = review.knobs
    assert knobs is not None
    out = []
    for name in tree.order[1:]:
        if knobs.group_quota(name) is None and knobs.group_quota_dynamic(name) is None:
            out.append(
                _at(
                    review,
                    "GROUP_NAMES",
                    "group-no-quota",
                    f"group {name} has neither GROUP_QUOTA_{name} nor GROUP_QUOTA_DYNAMIC_{name}: its "
                    "quota is 0, so it runs only on surplus",
                    name,
                )
            )
    return out


def _static_over_pool(review: ConfigReview, tree: GroupTree, weight: float) -> list[Finding]:
    out = []
    for name in tree.order[1:]:
        node = tree.nodes[name]
        if node.is_static and node.config_quota > weight + 1e-9:
            out.append(
                _at(
                    review,
                    f"GROUP_QUOTA_{name}",
                    "group-static-over-pool",
                    f"GROUP_QUOTA_{name} = {node.config_quota:g} is more than the pool's weight {weight:g}",
                )
            )
    top = [c for c in tree.nodes[ROOT].children if tree.nodes[c].is_static]
    total = sum(tree.nodes[c].config_quota for c in top)
    if total > weight + 1e-9 and not out:
        parts = " + ".join(f"{tree.nodes[c].config_quota:g} ({c})" for c in top)
        out.append(
            _at(
                review,
                "GROUP_NAMES",
                "group-static-over-pool",
                f"the top-level static quotas sum to {total:g} ({parts}), more than the pool's weight "
                f"{weight:g}: they cannot all be met",
            )
        )
    return out


def _unlisted(review: ConfigReview, tree: GroupTree, jobs: Sequence[Job]) -> list[Finding]:
    seen: dict[str, list[Job]] = {}
    for job in jobs:
        path = job.submitter.rpartition("@")[0] or job.submitter
        group = path.rpartition(".")[0]
        if group and tree.lookup(group) is None:
            seen.setdefault(group, []).append(job)
    out = []
    for group, who in seen.items():
        instead = group_of_submitter(who[0].submitter, tree)
        file, _, line = who[0].source.rpartition(":")
        message = (
            f"accounting group {group!r} of {len(who)} job(s) (first {who[0].id}) is not in GROUP_NAMES: "
            f"they negotiate in {instead}"
        )
        if file and line.isdigit():
            n, col = review.source.find(file, int(line), group, word=False, span=5000)
            out.append(Finding(file, n, col, "group-not-listed", message))
        else:
            out.append(Finding(who[0].source, 1, 1, "group-not-listed", message))
    return out


def _sort_expr(review: ConfigReview, tree: GroupTree) -> list[Finding]:
    cfg = review.config
    if cfg is None or review.knobs is None or cfg.definition("GROUP_SORT_EXPR") is None:
        return []
    try:
        expr = review.knobs.get("GROUP_SORT_EXPR")
    except ConfigError:
        return []  # reported as expr-syntax or knob-value
    if expr is None:
        return []
    bad = []
    for name in tree.order:
        node = tree.nodes[name]
        ad = ClassAd(
            {
                "AccountingGroup": name,
                "GroupQuota": node.config_quota,
                "GroupResourcesAllocated": node.config_quota,
                "GroupResourcesInUse": 0.0,
            }
        )
        value = evaluate_top(expr, ad, MatchState(None, 0.0))
        if type(value) not in (int, float):
            shown = "undefined" if value is UNDEFINED else repr(value) if isinstance(value, str) else str(value)
            bad.append(f"{name} ({shown})")
    if not bad:
        return []
    return [
        _at(
            review,
            "GROUP_SORT_EXPR",
            "group-sort-not-numeric",
            f"GROUP_SORT_EXPR is not a number for {', '.join(bad[:5])}"
            f"{' and others' if len(bad) > 5 else ''}: such groups sort last",
        )
    ]


__all__ = ["check_groups"]
