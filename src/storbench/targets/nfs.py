"""NFS exports, reached without a kernel NFS client: through qemu-nbd, a userspace bridge.

``--target nfs://HOST/EXPORT/`` (a directory of an export, ending in ``/``): storbench creates
its test file there, ``storbench.testfile`` (``qemu-img create``, qemu's libnfs driver, Debian's
``qemu-block-extra``), serves it for the run with ``qemu-nbd -f raw nfs://...`` on a unix socket
in a directory of its own (``$TMPDIR/storbench-fio-<pid>-nfs-<hash>``), lets fio reach it with
its nbd engine, and afterwards stops the bridge by its PID and removes the test file over NFS
(libnfs through ctypes, :class:`NfsClient`).  Like a local directory target, writes go to
storbench's own file only, so they need no ``--destroy-data``.

``--target nfs://HOST/EXPORT/PATH/FILE`` (no ``/`` at the end): an existing file of the export
(a VM image on a filer), through either client, as a local file target is: read as it is, its
size caps every workload (said once), never grown, never made or removed; a workload that writes,
``--prefill`` and ``--precondition`` need ``--destroy-data`` naming the URI exactly, and without
them the bridge serves it read-only (``qemu-nbd --read-only``).

qemu's nfs driver speaks NFSv3 and finds the server's ports through its portmapper
(../shared/NFS-ISCSI.md, trap 9): a port in the URI is refused in one line.
It sends its WRITEs UNSTABLE and a COMMIT only when fio syncs (``fsync``, ``end_fsync``), so
unsynced write figures measure the server's cache: the ``share-write-ack`` finding says so.

``nfs://HOST/EXPORT/?client=fio`` takes fio's own nfs engine instead (libnfs, built by ``make
install`` as an external engine: tools/fio-engines.sh): no bridge, the test file made and removed
as above, fio reading and writing it itself (``nfs_url=``, ``filename=storbench.testfile``).  That
engine cannot sync (trap 8: "unhandled io 3"), so a workload with ``fsync`` or ``fdatasync`` is
refused in one line, and ``end_fsync``/``fsync_on_close`` are dropped from its job with a note; ``&version=4`` speaks NFSv4, whose
WRITEs libnfs 4.0 cannot encode (trap 6): reads only, writes refused in one line.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import re
import shutil
import stat
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from storbench.errors import TargetError
from storbench.model import Target

from .base import (
    EXISTING_FILE,
    Options,
    Placement,
    ResolveContext,
    TargetKind,
    capped_size,
    check_uri_text,
    external_engine,
    refuse_unnamed_writes,
)

if TYPE_CHECKING:
    from storbench.storage import StorageInfo

NFS_PREFIX = "nfs://"
TEST_FILE = "storbench.testfile"
TIMEOUT_S = 30.0
#: the port NFS servers serve on (RFC 7530; what NFSv3 servers register with their portmapper)
NFS_PORT = 2049
_URI_RE = re.compile(
    r"^nfs://(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?P<port>:\d*)?"
    r"(?P<path>/[A-Za-z0-9._/-]*)(?P<query>\?.*)?$"
)
BRIDGE_NOTE = ("reached through qemu-nbd, a userspace bridge from NBD to NFSv3 (libnfs): one more hop and one more "
               "process on this machine's CPUs; its WRITEs are UNSTABLE, committed when fio syncs")  # fmt: skip


#: who speaks NFS for fio: qemu-nbd (the default, a bridge) or fio's own nfs engine
CLIENTS = ("qemu-nbd", "fio")
ENGINE_NOTE = "reached by fio's own nfs engine (libnfs; built from this fio's Debian source, loaded as an external engine): no bridge"
#: what fio's nfs engine cannot do: sync (it answers "nfs: unhandled io 3"); a sync after every
#: N writes changes what a workload measures (refused), one at its end is dropped with a note
SYNC_OPTIONS = ("fsync", "fdatasync")
FINAL_SYNCS = ("end_fsync", "fsync_on_close")


def _query(spec: str) -> dict[str, str]:
    m = _URI_RE.match(spec)
    text = (m.group("query") or "")[1:] if m else ""
    return dict(part.partition("=")[::2] for part in text.split("&") if part)


def nfs_client(spec: str) -> str:
    """Who reaches the export of a checked URI: ``qemu-nbd`` unless it says ``client=fio``."""
    return _query(spec).get("client") or "qemu-nbd"


def nfs_version(spec: str) -> int:
    return int(_query(spec).get("version") or 3)


def export_uri(spec: str) -> str:
    """The directory's own URI: ``spec`` without storbench's ``?client=...`` options."""
    return spec.split("?", 1)[0]


def check_nfs_uri(spec: str) -> tuple[str, str]:
    """(host, directory path ending in ``/``) of ``spec``; a one-line TargetError naming the form otherwise."""
    check_uri_text("NFS URI", spec)
    m = _URI_RE.match(spec)
    if m is None:
        raise TargetError(f"NFS URI {spec!r} is not nfs://HOST/EXPORT/ (e.g. nfs://nas.lan/export/bench/)")
    if m.group("port"):
        raise TargetError(f"NFS URI {spec!r} names a port: qemu's nfs driver finds the server's ports through its "
                          "portmapper (NFSv3); give nfs://HOST/EXPORT/")  # fmt: skip
    if m.group("query"):
        options = _query(spec)
        allowed = {"client": CLIENTS, "version": ("3", "4")}
        for key, value in options.items():
            if key not in allowed or value not in allowed[key]:
                raise TargetError(f"NFS URI {spec!r}: {key}={value!r} is not an option storbench knows "
                                  "(client=fio or client=qemu-nbd; with client=fio, version=3 or 4)")  # fmt: skip
        if options.get("version") == "4" and options.get("client") != "fio":
            raise TargetError(f"NFS URI {spec!r}: NFSv4 needs client=fio (qemu's nfs driver speaks NFSv3 only)")
    path = m.group("path")
    if path == "/" or "//" in path or (not path.endswith("/") and path.count("/") < 2):
        raise TargetError(f"NFS URI {spec!r} names no export: give nfs://HOST/EXPORT/ ending in '/' (storbench creates its test "
                          f"file {TEST_FILE} there) or nfs://HOST/EXPORT/PATH/FILE (an existing file, read as it is)")  # fmt: skip
    return m.group("host"), path


def names_file(spec: str) -> bool:
    """Whether an NFS URI names a file of the export (no ``/`` at its end), not a directory."""
    return not export_uri(spec).endswith("/")


def test_file_uri(target_uri: str) -> str:
    """The file the workloads use: storbench's test file in a directory target, or the file itself."""
    return export_uri(target_uri) if names_file(target_uri) else export_uri(target_uri) + TEST_FILE


def bridge_socket(target_uri: str) -> str:
    from .bridge import bridge_socket as shared

    return shared("nfs", target_uri)


class _Url(ctypes.Structure):  # libnfs's struct nfs_url
    _fields_ = [("server", ctypes.c_char_p), ("path", ctypes.c_char_p), ("file", ctypes.c_char_p)]


class _Stat(ctypes.Structure):  # libnfs's struct nfs_stat_64: every field a uint64
    _fields_ = [(n, ctypes.c_uint64) for n in ("dev", "ino", "mode", "nlink", "uid", "gid", "rdev", "size", "blksize", "blocks",
                                               "atime", "mtime", "ctime", "atime_nsec", "mtime_nsec", "ctime_nsec", "used")]  # fmt: skip


class NfsClient:
    """A file of an NFS export, through libnfs (Debian's ``libnfs13``, which qemu's nfs driver
    needs too) and ctypes: mounted over the network in user space, stat'ed and unlinked."""

    def __init__(self, file_uri: str) -> None:
        name = ctypes.util.find_library("nfs") or "libnfs.so.13"
        try:
            self.lib = ctypes.CDLL(name)
        except OSError:
            raise TargetError("NFS targets need libnfs (Debian package libnfs13: apt-get install qemu-block-extra)") from None
        lib = self.lib
        lib.nfs_init_context.restype = ctypes.c_void_p
        lib.nfs_parse_url_full.restype = ctypes.POINTER(_Url)
        lib.nfs_get_error.restype = ctypes.c_char_p
        self.ctx: ctypes.c_void_p | None = ctypes.c_void_p(lib.nfs_init_context())
        lib.nfs_set_timeout(self.ctx, int(TIMEOUT_S * 1000))
        self.url = lib.nfs_parse_url_full(self.ctx, file_uri.encode())
        if not self.url:
            self.close()
            raise TargetError(f"NFS URI {file_uri!r} not understood by libnfs: {self.error()}")
        self.file = self.url.contents.file
        if lib.nfs_mount(self.ctx, self.url.contents.server, self.url.contents.path) != 0:
            why = self.error()
            self.close()
            raise TargetError(f"cannot mount NFS export {file_uri.rsplit('/', 1)[0] + '/'!r}: {why}")

    def error(self) -> str:
        return (self.lib.nfs_get_error(self.ctx) or b"").decode(errors="replace")

    def size(self) -> int | None:
        """The file's size in bytes; None when it does not exist."""
        found = self.stat()
        return found[0] if found is not None else None

    def stat(self) -> tuple[int, int] | None:
        """(size in bytes, mode) of the file; None when it does not exist."""
        st = _Stat()
        return (int(st.size), int(st.mode)) if self.lib.nfs_stat64(self.ctx, self.file, ctypes.byref(st)) == 0 else None

    def unlink(self) -> bool:
        return bool(self.lib.nfs_unlink(self.ctx, self.file) == 0)

    def close(self) -> None:
        if getattr(self, "url", None):
            self.lib.nfs_destroy_url(self.url)
            self.url = None
        if self.ctx is not None:
            self.lib.nfs_destroy_context(self.ctx)
            self.ctx = None


@contextlib.contextmanager
def nfs_file(file_uri: str) -> Iterator[NfsClient]:
    client = NfsClient(file_uri)
    try:
        yield client
    finally:
        client.close()


class NfsKind(TargetKind):
    name = "nfs"
    prefixes: tuple[str, ...] = (NFS_PREFIX,)
    engine = "nbd"
    own_options = frozenset({"uri"})
    needs_size = True
    local_path = False
    noun = "a directory or an existing file of an NFS export"

    def server(self, target: Target) -> tuple[str, str, int] | None:
        """The NFS server's own port (2049: the one NFSv3 servers register and NFSv4 uses); a
        server elsewhere is never judged (it must have answered there in this run)."""
        host, _ = check_nfs_uri(target.path)
        return "the NFS server", host, NFS_PORT

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        check_nfs_uri(spec)
        own = nfs_client(spec) == "fio"
        if own:
            _check_engine_can_run(spec, ctx)
        if names_file(spec):
            needs: tuple[str, ...] = () if own else ("qemu-nbd",)
        else:
            needs = ("qemu-img",) if own else ("qemu-img", "qemu-nbd")  # qemu-img makes the test file in both
        for program in needs:
            if shutil.which(program) is None:
                raise TargetError(f"NFS targets need {program} (Debian package qemu-utils: apt-get install qemu-utils, or make install)")
        kind = "nfs-fio" if own else "nfs"
        if names_file(spec):
            return _existing_file(spec, kind, ctx)
        with nfs_file(test_file_uri(spec)):  # the export answers and mounts
            pass
        return Target(kind=kind, path=spec)

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        capped = capped_size(options, target.param("size"), "the file's") if names_file(target.path) else []
        return Placement(options=(("uri", f"nbd+unix:///?socket={bridge_socket(target.path)}"),),
                         notes=(f"{test_file_uri(target.path)} through qemu-nbd (a userspace bridge) on {bridge_socket(target.path)}",
                                *capped))  # fmt: skip

    def describe_path(self, target: Target) -> str | None:
        return None

    def describe(self, target: Target, fio_version: str | None) -> StorageInfo | None:
        from storbench.storage import StorageInfo, describe_host
        from storbench.storage.network import ExportInfo

        host_name, path = check_nfs_uri(target.path)
        bridged = target.kind == "nfs"
        notes: list[str] = [BRIDGE_NOTE if bridged else ENGINE_NOTE]
        host = describe_host(fio_version, notes=notes)
        size = None
        with contextlib.suppress(TargetError), nfs_file(test_file_uri(target.path)) as client:
            size = client.size()
        details: tuple[str, ...] = (("version=3", "client=qemu-nbd bridge (libnfs)", "writes=unstable until a commit") if bridged else
                   (f"version={nfs_version(target.path)}", "client=fio nfs engine (libnfs)", "writes=unstable, never committed"))  # fmt: skip
        from storbench.storage.ganesha import local_directory, local_export
        from storbench.storage.records import with_server_side

        served, how = local_export(path)  # the server's own word, where it runs beside storbench
        notes.append(how)
        commit = served.nfs_commit if served is not None else None
        details += ("server_commit=" + ("unknown" if commit is None else str(commit).lower()),)
        export = ExportInfo(protocol="nfs", uri=target.path, server=host_name, export=path, size_bytes=size, details=details)
        local = local_directory(served, path) if served is not None else None
        if local is not None and os.path.isdir(local):  # what holds the export on the server (a ZFS dataset's ARC)
            from storbench.storage import describe_target

            export = with_server_side(export, describe_target(local, fio_version=fio_version), local)
        return StorageInfo(target=target.path, target_kind="nfs", filesystem=None, devices=(), host=host,
                           notes=tuple(notes), export=export)  # fmt: skip

    def space_paths(self, target: Target, test_files: Sequence[str]) -> tuple[list[str], str] | None:
        return None

    @contextlib.contextmanager
    def serve(self, target: Target, size_bytes: int | None = None) -> Iterator[None]:
        """storbench's test file made (``size_bytes``), qemu-nbd serving it while the run lasts
        (targets/bridge.py), then the test file removed over NFS."""
        from .bridge import qemu_nbd_bridge

        if names_file(target.path):  # the user's file: served as it is, read-only unless named to be written
            file_uri = test_file_uri(target.path)
            with qemu_nbd_bridge("nfs", target.path, file_uri, file_uri, read_only=target.param("writes") != "1"):
                yield
            return
        with made_test_file(target, size_bytes) as file_uri, qemu_nbd_bridge("nfs", target.path, file_uri, file_uri):
            yield


@contextlib.contextmanager
def made_test_file(target: Target, size_bytes: int | None) -> Iterator[str]:
    """storbench's test file in the export's directory, ``size_bytes`` large (``qemu-img create``
    over NFS; fio's nfs engine writes at random offsets only into a file that exists), removed
    over NFS afterwards; yields its URI."""
    from storbench.process import proc

    file_uri = test_file_uri(target.path)
    made = False
    try:
        with nfs_file(file_uri) as client:
            have = client.size()
        if have is None or (size_bytes is not None and have < size_bytes):
            done = proc.run(["qemu-img", "create", "-f", "raw", file_uri, str(size_bytes or 1 << 30)], timeout_s=TIMEOUT_S)
            if done.returncode != 0:
                raise TargetError(f"cannot create {file_uri}: {proc.last_line(done.stderr) or proc.last_line(done.stdout)}")
        made = True
        yield file_uri
    finally:
        if made:
            with contextlib.suppress(TargetError), nfs_file(file_uri) as client:
                client.unlink()


def _existing_file(spec: str, kind: str, ctx: ResolveContext) -> Target:
    """An existing file of the export as a target (see the module's text): it must be a regular
    file with something in it; a workload that writes needs ``--destroy-data`` naming ``spec``."""
    file_uri = test_file_uri(spec)
    with nfs_file(file_uri) as client:
        found = client.stat()
    if found is None:
        raise TargetError(f"NFS URI {spec!r} names no file of the export: give an existing file, or a directory ending in '/' "
                          f"(storbench creates its test file {TEST_FILE} there)")  # fmt: skip
    size, mode = found
    if stat.S_ISDIR(mode):
        raise TargetError(f"NFS URI {spec!r} is a directory of the export: end it in '/' (storbench creates its test file {TEST_FILE} there)")
    if not stat.S_ISREG(mode):
        raise TargetError(f"NFS URI {spec!r} is not a regular file of the export: give a file, or a directory ending in '/'")
    if size <= 0:
        raise TargetError(f"NFS URI {spec!r} is an empty file: there is nothing to read, and storbench never grows a file "
                          "target (give a directory ending in '/': storbench makes its own test file there)")  # fmt: skip
    writing = refuse_unnamed_writes(spec, ctx, f"NFS file {spec!r}", harm="overwriting what it holds")
    return Target(kind=kind, path=spec, params=(("size", str(size)), (EXISTING_FILE, "1"), ("writes", "1" if writing else "0")))


def _check_engine_can_run(spec: str, ctx: ResolveContext) -> None:
    """``client=fio``: the engine is built, no workload needs a sync it cannot do, and an NFSv4
    target is only read (one line each)."""
    from storbench.targets.guard import workload_writes

    if external_engine("nfs") is None:
        raise TargetError(f"NFS URI {spec!r} asks for fio's own nfs engine, which is not built here (make install builds it, "
                          "or: bash tools/fio-engines.sh DIR and STORBENCH_FIO_ENGINES=DIR); without client=fio the export is "
                          "reached through qemu-nbd")  # fmt: skip
    for w in ctx.workloads:
        syncs = [k for k, v in w.options if k in SYNC_OPTIONS and v not in (None, "0")]
        if syncs:
            raise TargetError(f"workload {w.name!r} sets {syncs[0]}, but fio's nfs engine cannot sync (it answers 'unhandled io 3'); "
                              f"run it on {export_uri(spec)} without client=fio (the qemu-nbd bridge commits on a sync)")  # fmt: skip
        if nfs_version(spec) == 4 and workload_writes(w.options):
            raise TargetError(f"workload {w.name!r} writes, but libnfs 4.0's NFSv4 WRITEs fail ('Failed to encode COMPOUND4args'); "
                              "use version=3 for writes, version=4 for reads")  # fmt: skip


class NfsFioKind(NfsKind):
    """``nfs://HOST/EXPORT/?client=fio``: fio's own nfs engine reads and writes storbench's test
    file itself; found by :class:`NfsKind`'s resolve, never by a prefix of its own."""

    name = "nfs-fio"
    prefixes = ()
    own_options = frozenset({"nfs_url"})
    dropped_options = dict.fromkeys(FINAL_SYNCS, "fio's nfs engine cannot sync; the figures leave out a final flush")

    @property
    def engine(self) -> str:  # type: ignore[override]  # the base's class attribute; found when asked (STORBENCH_FIO_ENGINES as it is then)
        return f"external:{external_engine('nfs') or 'fio-nfs.so'}"

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        directory, _, name = export_uri(target.path).rpartition("/")
        if not names_file(target.path):
            directory, name = export_uri(target.path).rstrip("/"), TEST_FILE
        capped = capped_size(options, target.param("size"), "the file's") if names_file(target.path) else []
        url = directory + ("?version=4" if nfs_version(target.path) == 4 else "")
        return Placement(options=(("nfs_url", url), ("filename", name)),
                         notes=(f"{test_file_uri(target.path)} through fio's own nfs engine (NFSv{nfs_version(target.path)})", *capped))  # fmt: skip

    @contextlib.contextmanager
    def serve(self, target: Target, size_bytes: int | None = None) -> Iterator[None]:
        if names_file(target.path):  # the user's file: fio opens it as it is (its nfs engine never extends a file)
            yield
            return
        with made_test_file(target, size_bytes):
            yield  # fio mounts the export itself


NFS = NfsKind()
NFS_FIO = NfsFioKind()
