"""``storbench curve``: raise the load on one workload step by step; find the knee and the SLA ceiling.

A curve is a run whose results are its points, stored as each ends (workload
``NAME@iodepth=8``); ``show``, ``compare`` (point by point between targets), the reports
and ``--json`` read it like any run.  The rules (steps, stopping, knee, bisection) are pure
functions in :mod:`storbench.curve.model`; this module runs fio through :func:`runner.execute`
one step at a time, with the target described once and its test file laid out once.
"""

from __future__ import annotations

import contextlib
import sys

import click

from ..curve.model import side_by_side
from ..curve.runner import CurveRunner
from ..errors import StorbenchError, UsageError
from .common import (
    App,
    load_catalog,
    overrides_from,
    pass_app,
    print_json,
    public_records,
)

DEFAULT_LOAD = ("iodepth=1,2,4,8,16,32,64",)
DEFAULT_WORKLOAD = "curve-randread-4k"


@click.command()
@click.option("--workload", "workload_name", metavar="NAME", default=DEFAULT_WORKLOAD, show_default=True, help="The workload to raise the load on (see 'storbench suites curve'; any workload works).")
@click.option("--suite-file", type=click.Path(dir_okay=False), help="TOML file with your own workloads.")
@click.option("--target", "targets", metavar="PATH|URI", multiple=True, help="Where to run (repeatable: one curve per target, drawn on one chart). Default: a scratch directory here.")
@click.option("--destroy-data", "destroy", metavar="DEVICE|URI", multiple=True, help="Allow writes on this exact block device, export, image or pool.")
@click.option("--ceph-conf", metavar="PATH", type=click.Path(dir_okay=False), help="The Ceph cluster's ceph.conf for rbd: and rados: targets (default: $CEPH_CONF, else /etc/ceph/ceph.conf).")
@click.option("--ceph-client", metavar="NAME", help="The Ceph client (user) for rbd: and rados: targets (default: admin).")
@click.option("--ceph-timeout", "ceph_timeout", type=click.IntRange(min=1, max=3600), metavar="SECONDS", help="How long one Ceph operation may wait for the cluster before a step fails (default: 15).")
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
def curve(app: App, workload_name, suite_file, targets, destroy, ceph_conf, ceph_client, ceph_timeout, loads, rate, stop_at, sla, size, runtime, repeat, precondition, label, report_path, no_report, as_json):
    """Raise the load on a workload step by step: a latency-versus-throughput curve, its knee,
    and with --sla the most IOPS that keep a latency limit."""
    from ..curve import model as cv
    from ..run import runner
    from ..targets import resolve as resolve_target

    plan = cv.CurvePlan(loads=tuple(loads) or (() if rate else DEFAULT_LOAD), rate=rate, stop_at=stop_at, sla=sla)
    steps, shares, stop, limit = plan.parsed()
    workload = load_catalog(suite_file).workload(workload_name)
    if workload.replay is not None:
        raise UsageError(f"workload {workload.name!r} replays a trace, whose load is the trace's own: a curve cannot raise it; replay it with storbench run (--replay-mode fast gives its headroom)")
    overrides = overrides_from(size, runtime)
    executor = runner.SubprocessFio(app.env.fio_path)
    fio_version = executor.version()
    out: dict = {"workload": workload.name, "curves": []}
    with contextlib.ExitStack() as stack:
        from ..run.precondition import PRECONDITION_WORKLOAD

        guarded = (workload, PRECONDITION_WORKLOAD) if precondition else (workload,)  # preconditioning writes
        resolved = tuple(resolve_target(t, destroy=destroy, workloads=guarded, db_path=app.db_url, ceph_conf=ceph_conf,
                                               ceph_client=ceph_client, ceph_timeout_s=ceph_timeout) for t in targets)  # fmt: skip
        if not resolved:
            resolved = (stack.enter_context(runner.scratch_target(app.env.cwd)),)
        from ..targets import kind_of
        from ..units import parse_size

        size_text = overrides.size or workload.option("size")
        size_bytes = parse_size(size_text) if size_text and not size_text.endswith("%") else None
        for target in resolved:  # what a target's kind keeps running for the run (an iSCSI LUN's or NFS export's bridge)
            stack.enter_context(kind_of(target).serve(target, size_bytes))
        store = stack.enter_context(contextlib.closing(app.open_store()))
        meta = {"host": runner.host_facts(fio_version), "argv": sys.argv[1:],
                "curve": {"workload": workload.name, **plan.meta()}}  # fmt: skip
        run_id = store.create_run(label=label, kind="run", suite="curve", meta=meta)
        from ..run.live import LiveReporter
        from .progress import CliReporter

        reporter = stack.enter_context(LiveReporter(CliReporter(app, app.env.show_progress)))
        reporter.publish(store, run_id, total=0, kind="curve")
        telemetry = runner.DescribeOnce(runner.SystemTelemetry())
        status, reason = "complete", None
        runners: list[CurveRunner] = []
        try:
            for target in resolved:
                ctx = CurveRunner(run_id, workload, target, overrides, executor=executor, store=store, reporter=reporter,
                                  telemetry=telemetry, repeat=repeat, clock=app.env.clock, cwd=app.env.cwd)  # fmt: skip
                runners.append(ctx)
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
            for ctx in runners:
                ctx.remove_files()
            out["iso"] = side_by_side(out["curves"], limit)
            store.update_run_meta(run_id, {"curve_result": out})
            store.finish_run(run_id, status, reason=reason)
        records = store.results(run_id)
    if as_json:
        print_json(app, {"run": run_id, **out, "results": public_records(records)})
    else:
        for c in out["curves"]:
            for line in c["lines"]:
                app.out(line)
        if out.get("iso"):
            app.out(out["iso"])
        app.out(f"curve stored in {app.db_url} as run {run_id} (storbench show {run_id})")
    if not no_report and records:
        from .run import write_report

        write_report(app, run_id, report_path)
