"""Running a curve: one target's steps through :func:`runner.execute`, one at a time.

The rules (steps, stopping, the knee, bisection for the SLA ceiling) are pure functions
in :mod:`storbench.curve.model`; this module is their thin edge, shared by ``storbench curve``
(one curve per ``--target``) and ``storbench matrix --curve`` (one per setup).  Every
step is a stored result as soon as it ends (workload ``NAME@iodepth=8``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from ..errors import StorbenchError
from ..model import JobSpec, Overrides, Target, Workload
from ..record import ResultRecord
from ..run import runner
from . import model as cv

if TYPE_CHECKING:
    from ..activity import DeviceSample
    from ..fio.progress import Status
    from ..run.fioexec import FioExecutor


class CurveStore(runner.ResultSink, Protocol):
    """Where the steps are stored and read back from (the store)."""

    def results(self, run_id: int) -> Sequence[ResultRecord]: ...

#: how often the winning SLA rate runs again to say how sure the ceiling is
CEILING_REPEAT = 3


class CurveRunner:
    """One target's curve: its steps run through runner.execute one at a time, each stored
    in run ``run_id`` through ``sink`` (the store, or a wrapper of it) and read back from ``store``.

    ``made`` holds every step's job specs: :meth:`remove_files` removes their test files
    (the test file is laid out once and reused by every step).
    """

    def __init__(self, run_id: int, workload: Workload, target: Target, overrides: Overrides, *, executor: FioExecutor,
                 store: CurveStore, reporter: runner.Reporter, telemetry: runner.Telemetry | None, repeat: int,
                 clock: Callable[[], str], cwd: str, sink: runner.ResultSink | None = None,
                 export_size: str | None = None, label: str | None = None) -> None:  # fmt: skip
        self.run_id, self.workload, self.target = run_id, workload, target
        self.overrides, self.executor, self.store, self.reporter, self.telemetry = overrides, executor, store, reporter, telemetry
        self.repeat, self.clock, self.cwd = repeat, clock, cwd
        self.sink = sink if sink is not None else store
        self.export_size, self.label = export_size, label
        self.engine: str | None = None
        self.made: list[list[JobSpec]] = []
        #: the step's place in the curve, for the progress line: (steps run, steps planned)
        self.place = [0, 0]

    def remove_files(self) -> None:
        for specs in self.made:
            runner.remove_test_files(specs)
        self.made = []

    def _spec(self, name: str, extra: tuple[tuple[str, str], ...]):
        from ..jobs.jobfile import build_job

        options = [(k, v) for k, v in self.workload.options if k not in {e for e, _ in extra}] + list(extra)
        w = dataclasses.replace(self.workload, name=name, options=tuple(options))
        engine = None
        if any(k == "ioengine" and v == "auto" for k, v in w.options):
            from ..run.engines import probe_ioengine

            where = self.target.path if self.target.kind == "dir" else self.cwd
            self.engine = self.engine or probe_ioengine(self.executor.path, where)
            engine = self.engine
        spec = build_job(w, self.target, self.overrides, ioengine=engine, export_size=self.export_size)
        self.made.append([spec])
        return spec

    def measure(self, step: tuple[tuple[str, str], ...], extra: tuple[tuple[str, str], ...] | None = None,
                repeat: int | None = None) -> list[ResultRecord]:  # fmt: skip
        """Run one step (``repeat`` times) and return its stored records."""
        name = cv.step_name(self.workload.name, step)
        spec = self._spec(name, extra if extra is not None else step)
        self.place[0] += 1
        self.place[1] = max(self.place[1], self.place[0])  # SLA probes and repeats come after the planned steps
        outcome = runner.execute([spec], runner.ExecuteContext(
            run_id=self.run_id, executor=self.executor, sink=self.sink, reporter=_Placed(self.reporter, self.place), label=self.label,
            clock=self.clock, keep_files=True, repeat=runner.Repeat(count=repeat or self.repeat),
            telemetry=self.telemetry or runner.NoTelemetry(),
        ))  # fmt: skip
        if outcome.failures:
            raise StorbenchError(f"curve step {name} on {self.target.display} failed: {outcome.failures[0].reason}")
        ids = set(outcome.stored)
        return [r for r in self.store.results(self.run_id) if r.result_id in ids]

    def point(self, step, records: list[ResultRecord]):
        pts = [cv.point_of(step, r.fio, r.result_id) for r in records]
        if len(pts) == 1:
            return pts[0]
        n = len(pts)
        mean = [p.lat_mean_ns for p in pts]
        keys = set.intersection(*(set(p.percentiles_ns) for p in pts))
        return cv.Point(step=step, iops=sum(p.iops for p in pts) / n, bw_bytes=sum(p.bw_bytes for p in pts) / n,
                        lat_mean_ns=None if any(m is None for m in mean) else sum(mean) / n,  # type: ignore[arg-type]
                        percentiles_ns={k: sum(p.percentiles_ns[k] for p in pts) / n for k in keys},
                        result_id=pts[-1].result_id)  # fmt: skip

    def precondition(self) -> None:
        from ..run.precondition import precondition

        for line in precondition(self.target, self.executor, self.overrides, self.workload):
            self.reporter.note(line)

    def run(self, steps, shares, stop, limit) -> dict:
        points: list = []
        stopped = None
        self.place = [0, (len(shares) + 1) if shares else len(steps)]
        base_options = dict(self.workload.options)
        if shares:
            top = self.point((("rate_iops", "max"),), self.measure((("rate_iops", "max"),), extra=()))
            points_max = top
            for share in shares:
                step = (("rate", f"{share * 100:g}%"),)
                extra = cv.rate_options(base_options, share * points_max.iops)
                p = self.point(step + extra, self.measure(step + extra, extra=extra))
                points.append(p)
                stopped = cv.stop_reason(points, stop) if stop else None
                if stopped:
                    break
        else:
            for step in steps:
                points.append(self.point(step, self.measure(step)))
                stopped = cv.stop_reason(points, stop)
                if stopped:
                    break
        knee = cv.find_knee(points)
        lines = [f"curve of {self.workload.name} on {self.target.display}: {len(points)} steps" + (f", stopped: {stopped}" if stopped else "")]
        lines += [point_line(p) for p in points]
        lines.append(cv.format_knee(knee, points))
        ceiling = None
        if limit is not None:
            ceiling = self.sla(points, limit)
            lines.append(cv.format_ceiling(ceiling))
        return {
            "target": self.target.display,
            "points": [point_json(p) for p in points],
            "stopped": stopped,
            "knee": None if knee is None else {"step": dict(knee.point.step), **point_json(knee.point),
                                              "gain_beyond_pct": knee.gain_beyond_pct, "p99_rise_beyond_pct": knee.p99_rise_beyond_pct},
            "sla_ceiling": None if ceiling is None else ceiling_json(ceiling),
            "lines": lines,
        }  # fmt: skip

    def sla(self, points, limit):
        figure, limit_ns = limit
        inside, outside = cv.sla_bracket(points, figure, limit_ns)
        if inside is None:
            return cv.Ceiling(figure, limit_ns, None, None, note=f"{figure} at the first step was {cv._ms(points[0].figure(figure)) if points else '-'}")
        open_ended = outside is None
        if outside is None:
            note = ""  # said by format_ceiling: at least the best step's IOPS
            best_rate, best_point, probes = inside.iops, inside, 0
        elif cv.next_probe(inside.iops, outside.iops, 0) is None or outside.iops <= inside.iops:
            note = f"the step beyond the limit ({outside.label}) adds no IOPS worth bisecting: the ceiling is {inside.label}"
            best_rate, best_point, probes = inside.iops, inside, 0
        else:
            base = dict(self.workload.options)
            base.update(dict(outside.step))  # probes at the load of the first step beyond the limit, throttled
            load = tuple((k, v) for k, v in outside.step if k in cv.LOAD_KEYS)
            lo, hi, probes, best_rate, best_point, note = inside.iops, outside.iops, 0, inside.iops, inside, ""
            while (rate := cv.next_probe(lo, hi, probes)) is not None:
                probes += 1
                extra = load + cv.rate_options(base, rate)
                step = (("sla_probe", str(probes)),) + extra
                p = self.point(step, self.measure(step, extra=extra))
                value = p.figure(figure)
                if value is not None and value <= limit_ns:
                    lo, best_rate, best_point = rate, rate, p
                else:
                    hi = rate
        # the winning rate again, to say how sure the ceiling is
        if best_point is inside and outside is None:
            extra = tuple((k, v) for k, v in inside.step if k in cv.LOAD_KEYS or k == "rate_iops")
        else:
            extra = tuple((k, v) for k, v in best_point.step if k in cv.LOAD_KEYS or k == "rate_iops")
        # named by what it runs: a probe's rate cap ("sla_ceiling=64918" with rate_iops), or a step of the
        # curve run again as it was ("sla_repeat=iodepth=32": no cap, so it may reach more than the ceiling)
        if any(k == "rate_iops" for k, _ in extra):
            step = (("sla_ceiling", f"{best_rate:.0f}"),) + extra
        else:
            step = (("sla_repeat", best_point.label.replace("=", ":")),) + extra
        records = self.measure(step, extra=extra, repeat=CEILING_REPEAT)
        pts = [cv.point_of(step, r.fio, r.result_id) for r in records]
        repeated = tuple(v for v in (p.figure(figure) for p in pts) if v is not None)
        return cv.Ceiling(figure, limit_ns, best_rate, best_point, repeated_ns=repeated, iops_repeated=tuple(p.iops for p in pts),
                          within_noise=cv.ceiling_verdict(limit_ns, repeated), probes=probes, note=note,
                          open_ended=open_ended)  # fmt: skip


class _Placed:
    """The run's reporter, told each step's place in the curve ("[3/6]") instead of its place in a
    one-step run ("[1/1]"); everything else passes through."""

    def __init__(self, inner: runner.Reporter, place: list[int]) -> None:
        self._inner, self._place = inner, place

    def workload_started(self, workload: Workload, target: Target, index: int, total: int, repetition: int) -> None:
        self._inner.workload_started(workload, target, self._place[0] - 1, self._place[1], repetition)

    def status(self, status: Status) -> None:
        self._inner.status(status)

    def devices_now(self, samples: Sequence[DeviceSample]) -> None:
        self._inner.devices_now(samples)

    def workload_done(self, record: ResultRecord) -> None:
        self._inner.workload_done(record)

    def workload_failed(self, workload: Workload, target: Target, reason: str) -> None:
        self._inner.workload_failed(workload, target, reason)

    def note(self, text: str) -> None:
        self._inner.note(text)


def point_json(p) -> dict:
    return {"step": dict(p.step), "iops": p.iops, "bw_bytes": p.bw_bytes, "lat_mean_ns": p.lat_mean_ns,
            "p50_ns": p.figure("p50"), "p99_ns": p.figure("p99"), "p99_9_ns": p.figure("p99.9"), "result": p.result_id}  # fmt: skip


def ceiling_json(c) -> dict:
    return {"figure": c.figure, "limit_ns": c.limit_ns, "iops": c.rate_iops,
            "step": dict(c.point.step) if c.point is not None else None,
            "repeated_ns": list(c.repeated_ns), "iops_repeated": list(c.iops_repeated),
            "within_noise": c.within_noise, "confirmed": c.confirmed, "probes": c.probes, "note": c.note,
            "open_ended": c.open_ended}  # fmt: skip


def point_line(p) -> str:
    from ..units import fmt_bw, fmt_iops, fmt_ns

    return (f"  {p.label}: {fmt_iops(p.iops)} IOPS, {fmt_bw(p.bw_bytes)}, mean {fmt_ns(p.lat_mean_ns)}, "
            f"p50 {fmt_ns(p.figure('p50'))}, p99 {fmt_ns(p.figure('p99'))}, p99.9 {fmt_ns(p.figure('p99.9'))}")  # fmt: skip

