"""Cycles whose rejections go unexplained (``negotiate(..., explain=False)``, what a simulation asks).

Leaving out a rejection's mechanism and sentence must change nothing else: the same
matches, the same rejected requests with HTCondor's reasons, in the same order, under
the pie, under group quotas and under a priority policy.  A simulation, which shows
only the matches, never explains, and its series is the one an explaining run gives.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import matchmaker
from matchmaker.config.knobs import Knobs
from matchmaker.config.policy_settings import policy_params
from matchmaker.config.settings import Settings
from matchmaker.cycle import negotiator, ordered, pie
from matchmaker.cycle.ephemeral import StaticPriorities
from matchmaker.cycle.negotiator import negotiate
from matchmaker.policies.runners import make_runner
from matchmaker.pool.ads import parse_old_ads, pool_from_ads

NOW = 1_700_000_000.0

# Eight slots, two of them too small for the 8 GB jobs; a limit of one "lic" at a time.
SLOTS = "\n".join(
    f'Name = "s{i}"\nSlotID = {i}\nCpus = 1\nMemory = {2048 if i < 2 else 16384}\n'
    "Requirements = TARGET.RequestMemory <= MY.Memory\n"
    for i in range(8)
)


def _jobs() -> str:
    out = []
    specs = [  # user, group, how many, memory, extra
        ("alice", "group_a", 6, 1024, ""),
        ("bob", "group_b", 6, 8192, ""),
        ("carol", "group_b", 2, 999999, ""),  # no slot is big enough: Requirements
        ("dave", "group_a", 3, 512, 'ConcurrencyLimits = "lic"\n'),
    ]
    for c, (user, group, n, mem, extra) in enumerate(specs, start=1):
        for p in range(n):
            out.append(
                f'ClusterId = {c}\nProcId = {p}\nUser = "{user}@x"\nOwner = "{user}"\nJobStatus = 1\n'
                f'AcctGroup = "{group}"\nAccountingGroup = "{group}.{user}"\nRequestCpus = 1\n'
                f"RequestMemory = {mem}\nRequirements = true\nQDate = {int(NOW) - 60 + p}\n{extra}\n"
            )
    return "\n".join(out)


CONFIGS = {
    "pie": "LIC_LIMIT = 1\n",
    "groups": "LIC_LIMIT = 1\nGROUP_NAMES = group_a, group_b\nGROUP_QUOTA_group_a = 2\nGROUP_QUOTA_group_b = 3\n",
    "lsf": "LIC_LIMIT = 1\nMATCHMAKER_PRIORITY_POLICY = lsf\nLSF_USER_SHARES = [alice@x, 10] [bob@x, 10]\n",
}


def _cycle(config: str, explain: bool):
    knobs = Knobs.from_string(config)
    cfg = policy_params(knobs)
    settings = replace(Settings.from_knobs(knobs), priority_policy=cfg if cfg.name != "htcondor" else None)
    runner = make_runner(cfg) if cfg.name != "htcondor" else None
    pool = pool_from_ads([a for a, _ in parse_old_ads(SLOTS)], [a for a, _ in parse_old_ads(_jobs())])
    return negotiate(pool, settings, StaticPriorities({}), NOW, runner=runner, ledger={}, explain=explain)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_unexplained_cycle_decides_the_same(name: str) -> None:
    """Also: explaining runs give every rejection a mechanism, unexplained ones none, and
    their text is HTCondor's reason alone."""
    told, silent = _cycle(CONFIGS[name], True), _cycle(CONFIGS[name], False)
    assert silent.matches == told.matches
    assert [(r.job, r.reason) for r in silent.rejected] == [(r.job, r.reason) for r in told.rejected]
    assert [(r.job, r.reason) for r in silent.history] == [(r.job, r.reason) for r in told.history]
    assert silent.usage == told.usage and silent.submitters == told.submitters and silent.groups == told.groups
    assert told.rejected and all(r.mechanism for r in told.rejected)
    assert all(r.mechanism == "" and r.explanation == r.reason for r in silent.history)


def _loaded(tmp_path, config: str) -> matchmaker.Loaded:
    (tmp_path / "negotiator.config").write_text(config + "NEGOTIATOR_INTERVAL = 300\n")
    (tmp_path / "slots.ad").write_text(SLOTS)
    (tmp_path / "jobs.ad").write_text(_jobs().replace("JobStatus = 1", "JobStatus = 1\nSimJobDuration = 900"))
    return matchmaker.load(tmp_path / "negotiator.config", tmp_path / "slots.ad", tmp_path / "jobs.ad")


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_simulation_never_explains_and_its_series_is_the_explained_one(tmp_path, monkeypatch, name) -> None:
    loaded = _loaded(tmp_path, CONFIGS[name])
    plain = list(matchmaker.simulate(loaded, start=NOW, duration=3600, interval=300, seed=3))

    calls = []
    real = negotiator.negotiate

    def explaining(*args, **kwargs):
        calls.append(kwargs.get("explain"))
        kwargs["explain"] = True
        return real(*args, **kwargs)

    monkeypatch.setattr("matchmaker.cycle.session.negotiate", explaining)
    explained = list(matchmaker.simulate(loaded, start=NOW, duration=3600, interval=300, seed=3))
    assert calls and set(calls) == {False}  # the simulation asked for no explanations
    assert explained == plain

    def refuse(*args, **kwargs):
        raise AssertionError("a simulation explained a rejection")

    monkeypatch.undo()
    monkeypatch.setattr(pie, "explain_rejection", refuse)
    monkeypatch.setattr(ordered, "explain_rejection", refuse)
    assert list(matchmaker.simulate(loaded, start=NOW, duration=3600, interval=300, seed=3)) == plain


# Jobs whose Requirements draw: each evaluation of a pair takes the next random number.
DRAWING = _jobs().replace("Requirements = true", "Requirements = random(100) < 60")


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_explaining_draws_nothing_the_matching_would_see(name: str, seed: int) -> None:
    """An explanation evaluates the request against the slots again, which draws when its
    Requirements call random(); the cycle's later draws must be those of a cycle that did
    not explain, so explaining never changes a match."""
    from classad.evaluate import seeded_random

    def run(explain: bool):
        knobs = Knobs.from_string(CONFIGS[name])
        cfg = policy_params(knobs)
        settings = replace(Settings.from_knobs(knobs), priority_policy=cfg if cfg.name != "htcondor" else None)
        runner = make_runner(cfg) if cfg.name != "htcondor" else None
        pool = pool_from_ads([a for a, _ in parse_old_ads(SLOTS)], [a for a, _ in parse_old_ads(DRAWING)])
        with seeded_random(seed):
            return negotiate(pool, settings, StaticPriorities({}), NOW, runner=runner, ledger={}, explain=explain)

    told, silent = run(True), run(False)
    assert any(r.mechanism in ("requirements", "unavailable") for r in told.history)
    assert silent.matches == told.matches
    assert [(r.job, r.reason) for r in silent.history] == [(r.job, r.reason) for r in told.history]
