"""A queue depth that cannot take effect.

Check (id): ``iodepth-no-effect`` -- ``iodepth`` > 1 with a synchronous engine (psync,
fio's default on Linux, sync, pvsync, pvsync2, vsync, mmap ...), which waits for each
I/O before the next, or with libaio without ``direct=1`` (buffered I/O completes inside
``io_submit``, so nothing queues).  fio's own I/O depth distribution, when it shows
(nearly) all I/O at depth 1, is quoted as evidence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding

from ._common import DEFAULT_ENGINE, CheckInfo, engine, finding, has, integer, is_direct

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

#: Engines that issue one I/O and wait for it: iodepth above 1 changes nothing.
SYNC_ENGINES = frozenset(
    {"psync", "sync", "pvsync", "pvsync2", "vsync", "mmap", "splice", "ftruncate", "falloc", "filecreate", "filestat", "filedelete", "e4defrag", "cpuio"}
)
#: fio's depth distribution at or above this share at depth 1 counts as "never queued".
DEPTH_ONE_PCT = 99.0

INFO = {
    "iodepth-no-effect": CheckInfo(
        title="Queue depth without effect",
        explanation="iodepth is above 1 but the engine waits for each I/O (a synchronous engine such as psync, fio's default) or libaio runs without direct=1, so the queue never fills and the result is a depth-1 result.",
        evidence="iodepth > 1 with psync, sync, pvsync, pvsync2, vsync, mmap or no ioengine, or with libaio and direct not 1 (fio's depth distribution at depth 1 is quoted when present).",
        fix="Use ioengine=io_uring or libaio with direct=1 for a real queue, or iodepth=1 with more numjobs for parallelism.",
        severities=("warning",),
    ),
}


def _depth_one_pct(ctx: CheckContext) -> float | None:
    shares = [
        job.iodepth_level_pct["1"]
        for result in ctx.results
        for job in result.jobs
        if not job.is_aggregate and "1" in job.iodepth_level_pct
    ]
    return min(shares) if shares else None


def _no_effect(ctx: CheckContext) -> Finding | None:
    depth = integer(ctx.options, "iodepth", default=1) or 1
    if depth <= 1:
        return None
    eng = engine(ctx.options)
    if eng in SYNC_ENGINES:
        named = f"ioengine={eng}" if has(ctx.options, "ioengine") else f"no ioengine (fio's default, {DEFAULT_ENGINE})"
        why = f"{named} is synchronous: it waits for each I/O before issuing the next"
        fix = f"use ioengine=io_uring or libaio with direct=1 for a queue of {depth}, or iodepth=1 with more numjobs"
    elif eng == "libaio" and not is_direct(ctx.options):
        why = "libaio without direct=1: buffered I/O completes inside io_submit, so requests never queue"
        fix = "set direct=1 (or use ioengine=io_uring, which queues buffered I/O too)"
    else:
        return None
    pct = _depth_one_pct(ctx)
    evidence = f"; fio's depth distribution shows {pct:.1f}% of I/O at depth 1" if pct is not None and pct >= DEPTH_ONE_PCT else ""
    return finding(
        "iodepth-no-effect",
        "warning",
        f"iodepth={depth} has no effect: {why}{evidence}; the result is a queue-depth-1 result",
        fix,
    )


def check(ctx: CheckContext) -> list[Finding]:
    found = _no_effect(ctx)
    return [found] if found is not None else []
