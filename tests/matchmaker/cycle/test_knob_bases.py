"""A knob rank over every row computed again for a later request of the cycle only on the
rows whose value may read the request (:func:`matchmaker.cycle.columnar_match._request_rows`),
the others taken from the first computation, is bit for bit what evaluating it over every
row gives; cycles are the same with and without it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st
from test_build_reuse import CYCLE, USERS
from test_row_results import _cycle, _pool, _settings

from classad.ad import ClassAd
from classad.columnar import AdTable, knob_rank_single
from classad.columnar.column import K_ERROR
from classad.parser import parse_expr
from matchmaker.cycle import columnar_match


@pytest.fixture(autouse=True)
def _small_tables(monkeypatch):
    """Bases for tables of any size (the cycles here have a few rows)."""
    monkeypatch.setattr(columnar_match, "_KNOB_BASE_ROWS", 0)


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
    every row for that request; and the cycle is the one made without bases."""
    kinds = [{**k, "draws": False} for k in kinds]
    pool = _pool(slots, kinds, queue, False)
    settings = _settings(config, weights, groups)
    real = columnar_match._RequestColumns.knob_rank_whole
    seen: list = []

    def whole(self, node):
        rank, error = real(self, node)
        col = self.knob(node, self.table.all_rows, shared=False)
        seen.append(
            ((rank.tobytes(), error.tobytes()), (knob_rank_single(col).tobytes(), (col.kind == K_ERROR).tobytes()))
        )
        return rank, error

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match._RequestColumns, "knob_rank_whole", whole)
        made = _cycle(pool, settings, eups)
    for got, fresh in seen:
        assert got == fresh
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match, "_request_rows", lambda node, table: None)
        assert _cycle(pool, settings, eups) == made


@pytest.mark.parametrize("match_engine", ["columnar"], indirect=True)
def test_bases_serve_later_requests(match_engine):
    """By hand: four users' requests against slots half of whose Rank reads the job's Owner
    and a third unclaimed: the default PRE_JOB_RANK is evaluated again on those rows alone
    for later requests (the test above is not empty), and the cycle is the one made without."""
    asked: list = []
    real = columnar_match._RequestColumns.knob

    def knob(self, node, at, shared=True):
        if not shared:
            asked.append(len(at))
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
    assert asked and all(0 < n < 9 for n in asked)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(columnar_match, "_request_rows", lambda node, table: None)
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
