"""Jobs' Requirements against one slot ad, shared by the jobs that read the same literals
(:class:`matchmaker.cycle.verdicts.Verdicts`, used by the claims' leftovers).

The reference is the evaluation itself: every job of a sequence gets the verdict its own
evaluation gives, and with ``random`` in play the same numbers are drawn in the same order
as when every job is evaluated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from classad import ClassAd
from classad.evaluate import seeded_random
from classad.parser import parse_expr
from classad.unparse import unparse
from matchmaker.cycle.claims import _mutual_match, _requirements_true
from matchmaker.cycle.verdicts import Verdicts

SETTINGS = settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))

# Requirements texts: literals read of the job, a bare name the job may lack (then the
# slot's), an expression of the slot reading the job, a whole ad, draws and eval.
_REQUIREMENTS = (
    "TARGET.Memory >= RequestMemory",
    "(TARGET.HasDocker) && (TARGET.Memory >= RequestMemory) && (TARGET.Disk >= RequestDisk)",
    "Cpus >= 1 && RequestMemory < 500",
    "TARGET.Start",
    "TARGET.Memory > random(3000)",
    'eval("TARGET.Memory >= RequestMemory")',
    "isUndefined(TARGET.Missing) && RequestDisk =?= 10",
    "size(MY) > 0 || RequestMemory == 100",
    "RequestMemory == 100.0",
)
# Values a job holds for RequestMemory / RequestDisk: literals of several types (1 and 1.0
# and true are equal in Python, not in an evaluation), an expression, none.
_REQUEST = st.sampled_from(("100", "100.0", "true", "2048", "10", "RequestDisk * 10", "random(200)", None))
# Slot attributes: literals, an expression of the slot, one reading the job.
_SLOT_TEXTS = {
    "Memory": ("1024", "512.0", "Disk / 2", "TARGET.RequestMemory + 1"),
    "Disk": ("100", "true", "undefined"),
    "HasDocker": ("true", "false", None),
    "Start": ("true", "TARGET.RequestMemory < 1000", "random(2) == 1", None),
    "Cpus": ("2", "0", None),
}


def _ad(values: dict[str, str | None]) -> ClassAd:
    return ClassAd("[" + "; ".join(f"{n} = {t}" for n, t in values.items() if t is not None) + "]").compact()


# One ad per Requirements text: the jobs are copies of it, which share its tree (as the
# jobs of one submit file share theirs), with their own request values written.
_BASES = {text: _ad({"Requirements": text}) for text in _REQUIREMENTS}


def _copy(requirements: str, values: dict[str, str | None]) -> ClassAd:
    job = ClassAd(_BASES[requirements])
    for name, text in values.items():
        if text is not None:
            job[name] = parse_expr(text)
    return job.compact()


_JOB = st.builds(
    lambda req, mem, disk, cpus: _copy(req, {"RequestMemory": mem, "RequestDisk": disk, "Cpus": cpus}),
    st.sampled_from(_REQUIREMENTS),
    _REQUEST,
    _REQUEST,
    st.sampled_from(("4", "0", None)),
)
_SLOT = st.builds(
    lambda picks: _ad({**picks, "Requirements": "true"}),
    st.fixed_dictionaries({n: st.sampled_from(texts) for n, texts in _SLOT_TEXTS.items()}),
)


def _draws(job: ClassAd) -> bool:
    text = unparse(job.get_node("Requirements"))  # type: ignore[arg-type]
    return "random(" in text or "eval(" in text


def _evaluated(job: ClassAd, slot: ClassAd, calls: list[ClassAd]) -> bool:
    calls.append(job)
    node = job.get_node("Requirements")
    assert node is not None
    return _requirements_true(node, job, slot, 0.0)


@SETTINGS
@given(_SLOT, st.lists(_JOB, min_size=1, max_size=12), st.integers(0, 3))
def test_each_job_gets_the_verdict_of_its_own_evaluation_with_the_same_draws(
    slot: ClassAd, jobs: list[ClassAd], seed: int
) -> None:
    with seeded_random(seed):
        alone = [_requirements_true(j.get_node("Requirements"), j, slot, 0.0) for j in jobs]  # type: ignore[arg-type]
        after = [_requirements_true(j.get_node("Requirements"), j, slot, 0.0) for j in jobs]  # type: ignore[arg-type]
    verdicts = Verdicts(slot)
    calls: list[ClassAd] = []
    with seeded_random(seed):
        shared = [verdicts.verdict(j.get_node("Requirements"), j, lambda j=j: _evaluated(j, slot, calls)) for j in jobs]  # type: ignore[arg-type, misc]
        # The draws go on where the run without sharing left them.
        again = [_requirements_true(j.get_node("Requirements"), j, slot, 0.0) for j in jobs]  # type: ignore[arg-type]
    assert shared == alone
    assert again == after
    # An evaluation skipped is one whose tree draws nothing.
    drawing = [j for j in jobs if _draws(j)]
    assert all(any(c is j for c in calls) for j in drawing)


def _job(requirements: str, memory: str, disk: str = "10") -> ClassAd:
    return _ad({"Requirements": requirements, "RequestMemory": memory, "RequestDisk": disk})


_DOCKER = "(TARGET.HasDocker) && (TARGET.Memory >= RequestMemory)"


def _count(verdicts: Verdicts, job: ClassAd, slot: ClassAd, calls: list[ClassAd]) -> bool:
    node = job.get_node("Requirements")
    assert node is not None
    return verdicts.verdict(node, job, lambda: _evaluated(job, slot, calls))


def test_jobs_reading_the_same_literals_share_one_evaluation() -> None:
    """A slot without HasDocker refuses every job asking for it: the first job of each
    request size is evaluated, the others of that size are not (the tree is shared by ads
    that hold the same text only when parsed once: the jobs here hold one node)."""
    slot = _ad({"Memory": "1024", "Requirements": "true"})
    base = _job(_DOCKER, "100")
    node = base.get_node("Requirements")
    jobs = [base]
    for memory in (100, 100, 200, 100, 200):
        j = ClassAd(base)
        j["RequestMemory"] = memory
        jobs.append(j.compact())
    assert all(j.get_node("Requirements") is node for j in jobs)
    verdicts, calls = Verdicts(slot), []
    assert [_count(verdicts, j, slot, calls) for j in jobs] == [False] * 6
    assert [c.plain("requestmemory") for c in calls] == [100, 200]


def test_equal_values_of_other_types_are_not_shared() -> None:
    """``RequestMemory == 100`` is true for 100 and 100.0, false for true; the three are
    told apart (each evaluated) and each gets its own verdict."""
    slot = _ad({"Memory": "1024", "Requirements": "true"})
    base = _job("RequestMemory == 100", "100")
    jobs = [base]
    for value in (100.0, True, 100):
        j = ClassAd(base)
        j["RequestMemory"] = value
        jobs.append(j.compact())
    verdicts, calls = Verdicts(slot), []
    assert [_count(verdicts, j, slot, calls) for j in jobs] == [True, True, False, True]
    assert len(calls) == 3


def test_expressions_reached_by_the_evaluation_are_never_shared() -> None:
    """A job value that is an expression, a slot value read by the tree that is an
    expression (here one reading the job), a tree that draws: evaluated every time."""
    cases = [
        (_ad({"Memory": "1024", "Requirements": "true"}), _job("TARGET.Memory >= RequestMemory", "50 + 50")),
        (_ad({"Memory": "TARGET.RequestDisk * 100", "HasDocker": "true"}), _job(_DOCKER, "100")),
        (_ad({"Memory": "1024", "HasDocker": "true"}), _job("TARGET.Memory > random(2000)", "100")),
        (_ad({"Memory": "1024", "Start": "TARGET.RequestMemory < 500"}), _job("TARGET.Start", "100")),
        (_ad({"Memory": "1024", "HasDocker": "true"}), _job("RequestMemory < 500 && size(TARGET) > 0", "100")),
    ]
    for slot, job in cases:
        verdicts, calls = Verdicts(slot), []
        for _ in range(2):
            _count(verdicts, job, slot, calls)
        assert len(calls) == 2, str(job.get_node("Requirements"))


def test_a_bare_name_the_job_lacks_is_read_of_the_slot() -> None:
    """``Cpus >= 1`` in a job without Cpus reads the slot's Cpus: a literal there is part
    of what the verdict is shared for (the slot's Verdicts), an expression is not shared."""
    job = _job("Cpus >= 1", "100")
    for cpus, verdict, evaluations in (("2", True, 1), ("0", False, 1), ("TARGET.RequestMemory / 50", True, 2)):
        slot = _ad({"Cpus": cpus})
        verdicts, calls = Verdicts(slot), []
        assert [_count(verdicts, job, slot, calls) for _ in range(2)] == [verdict] * 2
        assert len(calls) == evaluations


def test_mutual_match_with_and_without_verdicts() -> None:
    """The slot's own Requirements is evaluated after a shared true verdict as after an
    evaluated one; a job without Requirements or a slot without one never matches."""
    slot = _ad({"Memory": "1024", "HasDocker": "true", "Requirements": "TARGET.RequestMemory <= 512"})
    verdicts = Verdicts(slot)
    for memory, expect in (("100", True), ("1000", False), ("100", True), ("600", False), ("600", False)):
        job = _job(_DOCKER, memory)
        assert _mutual_match(job, slot, 0.0) is expect
        assert _mutual_match(job, slot, 0.0, verdicts) is expect
    assert _mutual_match(_ad({"RequestMemory": "1"}), slot, 0.0, verdicts) is False
    assert _mutual_match(_job("true", "1"), _ad({"Memory": "1"}), 0.0, Verdicts(slot)) is False
