"""``storbench agent``: a fio server for ``storbench run --host``, started and stopped cleanly.

The agent runs ``fio --server=ADDR,PORT`` (an argument list, never a shell) in its
own process group, with DIR as its working directory: test files of client runs
without a ``--target`` land there (``./storbench.testfile``).  A DIR the agent made
itself is removed when it stops.

Stopping: Ctrl-C (exit 130) or SIGTERM (exit 0).  fio's server forks a process
per client connection and one per job, and SIGTERM to the server alone leaves
those running (checked with fio 3.33), so the agent signals fio's whole process
group -- the group it created, by id -- then waits until no member is left,
SIGKILLing what has not stopped after a few seconds.

SECURITY: fio's server protocol has no authentication and no encryption.  Whoever
reaches the port can make fio read and write any file the agent's user can.  So
the agent listens on 127.0.0.1 unless told otherwise, refuses the wildcard
addresses (0.0.0.0, ::) without ``--i-know-it-is-unauthenticated``, and says how to
reach a loopback agent through an SSH tunnel.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from typing import TextIO

import click

from ..errors import StorbenchError, UsageError
from ..run.inventory import DEFAULT_PORT, parse_address
from .common import App, pass_app

READY_TIMEOUT_S = 10.0
STOP_TERM_WAIT_S = 5.0
STOP_KILL_WAIT_S = 5.0

SECURITY_NOTE = (
    "SECURITY: fio's server protocol has no authentication and no encryption: anyone who can reach "
    "this port can make fio read and write any file this user can. Bind to a private interface, or keep "
    "the agent on 127.0.0.1 and reach it through an SSH tunnel: ssh -L {port}:127.0.0.1:{port} HOST"
)


class _Stop(Exception):
    """SIGTERM: stop cleanly and exit 0."""


def server_option(address: str, port: int) -> str:
    """fio's ``--server=`` argument for an address (``ip:``/``ip6:`` prefixes) or a name."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return f"--server={address},{port}"
    return f"--server={'ip6' if ip.version == 6 else 'ip'}:{address},{port}"


def _is_wildcard(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_unspecified
    except ValueError:
        return False


def _forward(stream, write: Callable[[str], None], seen: list[str]) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", errors="replace").rstrip("\n")
        if line.strip():
            seen.append(line.strip())
            with contextlib.suppress(Exception):
                write(line)


def say(stream: TextIO, text: str) -> None:
    stream.write(text + "\n")
    with contextlib.suppress(Exception):
        stream.flush()


def _connect_address(address: str) -> str:
    if _is_wildcard(address):
        return "::1" if ":" in address else "127.0.0.1"
    return address


def port_problem(address: str, port: int) -> str | None:
    """Why fio could not have this port to itself, or None.

    fio's server sets SO_REUSEPORT, so a second server on a busy port does not fail:
    it listens too, and the kernel splits new connections between the two.  So the
    port is tried here first, by a socket without SO_REUSEPORT (bound, never listening).
    """
    try:
        infos = socket.getaddrinfo(address, port, socket.AF_INET6 if ":" in address else socket.AF_UNSPEC, socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"{address} does not resolve ({exc.strerror})"
    for fam, kind, proto, _, addr in infos:
        with contextlib.closing(socket.socket(fam, kind, proto)) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(addr)
            except OSError as exc:
                return (exc.strerror or str(exc)).lower()
        return None
    return f"{address} has no address to listen on"


def _accepts(address: str, port: int) -> bool:
    with contextlib.suppress(OSError):
        with socket.create_connection((address, port), timeout=0.5):
            return True
    return False


def serve_until_stopped(
    app: App,
    argv: list[str],
    *,
    cwd: str | None,
    ready: Callable[[subprocess.Popen, list[str]], bool],
    on_ready: Callable[[subprocess.Popen], None],
    what: str,
) -> None:
    """Run a server process in the foreground until Ctrl-C (re-raised: exit 130) or SIGTERM
    (returns: exit 0); StorbenchError when it fails to start or exits on its own."""
    from ..process import proc as processes

    stopping: list[str] = []

    def on_term(signum, frame):
        stopping.append("SIGTERM")
        raise _Stop()

    old_term = signal.signal(signal.SIGTERM, on_term)
    proc = None
    seen: list[str] = []
    forwarder = None
    try:
        # its own process group, stopped as a whole; a signal while it is forked acts right after
        proc, noted = processes.spawn(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if noted:
            if "SIGTERM" in noted:
                stopping.append("SIGTERM")
                raise _Stop()
            raise KeyboardInterrupt(noted[0])
        forwarder = threading.Thread(target=_forward, args=(proc.stdout, app.err, seen), daemon=True)
        forwarder.start()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not ready(proc, seen):
            if proc.poll() is not None:
                time.sleep(0.1)  # let the forwarder catch fio's last words
                said = seen[-1] if seen else f"exit status {proc.returncode}"
                raise StorbenchError(f"{what} did not start: {said}")
            if time.monotonic() > deadline:
                raise StorbenchError(f"{what} did not start listening within {READY_TIMEOUT_S:g} s")
            time.sleep(0.1)
        on_ready(proc)
        while not stopping:
            if proc.poll() is not None:
                time.sleep(0.1)
                said = f": {seen[-1]}" if seen else ""
                raise StorbenchError(f"{what} exited on its own with status {proc.returncode}{said}")
            time.sleep(0.2)
    except _Stop:
        pass
    finally:
        if proc is not None:
            # a second SIGTERM while stopping must not cut the cleanup short
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            processes.stop_group(proc, ((signal.SIGTERM, STOP_TERM_WAIT_S), (signal.SIGKILL, STOP_KILL_WAIT_S)),
                                 until_group_gone=True)  # fmt: skip
            if forwarder is not None:
                forwarder.join(timeout=2)
            if proc.stdout is not None:
                proc.stdout.close()
            say(app.env.stderr, f"{what} stopped")
        signal.signal(signal.SIGTERM, old_term)


@click.command()
@click.option("--bind", default="127.0.0.1", show_default=True, metavar="ADDR", help="Address to listen on (an IP address of a private interface, or 127.0.0.1 behind an SSH tunnel).")
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True, help="TCP port to listen on.")
@click.option("--dir", "directory", metavar="DIR", help="Working directory of fio's server: test files of runs without --target go here (default: a new directory here, removed at stop).")
@click.option("--i-know-it-is-unauthenticated", "unauthenticated_ok", is_flag=True, help="Allow listening on every interface (0.0.0.0 or ::).")
@pass_app
def agent(app: App, bind: str, port: int, directory: str | None, unauthenticated_ok: bool) -> None:
    """Run a fio server for 'storbench run --host' until Ctrl-C or SIGTERM.

    fio's server protocol has no authentication or encryption: keep it on 127.0.0.1
    (reach it through 'ssh -L PORT:127.0.0.1:PORT HOST') or a private interface.
    """
    from ..run.fioexec import SubprocessFio

    address = parse_address(bind, "--bind")
    if _is_wildcard(address) and not unauthenticated_ok:
        raise UsageError(
            f"refusing to listen on {bind} (every interface): fio's server has no authentication or encryption; "
            "bind to a private interface or to 127.0.0.1 behind an SSH tunnel, "
            "or give --i-know-it-is-unauthenticated"
        )
    busy = port_problem(address, port)
    if busy is not None:
        raise StorbenchError(f"cannot listen on {bind} port {port}: {busy} (another agent or program has it; choose another --port)")
    fio = SubprocessFio(app.env.fio_path)
    version = fio.version()
    if not version.startswith("fio-"):
        raise StorbenchError(f"{fio.path} --version printed {version!r}, not a fio version")
    made = None
    if directory is None:
        made = directory = tempfile.mkdtemp(prefix="storbench-agent-", dir=app.env.cwd)
    elif not os.path.isdir(directory):
        raise UsageError(f"--dir {directory!r} is not an existing directory")
    directory = os.path.abspath(directory)
    host = f"[{address}]" if ":" in address else address
    connect = _connect_address(address)

    def ready(proc: subprocess.Popen, seen: list[str]) -> bool:
        return _accepts(connect, port)  # a bare connect does not disturb fio's server

    def on_ready(proc: subprocess.Popen) -> None:
        out = app.env.stdout
        say(out, f"storbench agent: {version} server listening on {host}:{port} (fio pid {proc.pid})")
        say(out, f"working directory: {directory}" + (" (removed at stop)" if made else ""))
        say(out, f"reach it with: storbench run --host {host}:{port} ...   (the client needs {version} too)")
        say(out, SECURITY_NOTE.format(port=port))
        say(out, "stop with Ctrl-C or SIGTERM")

    try:
        serve_until_stopped(app, [fio.path, server_option(address, port)], cwd=directory, ready=ready, on_ready=on_ready, what="fio server")
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
