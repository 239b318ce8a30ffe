"""Edge: the one place a child process is started, waited for and stopped, and outside commands run.

Every child storbench starts goes through :func:`spawn` (fio, fio's client, a fio server,
qemu-nbd, nbdkit, ``zpool iostat``): a new session (Ctrl-C reaches storbench, which stops the
child itself, in order), the parent-death signal (the child gets SIGTERM if storbench is
killed), signals held while forking (a Ctrl-C then is raised once the child is the caller's to
stop: :func:`storbench.process.signals.raise_noted` on the returned list) and, where the output is
parsed, ``LC_ALL=C``.  :func:`stop_group` stops a child and everything it forked: each signal of
a ladder to its process group, with a bounded wait after each.

Every outside command (zpool, ceph, rbd, mkfs, losetup, nbdinfo, iperf3, hdparm, blkdiscard,
fio --version, ...) goes through :func:`run`: an argument list (never a shell), stdin closed, a
timeout, ``LC_ALL=C``; :func:`run_checked` adds :class:`CommandError`, a typed error that names
the command and the last line of what it said.  No ``subprocess.Popen`` or ``subprocess.run``
anywhere else (``tests/process/test_proc.py`` greps for them).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from . import signals

#: Linux's prctl option: the signal a child gets when its parent dies
PR_SET_PDEATHSIG = 1


def set_parent_death_signal() -> None:
    """Runs in the child between fork and exec: SIGTERM when storbench dies (even by SIGKILL).
    Only where util-linux's ``setpriv`` is missing (see :func:`spawn`)."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def _environment(env_extra: Mapping[str, str] | None, c_locale: bool) -> dict[str, str] | None:
    if not env_extra and not c_locale:
        return None
    env = dict(os.environ)
    if c_locale:
        env.update(LC_ALL="C", LANG="C")
    env.update(env_extra or {})
    return env


@functools.cache
def _setpriv() -> str | None:
    return shutil.which("setpriv")


def _must_exist(program: str, cwd: Any, env: Mapping[str, str] | None) -> None:
    """The error Popen would raise for ``program``, raised here: through ``setpriv`` a missing
    program would only be setpriv's exit status 127."""
    if "/" in program:
        path = os.path.join(os.fspath(cwd), program) if cwd is not None else program
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    elif shutil.which(program, path=(env if env is not None else os.environ).get("PATH", os.defpath)) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def spawn(argv: Sequence[str], *, env_extra: Mapping[str, str] | None = None, c_locale: bool = False,
          stdin: Any = subprocess.DEVNULL, **popen: Any) -> tuple[subprocess.Popen, list[str]]:  # fmt: skip
    """Start ``argv`` as storbench starts every child (see the module doc); returns the process and
    the stop requests noted while it was forked (raise them with :func:`signals.raise_noted` once
    the caller is ready to stop the child).  ``popen``: stdout, stderr, cwd, text, bufsize.

    The parent-death signal is set by util-linux's ``setpriv --pdeathsig`` exec'ing the program
    (the same process: its pid, session and group), so that no Python runs between fork and exec
    and the child is started by ``vfork`` (no copy of storbench's page tables: ~4 ms less per
    workload); without ``setpriv``, by a ``preexec_fn`` in a forked child."""
    env = _environment(env_extra, c_locale)
    argv = list(argv)
    preexec = None
    if setpriv := _setpriv():
        _must_exist(argv[0], popen.get("cwd"), env)
        argv = [setpriv, "--pdeathsig", "TERM", "--", *argv]
    else:
        preexec = set_parent_death_signal
    with signals.spawning() as noted:
        proc = subprocess.Popen(argv, stdin=stdin, start_new_session=True, preexec_fn=preexec, env=env, **popen)
    return proc, noted


#: the default ladder of :func:`stop_group`: ask, then insist
STOP_LADDER: tuple[tuple[signal.Signals, float], ...] = ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0))


def _processes() -> Iterator[tuple[int, str, list[str]]]:
    """(pid, name, the fields of /proc/PID/stat after the name) of every live (not zombie) process."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[0] not in ("Z", "X"):
            yield int(entry), stat[stat.find("(") + 1 : stat.rfind(")")], fields


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes in process group ``pgid``, read from /proc."""
    return [pid for pid, _, fields in _processes() if fields[2] == str(pgid)]


def children_of(pid: int, comm: str | None = None) -> list[int]:
    """Live (not zombie) children of ``pid`` (named ``comm``, when given), read from /proc."""
    return [child for child, name, fields in _processes() if fields[1] == str(pid) and comm in (None, name)]


def stop_group(proc: subprocess.Popen, ladder: Sequence[tuple[int, float]] = STOP_LADDER, *, group: bool = True,
               until_group_gone: bool = False) -> None:  # fmt: skip
    """Stop ``proc`` (started by :func:`spawn`, so its process group is its pid) and what it forked:
    each (signal, seconds) of ``ladder`` in turn until it has exited; ``group=False`` signals the
    process alone (fio, which stops its own job processes on SIGINT).  ``until_group_gone``: a step
    ends only when no member of the group is left either (a fio server's connection and job
    processes outlive it), and the child is reaped at the end.  Never signals a reaped pid."""
    pgid = proc.pid
    for sig, wait_s in ladder:
        if proc.poll() is not None and not (until_group_gone and group_members(pgid)):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if group:
                os.killpg(pgid, sig)
            else:
                proc.send_signal(sig)
        if not until_group_gone:
            try:
                proc.wait(timeout=wait_s)
                return
            except subprocess.TimeoutExpired:
                continue
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if proc.poll() is not None and not group_members(pgid):
                return
            time.sleep(0.05)
    if until_group_gone:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=ladder[-1][1] if ladder else 0)


def kill_leftovers(pgid: int, timeout_s: float = 5.0) -> None:
    """SIGKILL what is left of process group ``pgid`` and wait (bounded) until it is gone.

    The group id of a child started by :func:`spawn` is its pid, and that id cannot be reused
    while any member of the group lives (fio's job processes run on, orphaned, when the main fio
    process is killed)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.01)


def wait(proc: subprocess.Popen, timeout_s: float) -> int | None:
    """The exit status within ``timeout_s``, else None (the child still runs)."""
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None


# --------------------------------------------------------------------------- outside commands


class CommandError(Exception):
    """An outside command that could not run or failed: names it, its status and its last words."""

    def __init__(self, argv: Sequence[str], returncode: int | None, detail: str) -> None:
        self.argv = tuple(argv)
        self.returncode = returncode
        self.detail = detail
        status = "did not finish" if returncode is None else f"exited with status {returncode}"
        super().__init__(f"{' '.join(self.argv)} {status}: {detail}" if detail else f"{' '.join(self.argv)} {status}")


def run(argv: Sequence[str], *, timeout_s: float, c_locale: bool = True, text: bool = True,
        env_extra: Mapping[str, str] | None = None, **kwargs: Any) -> subprocess.CompletedProcess:  # fmt: skip
    """Run an outside command to its end: output captured, stdin closed, ``LC_ALL=C`` (its words are
    parsed), bounded by ``timeout_s``.  Raises what :func:`subprocess.run` raises
    (FileNotFoundError for a missing program, :class:`subprocess.TimeoutExpired`); ``kwargs``:
    cwd, input (then stdin is the input), errors."""
    if "input" not in kwargs:
        kwargs.setdefault("stdin", subprocess.DEVNULL)
    kwargs.setdefault("capture_output", True)
    return subprocess.run(list(argv), timeout=timeout_s, text=text, env=_environment(env_extra, c_locale), check=False,
                          **kwargs)  # fmt: skip


def last_line(text: str | None) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def run_checked(argv: Sequence[str], *, timeout_s: float, **kwargs: Any) -> subprocess.CompletedProcess:
    """:func:`run`, and a :class:`CommandError` when the program is missing, times out or fails."""
    try:
        done = run(argv, timeout_s=timeout_s, **kwargs)
    except FileNotFoundError:
        raise CommandError(argv, None, "not installed") from None
    except subprocess.TimeoutExpired:
        raise CommandError(argv, None, f"timed out after {timeout_s:g} s") from None
    if done.returncode != 0:
        raise CommandError(argv, done.returncode, last_line(done.stderr) or last_line(done.stdout))
    return done
