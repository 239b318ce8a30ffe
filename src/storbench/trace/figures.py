"""A trace's own figures, computed from its events (pure): what the application asked of its disk.

* per direction (read, write, trim): requests, bytes, IOPS and bandwidth over the trace's span,
  issue->complete latency (mean and exact nearest-rank percentiles over every completed request:
  the smallest latency with at least p % of them at or below it, as :mod:`storbench.fio.logs`
  takes them), the sequential share (requests starting where the previous one of that
  direction ended);
* flushes: their count;
* request sizes: a histogram over powers of two (a request counts in the bucket of the smallest
  power of two at or above its size);
* queue depth: requests in flight (issued, not completed), its maximum and time-weighted mean;
* per second: requests and bytes issued in each whole second from the first issue.

A trace without completions (an iolog, a CSV without response times) has no latency and no depth
(``None``, never 0).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from storbench.model import versions

from .events import FLUSH, OPS, READ, TRIM, WRITE, Trace

if TYPE_CHECKING:
    import numpy.typing as npt

    from storbench.jsontypes import JSONObject

PERCENTILES: tuple[float, ...] = (50.0, 90.0, 99.0, 99.9)
DIRECTIONS: tuple[int, ...] = (READ, WRITE, TRIM)


def nearest_rank(sorted_values: npt.NDArray[np.int64], pct: float) -> int:
    """The smallest value with at least ``pct`` % of the values at or below it."""
    from fractions import Fraction

    n = len(sorted_values)
    rank = max(1, min(n, math.ceil(Fraction(repr(float(pct))) * n / 100)))  # 99.9 as the decimal it is written as
    return int(sorted_values[rank - 1])


def _direction(trace: Trace, op: int, span_s: float) -> JSONObject:
    mask = trace.op == op
    n = int(mask.sum())
    nbytes = int(trace.length_bytes[mask].sum())
    out: JSONObject = {
        "ops": n, "bytes": nbytes,
        "iops": n / span_s if span_s > 0 else None, "bw_bytes": nbytes / span_s if span_s > 0 else None,
    }  # fmt: skip
    done = mask & (trace.complete_ns >= 0)
    if done.any():
        lat = np.sort(trace.complete_ns[done] - trace.issue_ns[done])
        out["lat_ns"] = {"mean": float(lat.mean()), "max": int(lat[-1]), **{repr(p): nearest_rank(lat, p) for p in PERCENTILES}}
    else:
        out["lat_ns"] = None
    if n > 1:
        offsets = trace.offset_bytes[mask]
        ends = offsets + trace.length_bytes[mask]
        out["sequential_pct"] = float((offsets[1:] == ends[:-1]).sum()) * 100.0 / (n - 1)
    else:
        out["sequential_pct"] = None
    return out


def _sizes(trace: Trace) -> JSONObject:
    data = trace.op != FLUSH
    lengths = trace.length_bytes[data]
    if not len(lengths):
        return {}
    buckets = np.left_shift(1, np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64))
    out: JSONObject = {}
    for op in DIRECTIONS:
        sel = buckets[trace.op[data] == op]
        for size, count in zip(*np.unique(sel, return_counts=True), strict=True):
            out.setdefault(str(int(size)), {})[OPS[op]] = int(count)
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def depth(trace: Trace) -> JSONObject | None:
    """Requests in flight: maximum and time-weighted mean over the trace (None without completions)."""
    done = trace.complete_ns >= 0
    if not done.any():
        return None
    times = np.concatenate([trace.issue_ns[done], trace.complete_ns[done]])
    steps = np.concatenate([np.ones(int(done.sum()), dtype=np.int64), -np.ones(int(done.sum()), dtype=np.int64)])
    order = np.lexsort((steps, times))  # a completion before an issue at the same instant
    times, steps = times[order], steps[order]
    inflight = np.cumsum(steps)
    span = int(times[-1] - times[0])
    mean = float((inflight[:-1] * np.diff(times)).sum()) / span if span > 0 else float(inflight.max())
    return {"max": int(inflight.max()), "mean": mean}


def per_second(trace: Trace) -> JSONObject:
    """Requests and bytes issued in each whole second from the first issue, per direction."""
    if not len(trace):
        return {"t_s": []}
    second = (trace.issue_ns // 1_000_000_000).astype(np.int64)
    n = int(second.max()) + 1
    out: JSONObject = {"t_s": list(range(1, n + 1))}
    for op in DIRECTIONS:
        sel = trace.op == op
        out[f"{OPS[op]}_iops"] = np.bincount(second[sel], minlength=n).astype(int).tolist()
        out[f"{OPS[op]}_bw_bytes"] = np.bincount(second[sel], weights=trace.length_bytes[sel], minlength=n).astype(int).tolist()
    return out


def trace_figures(trace: Trace) -> JSONObject:
    """Every figure of a trace, as stored beside it (``traces.figures_json``)."""
    span_s = trace.span_ns / 1e9
    return {
        "version": versions.TRACE_FIGURES,
        "events": len(trace),
        "span_s": span_s,
        "extent_bytes": trace.extent_bytes,
        "directions": {OPS[op]: _direction(trace, op, span_s) for op in DIRECTIONS},
        "flushes": trace.count(FLUSH),
        "sizes": _sizes(trace),
        "depth": depth(trace),
        "per_second": per_second(trace),
    }
