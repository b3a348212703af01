"""What the claims know of the ads they write, so that making their records looks at less.

* :meth:`Carried.derived`: a slot ad the claims wrote from another (a split, a claim, a
  dynamic slot given back) with plain values holds no expression its base lacks, so it is
  steady (no expression draws a random number) when its base is; otherwise its
  steadiness is found by looking, as for any ad.  The reference is a fresh
  :class:`Carried` that never heard of the base.
* :meth:`Job.with_ad`: a job's record for a rewritten copy of its ad keeps the identity,
  submitter and source the record had, as :func:`make_jobs` would read them again.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from classad import ClassAd
from matchmaker.cycle.carry import Carried
from matchmaker.pool.ads import make_jobs
from matchmaker.pool.partition import with_values
from matchmaker.simulate.jobs import idle_record

SETTINGS = settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))

# Attribute texts: literals, an expression, and expressions that draw (random) or may (eval).
_TEXTS = ("1", '"x"', "Cpus * 2", "random(3)", 'eval("1")', "true", 'TARGET.Owner =?= "a"')
_NAMES = ("Cpus", "Memory", "Rank", "Start", "Weight")
_WRITES = st.dictionaries(
    st.sampled_from(("Cpus", "Memory", "Name", "State", "RemoteUser")),
    st.one_of(st.integers(-3, 3), st.floats(allow_nan=False, width=32), st.text("ab", max_size=2), st.booleans()),
    max_size=4,
)


def _slot(texts: list[str]) -> ClassAd:
    body = "; ".join(f"{n} = {t}" for n, t in zip(_NAMES, texts))
    return ClassAd(f'[Name = "slot1@h"; {body}]').compact()


@SETTINGS
@given(
    st.lists(st.sampled_from(_TEXTS), min_size=len(_NAMES), max_size=len(_NAMES)),
    st.lists(st.sampled_from(_NAMES), max_size=3, unique=True),
    _WRITES,
    st.sampled_from([None, "random(2)", "Cpus"]),
)
def test_a_derived_ad_is_as_steady_as_a_fresh_look_says(
    texts: list[str], deleted: list[str], writes: dict, weight: str | None
) -> None:
    """Whatever the base holds, deletes and writes, the derived copy's steadiness is what
    a carry that never saw the base finds."""
    from classad.parser import parse_expr

    expr = None if weight is None else parse_expr(weight)
    base = _slot(texts)
    ad = with_values(base, writes, deleted=tuple(deleted))
    carry = Carried(expr)
    carry.derived(ad, base)
    assert carry.steady(ad) is Carried(expr).steady(ad)


def test_a_copy_of_a_drawing_ad_without_its_draw_is_found_steady_by_looking() -> None:
    """By hand: the base's Rank calls random(), so the base is not steady; the copy with
    Rank deleted holds only literals and ``Cpus * 2``, so it is -- found by looking, since
    the base says nothing of it.  A copy that keeps Rank is not."""
    base = _slot(["1", "2", "random(3)", "Cpus * 2", "1"])
    carry = Carried()
    without = with_values(base, {"State": "Claimed"}, deleted=("Rank",))
    kept = with_values(base, {"State": "Claimed"})
    carry.derived(without, base)
    carry.derived(kept, base)
    assert carry.steady(base) is False
    assert carry.steady(without) is True
    assert carry.steady(kept) is False


@SETTINGS
@given(
    st.integers(0, 10**6),
    st.integers(0, 99),
    st.sampled_from(["jobs.ads:12", "jobs.ads", "a:b:7", "<stdin>:3", "x:"]),
    st.sampled_from([1, 2]),
)
def test_a_rewritten_job_keeps_what_make_jobs_reads(cluster: int, proc: int, source: str, status: int) -> None:
    """The record ``with_ad`` makes equals the record :func:`make_jobs` makes of the same
    ad and source, field by field (its id ``cluster.proc``, its submitter, its source)."""
    ad = ClassAd(f'[ClusterId = {cluster}; ProcId = {proc}; User = "alice@example.org"; JobStatus = {status}]')
    (record,) = make_jobs([(ad, source)])
    record.id  # noqa: B018 -- the id made once, then carried
    rewritten = with_values(ad, {"JobStatus": 1, "RemoteHost": "slot1@h"}, equal_values=False)
    (fresh,) = make_jobs([(rewritten, source)])
    got = record.with_ad(rewritten, 1)
    assert (got.ad, got.id, got.cluster, got.proc, got.submitter, got.status, got.source) == (
        fresh.ad,
        fresh.id,
        fresh.cluster,
        fresh.proc,
        fresh.submitter,
        fresh.status,
        fresh.source,
    )
    idle = idle_record(record, 1700000600.0)
    assert (idle.id, idle.submitter, idle.status, idle.source) == (fresh.id, fresh.submitter, 1, fresh.source)
    # idle since then, stamped in whole seconds as the schedd does
    assert (idle.ad.plain("jobstatus"), idle.ad.plain("enteredcurrentstatus")) == (1, 1700000600)


def test_slot_records_made_from_an_index_are_the_records_moved_there() -> None:
    """``make_slots(..., first_index=7)`` numbers its records 7, 8, ... and is otherwise
    what records made from 0 and then moved there (``Slot.at``) are."""
    from matchmaker.pool.ads import make_slots

    ads = [
        (ClassAd('[Name = "slot1@h"; Cpus = 4; State = "Claimed"; RemoteUser = "a@b"]'), "slots:1"),
        (ClassAd('[Name = "slot2@h"; Cpus = 2; PartitionableSlot = true]'), "slots:9"),
    ]
    moved = [s.at(7 + k) for k, s in enumerate(make_slots(ads))]
    made = make_slots(ads, first_index=7)
    fields = ("ad", "name", "index", "weight", "remote", "customer", "state", "partitionable", "source")
    assert [[getattr(s, f) for f in fields] for s in made] == [[getattr(s, f) for f in fields] for s in moved]
    assert [s.index for s in made] == [7, 8]
