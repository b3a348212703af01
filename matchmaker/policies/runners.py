"""The four models as the cycle's runners, one module each: :mod:`.lsf_runner`,
:mod:`.maui_runner`, :mod:`.dirac_runner`, :mod:`.slurm_runner`; :func:`make_runner` picks one.
"""

from __future__ import annotations

from ..config.policy_params import PolicyConfig
from .dirac_runner import DiracRunner
from .jobs import Runner
from .lsf_runner import LsfRunner
from .maui_runner import MauiRunner
from .slurm_runner import SlurmRunner

RUNNERS = {"lsf": LsfRunner, "maui": MauiRunner, "dirac": DiracRunner, "slurm": SlurmRunner}


def make_runner(cfg: PolicyConfig) -> Runner:
    """A fresh runner for one cycle under ``cfg`` (not for ``htcondor``: the pie spin)."""
    return RUNNERS[cfg.name](cfg)


__all__ = ["RUNNERS", "DiracRunner", "LsfRunner", "MauiRunner", "SlurmRunner", "make_runner"]
