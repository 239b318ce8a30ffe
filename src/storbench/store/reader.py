"""Edge: the reads ``storbench show`` and ``storbench list`` make, straight through the DB-API
driver (the standard library's sqlite3, psycopg 3), without SQLAlchemy.

Importing SQLAlchemy takes about a quarter of a second: more than a command that reads one run
or one page of runs spends on everything else.  :func:`open_reader` gives a read-only
:class:`Reader` when that is safe: a SQLite file that exists, or a ``postgresql+psycopg://``
URL, whose schema is exactly this storbench's head revision.  In every other case (no file yet,
an older schema to upgrade, a newer one to refuse, a URL it does not read as SQLAlchemy would,
a server that does not answer) it gives ``None`` and the caller opens a
:class:`~storbench.store.database.Store`, which creates, upgrades, refuses or reports as it
always has.  The SQL is the store's own queries written out (no function that differs between
the two databases); rows become records through :mod:`.rows`, as in the store; a test holds
both to the same answers on SQLite and PostgreSQL.

May import: the store's rows, owner and trace-read modules, model, errors; never SQLAlchemy.
"""

from __future__ import annotations

import json
import re
from collections import namedtuple
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit

from storbench.errors import StoreError, UsageError
from storbench.jsontypes import JSONObject
from storbench.model import RunInfo
from storbench.record import ResultRecord

from .rows import max_run_id, nul_escape, nul_unescape, plain_revisions, record_from_row, run_info_from_row, same_text
from .trace_reads import TraceReads

__all__ = ["Reader", "open_reader"]

#: the schema's revisions (the store's migrations; its MIGRATIONS_DIR is this directory)
_MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_BUSY_TIMEOUT_S = 30.0  # as the store's (BUSY_TIMEOUT_MS)
_RUNS = "SELECT runs.*, (SELECT count(*) FROM results WHERE results.run_id = runs.id) AS result_count FROM runs"
#: what a URL part may hold for the reader to name the database as SQLAlchemy does (else: the store)
_PLAIN = re.compile(r"[A-Za-z0-9._~-]*")


class Reader(TraceReads):
    """A database at this storbench's schema, opened for reading: the store's methods that
    ``show`` and ``list`` call (and the traces' reads), with the same answers and the same errors."""

    def __init__(self, conn: Any, display: str, *, postgres: bool) -> None:
        self._conn = conn
        self.display = display
        self.path = None
        self._postgres = postgres
        self._enc = nul_escape if postgres else same_text
        self._dec = nul_unescape if postgres else same_text
        self._driver_errors: tuple[type[BaseException], ...]
        if postgres:
            import psycopg

            self._driver_errors = (psycopg.Error,)
        else:
            import sqlite3

            self._driver_errors = (sqlite3.Error,)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Reader({self.display!r})"

    # ----------------------------------------------------------------- plumbing

    def _rows(self, sql: str, *params: Any) -> list[Any]:
        if self._postgres:
            sql = sql.replace("?", "%s")
        try:
            cur = self._conn.execute(sql, params)
            return list(cur.fetchall())
        except self._driver_errors as exc:
            detail = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise StoreError(f"database {self.display}: {detail}") from exc
        finally:
            if self._postgres:
                self._conn.rollback()  # no transaction left open on the server between reads

    def _trace_sql(self, sql: str, *params: Any) -> list[Any]:
        return self._rows(sql, *params)

    def _not_found(self, run_id: int) -> UsageError:
        lo, hi, n = self._rows("SELECT min(id), max(id), count(*) FROM runs")[0]
        if not n:
            return UsageError(f"no run {run_id} in {self.display} (it holds no runs yet)")
        return UsageError(f"no run {run_id} in {self.display} (runs are {lo}..{hi}; see storbench list)")

    # ----------------------------------------------------------------- reads (as Store's)

    def list_runs(self, limit: int | None = None, label_prefix: str | None = None) -> list[RunInfo]:
        sql, params = _RUNS, []
        if label_prefix is not None:
            prefix = self._enc(label_prefix) or ""
            sql += " WHERE substr(runs.label, 1, ?) = ?"
            params += [len(prefix), prefix]
        sql += " ORDER BY runs.id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [run_info_from_row(r, self._dec) for r in self._rows(sql, *params)]

    def find_runs(self, ref: str) -> list[int]:
        ref = ref.strip()
        if re.fullmatch(r"[0-9]+", ref) and int(ref) <= max_run_id(self._postgres):
            found = self._rows("SELECT id FROM runs WHERE id = ?", int(ref))
            if found:
                return [int(found[0][0])]
        return [int(r[0]) for r in self._rows("SELECT id FROM runs WHERE label = ? ORDER BY id DESC", self._enc(ref))]

    def get_run(self, run_id: int) -> RunInfo:
        rows = self._rows(_RUNS + " WHERE runs.id = ?", run_id)
        if not rows:
            raise self._not_found(run_id)
        return run_info_from_row(rows[0], self._dec)

    def results(self, run_id: int) -> list[ResultRecord]:
        if not self._rows("SELECT id FROM runs WHERE id = ?", run_id):
            raise self._not_found(run_id)
        rows = self._rows("SELECT * FROM results WHERE run_id = ? ORDER BY id", run_id)
        return [record_from_row(r, self._dec, self.display) for r in rows]

    def run_meta(self, run_id: int) -> JSONObject:
        rows = self._rows("SELECT meta_json FROM runs WHERE id = ?", run_id)
        if not rows:
            raise self._not_found(run_id)
        meta = json.loads(rows[0][0])
        meta.pop("owner", None)
        return meta


# --------------------------------------------------------------------------- opening


def open_reader(url: str) -> Reader | None:
    """A :class:`Reader` over ``url``, or ``None`` when the store must open it (see the module)."""
    plain = plain_revisions(str(_MIGRATIONS))
    if plain is None:
        return None
    head = plain[1]
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme == "sqlite":
        return _sqlite(parts, head)
    if parts.scheme == "postgresql+psycopg":
        return _postgres(parts, head)
    return None


def _named_rows(cursor: Any, row: tuple) -> Any:
    return _row_type(tuple(d[0] for d in cursor.description))._make(row)


_ROW_TYPES: dict[tuple[str, ...], Callable[..., Any]] = {}


def _row_type(names: tuple[str, ...]) -> Any:
    found = _ROW_TYPES.get(names)
    if found is None:
        found = _ROW_TYPES[names] = namedtuple("Row", names, rename=True)
    return found


def _sqlite(parts: SplitResult, head: str) -> Reader | None:
    # sqlite:///relative/path and sqlite:////absolute/path, as SQLAlchemy reads them
    if parts.netloc or parts.query or parts.fragment or not parts.path.startswith("/"):
        return None
    database = unquote(parts.path[1:])
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    path = Path(database)
    if not path.is_file():
        return None  # the store makes it (or says why it cannot)
    import sqlite3

    try:
        conn = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_S)
    except sqlite3.Error:
        return None
    try:
        conn.row_factory = _named_rows
        if [r[0] for r in conn.execute("SELECT version_num FROM alembic_version")] != [head]:
            conn.close()
            return None
    except sqlite3.Error:
        conn.close()
        return None
    return Reader(conn, str(path), postgres=False)


def postgres_display(user: str | None, has_password: bool, host: str, port: int | None, database: str) -> str:
    """The URL as SQLAlchemy's ``render_as_string(hide_password=True)`` names it in messages."""
    at = "@" if user or has_password else ""
    return f"postgresql+psycopg://{user or ''}{':***' if has_password else ''}{at}{host}{f':{port}' if port else ''}/{database}"


def _postgres(parts: SplitResult, head: str) -> Reader | None:
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    user = parts.username
    database = parts.path[1:]
    if (parts.query or parts.fragment or not host or not database
            or not all(_PLAIN.fullmatch(p or "") for p in (host, user, database))):  # fmt: skip
        return None  # the store reads it (and names it) as SQLAlchemy does
    password = unquote(parts.password) if parts.password is not None else None
    display = postgres_display(user, password is not None, host, port, database)
    try:
        import psycopg
        from psycopg.rows import namedtuple_row
    except ImportError:
        return None
    kwargs: JSONObject = {"host": host, "dbname": database, "user": user, "password": password, "port": port}  # psycopg's keywords
    try:
        conn = psycopg.connect(**{k: v for k, v in kwargs.items() if v is not None}, row_factory=namedtuple_row,
                               connect_timeout=10)  # fmt: skip
    except psycopg.Error:
        return None
    try:
        revisions = [r[0] for r in conn.execute("SELECT version_num FROM alembic_version").fetchall()]
        conn.rollback()
    except psycopg.Error:
        conn.close()
        return None
    if revisions != [head]:
        conn.close()
        return None
    return Reader(conn, display, postgres=True)
