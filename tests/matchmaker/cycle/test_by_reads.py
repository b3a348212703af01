"""ByReads: a result is found again only for a request giving the same values to the names
its computation read (hand cases over negotiation copies of ads); a build's RequestForms reads
a request as the request itself does."""

from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from classad.ad import ClassAd
from matchmaker.cycle.build_reuse import ByReads, Found, FoundBuilds, RequestForms, shape_token, snapshot
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


def _replay(source, req: NegotiationAd, plan: list) -> list:
    """Run ``plan`` (lookups, puts and snapshots) with ``source`` as the request read, and
    give back what each step answered and what the request's log held after it."""
    by, found, out = ByReads(), FoundBuilds(), []
    for step, arg in plan:
        req.reads = [] if step != "unlogged" else None
        if step == "get":
            out.append(by.get(arg, source))
        elif step == "put":
            by.put(arg, req, ["owner", "cpus"], arg)
        elif step == "snapshot":
            out.append(snapshot(source, arg))
        elif step == "found":
            stored = Found.known_at(_NONE, _NONE, _NONE, [], [], [], _NONE, [False] * 4)
            stored.reads = snapshot(req, arg if type(arg) is list else ["cpus", "owner"])
            found.store("k", stored)
            out.append(found.find("k", source) is not None)
        else:
            out.append((by.get("k", source), found.find("k", source) is not None))
        out.append(req.reads)
    return out


_NONE = np.zeros(0, dtype=np.int64)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["get", "put", "snapshot", "found", "unlogged"]),
            st.sampled_from(["k", "j", ["owner", "cpus", "owner"], ["memory"], []]),
        ).filter(lambda s: (s[0] == "snapshot") == (type(s[1]) is list) or s[0] in ("found", "unlogged")),
        max_size=12,
    )
)
def test_request_forms_read_as_the_request_does(plan):
    """Through :class:`RequestForms` (each name read once, then remembered) the lookups,
    snapshots and stored-build finds give what they give through the request itself, and
    the request's log holds the same names in the same order after every step."""
    text = '[Owner = "ann"; Cpus = 4; Memory = Cpus * 2; Disk = -0.0]'
    req_a, req_b = _req(text), _req(text)
    assert _replay(RequestForms(req_a), req_a, plan) == _replay(req_b, req_b, plan)


def test_request_forms_log_a_remembered_name_again():
    req = _req('[Owner = "ann"; Cpus = 4]')
    forms = RequestForms(req)
    req.reads = []
    assert forms.plain("owner") == "ann" and forms.plain("owner") == "ann"
    assert forms.form("cpus") == 4 and forms.plain("cpus") == 4 and forms.plain("gone") is None
    assert req.reads == ["owner", "owner", "cpus", "gone"]  # form() reads without logging
