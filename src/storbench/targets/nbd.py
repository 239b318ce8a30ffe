"""NBD exports, reached with fio's own NBD client (``ioengine=nbd``, libnbd): no kernel module.

``--target nbd://HOST[:PORT][/EXPORT]`` (TCP; port 10809 by default) or
``--target nbd+unix:///EXPORT?socket=PATH``; ``storbench matrix`` serves VM images on a unix
socket and gives ``Target(kind="nbd", path=SOCKET)``.  The job gets ``ioengine=nbd`` (the
workload's engine is replaced, with a comment saying so) and ``uri=...`` instead of
``filename``; its size is the export's where the workload and ``--size`` name none, and is
capped at it where they name more.  The export is checked and described with ``nbdinfo
--json`` (libnbd-bin): its size, its server and what the server can do.

Writing to an export destroys what it holds: a workload that writes runs only when
``--destroy-data`` repeats the target exactly, as for block devices; reads are always allowed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from storbench.errors import TargetError
from storbench.model import Target

from .base import Options, Placement, ResolveContext, TargetKind, capped_size, check_uri_text, refuse_unnamed_writes

if TYPE_CHECKING:
    from storbench.storage import StorageInfo

NBD_PREFIXES = ("nbd://", "nbd+unix://", "nbds://", "nbds+unix://")
NBDINFO_TIMEOUT_S = 15.0
_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def nbd_uri(path: str) -> str:
    """fio's ``uri`` for a target: an NBD URI as given, or a unix socket path (the default export)."""
    if path.startswith(NBD_PREFIXES):
        check_uri_text("NBD URI", path)
        return path
    if not path.startswith("/"):
        raise TargetError(f"NBD socket {path!r} must be an absolute path")
    if _CONTROL_RE.search(path) or any(c in path for c in ";#$&?% "):
        raise TargetError(f"NBD socket path {path!r} holds a character an NBD URI or a fio job file cannot carry")
    return f"nbd+unix:///?socket={path}"


def check_nbd_uri(spec: str) -> str:
    """The URI, checked for what fio's nbd engine and a job file can take (one-line TargetError)."""
    check_uri_text("NBD URI", spec)
    parts = urlsplit(spec)
    if parts.scheme.endswith("+unix"):
        if "socket=" not in parts.query:
            raise TargetError(f"NBD URI {spec!r} names no socket: give nbd+unix:///EXPORT?socket=/path/to/socket")
    else:
        if not parts.hostname:
            raise TargetError(f"NBD URI {spec!r} names no server: give nbd://HOST[:PORT][/EXPORT]")
        try:
            _ = parts.port  # urlsplit checks the port only when asked
        except ValueError:
            raise TargetError(f"NBD URI {spec!r} has an invalid port (a number from 1 to 65535)") from None
    return spec


def nbdinfo(uri: str) -> tuple[int, str, str]:
    """``nbdinfo --json URI`` (argument list, a timeout): (returncode, stdout, stderr); 127 when missing."""
    from storbench.storage import SubprocessRunner

    return SubprocessRunner(NBDINFO_TIMEOUT_S).run(["nbdinfo", "--json", uri])


class NbdKind(TargetKind):
    name = "nbd"
    prefixes = NBD_PREFIXES
    engine = "nbd"
    own_options = frozenset({"uri"})
    local_path = False
    noun = "an NBD export"

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        check_nbd_uri(spec)
        refuse_unnamed_writes(spec, ctx, f"NBD export {spec!r}")
        rc, _out, err = nbdinfo(spec)
        if rc not in (0, 127):
            first = next((ln.strip() for ln in err.splitlines() if ln.strip()), f"exit status {rc}")
            raise TargetError(f"cannot reach NBD export {spec!r}: {first}")
        return Target(kind="nbd", path=spec)

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        notes = capped_size(options, export_size, "the NBD export's")
        return Placement(options=(("uri", nbd_uri(target.path)),), notes=tuple(notes))

    def describe_path(self, target: Target) -> str | None:
        return None if target.path.startswith(NBD_PREFIXES) else target.path

    def describe(self, target: Target, fio_version: str | None) -> StorageInfo | None:
        """An export named by URI: what ``nbdinfo --json`` says of it, and the host."""
        if not target.path.startswith(NBD_PREFIXES):
            return super().describe(target, fio_version)
        from storbench.storage import StorageInfo, describe_host
        from storbench.storage.network import parse_nbdinfo_json

        notes: list[str] = []
        host = describe_host(fio_version, notes=notes)
        rc, out, err = nbdinfo(target.path)
        export = None
        if rc == 0:
            try:
                export = parse_nbdinfo_json(out, target.path)
            except ValueError as exc:
                notes.append(f"nbdinfo's answer for {target.path} not understood: {exc}")
        elif rc == 127:
            notes.append("NBD export not described: nbdinfo is not installed (Debian package libnbd-bin)")
        else:
            first = next((ln.strip() for ln in err.splitlines() if ln.strip()), f"exit status {rc}")
            notes.append(f"NBD export not described: nbdinfo --json {target.path} failed: {first}")
        return StorageInfo(target=target.path, target_kind="nbd", filesystem=None, devices=(), host=host,
                           notes=tuple(notes), export=export)  # fmt: skip

    def space_paths(self, target: Target, test_files: Sequence[str]) -> tuple[list[str], str] | None:
        if target.path.startswith(NBD_PREFIXES):
            return None
        return ([], os.path.dirname(target.path))  # a served image: the socket sits beside it


NBD = NbdKind()

