"""Network and shared filesystems (pure): where a share's data lives and the client settings that shape it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._util import to_int
from .mounts import NETWORK_FSTYPES as NETWORK_FSTYPES  # the fstype set lives with the others
from .mounts import mount_option

if TYPE_CHECKING:
    from .zfs import ZfsInfo

#: (protocol, client) of each network filesystem type.
PROTOCOLS: dict[str, tuple[str, str]] = {
    "nfs": ("nfs", "kernel"),
    "nfs4": ("nfs", "kernel"),
    "cifs": ("smb", "kernel"),
    "smb3": ("smb", "kernel"),
    "smbfs": ("smb", "kernel"),
    "fuse.smbnetfs": ("smb", "smbnetfs"),
    "fuse.rclone": ("smb", "rclone"),
    "fuse.sshfs": ("sftp", "sshfs"),
    "sshfs": ("sftp", "sshfs"),
    "9p": ("9p", "kernel"),
    "ceph": ("cephfs", "kernel"),
    "fuse.ceph-fuse": ("cephfs", "ceph-fuse"),
    "glusterfs": ("glusterfs", "kernel"),
    "fuse.glusterfs": ("glusterfs", "glusterfs"),
}
#: Client-side caching options worth recording, per protocol.
_CACHE_OPTIONS: dict[str, tuple[str, ...]] = {
    "nfs": ("sync", "async", "ac", "noac", "actimeo", "acregmin", "acregmax", "lookupcache", "fsc", "nocto", "hard", "soft", "timeo"),
    "smb": ("cache", "actimeo", "nostrictsync", "forcedirectio"),
    "sftp": ("sync_write", "cache", "kernel_cache", "auto_cache", "dir_cache", "writeback_cache", "direct_io", "max_conns"),
    "glusterfs": ("direct-io-mode", "attribute-timeout", "entry-timeout"),
}


@dataclass(frozen=True)
class NetworkInfo:
    """Where a network filesystem's data lives, and the client settings that shape its speed."""

    server: str | None
    share: str | None
    protocol_version: str | None = None  # vers=
    transport: str | None = None  # proto= (nfs)
    rsize_bytes: int | None = None
    wsize_bytes: int | None = None
    protocol: str | None = None  # "nfs", "smb", "sftp" (sshfs), "glusterfs", "cephfs", "9p"
    client: str | None = None  # "kernel", "smbnetfs", "sshfs", "glusterfs" (FUSE), ...
    #: the client's caching options as given (mount options, or the FUSE daemon's own -o options)
    cache_options: tuple[str, ...] = ()
    #: does a write return only once the server has it?  False: acknowledged by the client first
    #: (sshfs without sync_write, NFS without sync, SMB cache=loose); None: not known
    writes_wait_for_server: bool | None = None
    #: the option that decides it, as the user would change it ("sshfs -o sync_write not given")
    write_ack_option: str | None = None
    #: when the server is this machine: the filesystem type holding the shared path, and its
    #: ZFS dataset (the server's ARC can answer the share's reads)
    server_fstype: str | None = None
    server_zfs: ZfsInfo | None = None


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


def split_fuse_options(argv: Sequence[str]) -> tuple[str, ...]:
    """Every ``-o a,b=c`` option of a FUSE daemon's command line (``sshfs -o sync_write ...``)."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        if arg == "-o" and i + 1 < len(argv):
            out.extend(o for o in argv[i + 1].split(",") if o)
        elif arg.startswith("-o") and len(arg) > 2:
            out.extend(o for o in arg[2:].split(",") if o)
    return tuple(out)


def _write_ack(protocol: str | None, client: str | None, options: Sequence[str]) -> tuple[bool | None, str | None]:
    if client == "sshfs":
        if mount_option(options, "sync_write") is not None:
            return True, "sshfs -o sync_write"
        return False, "sshfs without -o sync_write (writes are acknowledged before the server has them)"
    if protocol == "nfs" and client == "kernel":
        if mount_option(options, "sync") is not None:
            return True, "nfs mount option sync"
        return False, "nfs without the sync mount option (async, the default: the client gathers writes until close or fsync)"
    if protocol == "smb" and client == "kernel":
        cache = mount_option(options, "cache")
        if cache == "none":
            return True, "cifs cache=none"
        return False, f"cifs cache={cache or 'strict'}{' (the default)' if not cache else ''}: buffered writes are cached by the client"
    return None, None


def network_info_from_mount(
    fstype: str, source: str, options: Sequence[str], *, mountpoint: str | None = None, target: str | None = None,
    daemon_argv: Sequence[str] = (),
) -> NetworkInfo:
    """What a network mount says of itself; ``daemon_argv`` is its FUSE daemon's command line (whose
    ``-o`` options the kernel's mount table does not show), ``target`` the path under the mount
    (smbnetfs shows every server and share under one mount: ``MOUNT/SERVER/SHARE/...``)."""
    server, share = parse_network_source(fstype, source, options)
    protocol, client = PROTOCOLS.get(fstype, (None, None))
    if fstype == "fuse.smbnetfs" and mountpoint and target:
        rel = target[len(mountpoint):].strip("/").split("/") if target.startswith(mountpoint) else []
        server = rel[0] if rel and rel[0] else None
        share = rel[1] if len(rel) > 1 else None
    all_options = tuple(options) + split_fuse_options(daemon_argv)
    wanted = _CACHE_OPTIONS.get(protocol or "", ())
    cache = tuple(o for o in all_options if o.partition("=")[0] in wanted)
    waits, why = _write_ack(protocol, client, all_options)
    return NetworkInfo(
        server=server,
        share=share,
        protocol_version=mount_option(options, "vers") or None,
        transport=mount_option(options, "proto") or None,
        rsize_bytes=to_int(mount_option(options, "rsize")),
        wsize_bytes=to_int(mount_option(options, "wsize")),
        protocol=protocol,
        client=client,
        cache_options=cache,
        writes_wait_for_server=waits,
        write_ack_option=why,
    )


@dataclass(frozen=True)
class ExportInfo:
    """A network block export or cluster object a target reaches directly, without a mount
    (an NBD export through fio's nbd engine), as its server describes it.

    ``protocol``: ``nbd``.  ``server``: ``host:port`` or the unix socket.  ``export``: the
    export's name (``""``: the default export).  ``details`` keeps the server's own words,
    ``name=value`` (``protocol=newstyle-fixed``, ``can_flush=true`` ...).
    """

    protocol: str
    uri: str
    server: str | None = None
    export: str | None = None
    size_bytes: int | None = None
    read_only: bool | None = None
    rotational: bool | None = None
    details: tuple[str, ...] = ()
    #: when the server is this machine: what stores the export on it (an NFS export's directory,
    #: an iSCSI LUN's backing store), the filesystem type holding that, and its ZFS dataset or zvol
    #: (the server's ARC can answer the export's reads)
    server_path: str | None = None
    server_fstype: str | None = None
    server_zfs: ZfsInfo | None = None


def parse_nbdinfo_json(text: str, uri: str) -> ExportInfo:
    """``nbdinfo --json URI`` -> :class:`ExportInfo` of its first export; ValueError if not nbdinfo's JSON."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("exports"), list) or not doc["exports"]:
        raise ValueError("no exports in nbdinfo's answer")
    ex = doc["exports"][0]
    if not isinstance(ex, dict):
        raise ValueError("an export is not an object")
    details = [f"protocol={doc.get('protocol')}", f"tls={str(doc.get('TLS')).lower()}"]
    details += [f"{k}={str(v).lower()}" for k, v in sorted(ex.items()) if k.startswith("can_") and isinstance(v, bool)]
    if isinstance(ex.get("contexts"), list):
        details.append("contexts=" + ",".join(str(c) for c in ex["contexts"]))
    size = ex.get("export-size")
    return ExportInfo(
        protocol="nbd",
        uri=uri,
        server=nbd_server_of(uri),
        export=ex.get("export-name") if isinstance(ex.get("export-name"), str) else None,
        size_bytes=size if isinstance(size, int) and not isinstance(size, bool) else None,
        read_only=ex.get("is_read_only") if isinstance(ex.get("is_read_only"), bool) else None,
        rotational=ex.get("is_rotational") if isinstance(ex.get("is_rotational"), bool) else None,
        details=tuple(details),
    )


def nbd_server_of(uri: str) -> str | None:
    """``nbd://host:10809/x`` -> ``host:10809`` (port 10809 when none is given); ``nbd+unix:///x?socket=S`` -> ``S``."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(uri)
    if parts.scheme in ("nbd+unix", "nbds+unix"):
        sockets = parse_qs(parts.query).get("socket")
        return sockets[0] if sockets else None
    if parts.scheme in ("nbd", "nbds"):
        host = parts.hostname
        if host is None:
            return None
        shown = f"[{host}]" if re.search(r":", host) else host
        return f"{shown}:{parts.port or 10809}"
    return None


def parse_gluster_volume_info_xml(text: str, uri: str, server: str) -> ExportInfo:
    """``gluster --xml volume info VOLUME`` -> :class:`ExportInfo` (type, bricks, options in ``details``);
    ValueError with gluster's own words when it says no (``Volume does not exist``)."""
    import xml.etree.ElementTree as ET

    start = text.find("<?xml")
    try:
        root = ET.fromstring(text[start:] if start >= 0 else text)
    except ET.ParseError as exc:
        raise ValueError(f"not gluster's XML: {exc}") from None
    if (root.findtext("opRet") or "0").strip() != "0":
        raise ValueError((root.findtext("opErrstr") or "gluster said no").strip())
    vol = root.find("./volInfo/volumes/volume")
    if vol is None:
        raise ValueError("no volume in gluster's answer")
    name = vol.findtext("name")
    details = [f"type={vol.findtext('typeStr')}", f"status={vol.findtext('statusStr')}",
               f"bricks={vol.findtext('brickCount')}", f"replica={vol.findtext('replicaCount')}",
               f"disperse={vol.findtext('disperseCount')}"]  # fmt: skip
    for brick in vol.findall("./bricks/brick"):
        details.append(f"brick={brick.findtext('name') or (brick.text or '').strip()}")
    for opt in vol.findall("./options/option"):
        details.append(f"{opt.findtext('name')}={opt.findtext('value')}")
    return ExportInfo(protocol="glusterfs", uri=uri, server=server, export=name, details=tuple(details))
