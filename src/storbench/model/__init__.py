"""Frozen, typed records for every stage of the data flow.

workload definition -> fio job -> run -> parsed result -> stored record -> comparison -> report

Units are in the names: ``*_ns`` nanoseconds, ``*_ms`` milliseconds, ``*_bytes``
bytes, ``bw_bytes`` bytes per second, ``*_pct`` percent (0-100).

``None`` always means "not measured" (for example latency under gtod_reduce=1);
zero means a measured zero.  Parsers never fill in zeros for what fio did not
measure.

Here: the definitions a run is planned from (:class:`Workload`, :class:`Suite`,
:class:`Target`, :class:`Overrides`, :class:`JobSpec`, :class:`Repeat`).  The records of a
result (:class:`FioResult` and its parts, :class:`RunInfo`,
:class:`Finding`) are in :mod:`storbench.model.results` and are this module's names too, loaded
on first use: a run plans and starts its first fio without them.

May import: the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from storbench.jsontypes import JSONMapping, JSONObject

    # the lazy names (:func:`__getattr__`), typed; ``X as X`` re-exports them
    from .results import DirectionStats as DirectionStats
    from .results import DiskUtil as DiskUtil
    from .results import Finding as Finding
    from .results import FioResult as FioResult
    from .results import JobResult as JobResult
    from .results import LatencyStats as LatencyStats
    from .results import Measure as Measure
    from .results import RunInfo as RunInfo
    from .results import SampleSummary as SampleSummary
    from .results import SyncStats as SyncStats

#: Directions fio reports, in report order.  ``mixed`` appears under
#: ``unified_rw_reporting``.
DIRECTIONS: tuple[str, ...] = ("read", "write", "trim", "mixed")

#: a run on more hosts than this is read through its aggregate: its hosts summarised in one line
#: per workload (min, median, max, the slowest named) rather than a row or a configuration each
EACH_HOST_UP_TO = 16

Direction = Literal["read", "write", "trim", "mixed"]
Headline = Literal["iops", "bw", "lat"]

#: the names of :mod:`storbench.model.results`, loaded on first use (:func:`__getattr__`)
RESULT_NAMES = frozenset({
    "LatencyStats", "SampleSummary", "DirectionStats", "SyncStats", "DiskUtil", "JobResult", "Measure",
    "FioResult", "RunInfo", "Finding",
})  # fmt: skip


def __getattr__(name: str) -> object:  # each lazy name is typed by the TYPE_CHECKING import above
    if name in RESULT_NAMES:
        from . import results

        value = getattr(results, name)
        globals()[name] = value  # asked once
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | RESULT_NAMES)


def pct_key(p: float | str) -> str:
    """Canonical percentile key: ``"99.000000"`` / ``99`` -> ``"99.0"``, ``"99.990000"`` -> ``"99.99"``."""
    return repr(round(float(p), 6))


# --------------------------------------------------------------------------- definitions


@dataclass(frozen=True)
class Workload:
    """A named set of fio job options plus what it models.

    ``options`` keeps file order; a value of ``None`` is a valueless fio flag
    (``time_based``).  ``headline`` is the metric a person judges this workload by.
    ``tool``: ``"fio"``, or an application load of :mod:`storbench.loads` (``"pgbench"``,
    ``"dbench"``, ...), whose options ``options`` then holds (every one, as text) and whose
    headline is the first figure it measures (``"tps"``, ``"MB/s"``).
    """

    name: str
    description: str
    options: tuple[tuple[str, str | None], ...]
    headline: str = "iops"  # one of "iops", "bw", "lat"; a load's: its first figure's unit
    origin: str = "built-in"  # "built-in" or the suite file's path
    tool: str = "fio"
    #: a replay of a stored trace (``storbench run --replay``): its reference figures and mode
    #: (:func:`storbench.trace.fidelity.replay_reference`), which the fidelity checks read
    replay: JSONMapping | None = None
    #: several job sections fio runs together in one process (a group of a fio job file between two
    #: stonewalls, ``run --job-file``): each ``(section name, its options)``, in the file's order;
    #: ``options`` is then the first section's (what the checks and the headline read).  Empty:
    #: one section, named ``name``, with ``options``
    sections: tuple[tuple[str, tuple[tuple[str, str | None], ...]], ...] = ()

    @property
    def is_fio(self) -> bool:
        return self.tool == "fio"

    def option(self, key: str, default: str | None = None) -> str | None:
        for k, v in self.options:
            if k == key:
                return v
        return default

    def has_option(self, key: str) -> bool:
        return any(k == key for k, _ in self.options)


def workload_to_meta(w: Workload) -> JSONObject:
    """A workload as the run's metadata keeps it (every option, in order)."""
    out: JSONObject = {"name": w.name, "description": w.description, "options": [list(o) for o in w.options], "headline": w.headline, "origin": w.origin}
    if not w.is_fio:  # written only for a load, so that an older storbench's runs read the same
        out["tool"] = w.tool
    if w.replay is not None:
        out["replay"] = dict(w.replay)
    if w.sections:
        out["sections"] = [[name, [list(o) for o in opts]] for name, opts in w.sections]
    return out


def workload_from_meta(d: JSONMapping) -> Workload:
    return Workload(
        name=d["name"], description=d["description"], options=tuple((k, v) for k, v in d["options"]),
        headline=d.get("headline", "iops"), origin=d.get("origin", "built-in"), tool=d.get("tool", "fio"),
        replay=d.get("replay") if isinstance(d.get("replay"), dict) else None,
        sections=tuple((name, tuple((k, v) for k, v in opts)) for name, opts in d.get("sections") or ()),
    )  # fmt: skip


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    workloads: tuple[Workload, ...]
    origin: str = "built-in"


@dataclass(frozen=True)
class Target:
    """Where a workload's I/O goes.

    ``dir``: a directory, storbench creates its test file inside.
    ``file``: an existing regular file, used as is (never deleted).
    ``block``: a block device (guarded by storbench.targets.guard).
    ``nbd``: an NBD export (a URI, or the Unix socket of a VM image storbench serves).
    ``gluster``, ``rbd``, ``rados``: a GlusterFS volume, an RBD image, a RADOS pool.
    ``scratch``: storbench created the directory and removes it afterwards.
    ``params``: what the kind needs besides the path (a Ceph kind's ``conf`` and ``client``).
    """

    kind: str  # a storbench.targets kind name
    path: str
    scratch: bool = False
    params: tuple[tuple[str, str], ...] = ()
    #: what the target is called where its path is storbench's random choice (a scratch directory,
    #: a study's mountpoint), so that a resumed run is the same configuration: its stored name
    role: str | None = None

    def param(self, name: str) -> str | None:
        return next((v for k, v in self.params if k == name), None)

    @property
    def display(self) -> str:
        if self.role is not None:
            return self.role
        if self.scratch:  # ".storbench-scratch-k3j2h1" is new each time: stored by its role
            return self.path.rsplit("/", 1)[0] + "/" + SCRATCH_ROLE
        return self.path


#: how a run's own scratch directory (``.storbench-scratch-XXXXXX`` in the current directory) is stored
SCRATCH_ROLE = ".storbench-scratch"


@dataclass(frozen=True)
class Overrides:
    """Run-wide scaling of every workload (``--size``, ``--runtime``).

    ``size`` and ``runtime`` replace the workload's own values; ``default_size``
    is used only where a workload names no size and the target needs one.
    """

    size: str | None = None
    runtime: str | None = None
    default_size: str = "1g"
    extra: tuple[tuple[str, str | None], ...] = ()


@dataclass(frozen=True)
class JobSpec:
    """A workload made concrete for one target: the exact fio job text."""

    workload: Workload
    target: Target
    job_text: str
    test_files: tuple[str, ...]  # files this job creates/uses that storbench must remove
    options: tuple[tuple[str, str | None], ...]  # the effective options in the job section
    #: environment fio needs for this target (CEPH_CONF for an RBD image's cluster)
    env: tuple[tuple[str, str], ...] = ()
    #: every section's effective options where the job has several (a job file's group of jobs run
    #: together, :attr:`Workload.sections`); ``options`` is the first's.  Empty for one section
    sections: tuple[tuple[tuple[str, str | None], ...], ...] = ()

    @property
    def every_section(self) -> tuple[tuple[tuple[str, str | None], ...], ...]:
        return self.sections or (self.options,)


# --------------------------------------------------------------------------- findings

#: Finding severities, mildest first.  "invalid" means the number must not be used
#: as a measurement of the target (it measured something else, or is impossible).
SEVERITIES: tuple[str, ...] = ("info", "warning", "invalid")


@dataclass(frozen=True)
class Repeat:
    """How often each workload runs: ``count`` times, or until the relative standard
    error of its headline metric is below ``until_rse_pct`` (between ``min_runs``
    and ``max_runs`` runs)."""

    count: int = 1
    until_rse_pct: float | None = None
    min_runs: int = 3
    max_runs: int = 10
