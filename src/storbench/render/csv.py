"""CSV export (pure): one row per result, job and direction of fio's figures, and one per figure
of another benchmark's (an application load's tps, MB/s, latency: direction ``result``, its unit
in ``measure``, its figure in ``value``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from ..metrics import MEASURE_DIRECTION
from ..model import DIRECTIONS, LatencyStats
from ..record import ResultRecord

COLUMNS = (
    "run",
    "result",
    "label",
    "target",
    "source",
    "workload",
    "repetition",
    "fio_version",
    "job",
    "hostname",
    "aggregate",
    "direction",
    "iops",
    "bw_bytes",
    "io_bytes",
    "runtime_ms",
    "lat_mean_ns",
    "lat_stddev_ns",
    "lat_min_ns",
    "lat_max_ns",
    "clat_mean_ns",
    "clat_p50_ns",
    "clat_p99_ns",
    "clat_p99.9_ns",
    "slat_mean_ns",
    "usr_cpu_pct",
    "sys_cpu_pct",
    "measure",
    "value",
)


def csv_number(v: float | None) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return repr(v) if isinstance(v, float) else str(v)


def _pct(lat: LatencyStats | None, key: str) -> str:
    if lat is None:
        return ""
    return csv_number(lat.percentiles.get(key))


def format_csv(records: Sequence[ResultRecord]) -> str:
    """Empty cells mean "not measured"; zeros are measured zeros."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for rec in records:
        for job in rec.fio.jobs:
            for name in DIRECTIONS:
                d = job.directions.get(name)
                if d is None:
                    continue
                lat, clat, slat = d.lat_ns, d.clat_ns, d.slat_ns
                writer.writerow(
                    [
                        rec.run_id,
                        csv_number(rec.result_id),
                        rec.label or "",
                        rec.target or "",
                        rec.source or "",
                        rec.workload,
                        rec.repetition,
                        rec.fio.fio_version or "",
                        job.name,
                        job.hostname or "",
                        "1" if job.is_aggregate else "0",
                        name,
                        csv_number(d.iops),
                        csv_number(d.bw_bytes),
                        csv_number(d.io_bytes),
                        csv_number(d.runtime_ms),
                        csv_number(lat.mean_ns if lat else None),
                        csv_number(lat.stddev_ns if lat else None),
                        csv_number(lat.min_ns if lat else None),
                        csv_number(lat.max_ns if lat else None),
                        csv_number(clat.mean_ns if clat else None),
                        _pct(clat, "50.0"),
                        _pct(clat, "99.0"),
                        _pct(clat, "99.9"),
                        csv_number(slat.mean_ns if slat else None),
                        csv_number(job.usr_cpu_pct),
                        csv_number(job.sys_cpu_pct),
                        "",
                        "",
                    ]
                )
        for m in rec.fio.measures:  # another benchmark's figures: the fio columns stay empty
            head = [rec.run_id, csv_number(rec.result_id), rec.label or "", rec.target or "", rec.source or "", rec.workload, rec.repetition]
            writer.writerow([*head, "", rec.fio.format, "", "0", MEASURE_DIRECTION, *([""] * 15), m.unit, csv_number(m.value)])
    return out.getvalue()
