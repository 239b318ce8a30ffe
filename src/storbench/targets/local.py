"""Path targets on a local (or mounted) filesystem: a directory or an existing regular file.

``dir``: storbench creates one test file inside (``storbench.testfile``), shared by every
workload of the run, and removes it afterwards; a job there always has a size.  ``file``:
an existing regular file, used as it is: never deleted, never grown, never laid out.  Its
size bounds every workload (a workload naming more, or none, gets the file's size, said in
the job's header); any workload that writes (and ``--prefill``/``--precondition``) needs
``--destroy-data FILE``, spelled as ``--target``, exactly as a block device does; an empty
file and a file on a pseudo filesystem (``/proc``, ``/sys``, ...) are refused.  A network
share mounted on the machine (NFS, SMB, sshfs, GlusterFS FUSE) is a directory target too;
its protocol is in the storage description.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Sequence

from storbench.errors import TargetError
from storbench.model import Target

from .base import (
    Options,
    Placement,
    ResolveContext,
    TargetKind,
    capped_size,
    fio_filename,
    is_existing_file,
    refuse_unnamed_writes,
)

_TEST_FILE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def read_only_fs(path: str) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


class DirKind(TargetKind):
    name = "dir"
    needs_size = True
    noun = "a directory"

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        real = os.path.realpath(spec)
        if not os.access(real, os.W_OK | os.X_OK):
            if read_only_fs(real):
                raise TargetError(
                    f"target {spec!r} is not writable: its filesystem is mounted read-only, and storbench must "
                    "create its test file there (remount it read-write or give another --target)"
                )
            raise TargetError(f"target {spec!r} is a directory that is not writable by this user")
        return Target(kind="dir", path=os.path.abspath(spec))

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        if not _TEST_FILE_RE.match(test_file_name):
            raise ValueError(f"invalid test file name {test_file_name!r}")
        path = posixpath.join(target.path, test_file_name)
        return Placement(options=(("filename", fio_filename(path)),), test_files=(path,))

    def space_paths(self, target: Target, test_files: Sequence[str]) -> tuple[list[str], str] | None:
        return (list(test_files), target.path)


#: filesystems whose "files" are the kernel's interfaces, not storage (fio would lay them out or unlink them)
PSEUDO_FILESYSTEMS = frozenset({
    "proc", "sysfs", "debugfs", "tracefs", "securityfs", "cgroup", "cgroup2", "configfs", "devpts", "efivarfs",
    "bpf", "pstore", "fusectl", "mqueue", "binfmt_misc", "autofs", "rpc_pipefs", "nsfs", "selinuxfs", "hugetlbfs",
})


def pseudo_filesystem(real: str) -> str | None:
    """The pseudo filesystem ``real`` lies on (``proc``, ``sysfs``, ...), else None (edge: reads the mount table)."""
    from storbench.storage.mounts import mount_for_path, parse_mountinfo

    if real == "/proc" or real.startswith(("/proc/", "/sys/")):
        return "proc" if real.startswith("/proc") else "sysfs"
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            entry = mount_for_path(parse_mountinfo(fh.read()), real)
    except OSError:
        return None
    return entry.fstype if entry is not None and entry.fstype in PSEUDO_FILESYSTEMS else None


class FileKind(TargetKind):
    """An existing regular file: read as it is; written only when named with ``--destroy-data``."""

    name = "file"
    noun = "a file"

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        real = os.path.realpath(spec)
        pseudo = pseudo_filesystem(real)
        if pseudo is not None:
            raise TargetError(
                f"target {spec!r} is on {pseudo}, a kernel interface, not storage: give a directory, "
                "a regular file on a real filesystem or a block device"
            )
        writing = refuse_unnamed_writes(spec, ctx, f"file {spec!r}", harm="overwriting what it holds")
        if not os.access(real, os.R_OK):
            raise TargetError(f"target {spec!r} is a file that is not readable by this user")
        if writing and not os.access(real, os.W_OK):
            if read_only_fs(real):
                raise TargetError(f"target {spec!r} is on a filesystem mounted read-only: workload {writing[0]} writes to it")
            raise TargetError(f"target {spec!r} is a file that is not writable by this user: workload {writing[0]} writes to it")
        size = os.stat(real).st_size
        if size <= 0:
            raise TargetError(
                f"target {spec!r} is an empty file: there is nothing to read, and storbench never grows a file "
                "target (give a directory: storbench makes its own test file there)"
            )
        return Target(kind="file", path=os.path.abspath(spec), params=(("size", str(size)),))

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        size = target.param("size")
        notes = capped_size(options, size, "the file's") if size is not None else []
        return Placement(options=(("filename", fio_filename(target.path)),), notes=tuple(notes))


def check_requested_size(target: Target, requested: str | None) -> None:
    """``--size`` asking more of a file target than the file holds: one-line TargetError (storbench never
    grows a file target; the workloads' own sizes are capped at the file's instead)."""
    from storbench.units import parse_size

    size = target.param("size")
    if not is_existing_file(target) or requested is None or size is None or requested.endswith("%"):
        return
    if parse_size(requested) > int(size):
        from storbench.units import format_bytes

        raise TargetError(
            f"target {target.path!r} is a file of {format_bytes(int(size))} ({size} bytes): --size {requested} asks for more, "
            f"and storbench never grows or rewrites a file target; give --size {size} or less, or a directory"
        )


DIR = DirKind()
FILE = FileKind()
