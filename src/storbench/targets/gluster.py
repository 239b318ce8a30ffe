"""GlusterFS volumes, reached with fio's own gfapi engine (libgfapi): no FUSE mount.

``--target gluster://HOST/VOLUME``: the job gets ``ioengine=gfapi volume=VOLUME brick=HOST``
and its test file ``storbench.testfile`` in the volume's root (the workload's engine is
replaced, with a comment saying so).  storbench creates only that file, as in a directory
target, so writes need no ``--destroy-data``; it is removed after the run by one more gfapi
job with ``unlink=1`` (there is no local path to unlink).  The volume is checked and described
with ``gluster --remote-host=HOST --xml volume info VOLUME`` (its type, bricks and options).
A gfapi job takes about 10 s more than its runtime here (libgfapi's start and stop), and the
engine writes ``/tmp/fio_gfapi.log``, which storbench removes when the run made it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from storbench.errors import TargetError
from storbench.model import Target

from .base import Options, Placement, ResolveContext, TargetKind, check_uri_text

if TYPE_CHECKING:
    from storbench.storage import StorageInfo

PREFIX = "gluster://"
GLUSTER_TIMEOUT_S = 30.0
#: what the gfapi engine writes outside the job's directory
ENGINE_LOG = "/tmp/fio_gfapi.log"
_VOLUME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")


def parse_gluster_uri(spec: str) -> tuple[str, str]:
    """``gluster://HOST/VOLUME`` -> (host, volume); one-line TargetError otherwise."""
    check_uri_text("GlusterFS URI", spec)
    parts = urlsplit(spec)
    volume = parts.path.strip("/")
    if not parts.hostname or not volume or "/" in volume or not _VOLUME_RE.match(volume):
        raise TargetError(f"GlusterFS target {spec!r}: give gluster://HOST/VOLUME (a volume name of letters, digits, '.', '_', '-')")
    return parts.hostname, volume


def volume_info(host: str, volume: str) -> tuple[int, str, str]:
    from storbench.storage import SubprocessRunner

    # --log-file: the CLI would otherwise leave /var/log/glusterfs/cli.log behind
    return SubprocessRunner(GLUSTER_TIMEOUT_S).run(
        ["gluster", "--log-file=/dev/null", f"--remote-host={host}", "--xml", "volume", "info", volume]
    )


class GlusterKind(TargetKind):
    name = "gluster"
    prefixes = (PREFIX,)
    engine = "gfapi"
    own_options = frozenset({"volume", "brick"})
    needs_size = True
    local_path = False
    noun = "a GlusterFS volume"
    #: its test file is in the volume, removed with a gfapi job (storbench.run.runner)
    remote_test_file = True
    artifacts = (ENGINE_LOG,)

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        from storbench.storage.network import parse_gluster_volume_info_xml

        host, volume = parse_gluster_uri(spec)
        rc, out, err = volume_info(host, volume)
        if rc == 127:
            return Target(kind="gluster", path=spec)  # no CLI here: fio's own error will say what is wrong
        try:
            info = parse_gluster_volume_info_xml(out, spec, host) if rc == 0 else None
        except ValueError as exc:
            raise TargetError(f"GlusterFS volume {volume!r} on {host}: {exc}") from None
        if info is None:
            first = next((ln.strip() for ln in (err + out).splitlines() if ln.strip()), f"exit status {rc}")
            raise TargetError(f"cannot reach GlusterFS on {host}: gluster volume info {volume} failed: {first}")
        if "status=Started" not in info.details:
            raise TargetError(f"GlusterFS volume {volume!r} on {host} is not started (gluster volume start {volume})")
        return Target(kind="gluster", path=spec)

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        host, volume = parse_gluster_uri(target.path)
        return Placement(options=(("volume", volume), ("brick", host), ("filename", test_file_name)))

    def describe_path(self, target: Target) -> str | None:
        return None

    def describe(self, target: Target, fio_version: str | None) -> StorageInfo | None:
        from storbench.storage import StorageInfo, describe_host
        from storbench.storage.network import parse_gluster_volume_info_xml

        notes: list[str] = []
        host_info = describe_host(fio_version, notes=notes)
        host, volume = parse_gluster_uri(target.path)
        rc, out, err = volume_info(host, volume)
        export = None
        if rc == 0:
            try:
                export = parse_gluster_volume_info_xml(out, target.path, host)
            except ValueError as exc:
                notes.append(f"GlusterFS volume {volume} not described: {exc}")
        else:
            notes.append(f"GlusterFS volume {volume} not described: gluster volume info failed ({'not installed: Debian package glusterfs-cli' if rc == 127 else err.strip()[:200]})")
        return StorageInfo(target=target.path, target_kind="gluster", filesystem=None, devices=(), host=host_info,
                           notes=tuple(notes), export=export)  # fmt: skip

    def space_paths(self, target: Target, test_files: Sequence[str]) -> tuple[list[str], str] | None:
        return None


GLUSTER = GlusterKind()
