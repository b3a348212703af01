"""Random sequences of commands against one store -- ``negotiate`` and ``simulate`` at random
times (some earlier than the store's clock, some interrupted half-way) and ``userprio``
edits -- keep the store's clock monotone and charge each hour once: every principal's
accumulated usage is the sum of the charges of the cycles that completed
(docs/reliability.md, the clock rule).

The expected charges are kept by the test itself, from what each command reports and
not from the store: between two completed commands every claim the store holds is
charged its weight times the time between them (a claim is held from the end of one
command to the first cycle of the next, which ends or renews it); inside a simulation
each claim span the simulation reports (slot, principal, weight, start, end) is charged
its weight times its length up to the last cycle.  A refused or interrupted command
charges nothing and leaves the clock where it was."""

from __future__ import annotations

import io
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import matchmaker
from matchmaker.accounting.store import Accountant
from matchmaker.cli import main
from matchmaker.errors import StateError

T = 1_700_000_000
INTERVAL = 1800.0
ALICE, BOB = "alice@d", "bob@d"


def write_pool(d: Path) -> matchmaker.Loaded:
    """Two 1-core slots claimed by alice (no job of hers runs on them, so they stay
    claimed), two 2-core free slots, and three idle jobs of bob's that run 1.5 h."""
    (d / "neg.config").write_text(
        f"PRIORITY_HALFLIFE = 3600\nDEFAULT_PRIO_FACTOR = 1\nNEGOTIATOR_INTERVAL = {INTERVAL:.0f}\n"
    )
    claimed = "".join(
        f'Name = "a{i}"\nCpus = 1\nState = "Claimed"\nActivity = "Busy"\nRemoteUser = "{ALICE}"\n'
        f"Requirements = true\n\n"
        for i in range(2)
    )
    free = "".join(f'Name = "f{i}"\nCpus = 2\nRequirements = true\n\n' for i in range(2))
    (d / "slots.ads").write_text(claimed + free)
    (d / "jobs.ads").write_text(
        "".join(
            f'ClusterId = 1\nProcId = {i}\nOwner = "bob"\nUser = "{BOB}"\nJobStatus = 1\nRequestCpus = 1\n'
            f"Requirements = true\nQDate = 0\nSimJobDuration = 5400\n\n"
            for i in range(3)
        )
    )
    return matchmaker.load(d / "neg.config", d / "slots.ads", d / "jobs.ads")


class Model:
    """What the store must hold: its clock, the claims it keeps between commands, and each
    principal's charged usage (slot-seconds)."""

    def __init__(self) -> None:
        self.clock: float | None = None
        self.claims: dict[str, tuple[str, float]] = {}  # slot -> (principal, weight)
        self.charged: dict[str, float] = {}
        self.starts = 0  # times the store was started over (fresh_state)

    def charge(self, who: str, amount: float) -> None:
        self.charged[who] = self.charged.get(who, 0.0) + amount

    def refused(self, t: float) -> bool:
        return self.clock is not None and t < self.clock

    def advance(self, t: float) -> None:
        """The first cycle of a command at ``t``: the held claims are charged up to it."""
        if self.clock is not None:
            for who, weight in self.claims.values():
                self.charge(who, weight * (t - self.clock))


def interrupt_at(n: int | None):
    """A progress callback raising KeyboardInterrupt at its ``n``-th call (never if None)."""
    calls = [0]

    def progress(*_args: object) -> None:
        calls[0] += 1
        if n is not None and calls[0] == n:
            raise KeyboardInterrupt

    return progress


def negotiate(loaded, db: Path, model: Model, t: float, stop: int | None) -> None:
    try:
        result = matchmaker.negotiate(loaded, now=t, state=db, progress=interrupt_at(stop))
    except StateError:
        assert model.refused(t)
        return
    except KeyboardInterrupt:
        return
    assert not model.refused(t)
    model.advance(t)
    model.clock = t
    slots = {s.name: s for s in loaded.pool.slots}
    model.claims = {s.name: (s.customer, s.weight) for s in loaded.pool.slots if s.charged}
    model.claims.update({m.slot: (m.submitter, slots[m.slot].weight) for m in result.matches})


def simulate(loaded, db: Path, model: Model, start: float, cycles: int, stop: int | None, fresh: bool) -> None:
    try:
        sim = matchmaker.simulate(
            loaded,
            start=start,
            duration=(cycles - 1) * INTERVAL,
            interval=INTERVAL,
            state=db,
            seed=1,
            progress=interrupt_at(stop),
            fresh_state=fresh,
        )
    except StateError:
        assert model.refused(start) and not fresh
        return
    except KeyboardInterrupt:
        return
    if fresh:  # the store starts over: nothing held, nothing charged, no clock
        model.clock, model.claims, model.charged = None, {}, {}
        model.starts += 1
    assert not model.refused(start)
    model.advance(start)
    last = start + (cycles - 1) * INTERVAL
    for span in sim.spans:
        model.charge(span.customer, span.charge(last))
    model.clock = last
    model.claims = {s.slot: (s.customer, s.weight) for s in sim.spans if s.end is None}


def userprio(db: Path, model: Model, edit: str, who: str, value: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = ["userprio", "--state", str(db), f"--{edit}", who] + ([value] if edit != "resetusage" else [])
    if edit == "resetusage":
        argv += ["--now", value]
    status = main(argv, out, err)
    assert status == 0, err.getvalue()
    if edit == "resetusage":
        model.charged[who] = 0.0


times = st.integers(min_value=0, max_value=40).map(lambda k: T + 900.0 * k)
stops = st.one_of(st.none(), st.none(), st.integers(min_value=1, max_value=3))
commands = st.one_of(
    st.tuples(st.just("negotiate"), times, stops),
    st.tuples(
        st.just("simulate"),
        times,
        st.integers(min_value=1, max_value=4),
        stops,
        st.sampled_from([False, False, False, True]),
    ),
    st.tuples(
        st.just("userprio"),
        st.sampled_from(["setfactor", "setprio", "setfloor", "setceiling"]),
        st.sampled_from([ALICE, BOB]),
        st.sampled_from(["1", "2.5", "40"]),
    ),
    st.tuples(
        st.just("userprio"), st.just("resetusage"), st.sampled_from([ALICE, BOB]), times.map(lambda t: f"{t:.0f}")
    ),
)


@pytest.fixture(scope="module")
def pool_dir():
    d = Path(tempfile.mkdtemp(prefix="sequences-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(commands, min_size=1, max_size=7))
def test_random_command_sequences_charge_each_hour_once(pool_dir, sequence):
    loaded = _loaded(pool_dir)
    work = Path(tempfile.mkdtemp(prefix="store-", dir=pool_dir))
    db = work / "S.db"
    model = Model()
    previous_clock = None
    try:
        for command in sequence:
            starts = model.starts
            if command[0] == "negotiate":
                negotiate(loaded, db, model, command[1], command[2])
            elif command[0] == "simulate":
                simulate(loaded, db, model, *command[1:])
            else:
                userprio(db, model, *command[1:])
            if not db.exists():
                assert model.clock is None
                continue
            with Accountant.load(db, read_only=True) as a:
                clock = a.last_update_time
                usage = {c.name: c.weighted_accumulated_usage for c in a.customers() if not c.is_group}
            assert clock == model.clock
            if model.starts != starts:  # started over on purpose: the clock begins anew
                previous_clock = None
            assert previous_clock is None or clock is None or clock >= previous_clock
            previous_clock = clock if clock is not None else previous_clock
            for who in {*usage, *model.charged}:
                assert usage.get(who, 0.0) == pytest.approx(model.charged.get(who, 0.0), rel=1e-9, abs=1e-6), who
    finally:
        shutil.rmtree(work, ignore_errors=True)


_LOADED: dict[str, matchmaker.Loaded] = {}


def _loaded(d: Path) -> matchmaker.Loaded:
    if str(d) not in _LOADED:
        _LOADED[str(d)] = write_pool(d)
    return _LOADED[str(d)]


def test_a_sequence_worked_by_hand(pool_dir):
    """negotiate at T: alice's two 1-core claims are recorded, bob's jobs get the two free
    2-core slots (weight = Cpus = 2 each; the third job finds nothing).  negotiate at T+1h:
    alice is charged 2 x 1 h = 7,200 slot-s, bob 2 x 2 x 1 h = 14,400.  A simulation from
    T+1h of 3 cycles (to T+2h): at T+1h bob's stored claims end and his jobs are matched
    again on both free slots, so he holds 4 weighted slots for 1 h (14,400 more) and alice
    2 (7,200 more).  A rerun from T+1h is refused and changes nothing."""
    loaded = _loaded(pool_dir)
    db = Path(tempfile.mkdtemp(prefix="store-", dir=pool_dir)) / "S.db"
    matchmaker.negotiate(loaded, now=T, state=db)
    matchmaker.negotiate(loaded, now=T + 3600.0, state=db)
    matchmaker.simulate(loaded, start=T + 3600.0, duration=3600.0, interval=INTERVAL, state=db, seed=1)
    with pytest.raises(StateError, match="earlier than the accountant's last update"):
        matchmaker.simulate(loaded, start=T + 3600.0, duration=3600.0, interval=INTERVAL, state=db, seed=1)
    with Accountant.load(db, read_only=True) as a:
        assert a.last_update_time == T + 7200.0
        assert a.get(ALICE).weighted_accumulated_usage == pytest.approx(14_400.0)
        assert a.get(BOB).weighted_accumulated_usage == pytest.approx(28_800.0)
