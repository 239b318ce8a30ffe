"""What the checks look at (their input records): :class:`CheckContext` after a repetition,
:class:`PreflightContext` before a run, and the test files' and filesystem's space
(:class:`FileState`, :class:`FsSpace`) the runner measured. Each check family imports this
module, never the package's face (which loads the families).

May import: the records (model, activity, storage; back-end records for the type checker).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storbench.activity import ActivitySeries
from storbench.model import FioResult
from storbench.storage import StorageInfo

if TYPE_CHECKING:
    import os

    from storbench.backend import BackendActivity
    from storbench.jsontypes import JSONMapping


@dataclass(frozen=True)
class FileState:
    """A test file at one moment: ``st_size`` and ``st_blocks * 512``."""

    path: str
    apparent_bytes: int
    allocated_bytes: int

    @classmethod
    def from_stat(cls, path: str, st: os.stat_result) -> FileState:
        """From an ``os.stat_result`` (the caller did the stat)."""
        return cls(path, int(st.st_size), int(st.st_blocks) * 512)


@dataclass(frozen=True)
class FsSpace:
    """The used bytes of a filesystem (statvfs: ``(f_blocks - f_bfree) * f_frsize``)."""

    used_bytes: int

    @classmethod
    def from_statvfs(cls, st: os.statvfs_result) -> FsSpace:
        """From an ``os.statvfs_result`` (the caller did the statvfs)."""
        return cls((int(st.f_blocks) - int(st.f_bfree)) * int(st.f_frsize))


@dataclass(frozen=True)
class CheckContext:
    """Everything the post-run checks look at, for one workload on one target.

    ``options``: the effective fio job options as in the job file (``None`` = a
    valueless flag).  ``results``: one :class:`FioResult` per repetition so far (at
    least one).  ``activity``: the device activity of each repetition, in the same
    order (may be shorter, entries may be None).  ``files_before``/``files_after`` and
    ``fs_used_before``/``fs_used_after`` (the filesystem's used bytes) were taken around
    the **last** repetition.  ``test_file_created``: storbench laid the test file out
    itself (a directory target) rather than using an existing file.  ``headline``:
    ``iops``, ``bw`` or ``lat``.
    """

    workload: str
    options: Mapping[str, str | None]
    results: tuple[FioResult, ...]
    storage: StorageInfo | None = None
    activity: tuple[ActivitySeries | None, ...] = ()
    files_before: tuple[FileState, ...] = ()
    files_after: tuple[FileState, ...] = ()
    fs_used_before: int | None = None
    fs_used_after: int | None = None
    mem_bytes: int | None = None
    test_file_created: bool = True
    headline: str = "iops"
    #: what the back-ends reported in the last repetition: the ZFS pool's own counters, state and ARC
    backend: BackendActivity | None = None
    #: each repetition's per-second series (:func:`storbench.fio.logs.series_from_logs`), same order; may be shorter
    series: tuple[JSONMapping | None, ...] = ()
    #: ``"fio"``, or the application load that ran (``"pgbench"``): its options are the load's, its
    #: figures measures, and only :data:`LOAD_FAMILIES` judge it
    tool: str = "fio"
    #: a replay of a stored trace: the trace's reference figures and the replay's mode
    #: (:func:`storbench.trace.fidelity.replay_reference`); None for every other workload
    replay: JSONMapping | None = None

    def __post_init__(self) -> None:
        for name in ("results", "activity", "files_before", "files_after", "series"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        if not self.results:
            raise ValueError("CheckContext needs at least one result")


@dataclass(frozen=True)
class PreflightContext:
    """What the checks that need no measurement look at: each workload's options, the storage, the RAM."""

    options_by_workload: Mapping[str, Mapping[str, str | None]]
    storage: StorageInfo | None = None
    mem_bytes: int | None = None


