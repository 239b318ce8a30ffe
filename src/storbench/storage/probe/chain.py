"""The block-device chain under a target (edge): from the filesystem's device down to the disks."""

from __future__ import annotations

import dataclasses
import os
from collections import deque
from collections.abc import Sequence

from ..block import DeviceInfo
from ..localfs import parse_btrfs_fi_show
from ..mounts import MEMORY_FSTYPES, NETWORK_FSTYPES, ZFS_FSTYPES, FindmntEntry, split_source
from .base import Probe


def chain(probe: Probe, start: Sequence[str]) -> tuple[DeviceInfo, ...]:
    """Breadth first from ``start`` down to the physical devices, each device once."""
    out: list[DeviceInfo] = []
    seen: set[str] = set()
    queue: deque[str] = deque(k for k in start)
    depth_guard = 0
    while queue and depth_guard < 256:
        depth_guard += 1
        kname = queue.popleft()
        if kname in seen:
            continue
        seen.add(kname)
        dev = probe.device(kname)
        extra: list[str] = []
        if dev.type == "loop" or kname.startswith("loop"):
            extra = loop_backing(probe, dev)
        elif kname.startswith("zd"):
            from . import zfs as zfs_probe

            zvol, extra = zfs_probe.describe_zvol(probe, dev)
            if zvol is not None:
                dev = dataclasses.replace(dev, zvol=zvol)
        if extra:
            dev = dataclasses.replace(dev, parents=tuple(dict.fromkeys(dev.parents + tuple(extra))))
        out.append(dev)
        queue.extend(p for p in dev.parents if p not in seen)
    return tuple(out)


def loop_backing(probe: Probe, dev: DeviceInfo) -> list[str]:
    """The device holding a loop device's backing file (as a parent kname)."""
    backing = dev.loop_backing_file
    if not backing:
        if dev.type == "loop":
            probe.note(f"{dev.kname}: loop backing file unknown")
        return []
    path = backing[: -len(" (deleted)")] if backing.endswith(" (deleted)") else backing
    if not os.path.exists(path):
        probe.note(f"{dev.kname}: backing file {backing} not found")
        return []
    entry = probe.find_mount(path)
    if entry is None:
        return []
    return fs_devices(probe, entry, where=f"backing file of {dev.kname}")


def fs_devices(probe: Probe, entry: FindmntEntry, *, where: str) -> list[str]:
    """Knames of the block devices a mounted filesystem sits on (empty, with a note, for none)."""
    source, _ = split_source(entry.source)
    if entry.fstype in MEMORY_FSTYPES:
        probe.note(f"{where}: {entry.fstype} at {entry.target} is memory, not a disk")
        return []
    if entry.fstype in NETWORK_FSTYPES:
        probe.note(f"{where}: {entry.fstype} at {entry.target} is on another machine ({source})")
        return []
    if entry.fstype in ZFS_FSTYPES:
        from . import zfs as zfs_probe

        zfs = zfs_probe.describe_dataset(probe, source, implementation=zfs_probe.implementation_of(entry.fstype))
        return zfs_probe.leaf_knames(probe, zfs) if zfs is not None else []
    if entry.fstype == "btrfs":
        out = probe.run(["btrfs", "filesystem", "show", "--raw", entry.target], f"btrfs devices of {entry.target}")
        paths = parse_btrfs_fi_show(out) if out else ()
        knames = [k for k in (probe.kname_of(p) for p in paths) if k]
        if knames:
            return list(dict.fromkeys(knames))
    if source.startswith("/dev/"):
        kname = probe.kname_of(source)
        if kname:
            return [kname]
    kname = probe._kname_from_st_dev(entry.target)  # /dev/root and friends: the mount's device number
    if kname:
        return [kname]
    if not source.startswith("/dev/"):
        probe.note(f"{where}: {entry.fstype} at {entry.target} has no block device (source {entry.source!r})")
    return []
