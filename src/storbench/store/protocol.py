"""What a run asks of the store (:class:`RunStore`) and what ``storbench serve`` reads of it
(:class:`HistoryStore`): the seams between :mod:`storbench.run`, :mod:`storbench.serve` and
the results database.  :class:`storbench.store.Store` (SQLAlchemy, SQLite or PostgreSQL) is
one; a test's in-memory store can be another.  Typed for the checker, never imported at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from storbench.jsontypes import JSONMapping, JSONObject

if TYPE_CHECKING:
    from storbench.model import RunInfo
    from storbench.net import NetCeiling
    from storbench.record import ResultRecord
    from storbench.trace.rows import TraceRow


class RunStore(Protocol):
    """The store as a run writes it: a run's row, each result the moment it exists, the run's
    live state and metadata, how it ended; and the reads a run makes of it (a resumed run's
    results, the network ceiling ``storbench net`` measured, runs left by a killed process)."""

    def create_run(self, label: str | None, kind: str, suite: str | None = None, meta: JSONMapping | None = None) -> int: ...

    def add_result(self, record: ResultRecord) -> int: ...

    def results(self, run_id: int) -> list[ResultRecord]: ...

    def reopen_run(self, run_id: int) -> None: ...

    def finish_run(self, run_id: int, status: str, reason: str | None = None) -> None: ...

    def update_run_meta(self, run_id: int, updates: JSONObject) -> None: ...

    def publish_live(self, run_id: int, state: JSONMapping) -> None: ...

    def last_net_ceiling(self, server: str) -> NetCeiling | None: ...

    def reconcile_dead_runs(self) -> list[int]: ...

    def close(self) -> None: ...


class HistoryStore(Protocol):
    """The store as ``storbench serve`` reads it: pages of runs with their digests, a run's results
    and metadata, a workload's history across runs, the newest figures (``/metrics``) and the
    live states of runs in progress.  :class:`storbench.store.Store` is one."""

    def get_run(self, run_id: int) -> RunInfo: ...

    def get_runs(self, run_ids: Sequence[int]) -> dict[int, RunInfo]: ...

    def query_runs(self, *, label_prefix: str | None = None, target: str | None = None, suite: str | None = None,
                   host: str | None = None, since: str | None = None, until: str | None = None, check: str | None = None,
                   status: str | None = None, sort: str = "run", descending: bool = True, offset: int = 0,
                   limit: int = 50) -> tuple[list[RunInfo], int]: ...  # fmt: skip

    def run_digests(self, run_ids: Sequence[int]) -> dict[int, JSONObject]: ...

    def run_meta(self, run_id: int) -> JSONObject: ...

    def run_metas(self, run_ids: Sequence[int]) -> dict[int, JSONObject]: ...

    def runs_with_meta_key(self, key: str, limit: int = 200) -> list[tuple[RunInfo, JSONObject]]: ...

    def result(self, result_id: int) -> ResultRecord | None: ...

    def results(self, run_id: int) -> list[ResultRecord]: ...

    def results_of(self, run_ids: Sequence[int]) -> dict[int, list[ResultRecord]]: ...

    def results_of_workload(self, workload: str, target: str | None = None, label_prefix: str | None = None,
                            limit: int = 500) -> list[ResultRecord]: ...  # fmt: skip

    def last_results(self, limit: int = 1000) -> list[JSONObject]: ...

    def live_states(self, run_id: int | None = None) -> list[tuple[int, str, JSONObject]]: ...

    def list_traces(self, limit: int | None = None) -> list[TraceRow]: ...

    def find_trace(self, ref: str) -> TraceRow: ...
