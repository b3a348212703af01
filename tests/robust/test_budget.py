"""Evaluation budgets: memoised attributes, step, size and regular-expression limits.

Boundedness is shown by counting (steps, engine calls) or by a subprocess with
a generous time-out, never by asserting how long something took.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings, strategies as st
from support import ROOT

import classad
from classad import limits
from classad.evaluate import EvalState, eval_attribute
from classad.functions import pcre
from classad.values import ERROR, UNDEFINED


@pytest.fixture
def restore_limits():
    saved = limits.current()
    yield limits
    limits.configure(**saved)


def chain(n: int, first: str, step: str) -> classad.ClassAd:
    ad = classad.ClassAd()
    ad["e0"] = classad.ExprTree(first)
    for i in range(1, n + 1):
        ad[f"e{i}"] = classad.ExprTree(step.format(p=f"e{i - 1}"))
    return ad


def test_doubling_chain_has_the_exact_value():
    # e_i = e_(i-1) + e_(i-1) with e_0 = 1 is 2**i by definition.
    ad = chain(60, "1", "{p} + {p}")
    assert ad.eval("e60") == 2**60
    assert chain(60, "1.5", "{p} + {p}").eval("e60") == 1.5 * 2**60


def test_doubling_chain_costs_a_step_per_use(restore_limits):
    # 60 attributes, each used twice: far below a budget of 200 steps.
    limits.configure(eval_steps=200)
    assert chain(60, "1", "{p} + {p}").eval("e60") == 2**60


def test_random_is_never_memoised():
    ad = classad.ClassAd({"a": classad.ExprTree("random(1073741824)")})
    ad["differ"] = classad.ExprTree("a != a || a != a || a != a")
    assert ad.eval("differ") is True  # each use draws again, as in HTCondor


def test_values_depending_on_random_are_bounded_by_steps(restore_limits):
    # Nothing can be memoised here, so the chain is exponential: the step budget stops it.
    limits.configure(eval_steps=5000)
    ad = chain(40, "1", "{p} + {p} + random(1)")
    assert ad.evaluate("e40") is ERROR


def test_memo_is_per_context():
    # One state reused across two matches, as the matchmaker does: the value of
    # the job's attribute must follow the TARGET of each evaluation.
    job = classad.ClassAd("[ need = TARGET.Memory * 2; ok = need > 100 ]")
    small = classad.ClassAd("[ Memory = 10 ]")
    big = classad.ClassAd("[ Memory = 1000 ]")
    state = EvalState(job, small)
    assert eval_attribute(job, "ok", job.get_node("ok"), state) is False
    state.my, state.target = job, big
    assert eval_attribute(job, "ok", job.get_node("ok"), state) is True
    state.my, state.target = job, small
    assert eval_attribute(job, "need", job.get_node("need"), state) == 20


def test_circular_values_are_not_memoised(oracle):
    # Inside a's cycle b sees a as Undefined; that value of b must not be reused elsewhere.
    text = "[ a = b; b = (a is undefined) ? 1 : a + 10; c = {a, b, a + b}; d = a + b ]"
    for attr in "abcd":
        ours = classad.ExprTree(attr).simplify(classad.ClassAd(text))
        assert repr(ours) == repr(oracle.ExprTree(attr).simplify(oracle.ClassAd(text))), attr


def test_differential_memo_against_oracle(oracle):
    # A small graph with shared uses, cycles and both MY and TARGET references.
    text = (
        "[ a = b + c; b = c * 2; c = TARGET.x + 1; d = a + a + b; e = f; f = e; "
        "g = isUndefined(e) ? d : 0; h = {d, g, TARGET.y} ]"
    )
    target = "[ x = 3; y = MY.d ]"
    for attr in "abcdefgh":
        ours = classad.ExprTree(attr).simplify(classad.ClassAd(text), classad.ClassAd(target))
        theirs = oracle.ExprTree(attr).simplify(oracle.ClassAd(text), oracle.ClassAd(target))
        assert repr(ours) == repr(theirs), attr


_names = [f"a{i}" for i in range(6)]
_operand = st.one_of(
    st.sampled_from(_names),
    st.sampled_from(["1", "2", "TARGET.t", "undefined"]),
    st.sampled_from([f"TARGET.{n}" for n in _names]),
)
_expr = st.builds(
    lambda x, op, y: f"{x} {op} {y}", _operand, st.sampled_from(["+", "*", "-", "=?="]), _operand
) | st.builds(lambda c, x, y: f"({c} is undefined) ? {x} : {y}", _operand, _operand, _operand)


@settings(max_examples=60, deadline=None)
@given(st.lists(_expr, min_size=6, max_size=6), st.lists(_expr, min_size=6, max_size=6))
def test_memo_matches_the_oracle_on_random_graphs(oracle, mine, theirs_ad):
    # Attribute graphs with shared uses, cycles and references to the other ad.
    my_text = "[ " + "; ".join(f"{n} = {e}" for n, e in zip(_names, mine)) + "; t = 7 ]"
    tg_text = "[ " + "; ".join(f"{n} = {e}" for n, e in zip(_names, theirs_ad)) + "; t = 5 ]"
    for n in _names:
        ours = classad.ExprTree(n).simplify(classad.ClassAd(my_text), classad.ClassAd(tg_text))
        theirs = oracle.ExprTree(n).simplify(oracle.ClassAd(my_text), oracle.ClassAd(tg_text))
        assert repr(ours) == repr(theirs), (n, my_text, tg_text)


def test_depth_limit_still_applies():
    ad = classad.ClassAd()
    ad["x0"] = 0
    for i in range(1, 1001):
        ad[f"x{i}"] = classad.ExprTree(f"x{i - 1} + 1")
    assert ad.evaluate("x1000") is ERROR
    assert ad.eval("x300") == 300


# ---- sizes built by functions ----------------------------------------------------------------


def test_strcat_doubling_is_error():
    ad = chain(60, '"ab"', "strcat({p}, {p})")
    assert ad.evaluate("e60") is ERROR
    assert ad.eval("e10") == "ab" * 1024


def test_string_cap_is_exact(restore_limits):
    limits.configure(max_string=100)
    assert classad.ExprTree('size(strcat("%s", "%s"))' % ("a" * 50, "b" * 50)).eval() == 100
    assert classad.ExprTree('strcat("%s", "%s")' % ("a" * 50, "b" * 51)).evaluate() is ERROR
    assert classad.ExprTree('join(",", {"%s", "%s"})' % ("a" * 50, "b" * 50)).evaluate() is ERROR
    assert classad.ExprTree('replaceAll("a", "%s", "xy")' % ("a" * 60)).evaluate() is ERROR


def test_list_cap(restore_limits):
    limits.configure(max_list=10)
    assert classad.ExprTree('size(split("a b c d e f g h i j"))').eval() == 10
    assert classad.ExprTree('split("a b c d e f g h i j k")').evaluate() is ERROR


def test_allocation_budget_is_per_evaluation(restore_limits):
    limits.configure(alloc_budget=1000)
    ad = classad.ClassAd({"s": "x" * 300})
    ad["t"] = classad.ExprTree("size(strcat(s, s))")
    ad["u"] = classad.ExprTree("size(strcat(s, s)) + size(strcat(s, s, s))")
    assert ad.eval("t") == 600
    assert ad.evaluate("u") is ERROR  # 600 + 900 characters built in one evaluation
    assert ad.eval("t") == 600  # a new evaluation has a new budget


def test_work_on_arguments_is_counted(restore_limits, oracle):
    """A function's work grows with its arguments: list elements (and string characters / 16)
    passed to functions count against ``arg_work``; within it, values are HTCondor's."""
    limits.configure(arg_work=1000)
    text = 'member("zz", {%s}) + member(3, {%s})' % (", ".join(['"a"'] * 400), ", ".join(["3"] * 400))
    assert classad.ExprTree(text).eval() == oracle.ExprTree(text).eval()  # 800 elements
    three = text + ' + member("q", {%s})' % ", ".join(['"b"'] * 400)
    assert classad.ExprTree(three).evaluate() is ERROR  # 1,200 elements
    assert classad.ExprTree(text).eval() == oracle.ExprTree(text).eval()  # a new evaluation


@pytest.mark.slow
def test_repeated_member_over_a_huge_list_ends_in_error():
    """The audit's reproducer, as a step count: a 500,000-element list searched by every
    link of a chain that random() keeps from being remembered."""
    lines = [
        "B = strcat(%s)" % ", ".join(['"a,"'] * 1000),
        'L = split(strcat(%s), ",")' % ", ".join(["B"] * 500),
        "e0 = random(2)",
    ]
    lines += [f'e{i} = member("zz", L) + e{i - 1} + e{i - 1}' for i in range(1, 9)]
    ad = classad.ClassAd("[" + "; ".join(lines) + "]")
    assert ad.evaluate("e1") is not ERROR  # one search of 500,000 elements fits
    assert ad.evaluate("e8") is ERROR  # 255 searches do not


# ---- regular expressions ---------------------------------------------------------------------

CATASTROPHIC = 'regexp("(a|aa)+$", "%s")' % ("a" * 40 + "b")


def test_catastrophic_regexp_is_error(oracle):
    assert classad.ExprTree(CATASTROPHIC).evaluate() is ERROR
    assert oracle.ExprTree(CATASTROPHIC).eval() == oracle.Value.Error


def test_hopeless_match_is_remembered(monkeypatch):
    subject = "a" * 41 + "b"
    expr = classad.ExprTree('regexp("(a|aa)+$", "%s")' % subject)
    assert expr.evaluate() is ERROR
    calls = []
    real = pcre._search
    monkeypatch.setattr(pcre, "_search", lambda *a: calls.append(a) or real(*a))
    assert expr.evaluate() is ERROR
    assert calls == []  # answered without running the engine again


def test_regex_budget_is_shared_by_one_evaluation(monkeypatch, restore_limits):
    limits.configure(regex_eval_seconds=0.05, regex_call_seconds=0.05)
    seen = []
    real = pcre._search
    monkeypatch.setattr(pcre, "_search", lambda *a: seen.append(a) or real(*a))
    # Ten different catastrophic searches in one evaluation: once the budget is
    # spent the rest are Error without reaching the engine.
    parts = " + ".join('ifThenElse(isError(regexp("(a|aa)+$%d", "%s")), 1, 0)' % (i, "a" * 45 + "b") for i in range(10))
    assert classad.ExprTree(parts).eval() == 10
    assert len(seen) < 10


@pytest.mark.slow
def test_fifteen_ads_with_a_catastrophic_regexp_finish():
    # Before the budget each took 2 s (30 s in all); a generous time-out proves the bound.
    script = textwrap.dedent("""
        import classad
        from classad.formats import parseAds
        text = "".join('R = regexp("(a|aa)+$", "%s")\\n\\n' % ("a" * (40 + i) + "b") for i in range(15))
        print(sum(ad.evaluate("R") is classad.Value.Error for ad in parseAds(text)))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=25)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "15"


def test_configure_rejects_nonsense():
    with pytest.raises(TypeError):
        limits.configure(no_such_limit=1)
    with pytest.raises(ValueError):
        limits.configure(max_string=0)
    assert UNDEFINED is classad.Value.Undefined
