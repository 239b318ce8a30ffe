"""Path targets on a local (or mounted) filesystem: a directory or an existing regular file.

``dir``: storbench creates one test file inside (``storbench.testfile``), shared by every
workload of the run, and removes it afterwards; a job there always has a size.  ``file``:
an existing regular file, used as is and never deleted (fio uses its size, or extends it
to the workload's).  A network share mounted on the machine (NFS, SMB, sshfs, GlusterFS
FUSE) is a directory target too; its protocol is in the storage description.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Sequence

from storbench.errors import TargetError
from storbench.model import Target

from .base import Options, Placement, ResolveContext, TargetKind, fio_filename

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


class FileKind(TargetKind):
    name = "file"
    noun = "a file"

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        real = os.path.realpath(spec)
        if not os.access(real, os.R_OK | os.W_OK):
            raise TargetError(f"target {spec!r} is a file that is not readable and writable by this user")
        return Target(kind="file", path=os.path.abspath(spec))


DIR = DirKind()
FILE = FileKind()
