"""Runs started from ``storbench serve``'s page (``serve --allow-run TARGET --token T``).

What the browser can ask for is a choice among what the operator allowed, never text that reaches
a command line: a built-in suite (or some of its workloads) by name, one of the allowed targets by
its number in the list, repetitions from 1 to :data:`MAX_REPETITIONS`, a size and a runtime from
fixed lists, a label (printable text, at most :data:`LABEL_MAX` characters).  :func:`read_form`
(pure) turns a submitted form into a :class:`LaunchRequest` or one :class:`FormError` line.

:class:`Launcher` (the edge) runs each as an ordinary ``storbench run`` child on the same store,
one at a time per target (the others wait in a queue, said on the page), records who started it
(the client's address, never the token: ``STORBENCH_STARTED_BY``, kept in the run's meta) and
learns its run id as soon as the run is stored (``STORBENCH_RUN_ID_FILE``), so the page can follow
it live.  Cancel is the child's Ctrl-C (SIGINT: the run ends as an interrupted run does, its
finished results kept and its files removed); a queued launch is simply dropped.  :meth:`close`
(serve stopping) cancels every queued and running launch and waits for them, so nothing is left.

May import: errors, suites, jobs, model, run.session's two names; never commands.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..process import proc
from ..run.session import RUN_ID_FILE_ENV, STARTED_BY_ENV

MAX_REPETITIONS = 10
LABEL_MAX = 80
#: the sizes and runtimes a form may choose ("": the suite's own)
SIZES = ("", "16m", "64m", "256m", "1g", "4g")
RUNTIMES = ("", "1s", "5s", "30s", "60s", "5m")
#: how long a cancelled or stopping run may take to end before it is killed
STOP_WAIT_S = 60.0
#: the lines of a run's own output a launch page shows
TAIL_LINES = 12


class FormError(ValueError):
    """A submitted form asks for something not allowed: one line, what and what is allowed."""


@dataclass(frozen=True)
class Allowed:
    """A target the operator listed: ``destroy`` when named with ``--allow-run-destroy`` (a device,
    or anything a run may write destroying its data)."""

    path: str
    destroy: bool = False


@dataclass(frozen=True)
class LaunchRequest:
    suite: str
    workloads: tuple[str, ...]
    target: Allowed
    repetitions: int
    label: str | None
    size: str
    runtime: str
    started_by: str


def _one(form: Mapping[str, Sequence[str]], name: str, default: str = "") -> str:
    values = form.get(name) or [default]
    if len(values) != 1:
        raise FormError(f"field {name!r} given {len(values)} times (once at most)")
    return values[0]


def read_form(form: Mapping[str, Sequence[str]], allowed: Sequence[Allowed], suites: Mapping[str, Sequence[str]],
              started_by: str) -> LaunchRequest:  # fmt: skip
    """The launch a form asks for, checked against what is allowed (``suites``: each built-in
    suite's workload names).  Pure; :class:`FormError` names the first field that is not."""
    suite = _one(form, "suite")
    if suite not in suites:
        raise FormError(f"suite {suite[:40]!r} is not a built-in suite (allowed: {', '.join(suites)})")
    workloads = tuple(form.get("workload") or ())
    for w in workloads:
        if w not in suites[suite]:
            raise FormError(f"workload {w[:40]!r} is not in the suite {suite!r}")
    if len(set(workloads)) != len(workloads):
        raise FormError("a workload is chosen twice")
    index = _one(form, "target")
    if not (index.isascii() and index.isdigit()) or not 0 <= int(index) < len(allowed):
        raise FormError(f"target {index[:12]!r} is not one of the {len(allowed)} targets this server allows (their numbers: 0 to {len(allowed) - 1})")
    reps_text = _one(form, "repetitions", "3")
    if not (reps_text.isascii() and reps_text.isdigit()) or not 1 <= int(reps_text) <= MAX_REPETITIONS:
        raise FormError(f"repetitions {reps_text[:12]!r}: a whole number from 1 to {MAX_REPETITIONS}")
    label = _one(form, "label").strip()
    if len(label) > LABEL_MAX or any(not c.isprintable() for c in label):
        raise FormError(f"label: at most {LABEL_MAX} printable characters")
    size, runtime = _one(form, "size"), _one(form, "runtime")
    if size not in SIZES:
        raise FormError(f"size {size[:12]!r} is not one of {', '.join(s or 'the suite’s' for s in SIZES)}")
    if runtime not in RUNTIMES:
        raise FormError(f"runtime {runtime[:12]!r} is not one of {', '.join(r or 'the suite’s' for r in RUNTIMES)}")
    return LaunchRequest(suite=suite, workloads=workloads, target=allowed[int(index)], repetitions=int(reps_text),
                         label=label or None, size=size, runtime=runtime, started_by=started_by)  # fmt: skip


def run_argv(req: LaunchRequest) -> list[str]:
    """The ``storbench`` arguments of a launch (a list, never a shell string).  Pure."""
    args = ["run"]
    args += [a for w in req.workloads for a in ("--workload", w)] if req.workloads else ["--suite", req.suite]
    args += ["--target", req.target.path, "--repeat", str(req.repetitions), "--no-report", "--no-progress"]
    if req.target.destroy:
        args += ["--destroy-data", req.target.path]
    if req.label:
        args += ["--label", req.label]
    if req.size:
        args += ["--size", req.size]
    if req.runtime:
        args += ["--runtime", req.runtime]
    return args


def plan_of(req: LaunchRequest, workloads: Sequence[tuple[str, Sequence[tuple[str, str | None]]]]) -> tuple[list[dict[str, str | float | None]], str]:
    """What a launch will run, each workload's expected duration (:mod:`storbench.jobs.plan`,
    nothing probed) and the total line, before it starts.  ``workloads``: (name, options) of the
    ones it runs.  Pure."""
    from ..jobs import plan

    estimates = []
    for name, options in workloads:
        opts = dict(options)
        if req.size:
            opts["size"] = req.size
        if req.runtime:
            opts.pop("timeout", None)
            opts["runtime"] = req.runtime
        estimates.append(plan.estimate(name, req.target.path, opts, req.repetitions))
    rows: list[dict[str, str | float | None]] = [{"workload": e.workload, "seconds": e.seconds, "basis": e.basis} for e in estimates]
    return rows, plan.format_total(estimates)


@dataclass
class Launch:
    """One run asked for from the page: ``state`` queued, running, cancelling, done, failed, cancelled."""

    launch_id: int
    request: LaunchRequest
    state: str = "queued"
    run_id: int | None = None
    queued_at: float = field(default_factory=time.time)
    started_at: float | None = None
    ended_at: float | None = None
    exit_code: int | None = None
    tail: tuple[str, ...] = ()
    proc: subprocess.Popen[bytes] | None = None
    log_path: str = ""

    @property
    def ended(self) -> bool:
        return self.state in ("done", "failed", "cancelled")

    def view(self, position: int | None) -> dict[str, object]:
        r = self.request
        return {"id": self.launch_id, "state": self.state, "run_id": self.run_id, "suite": r.suite, "workloads": list(r.workloads),
                "target": r.target.path, "repetitions": r.repetitions, "label": r.label, "size": r.size or None,
                "runtime": r.runtime or None, "started_by": r.started_by, "queued_at": self.queued_at,
                "started_at": self.started_at, "ended_at": self.ended_at, "exit_code": self.exit_code,
                "queue_position": position, "output": list(self.tail)}  # fmt: skip


class Launcher:
    """Starts, queues, follows and cancels the page's runs (module text)."""

    def __init__(self, allowed: Sequence[Allowed], db_url: str, *, environ: Mapping[str, str] | None = None,
                 command: Sequence[str] = (sys.executable, "-m", "storbench"), poll_s: float = 0.5) -> None:  # fmt: skip
        self.allowed = tuple(allowed)
        self.db_url = db_url
        self.command = tuple(command)
        self.environ = dict(environ if environ is not None else os.environ)
        self._lock = threading.Lock()
        self._launches: dict[int, Launch] = {}
        self._next = 1
        _remove_stale(tempfile.gettempdir())
        self._dir = tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-")
        self._stop = threading.Event()
        self._poll_s = poll_s
        self._thread = threading.Thread(target=self._loop, name="storbench-launcher", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ asked by the pages

    def submit(self, request: LaunchRequest) -> int:
        with self._lock:
            launch = Launch(self._next, request)
            self._launches[launch.launch_id] = launch
            self._next += 1
            self._advance()
            return launch.launch_id

    def cancel(self, launch_id: int) -> Launch | None:
        with self._lock:
            launch = self._launches.get(launch_id)
            if launch is None:
                return None
            if launch.state == "queued":
                launch.state, launch.ended_at = "cancelled", time.time()
            elif launch.state == "running" and launch.proc is not None:
                launch.state = "cancelling"
                with contextlib.suppress(ProcessLookupError):
                    launch.proc.send_signal(signal.SIGINT)  # storbench's own Ctrl-C: results kept, files removed
            return launch

    def views(self) -> list[dict[str, object]]:
        with self._lock:
            self._advance()
            return [launch.view(self._position(launch)) for launch in sorted(self._launches.values(), key=lambda x: -x.launch_id)]

    def view(self, launch_id: int) -> dict[str, object] | None:
        with self._lock:
            self._advance()
            launch = self._launches.get(launch_id)
            return launch.view(self._position(launch)) if launch is not None else None

    def close(self) -> None:
        """Serve is stopping: queued launches dropped, running ones cancelled and waited for."""
        self._stop.set()
        with self._lock:
            running = []
            for launch in self._launches.values():
                if launch.state == "queued":
                    launch.state, launch.ended_at = "cancelled", time.time()
                elif launch.proc is not None and launch.state in ("running", "cancelling"):
                    with contextlib.suppress(ProcessLookupError):
                        launch.proc.send_signal(signal.SIGINT)
                    running.append(launch)
        for launch in running:
            assert launch.proc is not None
            proc.stop_group(launch.proc, ((signal.SIGINT, STOP_WAIT_S), (signal.SIGKILL, 5.0)), group=False)
            proc.kill_leftovers(launch.proc.pid)
        self._thread.join(timeout=5)
        shutil.rmtree(self._dir, ignore_errors=True)

    # ------------------------------------------------------------------ inside

    def _position(self, launch: Launch) -> int | None:
        if launch.state != "queued":
            return None
        waiting = [x for x in self._launches.values() if x.request.target == launch.request.target and x.state == "queued"]
        return sorted(waiting, key=lambda x: x.launch_id).index(launch) + 1

    def _loop(self) -> None:
        while not self._stop.wait(self._poll_s):
            with self._lock:
                self._advance()

    def _advance(self) -> None:
        """Under the lock: follow the running launches, end those whose run ended, start the next
        queued one of each free target."""
        busy = set()
        for launch in self._launches.values():
            if launch.proc is None or launch.ended:
                continue
            self._follow(launch)
            if not launch.ended:
                busy.add(launch.request.target.path)
        for launch in sorted(self._launches.values(), key=lambda x: x.launch_id):
            if launch.state == "queued" and launch.request.target.path not in busy:
                self._start(launch)
                busy.add(launch.request.target.path)

    def _start(self, launch: Launch) -> None:
        base = os.path.join(self._dir, str(launch.launch_id))
        launch.log_path = base + ".log"
        # the run needs no token, and its children never see it
        env = {**self.environ, "STORBENCH_DB": self.db_url, STARTED_BY_ENV: launch.request.started_by,
               RUN_ID_FILE_ENV: base + ".run", "STORBENCH_TOKEN": ""}  # fmt: skip
        launch.started_at = time.time()
        try:
            with open(launch.log_path, "wb") as log:  # a child that outlives a killed serve gets SIGTERM (its own Ctrl-C)
                launch.proc, _ = proc.spawn([*self.command, *run_argv(launch.request)], env_extra=env, stdout=log,
                                            stderr=subprocess.STDOUT, cwd=self._dir)  # fmt: skip
        except OSError as exc:  # storbench itself could not be started: said on the launch's page
            launch.state, launch.ended_at, launch.tail = "failed", time.time(), (f"storbench could not be started: {exc}",)
            return
        launch.state = "running"

    def _follow(self, launch: Launch) -> None:
        assert launch.proc is not None
        if launch.run_id is None:
            with contextlib.suppress(OSError, ValueError):
                with open(os.path.join(self._dir, f"{launch.launch_id}.run"), encoding="ascii") as fh:
                    launch.run_id = int(fh.read().strip())
        code = launch.proc.poll()
        launch.tail = _tail(launch.log_path)
        if code is None:
            return
        launch.exit_code, launch.ended_at = code, time.time()
        launch.state = "cancelled" if launch.state == "cancelling" else "done" if code == 0 else "failed"


#: the launcher's directory of run logs and run-id files: ``storbench-serve-runs-PID-XXXX`` in the temporary directory
WORKDIR_PREFIX = "storbench-serve-runs-"


def _remove_stale(tmp: str) -> None:
    """The directories of launchers whose serve was killed (its pid gone), removed."""
    with contextlib.suppress(OSError):
        for name in os.listdir(tmp):
            pid = name[len(WORKDIR_PREFIX) :].split("-", 1)[0]
            if name.startswith(WORKDIR_PREFIX) and pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)


def _tail(path: str) -> tuple[str, ...]:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 8192))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ()
    return tuple(line for line in text.splitlines() if line.strip())[-TAIL_LINES:]
