"""How faithfully a replay followed its trace, from fio's result and per-second series (pure).

A replay workload carries its trace's reference (:func:`replay_reference`: the requests of each
kind it replays, their bytes, the span, the recorded depth, the per-second requests); after each
repetition :func:`fidelity` sets fio's own figures beside it:

* **wall**: fio's job runtime against the trace's span (timed: ``drift_pct`` how far behind;
  as fast as it can: ``speedup``, the span over the wall, the candidate's headroom);
* **operations and bytes** per direction (and flushes as fio's syncs) against the trace's;
* **per second**: fio's issued IOPS of each whole second against the trace's, the mean and the
  worst relative error over the seconds the trace has requests in (timed replays only: a fast
  replay is not meant to follow the trace's seconds);
* **depth**: the queue depth fio replayed at (the job's ``iodepth``; fio's own depth levels count
  what a job may queue, not what a timed replay had in flight) against the deepest the trace recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .events import FLUSH, OPS, READ, TRIM, WRITE, Trace

if TYPE_CHECKING:
    from storbench.jsontypes import JSONMapping, JSONObject
    from storbench.model import FioResult

MODES: tuple[str, ...] = ("timed", "fast")
#: per-second lists longer than this are not carried in a workload (a trace of hours): the
#: per-second error is then not computed, and says so
MAX_SECONDS = 3600


def replay_reference(trace: Trace, trace_id: int, mode: str, kinds: Sequence[int], left_out: Mapping[str, int], depth_max: int | None) -> JSONObject:
    """What a replay workload keeps of its trace (stored with the run's workloads)."""

    if mode not in MODES:
        raise ValueError(f"replay mode {mode!r}: one of {MODES}")
    from .figures import per_second

    wanted = set(kinds)
    ops = {OPS[k]: trace.count(k) if k in wanted else 0 for k in (READ, WRITE, TRIM, FLUSH)}
    nbytes = {OPS[k]: int(trace.length_bytes.sum(where=trace.op == k)) if k in wanted else 0 for k in (READ, WRITE, TRIM)}
    per = per_second(trace)
    columns = [per.get(f"{OPS[k]}_iops", []) for k in wanted if k != FLUSH]
    counts = [sum(c) for c in zip(*columns, strict=True)] if columns else []
    while counts and not counts[-1]:
        counts.pop()
    per_s = counts
    return {
        "trace_id": trace_id, "label": trace.meta.label, "source": trace.meta.source, "mode": mode,
        "events": len(trace), "span_s": trace.span_ns / 1e9, "ops": ops, "bytes": nbytes, "extent_bytes": trace.extent_bytes,
        "left_out": dict(left_out), "depth_max": depth_max, "lost_events": trace.meta.lost_events,
        "per_second_iops": per_s if len(per_s) <= MAX_SECONDS else None,
    }  # fmt: skip


def _fio_ops(result: FioResult) -> tuple[dict[str, int], dict[str, int], int, int | None]:
    ops = {"read": 0, "write": 0, "trim": 0}
    nbytes = {"read": 0, "write": 0, "trim": 0}
    flushes = 0
    runtime_ms: int | None = None
    for job in result.jobs:
        if job.is_aggregate:
            continue
        for name in ops:
            d = job.directions.get(name)
            if d is not None:
                ops[name] += int(d.total_ios or 0)
                nbytes[name] += int(d.io_bytes)
        if job.sync is not None:
            flushes += int(job.sync.total_ios)
        if job.job_runtime_ms is not None:
            runtime_ms = max(runtime_ms or 0, job.job_runtime_ms)
    return ops, nbytes, flushes, runtime_ms


def _per_second_error(reference: Sequence[int], series: JSONMapping | None) -> tuple[float, float, int] | None:
    """(mean, worst) relative error of fio's per-second IOPS against the trace's, and the
    seconds compared; None without a series."""
    iops = (series or {}).get("iops")
    if not isinstance(iops, dict) or not reference:
        return None
    got: dict[int, float] = {}
    for rows in iops.values():
        for row in rows if isinstance(rows, list) else ():
            if isinstance(row, list) and len(row) >= 2:
                got[int(row[0])] = got.get(int(row[0]), 0.0) + float(row[1])
    errors = []
    for second, want in enumerate(reference, start=1):
        if want <= 0 or second == len(reference):  # the last second is partial in both
            continue
        errors.append(abs(got.get(second, 0.0) - want) / want * 100.0)
    if not errors:
        return None
    return sum(errors) / len(errors), max(errors), len(errors)


def fidelity(reference: JSONMapping, result: FioResult, series: JSONMapping | None, iodepth: int | None = None) -> JSONObject:
    """fio's figures of one replay beside its trace's (see the module's description); ``iodepth``:
    the job's."""
    ops, nbytes, flushes, runtime_ms = _fio_ops(result)
    span_s = float(reference.get("span_s") or 0.0)
    wall_s = runtime_ms / 1000.0 if runtime_ms is not None else None
    want_ops: Mapping[str, int] = reference.get("ops") or {}
    want_bytes: Mapping[str, int] = reference.get("bytes") or {}
    out: JSONObject = {
        "mode": reference.get("mode"), "span_s": span_s, "wall_s": wall_s,
        "ops": {k: [ops.get(k, 0) if k != "flush" else flushes, int(want_ops.get(k, 0))] for k in ("read", "write", "trim", "flush")},
        "bytes": {k: [nbytes.get(k, 0), int(want_bytes.get(k, 0))] for k in ("read", "write", "trim")},
        "depth": [iodepth, reference.get("depth_max")],
    }  # fmt: skip
    if wall_s is not None and span_s > 0:
        out["drift_pct"] = (wall_s - span_s) / span_s * 100.0
        out["speedup"] = span_s / wall_s if wall_s > 0 else None
    per = reference.get("per_second_iops")
    if reference.get("mode") == "timed" and isinstance(per, list):
        err = _per_second_error(per, series)
        if err is not None:
            out["per_second_error_pct"] = {"mean": err[0], "worst": err[1], "seconds": err[2]}
    return out


def missing_share(fid: JSONMapping) -> tuple[str, int, int] | None:
    """The direction whose replayed operations fall furthest from the trace's: ``(what, got,
    wanted)``, or None when every one matched.  Operations, not bytes: fio 3.33's byte counts of a
    replay at a queue depth above 1 fall short of its own operation counts (a timed replay of 100
    reads of 4 KiB at depth 4 here: 100 operations, 98 x 4 KiB), so bytes are shown, not judged."""
    worst: tuple[float, str, int, int] | None = None
    for group in ("ops",):
        for name, pair in (fid.get(group) or {}).items():
            got, want = int(pair[0]), int(pair[1])
            if got == want:
                continue
            off = abs(got - want) / max(want, 1)
            if worst is None or off > worst[0]:
                worst = (off, f"{name} {'operations' if group == 'ops' else 'bytes'}", got, want)
    return None if worst is None else worst[1:]
