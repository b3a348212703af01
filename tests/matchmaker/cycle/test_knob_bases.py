"""A knob rank over every row computed again for a later request of the cycle only on the
rows whose value may read the request (:func:`matchmaker.cycle.columnar_match._request_split`),
the others taken from the first computation, is bit for bit what evaluating it over every
row gives; cycles are the same with and without it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st
from test_build_reuse import CYCLE, USERS, _job_ads, _slot_ad
from test_row_results import _cycle, _pool, _settings

from classad.ad import ClassAd
from classad.columnar import AdTable, knob_rank_array, knob_rank_single
from classad.columnar.column import K_ERROR
from classad.parser import parse_expr
from matchmaker.cycle import columnar_match
from matchmaker.pool.ads import pool_from_ads

# Knob ranks reading the slots' Rank (an expression on some rows), names some rows lack
# (looked up in the job), conditionals and Elvis; and one reading the job directly.
KNOBS = [
    "",  # the default NEGOTIATOR_PRE_JOB_RANK
    "NEGOTIATOR_POST_JOB_RANK = MY.Rank * 2 + (Foo ?: KFlops) - (RemoteOwner =?= UNDEFINED ? 1 : 0)\n",
    "NEGOTIATOR_PRE_JOB_RANK = Rank > 5 ? Memory : -(Cpus / (KFlops - 1000))\n",
    "PREEMPTION_REQUIREMENTS = True\nPREEMPTION_RANK = RemoteOwner =?= UNDEFINED ? Rank : Cpus\n",
    'NEGOTIATOR_PRE_JOB_RANK = TARGET.Owner == "abe" ? Cpus : -Cpus\n',
]


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@hsettings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CYCLE, config=st.sampled_from(KNOBS))
def test_knob_ranks_from_a_base_are_what_every_row_gives(
    match_engine, slots, kinds, queue, policy, eups, weights, groups, config
):
    """Every knob rank over every row equals, bit for bit, the knob evaluated afresh over
    every row for that request (negated, in single precision); and the cycle is the one made without bases."""
    kinds = [{**k, "draws": False} for k in kinds]
    pool = _pool(slots, kinds, queue, False)
    settings = _settings(config, weights, groups)

    def fresh(self, node):
        col = self.knob(node, self.table.all_rows, shared=False)
        return (-knob_rank_single(col)).tobytes(), (col.kind == K_ERROR).tobytes()

    _each_rank_is_fresh(pool, settings, eups, "knob_rank_whole", fresh)


def _each_rank_is_fresh(pool, settings, eups, method: str, fresh) -> None:
    """Every rank ``_RequestColumns.<method>`` gives in a cycle is, bit for bit, what
    ``fresh`` (called with the same arguments) evaluates; and the cycle is the one made
    without request splits."""
    real = getattr(columnar_match._RequestColumns, method)
    seen: list = []

    def checked(self, *args):
        rank, error = real(self, *args)
        seen.append(((rank.tobytes(), error.tobytes()), fresh(self, *args)))
        return rank, error

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match._RequestColumns, method, checked)
        made = _cycle(pool, settings, eups)
    for got, expected in seen:
        assert got == expected
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match, "_request_split", lambda node, table: None)
        assert _cycle(pool, settings, eups) == made


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_bases_serve_later_requests(match_engine):
    """By hand: four users' requests against slots half of whose Rank reads the job's Owner
    and a third unclaimed: the default PRE_JOB_RANK is evaluated again on the first rows
    alone for later requests (the unclaimed rows read the request's RemoteOwner, which no
    request has; the test above is not empty), and the cycle is the one made without."""
    asked: list = []
    real = columnar_match._RequestColumns.knob

    def knob(self, node, at, shared=True):
        if not shared:
            asked.append(at.tolist())
        return real(self, node, at, shared)

    slots = [
        {
            "cpus": 1 + i % 3,
            "memory": 1024,
            "idle": 1000,
            "arch": "X86_64",
            "start": 0,
            "rank": i % 2,
            "user": None if i % 3 == 0 else USERS[i % 4],
            "kind": "static",
            "busy": True,
        }
        for i in range(9)
    ]
    kinds = [{"user": u, "cpus": 1, "memory": 512, "req": 0, "limits": 0, "prio": 0, "draws": False} for u in USERS]
    pool = _pool(slots, kinds, [(u, 1) for u in range(4)], False)
    settings = _settings("", False, False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match._RequestColumns, "knob", knob)
        made = _cycle(pool, settings, [1.0] * 4)
    # The rows whose Rank reads the job (the odd ones); not the unclaimed rows (0, 3, 6),
    # which lack RemoteOwner as every request does.
    assert asked and all(rows == [1, 3, 5, 7] for rows in asked)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match, "_request_split", lambda node, table: None)
        assert _cycle(pool, settings, [1.0] * 4) == made


def _table(*ads: dict) -> AdTable:
    out = []
    for d in ads:
        ad = ClassAd({k: v for k, v in d.items() if not isinstance(v, tuple)})
        for k, v in d.items():
            if isinstance(v, tuple):
                ad.set_node(k, parse_expr(v[0]))
        out.append(ad)
    return AdTable(out)


def test_request_rows_by_hand():
    """The default PRE_JOB_RANK may read the request where the slot's Rank is an expression
    or RemoteOwner is missing; a knob naming TARGET, a special name or calling a function
    is not analysed."""
    table = _table(
        {"Rank": 0.0, "RemoteOwner": "ann", "Cpus": 1, "Memory": 10},
        {"Rank": ('TARGET.Owner == "ann" ? 10 : 0',), "RemoteOwner": "ann", "Cpus": 1, "Memory": 10},
        {"Rank": 0.0, "Cpus": 1, "Memory": 10},
        {"Rank": 0.0, "RemoteOwner": "bea", "Cpus": ("2 * 1",), "Memory": 10},
        {"Rank": 1.0, "RemoteOwner": "bea", "Cpus": 4, "Memory": 20},
    )
    pre = parse_expr("(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory")
    assert columnar_match._request_rows(pre, table).tolist() == [1, 2, 3]
    assert columnar_match._request_rows(parse_expr("Memory * 2"), table).tolist() == []
    for text in ("TARGET.JobPrio + Cpus", "random(3) + Cpus", "CurrentTime - Memory", "Cpus + {1, 2}"):
        assert columnar_match._request_rows(parse_expr(text), table) is None


# Knobs reading the slots' Rank and a name no slot holds (looked up in the job), which the
# jobs hold as one of a few literals (or lack): later requests holding the first one's literal
# take those rows from the base, the others evaluate them again; on the rows whose Rank is
# an expression, the second reads the name only for some requests.
TAGGED = [
    'NEGOTIATOR_PRE_JOB_RANK = 10 * My.Rank + (Tag =?= "x" ? 5 : 0) - (Tag ?: 1)\n',
    'NEGOTIATOR_PRE_JOB_RANK = My.Rank > 0 ? My.Rank : (Tag =?= "x" ? 5 : 0) - (Tag ?: 1)\n',
]


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
@hsettings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    **CYCLE,
    tags=st.lists(st.sampled_from([None, '"x"', '"y"', "3", "Owner"]), min_size=8, max_size=8),
    config=st.sampled_from(TAGGED),
)
def test_requests_reading_a_name_the_rows_lack(
    match_engine, slots, kinds, queue, policy, eups, weights, groups, tags, config
):
    """Every knob rank a build takes (computed from a base, kept for the cycle or computed
    afresh) is the knob evaluated afresh on its rows for that request, bit for bit (negated
    and in single precision, as every path gives it); and the
    cycle is the one made without bases."""
    kinds = [{**k, "draws": False} for k in kinds]
    jobs = _job_ads(kinds, queue)
    for ad in jobs:
        tag = tags[(ad.evaluate("ClusterId") - 1) % len(tags)]
        if tag is not None:
            ad.set_node("Tag", parse_expr(tag))
    pool = pool_from_ads([_slot_ad(i, d) for i, d in enumerate(slots)], jobs)
    settings = _settings(config, weights, groups)

    def fresh(self, node, at):
        col = self.knob(node, at, shared=False)
        # Negated (a sort key), in single precision: each value the number a double rounded
        # to single precision holds (the scalar path's), negated.
        single = -knob_rank_single(col)
        assert (single.astype(np.float64).view(np.int64) == (-knob_rank_array(col)).view(np.int64)).all()
        return single.tobytes(), (col.kind == K_ERROR).tobytes()

    _each_rank_is_fresh(pool, settings, eups, "knob_rank", fresh)


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_a_literal_taken_from_the_base_is_read(match_engine):
    """By hand: abe's request (Tag "x") makes the base; ann's first request, also Tag "x",
    takes the rows lacking Tag from it and reads Tag nowhere else (its Rank rows give 1), yet
    what it keeps is known to have read Tag, so that ann's next request, Tag "y", is not
    served the first one's ranks (5 on the odd slots): it takes an even slot."""
    slot = {"cpus": 1, "memory": 1024, "idle": 1000, "arch": "X86_64", "start": 0, "user": None, "kind": "static"}
    slots = [{**slot, "rank": 1 - i % 2} for i in range(6)]  # Rank reads the Owner on the even slots
    kinds = [
        {"user": user, "cpus": 1, "memory": 512, "req": 0, "limits": 0, "prio": prio, "draws": False}
        for user, prio in (("a.abe@d", 0), ("a.ann@d", 1), ("a.ann@d", 0))
    ]
    jobs = _job_ads(kinds, [(0, 1), (1, 1), (2, 1)])
    for ad, tag in zip(jobs, ("x", "x", "y")):
        ad["Tag"] = tag
    pool = pool_from_ads([_slot_ad(i, d) for i, d in enumerate(slots)], jobs)
    settings = _settings('NEGOTIATOR_PRE_JOB_RANK = My.Rank > 0 ? 1 : (Tag =?= "x" ? 5 : 0)\n', False, False)
    eups = [10.0, 1.0, 500.0, 500.0]  # abe first
    made = _cycle(pool, settings, eups)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match, "_request_split", lambda node, table: None)
        assert _cycle(pool, settings, eups) == made
    # Tag "y" ranks 1 on the even slots (Rank 10 for ann), 0 on the odd ones (5 for Tag "x").
    assert {m.job: int(m.slot[4]) % 2 for m in made[0] if m.submitter == "a.ann@d"} == {"2.0": 1, "3.0": 0}
