"""Concurrency limits: the ``name[:amount]`` items jobs ask for, counted against capacities.

Claims already running hold their slot's ``ConcurrencyLimits`` (and
``PreemptingConcurrencyLimits``); :func:`claimed_limits` counts those at cycle start, and
the matcher charges each new match, refusing one that would overflow a limit.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from classad.ad import ClassAd

from .ads import AdMemo, Job, Slot, alone_state, no_memo

DEFAULT_CONCURRENCY_LIMIT = 2308032.0  # HTCondor's CONCURRENCY_LIMIT_DEFAULT


def parse_limits(text: str) -> list[tuple[str, float]]:
    """``"a, b:2, set.member"`` -> ``[("a", 1.0), ("b", 2.0), ("set.member", 1.0)]``."""
    out = []
    for item in text.replace(",", " ").split():
        name, _, amount = item.partition(":")
        try:
            value = float(amount) if amount else 1.0
        except ValueError:
            value = 1.0
        if name:
            out.append((name.lower(), value))
    return out


class ConcurrencyLimits:
    """Counters of concurrency limits in use, against their capacities.

    Limits are ``name[:amount]`` items, names case-insensitive; a claim holding them is
    counted with :meth:`charge`; :meth:`exhausted` names those one more would overflow.
    """

    def __init__(self, capacity: Callable[[str], float] = lambda _name: DEFAULT_CONCURRENCY_LIMIT) -> None:
        self.capacity = capacity
        self.count: dict[str, float] = {}
        self._caps: dict[str, float] = {}

    def charge(self, limits: Sequence[tuple[str, float]]) -> None:
        """Count a claim holding ``limits``."""
        for name, amount in limits:
            self.count[name] = self.count.get(name, 0.0) + amount

    def exhausted(self, limits: Sequence[tuple[str, float]]) -> list[str]:
        """Names of ``limits`` that one more claim would push over capacity."""
        full = []
        for name, amount in limits:
            cap = self._caps.get(name)
            if cap is None:
                cap = self._caps[name] = float(self.capacity(name))
            if self.count.get(name, 0.0) + amount > cap:
                full.append(name)
        return full


def limits_reason(names: Sequence[str]) -> str:
    """The rejection text for exhausted limits."""
    return f"concurrency limit {', '.join(names)} reached"


_PLAIN = (bool, int, float, str)


def claimed_limits(
    slots: Iterable[Slot], capacity: Callable[[str], float], memo: AdMemo = no_memo
) -> ConcurrencyLimits:
    """The counters at cycle start: the ``ConcurrencyLimits`` and ``PreemptingConcurrencyLimits``
    of every charged claim."""
    return counted_limits(memo([s.ad for s in slots if s.charged], "claim_limits", claim_limits), capacity)


def counted_limits(
    held: Iterable[Sequence[Sequence[tuple[str, float]]]], capacity: Callable[[str], float]
) -> ConcurrencyLimits:
    """The counters of the claims holding ``held`` (each claim's :func:`claim_limits`), in order."""
    limits = ConcurrencyLimits(capacity)
    for lists in filter(None, held):
        for named in lists:
            limits.charge(named)
    return limits


def claim_limits(ad: ClassAd) -> tuple[list[tuple[str, float]], ...]:
    """The limits a claim on the slot ``ad`` holds, one list per attribute that names some."""
    out = []
    for attr in ("ConcurrencyLimits", "PreemptingConcurrencyLimits"):
        v = ad.plain(attr.lower())  # a missing or literal value: nothing to evaluate
        if v is not None and type(v) not in _PLAIN:
            v = ad.evaluate(attr, state=alone_state(ad))
        if type(v) is str:
            out.append(parse_limits(v))
    return tuple(out)


def named_limits(jobs: Iterable[Job], slots: Iterable[Slot]) -> dict[str, str]:
    """Every limit the pool names, with the ``file:line`` of the first ad naming it: the
    jobs' ``ConcurrencyLimits`` and the slots' ``ConcurrencyLimits`` and
    ``PreemptingConcurrencyLimits``, each evaluated in its ad alone.  A value that needs
    the other ad (``strcat("lic_", TARGET.Arch)``) names nothing here."""
    named: dict[str, str] = {}
    seen: set[str] = set()  # the strings already read
    for ad, source, attrs in _limit_holders(jobs, slots):
        for attr in attrs:
            stored = ad.plain(attr)
            if stored is None:
                continue
            value = stored if type(stored) is str else ad.evaluate(attr, state=alone_state(ad))
            if type(value) is not str or value in seen:
                continue
            seen.add(value)
            for name, _amount in parse_limits(value):
                named.setdefault(name, source)
    return named


def _limit_holders(jobs: Iterable[Job], slots: Iterable[Slot]) -> Iterable[tuple[ClassAd, str, tuple[str, ...]]]:
    for job in jobs:
        yield job.ad, job.source, ("concurrencylimits",)
    for slot in slots:
        yield slot.ad, slot.source, ("concurrencylimits", "preemptingconcurrencylimits")


__all__ = [
    "DEFAULT_CONCURRENCY_LIMIT",
    "ConcurrencyLimits",
    "claim_limits",
    "claimed_limits",
    "counted_limits",
    "limits_reason",
    "named_limits",
    "parse_limits",
]
