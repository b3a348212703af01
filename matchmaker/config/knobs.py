"""The one table of configuration knobs the matchmaker reads, with types and defaults.

Every knob is declared once below: name, type, HTCondor's default (as config
text, from docs/knobs.md; "(code)" in a doc line marks a default that lives in
HTCondor's code rather than its parameter table), and one line of doc.  Knobs
named per group or per limit (``GROUP_QUOTA_<g>``, ``<X>_LIMIT``, ...) are
declared as patterns and read through the lookup methods of :class:`Knobs`.
Nothing outside ``matchmaker.config`` reads raw configuration strings except
``lint``, which inspects them on purpose (``tests/test_config_read_once.py``).

Values are converted on first access and cached; a value that does not fit
its type raises :class:`ConfigError` naming the knob and the ``file:line``
that set it (HTCondor instead falls back to the default silently).  Numbers
and booleans may be written as any constant ClassAd expression (``3600*24``),
as in HTCondor.  Expression knobs are parsed once with ``classad.parse_expr``.
An empty definition (``X =``) unsets a string, list or expression knob (so
``PREEMPTION_REQUIREMENTS =`` means "no requirement"), while numbers and
booleans fall back to their default, as HTCondor's typed lookups do.
"""

from __future__ import annotations

import copy
import math
import os
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from classad.ast import Node
from classad.errors import ClassAdError
from classad.evaluate import evaluate_top, new_state
from classad.parser import parse_expr

from ..accounting.priority_math import MAX_FACTOR
from ..errors import ConfigError
from .language import ENVIRONMENT, SUBSYSTEMS, Config, Definition

TYPES = ("bool", "int", "float", "string", "expr", "list")


@dataclass(frozen=True)
class Knob:
    """One declared knob; ``name`` may hold one ``<x>`` placeholder for per-name knobs."""

    name: str
    type: str
    default: Optional[str]
    doc: str
    alias: Optional[str] = None  # older name, read when ``name`` is unset
    minimum: Optional[float] = None
    fallback: Optional[str] = None  # pattern knobs: the global knob giving the default
    maximum: Optional[float] = None

    def for_(self, arg: str) -> str:
        """The concrete name of a pattern knob for ``arg`` (``GROUP_QUOTA_<g>`` -> ``GROUP_QUOTA_a``)."""
        return re.sub(r"<\w+>", lambda _m: arg, self.name)


_PRE_JOB_RANK = "(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory"
_POST_JOB_RANK = (
    "(RemoteOwner =?= UNDEFINED) * (ifthenElse(isUndefined(KFlops), 1000, Kflops) - SlotID - 1.0e10*(Offline=?=True))"
)
_PREEMPTION_RANK = "(RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, TotalJobRuntime)"
_GROUP_SORT_EXPR = (
    'ifThenElse(AccountingGroup=?="<none>",3.4e+38,ifThenElse(GroupQuota>0,GroupResourcesInUse/GroupQuota,3.3e+38))'
)
# The startd's default disk rounding: the request less the size of the catalogs it
# names (unless they are copied), up to a multiple of the slot's DiskQuantum (1024 KB).
_MODIFY_REQUEST_DISK = (
    'quantize(RequestDisk - ifThenElse(MappingMethod ?: "" != "Copy", '
    "ifThenElse(RequestedCatalogs is undefined || catalogs is undefined, 0, "
    "sum(evalInEachContext(member(CatalogID, RequestedCatalogIDs) ? CatalogSize : 0, "
    "catalogs))), 0), {Target.DiskQuantum ?: 1024})"
)

_TABLE = (
    # cycle timing and plumbing (docs/knobs.md, cycle timing and plumbing)
    Knob("NEGOTIATOR_INTERVAL", "int", "60", "max seconds between cycle starts", minimum=1),
    Knob("NEGOTIATOR_MIN_INTERVAL", "int", "5", "min seconds between cycle starts"),
    Knob("NEGOTIATOR_CYCLE_DELAY", "int", "20", "min seconds from a cycle's end to the next start (code)"),
    Knob("NEGOTIATOR_MAX_TIME_PER_CYCLE", "int", "1200", "stop negotiating with anyone after this"),
    Knob("NEGOTIATOR_MAX_TIME_PER_SUBMITTER", "int", "60", "seconds per submitter per cycle"),
    Knob("NEGOTIATOR_MAX_TIME_PER_SCHEDD", "int", "120", "seconds per schedd per cycle"),
    Knob("NEGOTIATOR_MAX_TIME_PER_PIESPIN", "int", "120", "seconds per submitter per pie spin"),
    Knob("NEGOTIATOR_TIMEOUT", "int", "30", "network timeout, seconds"),
    Knob("NEGOTIATOR_UPDATE_INTERVAL", "int", "300", "seconds between negotiator ad refreshes"),
    Knob("NEGOTIATOR_UPDATE_AFTER_CYCLE", "bool", "false", "publish the negotiator ad after each cycle"),
    Knob("NEGOTIATOR_READ_CONFIG_BEFORE_CYCLE", "bool", "false", "re-read config (not the group tree) each cycle"),
    Knob("NEGOTIATION_CYCLE_STATS_LENGTH", "int", "3", "cycles of statistics kept in the ad (max 100)", minimum=0),
    Knob("NEGOTIATOR_NUM_THREADS", "int", "1", "threads for Requirements evaluation", minimum=1),
    Knob("NEGOTIATOR_SOCKET_CACHE_SIZE", "int", "500", "cached schedd connections"),
    Knob("NEGOTIATOR_INFORM_STARTD", "bool", "false", "tell the startd about matches"),
    Knob("NEGOTIATOR_ADVERTISE_ACCOUNTING", "bool", "true", "send accounting ads to the collector (code)"),
    Knob("NEGOTIATOR_NAME", "string", None, "daemon name (HTCondor derives one from the host)"),
    # which slots, submitters and jobs (docs/knobs.md, slots, submitters and jobs)
    Knob("NEGOTIATOR_SLOT_CONSTRAINT", "expr", None, "only slots matching this are fetched"),
    Knob(
        "NEGOTIATOR_SLOT_POOLSIZE_CONSTRAINT",
        "expr",
        None,
        "only matching slots count in the pool size",
        alias="GROUP_DYNAMIC_MACH_CONSTRAINT",
    ),
    Knob("NEGOTIATOR_SUBMITTER_CONSTRAINT", "expr", None, "only matching submitter ads are considered"),
    Knob("NEGOTIATOR_JOB_CONSTRAINT", "expr", None, "evaluated by the schedd on jobs"),
    Knob("NEGOTIATOR_TRIM_SHUTDOWN_THRESHOLD", "int", "0", "skip slots shutting down within this many seconds"),
    Knob("NEGOTIATOR_CONSIDER_PREEMPTION", "bool", "true", "consider claimed slots (preemption)"),
    Knob("NEGOTIATOR_CONSIDER_EARLY_PREEMPTION", "bool", "false", "allow preempting slots still in retirement"),
    Knob("MATCH_WORKING_CM_SLOTS", "bool", "false", "match claimed pslots that have WorkingCM (code)"),
    Knob(
        "STARTD_AD_REEVAL_EXPR",
        "expr",
        "target.UpdateSequenceNumber > my.UpdateSequenceNumber",
        "when a fresh slot ad replaces a stashed one (code)",
    ),
    Knob("USE_GLOBAL_JOB_PRIOS", "bool", "false", "order submitters by job priority across schedds"),
    Knob("NEGOTIATOR_IGNORE_USER_PRIORITIES", "bool", "false", "every submitter limit is infinite"),
    # ranking and preemption (docs/knobs.md, ranking and preemption)
    Knob("PREEMPTION_REQUIREMENTS", "expr", "False", "must be true to preempt for priority (MY=slot, TARGET=job)"),
    Knob("PREEMPTION_REQUIREMENTS_STABLE", "bool", "true", "PREEMPTION_REQUIREMENTS constant within a cycle (code)"),
    Knob("PREEMPTION_RANK", "expr", _PREEMPTION_RANK, "last tie-break among preemption candidates"),
    Knob("PREEMPTION_RANK_STABLE", "bool", "true", "PREEMPTION_RANK constant within a cycle (code)"),
    Knob("NEGOTIATOR_PRE_JOB_RANK", "expr", _PRE_JOB_RANK, "first candidate sort key"),
    Knob("NEGOTIATOR_POST_JOB_RANK", "expr", _POST_JOB_RANK, "third candidate sort key"),
    Knob("NEGOTIATOR_IGNORE_JOB_RANKS", "bool", "false", "skip the job's Rank, pre-sort slots (code)"),
    Knob("NEGOTIATOR_MATCHLIST_CACHING", "bool", "true", "reuse the sorted candidate list per autocluster"),
    Knob("NEGOTIATOR_MATCH_EXPRS", "list", None, "macro names inserted into slot ads as NegotiatorMatchExpr*"),
    Knob("NEGOTIATOR_CROSS_SLOT_PRIOS", "bool", "false", "add slotN_Remote* attributes to slot ads"),
    Knob("ALLOW_PSLOT_PREEMPTION", "bool", "false", "preempt dynamic slots to fit a job in a pslot (code)"),
    Knob("NEGOTIATOR_DEPTH_FIRST", "bool", "false", "pack partitionable slots depth first"),
    Knob("USE_RESOURCE_REQUEST_COUNTS", "bool", "true", "schedds send request counts"),
    Knob("NEGOTIATOR_RESOURCE_REQUEST_LIST_SIZE", "int", "200", "requests per schedd round trip"),
    Knob("STARTD_RESOURCE_PREFIX", "string", "slot", "prefix of slotN_ attribute names (code)"),
    # weights and accountant (docs/knobs.md, slot weights and the accountant)
    Knob("SLOT_WEIGHT", "expr", "Cpus", "slot weight inserted when a slot ad lacks SlotWeight"),
    Knob("NEGOTIATOR_USE_SLOT_WEIGHTS", "bool", "true", "false: every slot weighs 1"),
    Knob("FORCE_NEGOTIATOR_SLOT_WEIGHT", "bool", "false", "ignore SlotWeight published by startds"),
    Knob("NEGOTIATOR_USE_WEIGHTED_DEMAND", "bool", "true", "group demand in weighted units"),
    Knob("NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES", "bool", "false", "suspended claims are not charged"),
    Knob("PRIORITY_HALFLIFE", "float", "86400", "RUP half-life in seconds", minimum=1e-5),
    Knob("DEFAULT_PRIO_FACTOR", "float", "1000", "priority factor of new local submitters", maximum=MAX_FACTOR),
    Knob("NICE_USER_PRIO_FACTOR", "float", "1e10", "priority factor of nice-user submitters", maximum=MAX_FACTOR),
    Knob("NICE_USER_ACCOUNTING_GROUP_NAME", "string", "nice-user", "group name nice_user jobs are put in"),
    Knob(
        "REMOTE_PRIO_FACTOR", "float", "1e7", "factor of submitters outside ACCOUNTANT_LOCAL_DOMAIN", maximum=MAX_FACTOR
    ),
    Knob("ACCOUNTANT_LOCAL_DOMAIN", "string", None, "local submitter domain; unset: every submitter is local"),
    Knob(
        "ACCOUNTANT_DATABASE_FILE",
        "string",
        None,
        "accountant store; here an SQLite file (HTCondor: $(SPOOL)/Accountantnew.log, a ClassAd log)",
    ),
    Knob("UID_DOMAIN", "string", None, "domain of submitter names (HTCondor: $(FULL_HOSTNAME))"),
    # groups and limits (docs/knobs.md, group quotas and concurrency limits)
    Knob("GROUP_NAMES", "list", None, "accounting groups; any group enables group quotas"),
    Knob("GROUP_ACCEPT_SURPLUS", "bool", "false", "groups may receive surplus unless set per group"),
    Knob("GROUP_AUTOREGROUP", "bool", "false", "groups also negotiate in <none> unless set per group"),
    Knob("GROUP_SORT_EXPR", "expr", _GROUP_SORT_EXPR, "group negotiation order (ascending)"),
    Knob(
        "GROUP_QUOTA_ROUND_ROBIN_RATE",
        "float",
        "1e100",
        "per-iteration increment toward group targets",
        alias="HFS_ROUND_ROBIN_RATE",
        minimum=0.0,
    ),
    Knob(
        "GROUP_QUOTA_MAX_ALLOCATION_ROUNDS",
        "int",
        "3",
        "group allocation rounds per cycle",
        alias="HFS_MAX_ALLOCATION_ROUNDS",
        minimum=1,
    ),
    Knob("NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION", "bool", "true", "do not scale child quotas down to the parent"),
    Knob("NEGOTIATOR_STRICT_ENFORCE_QUOTA", "bool", "true", "non-accepting groups cap their subtree (code)"),
    Knob("CONCURRENCY_LIMIT_DEFAULT", "float", "2308032", "capacity of a limit with no <X>_LIMIT"),
    # schedd side: what shapes the requests
    Knob("NEGOTIATE_ALL_JOBS_IN_CLUSTER", "bool", "false", "keep offering a cluster's jobs after a rejection"),
    Knob("SIGNIFICANT_ATTRIBUTES", "list", None, "job attributes that define autoclusters (unset: computed)"),
    Knob("ADD_SIGNIFICANT_ATTRIBUTES", "list", None, "added to the significant attributes"),
    Knob(
        "REMOVE_SIGNIFICANT_ATTRIBUTES",
        "list",
        "CpusUsage,DiskUsage,GPUsUsage,MemoryUsage,ResidentSetSize",
        "removed from the significant attributes",
    ),
    Knob("REMOVE_SIGNIFICANT_ATTRIBUTES_REGEX", "string", "^Slot[0-9]*_", "attributes matching this are removed"),
    Knob("CLAIM_PARTITIONABLE_LEFTOVERS", "bool", "$(NEGOTIATOR_USE_SLOT_WEIGHTS)", "schedd reuses pslot leftovers"),
    Knob(
        "CLAIM_RECYCLING_CONSIDER_LIMITS",
        "bool",
        "true",
        "a reused claim or leftover runs only jobs with the limits matched for it",
    ),
    # startd side: how a partitionable slot is split (docs/knobs.md, partitionable slots)
    Knob(
        "MODIFY_REQUEST_EXPR_REQUESTCPUS",
        "expr",
        "quantize(RequestCpus, {1})",
        "cores of a dynamic slot (MY=job, TARGET=slot)",
    ),
    Knob(
        "MODIFY_REQUEST_EXPR_REQUESTMEMORY",
        "expr",
        "quantize(RequestMemory, {128})",
        "memory (MB) of a dynamic slot (MY=job, TARGET=slot)",
    ),
    Knob(
        "MODIFY_REQUEST_EXPR_REQUESTDISK",
        "expr",
        _MODIFY_REQUEST_DISK,
        "disk (KB) of a dynamic slot (MY=job, TARGET=slot): up to the slot's DiskQuantum, else 1024, "
        "after the catalogs a Copy-mapped job's request holds",
    ),
    # set by `use FEATURE : AssignAccountingGroup(map [, check_request])` (the schedd's job transform)
    Knob(
        "MATCHMAKER_ACCOUNTING_GROUP_MAP_FILE",
        "string",
        None,
        "accounting-group map file: user -> the groups they may use, first = default (not HTCondor's name)",
    ),
    Knob(
        "MATCHMAKER_ACCOUNTING_GROUP_CHECK_REQUEST",
        "bool",
        "true",
        "refuse a job that asks for a group its owner may not use (false: give it the default group)",
    ),
    # where HTCondor's manual and code disagree (docs/negotiation.md, where HTCondor's manual and code disagree): the code by default, the manual if set
    Knob(
        "MATCHMAKER_PREEMPTION_NEEDS_BETTER_EUP",
        "bool",
        "false",
        "manual: priority preemption also needs a better EUP than the running user's (docs/negotiation.md, manual or code 1: priority preemption)",
    ),
    Knob(
        "MATCHMAKER_SKIP_CLAIMED_IDLE",
        "bool",
        "false",
        "manual: claimed slots whose Activity is Idle are never candidates (docs/negotiation.md, manual or code 2: claimed idle slots)",
    ),
    Knob(
        "MATCHMAKER_JOB_ORDER_BY_QDATE",
        "bool",
        "false",
        "manual: a submitter's jobs after priority in QDate order, not ClusterId/ProcId (docs/negotiation.md, manual or code 3: job order)",
    ),
    # how the matchmaker computes, not what it decides
    Knob(
        "MATCHMAKER_COLUMNAR",
        "bool",
        "true",
        "build candidate lists with the columnar (NumPy) engine; false: the scalar evaluator",
    ),
    Knob(
        "SIMULATE_INCREMENTAL",
        "bool",
        "true",
        "simulate: carry what is still valid from one cycle to the next; false: rebuild every cycle",
    ),
    # priority policies (LSF, Maui, DIRAC, Slurm; htcondor = the pie spin, unchanged)
    Knob("MATCHMAKER_PRIORITY_POLICY", "string", "htcondor", "who goes first: htcondor, lsf, maui, dirac or slurm"),
    Knob(
        "MATCHMAKER_POLICY_PRIORITY_EXPR",
        "expr",
        None,
        "lsf/maui/slurm: the priority as an expression of the policy's attributes (unset: built in)",
    ),
    Knob("LSF_USER_SHARES", "string", None, "LSF share accounts: [user, shares] ... (user may be a dotted path)"),
    Knob("LSF_DEFAULT_SHARES", "float", "1", "shares of an account not in LSF_USER_SHARES", minimum=0.0),
    Knob("LSF_CPU_TIME_FACTOR", "float", "0.7", "weight of decayed CPU hours", minimum=0.0),
    Knob("LSF_RUN_TIME_FACTOR", "float", "0.7", "weight of running jobs' wall hours", minimum=0.0),
    Knob("LSF_RUN_JOB_FACTOR", "float", "3.0", "weight of (1 + job slots)", minimum=0.0),
    Knob(
        "LSF_COMMITTED_RUN_TIME_FACTOR",
        "float",
        "0",
        "weight of the run hours still committed by run limits",
        minimum=0.0,
    ),
    Knob(
        "LSF_RUNLIMIT",
        "float",
        "0",
        "the queue's run limit, seconds, for jobs without WallClockLimit (0: none)",
        minimum=0.0,
    ),
    Knob(
        "LSF_FWD_JOB_FACTOR",
        "float",
        "0",
        "weight of (1 + forwarded job slots): refused unless 0 (none here)",
        minimum=0.0,
    ),
    Knob(
        "LSF_FAIRSHARE_ADJUSTMENT_FACTOR", "float", "0", "weight of the memory-based fair-share adjustment", minimum=0.0
    ),
    Knob("LSF_FAIRSHARE_ADJUSTMENT_THRESHOLD", "float", "1", "THRESHOLD of the memory-based adjustment", minimum=1e-12),
    Knob("LSF_GPU_RUN_TIME_FACTOR", "float", "0", "weight of GPU-hours (hours x RequestGPUs)", minimum=0.0),
    Knob("LSF_GPU_TERM", "string", "denominator", "where the GPU term goes: denominator or additive"),
    Knob("LSF_HIST_HOURS", "float", "5", "hours after which used time counts one tenth (0: no decay)", minimum=0.0),
    Knob("LSF_RUN_TIME_DECAY", "bool", "false", "decay the run time of running jobs as it was used"),
    Knob("LSF_ENABLE_HIST_RUN_TIME", "bool", "false", "count finished jobs' decayed run time"),
    Knob("LSF_ENABLE_GPU_HIST_RUN_TIME", "bool", "false", "count finished jobs' decayed GPU-hours"),
    Knob("LSF_PRIORITY_FLOOR", "float", "0.01", "smallest denominator (our rule)", minimum=1e-12),
    Knob("MAUI_XFMINWCLIMIT", "string", "120", "smallest wall-clock limit in XFACTOR, a Maui time ([[[DD:]HH:]MM:]SS)"),
    Knob("MAUI_XFACTOR_FORM", "string", "code", "XFACTOR as Maui's code (code) or its manual (manual)"),
    Knob("MAUI_ENABLENEGJOBPRIORITY", "bool", "false", "keep negative priorities (else clipped at 1)"),
    Knob("MAUI_REJECTNEGPRIOJOBS", "bool", "false", "negative-priority jobs are not clipped (nor started)"),
    Knob("MAUI_FSPOLICY", "string", "NONE", "NONE or DEDICATEDPS, DEDICATEDPES, UTILIZEDPS (suffix %: percent)"),
    Knob("MAUI_FSINTERVAL", "string", "12:00:00", "time per fair-share bucket, a Maui time ([[[DD:]HH:]MM:]SS)"),
    Knob("MAUI_FSDEPTH", "int", "8", "fair-share buckets kept", minimum=1),
    Knob("MAUI_FSDECAY", "float", "1.0", "weight factor per older bucket", minimum=0.0),
    Knob("DIRAC_JOBSHARING", "list", None, "groups whose share goes to the group, not split per owner"),
    Knob("DIRAC_DEFAULT_GROUP", "string", "user", "group of jobs without an accounting group"),
    Knob("DIRAC_PRIORITY_CONSOLIDATION", "string", "avg", "TaskQueue weight from job priorities: avg or sum"),
    Knob("DIRAC_SEED", "int", "0", "seed of the lottery (mixed with the cycle time)"),
    Knob("DIRAC_ENABLE_SHARES_CORRECTION", "bool", "false", "rescale group shares by recent running jobs"),
    Knob(
        "DIRAC_CORRECTION_SLICES",
        "string",
        "[604800, 1, 3]",
        "corrector slices: [time span s, weight, max correction] ...",
    ),
    Knob("DIRAC_MAX_GLOBAL_CORRECTION", "float", "5", "clamp of the summed correction", minimum=1.0),
    Knob("DIRAC_CORRECTOR_COMPAT", "bool", "false", "DIRAC's code: an absent group gets the unweighted maximum"),
    Knob("SLURM_PRIORITYWEIGHTAGE", "float", "0", "weight of the age factor", minimum=0.0),
    Knob("SLURM_PRIORITYWEIGHTFAIRSHARE", "float", "0", "weight of the Fair Tree factor", minimum=0.0),
    Knob("SLURM_PRIORITYWEIGHTQOS", "float", "0", "weight of the QOS factor", minimum=0.0),
    Knob("SLURM_PRIORITYWEIGHTJOBSIZE", "float", "0", "weight of the job size factor", minimum=0.0),
    Knob(
        "SLURM_PRIORITYMAXAGE",
        "string",
        "7-0",
        "Slurm time (a plain number is minutes) after which the age factor is 1",
    ),
    Knob("SLURM_PRIORITYDECAYHALFLIFE", "string", "7-0", "usage half-life, a Slurm time (0: no decay)"),
    Knob("SLURM_PRIORITYFAVORSMALL", "bool", "false", "the job size factor favours small jobs"),
    Knob("SLURM_PRIORITYFLAGS", "list", None, "SMALL_RELATIVE_TO_TIME (the other Slurm flags are refused)"),
    Knob("SLURM_ASSOCIATIONS", "list", None, "user associations ranked even without jobs (submitter names)"),
    Knob("SLURM_PRIORITY_TRUNCATE", "bool", "true", "truncate priorities to integers, as Slurm does"),
)

_PATTERNS = (
    Knob("GROUP_QUOTA_<g>", "float", None, "static quota of group g (weighted units)", minimum=0.0),
    Knob("GROUP_QUOTA_DYNAMIC_<g>", "float", None, "quota of g as a fraction of its parent's", minimum=0.0),
    Knob("GROUP_ACCEPT_SURPLUS_<g>", "bool", None, "g may receive surplus", fallback="GROUP_ACCEPT_SURPLUS"),
    Knob("GROUP_AUTOREGROUP_<g>", "bool", None, "g also negotiates in <none>", fallback="GROUP_AUTOREGROUP"),
    Knob(
        "GROUP_PRIO_FACTOR_<g>", "float", None, "default priority factor of g's members (0: unset)", maximum=MAX_FACTOR
    ),
    Knob("<x>_LIMIT", "float", None, "capacity of concurrency limit x"),
    Knob(
        "CONCURRENCY_LIMIT_DEFAULT_<p>", "float", None, "capacity of limits p.*", fallback="CONCURRENCY_LIMIT_DEFAULT"
    ),
    # priority policies: per component, credential, group or association
    Knob("MAUI_<x>WEIGHT", "float", None, "Maui weight of a component or subcomponent (SERVICE, QUEUETIME, ...)"),
    Knob("MAUI_<x>CAP", "float", None, "Maui cap of a component or subcomponent (0: none)", minimum=0.0),
    Knob("MAUI_USERCFG_<u>_PRIORITY", "float", None, "credential priority of user u (name before @; DEFAULT: all)"),
    Knob("MAUI_USERCFG_<u>_FSTARGET", "string", None, "fair-share target percent of user u (suffix + - ^ %)"),
    Knob("MAUI_USERCFG_<u>_QTTARGET", "string", None, "target queue time of user u's jobs, a Maui time"),
    Knob("MAUI_USERCFG_<u>_XFTARGET", "float", None, "target expansion factor of user u's jobs", minimum=0.0),
    Knob("MAUI_GROUPCFG_<g>_PRIORITY", "float", None, "credential priority of accounting group g"),
    Knob("MAUI_GROUPCFG_<g>_FSTARGET", "string", None, "fair-share target percent of group g"),
    Knob("MAUI_ACCOUNTCFG_<a>_PRIORITY", "float", None, "credential priority of account a (the job's Account)"),
    Knob("MAUI_ACCOUNTCFG_<a>_FSTARGET", "string", None, "fair-share target percent of account a"),
    Knob("MAUI_CLASSCFG_<c>_PRIORITY", "float", None, "credential priority of class c (the job's Class)"),
    Knob("MAUI_CLASSCFG_<c>_FSTARGET", "string", None, "fair-share target percent of class c"),
    Knob("MAUI_QOSCFG_<q>_PRIORITY", "float", None, "credential priority of QOS q (the job's Qos attribute)"),
    Knob("MAUI_QOSCFG_<q>_FSTARGET", "string", None, "fair-share target percent of QOS q"),
    Knob("MAUI_QOSCFG_<q>_QTWEIGHT", "float", None, "added to QUEUETIMEWEIGHT for jobs of QOS q"),
    Knob("MAUI_QOSCFG_<q>_XFWEIGHT", "float", None, "added to XFACTORWEIGHT for jobs of QOS q"),
    Knob("MAUI_QOSCFG_<q>_QTTARGET", "string", None, "target queue time of QOS q, a Maui time"),
    Knob("MAUI_QOSCFG_<q>_XFTARGET", "float", None, "target expansion factor of QOS q", minimum=0.0),
    Knob("DIRAC_JOBSHARE_<g>", "float", "1000", "DIRAC share of group g", minimum=0.0),
    Knob("SLURM_SHARES_<a>", "float", "1", "Slurm shares of association a (user name before @, or group)", minimum=0.0),
    Knob(
        "SLURM_QOS_PRIORITY_<q>", "float", "0", "priority of QOS q (normalised by the largest configured)", minimum=0.0
    ),
)

KNOBS: Mapping[str, Knob] = {k.name: k for k in _TABLE}
PATTERNS: Mapping[str, Knob] = {k.name: k for k in _PATTERNS}
DEFAULTS: Mapping[str, str] = {k.name: k.default for k in _TABLE if k.default is not None}

# The largest magnitude of an integer knob: HTCondor reads integer parameters as C ints.
INT_LIMIT = 2**31 - 1

_INT_RE = re.compile(r"[+-]?\d+\Z")
_REAL_RE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_BOOLS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


class Knobs:
    """Typed, cached access to every declared knob of one :class:`Config`.

    Build a new ``Knobs`` after a reconfiguration: values are cached.
    """

    def __init__(self, config: Optional[Config] = None) -> None:
        self.config = config if config is not None else Config(environ={}, defaults=DEFAULTS)
        self._cache: dict[str, Any] = {}

    @classmethod
    def from_file(cls, path: str | os.PathLike, environ: Optional[Mapping[str, str]] = None) -> "Knobs":
        """Read a config file with the knob defaults visible to ``$(X)`` and ``defined X``."""
        return cls(read_config_file(path, environ))

    @classmethod
    def from_string(cls, text: str, source: str = "<string>", environ: Optional[Mapping[str, str]] = None) -> "Knobs":
        """Like :meth:`from_file` for configuration text."""
        return cls(Config.from_string(text, source, environ=environ, defaults=DEFAULTS))

    # ---- declared knobs -------------------------------------------------------------

    def get(self, name: str) -> Any:
        """The typed value of a declared knob (``None`` when unset and without default)."""
        key = name.upper()
        if key in self._cache:
            return self._cache[key]
        knob = KNOBS.get(key)
        if knob is None:
            raise KeyError(f"{name} is not a declared knob (add it to matchmaker.config.knobs)")
        d = self._definition(knob.name, knob.alias)
        value = self._convert(knob, knob.name, d, knob.default)
        self._cache[key] = value
        return value

    def __getattr__(self, attr: str) -> Any:
        """``knobs.priority_halflife`` is ``knobs.get("PRIORITY_HALFLIFE")``."""
        if attr.startswith("_") or attr.upper() not in KNOBS:
            raise AttributeError(attr)
        return self.get(attr)

    def where(self, name: str) -> Optional[str]:
        """``file:line`` of the definition a knob's value comes from (``None``: the default)."""
        d = self.config.definition(name)
        return d.location() if d is not None else None

    # ---- per-name knobs ---------------------------------------------------------------

    def pattern(self, pattern: str, arg: str) -> Any:
        """The typed value of pattern knob ``pattern`` (e.g. ``"GROUP_QUOTA_<g>"``) for ``arg``."""
        knob = PATTERNS[pattern]
        name = knob.for_(arg)
        key = name.upper()
        if key not in self._cache:
            d = self._definition(name, None)
            if (d is None or d.value == "") and knob.fallback is not None:
                value = self.get(knob.fallback)
            else:
                value = self._convert(knob, name, d, knob.default)
            self._cache[key] = value
        return self._cache[key]

    def pattern_args(self, pattern: str) -> list[str]:
        """The names for which pattern knob ``pattern`` is defined in the configuration
        (``SLURM_QOS_PRIORITY_high`` gives ``high`` for ``SLURM_QOS_PRIORITY_<q>``), as written."""
        before, after = re.split(r"<\w+>", PATTERNS[pattern].name)
        rx = re.compile(re.escape(before) + "(.+)" + re.escape(after), re.IGNORECASE)
        out = []
        for _, name in self.own_names():
            m = rx.fullmatch(name)
            if m is not None and m.group(1) not in out:
                out.append(m.group(1))
        return out

    def own_names(self) -> list[tuple[str, str]]:
        """The configured names this daemon reads, each as written and without its subsystem
        prefix: the top-level names and those under its own subsystem (``NEGOTIATOR.X``), not
        another daemon's (``SCHEDD.X``)."""
        out = []
        for name in self.config.names():
            head, dot, rest = name.partition(".")
            if dot and head.upper() in SUBSYSTEMS:
                if head.upper() != self.config.subsystem.upper():
                    continue
                out.append((name, rest))
            else:
                out.append((name, name))
        return out

    def place(self, name: str) -> dict:
        """``file`` and ``line`` of the definition a lookup of ``name`` uses (empty if unset),
        as keyword arguments of :class:`ConfigError`."""
        d = self.config.definition(name)
        return {"file": d.file, "line": d.line} if d is not None else {}

    def group_names(self) -> list[str]:
        """``GROUP_NAMES`` as a list (empty when no groups are configured)."""
        return list(self.get("GROUP_NAMES") or [])

    def group_quota(self, group: str) -> Optional[float]:
        """``GROUP_QUOTA_<group>``: the static quota, or ``None`` if unset."""
        return self.pattern("GROUP_QUOTA_<g>", group)

    def group_quota_dynamic(self, group: str) -> Optional[float]:
        """``GROUP_QUOTA_DYNAMIC_<group>``: the fraction of the parent's quota, or ``None``."""
        return self.pattern("GROUP_QUOTA_DYNAMIC_<g>", group)

    def group_accept_surplus(self, group: str) -> bool:
        """``GROUP_ACCEPT_SURPLUS_<group>``, defaulting to ``GROUP_ACCEPT_SURPLUS``."""
        return bool(self.pattern("GROUP_ACCEPT_SURPLUS_<g>", group))

    def group_autoregroup(self, group: str) -> bool:
        """``GROUP_AUTOREGROUP_<group>``, defaulting to ``GROUP_AUTOREGROUP``."""
        return bool(self.pattern("GROUP_AUTOREGROUP_<g>", group))

    def group_prio_factor(self, group: str) -> Optional[float]:
        """``GROUP_PRIO_FACTOR_<group>``; ``None`` when unset or 0 (HTCondor treats 0 as unset)."""
        value = self.pattern("GROUP_PRIO_FACTOR_<g>", group)
        return value if value else None

    def concurrency_limit(self, limit: str) -> float:
        """Capacity of a concurrency limit: ``<limit>_LIMIT``, else
        ``CONCURRENCY_LIMIT_DEFAULT_<prefix>`` for ``prefix.name``, else ``CONCURRENCY_LIMIT_DEFAULT``."""
        value = self.pattern("<x>_LIMIT", limit.upper())  # named in messages as a knob is written
        if value is not None:
            return value
        prefix, dot, _ = limit.upper().rpartition(".")
        if dot:
            return self.pattern("CONCURRENCY_LIMIT_DEFAULT_<p>", prefix)
        return self.get("CONCURRENCY_LIMIT_DEFAULT")

    def expressions(self) -> list[Node]:
        """Every expression of this configuration: the expression knobs' values (set or at
        their defaults), then each definition whose expanded text parses as an expression
        (a list of names or a path does not).  A bad expression knob raises ``ConfigError``."""
        out = [v for k in KNOBS.values() if k.type == "expr" and isinstance(v := self.get(k.name), Node)]
        for name in self.config.names():
            raw = self.config.get_raw(name)
            if raw:
                try:
                    out.append(parse_expr(self.config.expand(raw)))
                except ClassAdError:
                    continue
        return out

    # ---- conversion -------------------------------------------------------------------

    def _definition(self, name: str, alias: Optional[str]) -> Optional[Definition]:
        d = self.config.definition(name)
        if (d is None or d.value == "") and alias is not None:
            d = self.config.definition(alias) or d
        return d

    def _convert(self, knob: Knob, name: str, d: Optional[Definition], default: Optional[str]) -> Any:
        raw = self.config.get_raw(d.name) if d is not None else None
        hidden = raw is not None and self.config.last_from_included
        source = d if raw is not None else None
        if raw is None:
            if d is not None and knob.type in ("string", "expr", "list"):
                return None  # set to (or expanding to) nothing: unset, as param() does
            if default is None:
                return None
            raw = self.config.expand(default).strip()
            if not raw:
                return None
        try:
            return _parse_value(knob, raw)
        except ValueError as exc:
            if hidden:  # the text came (at least partly) from an included file: not quoted
                raise _knob_error(
                    f"{name}: its value, built from an included file, is not a valid "
                    f"{knob.type} (the text is not shown)",
                    source,
                ) from None
            text = str(exc)
            if len(text) > _QUOTE_LIMIT:  # a megabyte of expanded text is no use on one line
                text = text[:_QUOTE_LIMIT] + f"... ({len(text):,} characters in all)"
            raise _knob_error(f"{name}: {text}", source) from None


_QUOTE_LIMIT = 300


def read_config_file(path: str | os.PathLike, environ: Optional[Mapping[str, str]] = None) -> Config:
    """A configuration file (and its includes) as :class:`Knobs` reads it: the knob
    defaults visible to ``$(X)`` and ``defined X``."""
    return Config.from_file(path, environ=environ, defaults=DEFAULTS)


def reader_warnings(knobs: Knobs) -> tuple[str, ...]:
    """What reading the configuration warned about (``warning :`` statements, ignored
    ``use`` templates, the obsolete ``:`` assignment), one line each, as
    ``file:line: warning: message``."""
    out = []
    for w in knobs.config.warnings:
        place, sep, message = w.partition(": ")
        out.append(f"{place}: warning: {' '.join(message.split())}" if sep else f"warning: {w}")
    return tuple(out)


def per_name_knob(name: str) -> Optional[tuple[str, str]]:
    """``(pattern, name)`` when ``name`` sets a per-name knob (``SLURM_SHARES_alice`` gives
    ``("SLURM_SHARES_<a>", "alice")``), else None; case is ignored."""
    for pattern in PATTERNS:
        before, after = re.split(r"<\w+>", pattern)
        m = re.fullmatch(re.escape(before) + "(.+)" + re.escape(after), name, re.IGNORECASE)
        if m is not None:
            return pattern, m.group(1)
    return None


def check_setting(config: Config, name: str, text: str, file: str, line: Optional[int]) -> bool:
    """Whether ``name = text``, as if appended to ``config``, is read without error.

    A declared knob (or an instance of a per-name one) must hold a value of its type, else
    ``ConfigError`` at ``file`` and ``line``; a macro of ``config`` is True; any other name
    is False (no knob, no macro).  ``config`` itself is left unchanged."""
    found = per_name_knob(name)
    if name.upper() not in KNOBS and found is None:
        return config.definition(name) is not None
    changed = copy.deepcopy(config)
    changed.define(name, text, file, line)
    knobs = Knobs(changed)
    if name.upper() in KNOBS:
        knobs.get(name)
    elif found is not None:
        knobs.pattern(*found)
    return True


def _knob_error(message: str, source: Optional[Definition]) -> ConfigError:
    if source is None:
        return ConfigError(message + " (from its default)")
    if source.file == ENVIRONMENT:
        return ConfigError(f"{message} (set by {source.location()})", file=ENVIRONMENT)
    return ConfigError(message, file=source.file, line=source.line)


def _parse_value(knob: Knob, raw: str) -> Any:
    """Convert expanded text to the knob's type; ``ValueError`` explains a bad value."""
    kind = knob.type
    if kind == "string":
        return raw
    if kind == "list":
        return [item for item in re.split(r"[\s,]+", raw) if item]
    if kind == "expr":
        return _parse_expr(raw)
    if kind == "bool":
        if raw.lower() in _BOOLS:
            return _BOOLS[raw.lower()]
        value = _constant(raw)
        if type(value) is bool:
            return value
        if type(value) in (int, float):
            return value != 0
        raise ValueError(f"{raw!r} is not a boolean (true/false/yes/no/1/0)")
    if kind == "int":
        value = int(raw) if _INT_RE.match(raw) else _constant(raw)
        if type(value) is float and value.is_integer():
            value = int(value)
        if type(value) is not int:
            raise ValueError(f"{raw!r} is not an integer")
    else:  # float
        value = float(raw) if _REAL_RE.match(raw) else _constant(raw)
        if type(value) not in (int, float):
            raise ValueError(f"{raw!r} is not a number")
        value = float(value)
    if kind == "float" and not math.isfinite(value):
        raise ValueError(f"{raw!r} is not a finite number")
    if kind == "int" and not -INT_LIMIT <= value <= INT_LIMIT:
        raise ValueError(f"{raw} is outside the integers a knob may hold (-{INT_LIMIT} .. {INT_LIMIT})")
    if knob.minimum is not None and value < knob.minimum:
        raise ValueError(f"{raw} is below the minimum {knob.minimum:g}")
    if knob.maximum is not None and value > knob.maximum:
        raise ValueError(f"{raw} is above the maximum {knob.maximum:g}")
    return value


def _parse_expr(text: str) -> Any:
    """Parse with the language's cached parser; a syntax error becomes ``ValueError``."""
    try:
        return parse_expr(text)
    except ClassAdError as exc:
        raise ValueError(f"{text!r} is not a valid ClassAd expression: {exc.message}") from None


def _constant(text: str) -> Any:
    """The value of a constant ClassAd expression such as ``3600*24`` (no ad in scope)."""
    return evaluate_top(_parse_expr(text), None, new_state())


__all__ = [
    "DEFAULTS",
    "INT_LIMIT",
    "KNOBS",
    "PATTERNS",
    "TYPES",
    "Knob",
    "Knobs",
    "check_setting",
    "per_name_knob",
    "read_config_file",
    "reader_warnings",
]
