"""Which attributes can change what a cycle decides: the ones the negotiator reads by name
and the ones some expression of the pool or the configuration refers to."""

from __future__ import annotations

import os
import re
from typing import Any, Optional

from classad.ast import AttrRef, Record, Select
from classad.testing import learn
from classad.testing.ads import children, parsed
from classad.testing.schema import AdsLike

from ..config.knobs import Knobs
from .knobs import knobs_of

# Attributes the negotiator reads by name (not through an expression): identity, claim
# state, slot weight, job order and accounting (matchmaker/pool/ads.py, autocluster.py,
# cycle/ephemeral.py).  ``names_read`` keeps them whatever the expressions name.
MATCHMAKER_READS = frozenset(
    name.lower()
    for name in (
        "Name",
        "State",
        "Activity",
        "RemoteUser",
        "RemoteOwner",
        "AccountingGroup",
        "PreemptingUser",
        "PreemptingAccountingGroup",
        "PreemptingRank",
        "CurrentRank",
        "Rank",
        "Requirements",
        "NegotiatorRequirements",
        "Cpus",
        "SlotWeight",
        "PartitionableSlot",
        "TotalSlots",
        "WantMatching",
        "RetirementTimeRemaining",
        "JobId",
        "ConcurrencyLimits",
        "ClusterId",
        "ProcId",
        "User",
        "Owner",
        "JobStatus",
        "AcctGroup",
        "AcctGroupUser",
        "RequestCpus",
        "PreJobPrio1",
        "PreJobPrio2",
        "JobPrio",
        "PostJobPrio1",
        "PostJobPrio2",
        "QDate",
    )
)
PER_SLOT = re.compile(r"^[a-z]+\d+_", re.IGNORECASE)  # slot1_RemoteUser ... (cross-slot priorities)


def names_read(
    slots_like: AdsLike, jobs_like: AdsLike, config: Optional[str | os.PathLike | Knobs] = None
) -> frozenset[str]:
    """The attributes (lower-cased) that can change a cycle on pools like these dumps: the
    ones the negotiator reads by name (:data:`MATCHMAKER_READS`), every name an expression
    of either dump refers to (``TARGET.Memory`` and ``Memory`` alike), and every name the
    configuration's definitions and the expression knobs' defaults refer to.  Pass it as ``pools(attributes=...)``: the other
    attributes cannot change what a cycle decides, and leaving them out makes examples
    faster to draw and shrink and failures shorter to read."""
    names = set(MATCHMAKER_READS)
    for schema in (learn(slots_like), learn(jobs_like)):
        for spec in schema.attrs:
            for kind in ("expr", "list", "ad"):
                for text, _ in spec.values.get(kind, ()):
                    names |= referenced_names(parsed(text))
    for expr in knobs_of(config if config is not None else "").expressions():
        names |= referenced_names(expr)
    return frozenset(names)


def referenced_names(node: Any) -> set[str]:
    """Lower-cased names of the attributes an expression refers to, in any scope."""
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, AttrRef):
            found.add(n.lname)
        elif isinstance(n, Select):
            found.add(n.lname)
        if isinstance(n, Record):
            found |= {name.lower() for name, _ in n.attrs}
        stack.extend(children(n))
    return found


__all__ = ["MATCHMAKER_READS", "PER_SLOT", "names_read", "referenced_names"]
