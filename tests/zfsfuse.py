"""A real ZFS for the tests: the zfs-fuse daemon (one per test session) and pools on loop devices.

zfs-fuse 0.7 (Debian's ``zfs-fuse``) is ZFS pool version 23 in user space; the kernel here
has no ZFS module.  The daemon is started with a pidfile of our own and stopped by that PID;
a daemon that was already running (someone else's) is used and left alone.  Every pool is
created on loop devices over files in the test's directory and destroyed afterwards, with the
loop devices detached.  See ../shared/BACKENDS.md for what differs from OpenZFS.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

SOCKET = "/var/run/zfs/zfs_socket"
KSTAT = "/zfs-kstat"  # zfs-fuse mounts its kstats (the ARC's counters) here
LEFTOVERS = ("/var/lib/zfs/zpool.cache", "/run/lock/zfs/zfs_lock")


def run(argv: Sequence[str], check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, check=check, timeout=120)


def responds() -> bool:
    if not os.path.exists(SOCKET):
        return False
    try:
        return run(["zpool", "list", "-H"], check=False).returncode == 0
    except subprocess.TimeoutExpired:
        return False


class Daemon:
    """zfs-fuse started (or found) for a test session."""

    def __init__(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="storbench-zfs-fuse-"))
        self.pidfile = self.workdir / "zfs-fuse.pid"
        self.pid: int | None = None
        self.ours = False
        self.created_run_dir = not os.path.exists("/var/run/zfs")

    def start(self) -> None:
        if responds():
            return  # someone else's daemon, or ours still running
        self.pidfile.unlink(missing_ok=True)  # a stale pidfile makes zfs-fuse exit 1 silently
        run(["zfs-fuse", "-p", str(self.pidfile)])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.pidfile.exists() and self.pidfile.read_text().strip() and responds():
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("zfs-fuse did not come up within 20 s")
        self.pid = int(self.pidfile.read_text().strip())
        self.ours = True

    def alive(self) -> bool:
        if self.pid is None:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def ensure(self) -> None:
        """Bring the daemon back after a test killed it on purpose (dead mounts it left go first)."""
        if not responds():
            self.kill()
            self.start()

    def kill(self, sig: int = signal.SIGTERM, *, unmount: bool = True) -> None:
        if self.pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, sig)
        deadline = time.monotonic() + 15
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)
            while self.alive():
                time.sleep(0.05)
        if unmount:  # a FUSE daemon that died leaves its mounts behind as dead endpoints: take them away
            for target in fuse_zfs_mounts():
                run(["umount", "-l", target], check=False)
            if self.ours and KSTAT in run(["findmnt", "-rn", "-o", "TARGET"], check=False).stdout.split():
                run(["umount", "-l", KSTAT], check=False)  # zfs-fuse's kstat filesystem outlives it

    def stop(self) -> None:
        if not self.ours:
            shutil.rmtree(self.workdir, ignore_errors=True)
            return
        self.kill()
        self.pid = None
        for path in LEFTOVERS:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        if self.created_run_dir:
            with contextlib.suppress(OSError):
                os.rmdir("/var/run/zfs")
        shutil.rmtree(self.workdir, ignore_errors=True)


def fuse_zfs_mounts() -> list[str]:
    out = run(["findmnt", "-rn", "-t", "fuse.zfs", "-o", "TARGET"], check=False).stdout
    return [line for line in out.splitlines() if line.strip()]


@dataclass
class Pool:
    name: str
    loops: list[str]
    files: list[Path]
    root: Path  # datasets are mounted under it

    def dataset(self, name: str, **props: str) -> Path:
        """Create POOL/NAME mounted at ROOT/NAME with the given properties (one ``zfs set`` each)."""
        mnt = self.root / name
        run(["zfs", "create", "-o", f"mountpoint={mnt}", f"{self.name}/{name}"])
        for key, value in props.items():
            run(["zfs", "set", f"{key}={value}", f"{self.name}/{name}"])
        return mnt


def loop_devices(tmp: Path, count: int, size_mib: int, prefix: str = "zdisk") -> tuple[list[str], list[Path]]:
    loops: list[str] = []
    files: list[Path] = []
    try:
        for i in range(count):
            f = tmp / f"{prefix}{i}.img"
            with open(f, "wb") as fh:
                fh.truncate(size_mib * 1024 * 1024)
            files.append(f)
            loops.append(run(["losetup", "-f", "--show", str(f)]).stdout.strip())
    except BaseException:
        for dev in loops:
            run(["losetup", "-d", dev], check=False)
        raise
    return loops, files


@contextlib.contextmanager
def pool(tmp: Path, layout: Sequence[str] = ("mirror",), disks: int = 2, size_mib: int = 128, name: str = "sbtest") -> Iterator[Pool]:
    """A pool on ``disks`` new loop devices; ``layout`` is the vdev words before the devices
    (``("mirror",)``, ``()`` for a stripe, ``("raidz1",)``) or ``"raid10"`` for two mirrors."""
    loops, files = loop_devices(tmp, disks, size_mib)
    root = tmp / f"{name}-mnt"
    root.mkdir()
    try:
        if list(layout) == ["raid10"]:
            spec = ["mirror", loops[0], loops[1], "mirror", loops[2], loops[3]]
        else:
            spec = [*layout, *loops]
        run(["zpool", "create", "-f", "-o", "cachefile=none", "-m", str(root), name, *spec])
        yield Pool(name=name, loops=loops, files=files, root=root)
    finally:
        if run(["zpool", "list", "-H", "-o", "name", name], check=False).returncode == 0:
            for _attempt in range(20):
                if run(["zpool", "destroy", "-f", name], check=False).returncode == 0:
                    break
                time.sleep(0.5)  # a new dataset is busy for about a second
        for dev in loops:
            run(["losetup", "-d", dev], check=False)
        for f in files:
            f.unlink(missing_ok=True)
