"""A userspace bridge to NBD (edge): qemu-nbd serving an iSCSI LUN or an NFS file on a private
unix socket while a run lasts, for fio's nbd engine (the ``iscsi`` and ``nfs`` kinds share it).

``-t``: it stays up for every fio of the run (each connects anew); ``-f raw``: the bytes as they
are.  Its directory is ``$TMPDIR/storbench-fio-<pid>-<kind>-<hash>`` (0700), made afresh and
removed afterwards (a killed storbench's is removed by the next run: store/owner.py); the bridge
is stopped by its PID, and dies with storbench (the process module's parent-death signal).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator

from storbench.errors import TargetError

#: how long qemu-nbd may take to answer on its socket
BRIDGE_START_S = 15.0
#: the bridges running in this process, by socket: their PIDs (the back-end sampler reads their CPU)
_RUNNING: dict[str, int] = {}


def bridge_pid(socket: str) -> int | None:
    """The PID of the qemu-nbd serving ``socket`` in this process now; None when none does."""
    return _RUNNING.get(socket)


def bridge_dir(kind: str, source: str) -> str:
    """The bridge's directory for ``source`` in this process (deterministic: the job text names its socket)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:10]
    return os.path.join(tempfile.gettempdir(), f"storbench-fio-{os.getpid()}-{kind}-{digest}")


def bridge_socket(kind: str, source: str) -> str:
    return os.path.join(bridge_dir(kind, source), "nbd.sock")


@contextlib.contextmanager
def qemu_nbd_bridge(kind: str, source: str, serves: str, what: str, *, read_only: bool = False) -> Iterator[str]:
    """qemu-nbd serving ``serves`` (a URI qemu opens) on :func:`bridge_socket` of ``(kind, source)``
    until the block ends (``read_only``: every write refused by qemu-nbd itself); yields the
    socket.  ``what`` names it in the one-line errors."""
    from storbench.process import proc, signals

    from .nbd import nbdinfo

    directory = bridge_dir(kind, source)
    shutil.rmtree(directory, ignore_errors=True)
    os.mkdir(directory, 0o700)
    socket = bridge_socket(kind, source)
    child = None
    try:
        child, noted = proc.spawn(["qemu-nbd", "-t", "-k", socket, "-f", "raw", *(["--read-only"] if read_only else []), serves],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
        signals.raise_noted(noted)
        deadline = time.monotonic() + BRIDGE_START_S
        while nbdinfo(f"nbd+unix:///?socket={socket}")[0] != 0:
            if child.poll() is not None:
                err = proc.last_line(child.stderr.read() if child.stderr else "")
                raise TargetError(f"qemu-nbd could not serve {what}: {err or f'exit status {child.returncode}'}")
            if time.monotonic() > deadline:
                raise TargetError(f"qemu-nbd did not serve {what} within {BRIDGE_START_S:.0f} s")
            time.sleep(0.05)
        _RUNNING[socket] = child.pid
        yield socket
    finally:
        _RUNNING.pop(socket, None)
        if child is not None:
            proc.stop_group(child)
            if child.stderr is not None:
                child.stderr.close()
        shutil.rmtree(directory, ignore_errors=True)
