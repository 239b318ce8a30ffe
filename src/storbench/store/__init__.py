"""The results database: every run and result storbench keeps, on SQLite or PostgreSQL.

* :mod:`.database` - :class:`Store`, the store itself (SQLAlchemy 2 Core + Alembic), built of
  rooms: :mod:`.base` (the connection, write transactions and their retries, reads),
  :mod:`.run_rows` (runs: create, finish, metadata, the history's query and index),
  :mod:`.result_rows` (results, committed one by one or an import's all at once),
  :mod:`.live_rows` (a running run's live state, the network ceilings), :mod:`.trace_rows` (block
  traces), :mod:`.opening` (what
  opening a database checks, configures, backs up and migrates).
* :mod:`.reader` - :func:`open_reader`: the reads ``show`` and ``list`` make, straight through
  the DB-API driver (sqlite3, psycopg) when the database is at this storbench's schema; no
  SQLAlchemy import (~0.25 s) for a command that reads one page.
* :mod:`.rows` - stored rows back into records (shared by both), :mod:`.tables` - the schema,
  :mod:`.owner` - which process owns a running run, ``migrations/`` - Alembic's revisions.

The names below load their module on first use (PEP 562), so that ``from storbench.store
import Store`` keeps working and importing the package costs nothing.

May import: model, serialize, activity, backend and storage records, net, trace, context and errors;
never run, study, render or commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.context import default_db_url

if TYPE_CHECKING:
    from .database import BUSY_TIMEOUT_MS, MIGRATIONS_DIR, Store
    from .reader import open_reader

__all__ = ["BUSY_TIMEOUT_MS", "MIGRATIONS_DIR", "Store", "default_db_url", "open_reader"]

_LAZY = {"Store": "database", "BUSY_TIMEOUT_MS": "database", "MIGRATIONS_DIR": "database", "open_reader": "reader"}


def __getattr__(name: str) -> object:  # each lazy name is typed by the TYPE_CHECKING import above
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
