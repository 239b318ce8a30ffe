"""Buffered writes that were never flushed.

Check (id): ``buffered-write-no-sync`` -- a buffered write workload without
``end_fsync``, ``fsync``, ``fdatasync``, ``sync`` or ``fsync_on_close``: fio stops the
clock while the data may still sit in the page cache.  In ``p8_buffered_write_nofsync``
fio "wrote" 512 MiB at 466 MB/s and not one write reached the disk during the run.
The device bytes of the run (activity) or fio's own disk statistics show how much got
through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding
from storbench.units import format_bytes

from ._common import (
    CheckInfo,
    device_bytes,
    direct_text,
    finding,
    fix_of,
    flush_reasons,
    fmt_pct,
    io_bytes,
    is_memory_fs,
    join,
    paired,
    repetitions_text,
    writes,
)
from .cache import buffered

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

INFO = {
    "buffered-write-no-sync": CheckInfo(
        title="Buffered writes never flushed",
        explanation="Buffered writes without end_fsync, fsync, fdatasync or sync may still sit in the page cache when fio stops the clock, so the figure can be memory speed.",
        evidence="A write workload with buffered I/O and none of end_fsync, fsync, fdatasync, sync, fsync_on_close or write_barrier; the message adds how many bytes reached the devices during the run when that was measured.",
        fix="Add end_fsync=1 (the flush then counts in the time), or use direct=1.",
        severities=("warning",),
    ),
}


def _evidence(ctx: CheckContext) -> str:
    """What reached the devices, from the first repetition that measured it."""
    n = len(ctx.results)
    for i, result, series in paired(ctx.results, ctx.activity):
        written = io_bytes(result, "write")
        if not written:
            continue
        reps = repetitions_text([i], n)
        dev = device_bytes(series, ctx.storage)
        if dev is not None:
            return (
                f"; fio wrote {format_bytes(written)}{reps} and {format_bytes(dev.write_bytes)} reached "
                f"{join(dev.devices)} during the run ({fmt_pct(dev.write_bytes, written)})"
            )
        disks = [d for d in result.disk_util if not d.aggregate]
        if disks and sum(d.write_ios for d in disks) == 0:
            return (
                f"; fio wrote {format_bytes(written)}{reps} and its own disk statistics count 0 writes on "
                f"{join(d.name for d in disks)}"
            )
    return ""


def _no_sync(ctx: CheckContext) -> Finding | None:
    if not writes(ctx.options) or not buffered(ctx.options) or is_memory_fs(ctx.storage):
        return None
    if flush_reasons(ctx.options):
        return None
    return finding(
        "buffered-write-no-sync",
        "warning",
        f"buffered writes ({direct_text(ctx.options)}) with no end_fsync, fsync, fdatasync or sync: fio stopped the "
        f"clock while the data could still sit in the page cache{_evidence(ctx)}",
        fix_of(INFO["buffered-write-no-sync"]),
    )


def check(ctx: CheckContext) -> list[Finding]:
    found = _no_sync(ctx)
    return [found] if found is not None else []
