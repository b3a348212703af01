"""Slot and job records read without asking the ad one name at a time.

``make_slots`` reads everything a slot record needs in one look (``stored_of``) and
``rewritten_job`` gives the record of a job ad whose rewritten attributes a record does
not read (the claims' ``JobStatus``, ``RemoteHost`` and start dates).  The references
here are the definitions written out attribute by attribute (docs/negotiation.md,
charging usage): ``Name``; the customer is ``AccountingGroup``, else ``RemoteUser``; the
remote user the first non-empty string of ``PreemptingAccountingGroup``,
``PreemptingUser``, ``AccountingGroup``, ``RemoteUser``; the state ``State`` lower-cased;
partitionable when ``PartitionableSlot`` is true; an ad without a ``Name`` string (empty
or not a string) is refused.  Each is evaluated, when it is an
expression, in that order and only when needed, so expressions that call ``random()``
draw the same numbers in both.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import classad
from classad import ast
from classad.errors import FormatError
from classad.evaluate import evaluate_top, new_state, seeded_random
from classad.parser import parse_expr
from matchmaker.pool import ads, partition
from matchmaker.pool.ads import make_jobs, make_slots, rewritten_job
from matchmaker.pool.partition import with_values

SETTINGS = settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))

# Texts a string attribute may hold: plain strings (empty too), non-strings, expressions
# (one draws a random number), and literals that are not plain values.
_STRINGS = (
    '"alice@x"',
    '"bob@x"',
    '""',
    "1",
    "true",
    "undefined",
    'strcat("c", "@x")',
    'ifThenElse(random() < 0.5, "r@x", "")',
    "error",
)
_TRUTH = ("true", "false", "1", "0", '"yes"', "undefined", "random() < 0.5", "1 == 1")
_STATES = ('"Claimed"', '"Unclaimed"', '"Preempting"', "undefined", 'toLower("MATCHED")', "3")


def _reference(ad: classad.ClassAd, source: str, expr: object = None, force: bool = False) -> tuple:
    """The slot record's fields, read the way the definitions say, one name at a time."""
    name = ads._string_attr(ad, "Name")
    customer = ads._string_attr(ad, "AccountingGroup") or ads._string_attr(ad, "RemoteUser")
    weight = ads.slot_weight(ad, slot_weight_expr=expr, force=force)  # type: ignore[arg-type]
    remote = ads.remote_user(ad)
    state = (ads._string_attr(ad, "State") or "").lower()
    return (name, customer, weight, remote, state, ads._is_true(ad, "PartitionableSlot"), source)


def _fields(slot: ads.Slot) -> tuple:
    return (slot.name, slot.customer, slot.weight, slot.remote, slot.state, slot.partitionable, slot.source)


_OPTIONAL = st.one_of(st.none(), st.sampled_from(_STRINGS))


@st.composite
def _slot_texts(draw) -> list[tuple[str, str]]:
    """A slot ad's attributes as (name, text); optional ones may be missing."""
    pairs = [("Name", draw(st.sampled_from(('"slot1@h"', 'strcat("slot", 2, "@h")', '""', "undefined"))))]
    for attr in ("AccountingGroup", "RemoteUser", "PreemptingAccountingGroup", "PreemptingUser"):
        text = draw(_OPTIONAL)
        if text is not None:
            pairs.append((attr, text))
    for attr, texts in (("State", _STATES), ("PartitionableSlot", _TRUTH)):
        if draw(st.booleans()):
            pairs.append((attr, draw(st.sampled_from(texts))))
    pairs.append(("Cpus", draw(st.sampled_from(("4", "2.5", "random(8)")))))
    if draw(st.booleans()):  # a compacted ad keeps a plain literal as its bare value
        pairs.append(("SlotWeight", draw(st.sampled_from(_SLOT_WEIGHTS))))
    return draw(st.permutations(pairs))


_SLOT_WEIGHTS = ("2", "2.5", "-1", "-0.0", "0", "true", "false", '"8"', "undefined", "error", "Cpus", "random(4)")


@SETTINGS
@given(
    family=st.lists(_slot_texts(), min_size=1, max_size=5),
    compacted=st.booleans(),
    seed=st.integers(0, 99),
    expr=st.sampled_from((None, "Cpus * 2", "SlotWeight")),
    force=st.booleans(),
)
def test_a_slot_record_reads_what_the_definitions_read(family, compacted: bool, seed: int, expr, force) -> None:
    """Records of ads of one attribute list (compacted: the layout's template holds the
    first ad's nodes) and of dict ads equal the field-by-field reading, with the same
    random draws: both run under one seed and must agree on every field (the weight under
    ``SLOT_WEIGHT`` and ``FORCE_NEGOTIATOR_SLOT_WEIGHT`` too, its ``SlotWeight`` read with
    the other names)."""
    weight_expr = None if expr is None else parse_expr(expr)
    tag = f"Tag{seed}_{len(family)}"

    def build() -> list[tuple[classad.ClassAd, str]]:
        out = []
        for k, pairs in enumerate(family):
            ad = classad.ClassAd.from_nodes(tuple((n, parse_expr(t)) for n, t in (*pairs, (tag, "1"))))
            if compacted:
                ad.compact()
            out.append((ad, f"f:{k + 1}"))
        return out

    pairs = build()
    with seeded_random(seed):
        want = [_reference(ad, source, weight_expr, force) for ad, source in pairs]
    with seeded_random(seed):
        if not all(w[0] for w in want):  # an ad without a Name: no records
            with pytest.raises(FormatError, match="no Name"):
                make_slots(build(), use_slot_weights=True, slot_weight_expr=weight_expr, force_slot_weight=force)
            return
        made = make_slots(build(), use_slot_weights=True, slot_weight_expr=weight_expr, force_slot_weight=force)
        got = [_fields(s) for s in made]
    assert got == want


_JOB_TEXTS = {
    "ClusterId": ("7", "7.0", "3 + 4"),
    "ProcId": ("0", "2", "undefined"),
    "User": ('"alice@x"', 'strcat("bob", "@x")', "undefined"),
    "Owner": ('"alice"', '"carol"'),
    "AccountingGroup": ('"group_a.alice"', '""', 'ifThenElse(random() < 0.5, "g.r", "g.s")'),
    "JobStatus": ("1", "2", "1.0", "true", "5 - 3"),
}


@st.composite
def _job_texts(draw) -> list[tuple[str, str]]:
    pairs = [("ClusterId", draw(st.sampled_from(_JOB_TEXTS["ClusterId"])))]
    for attr in ("ProcId", "User", "Owner", "AccountingGroup", "JobStatus"):
        if attr in ("User", "Owner") or draw(st.booleans()):
            pairs.append((attr, draw(st.sampled_from(_JOB_TEXTS[attr]))))
    pairs.append(("Cmd", '"/bin/true"'))
    return pairs


_WRITES = st.fixed_dictionaries(
    {"JobStatus": st.sampled_from([1, 2])},
    optional={"RemoteHost": st.sampled_from(["slot1@h", "slot1_2@h"]), "JobCurrentStartDate": st.just(1.5e9)},
)


def _job_fields(job: ads.Job) -> tuple:
    return (job.cluster, job.proc, job.submitter, job.status, job.source, job.id)


@SETTINGS
@given(texts=_job_texts(), writes=_WRITES, compacted=st.booleans(), seed=st.integers(0, 99))
def test_a_job_record_after_the_claims_writes_is_make_jobs(texts, writes, compacted: bool, seed: int) -> None:
    """The record of a job ad with the claims' writes: ``rewritten_job`` gives exactly what
    ``make_jobs`` makes of the written ad, and gives None (leaving it to ``make_jobs``)
    whenever a record would evaluate an expression (``7.0`` or ``3 + 4`` as ClusterId, a
    random AccountingGroup) or the written status is not an integer."""
    ad = classad.ClassAd.from_nodes(tuple((n, parse_expr(t)) for n, t in texts))
    if compacted:
        ad.compact(equal_values=False)
    with seeded_random(seed):
        (record,) = make_jobs([(ad, "jobs:3")], uid_domain="x")
    written = with_values(record.ad, dict(writes), equal_values=False)
    with seeded_random(seed):
        (want,) = make_jobs([(written, "jobs:3")], uid_domain="x")
    got = rewritten_job(record, written)
    if all(type(parse_expr(t)) is ast.Literal for _, t in texts):
        assert got is not None  # nothing to evaluate: the record is the old one's
    if got is not None:
        assert _job_fields(got) == _job_fields(want) and got.ad is written


_RESOURCE_TEXTS = ("4", "2.5", "0", "-1", "true", '"8"', "undefined", "Memory / 1024", "random(3)", "1e400")


@SETTINGS
@given(
    values=st.lists(st.sampled_from(_RESOURCE_TEXTS), min_size=3, max_size=3),
    compacted=st.booleans(),
    seed=st.integers(0, 99),
)
def test_what_a_slot_has_left_is_each_resource_read_alone(values, compacted: bool, seed: int) -> None:
    """``available`` reads the resources in one look; each is what ``_value`` gives for it
    alone (a plain literal as it is, an expression evaluated, in resource order), made 0
    when it is not a non-negative finite number (``-1``, ``true``, ``"8"``, ``1e400``)."""
    names = ("Cpus", "Memory", "Disk")
    pairs = (*zip(names, values), ("Tag", str(seed)))
    ad = classad.ClassAd.from_nodes(tuple((n, parse_expr(t)) for n, t in pairs))
    if compacted:
        ad.compact()
    with seeded_random(seed):
        want = {r: partition._number(partition._value(ad, r), 0) for r in ("Cpus", "memory", "Disk", "GPUs")}
    with seeded_random(seed):
        got = partition.available(ad, ("Cpus", "memory", "Disk", "GPUs"))
    assert got == want and list(got) == list(want)


_WEIGHT_VALUES = (
    "4",
    "-3",
    "2.5",
    "-2.5",
    "0",
    "-0.0",
    "1e300",
    "true",
    '"8"',
    "undefined",
    "error",
    "random(8)",
    "Memory",
)


@SETTINGS
@given(
    cpus=st.one_of(st.none(), st.sampled_from(_WEIGHT_VALUES)),
    weight=st.sampled_from((None, "Cpus", "cpus", "MY.Cpus", ".Cpus", "Cpus * 2", "Memory")),
    compacted=st.booleans(),
    seed=st.integers(0, 3),
)
def test_a_slot_weight_is_its_expression_evaluated(cpus, weight, compacted: bool, seed: int) -> None:
    """``SlotWeight`` (``Cpus`` when the ad has none) evaluated in the slot ad alone: a
    number (``true`` counts 1) that is not negative, else 1.0 (docs/negotiation.md,
    charging usage); a weight that names a number literal reads it as it is (``-0.0``
    stays itself)."""
    pairs = [("Name", '"slot1@x"'), ("Memory", "2048")]
    if cpus is not None:
        pairs.append(("Cpus", cpus))
    if weight is not None:
        pairs.append(("SlotWeight", weight))
    ad = classad.ClassAd.from_nodes(tuple((n, parse_expr(t)) for n, t in pairs))
    if compacted:
        ad.compact()
    node = parse_expr(weight or "Cpus")
    with seeded_random(seed):
        v = evaluate_top(node, ad, new_state(ad))
    want = float(v) if type(v) in (bool, int, float) else None
    want = 1.0 if want is None or want < 0 else want
    with seeded_random(seed):
        got = ads.slot_weight(ad)
    assert repr(got) == repr(want)


@SETTINGS
@given(
    weights=st.lists(st.sampled_from(_SLOT_WEIGHTS), min_size=2, max_size=6),
    seed=st.integers(0, 99),
    expr=st.sampled_from((None, "Cpus * 2")),
    force=st.booleans(),
)
def test_a_slot_weight_kept_as_a_bare_value_weighs_as_its_literal(weights, seed: int, expr, force: bool) -> None:
    """Compacted ads of one attribute list keep a ``SlotWeight`` other than the first
    ad's as their own, a plain literal as its bare value (``-1``, ``"8"``, ``true``): the
    record weighs it as ``slot_weight`` weighs the literal's node (1.0 for a negative
    number or a non-number), or ignores it when forced."""
    weight_expr = None if expr is None else parse_expr(expr)
    tag = f"Bare{seed}_{len(weights)}"
    built = []
    for k, text in enumerate(weights):
        pairs = (("Name", f'"slot{k}@h"'), ("Cpus", "3"), ("SlotWeight", text), (tag, "1"))
        built.append((classad.ClassAd.from_nodes(tuple((n, parse_expr(t)) for n, t in pairs)).compact(), f"f:{k}"))
    with seeded_random(seed):
        want = [_weight_by_definition(ad, weight_expr, force) for ad, _ in built]
    with seeded_random(seed):
        made = make_slots(built, use_slot_weights=True, slot_weight_expr=weight_expr, force_slot_weight=force)
    assert [s.weight for s in made] == want


def _weight_by_definition(ad: classad.ClassAd, expr: object, force: bool) -> float:
    """The weight as docs/negotiation.md defines it: ``SlotWeight`` (``SLOT_WEIGHT``, else
    ``Cpus``, when missing or forced) evaluated in the ad alone; a number (a bool as 0 or
    1) that is not negative, else 1.0."""
    node = ad.get_node("SlotWeight")
    if node is None or force:
        node = expr if expr is not None else parse_expr("Cpus")
    v = evaluate_top(node, ad, new_state(ad))  # type: ignore[arg-type]
    w = float(v) if type(v) in (int, float, bool) else None
    return 1.0 if w is None or w < 0 else w
