"""``storbench run``: a suite on targets (here or on fio servers), stored workload by workload, with live progress and the report at the end."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from ..errors import Interrupted, StorbenchError, UsageError
from ..model import JobSpec, Overrides, Repeat, Target, Workload
from .common import (
    App,
    DescribeOnce,
    chosen_workloads,
    default_repeat,
    headlines_of,
    overrides_from,
    print_json,
    public_records,
    reconcile,
    resolve_runs,
    run_catalog,
)

if TYPE_CHECKING:
    from ..model import ResultRecord
    from ..run.live import LivePublisher
    from ..run.runner import RunOutcome
    from ..store import Store

# --------------------------------------------------------------------------- run


class CliReporter:
    """Live progress on stderr: one bar per workload with ETA and fio's current rates."""

    def __init__(self, app: App, show_progress: bool, planned_s: float | None = None) -> None:
        import time

        self.app = app
        #: the run's expected duration (plan.py) and its start: the whole run's ETA beside the workload's
        self.planned_s = planned_s
        self.started = time.monotonic()
        self._console = None
        self.show = show_progress
        self.progress = None
        self.task = None
        #: (check, severity) -> how many workloads had it (said once, see workload_done)
        self.said: dict[tuple[str, str], int] = {}
        #: the run's live state in the store (storbench serve's live page), once the run has an id
        self.live: LivePublisher | None = None
        self._pending_live: tuple[Any, int] | None = None
        self._queued_live: list[tuple[str, tuple]] = []
        self._live_lock = threading.Lock()

    @property
    def console(self):
        """The console of progress and notes, made when first printed to (rich's import, 30 ms,
        is then not in the run's start-up)."""
        if self._console is None:
            self._console = self.app.console(err=True)
        return self._console

    def __enter__(self):
        if self.show:
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
            )

            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("eta {task.fields[eta]}"),
                TextColumn("run eta {task.fields[run_eta]}"),
                TextColumn("{task.fields[rate]}"),
                console=self.console,
                transient=True,
            )
            self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.__exit__(*exc)

    def publish_live(self, store, run_id: int, total: int, kind: str = "run", study=None) -> None:
        """From now on, publish the run's live state through ``store`` (see storbench.run.live)."""
        from ..run.live import LivePublisher

        self.live = LivePublisher(store, run_id, total=total, planned_s=self.planned_s, kind=kind, study=study)

    def publish_live_when_ready(self, pending, total: int) -> None:
        """:meth:`publish_live` once ``pending`` (a :class:`_PendingStore`) has opened the store;
        what happens before is published then, in order."""
        self._pending_live = (pending, total)

    def flush_live(self) -> None:
        """What waited for the store (see :meth:`publish_live_when_ready`), published now."""
        if self.live is None and self._pending_live is not None and self._queued_live:
            with self._live_lock:
                if not self._queued_live:
                    return
                method, args = self._queued_live.pop()
            self._live(method, *args)

    def _live(self, method: str, *args) -> None:
        if self.live is None and self._pending_live is not None:
            with self._live_lock:  # fio's status lines arrive on another thread
                if self._pending_live is not None:
                    pending, total = self._pending_live
                    self._queued_live.append((method, args))
                    if not pending.ready() or pending.failure() is not None:
                        return
                    store, run_id = pending.get()
                    self.publish_live(store, run_id, total=total)
                    self._pending_live = None
                    queued, self._queued_live = self._queued_live, []
                    for method_, args_ in queued:
                        self._publish(method_, *args_)
                    return
        self._publish(method, *args)

    def _publish(self, method: str, *args) -> None:
        if self.live is None:
            return
        was = self.live.broken
        getattr(self.live, method)(*args)
        if self.live.broken and not was:
            self.console.print(f"  note: {self.live.broken}", highlight=False, markup=False)

    def workload_started(self, workload, target, index, total, repetition) -> None:
        self._live("started", workload.name, target.display, index, total, repetition)
        desc = f"[{index + 1}/{total}] {workload.name}" + (f" #{repetition + 1}" if repetition else "")
        if self.progress is not None:
            if self.task is not None:
                self.progress.remove_task(self.task)
            self.task = self.progress.add_task(desc, total=100.0, eta="?", rate="", run_eta=self._run_eta())
        else:
            self.app.err(f"{desc} on {target.display} ...")

    def _run_eta(self) -> str:
        import time

        if not self.planned_s:
            return "?"
        left = max(0, round(self.planned_s - (time.monotonic() - self.started)))
        return f"{left // 60}m{left % 60:02d}s"

    def status(self, status) -> None:
        self._live("status", status)
        if self.progress is None or self.task is None:
            return
        fields = {"run_eta": self._run_eta()}
        if status.eta_s is not None:
            fields["eta"] = f"{status.eta_s // 60}m{status.eta_s % 60:02d}s"
        rate = " ".join(x for x in (status.bw_text, f"{status.iops_text} IOPS" if status.iops_text else None) if x)
        if rate:
            fields["rate"] = rate
        if status.percent is not None:
            self.progress.update(self.task, completed=status.percent, **fields)
        elif fields:
            self.progress.update(self.task, **fields)

    def workload_done(self, record: ResultRecord) -> None:
        self._live("done", record)
        from ..render.terminal import direction_rows
        from ..units import fmt_bw, fmt_iops, fmt_ns

        parts = []
        for _job, d in direction_rows(record):
            lat = d.lat_ns or d.clat_ns
            parts.append(
                f"{d.direction} {fmt_iops(d.iops)} IOPS {fmt_bw(d.bw_bytes)} lat {fmt_ns(lat.mean_ns if lat else None)}"
            )
        rep = f" #{record.repetition + 1}" if record.repetition else ""
        self.console.print(f"  done {record.workload}{rep}: " + "; ".join(parts), highlight=False, markup=False)
        for f in record.findings:
            if f.severity == "info":
                continue
            key = (f.check, f.severity)
            if f.severity != "invalid" and key in self.said:
                self.said[key] += 1  # said already for this run: counted, summed up at the end
                continue
            self.said.setdefault(key, 1)
            self.console.print(f"    {f.severity}: {f.message}", highlight=False, markup=False)


    def note(self, text: str) -> None:
        self._live("note", text)
        self.console.print(f"  {text}", highlight=False, markup=False)

    def workload_failed(self, workload, target, reason) -> None:
        self._live("failed", workload.name, target.display, reason)
        self.console.print(f"  FAILED {workload.name} on {target.display}: {reason}", highlight=False, markup=False)


def _workload_to_meta(w) -> dict:
    return {"name": w.name, "description": w.description, "options": [list(o) for o in w.options], "headline": w.headline, "origin": w.origin}


def _workload_from_meta(d: dict):
    from ..model import Workload

    return Workload(
        name=d["name"], description=d["description"], options=tuple((k, v) for k, v in d["options"]),
        headline=d.get("headline", "iops"), origin=d.get("origin", "built-in"),
    )


@dataclass(frozen=True)
class _Request:
    """Everything a run needs, from the command line or from a stored run (--resume)."""

    workloads: tuple[Workload, ...]
    target_paths: tuple[str, ...]
    overrides: Overrides
    repeat: Repeat
    label: str | None
    suite: str | None
    keep_files: bool
    telemetry: bool
    destroy: tuple[str, ...]
    #: --host/--hosts: storbench.run.hosts.Host records (empty: a local run)
    hosts: tuple = ()
    #: --prefill: one sequential write over each target's test area before its workloads
    prefill: bool = False
    #: --ceph-conf, --ceph-client: how rbd: and rados: targets reach their cluster
    ceph_conf: str | None = None
    ceph_client: str | None = None
    ceph_timeout_s: int | None = None
    #: --precondition: SNIA's purge and two sequential writes over each target before its workloads
    precondition: bool = False
    #: --until steady: rounds of every workload until SNIA's steady-state rule holds (steady.py)
    until_steady: bool = False

    @property
    def guarded_workloads(self) -> tuple:
        """What will write to the targets: the workloads, and the prefill and precondition passes when asked for."""
        from ..run.precondition import PRECONDITION_WORKLOAD
        from ..run.runner import PREFILL_WORKLOAD

        return (tuple(self.workloads) + ((PREFILL_WORKLOAD,) if self.prefill else ())
                + ((PRECONDITION_WORKLOAD,) if self.precondition else ()))  # fmt: skip

    def meta(self) -> dict:
        return {
            **({"prefill": True} if self.prefill else {}),
            **({"precondition": True} if self.precondition else {}),
            **({"until": "steady"} if self.until_steady else {}),
            **({"ceph_conf": self.ceph_conf} if self.ceph_conf else {}),
            **({"ceph_client": self.ceph_client} if self.ceph_client else {}),
            **({"ceph_timeout_s": self.ceph_timeout_s} if self.ceph_timeout_s is not None else {}),
            **({"hosts": [h.to_meta() for h in self.hosts]} if self.hosts else {}),
            "workloads": [_workload_to_meta(w) for w in self.workloads],
            "targets": list(self.target_paths),
            "overrides": {"size": self.overrides.size, "runtime": self.overrides.runtime, "extra": [list(e) for e in self.overrides.extra]},
            "repeat": dataclasses.asdict(self.repeat),
            "keep_files": self.keep_files,
            "telemetry": self.telemetry,
            "destroy_data": list(self.destroy),
        }

    @classmethod
    def from_meta(cls, meta: dict, label: str | None, suite: str | None) -> _Request:
        from ..run.runner import Repeat

        try:
            ov = meta["overrides"]
            return cls(
                workloads=tuple(_workload_from_meta(w) for w in meta["workloads"]),
                target_paths=tuple(meta["targets"]),
                overrides=Overrides(size=ov["size"], runtime=ov["runtime"], extra=tuple((k, v) for k, v in ov.get("extra", []))),
                repeat=Repeat(**meta["repeat"]),
                label=label,
                suite=suite,
                keep_files=bool(meta.get("keep_files")),
                telemetry=bool(meta.get("telemetry", True)),
                destroy=tuple(meta.get("destroy_data", [])),
                hosts=_hosts_from_meta(meta.get("hosts", [])),
                prefill=bool(meta.get("prefill", False)),
                precondition=bool(meta.get("precondition", False)),
                until_steady=meta.get("until") == "steady",
                ceph_conf=meta.get("ceph_conf"),
                ceph_client=meta.get("ceph_client"),
                ceph_timeout_s=meta.get("ceph_timeout_s"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if "setup" in meta or "study" in meta:
                raise UsageError("this run belongs to a matrix study; continue it with 'storbench matrix --resume STUDY'") from None
            raise UsageError(f"this run cannot be resumed: it was stored without its plan ({exc})") from None


def _hosts_from_meta(items) -> tuple:
    from ..run.hosts import Host

    return tuple(Host.from_meta(d) for d in items)


@click.command()
@click.option("--suite", "suite_name", metavar="NAME", help="Suite to run (default: quick). See 'storbench suites'.")
@click.option("--workload", "workload_names", metavar="NAME", multiple=True, help="Run only this workload (repeatable).")
@click.option("--suite-file", type=click.Path(dir_okay=False), help="TOML file with your own workloads and suites.")
@click.option("--target", "targets", metavar="PATH|URI", multiple=True, help="Directory, file, block device, NBD export (nbd://HOST[:PORT][/EXPORT], nbd+unix:///EXPORT?socket=PATH), GlusterFS volume (gluster://HOST/VOLUME), RBD image (rbd:POOL/IMAGE) or RADOS pool (rados:POOL) to test (repeatable). Default: a scratch directory here.")
@click.option("--destroy-data", "destroy", metavar="DEVICE|URI", multiple=True, help="Allow write workloads on this exact block device, export, image or pool, destroying its data.")
@click.option("--ceph-conf", metavar="PATH", type=click.Path(dir_okay=False), help="The Ceph cluster's ceph.conf for rbd: and rados: targets (default: $CEPH_CONF, else /etc/ceph/ceph.conf).")
@click.option("--ceph-client", metavar="NAME", help="The Ceph client (user) for rbd: and rados: targets (default: admin).")
@click.option("--ceph-timeout", "ceph_timeout", type=click.IntRange(min=1, max=3600), metavar="SECONDS", help="How long one Ceph operation may wait for the cluster before the workload fails (default: 15).")
@click.option("--prefill", is_flag=True, help="Write each target's test area once (sequential 1 MiB writes) before its workloads, so reads never meet unwritten blocks.")
@click.option("--host", "host_values", metavar="HOST[:PORT]", multiple=True, help="Run on this fio server ('storbench agent') instead of here (repeatable: all at once). --target is then a directory ON the hosts (default: the agent's directory).")
@click.option("--hosts", "hosts_file", metavar="FILE", type=click.Path(dir_okay=False), help="TOML inventory of fio servers ([host.NAME] address, port, target, label); see docs/many-hosts.md.")
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
@click.pass_context
def run(ctx, suite_name, workload_names, suite_file, targets, destroy, ceph_conf, ceph_client, ceph_timeout, prefill, host_values, hosts_file, size, runtime, sweeps, label, keep_files, dry_run, show_plan, as_json, repeat, until_rse, until, precondition, min_runs, max_runs, no_telemetry, resume, report_path, no_report, progress):
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
    if resume is not None:
        given = [
            name for name in ("suite_name", "workload_names", "suite_file", "targets", "size", "runtime", "sweeps", "label", "repeat", "until_rse", "dry_run", "destroy", "prefill", "ceph_conf", "ceph_client", "ceph_timeout")
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
                _refuse_resuming_a_live_run(run_id, store.run_owner(run_id))
            request = _Request.from_meta(store.run_meta(run_id), info.label, info.suite)
        _execute(app, request, as_json=as_json, progress=progress, resume_run=run_id, report_path=report_path, no_report=no_report)
        return

    workloads, suite_label = chosen_workloads(run_catalog(suite_file, suite_name, workload_names), suite_name, workload_names)
    from ..suites.sweep import expand, parse_sweep

    workloads = expand(workloads, [parse_sweep(s) for s in sweeps])
    overrides = overrides_from(size, runtime)
    hosts = _parse_hosts(host_values, hosts_file, targets, destroy)
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
    request = _Request(
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
    if dry_run:
        _dry_run(app, request)
        return
    if show_plan:
        _show_plan(app, request)
        return
    _execute(app, request, as_json=as_json, progress=progress, resume_run=None, report_path=report_path, no_report=no_report)


def _parse_hosts(host_values, hosts_file, targets, destroy) -> tuple:
    """--host values and the --hosts inventory, validated (pure apart from reading the file)."""
    if not host_values and not hosts_file:
        return ()
    from ..run.hosts import check_remote_target, combine_hosts, load_inventory, parse_host

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


def _remote_targets(request: _Request) -> tuple[Target, ...]:
    """Client runs: the --target is a directory ON the hosts, never looked at here; without
    one, the test file goes into each agent's working directory (a relative path)."""
    return tuple(Target(kind="dir", path=t) for t in request.target_paths) or (Target(kind="dir", path="."),)


def _resolve_targets(app: App, request: _Request) -> tuple[Target, ...]:
    from ..run import runner

    if request.hosts:
        return _remote_targets(request)
    from ..targets.local import check_requested_size

    resolved = tuple(
        runner.resolve_target(t, destroy=request.destroy, workloads=request.guarded_workloads, db_path=app.db_url,
                              ceph_conf=request.ceph_conf, ceph_client=request.ceph_client, ceph_timeout_s=request.ceph_timeout_s)
        for t in request.target_paths
    )
    for target in resolved:
        check_requested_size(target, request.overrides.size)
    return resolved


def _refuse_resuming_a_live_run(run_id: int, owner) -> None:
    """A run whose process still runs it (or may: another host's) is not resumed beside it."""
    from ..store.owner import gone

    if not isinstance(owner, dict) or owner.get("pid") == os.getpid():
        return
    state = gone(owner)
    if state is False:
        raise UsageError(f"run {run_id} is still running (storbench pid {owner.get('pid')} on this host); "
                         "wait for it to end or stop it (Ctrl-C or kill PID), then resume")
    if state is None:
        raise UsageError(f"run {run_id} is marked running by storbench pid {owner.get('pid')} on {owner.get('host')}, "
                         "which cannot be checked from here; resume it on that host")


#: what the first workload needs once its fio has run (its findings, its result line, its live
#: state, its interval logs): imported on the store's thread while that fio runs, not after it
USED_AFTER_FIO = (
    "storbench.checks",
    "storbench.fio.json",
    "storbench.fio.logs",
    "storbench.render.terminal",
    "storbench.run.live",
    "storbench.serialize",
)


def _warm_up(names: Sequence[str]) -> None:
    """Import ``names`` and print one line through rich into nothing (its first line imports
    and builds ~20 ms of rendering machinery)."""
    try:
        for name in names:
            importlib.import_module(name)
        import io

        from rich.console import Console

        Console(file=io.StringIO(), width=160, force_terminal=False, highlight=False).print("  done", markup=False)
    except Exception:  # a warm-up only: what fails here fails again where it is used, and is said there
        return


class _PendingStore:
    """The store opened (and the run's row created) on another thread: ``opener`` returns
    ``(store, run_id)``.  The thread starts when the fio executor first asks for
    :meth:`failure` (50 ms into the first fio, which then spends ~0.3 s starting up: the
    other core is idle) or when the store is needed, whichever comes first.  Its error, if
    any, is raised where the store is needed, and :meth:`failure` lets the executor stop the
    first workload as soon as it is known.  Once the store is open, a second thread imports
    what the first workload needs after its fio (:data:`USED_AFTER_FIO`)."""

    def __init__(self, opener: Callable[[], tuple[Store, int]], on_opened: Callable[[], None] = lambda: None) -> None:
        self._on_opened = on_opened  #: called on the thread once the store is open
        self._value: tuple[Store, int] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, args=(opener,), name="storbench-store-open", daemon=True)
        self._lock = threading.Lock()
        self._started = False

    def _start(self) -> None:
        with self._lock:
            if not self._started:
                self._started = True
                self._thread.start()

    def _work(self, opener: Callable[[], tuple[Store, int]]) -> None:
        try:
            self._value = opener()
        except BaseException as exc:  # handed to the main thread, raised there
            self._error = exc
        else:
            self._on_opened()
            threading.Thread(target=_warm_up, args=(USED_AFTER_FIO,), name="storbench-warm-up", daemon=True).start()

    def ready(self) -> bool:
        return self._started and not self._thread.is_alive()

    def failure(self, wait: bool = False) -> BaseException | None:
        """The error opening the store raised, once it is known (``wait``: wait for it)."""
        self._start()
        if wait:
            self._thread.join()
        return self._error if self.ready() else None

    def get(self) -> tuple[Store, int]:
        self._start()
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value

    def run_id(self) -> int:
        return self.get()[1]

    def close(self) -> None:
        if self._started:
            self._thread.join()
        if self._value is not None:
            self._value[0].close()


class _StoreWhenReady:
    """The runner's sink before the store has opened: each method waits for it when called."""

    def __init__(self, pending: _PendingStore) -> None:
        self._pending = pending

    def __getattr__(self, name: str):
        def call(*args, **kwargs):
            return getattr(self._pending.get()[0], name)(*args, **kwargs)

        return call


def _mark_incomplete(store, run_id: int, reason: str) -> None:
    """Mark the run incomplete on the way out of a failure; when the store cannot take even that
    (its disk still full, its server gone), the failure that stopped the run is what is said."""
    from ..errors import StoreError

    with contextlib.suppress(StoreError):
        store.finish_run(run_id, "incomplete", reason=reason)


def _dry_run(app: App, request: _Request) -> None:
    from ..run import runner

    resolved = _resolve_targets(app, request)
    shown = resolved or (Target(kind="dir", path=os.path.join(app.env.cwd, ".storbench-scratch-XXXXXX"), scratch=True),)
    plan = runner.RunPlan(workloads=request.workloads, targets=shown, overrides=request.overrides, label=request.label)
    executor = None

    def engine_for(target: Target) -> str:
        nonlocal executor
        from ..run.engines import probe_ioengine

        if request.hosts:  # probed on the hosts when the run starts
            return "libaio"
        executor = executor or runner.SubprocessFio(app.env.fio_path)
        where = target.path if os.path.isdir(target.path) else (os.path.dirname(target.path) if target.kind == "file" else app.env.cwd)
        return probe_ioengine(executor.path, where)

    for spec in runner.plan_jobs(plan, engine_for):
        if request.hosts:
            from ..run.hosts import job_for_host

            for host in request.hosts:
                app.out(f"# workload {spec.workload.name} on host {host.display} ({host.endpoint}), directory {host.target or spec.target.display}")
                if any(k == "ioengine" and v == "auto" for k, v in spec.workload.options):
                    app.out("# ioengine=auto: the engine is probed on the hosts when the run starts")
                app.out(job_for_host(spec.job_text, host.target).rstrip("\n"))
                app.out("")
            continue
        app.out(f"# workload {spec.workload.name} on {spec.target.display}")
        app.out(spec.job_text.rstrip("\n"))
        app.out("")


def _repetitions(request: _Request) -> int:
    r = request.repeat
    return r.min_runs if r.until_rse_pct is not None else r.count


def _estimates(app: App, specs, request: _Request, executor, *, probe: bool) -> list:
    """The plan of every job (plan.py); size-based ones big enough to matter are probed
    (``probe``, runs here only) for a few seconds each, once per workload and target."""
    from ..jobs import plan
    from ..run import runner

    out = []
    rates: dict[tuple[str, str], float | None] = {}
    for spec in specs:
        options = dict(spec.options)
        rate = None
        if probe and plan.needs_probe(options):
            key = (spec.workload.name, spec.target.display)
            if key not in rates:
                app.err(f"probing {spec.workload.name} on {spec.target.display} for {runner.PROBE_RUNTIME} to estimate its duration ...")
                rates[key] = runner.probe_rate(executor, spec)
            rate = rates[key]
        out.append(plan.estimate(spec.workload.name, spec.target.display, options, _repetitions(request), rate))
    return out


def _show_plan(app: App, request: _Request) -> None:
    """``run --plan``: every job's expected duration and the total; nothing is stored."""
    from ..jobs import plan
    from ..run import runner

    if request.hosts:
        raise UsageError("--plan probes the targets from here; it cannot be used with --host/--hosts")
    executor = runner.SubprocessFio(app.env.fio_path)
    executor.version()
    resolved = _resolve_targets(app, request)
    with contextlib.ExitStack() as stack:
        if not resolved:
            resolved = (stack.enter_context(runner.scratch_target(app.env.cwd)),)
        run_plan = runner.RunPlan(workloads=request.workloads, targets=resolved, overrides=request.overrides, label=request.label)

        def engine_for(target: Target) -> str:
            from ..run.engines import probe_ioengine

            where = target.path if target.kind == "dir" else os.path.dirname(target.path)
            return probe_ioengine(executor.path, where)

        specs = runner.plan_jobs(run_plan, engine_for)
        for line in plan.format_plan(_estimates(app, specs, request, executor, probe=True)):
            app.out(line)


def _prepare_hosts(app: App, request: _Request):
    """Client runs: pre-flight every host (reachable? same fio?); hosts that fail are
    left out with one line each, and the rest run.  Returns (ClientFio, Preflight)."""
    from ..run.hosts import ClientFio, Preflight, check_hosts

    probe_executor = ClientFio(request.hosts, app.env.fio_path)
    local_version = probe_executor.version()
    preflight = Preflight(tuple(check_hosts(request.hosts, probe_executor.path, local_version)))
    for check in preflight.left_out:
        app.err(f"host {check.host.display}: left out: {check.problem}")
    if not preflight.usable:
        first = preflight.left_out[0]
        raise StorbenchError(f"no host can run ({len(preflight.left_out)} left out); first: host {first.host.display}: {first.problem}")
    for check in preflight.checks:
        if check.ok and check.facts is not None:
            f = check.facts
            app.err(f"host {check.host.display}: {f.hostname or '?'} ({f.os or '?'} {f.arch or '?'}), {f.fio_version}")
    return ClientFio(preflight.usable, app.env.fio_path), preflight


def _execute(app: App, request: _Request, *, as_json: bool, progress, resume_run: int | None, report_path, no_report: bool) -> None:
    from ..run import runner

    # A run that opens its store while the first fio starts (below) leaves the store alone
    # until then; else the store module (SQLAlchemy: a quarter of a second) is imported on
    # another thread while this one waits for fio (--version, the ioengine probe).
    if resume_run is not None or request.until_steady or request.hosts:
        threading.Thread(target=importlib.import_module, args=("storbench.store.database",), daemon=True).start()
    preflight = None
    if request.hosts:
        executor, preflight = _prepare_hosts(app, request)
    else:
        executor = runner.SubprocessFio(app.env.fio_path)
    show_progress = app.env.show_progress if progress is None else progress
    resolved = _resolve_targets(app, request)
    label = request.label
    with contextlib.ExitStack() as stack:
        if not resolved:
            resolved = (stack.enter_context(runner.scratch_target(app.env.cwd)),)
        plan = runner.RunPlan(workloads=request.workloads, targets=resolved, overrides=request.overrides, label=label, keep_files=request.keep_files, repeat=request.repeat)

        def engine_for(target: Target) -> str:
            from ..run.engines import probe_ioengine

            if preflight is not None:
                return executor.probe_ioengine(target.path)
            where = target.path if target.kind == "dir" else os.path.dirname(target.path)
            return probe_ioengine(executor.path, where)

        specs = runner.plan_jobs(plan, engine_for)
        capped = sorted({ln[len("# storbench: "):].split(" capped at ")[1] for s in specs if s.target.kind == "file"
                         for ln in s.job_text.splitlines() if ln.startswith("# storbench: ") and " capped at " in ln})
        for what in capped:  # a file target is never grown: said once for the run
            app.err(f"note: workload sizes capped at {what} (a file target is read as it is, never grown)")
        from ..jobs.plan import format_total, total_seconds

        estimates = _estimates(app, specs, request, executor, probe=preflight is None and resume_run is None)
        if resume_run is None:
            app.err(format_total(estimates))
        if request.repeat.count == 1 and request.repeat.until_rse_pct is None and resume_run is None:
            app.err("note: one run per workload (--repeat 1): no spread or confidence interval can be given")
        # asked for only now: ``fio --version``, started before the suites were read, has answered
        # while the run was planned (waiting for it first put its 25 ms before the first fio)
        fio_version = executor.version()
        if preflight is None:  # client runs: the targets are on the hosts
            runner.check_free_space(specs)
        else:
            stack.callback(_remove_remote_files, app, executor, specs, request.keep_files)
        overlap = resume_run is None and not request.until_steady and preflight is None and isinstance(executor, runner.SubprocessFio)

        def open_and_create() -> tuple[Store, int]:
            store = app.open_store()
            try:
                reconcile(app, store)
                meta = {"host": runner.host_facts(fio_version), "argv": sys.argv[1:], **request.meta()}
                if preflight is not None:  # what each fio server said about itself, and who was left out
                    meta["host_checks"] = preflight.meta()
                return store, store.create_run(label=label, kind="run", suite=request.suite, meta=meta)
            except BaseException:
                store.close()
                raise

        previous: dict[tuple[str, str], list[ResultRecord]] = {}
        pending: _PendingStore | None = None
        if overlap:
            # the store (SQLAlchemy's import and the run's row: a quarter of a second) is opened on
            # another thread while the first fio starts; fio is stopped if it cannot be opened
            def opened() -> None:  # fio is then waited for as usual (not in 50 ms steps)
                executor.abort_check = None

            pending = _PendingStore(open_and_create, on_opened=opened)
            stack.callback(pending.close)
            executor.abort_check = pending.failure
            store: Any = _StoreWhenReady(pending)
            run_id: Any = pending.run_id
        elif resume_run is None:
            store, run_id = open_and_create()
            stack.callback(store.close)
        else:
            store = stack.enter_context(contextlib.closing(app.open_store()))
            reconcile(app, store)
            run_id = resume_run
            for rec in store.results(run_id):
                # a scratch directory is new each time: results on the old one count for the new one
                target = (rec.target or "") if request.target_paths else resolved[0].display
                if rec.host in (None, "all"):
                    previous.setdefault((rec.workload, target), []).append(rec)
            store.reopen_run(run_id)
        reporter = stack.enter_context(CliReporter(app, show_progress, planned_s=total_seconds(estimates)[0]))
        if pending is None:
            reporter.publish_live(store, run_id, total=len(specs))
        else:
            reporter.publish_live_when_ready(pending, total=len(specs))
        try:
            if request.precondition and resume_run is None:
                from ..run.precondition import precondition

                for target in resolved:
                    for line in precondition(target, executor, request.overrides, request.workloads[0]):
                        reporter.note(line)
            if request.until_steady:
                outcome = _until_steady(app, run_id, specs, executor, store, reporter, label, request, previous)
            else:
                outcome = runner.execute(
                    run_id,  # an int, or (the store opening) a function giving it once fio has run
                    specs,
                    executor=executor,
                    sink=store,
                    reporter=reporter,
                    label=label,
                    clock=app.env.clock,
                    keep_files=request.keep_files,
                    repeat=request.repeat,
                    telemetry=_telemetry(request, store, remote=preflight is not None),
                    previous=previous,
                    prefill=request.prefill,
                )
        except BaseException as exc:
            if pending is not None:
                if (failed := pending.failure(wait=True)) is not None:  # the store never opened
                    raise failed from None
                store, run_id = pending.get()
            if not isinstance(exc, StorbenchError):
                _mark_incomplete(store, run_id, f"storbench stopped: {type(exc).__name__}")
                raise
            _mark_incomplete(store, run_id, str(exc))
            if isinstance(exc, Interrupted):  # said with the command that finishes it
                raise Interrupted(f"{exc.message}; storbench run --resume {run_id} finishes it") from None
            raise
        if pending is not None:
            store, run_id = pending.get()
            reporter.flush_live()
        reason = _failure_reason(outcome, specs)
        status = "complete" if reason is None else ("incomplete" if outcome.stored or previous else "failed")
        store.finish_run(run_id, status, reason=reason)
        records = store.results(run_id)

    _print_run(app, records, run_id, label, as_json=as_json, hosts=preflight is not None)
    if not no_report and records:
        write_report(app, run_id, report_path)
    if reason is not None:
        raise StorbenchError(reason)


def _failure_reason(outcome: RunOutcome, specs: Sequence[JobSpec]) -> str | None:
    """What the run's failed workloads come to, in one line (None: none failed)."""
    if not outcome.failures:
        return None
    first = outcome.failures[0]
    return (f"{len(outcome.failures)} of {len(specs)} workload(s) failed; first: "
            f"workload {first.workload!r} on {first.target}: {first.reason}")  # fmt: skip


def _print_run(app: App, records: Sequence[ResultRecord], run_id: int, label: str | None, *, as_json: bool,
               hosts: bool) -> None:  # fmt: skip
    """The run's figures as the person asked: JSON, or the glance (one target) or the table, the
    findings said once for the run, each host's line (client runs) and where it is stored."""
    if as_json:
        print_json(app, public_records(records))
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
            from ..run.hosts import format_host_lines

            for line in format_host_lines(records):
                app.out(line)
        app.out(f"results stored in {app.db_url} as run {run_id} (storbench show {run_id})")


def _until_steady(app: App, run_id, specs, executor, store, reporter, label, request: _Request, previous):
    """``--until steady``: rounds of every workload (one repetition each) until SNIA's rule
    (steady.py) holds for each workload's headline figure over its last 5 rounds, at most 25
    rounds; the window of each workload is stored in the run's metadata."""
    from ..metrics import headline_value
    from ..run import runner
    from ..stats.steady import MAX_ROUNDS, steady_state
    telemetry = DescribeOnce(_telemetry(request, store, remote=False))
    history: dict[tuple[str, str], list[ResultRecord]] = {k: list(v) for k, v in previous.items()}
    verdicts: dict[str, dict] = {}
    open_specs = list(specs)
    stored, failures = [], []
    try:
        for round_no in range(MAX_ROUNDS):
            if not open_specs:
                break
            prev = {(s.workload.name, s.target.display): history.get((s.workload.name, s.target.display), []) for s in open_specs}
            rounds_done = min(len(v) for v in prev.values())
            outcome = runner.execute(
                run_id, open_specs, executor=executor, sink=store, reporter=reporter, label=label, clock=app.env.clock,
                keep_files=True, repeat=runner.Repeat(count=rounds_done + 1), telemetry=telemetry, previous=prev,
                prefill=request.prefill and round_no == 0,
            )  # fmt: skip
            stored += list(outcome.stored)
            failures += list(outcome.failures)
            ids = set(outcome.stored)
            for rec in store.results(run_id):
                if rec.result_id in ids:
                    history.setdefault((rec.workload, rec.target or ""), []).append(rec)
            still = []
            for spec in open_specs:
                key = (spec.workload.name, spec.target.display)
                recs = sorted(history.get(key, []), key=lambda r: r.repetition)
                values = [headline_value(r.fio, spec.workload.headline) for r in recs]
                series = [float(v) for v in values if v is not None]
                verdict = steady_state(series)
                name = spec.workload.name + (f" on {spec.target.display}" if len(specs) > len({s.workload.name for s in specs}) else "")
                verdicts[name] = {"series": series, "settled": verdict.settled, "window": list(verdict.window) if verdict.window else None,
                                  "average": verdict.average, "range_share": verdict.range_share, "slope_share": verdict.slope_share,
                                  "slope": verdict.slope, "intercept": verdict.intercept, "reason": verdict.reason,
                                  "headline": spec.workload.headline, "results": [r.result_id for r in recs]}  # fmt: skip
                if verdict.settled:
                    reporter.note(f"{name}: {verdict.reason}")
                elif any(f.workload == spec.workload.name for f in outcome.failures):
                    continue
                else:
                    still.append(spec)
            open_specs = still
        for spec in open_specs:
            name = spec.workload.name
            reporter.note(f"{name}: did not settle in {MAX_ROUNDS} rounds ({verdicts.get(name, {}).get('reason', '')})")
    finally:
        if not request.keep_files:
            runner.remove_test_files(specs)
        store.update_run_meta(run_id, {"steady": verdicts})
    return runner.RunOutcome(run_id=run_id, stored=tuple(stored), failures=tuple(failures))


def _telemetry(request: _Request, store, *, remote: bool):
    """What the runner learns about the storage: nothing here for client runs (the
    storage is on the hosts); else the local description, with the network ceilings
    ``storbench net`` measured, for the share-ceiling check."""
    from ..run import runner

    if remote or not request.telemetry:
        return runner.NoTelemetry()
    return runner.SystemTelemetry(net_ceiling_of=store.last_net_ceiling)


def _remove_remote_files(app: App, executor, specs, keep_files: bool) -> None:
    """Client runs: the test files are on the hosts; fio removes them there."""
    if keep_files:
        return
    for problem in executor.remove_test_files(s.job_text for s in specs):
        app.err(f"warning: {problem}")


def write_report(app: App, run_id: int, report_path: str | None) -> None:
    """The HTML report of a finished run (the report module may not be installed yet)."""
    try:
        from .report import write_run_report
    except ImportError:
        return
    path = report_path or os.path.join(app.env.cwd, f"storbench-run-{run_id}.html")
    written = write_run_report(app, run_id, path)
    app.err(f"report: {written}")
