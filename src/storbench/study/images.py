"""Edge: VM disk images for a study -- create them with qemu-img, serve them with qemu-nbd.

fio measures an image the way a VM's disk sees it: through qemu's block layer
(the qcow2 or raw driver, its cache mode) over NBD.  ``qemu-nbd`` serves the
image on a unix socket and fio's ``nbd`` engine is the client, so no kernel
``nbd`` module is needed (:func:`storbench.jobs.jobfile.build_job` with a ``nbd``
target writes ``ioengine=nbd`` and ``uri=nbd+unix:///?socket=SOCKET``).

* :func:`create_image` runs ``qemu-img create -q -f FMT [-o k=v,...] PATH SIZE``
  (an argument list from :func:`storbench.study.setup_images.qemu_img_create_argv`) and
  checks the file exists afterwards.
* :func:`serve` is a context manager: it starts ``qemu-nbd --socket=SOCK -f FMT
  --cache=MODE [--aio=MODE] -t IMAGE`` in the background, in a process group of
  its own (a Ctrl-C on the terminal reaches storbench, which stops the server
  itself, in order) and with the parent-death signal set (if storbench itself is
  killed with SIGKILL the server goes too), waits until the socket exists (or the
  server exits, or ``timeout_s`` passes: one-line :class:`ImageError`), and on
  exit stops it by PID -- SIGTERM, wait, SIGKILL -- and removes the socket.
  :meth:`NbdServer.stop` may be called earlier; it is idempotent.
* :func:`start_export` serves an image to the host itself: ``qemu-storage-daemon`` exports it
  (through the same qcow2/raw driver and cache mode) as a regular file over FUSE, on which
  :mod:`storbench.study.guest` puts a loop device and the guest filesystem of the study's
  application loads.  Stopped the same way; a mount a killed daemon left is unmounted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from ..errors import StorbenchError
from ..process import proc as processes
from ..process import signals
from .setup_images import qemu_img_create_argv, qemu_nbd_argv, qsd_fuse_argv
from .setups import ImageSpec

#: Longest unix socket path the kernel accepts (sun_path is 108 bytes with the NUL).
MAX_SOCKET_PATH = 107
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0

Runner = Callable[[Sequence[str]], tuple[int, str, str]]


class ImageError(StorbenchError):
    """An image could not be created or served (one line, naming the command and its words)."""


def _error_words(stderr: str, stdout: str = "") -> str:
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def run_command(argv: Sequence[str], timeout_s: float = 600.0) -> tuple[int, str, str]:
    """Run one program (argument list, no shell); (returncode, stdout, stderr); 127 when missing."""
    try:
        done = processes.run(argv, timeout_s=timeout_s, errors="replace")
    except FileNotFoundError:
        return 127, "", f"{argv[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, "", f"{argv[0]}: no answer within {timeout_s:g} s"
    return done.returncode, done.stdout, done.stderr


def create_image(image: ImageSpec, path: str, runner: Runner = run_command) -> list[str]:
    """Create the image file ``path`` (which must not exist); returns the argv it ran."""
    if os.path.lexists(path):
        raise ImageError(f"image {path} already exists; storbench creates its images itself and will not overwrite one")
    argv = qemu_img_create_argv(image, path)
    rc, out, err = runner(argv)
    if rc != 0:
        with contextlib.suppress(OSError):
            if os.path.exists(path):
                os.unlink(path)
        raise ImageError(f"{' '.join(argv)} failed: {_error_words(err, out) or f'exit status {rc}'}")
    if not os.path.isfile(path):
        raise ImageError(f"{' '.join(argv)} reported success but {path} does not exist")
    return argv


def socket_path_for(directory: str, name: str) -> str:
    """``DIR/NAME.sock``, or the same in a new temporary directory when that path is too long for a socket."""
    path = os.path.join(directory, f"{name}.sock")
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    short = tempfile.mkdtemp(prefix="sb-nbd-")
    return os.path.join(short, f"{name[:40]}.sock")


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def _accepts(path: str) -> bool:
    """Whether something listens on the unix socket ``path``."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(1.0)
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


@dataclass
class NbdServer:
    """A running qemu-nbd (see :func:`serve`)."""

    argv: list[str]
    socket_path: str
    image_path: str
    pid: int
    proc: subprocess.Popen = field(repr=False)
    log_path: str = ""
    stopped: bool = False

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM, wait, then SIGKILL (to its process group, while it is not reaped); remove the socket.  Idempotent."""
        if not self.stopped:
            processes.stop_group(self.proc, ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 5.0)))
            self.stopped = True  # (no signal after it is reaped: its pid may belong to someone else by then)
        with contextlib.suppress(FileNotFoundError):
            if _is_socket(self.socket_path):
                os.unlink(self.socket_path)
        parent = os.path.dirname(self.socket_path)
        if os.path.basename(parent).startswith("sb-nbd-"):  # the short directory of socket_path_for
            with contextlib.suppress(OSError):
                os.rmdir(parent)
        if self.log_path:
            with contextlib.suppress(OSError):
                os.unlink(self.log_path)

    @property
    def running(self) -> bool:
        return not self.stopped and self.proc.poll() is None


def start_server(
    image: ImageSpec, image_path: str, socket_path: str, *, timeout_s: float = START_TIMEOUT_S, qemu_nbd: str = "qemu-nbd"
) -> NbdServer:
    """Start qemu-nbd and wait until it listens; :class:`ImageError` when it does not."""
    if len(os.fsencode(socket_path)) > MAX_SOCKET_PATH:
        raise ImageError(f"socket path {socket_path} is longer than the {MAX_SOCKET_PATH} bytes a unix socket allows")
    if os.path.lexists(socket_path):
        raise ImageError(f"{socket_path} exists already; another qemu-nbd may be serving there")
    argv = qemu_nbd_argv(image, image_path, socket_path)
    argv[0] = qemu_nbd
    proc, log_path, noted = _spawn(argv, "qemu-utils")
    server = NbdServer(argv=argv, socket_path=socket_path, image_path=image_path, pid=proc.pid, proc=proc, log_path=log_path)
    _wait_ready(server, noted, lambda: _is_socket(socket_path) and _accepts(socket_path), "create its socket", timeout_s)
    return server


def _spawn(argv: list[str], package: str) -> tuple[subprocess.Popen, str, list[str]]:
    """Start a server in a process group of its own (storbench stops it, in order; a signal now
    is raised once it is ours to stop), its output in a log file of its own."""
    fd, log_path = tempfile.mkstemp(prefix=f"storbench-{os.path.basename(argv[0])}-", suffix=".log")
    try:
        proc, noted = processes.spawn(argv, stdout=fd, stderr=fd)
    except FileNotFoundError:
        os.unlink(log_path)
        raise ImageError(f"{argv[0]} is not installed (Debian package {package})") from None
    finally:
        os.close(fd)
    return proc, log_path, noted


def _wait_ready(server: NbdServer | FuseExport, noted: list[str], ready: Callable[[], bool], what: str, timeout_s: float) -> None:
    """Until ``ready()``; :class:`ImageError` (the server stopped) when it exits first or the time is up."""
    try:
        signals.raise_noted(noted)
        deadline = time.monotonic() + timeout_s
        while True:
            if server.proc.poll() is not None:
                words = _error_words(_read(server.log_path))
                raise ImageError(f"{' '.join(server.argv)} exited with status {server.proc.returncode}: {words or 'no message'}")
            if ready():
                return
            if time.monotonic() > deadline:
                raise ImageError(f"{' '.join(server.argv)} did not {what} within {timeout_s:g} s")
            time.sleep(0.02)
    except BaseException:
        server.stop()
        raise


def mount_fstype(path: str, mounts: str = "/proc/self/mounts") -> str | None:
    """The filesystem type mounted at ``path`` (the last mount there: a directory, or a file as a
    FUSE export is), from the kernel's table; None when nothing is."""
    try:
        with open(mounts, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    target = os.path.abspath(path)
    found = None
    for line in lines:
        f = line.split()
        if len(f) >= 3 and f[1].replace("\\040", " ") == target:
            found = f[2]
    return found


@dataclass
class FuseExport:
    """A running ``qemu-storage-daemon`` exporting an image as a regular file over FUSE (see
    :func:`start_export`)."""

    argv: list[str]
    export_path: str
    pid: int
    proc: subprocess.Popen = field(repr=False)
    log_path: str = ""
    stopped: bool = False
    runner: Runner = run_command

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM (it unmounts its export and closes the image), wait, then SIGKILL; a mount
        a killed daemon left is unmounted; the export file is removed.  Idempotent."""
        if not self.stopped:
            processes.stop_group(self.proc, ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 5.0)))
            self.stopped = True
        if mount_fstype(self.export_path) is not None:
            rc, out, err = self.runner(["umount", "-l", self.export_path])
            if rc != 0:
                raise ImageError(f"umount -l {self.export_path} failed: {_error_words(err, out)}; its FUSE export is still mounted")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.export_path)
        if self.log_path:
            with contextlib.suppress(OSError):
                os.unlink(self.log_path)


def start_export(
    image: ImageSpec, image_path: str, export_path: str, *, timeout_s: float = START_TIMEOUT_S, runner: Runner = run_command
) -> FuseExport:
    """Export ``image_path`` as the file ``export_path`` (made empty here: a FUSE export mounts
    over a file) and wait until that file is the export, as large as the image."""
    if os.path.lexists(export_path):
        raise ImageError(f"{export_path} exists already; another export may be there")
    with open(export_path, "x", encoding="ascii"):
        pass
    argv = qsd_fuse_argv(image, image_path, export_path)
    try:
        proc, log_path, noted = _spawn(argv, "qemu-system-common")
    except ImageError:
        os.unlink(export_path)
        raise
    export = FuseExport(argv=argv, export_path=export_path, pid=proc.pid, proc=proc, log_path=log_path, runner=runner)
    want = image.size_bytes if image.format != "zvol" else None

    def ready() -> bool:
        if mount_fstype(export_path) is None:
            return False
        try:
            size = os.stat(export_path).st_size
        except OSError:
            return False
        return size > 0 and (want is None or size == want)

    _wait_ready(export, noted, ready, f"export {image_path} at {export_path}", timeout_s)
    return export


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


@contextlib.contextmanager
def serve(image: ImageSpec, image_path: str, socket_path: str, *, timeout_s: float = START_TIMEOUT_S) -> Iterator[NbdServer]:
    """Serve ``image_path`` on ``socket_path`` for the ``with`` body; always stopped afterwards."""
    server = start_server(image, image_path, socket_path, timeout_s=timeout_s)
    try:
        yield server
    finally:
        server.stop()
