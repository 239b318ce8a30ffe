"""The device a capture traces: a block device named, or the one under a mounted directory."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from storbench.errors import UsageError

SYS_BLOCK = Path("/sys/class/block")
SYS_DEV = Path("/sys/dev/block")


@dataclass(frozen=True)
class TracedDevice:
    path: str  # /dev/loop3
    name: str  # loop3 (the kernel's name, /sys/class/block/NAME)
    major: int
    minor: int
    size_bytes: int | None
    logical_block_bytes: int | None
    identity: str | None = None

    @property
    def tracefs_dev(self) -> int:
        """The number the block events' ``dev`` field holds (major << 20 | minor)."""
        return (self.major << 20) | self.minor

    def stat_counts(self) -> dict[str, int]:
        """Completed requests from the kernel's ``stat`` file: fields 1, 5, 12 and 16."""
        return read_stat_counts((SYS_BLOCK / self.name / "stat").read_text())


def read_stat_counts(text: str) -> dict[str, int]:
    fields = [int(x) for x in text.split()]
    out = {"read": fields[0], "write": fields[4]}
    if len(fields) >= 15:
        out["discard"] = fields[11]
    if len(fields) >= 17:
        out["flush"] = fields[15]
    return out


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _whole_disk_queue(name: str) -> Path:
    """A partition's queue facts live on its disk."""
    own = SYS_BLOCK / name / "queue"
    return own if own.exists() else (SYS_BLOCK / name).resolve().parent / "queue"


def resolve_device(device: str | None, directory: str | None) -> TracedDevice:
    """The device named (``--device``), or the one under a mounted directory (``--dir``)."""
    if (device is None) == (directory is None):
        raise UsageError("capture: name the device to trace with --device DEV or --dir PATH (one of them)")
    if device is not None:
        try:
            st = os.stat(device)
        except OSError as exc:
            raise UsageError(f"capture: --device {device}: {exc.strerror}") from exc
        if not stat.S_ISBLK(st.st_mode):
            raise UsageError(f"capture: --device {device} is not a block device (a whole disk, a partition or a loop device is)")
        major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
        where = device
    else:
        assert directory is not None
        try:
            st = os.stat(directory)
        except OSError as exc:
            raise UsageError(f"capture: --dir {directory}: {exc.strerror}") from exc
        major, minor = os.major(st.st_dev), os.minor(st.st_dev)
        where = directory
    sysdev = SYS_DEV / f"{major}:{minor}"
    if not sysdev.exists():
        raise UsageError(f"capture: {where} is on device {major}:{minor}, which is not a block device the kernel traces (a FUSE, network or memory filesystem has none)")
    name = sysdev.resolve().name
    queue = _whole_disk_queue(name)
    sectors = _read_int(SYS_BLOCK / name / "size")
    return TracedDevice(
        path=device if device is not None else f"/dev/{name}", name=name, major=major, minor=minor,
        size_bytes=sectors * 512 if sectors is not None else None,
        logical_block_bytes=_read_int(queue / "logical_block_size"), identity=device_identity(name),
    )  # fmt: skip


def device_identity(name: str) -> str | None:
    """What a block device is beyond its name: a loop device's backing file with its device and
    inode, a disk's WWID or serial (a partition: its disk's, and its number); None when unknown."""
    base = SYS_BLOCK / name
    backing = base / "loop" / "backing_file"
    if backing.exists():
        path = backing.read_text().strip()
        try:
            st = os.stat(path)
            return f"loop:{path}:{st.st_dev}:{st.st_ino}"
        except OSError:
            return f"loop:{path}"
    disk = base if (base / "device").exists() else base.resolve().parent
    part = _read_int(base / "partition")
    for key in ("wwid", "serial"):
        try:
            value = (disk / "device" / key).read_text().strip()
        except OSError:
            continue
        if value:
            return f"{key}:{value}" + (f":part{part}" if part else "")
    return None


def same_device(path: str, dev: TracedDevice) -> bool:
    """Whether ``path`` (a file or its nearest existing parent) lives on the traced device."""
    p = Path(path).resolve()
    while not p.exists() and p != p.parent:
        p = p.parent
    st = os.stat(p)
    return (os.major(st.st_dev), os.minor(st.st_dev)) == (dev.major, dev.minor)
