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

May import: model, serialize, activity, backend and storage records, net, trace, context and errors;
never run, study, render or commands.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from sqlalchemy import create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from storbench.context import default_db_url  # where the database is: no SQLAlchemy import for a path
from storbench.errors import StoreError

from .base import BUSY_TIMEOUT_MS, system_clock
from .live_rows import LiveRows
from .opening import check_sqlite_file, configure_sqlite, migrate
from .result_rows import ResultRows
from .run_rows import RUN_SORTS, RunRows
from .trace_rows import TraceRows

__all__ = ["BUSY_TIMEOUT_MS", "MIGRATIONS_DIR", "RUN_SORTS", "Store", "default_db_url"]

#: Alembic script directory (env.py, versions/).  Tests point this elsewhere.
MIGRATIONS_DIR: Path = Path(__file__).resolve().parent / "migrations"


class Store(RunRows, ResultRows, LiveRows, TraceRows):
    """An open results database.  Use :meth:`open`; close with :meth:`close` or ``with``.

    Its rooms: :mod:`.base` (connection, transactions, retries), :mod:`.run_rows`,
    :mod:`.result_rows`, :mod:`.live_rows` (live states, network ceilings), :mod:`.trace_rows` (block traces), :mod:`.opening`
    (what opening a database checks, configures and migrates)."""

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
            check_sqlite_file(path, display, location)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the directory for database {display}: {exc.strerror or exc}") from exc

        try:
            engine = create_engine(parsed, **({"connect_args": {"timeout": BUSY_TIMEOUT_MS / 1000}} if is_sqlite else {}))
        except (ArgumentError, ImportError) as exc:
            raise StoreError(f"cannot use database {display}: {exc}") from exc
        if is_sqlite:
            configure_sqlite(engine, wal=path is not None)
        try:
            migrate(engine, display, path, location, is_sqlite)
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, display, path, clock or system_clock)
