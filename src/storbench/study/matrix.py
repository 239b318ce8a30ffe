"""Edge: the study driver -- the same workloads on several storage setups, one after another.

``storbench matrix`` (see :mod:`storbench.commands.matrix`) takes a scratch
device and a list of setups (:mod:`storbench.study.setups`) and, for each setup in turn:

1. wipes the device (``wipefs -a``),
2. builds the setup: ``mkfs.X`` and ``mount`` on a mountpoint in a temporary
   directory storbench owns, or ``zpool create`` + ``zfs create`` (a one-device
   pool that is never imported at boot, ``cachefile=none``), or nothing (the raw
   device); for an image setup it then creates the image (``qemu-img create``,
   or ``zfs create -V`` for a zvol) and serves it with ``qemu-nbd``,
3. applies the setup's device settings (:func:`storbench.study.devsettings.apply_settings`),
4. runs the workloads with :func:`storbench.run.runner.execute` as one run labelled
   ``<study label>/<setup name>`` (so ``storbench list --label-prefix STUDY/`` and
   ``storbench compare --label-prefix STUDY/`` find the whole study); each result
   is stored the moment it exists, with the storage description of what was built,
5. tears down what it built (stops qemu-nbd, removes the image, unmounts or
   destroys the pool, wipes the device) and restores the device settings.

The scratch device
------------------
``--loop-file PATH --loop-size SIZE``: storbench creates PATH (it must not
exist), attaches it with ``losetup -f --show --direct-io=on`` (no double caching
through the file's page cache), and at the end detaches it and removes the file
(kept with ``--keep-files``).

``--device DEV --destroy-data DEV``: a real device passes the data-safety guard
(:mod:`storbench.targets.guard`): not read-only, not holding ``/`` or the results
database, not mounted, no holders, not claimed by anything.  ``--destroy-data``
must repeat ``--device`` character for character.  One rule differs from
``storbench run``: a device that holds a signature (a filesystem, a ZFS label, a
partition table) is accepted **only** when ``--destroy-data`` names it, because
the matrix wipes it before every setup anyway; without the flag the refusal names
what was found and the exact flag to pass.

Guarantees
----------
Whatever fails or interrupts a study -- a failing ``mkfs``, fio killed, Ctrl-C or
SIGTERM -- everything storbench created is torn down (mounts, qemu-nbd servers,
images, zpools, loop devices, temporary directories), every device setting is
restored, and the results stored so far stay stored.  Teardown steps are
registered *before* the thing they undo is created and check whether it exists,
and SIGINT/SIGTERM are held while tearing down (acted on afterwards).  A setup
that fails to build is recorded as a failed run and the study goes on with the
next setup; an interrupt stops the study (exit 130).  Only SIGKILL of storbench
itself defeats this (qemu-nbd and fio still die with it: parent-death signal).

``--resume STUDY`` continues a study from the plan stored in its runs: setups
whose run is complete are skipped; an incomplete one (interrupted, a workload
failed, or its build failed) is built afresh and only its missing workloads and
repetitions are run (:func:`storbench.run.runner.execute` with ``previous=``).

The edge is injectable (:class:`System`: command runner, ``which``, sysfs and
/dev roots, the qemu-nbd starter, the pool name) so the ZFS paths are tested
with a fake command runner on machines without ZFS.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONMapping

from ..errors import Interrupted, StorbenchError, UsageError
from ..jobs.jobfile import build_job
from ..jobs.load import build_load_job
from ..model import JobSpec, RunInfo, Target, Workload
from ..process import signals
from ..record import ResultRecord
from ..run import runner as runner_mod
from ..run.live import LiveReporter
from .build import (
    POOL_BUSY_TIMEOUT_S,
    UMOUNT_TRIES,
    ZFS_FUSE_SOCKET,
    ZVOL_APPEAR_TIMEOUT_S,
    Builder,
    Built,
    Observer,
    SetupFailed,
    System,
    Teardown,
    check_tools,
    check_zfs,
    critical,
    no_observer,
    zfs_implementation,
)
from .devsettings import apply_settings, restore_settings
from .guest import make_guest_filesystem
from .plan import (
    MIN_LOOP_BYTES,
    STUDY_FORMAT_VERSION,
    XFS_MIN_BYTES,
    Scratch,
    SetupOutcome,
    Study,
    StudyOutcome,
    check_scratch_plan,
    default_label,
    loop_size,
    setup_label,
    stored_study,
    study_runs,
    validate_label,
)
from .scratch import ScratchDevice, attach_loop, check_scratch_device, loop_direct_io, loop_files
from .setups import Setup, setup_to_table

if TYPE_CHECKING:
    from ..run.fioexec import FioExecutor
    from ..store import Store

#: what this module gave before the study stage was split in rooms (plan, build, scratch, driver);
#: storbench's own code imports each name from its room
__all__ = [
    "MIN_LOOP_BYTES", "POOL_BUSY_TIMEOUT_S", "STUDY_FORMAT_VERSION", "UMOUNT_TRIES", "XFS_MIN_BYTES", "ZFS_FUSE_SOCKET",
    "ZVOL_APPEAR_TIMEOUT_S", "Builder", "Built", "Interrupted", "Scratch", "ScratchDevice", "SetupFailed", "SetupOutcome",
    "Study", "StudyOutcome", "System", "Teardown", "check_scratch_device", "default_label", "loop_direct_io",
    "loop_size", "run_study", "setup_label", "stored_study", "study_runs", "validate_label", "zfs_implementation",
]  # fmt: skip


# --------------------------------------------------------------------------- telemetry and sink


class _SetupTelemetry(runner_mod.NoTelemetry):
    """The storage description of what was built (the image's filesystem for an nbd target),
    with notes saying how it was built."""

    def __init__(self, built: Built, inner: runner_mod.Telemetry) -> None:
        self.built = built
        self.inner = inner

    def describe(self, target: Target, fio_version: str):
        storage = self.inner.describe(Target(kind="dir", path=self.built.describe_path), fio_version)
        if storage is None:
            return None
        return dataclasses.replace(storage, notes=tuple(storage.notes) + tuple(self.built.notes))

    def sampler(self, storage):
        return self.inner.sampler(storage)

    def backend_sampler(self, storage, target=None, area_bytes=None):
        return self.inner.backend_sampler(storage, target, area_bytes)

    @property
    def net_ceilings(self):
        return self.inner.net_ceilings


class _ImageSink:
    """Adds the image's creation and serving options to every result's ``space`` mapping."""

    def __init__(self, sink: runner_mod.ResultSink, image: JSONMapping | None) -> None:
        self.sink = sink
        self.image = image

    def add_result(self, record: ResultRecord) -> int:
        if self.image is not None:
            space = dict(record.space or {})
            space["image"] = dict(self.image)
            record = dataclasses.replace(record, space=space)
        return self.sink.add_result(record)


# --------------------------------------------------------------------------- the driver


@dataclass
class _Context:
    study: Study
    scratch: Scratch
    store: Store
    executor: FioExecutor
    reporter: runner_mod.Reporter
    clock: Callable[[], str]
    system: System
    observe: Observer
    telemetry: runner_mod.Telemetry
    argv: Sequence[str]
    fio_version: str
    existing: dict[str, RunInfo]
    say: Callable[[str], None]


def run_study(
    study: Study,
    scratch: Scratch,
    *,
    store: Store,
    executor: FioExecutor,
    reporter: runner_mod.Reporter,
    clock: Callable[[], str],
    resume: bool = False,
    system: System | None = None,
    db_path: str | None = None,
    observe: Observer | None = None,
    telemetry: runner_mod.Telemetry | None = None,
    argv: Sequence[str] = (),
    say: Callable[[str], None] | None = None,
) -> StudyOutcome:
    """Run every setup of ``study`` in turn on ``scratch`` (see the module doc).

    Raises :class:`UsageError` before touching anything when the plan cannot run
    (missing tools, a label already used, a device the guard refuses),
    :class:`Interrupted` on Ctrl-C/SIGTERM after tearing everything down, and
    :class:`SetupFailed` when a teardown step failed (what is left is named).
    A setup that fails to build or whose workloads fail does not stop the study:
    its outcome says so.
    """
    system = system or System()
    observe = observe or no_observer
    say = say or (lambda text: None)
    check_scratch_plan(study.setups, scratch)  # the command line's own mistakes first, then this machine's
    check_tools(study.setups, scratch, system.which, with_loads=any(not w.is_fio for w in study.workloads))
    check_zfs(study.setups, system)
    existing = study_runs(store, study.label)
    if existing and not resume:
        raise UsageError(
            f"study {study.label!r} already has {len(existing)} run(s); continue it with --resume {study.label} "
            "or give another --label"
        )
    scratch_td = Teardown()
    outcomes: list[SetupOutcome] = []
    interrupted: str | None = None
    failure: StorbenchError | None = None
    with signals.as_interrupt():
        try:
            devices: list[ScratchDevice] = []
            if scratch.kind == "device":
                devices = [
                    check_scratch_device(p, scratch.destroy, db_path=db_path, sys_root=system.sys_root)
                    for p in (scratch.paths or (scratch.path or "",))
                ]
                real = [d.path for d in devices]
                if len(set(real)) != len(real):
                    raise UsageError(f"--devices names one device twice ({', '.join(scratch.paths)}); give each once")
            with critical():
                tmpdir = tempfile.mkdtemp(prefix="storbench-matrix-")
                # the setups' mount points are below it: a load's server (pgbench's PostgreSQL, run
                # as user postgres when storbench is root) must be able to enter it
                os.chmod(tmpdir, 0o755)
                scratch_td.add(f"remove {tmpdir}", lambda: _remove_tmpdir(tmpdir, system))
            if scratch.kind == "loop":
                files = loop_files(scratch, scratch_td, study.keep_files)
                for path in files:
                    dev = attach_loop(Scratch(kind="loop", path=path, size=scratch.size), system, scratch_td, observe, study.keep_files)
                    devices.append(dev)
                    dio = loop_direct_io(dev.kname or "", system.sys_root)
                    how = {True: "direct I/O", False: "NO direct I/O: results include the host page cache", None: "direct I/O unknown"}[dio]
                    say(f"scratch device: {dev.path} (loop device over {path}, {how})")
            elif scratch.kind == "device":
                for dev in devices:
                    say(f"scratch device: {dev.path}")
            device = devices[0] if devices else ScratchDevice(path=None, kname=None)
            observe("scratch-ready", {"device": device.path, "kname": device.kname, "tmpdir": tmpdir,
                                      "devices": [d.path for d in devices]})  # fmt: skip
            ctx = _Context(
                study=study, scratch=scratch, store=store, executor=executor, reporter=reporter, clock=clock,
                system=system, observe=observe, telemetry=telemetry or runner_mod.SystemTelemetry(), argv=argv,
                fio_version=executor.version(), existing=existing, say=say,
            )  # fmt: skip
            builder = Builder(system, tmpdir, [d.path for d in devices if d.path], study.keep_files)
            for index, setup in enumerate(study.setups):
                outcome = _run_setup(ctx, builder, devices, setup, index)
                outcomes.append(outcome)
        except KeyboardInterrupt as exc:
            interrupted = f"interrupted ({signals.how(exc)})"
        except _SetupInterrupted as exc:
            outcomes.append(exc.outcome)
            interrupted = exc.message
        except StorbenchError as exc:
            failure = exc
        finally:
            problems, pending = scratch_td.run()
            if pending and interrupted is None and failure is None:
                interrupted = f"interrupted ({pending[0]}) while tearing down"
    stored = sum(o.stored for o in outcomes)
    if problems:
        left = "; ".join(problems)
        raise SetupFailed(
            (f"{interrupted}; " if interrupted else (f"{failure}; " if failure else ""))
            + f"teardown incomplete, left behind: {left}"
        )
    if interrupted is not None:
        raise Interrupted(
            f"{interrupted}; {stored} result(s) stored by this invocation; everything storbench set up was torn down "
            f"and device settings restored; continue with 'storbench matrix --resume {study.label}'"
        )
    if failure is not None:
        raise failure
    return StudyOutcome(label=study.label, setups=tuple(outcomes))


def _remove_tmpdir(tmpdir: str, system: System) -> None:
    """Remove storbench's temporary directory -- never through a mountpoint."""
    if not os.path.isdir(tmpdir):
        return
    for name in os.listdir(tmpdir):
        path = os.path.join(tmpdir, name)
        if system.is_mount(path):
            raise SetupFailed(f"{path} is still mounted; {tmpdir} was left in place")
    shutil.rmtree(tmpdir)


class _SetupInterrupted(Exception):
    def __init__(self, message: str, outcome: SetupOutcome) -> None:
        super().__init__(message)
        self.message = message
        self.outcome = outcome


def _specs(study: Study, built: Built, tmpdir_for_probe: str, fio_path: str | None,
           say: Callable[[str], None] = lambda line: None) -> tuple[list[JobSpec], list[Workload]]:  # fmt: skip
    """The setup's jobs in suite order, and the application loads that wait for the guest
    filesystem of its image (:mod:`storbench.study.guest`: made once fio's workloads are done)."""
    specs = []
    in_guest: list[Workload] = []
    engine: str | None = None
    for workload in study.workloads:
        if not workload.is_fio:  # an application load: in a directory of its own on the setup's filesystem
            if built.target.kind == "nbd" and built.image is not None:
                in_guest.append(workload)
            elif built.target.kind != "dir":  # the raw device: a load needs a filesystem on it
                say(f"  {workload.name} not run on this setup: {workload.tool} needs a directory on a filesystem, "
                    f"and this setup gives {built.target.kind} target {built.target.display}")  # fmt: skip
            else:
                specs.append(build_load_job(workload, built.target, study.overrides, pid=os.getpid()))
        elif workload.option("ioengine") == "auto" and built.target.kind != "nbd":
            if engine is None:
                from ..run.engines import probe_ioengine

                where = built.target.path if built.target.kind == "dir" else tmpdir_for_probe
                engine = probe_ioengine(fio_path or "fio", where)
            specs.append(build_job(workload, built.target, study.overrides, ioengine=engine, export_size=built.export_size))
        else:
            specs.append(build_job(workload, built.target, study.overrides, export_size=built.export_size))
    return specs, in_guest


def _planned_s(specs: Sequence[JobSpec], in_guest: Sequence[Workload], repetitions: int) -> float:
    """The seconds a setup's jobs and loads are planned to take (their runtimes; no probe: the
    target is new), for the live page's ETA."""
    from ..jobs import plan

    estimates = [plan.estimate(s.workload.name, s.target.display, dict(s.options), repetitions) if s.workload.is_fio
                 else plan.load_estimate(s.workload.name, s.target.display, s.workload.tool, dict(s.options), repetitions)
                 for s in specs]  # fmt: skip
    estimates += [plan.load_estimate(w.name, "", w.tool, dict(w.options), repetitions) for w in in_guest]
    return plan.total_seconds(estimates)[0]


def _execute(ctx: _Context, specs: Sequence[JobSpec], built: Built, run_id: int, label: str,
             previous: Mapping[tuple[str, str], Sequence[ResultRecord]]) -> runner_mod.RunOutcome:  # fmt: skip
    study = ctx.study
    return runner_mod.execute(specs, runner_mod.ExecuteContext(
        run_id=run_id, executor=ctx.executor, sink=_ImageSink(ctx.store, built.image), reporter=ctx.reporter,
        label=label, clock=ctx.clock, keep_files=study.keep_files, repeat=study.repeat,
        telemetry=_SetupTelemetry(built, ctx.telemetry), previous=previous, prefill=study.prefill,
    ))  # fmt: skip


def _run_setup(ctx: _Context, builder: Builder, devices: Sequence[ScratchDevice], setup: Setup, index: int) -> SetupOutcome:
    device = devices[0] if devices else ScratchDevice(path=None, kname=None)
    study, store = ctx.study, ctx.store
    label = setup_label(study.label, setup.name)
    total = len(study.setups)
    info = ctx.existing.get(setup.name)
    if info is not None and info.status == "complete":
        ctx.say(f"setup {index + 1}/{total} {setup.name}: complete already (run {info.run_id}), skipped")
        return SetupOutcome(setup=setup.name, run_id=info.run_id, status="complete", skipped=True)
    ctx.say(f"setup {index + 1}/{total} {setup.name}: {setup.summary()}")
    old: list[ResultRecord] = []
    # a signal while the run is created or reopened is raised inside the try below, which ends
    # the run as interrupted (raised here, it left a run 'running' with no result: issue 25)
    with signals.held() as pending_at_start:
        if info is not None:
            run_id = info.run_id
            old = [r for r in store.results(run_id) if r.host in (None, "all")]
            store.reopen_run(run_id)
        else:
            meta = {
                "host": runner_mod.host_facts(ctx.fio_version),
                "argv": list(ctx.argv),
                "study": study.meta(ctx.scratch),
                "setup_name": setup.name,
                "setup": {"name": setup.name, **setup_to_table(setup)},
            }
            run_id = store.create_run(label=label, kind="run", suite=study.suite, meta=meta)
    if isinstance(ctx.reporter, LiveReporter):  # storbench serve's live page: this setup's run, as part of its study
        ctx.reporter.publish(store, run_id, total=0, kind="matrix",
                             study={"label": study.label, "setup": setup.name, "index": index, "setups": [s.name for s in study.setups]})  # fmt: skip
    td = Teardown()  # what was built, undone in reverse
    settings_td = Teardown()  # device settings, restored after everything else
    outcome: runner_mod.RunOutcome | None = None
    error: StorbenchError | None = None
    interrupted: str | None = None
    specs: list[JobSpec] = []
    try:
        signals.raise_noted(pending_at_start)
        built = builder.build(setup, td)
        if setup.device is not None:
            if device.kname is None:
                raise SetupFailed(f"setup {setup.name!r} has device settings but there is no scratch device")
            used = builder.devices_for(setup)
            for dev in devices:
                if dev.path not in used or dev.kname is None:
                    continue
                kname = dev.kname
                with critical():
                    original = apply_settings(kname, setup.device, ctx.system.sys_root)
                    settings_td.add(
                        f"restore {kname} settings",
                        functools.partial(restore_settings, kname, original, ctx.system.sys_root),
                    )
                applied_now = ", ".join(f"{f}={getattr(setup.device, f)!r}" for f in setup.device.changed())
                built = dataclasses.replace(built, notes=built.notes + (f"device {kname}: {applied_now} (restored afterwards)",))
        ctx.observe("setup-ready", {"setup": setup.name, "target": built.target, "device": device.path, "kname": device.kname})
        for note in built.notes[1:]:
            ctx.say(f"  {note}")
        specs, in_guest = _specs(study, built, builder.tmpdir, ctx.executor.path, ctx.say)
        replaced = [ln for s in specs[:1] for ln in s.job_text.splitlines() if ln.startswith("# storbench: ")]
        for line in replaced:
            ctx.say(f"  {line[len('# storbench: '):]}")
        runner_mod.check_free_space(specs)
        previous: dict[tuple[str, str], list[ResultRecord]] = {}
        for rec in old:  # the setup is built afresh: earlier results count for the new target
            previous.setdefault((rec.workload, built.target.display), []).append(rec)
        if isinstance(ctx.reporter, LiveReporter):  # the live page's ETA: this setup's plan, and the setups after it
            planned = _planned_s(specs, in_guest, study.repeat.count)
            ctx.reporter.plan(planned, planned * (len(study.setups) - index - 1))
        if study.curve is not None:
            _run_curve(ctx, built, setup, run_id, label, builder.tmpdir)
        else:
            outcome = _execute(ctx, specs, built, run_id, label, previous)
            if in_guest:  # the image's own filesystem, made now that fio is done with the image
                builder.stop_server(setup)
                guest = make_guest_filesystem(builder, setup, built, td)
                ctx.say(f"  {guest.notes[-1]}")
                loads = [build_load_job(w, guest.target, study.overrides, pid=os.getpid()) for w in in_guest]
                runner_mod.check_free_space(loads)
                in_image = _execute(ctx, loads, guest, run_id, label, previous)
                outcome = dataclasses.replace(
                    outcome, stored=outcome.stored + in_image.stored, failures=outcome.failures + in_image.failures,
                )  # fmt: skip
                specs = specs + loads
    except Interrupted as exc:  # runner: "interrupted (SIGTERM) during workload 'x'; N result(s) were stored before it"
        interrupted = f"{str(exc).split(';', 1)[0]} of setup {setup.name!r}"
    except KeyboardInterrupt as exc:
        interrupted = f"interrupted ({signals.how(exc)}) in setup {setup.name!r} (before its workloads ran)"
    except StorbenchError as exc:
        error = exc
    except BaseException as exc:  # a bug, or SystemExit (rich exits on a broken pipe): tear down, then let it go on
        td.run()
        settings_td.run()
        with contextlib.suppress(Exception):
            status = "incomplete" if old or _count_new(store, run_id, old) else "failed"
            store.finish_run(run_id, status, reason=f"storbench stopped: {type(exc).__name__}: {exc}")
        raise
    problems, pending = td.run()
    more, pending2 = settings_td.run()
    problems += more
    pending += pending2
    ctx.observe("setup-done", {"setup": setup.name, "device": device.path, "kname": device.kname})
    left = f"; teardown left: {'; '.join(problems)}" if problems else ""
    if interrupted is not None:
        stored_now = _count_new(store, run_id, old)
        store.finish_run(run_id, "incomplete", reason=interrupted + left)
        if problems:  # what is left behind matters more than the interrupt
            raise SetupFailed(f"{interrupted}; teardown failed, the study stops: {'; '.join(problems)}")
        raise _SetupInterrupted(
            interrupted, SetupOutcome(setup=setup.name, run_id=run_id, status="incomplete", reason=interrupted, stored=stored_now)
        )
    stored_now = len(outcome.stored) if outcome is not None else (_count_new(store, run_id, old) if study.curve is not None else 0)
    had = bool(old) or stored_now > 0
    if error is not None:
        reason = f"setup {setup.name!r}: {error}"
        status = "incomplete" if had else "failed"
    elif outcome is not None and outcome.failures:
        first = outcome.failures[0]
        reason = (
            f"{len(outcome.failures)} of {len(specs)} workload(s) failed; first: "
            f"workload {first.workload!r} on {first.target}: {first.reason}"
        )
        status = "incomplete" if had else "failed"
    else:
        reason, status = None, "complete"
    if problems:
        reason = (reason or "") + left if reason else left[2:]
        status = "incomplete" if status == "complete" else status
    store.finish_run(run_id, status, reason=reason)
    if status != "complete":
        ctx.say(f"setup {setup.name}: {status}: {reason}")
    result = SetupOutcome(setup=setup.name, run_id=run_id, status=status, reason=reason, stored=stored_now)
    if problems:
        raise SetupFailed(f"setup {setup.name!r}: teardown failed, the study stops: {'; '.join(problems)}")
    if pending:
        raise _SetupInterrupted(f"interrupted ({pending[0]}) after setup {setup.name!r}", result)
    return result


def _run_curve(ctx: _Context, built: Built, setup: Setup, run_id: int, label: str, tmpdir: str) -> None:
    """``matrix --curve``: the study's one workload raised step by step on this setup's
    target (:class:`curve_runner.CurveRunner`), each step stored in the setup's run; the
    curve, its knee and SLA ceiling go into the run's meta (``curve_result``), as for
    ``storbench curve``.  The steps' test file is removed before the setup is torn down."""
    from ..curve.runner import CurveRunner

    assert ctx.study.curve is not None
    steps, shares, stop, limit = ctx.study.curve.parsed()
    workload = ctx.study.workloads[0]
    curve = CurveRunner(
        run_id, workload, built.target, ctx.study.overrides, executor=ctx.executor, store=ctx.store, reporter=ctx.reporter,
        telemetry=_SetupTelemetry(built, ctx.telemetry), repeat=ctx.study.repeat.count, clock=ctx.clock, cwd=tmpdir,
        sink=_ImageSink(ctx.store, built.image), export_size=built.export_size, label=label,
    )  # fmt: skip
    try:
        result = curve.run(steps, shares, stop, limit)
    finally:
        if not ctx.study.keep_files:
            curve.remove_files()
    result["setup"] = setup.name
    for line in result["lines"]:
        ctx.say(f"  {line}")
    ctx.store.update_run_meta(run_id, {"curve_result": {"workload": workload.name, "curves": [result]}})


def _stored_count(store: Store, run_id: int) -> int:
    return len(store.results(run_id))


def _count_new(store: Store, run_id: int, old: Sequence[ResultRecord]) -> int:
    return max(0, _stored_count(store, run_id) - len(old))
