"""Pure: how long a run will take, known before it starts.

A **time-based** job (``time_based`` with ``runtime``) takes ``startdelay + ramp_time +
runtime``.  A **size-based** job (no ``runtime``: fio moves ``size`` bytes, ``io_size`` when
given, per job, ``loops`` times) takes that many bytes at the target's speed, which a short
probe of the same job measures (``runner.probe_rate``); without a probe its time is
unknown and the plan says so.  A job with a ``runtime`` but without ``time_based`` stops at
whichever comes first.  Every job also pays fio's start and stop, about
:data:`FIO_START_STOP_S` here (``../shared/FIO-FACTS.md``: 0.2-0.27 s), plus what storbench
adds around it.

:func:`estimate` gives one :class:`Estimate` per job; :func:`format_plan` the lines ``run
--plan`` prints ("gitlab: 16 GiB at about 3.9 MiB/s: about 70 min; --runtime 60s would cap
it at 1 min"), :func:`format_total` the one line every run starts with.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import UsageError
from ..units import format_bytes, format_duration, parse_duration, parse_size

__all__ = ["FIO_START_STOP_S", "Estimate", "estimate", "format_plan", "format_total", "load_estimate", "needs_probe", "total_seconds"]

#: fio's own start and stop per job plus storbench's work around it (seconds)
FIO_START_STOP_S = 0.4
#: size-based jobs above this size are probed for the target's speed before they run
PROBE_FROM_BYTES = 256 << 20
#: a size-based estimate beyond this gets the hint of a --runtime that caps it
CAP_HINT_FROM_S = 10 * 60
CAP_RUNTIME = "60s"


@dataclass(frozen=True)
class Estimate:
    workload: str
    target: str
    repetitions: int
    seconds: float | None  # one repetition, fio's start/stop included; None: not known
    basis: str  # "runtime 5 s", "16 GiB at about 3.9 MiB/s", "16 GiB, speed not probed"
    cap_hint: str | None = None  # "--runtime 60s would cap it at about 1 min"

    @property
    def total_s(self) -> float | None:
        return None if self.seconds is None else self.seconds * self.repetitions


def _opt(options: Mapping[str, str | None], *keys: str) -> str | None:
    for k in keys:
        if k in options and options[k] is not None:
            return options[k]
    return None


def _seconds(text: str | None) -> float:
    if text is None:
        return 0.0
    try:
        return parse_duration(text)
    except (UsageError, ValueError):
        return 0.0


def _flag(options: Mapping[str, str | None], key: str) -> bool:
    return key in options and options[key] in (None, "1", "true", "True")


def size_bytes(options: Mapping[str, str | None]) -> int | None:
    """The bytes a size-based job moves: ``io_size`` (else ``size``) x ``numjobs`` x ``loops``."""
    text = _opt(options, "io_size", "io_limit", "size")
    if text is None or text.endswith("%"):
        return None
    try:
        one = parse_size(text)
    except (UsageError, ValueError):
        return None
    jobs = int(_opt(options, "numjobs") or 1)
    loops = int(_opt(options, "loops") or 1)
    return one * jobs * loops


def group_needs_probe(sections: Sequence[Mapping[str, str | None]]) -> bool:
    return any(needs_probe(o) for o in sections)


def needs_probe(options: Mapping[str, str | None]) -> bool:
    """A size-based job big enough that its time depends on the target's speed."""
    if _opt(options, "runtime", "timeout") is not None and _flag(options, "time_based"):
        return False
    n = size_bytes(options)
    return n is not None and n > PROBE_FROM_BYTES


def estimate(workload: str, target: str, options: Mapping[str, str | None], repetitions: int,
             rate_bps: float | None = None) -> Estimate:  # fmt: skip
    """One job's expected duration; ``rate_bps`` is the probed speed (bytes/s, all jobs together).
    An S3 job's basis also says the objects it writes, reads or deletes (:func:`objects_note`)."""
    found = _estimate(workload, target, options, repetitions, rate_bps)
    note = objects_note(options)
    return dataclasses.replace(found, basis=f"{found.basis}; {note}") if note else found


def _estimate(workload: str, target: str, options: Mapping[str, str | None], repetitions: int,
              rate_bps: float | None = None) -> Estimate:  # fmt: skip
    warm = _seconds(_opt(options, "startdelay")) + _seconds(_opt(options, "ramp_time"))
    runtime_text = _opt(options, "runtime", "timeout")
    runtime = _seconds(runtime_text) if runtime_text is not None else None
    if runtime is not None and _flag(options, "time_based"):
        basis = f"runtime {format_duration(runtime)}" + (f" after {format_duration(warm)} warm-up" if warm else "")
        return Estimate(workload, target, repetitions, warm + runtime + FIO_START_STOP_S, basis)
    n = size_bytes(options)
    if n is None:
        if runtime is not None:
            return Estimate(workload, target, repetitions, warm + runtime + FIO_START_STOP_S, f"at most runtime {format_duration(runtime)}")
        return Estimate(workload, target, repetitions, None, "neither runtime nor size known")
    if rate_bps is None or rate_bps <= 0:
        if runtime is not None:
            return Estimate(workload, target, repetitions, warm + runtime + FIO_START_STOP_S,
                            f"{format_bytes(n)} or runtime {format_duration(runtime)}, whichever ends first")  # fmt: skip
        return Estimate(workload, target, repetitions, None, f"{format_bytes(n)}, speed not probed")
    moving = n / rate_bps
    if runtime is not None and runtime < moving:
        return Estimate(workload, target, repetitions, warm + runtime + FIO_START_STOP_S,
                        f"runtime {format_duration(runtime)} (its {format_bytes(n)} would take {format_duration(moving)})")  # fmt: skip
    seconds = warm + moving + FIO_START_STOP_S
    hint = None
    if seconds > CAP_HINT_FROM_S:
        cap = parse_duration(CAP_RUNTIME)
        hint = f"--runtime {CAP_RUNTIME} would cap it at about {format_duration(warm + cap)}"
    return Estimate(workload, target, repetitions, seconds, f"{format_bytes(n)} at about {format_bytes(rate_bps)}/s", hint)


def objects_note(options: Mapping[str, str | None]) -> str | None:
    """What a job on an S3 target (fio's http engine, ``http_mode=s3``: each block one object,
    ``size / bs`` objects a job, ``numjobs`` jobs with keys of their own) writes, reads or deletes:
    ``"4,096 objects of 4.0 KiB (16.0 MiB), written first"``; None for any other job."""
    if _opt(options, "http_mode") != "s3":
        return None
    size_text, bs_text = _opt(options, "size"), (_opt(options, "bs", "blocksize") or "4k").split(",")[0]
    try:
        size, bs = parse_size(size_text or ""), parse_size(bs_text)
    except (UsageError, ValueError):
        return None
    if bs <= 0:
        return None
    jobs = int(_opt(options, "numjobs") or 1)
    count = -(-size // bs) * jobs
    rw = (_opt(options, "rw", "readwrite") or "read").split(":")[0]
    what = {"read": "written first, then read", "randread": "written first, then read", "trim": "written first, then deleted",
            "randtrim": "written first, then deleted"}.get(rw, "written")  # fmt: skip
    return f"{count:,} objects of {format_bytes(bs)} ({format_bytes(count * bs)}), {what}"


def group_estimate(workload: str, target: str, sections: Sequence[Mapping[str, str | None]], repetitions: int,
                   rate_bps: float | None = None) -> Estimate:  # fmt: skip
    """The duration of several jobs fio runs together (a job file's group): the longest of theirs,
    the probed speed (``rate_bps``, all jobs together) shared by the bytes each moves, so that
    size-based jobs end together at their total over the speed."""
    if len(sections) == 1:
        return estimate(workload, target, sections[0], repetitions, rate_bps)
    sized = [size_bytes(o) for o in sections]
    total = sum(n for n in sized if n)
    each = [estimate(workload, target, o, repetitions, rate_bps * n / total if rate_bps and n and total else rate_bps)
            for o, n in zip(sections, sized)]  # fmt: skip
    known = [e for e in each if e.seconds is not None]
    if len(known) < len(each):
        unknown = next(e for e in each if e.seconds is None)
        return dataclasses.replace(unknown, basis=f"{len(sections)} jobs together; one: {unknown.basis}")
    longest = max(known, key=lambda e: e.seconds or 0.0)
    return dataclasses.replace(longest, basis=f"{len(sections)} jobs together, the longest: {longest.basis}")


def replay_estimate(workload: str, target: str, replay: Mapping[str, object], repetitions: int) -> Estimate:
    """A replay's duration: a timed one takes its trace's span (if the target keeps up); a fast one
    as long as the target takes the trace's requests (not probed: a probe would replay them)."""
    span = replay.get("span_s")
    events = replay.get("events")
    if replay.get("mode") == "timed" and isinstance(span, (int, float)):
        return Estimate(workload, target, repetitions, float(span) + FIO_START_STOP_S, f"the trace's span, {format_duration(float(span))} (timed replay)")
    what = f"{events:,} requests" if isinstance(events, int) else "the trace's requests"
    return Estimate(workload, target, repetitions, None, f"{what} as fast as the target takes them (not probed)")


def load_estimate(workload: str, target: str, tool: str, options: Mapping[str, str | None], repetitions: int) -> Estimate:
    """An application load's duration: what its tool says one run takes (its runtime, its
    warm-up, a dataset to load; fs_mark's files at a planned rate)."""
    from ..loads import tool as load_tool

    seconds = load_tool(tool).runtime_s({k: v or "" for k, v in options.items()})
    return Estimate(workload, target, repetitions, seconds + FIO_START_STOP_S, f"{tool}, {format_duration(seconds)} a run")


def total_seconds(estimates: Sequence[Estimate]) -> tuple[float, int]:
    """The known part of a run's duration and how many jobs are not known."""
    known = sum(e.total_s for e in estimates if e.total_s is not None)
    return known, sum(1 for e in estimates if e.total_s is None)


def _about(seconds: float) -> str:
    if seconds >= 120:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds:.0f} s"


def format_total(estimates: Sequence[Estimate]) -> str:
    """``"plan: 8 workloads x 3 repetitions on 1 target: about 2 min"`` (and what is not known)."""
    known, unknown = total_seconds(estimates)
    targets = len({e.target for e in estimates})
    workloads = len({e.workload for e in estimates})
    reps = sorted({e.repetitions for e in estimates})
    rep_text = f"{reps[0]} repetition{'s' if reps[0] != 1 else ''}" if len(reps) == 1 else "repetitions " + "/".join(map(str, reps))
    line = f"plan: {workloads} workload{'s' if workloads != 1 else ''} x {rep_text} on {targets} target{'s' if targets != 1 else ''}: {_about(known)}"
    if unknown:
        line += f" plus {unknown} size-based job{'s' if unknown != 1 else ''} of unknown speed (storbench run --plan probes them)"
    return line


def format_plan(estimates: Sequence[Estimate]) -> list[str]:
    """One line per job ("gitlab on /mnt/x: 16 GiB at about 3.9 MiB/s: about 70 min x 3"), then the total."""
    lines = []
    for e in estimates:
        when = "unknown" if e.seconds is None else _about(e.seconds)
        reps = f" x {e.repetitions}" if e.repetitions != 1 else ""
        line = f"{e.workload} on {e.target}: {e.basis}: {when}{reps}"
        if e.cap_hint:
            line += f"; {e.cap_hint}"
        lines.append(line)
    lines.append(format_total(estimates))
    return lines
