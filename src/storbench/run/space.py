"""The files and space around a run: a target's identity (unmounted or replaced while a run goes
on), the scratch directory, the test files' and the filesystem's space before and after each
workload (flushed where the filesystem counts late), free space checked before starting, and what
is removed afterwards (test files, the files fio's engines leave outside their job directory)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONObject

from ..errors import TargetError
from ..model import JobSpec, Target

if TYPE_CHECKING:
    from ..storage import StorageInfo


def target_identity(target: Target) -> tuple[int, int] | None:
    """(device, inode) of a directory or file target, None when it is gone.

    A target that is unmounted (even lazily), removed or replaced while a run goes
    on changes identity: its path then names something else.
    """
    if target.kind not in ("dir", "file"):
        return None
    try:
        st = os.stat(target.path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


@contextlib.contextmanager
def scratch_target(parent: str) -> Iterator[Target]:
    """A scratch directory on the disk that holds ``parent``, removed afterwards."""
    if not os.access(parent, os.W_OK):
        raise TargetError(
            f"cannot create a scratch directory in {parent!r} (not writable); give --target PATH"
        )
    # the PID in the name lets a later run remove it when this process was killed (store/owner.py)
    path = tempfile.mkdtemp(prefix=f".storbench-scratch-{os.getpid()}-", dir=parent)
    try:
        yield Target(kind="dir", path=path, scratch=True)
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _file_state(path: str) -> tuple[str, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (path, st.st_size, st.st_blocks * 512)


def _fs_used(path: str) -> int | None:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def _space_paths(spec: JobSpec) -> tuple[list[str], str] | None:
    from ..targets import kind_of

    return kind_of(spec.target).space_paths(spec.target, spec.test_files)


def _syncfs(path: str) -> None:
    """Flush the filesystem holding ``path`` so its used-space figure is final
    (btrfs counts space only when it commits a transaction)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        if libc.syncfs(fd) != 0:
            os.sync()
    except (OSError, AttributeError):
        os.sync()
    finally:
        os.close(fd)


#: filesystems whose used space (statvfs) and file blocks (st_blocks) count what was written the
#: moment it is written, delayed allocations included: read after a workload without a flush
#: (btrfs and ZFS count space when they commit a transaction; a share, when its server does)
ACCOUNTS_AT_WRITE = frozenset({"ext2", "ext3", "ext4", "xfs", "tmpfs", "ramfs"})


def needs_flush(storage: StorageInfo | None) -> bool:
    """Whether the used space under ``storage`` is final only after a flush (see :data:`ACCOUNTS_AT_WRITE`)."""
    fs = storage.filesystem if storage is not None else None
    return fs is None or fs.fstype not in ACCOUNTS_AT_WRITE


def measure_space(spec: JobSpec, *, flush: bool = False) -> JSONObject:
    paths = _space_paths(spec)
    if paths is None:  # a block device, a remote export: no local filesystem to measure
        return {"files": [], "fs_used": None}
    files, where = paths
    if flush:
        _syncfs(where)
    return {
        "files": [s for s in (_file_state(p) for p in files) if s is not None],
        "fs_used": _fs_used(where),
    }


def check_free_space(specs: Sequence[JobSpec]) -> None:
    """Refuse before starting when a target's filesystem cannot hold the test file."""
    from ..units import parse_size

    need: dict[str, int] = {}
    where: dict[str, str] = {}
    for spec in specs:
        if spec.target.kind != "dir":
            continue
        size = dict(spec.options).get("size")
        if not size or size.endswith("%"):
            continue
        nbytes = parse_size(size)
        for path in spec.test_files:
            if nbytes > need.get(path, 0):
                need[path] = nbytes
                where[path] = spec.workload.name
    # every test file of a run stays until the end: those on one filesystem add up
    by_fs: dict[int, list[str]] = {}
    for path in need:
        try:
            by_fs.setdefault(os.stat(os.path.dirname(path)).st_dev, []).append(path)
        except OSError:
            continue  # the directory does not answer now: fio will say what it meets there, in one line
    for paths in by_fs.values():
        try:
            fs = os.statvfs(os.path.dirname(paths[0]))
        except OSError:
            continue
        if fs.f_blocks == 0:
            continue  # no size reported (ramfs, some FUSE): nothing to judge by
        free = fs.f_bavail * fs.f_frsize
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                free += os.stat(path).st_blocks * 512
        total = sum(need[p] for p in paths)
        if total <= free:
            continue
        from ..units import format_bytes

        if len(paths) == 1:
            [path] = paths
            raise TargetError(
                f"target {os.path.dirname(path)!r} has {format_bytes(free)} free but workload {where[path]!r} needs a "
                f"{format_bytes(need[path])} test file; give a smaller --size or another --target"
            )
        dirs = ", ".join(repr(os.path.dirname(p)) for p in paths)
        largest = max(paths, key=lambda p: need[p])
        raise TargetError(
            f"targets {dirs} share one filesystem with {format_bytes(free)} free but their test files need "
            f"{format_bytes(total)} together (workload {where[largest]!r} needs {format_bytes(need[largest])} in "
            f"{os.path.dirname(largest)!r}); give a smaller --size or targets on different filesystems"
        )


def artifacts(specs: Sequence[JobSpec]) -> dict[str, bool]:
    """The files fio's engines write outside their job directory, and whether each exists now."""
    from ..targets import kind_of

    paths = {p for spec in specs for p in kind_of(spec.target).artifacts}
    return {p: os.path.exists(p) for p in paths}


def remove_artifacts(before: Mapping[str, bool]) -> None:
    for path, existed in before.items():
        if not existed:
            with contextlib.suppress(OSError):
                os.unlink(path)


def remove_test_files(specs: Sequence[JobSpec]) -> None:
    seen: set[str] = set()
    for spec in specs:
        for path in spec.test_files:
            if path in seen:
                continue
            seen.add(path)
            # gone already, or not ours to remove (someone else's file, a vanished mount)
            with contextlib.suppress(OSError):
                os.unlink(path)
