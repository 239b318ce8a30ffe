"""The captured source as a reference beside its replays (pure): ``storbench compare`` sets the
trace's own figures, as one fio-shaped result, next to each candidate's replay of it.

One sample (the trace is one recording): compared, it is called "a single run", never better
or worse; its figures are what the application asked of its disk and how the source answered
(the trace's issue-to-complete latency).  Built from the stored figures
(:func:`storbench.trace.figures.trace_figures`), not the events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import pct_key
from storbench.model.results import DirectionStats, FioResult, JobResult, LatencyStats

if TYPE_CHECKING:
    from storbench.jsontypes import JSONMapping

#: the job name and format of a reference result
REFERENCE_JOB = "captured"
REFERENCE_FORMAT = "trace"


def _latency(lat: JSONMapping | None, ops: int) -> LatencyStats | None:
    if not lat:
        return None
    percentiles = {pct_key(k): float(v) for k, v in lat.items() if k not in ("mean", "min", "max", "stddev")}
    return LatencyStats(min_ns=float(lat.get("min", lat.get("50.0", 0.0))), max_ns=float(lat["max"]), mean_ns=float(lat["mean"]),
                        stddev_ns=float(lat.get("stddev", 0.0)), samples=ops, percentiles=percentiles)  # fmt: skip


def reference_result(figures: JSONMapping, kinds: tuple[str, ...] = ("read", "write", "trim")) -> FioResult:
    """The trace's figures as one job of one result (the directions of ``kinds`` it has)."""
    span_ms = round(float(figures.get("span_s") or 0.0) * 1000)
    directions = {}
    for name, d in (figures.get("directions") or {}).items():
        if name not in kinds or not d.get("ops"):
            continue
        lat = _latency(d.get("lat_ns"), int(d["ops"]))
        directions[name] = DirectionStats(
            direction=name, io_bytes=int(d["bytes"]), bw_bytes=float(d.get("bw_bytes") or 0.0), iops=float(d.get("iops") or 0.0),
            runtime_ms=span_ms, total_ios=int(d["ops"]), lat_ns=lat, clat_ns=lat,
        )  # fmt: skip
    job = JobResult(name=REFERENCE_JOB, directions=directions, job_runtime_ms=span_ms)
    return FioResult(fio_version=None, jobs=(job,), format=REFERENCE_FORMAT)
