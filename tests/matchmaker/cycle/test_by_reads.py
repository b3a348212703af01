"""ByReads: a result is found again only for a request giving the same values to the names
its computation read (hand cases over negotiation copies of ads)."""

from __future__ import annotations

from classad.ad import ClassAd
from matchmaker.cycle.build_reuse import ByReads, shape_token
from matchmaker.cycle.ephemeral import NegotiationAd


def _req(text: str) -> NegotiationAd:
    return NegotiationAd(ClassAd(text))


def test_found_only_for_the_same_values_of_the_names_read():
    by = ByReads()
    by.put("k", _req('[Owner = "ann"; Prio = 2; Other = 7]'), ["owner", "prio", "owner"], "ann-2")
    by.put("k", _req('[Owner = "bob"; Cpus = 4]'), ["cpus"], "cpus-4")
    assert by.get("k", _req('[Owner = "ann"; Prio = 2; Other = 8]')) == (True, "ann-2")  # Other not read
    assert by.get("k", _req('[Owner = "ann"; Prio = 3]')) == (False, None)
    assert by.get("k", _req('[Owner = "ann"; Prio = 2.0]')) == (False, None)  # a real is not an integer
    assert by.get("k", _req('[Owner = "ann"]')) == (False, None)  # Prio missing
    assert by.get("k", _req('[Owner = "zed"; Cpus = 4]')) == (True, "cpus-4")  # the second set of names
    assert by.get("k", _req("[Cpus = 5]")) == (False, None)
    assert by.get("other key", _req('[Owner = "ann"; Prio = 2]')) == (False, None)


def test_reals_are_told_apart_bit_for_bit():
    by = ByReads()
    by.put("k", _req("[X = 0.0]"), ["x"], "zero")
    assert by.get("k", _req("[X = 0.0]")) == (True, "zero")
    assert by.get("k", _req("[X = -0.0]")) == (False, None)


def test_the_names_compared_are_logged_in_order():
    by = ByReads()
    by.put("k", _req("[A = 1; B = 2]"), ["b", "a"], "r")
    req = _req("[A = 1; B = 2]")
    req.reads = []
    assert by.get("k", req) == (True, "r")
    assert req.reads == ["b", "a"]
    req.reads = []
    assert by.get("never kept", req) == (False, None)
    assert req.reads == []


def test_shape_tokens_tell_literals_apart_only_from_expressions():
    by = ByReads(shape_token)
    by.put("k", _req("[A = 1]"), ["a"], False)
    assert by.get("k", _req('[A = "any literal"]')) == (True, False)
    assert by.get("k", _req("[A = random(2)]")) == (False, None)
    assert by.get("k", _req("[B = 1]")) == (False, None)
