"""Small builders shared by the policy source tests: ads as text, one cycle under a config."""

from __future__ import annotations

from dataclasses import replace

from classad.ad import ClassAd
from matchmaker.config.knobs import Knobs
from matchmaker.config.policy_settings import policy_params
from matchmaker.config.settings import Settings
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.policies.runners import make_runner
from matchmaker.pool.ads import parse_old_ads, pool_from_ads

NOW = 1_000_000.0


def ads(text: str) -> list[ClassAd]:
    return [ad for ad, _ in parse_old_ads(text)]


def slots(n: int, cpus: int = 1, machines: int = 0) -> str:
    """``n`` idle slots of ``cpus`` cores; with ``machines``, spread over that many machines."""
    out = []
    for i in range(n):
        machine = f'Machine = "m{i % machines}"\n' if machines else ""
        out.append(f'Name = "s{i}"\nSlotID = {i}\nCpus = {cpus}\nRequirements = true\n{machine}')
    return "\n".join(out)


def job(user: str, cluster: int, proc: int = 0, status: int = 1, extra: str = "") -> str:
    return (
        f'ClusterId = {cluster}\nProcId = {proc}\nUser = "{user}"\nJobStatus = {status}\nRequestCpus = 1\n'
        f"Requirements = true\nQDate = {int(NOW) - 60}\n{extra}\n\n"
    )


def run(config: str, slot_text: str, job_text: str, ledger=None):
    """One cycle at ``NOW`` under ``config``: (result, runner)."""
    knobs = Knobs.from_string(config)
    cfg = policy_params(knobs)
    settings = replace(Settings.from_knobs(knobs), priority_policy=cfg)
    runner = make_runner(cfg)
    pool = pool_from_ads(ads(slot_text), ads(job_text))
    result = negotiate(pool, settings, StaticPriorities({}), NOW, runner=runner, ledger=ledger or {})
    return result, runner
