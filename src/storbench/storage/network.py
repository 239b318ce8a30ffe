"""Network and shared filesystems (pure): where a share's data lives and the client settings that shape it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ._util import _int
from .mounts import mount_option

#: Filesystems whose data lives on another machine; their mount source names the server.
NETWORK_FSTYPES: frozenset[str] = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "fuse.sshfs", "sshfs", "9p", "ceph", "glusterfs", "fuse.glusterfs"}
)


@dataclass(frozen=True)
class NetworkInfo:
    """Where a network filesystem's data lives, and the client settings that shape its speed."""

    server: str | None
    share: str | None
    protocol_version: str | None = None  # vers=
    transport: str | None = None  # proto= (nfs)
    rsize_bytes: int | None = None
    wsize_bytes: int | None = None


def parse_network_source(fstype: str, source: str, options: Sequence[str] = ()) -> tuple[str | None, str | None]:
    """(server, share) from a network mount source.

    ``server:/export`` and ``[fd00::1]:/export`` (nfs), ``//server/share`` (cifs/smb3),
    ``user@host:/path`` (sshfs), and a 9p mount tag (share only; server from ``addr=``).
    """
    source = source.strip()
    if fstype in ("cifs", "smb3", "smbfs") or source.startswith("//") or source.startswith("\\\\"):
        text = source.replace("\\", "/").lstrip("/")
        server, _, share = text.partition("/")
        return (server or None), (share or None)
    if fstype == "9p":
        return mount_option(options, "addr") or None, source or None
    m = re.fullmatch(r"(?:[^@/]+@)?\[([^\]]+)\]:(.*)", source)
    if m:
        return m.group(1), m.group(2) or None
    m = re.fullmatch(r"(?:[^@/]+@)?([^:/]+):(.*)", source)
    if m:
        return m.group(1), m.group(2) or None
    return None, source or None


def network_info_from_mount(fstype: str, source: str, options: Sequence[str]) -> NetworkInfo:
    server, share = parse_network_source(fstype, source, options)
    return NetworkInfo(
        server=server,
        share=share,
        protocol_version=mount_option(options, "vers") or None,
        transport=mount_option(options, "proto") or None,
        rsize_bytes=_int(mount_option(options, "rsize")),
        wsize_bytes=_int(mount_option(options, "wsize")),
    )

