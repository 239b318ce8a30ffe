"""Running one application load (edge): its directory, its server, its commands, its output read.

:func:`run_load` runs one repetition of a load workload (pgbench, dbench, fs_mark, sysbench fileio;
its commands from :func:`storbench.jobs.load.build_load_job`) in a directory of its own under the
target, ``.storbench-load-<pid>-<workload>``, which it creates and always removes (after Ctrl-C
too); a killed run's directory (its PID gone) is removed the next time a load runs on that target,
after stopping the PostgreSQL server a killed pgbench run left in it.  Every command runs through
the process module (:func:`storbench.process.proc.spawn`: an argument list, its own session, dying
with storbench) with a bounded time; the device and back-end samplers run around the measured
command only.  What it returns is a :class:`LoadRun` (the tool's output, its figures as a
:class:`~storbench.model.FioResult` with ``measures``, the settings it ran with in
``global_options``) or the reason it failed, in the tool's own words, in one line.

pgbench's server: :class:`PostgresCluster` -- ``initdb`` into ``DIR/data``, the workload's settings
and ``listen_addresses = ''`` (no TCP port: only a Unix socket in ``DIR``), ``pg_ctl start``; as
root, PostgreSQL's programs run as the ``postgres`` user (PostgreSQL refuses root), which must be
able to enter every directory above the target.  It never touches a PostgreSQL the user runs.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import pwd
import resource
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..jobs.load import LOAD_DIR_RE, load_directory
from ..loads import LoadParseError, LoadTool
from ..loads import tool as load_tool
from ..process import proc, signals

if TYPE_CHECKING:
    from ..activity import ActivitySeries
    from ..backend import BackendActivity
    from ..model import FioResult, JobSpec
    from ..storage import StorageInfo
    from .telemetry import Telemetry

#: bounds on the commands around the measured one (seconds)
PREPARE_TIMEOUT_S = 1800.0
SERVER_TIMEOUT_S = 120.0
#: the measured command's bound: its planned time, doubled, plus this
MEASURE_GRACE_S = 120.0
#: a Unix socket's path must fit in sun_path (108 bytes, its last a NUL)
SOCKET_PATH_MAX = 107
PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"


class LoadFailed(Exception):
    """A load that could not run or be read; the message is the one line a person reads."""


@dataclass(frozen=True)
class LoadRun:
    """One repetition of a load: its output, its figures and what was sampled while it ran."""

    output: str
    result: FioResult
    activity: ActivitySeries | None
    backend: BackendActivity | None


# --------------------------------------------------------------------------- commands


def _run_step(argv: Sequence[str], *, cwd: str, timeout_s: float, what: str, user: str | None = None) -> str:
    """Run one command to its end in ``cwd`` (as ``user`` through ``runuser`` where given); its
    output (stdout and stderr together).  :class:`LoadFailed` names the command and its last line
    when it is missing, fails or overruns; Ctrl-C stops it (and what it forked) and is raised."""
    full = ["runuser", "-u", user, "--", *argv] if user else list(argv)
    try:
        child, noted = proc.spawn(full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd, text=True,
                                  errors="replace", c_locale=True)  # fmt: skip
    except FileNotFoundError:
        raise LoadFailed(f"{argv[0]} is not installed") from None
    try:
        signals.raise_noted(noted)
        output, _ = child.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.stop_group(child)
        raise LoadFailed(f"{what} ({argv[0]}) did not finish in {timeout_s:.0f} s; it was stopped") from None
    except BaseException:
        proc.stop_group(child)
        raise
    if child.returncode != 0:
        last = proc.last_line(output) or "no output"
        raise LoadFailed(f"{what} ({argv[0]}) exited with status {child.returncode}: {last}")
    return output


# --------------------------------------------------------------------------- PostgreSQL


def pg_bin_dir() -> Path | None:
    """The newest installed PostgreSQL's server programs (initdb, pg_ctl, postgres), or None."""
    import glob

    found = [Path(d) for d in glob.glob(PG_BIN_GLOB) if all(os.access(Path(d) / b, os.X_OK) for b in ("initdb", "pg_ctl", "postgres"))]
    return max(found, key=lambda d: [int(p) if p.isdigit() else 0 for p in d.parent.name.split(".")], default=None)


def _unreachable_by(path: str, uid: int, gid: int) -> str | None:
    """The first directory from ``/`` down to ``path`` that ``uid`` cannot enter, with its mode."""
    here = Path(path).resolve()
    for d in [*reversed(here.parents), here]:
        st = d.stat()
        bit = 0o100 if st.st_uid == uid else 0o010 if st.st_gid == gid else 0o001
        if not st.st_mode & bit:
            return f"{d} (mode {st.st_mode & 0o7777:04o}, owner uid {st.st_uid})"
    return None


class PostgresCluster:
    """A private PostgreSQL cluster in a load's directory, for one repetition of pgbench."""

    def __init__(self, directory: str, options: Mapping[str, str]) -> None:
        from ..loads import pgbench

        self.directory = directory
        self.data = os.path.join(directory, "data")
        self.log = os.path.join(directory, "server.log")
        self.started = False
        bin_dir = pg_bin_dir()
        if bin_dir is None:
            raise LoadFailed("PostgreSQL's server programs (initdb, pg_ctl) are not installed: apt-get install postgresql (or make install)")
        self.bin = bin_dir
        self.user: str | None = None
        if os.geteuid() == 0:
            try:
                entry = pwd.getpwnam("postgres")
            except KeyError:
                raise LoadFailed("PostgreSQL refuses to run as root and there is no 'postgres' user to run it as: "
                                 "apt-get install postgresql makes one") from None  # fmt: skip
            blocked = _unreachable_by(directory, entry.pw_uid, entry.pw_gid)
            if blocked:
                raise LoadFailed(f"PostgreSQL runs as user postgres here (it refuses root) and cannot enter {blocked}: "
                                 "give a target below directories others may enter (e.g. under /srv or /var/tmp)")  # fmt: skip
            os.chown(directory, entry.pw_uid, entry.pw_gid)
            self.user = "postgres"
        socket = os.path.join(directory, ".s.PGSQL.5432")
        if len(socket.encode()) > SOCKET_PATH_MAX:
            raise LoadFailed(f"the server's socket path {socket} is {len(socket.encode())} bytes, over the {SOCKET_PATH_MAX} a Unix socket allows: "
                             "give a target with a shorter path")  # fmt: skip
        self._conf = pgbench.conf_lines(options, directory)

    def start(self) -> None:
        _run_step([str(self.bin / "initdb"), "-D", self.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"],
                  cwd=self.directory, timeout_s=SERVER_TIMEOUT_S, what="creating the PostgreSQL cluster", user=self.user)  # fmt: skip
        with open(os.path.join(self.data, "postgresql.conf"), "a", encoding="utf-8") as fh:
            fh.write("\n# storbench: the workload's settings\n" + "\n".join(self._conf) + "\n")
        self.started = True  # from here on a server may be running: stop() is owed
        _run_step([str(self.bin / "pg_ctl"), "-D", self.data, "-l", self.log, "-w", "-t", "60", "start"],
                  cwd=self.directory, timeout_s=SERVER_TIMEOUT_S, what="starting PostgreSQL", user=self.user)  # fmt: skip

    def settings(self) -> dict[str, str]:
        """The server's settings that decide the result and the database's size (bytes)."""
        from ..loads import pgbench

        out = _run_step(["psql", "-h", self.directory, "-U", pgbench.ROLE, "-X", "-At", "-F", "|", "-c", pgbench.SETTINGS_SQL, pgbench.DATABASE],
                        cwd=self.directory, timeout_s=60, what="reading PostgreSQL's settings")  # fmt: skip
        try:
            return pgbench.parse_settings(out)
        except LoadParseError as exc:
            raise LoadFailed(str(exc)) from None

    def stop(self) -> None:
        """Stop the server (fast, then immediate, then its processes killed); never raises."""
        if not self.started:
            return
        for mode in ("fast", "immediate"):
            with contextlib.suppress(LoadFailed, OSError):
                _run_step([str(self.bin / "pg_ctl"), "-D", self.data, "-m", mode, "-w", "-t", "30", "stop"],
                          cwd="/", timeout_s=60, what="stopping PostgreSQL", user=self.user)  # fmt: skip
            if not os.path.exists(os.path.join(self.data, "postmaster.pid")):
                return
        kill_postmaster(self.data)


def kill_postmaster(data_dir: str) -> None:
    """Kill the postmaster whose ``postmaster.pid`` is in ``data_dir`` (and its children) where it
    still runs: a killed run's server, or one that would not stop."""
    try:
        pid = int(Path(data_dir, "postmaster.pid").read_text(encoding="ascii", errors="replace").split()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        comm = Path(f"/proc/{pid}/comm").read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return
    if not comm.startswith("postgres"):
        return  # the PID names another program now
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGQUIT)  # PostgreSQL's immediate shutdown: the children go with it
    for _ in range(50):
        if not Path(f"/proc/{pid}").exists():
            return
        time.sleep(0.1)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


# --------------------------------------------------------------------------- a killed run's leftovers


def remove_dead_load_dirs(target_path: str) -> list[str]:
    """Remove ``.storbench-load-<pid>-*`` directories under ``target_path`` whose PID is gone (after
    stopping a PostgreSQL server left running in one); the paths removed."""
    from ..store.owner import remove_dead_temp_dirs

    return remove_dead_temp_dirs(target_path, LOAD_DIR_RE, before_remove=lambda path: kill_postmaster(os.path.join(path, "data")))


# --------------------------------------------------------------------------- one repetition


def _read_logs(directory: str, patterns: Sequence[str]) -> dict[str, str]:
    out = {}
    for name in sorted(os.listdir(directory)):
        if any(fnmatch.fnmatch(name, p) for p in patterns):
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as fh:
                out[name] = fh.read()
    return out


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_load(spec: JobSpec, storage: StorageInfo | None, telemetry: Telemetry, *, area_bytes: int | None = None) -> LoadRun:
    """One repetition of the load ``spec`` (see the module doc); :class:`LoadFailed` with the one
    line that says why it has no result.  ``telemetry``: the runner's (its device and back-end samplers)."""
    tool: LoadTool = load_tool(spec.workload.tool)
    if shutil.which(tool.program) is None:
        raise LoadFailed(f"{tool.program} is not installed: apt-get install {tool.package} (or make install)")
    remove_dead_load_dirs(spec.target.path)
    directory = load_directory(spec.target.path, spec.workload.name, os.getpid())
    options = {k: v or "" for k, v in spec.options}
    steps = tool.steps(options, directory)
    shutil.rmtree(directory, ignore_errors=True)  # this process's own, from a repetition that could not remove it
    try:
        os.mkdir(directory, 0o755)
    except OSError as exc:
        raise LoadFailed(f"cannot create {directory}: {exc.strerror}") from None
    cluster: PostgresCluster | None = None
    try:
        if tool.server == "postgresql":
            cluster = PostgresCluster(directory, options)
            cluster.start()
        for argv in steps.prepare:
            _run_step(argv, cwd=directory, timeout_s=PREPARE_TIMEOUT_S, what=f"{tool.name}'s preparation")
        planned = tool.runtime_s(options)
        backend_cm = telemetry.backend_sampler(storage, spec.target, area_bytes) or contextlib.nullcontext(None)
        with telemetry.sampler(storage) as sampler, backend_cm as backend_box:
            cpu_before, started = _cpu_s(), time.monotonic()
            output = _run_step(steps.measure, cwd=directory, timeout_s=2 * planned + MEASURE_GRACE_S, what=tool.name)
            cpu_s, wall_s = _cpu_s() - cpu_before, time.monotonic() - started
        activity = sampler.series() if sampler is not None else None
        backend = backend_box.activity() if backend_box is not None else None
        try:
            parsed = tool.parse(output, _read_logs(directory, steps.logs))
        except LoadParseError as exc:
            raise LoadFailed(f"{tool.name}'s output could not be read: {exc}") from None
        settings = {**tool.settings(parsed), "client_cpu_s": f"{cpu_s:.3f}", "wall_s": f"{wall_s:.3f}"}
        if cluster is not None:
            settings.update(cluster.settings())
        for argv in steps.cleanup:
            _run_step(argv, cwd=directory, timeout_s=PREPARE_TIMEOUT_S, what=f"{tool.name}'s cleanup")
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)
    from ..model import FioResult

    result = FioResult(fio_version=None, jobs=(), format=tool.name, global_options=settings, measures=tool.measures(parsed))
    return LoadRun(output=output, result=result, activity=activity, backend=backend)
