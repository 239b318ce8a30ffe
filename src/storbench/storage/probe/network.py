"""The probe of network and FUSE filesystems (edge): the FUSE daemon behind a mount.

The kernel's mount table shows only the kernel's options of a FUSE mount; what a FUSE
client was told (``sshfs -o sync_write``, ``cache=no``) is on its daemon's command line,
found in ``/proc/PID/cmdline`` by the mountpoint it names.
"""

from __future__ import annotations

import dataclasses
import os
import socket

from ..mounts import ZFS_FSTYPES, FindmntEntry
from ..network import NetworkInfo, network_info_from_mount
from .base import Probe

#: The daemon program of each FUSE network filesystem type.
FUSE_DAEMONS: dict[str, tuple[str, ...]] = {
    "fuse.sshfs": ("sshfs",),
    "fuse.smbnetfs": ("smbnetfs",),
    "fuse.glusterfs": ("glusterfs",),
    "fuse.rclone": ("rclone",),
    "fuse.ceph-fuse": ("ceph-fuse",),
}


def process_argvs(proc_root: str = "/proc"):
    """The command line of every process here (``/proc/PID/cmdline``), in PID order; empty ones left out."""
    try:
        pids = sorted((p for p in os.listdir(proc_root) if p.isdigit()), key=int)
    except OSError:
        return
    for pid in pids:
        try:
            with open(os.path.join(proc_root, pid, "cmdline"), "rb") as fh:
                argv = [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
        except OSError:
            continue
        if argv:
            yield argv


def fuse_daemon_argv(mountpoint: str, fstype: str, proc_root: str = "/proc") -> tuple[str, ...]:
    """The command line of the process serving a FUSE mount (empty when not found or not FUSE)."""
    programs = FUSE_DAEMONS.get(fstype)
    if not programs:
        return ()
    target = os.path.abspath(mountpoint)
    for argv in process_argvs(proc_root):
        if os.path.basename(argv[0]) not in programs:
            continue
        if any(os.path.abspath(a) == target for a in argv[1:] if a.startswith("/")):
            return tuple(argv)
    return ()


def smbd_configs(proc_root: str = "/proc") -> tuple[str, ...]:
    """The configuration files of the smbd processes running here (``-s FILE``/``--configfile``;
    ``/etc/samba/smb.conf`` when none is named), each once."""
    found: list[str] = []
    for argv in process_argvs(proc_root):
        if os.path.basename(argv[0]) != "smbd":
            continue
        conf = "/etc/samba/smb.conf"
        for i, a in enumerate(argv[1:], 1):
            if a in ("-s", "--configfile") and i + 1 < len(argv):
                conf = argv[i + 1]
            elif a.startswith("--configfile="):
                conf = a.split("=", 1)[1]
        if conf not in found:
            found.append(conf)
    return tuple(found)


def samba_share_path(probe: Probe, share: str) -> str | None:
    """The directory a Samba share of this machine serves (``testparm`` over each running smbd's
    configuration), or None."""
    for conf in smbd_configs():
        out = probe.run(["testparm", "-s", f"--section-name={share}", "--parameter-name=path", conf], f"testparm (the {share} share)")
        path = (out or "").strip().splitlines()[-1:] if out else []
        if path and path[0].startswith("/"):
            return path[0]
    return None


def is_this_machine(server: str | None) -> bool:
    """Whether a share's server names this machine (loopback, or the host's own name)."""
    if not server:
        return False
    host = server.strip("[]").lower()
    if host in ("localhost", "127.0.0.1", "::1") or host.startswith("127."):
        return True
    names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    return host in names


def describe_network(probe: Probe, entry: FindmntEntry, target: str, source: str) -> NetworkInfo:
    argv = fuse_daemon_argv(entry.target, entry.fstype)
    if entry.fstype in FUSE_DAEMONS and not argv:
        probe.note(f"{entry.fstype} at {entry.target}: its FUSE daemon was not found, so its own options are unknown")
    info = network_info_from_mount(entry.fstype, source, entry.options, mountpoint=entry.target, target=target, daemon_argv=argv)
    share = info.share
    if info.protocol == "smb" and is_this_machine(info.server) and share and not share.startswith("/"):
        share = samba_share_path(probe, share.strip("/")) or share  # the server's directory behind the share name
    if is_this_machine(info.server) and share and share.startswith("/") and os.path.isdir(share):
        # the server is this machine: what holds the shared directory (its cache can answer the share's reads)
        from . import zfs as zfs_probe

        served = probe.find_mount(share)
        if served is not None:
            server_zfs = None
            if served.fstype in ZFS_FSTYPES:
                server_zfs = zfs_probe.describe_dataset(probe, served.source, implementation=zfs_probe.implementation_of(served.fstype))
            info = dataclasses.replace(info, server_fstype=served.fstype, server_zfs=server_zfs)
    return info
