"""The store's plumbing: one write transaction with its retries (a locked SQLite file, a
PostgreSQL server restarting), reads, the clock, errors in words, and the helpers the row
modules share; :class:`StoreBase` is what :class:`storbench.store.database.Store` is built on."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar

from sqlalchemy import Select, func, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from storbench.errors import StoreError, UsageError
from storbench.jsontypes import JSONObject
from storbench.model import RunInfo
from storbench.record import ResultRecord
from storbench.store.rows import (
    meta_of,
    nul_escape,
    nul_unescape,
    record_from_row,
    run_info_from_row,
    same_text,
)
from storbench.store.tables import results, runs

if TYPE_CHECKING:

    pass


BUSY_TIMEOUT_MS = 30_000


_WRITE_RETRIES = 10  # on top of busy_timeout, for "database is locked" that SQLite returns at once


WRITE_OPTION = "storbench_write"  # execution option: this transaction will write


T = TypeVar("T")


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


def utc_text(moment: datetime) -> str:
    """ISO 8601 UTC with a ``Z``: ``2024-05-01T12:00:00Z``."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def system_clock() -> datetime:
    return datetime.now(UTC)


#: ids per ``IN (...)`` of the batch reads (well below every backend's limit on bound parameters)
IN_CHUNK = 500


def chunks(ids: Sequence[int]) -> list[list[int]]:
    return [list(ids[i : i + IN_CHUNK]) for i in range(0, len(ids), IN_CHUNK)]


def _is_locked(exc: BaseException) -> bool:
    text = str(getattr(exc, "orig", exc)).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text


def index_lines(values: Sequence[str]) -> str:
    """A list as ``run_index`` keeps it: each value on a line of its own, framed by newlines ("" for none)."""
    return "\n" + "\n".join(values) + "\n" if values else ""


def index_unlines(text: str | None) -> list[str]:
    return [v for v in (text or "").split("\n") if v]


def inserted_id(done: Any) -> int:
    """The id an INSERT of one row made (SQLAlchemy's ``inserted_primary_key``)."""
    key = done.inserted_primary_key
    if key is None:  # pragma: no cover - every table here has an integer primary key
        raise StoreError("the database returned no id for the row just inserted")
    return int(key[0])


def execute_statement(statement: Any, conn: Connection) -> Any:
    return conn.execute(statement)


class StoreBase:
    """An open results database's connection and transactions (see :class:`storbench.store.database.Store`)."""

    _meta_of = staticmethod(meta_of)

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

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.display!r})"

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
                    conn.execution_options(**{WRITE_OPTION: True})
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
        return utc_text(self._clock())

    def _not_found(self, conn: Connection, run_id: int) -> UsageError:
        lo, hi, n = conn.execute(select(func.min(runs.c.id), func.max(runs.c.id), func.count())).one()
        if not n:
            return UsageError(f"no run {run_id} in {self.display} (it holds no runs yet)")
        return UsageError(f"no run {run_id} in {self.display} (runs are {lo}..{hi}; see storbench list)")

    def _require_run(self, conn: Connection, run_id: int) -> None:
        if conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first() is None:
            raise self._not_found(conn, run_id)

    @staticmethod
    def _run_query() -> Select[Any]:
        # a correlated count: one lookup in ix_results_run_id per run returned (a page of
        # list, one run for get_run), not a GROUP BY over every stored result
        count = select(func.count()).where(results.c.run_id == runs.c.id).correlate(runs).scalar_subquery()
        return select(runs, count.label("result_count"))

    def _run_info(self, row: Any) -> RunInfo:
        return run_info_from_row(row, self._dec)

    def _record(self, row: Any) -> ResultRecord:
        return record_from_row(row, self._dec, self.display)

    def _full_meta(self, run_id: int) -> JSONObject:
        def work(conn: Connection) -> JSONObject:
            row = conn.execute(select(runs.c.meta_json).where(runs.c.id == run_id)).first()
            if row is None:
                raise self._not_found(conn, run_id)
            return json.loads(row.meta_json)

        return self._read(work)
