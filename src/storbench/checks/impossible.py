"""Figures that cannot be true.

Check (id): ``impossible-latency`` -- a latency maximum longer than the whole run.  fio
3.33 with ``ioengine=libaio`` and ``fsync=1`` reports a sync latency maximum of 312 s
for a run of under a second -- about the system's uptime, a timestamp read before it
was set (``j_fsync1_libaio.json``).  Such a figure must not be charted or compared.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding, JobResult
from storbench.units import fmt_ns

from ._common import CheckInfo, Options, engine, finding, fmt_s, join, seconds

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

#: Slack added to the run's length: fio's ``elapsed`` is in whole seconds.
SLACK_S = 1.0
#: Engines that time fsync themselves correctly (synchronous ones).
_SYNC_TIMED_ENGINES = frozenset({"psync", "sync", "pvsync", "pvsync2", "vsync"})

INFO = {
    "impossible-latency": CheckInfo(
        title="Impossible latency",
        explanation="fio reports a latency longer than the whole run, which cannot be true (fio 3.33 mistimes fsync under libaio: a maximum near the system's uptime), so that figure must not be charted or compared.",
        evidence="A latency maximum (total, completion, submission or sync) longer than the job's elapsed time and runtime plus ramp_time, startdelay and one second.",
        fix="Do not chart the figure; rerun with ioengine=psync (or sync) to time fsync/fdatasync.",
        severities=("invalid",),
    ),
}


def _run_length_s(job: JobResult, options: Options) -> float:
    spans = [float(job.elapsed_s or 0), (job.job_runtime_ms or 0) / 1000.0]
    spans += [s.runtime_ms / 1000.0 for s in job.directions.values()]
    extra = (seconds(options, "ramp_time") or 0.0) + (seconds(options, "startdelay") or 0.0)
    return max(spans) + extra + SLACK_S


def _impossible(ctx: CheckContext) -> Finding | None:
    bad: dict[str, float] = {}
    where: tuple[str, int, float] | None = None
    for i, result in enumerate(ctx.results):
        for job in result.jobs:
            limit = _run_length_s(job, ctx.options)
            metrics = []
            for name, s in job.directions.items():
                metrics += [(f"{name} total latency", s.lat_ns), (f"{name} completion latency", s.clat_ns), (f"{name} submission latency", s.slat_ns)]
            if job.sync is not None:
                metrics.append(("sync latency", job.sync.lat_ns))
            for label, lat in metrics:
                if lat is not None and lat.max_ns / 1e9 > limit:
                    bad[label] = max(bad.get(label, 0.0), lat.max_ns)
                    if where is None:
                        where = (job.name, i, limit - SLACK_S)
    if not bad or where is None:
        return None
    name, i, run_s = where
    shown = join(f"{label} maximum {fmt_ns(ns)}" for label, ns in bad.items())
    reps = f" in repetition {i + 1} of {len(ctx.results)}" if len(ctx.results) > 1 else ""
    sync_bad = "sync latency" in bad
    why = ""
    if sync_bad and engine(ctx.options) not in _SYNC_TIMED_ENGINES:
        why = f" (fio mistimes fsync under ioengine={engine(ctx.options)}; the value is near the system's uptime)"
    fix = (
        "do not chart this latency; rerun with ioengine=psync (or sync) to time fsync/fdatasync"
        if sync_bad
        else "do not chart this latency; rerun, and report it to fio if it repeats"
    )
    return finding(
        "impossible-latency",
        "invalid",
        f"fio reports a {shown} in job {name}{reps}, longer than the whole run (about {fmt_s(run_s)}): "
        f"the figure cannot be true{why}",
        fix,
    )


def check(ctx: CheckContext) -> list[Finding]:
    found = _impossible(ctx)
    return [found] if found is not None else []
