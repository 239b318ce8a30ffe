"""Pure: the figures a person judges a result by, and their statistics over repetitions.

A result's figures are taken per direction from the jobs a summary shows (the
"All clients" aggregate of a client/server run, else every job, summed): IOPS
and bandwidth add up over jobs; latencies are averaged weighted by each job's
I/O count.  ``None`` stays "not measured".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .model import DIRECTIONS, DirectionStats, FioResult, JobResult
from .stats import Summary, summarize

#: Metrics per direction; (name, higher is better)
METRICS: tuple[tuple[str, bool], ...] = (
    ("iops", True),
    ("bw_bytes", True),
    ("lat_mean_ns", False),
    ("clat_p99_ns", False),
)
HIGHER_IS_BETTER: Mapping[str, bool] = dict(METRICS)

#: The direction under which a result's :class:`~storbench.model.Measure` figures (those of
#: another benchmark, such as a Phoronix Test Suite test) appear, each under its unit.
MEASURE_DIRECTION = "result"


def measure_directions(result: FioResult) -> dict[str, bool | None]:
    """The units of ``result``'s measures and whether higher is better for each."""
    return {m.unit: m.higher_is_better for m in result.measures}


def summary_jobs(result: FioResult) -> list[JobResult]:
    aggregates = [j for j in result.jobs if j.is_aggregate]
    return aggregates or list(result.jobs)


def _weighted(pairs: list[tuple[float, float]]) -> float | None:
    total = sum(w for _, w in pairs)
    if not pairs:
        return None
    if total <= 0:
        return sum(v for v, _ in pairs) / len(pairs)
    return sum(v * w for v, w in pairs) / total


def _lat(d: DirectionStats):
    return d.lat_ns or d.clat_ns


def direction_figures(result: FioResult) -> dict[str, dict[str, float | None]]:
    """``{"read": {"iops": .., "bw_bytes": .., "lat_mean_ns": .., "clat_p99_ns": ..}, ...}``;
    a result with measures also has ``{"result": {unit: value}}`` (:data:`MEASURE_DIRECTION`)."""
    out: dict[str, dict[str, float | None]] = {}
    for name in DIRECTIONS:
        dirs = [j.directions[name] for j in summary_jobs(result) if name in j.directions]
        if not dirs:
            continue
        weight = [float(d.total_ios if d.total_ios is not None else d.io_bytes) for d in dirs]
        lats = [(_lat(d).mean_ns, w) for d, w in zip(dirs, weight) if _lat(d) is not None]
        p99s = []
        for d, w in zip(dirs, weight):
            src = d.clat_ns if d.clat_ns is not None and "99.0" in d.clat_ns.percentiles else d.lat_ns
            if src is not None and "99.0" in src.percentiles:
                p99s.append((src.percentiles["99.0"], w))
        out[name] = {
            "iops": sum(d.iops for d in dirs),
            "bw_bytes": sum(d.bw_bytes for d in dirs),
            "lat_mean_ns": _weighted(lats) if len(lats) == len(dirs) else None,
            "clat_p99_ns": _weighted(p99s) if len(p99s) == len(dirs) else None,
        }
    if result.measures:
        out[MEASURE_DIRECTION] = {m.unit: float(m.value) for m in result.measures}
    return out


def headline_metric(headline: str) -> str:
    """The metric name behind a workload's declared headline."""
    return {"iops": "iops", "bw": "bw_bytes", "lat": "lat_mean_ns"}.get(headline, "iops")


def headline_value(result: FioResult, headline: str) -> float | None:
    """One number per result for repetition control: summed over directions for
    IOPS/bandwidth, the I/O-weighted mean latency for latency workloads."""
    if result.measures and not result.jobs:
        return float(result.measures[0].value)
    figures = direction_figures(result)
    metric = headline_metric(headline)
    values = [f[metric] for f in figures.values()]
    if not values or any(v is None for v in values):
        return None
    if metric == "lat_mean_ns":
        return sum(values) / len(values)  # type: ignore[arg-type]
    return float(sum(values))  # type: ignore[arg-type]


@dataclass(frozen=True)
class MetricStats:
    direction: str
    metric: str
    summary: Summary


def repetition_stats(results: Sequence[FioResult]) -> dict[str, dict[str, Summary]]:
    """Per direction and metric, the statistics over repetitions (metrics not
    measured in every repetition are left out)."""
    per: dict[str, dict[str, list[float]]] = {}
    missing: set[tuple[str, str]] = set()
    for result in results:
        for direction, figures in direction_figures(result).items():
            for metric, value in figures.items():
                if value is None:
                    missing.add((direction, metric))
                else:
                    per.setdefault(direction, {}).setdefault(metric, []).append(value)
    out: dict[str, dict[str, Summary]] = {}
    n = len(results)
    for direction, metrics in per.items():
        for metric, values in metrics.items():
            if (direction, metric) in missing or len(values) != n:
                continue
            out.setdefault(direction, {})[metric] = summarize(values)
    return out


def group_key(workload: str, target: str | None, host: str | None = None) -> tuple[str, str, str]:
    return (workload, target or "", host or "")


def iter_directions(result: FioResult) -> Iterable[tuple[JobResult, DirectionStats]]:
    for job in summary_jobs(result):
        for name in DIRECTIONS:
            d = job.directions.get(name)
            if d is not None:
                yield job, d
