"""``storbench matrix``: the same workloads on several storage setups of one scratch device.

Parses the options, builds the :class:`storbench.study.matrix.Study`, runs it with
:func:`storbench.study.matrix.run_study`, then prints the comparison of the study's
runs and writes its HTML report.  See docs/setups.md for worked examples.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import sys

import click

from ..errors import StorbenchError, UsageError
from ..run.live import LiveReporter
from .common import App, overrides_from, print_json, public_records, reconcile, run_catalog
from .progress import CliReporter


class _StudyReporter(CliReporter):
    """The run's progress lines plus the study's own (which setup, how it was built)."""

    #: the study's plan line, said with its first note (once the setups are checked, so that a
    #: study refused at the start stays a one-line error)
    plan_line: str | None = None

    def study_note(self, text: str) -> None:
        if self.plan_line is not None:
            self.console.print(self.plan_line, highlight=False, markup=False)
            self.plan_line = None
        self.console.print(text, highlight=False, markup=False)


def _scratch(device, devices, destroy, loop_file, loop_files, loop_size, cwd="."):
    from ..study.plan import Scratch
    from ..study.plan import loop_size as check_loop_size

    given = [name for name, v in (("--device", device), ("--devices", devices), ("--loop-file", loop_file), ("--loop-files", loop_files)) if v]
    if len(given) > 1:
        raise UsageError(f"give one of --device, --devices, --loop-file and --loop-files, not {' and '.join(given)}")
    if device or devices:
        if loop_size:
            raise UsageError("--loop-size goes with --loop-file or --loop-files, not --device/--devices")
        paths = (device,) if device else tuple(p.strip() for p in devices.split(","))
        if any(not p for p in paths):
            raise UsageError(f"--devices {devices!r}: give a comma-separated list of devices, e.g. /dev/sdb,/dev/sdc")
        missing = [p for p in paths if p not in destroy]
        if missing and destroy:
            raise UsageError(
                f"--destroy-data must name every device exactly as given; missing: {', '.join(missing)} "
                f"(pass --destroy-data {missing[0]})"
            )
        return Scratch(kind="device", path=paths[0], destroy=tuple(destroy), paths=paths)
    if destroy:
        raise UsageError("--destroy-data goes with --device or --devices (a loop file is storbench's own and needs no consent)")
    if loop_file or loop_files:
        if not loop_size:
            raise UsageError(f"{'--loop-file' if loop_file else '--loop-files'} needs --loop-size, e.g. --loop-size 4g")
        if loop_files:
            return Scratch(kind="loop", path=os.path.abspath(cwd), size=check_loop_size(loop_size), count=loop_files)
        return Scratch(kind="loop", path=os.path.abspath(loop_file), size=check_loop_size(loop_size))
    if loop_size:
        raise UsageError("--loop-size goes with --loop-file or --loop-files")
    return Scratch(kind="none")


@click.command()
@click.option("--device", metavar="DEV", help="Scratch block device to build every setup on (its data is destroyed).")
@click.option("--devices", metavar="A,B,...", help="Several scratch devices (mirrors, raidz, btrfs raid1/raid10); each must be named by --destroy-data.")
@click.option("--destroy-data", "destroy", metavar="DEV", multiple=True, help="Allow wiping --device (or each of --devices): repeat it exactly.")
@click.option("--loop-file", metavar="PATH", help="Build on a loop device over this new file (created, removed afterwards).")
@click.option("--loop-files", type=click.IntRange(min=1, max=16), metavar="N", help="Build on N loop devices over N new files here (created, removed afterwards).")
@click.option("--loop-size", metavar="SIZE", help="Size of --loop-file (or of each --loop-files file), e.g. 4g (xfs needs at least 300 MB).")
@click.option("--fs", "fs_list", metavar="LIST", help="Setups by filesystem: e.g. ext4,xfs,btrfs,btrfs-zstd,zfs,none.")
@click.option("--setups", "setups_file", metavar="FILE", type=click.Path(dir_okay=False), help="TOML file of [setup.NAME] tables (see docs/setups.md).")
@click.option("--suite", "suite_name", metavar="NAME", help="Suite to run on every setup (default: quick).")
@click.option("--workload", "workload_names", metavar="NAME", multiple=True, help="Run only this workload (repeatable).")
@click.option("--suite-file", type=click.Path(dir_okay=False), help="TOML file with your own workloads and suites.")
@click.option("--size", metavar="SIZE", help="Test file size for every workload, e.g. 1g.")
@click.option("--runtime", metavar="DURATION", help="Runtime for every workload, e.g. 30s.")
@click.option("--sweep", "sweeps", metavar="OPTION=V1,V2,...", multiple=True, help="Run every workload at each value of a fio option on every setup (repeatable: a grid).")
@click.option("--repeat", type=click.IntRange(min=1), default=None, help="Run each workload N times on each setup (default: 3, or $STORBENCH_REPEAT).")
@click.option("--label", metavar="STUDY", help="Name the study; each setup's run is labelled STUDY/SETUP (default: matrix-DATE-TIME).")
@click.option("--resume", metavar="STUDY", help="Continue a study: skip complete setups, finish the others.")
@click.option("--keep-files", is_flag=True, help="Keep the loop file (with the last setup on it), images in given directories and test files.")
@click.option("--curve", "curve", is_flag=True, help="Raise the load on one workload step by step on every setup (storbench curve's steps, knee and SLA ceiling per setup, drawn on one chart); the workload is --workload NAME (default curve-randread-4k).")
@click.option("--load", "loads", metavar="OPTION=V1,V2,...", multiple=True, help="With --curve: raise iodepth and/or numjobs over these values (default: iodepth=1,2,4,...,64).")
@click.option("--rate", "rate", metavar="LOW%..HIGH%", help="With --curve, instead of --load: fixed request rates at these shares of each setup's unthrottled maximum.")
@click.option("--stop-at", "stop_at", metavar="FIGURE=DURATION", help="With --curve: stop raising the load once this latency is exceeded, e.g. p99=20ms.")
@click.option("--sla", "sla", metavar="FIGURE=DURATION", help="With --curve: find each setup's most IOPS that keep this latency, e.g. p99=2ms.")
@click.option("--prefill", is_flag=True, help="Write each setup's test area once (sequential 1 MiB writes) before its workloads, so reads never meet unwritten blocks (fresh images, new files).")
@click.option("--report", "report_path", metavar="FILE", help="Where to write the HTML report (default: storbench-study-LABEL.html here).")
@click.option("--no-report", is_flag=True, help="Do not write the HTML report at the end.")
@click.option("--json", "as_json", is_flag=True, help="Print the study's setups and stored results as JSON.")
@click.option("--progress/--no-progress", default=None, help="Live progress bars (default: on a terminal).")
@click.pass_context
def matrix(ctx, device, devices, destroy, loop_file, loop_files, loop_size, fs_list, setups_file, suite_name, workload_names, suite_file, size,
           runtime, sweeps, repeat, label, resume, keep_files, curve, loads, rate, stop_at, sla, prefill, report_path, no_report, as_json,
           progress):  # fmt: skip
    """Run the same workloads on several storage setups of one scratch device, one after another.

    Each setup (a filesystem with its mkfs and mount options, a ZFS pool, the raw
    device, or a raw/qcow2/zvol image served by qemu-nbd) is built, measured as
    one run labelled STUDY/SETUP, and torn down; device settings are restored.
    Then the runs are compared.  Whatever fails or interrupts it, everything
    storbench set up is torn down and what was measured stays stored.
    """
    from ..run import runner
    from ..study import matrix as mx

    app: App = ctx.obj
    scratch = _scratch(device, devices, destroy, loop_file, loop_files, loop_size, app.env.cwd)
    if resume is not None:
        given = [
            name for name in ("fs_list", "setups_file", "suite_name", "workload_names", "suite_file", "size", "runtime", "sweeps", "repeat", "label",
                              "keep_files", "prefill", "curve", "loads", "rate", "stop_at", "sla")
            if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
        ]  # fmt: skip
        if given:
            flag = {"fs_list": "fs", "setups_file": "setups", "suite_name": "suite", "workload_names": "workload", "sweeps": "sweep",
                    "loads": "load"}.get(given[0], given[0])  # fmt: skip
            raise UsageError(f"--resume takes the setups and workloads of the stored study; do not also give --{flag.replace('_', '-')}")
        with contextlib.closing(app.open_store()) as store:
            study, stored_scratch = mx.stored_study(store, resume)
        if scratch.kind == "none" and stored_scratch.kind == "loop":
            scratch = stored_scratch  # a loop file is storbench's own: the same again
        elif scratch.kind == "none" and stored_scratch.kind == "device":
            paths = stored_scratch.paths or (stored_scratch.path,)
            if len(paths) > 1:
                raise UsageError(
                    f"study {resume!r} ran on devices {','.join(paths)}: give --devices {','.join(paths)} "
                    + " ".join(f"--destroy-data {p}" for p in paths) + " again (consent to wipe is never stored)"
                )
            raise UsageError(
                f"study {resume!r} ran on device {stored_scratch.path}: give --device {stored_scratch.path} "
                f"--destroy-data {stored_scratch.path} again (consent to wipe is never stored)"
            )
    else:
        plan = _curve_plan(curve, loads, rate, stop_at, sla, suite_name, workload_names, sweeps)
        if plan is not None and not workload_names:
            from .curve import DEFAULT_WORKLOAD

            workload_names = (DEFAULT_WORKLOAD,)
        study = _new_study(app, fs_list, setups_file, suite_name, workload_names, suite_file, size, runtime, sweeps, repeat, label, keep_files)
        study = dataclasses.replace(study, prefill=prefill, curve=plan)
        if any((w.replay or {}).get("pending") for w in study.workloads):  # a suite's replay = "TRACE"
            from ..run.replay import resolve_suite_replays

            with contextlib.closing(app.open_reader()) as traces:
                workloads, _ = resolve_suite_replays(traces, study.workloads, runner.SubprocessFio(app.env.fio_path).version())
            # a replay's reads must meet written blocks of each setup's test file
            study = dataclasses.replace(study, workloads=workloads, prefill=True)

    executor = runner.SubprocessFio(app.env.fio_path)
    show_progress = app.env.show_progress if progress is None else progress
    db_path = app.db_url
    outcome = None
    with contextlib.ExitStack() as stack:
        from .common import replay_logs

        study = dataclasses.replace(study, workloads=stack.enter_context(replay_logs(app, study.workloads)))
        store = stack.enter_context(contextlib.closing(app.open_store()))
        reconcile(app, store)
        drawn = _StudyReporter(app, show_progress)
        drawn.plan_line = _study_plan(study)
        reporter = stack.enter_context(LiveReporter(drawn))  # each setup's run publishes its live state (study/matrix.py)
        try:
            outcome = mx.run_study(
                study, scratch, store=store, executor=executor, reporter=reporter, clock=app.env.clock,
                resume=resume is not None, db_path=db_path, argv=sys.argv[1:], say=drawn.study_note,
            )  # fmt: skip
        finally:
            records, names = _study_records(store, study)
            curves = [c for rid in names for c in (store.run_meta(rid).get("curve_result") or {}).get("curves", [])] if study.curve else []
    _show(app, study, outcome, records, names, as_json)
    if study.curve is not None and not as_json:
        from ..curve.model import side_by_side

        line = side_by_side(curves, study.curve.parsed()[3])
        if line:
            app.out(line)
    if not no_report and records:
        _write_report(app, study, names, report_path)
    problems = outcome.problems if outcome is not None else ()
    if problems:
        first = problems[0]
        raise StorbenchError(
            f"{len(problems)} of {len(outcome.setups)} setup(s) did not complete; first: setup {first.setup!r} "
            f"({first.status}): {first.reason}; continue with 'storbench matrix --resume {study.label}'"
        )


def _curve_plan(curve, loads, rate, stop_at, sla, suite_name, workload_names, sweeps):
    """``--curve`` and its options checked (one line each), or None without ``--curve``."""
    from ..curve.model import CurvePlan

    if not curve:
        given = [f for f, v in (("--load", loads), ("--rate", rate), ("--stop-at", stop_at), ("--sla", sla)) if v]
        if given:
            raise UsageError(f"{given[0]} goes with --curve (raise the load step by step on every setup)")
        return None
    if suite_name:
        raise UsageError("--curve raises the load on one workload: give --workload NAME, not --suite")
    if len(workload_names) > 1:
        raise UsageError(f"--curve raises the load on one workload; {len(workload_names)} were given ({', '.join(workload_names)})")
    if sweeps:
        raise UsageError("--curve is a sweep of its own (--load/--rate): give no --sweep with it")
    from .curve import DEFAULT_LOAD

    plan = CurvePlan(loads=tuple(loads) or (() if rate else DEFAULT_LOAD), rate=rate, stop_at=stop_at, sla=sla)
    plan.parsed()  # every option checked before anything is built
    return plan


def _study_plan(study) -> str:
    """The study's expected duration, from each workload's runtime (the setups are not built
    yet, so size-based workloads are not probed: ``run --plan`` on one setup probes them)."""
    from ..jobs.jobfile import build_job
    from ..jobs.plan import estimate, format_total
    from ..model import Target

    probe_target = Target(kind="dir", path="/plan")
    reps = study.repeat.min_runs if study.repeat.until_rse_pct is not None else study.repeat.count
    estimates = []
    workloads = study.workloads
    if study.curve is not None:  # every step a workload of its own (the SLA's probes come on top)
        from ..curve.model import step_name

        steps, shares, _stop, _limit = study.curve.parsed()
        named = [step_name(w.name, st) for w in workloads for st in steps] or [f"{w.name}@rate" for w in workloads for _ in range(len(shares) + 1)]
        workloads = tuple(dataclasses.replace(workloads[0], name=n) for n in named)
    for setup in study.setups:
        for w in workloads:
            try:
                options = dict(build_job(w, probe_target, study.overrides, ioengine="libaio").options)
            except (StorbenchError, ValueError):  # a workload only a setup's own target kind can place
                options = dict(w.options)
            estimates.append(estimate(w.name, setup.name, options, reps))
    line = format_total(estimates).replace(" target", " setup")
    line = line.replace("(storbench run --plan probes them)", "(storbench run --plan on one setup probes them)")
    if study.curve is not None and study.curve.sla:
        from ..curve.model import SLA_MAX_PROBES
        from ..curve.runner import CEILING_REPEAT

        line += f"; --sla adds up to {SLA_MAX_PROBES} probes and {CEILING_REPEAT} repeats of the ceiling per setup"
    return line


def _new_study(app, fs_list, setups_file, suite_name, workload_names, suite_file, size, runtime, sweeps, repeat, label, keep_files):
    from ..run import runner
    from ..study import matrix as mx
    from ..study.setups import load_setups_file, setups_from_fs_list

    if bool(fs_list) == bool(setups_file):
        raise UsageError("give the setups with either --fs LIST or --setups FILE")
    setups = setups_from_fs_list(fs_list) if fs_list else load_setups_file(setups_file)
    from .common import chosen_workloads

    workloads, suite = chosen_workloads(run_catalog(suite_file, suite_name, workload_names), suite_name, workload_names)
    from ..suites.sweep import expand, parse_sweep

    workloads = expand(workloads, [parse_sweep(s) for s in sweeps])
    overrides = dataclasses.replace(overrides_from(size, runtime), extra=runner.INTERVAL_LOG_OPTIONS)
    label = mx.validate_label(label) if label is not None else mx.default_label(app.env.clock)
    from .common import default_repeat

    if repeat is None:
        repeat = default_repeat(app.env.environ)
    return mx.Study(
        label=label, setups=setups, workloads=workloads, overrides=overrides,
        repeat=runner.Repeat(count=repeat), suite=suite, keep_files=keep_files,
    )  # fmt: skip


def _study_records(store, study):
    """Every stored result of the study's runs, in setup order, and each run's name."""
    from ..study.plan import setup_label, study_runs

    runs = study_runs(store, study.label)
    records, names = [], {}
    for setup in study.setups:
        info = runs.get(setup.name)
        if info is None:
            continue
        names[info.run_id] = setup_label(study.label, setup.name)
        records.extend(store.results(info.run_id))
    return records, names


def _show(app: App, study, outcome, records, names, as_json: bool) -> None:
    if as_json:
        print_json(app, {
            "study": study.label,
            "setups": [dataclasses.asdict(o) for o in (outcome.setups if outcome else ())],
            "results": public_records(records),
        })  # fmt: skip
        return
    if outcome is not None:
        for o in outcome.setups:
            what = "skipped (complete already)" if o.skipped else o.status + (f": {o.reason}" if o.reason else "")
            app.out(f"setup {o.setup}: run {o.run_id}, {what}")
    if not records:
        return
    if study.curve is not None:  # steps every setup ran, point by point; SLA probes run at each setup's own rates
        per_run = [{r.workload for r in records if r.run_id == rid} for rid in names]
        common = set.intersection(*per_run) if per_run else set()
        left = {r.workload for r in records} - common
        records = [r for r in records if r.workload in common]
        if left:
            app.out(f"compared step by step: {len(common)} load step(s) every setup ran; {len(left)} SLA probe(s) and "
                    "ceiling run(s) at each setup's own rates are in show and the report")  # fmt: skip
        if not records:
            return
    from .. import compare
    from ..metrics import headlines_of
    from ..render.compare import format_compare_table

    groups = compare.configurations(records, names)
    cmp = compare.compare(groups)
    heads = headlines_of(records)
    for line in compare.verdict_lines(cmp, heads, compare.finding_caveats({c.key: list(m) for c, m in groups})):
        app.out(line)
    app.console(width=120).print(format_compare_table(cmp, compare.headline_rows(cmp, heads)))
    if any(cell is not None and cell.summary.n < 2 for row in cmp.rows for cell in row.cells):
        app.out("with single runs no significance can be claimed; use --repeat 3 or more")
    app.out(f"results stored in {app.db_url} as runs labelled {study.label}/SETUP "
            f"(storbench compare --label-prefix {study.label}/)")  # fmt: skip


def _write_report(app: App, study, names, report_path) -> None:
    from pathlib import Path

    from .report import load, render_html, write_file

    with contextlib.closing(app.open_store()) as store:
        data = load(store, list(names))
    if not data.records:
        return
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", study.label)
    out = Path(app.env.cwd, report_path or f"storbench-study-{safe}.html")
    write_file(out, render_html(app, data, f"storbench study {study.label}"))
    app.err(f"report: {out}")
