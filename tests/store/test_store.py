"""store: real SQLite files in tmp_path; what is committed, what is refused, what is found."""

from __future__ import annotations

import dataclasses
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from hypothesis import HealthCheck, given, settings

import storbench.store.base as store_base
import storbench.store.database as store_mod
import storbench.store.opening as store_opening
from storbench.errors import StoreError, UsageError
from storbench.model import DirectionStats, FioResult, JobResult
from storbench.record import ResultRecord
from storbench.store import Store, default_db_url
from storbench.store.tables import metadata

from test_serialize import bare_fio, fio_results, rich_fio  # shared builders and strategies

SRC = Path(store_mod.__file__).resolve().parents[2]

RAW = "fio: warning\r\nline two\x00\ttab é 🚀\n\n{ \"fio version\" : \"fio-3.33\" }\n"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "results.sqlite"


def url(path: Path) -> str:
    return f"sqlite:///{path}"


def make_record(run_id: int, fio: FioResult | None = None, **kw) -> ResultRecord:
    base = dict(
        run_id=run_id,
        workload="randread-4k",
        target="/mnt/test",
        fio=fio if fio is not None else rich_fio(),
        raw_output=RAW,
        label="baseline",
        source=None,
        options={"rw": "randread", "bs": "4k", "time_based": None},
        job_text="[randread-4k]\nrw=randread\n",
        repetition=0,
        created_at="2024-05-31T16:08:37Z",
        host="box",
    )
    base.update(kw)
    return ResultRecord(**base)


def snapshot(path: Path) -> dict[str, bytes]:
    """Every file in the directory, by name: proves nothing was created or modified."""
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir())}


def sql(path: Path, query: str, *args) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(query, args).fetchall()
    finally:
        conn.close()


# --------------------------------------------------------------------------- round trips


def test_round_trip_rich_and_bare_results(db: Path) -> None:
    with Store.open(url(db)) as store:
        run = store.create_run("baseline", "run", suite="quick", meta={"argv": ["storbench", "run"], "host": {"cpus": 8}})
        recs = [
            make_record(run, rich_fio()),
            make_record(run, bare_fio(), target=None, label=None, options={}, job_text=None, host=None, repetition=1),
            make_record(run, rich_fio(), source="/tmp/imported.json", raw_output=""),
        ]
        ids = [store.add_result(r) for r in recs]
        assert ids == sorted(ids) and len(set(ids)) == 3
    with Store.open(url(db)) as store:
        back = store.results(run)
        assert back == [dataclasses.replace(r, result_id=i) for r, i in zip(recs, ids)]
        assert back[0].raw_output == RAW  # verbatim, CR, NUL and all
        assert list(back[0].options) == ["rw", "bs", "time_based"]
        assert store.run_meta(run) == {"argv": ["storbench", "run"], "host": {"cpus": 8}}


def test_property_round_trip_through_store(db: Path) -> None:
    store = Store.open(url(db))
    run = store.create_run(None, "import")

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(fio_results)
    def check(fio: FioResult) -> None:
        rec = make_record(run, fio)
        rid = store.add_result(rec)
        assert store.results(run)[-1] == dataclasses.replace(rec, result_id=rid)

    try:
        check()
    finally:
        store.close()


def test_created_at_from_injected_clock(db: Path) -> None:
    clock = lambda: datetime(2024, 1, 2, 3, 4, 5, 999, tzinfo=UTC)  # noqa: E731
    with Store.open(url(db), clock=clock) as store:
        run = store.create_run("x", "run")
        store.add_result(make_record(run, created_at=None))
        store.finish_run(run, "complete")
        assert store.results(run)[0].created_at == "2024-01-02T03:04:05Z"
        info = store.get_run(run)
        assert info.created_at == info.finished_at == "2024-01-02T03:04:05Z"


def _dir(name: str, iops: float, bw: float) -> DirectionStats:
    return DirectionStats(name, io_bytes=1, bw_bytes=bw, iops=iops, runtime_ms=1)


def test_headline_columns(db: Path) -> None:
    two_jobs = FioResult(
        "fio-3.33",
        (
            JobResult("a", directions={"read": _dir("read", 10, 100), "write": _dir("write", 1, 10)}),
            JobResult("b", directions={"read": _dir("read", 20, 200)}),
        ),
        "json",
    )
    clients = FioResult(
        "fio-3.33",
        (
            JobResult("a", hostname="h1", directions={"read": _dir("read", 10, 100)}),
            JobResult("b", hostname="h2", directions={"read": _dir("read", 20, 200)}),
            JobResult("All clients", is_aggregate=True, directions={"read": _dir("read", 31, 301)}),
        ),
        "json",
    )
    mixed = FioResult("fio-3.33", (JobResult("m", directions={"mixed": _dir("mixed", 5, 50)}),), "json")
    with Store.open(url(db)) as store:
        run = store.create_run("x", "run")
        for fio in (two_jobs, clients, mixed):
            store.add_result(make_record(run, fio))
    rows = sql(db, "SELECT read_iops, write_iops, read_bw_bytes, write_bw_bytes FROM results ORDER BY id")
    assert rows == [(30.0, 1.0, 300.0, 10.0), (31.0, None, 301.0, None), (None, None, None, None)]


# --------------------------------------------------------------------------- durability and concurrency


def test_each_result_committed_before_finish_and_wal_on(db: Path) -> None:
    with Store.open(url(db)) as store:
        run = store.create_run("live", "run")
        other = sqlite3.connect(db)  # an independent connection, plain sqlite3
        try:
            assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert other.execute("SELECT status FROM runs WHERE id = ?", (run,)).fetchone() == ("running",)
            for n in range(1, 4):
                rid = store.add_result(make_record(run, repetition=n))
                seen = other.execute("SELECT id, repetition FROM results WHERE run_id = ? ORDER BY id", (run,)).fetchall()
                assert seen[-1] == (rid, n) and len(seen) == n
        finally:
            other.close()
        store.finish_run(run, "incomplete", reason="interrupted")
    assert sql(db, "SELECT status, reason FROM runs") == [("incomplete", "interrupted")]


def test_foreign_keys_on(db: Path) -> None:
    with Store.open(url(db)) as store:
        with store._engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000


def test_write_waits_for_another_writer(db: Path) -> None:
    with Store.open(url(db)) as store:
        run = store.create_run("x", "run")
        blocker = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        blocker.execute("BEGIN IMMEDIATE")  # holds the write lock
        threading.Timer(1.0, blocker.rollback).start()
        started = time.monotonic()
        rid = store.add_result(make_record(run))
        assert time.monotonic() - started >= 0.9
        blocker.close()
        assert [r.result_id for r in store.results(run)] == [rid]


WRITER = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, sys.argv[4])
    from storbench.store import Store
    from storbench.model import DirectionStats, FioResult, JobResult
    from storbench.record import ResultRecord
    url, go, tag = sys.argv[1:4]
    while not os.path.exists(go):
        time.sleep(0.002)
    with Store.open(url) as store:
        run = store.create_run(tag, "run")
        for i in range(50):
            d = DirectionStats("read", io_bytes=4096 * i, bw_bytes=1.0 * i, iops=float(i), runtime_ms=i)
            fio = FioResult("fio-3.33", (JobResult(tag, directions={"read": d}),), "json")
            store.add_result(ResultRecord(run, "w%d" % i, "/t", fio, "raw %s %d" % (tag, i), label=tag, repetition=i))
        store.finish_run(run, "complete")
    """
)


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh-file", "existing-file"])
def test_two_processes_write_at_once(db: Path, tmp_path: Path, fresh: bool) -> None:
    if not fresh:
        Store.open(url(db)).close()
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url(db), str(go), tag, str(SRC)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("p1", "p2")
    ]
    time.sleep(0.5)  # let both start and wait at the line
    go.touch()
    for p in procs:
        _out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert err == ""  # no Alembic or SQLAlchemy chatter on stderr
    with Store.open(url(db)) as store:
        runs = store.list_runs()
        assert sorted(r.label for r in runs) == ["p1", "p2"]
        assert all(r.result_count == 50 and r.status == "complete" for r in runs)
        for r in runs:
            recs = store.results(r.run_id)
            assert [x.repetition for x in recs] == list(range(50))
            assert {x.raw_output for x in recs} == {f"raw {r.label} {i}" for i in range(50)}
    assert sql(db, "SELECT count(*) FROM results") == [(100,)]


# --------------------------------------------------------------------------- refusing databases


def test_random_bytes_refused_and_untouched(db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.write_bytes(os.urandom(8192))
    before = snapshot(db)
    with pytest.raises(StoreError, match=r"is not a storbench database \(not an SQLite file\): ") as err:
        Store.open(url(db))
    assert str(err.value).startswith(str(db))
    assert "\n" not in str(err.value)
    assert snapshot(db) == before


def test_corrupt_sqlite_refused_and_untouched(db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    before = snapshot(db)
    with pytest.raises(StoreError, match=r"is not a storbench database \(corrupt SQLite file\): "):
        Store.open(url(db))
    assert snapshot(db) == before


def test_foreign_sqlite_refused_and_untouched(db: Path) -> None:
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE recipes (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    before = snapshot(db)
    with pytest.raises(StoreError, match=r"is not a storbench database \(other tables\): it holds recipes"):
        Store.open(url(db))
    assert snapshot(db) == before


def test_other_applications_alembic_refused(db: Path) -> None:
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
    conn.execute("INSERT INTO alembic_version VALUES ('ae1027a6acf')")
    conn.execute("CREATE TABLE users (id INTEGER)")
    conn.commit()
    conn.close()
    before = snapshot(db)
    with pytest.raises(StoreError, match=r"not a storbench database \(foreign schema\)"):
        Store.open(url(db))
    assert snapshot(db) == before


def test_newer_schema_refused_and_untouched(db: Path) -> None:
    with Store.open(url(db)) as store:
        store.create_run("x", "run")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE alembic_version SET version_num = '0099'")
    conn.commit()
    conn.close()
    before = snapshot(db)
    with pytest.raises(StoreError) as err:
        Store.open(url(db))
    assert str(err.value) == f"database {db} was written by a newer storbench (schema 0099); upgrade storbench"
    assert snapshot(db) == before


def test_newer_schema_refused_while_another_process_has_it_open(db: Path) -> None:
    """With -wal/-shm present (the database is in use) the check still writes nothing."""
    with Store.open(url(db)) as store:
        store.create_run("x", "run")
    holder = sqlite3.connect(db)
    try:
        holder.execute("UPDATE alembic_version SET version_num = '0099'")
        holder.commit()
        assert db.with_name(db.name + "-wal").exists()
        before = db.read_bytes(), db.with_name(db.name + "-wal").read_bytes()
        with pytest.raises(StoreError, match=r"newer storbench \(schema 0099\)"):
            Store.open(url(db))
        assert (db.read_bytes(), db.with_name(db.name + "-wal").read_bytes()) == before
    finally:
        holder.close()


def test_empty_file_becomes_a_database(db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.touch()
    with Store.open(url(db)) as store:
        assert store.list_runs() == []
    assert sql(db, "SELECT version_num FROM alembic_version") == [(HEAD,)]


def test_directory_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="a directory"):
        Store.open(url(tmp_path))


def test_bad_url_is_store_error() -> None:
    with pytest.raises(StoreError, match="not a database URL"):
        Store.open("::not a url::")


# --------------------------------------------------------------------------- schema and migrations


def test_head_schema_matches_tables_module(db: Path) -> None:
    Store.open(url(db)).close()
    from sqlalchemy import create_engine

    engine = create_engine(url(db))
    try:
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    finally:
        engine.dispose()
    indexes = {r[0] for r in sql(db, "SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"ix_results_run_id", "ix_runs_label"} <= indexes


def test_current_database_is_not_backed_up(db: Path) -> None:
    """Only one revision exists: reopening a database at head migrates nothing and copies nothing."""
    Store.open(url(db)).close()
    Store.open(url(db)).close()
    assert list(db.parent.glob("*.bak-*")) == []


HEAD = "0007"

MIGRATION_NEXT = '''
"""Test-only: add results.note."""
import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("note", sa.Text(), nullable=True))
    FAIL
'''


def _fake_next_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, fail: bool) -> None:
    """A copy of the real migrations plus a 0008, as a future storbench would ship."""
    migrations = tmp_path / ("migrations-fail" if fail else "migrations")
    shutil.copytree(store_mod.MIGRATIONS_DIR, migrations, ignore=shutil.ignore_patterns("__pycache__"))
    body = MIGRATION_NEXT.replace("FAIL", 'raise RuntimeError("disk on fire")' if fail else "")
    (migrations / "versions" / "0008_note.py").write_text(body)
    monkeypatch.setattr(store_mod, "MIGRATIONS_DIR", migrations)


def test_older_schema_is_backed_up_then_upgraded(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Store.open(url(db)) as store:  # made by "the previous version": schema 0007
        run = store.create_run("old", "run", meta={"k": "v"})
        rec = make_record(run)
        rid = store.add_result(rec)
    old_bytes_runs = sql(db, "SELECT * FROM runs")

    _fake_next_version(tmp_path, monkeypatch, fail=False)
    with Store.open(url(db)) as store:
        assert store.results(run) == [dataclasses.replace(rec, result_id=rid)]
        assert store.run_meta(run) == {"k": "v"}
    backup = db.with_name(db.name + ".bak-0007")
    assert backup.exists()
    assert sql(backup, "SELECT version_num FROM alembic_version") == [("0007",)]
    assert sql(backup, "SELECT * FROM runs") == old_bytes_runs
    assert "note" not in {r[1] for r in sql(backup, "PRAGMA table_info(results)")}
    assert sql(db, "SELECT version_num FROM alembic_version") == [("0008",)]
    assert "note" in {r[1] for r in sql(db, "PRAGMA table_info(results)")}

    Store.open(url(db)).close()  # now current: no second backup
    assert sorted(p.name for p in db.parent.glob("*.bak-*")) == [backup.name]

    monkeypatch.undo()  # back to this storbench, which only knows 0007
    with pytest.raises(StoreError, match=r"newer storbench \(schema 0008\)"):
        Store.open(url(db))


def test_run_index_is_kept_as_results_arrive_and_filled_by_the_upgrade(db: Path) -> None:
    """What the runs page filters on (0006): each run's targets, hosts (its results' and its own
    host name) and finding checks, kept as results arrive, and the same rows made by the upgrade
    from the results a 0005 history already holds."""
    from storbench.model import Finding

    page_cache = Finding(check="page-cache", severity="invalid", message="m", fix="f", workload="randread-4k")
    with Store.open(url(db)) as store:
        a = store.create_run("a", "run", meta={"host": {"hostname": "lab-01"}})
        store.add_result(make_record(a, target="/srv/pool1", host=None, findings=(page_cache,)))
        store.add_result(make_record(a, target="/srv/pool2", host=None, repetition=1))
        b = store.create_run("b", "run", meta={})
        store.add_results([make_record(b, target="/srv/pool2", host="10.0.0.1:8765"), make_record(b, target="/srv/pool2", host="all")])
        kept = sql(db, "SELECT run_id, targets, hosts, checks FROM run_index ORDER BY run_id")
        assert kept == [(a, "\n/srv/pool1\n/srv/pool2\n", "\nlab-01\n", "\npage-cache\n"), (b, "\n/srv/pool2\n", "\n10.0.0.1:8765\n", "")]

        def found(**kw) -> list[int]:
            return [i.run_id for i in store.query_runs(**kw)[0]]

        assert found(target="pool1") == [a] and found(target="/srv/pool2") == [b, a] and found(target="pool3") == []
        assert found(host="lab") == [a] and found(host="10.0.0.1") == [b] and found(host="all") == []
        assert found(check="page-cache") == [a] and found(check="page") == []  # a check by its whole name
    # a history made before 0006: the table gone, the revision 0005; opening it upgrades and fills it
    conn = sqlite3.connect(db)
    conn.executescript("DROP TABLE run_index; DROP TABLE traces; UPDATE alembic_version SET version_num = '0005';")
    conn.close()
    with Store.open(url(db)) as store:
        assert sql(db, "SELECT run_id, targets, hosts, checks FROM run_index ORDER BY run_id") == kept
        assert [i.run_id for i in store.query_runs(check="page-cache")[0]] == [a]


def test_failed_migration_rolls_back(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Store.open(url(db)) as store:
        store.create_run("old", "run")
    _fake_next_version(tmp_path, monkeypatch, fail=True)
    with pytest.raises(StoreError, match=r"from schema 0007 to 0008 failed: disk on fire"):
        Store.open(url(db))
    # transactional DDL: the column added before the failure is gone, the revision unchanged
    assert sql(db, "SELECT version_num FROM alembic_version") == [("0007",)]
    assert "note" not in {r[1] for r in sql(db, "PRAGMA table_info(results)")}
    assert sql(db, "SELECT label FROM runs") == [("old",)]


# --------------------------------------------------------------------------- queries


@pytest.fixture
def filled(db: Path):
    with Store.open(url(db)) as store:
        a = store.create_run("nightly", "run", suite="quick")
        b = store.create_run("nightly-ssd", "run")
        c = store.create_run("nightly", "import")
        d = store.create_run("42", "run")
        e = store.create_run("50%_off", "run")
        store.add_result(make_record(a))
        store.add_result(make_record(a, repetition=1))
        store.add_result(make_record(c))
        store.finish_run(a, "complete")
        store.finish_run(b, "failed", reason="fio: No space left on device")
        yield store, (a, b, c, d, e)


def test_list_runs(filled) -> None:
    store, (a, b, c, d, e) = filled
    runs = store.list_runs()
    assert [r.run_id for r in runs] == [e, d, c, b, a]
    assert [r.result_count for r in runs] == [0, 0, 1, 0, 2]
    assert runs[-1].status == "complete" and runs[-1].suite == "quick" and runs[-1].finished_at
    assert runs[-2].status == "failed" and runs[-2].reason == "fio: No space left on device"
    assert runs[0].status == "running" and runs[0].finished_at is None
    assert runs[2].kind == "import"
    assert [r.run_id for r in store.list_runs(limit=2)] == [e, d]
    assert [r.run_id for r in store.list_runs(label_prefix="nightly")] == [c, b, a]
    assert [r.run_id for r in store.list_runs(label_prefix="nightly-")] == [b]
    assert store.list_runs(label_prefix="NIGHTLY") == []  # case-sensitive
    assert [r.run_id for r in store.list_runs(label_prefix="50%_")] == [e]  # no LIKE wildcards
    assert store.list_runs(label_prefix="5_") == []


def test_get_run_and_not_found(filled, db: Path) -> None:
    store, (a, *_rest, e) = filled
    info = store.get_run(a)
    assert (info.run_id, info.label, info.result_count, info.storbench_version) == (a, "nightly", 2, "0.1.0")
    with pytest.raises(UsageError) as err:
        store.get_run(99)
    assert str(err.value) == f"no run 99 in {db} (runs are {a}..{e}; see storbench list)"


def test_not_found_in_empty_database(db: Path) -> None:
    with Store.open(url(db)) as store:
        with pytest.raises(UsageError, match=r"^no run 1 in .* \(it holds no runs yet\)$"):
            store.get_run(1)
        with pytest.raises(UsageError, match="no run 1"):
            store.results(1)
        with pytest.raises(UsageError, match="no run 1"):
            store.run_meta(1)
        with pytest.raises(UsageError, match="no run 1"):
            store.finish_run(1, "complete")
        with pytest.raises(UsageError, match="no run 1"):
            store.add_result(make_record(1))


def test_find_runs(filled) -> None:
    store, (a, b, c, d, _e) = filled
    assert store.find_runs(str(a)) == [a]
    assert store.find_runs(f" {b} ") == [b]
    assert store.find_runs("nightly") == [c, a]  # exact label, newest first
    assert store.find_runs("42") == [d]  # no run 42: the label
    assert store.find_runs(str(d)) == [d]  # an id wins over a label
    assert store.find_runs("nightly-s") == []
    assert store.find_runs("nope") == []


def test_results_order_and_empty_run(filled) -> None:
    store, (a, b, *_rest) = filled
    assert [r.repetition for r in store.results(a)] == [0, 1]
    assert store.results(b) == []


def test_batch_reads_match_the_one_run_reads(filled, db: Path) -> None:
    """get_runs / results_of / run_metas: one query each, the same records as get_run /
    results / run_meta, in the order asked (a repeated id once), a missing run named."""
    store, (a, b, c, _d, e) = filled
    order = [c, a, b, a]
    infos = store.get_runs(order)
    assert list(infos) == [c, a, b] and infos == {rid: store.get_run(rid) for rid in (c, a, b)}
    found = store.results_of(order)
    assert list(found) == [c, a, b] and found == {rid: store.results(rid) for rid in (c, a, b)}
    assert [r.repetition for r in found[a]] == [0, 1] and found[b] == []
    assert store.run_metas([e, a]) == {e: store.run_meta(e), a: store.run_meta(a)}
    assert store.get_runs([]) == {} and store.results_of([]) == {} and store.run_metas([]) == {}
    for read in (store.get_runs, store.results_of, store.run_metas):
        with pytest.raises(UsageError) as err:
            read([a, 99, 98])
        assert str(err.value) == f"no run 99 in {db} (runs are {a}..{e}; see storbench list)"


def test_batch_reads_cross_the_in_chunk(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    monkeypatch.setattr(store_base, "IN_CHUNK", 2)
    with Store.open(url(db)) as store:
        ids = [store.create_run(f"r{i}", "run") for i in range(5)]
        for rid in ids:
            store.add_result(make_record(rid))
        ask = ids[::-1]
        assert list(store.get_runs(ask)) == ask
        assert [recs[0].run_id for recs in store.results_of(ask).values()] == ask
        assert list(store.run_metas(ask)) == ask


def test_bad_kind_and_status(filled) -> None:
    store, (a, *_rest) = filled
    with pytest.raises(ValueError):
        store.create_run("x", "benchmark")
    with pytest.raises(ValueError):
        store.finish_run(a, "running")


def test_meta_not_json_is_store_error(filled) -> None:
    store, _ = filled
    with pytest.raises(StoreError, match="cannot be stored as JSON"):
        store.create_run("x", "run", meta={"when": datetime.now()})


# --------------------------------------------------------------------------- default location


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"HOME": "/home/u"}, "sqlite:////home/u/.local/share/storbench/results.sqlite"),
        ({"HOME": "/home/u", "XDG_DATA_HOME": "/data"}, "sqlite:////data/storbench/results.sqlite"),
        ({"HOME": "/home/u", "XDG_DATA_HOME": ""}, "sqlite:////home/u/.local/share/storbench/results.sqlite"),
        ({"HOME": "/home/u", "XDG_DATA_HOME": "rel"}, "sqlite:////home/u/.local/share/storbench/results.sqlite"),
        ({"HOME": "/home/u", "STORBENCH_DB": "/srv/r.db"}, "sqlite:////srv/r.db"),
        ({"HOME": "/home/u", "STORBENCH_DB": "~/r.db"}, "sqlite:////home/u/r.db"),
        ({"HOME": "/home/u", "STORBENCH_DB": "r.db"}, "sqlite:///r.db"),
        ({"STORBENCH_DB": "postgresql://u@db/storbench"}, "postgresql://u@db/storbench"),
    ],
)
def test_default_db_url(env, expected) -> None:
    assert default_db_url(env) == expected


def test_default_location_is_created(tmp_path: Path) -> None:
    target = default_db_url({"HOME": str(tmp_path)})
    with Store.open(target) as store:
        assert store.path == tmp_path / ".local/share/storbench/results.sqlite"
    assert store.path.is_file()


def test_database_made_at_schema_0001_is_backed_up_and_migrated(db: Path) -> None:
    """A database as the first storbench wrote it (schema 0001) keeps its results and
    gains the 0002 columns; the untouched copy is kept beside it."""
    import json

    from alembic import command
    from sqlalchemy import create_engine

    from storbench.serialize import fio_result_to_dict

    db.parent.mkdir(parents=True)
    engine = create_engine(url(db))
    try:
        with engine.begin() as conn:
            cfg = store_opening.alembic_config(str(store_mod.MIGRATIONS_DIR))
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "0001")
            conn.exec_driver_sql(
                "INSERT INTO runs (label, kind, status, created_at, meta_json) "
                "VALUES ('old', 'run', 'complete', '2026-11-01T00:00:00Z', '{}')"
            )
            fio = json.dumps(fio_result_to_dict(make_record(1).fio))
            conn.exec_driver_sql(
                "INSERT INTO results (run_id, workload, repetition, options_json, result_json, raw_output, created_at) "
                f"VALUES (1, 'w', 0, '{{}}', '{fio}', 'raw', '2026-11-01T00:00:00Z')"
            )
    finally:
        engine.dispose()
    with Store.open(url(db)) as store:
        [rec] = store.results(1)
        assert rec.workload == "w" and rec.raw_output == "raw"
        assert rec.storage is None and rec.activity is None and rec.findings == () and rec.space is None
    assert sql(db.with_name(db.name + ".bak-0001"), "SELECT version_num FROM alembic_version") == [("0001",)]
    assert sql(db, "SELECT version_num FROM alembic_version") == [(HEAD,)]
    assert {"storage_json", "activity_json", "findings_json", "space_json"} <= {
        r[1] for r in sql(db, "PRAGMA table_info(results)")
    }


_SYNC_CHILD = textwrap.dedent("""
    import sys
    from storbench.store import Store
    from test_store import make_record
    live, results = int(sys.argv[2]), int(sys.argv[3])
    with Store.open(sys.argv[1]) as store:
        run = store.create_run("x", "run")
        for n in range(results):
            store.add_result(make_record(run, repetition=n))
        for n in range(live):
            store.publish_live(run, {"index": n})
""")


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_live_state_writes_add_no_flush_and_results_each_have_theirs(tmp_path: Path) -> None:
    """A run rewrites its live state three times a workload: those commits are not flushed on
    their own (SQLite WAL, synchronous=NORMAL for them); every result's commit still is."""

    def syncs(name: str, live: int, results: int) -> int:
        db, trace = tmp_path / f"{name}.db", tmp_path / f"{name}.trace"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), str(Path(__file__).parents[1]), *sys.path])}
        subprocess.run(["strace", "-f", "-y", "-e", "trace=fsync,fdatasync", "-o", str(trace), sys.executable, "-c", _SYNC_CHILD,
                        url(db), str(live), str(results)], check=True, env=env, capture_output=True, timeout=120)  # fmt: skip
        return sum(1 for line in trace.read_text().splitlines() if f"{name}.db-wal>" in line)

    base = syncs("base", live=0, results=1)
    assert base >= 2  # the run's row and the result, each flushed
    assert syncs("live", live=10, results=1) == base
    assert syncs("results", live=0, results=11) >= base + 10
    with Store.open(url(tmp_path / "live.db")) as store:
        store.publish_live(store.create_run("y", "run"), {"index": 0})
        with store._engine.connect() as conn:  # the pool's one connection, FULL again for what comes next
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2
