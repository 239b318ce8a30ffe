"""An nfs-ganesha server's own word about an export: whether it makes every WRITE stable.

nfs-ganesha's ``NFS_Commit`` (an ``EXPORT`` block's, or ``EXPORT_DEFAULTS``'): ``true`` makes the
server commit each WRITE before it answers, whatever the client asked (an UNSTABLE write is then as
durable as a FILE_SYNC one); ``false`` (its default) honours the client's ``stable_how``.  Where
storbench runs beside the server (a ``ganesha.nfsd`` in the same network namespace: a loopback
target, or storbench started inside the server's namespace), it reads the server's configuration
(the ``-f`` file of its command line, else ``/etc/ganesha/ganesha.conf``) and finds the export whose
``Pseudo`` (NFSv4) or ``Path`` holds the target's directory.

* pure: :func:`parse_exports` (ganesha's configuration syntax: ``NAME { key = value; ... }``
  blocks, nested, ``#`` comments, keys case-insensitive) and :func:`export_for`;
* the edge: :func:`local_servers` (``/proc``: ganesha processes in this network namespace and
  their configuration files), :func:`local_export` and :func:`server_commit` (the whole question,
  ``None`` when nothing local answers it); :func:`local_directory` (pure) says where the export's
  directory is on the server, so that storbench can describe what holds it (a ZFS dataset).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_CONFIG = "/etc/ganesha/ganesha.conf"
_TOKEN_RE = re.compile(r'"[^"]*"|[{};=]|[^\s{};=#"]+')


@dataclass(frozen=True)
class GaneshaExport:
    """One ``EXPORT`` block: where it is, and whether the server commits every write."""

    export_id: str | None
    path: str | None
    pseudo: str | None
    nfs_commit: bool  # the block's own NFS_Commit, else EXPORT_DEFAULTS', else ganesha's default (false)


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        out += [t.strip('"') if t.startswith('"') else t for t in _TOKEN_RE.findall(line)]
    return out


def _blocks(tokens: Sequence[str]) -> list[tuple[str, dict[str, str]]]:
    """Every block as (NAME in upper case, its own ``key = value`` pairs with lower-case keys),
    nested blocks listed after the block that holds them."""
    out: list[tuple[str, dict[str, str]]] = []
    stack: list[tuple[str, dict[str, str]]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if i + 1 < len(tokens) and tokens[i + 1] == "{":
            stack.append((tok.upper(), {}))
            i += 2
        elif tok == "}":
            if stack:
                out.append(stack.pop())
            i += 1
        elif i + 2 < len(tokens) and tokens[i + 1] == "=" and stack:
            stack[-1][1][tok.lower()] = tokens[i + 2]
            i += 3
        else:
            i += 1
    return out


def _bool(value: str | None) -> bool | None:
    if value is None:
        return None
    return {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}.get(value.lower())


def parse_exports(text: str) -> tuple[GaneshaExport, ...]:
    """The ``EXPORT`` blocks of a ganesha configuration, with their ``NFS_Commit`` resolved. Pure."""
    blocks = _blocks(_tokens(text))
    default = next((_bool(kv.get("nfs_commit")) for name, kv in blocks if name == "EXPORT_DEFAULTS"), None)
    out = []
    for name, kv in blocks:
        if name != "EXPORT":
            continue
        own = _bool(kv.get("nfs_commit"))
        commit = own if own is not None else (default if default is not None else False)
        out.append(GaneshaExport(export_id=kv.get("export_id"), path=kv.get("path"), pseudo=kv.get("pseudo"), nfs_commit=commit))
    return tuple(out)


def export_for(exports: Sequence[GaneshaExport], directory: str) -> GaneshaExport | None:
    """The export holding ``directory`` (the path of an ``nfs://`` URI): the longest ``Pseudo`` or
    ``Path`` that is it or one of its parents. Pure."""

    def under(root: str | None) -> int:
        if not root:
            return -1
        root = root.rstrip("/") or "/"
        d = directory.rstrip("/") or "/"
        return len(root) if d == root or d.startswith(root.rstrip("/") + "/") else -1

    best = max(exports, key=lambda e: max(under(e.pseudo), under(e.path)), default=None)
    return best if best is not None and max(under(best.pseudo), under(best.path)) >= 0 else None


def local_servers(proc: str = "/proc") -> list[tuple[int, str]]:
    """(pid, configuration file) of every ``ganesha.nfsd`` in this process's network namespace."""
    from ._util import local_processes

    return [(pid, next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-f"), DEFAULT_CONFIG))
            for pid, argv, _env in local_processes("ganesha.nfsd", proc)]  # fmt: skip


def local_directory(export: GaneshaExport, directory: str) -> str | None:
    """Where ``directory`` (an ``nfs://`` URI's path, by the export's ``Pseudo`` or its ``Path``)
    is on the server: under the export's ``Path``. Pure."""
    d = directory.rstrip("/") or "/"
    for root in (export.pseudo, export.path):
        if not root or not export.path:
            continue
        r = root.rstrip("/") or "/"
        if d == r or d.startswith(r.rstrip("/") + "/"):
            rest = d[len(r):].lstrip("/")
            return export.path.rstrip("/") + ("/" + rest if rest else "") or "/"
    return None


def local_export(directory: str, proc: str = "/proc") -> tuple[GaneshaExport | None, str]:
    """The export of the ganesha beside storbench that serves ``directory``, and how storbench knows
    it (or why it cannot: no local ganesha, several, an unreadable configuration, no such export)."""
    servers = local_servers(proc)
    if not servers:
        return None, "no nfs-ganesha runs beside storbench (the server's NFS_Commit cannot be read)"
    if len({c for _, c in servers}) > 1:
        return None, f"{len(servers)} nfs-ganesha servers run here with different configurations"
    pid, config = servers[0]
    try:
        with open(config, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        return None, f"nfs-ganesha (pid {pid}) reads {shlex.quote(config)}, which storbench cannot read ({exc.strerror})"
    export = export_for(parse_exports(text), directory)
    if export is None:
        return None, f"nfs-ganesha's {config} has no export holding {directory}"
    return export, f"nfs-ganesha (pid {pid}) {config}: export {export.pseudo or export.path} NFS_Commit = {str(export.nfs_commit).lower()}"


#: the bus ganesha answers on when its environment names none (the system bus)
SYSTEM_BUS = "unix:path=/run/dbus/system_bus_socket"


def io_source(directory: str, proc: str = "/proc") -> tuple[int, str] | None:
    """(export id, D-Bus address) to ask the local ganesha serving ``directory`` for its per-export
    I/O counters (:mod:`storbench.backend.nfs_server`): the ``DBUS_SYSTEM_BUS_ADDRESS`` of the
    ganesha's own environment, else the system bus; None when no single local ganesha serves it
    or the export has no numeric ``Export_Id``."""
    servers = local_servers(proc)
    export, _how = local_export(directory, proc)
    if export is None or len(servers) != 1 or not (export.export_id or "").isdigit():
        return None
    from ._util import local_processes

    environ = next((env for pid, _argv, env in local_processes("ganesha.nfsd", proc) if pid == servers[0][0]), {})
    bus = environ.get("DBUS_SYSTEM_BUS_ADDRESS") or SYSTEM_BUS
    return int(export.export_id or 0), bus


def server_commit(directory: str, proc: str = "/proc") -> tuple[bool | None, str]:
    """Whether the local ganesha serving ``directory`` commits every write, and how storbench knows
    (or why it cannot: :func:`local_export`)."""
    export, how = local_export(directory, proc)
    return (export.nfs_commit if export is not None else None), how
