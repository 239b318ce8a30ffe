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


#: events a figure is computed over at a time where a whole-column temporary would be large
CHUNK = 1 << 17


def _direction(trace: Trace, op: int, span_s: float) -> JSONObject:
    mask = trace.op == op
    n = int(mask.sum())
    nbytes = int(trace.length_bytes.sum(where=mask))
    out: JSONObject = {
        "ops": n, "bytes": nbytes,
        "iops": n / span_s if span_s > 0 else None, "bw_bytes": nbytes / span_s if span_s > 0 else None,
    }  # fmt: skip
    done = mask & (trace.complete_ns >= 0)
    if done.any():
        lat = trace.complete_ns[done]
        lat -= trace.issue_ns[done]
        lat.sort()
        out["lat_ns"] = {"mean": float(lat.mean()), "min": int(lat[0]), "max": int(lat[-1]), "stddev": float(lat.std()),
                         **{repr(p): nearest_rank(lat, p) for p in PERCENTILES}}  # fmt: skip
        del lat
    else:
        out["lat_ns"] = None
    out["sequential_pct"] = _sequential_pct(trace, mask, n)
    return out


def _sequential_pct(trace: Trace, mask: npt.NDArray[np.bool_], n: int) -> float | None:
    """The share of a direction's requests that start where its previous one ended (chunked)."""
    if n <= 1:
        return None
    index = np.flatnonzero(mask)
    hits = 0
    prev_end: int | None = None
    for start in range(0, len(index), CHUNK):
        sel = index[start : start + CHUNK]
        offsets = trace.offset_bytes[sel]
        ends = offsets + trace.length_bytes[sel]
        hits += int((offsets[1:] == ends[:-1]).sum())
        if prev_end is not None and int(offsets[0]) == prev_end:
            hits += 1
        prev_end = int(ends[-1])
    return hits * 100.0 / (n - 1)


def _sizes(trace: Trace) -> JSONObject:
    """Requests per power-of-two size bucket and direction (from the distinct sizes: few)."""
    out: JSONObject = {}
    for op in DIRECTIONS:
        mask = trace.op == op
        if not mask.any():
            continue
        sizes, counts = np.unique(trace.length_bytes[mask], return_counts=True)
        for size_b, count in zip(sizes.tolist(), counts.tolist(), strict=True):
            bucket = 1 << max(0, (int(size_b) - 1).bit_length())
            per = out.setdefault(str(bucket), {})
            per[OPS[op]] = per.get(OPS[op], 0) + int(count)
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def depth(trace: Trace) -> JSONObject | None:
    """Requests in flight: maximum and time-weighted mean over the trace (None without completions).

    The mean is Little's law: the sum of every request's time in flight over the span.  The
    maximum is reached at an issue: the issues up to it less the completions up to it (chunked)."""
    done = trace.complete_ns >= 0
    if not done.any():
        return None
    every = bool(done.all())
    issue = trace.issue_ns if every else trace.issue_ns[done]
    completes = np.sort(trace.complete_ns if every else trace.complete_ns[done])
    deepest = 0
    for start in range(0, len(issue), CHUNK):
        part = issue[start : start + CHUNK]
        # completions at the very instant of an issue are taken as before it
        inflight = np.arange(start + 1, start + len(part) + 1, dtype=np.int64) - np.searchsorted(completes, part, side="right")
        deepest = max(deepest, int(inflight.max()))
    span = int(completes[-1] - issue[0])
    busy = float(completes.sum(dtype=np.float64) - issue.sum(dtype=np.float64))
    mean = busy / span if span > 0 else float(deepest)
    return {"max": deepest, "mean": mean}


def per_second(trace: Trace) -> JSONObject:
    """Requests and bytes issued in each whole second from the first issue, per direction."""
    if not len(trace):
        return {"t_s": []}
    n = int(trace.issue_ns[-1] // 1_000_000_000) + 1
    out: JSONObject = {"t_s": list(range(1, n + 1))}
    for op in DIRECTIONS:
        iops = np.zeros(n, dtype=np.int64)
        bw = np.zeros(n, dtype=np.float64)
        for start in range(0, len(trace), CHUNK):
            sel = trace.op[start : start + CHUNK] == op
            second = trace.issue_ns[start : start + CHUNK][sel] // 1_000_000_000
            iops += np.bincount(second, minlength=n)
            bw += np.bincount(second, weights=trace.length_bytes[start : start + CHUNK][sel], minlength=n)
        out[f"{OPS[op]}_iops"] = iops.tolist()
        out[f"{OPS[op]}_bw_bytes"] = bw.astype(np.int64).tolist()
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
