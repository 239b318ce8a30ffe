"""fio, or the whole machine, out of CPU.

Checks (ids):

* ``fio-cpu-bound`` -- a job's ``usr_cpu + sys_cpu`` (fio's share of one CPU for that
  job) is :data:`FIO_CPU_BOUND_PCT` or more: fio, not the storage, set the pace
  (``p10_cpu_bound_null_engine.json``: ioengine=null, usr_cpu 98.75).
* ``host-cpu-busy`` -- the machine's CPUs (all of them, from /proc/stat during the
  run) were on average :data:`HOST_CPU_BUSY_PCT` or more busy, and fio's own jobs
  explain less than that by :data:`OTHER_LOAD_MIN_PCT` (when the CPU count is known):
  other load competed with fio.  fio's share is its jobs' ``usr_cpu + sys_cpu`` (each a
  share of one CPU; a reporting group's figure is per job, so it is weighted by the
  group's summed job runtime over its wall-clock runtime) divided by the CPU count.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from storbench.model import Finding, FioResult

from ._common import CheckInfo, finding, jobs, paired

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

#: usr_cpu + sys_cpu of one job at or above this (percent of one CPU): fio is CPU-bound.
FIO_CPU_BOUND_PCT = 90.0
#: Mean user + system share of all CPUs during a run at or above this: the host was busy.
HOST_CPU_BUSY_PCT = 90.0
#: ... and at least this share of all CPUs was used by something other than fio.
OTHER_LOAD_MIN_PCT = 25.0

INFO = {
    "fio-cpu-bound": CheckInfo(
        title="fio was CPU-bound",
        explanation="A fio job used (nearly) a whole CPU, so fio itself, not the storage, may have set the pace.",
        evidence="A job's usr_cpu + sys_cpu is 90% or more.",
        fix="Spread the load over more jobs (numjobs, with group_reporting) or use an asynchronous engine with a queue (io_uring or libaio, iodepth > 1).",
        severities=("warning",),
    ),
    "host-cpu-busy": CheckInfo(
        title="The machine was CPU-bound",
        explanation="All the machine's CPUs together were at least 90% busy during the run, so the result may reflect CPU contention rather than the storage.",
        evidence="The mean user + system share of all CPUs over the run's activity samples is 90% or more, and at least 25% of all CPUs went to something other than fio's jobs (when the CPU count is known).",
        fix="Stop other load, or use fewer jobs / a more efficient engine; rerun on an idle machine.",
        severities=("warning",),
    ),
}


def _fio_cpu_bound(ctx: CheckContext) -> Finding | None:
    worst: tuple[float, int, str, float, float] | None = None
    for i, result in enumerate(ctx.results):
        for job in result.jobs:
            if job.is_aggregate or job.usr_cpu_pct is None or job.sys_cpu_pct is None:
                continue
            total = job.usr_cpu_pct + job.sys_cpu_pct
            if total >= FIO_CPU_BOUND_PCT and (worst is None or total > worst[0]):
                worst = (total, i, job.name, job.usr_cpu_pct, job.sys_cpu_pct)
    if worst is None:
        return None
    total, i, name, usr, sys = worst
    reps = f" in repetition {i + 1} of {len(ctx.results)}" if len(ctx.results) > 1 else ""
    return finding(
        "fio-cpu-bound",
        "warning",
        f"fio job {name} used {total:.1f}% of a CPU (usr {usr:.1f}% + sys {sys:.1f}%){reps}: fio itself, not the "
        "storage, may have set the pace",
        "spread the load over more jobs (numjobs, with group_reporting) or use io_uring/libaio with iodepth > 1",
    )


def fio_cpus(result: FioResult) -> float:
    """How many CPUs fio's jobs kept busy (1.0 = one whole CPU)."""
    total = 0.0
    for job in jobs(result):
        if job.usr_cpu_pct is None or job.sys_cpu_pct is None:
            continue
        weight = 1.0
        span = max((s.runtime_ms for s in job.directions.values()), default=0)
        if job.job_runtime_ms and span:
            weight = max(1.0, job.job_runtime_ms / span)  # a group: per-job figure x jobs
        total += (job.usr_cpu_pct + job.sys_cpu_pct) / 100.0 * weight
    return total


def _host_busy(ctx: CheckContext) -> Finding | None:
    ncpu = ctx.storage.host.cpu_count if ctx.storage is not None and ctx.storage.host is not None else None
    for i, result, series in paired(ctx.results, ctx.activity):
        if series is None:
            continue
        busy = [
            c.user_pct + c.system_pct
            for c in series.cpu
            if c.user_pct is not None and c.system_pct is not None
        ]
        if not busy:
            continue
        mean = math.fsum(busy) / len(busy)
        if mean < HOST_CPU_BUSY_PCT:
            continue
        share = ""
        if ncpu:
            fio_pct = 100.0 * fio_cpus(result) / ncpu
            if mean - fio_pct < OTHER_LOAD_MIN_PCT:
                continue  # fio itself kept the CPUs busy: fio-cpu-bound says so per job
            share = f", fio's jobs {fio_pct:.1f}% of {ncpu} CPUs"
        reps = f" in repetition {i + 1} of {len(ctx.results)}" if len(ctx.results) > 1 else ""
        return finding(
            "host-cpu-busy",
            "warning",
            f"the machine's CPUs were {mean:.1f}% busy on average (user + system, {len(busy)} samples{share}){reps}: "
            "other load competed with fio, so the result may reflect CPU contention, not the storage",
            "stop other load, or use fewer jobs or a more efficient engine; rerun on an idle machine",
            )
    return None


def check(ctx: CheckContext) -> list[Finding]:
    return [f for f in (_fio_cpu_bound(ctx), _host_busy(ctx)) if f is not None]
