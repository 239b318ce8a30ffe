"""Runs too short, no warm-up, no steady state.

Checks (ids):

* ``short-run`` -- a repetition measured for less than :data:`MIN_RUNTIME_S` (the
  longest direction runtime fio reports, time-based or not).  Short runs catch caches,
  an SSD's SLC write buffer, turbo states and the first seconds of queue filling.
* ``no-ramp-time`` -- neither ``ramp_time`` nor a steady-state criterion: the start-up
  seconds count in the result.
* ``no-steady-state`` -- a write workload on flash (a non-rotational physical device)
  without fio's steady-state options: fresh flash writes into clean blocks and its SLC
  cache first; sustained performance after garbage collection starts can be far lower.
  Replaces ``no-ramp-time`` for that workload (its fix includes a ramp).
* ``steady-state-not-reached`` -- fio's steady-state criterion was given and not met.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding

from ._common import (
    CheckInfo,
    finding,
    fix_of,
    flag,
    fmt_s,
    is_memory_device,
    is_virtual,
    join,
    leaf_devices,
    runtime_s,
    seconds,
    text,
    writes,
)

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

#: A repetition that measured for less than this many seconds is too short to trust.
MIN_RUNTIME_S = 30.0
#: fio's steady-state options storbench suggests: stop when the IOPS slope stays below
#: 0.1 % of the mean over a 60 s window, after 30 s of ramp.
STEADY_STATE_OPTIONS = "ss=iops_slope:0.1% ss_dur=60 ss_ramp=30"
#: The option names (and aliases) of fio's steady-state detection.
SS_KEYS = ("steadystate", "ss")

INFO = {
    "short-run": CheckInfo(
        title="Run too short",
        explanation="Each repetition measured for less than 30 s, too short for caches, an SSD's SLC write buffer, garbage collection and thermal limits to show, so the figure is a burst rate.",
        evidence="The longest direction runtime fio reports for a repetition is below 30 s.",
        fix="Run at least 30-60 s per repetition (runtime=60 with time_based=1, or --runtime 60s).",
        severities=("warning",),
    ),
    "no-ramp-time": CheckInfo(
        title="No warm-up",
        explanation="Without ramp_time the first seconds (empty queues, cold caches, a device waking up) count in the result.",
        evidence="No ramp_time (or 0) and no steady-state criterion (ss).",
        fix="Add ramp_time=5 (or fio's steady-state options).",
        severities=("info",),
    ),
    "no-steady-state": CheckInfo(
        title="Flash written without steady state",
        explanation="Fresh or idle flash writes into clean blocks and its SLC cache first; without fio's steady-state detection the figure can be the burst rate, far above sustained performance.",
        evidence="A write workload, a non-rotational physical device under the target, and no ss/steadystate option.",
        fix=f"Add {STEADY_STATE_OPTIONS} with a runtime of several minutes (fio stops once IOPS settle).",
        severities=("info",),
    ),
    "steady-state-not-reached": CheckInfo(
        title="Steady state not reached",
        explanation="fio's steady-state criterion was given but not met, so the job ran to its runtime while the figure was still moving.",
        evidence="fio's steadystate result says attained=0.",
        fix="Raise runtime (or relax the criterion) until fio reports the steady state attained.",
        severities=("warning",),
    ),
}


def _short_run(ctx: CheckContext) -> Finding | None:
    spans = [s for r in ctx.results if (s := runtime_s(r)) is not None and s > 0]
    if not spans or max(spans) >= MIN_RUNTIME_S:
        return None
    longest, total, n = max(spans), sum(spans), len(spans)
    if n > 1:
        measured = f"each of {n} repetitions measured for at most {fmt_s(longest)} ({fmt_s(total)} in all)"
    else:
        measured = f"fio measured for only {fmt_s(longest)}"
    runtime = text(ctx.options, "runtime", "timeout")
    if runtime:
        why = f" (runtime={runtime})"
    elif not flag(ctx.options, "time_based"):
        key = next((k for k in ("io_size", "io_limit", "size") if text(ctx.options, k)), None)
        why = f" (no runtime: the job ended when it had done {key}={text(ctx.options, key)})" if key else " (no runtime)"
    else:
        why = ""
    return finding(
        "short-run",
        "warning",
        f"{measured}{why}: under {fmt_s(MIN_RUNTIME_S)}, too short for caches, SLC write buffers, garbage collection "
        "and thermal limits to show",
        fix_of(INFO["short-run"]),
    )


def _has_ss(ctx: CheckContext) -> bool:
    return any(k in ctx.options and (text(ctx.options, k) or "").lower() not in ("", "none") for k in SS_KEYS)


def _flash(ctx: CheckContext) -> list[str]:
    if ctx.storage is None:
        return []
    return [
        d.kname
        for d in leaf_devices(ctx.storage)
        if d.rotational is False and not is_virtual(d) and not is_memory_device(d) and d.type != "loop"
    ]


def _no_steady_state(ctx: CheckContext) -> Finding | None:
    if _has_ss(ctx) or not writes(ctx.options):
        return None
    flash = _flash(ctx)
    if not flash:
        return None
    verb = "is" if len(flash) == 1 else "are"
    return finding(
        "no-steady-state",
        "info",
        f"{join(flash)} {verb} flash (non-rotational) and this workload writes without a steady-state criterion: "
        "fresh or idle flash writes into clean blocks and its SLC cache first, so the figure can be the burst rate",
        f"add {STEADY_STATE_OPTIONS} with a runtime of several minutes (fio stops once IOPS settle)",
    )


def _no_ramp(ctx: CheckContext) -> Finding | None:
    if _has_ss(ctx):
        return None
    ramp = seconds(ctx.options, "ramp_time")
    if ramp is not None and ramp > 0:
        return None
    return finding(
        "no-ramp-time",
        "info",
        "no ramp_time and no steady-state criterion: the first seconds (empty queues, cold caches, a device "
        "waking up) count in the result",
        f"add ramp_time=5 (or fio's steady-state options: {STEADY_STATE_OPTIONS})",
    )


def _not_attained(ctx: CheckContext) -> Finding | None:
    for i, result in enumerate(ctx.results):
        for job in result.jobs:
            ss = job.steadystate
            if not ss or str(ss.get("attained", "")).strip() not in ("0", "False", "false"):
                continue
            reps = f" in repetition {i + 1} of {len(ctx.results)}" if len(ctx.results) > 1 else ""
            crit = ss.get("ss", text(ctx.options, *SS_KEYS))
            got = f" (last window: {ss['criterion']})" if ss.get("criterion") is not None else ""
            return finding(
                "steady-state-not-reached",
                "warning",
                f"fio's steady-state criterion {crit} was not met{reps}{got}: job {job.name} ran to its runtime "
                "while the figure was still moving",
                fix_of(INFO["steady-state-not-reached"]),
            )
    return None


def check(ctx: CheckContext) -> list[Finding]:
    found = [_short_run(ctx), _no_steady_state(ctx)]
    if found[1] is None:
        found.append(_no_ramp(ctx))
    found.append(_not_attained(ctx))
    return [f for f in found if f is not None]
