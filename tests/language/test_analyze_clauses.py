"""``classad.analyze``: conjunct splitting and per-clause values, against the oracle.

Each clause alone decides a match exactly as an ad whose Requirements is that clause
does in HTCondor's library (``ClassAd.matches``); the whole expression agrees with
``symmetricMatch`` both ways; splitting keeps every clause, in order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from classad.ad import ClassAd
from classad.analyze import TRUE, analyze_clauses, split_conjuncts
from classad.parser import parse_expr
from classad.unparse import unparse

CLAUSES = [
    "TARGET.Memory >= RequestMemory",
    "TARGET.HasDocker",
    "TARGET.HasDocker =?= true",
    "Cpus > 2",
    '(TARGET.Arch == "X86_64" || TARGET.Arch == "ARM")',
    "MY.RequestCpus <= TARGET.Cpus",
    "TARGET.Memory / 0 > 1",
    "undefined",
    "isUndefined(TARGET.Disk)",
    'TARGET.Name != "s1"',
    "(Cpus >= 1 && Memory > 100)",
    "1",
    '"yes"',
]
ARCH = st.sampled_from(['"X86_64"', '"ARM"', "undefined", "3"])


@st.composite
def pair(draw):
    clauses = draw(st.lists(st.sampled_from(CLAUSES), min_size=1, max_size=4))
    job = (
        f"[RequestMemory = {draw(st.sampled_from([512, 2048, 9000]))}; "
        f"RequestCpus = {draw(st.integers(1, 4))}; Requirements = {' && '.join(clauses)}]"
    )
    docker = draw(st.sampled_from(["", "HasDocker = true;", "HasDocker = false;", 'HasDocker = "x";']))
    slot = (
        f'[Name = "s{draw(st.integers(1, 2))}"; Memory = {draw(st.sampled_from([1024, 4096]))}; '
        f"Cpus = {draw(st.integers(1, 4))}; Arch = {draw(ARCH)}; {docker} "
        f"Requirements = {draw(st.sampled_from(['true', 'TARGET.RequestCpus <= Cpus', 'START']))}; "
        f"START = TARGET.RequestMemory < Memory]"
    )
    return clauses, job, slot


def test_split_flattens_and_chains_only():
    node = parse_expr("(a && (b && c)) && (d || e) && !(f && g)")
    assert [c.text for c in split_conjuncts(node)] == ["a", "b", "c", "(d || e)", "!(f && g)"]
    assert split_conjuncts(None) == []


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(pair())
def test_each_clause_decides_as_the_oracle(oracle, p):
    clauses, job_text, slot_text = p
    job, slot = ClassAd(job_text), ClassAd(slot_text)
    results = analyze_clauses(job, slot)
    assert [r.conjunct.text for r in results] == [unparse(parse_expr(c)) for c in _flat(clauses)]
    theirs_slot = oracle.ClassAd(slot_text)
    for r in results:
        probe = oracle.ClassAd(job_text)
        probe["Requirements"] = oracle.ExprTree(r.conjunct.text)
        assert (r.outcome == TRUE) == bool(theirs_slot.matches(probe)), r.conjunct.text  # probe.Requirements
    whole = all(r.outcome == TRUE for r in results) and all(r.outcome == TRUE for r in analyze_clauses(slot, job))
    assert whole == bool(oracle.ClassAd(job_text).symmetricMatch(theirs_slot))


def _flat(clauses):
    return [c.text for text in clauses for c in split_conjuncts(parse_expr(text))]
