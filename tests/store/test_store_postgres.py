"""store on a REAL PostgreSQL 15 server: the guarantees the SQLite tests prove, again.

The server is started once for the session by :mod:`pg` (initdb into a temporary
directory, a free local port, stopped and removed at the end); every test gets
its own new database.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

import storbench.store.database as store_mod
import storbench.store.opening as store_opening
from storbench.errors import StoreError
from storbench.store import Store
from storbench.store.tables import metadata

from conftest import needs_fio
from pg import pg_server, pg_url  # noqa: F401 - fixtures
from test_serialize import bare_fio, rich_fio
from test_store import SRC, WRITER, make_record


def head() -> str:
    return store_opening.alembic_script(str(store_mod.MIGRATIONS_DIR)).get_current_head()


def libpq(url: str) -> str:
    """The psycopg (libpq) DSN of a SQLAlchemy URL: an independent connection, no SQLAlchemy."""
    u = make_url(url)
    return f"host={u.host} port={u.port} user={u.username} dbname={u.database}"


def rows(url: str, query: str, *args) -> list[tuple]:
    with psycopg.connect(libpq(url)) as conn:
        return conn.execute(query, args).fetchall()


def state(url: str) -> dict[str, list[tuple]]:
    """Every table in the public schema with all its rows: proves nothing was modified."""
    with psycopg.connect(libpq(url)) as conn:
        names = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")]
        out = {n: sorted(map(repr, conn.execute(f'SELECT * FROM "{n}"').fetchall())) for n in names}
        out["(columns)"] = conn.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'public' ORDER BY 1, 2"
        ).fetchall()
    return out


# --------------------------------------------------------------------------- schema


def test_migrations_create_schema_at_head(pg_url: str) -> None:
    assert state(pg_url) == {"(columns)": []}
    with Store.open(pg_url) as store:
        assert store.path is None and store.display == pg_url  # no password in this URL
        assert store.list_runs() == []
    assert rows(pg_url, "SELECT version_num FROM alembic_version") == [(head(),)]
    engine = create_engine(pg_url)
    try:
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    finally:
        engine.dispose()
    Store.open(pg_url).close()  # reopening at head changes nothing
    assert rows(pg_url, "SELECT version_num FROM alembic_version") == [(head(),)]


def test_results_round_trip(pg_url: str) -> None:
    with Store.open(pg_url) as store:
        run = store.create_run("baseline", "run", suite="quick", meta={"argv": ["storbench", "run"], "é": "🚀"})
        recs = [
            make_record(run, rich_fio(), raw_output="fio: warning\r\nline two\ttab é 🚀\n"),
            make_record(run, bare_fio(), target=None, label=None, options={}, job_text=None, host=None, repetition=1,
                        raw_output=""),
        ]
        ids = [store.add_result(r) for r in recs]
        store.finish_run(run, "complete")
    with Store.open(pg_url) as store:
        assert store.results(run) == [dataclasses.replace(r, result_id=i) for r, i in zip(recs, ids)]
        assert store.run_meta(run) == {"argv": ["storbench", "run"], "é": "🚀"}
        [info] = store.list_runs(label_prefix="base")
        assert (info.status, info.result_count, info.suite) == ("complete", 2, "quick")
        assert store.find_runs("baseline") == [run]
        other = store.create_run("other", "run")
        assert store.results_of([other, run]) == {other: [], run: store.results(run)}  # one query, both runs
        assert list(store.get_runs([other, run])) == [other, run]
        assert store.run_metas([run]) == {run: {"argv": ["storbench", "run"], "é": "🚀"}}


def test_raw_output_with_nul_round_trips(pg_url: str) -> None:
    """PostgreSQL text cannot hold NUL; SQLite can.  fio output with a NUL byte must still be kept verbatim."""
    raw = "fio: warning\x00 binary garbage \x00\n{}"
    with Store.open(pg_url) as store:
        run = store.create_run("nul\x00label", "import")
        rec = make_record(run, raw_output=raw, label="nul\x00label", job_text="[x]\x00")
        rid = store.add_result(rec)
        assert store.results(run) == [dataclasses.replace(rec, result_id=rid)]
        assert store.get_run(run).label == "nul\x00label"


def test_each_result_committed_before_finish(pg_url: str) -> None:
    with Store.open(pg_url) as store:
        run = store.create_run("live", "run")
        with psycopg.connect(libpq(pg_url), autocommit=True) as other:  # another connection, plain psycopg
            assert other.execute("SELECT status FROM runs WHERE id = %s", (run,)).fetchone() == ("running",)
            for n in range(1, 4):
                rid = store.add_result(make_record(run, repetition=n))
                seen = other.execute(
                    "SELECT id, repetition FROM results WHERE run_id = %s ORDER BY id", (run,)
                ).fetchall()
                assert seen[-1] == (rid, n) and len(seen) == n
        store.finish_run(run, "incomplete", reason="interrupted")
    assert rows(pg_url, "SELECT status, reason FROM runs") == [("incomplete", "interrupted")]


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh-database", "existing-schema"])
def test_two_processes_write_at_once(pg_url: str, tmp_path, fresh: bool) -> None:
    """Two processes open (and on a fresh database: create the schema) and write 50 results each at once."""
    if not fresh:
        Store.open(pg_url).close()
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, pg_url, str(go), tag, str(SRC)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for tag in ("p1", "p2")
    ]
    time.sleep(1.0)  # both started (imports done) and waiting at the line
    go.touch()
    for p in procs:
        _out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert err == ""
    with Store.open(pg_url) as store:
        runs = store.list_runs()
        assert sorted(r.label for r in runs) == ["p1", "p2"]
        assert all(r.result_count == 50 and r.status == "complete" for r in runs)
        for r in runs:
            recs = store.results(r.run_id)
            assert [x.repetition for x in recs] == list(range(50))
            assert {x.raw_output for x in recs} == {f"raw {r.label} {i}" for i in range(50)}
    assert rows(pg_url, "SELECT count(*) FROM results") == [(100,)]
    assert rows(pg_url, "SELECT version_num FROM alembic_version") == [(head(),)]


def test_newer_schema_refused_and_untouched(pg_url: str) -> None:
    with Store.open(pg_url) as store:
        run = store.create_run("x", "run")
        store.add_result(make_record(run))
    with psycopg.connect(libpq(pg_url)) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099'")
    before = state(pg_url)
    with pytest.raises(StoreError) as err:
        Store.open(pg_url)
    assert str(err.value) == f"database {pg_url} was written by a newer storbench (schema 0099); upgrade storbench"
    assert state(pg_url) == before


def test_other_applications_tables_are_left_alone(pg_url: str) -> None:
    """A PostgreSQL database may hold other tables: storbench adds its own and touches nothing else."""
    with psycopg.connect(libpq(pg_url)) as conn:
        conn.execute("CREATE TABLE recipes (id integer PRIMARY KEY, name text)")
        conn.execute("INSERT INTO recipes VALUES (1, 'soup')")
    with Store.open(pg_url) as store:
        store.create_run("x", "run")
    assert rows(pg_url, "SELECT * FROM recipes") == [(1, "soup")]


def test_missing_database_is_one_line(pg_server) -> None:
    url = pg_server.url("no_such_database")
    with pytest.raises(StoreError) as err:
        Store.open(url)
    assert "\n" not in str(err.value) and "no_such_database" in str(err.value)


# --------------------------------------------------------------------------- end to end


@needs_fio
def test_cli_run_and_show_on_postgres(cli, tmp_path, pg_url: str) -> None:
    target = tmp_path / "t"
    target.mkdir()
    res = cli("--db", pg_url, "run", "--workload", "rnd4k-q1t1-read", "--target", str(target),
              "--size", "16m", "--runtime", "1", "--label", "pg", "--no-report")
    assert res.code == 0, res.err
    assert f"results stored in {pg_url} as run 1" in res.out
    shown = cli("--db", pg_url, "show", "pg", "--json")
    assert shown.code == 0, shown.err
    [rec] = json.loads(shown.out)
    assert rec["workload"] == "rnd4k-q1t1-read" and rec["label"] == "pg"
    read = rec["jobs"][0]["read"]
    assert read["io_bytes"] > 0 and read["iops"] == pytest.approx(read["io_bytes"] / 4096 / read["runtime_ms"] * 1000, rel=0.05)
    assert rows(pg_url, "SELECT status FROM runs") == [("complete",)]
    assert rows(pg_url, "SELECT count(*) FROM results") == [(1,)]
    assert list(target.iterdir()) == []
    assert not cli.db.exists()  # nothing went to the default SQLite file


# --------------------------------------------------------------------------- migrations on PostgreSQL

NEXT_MIGRATION = '''
"""Test-only: add results.note (a future storbench)."""
import sqlalchemy as sa
from alembic import op

revision = "9001"
down_revision = "HEAD"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("results", sa.Column("note", sa.Text(), nullable=True))
    FAIL
'''


def _next_version(tmp_path, monkeypatch, *, fail: bool) -> None:
    import shutil

    current = head()
    migrations = tmp_path / ("migrations-fail" if fail else "migrations")
    shutil.copytree(store_mod.MIGRATIONS_DIR, migrations, ignore=shutil.ignore_patterns("__pycache__"))
    body = NEXT_MIGRATION.replace('"HEAD"', repr(current)).replace("FAIL", 'raise RuntimeError("disk on fire")' if fail else "")
    (migrations / "versions" / "9001_note.py").write_text(body)
    monkeypatch.setattr(store_mod, "MIGRATIONS_DIR", migrations)


def _columns(url: str, table: str) -> set[str]:
    return {r[0] for r in rows(url, "SELECT column_name FROM information_schema.columns WHERE table_name = %s", table)}


def test_older_schema_is_upgraded_in_place(pg_url: str, tmp_path, monkeypatch) -> None:
    old_head = head()
    with Store.open(pg_url) as store:
        run = store.create_run("old", "run", meta={"k": "v"})
        rec = make_record(run, raw_output="kept")
        rid = store.add_result(rec)
    _next_version(tmp_path, monkeypatch, fail=False)
    with Store.open(pg_url) as store:
        assert store.results(run) == [dataclasses.replace(rec, result_id=rid)]
    assert rows(pg_url, "SELECT version_num FROM alembic_version") == [("9001",)]
    assert "note" in _columns(pg_url, "results")
    monkeypatch.undo()
    with pytest.raises(StoreError, match=r"newer storbench \(schema 9001\)"):
        Store.open(pg_url)
    assert old_head != "9001"


def test_failed_migration_rolls_back_on_postgres(pg_url: str, tmp_path, monkeypatch) -> None:
    """Transactional DDL: the column added before the failure is gone, the revision unchanged."""
    with Store.open(pg_url) as store:
        store.create_run("old", "run")
    before = state(pg_url)
    _next_version(tmp_path, monkeypatch, fail=True)
    with pytest.raises(StoreError, match=r"to 9001 failed: disk on fire"):
        Store.open(pg_url)
    assert state(pg_url) == before


# --------------------------------------------------------------------------- a server restart mid-run


@needs_fio
def test_a_postgresql_restart_during_a_run_is_waited_for(cli, tmp_path, pg_server, pg_url: str, monkeypatch) -> None:
    """The server is stopped just before the second workload's fio starts and comes back 2 s later,
    while fio runs or the result is being stored: storbench reconnects, stores it, ends complete."""
    import threading

    from storbench.run import runner

    target = tmp_path / "t"
    target.mkdir()
    pg_ctl = str(pg_server.bin_dir / "pg_ctl")
    opts = f"-p {pg_server.port} -k {pg_server.root} -c listen_addresses=127.0.0.1"
    calls = [0]
    restarted = threading.Event()
    original = runner.SubprocessFio.run

    def start_again() -> None:
        time.sleep(2.0)
        pg_server.run(pg_ctl, "-D", str(pg_server.data_dir), "-l", str(pg_server.log_file), "-w", "-t", "60", "-o", opts, "start")
        restarted.set()

    def run(self, job_text, on_status, env=None):
        calls[0] += 1
        if calls[0] == 2:
            stop = pg_server.run(pg_ctl, "-D", str(pg_server.data_dir), "-m", "fast", "-w", "stop")
            assert stop.returncode == 0, stop.stderr
            threading.Thread(target=start_again, daemon=True).start()
        return original(self, job_text, on_status, env=env) if env else original(self, job_text, on_status)

    monkeypatch.setattr(runner.SubprocessFio, "run", run)
    try:
        res = cli("--db", pg_url, "run", "--workload", "rnd4k-q1t1-read", "--workload", "seq1m-q1t1-read",
                  "--target", str(target), "--size", "8m", "--runtime", "500ms", "--no-report", "--no-telemetry")
    finally:
        restarted.wait(90)
    assert restarted.is_set()
    assert res.code == 0, res.err
    assert rows(pg_url, "SELECT status FROM runs") == [("complete",)]
    assert sorted(rows(pg_url, "SELECT workload FROM results")) == [("rnd4k-q1t1-read",), ("seq1m-q1t1-read",)]


def _filtered_history(url: str) -> dict[str, int]:
    """Four runs that the runs page's filters tell apart: targets, hosts (a result's and the run's
    host name), a finding's check id, a curve's metadata."""
    from storbench.model import Finding

    ids = {}
    with Store.open(url) as store:
        for name, target, host, run_host, check, meta in (
            ("a", "/srv/pool0/data", "10.0.0.1:8765", "node00", "page-cache", {}),
            ("b", "/mnt/ssd", None, "node01", None, {"curve_result": {"workload": "curve-randread-4k"}}),
            ("c", "/srv/pool1", "10.0.0.2:8765", "node01", "duration-short", {}),
            ("d", "rbd:rbd/img", None, "node02", None, {"curve": {"workload": "x"}, "note": "curve_result"}),
        ):
            run = store.create_run(f"filter-{name}", "run", suite="quick", meta={"host": {"hostname": run_host}, **meta})
            found = (Finding(check=check, severity="warning", message="m", fix="f", workload="randread-4k"),) if check else ()
            store.add_result(make_record(run, target=target, host=host, label=f"filter-{name}", findings=found))
            store.finish_run(run, "complete")
            ids[name] = run
    return ids


def _answers(url: str, ids: dict[str, int]) -> dict[str, list[str]]:
    name_of = {v: k for k, v in ids.items()}
    with Store.open(url) as store:
        def names(**kw) -> list[str]:
            found, total = store.query_runs(**kw)
            assert total == len(found)
            return [name_of[r.run_id] for r in found]

        return {
            "target /srv/pool": names(target="/srv/pool"),
            "target ssd": names(target="ssd"),
            "target SSD (case-sensitive)": names(target="SSD"),
            "target % (no wildcard)": names(target="%"),
            "host node01": names(host="node01"),
            "host 10.0.0.2": names(host="10.0.0.2"),
            "check duration-short": names(check="duration-short"),
            "check page-cache + target": names(check="page-cache", target="/srv"),
            "curves": [name_of[info.run_id] for info, _meta in store.runs_with_meta_key("curve_result")],
        }


def test_runs_page_filters_and_curves_answer_as_on_sqlite(pg_url: str, tmp_path) -> None:
    """The filters of serve's runs page and its curves page are the same queries on both stores
    (PostgreSQL has no instr(): they used to fail there with 'function instr does not exist')."""
    sqlite_url = f"sqlite:///{tmp_path / 'same.sqlite'}"
    expected = {"target /srv/pool": ["c", "a"], "target ssd": ["b"], "target SSD (case-sensitive)": [],
                "target % (no wildcard)": [], "host node01": ["c", "b"], "host 10.0.0.2": ["c"],
                "check duration-short": ["c"], "check page-cache + target": ["a"], "curves": ["b"]}  # fmt: skip
    assert _answers(sqlite_url, _filtered_history(sqlite_url)) == expected
    assert _answers(pg_url, _filtered_history(pg_url)) == expected


def test_reader_answers_as_the_store_on_postgres(pg_url: str) -> None:
    """show's and list's reads through psycopg alone (store.reader) are the store's, NUL-escaped
    labels and reasons, an interrupted run and the errors included; the database is named alike."""
    from test_reader import answers, build_history

    from storbench.store.reader import Reader, open_reader

    ids = build_history(pg_url)
    for url in (pg_url, pg_url.replace("postgres@", "postgres:secret@")):  # a password (trust ignores it) is hidden
        with Store.open(url) as store:
            expected = answers(store, ids)
            display = store.display
        reader = open_reader(url)
        assert isinstance(reader, Reader) and reader.display == display
        with reader:
            assert answers(reader, ids) == expected
    assert "secret" not in display and ":***@" in display
    assert expected[f"run {ids[4]}"][1].label == "odd\x00label é" and expected[f"run {ids[-1]}"][1].status == "interrupted"
    closed = pg_url.rsplit(":", 1)[0] + ":1/" + pg_url.rsplit("/", 1)[1]  # nothing listens on port 1
    assert open_reader(closed) is None  # the store says why it cannot connect
    assert open_reader(pg_url.replace("+psycopg", "")) is None  # postgresql:// is psycopg2's to SQLAlchemy


def test_traces_round_trip_through_the_store_and_the_reader(pg_url: str) -> None:
    """A captured trace (recorded trace_pipe text) stored on PostgreSQL (bytea events, NUL in a
    label escaped) and read back through the store and through the reader (psycopg alone)."""
    from pathlib import Path

    import numpy as np

    from storbench.store.reader import open_reader
    from storbench.trace.codec import encode_trace
    from storbench.trace.events import TraceMeta
    from storbench.trace.figures import trace_figures
    from storbench.trace.tracefs import read_tracefs

    text = (Path(__file__).parent.parent / "data" / "trace" / "tracefs-loop0-dd-blkdiscard-fsync.txt").read_text()
    trace = read_tracefs(text.splitlines(), TraceMeta(label="db\x00x", source="tracefs", device="/dev/loop0"), device=(7, 0))
    with Store.open(pg_url) as store:
        trace_id = store.add_trace(encode_trace(trace), trace_figures(trace))
        row = store.find_trace("db\x00x")
        back = store.load_trace(trace_id)
    assert row.trace_id == trace_id and row.events == 59 and row.label == "db\x00x" and row.stored_bytes > 0
    assert row.figures["directions"]["read"]["ops"] == 51
    assert np.array_equal(back.offset_bytes, trace.offset_bytes) and np.array_equal(back.complete_ns, trace.complete_ns)
    reader = open_reader(pg_url)
    assert reader is not None
    with reader:
        assert reader.find_trace(str(trace_id)) == row
        assert [r.trace_id for r in reader.list_traces()] == [trace_id]
        assert np.array_equal(reader.load_trace(trace_id).issue_ns, trace.issue_ns)
