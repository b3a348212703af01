"""What a run of cycles carries from one cycle to the next (``SIMULATE_INCREMENTAL``).

A simulation runs cycle after cycle over a pool that barely changes between two of
them.  :class:`Carried` holds what stays valid from one cycle to the next, each part
keyed so that a change it depends on is noticed and only that part is recomputed
(docs/simulate.md, incremental cycles):

* each slot ad's references (the significant attributes of the autoclusters), by the
  ad's identity (:class:`~matchmaker.pool.autocluster.SlotReferences`);
* the slot and job records of the pool: after the claims only the slots and jobs
  whose ads were rewritten get new records (:func:`~matchmaker.cycle.claims.claim_matches`).

Every part gives exactly what the rebuild would; with the knob off a simulation passes
no :class:`Carried` and every cycle starts from nothing.
"""

from __future__ import annotations

from ..pool.autocluster import SlotReferences


class Carried:
    """The state kept between the cycles of one simulation."""

    def __init__(self) -> None:
        self.slot_refs = SlotReferences()


__all__ = ["Carried"]
