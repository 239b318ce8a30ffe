"""Edge: the execute loop. It runs each job spec in order, each repeated as the run's rule says,
stores each result the moment it exists, and cleans up after the last one.

The loop's rooms: :mod:`.measure` (one measurement and its records), :mod:`.repeat`
(repetitions and convergence), :mod:`.telemetry` (what is recorded around fio), :mod:`.space`
(files, space, flushes, clean-up), :mod:`.prepare` (prefill, layout, the speed probe),
:mod:`.aggregate` (the per-host merge), :mod:`.failures` (fio's failures in words),
:mod:`.outcome` (the reporter, the sink, the outcome). Every workload's result is committed to the
store the moment fio finishes it, so an interrupt or a crash later loses nothing already measured.
"""

from __future__ import annotations

import dataclasses
import os
import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import __version__
from ..errors import Interrupted
from ..jobs.jobfile import build_job, in_every_section
from ..jobs.load import build_load_job
from ..model import JobSpec, Repeat, Target
from ..process import signals
from .failures import fio_failure_reason
from .fioexec import FioExecutor, FioInvocation, SubprocessFio, raise_if_stopping, run_fio
from .measure import INTERVAL_LOG_OPTIONS, measure_load, measure_once, store_results
from .outcome import Failure, Reporter, ResultSink, RunOutcome, RunPlan, SilentReporter
from .prepare import (
    PREFILL_WORKLOAD,
    PROBE_RUNTIME,
    deletes_objects,
    lay_out_where_fio_cannot,
    prefill_target,
    probe_rate,
    remove_remote_test_files,
    seed_objects,
    write_objects_first,
)
from .repeat import ONCE, next_step, not_converged, repetitions, settled, with_finding
from .serverwatch import ServerWatch
from .space import (
    artifacts,
    check_free_space,
    remove_artifacts,
    remove_test_files,
    scratch_target,
    target_identity,
)
from .telemetry import DescribeOnce, NoTelemetry, SystemTelemetry, Telemetry

if TYPE_CHECKING:
    from ..record import ResultRecord
    from ..storage import StorageInfo

#: the names callers take from here: the loop's interface (its rooms hold the rest)
__all__ = [
    "INTERVAL_LOG_OPTIONS", "ONCE", "PREFILL_WORKLOAD", "PROBE_RUNTIME", "DescribeOnce", "ExecuteContext", "Failure",
    "FioExecutor", "FioInvocation", "NoTelemetry", "Repeat", "Reporter", "ResultSink", "RunOutcome", "RunPlan",
    "SilentReporter", "SubprocessFio", "SystemTelemetry", "Telemetry", "check_free_space", "execute",
    "fio_failure_reason", "host_facts", "plan_jobs", "probe_rate", "remove_test_files", "run_fio", "scratch_target",
]  # fmt: skip


def host_facts(fio_version: str) -> dict:
    import socket  # on the store's thread, while the first fio starts

    return {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "fio_version": fio_version,
        "storbench_version": __version__,
    }


def plan_jobs(
    plan: RunPlan, engine_for: Callable[[Target], str | None]
) -> list[JobSpec]:
    """All job specs of a plan, target by target, in suite order."""
    from ..targets import kind_of

    specs = []
    for target in plan.targets:
        engine = None
        fixed = kind_of(target).engine is not None  # an NBD export: fio's nbd engine, nothing to probe
        for workload in plan.workloads:
            if not workload.is_fio:
                specs.append(build_load_job(workload, target, plan.overrides, pid=os.getpid()))
            elif workload.option("ioengine") == "auto" and not fixed:
                if engine is None:
                    engine = engine_for(target)
                specs.append(build_job(workload, target, plan.overrides, ioengine=engine))
            else:
                specs.append(build_job(workload, target, plan.overrides))
    return specs


@dataclass(frozen=True)
class ExecuteContext:
    """Everything :func:`execute` needs besides the jobs, in one record (a run, a steady-state
    round, a curve step and a matrix setup each make one).

    ``run_id`` may be a function giving it (the store still opening while the first fio
    starts): it is called when the first result is made, after fio ran.  ``previous`` holds
    the results a resumed run already has, by (workload, target): those repetitions are not
    run again.  ``prefill``: before the first workload on each target, one sequential write
    pass over its test area (:data:`PREFILL_WORKLOAD`, not stored as a result; a note says
    what it did).
    """

    run_id: int | Callable[[], int]
    executor: FioExecutor
    sink: ResultSink
    reporter: Reporter
    clock: Callable[[], str]
    label: str | None = None
    keep_files: bool = False
    repeat: Repeat = ONCE
    telemetry: Telemetry = field(default_factory=NoTelemetry)
    previous: Mapping[tuple[str, str], Sequence[ResultRecord]] = field(default_factory=dict)
    prefill: bool = False
    #: client/server (--hosts-required): fewer hosts measured a workload, and the run stops there
    hosts_required: int | None = None


def execute(specs: Sequence[JobSpec], ctx: ExecuteContext) -> RunOutcome:
    """Run every job spec in order (each repeated as ``ctx.repeat`` says), storing each
    result the moment it exists, with the storage description, the device activity
    and the findings of the checks.

    Raises :class:`Interrupted` on Ctrl-C/SIGTERM after cleaning up; results
    stored before the interrupt stay stored.
    """
    run_id, executor, sink, reporter, label, clock = ctx.run_id, ctx.executor, ctx.sink, ctx.reporter, ctx.label, ctx.clock
    keep_files, repeat, telemetry, previous, prefill = ctx.keep_files, ctx.repeat, ctx.telemetry, ctx.previous, ctx.prefill
    stored: list[int] = []
    failures: list[Failure] = []
    fio_version = executor.version()
    storage_by_target: dict[str, StorageInfo | None] = {}
    identity_by_target: dict[str, tuple[int, int] | None] = {}
    #: the server under each target that has one, watched while fio runs (serverwatch.py)
    watches: dict[str, ServerWatch | None] = {}
    local = not executor.remote  # client/server: the target path is on other hosts
    current = "(before the first workload)"
    artifacts_before = artifacts(specs)
    #: targets whose test file could not be laid out (disk full, I/O error): the reason
    broken: dict[str, str] = {}
    #: --hosts-required was not met: no further workload runs
    stop_now = False
    #: client/server: the spec index whose last repetition removes its test file on every host (each
    #: host's own file: hosts that may share a directory name theirs apart, run/inventory.file_tags)
    last_use = _last_uses(specs) if executor.remote and not keep_files and repeat.until_rse_pct is None else set()
    try:
        with signals.as_interrupt():
            for index, spec in enumerate(specs):
                current = spec.workload.name
                if spec.target.path in broken:  # nothing is measured on a file not fully laid out
                    reason = f"not run: {broken[spec.target.path]}"
                    failures.append(Failure(spec.workload.name, spec.target.display, reason))
                    reporter.workload_failed(spec.workload, spec.target, reason)
                    continue
                key = spec.target.path
                if key not in storage_by_target:
                    watches[key] = _server_watch(spec.target) if local else None
                    identity_by_target[key] = target_identity(spec.target)
                    storage_by_target[key] = telemetry.describe(spec.target, fio_version)
                    if local:
                        storage_by_target[key] = lay_out_where_fio_cannot(specs, spec.target, storage_by_target[key], reporter)
                    if prefill:
                        storage_by_target[key] = prefill_target(specs, spec.target, storage_by_target[key], executor, reporter)
                    storage_by_target[key] = write_objects_first(specs, spec.target, storage_by_target[key], executor, reporter)
                storage = storage_by_target[key]
                records: list[ResultRecord] = list(previous.get((spec.workload.name, spec.target.display), ()))
                if records and settled(repeat, records, spec.workload.headline):
                    continue  # resumed: this workload already has all its repetitions
                if stop_now:
                    break
                for repetition in repetitions(repeat, start=len(records)):
                    raise_if_stopping()
                    reporter.workload_started(spec.workload, spec.target, index, len(specs), repetition)
                    expected = identity_by_target[key]
                    outcome: tuple[ResultRecord, list[ResultRecord], list[Failure]] | Failure
                    if local and target_identity(spec.target) != expected:
                        outcome = Failure(spec.workload.name, spec.target.display, _target_changed(spec.target, "since the run started; it was not run"))
                    elif not spec.workload.is_fio:
                        outcome = measure_load(run_id, spec, repetition, records, storage, telemetry=telemetry, label=label, clock=clock)
                    elif (server := watches[key]) is not None and (gone := server.gone()) is not None:
                        outcome = Failure(spec.workload.name, spec.target.display, gone)
                    else:
                        run_spec = spec
                        if repetition > 0 and deletes_objects(spec):  # the repetition before deleted them
                            seed_objects(spec, executor)
                        if index in last_use and repetition == repeat.count - 1:  # its hosts remove the file at its end
                            run_spec = dataclasses.replace(spec, job_text=in_every_section(spec.job_text, ["unlink=1"]))
                        outcome = measure_once(
                            run_id, run_spec, repetition, records, storage,
                            executor=executor, telemetry=telemetry, label=label, clock=clock,
                            fio_version=fio_version, on_status=reporter.status, on_devices=reporter.devices_now,
                            watch=_watch(spec, server),
                        )
                        if local and not isinstance(outcome, Failure) and target_identity(spec.target) != expected:
                            outcome = Failure(spec.workload.name, spec.target.display, _target_changed(spec.target, "while fio ran; its result is not kept"))
                    if isinstance(outcome, Failure):
                        failures.append(outcome)
                        reporter.workload_failed(spec.workload, spec.target, outcome.reason)
                        if local and spec.test_files and _layout_lost(outcome.reason):
                            # the shared test file may be partly written: removed, so that no later
                            # workload reads its holes and --resume lays it out anew
                            broken[spec.target.path] = (
                                f"the test file on {spec.target.display} could not be written whole "
                                f"(workload {spec.workload.name!r}: {_layout_lost(outcome.reason)}); it was removed"
                            )
                            remove_test_files([s for s in specs if s.target == spec.target])
                        break
                    primary, per_host, host_failures = outcome
                    for failure in host_failures:
                        failures.append(failure)
                        reporter.workload_failed(spec.workload, spec.target, failure.reason)
                    if ctx.hosts_required is not None and primary.host == "all" and len(per_host) < ctx.hosts_required:
                        short = (f"only {len(per_host)} host(s) measured workload {spec.workload.name!r} (--hosts-required "
                                 f"{ctx.hosts_required}): the run stops here; what was measured is stored")  # fmt: skip
                        failures.append(Failure(spec.workload.name, spec.target.display, short, stopped_run=True))
                        reporter.workload_failed(spec.workload, spec.target, short)
                        stop_now = True
                    decision = next_step(repeat, [r.fio for r in records] + [primary.fio], spec.workload.headline)
                    if decision is not None and not decision.again and not decision.converged:
                        primary = with_finding(primary, not_converged(spec.workload.name, decision.reason, repeat))
                        reporter.note(f"{spec.workload.name}: {decision.reason}")
                    # client/server: one result per host besides the aggregate, all in one commit
                    *_, result_id = ids = store_results(sink, [*per_host, primary])
                    stored.extend(ids)
                    primary = dataclasses.replace(primary, result_id=result_id)
                    records.append(primary)
                    reporter.workload_done(primary)
                    if stop_now:
                        break
                    if decision is not None and not decision.again:
                        if decision.converged and repeat.until_rse_pct is not None:
                            reporter.note(f"{spec.workload.name}: {decision.reason}")
                        break
    except KeyboardInterrupt as exc:
        how = "SIGTERM" if str(exc) == "SIGTERM" else "Ctrl-C"
        raise Interrupted(
            f"interrupted ({how}) during workload {current!r}; "
            f"{len(stored)} result(s) were stored before it"
        ) from None
    finally:
        if not keep_files and not executor.remote:  # remote files: see ClientFio
            remove_test_files(specs)
            remove_remote_test_files(specs, executor, reporter)
        remove_artifacts(artifacts_before)
    return RunOutcome(run_id=run_id if isinstance(run_id, int) else run_id(), stored=tuple(stored), failures=tuple(failures))


def _watch(spec: JobSpec, server: ServerWatch | None) -> Callable[[], str | None] | None:
    """What stops fio early: its server gone (:class:`ServerWatch`), its server holding requests
    paused (:class:`~storbench.run.serverwatch.HeldWatch`: radosgw on a full cluster, through the
    admin socket an ``s3://`` target names), or, where the kind says its requests can hang
    (:attr:`~storbench.targets.base.TargetKind.request_stall_s`), a time-based job still running
    that long past its planned end."""
    from ..jobs import plan
    from ..targets import kind_of
    from .serverwatch import first_of, held_watch

    check = first_of(server.check if server is not None else None, held_watch(spec.target))
    stall = kind_of(spec.target).request_stall_s
    planned = plan.group_estimate(spec.workload.name, spec.target.display, [dict(o) for o in spec.every_section], 1).seconds if stall is not None else None
    if stall is None or planned is None:
        return check
    from .serverwatch import with_deadline

    return with_deadline(check, planned + stall, f"fio's requests to {spec.target.display} had not come back {stall:g} s after "
                                                 f"the workload's planned {planned:.0f} s (the server answers connections but "
                                                 "not them: a full pool?); fio was stopped, its figures are not kept")  # fmt: skip


def _server_watch(target: Target) -> ServerWatch | None:
    """A watch of the server under ``target`` (its kind's :meth:`~storbench.targets.base.TargetKind.server`), else None."""
    from ..targets import kind_of

    server = kind_of(target).server(target)
    return ServerWatch(*server) if server is not None else None


#: fio's words for a test file that could not be written: the disk full, the device failing
_LAYOUT_LOST = ("No space left on device", "Input/output error", "Disk quota exceeded", "File too large")


def _layout_lost(reason: str) -> str | None:
    """The words of :data:`_LAYOUT_LOST` in a failure's reason, else None."""
    return next((words for words in _LAYOUT_LOST if words in reason), None)


def _target_changed(target: Target, when: str) -> str:
    what = "directory" if target.kind == "dir" else "file"
    return f"the target {what} was unmounted, removed or replaced {when}"


def _last_uses(specs: Sequence[JobSpec]) -> set[int]:
    """Client/server runs: the index of the last spec using each test file (its last repetition
    ends with ``unlink=1``, so that no cleanup job has to start fio on every host again; a host
    where that job did not end well gets the cleanup job: :meth:`ClientFio.remove_test_files`)."""
    from .inventory import filename_of

    last: dict[str, int] = {}
    for index, spec in enumerate(specs):
        if spec.workload.is_fio and (name := filename_of(spec.job_text)):
            last[name] = index
    return set(last.values())
