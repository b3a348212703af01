"""The priority models' parameters as typed, frozen records (docs/policies.md).

The configuration layer fills them from the knobs (:mod:`.policy_settings`, with
:mod:`.maui_settings` for Maui's per-name knobs) and :class:`~.settings.Settings` carries
the chosen model's :class:`PolicyConfig`; the models' math and runners
(:mod:`matchmaker.policies`) only read them.  Each record's defaults are the model's
documented defaults, so a record built without configuration describes the stock model.
Per-name values (a DIRAC group's share, a Slurm association's shares, a QOS priority) are
resolved when the configuration is read, keyed by the upper-case name as knob names are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from classad import ast

POLICIES = ("htcondor", "lsf", "maui", "dirac", "slurm")
GPU_TERMS = ("denominator", "additive")  # LSF: where the GPU term goes
XFACTOR_FORMS = ("code", "manual")  # Maui: the expansion factor as coded or as documented
# Maui: what each credential kind may set (QTTARGET in seconds after parsing, FSTARGET as text).
CRED_ATTRS = {
    "USER": ("PRIORITY", "FSTARGET", "QTTARGET", "XFTARGET"),
    "GROUP": ("PRIORITY", "FSTARGET"),
    "ACCOUNT": ("PRIORITY", "FSTARGET"),
    "CLASS": ("PRIORITY", "FSTARGET"),
    "QOS": ("PRIORITY", "FSTARGET", "QTWEIGHT", "XFWEIGHT", "QTTARGET", "XFTARGET"),
}
DEFAULT = "DEFAULT"  # Maui: the credential entry of whoever has no value of their own
DEFAULT_SHARE = 1000.0  # DIRAC: a group's JobShare when none is configured
SLURM_DEFAULT_SHARES = 1.0  # Slurm: an association's shares when none are configured


@dataclass(frozen=True)
class LsfParams:
    """``lsb.params`` factors with LSF's defaults; ``floor``, ``gpu_term`` and
    ``adjustment_threshold`` are our choices."""

    cpu_time_factor: float = 0.7
    run_time_factor: float = 0.7
    run_job_factor: float = 3.0
    committed_run_time_factor: float = 0.0
    fwd_job_factor: float = 0.0
    fairshare_adjustment_factor: float = 0.0
    gpu_run_time_factor: float = 0.0
    hist_hours: float = 5.0
    run_time_decay: bool = False
    enable_hist_run_time: bool = False
    enable_gpu_hist_run_time: bool = False
    run_limit_hours: float = 0.0  # the queue's RUNLIMIT (0: none)
    adjustment_threshold: float = 1.0  # THRESHOLD of the memory adjustment
    floor: float = 0.01
    gpu_term: str = "denominator"
    run_time_times_slots: bool = True
    default_shares: float = 1.0
    shares: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class MauiParams:
    """``maui.cfg`` weights and caps with Maui's defaults (0 cap = none)."""

    weights: Mapping[str, float] = field(default_factory=dict)  # component -> weight (default 1)
    subweights: Mapping[str, float] = field(default_factory=dict)  # subcomponent -> weight (QUEUETIME 1, else 0)
    caps: Mapping[str, float] = field(default_factory=dict)  # component or subcomponent -> cap
    xfminwclimit: float = 120.0
    xfactor_form: str = "code"
    enable_neg_job_priority: bool = False
    reject_neg_prio_jobs: bool = False
    fs_policy: str = "NONE"  # NONE, DEDICATEDPS, ...; a trailing % = percent-based
    fs_interval: float = 43200.0
    fs_depth: int = 8
    fs_decay: float = 1.0
    creds: Mapping[tuple[str, str, str], Any] = field(default_factory=dict)  # (KIND, NAME, ATTR) -> value

    def cred(self, kind: str, name: Optional[str], attr: str = "PRIORITY") -> Any:
        """``<KIND>CFG[name] <attr>=``, else the ``DEFAULT`` entry's (None when neither is
        set, or the job has no credential of this kind).  A ``PRIORITY`` of 0 falls back
        too, except for QOS (Maui's code)."""
        if not name:
            return None
        own = self.creds.get((kind, name.upper(), attr))
        if own is None or (attr == "PRIORITY" and own == 0 and kind != "QOS"):
            fallback = self.creds.get((kind, DEFAULT, attr))
            return fallback if fallback is not None else own
        return own

    def weight(self, comp: str) -> float:
        return self.weights.get(comp, 1.0)

    def subweight(self, sub: str) -> float:
        return self.subweights.get(sub, 1.0 if sub == "QUEUETIME" else 0.0)


@dataclass(frozen=True)
class SlurmParams:
    """``slurm.conf`` priority weights (0 by default), max age and decay half-life (seconds),
    flags, and the configured QOS priorities and user associations."""

    weight_age: float = 0.0
    weight_fairshare: float = 0.0
    weight_qos: float = 0.0
    weight_partition: float = 0.0
    weight_jobsize: float = 0.0
    max_age: float = 604800.0
    decay_half_life: float = 604800.0
    favor_small: bool = False
    relative_to_time: bool = False  # PriorityFlags=SMALL_RELATIVE_TO_TIME
    truncate: bool = True
    qos_priority: Mapping[str, float] = field(default_factory=dict)  # every configured QOS, by upper-case name
    shares: Mapping[str, float] = field(default_factory=dict)  # SLURM_SHARES_<a>, by upper-case knob-safe name
    associations: tuple[str, ...] = ()  # user associations declared whether or not they run

    def highest_qos(self) -> float:
        """The highest priority of all configured QOS (0 when none is configured)."""
        return max(self.qos_priority.values(), default=0.0)


@dataclass(frozen=True)
class PolicyConfig:
    """The chosen policy and its parameters: one record per model, DIRAC's fields flat,
    and the per-name values read from the configuration."""

    name: str = "htcondor"
    lsf: LsfParams = LsfParams()
    maui: MauiParams = MauiParams()
    slurm: SlurmParams = SlurmParams()
    dirac_job_sharing: frozenset[str] = frozenset()
    dirac_default_group: str = "user"
    dirac_consolidation: str = "avg"
    dirac_seed: int = 0
    dirac_correction: bool = False
    dirac_slices: tuple[tuple[float, float, float], ...] = ((604800.0, 1.0, 3.0),)
    dirac_max_global_correction: float = 5.0
    dirac_compat: bool = False
    dirac_shares: Mapping[str, float] = field(default_factory=dict)  # DIRAC_JOBSHARE_<g>, by upper-case g
    priority_expr: Optional[ast.Node] = None  # MATCHMAKER_POLICY_PRIORITY_EXPR, parsed, or None

    def dirac_share(self, group: str) -> float:
        """``DIRAC_JOBSHARE_<group>`` (:data:`DEFAULT_SHARE` when not configured)."""
        return self.dirac_shares.get(group.upper(), DEFAULT_SHARE)

    def slurm_shares(self, assoc: str) -> float:
        """``SLURM_SHARES_<a>`` of an association, ``a`` its knob-safe name (:func:`knob_safe`)."""
        return self.slurm.shares.get(knob_safe(assoc).upper(), SLURM_DEFAULT_SHARES)

    def slurm_qos(self, qos: str) -> float:
        """``SLURM_QOS_PRIORITY_<qos>`` (0 for a QOS that is not configured)."""
        return self.slurm.qos_priority.get(qos.upper(), 0.0)


def knob_safe(name: str) -> str:
    """A name as a per-name knob spells it: the part before ``@``, non-word characters as ``_``."""
    return re.sub(r"\W", "_", name.partition("@")[0])


__all__ = [
    "CRED_ATTRS",
    "DEFAULT",
    "DEFAULT_SHARE",
    "GPU_TERMS",
    "POLICIES",
    "SLURM_DEFAULT_SHARES",
    "XFACTOR_FORMS",
    "LsfParams",
    "MauiParams",
    "PolicyConfig",
    "SlurmParams",
    "knob_safe",
]
