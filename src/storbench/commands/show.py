"""storbench show: one run with every result, its storage, statistics and findings."""

from __future__ import annotations

import contextlib

import click

from .common import App, pass_app, print_json, public_records, resolve_runs


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the run's result records as JSON."
)
@click.option(
    "--raw", is_flag=True, help="Print fio's raw output of each result, verbatim."
)
@click.option(
    "--hosts", "every_host", is_flag=True,
    help="A run on many hosts: a row for every host (beyond 16 hosts they are summarised: min, median, max, the slowest).",
)
@pass_app
def show(app: App, run_ref, as_json, raw, every_host):
    """Show one run (an id or a label) with every result."""
    from ..render.terminal import format_results_table, format_run_header

    with contextlib.closing(app.open_reader()) as store:
        run_ids = resolve_runs(store, [run_ref])
        run_id = run_ids[0]
        info = store.get_run(run_id)
        records = store.results(run_id)
        meta = store.run_meta(run_id)
        pts_files = meta.get("pts") or []
    if as_json:
        print_json(app, public_records(records))
        return
    if raw:
        for rec in records:
            app.out(f"# result {rec.result_id}: workload {rec.workload}")
            app.out(rec.raw_output)
        return
    from ..render.terminal import format_backend, format_findings, format_stats
    from ..storage import format_storage

    for line in format_run_header(info):
        app.out(line)
    from ..render.terminal import format_pts_files

    for line in format_pts_files(pts_files):
        app.out(line)
    described: set[str] = set()
    for rec in records:
        if rec.storage is not None and (rec.target or "") not in described:
            described.add(rec.target or "")
            app.out("")
            for line in format_storage(rec.storage):
                app.out(line)
    from ..metrics import headlines_of
    from ..model import EACH_HOST_UP_TO
    from ..render.glance import format_glance, glance, target_line
    from ..run.perhost import format_host_lines

    host_names = {r.host for r in records if r.host not in (None, "all")}
    many = len(host_names) > EACH_HOST_UP_TO and not every_host
    shown = [r for r in records if r.host in (None, "all")] if many else records
    at_a_glance = glance(records, headlines_of(records)) if target_line(records) and not any(r.fio.measures for r in records) else None
    if at_a_glance is not None:
        app.console().print(format_glance(at_a_glance))
    app.console().print(format_results_table(shown, title="every figure" if at_a_glance is not None else None))
    if many:
        app.out(f"{len(host_names)} hosts (storbench show {run_id} --hosts: a row for each):")
        for line in format_host_lines(records):
            app.out(line)
    stats_lines = format_stats(shown)
    if stats_lines:
        app.out("statistics over repetitions:")
        for line in stats_lines:
            app.out(line)
    from ..render.terminal import format_load_operations

    operations = format_load_operations(shown)
    if operations:
        app.out("dbench's operations (last repetition of each workload; the slowest first):")
        for line in operations:
            app.out(line)
    from ..render.terminal import format_segments

    segment_lines = format_segments(shown)
    if segment_lines:
        app.out("each second of every repetition (the fastest, median and slowest whole second; each repetition's first and last, cut short, left out):")
        for line in segment_lines:
            app.out(line)
    backend_lines = format_backend(records)
    if backend_lines:
        app.out("what the storage back-end did (last repetition of each workload):")
        for line in backend_lines:
            app.out(line)
    curve = meta.get("curve_result") or {}
    for c in curve.get("curves", []):
        for line in c.get("lines", []):
            app.out(line)
    for name, verdict in (meta.get("steady") or {}).items():
        app.out(f"steady state of {name}: {verdict.get('reason', '')} ({len(verdict.get('series') or [])} rounds)")
    findings = format_findings(shown)
    if findings:
        app.out("findings:")
        for line in findings:
            app.out(line)
