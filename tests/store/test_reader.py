"""store.reader: the reads of show and list straight through sqlite3 (psycopg: in
test_store_postgres.py) give what the SQLAlchemy store gives, error for error; where the reader
must not be used it says so (None) and the store decides; show and list import no SQLAlchemy."""

from __future__ import annotations

import dataclasses
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

from storbench.errors import UsageError
from storbench.model import Finding
from storbench.store import Store
from storbench.store.reader import Reader, open_reader

from test_serialize import bare_fio, rich_fio
from test_store import make_record


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def build_history(url: str) -> list[int]:
    """Runs that every read tells apart: labels shared, prefixed, numeric, with NUL; results with
    findings and none; a run still running whose process is gone (interrupted); an empty run."""
    with Store.open(url) as store:
        ids = []
        for label, n in (("nightly-1", 2), ("nightly-1", 1), ("nightly-10", 3), ("7", 1), ("odd\x00label é", 1), (None, 0)):
            run = store.create_run(label, "run", suite="quick", meta={"host": {"hostname": "node0"}, "argv": ["run"]})
            for k in range(n):
                found = (Finding(check="short-run", severity="warning", message="m", fix="f", workload="w"),) if k else ()
                store.add_result(make_record(run, rich_fio() if k % 2 else bare_fio(), label=label, repetition=k, findings=found))
            ids.append(run)
        for run in ids[:-1]:
            store.finish_run(run, "complete" if run != ids[2] else "incomplete", reason=None if run != ids[2] else "why\x00not")
        gone = {"host": socket.gethostname(), "pid": dead_pid(), "start_ticks": 1, "boot_id": ""}
        store.update_run_meta(ids[-1], {"owner": gone})
    return ids


def _outcome(call):
    try:
        return ("ok", call())
    except UsageError as exc:
        return ("UsageError", str(exc))


def answers(store, ids: list[int]) -> dict:
    """Every read show and list make, of every run and of runs that are not there."""
    missing = max(ids) + 5
    out = {}
    for limit in (None, 1, 3):
        for prefix in (None, "", "nightly-1", "nightly-10", "odd\x00", "zzz"):
            out[f"list {limit} {prefix!r}"] = store.list_runs(limit=limit, label_prefix=prefix)
    for ref in (str(ids[0]), " nightly-1 ", "7", str(ids[3]), "odd\x00label é", "none", str(missing), str(2**31 - 1),
                str(2**31), str(2**63 - 1), str(2**63), "9" * 23):  # a number no run id can be: a label, not an error binding it
        out[f"find {ref!r}"] = store.find_runs(ref)
    for rid in (*ids, missing):
        out[f"run {rid}"] = _outcome(lambda rid=rid: store.get_run(rid))
        out[f"results {rid}"] = _outcome(lambda rid=rid: store.results(rid))
        out[f"meta {rid}"] = _outcome(lambda rid=rid: store.run_meta(rid))
    return out


def test_reader_answers_as_the_store_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    ids = build_history(url)
    with Store.open(url) as store:
        expected = answers(store, ids)
    reader = open_reader(url)
    assert isinstance(reader, Reader) and reader.display == str(tmp_path / "r.sqlite")
    with reader:
        got = answers(reader, ids)
    assert got == expected
    # and they say what was stored: not two empty answers
    assert [r.label for r in expected["list None 'nightly-1'"]] == ["nightly-10", "nightly-1", "nightly-1"]
    assert expected[f"run {ids[-1]}"][1].status == "interrupted" and expected["find '7'"] == [ids[3]]
    assert expected[f"run {ids[2]}"][1].reason == "why\x00not" and len(expected[f"results {ids[2]}"][1]) == 3
    assert expected[f"run {max(ids) + 5}"] == ("UsageError", f"no run {max(ids) + 5} in {tmp_path / 'r.sqlite'} "
                                               f"(runs are {ids[0]}..{ids[-1]}; see storbench list)")  # fmt: skip


def test_where_the_reader_is_not_used_the_store_decides(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"
    assert open_reader(f"sqlite:///{missing}") is None and not missing.exists()  # the store makes it
    old = tmp_path / "old.sqlite"
    Store.open(f"sqlite:///{old}").close()
    with sqlite3.connect(old) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0004'")  # an older schema: the store upgrades it
    conn.close()
    assert open_reader(f"sqlite:///{old}") is None
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    assert open_reader(f"sqlite:///{foreign}") is None
    (tmp_path / "junk.sqlite").write_bytes(b"not a database at all" * 100)
    assert open_reader(f"sqlite:///{tmp_path / 'junk.sqlite'}") is None
    for url in ("sqlite://", "sqlite:///:memory:", f"sqlite:///{old}?mode=ro", "postgresql://u@h/db",
                "postgresql+psycopg2://u@h/db", "postgresql+psycopg://u@h/db?sslmode=require", "mysql://u@h/db", "not a url"):
        assert open_reader(url) is None, url


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "storbench", "--db", str(db), *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_show_and_list_import_no_sqlalchemy(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    ids = build_history(f"sqlite:///{db}")
    show = _cli(db, "show", str(ids[2]))
    assert show.returncode == 0, show.stderr[-2000:]
    assert f"run {ids[2]}" in show.stdout and "incomplete" in show.stdout
    listing = _cli(db, "list", "--label-prefix", "nightly-1")
    assert listing.returncode == 0 and listing.stdout.count("nightly-1") == 3
    for proc in (show, listing):
        imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
        assert "storbench.store.reader" in imported and not {m for m in imported if m.startswith("sqlalchemy")}
    # what the store would say, the reader says: a run that is not there, one line, exit 2
    gone = _cli(db, "show", str(max(ids) + 5))
    said = [line for line in gone.stderr.splitlines() if not line.startswith("import time:")]
    assert gone.returncode == 2 and said == [
        f"storbench: error: no run matches '{max(ids) + 5}' (give a run id, a label or 'last'; see 'storbench list')"]
    huge = _cli(db, "show", "9" * 23)
    assert huge.returncode == 2 and [line for line in huge.stderr.splitlines() if not line.startswith("import time:")] == [
        f"storbench: error: no run matches '{'9' * 23}' (give a run id, a label or 'last'; see 'storbench list')"]
    # a database at an older schema is upgraded by the store, as before
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0004'")
    conn.close()
    assert open_reader(f"sqlite:///{db}") is None


def test_show_json_is_the_same_through_the_reader_and_the_store(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "j.sqlite"
    ids = build_history(f"sqlite:///{db}")
    through_reader = subprocess.run([sys.executable, "-m", "storbench", "--db", str(db), "show", str(ids[2]), "--json"],
                                    capture_output=True, text=True, timeout=120, check=True).stdout  # fmt: skip
    code = ("import sys, storbench.store.reader as r; r.open_reader = lambda url: None; "
            "from storbench.cli import main; sys.exit(main())")
    through_store = subprocess.run([sys.executable, "-c", code, "--db", str(db), "show", str(ids[2]), "--json"],
                                   capture_output=True, text=True, timeout=120)  # fmt: skip
    assert through_store.returncode == 0, through_store.stderr
    assert through_reader == through_store.stdout and '"workload"' in through_reader


def test_records_equal_field_for_field(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'f.sqlite'}"
    ids = build_history(url)
    with Store.open(url) as store, open_reader(url) as reader:
        for a, b in zip(store.results(ids[2]), reader.results(ids[2]), strict=True):
            assert dataclasses.asdict(a) == dataclasses.asdict(b)


def test_postgres_urls_are_named_as_sqlalchemy_names_them() -> None:
    from urllib.parse import urlsplit

    from sqlalchemy.engine import make_url

    from storbench.store.reader import postgres_display

    for url in ("postgresql+psycopg://u:secret@db.example:5433/results", "postgresql+psycopg://db/results",
                "postgresql+psycopg://u@10.0.0.1/r_1", "postgresql+psycopg://:pw@h:5/x"):
        p = urlsplit(url)
        mine = postgres_display(p.username, p.password is not None, p.hostname, p.port, p.path[1:])
        assert mine == make_url(url).render_as_string(hide_password=True), url


def test_the_runs_page_filters_by_the_status_a_run_is_told_with(tmp_path: Path) -> None:
    """A run left ``running`` by a process that is gone is told ``interrupted`` everywhere: the
    runs page's ``status=running`` does not list it, ``status=interrupted`` does (and counts it)."""
    url = f"sqlite:///{tmp_path / 'h.sqlite'}"
    ids = build_history(url)
    with Store.open(url) as store:
        live = store.create_run("still-here", "run", suite="quick", meta={})  # this process: running
        interrupted, total = store.query_runs(status="interrupted")
        assert [r.run_id for r in interrupted] == [ids[-1]] and total == 1 and interrupted[0].status == "interrupted"
        running, total = store.query_runs(status="running")
        assert [r.run_id for r in running] == [live] and total == 1
        assert store.query_runs(status="interrupted", offset=1) == ([], 1)  # the page cut after telling them apart
        complete, total = store.query_runs(status="complete")
        assert {r.run_id for r in complete} == set(ids[:-1]) - {ids[2]} and total == len(complete)


def test_metrics_take_complete_runs_only(tmp_path: Path) -> None:
    """/metrics's newest result of each workload comes from complete runs: an incomplete run (a killed
    one's partial results) and an interrupted one are not a target's figure."""
    url = f"sqlite:///{tmp_path / 'h.sqlite'}"
    ids = build_history(url)
    with Store.open(url) as store:
        runs_of = {r["run_id"] for r in store.last_results()}
        assert ids[2] not in runs_of and ids[-1] not in runs_of  # incomplete, interrupted
        assert runs_of and runs_of <= {i for i in ids if store.get_run(i).status == "complete"}
        newest_complete = max(i for i in ids if store.get_run(i).status == "complete" and store.results(i))
        assert newest_complete in runs_of
