"""What a cycle's builds found of its consumption-policy slots, kept from one build to the next.

A partitionable slot with a consumption policy stays out of the slot table (its
resources shrink as it is matched) and is tested pair by pair for every candidate
list: whether its consumption fits what is left, what a match would cost, both
Requirements and, for a candidate, its sort key (:meth:`Matcher._add_consumption
<matchmaker.cycle.matching.Matcher._add_consumption>`).  After a consumption match
every match list is built again, so a cycle builds about one list per match, and each
build tested every such slot again.

Between two builds little of that changes: a slot's answers change only when it is
matched (:meth:`ConsumptionLists.consumed`; nothing else writes into its copy during
the cycle), and a request's only through the values of the names those evaluations
read of it.  So what a build found per slot (the cost, None when the slot is not a
candidate, and the candidate with its key once made) is kept with the request's values
of every name read to find it (:class:`Found`), and a later build whose request gives
those names the same values takes it, testing again only the slots matched since.
What the submitter's budget and the concurrency limits allow is tested in every build.

An answer is kept only when none of its evaluations drew a random number or took a
path-dependent value, nor read the usage that changes as matches are made (the
evaluator memoizes the same ones), and when the slot's weight, evaluated on the slot as
it would be after the match, cannot draw (:attr:`ConsumptionLists.steady`): so a kept
answer is the one evaluating again would give, and no evaluation skipped could draw.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from classad import ast
from classad.ad import ClassAd
from classad.evaluate import evaluate_top, new_state
from classad.layout import SharedAttrs

from ..pool.partition import available, shortfall
from .candidates import Candidate
from .carry import exact_key
from .ephemeral import NegotiationAd
from .evaluator import SlotEntry

_MISS = object()


def _zero_clock() -> float:
    return 0.0  # the clock of a consumption's evaluation (as pool.partition evaluates it)


# The kept builds per autocluster (requests of one autocluster mostly agree on what is read).
_PER_AUTOCLUSTER = 4


class Found:
    """What builds found per consumption-policy slot, for the requests that give each name
    of ``reads`` its value there: per slot, the version of the slot it was found for
    (-1: none), the cost of a match (None: not a candidate) and the candidate once made."""

    __slots__ = ("reads", "versions", "costs", "cands")

    def __init__(self, n: int) -> None:
        self.reads: dict[str, Any] = {}  # lower-case name -> the request's value (see value_of)
        self.versions: list[int] = [-1] * n
        self.costs: list[Optional[float]] = [None] * n
        self.cands: list[Optional[Candidate]] = [None] * n

    def agrees(self, req: NegotiationAd) -> bool:
        """Whether ``req`` gives every name read its value here."""
        for lname, want in self.reads.items():
            got = value_of(req, lname)
            if got is not want and (type(got) is not tuple or got != want):
                return False
        return True

    def note(self, req: NegotiationAd, names: Sequence[str]) -> None:
        """Add the names an answer kept here read of ``req`` (which agrees with :attr:`reads`)."""
        reads = self.reads
        for lname in names:
            if lname not in reads:
                reads[lname] = value_of(req, lname)


class ConsumptionLists:
    """The consumption-policy slots of one cycle, what builds found of them (:class:`Found`,
    per autocluster) and how often each slot was matched so far (its version); and what a
    match costs (:meth:`cost`), its parts kept as what the builds found is.

    ``weight`` is the weight of a slot ad (None: slot weights are not used, a match costs
    1); ``steady`` says whether an entry's copy (and ``SLOT_WEIGHT``) can draw."""

    def __init__(
        self,
        entries: Sequence[SlotEntry],
        weight: Optional[Callable[[ClassAd], float]],
        steady: Callable[[SlotEntry], bool],
    ) -> None:
        self.entries = list(entries)
        n = len(self.entries)
        self.versions = [0] * n
        self._at = {id(e): i for i, e in enumerate(self.entries)}
        self._found: dict[int, list[Found]] = {}
        self._weight, self._steady = weight, steady
        self._steady_at: list[Optional[bool]] = [None] * n
        # Per slot, while it is not matched again: what is left of its resources, its weight
        # per resources left after a consumption, its keys of the names the memo reads.
        self._left: list[Optional[dict[str, float]]] = [None] * n
        self._after: list[Optional[dict[tuple, float]]] = [None] * n
        self._flat: list[Optional[dict]] = [None] * n
        self._slot_keys: list[dict[tuple, tuple]] = [{} for _ in range(n)]
        # Per Consumption<Res> tree (held, by id): (slot names, request names, {(slot key,
        # request key): value}) as the evaluator memoizes (docs: only steady values).
        self._memo: dict[int, tuple[ast.Node, list[tuple[tuple, tuple, dict]]]] = {}
        self._names: dict[tuple, tuple] = {}
        self._req: Optional[NegotiationAd] = None
        self._req_keys: dict[tuple, tuple] = {}
        self._held: list[Any] = []  # the trees whose ids the keys hold

    def consumed(self, e: SlotEntry) -> None:
        """``e`` was matched (its copy written into): what was found of it is stale."""
        i = self._at.get(id(e))
        if i is not None:
            self.versions[i] += 1
            self._left[i] = self._after[i] = self._flat[i] = None
            self._slot_keys[i] = {}

    def begin(self, req: NegotiationAd) -> None:
        """Start a build for ``req`` (its values may have changed since the last one)."""
        self._req, self._req_keys = req, {}

    def steady(self, i: int) -> bool:
        """Whether the weight of slot ``i`` cannot draw (nor any of its expressions)."""
        known = self._steady_at[i]
        if known is None:
            known = self._steady_at[i] = self._steady(self.entries[i])
        return known

    def cost(self, i: int, req: NegotiationAd, reads: list) -> tuple[Optional[float], bool]:
        """What matching ``req`` on slot ``i`` costs (``Cycle._consumption_cost``: its weight
        now less its weight after the consumption, 1 without slot weights; None when the
        consumption is not a number for each resource or does not fit what is left), the
        request's names it depends on added to ``reads``, and whether it may be kept."""
        e = self.entries[i]
        resources = e.cp or ()
        used: dict[str, float] = {}
        steady = True
        for res in resources:
            v, ok = self._consumption(i, e, res, reads)
            steady = steady and ok
            if type(v) not in (int, float) or not 0 <= v < float("inf"):  # type: ignore[operator]
                return None, steady
            used[res] = v  # type: ignore[assignment]
        left = self._left[i]
        if left is None:
            left = self._left[i] = available(e.ad, resources)
        if shortfall(used, left) is not None:
            return None, steady
        if self._weight is None:
            return 1.0, steady
        values = {res: left[res] - v for res, v in used.items()}
        key = tuple(map(exact_key, values.values()))
        weights = self._after[i] if self.steady(i) else None
        weight = weights.get(key) if weights is not None else None
        if weight is None:
            after = self._copy(i, e.ad)
            after.update(values)
            weight = self._weight(after)
            if self.steady(i):
                if weights is None:
                    weights = self._after[i] = {}
                weights[key] = weight
        return e.weight - weight, steady

    def _copy(self, i: int, ad: ClassAd) -> ClassAd:
        """``ClassAd(ad)``, the copy of slot ``i``'s copy: its table of attributes read once
        while the slot is not matched again, then copied (a table that reads through to a
        compacted ad is slow to copy name by name)."""
        if type(ad._attrs) is SharedAttrs:
            return ClassAd(ad)
        flat = self._flat[i]
        if flat is None:
            flat = self._flat[i] = dict(ad._attrs)  # type: ignore[arg-type]
        out = ClassAd()
        out._attrs = flat.copy()
        return out

    def _consumption(self, i: int, e: SlotEntry, res: str, reads: list) -> tuple[Any, bool]:
        """``Consumption<res>`` of slot ``i`` with the request (the slot as ``MY``), as
        :func:`~matchmaker.pool.partition.consumption` evaluates it, memoized on the names
        it read of either ad and their values when it drew nothing."""
        ad, req = e.ad, self._req
        assert req is not None
        node = ad.get_node("Consumption" + res)
        if node is None:
            return None, True
        hit = self._memo.get(id(node))
        if hit is None or hit[0] is not node:
            hit = self._memo[id(node)] = (node, [])
        slot_keys, req_keys = self._slot_keys[i], self._req_keys
        for slot_names, req_names, table in hit[1]:
            sk = slot_keys.get(slot_names)
            if sk is None:
                sk = slot_keys[slot_names] = self._keys(ad, slot_names)
            rk = req_keys.get(req_names)
            if rk is None:
                rk = req_keys[req_names] = self._keys(req, req_names)
            v = table.get((sk, rk), _MISS)
            if v is not _MISS:
                reads.extend(req_names)
                return v, True
        st = new_state(ad, req, clock=_zero_clock)
        slot_reads: list[str] = []
        req_reads: list[str] = []
        ad.reads, req.reads = slot_reads, req_reads
        try:
            v = evaluate_top(node, ad, st)
        finally:
            ad.reads = req.reads = None
        reads.extend(req_reads)
        if st.taint:
            return v, False
        sn, rn = self._intern(slot_reads), self._intern(req_reads)
        sk = slot_keys.get(sn)
        if sk is None:
            sk = slot_keys[sn] = self._keys(ad, sn)
        rk = req_keys.get(rn)
        if rk is None:
            rk = req_keys[rn] = self._keys(req, rn)
        for slot_names, req_names, table in hit[1]:
            if slot_names is sn and req_names is rn:
                table[(sk, rk)] = v
                break
        else:
            hit[1].append((sn, rn, {(sk, rk): v}))
        return v, True

    def _intern(self, reads: list) -> tuple:
        names = tuple(dict.fromkeys(reads))
        return self._names.setdefault(names, names)

    def _keys(self, ad: NegotiationAd, names: tuple) -> tuple:
        """The values ``ad`` holds under ``names`` as memo keys (see :func:`value_of`; a
        tree by its id, held for the cycle)."""
        out = []
        for lname in names:
            v = value_of(ad, lname)
            if type(v) is not tuple:
                self._held.append(v)
                v = id(v)
            out.append(v)
        return tuple(out)

    def found(self, req: NegotiationAd, autocluster: int) -> Found:
        """What was kept for requests like ``req``; a new, empty :class:`Found` if none."""
        kept = self._found.setdefault(autocluster, [])
        for f in kept:
            if f.agrees(req):
                return f
        f = Found(len(self.entries))
        if len(kept) >= _PER_AUTOCLUSTER:
            del kept[0]
        kept.append(f)
        return f


def value_of(req: NegotiationAd, lname: str) -> Any:
    """What ``req`` holds under ``lname``, as compared by :meth:`Found.agrees`: a plain
    literal as a key that tells apart what Python calls equal (``1``, ``1.0``, ``true``;
    ``0.0`` and ``-0.0``), absence as a key too, any other expression as its node
    (held, compared by identity: trees are immutable)."""
    stored = req.plain(lname)
    t = type(stored)
    if stored is None or t is bool or t is int or t is str:
        return (t, stored)
    if t is float:
        return (t, stored.hex())  # type: ignore[union-attr]
    assert isinstance(stored, ast.Node)
    return stored


__all__ = ["ConsumptionLists", "Found", "value_of"]
