"""Property tests of a site's negotiation policy, on pools shaped like the site's dumps.

Copy this file next to your dumps and configuration and change the names below.
Run it with ``pytest examples/property-testing``; ``POLICY=wrong-policy.config`` tests
another configuration of this directory, ``EXAMPLES=500`` tries more pools.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import Phase, given, settings

from matchmaker.testing import check_cycle_laws, matched, names_read, pools, priority_factor_law, run_cycle

HERE = Path(__file__).resolve().parent
SLOTS = HERE.parent / "slots.ad"  # condor_status -l > slots.ad
JOBS = HERE.parent / "jobs.ad"  # condor_q -l > jobs.ad
POLICY = HERE / os.environ.get("POLICY", "policy.config")
USERS = ["alice@example.org", "bob@example.org", "carol@example.org"]
GROUPS = ["group_physics", "group_chemistry"]
# Chemistry's usage made its priority bad: its claims are the ones priority could end.
FACTORS = {f"group_chemistry.{user}": 1e4 for user in USERS}

# Derandomized, so every run (and CI) tries the same pools; no example database is written;
# no "explain" phase (a failure reports the pool, not the lines only failing runs reached).
SITE = settings(
    max_examples=int(os.environ.get("EXAMPLES", "200")),
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)
# Only the attributes something reads: the rest cannot change a cycle, and without them
# pools are faster to draw and to shrink, and a failing pool is shorter to read.
# fresh=0.1: one number in ten drawn anywhere in its range, the rest among the dump's values.
POOLS = pools(
    slots_like=SLOTS,
    jobs_like=JOBS,
    submitters=USERS,
    groups=GROUPS,
    max_slots=4,
    max_jobs=4,
    attributes=names_read(SLOTS, JOBS, POLICY),
    fresh=0.1,
)


@SITE
@given(POOLS)
def test_the_library_laws_hold(pool):
    """Matches satisfy both Requirements, no slot is matched twice, preemptions satisfy
    PREEMPTION_REQUIREMENTS, groups stay within their quotas."""
    check_cycle_laws(run_cycle(pool, POLICY, factors=FACTORS))


@SITE
@given(POOLS)
def test_physics_never_preempts_chemistry(pool):
    run = run_cycle(pool, POLICY, factors=FACTORS)
    broken = [
        f"job {m.job} of {m.submitter} preempted {m.preempted} on {m.slot}"
        for m in matched(run, reason="priority")
        if m.submitter.startswith("group_physics.") and (m.preempted or "").startswith("group_chemistry.")
    ]
    assert not broken


@SITE
@given(POOLS)
def test_a_higher_priority_factor_gives_no_more_slots(pool):
    first = run_cycle(pool, POLICY).result.submitters
    if first:
        priority_factor_law(pool, POLICY, first[0].name, low=1.0, high=100.0)
