"""The records of a result: what fio measured (:class:`FioResult` and its parts), what
storbench stored of a run (:class:`RunInfo`) and what the checks found (:class:`Finding`). A
workload's stored result, which holds the storage, activity and back-end records beside fio's, is
one floor up: :class:`storbench.record.ResultRecord`.

Their names are :mod:`storbench.model`'s too (``from storbench.model import FioResult`` works as
it always did); they live in a module of their own so that a run imports them only once its first
fio has started: creating a frozen dataclass costs about half a millisecond to a millisecond on
Python 3.11 (its methods are compiled one by one), and a run's start-up is short enough for ten of
them to count (docs/performance.md, section 2e).

May import: the standard library only; it names nothing above the ground floor, not even for the
type checker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only
    from storbench.jsontypes import JSONMapping


# --------------------------------------------------------------------------- fio results


@dataclass(frozen=True)
class LatencyStats:
    """One latency distribution (fio's ``lat_ns``, ``clat_ns``, ``slat_ns`` or sync ``lat_ns``).

    ``percentiles`` maps :func:`pct_key` strings (``"50.0"``, ``"99.99"``) to nanoseconds;
    it is empty where fio printed no percentiles for this distribution.
    """

    min_ns: float
    max_ns: float
    mean_ns: float
    stddev_ns: float
    samples: int | None = None  # fio's N; None where the source does not say
    percentiles: Mapping[str, float] = field(default_factory=dict)
    #: fio's latency histogram (``json+`` bins): (latency in ns, I/O count), ascending; empty where
    #: the output has none.  Several jobs' (or hosts') histograms add up to their union's, from which
    #: percentiles are computed as fio's group_reporting does (:func:`storbench.metrics.merged_percentile`)
    bins: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class SampleSummary:
    """fio's per-interval summary of bandwidth or IOPS samples (``bw_min``.. / ``iops_min``..).

    Bandwidth summaries are in bytes/s (converted from fio's KiB/s).
    """

    min: float
    max: float
    mean: float
    stddev: float
    samples: int
    agg_pct: float | None = None  # fio's ``per=`` / ``bw_agg``: share of the group total


@dataclass(frozen=True)
class DirectionStats:
    """What one job (or group) did in one direction."""

    direction: str  # one of DIRECTIONS
    io_bytes: int
    bw_bytes: float  # bytes per second
    iops: float
    runtime_ms: int
    total_ios: int | None = None
    short_ios: int | None = None
    drop_ios: int | None = None
    lat_ns: LatencyStats | None = None  # total latency; None = not measured
    clat_ns: LatencyStats | None = None  # completion latency
    slat_ns: LatencyStats | None = None  # submission latency
    bw_summary: SampleSummary | None = None
    iops_summary: SampleSummary | None = None


@dataclass(frozen=True)
class SyncStats:
    """fio's ``sync`` object: fsync/fdatasync counts and latency."""

    total_ios: int
    lat_ns: LatencyStats | None = None


@dataclass(frozen=True)
class DiskUtil:
    """One entry of fio's ``disk_util``: what the kernel block layer counted for a device."""

    name: str
    read_ios: int
    write_ios: int
    read_merges: int
    write_merges: int
    read_ticks_ms: int
    write_ticks_ms: int
    in_queue_ms: int
    util_pct: float
    aggregate: bool = False  # True for md/dm parents that fio aggregates over slaves
    hostname: str | None = None  # client/server runs: the fio server whose disk this is


@dataclass(frozen=True)
class JobResult:
    """One fio job (or one reporting group with group_reporting, or one client's aggregate)."""

    name: str
    groupid: int = 0
    error: int = 0
    directions: Mapping[str, DirectionStats] = field(default_factory=dict)
    sync: SyncStats | None = None
    usr_cpu_pct: float | None = None
    sys_cpu_pct: float | None = None
    ctx: int | None = None
    majf: int | None = None
    minf: int | None = None
    job_runtime_ms: int | None = None
    elapsed_s: int | None = None
    #: fio's IO depth distributions, keys as fio prints them ("1", "2", ..., ">=64"), values in %
    iodepth_level_pct: Mapping[str, float] = field(default_factory=dict)
    iodepth_submit_pct: Mapping[str, float] = field(default_factory=dict)
    iodepth_complete_pct: Mapping[str, float] = field(default_factory=dict)
    #: latency buckets as "<bound><unit>" ("2us", "750us", ">=2000ms") -> % of I/Os
    latency_dist_pct: Mapping[str, float] = field(default_factory=dict)
    #: job options as fio reports them (global options merged under job options)
    options: Mapping[str, str | None] = field(default_factory=dict)
    hostname: str | None = None  # client/server runs: the fio server this job ran on
    port: int | None = None
    is_aggregate: bool = False  # the "All clients" entry of a client/server run
    steadystate: JSONMapping | None = None
    #: with continue_on_error: total_err and first_error
    total_err: int | None = None
    first_error: int | None = None

    def direction(self, name: str) -> DirectionStats | None:
        return self.directions.get(name)


@dataclass(frozen=True)
class Measure:
    """A figure that is not one of fio's: what another benchmark reported (a Phoronix Test
    Suite test such as BlogBench or IOzone), kept with its own name and unit.

    ``unit`` is what the tool calls the figure (PTS's ``Scale``: ``"Final Score"``,
    ``"MB/s"``, ``"Seconds"``); it is also the figure's metric name in comparisons.
    ``higher_is_better`` is None when the tool does not say.
    """

    unit: str
    value: float
    higher_is_better: bool | None


@dataclass(frozen=True)
class FioResult:
    """Everything parsed out of one fio output (one invocation).

    A result imported from another benchmark (``format="pts"``) may have no jobs and its
    figures in ``measures`` instead.
    """

    fio_version: str | None
    jobs: tuple[JobResult, ...]
    format: str  # "json", "json+", "normal", "terse"
    timestamp_s: int | None = None
    time_text: str | None = None
    global_options: Mapping[str, str | None] = field(default_factory=dict)
    disk_util: tuple[DiskUtil, ...] = ()
    #: non-result lines fio printed around the result (warnings, "fio: pid=..., err=..")
    notes: tuple[str, ...] = ()
    interrupted: bool = False  # "fio: terminating on signal"
    measures: tuple[Measure, ...] = ()  # figures of a benchmark other than fio (see Measure)

    @property
    def error(self) -> int:
        """First non-zero job error, else 0."""
        for job in self.jobs:
            if job.error:
                return job.error
        return 0


# --------------------------------------------------------------------------- stored records


@dataclass(frozen=True)
class RunInfo:
    """One invocation of ``storbench run`` (or ``import``): the unit a user names."""

    run_id: int
    label: str | None
    kind: str  # "run" or "import"
    status: (
        str  # "running", "complete", "incomplete", "failed"; "interrupted" (never stored): running, its process gone
    )
    created_at: str
    finished_at: str | None = None
    suite: str | None = None
    reason: str | None = None
    storbench_version: str | None = None
    result_count: int = 0


# --------------------------------------------------------------------------- findings


@dataclass(frozen=True)
class Finding:
    """One benchmarking pitfall found in a run (or before it), with the one-line fix."""

    check: str  # stable id, e.g. "page-cache", "compressible-data"
    severity: str  # one of SEVERITIES
    message: str  # what happened, in a plain sentence with the evidence
    fix: str  # the one-line fix
    workload: str | None = None
