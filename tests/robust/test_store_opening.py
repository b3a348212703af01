"""One way to open the accountant store: every command goes through the store's API, which
checks the schema and the type of every stored value before anything is written; ``analyze``
reads a private copy of the file opened read-only by an escaped URI, so the characters of
a file name (``%``, ``#``, ``?``) are never read as URI syntax.  A missing and an empty
(0-byte) file are treated alike (docs/reliability.md, the accountant's store)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from support import run_matchmaker as run

from matchmaker.accounting.store import Accountant, read_only_uri, store_absent
from matchmaker.errors import StateError

NOW = 1_700_000_000


@pytest.fixture
def pool(tmp_path: Path) -> dict[str, Path]:
    """Two one-core slots and one idle job of alice's: the smallest pool with a match."""
    cfg = tmp_path / "neg.config"
    cfg.write_text("PRIORITY_HALFLIFE = 3600\nDEFAULT_PRIO_FACTOR = 1\nNEGOTIATOR_INTERVAL = 3600\n")
    slots = tmp_path / "slots.ads"
    slots.write_text("".join(f'Name = "s{i}"\nCpus = 1\nRequirements = true\n\n' for i in range(2)))
    jobs = tmp_path / "jobs.ads"
    jobs.write_text(
        'ClusterId = 1\nProcId = 0\nOwner = "alice"\nUser = "alice@d"\nJobStatus = 1\n'
        "RequestCpus = 1\nRequirements = true\nQDate = 0\n"
    )
    return {"config": cfg, "slots": slots, "jobs": jobs}


def pool_argv(pool: dict[str, Path], state: object, now: float) -> list[object]:
    """The options naming the pool's files, the state and the clock."""
    return [
        "--config",
        pool["config"],
        "--slots",
        pool["slots"],
        "--jobs",
        pool["jobs"],
        "--state",
        state,
        "--now",
        now,
    ]


def analyze(pool: dict[str, Path], state: object, *extra: object) -> tuple[int, str, str]:
    return run("analyze", *pool_argv(pool, state, NOW), *extra)


def negotiate(pool: dict[str, Path], state: object, now: float = NOW) -> tuple[int, str, str]:
    return run("negotiate", *pool_argv(pool, state, now))


def one_line(result: tuple[int, str, str], *words: str) -> None:
    status, _out, err = result
    assert status == 1, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "please report" not in err, err
    for w in words:
        assert w in err, err


def store_with_factor(path: Path, factor: float) -> Path:
    with Accountant.load(path) as a:
        a.set_factor("alice@d", factor)
    return path


# ---- names are names, not URIs ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["st%41.db", "st#x.db", "a?b.db", "sp ace%20.db", "q?mode=rw.db"])
def test_a_store_is_read_from_its_own_file(tmp_path, pool, name):
    """Each store holds its own factor (stA.db 7, the named one 3): analyze and the read-only
    API read 3 from the file named (EUP = RUP 0.5 x 3 = 1.50; stA.db's would be 3.50) and
    leave every file byte-identical."""
    decoy = store_with_factor(tmp_path / "stA.db", 7.0)
    store_with_factor(tmp_path / "st", 11.0) if name.startswith("st#") else None
    target = store_with_factor(tmp_path / name, 3.0)
    before = {p: p.read_bytes() for p in tmp_path.iterdir() if p.suffix == ".db" or p.name == "st"}
    with Accountant.load(target, read_only=True) as a:
        assert a.get("alice@d").factor == 3.0
    status, out, err = analyze(pool, target, "--json")
    assert status == 0, err
    assert "alice@d: EUP 1.50" in out
    assert {p: p.read_bytes() for p in before} == before
    assert decoy.read_bytes() == before[decoy]


@pytest.mark.parametrize("name", ["st%41.db", "st#x.db", "a?b.db"])
def test_a_missing_store_is_refused_and_nothing_is_created(tmp_path, pool, name):
    """'st%41.db' must not read stA.db; 'st#x.db' must not create 'st'."""
    store_with_factor(tmp_path / "stA.db", 7.0)
    listing = sorted(p.name for p in tmp_path.iterdir())
    one_line(analyze(pool, tmp_path / name), "no such accountant database", name)
    assert sorted(p.name for p in tmp_path.iterdir()) == listing


def test_the_uri_escapes_every_special_character(tmp_path):
    uri = read_only_uri(str(tmp_path / "a%41?b#c.db"))
    assert uri.endswith("/a%2541%3Fb%23c.db?mode=ro") and uri.startswith("file:///")


# ---- the same checks everywhere --------------------------------------------------------------


def test_analyze_refuses_another_schema_version(tmp_path, pool):
    db = store_with_factor(tmp_path / "v99.db", 2.0)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    conn.close()
    before = db.read_bytes()
    one_line(analyze(pool, db), "schema version 99")
    assert db.read_bytes() == before


def damaged(tmp_path: Path, table: str, column: str, value: object) -> Path:
    """A store after one cycle with one value replaced through SQLite (no type checks there)."""
    db = tmp_path / f"{table}-{column}.db"
    with Accountant.load(db) as a:
        with a.transaction():
            a.update_priorities(NOW)
            a.add_match("alice@d", "s0", 1.0, NOW)
            a.set_policy_state("lsf", {"alice": (1.0, (1.0, 2.0), NOW)}, NOW, [{"name": "alice"}])
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(f'UPDATE {table} SET "{column}" = ?', (value,))
    conn.close()
    return db


DAMAGE = [
    ("customers", "factor", "abc"),
    ("customers", "priority", None),
    ("customers", "ceiling", b"\x00"),
    ("customers", "name", 5),
    ("customers", "is_group", 7),
    ("customers", "accumulated_usage", float("inf")),
    ("claims", "weight", "1"),
    ("claims", "customer", None),
    ("claims", "group", 3.5),
    ("meta", "value", "yesterday"),
    ("policy_usage", "buckets", '[1, "x"]'),
    ("policy_usage", "value", "lots"),
    ("policy_report", "rows", "{}"),
]


@pytest.mark.parametrize("table,column,value", DAMAGE)
def test_a_value_of_the_wrong_type_is_damage(tmp_path, pool, table, column, value):
    """Every command refuses the store with one line, before writing anything: the edit of
    issue's case 4 (userprio -setfactor over a text factor) is not stored."""
    db = damaged(tmp_path, table, column, value)
    before = db.read_bytes()
    with pytest.raises(StateError, match="damaged accountant database"):
        Accountant.load(db)
    one_line(run("userprio", "--state", db, "--setfactor", "alice@d", "5"), "damaged accountant database")
    one_line(run("userprio", "--state", db), "damaged")
    one_line(negotiate(pool, db, NOW + 60), "damaged")
    one_line(analyze(pool, db), "damaged")
    one_line(
        run(
            "simulate",
            "--config",
            pool["config"],
            "--slots",
            pool["slots"],
            "--jobs",
            pool["jobs"],
            "--state",
            db,
            "--start",
            NOW + 60,
            "--duration",
            "1h",
        ),
        "damaged",
    )
    assert db.read_bytes() == before


# ---- a missing file and an empty file: one rule ------------------------------------------------


def test_an_empty_file_is_treated_as_a_missing_one(tmp_path, pool):
    """Readers refuse both (the empty file stays empty); writers create a store in both."""
    missing, empty = tmp_path / "missing.db", tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert store_absent(missing) and store_absent(empty) and not store_absent(tmp_path)
    for path, words in ((missing, "no such accountant database"), (empty, "empty file")):
        one_line(analyze(pool, path), words)
        one_line(run("userprio", "--state", path), words)
        one_line(run("userprio", "--state", path, "--json"), words)
        assert not missing.exists() and empty.read_bytes() == b""
    for path in (missing, empty):
        status, out, err = negotiate(pool, path)
        assert status == 0, err
        with Accountant.load(path, must_exist=True) as a:
            assert a.last_update_time == NOW and a.names() == ["alice@d"]
    shown = run("userprio", "--state", empty, "--json")
    assert shown[0] == 0 and json.loads(shown[1])["last_update"] == NOW


def test_clear_starts_the_store_over(tmp_path):
    """Every table is emptied and the clock forgotten, in one commit; the cleared store then
    takes new records as a new one does."""
    db = damaged(tmp_path, "customers", "floor", 2.0)  # a whole store: records, a claim, policy state
    with Accountant.load(db) as a:
        a.set_group_quotas([])
        a.clear()
    with Accountant.load(db, read_only=True) as a:
        assert (a.names(), a.claims(), a.last_update_time) == ([], [], None)
        assert a.policy_usage("lsf") == {} and a.policy_report() is None and a.group_quotas() == []
    with Accountant.load(db) as a:
        with a.transaction():
            a.update_priorities(NOW + 100)
            a.add_match("bob@d", "s0", 1.0, NOW + 100)
    with Accountant.load(db, read_only=True) as a:
        assert a.last_update_time == NOW + 100 and a.names() == ["bob@d"]
