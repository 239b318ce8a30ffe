"""Edge: the results database (SQLAlchemy 2 Core + Alembic).

``Store.open(url)`` makes a database usable or refuses it without touching it:

1. For a SQLite file that exists, it is first inspected through a READ-ONLY
   connection.  Not SQLite / corrupt, foreign tables, or a schema revision this
   storbench does not know (written by a newer storbench) -> :class:`StoreError`,
   and the file is never opened for writing.
2. Then it is opened for real: WAL journal, ``busy_timeout`` 30 s, foreign keys on;
   under a write lock the revision is read again, an existing SQLite file at an
   OLDER revision is copied to ``<file>.bak-<revision>`` (SQLite's online backup,
   so the copy includes the WAL), and Alembic upgrades the schema to head inside
   the same transaction.  A fresh file gets the whole schema.

Every write (:meth:`Store.create_run`, :meth:`Store.add_result`,
:meth:`Store.finish_run`) is its own committed transaction, so a crash loses at
most the workload in progress; writes retry while another process holds the lock.
(A SQLite file runs in WAL mode with ``synchronous=FULL``: every commit is flushed,
so not even an OS crash or power loss loses a stored result.  One flush per workload
costs nothing next to a workload's runtime.  The live state of a run, rewritten as it runs,
is the exception: its commits are not flushed on their own, see :meth:`Store.publish_live`.)

Only the SQLite branch uses SQLite-specific SQL (PRAGMAs, ``BEGIN IMMEDIATE``); the
rest is portable Core, so a PostgreSQL URL works the same way (without the file
checks and the backup; a failed upgrade rolls back, DDL is transactional there too).
Two PostgreSQL-specific details: migrations run under ``pg_advisory_xact_lock`` so
that processes opening a new database at the same moment do not both create the
schema, and free text is stored with NUL (which PostgreSQL text cannot hold)
escaped reversibly as U+F8FF ``0`` (U+F8FF itself doubled).

May import: model, serialize, activity, backend and storage records, net, context and errors;
never run, study, render or commands.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Select, create_engine, delete, event, func, insert, inspect, select, text, update
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, OperationalError, SQLAlchemyError

from storbench import __version__
from storbench.errors import StoreError, UsageError
from storbench.jsontypes import JSONMapping, JSONObject
from storbench.model import FioResult, RunInfo, versions
from storbench.record import ResultRecord
from storbench.serialize import fio_result_to_dict
from storbench.store.rows import (
    gone_reason,
    max_run_id,
    meta_of,
    nul_escape,
    nul_unescape,
    owner_gone,
    plain_revisions,
    record_from_row,
    run_info_from_row,
    same_text,
    storage_of_json,
)
from storbench.store.tables import RUN_KINDS, RUN_STATUSES, STORBENCH_TABLES, live_runs, results, run_index, runs

#: how a page of runs can be ordered (:meth:`Store.query_runs`): name -> the runs table's column
RUN_SORTS: dict[str, str] = {"run": "id", "label": "label", "status": "status", "started": "created_at",
                             "finished": "finished_at", "suite": "suite"}  # fmt: skip

__all__ = ["BUSY_TIMEOUT_MS", "MIGRATIONS_DIR", "Store", "default_db_url"]

#: Alembic script directory (env.py, versions/).  Tests point this elsewhere.
MIGRATIONS_DIR: Path = Path(__file__).resolve().parent / "migrations"

BUSY_TIMEOUT_MS = 30_000
_WRITE_RETRIES = 10  # on top of busy_timeout, for "database is locked" that SQLite returns at once
_SQLITE_HEADER = b"SQLite format 3\x00"
#: pg_advisory_xact_lock key held while a PostgreSQL schema is created or upgraded ("sbmigrat")
_PG_MIGRATION_LOCK = 0x73626D6967726174
_WRITE_OPTION = "storbench_write"  # execution option: this transaction will write

T = TypeVar("T")

if TYPE_CHECKING:  # alembic is imported only to create or upgrade a schema (it takes ~0.7 s)
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from storbench.net import NetCeiling


# --------------------------------------------------------------------------- location


# default_db_url lives in storbench.context (the injected environment) so that finding
# the database's path imports no SQLAlchemy; it stays importable from here.
from storbench.context import default_db_url  # noqa: E402

# --------------------------------------------------------------------------- helpers


def _why_not_writable(path: Path | None) -> str:
    """Why an SQLite file cannot be made or written, as the user can act on it ("" when no reason
    is found or the store is not a local file): a read-only mount, a directory not writable."""
    if path is None:
        return ""
    path = Path(path).absolute()
    target = path if path.exists() else path.parent
    while not target.exists() and target != target.parent:
        target = target.parent
    try:
        if os.statvfs(target).f_flag & os.ST_RDONLY:
            return f" ({target} is on a filesystem mounted read-only: give --db a file on a writable one)"
    except OSError:
        return ""
    if not os.access(target, os.W_OK):
        what = "the file" if target == path else "its directory"
        return f" ({what} {target} is not writable by this user: give --db a file you may write)"
    return ""


#: how long a lost database server (a PostgreSQL restart) is waited for before a run fails
RECONNECT_S = 30.0

_DISCONNECT_WORDS = ("server closed the connection", "connection refused", "terminating connection",
                     "could not connect", "the database system is starting up", "the database system is shutting down",
                     "connection is closed", "connection not open", "consuming input failed", "ssl syscall error",
                     "no connection to the server", "connection timed out")  # fmt: skip


def _is_disconnect(exc: SQLAlchemyError) -> bool:
    if getattr(exc, "connection_invalidated", False):
        return True
    text = str(getattr(exc, "orig", None) or exc).lower()
    return any(word in text for word in _DISCONNECT_WORDS)


def _utc_text(moment: datetime) -> str:
    """ISO 8601 UTC with a ``Z``: ``2024-05-01T12:00:00Z``."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _system_clock() -> datetime:
    return datetime.now(UTC)


@functools.cache
def _script(location: str) -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config(location))


def _alembic_config(location: str) -> Config:
    from alembic.config import Config

    cfg = Config()  # no alembic.ini, no logging configuration
    cfg.set_main_option("script_location", location.replace("%", "%%"))
    cfg.set_main_option("path_separator", "os")
    return cfg


def _known_revisions(location: str) -> frozenset[str]:
    plain = plain_revisions(location)
    if plain is not None:
        return plain[0]
    return frozenset(s.revision for s in _script(location).walk_revisions())


def _head_revision(location: str) -> str | None:
    plain = plain_revisions(location)
    return plain[1] if plain is not None else _script(location).get_current_head()


#: ids per ``IN (...)`` of the batch reads (well below every backend's limit on bound parameters)
IN_CHUNK = 500


def _chunks(ids: Sequence[int]) -> list[list[int]]:
    return [list(ids[i : i + IN_CHUNK]) for i in range(0, len(ids), IN_CHUNK)]


def _is_locked(exc: BaseException) -> bool:
    text = str(getattr(exc, "orig", exc)).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text


def _headline_columns(fio: FioResult) -> dict[str, float | None]:
    """Denormalised totals for listing (see tables.py).

    From the aggregate job ("All clients") when there is one, else summed over every
    job that did I/O in that direction; ``None`` when no job did (for example only
    ``mixed`` under unified_rw_reporting).
    """
    aggregate = [j for j in fio.jobs if j.is_aggregate]
    jobs = aggregate[:1] or list(fio.jobs)
    out: dict[str, float | None] = {}
    for direction in ("read", "write"):
        stats = [j.directions[direction] for j in jobs if direction in j.directions]
        out[f"{direction}_iops"] = sum(float(s.iops) for s in stats) if stats else None
        out[f"{direction}_bw_bytes"] = sum(float(s.bw_bytes) for s in stats) if stats else None
    return out


# --------------------------------------------------------------------------- the store



def _lines(values: Sequence[str]) -> str:
    """A list as ``run_index`` keeps it: each value on a line of its own, framed by newlines ("" for none)."""
    return "\n" + "\n".join(values) + "\n" if values else ""


def _unlines(text: str | None) -> list[str]:
    return [v for v in (text or "").split("\n") if v]


def _inserted_id(done: Any) -> int:
    """The id an INSERT of one row made (SQLAlchemy's ``inserted_primary_key``)."""
    key = done.inserted_primary_key
    if key is None:  # pragma: no cover - every table here has an integer primary key
        raise StoreError("the database returned no id for the row just inserted")
    return int(key[0])


def _execute(statement: Any, conn: Connection) -> Any:
    return conn.execute(statement)

class Store:
    """An open results database.  Use :meth:`open`; close with :meth:`close` or ``with``."""

    def __init__(self, engine: Engine, display: str, path: Path | None, clock: Callable[[], datetime]) -> None:
        self._engine = engine
        self.display = display  # what messages call this database: a file path or a password-less URL
        self.path = path  # the SQLite file, else None
        self._clock = clock
        # free text as the backend can hold it: PostgreSQL text cannot contain NUL
        postgres = engine.dialect.name == "postgresql"
        self._enc: Callable[[str | None], str | None] = nul_escape if postgres else same_text
        self._dec: Callable[[str | None], str | None] = nul_unescape if postgres else same_text
        # where a text occurs in a column (1-based, 0 when it does not), case-sensitively and with no
        # wildcards: SQLite's instr(), PostgreSQL's strpos() (PostgreSQL has no instr)
        self._position: Callable[[Any, str | None], Any] = func.strpos if postgres else func.instr

    # ----------------------------------------------------------------- opening

    @classmethod
    def open(cls, url: str, *, clock: Callable[[], datetime] | None = None) -> Store:
        """Open (creating or upgrading) the database at SQLAlchemy ``url``.

        ``clock`` returns the current time (aware or UTC); tests inject one.
        Raises :class:`StoreError` for a database that cannot or must not be used.
        """
        try:
            parsed = make_url(url)
        except ArgumentError as exc:
            raise StoreError(f"{url!r} is not a database URL: {exc}") from exc
        is_sqlite = parsed.get_backend_name() == "sqlite"
        path: Path | None = None
        if is_sqlite and parsed.database and parsed.database != ":memory:" and not parsed.database.startswith("file:"):
            path = Path(parsed.database)
        display = str(path) if path is not None else parsed.render_as_string(hide_password=True)
        location = str(MIGRATIONS_DIR)

        if path is not None:
            _check_sqlite_file(path, display, location)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the directory for database {display}: {exc.strerror or exc}") from exc

        try:
            engine = create_engine(parsed, **({"connect_args": {"timeout": BUSY_TIMEOUT_MS / 1000}} if is_sqlite else {}))
        except (ArgumentError, ImportError) as exc:
            raise StoreError(f"cannot use database {display}: {exc}") from exc
        if is_sqlite:
            _configure_sqlite(engine, wal=path is not None)
        try:
            _migrate(engine, display, path, location, is_sqlite)
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, display, path, clock or _system_clock)

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.display!r})"

    # ----------------------------------------------------------------- plumbing

    def _write(self, work: Callable[[Connection], T], *, durable: bool = True) -> T:
        """Run ``work`` in one write transaction and commit; retry while the database is locked,
        and while a database server is unreachable for up to :data:`RECONNECT_S` (a restart).

        ``durable=False``: a write that need not survive a power loss (the live state) is
        committed to a SQLite file without a flush of its own (``synchronous=NORMAL``, which WAL
        keeps free of corruption); the next durable commit flushes it with its own."""
        delay = 0.05
        attempt = 0
        deadline = None
        while True:
            try:
                with self._engine.connect() as conn:
                    conn.execution_options(**{_WRITE_OPTION: True})
                    if durable or self.path is None:
                        with conn.begin():
                            return work(conn)
                    raw = conn.connection.dbapi_connection
                    assert raw is not None
                    raw.execute("PRAGMA synchronous = NORMAL")
                    try:
                        with conn.begin():
                            return work(conn)
                    finally:
                        raw.execute("PRAGMA synchronous = FULL")
            except SQLAlchemyError as exc:
                if isinstance(exc, OperationalError) and _is_locked(exc) and attempt < _WRITE_RETRIES:
                    attempt += 1
                    time.sleep(delay)
                    delay = min(delay * 2, 2.0)
                    continue
                deadline = self._reconnect_wait(exc, deadline)
                if deadline is None:
                    raise self._error(exc) from exc
            except UnicodeEncodeError as exc:  # a lone surrogate: no backend stores it as UTF-8
                raise StoreError(f"database {self.display}: text that is not valid Unicode cannot be stored ({exc.reason})") from exc

    def _read(self, work: Callable[[Connection], T]) -> T:
        deadline = None
        while True:
            try:
                with self._engine.connect() as conn:
                    return work(conn)
            except SQLAlchemyError as exc:
                deadline = self._reconnect_wait(exc, deadline)
                if deadline is None:
                    raise self._error(exc) from exc

    def _reconnect_wait(self, exc: SQLAlchemyError, deadline: float | None) -> float | None:
        """For a lost or refused server connection (not SQLite): sleep a moment and give the deadline
        to retry until (started now at the first loss); None when the error is another or time is up."""
        if self._engine.dialect.name == "sqlite" or not _is_disconnect(exc):
            return None
        now = time.monotonic()
        deadline = now + RECONNECT_S if deadline is None else deadline
        if now >= deadline:
            return None
        self._engine.dispose()  # the pool's connections died with the server
        time.sleep(min(0.5, max(0.0, deadline - now)))
        return deadline

    def _error(self, exc: SQLAlchemyError) -> StoreError:
        detail = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        return StoreError(f"database {self.display}: {detail}")

    def _now(self) -> str:
        return _utc_text(self._clock())

    def _not_found(self, conn: Connection, run_id: int) -> UsageError:
        lo, hi, n = conn.execute(select(func.min(runs.c.id), func.max(runs.c.id), func.count())).one()
        if not n:
            return UsageError(f"no run {run_id} in {self.display} (it holds no runs yet)")
        return UsageError(f"no run {run_id} in {self.display} (runs are {lo}..{hi}; see storbench list)")

    def _require_run(self, conn: Connection, run_id: int) -> None:
        if conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first() is None:
            raise self._not_found(conn, run_id)

    # ----------------------------------------------------------------- writes

    def create_run(
        self,
        label: str | None,
        kind: str,
        suite: str | None = None,
        meta: JSONMapping | None = None,
    ) -> int:
        """Record the start of a run (status ``running``); returns its id."""
        if kind not in RUN_KINDS:
            raise ValueError(f"run kind must be one of {RUN_KINDS}, not {kind!r}")
        from .owner import this_process

        try:
            meta_json = json.dumps({**dict(meta or {}), "owner": this_process()}, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"run metadata cannot be stored as JSON: {exc}") from exc
        values = {
            "label": self._enc(label),
            "kind": kind,
            "status": "running",
            "suite": self._enc(suite),
            "created_at": self._now(),
            "storbench_version": __version__,
            "meta_json": meta_json,
        }
        host = (meta or {}).get("host")
        hostname = host.get("hostname") if isinstance(host, Mapping) else None

        def insert(conn: Connection) -> int:
            run_id = _inserted_id(conn.execute(runs.insert().values(**values)))
            conn.execute(run_index.insert().values(run_id=run_id, targets="", checks="",
                                                   hosts=_lines([self._enc(hostname) or ""]) if isinstance(hostname, str) and hostname else ""))  # fmt: skip
            return run_id

        return self._write(insert)

    def _index(self, conn: Connection, records: Sequence[ResultRecord]) -> None:
        """Add the records' targets, hosts and finding checks to their runs' rows of ``run_index``
        (what the runs page filters on), in the transaction that stores them."""
        for run_id in dict.fromkeys(r.run_id for r in records):
            row = conn.execute(select(run_index).where(run_index.c.run_id == run_id)).first()
            have = {k: _unlines(getattr(row, k)) if row is not None else [] for k in ("targets", "hosts", "checks")}
            new = {k: list(v) for k, v in have.items()}
            for r in records:
                if r.run_id != run_id:
                    continue
                for key, value in (("targets", self._enc(r.target)), ("hosts", self._enc(r.host) if r.host != "all" else None)):
                    if value and value not in new[key]:
                        new[key].append(value)
                for f in r.findings:
                    if f.check not in new["checks"]:
                        new["checks"].append(f.check)
            if new == have:
                continue
            values = {k: _lines(v) for k, v in new.items()}
            if row is None:
                conn.execute(run_index.insert().values(run_id=run_id, **values))
            else:
                conn.execute(update(run_index).where(run_index.c.run_id == run_id).values(**values))

    def add_result(self, record: ResultRecord) -> int:
        """Store one result and COMMIT at once; returns the result id.

        ``record.result_id`` is ignored; ``record.created_at`` defaults to now.
        """
        values = self._result_values(record)

        def insert(conn: Connection) -> int:
            self._require_run(conn, record.run_id)
            result_id = _inserted_id(conn.execute(results.insert().values(**values)))
            self._index(conn, [record])
            return result_id

        return self._write(insert)

    def add_results(self, records: Sequence[ResultRecord]) -> list[int]:
        """Store several results of one run in ONE transaction (an import: all or none); their ids."""
        rows = [self._result_values(r) for r in records]

        def insert(conn: Connection) -> list[int]:
            for run_id in {r.run_id for r in records}:
                self._require_run(conn, run_id)
            # one statement for all (SQLAlchemy's insertmanyvalues), ids in the order given
            done = conn.execute(results.insert().returning(results.c.id, sort_by_parameter_order=True), rows)
            ids = list(map(int, done.scalars().all()))
            self._index(conn, records)
            return ids

        return self._write(insert) if rows else []

    def _result_values(self, record: ResultRecord) -> dict:
        try:
            result_json = json.dumps(fio_result_to_dict(record.fio), ensure_ascii=False)
            options_json = json.dumps(dict(record.options), ensure_ascii=False)
            extras = _extras_to_json(record)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"result of workload {record.workload!r} cannot be stored as JSON: {exc}") from exc
        values = {
            "run_id": record.run_id,
            "workload": self._enc(record.workload),
            "target": self._enc(record.target),
            "label": self._enc(record.label),
            "source": self._enc(record.source),
            "repetition": record.repetition,
            # a listing column (String(64)); the full version is in result_json
            "fio_version": self._enc(record.fio.fio_version[:64]) if record.fio.fio_version else record.fio.fio_version,
            "options_json": options_json,
            "job_text": self._enc(record.job_text),
            "result_json": result_json,
            "raw_output": self._enc(record.raw_output),
            "created_at": record.created_at or self._now(),
            "host": self._enc(record.host),
            **_headline_columns(record.fio),
            **extras,
        }
        return values

    def reopen_run(self, run_id: int) -> None:
        """Mark an incomplete run as running again (``run --resume``)."""

        from .owner import this_process

        def work(conn: Connection) -> None:
            self._require_run(conn, run_id)
            meta = self._meta_of(conn.execute(select(runs.c.meta_json).where(runs.c.id == run_id)).scalar_one())
            meta["owner"] = this_process()  # the resuming process owns it now
            conn.execute(update(runs).where(runs.c.id == run_id).values(
                status="running", reason=None, finished_at=None, meta_json=json.dumps(meta, ensure_ascii=False)))

        self._write(work)

    _meta_of = staticmethod(meta_of)

    def reconcile_dead_runs(self) -> list[int]:
        """Mark ``incomplete`` every run still ``running`` whose owner process on this host is
        gone (killed, crashed, its machine rebooted); the ids marked.  Other hosts' runs are
        left as they are (their owners cannot be checked from here)."""
        rows = self._read(lambda conn: conn.execute(select(runs.c.id, runs.c.meta_json).where(runs.c.status == "running")).all())
        dead = [(row.id, owner) for row in rows if owner_gone(owner := self._meta_of(row.meta_json).get("owner"))]
        for run_id, owner in dead:
            stmt = (update(runs).where(runs.c.id == run_id, runs.c.status == "running")
                    .values(status="incomplete", reason=self._enc(gone_reason(owner)), finished_at=self._now()))  # fmt: skip
            self._write(functools.partial(_execute, stmt))
        return [run_id for run_id, _ in dead]

    def finish_run(self, run_id: int, status: str, reason: str | None = None) -> None:
        """Mark a run ``complete``, ``incomplete`` or ``failed`` (with the reason) and stamp finished_at."""
        if status not in RUN_STATUSES or status == "running":
            raise ValueError(f"a finished run's status must be complete, incomplete or failed, not {status!r}")
        stmt = update(runs).where(runs.c.id == run_id).values(status=status, reason=self._enc(reason), finished_at=self._now())

        def work(conn: Connection) -> None:
            if conn.execute(stmt).rowcount == 0:
                raise self._not_found(conn, run_id)
            conn.execute(delete(live_runs).where(live_runs.c.run_id == run_id))  # its live state ends with it

        self._write(work)

    def publish_live(self, run_id: int, state: JSONMapping) -> None:
        """Replace the live state of run ``run_id`` (a JSON-compatible dict, :mod:`storbench.run.live`).

        Not flushed on its own in a SQLite file (a view of the run, rewritten three times a
        workload; 4 ms a flush here): a power loss may take the newest state, never a result."""
        text = json.dumps(state, allow_nan=False, separators=(",", ":"))
        now = self._now()

        def work(conn: Connection) -> None:
            done = conn.execute(update(live_runs).where(live_runs.c.run_id == run_id).values(updated_at=now, state_json=text)).rowcount
            if not done:
                conn.execute(insert(live_runs).values(run_id=run_id, updated_at=now, state_json=text))

        self._write(work, durable=False)  # a view of the run while it runs: three writes a workload, no flush each

    def live_states(self, run_id: int | None = None) -> list[tuple[int, str, JSONObject]]:
        """(run id, updated at, state) of the runs publishing a live state (or of ``run_id``), newest first."""
        query = select(live_runs).order_by(live_runs.c.run_id.desc())
        if run_id is not None:
            query = query.where(live_runs.c.run_id == run_id)
        rows = self._read(lambda conn: list(conn.execute(query)))
        out = []
        for row in rows:
            try:
                out.append((row.run_id, row.updated_at, json.loads(row.state_json)))
            except ValueError:
                continue  # a state cut by a crash: the run shows as running, without its live figures
        return out

    # ----------------------------------------------------------------- reads

    @staticmethod
    def _run_query() -> Select[Any]:
        # a correlated count: one lookup in ix_results_run_id per run returned (a page of
        # list, one run for get_run), not a GROUP BY over every stored result
        count = select(func.count()).where(results.c.run_id == runs.c.id).correlate(runs).scalar_subquery()
        return select(runs, count.label("result_count"))

    def _run_info(self, row: Any) -> RunInfo:
        return run_info_from_row(row, self._dec)

    def list_runs(self, limit: int | None = None, label_prefix: str | None = None) -> list[RunInfo]:
        """Runs newest first (by id), with their result counts.

        ``label_prefix`` matches labels starting with it, case-sensitively.
        """
        query = self._run_query().order_by(runs.c.id.desc())
        if label_prefix is not None:
            # substr instead of LIKE: no wildcard escaping, case-sensitive in every backend
            prefix = self._enc(label_prefix) or ""
            query = query.where(func.substr(runs.c.label, 1, len(prefix)) == prefix)
        if limit is not None:
            query = query.limit(limit)
        return self._read(lambda conn: [self._run_info(r) for r in conn.execute(query)])

    def query_runs(
        self,
        *,
        label_prefix: str | None = None,
        target: str | None = None,
        suite: str | None = None,
        host: str | None = None,
        since: str | None = None,
        until: str | None = None,
        check: str | None = None,
        status: str | None = None,
        sort: str = "run",
        descending: bool = True,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[RunInfo], int]:
        """One page of runs, newest first (or by ``sort``, one of :data:`RUN_SORTS`, ascending when
        not ``descending``; ties newest first), and how many match in all (storbench serve's runs page).

        ``target``: a result's target contains it; ``host``: a result ran on it (host:port) or the
        run's host name contains it; ``since``/``until``: ISO dates or times (``2026-12-01``)
        compared with the run's start; ``check``: a result has a finding with that check id.
        Every value is a bound parameter: no SQL is built from the text."""
        conds = []
        if label_prefix:
            prefix = self._enc(label_prefix) or ""
            conds.append(func.substr(runs.c.label, 1, len(prefix)) == prefix)
        if suite:
            conds.append(runs.c.suite == self._enc(suite))
        if since:
            conds.append(runs.c.created_at >= since)
        if until:
            conds.append(runs.c.created_at < until + ("T99" if "T" not in until else ""))  # a date: the whole day
        #: ``interrupted`` is a ``running`` run whose process is gone, known only when its row is read:
        #: both are read whole (runs in progress are few) and told apart before the page is cut
        derived = status in ("running", "interrupted")
        if status:
            conds.append(runs.c.status == ("running" if derived else status))

        # the filters on what a run's results hold read its one row of run_index (0006), not its results
        indexed = []
        if target:
            indexed.append(self._position(run_index.c.targets, (self._enc(target) or "").replace("\n", " ")) > 0)
        if host:
            indexed.append(self._position(run_index.c.hosts, (self._enc(host) or "").replace("\n", " ")) > 0)
        if check:
            indexed.append(self._position(run_index.c.checks, "\n" + (self._enc(check) or "").replace("\n", " ") + "\n") > 0)
        if indexed:
            conds.append(runs.c.id.in_(select(run_index.c.run_id).where(*indexed)))
        if sort not in RUN_SORTS:
            raise UsageError(f"cannot sort runs by {sort!r} (choose from {', '.join(RUN_SORTS)})")
        column = getattr(runs.c, RUN_SORTS[sort])
        order = [column.desc() if descending else column.asc()] + ([runs.c.id.desc()] if sort != "run" else [])
        if derived:
            everything = self._run_query().where(*conds).order_by(*order)
            found = [i for i in self._read(lambda conn: [self._run_info(r) for r in conn.execute(everything)]) if i.status == status]
            return found[max(0, offset):max(0, offset) + max(1, limit)], len(found)
        base = self._run_query().where(*conds).order_by(*order).offset(max(0, offset)).limit(max(1, limit))
        counted = select(func.count()).select_from(runs).where(*conds)

        def work(conn: Connection) -> tuple[list[RunInfo], int]:
            return [self._run_info(r) for r in conn.execute(base)], int(conn.execute(counted).scalar_one())

        return self._read(work)

    def run_digests(self, run_ids: Sequence[int]) -> dict[int, JSONObject]:
        """For each run (a page of runs at once): its distinct ``targets`` and ``hosts``, its
        findings' ``checks`` by severity, its ``figures`` (one per result of the aggregate or a
        single host: workload, repetition, options, the headline columns), ``storage`` (the
        description of each target, from its first result; a description this storbench cannot
        read is left out) and ``machine`` (the host name the run ran on, from its metadata)."""
        if not run_ids:
            return {}
        c = results.c
        query = (select(c.run_id, c.target, c.host, c.findings_json, c.workload, c.repetition, c.options_json,
                        c.read_iops, c.write_iops, c.read_bw_bytes, c.write_bw_bytes)
                 .where(c.run_id.in_(list(run_ids))).order_by(c.id))  # fmt: skip
        first = select(func.min(c.id)).where(c.run_id.in_(list(run_ids))).group_by(c.run_id, c.target)
        described = select(c.run_id, c.target, c.storage_json).where(c.id.in_(first), c.storage_json.is_not(None))
        metas = select(runs.c.id, runs.c.meta_json).where(runs.c.id.in_(list(run_ids)))
        out: dict[int, JSONObject] = {rid: {"targets": [], "hosts": [], "checks": {}, "figures": [], "storage": {}, "machine": None}
                                          for rid in run_ids}  # fmt: skip

        def work(conn: Connection) -> tuple[list[Any], list[Any], list[Any]]:
            return list(conn.execute(query)), list(conn.execute(described)), list(conn.execute(metas))

        rows, storages, machines = self._read(work)
        for row in machines:  # the machine the run ran on (its metadata's host facts)
            try:
                host = json.loads(row.meta_json).get("host")
            except (ValueError, AttributeError):
                host = None
            if isinstance(host, dict) and isinstance(host.get("hostname"), str):
                out[row.id]["machine"] = host["hostname"]
        for row in rows:
            d = out[row.run_id]
            target, host = self._dec(row.target), self._dec(row.host)
            if target and target not in d["targets"]:
                d["targets"].append(target)
            if host and host != "all" and host not in d["hosts"]:
                d["hosts"].append(host)
            try:
                stored = json.loads(row.findings_json) if row.findings_json else {}
            except ValueError:
                stored = {}
            for f in stored.get("findings", []) if isinstance(stored, dict) else []:
                if isinstance(f, dict) and f.get("severity") in ("warning", "invalid"):
                    d["checks"].setdefault(f.get("check"), f.get("severity"))
            if host in (None, "all"):
                try:
                    options = json.loads(row.options_json) if row.options_json else {}
                except ValueError:
                    options = {}
                d["figures"].append({"workload": self._dec(row.workload), "repetition": row.repetition, "target": target,
                                     "options": options if isinstance(options, dict) else {},
                                     "read_iops": row.read_iops, "write_iops": row.write_iops,
                                     "read_bw_bytes": row.read_bw_bytes, "write_bw_bytes": row.write_bw_bytes})  # fmt: skip
        for row in storages:
            try:
                info = storage_of_json(row.storage_json)
            except (ValueError, StoreError):
                continue
            out[row.run_id]["storage"].setdefault(self._dec(row.target) or "", info)
        return out

    def results_of_workload(self, workload: str, target: str | None = None, label_prefix: str | None = None,
                            limit: int = 500) -> list[ResultRecord]:  # fmt: skip
        """The newest ``limit`` results of one workload (on one target, in runs whose label starts
        with ``label_prefix``), oldest first: a trend over time."""
        query = select(results).where(results.c.workload == self._enc(workload))
        if target:
            query = query.where(results.c.target == self._enc(target))
        if label_prefix:
            prefix = self._enc(label_prefix) or ""
            query = query.where(results.c.run_id.in_(select(runs.c.id).where(func.substr(runs.c.label, 1, len(prefix)) == prefix)))
        query = query.order_by(results.c.id.desc()).limit(limit)
        rows = self._read(lambda conn: list(conn.execute(query)))
        return [self._record(r) for r in reversed(rows)]

    def result(self, result_id: int) -> ResultRecord | None:
        """One result by its id, or None."""
        row = self._read(lambda conn: conn.execute(select(results).where(results.c.id == result_id)).first())
        return None if row is None else self._record(row)

    def last_results(self, limit: int = 1000) -> list[JSONObject]:
        """The newest result of each (workload, target, host) among the newest results of complete
        runs (at most ``limit`` of them; a run still going, stopped or killed is not a result yet):
        the headline columns only, not the whole record (``/metrics``)."""
        complete = select(runs.c.id).where(runs.c.status == "complete")
        newest = (select(func.max(results.c.id).label("id")).where(results.c.run_id.in_(complete))
                  .group_by(results.c.workload, results.c.target, results.c.host)
                  .order_by(func.max(results.c.id).desc()).limit(limit).subquery())  # fmt: skip
        query = select(results.c.id, results.c.run_id, results.c.workload, results.c.target, results.c.host, results.c.created_at,
                       results.c.read_iops, results.c.write_iops, results.c.read_bw_bytes, results.c.write_bw_bytes,
                       runs.c.label).join(newest, newest.c.id == results.c.id).join(runs, runs.c.id == results.c.run_id)  # fmt: skip
        rows = self._read(lambda conn: list(conn.execute(query.order_by(results.c.id))))
        return [{"result_id": r.id, "run_id": r.run_id, "workload": self._dec(r.workload), "target": self._dec(r.target),
                 "host": self._dec(r.host), "label": self._dec(r.label), "created_at": r.created_at,
                 "read_iops": r.read_iops, "write_iops": r.write_iops, "read_bw_bytes": r.read_bw_bytes,
                 "write_bw_bytes": r.write_bw_bytes} for r in rows]  # fmt: skip

    def runs_with_meta_key(self, key: str, limit: int = 200) -> list[tuple[RunInfo, JSONObject]]:
        """The newest runs whose metadata has ``key`` (a curve, a steady-state window), with their metadata."""
        query = self._run_query().where(self._position(runs.c.meta_json, json.dumps(key) + ":") > 0).order_by(runs.c.id.desc()).limit(limit)
        rows = self._read(lambda conn: list(conn.execute(query)))
        out = []
        for r in rows:
            meta = self._meta_of(r.meta_json)
            if key in meta:
                meta.pop("owner", None)
                out.append((self._run_info(r), meta))
        return out

    def get_run(self, run_id: int) -> RunInfo:
        """One run; :class:`UsageError` naming the valid range when there is no such run."""

        def work(conn: Connection) -> RunInfo:
            row = conn.execute(self._run_query().where(runs.c.id == run_id)).first()
            if row is None:
                raise self._not_found(conn, run_id)
            return self._run_info(row)

        return self._read(work)

    def get_runs(self, run_ids: Sequence[int]) -> dict[int, RunInfo]:
        """Several runs in one query, in the order given (a repeated id once); :class:`UsageError`
        naming the valid range for the first id that names no run."""
        wanted = list(dict.fromkeys(run_ids))

        def work(conn: Connection) -> dict[int, RunInfo]:
            found = {}
            for chunk in _chunks(wanted):
                for row in conn.execute(self._run_query().where(runs.c.id.in_(chunk))):
                    found[row.id] = self._run_info(row)
            for rid in wanted:
                if rid not in found:
                    raise self._not_found(conn, rid)
            return {rid: found[rid] for rid in wanted}

        return self._read(work)

    def find_runs(self, ref: str) -> list[int]:
        """Run ids that ``ref`` names: a run id, else runs with exactly that label, newest first.

        A number names the run with that id when there is one (it wins over a label
        spelled the same way); otherwise it is tried as a label.  ``[]`` when nothing matches.
        """
        ref = ref.strip()

        def work(conn: Connection) -> list[int]:
            if re.fullmatch(r"[0-9]+", ref) and int(ref) <= max_run_id(self._engine.dialect.name == "postgresql"):
                found = conn.execute(select(runs.c.id).where(runs.c.id == int(ref))).first()
                if found is not None:
                    return [int(found[0])]
            rows = conn.execute(select(runs.c.id).where(runs.c.label == self._enc(ref)).order_by(runs.c.id.desc()))
            return [int(r[0]) for r in rows]

        return self._read(work)

    def results(self, run_id: int) -> list[ResultRecord]:
        """Every result of a run in insertion order, fully reconstructed."""

        def work(conn: Connection) -> list[ResultRecord]:
            self._require_run(conn, run_id)
            rows = conn.execute(select(results).where(results.c.run_id == run_id).order_by(results.c.id))
            return [self._record(row) for row in rows]

        return self._read(work)

    def results_of(self, run_ids: Sequence[int]) -> dict[int, list[ResultRecord]]:
        """The results of several runs in one query (no round trip per run): per run, in the
        order given, its results in insertion order (``[]`` for a run without any);
        :class:`UsageError` for an id that names no run."""
        wanted = list(dict.fromkeys(run_ids))

        def work(conn: Connection) -> dict[int, list[ResultRecord]]:
            out: dict[int, list[ResultRecord]] = {}
            for chunk in _chunks(wanted):
                known = {int(r[0]) for r in conn.execute(select(runs.c.id).where(runs.c.id.in_(chunk)))}
                for rid in chunk:
                    if rid not in known:
                        raise self._not_found(conn, rid)
                    out[rid] = []
                rows = conn.execute(select(results).where(results.c.run_id.in_(chunk)).order_by(results.c.id))
                for row in rows:
                    out[row.run_id].append(self._record(row))
            return {rid: out[rid] for rid in wanted}

        return self._read(work)

    def _record(self, row: Any) -> ResultRecord:
        return record_from_row(row, self._dec, self.display)

    def run_meta(self, run_id: int) -> JSONObject:
        """The free JSON stored with a run (host facts, argv, targets); without its owner
        (:meth:`run_owner`), which is the store's own."""
        meta = self._full_meta(run_id)
        meta.pop("owner", None)
        return meta

    def run_metas(self, run_ids: Sequence[int]) -> dict[int, JSONObject]:
        """:meth:`run_meta` of several runs in one query, in the order given."""
        wanted = list(dict.fromkeys(run_ids))

        def work(conn: Connection) -> dict[int, JSONObject]:
            found = {}
            for chunk in _chunks(wanted):
                for row in conn.execute(select(runs.c.id, runs.c.meta_json).where(runs.c.id.in_(chunk))):
                    meta = json.loads(row.meta_json)
                    meta.pop("owner", None)
                    found[row.id] = meta
            for rid in wanted:
                if rid not in found:
                    raise self._not_found(conn, rid)
            return {rid: found[rid] for rid in wanted}

        return self._read(work)

    def run_owner(self, run_id: int) -> JSONObject | None:
        """Who created (or last resumed) the run: host, pid, start time (:mod:`storbench.store.owner`)."""
        owner = self._full_meta(run_id).get("owner")
        return owner if isinstance(owner, dict) else None

    def _full_meta(self, run_id: int) -> JSONObject:
        def work(conn: Connection) -> JSONObject:
            row = conn.execute(select(runs.c.meta_json).where(runs.c.id == run_id)).first()
            if row is None:
                raise self._not_found(conn, run_id)
            return json.loads(row.meta_json)

        return self._read(work)

    def update_run_meta(self, run_id: int, updates: JSONObject) -> None:
        """Add or replace top-level keys of a run's free JSON (a curve's points, knee and ceiling)."""

        def work(conn: Connection) -> None:
            row = conn.execute(select(runs.c.meta_json).where(runs.c.id == run_id)).first()
            if row is None:
                raise self._not_found(conn, run_id)
            meta = json.loads(row.meta_json)
            meta.update(updates)
            conn.execute(update(runs).where(runs.c.id == run_id).values(meta_json=json.dumps(meta, allow_nan=False, default=str)))

        self._write(work)

    # ----------------------------------------------------------------- network ceilings (0003)

    def add_net_ceiling(
        self,
        server: str,
        streams: int,
        direction: str,
        bits_per_second: float,
        raw_json: str,
        created_at: str | None = None,
    ) -> int:
        """Store one ``storbench net`` measurement (commits); returns its id.  The rows of
        one invocation share ``created_at`` (pass the same value)."""
        from storbench.store.tables import NET_DIRECTIONS, net_ceilings

        if direction not in NET_DIRECTIONS:
            raise ValueError(f"direction must be one of {NET_DIRECTIONS}, not {direction!r}")
        values = {
            "server": self._enc(server.strip().lower()),
            "created_at": created_at or self._now(),
            "streams": int(streams),
            "direction": direction,
            "bits_per_second": float(bits_per_second),
            "raw_json": self._enc(raw_json),
        }
        return self._write(lambda conn: _inserted_id(conn.execute(net_ceilings.insert().values(**values))))

    def last_net_ceiling(self, server: str) -> NetCeiling | None:
        """The measurements of the latest ``storbench net`` run against ``server``
        (a :class:`storbench.net.NetCeiling`), or None when there is none."""
        from storbench.net import NetCeiling, NetMeasurement
        from storbench.store.tables import net_ceilings

        key = self._enc(server.strip().lower())

        def work(conn: Connection):
            newest = conn.execute(
                select(net_ceilings.c.created_at).where(net_ceilings.c.server == key).order_by(net_ceilings.c.id.desc()).limit(1)
            ).first()
            if newest is None:
                return None
            rows = conn.execute(
                select(net_ceilings)
                .where(net_ceilings.c.server == key, net_ceilings.c.created_at == newest.created_at)
                .order_by(net_ceilings.c.id)
            ).all()
            name = self._dec(key) or ""
            return NetCeiling(
                server=name,
                created_at=newest.created_at,
                measurements=tuple(
                    NetMeasurement(server=name, port=None, streams=r.streams, direction=r.direction, bits_per_second=r.bits_per_second)
                    for r in rows
                ),
            )

        return self._read(work)


# --------------------------------------------------------------------------- opening, in detail


def _extras_to_json(record: ResultRecord) -> dict[str, str | None]:
    """The 0002 columns: storage, activity, findings, space as versioned JSON (None stays NULL)."""
    from ..activity import activity_to_dict
    from ..backend import backend_to_dict
    from ..storage import storage_to_dict

    def dump(value: Any) -> str | None:
        return None if value is None else json.dumps(value, ensure_ascii=False, allow_nan=False)

    return {
        "storage_json": dump(storage_to_dict(record.storage) if record.storage is not None else None),
        "activity_json": dump(activity_to_dict(record.activity) if record.activity is not None else None),
        "findings_json": dump(
            {"format_version": versions.FINDINGS, "findings": [dataclasses.asdict(f) for f in record.findings]}
            if record.findings
            else None
        ),
        "space_json": dump(dict(record.space) if record.space is not None else None),
        "series_json": dump(dict(record.series) if record.series is not None else None),
        "backend_json": dump(backend_to_dict(record.backend) if record.backend is not None else None),
    }


def _not_storbench(display: str, reason: str, detail: str) -> StoreError:
    return StoreError(f"{display} is not a storbench database ({reason}): {detail}")


def _classify(display: str, tables: set[str], revisions: tuple[str, ...], location: str, *, foreign_ok: bool) -> str | None:
    """The schema revision of a database we may use (``None``: empty, to be created), else StoreError."""
    ours = tables & STORBENCH_TABLES
    if revisions:
        unknown = [r for r in revisions if r not in _known_revisions(location)]
        if unknown and ours:
            raise StoreError(
                f"database {display} was written by a newer storbench (schema {', '.join(unknown)}); upgrade storbench"
            )
        if unknown:
            raise _not_storbench(display, "foreign schema", f"it holds another application's migration {unknown[0]!r}")
        if len(revisions) > 1:
            raise StoreError(f"database {display} has several schema heads ({', '.join(revisions)}); it cannot be used")
        return revisions[0]
    if ours:
        raise _not_storbench(display, "no schema version", f"it has tables {', '.join(sorted(ours))} but no alembic_version")
    others = tables - {"alembic_version"}
    if others and not foreign_ok:
        shown = ", ".join(sorted(others)[:5]) + (", ..." if len(others) > 5 else "")
        raise _not_storbench(display, "other tables", f"it holds {shown}")
    return None


def _check_sqlite_file(path: Path, display: str, location: str) -> None:
    """Refuse, without modifying it, a file that is not a usable storbench SQLite database."""
    if not path.exists():
        return
    if path.is_dir():
        raise _not_storbench(display, "a directory", "pass a file path")
    try:
        with path.open("rb") as fh:
            header = fh.read(len(_SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot read database {display}: {exc.strerror or exc}") from exc
    if not header:
        return  # an empty file is an empty SQLite database
    if header != _SQLITE_HEADER:
        raise _not_storbench(display, "not an SQLite file", f"it starts with {header[:8]!r}")
    # Read-only, and without creating -wal/-shm files next to it: when neither exists
    # no process has the database open, so "immutable" (no locking, no shared memory)
    # reads exactly what is on disk.  When they exist, a plain read-only connection
    # uses them.  Either way _migrate classifies again under the write lock.
    in_use = any(path.with_name(path.name + suffix).exists() for suffix in ("-wal", "-shm", "-journal"))
    uri = path.resolve().as_uri() + ("?mode=ro" if in_use else "?mode=ro&immutable=1")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open database {display}: {exc}") from exc
    try:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
            )
        }
        revisions: tuple[str, ...] = ()
        if "alembic_version" in tables:
            revisions = tuple(r[0] for r in conn.execute("SELECT version_num FROM alembic_version"))
    except sqlite3.DatabaseError as exc:
        code = getattr(exc, "sqlite_errorname", "") or ""
        if code.startswith(("SQLITE_READONLY", "SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CANTOPEN")):
            return  # cannot tell without writing (WAL recovery, locks): decide under the write lock
        if code and not code.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
            raise StoreError(f"cannot read database {display}: {exc}") from exc
        raise _not_storbench(display, "corrupt SQLite file", str(exc)) from exc
    finally:
        conn.close()
    _classify(display, tables, revisions, location, foreign_ok=False)


def _configure_sqlite(engine: Engine, *, wal: bool) -> None:
    """PRAGMAs on every connection, and real transactions (SQLAlchemy's pysqlite recipe).

    The sqlite3 module's own BEGIN handling is switched off so that DDL is
    transactional and writers can take the lock up front with BEGIN IMMEDIATE
    (a deferred transaction that later wants to write can fail at once in WAL mode).
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        try:
            cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            cur.execute("PRAGMA foreign_keys = ON")
            if wal:
                _set_wal(cur)
                # WAL + FULL: each commit is flushed, so a result stored is a result kept,
                # even across a power loss (storage benchmarks do cut power sometimes).
                cur.execute("PRAGMA synchronous = FULL")
        finally:
            cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE_OPTION) else "BEGIN")


def _set_wal(cur: Any) -> None:
    """Switch to WAL, retrying while another process holds the file.

    Changing the journal mode needs an exclusive lock, and SQLite answers "database is
    locked" at once (without the busy handler) when two processes open a new file at the
    same moment; so retry for up to the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            cur.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def _backup_path(path: Path, revision: str) -> Path:
    candidate = path.with_name(f"{path.name}.bak-{revision}")
    n = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.bak-{revision}-{n}")
        n += 1
    return candidate


def _backup(path: Path, revision: str, display: str) -> Path:
    """Copy the database (including committed WAL content) to ``<file>.bak-<revision>``."""
    dest = _backup_path(path, revision)
    try:
        src = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            out = sqlite3.connect(dest)
            try:
                src.backup(out)
            finally:
                out.close()
        finally:
            src.close()
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(f"cannot back up database {display} to {dest} before upgrading it: {exc}") from exc
    return dest


def _migrate(engine: Engine, display: str, path: Path | None, location: str, is_sqlite: bool) -> None:
    """Under a write lock: classify again, back up an older SQLite file, upgrade to head."""
    head = _head_revision(location)
    try:
        with engine.connect() as conn:
            conn.execution_options(**{_WRITE_OPTION: True})
            with conn.begin():
                if conn.dialect.name == "postgresql":
                    # two processes creating or upgrading the schema at once: the second
                    # waits here, then sees the first one's committed schema
                    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
                tables = set(inspect(conn).get_table_names())
                revisions: tuple[str, ...] = ()
                if "alembic_version" in tables:  # what alembic's MigrationContext.get_current_heads() reads
                    revisions = tuple(r[0] for r in conn.execute(text("SELECT version_num FROM alembic_version")))
                current = _classify(display, tables, revisions, location, foreign_ok=not is_sqlite)
                if current == head:
                    return
                if current is not None and path is not None:
                    _backup(path, current, display)
                from alembic import command

                cfg = _alembic_config(location)
                cfg.attributes["connection"] = conn
                try:
                    command.upgrade(cfg, "head")
                except SQLAlchemyError:
                    raise
                except Exception as exc:  # a migration's own failure; the transaction rolls back
                    raise StoreError(
                        f"upgrading database {display} from schema {current or 'none'} to {head} failed: {exc}"
                    ) from exc
    except SQLAlchemyError as exc:
        orig = getattr(exc, "orig", None)
        detail = str(orig or exc).splitlines()[0]
        if isinstance(orig, sqlite3.DatabaseError) and "not a database" in detail:
            raise _not_storbench(display, "corrupt SQLite file", detail) from exc
        raise StoreError(f"cannot open database {display}: {detail}{_why_not_writable(path)}") from exc
