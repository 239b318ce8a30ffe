"""``storbench run``: its options, the request they make, and the figures printed at the end.

The run itself (targets and hosts prepared, the store, the workloads, marking it complete) is
:func:`storbench.run.session.run_session`'s; the progress drawn while it runs is
:class:`.progress.CliReporter`'s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from ..errors import StorbenchError, UsageError
from ..metrics import headlines_of
from ..run.request import RunRequest
from ..run.session import SessionEnv, dry_run_lines, plan_lines, refuse_resuming_a_live_run, run_session
from .common import (
    App,
    chosen_workloads,
    default_repeat,
    job_file_catalog,
    overrides_from,
    print_json,
    public_records,
    resolve_runs,
    run_catalog,
)
from .progress import CliReporter

if TYPE_CHECKING:
    from ..record import ResultRecord
    from ..run.inventory import Host


@click.command()
@click.option("--suite", "suite_name", metavar="NAME", help="Suite to run (default: quick). See 'storbench suites'.")
@click.option("--workload", "workload_names", metavar="NAME", multiple=True, help="Run only this workload (repeatable).")
@click.option("--suite-file", type=click.Path(dir_okay=False), help="TOML file with your own workloads and suites.")
@click.option("--job-file", "job_file", metavar="FILE.fio", type=click.Path(dir_okay=False), help="Run a fio job file as it is: each group of jobs fio runs together (between stonewalls) a workload; where the I/O goes is the target's (docs/job-files.md).")
@click.option("--target", "targets", metavar="PATH|URI", multiple=True, help="Directory, file, block device, NBD export (nbd://HOST[:PORT][/EXPORT], nbd+unix:///EXPORT?socket=PATH), GlusterFS volume (gluster://HOST/VOLUME), RBD image (rbd:POOL/IMAGE) or RADOS pool (rados:POOL) to test (repeatable). Default: a scratch directory here.")
@click.option("--destroy-data", "destroy", metavar="DEVICE|URI", multiple=True, help="Allow write workloads on this exact block device, export, image or pool, destroying its data.")
@click.option("--ceph-conf", metavar="PATH", type=click.Path(dir_okay=False), help="The Ceph cluster's ceph.conf for rbd: and rados: targets (default: $CEPH_CONF, else /etc/ceph/ceph.conf).")
@click.option("--ceph-client", metavar="NAME", help="The Ceph client (user) for rbd: and rados: targets (default: admin).")
@click.option("--ceph-timeout", "ceph_timeout", type=click.IntRange(min=1, max=3600), metavar="SECONDS", help="How long one Ceph operation may wait for the cluster before the workload fails (default: 15).")
@click.option("--prefill", is_flag=True, help="Write each target's test area once (sequential 1 MiB writes) before its workloads, so reads never meet unwritten blocks.")
@click.option("--host", "host_values", metavar="HOST[:PORT]", multiple=True, help="Run on this fio server ('storbench agent') instead of here (repeatable: all at once). --target is then a directory ON the hosts (default: the agent's directory).")
@click.option("--hosts", "hosts_file", metavar="FILE", type=click.Path(dir_okay=False), help="The fio servers: a TOML inventory ([host.NAME] address, port, target, label) or one HOST[:PORT] a line; see docs/many-hosts.md.")
@click.option("--hosts-required", "hosts_required", metavar="all|N", help="With --host/--hosts: how many hosts must run every workload; fewer at the start or after a workload, and the run stops (default: it goes on with the hosts that answer).")
@click.option("--size", metavar="SIZE", help="Test file size for every workload, e.g. 1g, 512MiB.")
@click.option("--runtime", metavar="DURATION", help="Runtime for every workload, e.g. 30s, 2m.")
@click.option("--sweep", "sweeps", metavar="OPTION=V1,V2,...", multiple=True, help="Run every workload at each value of a fio option (repeatable: a grid).")
@click.option("--label", metavar="TEXT", help="Name this run (used by show, compare, report).")
@click.option("--keep-files", is_flag=True, help="Leave the test files in place afterwards.")
@click.option("--dry-run", is_flag=True, help="Print each fio job file and run nothing.")
@click.option("--plan", "show_plan", is_flag=True, help="Say how long the run will take (size-based workloads are probed for a few seconds) and run nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the stored results as JSON.")
@click.option("--repeat", type=click.IntRange(min=1), default=None, help="Run each workload N times (default: 3, or $STORBENCH_REPEAT).")
@click.option("--until-rse", "until_rse", type=click.FloatRange(min=0, min_open=True), metavar="PCT", help="Repeat each workload until the relative standard error of its headline metric is below PCT percent.")
@click.option("--until", "until", type=click.Choice(["steady"]), help="steady: repeat rounds of every workload until SNIA's steady-state rule holds for its headline figure over 5 rounds (at most 25).")
@click.option("--precondition", is_flag=True, help="Before the workloads: purge each target where it supports it, then write it sequentially twice (128 KiB), as SNIA's PTS prescribes (a write: block devices and exports need --destroy-data).")
@click.option("--min-runs", type=click.IntRange(min=1), default=3, show_default=True, help="With --until-rse: at least this many runs.")
@click.option("--max-runs", type=click.IntRange(min=1), default=10, show_default=True, help="With --until-rse: give up after this many runs.")
@click.option("--no-telemetry", is_flag=True, help="Do not describe the storage, sample device activity or write interval logs.")
@click.option("--resume", "resume", metavar="RUN", help="Finish an interrupted run: only its missing workloads and repetitions.")
@click.option("--report", "report_path", metavar="FILE", help="Where to write the HTML report (default: storbench-run-N.html here).")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report at the end.")
@click.option("--progress/--no-progress", default=None, help="Live progress bars (default: on a terminal).")
@click.option("--replay", "replays", metavar="TRACE", multiple=True, help="Replay a stored trace (an id, a label or 'last'; storbench capture, storbench trace import) on the targets, as workloads of their own (repeatable).")
@click.option("--replay-mode", type=click.Choice(["both", "timed", "fast"]), default="both", show_default=True, help="timed: each request at its recorded time; fast: as fast as the target takes them (the headroom); both: one workload each.")
@click.option("--reads-only", is_flag=True, help="With --replay: leave the trace's writes and flushes out (nothing is written; said in the result).")
@click.pass_context
def run(ctx, suite_name, workload_names, suite_file, job_file, targets, destroy, ceph_conf, ceph_client, ceph_timeout, prefill, host_values, hosts_file, hosts_required, size, runtime, sweeps, label, keep_files, dry_run, show_plan, as_json, repeat, until_rse, until, precondition, min_runs, max_runs, no_telemetry, resume, report_path, no_report, progress, replays, replay_mode, reads_only):
    """Run a suite (or single workloads) through fio and store every result.

    With --host/--hosts the workloads run on fio servers ('storbench agent'), on all
    of them at once; each host's result and the aggregate are stored.
    """
    app: App = ctx.obj
    if not (dry_run or show_plan or host_values or hosts_file):
        from ..run.fioexec import start_version

        start_version(app.env.fio_path)  # answered while the runner is imported and the suites are read
    from ..run import runner

    if resume is not None and (host_values or hosts_file):
        raise UsageError("--resume takes the hosts of the stored run; do not also give --host or --hosts")
    if reads_only and not replays:
        raise UsageError("--reads-only is for --replay: it leaves a trace's writes out")
    if resume is not None:
        given = [
            name for name in ("replays", "suite_name", "workload_names", "suite_file", "job_file", "targets", "size", "runtime", "sweeps", "label", "repeat", "until_rse", "dry_run", "destroy", "prefill", "ceph_conf", "ceph_client", "ceph_timeout")
            if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
        ]
        if given:
            raise UsageError(f"--resume takes the plan of the stored run; do not also give --{given[0].replace('_names', '').replace('_name', '').replace('_', '-')}")
        with contextlib.closing(app.open_store()) as store:
            [run_id] = resolve_runs(store, [resume])[:1]
            info = store.get_run(run_id)
            if info.kind != "run":
                raise UsageError(f"run {run_id} is an import; only runs can be resumed")
            if info.status == "complete":
                raise UsageError(f"run {run_id} is complete; nothing to resume")
            if info.status == "running":
                refuse_resuming_a_live_run(run_id, store.run_owner(run_id))
            request = RunRequest.from_meta(store.run_meta(run_id), info.label, info.suite)
        with _replay_logs(app, request) as request:
            _execute(app, request, as_json=as_json, progress=progress, resume_run=run_id, report_path=report_path, no_report=no_report)
        return

    if job_file is not None:
        if suite_file or suite_name or replays:
            raise UsageError("--job-file is the suite: give --workload to run some of its workloads, not --suite, --suite-file or --replay")
        catalog = job_file_catalog(app, job_file)
        workloads, suite_label = chosen_workloads(catalog, None, workload_names, default=next(iter(catalog.suites)))
    elif replays and not (suite_name or workload_names):
        workloads, suite_label = (), None
    else:
        workloads, suite_label = chosen_workloads(run_catalog(suite_file, suite_name, workload_names), suite_name, workload_names)
    if replays or any((w.replay or {}).get("pending") for w in workloads):  # --replay, or a suite's replay = "TRACE"
        workloads, prefill = _replays(app, workloads, replays, replay_mode, reads_only, targets, bool(hosts_file or host_values), prefill)
    from ..suites.sweep import expand, parse_sweep

    workloads = expand(workloads, [parse_sweep(s) for s in sweeps])
    overrides = overrides_from(size, runtime)
    hosts = _parse_hosts(host_values, hosts_file, targets, destroy)
    required = _hosts_required(hosts_required, len(hosts))
    if not no_telemetry and not hosts:  # client runs: interval logs of hosts on one address collide
        overrides = dataclasses.replace(overrides, extra=runner.INTERVAL_LOG_OPTIONS)
    if until_rse is not None and repeat is not None:
        raise UsageError("give either --repeat or --until-rse, not both")
    if until == "steady" and (until_rse is not None or repeat is not None):
        raise UsageError("--until steady decides the repetitions itself; leave out --repeat and --until-rse")
    if until == "steady":
        repeat = 1  # one repetition per round
    if repeat is None:
        repeat = 1 if until_rse is not None else default_repeat(app.env.environ)

    if min_runs > max_runs:
        raise UsageError(f"--min-runs {min_runs} is more than --max-runs {max_runs}")
    if label is not None and ("\n" in label or "\r" in label):
        raise UsageError("--label must be a single line")
    request = RunRequest(
        workloads=workloads,
        target_paths=tuple(targets),
        overrides=overrides,
        repeat=runner.Repeat(count=repeat, until_rse_pct=until_rse, min_runs=min_runs, max_runs=max_runs),
        label=label,
        suite=suite_label,
        keep_files=keep_files,
        telemetry=not no_telemetry,
        destroy=tuple(destroy),
        hosts=hosts,
        hosts_required=required,
        prefill=prefill,
        ceph_conf=ceph_conf,
        ceph_client=ceph_client,
        ceph_timeout_s=ceph_timeout,
        precondition=precondition,
        until_steady=until == "steady",
    )
    if (precondition or until) and hosts:
        raise UsageError("--precondition and --until steady run here; they cannot be used with --host/--hosts")
    if (ceph_conf or ceph_client or ceph_timeout) and hosts:
        raise UsageError("--ceph-conf, --ceph-client and --ceph-timeout are for rbd: and rados: targets reached from here; they cannot be used with --host/--hosts")
    if prefill and hosts:
        raise UsageError("--prefill runs here, before the workloads; it cannot be used with --host/--hosts")
    with _replay_logs(app, request) as request:
        if dry_run:
            for line in dry_run_lines(_session_env(app), request):
                app.out(line)
            return
        if show_plan:
            for line in plan_lines(_session_env(app), request):
                app.out(line)
            return
        _execute(app, request, as_json=as_json, progress=progress, resume_run=None, report_path=report_path, no_report=no_report)


def _replays(app: App, workloads, replays, replay_mode: str, reads_only: bool, targets, remote: bool, prefill: bool):
    """The workloads with ``--replay``'s traces added and a suite's ``replay = "TRACE"`` made, and
    whether to prefill (a directory target: a replay's reads must meet written blocks of
    storbench's own test file); one line for a target a trace cannot go to or came from."""
    from ..run.fioexec import SubprocessFio
    from ..run.replay import refuse_the_source, refuse_unredirectable, replay_workloads_of, resolve_suite_replays

    if remote:
        raise UsageError("a replay runs here: a trace's log is a file of this host; it cannot be used with --host/--hosts")
    refuse_unredirectable(targets)
    fio_version = SubprocessFio(app.env.fio_path).version()
    modes = ("timed", "fast") if replay_mode == "both" else (replay_mode,)
    with contextlib.closing(app.open_reader()) as store:
        workloads, sources = resolve_suite_replays(store, workloads, fio_version)
        if replays:
            replayed, more = replay_workloads_of(store, replays, modes, reads_only, fio_version)
            workloads, sources = tuple(workloads) + replayed, sources + more
    refuse_the_source(sources, targets)
    capacity = _smallest_capacity(targets)
    if capacity is not None:  # a block device or file smaller than a trace's extent: its offsets scaled down
        from ..trace.replay import scaled_to

        workloads = tuple(scaled_to(w, capacity) for w in workloads)
    return tuple(workloads), prefill or not targets or all(os.path.isdir(t) for t in targets)


def _smallest_capacity(targets) -> int | None:
    """The bytes of the smallest block device or existing file among the targets (None: none is)."""
    import stat
    from pathlib import Path

    sizes = []
    for t in targets:
        try:
            st = os.stat(t)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            sizes.append(st.st_size)
        elif stat.S_ISBLK(st.st_mode):
            sysfs = Path("/sys/dev/block") / f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" / "size"
            try:
                sizes.append(int(sysfs.read_text()) * 512)
            except (OSError, ValueError):
                continue
    return min(sizes) if sizes else None


@contextlib.contextmanager
def _replay_logs(app: App, request: RunRequest):
    """The request with its replays' logs written (:func:`.common.replay_logs`)."""
    from .common import replay_logs

    with replay_logs(app, request.workloads) as workloads:
        yield dataclasses.replace(request, workloads=workloads)


def _hosts_required(value: str | None, hosts: int) -> int | None:
    """``--hosts-required all|N`` as a number of hosts (None: not given); one line when wrong."""
    if value is None:
        return None
    if not hosts:
        raise UsageError("--hosts-required is for runs on fio servers (--host/--hosts)")
    if value.strip().lower() == "all":
        return hosts
    text = value.strip()
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= hosts:
        raise UsageError(f"--hosts-required {value!r}: give 'all' or a number of hosts from 1 to {hosts}")
    return int(text)


def _parse_hosts(host_values, hosts_file, targets, destroy) -> tuple[Host, ...]:
    """--host values and the --hosts inventory, validated (pure apart from reading the file)."""
    if not host_values and not hosts_file:
        return ()
    from ..run.inventory import check_remote_target, combine_hosts, load_inventory, parse_host

    found = [parse_host(v) for v in host_values]
    if hosts_file:
        found += list(load_inventory(hosts_file))
    if len(targets) > 1:
        raise UsageError("with --host/--hosts give at most one --target (a directory on the hosts; per-host targets go in the --hosts file)")
    for t in targets:
        check_remote_target(t, f"--target {t!r}")
    if destroy:
        raise UsageError("--destroy-data is for local block devices; it cannot be used with --host/--hosts")
    return combine_hosts(found)


def _session_env(app: App) -> SessionEnv:
    return SessionEnv(env=app.env, open_store=app.open_store, db_url=app.db_url, say=app.err)


def _execute(app: App, request: RunRequest, *, as_json: bool, progress: bool | None, resume_run: int | None,
             report_path: str | None, no_report: bool) -> None:  # fmt: skip
    """The run's session (storbench.run.session), then its figures, its report and its failure's line."""
    show_progress = app.env.show_progress if progress is None else progress
    outcome = run_session(_session_env(app), request, lambda planned_s: CliReporter(app, show_progress, planned_s=planned_s),
                          resume_run=resume_run)  # fmt: skip
    _print_run(app, outcome.records, outcome.run_id, request.label, as_json=as_json, hosts=outcome.remote)
    if not no_report and outcome.records:
        write_report(app, outcome.run_id, report_path)
    if outcome.failure is not None:
        raise StorbenchError(outcome.failure)


def _print_run(app: App, records: Sequence[ResultRecord], run_id: int, label: str | None, *, as_json: bool,
               hosts: bool) -> None:  # fmt: skip
    """The run's figures as the person asked: JSON, or the glance (one target) or the table, the
    findings said once for the run, each host's line (client runs) and where it is stored."""
    if as_json:
        print_json(app, public_records(records))
    elif not records:  # every workload failed: the failures were said, the error line follows
        app.out(f"run {run_id}: no result was stored")
    else:
        from ..render.glance import format_glance, glance, target_line
        from ..render.terminal import format_results_table, format_run_wide

        title = f"run {run_id}" + (f" ({label})" if label else "")
        one_target = target_line(records)
        at_a_glance = glance(records, headlines_of(records)) if one_target else None
        if at_a_glance is not None:
            from ..render.glance import particular_findings
            from ..render.terminal import run_wide_checks

            app.out(f"{title}, {one_target}")
            app.console().print(format_glance(at_a_glance))
            for line in particular_findings(records, set(run_wide_checks(records))):
                app.out(line)
        else:
            app.console().print(format_results_table(records, title=title))
        for line in format_run_wide(records):
            app.out(line)
        if hosts:
            from ..run.perhost import format_host_lines

            for line in format_host_lines(records, every_host=f"storbench show {run_id} --hosts"):
                app.out(line)
        app.out(f"results stored in {app.db_url} as run {run_id} (storbench show {run_id})")


def write_report(app: App, run_id: int, report_path: str | None) -> None:
    """The HTML report of a finished run (the report module may not be installed yet)."""
    try:
        from .report import write_run_report
    except ImportError:
        return
    path = report_path or os.path.join(app.env.cwd, f"storbench-run-{run_id}.html")
    written = write_run_report(app, run_id, path)
    app.err(f"report: {written}")
