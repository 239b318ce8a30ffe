"""Running one fio process (edge): the job file in, fio's output, stderr, status lines and logs out.

:class:`SubprocessFio` runs the real fio binary with an argument list (never a shell) in a
session of its own, dying with storbench (``PR_SET_PDEATHSIG``); :func:`stop` asks it to stop
like Ctrl-C would, then insists.  The runner and the many-hosts client
(:mod:`storbench.run.hosts`) both build on this module, which imports neither.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..errors import FioMissingError, TargetError
from ..fio.progress import Status, parse_status_line, split_status_chunks
from ..process import proc, signals

if TYPE_CHECKING:
    from storbench.jsontypes import JSONObject

    from ..model import JobSpec


def raise_if_stopping() -> None:
    """A signal handler's KeyboardInterrupt can be lost: Python drops exceptions raised
    while it runs an at-fork callback or a finalizer, and subprocess forks for every fio
    run.  The handler also records the request, and the loop checks it before every run."""
    if signals.stop_requested:
        raise KeyboardInterrupt(signals.stop_requested[0])


# --------------------------------------------------------------------------- fio execution


@dataclass(frozen=True)
class FioInvocation:
    """What one fio process left behind."""

    returncode: int
    output_text: str  # the --output file, verbatim
    stderr_text: str
    stdout_text: str  # status lines and anything else fio printed to stdout
    interrupted: bool = False
    #: interval logs fio wrote into its working directory, by file name
    logs: Mapping[str, str] = field(default_factory=dict)
    #: client/server (storbench.run.hosts.ClientFio): what to call each (hostname, port) of fio's JSON
    host_names: Mapping[tuple[str, int], str] = field(default_factory=dict)
    #: client/server: hosts (by name) with no result in fio's JSON, and why
    lost_hosts: Mapping[str, str] = field(default_factory=dict)
    #: client/server: each host's per-second figures, Unix-time stamped (storbench.fio.logs.epoch_series)
    host_series: Mapping[str, tuple[tuple[int, float, float], ...]] = field(default_factory=dict)
    #: client/server: hosts asked for but not run (left out by the pre-flight), and why
    left_out: Mapping[str, str] = field(default_factory=dict)
    #: why storbench stopped this fio before it ended (its ``watch`` said: the server gone), else None
    stopped_reason: str | None = None


class FioExecutor(Protocol):
    """What runs fio.  ``env``: variables fio's environment needs for this job (CEPH_CONF for the
    rbd engine); given only when the job has some.  ``remote``: fio runs on other hosts (client
    mode), which cannot pass an environment: such jobs are refused before they are given.
    ``watch``: called while fio runs (a few times a second); a reason it returns stops fio, and the
    invocation carries it (:attr:`FioInvocation.stopped_reason`); given only to a local executor,
    for a target whose server can vanish (storbench.run.serverwatch)."""

    remote: bool
    #: the fio program (also what probes of the I/O engine run)
    path: str

    def version(self) -> str: ...

    def run(self, job_text: str, on_status: Callable[[Status], None], env: Mapping[str, str] | None = None,
            watch: Callable[[], str | None] | None = None) -> FioInvocation: ...


def output_format(job_text: str) -> str:
    """``json+`` (with the latency histograms) where fio reports several jobs of one workload apart
    (numjobs above 1, or a job file's group of sections, without group_reporting), whose p99
    storbench merges from their histograms (:func:`storbench.metrics.union_p99`); else ``json``
    (a job's own percentiles are exact)."""
    numjobs = re.findall(r"^numjobs=(\d+)\s*$", job_text, re.M)
    sections = len(re.findall(r"^\[", job_text, re.M))
    grouped = re.search(r"^group_reporting(=1|=true)?\s*$", job_text, re.M) is not None
    grouped = grouped and re.search(r"^new_group(=1)?\s*$", job_text, re.M) is None  # new_group: reported apart
    return "json+" if (sections > 1 or any(int(n) > 1 for n in numjobs)) and not grouped else "json"


#: ``fio --version`` started ahead of need, by resolved path (see :func:`start_version`)
_VERSION_STARTED: dict[str, subprocess.Popen] = {}

#: the fio processes this storbench is running now (pid -> process), killed with their job processes
#: if storbench exits while one still runs (:func:`_kill_running_fio`): whatever path left it
#: running, a fio must not outlive storbench (one that got its parent-death SIGTERM can hang in a
#: lock a dead job process held, for ever; seen once under load, after a matrix was SIGTERMed)
_RUNNING: dict[int, subprocess.Popen] = {}


def _kill_running_fio() -> None:
    for pid, child in list(_RUNNING.items()):
        if child.poll() is None:
            jobs = proc.children_of(pid, "fio")
            proc.kill_leftovers(pid, timeout_s=2.0)
            _kill_jobs(jobs)


def _kill_jobs(jobs: Sequence[int]) -> None:
    """SIGKILL what is left of fio's job processes ``jobs``.  Each runs in a session (and process
    group) of its own -- fio calls setsid() in every job process -- so stopping fio's group does
    not reach them; one whose I/O never completes (libiscsi reconnecting to a dead target, busy)
    outlives its fio for ever (seen: fio's libiscsi engine after tgtd was SIGKILLed)."""
    for pid in jobs:
        if pid in proc.group_members(pid):  # still its own group's leader: the job, not a new process with its PID
            proc.kill_leftovers(pid, timeout_s=2.0)


atexit.register(_kill_running_fio)


def start_version(fio_path: str) -> None:
    """Start ``fio --version`` now; the next :meth:`SubprocessFio.version` of that fio reads its
    answer.  ``storbench run`` calls this before parsing the suites, which then overlap fio's
    start-up (25 ms of the run's own).  A missing fio is said later, where it always was."""
    resolved = shutil.which(fio_path)
    if resolved is None or resolved in _VERSION_STARTED:
        return
    try:
        child, _ = proc.spawn([resolved, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return
    _VERSION_STARTED[resolved] = child


class SubprocessFio:
    """Runs the real fio binary with an argument list (never a shell)."""

    remote = False

    def __init__(self, fio_path: str = "fio") -> None:
        resolved = shutil.which(fio_path)
        if resolved is None:
            raise FioMissingError(
                f"fio not found ({fio_path!r} is not on PATH); install it with 'apt-get install fio' or 'make install'"
            )
        self.path = resolved
        self._version: str | None = None
        #: while set, fio is waited for in 50 ms steps and stopped when this returns an error
        #: (the store still opening on another thread failed: see run/session.py, PendingStore)
        self.abort_check: Callable[[], BaseException | None] | None = None

    def version(self) -> str:
        if self._version is None:
            started = _VERSION_STARTED.pop(self.path, None)
            if started is not None:
                try:
                    out, _ = started.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.stop_group(started)
                    raise
                self._version = out.strip() or "unknown"
            else:
                out = proc.run([self.path, "--version"], timeout_s=30, c_locale=False)
                self._version = out.stdout.strip() or "unknown"
        return self._version

    def run(self, job_text: str, on_status: Callable[[Status], None], env: Mapping[str, str] | None = None,
            watch: Callable[[], str | None] | None = None) -> FioInvocation:
        """``env``: variables added to fio's environment (CEPH_CONF for the rbd engine); ``watch``:
        see :class:`FioExecutor`."""
        # the PID in the name lets a later run remove it when this process was killed (store/owner.py)
        with tempfile.TemporaryDirectory(prefix=f"storbench-fio-{os.getpid()}-") as tmp:
            job_path = os.path.join(tmp, "job.fio")
            out_path = os.path.join(tmp, "out.json")
            err_path = os.path.join(tmp, "stderr.txt")
            with open(job_path, "w", encoding="utf-8") as fh:
                fh.write(job_text)
            argv = [
                self.path,
                f"--output={out_path}",
                f"--output-format={output_format(job_text)}",
                "--eta=always",
                "--eta-newline=1",
                job_path,
            ]
            interrupted = False
            stopped_reason: str | None = None
            with open(err_path, "w+b") as err:
                # a new session (Ctrl-C reaches storbench, which stops fio itself); a signal while it
                # is forked is raised once fio is ours to stop; relative log names (write_bw_log=sb) land in tmp
                child, noted = proc.spawn(argv, stdout=subprocess.PIPE, stderr=err, cwd=tmp, env_extra=env)
                _RUNNING[child.pid] = child
                stdout_parts: list[str] = []
                reader = threading.Thread(
                    target=_pump_status, args=(child, stdout_parts, on_status), daemon=True
                )
                reader.start()
                try:
                    signals.raise_noted(noted)
                    raise_if_stopping()  # a signal whose exception was lost while forking
                    while (abort_check := self.abort_check) is not None:  # cleared by another thread
                        try:
                            child.wait(timeout=0.05)
                            break
                        except subprocess.TimeoutExpired:
                            if (error := abort_check()) is not None:
                                raise error from None
                    while watch is not None and child.poll() is None:
                        try:
                            child.wait(timeout=0.25)
                        except subprocess.TimeoutExpired:
                            if (stopped_reason := watch()) is not None:
                                stop_fio(child, _SERVER_GONE_LADDER)
                                break
                    child.wait()
                except BaseException:
                    interrupted = True
                    stop_fio(child)
                    raise
                finally:
                    if child.returncode != 0:
                        proc.kill_leftovers(child.pid)  # what fio left in its own group (its job processes have sessions of their own: stop_fio)
                    _RUNNING.pop(child.pid, None)
                    reader.join(timeout=5)
                    if not reader.is_alive() and child.stdout is not None:
                        child.stdout.close()
                err.seek(0)
                stderr_text = err.read().decode("utf-8", errors="replace")
            output_text = ""
            if os.path.exists(out_path):
                with open(out_path, encoding="utf-8", errors="replace") as fh:
                    output_text = fh.read()
            logs = {}
            for name in sorted(os.listdir(tmp)):
                if name.endswith(".log"):
                    with open(os.path.join(tmp, name), encoding="ascii", errors="replace") as fh:
                        logs[name] = fh.read()
            return FioInvocation(
                returncode=child.returncode,
                output_text=output_text,
                stderr_text=stderr_text,
                stdout_text="".join(stdout_parts),
                interrupted=interrupted,
                logs=logs,
                stopped_reason=stopped_reason,
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


#: how fio is stopped: asked like Ctrl-C would (it then cleans up its job processes), then insisted
_LADDER = ((signal.SIGINT, 10.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0))
#: fio whose server is gone: its job waits on I/O that never completes (a TERM changes nothing
#: there), and what it would write is not kept, so it is asked once, briefly, then killed
_SERVER_GONE_LADDER = ((signal.SIGINT, 1.0), (signal.SIGKILL, 5.0))


def stop_fio(child: subprocess.Popen, ladder: Sequence[tuple[int, float]] = _LADDER) -> None:
    """Stop fio by ``ladder`` (signal, seconds to wait after it), each step sent when the last did
    not do; then its job processes, if any outlived it (:func:`_kill_jobs`)."""
    jobs = proc.children_of(child.pid, "fio")  # found now: once fio is gone they are init's
    proc.stop_group(child, ladder, group=False)
    _kill_jobs(jobs)


def run_fio(executor: FioExecutor, spec: JobSpec, on_status: Callable[[Status], None],
            watch: Callable[[], str | None] | None = None) -> FioInvocation:
    """``executor.run`` of one job, with the environment its target needs (CEPH_CONF for an RBD
    image) when it needs one, and ``watch`` (its server's, :mod:`.serverwatch`) when given; an
    executor that cannot set an environment (fio client/server) cannot run such a job, and says
    so in one line."""
    extra: JSONObject = {"watch": watch} if watch is not None else {}
    if not spec.env:
        return executor.run(spec.job_text, on_status, **extra)
    if executor.remote and (unnamed := [k for k, _ in spec.env if "${" + k + "}" not in spec.job_text]):
        # the FioExecutor protocol: client mode passes no environment, only values the job names
        raise TargetError(f"{spec.target.display}: this target needs fio's environment ({', '.join(unnamed)}), which fio's client/server mode cannot pass; run storbench on a host that reaches the cluster")
    if executor.remote and (odd := [k for k, v in spec.env if any(c in v for c in ";#\n")]):
        # fio reads everything after ';' or '#' on a job file's line as a comment (parse.c)
        raise TargetError(f"{spec.target.display}: the value of {odd[0]} holds ';', '#' or a line break, which fio would cut "
                          "from the job file its servers are sent; run storbench where fio runs, without --host")  # fmt: skip
    inv = executor.run(spec.job_text, on_status, env=dict(spec.env), **extra)
    return masked(inv, [v for k, v in spec.env if k.startswith(SECRET_ENV_PREFIX) and v])


#: environment variables whose values are secrets (an S3 target's keys): fio prints the options it
#: expanded them into, so its output has them masked before anything parses, shows or keeps it
SECRET_ENV_PREFIX = "STORBENCH_SECRET_"
MASK = "<masked>"


def masked(inv: FioInvocation, secrets: Sequence[str]) -> FioInvocation:
    """``inv`` with every one of ``secrets`` in its output, stderr, stdout and logs replaced by :data:`MASK`."""
    if not secrets:
        return inv

    def hide(text: str) -> str:
        for secret in sorted(secrets, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return text

    import dataclasses

    return dataclasses.replace(inv, output_text=hide(inv.output_text), stderr_text=hide(inv.stderr_text),
                               stdout_text=hide(inv.stdout_text), logs={k: hide(v) for k, v in inv.logs.items()})  # fmt: skip
