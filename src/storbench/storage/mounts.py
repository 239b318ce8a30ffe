"""Mounts (pure): findmnt JSON and /proc/self/mountinfo, mount options, the mount holding a path."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Filesystems that live in memory: there is no device under them.
MEMORY_FSTYPES: frozenset[str] = frozenset({"tmpfs", "ramfs", "devtmpfs", "hugetlbfs"})
#: The two ZFS implementations storbench knows: kernel OpenZFS (``zfs`` mounts) and the
#: FUSE daemon zfs-fuse (``fuse.zfs`` mounts; pool version 23, fewer properties and options).
ZFS_FSTYPES: frozenset[str] = frozenset({"zfs", "fuse.zfs"})
#: Filesystems whose data lives on another machine; their mount source names the server.
NETWORK_FSTYPES: frozenset[str] = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "fuse.sshfs", "sshfs", "9p", "ceph", "glusterfs", "fuse.glusterfs",
     "fuse.smbnetfs", "fuse.ceph-fuse", "fuse.rclone"}
)


@dataclass(frozen=True)
class FindmntEntry:
    """One filesystem of ``findmnt -J`` output."""

    target: str
    source: str
    fstype: str
    options: tuple[str, ...]


def split_mount_options(text: str | None) -> tuple[str, ...]:
    """``"rw,relatime,compress=zstd:3"`` -> ``("rw", "relatime", "compress=zstd:3")``."""
    if not text:
        return ()
    return tuple(part for part in text.split(",") if part)


def mount_option(options: Iterable[str], key: str) -> str | None:
    """Last value of ``key`` in ``options`` (``""`` for a bare flag), None when absent."""
    found: str | None = None
    for opt in options:
        name, sep, value = opt.partition("=")
        if name == key:
            found = value if sep else ""
    return found


def split_source(source: str) -> tuple[str, str | None]:
    """findmnt's ``/dev/loop2[/vol1]`` -> ``("/dev/loop2", "/vol1")``; other sources unchanged."""
    m = re.fullmatch(r"(.*?)\[(/[^\]]*)\]", source)
    if m and m.group(1):
        return m.group(1), m.group(2)
    return source, None


def parse_findmnt_json(text: str) -> tuple[FindmntEntry, ...]:
    """``findmnt -J -o TARGET,SOURCE,FSTYPE,OPTIONS`` -> entries (nested ``children`` flattened).

    Raises ValueError on text that is not findmnt JSON.
    """
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("filesystems"), list):
        raise ValueError("not findmnt JSON: no 'filesystems' list")
    out: list[FindmntEntry] = []

    def walk(items: list) -> None:
        for item in items:
            if not isinstance(item, dict):
                continue
            out.append(
                FindmntEntry(
                    target=str(item.get("target") or ""),
                    source=str(item.get("source") or ""),
                    fstype=str(item.get("fstype") or ""),
                    options=split_mount_options(item.get("options")),
                )
            )
            walk(item.get("children") or [])

    walk(data["filesystems"])
    return tuple(out)


def _unescape_mountinfo(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def parse_mountinfo(text: str) -> tuple[FindmntEntry, ...]:
    """``/proc/self/mountinfo`` -> entries like findmnt's (options = mount options + superblock options).

    Used when findmnt is missing.  ``source`` carries the fsroot in brackets when it is
    not ``/``, as findmnt shows it.
    """
    out: list[FindmntEntry] = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        lf = left.split()
        rf = right.split()
        if len(lf) < 6 or len(rf) < 2:
            continue
        root, mountpoint, mount_opts = _unescape_mountinfo(lf[3]), _unescape_mountinfo(lf[4]), lf[5]
        fstype, source = rf[0], _unescape_mountinfo(rf[1])
        super_opts = rf[2] if len(rf) > 2 else ""
        options: list[str] = []
        for opt in split_mount_options(mount_opts) + split_mount_options(super_opts):
            if opt not in options and not (opt in ("rw", "ro") and ("rw" in options or "ro" in options)):
                options.append(opt)
        if root != "/" and source.startswith("/"):
            source = f"{source}[{root}]"
        out.append(FindmntEntry(target=mountpoint, source=source, fstype=fstype, options=tuple(options)))
    return tuple(out)


def mount_for_path(entries: Sequence[FindmntEntry], path: str) -> FindmntEntry | None:
    """The entry whose mountpoint is the longest prefix of ``path`` (the last one mounted wins)."""
    best: FindmntEntry | None = None
    for entry in entries:
        mp = entry.target.rstrip("/") or "/"
        if path == mp or path.startswith(mp.rstrip("/") + "/") or mp == "/":
            if best is None or len(mp) >= len(best.target.rstrip("/") or "/"):
                best = entry
    return best

