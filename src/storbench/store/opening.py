"""Opening a results database in detail: is this file a storbench database (or a foreign, newer,
corrupt one), SQLite's settings (WAL, busy timeout), a backup before an upgrade, and Alembic's
migrations (under PostgreSQL's advisory lock)."""

from __future__ import annotations

import functools
import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import event, inspect, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from storbench.errors import StoreError
from storbench.store.rows import (
    plain_revisions,
)
from storbench.store.tables import STORBENCH_TABLES

from .base import BUSY_TIMEOUT_MS, WRITE_OPTION

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory



_SQLITE_HEADER = b"SQLite format 3\x00"


#: pg_advisory_xact_lock key held while a PostgreSQL schema is created or upgraded ("sbmigrat")
_PG_MIGRATION_LOCK = 0x73626D6967726174


def why_not_writable(path: Path | None) -> str:
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


@functools.cache
def alembic_script(location: str) -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config(location))


def alembic_config(location: str) -> Config:
    from alembic.config import Config

    cfg = Config()  # no alembic.ini, no logging configuration
    cfg.set_main_option("script_location", location.replace("%", "%%"))
    cfg.set_main_option("path_separator", "os")
    return cfg


def _known_revisions(location: str) -> frozenset[str]:
    plain = plain_revisions(location)
    if plain is not None:
        return plain[0]
    return frozenset(s.revision for s in alembic_script(location).walk_revisions())


def _head_revision(location: str) -> str | None:
    plain = plain_revisions(location)
    return plain[1] if plain is not None else alembic_script(location).get_current_head()


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


def check_sqlite_file(path: Path, display: str, location: str) -> None:
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
    # uses them.  Either way migrate classifies again under the write lock.
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


def configure_sqlite(engine: Engine, *, wal: bool) -> None:
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
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE_OPTION) else "BEGIN")


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


def migrate(engine: Engine, display: str, path: Path | None, location: str, is_sqlite: bool) -> None:
    """Under a write lock: classify again, back up an older SQLite file, upgrade to head."""
    head = _head_revision(location)
    try:
        with engine.connect() as conn:
            conn.execution_options(**{WRITE_OPTION: True})
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

                cfg = alembic_config(location)
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
        raise StoreError(f"cannot open database {display}: {detail}{why_not_writable(path)}") from exc
