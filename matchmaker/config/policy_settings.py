"""The priority models' parameters read from the configuration knobs, checked once.

:func:`policy_params` reads ``MATCHMAKER_PRIORITY_POLICY`` and the models' knobs
(``LSF_*``, ``MAUI_*`` through :mod:`.maui_settings`, ``DIRAC_*``, ``SLURM_*``) into a
:class:`~.policy_params.PolicyConfig`, which :class:`~.settings.Settings` carries.  A bad
value (an unknown policy or choice, a malformed ``LSF_USER_SHARES`` list) is a
``ConfigError`` naming the file and line that set it; every model's knobs, the per-name
ones included, are checked whichever policy is chosen.  The per-name values the runners
look up (``DIRAC_JOBSHARE_<g>``, ``SLURM_SHARES_<a>``, ``SLURM_QOS_PRIORITY_<q>``) are
read here for every name the configuration sets, so no knob is read during a cycle.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import ConfigError
from .knobs import KNOBS, Knobs, per_name_knob
from .maui_settings import maui_params
from .policy_params import GPU_TERMS, POLICIES, LsfParams, MauiParams, PolicyConfig, SlurmParams

SLURM_FLAGS = ("SMALL_RELATIVE_TO_TIME",)
_SLICE_ITEM = re.compile(r"\[\s*([0-9.eE+]+)\s*,\s*([0-9.eE+]+)\s*,\s*([0-9.eE+]+)\s*\]")
_SHARE_ITEM = re.compile(r"\[\s*([^,\[\]\s]+)\s*,\s*([0-9]+(?:\.[0-9]*)?)\s*\]")


def _choice(knobs: Knobs, name: str, choices: tuple[str, ...], upper: bool = False) -> str:
    value = str(knobs.get(name) or "").strip()
    value = value.upper() if upper else value.lower()
    if value not in choices:
        raise ConfigError(f"{name}: {value!r} is not one of {', '.join(choices)}", **knobs.place(name))
    return value


def parse_shares(text: str) -> dict[str, float]:
    """``[alice@example.org, 8] [bob, 2]`` as a mapping; ``ValueError`` on anything else."""
    out: dict[str, float] = {}
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _SHARE_ITEM.match(text, pos)
        if m is None:
            raise ValueError(f"expected [name, shares] at {text[pos : pos + 20]!r}")
        out[m.group(1)] = float(m.group(2))
        pos = m.end()
        while pos < len(text) and text[pos] in " \t,":
            pos += 1
    return out


def parse_slices(text: str) -> tuple[tuple[float, float, float], ...]:
    """``[604800, 80, 2] [3600, 20, 5]`` (span seconds, weight, max correction) as tuples."""
    out = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _SLICE_ITEM.match(text, pos)
        if m is None:
            raise ValueError(f"expected [span, weight, max correction] at {text[pos : pos + 24]!r}")
        span, weight, most = (float(x) for x in m.groups())
        if span <= 0 or weight <= 0 or most < 1:
            raise ValueError(f"{m.group(0)}: span and weight must be positive, max correction at least 1")
        out.append((span, weight, most))
        pos = m.end()
        while pos < len(text) and text[pos] in " \t,":
            pos += 1
    return tuple(out)


def _refuse_unknown(knobs: Knobs, prefix: str, model: str) -> None:
    """A configured ``<prefix>...`` name that is no declared knob (nor an instance of a
    per-name one) is an error: a knob the model would ignore must not look as if it worked."""
    for name, bare in knobs.own_names():
        bare = bare.upper()
        if bare.startswith(prefix) and bare not in KNOBS and per_name_knob(bare) is None:
            raise ConfigError(
                f"{name}: not a knob of the {model} model (docs/policies.md lists them)", **knobs.place(name)
            )


def lsf_params(knobs: Knobs) -> LsfParams:
    """The ``LSF_*`` knobs as :class:`LsfParams`, every one checked."""
    g = knobs.get
    _refuse_unknown(knobs, "LSF_", "LSF")
    try:
        shares = parse_shares(g("LSF_USER_SHARES") or "")
    except ValueError as exc:
        raise ConfigError(f"LSF_USER_SHARES: {exc}", **knobs.place("LSF_USER_SHARES")) from None
    if g("LSF_FWD_JOB_FACTOR"):
        raise ConfigError(
            "LSF_FWD_JOB_FACTOR: no job is forwarded to another cluster here, so forwarded "
            "slots are always 0; leave it unset",
            **knobs.place("LSF_FWD_JOB_FACTOR"),
        )
    return LsfParams(
        cpu_time_factor=g("LSF_CPU_TIME_FACTOR"),
        run_time_factor=g("LSF_RUN_TIME_FACTOR"),
        run_job_factor=g("LSF_RUN_JOB_FACTOR"),
        committed_run_time_factor=g("LSF_COMMITTED_RUN_TIME_FACTOR"),
        fairshare_adjustment_factor=g("LSF_FAIRSHARE_ADJUSTMENT_FACTOR"),
        adjustment_threshold=g("LSF_FAIRSHARE_ADJUSTMENT_THRESHOLD"),
        gpu_run_time_factor=g("LSF_GPU_RUN_TIME_FACTOR"),
        hist_hours=g("LSF_HIST_HOURS"),
        run_time_decay=g("LSF_RUN_TIME_DECAY"),
        enable_hist_run_time=g("LSF_ENABLE_HIST_RUN_TIME"),
        enable_gpu_hist_run_time=g("LSF_ENABLE_GPU_HIST_RUN_TIME"),
        run_limit_hours=g("LSF_RUNLIMIT") / 3600.0,
        floor=g("LSF_PRIORITY_FLOOR"),
        gpu_term=_choice(knobs, "LSF_GPU_TERM", GPU_TERMS),
        default_shares=g("LSF_DEFAULT_SHARES"),
        shares=shares,
    )


def policy_params(knobs: Knobs) -> PolicyConfig:
    """The policy configuration of ``knobs`` (a :class:`~matchmaker.config.knobs.Knobs`)."""
    name = _choice(knobs, "MATCHMAKER_PRIORITY_POLICY", POLICIES)
    # checked whatever the policy: a bad value is an error now (the DIRAC slices even with the corrector off)
    slurm = slurm_params(knobs)
    dirac = dirac_params(knobs)
    lsf_checked = lsf_params(knobs)
    maui_checked = maui_params(knobs)
    if name == "htcondor":
        return PolicyConfig()
    g = knobs.get
    lsf = LsfParams()
    maui = MauiParams()
    if name == "lsf":
        lsf = lsf_checked
    elif name == "maui":
        maui = maui_checked
    return PolicyConfig(
        name=name,
        lsf=lsf,
        maui=maui,
        slurm=slurm,
        **dirac,
        priority_expr=g("MATCHMAKER_POLICY_PRIORITY_EXPR"),
    )


def dirac_params(knobs: Knobs) -> dict[str, Any]:
    """The DIRAC fields of :class:`PolicyConfig`, every ``DIRAC_*`` knob checked: the
    slices even while the corrector is off, and every ``DIRAC_JOBSHARE_<g>``."""
    g = knobs.get
    _refuse_unknown(knobs, "DIRAC_", "DIRAC")
    try:
        slices = parse_slices(g("DIRAC_CORRECTION_SLICES") or "")
    except ValueError as exc:
        raise ConfigError(f"DIRAC_CORRECTION_SLICES: {exc}", **knobs.place("DIRAC_CORRECTION_SLICES")) from None
    correction = g("DIRAC_ENABLE_SHARES_CORRECTION")
    if correction and not slices:
        raise ConfigError(
            "DIRAC_CORRECTION_SLICES: the share corrector is enabled but has no slice",
            **knobs.place("DIRAC_CORRECTION_SLICES"),
        )
    shares = {
        group.upper(): knobs.pattern("DIRAC_JOBSHARE_<g>", group) for group in knobs.pattern_args("DIRAC_JOBSHARE_<g>")
    }
    return dict(
        dirac_correction=correction,
        dirac_slices=slices,
        dirac_max_global_correction=g("DIRAC_MAX_GLOBAL_CORRECTION"),
        dirac_compat=g("DIRAC_CORRECTOR_COMPAT"),
        dirac_job_sharing=frozenset(g("DIRAC_JOBSHARING") or ()),
        dirac_default_group=g("DIRAC_DEFAULT_GROUP") or "user",
        dirac_consolidation=_choice(knobs, "DIRAC_PRIORITY_CONSOLIDATION", ("avg", "sum")),
        dirac_seed=g("DIRAC_SEED"),
        dirac_shares=shares,
    )


def slurm_params(knobs: Knobs) -> SlurmParams:
    """The Slurm parameters, every ``SLURM_*`` knob checked (the per-name ones too)."""
    g = knobs.get
    _refuse_unknown(knobs, "SLURM_", "Slurm")
    flags = [f.upper() for f in g("SLURM_PRIORITYFLAGS") or ()]
    unknown = [f for f in flags if f not in SLURM_FLAGS]
    if unknown:
        raise ConfigError(
            f"SLURM_PRIORITYFLAGS: {', '.join(unknown)}: not modelled (only {', '.join(SLURM_FLAGS)} is)",
            **knobs.place("SLURM_PRIORITYFLAGS"),
        )
    shares = {a.upper(): knobs.pattern("SLURM_SHARES_<a>", a) for a in knobs.pattern_args("SLURM_SHARES_<a>")}
    qos = {q.upper(): knobs.pattern("SLURM_QOS_PRIORITY_<q>", q) for q in knobs.pattern_args("SLURM_QOS_PRIORITY_<q>")}
    return SlurmParams(
        weight_age=g("SLURM_PRIORITYWEIGHTAGE"),
        weight_fairshare=g("SLURM_PRIORITYWEIGHTFAIRSHARE"),
        weight_qos=g("SLURM_PRIORITYWEIGHTQOS"),
        weight_jobsize=g("SLURM_PRIORITYWEIGHTJOBSIZE"),
        max_age=_slurm_time(knobs, "SLURM_PRIORITYMAXAGE", positive=True),
        decay_half_life=_slurm_time(knobs, "SLURM_PRIORITYDECAYHALFLIFE", positive=False),
        favor_small=g("SLURM_PRIORITYFAVORSMALL"),
        truncate=g("SLURM_PRIORITY_TRUNCATE"),
        relative_to_time="SMALL_RELATIVE_TO_TIME" in flags,
        qos_priority=qos,
        shares=shares,
        associations=tuple(g("SLURM_ASSOCIATIONS") or ()),
    )


def parse_slurm_time(text: str) -> float:
    """Seconds in a Slurm time string: ``minutes``, ``minutes:seconds``,
    ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes`` or
    ``days-hours:minutes:seconds`` (whole numbers); ``ValueError`` on anything else."""
    t = text.strip()
    days, dash, rest = t.partition("-")
    if not dash:
        days, rest = "", t
    parts = rest.split(":")
    if not all(x.isdigit() and x.isascii() for x in parts + ([days] if dash else [])) or len(parts) > 3:
        raise ValueError(
            f"{text.strip()!r} is not a Slurm time (minutes, minutes:seconds, hours:minutes:seconds, "
            "days-hours, days-hours:minutes or days-hours:minutes:seconds)"
        )
    n = [int(x) for x in parts]
    if dash:
        hours, minutes, seconds = (n + [0, 0])[:3]
        return float(((int(days) * 24 + hours) * 60 + minutes) * 60 + seconds)
    if len(n) == 3:
        return float((n[0] * 60 + n[1]) * 60 + n[2])
    return float(n[0] * 60 + (n[1] if len(n) == 2 else 0))


def _slurm_time(knobs: Knobs, name: str, positive: bool) -> float:
    """A Slurm time knob in seconds (its default when unset)."""
    raw = str(knobs.get(name) or KNOBS[name].default)
    try:
        seconds = parse_slurm_time(raw)
    except ValueError as exc:
        raise ConfigError(f"{name}: {exc}", **knobs.place(name)) from None
    if positive and seconds <= 0:
        raise ConfigError(f"{name}: {raw!r} is no time at all; it must be longer than 0", **knobs.place(name))
    return seconds


__all__ = [
    "POLICIES",
    "SLURM_FLAGS",
    "PolicyConfig",
    "dirac_params",
    "lsf_params",
    "parse_shares",
    "parse_slices",
    "policy_params",
    "slurm_params",
]
