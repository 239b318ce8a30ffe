"""Edge: runs fio once per workload, reports progress, stores each result as soon as it exists.

The pure parts (job text, parsing) live elsewhere; this module owns processes,
temporary files, signals and the order of work.  Every workload's result is
committed to the store the moment fio finishes it, so an interrupt or a crash
later loses nothing already measured.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator, Protocol, Sequence

from . import __version__
from .errors import FioMissingError, FioParseError, FioRunError, Interrupted, TargetError
from .fio.json import parse_fio_json
from .fio.progress import Status, parse_status_line, split_status_chunks
from .jobfile import build_job
from .model import FioResult, JobSpec, Overrides, ResultRecord, Target, Workload

# --------------------------------------------------------------------------- fio execution


@dataclass(frozen=True)
class FioInvocation:
    """What one fio process left behind."""

    returncode: int
    output_text: str  # the --output file, verbatim
    stderr_text: str
    stdout_text: str  # status lines and anything else fio printed to stdout
    interrupted: bool = False


class FioExecutor(Protocol):
    def version(self) -> str: ...

    def run(self, job_text: str, on_status: Callable[[Status], None]) -> FioInvocation: ...


def _set_parent_death_signal() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: fio dies if storbench is killed
    except OSError:
        pass


class SubprocessFio:
    """Runs the real fio binary with an argument list (never a shell)."""

    def __init__(self, fio_path: str = "fio") -> None:
        resolved = shutil.which(fio_path)
        if resolved is None:
            raise FioMissingError(
                f"fio not found ({fio_path!r} is not on PATH); install it with 'apt-get install fio' or 'make install'"
            )
        self.path = resolved
        self._version: str | None = None

    def version(self) -> str:
        if self._version is None:
            out = subprocess.run([self.path, "--version"], capture_output=True, text=True, timeout=30)
            self._version = out.stdout.strip() or "unknown"
        return self._version

    def run(self, job_text: str, on_status: Callable[[Status], None]) -> FioInvocation:
        with tempfile.TemporaryDirectory(prefix="storbench-fio-") as tmp:
            job_path = os.path.join(tmp, "job.fio")
            out_path = os.path.join(tmp, "out.json")
            err_path = os.path.join(tmp, "stderr.txt")
            with open(job_path, "w", encoding="utf-8") as fh:
                fh.write(job_text)
            argv = [
                self.path,
                f"--output={out_path}",
                "--output-format=json",
                "--eta=always",
                "--eta-newline=1",
                job_path,
            ]
            interrupted = False
            with open(err_path, "w+b") as err:
                proc = subprocess.Popen(
                    argv,
                    stdout=subprocess.PIPE,
                    stderr=err,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,  # Ctrl-C reaches storbench, which stops fio itself
                    preexec_fn=_set_parent_death_signal,
                )
                stdout_parts: list[str] = []
                reader = threading.Thread(
                    target=_pump_status, args=(proc, stdout_parts, on_status), daemon=True
                )
                reader.start()
                try:
                    proc.wait()
                except BaseException:
                    interrupted = True
                    _stop(proc)
                    raise
                finally:
                    reader.join(timeout=5)
                err.seek(0)
                stderr_text = err.read().decode("utf-8", errors="replace")
            output_text = ""
            if os.path.exists(out_path):
                with open(out_path, encoding="utf-8", errors="replace") as fh:
                    output_text = fh.read()
            return FioInvocation(
                returncode=proc.returncode,
                output_text=output_text,
                stderr_text=stderr_text,
                stdout_text="".join(stdout_parts),
                interrupted=interrupted,
            )


def _pump_status(proc: subprocess.Popen, parts: list[str], on_status: Callable[[Status], None]) -> None:
    assert proc.stdout is not None
    buf = ""
    while True:
        chunk = proc.stdout.read1(4096) if hasattr(proc.stdout, "read1") else proc.stdout.read(4096)
        if not chunk:
            break
        text = chunk.decode("utf-8", errors="replace")
        parts.append(text)
        lines, buf = split_status_chunks(buf + text)
        for line in lines:
            status = parse_status_line(line)
            if status is not None:
                try:
                    on_status(status)
                except Exception:  # a progress display must never break a run
                    pass


def _stop(proc: subprocess.Popen) -> None:
    """Ask fio to stop like Ctrl-C would (it then cleans up), then insist."""
    for sig, wait_s in ((signal.SIGINT, 10), (signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


# --------------------------------------------------------------------------- failure reasons


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
    if result is not None:
        lines += [n for n in result.notes if n.startswith("fio:")]
    job_error = result.error if result is not None else 0
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
        errtext = os.strerror(job_error)
        if reason is None:
            reason = f"error {job_error} ({errtext})"
        elif errtext.lower() not in reason.lower():
            reason = f"{reason} ({errtext})"
    if reason is None:
        other = [ln.strip() for ln in inv.stderr_text.splitlines() if ln.strip()]
        reason = other[0] if other else f"fio exited with status {inv.returncode} and wrote no result"
    return reason


# --------------------------------------------------------------------------- targets


def resolve_target(path: str) -> Target:
    """Check a ``--target`` PATH and say what kind it is (one-line TargetError otherwise)."""
    if not os.path.exists(path):
        raise TargetError(f"target {path!r} does not exist (give an existing directory or regular file)")
    real = os.path.realpath(path)
    if os.path.isdir(real):
        if not os.access(real, os.W_OK | os.X_OK):
            raise TargetError(f"target {path!r} is a directory that is not writable by this user")
        return Target(kind="dir", path=os.path.abspath(path))
    if os.path.isfile(real):
        if not os.access(real, os.R_OK | os.W_OK):
            raise TargetError(f"target {path!r} is a file that is not readable and writable by this user")
        return Target(kind="file", path=os.path.abspath(path))
    import stat

    if stat.S_ISBLK(os.stat(real).st_mode):
        raise TargetError(
            f"target {path!r} is a block device; block-device targets are not supported yet "
            "(use a directory or a file on it)"
        )
    raise TargetError(f"target {path!r} is neither a directory nor a regular file")


@contextlib.contextmanager
def scratch_target(parent: str) -> Iterator[Target]:
    """A scratch directory on the disk that holds ``parent``, removed afterwards."""
    if not os.access(parent, os.W_OK):
        raise TargetError(
            f"cannot create a scratch directory in {parent!r} (not writable); give --target PATH"
        )
    path = tempfile.mkdtemp(prefix=".storbench-scratch-", dir=parent)
    try:
        yield Target(kind="dir", path=path, scratch=True)
    finally:
        shutil.rmtree(path, ignore_errors=True)


def host_facts(fio_version: str) -> dict:
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

    def workload_started(self, workload: Workload, target: Target, index: int, total: int) -> None: ...

    def status(self, status: Status) -> None: ...

    def workload_done(self, record: ResultRecord) -> None: ...

    def workload_failed(self, workload: Workload, target: Target, reason: str) -> None: ...


class SilentReporter:
    def workload_started(self, workload, target, index, total) -> None:  # noqa: D401
        pass

    def status(self, status) -> None:
        pass

    def workload_done(self, record) -> None:
        pass

    def workload_failed(self, workload, target, reason) -> None:
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


@dataclass(frozen=True)
class Failure:
    workload: str
    target: str
    reason: str


@dataclass(frozen=True)
class RunOutcome:
    run_id: int
    stored: tuple[int, ...]
    failures: tuple[Failure, ...]


def plan_jobs(
    plan: RunPlan, engine_for: Callable[[Target], str | None]
) -> list[JobSpec]:
    """All job specs of a plan, target by target, in suite order."""
    specs = []
    for target in plan.targets:
        engine = None
        for workload in plan.workloads:
            if workload.option("ioengine") == "auto":
                if engine is None:
                    engine = engine_for(target)
                specs.append(build_job(workload, target, plan.overrides, ioengine=engine))
            else:
                specs.append(build_job(workload, target, plan.overrides))
    return specs


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM into KeyboardInterrupt so both paths clean up the same way."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):  # noqa: ARG001
        raise KeyboardInterrupt("SIGTERM")

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def execute(
    run_id: int,
    specs: Sequence[JobSpec],
    *,
    executor: FioExecutor,
    sink: ResultSink,
    reporter: Reporter,
    label: str | None,
    clock: Callable[[], str],
    keep_files: bool = False,
) -> RunOutcome:
    """Run every job spec in order, storing each result the moment it exists.

    Raises :class:`Interrupted` on Ctrl-C/SIGTERM after cleaning up; results
    stored before the interrupt stay stored.
    """
    stored: list[int] = []
    failures: list[Failure] = []
    fio_version = executor.version()
    current = "(before the first workload)"
    try:
        with _sigterm_as_interrupt():
            for index, spec in enumerate(specs):
                current = spec.workload.name
                reporter.workload_started(spec.workload, spec.target, index, len(specs))
                inv = executor.run(spec.job_text, reporter.status)
                result: FioResult | None = None
                parse_problem = None
                try:
                    result = parse_fio_json(inv.output_text)
                except FioParseError as exc:
                    parse_problem = str(exc)
                reason = fio_failure_reason(inv, result)
                if reason is None and parse_problem:
                    reason = parse_problem
                if reason is not None:
                    failures.append(Failure(spec.workload.name, spec.target.display, reason))
                    reporter.workload_failed(spec.workload, spec.target, reason)
                    continue
                assert result is not None
                if result.fio_version is None:
                    result = _with_version(result, fio_version)
                record = ResultRecord(
                    run_id=run_id,
                    workload=spec.workload.name,
                    target=spec.target.display,
                    fio=result,
                    raw_output=inv.output_text,
                    label=label,
                    options=dict(spec.options),
                    job_text=spec.job_text,
                    created_at=clock(),
                    host=None,
                )
                result_id = sink.add_result(record)
                stored.append(result_id)
                reporter.workload_done(_with_id(record, result_id))
    except KeyboardInterrupt as exc:
        how = "SIGTERM" if str(exc) == "SIGTERM" else "Ctrl-C"
        raise Interrupted(
            f"interrupted ({how}) during workload {current!r}; "
            f"{len(stored)} result(s) were stored before it"
        ) from None
    finally:
        if not keep_files:
            remove_test_files(specs)
    return RunOutcome(run_id=run_id, stored=tuple(stored), failures=tuple(failures))


def check_free_space(specs: Sequence[JobSpec]) -> None:
    """Refuse before starting when a target's filesystem cannot hold the test file."""
    from .units import parse_size

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
    for path, nbytes in need.items():
        directory = os.path.dirname(path)
        free = shutil.disk_usage(directory).free
        with contextlib.suppress(FileNotFoundError):
            free += os.stat(path).st_blocks * 512
        if nbytes > free:
            from .render.units import fmt_bytes

            raise TargetError(
                f"target {directory!r} has {fmt_bytes(free)} free but workload {where[path]!r} needs a "
                f"{fmt_bytes(nbytes)} test file; give a smaller --size or another --target"
            )


def remove_test_files(specs: Sequence[JobSpec]) -> None:
    seen: set[str] = set()
    for spec in specs:
        for path in spec.test_files:
            if path in seen:
                continue
            seen.add(path)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def _with_version(result: FioResult, version: str) -> FioResult:
    import dataclasses

    return dataclasses.replace(result, fio_version=version)


def _with_id(record: ResultRecord, result_id: int) -> ResultRecord:
    import dataclasses

    return dataclasses.replace(record, result_id=result_id)
