"""``storbench curve``: raise the load on one workload step by step; find the knee and the SLA ceiling.

A curve is a run whose results are its points, stored as each ends (workload
``NAME@iodepth=8``); ``show``, ``compare`` (point by point between targets), the reports
and ``--json`` read it like any run.  The rules (steps, stopping, knee, bisection) are pure
functions in :mod:`storbench.curve`; this module runs fio through :func:`runner.execute`
one step at a time, with the target described once and its test file laid out once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys

import click

from ..errors import StorbenchError, UsageError
from ..model import ResultRecord
from .common import App, DescribeOnce, _catalog, _overrides, _print_json, _public, pass_app

DEFAULT_LOAD = ("iodepth=1,2,4,8,16,32,64",)
DEFAULT_WORKLOAD = "curve-randread-4k"
#: how often the winning SLA rate runs again to say how sure the ceiling is
CEILING_REPEAT = 3


@click.command()
@click.option("--workload", "workload_name", metavar="NAME", default=DEFAULT_WORKLOAD, show_default=True, help="The workload to raise the load on (see 'storbench suites curve'; any workload works).")
@click.option("--suite-file", type=click.Path(dir_okay=False), help="TOML file with your own workloads.")
@click.option("--target", "targets", metavar="PATH|URI", multiple=True, help="Where to run (repeatable: one curve per target, drawn on one chart). Default: a scratch directory here.")
@click.option("--destroy-data", "destroy", metavar="DEVICE|URI", multiple=True, help="Allow writes on this exact block device, export, image or pool.")
@click.option("--load", "loads", metavar="OPTION=V1,V2,...", multiple=True, help="Raise iodepth and/or numjobs over these values (repeatable: every combination). Default: iodepth=1,2,4,...,64.")
@click.option("--rate", "rate", metavar="LOW%..HIGH%", help="Instead of --load: fixed request rates (fio's rate_iops) at these shares of the maximum the workload reaches unthrottled, e.g. 10%..100%.")
@click.option("--stop-at", "stop_at", metavar="FIGURE=DURATION", help="Stop raising the load once this latency is exceeded, e.g. p99=20ms (mean or any percentile).")
@click.option("--sla", "sla", metavar="FIGURE=DURATION", help="Find the most IOPS that keep this latency, e.g. p99=2ms: bisection on the rate between the last step within it and the first beyond.")
@click.option("--size", metavar="SIZE", help="Test file size, e.g. 1g.")
@click.option("--runtime", metavar="DURATION", help="Runtime of every step, e.g. 10s.")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True, help="Run each step N times.")
@click.option("--precondition", is_flag=True, help="Before the curve: purge the target where it supports it, then write it sequentially twice (128 KiB), as SNIA's PTS prescribes.")
@click.option("--label", metavar="TEXT", help="Name this curve (used by show, compare, report).")
@click.option("--report", "report_path", metavar="FILE", help="Where to write the HTML report (default: storbench-run-N.html here).")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report at the end.")
@click.option("--json", "as_json", is_flag=True, help="Print the points, the knee and the SLA ceiling as JSON.")
@pass_app
def curve(app: App, workload_name, suite_file, targets, destroy, loads, rate, stop_at, sla, size, runtime, repeat, precondition, label, report_path, no_report, as_json):
    """Raise the load on a workload step by step: a latency-versus-throughput curve, its knee,
    and with --sla the most IOPS that keep a latency limit."""
    from .. import curve as cv
    from .. import runner

    if loads and rate:
        raise UsageError("give either --load or --rate, not both")
    workload = _catalog(suite_file).workload(workload_name)
    steps = cv.parse_load(loads or DEFAULT_LOAD) if not rate else []
    shares = cv.parse_rate(rate) if rate else []
    stop = cv.parse_limit(stop_at, "--stop-at") if stop_at else None
    limit = cv.parse_limit(sla, "--sla") if sla else None
    overrides = _overrides(size, runtime)
    executor = runner.SubprocessFio(app.env.fio_path)
    fio_version = executor.version()
    out: dict = {"workload": workload.name, "curves": []}
    with contextlib.ExitStack() as stack:
        from ..precondition import PRECONDITION_WORKLOAD

        guarded = (workload, PRECONDITION_WORKLOAD) if precondition else (workload,)  # preconditioning writes
        resolved = tuple(runner.resolve_target(t, destroy=destroy, workloads=guarded, db_path=app.db_url) for t in targets)
        if not resolved:
            resolved = (stack.enter_context(runner.scratch_target(app.env.cwd)),)
        store = stack.enter_context(contextlib.closing(app.open_store()))
        meta = {"host": runner.host_facts(fio_version), "argv": sys.argv[1:],
                "curve": {"workload": workload.name, "load": list(loads or DEFAULT_LOAD) if not rate else None, "rate": rate,
                          "stop_at": stop_at, "sla": sla}}  # fmt: skip
        run_id = store.create_run(label=label, kind="run", suite="curve", meta=meta)
        from .run import _CliReporter

        reporter = stack.enter_context(_CliReporter(app, app.env.show_progress))
        telemetry = DescribeOnce(runner.SystemTelemetry())
        status, reason = "complete", None
        try:
            for target in resolved:
                ctx = _Curve(app, run_id, workload, target, overrides, executor, store, reporter, telemetry, repeat)
                if precondition:
                    ctx.precondition()
                result = ctx.run(steps, shares, stop, limit)
                out["curves"].append(result)
        except StorbenchError as exc:
            status, reason = "incomplete", exc.message
            raise
        except KeyboardInterrupt:
            status, reason = "incomplete", "interrupted"
            raise
        finally:
            for ctx_specs in _Curve.made:
                runner.remove_test_files(ctx_specs)
            _Curve.made = []
            store.update_run_meta(run_id, {"curve_result": out})
            store.finish_run(run_id, status, reason=reason)
        records = store.results(run_id)
    if as_json:
        _print_json(app, {"run": run_id, **out, "results": _public(records)})
    else:
        for c in out["curves"]:
            for line in c["lines"]:
                app.out(line)
        app.out(f"curve stored in {app.db_url} as run {run_id} (storbench show {run_id})")
    if not no_report and records:
        from .run import _write_report

        _write_report(app, run_id, report_path)


class _Curve:
    """One target's curve: its steps run through runner.execute one at a time."""

    made: list = []  # every step's specs, for removing their test files at the end

    def __init__(self, app, run_id, workload, target, overrides, executor, store, reporter, telemetry, repeat) -> None:
        self.app, self.run_id, self.workload, self.target = app, run_id, workload, target
        self.overrides, self.executor, self.store, self.reporter, self.telemetry = overrides, executor, store, reporter, telemetry
        self.repeat = repeat
        self.engine = None

    def _spec(self, name: str, extra: tuple[tuple[str, str], ...]):
        from ..jobfile import build_job

        options = [(k, v) for k, v in self.workload.options if k not in {e for e, _ in extra}] + list(extra)
        w = dataclasses.replace(self.workload, name=name, options=tuple(options))
        engine = None
        if any(k == "ioengine" and v == "auto" for k, v in w.options):
            from ..engines import probe_ioengine

            where = self.target.path if self.target.kind == "dir" else self.app.env.cwd
            self.engine = self.engine or probe_ioengine(self.executor.path, where)
            engine = self.engine
        spec = build_job(w, self.target, self.overrides, ioengine=engine)
        _Curve.made.append([spec])
        return spec

    def measure(self, step: tuple[tuple[str, str], ...], extra: tuple[tuple[str, str], ...] | None = None, repeat: int | None = None) -> list[ResultRecord]:
        """Run one step (``repeat`` times) and return its stored records."""
        from .. import curve as cv
        from .. import runner

        name = cv.step_name(self.workload.name, step)
        spec = self._spec(name, extra if extra is not None else step)
        outcome = runner.execute(
            self.run_id, [spec], executor=self.executor, sink=self.store, reporter=self.reporter, label=None,
            clock=self.app.env.clock, keep_files=True, repeat=runner.Repeat(count=repeat or self.repeat),
            telemetry=self.telemetry,
        )  # fmt: skip
        if outcome.failures:
            raise StorbenchError(f"curve step {name} on {self.target.display} failed: {outcome.failures[0].reason}")
        ids = set(outcome.stored)
        return [r for r in self.store.results(self.run_id) if r.result_id in ids]

    def point(self, step, records: list[ResultRecord]):
        from .. import curve as cv

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
        from ..precondition import precondition

        for line in precondition(self.target, self.executor, self.overrides, self.workload):
            self.reporter.note(line)

    def run(self, steps, shares, stop, limit) -> dict:
        from .. import curve as cv

        points: list = []
        stopped = None
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
        lines += [_point_line(p) for p in points]
        lines.append(cv.format_knee(knee, points))
        ceiling = None
        if limit is not None:
            ceiling = self.sla(points, limit)
            lines.append(cv.format_ceiling(ceiling))
        return {
            "target": self.target.display,
            "points": [_point_json(p) for p in points],
            "stopped": stopped,
            "knee": None if knee is None else {"step": dict(knee.point.step), **_point_json(knee.point),
                                              "gain_beyond_pct": knee.gain_beyond_pct, "p99_rise_beyond_pct": knee.p99_rise_beyond_pct},
            "sla_ceiling": None if ceiling is None else _ceiling_json(ceiling),
            "lines": lines,
        }  # fmt: skip

    def sla(self, points, limit):
        from .. import curve as cv

        figure, limit_ns = limit
        inside, outside = cv.sla_bracket(points, figure, limit_ns)
        if inside is None:
            return cv.Ceiling(figure, limit_ns, None, None, note=f"{figure} at the first step was {cv._ms(points[0].figure(figure)) if points else '-'}")
        if outside is None:
            note = "the limit held at every step: the ceiling is at least the last step's IOPS (raise the load further)"
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
        step = (("sla_ceiling", f"{best_rate:.0f}"),) + extra
        records = self.measure(step, extra=extra, repeat=CEILING_REPEAT)
        pts = [cv.point_of(step, r.fio, r.result_id) for r in records]
        repeated = tuple(v for v in (p.figure(figure) for p in pts) if v is not None)
        return cv.Ceiling(figure, limit_ns, best_rate, best_point, repeated_ns=repeated, iops_repeated=tuple(p.iops for p in pts),
                          within_noise=cv.ceiling_verdict(limit_ns, repeated), probes=probes, note=note)  # fmt: skip


def _point_json(p) -> dict:
    return {"step": dict(p.step), "iops": p.iops, "bw_bytes": p.bw_bytes, "lat_mean_ns": p.lat_mean_ns,
            "p50_ns": p.figure("p50"), "p99_ns": p.figure("p99"), "p99_9_ns": p.figure("p99.9"), "result": p.result_id}  # fmt: skip


def _ceiling_json(c) -> dict:
    return {"figure": c.figure, "limit_ns": c.limit_ns, "iops": c.rate_iops,
            "step": dict(c.point.step) if c.point is not None else None,
            "repeated_ns": list(c.repeated_ns), "iops_repeated": list(c.iops_repeated),
            "within_noise": c.within_noise, "confirmed": c.confirmed, "probes": c.probes, "note": c.note}  # fmt: skip


def _point_line(p) -> str:
    from ..render.units import fmt_bw, fmt_iops, fmt_ns

    return (f"  {p.label}: {fmt_iops(p.iops)} IOPS, {fmt_bw(p.bw_bytes)}, mean {fmt_ns(p.lat_mean_ns)}, "
            f"p50 {fmt_ns(p.figure('p50'))}, p99 {fmt_ns(p.figure('p99'))}, p99.9 {fmt_ns(p.figure('p99.9'))}")  # fmt: skip
