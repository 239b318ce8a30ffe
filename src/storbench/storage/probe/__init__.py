"""The edge of the storage description: runs the tools and reads /sys and /proc.

:func:`describe_target` walks from a path to its filesystem (:mod:`.filesystems`, with one
probe per family: :mod:`.localfs`, :mod:`.zfs`) and down the block-device chain
(:mod:`.chain`); :mod:`.base` holds the command runner and the per-call :class:`Probe`
(notes, caches); :mod:`.host` the host facts.  Every command goes through an injected
:class:`CommandRunner` (argument lists, never a shell); a missing tool or an unreadable
file never raises, it adds a note.

May import: the records of :mod:`storbench.storage`, process, units and errors; never targets,
run or store.
"""

from __future__ import annotations

import os
import stat

from ..block import lsblk_mountpoints
from ..records import StorageInfo
from .base import CommandRunner, Probe, SubprocessRunner
from .chain import chain, fs_devices
from .filesystems import describe_filesystem
from .hardware import describe_hardware
from .host import describe_host

__all__ = ["CommandRunner", "SubprocessRunner", "describe_host", "describe_target"]


def describe_target(
    path: str,
    *,
    fio_version: str | None = None,
    runner: CommandRunner | None = None,
    sys_root: str = "/sys",
) -> StorageInfo:
    """Describe the storage under ``path`` (a directory, regular file or block device).

    Runs findmnt, lsblk and the filesystem's own tools through ``runner`` (default:
    :class:`SubprocessRunner`) and reads ``sys_root``.  Never raises for a missing tool
    or an unreadable file: :attr:`StorageInfo.notes` says what is missing and why.  A
    path that does not exist yet is described by its nearest existing parent, with a note.
    """
    probe = Probe(runner or SubprocessRunner(), sys_root)
    host = describe_host(fio_version, notes=probe.notes)
    target = os.path.abspath(path)
    probe_path = target
    while not os.path.exists(probe_path) and os.path.dirname(probe_path) != probe_path:
        probe_path = os.path.dirname(probe_path)
    if probe_path != target:
        probe.note(f"{target} does not exist; described {probe_path}, its nearest existing parent")
    try:
        st = os.stat(probe_path)
    except OSError as exc:
        probe.note(f"{target}: {exc.strerror or exc}")
        return StorageInfo(target=target, target_kind="dir", filesystem=None, devices=(), host=host, notes=tuple(probe.notes))

    if stat.S_ISBLK(st.st_mode):
        kname = probe.kname_of(probe_path)
        from ..zfs import zvol_dataset_from_path

        if kname and (dataset := zvol_dataset_from_path(probe_path)):
            probe.zvol_hints[kname] = dataset
        devices = chain(probe, [kname]) if kname else ()
        if kname and (out := probe.run(["lsblk", "-J", "-o", "MOUNTPOINT", f"/dev/{kname}"], f"mount points of /dev/{kname}")):
            try:
                points = lsblk_mountpoints(out)
            except (ValueError, AttributeError):
                points = ()
            if points:
                probe.note(f"block device {probe_path} is mounted at {', '.join(points)}")
        drives, controllers = describe_hardware(probe.runner, devices, probe.notes)
        return StorageInfo(target=target, target_kind="block", filesystem=None, devices=devices, host=host,
                           notes=tuple(probe.notes), drives=drives, controllers=controllers)  # fmt: skip

    kind = "dir" if stat.S_ISDIR(st.st_mode) or probe_path != target else "file"
    if kind == "file" and not stat.S_ISREG(st.st_mode):
        probe.note(f"{target} is neither a directory, a regular file nor a block device")
    entry = probe.find_mount(probe_path)
    if entry is None:
        return StorageInfo(target=target, target_kind=kind, filesystem=None, devices=(), host=host, notes=tuple(probe.notes))
    fs = describe_filesystem(probe, entry, probe_path)
    if fs.zfs is not None:
        from . import zfs as zfs_probe

        start = zfs_probe.leaf_knames(probe, fs.zfs)
    elif fs.btrfs is not None and fs.btrfs.devices:
        start = [k for k in (probe.kname_of(p) for p in fs.btrfs.devices) if k]
    else:
        start = fs_devices(probe, entry, where=target)
    devices = chain(probe, list(dict.fromkeys(start)))
    drives, controllers = describe_hardware(probe.runner, devices, probe.notes)
    return StorageInfo(target=target, target_kind=kind, filesystem=fs, devices=devices, host=host,
                       notes=tuple(probe.notes), drives=drives, controllers=controllers)  # fmt: skip

