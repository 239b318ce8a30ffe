"""iSCSI LUNs, reached without an initiator in the kernel: through qemu-nbd, a userspace bridge.

``--target iscsi://HOST[:PORT]/IQN/LUN`` (port 3260 by default).  This machine's kind of host (a
container, a NAS under evaluation attached to nothing) has no kernel iSCSI initiator, so storbench
serves the LUN itself for the run: ``qemu-nbd -f raw iscsi://...`` (qemu's libiscsi driver,
Debian's ``qemu-block-extra``) on a unix socket in a directory of its own
(``$TMPDIR/storbench-fio-<pid>-iscsi-<hash>``, removed after the run, or by the next run when
storbench was killed), and fio reaches that socket with its nbd engine (``ioengine=nbd``, the
workload's engine replaced with a comment saying so).  The storage description says so: one more
hop and one more process on the client's CPUs.

Checked before anything runs, in one line each: the URI's form; that the LUN answers
(``qemu-img info``, bounded); writes need ``--destroy-data`` repeating the URI exactly, and the
refusal says what the LUN holds (its first MiB read with ``qemu-img dd`` and probed with
``wipefs``: a partition table or a filesystem); reads are always allowed.

The LUN's write cache (the WCE bit of its caching mode page; tgt's default is on: writes are then
acknowledged from the server's RAM) is read with a MODE SENSE of storbench's own
(:mod:`storbench.storage.scsi`) and kept in the description (``write_cache=on``), where the
``lun-write-cache`` finding reads it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from storbench.errors import TargetError
from storbench.model import Target

from .base import Options, Placement, ResolveContext, TargetKind, check_uri_text, external_engine, refuse_unnamed_writes

if TYPE_CHECKING:
    from storbench.storage import StorageInfo

ISCSI_PREFIX = "iscsi://"
DEFAULT_PORT = 3260
#: qemu-img's login, INQUIRY and READ CAPACITY (or its first MiB) take well under a second on loopback
PROBE_TIMEOUT_S = 30.0
#: what the guard reads of a LUN to tell what it holds
PROBE_BYTES = 1 << 20
_URI_RE = re.compile(
    r"^iscsi://(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::(?P<port>\d{1,5}))?"
    r"/(?P<iqn>(?:iqn|eui|naa)\.[A-Za-z0-9.:_-]+)/(?P<lun>\d{1,5})(?:\?client=(?P<client>[A-Za-z0-9-]*))?$"
)
#: who speaks iSCSI for fio: qemu-nbd (the default, a bridge) or fio's own libiscsi engine
CLIENTS = ("qemu-nbd", "fio")
#: the bridge's words in the storage description
BRIDGE_NOTE = "reached through qemu-nbd, a userspace bridge from NBD to iSCSI (libiscsi): one more hop and one more process on this machine's CPUs"
#: fio's own client's words
ENGINE_NOTE = "reached by fio's own libiscsi engine (built from this fio's Debian source, loaded as an external engine): no bridge"


def check_iscsi_uri(spec: str) -> tuple[str, int, str, int]:
    """(host, port, IQN, LUN) of ``spec``; one-line TargetError naming the form otherwise."""
    check_uri_text("iSCSI URI", spec)
    m = _URI_RE.match(spec)
    if m is None:
        raise TargetError(
            f"iSCSI URI {spec!r} is not iscsi://HOST[:PORT]/IQN/LUN[?client=fio] (e.g. iscsi://192.0.2.7/iqn.2024-01.lab.example:disk1/1)"
        )
    port = int(m.group("port") or DEFAULT_PORT)
    if not 1 <= port <= 65535:
        raise TargetError(f"iSCSI URI {spec!r} has an invalid port (a number from 1 to 65535)")
    client = m.group("client")
    if client is not None and client not in CLIENTS:
        raise TargetError(f"iSCSI URI {spec!r}: client={client!r} is not one of {', '.join(CLIENTS)}")
    return m.group("host"), port, m.group("iqn"), int(m.group("lun"))


def iscsi_client(spec: str) -> str:
    """Who reaches the LUN of a checked URI: ``qemu-nbd`` unless it ends with ``?client=fio``."""
    m = _URI_RE.match(spec)
    return (m.group("client") if m else None) or "qemu-nbd"


def lun_uri(spec: str) -> str:
    """The LUN's own URI: ``spec`` without storbench's ``?client=`` (what qemu and libiscsi read)."""
    return spec.split("?", 1)[0]


def bridge_dir(target_uri: str) -> str:
    """The bridge's directory for ``target_uri`` in this process (targets/bridge.py)."""
    from .bridge import bridge_dir as shared

    return shared("iscsi", target_uri)


def bridge_socket(target_uri: str) -> str:
    from .bridge import bridge_socket as shared

    return shared("iscsi", target_uri)


def _missing(program: str, package: str) -> TargetError:
    return TargetError(f"iSCSI targets need {program} (Debian package {package}: apt-get install {package}, or make install)")


def _qemu(argv: Sequence[str], what: str, spec: str) -> str:
    from storbench.process import proc

    try:
        done = proc.run(argv, timeout_s=PROBE_TIMEOUT_S)
    except FileNotFoundError:
        raise _missing(argv[0], "qemu-utils") from None
    except subprocess.TimeoutExpired:
        raise TargetError(f"cannot reach iSCSI LUN {spec!r}: {what} did not answer in {PROBE_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        last = proc.last_line(done.stderr) or proc.last_line(done.stdout) or f"exit status {done.returncode}"
        if "Unknown protocol 'iscsi'" in last or "Unknown driver 'iscsi'" in last:
            raise _missing("qemu's iscsi driver", "qemu-block-extra")
        raise TargetError(f"cannot reach iSCSI LUN {spec!r}: {last}")
    return done.stdout


def lun_size(spec: str) -> int:
    """The LUN's size in bytes (``qemu-img info``: a login and READ CAPACITY)."""
    out = _qemu(["qemu-img", "info", "--output=json", "-f", "raw", spec], "qemu-img info", spec)
    try:
        return int(json.loads(out)["virtual-size"])
    except (ValueError, KeyError, TypeError):
        raise TargetError(f"cannot read the size of iSCSI LUN {spec!r}: qemu-img info said {out[:80]!r}") from None


def lun_signatures(spec: str) -> tuple[str, ...]:
    """What the LUN's first MiB holds (a partition table, a filesystem), as wipefs names it."""
    from storbench.process import proc

    from .guard import parse_wipefs_json

    with tempfile.TemporaryDirectory(prefix=f"storbench-fio-{os.getpid()}-probe-") as tmp:
        head = os.path.join(tmp, "head.img")
        _qemu(["qemu-img", "dd", "-f", "raw", "-O", "raw", "bs=65536", f"count={PROBE_BYTES // 65536}", f"if={spec}", f"of={head}"],
              "qemu-img dd", spec)  # fmt: skip
        try:
            done = proc.run(["wipefs", "--no-act", "--json", head], timeout_s=PROBE_TIMEOUT_S)
        except (FileNotFoundError, subprocess.TimeoutExpired):
            return ()
        return parse_wipefs_json(done.stdout) if done.returncode == 0 else ()


class IscsiKind(TargetKind):
    name = "iscsi"
    prefixes: tuple[str, ...] = (ISCSI_PREFIX,)
    engine = "nbd"
    own_options = frozenset({"uri"})
    local_path = False
    noun = "an iSCSI LUN"

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        check_iscsi_uri(spec)
        client = iscsi_client(spec)
        engine = None
        if client == "fio":
            engine = external_engine("libiscsi")
            if engine is None:
                raise TargetError(
                    f"iSCSI URI {spec!r} asks for fio's own libiscsi engine, which is not built here "
                    f"(make install builds it, or: bash tools/fio-engines.sh DIR and STORBENCH_FIO_ENGINES=DIR); "
                    "without ?client=fio the LUN is reached through qemu-nbd"
                )
        needs = (("qemu-img", "qemu-utils"),) + ((("qemu-nbd", "qemu-utils"),) if client == "qemu-nbd" else ())
        for program, package in needs:
            if shutil.which(program) is None:
                raise _missing(program, package)
        lun = lun_uri(spec)
        lun_size(lun)  # reachable, logged in, a LUN
        from storbench.targets.guard import workload_writes

        if any(workload_writes(w.options) for w in ctx.workloads) and spec not in ctx.destroy:
            held = lun_signatures(lun)
            harm = f"destroying what it holds ({', '.join(held)})" if held else "destroying what it holds"
            refuse_unnamed_writes(spec, ctx, f"iSCSI LUN {spec!r}", harm)
        return Target(kind="iscsi" if engine is None else "iscsi-fio", path=spec)

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        return Placement(options=(("uri", f"nbd+unix:///?socket={bridge_socket(target.path)}"),),
                         notes=(f"{target.path} through qemu-nbd (a userspace bridge) on {bridge_socket(target.path)}",))  # fmt: skip

    def server(self, target: Target) -> tuple[str, str, int] | None:
        host, port, _, _ = check_iscsi_uri(target.path)
        return "the iSCSI target", host, port

    def describe_path(self, target: Target) -> str | None:
        return None

    def describe(self, target: Target, fio_version: str | None) -> StorageInfo | None:
        """The host; the LUN as the bridge serves it (``nbdinfo``) with its write cache (MODE SENSE
        of its caching page, :func:`storbench.storage.scsi.iscsi_write_cache`); the bridge itself."""
        from storbench.storage import StorageInfo, describe_host
        from storbench.storage.network import ExportInfo, parse_nbdinfo_json
        from storbench.storage.scsi import iscsi_write_cache

        from .nbd import nbdinfo

        host_name, port, iqn, lun = check_iscsi_uri(target.path)
        bridged = target.kind == "iscsi"
        notes: list[str] = [BRIDGE_NOTE if bridged else ENGINE_NOTE]
        host = describe_host(fio_version, notes=notes)
        served = None
        size = None
        if bridged:
            rc, out, _err = nbdinfo(f"nbd+unix:///?socket={bridge_socket(target.path)}")
            if rc == 0:
                try:
                    served = parse_nbdinfo_json(out, target.path)
                except ValueError as exc:
                    notes.append(f"the bridge's answer for {target.path} not understood: {exc}")
        else:
            with contextlib.suppress(TargetError):
                size = lun_size(lun_uri(target.path))
        page, why = iscsi_write_cache(f"{host_name}:{port}", iqn, lun)
        if page is None:
            notes.append(f"the LUN's write cache (WCE) could not be read: {why}")
        cache = "unknown" if page is None else ("on" if page.write_cache else "off")
        from storbench.storage.tgt import backing_store

        stored, how = backing_store(host_name, port, iqn, lun)  # the server's own word, where it runs beside storbench
        notes.append(how)
        backing = (f"backing_store={stored.backing_type or '?'}:{stored.backing_path or 'none'}",
                   f"backing_flags={stored.backing_flags or 'none'}") if stored is not None else ()  # fmt: skip
        export = ExportInfo(
            protocol="iscsi", uri=target.path, server=f"{host_name}:{port}", export=f"{iqn}/{lun}",
            size_bytes=served.size_bytes if served else size, read_only=served.read_only if served else None,
            details=(f"write_cache={cache}", "client=qemu-nbd bridge" if bridged else "client=fio libiscsi engine",
                     *backing, *(served.details if served else ())),
        )  # fmt: skip
        if stored is not None and stored.backing_path and os.path.exists(stored.backing_path):
            from storbench.storage import describe_target
            from storbench.storage.records import with_server_side

            # what holds the LUN on the server (a file on a ZFS dataset, a zvol): its ARC can answer reads
            export = with_server_side(export, describe_target(stored.backing_path, fio_version=fio_version), stored.backing_path)
        return StorageInfo(target=target.path, target_kind="iscsi", filesystem=None, devices=(), host=host,
                           notes=tuple(notes), export=export)  # fmt: skip

    def space_paths(self, target: Target, test_files: Sequence[str]) -> tuple[list[str], str] | None:
        return None

    @contextlib.contextmanager
    def serve(self, target: Target, size_bytes: int | None = None) -> Iterator[None]:
        """qemu-nbd serving the LUN on :func:`bridge_socket` while the run lasts (targets/bridge.py)."""
        from .bridge import qemu_nbd_bridge

        with qemu_nbd_bridge("iscsi", target.path, lun_uri(target.path), f"iSCSI LUN {target.path!r}"):
            yield


class IscsiFioKind(IscsiKind):
    """``iscsi://...?client=fio``: fio's own libiscsi engine logs in to the LUN itself (no bridge,
    no process beside fio); found by :class:`IscsiKind`'s resolve, never by a prefix of its own."""

    name = "iscsi-fio"
    prefixes = ()
    own_options = frozenset()

    @property
    def engine(self) -> str:  # type: ignore[override]  # the base's class attribute; found when asked (STORBENCH_FIO_ENGINES as it is then)
        return f"external:{external_engine('libiscsi') or 'fio-libiscsi.so'}"

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        # fio splits filename= at ':', so the URI's own colons are escaped (../shared/NFS-ISCSI.md, trap 10)
        return Placement(options=(("filename", lun_uri(target.path).replace(":", "\\:")),),
                         notes=(f"{lun_uri(target.path)} through fio's own libiscsi engine",))  # fmt: skip

    @contextlib.contextmanager
    def serve(self, target: Target, size_bytes: int | None = None) -> Iterator[None]:
        yield  # fio logs in itself: nothing runs beside it


ISCSI = IscsiKind()
ISCSI_FIO = IscsiFioKind()
