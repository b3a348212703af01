"""The classad2-shaped Python API: ClassAd mapping, ExprTree, Value, quote/unquote, matching."""

from __future__ import annotations

import datetime

import pytest

import classad
from classad import ClassAd, ExprTree, Value


def test_classad_is_a_case_insensitive_mapping_keeping_first_spelling() -> None:
    ad = ClassAd("[Cpus = 4; Memory = 2048]")
    assert ad["cpus"] == 4 and "CPUS" in ad
    ad["cpUS"] = 8
    assert list(ad) == ["Cpus", "Memory"] and ad["Cpus"] == 8
    del ad["MEMORY"]
    assert len(ad) == 1
    with pytest.raises(KeyError):
        ad["Memory"]


def test_values_follow_classad2_conventions() -> None:
    ad = ClassAd('[a = 1; b = a + 1; l = {1, a}; n = [x = 1]; s = "str"; u = undefined]')
    assert ad["a"] == 1 and ad["s"] == "str"
    assert isinstance(ad["b"], ExprTree) and repr(ad["b"]) == "a + 1"
    assert ad.eval("b") == 2
    assert ad["u"] is Value.Undefined
    lst = ad["l"]
    assert lst[0] == 1 and isinstance(lst[1], ExprTree)
    assert isinstance(ad["n"], ClassAd) and ad["n"]["x"] == 1
    with pytest.raises(KeyError):
        ad.eval("zz")
    with pytest.raises(KeyError):
        ad.lookup("zz")
    assert repr(ad.lookup("b")) == "a + 1"


def test_value_enum_matches_classad2_numbering() -> None:
    assert int(Value.Error) == 1 and int(Value.Undefined) == 2
    assert ExprTree("error").eval() is Value.Error


def test_build_from_dict_and_python_values() -> None:
    ad = ClassAd({"a": 1, "b": "x", "c": [1, 2], "d": {"k": 1.5}, "e": True})
    assert repr(ad) == '[ a = 1; b = "x"; c = { 1,2 }; d = [ k = 1.500000000000000E+00 ]; e = true ]'
    ad["t"] = datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
    assert ad["t"] == datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
    ad["x"] = ExprTree("a + 2")
    assert ad.eval("x") == 3


def test_eval_scope_and_target() -> None:
    my, target = ClassAd("[a = 1]"), ClassAd("[a = 3; b = 2]")
    assert ExprTree("a + b").eval(my, target) == 3
    assert ExprTree("TARGET.a").eval(my, target) == 3
    assert ExprTree("MY.a").eval(my) == 1


def test_matches_and_symmetric_match() -> None:
    # see docs/language.md, requirements
    assert ClassAd("[foo = 3]").matches(ClassAd("[requirements = other.foo == 3]")) is True
    assert ClassAd("[requirements = other.foo == 3]").matches(ClassAd("[foo = 3]")) is False
    assert ClassAd("[]").matches(ClassAd("[]")) is False
    job = ClassAd("[RequestCpus = 2; Requirements = TARGET.Cpus >= RequestCpus]")
    slot = ClassAd("[Cpus = 4; Requirements = TARGET.RequestCpus <= MY.Cpus]")
    assert job.symmetricMatch(slot) and slot.symmetricMatch(job)
    assert not job.symmetricMatch(ClassAd("[Cpus = 1; Requirements = true]"))
    assert ClassAd("[x = 1]").matches(ClassAd("[Requirements = 5]"))
    assert not ClassAd("[x = 1]").matches(ClassAd('[Requirements = "yes"]'))


def test_quote_and_unquote() -> None:
    assert classad.quote('a"b\\') == '"a\\"b\\\\"'
    assert classad.unquote('"a\\"b"') == 'a"b'
    assert classad.unquote(classad.quote("tab\there é")) == "tab\there é"


def test_pretty_and_one_line_printing() -> None:
    ad = ClassAd("[b = 2; a = 3]")
    assert repr(ad) == "[ a = 3; b = 2 ]"
    assert str(ad) == "\n    [\n        a = 3; \n        b = 2\n    ]"
    assert ad.printOld() == "a = 3\nb = 2\n"


def test_ads_read_from_text_are_equal_by_content() -> None:
    assert ClassAd("[a = 1; b = x + 1]") == ClassAd("[B = x + 1; a = 1]")
    assert ClassAd("[a = 1]") != ClassAd("[a = 2]")


def test_simplify_prints_like_classad_eval() -> None:
    assert repr(ExprTree("{a, a + 1}").simplify(ClassAd("[a = 1]"))) == "{ a,a + 1 }"
    assert repr(ExprTree("1.5 * 2").simplify()) == "3.000000000000000E+00"


def test_setting_an_integer_outside_64_bits_raises_overflow() -> None:
    """classad2 refuses ``ad[key] = 2**63`` (its binding's conversion overflows: "int too big
    to convert"), as it does -2**63 - 1 and such a value inside a list; both ends of the
    int64 range are stored as they are."""
    ad = ClassAd()
    ad["Top"] = 2**63 - 1
    ad["Bottom"] = -(2**63)
    assert ad.eval("Top") == 9223372036854775807
    assert ad.eval("Bottom") == -9223372036854775808
    for value in (2**63, -(2**63) - 1, [1, 2**64], {"Inner": 2**70}):
        with pytest.raises(OverflowError):
            ad["X"] = value
    assert "X" not in ad
