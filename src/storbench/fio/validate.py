"""What no storage can do: figures a parsed fio result must never carry when it is stored.

Pure: :func:`result_problems` takes a :class:`~storbench.model.FioResult` and returns one line
per problem (empty when the result is sound).  ``storbench import`` refuses a file whose
output has any (one line naming the file and the output's line); fio's own runs are judged by
the runner's checks instead.

The rules, per job and direction:

* every figure is finite and not negative (IOPS, bandwidth, bytes, I/O counts, runtime,
  latency minimum/mean/maximum and percentiles);
* a rate over no time, or with nothing moved, is impossible: IOPS or bandwidth above 0 with a
  runtime of 0 ms or io_bytes of 0;
* no storage reaches :data:`IMPLAUSIBLE_IOPS` IOPS or :data:`IMPLAUSIBLE_BW_BYTES` B/s in
  one job (100x today's fastest NVMe drives; a RAM disk reaches about 1e7 IOPS);
* bandwidth agrees with IOPS x the mean block size (``io_bytes / total_ios``) within
  :data:`BW_IOPS_TOLERANCE` (plus half an I/O per second) where all four are given: fio
  computes both from the same counts over the same time, so only rounding in its text
  output (three significant digits, whole IOPS below 1,000) separates them.
"""

from __future__ import annotations

import math

from ..model import DirectionStats, FioResult, LatencyStats

IMPLAUSIBLE_IOPS = 1e9
IMPLAUSIBLE_BW_BYTES = 1e13
IMPLAUSIBLE_RUNTIME_S = 1e9
#: bandwidth / (IOPS x mean block size) outside 1 ± this is an output whose figures contradict each other
BW_IOPS_TOLERANCE = 0.10


def _bad_number(value: float | int | None) -> bool:
    return value is not None and (not math.isfinite(value) or value < 0)


def _latency_problems(where: str, name: str, lat: LatencyStats | None) -> list[str]:
    if lat is None:
        return []
    out = [f"{where}: {name} {field} is {value!r}, not a finite number of at least 0"
           for field, value in (("min", lat.min_ns), ("mean", lat.mean_ns), ("max", lat.max_ns))
           if _bad_number(value)]  # fmt: skip
    out += [f"{where}: {name} {field} of {value:.3g} ns is longer than any benchmark ran ({IMPLAUSIBLE_RUNTIME_S:.0e} s)"
            for field, value in (("mean", lat.mean_ns), ("max", lat.max_ns))
            if not _bad_number(value) and value is not None and value > IMPLAUSIBLE_RUNTIME_S * 1e9]  # fmt: skip
    out += [f"{where}: {name} p{key} is {value!r}, not a finite number of at least 0"
            for key, value in lat.percentiles.items() if _bad_number(value)]  # fmt: skip
    return out


def direction_problems(where: str, d: DirectionStats) -> list[str]:
    """The problems of one direction (``where``: "job 'x' read")."""
    out = []
    for field, value in (("IOPS", d.iops), ("bandwidth (B/s)", d.bw_bytes), ("io_bytes", d.io_bytes),
                         ("runtime (ms)", d.runtime_ms), ("total_ios", d.total_ios)):  # fmt: skip
        if _bad_number(value):
            out.append(f"{where}: {field} is {value!r}, not a finite number of at least 0")
    if out:
        return out
    if d.runtime_ms == 0 and (d.iops > 0 or d.bw_bytes > 0):
        out.append(f"{where}: {d.iops:g} IOPS and {d.bw_bytes:g} B/s over a runtime of 0 ms")
    if d.io_bytes == 0 and (d.iops > 0 or d.bw_bytes > 0):
        out.append(f"{where}: {d.iops:g} IOPS and {d.bw_bytes:g} B/s with no byte moved (io_bytes 0)")
    if d.iops > IMPLAUSIBLE_IOPS:
        out.append(f"{where}: {d.iops:.3g} IOPS is beyond any storage (more than {IMPLAUSIBLE_IOPS:.0e} in one job)")
    if d.bw_bytes > IMPLAUSIBLE_BW_BYTES:
        out.append(f"{where}: {d.bw_bytes:.3g} B/s is beyond any storage (more than {IMPLAUSIBLE_BW_BYTES:.0e} in one job)")
    seconds = (d.runtime_ms or 0) / 1000.0
    if seconds > IMPLAUSIBLE_RUNTIME_S:
        out.append(f"{where}: a runtime of {seconds:.3g} s is more than a benchmark ever ran (at most {IMPLAUSIBLE_RUNTIME_S:.0e} s, 31 years)")
        return out
    if d.total_ios and d.total_ios > IMPLAUSIBLE_IOPS * max(seconds, 1.0):
        out.append(f"{where}: {d.total_ios:.3g} I/Os in {seconds:g} s is beyond any storage (more than {IMPLAUSIBLE_IOPS:.0e} a second)")
    if d.io_bytes and d.io_bytes > IMPLAUSIBLE_BW_BYTES * max(seconds, 1.0):
        out.append(f"{where}: {d.io_bytes:.3g} bytes in {seconds:g} s is beyond any storage (more than {IMPLAUSIBLE_BW_BYTES:.0e} B a second)")
    if out:
        return out
    if d.total_ios and d.io_bytes and d.iops > 0 and d.bw_bytes > 0:
        mean_bs = d.io_bytes / d.total_ios
        implied = d.bw_bytes / mean_bs  # the IOPS the bandwidth says
        # fio's text prints IOPS to three or four digits and whole below 1,000: half an I/O is rounding too
        if abs(implied - d.iops) > BW_IOPS_TOLERANCE * max(implied, d.iops) + 0.5:
            out.append(
                f"{where}: bandwidth {d.bw_bytes:.4g} B/s contradicts {d.iops:.4g} IOPS x the mean block size "
                f"{mean_bs:.4g} B (= {d.iops * mean_bs:.4g} B/s)"
            )
    for name, lat in (("lat", d.lat_ns), ("clat", d.clat_ns), ("slat", d.slat_ns)):
        out += _latency_problems(where, name, lat)
    return out


def result_problems(result: FioResult) -> list[str]:
    """Every impossible figure of ``result``, one line each; empty when it is sound."""
    out: list[str] = []
    for job in result.jobs:
        for direction, d in job.directions.items():
            out += direction_problems(f"job {job.name!r} {direction}", d)
    for m in result.measures:
        if not math.isfinite(m.value):
            out.append(f"{m.unit}: {m.value!r} is not a finite number")
    return out
