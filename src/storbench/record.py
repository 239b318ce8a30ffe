"""A workload's result as stored (:class:`ResultRecord`): fio's parsed result plus where it came from,
the storage under its target, what the devices and the back-end did while it ran, and the findings.

It stands one floor above :mod:`storbench.model` (whose records it holds) and above the storage,
activity and back-end records it carries, so that the ground floor names nothing above it. The
stages after the run (the store, compare, the renderers, serve) take it from here.

May import: :mod:`storbench.model` (and, for the type checker, the storage, activity and back-end
records); never the stages that read it (store, compare, render, serve, run, commands).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .model.results import Finding, FioResult

if TYPE_CHECKING:
    from storbench.jsontypes import JSONMapping

    from .activity import ActivitySeries
    from .backend import BackendActivity
    from .storage import StorageInfo


@dataclass(frozen=True)
class ResultRecord:
    """One workload's result as stored: the parsed fio result plus where it came from."""

    run_id: int
    workload: str
    target: str | None
    fio: FioResult
    raw_output: str
    label: str | None = None
    source: str | None = None  # file path for imported results
    options: Mapping[str, str | None] = field(default_factory=dict)
    job_text: str | None = None
    repetition: int = 0
    result_id: int | None = None
    created_at: str | None = None  # ISO 8601 UTC
    host: str | None = None
    #: the storage under the target (None for imports and old records)
    storage: StorageInfo | None = None
    #: the devices' activity sampled while fio ran (None where not sampled)
    activity: ActivitySeries | None = None
    findings: tuple[Finding, ...] = ()
    #: test-file and filesystem space around the run: {"files_before": [...], "files_after": [...],
    #: "fs_used_before": int, "fs_used_after": int}
    space: JSONMapping | None = None
    #: per-second IOPS and bandwidth from fio's interval logs (see fio.logs.series_from_logs)
    series: JSONMapping | None = None
    #: what the storage back-end (a ZFS pool, an NBD export, Ceph, the drives) reported during the run
    backend: BackendActivity | None = None
