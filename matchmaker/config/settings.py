"""Every knob one negotiation cycle reads, typed and read once (docs/knobs.md).

:class:`Settings` is a frozen record built from :class:`matchmaker.config.knobs.Knobs`
by :meth:`Settings.from_knobs`, which reads every knob at once so a bad value
fails before any work is done (``ConfigError`` naming the file and line).  The
cycle never sees raw configuration: the group tree (``GROUP_NAMES`` and the
``GROUP_*_<g>`` knobs) is built here, and the accounting-group map file named by
``MATCHMAKER_ACCOUNTING_GROUP_MAP_FILE`` (set by ``use FEATURE :
AssignAccountingGroup(...)``) is read and parsed here, so a bad map line is a
``ConfigError`` naming the map file, line and column.  The priority model
(``MATCHMAKER_PRIORITY_POLICY`` and the ``LSF_*``, ``MAUI_*``, ``DIRAC_*``, ``SLURM_*``
knobs) is read by :mod:`.policy_settings` into the typed records of :mod:`.policy_params`.

The three ``MATCHMAKER_*`` switches select the manual's behaviour where
HTCondor's manual and code disagree (docs/negotiation.md, where HTCondor's manual and code disagree); the defaults follow the code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional

from classad import ast

from ..accounting.priority_math import FactorPolicy
from ..errors import ConfigError
from ..groups.membership import GroupMapping, MapFileError, group_prio_factor, parse_group_map
from ..groups.quotas import GroupConfig, GroupTree, build_tree
from .knobs import Knobs
from .policy_params import PolicyConfig
from .policy_settings import policy_params
from .statements import ACCOUNTING_GROUP_MAP_KNOBS


@dataclass(frozen=True)
class MatchPolicy:
    """The knobs that shape candidate selection."""

    consider_preemption: bool = True
    preemption_requirements: Optional[ast.Node] = None
    preemption_rank: Optional[ast.Node] = None
    pre_job_rank: Optional[ast.Node] = None
    post_job_rank: Optional[ast.Node] = None
    ignore_job_ranks: bool = False
    matchlist_caching: bool = True
    preemption_requirements_stable: bool = True
    preemption_rank_stable: bool = True
    # The manual's behaviour where it differs from the code (docs/negotiation.md, where HTCondor's manual and code disagree); off = the code.
    preemption_needs_better_eup: bool = False
    skip_claimed_idle: bool = False
    # How candidate lists are computed (same results): whole columns at once, or pair by pair.
    columnar: bool = True


@dataclass(frozen=True)
class Settings:
    """Every knob the cycle reads, typed; build with :meth:`from_knobs` or :meth:`defaults`."""

    policy: MatchPolicy
    use_slot_weights: bool = True
    slot_weight_expr: Optional[ast.Node] = None
    force_slot_weight: bool = False
    ignore_user_priorities: bool = False
    consider_early_preemption: bool = False
    negotiate_all_jobs_in_cluster: bool = False
    cross_slot_prios: bool = False
    resource_prefix: str = "slot"
    slot_constraint: Optional[ast.Node] = None
    poolsize_constraint: Optional[ast.Node] = None
    submitter_constraint: Optional[ast.Node] = None
    job_constraint: Optional[ast.Node] = None
    significant_attributes: Optional[tuple[str, ...]] = None
    add_significant: tuple[str, ...] = ()
    remove_significant: tuple[str, ...] = ()
    remove_significant_regex: Optional[str] = "^Slot[0-9]*_"
    uid_domain: Optional[str] = None
    concurrency_capacity: Callable[[str], float] = lambda _n: 2308032.0
    job_order_by_qdate: bool = False
    # group quotas (docs/negotiation.md, group quotas); no tree: GROUP_NAMES is empty
    group_tree: Optional[GroupTree] = None
    allow_quota_oversubscription: bool = True
    strict_enforce_quota: bool = True
    max_allocation_rounds: int = 3
    round_robin_rate: float = 1e100
    group_sort_expr: Optional[ast.Node] = None
    use_weighted_demand: bool = True
    # partitionable slots (docs/negotiation.md, partitionable slots)
    claim_leftovers: bool = True
    claim_recycling_consider_limits: bool = True
    depth_first: bool = False
    allow_pslot_preemption: bool = False
    modify_request_cpus: Optional[ast.Node] = None
    modify_request_memory: Optional[ast.Node] = None
    modify_request_disk: Optional[ast.Node] = None
    # the submit side: which group a job may claim (None: every claim is trusted, as by default)
    group_mapping: Optional[GroupMapping] = None
    # the accountant: RUP half-life, where a new principal's priority factor comes from,
    # and the time between cycles (NEGOTIATOR_INTERVAL: simulate's default step)
    halflife: float = 86400.0
    factors: FactorPolicy = FactorPolicy()
    interval: float = 60.0
    # the priority policy (MATCHMAKER_PRIORITY_POLICY) and its model's parameters when it
    # is not htcondor's; None = htcondor's pie spin
    priority_policy: Optional[PolicyConfig] = None
    # simulations: carry what is still valid between cycles (docs/simulate.md, incremental cycles)
    simulate_incremental: bool = True

    @classmethod
    def from_knobs(cls, knobs: Knobs) -> "Settings":
        """Read every knob now, so a bad value fails before any work (ConfigError)."""
        g = knobs.get
        policy = MatchPolicy(**{f: g(k) for f, k in _POLICY_KNOBS.items()})
        values = {f: g(k) for f, k in _CYCLE_KNOBS.items()}
        for f in ("significant_attributes", "add_significant", "remove_significant"):
            if values[f] is not None:
                values[f] = tuple(values[f])
            elif f != "significant_attributes":
                values[f] = ()
        tree = group_tree_from_knobs(knobs)
        return cls(
            policy=policy,
            resource_prefix=g("STARTD_RESOURCE_PREFIX") or "slot",
            concurrency_capacity=concurrency_capacity(knobs),
            group_tree=tree,
            group_mapping=group_mapping_from_knobs(knobs),
            factors=factor_policy(knobs, tree),
            halflife=float(g("PRIORITY_HALFLIFE")),
            interval=float(g("NEGOTIATOR_INTERVAL")),
            priority_policy=chosen_policy(knobs),
            **values,
        )

    def check_concurrency_limits(self, named: Mapping[str, str]) -> None:
        """Look up now the capacity of each limit of ``named`` (limit -> where an ad names
        it): ``<NAME>_LIMIT``, else its prefix's ``CONCURRENCY_LIMIT_DEFAULT_<p>``.  A bad
        value is then a ``ConfigError`` naming the knob's file and line and the ad, before
        any cycle, rather than in the middle of one."""
        for name, where in named.items():
            try:
                self.concurrency_capacity(name)
            except ConfigError as exc:
                message = f"{exc.message} (the capacity of concurrency limit {name!r}, named at {where})"
                raise ConfigError(message, file=exc.file, line=exc.line, column=exc.column) from None

    @classmethod
    def defaults(cls, **changes: Any) -> "Settings":
        """HTCondor's defaults, with ``changes`` applied (``consider_preemption=`` etc. go to the policy)."""
        base = cls.from_knobs(Knobs())
        fields = MatchPolicy.__dataclass_fields__
        policy = replace(base.policy, **{k: v for k, v in changes.items() if k in fields})
        return replace(base, policy=policy, **{k: v for k, v in changes.items() if k not in fields})


# Settings fields and the knobs they come from.
_POLICY_KNOBS = {
    "consider_preemption": "NEGOTIATOR_CONSIDER_PREEMPTION",
    "preemption_requirements": "PREEMPTION_REQUIREMENTS",
    "preemption_rank": "PREEMPTION_RANK",
    "pre_job_rank": "NEGOTIATOR_PRE_JOB_RANK",
    "post_job_rank": "NEGOTIATOR_POST_JOB_RANK",
    "ignore_job_ranks": "NEGOTIATOR_IGNORE_JOB_RANKS",
    "matchlist_caching": "NEGOTIATOR_MATCHLIST_CACHING",
    "preemption_requirements_stable": "PREEMPTION_REQUIREMENTS_STABLE",
    "preemption_rank_stable": "PREEMPTION_RANK_STABLE",
    "preemption_needs_better_eup": "MATCHMAKER_PREEMPTION_NEEDS_BETTER_EUP",
    "skip_claimed_idle": "MATCHMAKER_SKIP_CLAIMED_IDLE",
    "columnar": "MATCHMAKER_COLUMNAR",
}
_CYCLE_KNOBS = {
    "use_slot_weights": "NEGOTIATOR_USE_SLOT_WEIGHTS",
    "slot_weight_expr": "SLOT_WEIGHT",
    "force_slot_weight": "FORCE_NEGOTIATOR_SLOT_WEIGHT",
    "ignore_user_priorities": "NEGOTIATOR_IGNORE_USER_PRIORITIES",
    "consider_early_preemption": "NEGOTIATOR_CONSIDER_EARLY_PREEMPTION",
    "negotiate_all_jobs_in_cluster": "NEGOTIATE_ALL_JOBS_IN_CLUSTER",
    "cross_slot_prios": "NEGOTIATOR_CROSS_SLOT_PRIOS",
    "slot_constraint": "NEGOTIATOR_SLOT_CONSTRAINT",
    "poolsize_constraint": "NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT",
    "submitter_constraint": "NEGOTIATOR_SUBMITTER_CONSTRAINT",
    "job_constraint": "NEGOTIATOR_JOB_CONSTRAINT",
    "significant_attributes": "SIGNIFICANT_ATTRIBUTES",
    "add_significant": "ADD_SIGNIFICANT_ATTRIBUTES",
    "remove_significant": "REMOVE_SIGNIFICANT_ATTRIBUTES",
    "remove_significant_regex": "REMOVE_SIGNIFICANT_ATTRIBUTES_REGEX",
    "uid_domain": "UID_DOMAIN",
    "job_order_by_qdate": "MATCHMAKER_JOB_ORDER_BY_QDATE",
    "allow_quota_oversubscription": "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION",
    "strict_enforce_quota": "NEGOTIATOR_STRICT_ENFORCE_QUOTA",
    "max_allocation_rounds": "GROUP_QUOTA_MAX_ALLOCATION_ROUNDS",
    "round_robin_rate": "GROUP_QUOTA_ROUND_ROBIN_RATE",
    "group_sort_expr": "GROUP_SORT_EXPR",
    "use_weighted_demand": "NEGOTIATOR_USE_WEIGHTED_DEMAND",
    "claim_leftovers": "CLAIM_PARTITIONABLE_LEFTOVERS",
    "claim_recycling_consider_limits": "CLAIM_RECYCLING_CONSIDER_LIMITS",
    "depth_first": "NEGOTIATOR_DEPTH_FIRST",
    "allow_pslot_preemption": "ALLOW_PSLOT_PREEMPTION",
    "modify_request_cpus": "MODIFY_REQUEST_EXPR_REQUESTCPUS",
    "modify_request_memory": "MODIFY_REQUEST_EXPR_REQUESTMEMORY",
    "modify_request_disk": "MODIFY_REQUEST_EXPR_REQUESTDISK",
    "simulate_incremental": "SIMULATE_INCREMENTAL",
}


def concurrency_capacity(knobs: Knobs) -> Callable[[str], float]:
    """The capacity of a concurrency limit by name (:meth:`Knobs.concurrency_limit`).  The
    defaults, ``CONCURRENCY_LIMIT_DEFAULT`` and every ``CONCURRENCY_LIMIT_DEFAULT_<p>`` set,
    are read now; a limit's own ``<NAME>_LIMIT`` when the pool names the limit
    (:meth:`Settings.check_concurrency_limits`): other ``..._LIMIT`` names may be other
    daemons' knobs."""
    knobs.get("CONCURRENCY_LIMIT_DEFAULT")
    for prefix in knobs.pattern_args("CONCURRENCY_LIMIT_DEFAULT_<p>"):
        knobs.pattern("CONCURRENCY_LIMIT_DEFAULT_<p>", prefix)
    return knobs.concurrency_limit


def chosen_policy(knobs: Knobs) -> Optional[PolicyConfig]:
    """The priority model's parameters, every model's knobs checked; None for htcondor's own."""
    policy = policy_params(knobs)
    return None if policy.name == "htcondor" else policy


def factor_policy(knobs: Knobs, tree: Optional[GroupTree]) -> FactorPolicy:
    """Where a new principal's priority factor comes from: ``DEFAULT_PRIO_FACTOR``,
    ``NICE_USER_PRIO_FACTOR``, ``REMOTE_PRIO_FACTOR`` outside ``ACCOUNTANT_LOCAL_DOMAIN``,
    and a group's ``GROUP_PRIO_FACTOR`` for its members (docs/negotiation.md, priority
    factors and EUP)."""
    g = knobs.get
    group_factor = (lambda name: group_prio_factor(name, tree)) if tree is not None else None
    return FactorPolicy(
        default=g("DEFAULT_PRIO_FACTOR"),
        nice_user=g("NICE_USER_PRIO_FACTOR"),
        remote=g("REMOTE_PRIO_FACTOR"),
        local_domain=g("ACCOUNTANT_LOCAL_DOMAIN") or "",
        nice_prefix=g("NICE_USER_ACCOUNTING_GROUP_NAME") or "nice-user",
        group_factor=group_factor,
    )


def group_tree_from_knobs(knobs: Knobs) -> Optional[GroupTree]:
    """The group tree of ``GROUP_NAMES`` and the ``GROUP_*_<g>`` knobs; None without groups."""
    names = knobs.group_names()
    if not names:
        return None
    return build_tree(
        GroupConfig(
            g,
            knobs.group_quota(g),
            knobs.group_quota_dynamic(g),
            knobs.group_accept_surplus(g),
            knobs.group_autoregroup(g),
            knobs.group_prio_factor(g),
        )
        for g in names
    )


def group_mapping_from_knobs(knobs: Knobs) -> Optional[GroupMapping]:
    """Read and parse the accounting-group map file, if one is configured.

    A relative file name is taken relative to the configuration file that names it
    (as includes are).  An unreadable file is a ``ConfigError`` at that config line; a
    malformed map line is a ``ConfigError`` naming the map file, line and column.
    """
    map_knob, check_knob = ACCOUNTING_GROUP_MAP_KNOBS
    name = knobs.get(map_knob)
    check = bool(knobs.get(check_knob))
    if not name:
        return None
    where = knobs.config.definition(map_knob)
    path = Path(name)
    if not path.is_absolute() and where is not None and not where.file.startswith("<"):
        path = Path(where.file).parent / path
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: a NUL in the name
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(
            f"{map_knob}: cannot read accounting-group map file {str(path)!r}: {reason}",
            file=where.file if where else None,
            line=where.line if where else None,
        ) from None
    try:
        groups = parse_group_map(text)
    except MapFileError as exc:
        raise ConfigError(
            f"accounting-group map: {exc.message}", file=str(path), line=exc.line, column=exc.column
        ) from None
    return GroupMapping(groups, str(path), check)


__all__ = ["Settings", "group_mapping_from_knobs", "group_tree_from_knobs"]
