"""Network and shared filesystems (pure): where a share's data lives and the client settings that shape it."""

from __future__ import annotations

import json
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
