"""A stored trace as workloads fio replays (pure): ``storbench run --replay TRACE``.

Each mode is a workload of its own, ``replay-LABEL-timed`` and ``replay-LABEL-fast``:

* **timed**: fio issues each request at its recorded time (``read_iolog`` of the v3 log storbench
  writes): does the candidate keep up, with what latency.  Judged by its latency (the rate is the
  trace's).
* **fast**: ``replay_no_stall=1``, the same requests in the same order as fast as the candidate
  takes them: its headroom, judged by IOPS (the fidelity line gives it as a multiple of the
  trace's pace).

Both run ``libaio`` with ``direct=1`` at the queue depth the trace reached (fio replays a text
iolog at the job's ``iodepth``), but a timed replay by a fio before 3.36 at depth 1 (that fio's
timed replay inflates latency above depth 1: said, and drift shows where the trace needed the
depth); over a test area as large as the trace's extent; ``rw`` says
whether the replay writes (the guard of block devices and files reads it); the run's edge writes
the log and names it (``read_iolog``), and the job builder sends the I/O to the target
(``replay_redirect``).  ``reads_only`` leaves every write and flush out of the log (said in the
fidelity line); trims are left out for a fio before 3.34, which ignores them in a text iolog.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from storbench.model import Workload

from .events import FLUSH, OPS, READ, TRIM, WRITE, Trace
from .fidelity import MODES, replay_reference
from .figures import depth

#: the option the run's edge fills in with the written log's path
IOLOG_OPTION = "read_iolog"
#: what the workload holds until then
IOLOG_PENDING = "pending"
MAX_DEPTH = 256
MiB = 1024 * 1024


def workload_name(label: str, mode: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", label.lower()).strip("-._") or "trace"
    return f"replay-{slug[:40]}-{mode}"


def kinds_replayed(reads_only: bool, trims: bool) -> tuple[int, ...]:
    kinds = [READ] if reads_only else [READ, WRITE, FLUSH]
    if trims and not reads_only:
        kinds.append(TRIM)
    return tuple(sorted(kinds))


def fio_replays_trims(fio_version: str | None) -> bool:
    """Whether this fio replays a text iolog's trims (3.34 and later, fio #769)."""
    m = re.search(r"(\d+)\.(\d+)", fio_version or "")
    return m is not None and (int(m[1]), int(m[2])) >= (3, 34)


def fio_times_depth(fio_version: str | None) -> bool:
    """Whether this fio's timed replay measures latency right above queue depth 1 (3.36 and
    later, b85c01f7): fio 3.33 here gave 3.6 ms of mean write latency at depth 14 where depth 1
    gave 11 us, for the same trace onto the same device."""
    m = re.search(r"(\d+)\.(\d+)", fio_version or "")
    return m is not None and (int(m[1]), int(m[2])) >= (3, 36)


def replay_workloads(trace: Trace, trace_id: int, *, modes: Sequence[str] = MODES, reads_only: bool = False,
                     fio_version: str | None = None) -> tuple[Workload, ...]:  # fmt: skip
    """The workloads of a replay of ``trace`` (stored as ``trace_id``), one per mode."""
    kinds = kinds_replayed(reads_only, fio_replays_trims(fio_version))
    left_out = {OPS[k]: trace.count(k) for k in (WRITE, FLUSH, TRIM) if k not in kinds and trace.count(k)}
    found = depth(trace)
    depth_max = int(found["max"]) if found else None
    iodepth = max(1, min(depth_max or 1, MAX_DEPTH))
    extent = max(trace.extent_bytes, MiB)
    size_mib = -(-extent // MiB)
    writes = any(k in kinds and trace.count(k) for k in (WRITE, TRIM))
    out = []
    for mode in modes:
        ref = replay_reference(trace, trace_id, mode, kinds, left_out, depth_max)
        ref["kinds"] = [OPS[k] for k in kinds]
        depth_of_mode = iodepth
        if mode == "timed" and iodepth > 1 and not fio_times_depth(fio_version):
            depth_of_mode = 1
            ref["depth_capped"] = iodepth
        if reads_only:
            ref["reads_only"] = True
        options: list[tuple[str, str | None]] = [
            ("ioengine", "libaio"), ("direct", "1"), ("iodepth", str(depth_of_mode)),
            ("rw", "randrw" if writes else "randread"), (IOLOG_OPTION, IOLOG_PENDING), ("size", f"{size_mib}m"),
        ]  # fmt: skip
        if mode == "fast":
            options.append(("replay_no_stall", "1"))
        span = trace.span_ns / 1e9
        what = "as recorded" if mode == "timed" else "as fast as the target takes it"
        out.append(Workload(
            name=workload_name(trace.meta.label, mode),
            description=f"replay of trace {trace_id} {trace.meta.label!r} ({len(trace):,} requests over {span:.2f} s), {what}",
            options=tuple(options), headline="lat" if mode == "timed" else "iops", origin=f"trace {trace_id}", replay=ref,
        ))  # fmt: skip
    return tuple(out)


def scaled_to(workload: Workload, capacity_bytes: int, align_bytes: int = 4096) -> Workload:
    """A replay fitted to a target smaller than its trace's extent: fio divides every offset by
    ``replay_scale`` (the smallest whole factor that fits) and aligns it to ``replay_align``; the
    test area shrinks with it, and the reference says so.  Any other workload, or one that fits,
    as it is."""
    from dataclasses import replace

    ref = workload.replay
    extent = int((ref or {}).get("extent_bytes") or 0)
    if ref is None or not extent or extent <= capacity_bytes or capacity_bytes <= 0:
        return workload
    factor = -(-extent // capacity_bytes)
    size_mib = max(1, (extent // factor) // MiB)
    options = [(k, f"{size_mib}m" if k == "size" else v) for k, v in workload.options]
    options += [("replay_scale", str(factor)), ("replay_align", str(align_bytes))]
    return replace(workload, options=tuple(options), replay={**ref, "scaled_by": factor})
