"""Edge: runs fio once per workload, reports progress, stores each result as soon as it exists.

The pure parts (job text, parsing) live elsewhere; this module owns processes,
temporary files, signals and the order of work.  Every workload's result is
committed to the store the moment fio finishes it, so an interrupt or a crash
later loses nothing already measured.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import platform
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from storbench.jsontypes import JSONMapping, JSONObject

from .. import __version__
from ..errors import FioParseError, Interrupted, TargetError, UsageError
from ..fio.progress import Status
from ..jobs.jobfile import build_job
from ..jobs.load import build_load_job
from ..model import JobSpec, Overrides, Repeat, Target, Workload
from ..process import signals
from .fioexec import FioExecutor, FioInvocation, SubprocessFio, raise_if_stopping  # noqa: F401  (SubprocessFio: re-exported)
from .serverwatch import ServerWatch

if TYPE_CHECKING:
    from ..activity import ActivitySampler, DeviceSample
    from ..backend import BackendSampler
    from ..model import Finding, FioResult, JobResult, LatencyStats, ResultRecord
    from ..net import CeilingLookup, NetCeiling
    from ..storage import StorageInfo

# --------------------------------------------------------------------------- failure reasons


def _killed_reason(returncode: int) -> str:
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = "an unknown signal"
    reason = f"fio was killed by signal {number} ({name})"
    if number == signal.SIGKILL:
        reason += "; the kernel's out-of-memory killer or another process stopped it"
    return reason


def errno_text(code: int) -> tuple[int, str]:
    """An error number as fio reported it, and its text.  Some engines (gfapi when its brick
    dies) report a negative errno as an unsigned 32- or 64-bit number: read those back."""
    if code >= 2**63:
        code = 2**64 - code
    elif code >= 2**31:
        code = 2**32 - code
    if 0 < code < 4096:
        return code, os.strerror(code)
    return code, "an error number fio's engine did not explain"


def fio_failure_reason(inv: FioInvocation, result: FioResult | None) -> str | None:
    """fio's own words for why a run failed, or None when it succeeded.

    Pure: looks at the return code, the ``fio:`` lines on stderr/stdout and the
    per-job error codes in the parsed result.
    """
    lines = [
        ln.strip()
        for ln in (inv.stderr_text + "\n" + inv.stdout_text).replace("\r", "\n").splitlines()
        if ln.strip().startswith("fio:")
    ]
    if inv.stopped_reason is not None:  # storbench stopped it (its server gone): that is why
        return inv.stopped_reason
    if result is not None:
        lines += [n for n in result.notes if n.startswith("fio:")]
    job_error = result.error if result is not None else 0
    if inv.returncode < 0:  # killed: whatever output there is, is not a finished result
        return _killed_reason(inv.returncode)
    if inv.returncode == 0 and not job_error and result is not None:
        return None
    explanatory = [
        ln for ln in lines if not ln.startswith("fio: pid=") and not ln.startswith("fio: file:")
    ]
    reason = None
    if explanatory:
        reason = explanatory[0][len("fio:") :].strip()
    elif lines:
        reason = lines[0][len("fio:") :].strip()
    if job_error:
        job_error, errtext = errno_text(job_error)
        if reason is None:
            reason = f"error {job_error} ({errtext})"
        elif errtext.lower() not in reason.lower():
            reason = f"{reason} ({errtext})"
    if reason is None:
        other = [ln.strip() for ln in inv.stderr_text.splitlines() if ln.strip()]
        reason = other[0] if other else f"fio exited with status {inv.returncode} and wrote no result"
    return reason


# --------------------------------------------------------------------------- targets


def target_identity(target: Target) -> tuple[int, int] | None:
    """(device, inode) of a directory or file target, None when it is gone.

    A target that is unmounted (even lazily), removed or replaced while a run goes
    on changes identity: its path then names something else.
    """
    if target.kind not in ("dir", "file"):
        return None
    try:
        st = os.stat(target.path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


@contextlib.contextmanager
def scratch_target(parent: str) -> Iterator[Target]:
    """A scratch directory on the disk that holds ``parent``, removed afterwards."""
    if not os.access(parent, os.W_OK):
        raise TargetError(
            f"cannot create a scratch directory in {parent!r} (not writable); give --target PATH"
        )
    # the PID in the name lets a later run remove it when this process was killed (store/owner.py)
    path = tempfile.mkdtemp(prefix=f".storbench-scratch-{os.getpid()}-", dir=parent)
    try:
        yield Target(kind="dir", path=path, scratch=True)
    finally:
        shutil.rmtree(path, ignore_errors=True)


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


# --------------------------------------------------------------------------- the run loop


class Reporter(Protocol):
    """What the runner tells the person watching (the CLI draws it; tests ignore it)."""

    def workload_started(self, workload: Workload, target: Target, index: int, total: int, repetition: int) -> None: ...

    def status(self, status: Status) -> None: ...

    def devices_now(self, samples: Sequence[DeviceSample]) -> None: ...

    def workload_done(self, record: ResultRecord) -> None: ...

    def workload_failed(self, workload: Workload, target: Target, reason: str) -> None: ...

    def note(self, text: str) -> None: ...


class SilentReporter:
    def workload_started(self, workload, target, index, total, repetition) -> None:
        pass

    def status(self, status) -> None:
        pass

    def devices_now(self, samples) -> None:
        pass

    def workload_done(self, record) -> None:
        pass

    def workload_failed(self, workload, target, reason) -> None:
        pass

    def note(self, text) -> None:
        pass


class ResultSink(Protocol):
    def add_result(self, record: ResultRecord) -> int: ...


@dataclass(frozen=True)
class RunPlan:
    workloads: tuple[Workload, ...]
    targets: tuple[Target, ...]
    overrides: Overrides = field(default_factory=Overrides)
    label: str | None = None
    keep_files: bool = False
    repeat: Repeat = field(default_factory=Repeat)


@dataclass(frozen=True)
class Failure:
    workload: str
    target: str
    reason: str
    #: no further workload ran after it (--hosts-required was not met)
    stopped_run: bool = False


@dataclass(frozen=True)
class RunOutcome:
    run_id: int
    stored: tuple[int, ...]
    failures: tuple[Failure, ...]


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


# --------------------------------------------------------------------------- telemetry (edges)


class Telemetry(Protocol):
    """What storbench records around each fio run besides fio's own output: every sampler it
    hands out is declared here (the runner asks for each by name, never through getattr)."""

    def describe(self, target: Target, fio_version: str) -> StorageInfo | None: ...

    def sampler(self, storage: StorageInfo | None) -> contextlib.AbstractContextManager[ActivitySampler | None]: ...

    def backend_sampler(self, storage: StorageInfo | None, target: Target | None = None,
                        area_bytes: int | None = None) -> BackendSampler | None: ...  # fmt: skip

    @property
    def net_ceilings(self) -> CeilingLookup | None: ...


class NoTelemetry:
    """Telemetry that records nothing (client runs, --no-telemetry, tests); a base for partial ones."""

    def describe(self, target: Target, fio_version: str) -> StorageInfo | None:
        return None

    def sampler(self, storage: StorageInfo | None) -> contextlib.AbstractContextManager[ActivitySampler | None]:
        return contextlib.nullcontext(None)

    def backend_sampler(self, storage: StorageInfo | None, target: Target | None = None,
                        area_bytes: int | None = None) -> BackendSampler | None:  # fmt: skip
        return None

    @property
    def net_ceilings(self) -> CeilingLookup | None:
        return None


class DescribeOnce(NoTelemetry):
    """Telemetry that describes each target once (curve steps and steady-state rounds each call
    :func:`execute`, which would describe the target again every time); the rest is ``inner``'s."""

    def __init__(self, inner: Telemetry) -> None:
        self.inner = inner
        self.cache: dict[str, StorageInfo | None] = {}

    def describe(self, target: Target, fio_version: str) -> StorageInfo | None:
        if target.path not in self.cache:
            self.cache[target.path] = self.inner.describe(target, fio_version)
        return self.cache[target.path]

    def sampler(self, storage: StorageInfo | None) -> contextlib.AbstractContextManager[ActivitySampler | None]:
        return self.inner.sampler(storage)

    def backend_sampler(self, storage: StorageInfo | None, target: Target | None = None,
                        area_bytes: int | None = None) -> BackendSampler | None:  # fmt: skip
        return self.inner.backend_sampler(storage, target, area_bytes)

    @property
    def net_ceilings(self) -> CeilingLookup | None:
        return self.inner.net_ceilings


class SystemTelemetry(NoTelemetry):
    """The real thing: storage description (findmnt, lsblk, /sys) and /proc/diskstats sampling."""

    def __init__(self, interval_s: float = 1.0, net_ceiling_of: Callable[[str], NetCeiling | None] | None = None) -> None:
        self.interval_s = interval_s
        #: ``Store.last_net_ceiling``: what ``storbench net`` measured towards a server, for the share-ceiling check
        self.net_ceiling_of = net_ceiling_of
        self._net_ceilings: CeilingLookup | None = None

    @property
    def net_ceilings(self) -> CeilingLookup | None:
        """``server -> bits/s`` over :attr:`net_ceiling_of`, made on first use (after the first fio:
        a run that meets no network share never imports :mod:`storbench.net`); None without it."""
        if self._net_ceilings is None and self.net_ceiling_of is not None:
            from ..net import CeilingLookup

            self._net_ceilings = CeilingLookup(self.net_ceiling_of)
        return self._net_ceilings

    def describe(self, target: Target, fio_version: str) -> StorageInfo | None:
        from ..targets import kind_of

        return kind_of(target).describe(target, fio_version)

    def sampler(self, storage: StorageInfo | None) -> contextlib.AbstractContextManager[ActivitySampler | None]:
        from ..activity import ActivitySampler

        devices = [d.kname or d.name for d in storage.devices] if storage is not None else []
        return ActivitySampler(devices, interval_s=self.interval_s)

    def backend_sampler(self, storage: StorageInfo | None, target: Target | None = None,
                        area_bytes: int | None = None) -> BackendSampler | None:  # fmt: skip
        """What the back-ends under the target (a ZFS pool, an NBD export) report around the run; None: nothing to read."""
        from ..backend import sampler_for

        return sampler_for(storage, target, area_bytes)


def _file_state(path: str) -> tuple[str, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (path, st.st_size, st.st_blocks * 512)


def _fs_used(path: str) -> int | None:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def _space_paths(spec: JobSpec) -> tuple[list[str], str] | None:
    from ..targets import kind_of

    return kind_of(spec.target).space_paths(spec.target, spec.test_files)


def _syncfs(path: str) -> None:
    """Flush the filesystem holding ``path`` so its used-space figure is final
    (btrfs counts space only when it commits a transaction)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        if libc.syncfs(fd) != 0:
            os.sync()
    except (OSError, AttributeError):
        os.sync()
    finally:
        os.close(fd)


#: filesystems whose used space (statvfs) and file blocks (st_blocks) count what was written the
#: moment it is written, delayed allocations included: read after a workload without a flush
#: (btrfs and ZFS count space when they commit a transaction; a share, when its server does)
ACCOUNTS_AT_WRITE = frozenset({"ext2", "ext3", "ext4", "xfs", "tmpfs", "ramfs"})


def needs_flush(storage: StorageInfo | None) -> bool:
    """Whether the used space under ``storage`` is final only after a flush (see :data:`ACCOUNTS_AT_WRITE`)."""
    fs = storage.filesystem if storage is not None else None
    return fs is None or fs.fstype not in ACCOUNTS_AT_WRITE


def measure_space(spec: JobSpec, *, flush: bool = False) -> JSONObject:
    paths = _space_paths(spec)
    if paths is None:  # a block device, a remote export: no local filesystem to measure
        return {"files": [], "fs_used": None}
    files, where = paths
    if flush:
        _syncfs(where)
    return {
        "files": [s for s in (_file_state(p) for p in files) if s is not None],
        "fs_used": _fs_used(where),
    }


# --------------------------------------------------------------------------- the run loop

#: each workload once (a frozen record: one instance serves every call)
ONCE = Repeat()


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
    artifacts_before = _artifacts(specs)
    #: targets whose test file could not be laid out (disk full, I/O error): the reason
    broken: dict[str, str] = {}
    #: --hosts-required was not met: no further workload runs
    stop_now = False
    #: client/server: the spec index whose last repetition removes its test file on every host
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
                        storage_by_target[key] = _lay_out_where_fio_cannot(specs, spec.target, storage_by_target[key], reporter)
                    if prefill:
                        storage_by_target[key] = _prefill(specs, spec.target, storage_by_target[key], executor, reporter)
                storage = storage_by_target[key]
                records: list[ResultRecord] = list(previous.get((spec.workload.name, spec.target.display), ()))
                if records and _settled(repeat, records, spec.workload.headline):
                    continue  # resumed: this workload already has all its repetitions
                if stop_now:
                    break
                for repetition in _repetitions(repeat, start=len(records)):
                    raise_if_stopping()
                    reporter.workload_started(spec.workload, spec.target, index, len(specs), repetition)
                    expected = identity_by_target[key]
                    outcome: tuple[ResultRecord, list[ResultRecord], list[Failure]] | Failure
                    if local and target_identity(spec.target) != expected:
                        outcome = Failure(spec.workload.name, spec.target.display, _target_changed(spec.target, "since the run started; it was not run"))
                    elif not spec.workload.is_fio:
                        outcome = _measure_load(run_id, spec, repetition, records, storage, telemetry=telemetry, label=label, clock=clock)
                    elif (server := watches[key]) is not None and (gone := server.gone()) is not None:
                        outcome = Failure(spec.workload.name, spec.target.display, gone)
                    else:
                        run_spec = spec
                        if index in last_use and repetition == repeat.count - 1:  # its hosts remove the file at its end
                            run_spec = dataclasses.replace(spec, job_text=spec.job_text.rstrip("\n") + "\nunlink=1\n")
                        outcome = _measure_once(
                            run_id, run_spec, repetition, records, storage,
                            executor=executor, telemetry=telemetry, label=label, clock=clock,
                            fio_version=fio_version, on_status=reporter.status, on_devices=reporter.devices_now,
                            watch=server.check if server is not None else None,
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
                    decision = _next_step(repeat, [r.fio for r in records] + [primary.fio], spec.workload.headline)
                    if decision is not None and not decision.again and not decision.converged:
                        primary = _with_finding(primary, _not_converged(spec.workload.name, decision.reason, repeat))
                        reporter.note(f"{spec.workload.name}: {decision.reason}")
                    for extra in per_host:  # client/server: one result per host besides the aggregate
                        stored.append(_store(sink, extra))
                    result_id = _store(sink, primary)
                    stored.append(result_id)
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
            _remove_remote_test_files(specs, executor)
        _remove_artifacts(artifacts_before)
    return RunOutcome(run_id=run_id if isinstance(run_id, int) else run_id(), stored=tuple(stored), failures=tuple(failures))


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


def _store(sink: ResultSink, record: ResultRecord) -> int:
    """``sink.add_result(record)``; when the store refuses it (its disk full, its server gone), the
    error names the workload and where fio's output was saved so that nothing measured is lost."""
    from ..errors import StoreError

    try:
        return sink.add_result(record)
    except StoreError as exc:
        where = f"repetition {record.repetition + 1} of workload {record.workload!r}"
        saved = None
        with contextlib.suppress(OSError):
            fd, saved = tempfile.mkstemp(prefix=f"storbench-unstored-run{record.run_id}-{record.workload}-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(record.raw_output or "")
        kept = (f"fio's output is kept in {saved} (storbench import it once the store has room)" if saved
                else "fio's output could not be saved either")  # fmt: skip
        raise StoreError(f"{exc.message}; {where} was measured but not stored: {kept}") from exc


#: ``--prefill``: one sequential pass of incompressible 1 MiB writes over the test area.
PREFILL_WORKLOAD = Workload(
    name="prefill",
    description="storbench --prefill: one sequential write pass over the test area before the workloads",
    options=(("rw", "write"), ("bs", "1m"), ("ioengine", "psync"), ("refill_buffers", "1"), ("end_fsync", "1")),
    headline="bw",
    origin="storbench",
)


def _prefill(specs: Sequence[JobSpec], target: Target, storage: StorageInfo | None, executor: FioExecutor,
             reporter: Reporter) -> StorageInfo | None:  # fmt: skip
    """Run :data:`PREFILL_WORKLOAD` over the largest area the target's workloads use (its export
    or device where they name no size); one-line :class:`TargetError` when it fails."""
    sizes = [dict(s.options).get("size") for s in specs if s.target == target]
    known = [s for s in sizes if s and not s.endswith("%")]
    first = next(s for s in specs if s.target == target)
    from ..fio.json import parse_fio_json
    from ..units import parse_size

    size = max(known, key=parse_size) if known else None  # None: the whole file, device or export
    job = build_job(PREFILL_WORKLOAD, target, Overrides(size=size), test_file_name=_test_file_name(first))
    started = time.monotonic()
    inv = run_fio(executor, job, lambda status: None)
    result = None
    try:
        result = parse_fio_json(inv.output_text)
    except FioParseError:
        pass
    reason = fio_failure_reason(inv, result)
    if reason is not None:
        raise TargetError(f"--prefill of {target.display} failed: {reason}")
    written = sum(j.directions["write"].io_bytes for j in result.jobs if "write" in j.directions) if result else 0
    from ..units import format_bytes

    note = f"--prefill: wrote {format_bytes(written)} of {target.display} sequentially (1 MiB writes) in {time.monotonic() - started:.1f} s before the workloads"
    reporter.note(note)
    return dataclasses.replace(storage, notes=tuple(storage.notes) + (note,)) if storage is not None else storage


def run_fio(executor: FioExecutor, spec: JobSpec, on_status: Callable[[Status], None],
            watch: Callable[[], str | None] | None = None) -> FioInvocation:
    """``executor.run`` of one job, with the environment its target needs (CEPH_CONF for an RBD
    image) when it needs one, and ``watch`` (its server's, :mod:`.serverwatch`) when given; an
    executor that cannot set an environment (fio client/server) cannot run such a job, and says
    so in one line."""
    extra: JSONObject = {"watch": watch} if watch is not None else {}
    if not spec.env:
        return executor.run(spec.job_text, on_status, **extra)
    if executor.remote:  # the FioExecutor protocol: client mode passes no environment
        raise TargetError(f"{spec.target.display}: this target needs fio's environment ({', '.join(k for k, _ in spec.env)}), which fio's client/server mode cannot pass; run storbench on a host that reaches the cluster")
    return executor.run(spec.job_text, on_status, env=dict(spec.env), **extra)


def _test_file_name(spec: JobSpec) -> str:
    from ..jobs.jobfile import DEFAULT_TEST_FILE_NAME

    return os.path.basename(spec.test_files[0]) if spec.test_files else DEFAULT_TEST_FILE_NAME


def _lay_out_where_fio_cannot(specs: Sequence[JobSpec], target: Target, storage: StorageInfo | None,
                              reporter: Reporter) -> StorageInfo | None:  # fmt: skip
    """On a network filesystem that refuses to grow a file with ftruncate (smbnetfs), write the
    test file storbench shares across the run's workloads itself, as large as the largest needs
    (see :mod:`storbench.run.layout`); the storage description gets a note saying so."""
    fs = getattr(storage, "filesystem", None)
    if target.kind != "dir" or fs is None or getattr(fs, "network", None) is None:
        return storage
    from ..units import parse_size
    from .layout import grows_by_truncate, write_file_when_answering

    ok, why = grows_by_truncate(target.path)
    if ok:
        return storage
    sizes: dict[str, int] = {}
    for spec in specs:
        if spec.target != target:
            continue
        size = dict(spec.options).get("size")
        if not size or size.endswith("%"):
            continue
        for path in spec.test_files:
            sizes[path] = max(sizes.get(path, 0), parse_size(size))
    notes = []
    for path, nbytes in sizes.items():
        try:
            write_file_when_answering(path, nbytes)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise TargetError(
                f"{fs.fstype} at {fs.mountpoint} refuses to grow a file with ftruncate ({why}), and writing the test file "
                f"{path} there failed too: {exc.strerror or exc}"
            ) from None
        from ..units import format_bytes

        notes.append(
            f"{fs.fstype} at {fs.mountpoint} refuses to grow a file with ftruncate ({why}), which fio's layout needs: "
            f"storbench wrote the {format_bytes(nbytes)} test file {path} itself"
        )
    for note in notes:
        reporter.note(note)
    return dataclasses.replace(storage, notes=tuple(storage.notes) + tuple(notes)) if notes and storage is not None else storage


def _target_changed(target: Target, when: str) -> str:
    what = "directory" if target.kind == "dir" else "file"
    return f"the target {what} was unmounted, removed or replaced {when}"


def _last_uses(specs: Sequence[JobSpec]) -> set[int]:
    """Client/server runs: the index of the last spec using each test file (its last repetition
    ends with ``unlink=1``, so that no cleanup job has to start fio on every host again; a host
    where that job did not end well gets the cleanup job: :meth:`ClientFio.remove_test_files`)."""
    from .hosts import filename_of

    last: dict[str, int] = {}
    for index, spec in enumerate(specs):
        if spec.workload.is_fio and (name := filename_of(spec.job_text)):
            last[name] = index
    return set(last.values())


def _repetitions(repeat: Repeat, start: int = 0) -> Iterator[int]:
    limit = repeat.max_runs if repeat.until_rse_pct is not None else repeat.count
    yield from range(start, max(1, limit))


def _settled(repeat: Repeat, records: Sequence[ResultRecord], headline: str) -> bool:
    """Whether stored repetitions already satisfy the repeat rule (for --resume)."""
    decision = _next_step(repeat, [r.fio for r in records], headline)
    return decision is not None and not decision.again


def _next_step(repeat: Repeat, results: Sequence[FioResult], headline: str):
    """None: keep going (fixed count not reached); else the stats module's decision."""
    from ..metrics import headline_value
    from ..stats.core import RepeatDecision, should_repeat

    if repeat.until_rse_pct is None:
        done = len(results) >= repeat.count
        return RepeatDecision(again=False, reason=f"{len(results)} of {repeat.count} runs", converged=True) if done else None
    values = [v for v in (headline_value(r, headline) for r in results) if v is not None]
    if len(values) < len(results):
        # the headline metric is not measured (e.g. latency with gtod_reduce): fixed count instead
        done = len(results) >= repeat.min_runs
        reason = f"headline metric not measured; stopped after {len(results)} runs (min-runs)"
        return RepeatDecision(again=not done, reason=reason, converged=done)
    return should_repeat(values, target_rse_pct=repeat.until_rse_pct, min_runs=repeat.min_runs, max_runs=repeat.max_runs)


def _not_converged(workload: str, reason: str, repeat: Repeat) -> Finding:
    from ..model import Finding

    return Finding(
        check="repeat-not-converged",
        severity="warning",
        message=f"the headline metric did not settle: {reason}",
        fix=f"raise --max-runs above {repeat.max_runs}, lengthen --runtime, or find the noise source (other load, thermal throttling, garbage collection)",
        workload=workload,
    )


def _with_finding(record: ResultRecord, finding: Finding) -> ResultRecord:
    return dataclasses.replace(record, findings=tuple(record.findings) + (finding,))


def _measure_once(
    run_id: int | Callable[[], int],
    spec: JobSpec,
    repetition: int,
    previous: Sequence[ResultRecord],
    storage: StorageInfo | None,
    *,
    executor: FioExecutor,
    telemetry: Telemetry,
    label: str | None,
    clock: Callable[[], str],
    fio_version: str,
    on_status: Callable[[Status], None],
    on_devices: Callable[[Sequence[DeviceSample]], None] | None = None,
    watch: Callable[[], str | None] | None = None,
) -> tuple[ResultRecord, list[ResultRecord], list[Failure]] | Failure:
    """One fio run of one job, with everything recorded around it; with each of fio's status
    lines, ``on_devices`` is given the activity sampler's newest reading of each device;
    ``watch``: the target's server watch (:mod:`.serverwatch`), polled while fio runs.

    Returns the primary record (the only one, or the aggregate of a client/server
    run), the per-host records of a client/server run, and per-host failures.
    """
    remote = executor.remote  # client/server: the target is on other hosts
    before = measure_space(spec) if not remote else None
    backend_cm = (
        telemetry.backend_sampler(storage, spec.target, _area_bytes(spec)) if not remote else None
    ) or contextlib.nullcontext(None)
    with telemetry.sampler(storage) as sampler, backend_cm as backend_box:
        watch_status = on_status
        if on_devices is not None and sampler is not None:

            def watch_status(status: Status) -> None:
                on_status(status)
                on_devices(sampler.latest())

        inv = run_fio(executor, spec, watch_status, watch)
    activity = sampler.series() if sampler is not None else None
    # imported once the first fio has run: nothing before it needs the result records
    from ..fio.json import parse_fio_json
    from ..model import ResultRecord

    backend = backend_box.activity() if backend_box is not None else None
    after = measure_space(spec, flush=needs_flush(storage)) if not remote else None
    result: FioResult | None = None
    parse_problem = None
    try:
        result = parse_fio_json(inv.output_text)
    except FioParseError as exc:
        parse_problem = str(exc)
    reason = fio_failure_reason(inv, result)
    if reason is not None and result is not None and any(
        h is not None and not r.error for h, r in per_host_results(result, inv.host_names)
    ):
        reason = None  # client/server: the hosts that worked are kept; the others fail one by one below
    if reason is None and parse_problem:
        reason = parse_problem
    if reason is not None:
        from ..targets import kind_of

        reason = kind_of(spec.target).explain_failure(spec.target, reason)
        if backend is not None and backend.problems:
            reason = f"{reason}; {backend.problems[-1]}"
        return Failure(spec.workload.name, spec.target.display, reason)
    assert result is not None
    if result.fio_version is None:
        result = dataclasses.replace(result, fio_version=fio_version)
    space = None if before is None or after is None else {
        "files_before": before["files"],
        "files_after": after["files"],
        "fs_used_before": before["fs_used"],
        "fs_used_after": after["fs_used"],
        # storbench lays out its own test file in a directory target; a file target is the user's
        "test_file_created": spec.target.kind == "dir",
    }
    record = ResultRecord(
        run_id=run_id if isinstance(run_id, int) else run_id(),
        workload=spec.workload.name,
        target=spec.target.display,
        fio=result,
        raw_output=inv.output_text,
        label=label,
        options=dict(spec.options),
        job_text=spec.job_text,
        repetition=repetition,
        created_at=clock(),
        storage=storage,
        activity=activity,
        space=space,
        series=_series(inv),
        backend=backend,
    )
    hosts = per_host_results(result, inv.host_names)
    if not hosts:
        return dataclasses.replace(record, findings=_findings(spec, record, previous, telemetry)), [], []
    from .hosts import common_window, host_outputs, host_timing, partial_findings, straggler_findings, window_findings

    timing = host_timing([(h, r) for h, r in hosts if h is not None and not r.error])
    own_outputs = host_outputs(inv.output_text, inv.host_names)
    per_host: list[ResultRecord] = []
    failures: list[Failure] = []
    # without fio's "All clients" entry (one host left) the whole result is the aggregate
    aggregate = dataclasses.replace(record, host="all")
    #: hosts asked for with no result in this aggregate, and why
    missing: dict[str, str] = dict(inv.left_out)
    for host, host_result in hosts:
        if host is None:
            aggregate = dataclasses.replace(record, fio=host_result, host="all")
            continue
        if host_result.error:
            why = "fio error {} ({})".format(*errno_text(host_result.error))
            missing[host] = why
            failures.append(Failure(spec.workload.name, f"{host}:{spec.target.display}", f"host {host}: {why}"))
            continue
        per_host.append(dataclasses.replace(record, fio=host_result, host=host, activity=None, series={"timing": timing.get(host)},
                                            raw_output=own_outputs.get(host, inv.output_text)))  # fmt: skip
    for host, why in inv.lost_hosts.items():  # a server killed mid-run is missing from fio's JSON
        failures.append(Failure(spec.workload.name, f"{host}:{spec.target.display}", f"host {host}: {why}"))
        missing[host] = why
    slow = partial_findings(spec.workload.name, len(per_host), missing)
    named = [(r.host, r) for r in per_host if r.host is not None]  # each of per_host is named (above)
    slow += straggler_findings(spec.workload.name, spec.workload.headline, [(host, r.fio) for host, r in named])
    window = common_window({host: inv.host_series[host] for host, _r in named if host in inv.host_series})
    if window is not None:  # the aggregate over the seconds every host ran, beside fio's sum
        from ..metrics import direction_figures

        fio_sum = sum(f["iops"] or 0 for d, f in direction_figures(aggregate.fio).items() if d != "result")
        slow += window_findings(spec.workload.name, window, fio_sum)
        aggregate = dataclasses.replace(aggregate, series={**(aggregate.series or {}), "window": window.to_dict()})
    aggregate = dataclasses.replace(aggregate, findings=_findings(spec, aggregate, previous, telemetry) + tuple(slow))
    return aggregate, per_host, failures


def _measure_load(
    run_id: int | Callable[[], int],
    spec: JobSpec,
    repetition: int,
    previous: Sequence[ResultRecord],
    storage: StorageInfo | None,
    *,
    telemetry: Telemetry,
    label: str | None,
    clock: Callable[[], str],
) -> tuple[ResultRecord, list[ResultRecord], list[Failure]] | Failure:
    """One repetition of an application load (run/loads.py), recorded like a fio result: its
    figures as measures, the devices' activity while it ran, the findings of the load checks."""
    from ..model import ResultRecord
    from .loads import LoadFailed, run_load

    try:
        done = run_load(spec, storage, telemetry)
    except LoadFailed as exc:
        return Failure(spec.workload.name, spec.target.display, str(exc))
    record = ResultRecord(
        run_id=run_id if isinstance(run_id, int) else run_id(), workload=spec.workload.name, target=spec.target.display,
        fio=done.result, raw_output=done.output, label=label, options=dict(spec.options), job_text=spec.job_text,
        repetition=repetition, created_at=clock(), storage=storage, activity=done.activity, backend=done.backend,
    )  # fmt: skip
    return dataclasses.replace(record, findings=_findings(spec, record, previous, telemetry)), [], []


def _area_bytes(spec: JobSpec) -> int | None:
    """The bytes of the target a job uses (its ``size=``), when storbench can tell."""
    from ..units import parse_size

    size = dict(spec.options).get("size")
    if not size or size.endswith("%"):
        return None
    try:
        return parse_size(size)
    except (UsageError, ValueError):
        return None


def per_host_results(
    result: FioResult, names: Mapping[tuple[str, int], str] | None = None
) -> list[tuple[str | None, FioResult]]:
    """Split a client/server result into one result per host plus the aggregate
    (host None); an ordinary result gives an empty list.  Pure.

    A host is fio's (``hostname``, ``port``): two servers on one address (SSH
    tunnels, loopback) are two hosts.  It is named ``names[(hostname, port)]``
    when given, else ``hostname``, else ``hostname:port`` where the address is shared;
    hosts in ``names`` come first, in its order.
    """
    if not any(j.hostname for j in result.jobs):
        return []
    # fio gives a host's port as an int; a job read without one (port None) is still a host of its own
    given: dict[tuple[str | None, int | None], str] = {key: name for key, name in (names or {}).items()}
    out: list[tuple[str | None, FioResult]] = []
    keys = list(dict.fromkeys((j.hostname, j.port) for j in result.jobs if j.hostname and not j.is_aggregate))
    order = {key: i for i, key in enumerate(given)}  # fio lists hosts as they finish: keep the given order
    keys.sort(key=lambda key: order.get(key, len(order)))
    shared = {h for h, _ in keys if sum(1 for k, _ in keys if k == h) > 1}
    for key in keys:
        hostname, port = key
        name = given.get(key) or (f"{hostname}:{port}" if hostname in shared else hostname)
        jobs = tuple(j for j in result.jobs if (j.hostname, j.port) == key and not j.is_aggregate)
        # disk_util names the host but not the port: shared addresses keep every entry of that address
        disks = tuple(d for d in result.disk_util if getattr(d, "hostname", None) in (hostname, None))
        out.append((name, dataclasses.replace(result, jobs=jobs, disk_util=disks)))
    aggregate = tuple(_with_hosts_latency(j, [h for h in result.jobs if not h.is_aggregate]) for j in result.jobs if j.is_aggregate)
    if aggregate:
        out.append((None, dataclasses.replace(result, jobs=aggregate, disk_util=())))
    return out


def _with_hosts_latency(aggregate: JobResult, hosts: Sequence[JobResult]) -> JobResult:
    """fio's "All clients" entry carries no latency: give each of its directions the hosts' merged
    distribution (from their json+ histograms: :func:`storbench.metrics.merge_latency`), as
    group_reporting would have computed it; left as it is where a histogram is missing."""
    directions = dict(aggregate.directions)
    for name, d in aggregate.directions.items():
        parts = [h.directions[name] for h in hosts if name in h.directions]
        clat, lat = (_merged_latency(getattr(d, kind), [getattr(p, kind) for p in parts]) for kind in ("clat_ns", "lat_ns"))
        if clat is not None or lat is not None:
            directions[name] = dataclasses.replace(d, clat_ns=clat if clat is not None else d.clat_ns,
                                                   lat_ns=lat if lat is not None else d.lat_ns)  # fmt: skip
    return dataclasses.replace(aggregate, directions=directions)


def _merged_latency(own: LatencyStats | None, hosts: Sequence[LatencyStats | None]) -> LatencyStats | None:
    """The hosts' latencies merged where the aggregate has no distribution of its own (None: it has
    one, or a host has none, or there are no hosts)."""
    from ..metrics import merge_latency

    if own is not None and own.percentiles:
        return None
    given = [h for h in hosts if h is not None]
    return merge_latency(given) if hosts and len(given) == len(hosts) else None


def _series(inv: FioInvocation) -> JSONMapping | None:
    if not inv.logs:
        return None
    from ..fio.logs import series_from_logs

    try:
        return series_from_logs(inv.logs)
    except FioParseError:
        return None


#: Job options that make fio write per-second interval logs into its working directory.
INTERVAL_LOG_OPTIONS: tuple[tuple[str, str], ...] = (
    ("write_bw_log", "sb"),
    ("write_iops_log", "sb"),
    ("log_avg_msec", "1000"),
)


def _findings(
    spec: JobSpec, record: ResultRecord, previous: Sequence[ResultRecord], telemetry: Telemetry | None = None
) -> tuple[Finding, ...]:
    """The pitfall checks over this repetition and the ones before it."""
    try:
        from ..checks import CheckContext, FileState, run_checks
    except ImportError:  # pragma: no cover - checks not installed
        return ()
    space = record.space or {}
    mem = getattr(getattr(record.storage, "host", None), "mem_bytes", None)
    ctx = CheckContext(
        workload=spec.workload.name,
        options=dict(spec.options),
        results=tuple(r.fio for r in previous) + (record.fio,),
        storage=record.storage,
        activity=tuple(r.activity for r in previous) + (record.activity,),
        files_before=tuple(FileState(*f) for f in space.get("files_before", [])),
        files_after=tuple(FileState(*f) for f in space.get("files_after", [])),
        fs_used_before=space.get("fs_used_before"),
        fs_used_after=space.get("fs_used_after"),
        mem_bytes=mem,
        test_file_created=bool(space.get("test_file_created")),
        headline=spec.workload.headline,
        tool=spec.workload.tool,
        backend=record.backend,
        series=tuple(r.series for r in previous) + (record.series,),
    )
    return tuple(run_checks(ctx)) + _share_ceiling(record, telemetry)


def _share_ceiling(record: ResultRecord, telemetry: Telemetry | None) -> tuple[Finding, ...]:
    """Hook: a network share measured at (or above) the network's ceiling.  The
    ceilings come from ``telemetry.net_ceilings`` (server -> bits/s, measured by
    ``storbench net``; the CLI attaches them), looked up by the share's server."""
    ceilings = telemetry.net_ceilings if telemetry is not None else None
    fs = getattr(record.storage, "filesystem", None)
    export = getattr(record.storage, "export", None)
    server = getattr(getattr(fs, "network", None), "server", None)
    what = fs.fstype if fs is not None else None
    if server is None and export is not None and export.server and not export.server.startswith("/"):
        server = export.server.rsplit(":", 1)[0].strip("[]")  # an NBD export over TCP: its host
        what = "nbd"
    if not ceilings or not server:
        return ()
    from ..net import share_ceiling_findings

    found = share_ceiling_findings(record.fio, what, ceilings.get(server))
    return tuple(dataclasses.replace(f, workload=record.workload) for f in found)


def check_free_space(specs: Sequence[JobSpec]) -> None:
    """Refuse before starting when a target's filesystem cannot hold the test file."""
    from ..units import parse_size

    need: dict[str, int] = {}
    where: dict[str, str] = {}
    for spec in specs:
        if spec.target.kind != "dir":
            continue
        size = dict(spec.options).get("size")
        if not size or size.endswith("%"):
            continue
        nbytes = parse_size(size)
        for path in spec.test_files:
            if nbytes > need.get(path, 0):
                need[path] = nbytes
                where[path] = spec.workload.name
    # every test file of a run stays until the end: those on one filesystem add up
    by_fs: dict[int, list[str]] = {}
    for path in need:
        by_fs.setdefault(os.stat(os.path.dirname(path)).st_dev, []).append(path)
    for paths in by_fs.values():
        fs = os.statvfs(os.path.dirname(paths[0]))
        if fs.f_blocks == 0:
            continue  # no size reported (ramfs, some FUSE): nothing to judge by
        free = fs.f_bavail * fs.f_frsize
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                free += os.stat(path).st_blocks * 512
        total = sum(need[p] for p in paths)
        if total <= free:
            continue
        from ..units import format_bytes

        if len(paths) == 1:
            [path] = paths
            raise TargetError(
                f"target {os.path.dirname(path)!r} has {format_bytes(free)} free but workload {where[path]!r} needs a "
                f"{format_bytes(need[path])} test file; give a smaller --size or another --target"
            )
        dirs = ", ".join(repr(os.path.dirname(p)) for p in paths)
        largest = max(paths, key=lambda p: need[p])
        raise TargetError(
            f"targets {dirs} share one filesystem with {format_bytes(free)} free but their test files need "
            f"{format_bytes(total)} together (workload {where[largest]!r} needs {format_bytes(need[largest])} in "
            f"{os.path.dirname(largest)!r}); give a smaller --size or targets on different filesystems"
        )


#: Removes a test file storbench cannot unlink itself (in a GlusterFS volume): fio reads 4 KiB and unlinks it.
CLEANUP_WORKLOAD = Workload(
    name="cleanup",
    description="storbench: remove the test file from a target without a local path",
    options=(("rw", "read"), ("bs", "4k"), ("io_size", "4k"), ("unlink", "1"), ("ioengine", "psync")),
    origin="storbench",
)


def _remove_remote_test_files(specs: Sequence[JobSpec], executor: FioExecutor) -> None:
    from ..targets import kind_of

    done: set[str] = set()
    for spec in specs:
        if spec.target.path in done or not kind_of(spec.target).remote_test_file:
            continue
        done.add(spec.target.path)
        names = sorted({os.path.basename(f) for s in specs if s.target == spec.target for f in s.test_files} or {_test_file_name(spec)})
        with signals.held():
            with contextlib.suppress(Exception):  # a server that is gone: nothing to remove it from
                if not kind_of(spec.target).remove_remote(spec.target, names):
                    run_fio(executor, build_job(CLEANUP_WORKLOAD, spec.target, Overrides(size="4k")), lambda status: None)


def _artifacts(specs: Sequence[JobSpec]) -> dict[str, bool]:
    """The files fio's engines write outside their job directory, and whether each exists now."""
    from ..targets import kind_of

    paths = {p for spec in specs for p in kind_of(spec.target).artifacts}
    return {p: os.path.exists(p) for p in paths}


def _remove_artifacts(before: Mapping[str, bool]) -> None:
    for path, existed in before.items():
        if not existed:
            with contextlib.suppress(OSError):
                os.unlink(path)


#: the probe of a size-based job's speed (plan.py): this much of the area, this long
PROBE_SIZE = "32m"
PROBE_RUNTIME = "2s"
PROBE_FILE_NAME = "storbench.probe"


def probe_rate(executor: FioExecutor, spec: JobSpec) -> float | None:
    """Bytes per second (all jobs together) of ``spec``'s workload run for :data:`PROBE_RUNTIME`
    on :data:`PROBE_SIZE` of its target, time-based, without warm-up: the speed a size-based
    job's duration is estimated from.  Its own test file is removed; None when fio fails."""
    from ..fio.json import parse_fio_json

    opts = dict(spec.options)
    extra = (("time_based", "1"), ("ramp_time", "0"), ("startdelay", "0"))
    engine = opts.get("ioengine")
    job = build_job(spec.workload, spec.target, Overrides(size=PROBE_SIZE, runtime=PROBE_RUNTIME, extra=extra),
                    ioengine=engine, test_file_name=PROBE_FILE_NAME)  # fmt: skip
    try:
        inv = run_fio(executor, job, lambda status: None)
        result = parse_fio_json(inv.output_text)
    except (FioParseError, TargetError, OSError):
        return None
    finally:
        remove_test_files([job])
    if fio_failure_reason(inv, result) is not None:
        return None
    from ..metrics import direction_figures

    total = sum(f["bw_bytes"] or 0.0 for f in direction_figures(result).values() if "bw_bytes" in f)
    return total or None


def remove_test_files(specs: Sequence[JobSpec]) -> None:
    seen: set[str] = set()
    for spec in specs:
        for path in spec.test_files:
            if path in seen:
                continue
            seen.add(path)
            # gone already, or not ours to remove (someone else's file, a vanished mount)
            with contextlib.suppress(OSError):
                os.unlink(path)


