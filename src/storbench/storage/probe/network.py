"""The probe of network and FUSE filesystems (edge): the FUSE daemon behind a mount.

The kernel's mount table shows only the kernel's options of a FUSE mount; what a FUSE
client was told (``sshfs -o sync_write``, ``cache=no``) is on its daemon's command line,
found in ``/proc/PID/cmdline`` by the mountpoint it names.
"""

from __future__ import annotations

import os

from ..mounts import FindmntEntry
from ..network import NetworkInfo, network_info_from_mount
from .base import _Probe

#: The daemon program of each FUSE network filesystem type.
FUSE_DAEMONS: dict[str, tuple[str, ...]] = {
    "fuse.sshfs": ("sshfs",),
    "fuse.smbnetfs": ("smbnetfs",),
    "fuse.glusterfs": ("glusterfs",),
    "fuse.rclone": ("rclone",),
    "fuse.ceph-fuse": ("ceph-fuse",),
}


def fuse_daemon_argv(mountpoint: str, fstype: str, proc_root: str = "/proc") -> tuple[str, ...]:
    """The command line of the process serving a FUSE mount (empty when not found or not FUSE)."""
    programs = FUSE_DAEMONS.get(fstype)
    if not programs:
        return ()
    target = os.path.abspath(mountpoint)
    try:
        pids = [p for p in os.listdir(proc_root) if p.isdigit()]
    except OSError:
        return ()
    for pid in sorted(pids, key=int):
        try:
            with open(os.path.join(proc_root, pid, "cmdline"), "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        argv = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
        if not argv or os.path.basename(argv[0]) not in programs:
            continue
        if any(os.path.abspath(a) == target for a in argv[1:] if a.startswith("/")):
            return tuple(argv)
    return ()


def describe_network(probe: _Probe, entry: FindmntEntry, target: str, source: str) -> NetworkInfo:
    argv = fuse_daemon_argv(entry.target, entry.fstype)
    if entry.fstype in FUSE_DAEMONS and not argv:
        probe.note(f"{entry.fstype} at {entry.target}: its FUSE daemon was not found, so its own options are unknown")
    return network_info_from_mount(entry.fstype, source, entry.options, mountpoint=entry.target, target=target, daemon_argv=argv)
