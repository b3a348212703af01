"""Maui's ``maui.cfg`` parameters read from the ``MAUI_*`` knobs, every one checked at load.

Weights and caps are ``MAUI_<X>WEIGHT`` and ``MAUI_<X>CAP`` for a component (``SERVICE``,
``TARGET``, ``CRED``, ``FS``, ``RES``) or a subcomponent (``QUEUETIME``, ``USER``, ...);
credentials are ``MAUI_<KIND>CFG_<name>_<ATTR>`` (``MAUI_USERCFG_john_PRIORITY``,
``MAUI_USERCFG_DEFAULT_QTTARGET = 4:00:00``).  A value of the wrong type, a time that is
not a Maui time, a term that is not modelled, or any other ``MAUI_`` name is a
``ConfigError`` naming the file and line that set it: a knob that would change nothing
is never accepted.  The values land in :class:`~.policy_params.MauiParams`, whose math is
:mod:`matchmaker.policies.maui`.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import ConfigError
from .knobs import KNOBS, Knobs
from .policy_params import CRED_ATTRS, XFACTOR_FORMS, MauiParams

# Component knob names -> the component; Maui 3 spells the service cap SERVICEWCAP.
COMPONENTS = {"SERVICE": "SERV", "TARGET": "TARG", "CRED": "CRED", "FS": "FS", "RES": "RES"}
CAP_COMPONENTS = {**COMPONENTS, "SERVICEW": "SERV", "SERV": "SERV"}
SUBCOMPONENTS = (
    "QUEUETIME",
    "XFACTOR",
    "TARGETQUEUETIME",
    "TARGETXFACTOR",
    "USER",
    "GROUP",
    "ACCOUNT",
    "QOS",
    "CLASS",
    "FSUSER",
    "FSGROUP",
    "FSACCOUNT",
    "FSQOS",
    "FSCLASS",
    "NODE",
    "PROC",
    "MEM",
    "DISK",
    "PS",
    "PE",
    "WALLTIME",
    "UPROC",
    "UJOB",
)
# Terms Maui has that nothing here can feed: refused when set to anything but 0.
NOT_MODELLED = {
    "ATTR": "Maui 3 computes no ATTR component (it is always 0)",
    "USAGE": "the USAGE component applies to running jobs only, never to a start priority",
    "BYPASS": "no job is ever backfilled over here (there is no backfill), so BYPASS is always 0",
    "SPVIOLATION": "there are no soft policies here, so SPVIOLATION is always 0",
    "SWAP": "HTCondor job ads carry no swap request",
}
FS_POLICIES = ("NONE", "DEDICATEDPS", "DEDICATEDPES", "UTILIZEDPS")
SLOTS = {"USER": "u", "GROUP": "g", "ACCOUNT": "a", "QOS": "q", "CLASS": "c"}
_CRED = re.compile(r"MAUI_(USER|GROUP|ACCOUNT|QOS|CLASS)CFG_(.+)_([A-Z]+)", re.IGNORECASE)
_TERM = re.compile(r"MAUI_(.+?)(WEIGHT|CAP)", re.IGNORECASE)
_TARGET = re.compile(r"[0-9]+(\.[0-9]*)?[-+^%]?")


def parse_maui_time(text: str) -> float:
    """Seconds of a Maui time value, ``[[[DD:]HH:]MM:]SS`` (``4:00:00`` is four hours) or a
    plain number of seconds; ``ValueError`` on anything else or a negative time."""
    parts = text.strip().split(":")
    if not 1 <= len(parts) <= 4 or not all(re.fullmatch(r"\d+(\.\d*)?", p) for p in parts):
        raise ValueError(f"{text.strip()!r} is not a Maui time ([[[DD:]HH:]MM:]SS or seconds)")
    seconds = 0.0
    for unit, part in zip((1, 60, 3600, 86400), reversed(parts)):
        seconds += unit * float(part)
    return seconds


def _maui_names(knobs: Knobs) -> list[str]:
    """The configured ``MAUI_`` names as written, at the top level or under this subsystem."""
    return [name for _, name in knobs.own_names() if name.upper().startswith("MAUI_") and name.upper() not in KNOBS]


def _time(knobs: Knobs, name: str, value: Any) -> float:
    try:
        return parse_maui_time(str(value))
    except ValueError as exc:
        raise ConfigError(f"{name}: {exc}", **knobs.place(name)) from None


def _credential(knobs: Knobs, name: str, m: re.Match) -> tuple[tuple[str, str, str], Any]:
    kind, who, attr = m.group(1).upper(), m.group(2), m.group(3).upper()
    if attr not in CRED_ATTRS[kind]:
        raise ConfigError(f"{name}: {kind}CFG takes {', '.join(CRED_ATTRS[kind])}, not {attr}", **knobs.place(name))
    value = knobs.pattern(f"MAUI_{kind}CFG_<{SLOTS[kind]}>_{attr}", who)
    if value is not None and attr == "QTTARGET":
        value = _time(knobs, name, value)
    elif value is not None and attr == "FSTARGET":
        value = str(value).strip()
        if not _TARGET.fullmatch(value):
            raise ConfigError(
                f"{name}: {value!r} is not a percent with an optional suffix + - ^ %", **knobs.place(name)
            )
    return (kind, who.upper(), attr), value


def _term(knobs: Knobs, name: str, m: re.Match, out: dict[str, dict[str, float]]) -> None:
    """File a ``MAUI_<X>WEIGHT`` or ``MAUI_<X>CAP`` into ``out`` (weights, subweights, caps)."""
    x, what = m.group(1).upper(), m.group(2).upper()
    pattern = f"MAUI_<x>{what}"
    components = COMPONENTS if what == "WEIGHT" else CAP_COMPONENTS
    if x in NOT_MODELLED:
        if knobs.pattern(pattern, m.group(1)):
            raise ConfigError(f"{name}: not modelled: {NOT_MODELLED[x]}; leave it unset", **knobs.place(name))
    elif x in components:
        value = knobs.pattern(pattern, m.group(1))
        if value is not None:
            out["weights" if what == "WEIGHT" else "caps"][components[x]] = value
    elif x in SUBCOMPONENTS:
        value = knobs.pattern(pattern, m.group(1))
        if value is not None:
            out["subweights" if what == "WEIGHT" else "caps"][x] = value
    else:
        raise ConfigError(
            f"{name}: {x} is no Maui priority component or subcomponent here (docs/policies.md lists them)",
            **knobs.place(name),
        )


def maui_params(knobs: Knobs) -> MauiParams:
    """The ``MAUI_*`` knobs as :class:`MauiParams`, every one checked (the per-name ones too)."""
    g = knobs.get
    terms: dict[str, dict[str, float]] = {"weights": {}, "subweights": {}, "caps": {}}
    creds: dict[tuple[str, str, str], Any] = {}
    for name in _maui_names(knobs):
        if (m := _CRED.fullmatch(name)) is not None:
            key, value = _credential(knobs, name, m)
            if value is not None:
                creds[key] = value
        elif (m := _TERM.fullmatch(name)) is not None:
            _term(knobs, name, m, terms)
        else:
            raise ConfigError(
                f"{name}: not a knob of the Maui model (docs/policies.md lists them)", **knobs.place(name)
            )
    policy = str(g("MAUI_FSPOLICY") or "NONE").strip().upper()
    if policy.rstrip("%") not in FS_POLICIES:
        raise ConfigError(
            f"MAUI_FSPOLICY: {policy!r} is not {', '.join(FS_POLICIES)} (with an optional %)",
            **knobs.place("MAUI_FSPOLICY"),
        )
    interval = _time(knobs, "MAUI_FSINTERVAL", g("MAUI_FSINTERVAL"))
    if interval <= 0:
        raise ConfigError("MAUI_FSINTERVAL: must be longer than 0", **knobs.place("MAUI_FSINTERVAL"))
    form = str(g("MAUI_XFACTOR_FORM") or "").strip().lower()
    if form not in XFACTOR_FORMS:
        raise ConfigError(
            f"MAUI_XFACTOR_FORM: {form!r} is not one of {', '.join(XFACTOR_FORMS)}", **knobs.place("MAUI_XFACTOR_FORM")
        )
    return MauiParams(
        weights=terms["weights"],
        subweights=terms["subweights"],
        caps=terms["caps"],
        xfminwclimit=_time(knobs, "MAUI_XFMINWCLIMIT", g("MAUI_XFMINWCLIMIT")),
        xfactor_form=form,
        enable_neg_job_priority=g("MAUI_ENABLENEGJOBPRIORITY"),
        reject_neg_prio_jobs=g("MAUI_REJECTNEGPRIOJOBS"),
        fs_policy=policy,
        fs_interval=interval,
        fs_depth=g("MAUI_FSDEPTH"),
        fs_decay=g("MAUI_FSDECAY"),
        creds=creds,
    )


__all__ = ["COMPONENTS", "NOT_MODELLED", "SUBCOMPONENTS", "maui_params", "parse_maui_time"]
