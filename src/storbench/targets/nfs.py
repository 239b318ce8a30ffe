"""NFS exports, reached without a kernel NFS client: through qemu-nbd, a userspace bridge.

``--target nfs://HOST/EXPORT/`` (a directory of an export, ending in ``/``): storbench creates
its test file there, ``storbench.testfile`` (``qemu-img create``, qemu's libnfs driver, Debian's
``qemu-block-extra``), serves it for the run with ``qemu-nbd -f raw nfs://...`` on a unix socket
in a directory of its own (``$TMPDIR/storbench-fio-<pid>-nfs-<hash>``), lets fio reach it with
its nbd engine, and afterwards stops the bridge by its PID and removes the test file over NFS
(libnfs through ctypes, :class:`NfsClient`).  Like a local directory target, writes go to
storbench's own file only, so they need no ``--destroy-data``; an existing file is never a
target (yet): a URI not ending in ``/`` is refused in one line.

qemu's nfs driver speaks NFSv3 and finds the server's ports through its portmapper
(../shared/NFS-ISCSI.md, trap 9): a port or ``?version=4`` in the URI is refused in one line.
It sends its WRITEs UNSTABLE and a COMMIT only when fio syncs (``fsync``, ``end_fsync``), so
unsynced write figures measure the server's cache: the ``share-write-ack`` finding says so.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import re
import shutil
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from storbench.errors import TargetError
from storbench.model import Target

from .base import Options, Placement, ResolveContext, TargetKind, check_uri_text

if TYPE_CHECKING:
    from storbench.storage import StorageInfo

NFS_PREFIX = "nfs://"
TEST_FILE = "storbench.testfile"
TIMEOUT_S = 30.0
_URI_RE = re.compile(
    r"^nfs://(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?P<port>:\d*)?"
    r"(?P<path>/[A-Za-z0-9._/-]*)(?P<query>\?.*)?$"
)
BRIDGE_NOTE = ("reached through qemu-nbd, a userspace bridge from NBD to NFSv3 (libnfs): one more hop and one more "
               "process on this machine's CPUs; its WRITEs are UNSTABLE, committed when fio syncs")  # fmt: skip


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
        raise TargetError(f"NFS URI {spec!r} has options ({m.group('query')}): storbench reaches NFS through qemu's "
                          "nfs driver, NFSv3 only (fio's own nfs engine, for v4, is not built yet); give nfs://HOST/EXPORT/")  # fmt: skip
    path = m.group("path")
    if not path.endswith("/") or path == "/":
        raise TargetError(f"NFS URI {spec!r} is not a directory of an export: give nfs://HOST/EXPORT/ ending in '/' "
                          f"(storbench creates its test file {TEST_FILE} there; an existing file is not a target yet)")  # fmt: skip
    return m.group("host"), path


def test_file_uri(target_uri: str) -> str:
    return target_uri + TEST_FILE


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
        st = _Stat()
        return int(st.size) if self.lib.nfs_stat64(self.ctx, self.file, ctypes.byref(st)) == 0 else None

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
    prefixes = (NFS_PREFIX,)
    engine = "nbd"
    own_options = frozenset({"uri"})
    needs_size = True
    local_path = False
    noun = "a directory of an NFS export"

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        check_nfs_uri(spec)
        for program, package in (("qemu-img", "qemu-utils"), ("qemu-nbd", "qemu-utils")):
            if shutil.which(program) is None:
                raise TargetError(f"NFS targets need {program} (Debian package {package}: apt-get install {package}, or make install)")
        with nfs_file(test_file_uri(spec)):  # the export answers and mounts
            pass
        return Target(kind="nfs", path=spec)

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        return Placement(options=(("uri", f"nbd+unix:///?socket={bridge_socket(target.path)}"),),
                         notes=(f"{test_file_uri(target.path)} through qemu-nbd (a userspace bridge) on {bridge_socket(target.path)}",))  # fmt: skip

    def describe_path(self, target: Target) -> str | None:
        return None

    def describe(self, target: Target, fio_version: str | None) -> StorageInfo | None:
        from storbench.storage import StorageInfo, describe_host
        from storbench.storage.network import ExportInfo

        host_name, path = check_nfs_uri(target.path)
        notes: list[str] = [BRIDGE_NOTE]
        host = describe_host(fio_version, notes=notes)
        size = None
        with contextlib.suppress(TargetError), nfs_file(test_file_uri(target.path)) as client:
            size = client.size()
        export = ExportInfo(protocol="nfs", uri=target.path, server=host_name, export=path, size_bytes=size,
                            details=("version=3", "client=qemu-nbd bridge (libnfs)", "writes=unstable until a commit"))  # fmt: skip
        return StorageInfo(target=target.path, target_kind="nfs", filesystem=None, devices=(), host=host,
                           notes=tuple(notes), export=export)  # fmt: skip

    def space_paths(self, target: Target, test_files: Sequence[str]) -> tuple[list[str], str] | None:
        return None

    @contextlib.contextmanager
    def serve(self, target: Target, size_bytes: int | None = None) -> Iterator[None]:
        """storbench's test file made (``size_bytes``), qemu-nbd serving it while the run lasts
        (targets/bridge.py), then the test file removed over NFS."""
        from storbench.process import proc

        from .bridge import qemu_nbd_bridge

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
            with qemu_nbd_bridge("nfs", target.path, file_uri, file_uri):
                yield
        finally:
            if made:
                with contextlib.suppress(TargetError), nfs_file(file_uri) as client:
                    client.unlink()


NFS = NfsKind()
