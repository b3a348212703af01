"""``matchmaker lint``: every finding of a configuration and, when ads are given, of the
pool it will negotiate over (docs/lint.md).

:func:`check_config` (in :mod:`.config_checks`) reads the file; :func:`pool_findings`
adds what needs the ads: attribute references (:mod:`.attributes`), dead clauses
(:mod:`.pool_clauses`), the group checks that need the pool's weight and the jobs'
groups (:mod:`.group_checks`), and the capacities of the concurrency limits the ads name.  :func:`lint_review` puts them in one sorted report.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Optional

from classad.errors import ClassAdError
from classad.parser import parse_expr
from classad.unparse import unparse

from ..errors import ConfigError
from ..pool.ads import Pool
from ..pool.concurrency import named_limits
from .attributes import GROUP, JOB, SLOT, Owned, Side, check_references
from .config_checks import ConfigReview
from .findings import Finding, LintReport
from .group_checks import check_groups
from .pool_clauses import Owner, dead_clauses

# Expression knobs whose attribute references are checked: (owner side, target side).
KNOB_SIDES: dict[str, tuple[str, Optional[str]]] = {
    "PREEMPTION_REQUIREMENTS": (SLOT, JOB),
    "PREEMPTION_RANK": (SLOT, JOB),
    "NEGOTIATOR_PRE_JOB_RANK": (SLOT, JOB),
    "NEGOTIATOR_POST_JOB_RANK": (SLOT, JOB),
    "START": (SLOT, JOB),
    "RANK": (SLOT, JOB),
    "SUSPEND": (SLOT, JOB),
    "CONTINUE": (SLOT, JOB),
    "PREEMPT": (SLOT, JOB),
    "KILL": (SLOT, JOB),
    "WANT_SUSPEND": (SLOT, JOB),
    "WANT_VACATE": (SLOT, JOB),
    "NEGOTIATOR_SLOT_CONSTRAINT": (SLOT, None),
    "NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT": (SLOT, None),
    "GROUP_DYNAMIC_MACH_CONSTRAINT": (SLOT, None),
    "SLOT_WEIGHT": (SLOT, None),
    "NEGOTIATOR_JOB_CONSTRAINT": (JOB, None),
    "GROUP_SORT_EXPR": (GROUP, None),
}
AD_ATTRIBUTES = {JOB: ("Requirements", "Rank"), SLOT: ("Requirements", "START", "Rank")}


def lint_review(review: ConfigReview, pool: Optional[Pool] = None, now: Optional[float] = None) -> LintReport:
    """The sorted report of a configuration's findings and, with ``pool``, the pool's."""
    findings = list(review.findings)
    if review.group_tree is not None:
        findings += check_groups(
            review, None if pool is None else sum(s.weight for s in pool.slots), pool.jobs if pool is not None else ()
        )
    if pool is not None:
        findings += pool_findings(review, pool, now) + limit_findings(review, pool)
    return LintReport.of(findings)


def limit_findings(review: ConfigReview, pool: Pool) -> list[Finding]:
    """knob-value: the capacity of each concurrency limit the pool's ads name, read as
    loading the pool for a cycle reads it (``<NAME>_LIMIT``, ``CONCURRENCY_LIMIT_DEFAULT_<p>``)."""
    if review.settings is None:
        return []
    found = []
    for name, where in named_limits(pool.jobs, pool.slots).items():
        try:
            review.settings.check_concurrency_limits({name: where})
        except ConfigError as exc:
            message = " ".join(exc.message.split())
            found.append(Finding(exc.file or review.path, exc.line or 1, exc.column or 1, "knob-value", message))
    return found


def pool_findings(review: ConfigReview, pool: Pool, now: Optional[float] = None) -> list[Finding]:
    """attr-unknown, attr-partial, clause-dead and requirements-unsatisfiable."""
    sides = {
        JOB: Side(JOB, [j.ad for j in pool.jobs]),
        SLOT: Side(SLOT, [s.ad for s in pool.slots]),
        GROUP: Side(GROUP, []),
    }
    exprs = list(_ad_expressions(review, pool)) + list(_knob_expressions(review))
    found = check_references(exprs, sides, review.source)
    jobs = [Owner(j.ad, f"job {j.id}", j.source) for j in pool.jobs]
    slots = [Owner(s.ad, f"slot {s.name}", s.source) for s in pool.slots]
    found += dead_clauses(jobs, JOB, [s.ad for s in pool.slots], SLOT, review.source, now)
    found += dead_clauses(slots, SLOT, [j.ad for j in pool.jobs], JOB, review.source, now)
    return found


def _ad_expressions(review: ConfigReview, pool: Pool) -> Iterator[Owned]:
    """Each distinct Requirements, START and Rank of the ads, at the first ad holding it."""
    seen: set[tuple[str, str, str]] = set()
    owners = [(JOB, f"job {j.id}", j.ad, j.source) for j in pool.jobs] + [
        (SLOT, f"slot {s.name}", s.ad, s.source) for s in pool.slots
    ]
    for kind, name, ad, source in owners:
        for attribute in AD_ATTRIBUTES[kind]:
            node = ad.get_node(attribute)
            if node is None:
                continue
            key = (kind, attribute.lower(), unparse(node))
            if key in seen:
                continue
            seen.add(key)
            file, _, line = source.rpartition(":")
            if not (file and line.isdigit()):
                file, line = source, "1"
            at = review.source.attribute_line(file, int(line), attribute) or int(line)
            yield Owned(node, f"{name}'s {attribute}", kind, SLOT if kind == JOB else JOB, file, at)


def _knob_expressions(review: ConfigReview) -> Iterator[Owned]:
    cfg = review.config
    if cfg is None:
        return
    for name, (owner, target) in KNOB_SIDES.items():
        d = cfg.definition(name)
        if d is None or d.line is None or d.value == "":
            continue
        try:
            raw = cfg.get_raw(name)
            if raw is None:
                continue
            node = parse_expr(raw)
        except ClassAdError:
            continue  # reported as expr-syntax or config-error
        yield Owned(node, d.name, owner, target, d.file, d.line, span=50)


__all__ = ["KNOB_SIDES", "lint_review", "pool_findings"]
