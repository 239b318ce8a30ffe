"""What a run asks of the store (:class:`RunStore`): the seam between :mod:`storbench.run` and
the results database.  :class:`storbench.store.Store` (SQLAlchemy, SQLite or PostgreSQL) is
one; a test's in-memory store can be another.  Typed for the checker, never imported at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from storbench.model import ResultRecord
    from storbench.net import NetCeiling


class RunStore(Protocol):
    """The store as a run writes it: a run's row, each result the moment it exists, the run's
    live state and metadata, how it ended; and the reads a run makes of it (a resumed run's
    results, the network ceiling ``storbench net`` measured, runs left by a killed process)."""

    def create_run(self, label: str | None, kind: str, suite: str | None = None, meta: Mapping[str, Any] | None = None) -> int: ...

    def add_result(self, record: ResultRecord) -> int: ...

    def results(self, run_id: int) -> list[ResultRecord]: ...

    def reopen_run(self, run_id: int) -> None: ...

    def finish_run(self, run_id: int, status: str, reason: str | None = None) -> None: ...

    def update_run_meta(self, run_id: int, updates: dict[str, Any]) -> None: ...

    def publish_live(self, run_id: int, state: Mapping[str, Any]) -> None: ...

    def last_net_ceiling(self, server: str) -> NetCeiling | None: ...

    def reconcile_dead_runs(self) -> list[int]: ...

    def close(self) -> None: ...
