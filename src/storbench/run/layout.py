"""Laying out test files where fio cannot (edge).

fio lays out a new test file by growing it with ``ftruncate`` and then writing it.  Some
filesystems refuse to grow a file that way: through smbnetfs (SMB over FUSE) ``ftruncate`` on a
file opened write-only (as fio opens one to lay it out) returns EIO after about 4 s of retries, and fio fails with ``err=5/file:filesetup.c:195,
func=ftruncate``.  On a network filesystem storbench therefore tries ``ftruncate`` on a small
probe file first; where it is refused, storbench writes the test file itself (random data
in 1 MiB writes, then ``fsync``), and fio finds it laid out already.  After the refused
``ftruncate`` smbnetfs answers every call on the share with EIO for a few seconds (about 4 s
over a zfs-fuse dataset here), so the write is retried for a while.
"""

from __future__ import annotations

import errno
import os
import random
import time
from collections.abc import Callable

CHUNK_BYTES = 1024 * 1024
#: not a dot file: see storbench.run.engines.probe_ioengine (a hidden file on an SMB share without
#: xattrs cannot be deleted through smbnetfs, which then fails every call)
PROBE_NAME = "storbench-truncate-probe"


def grows_by_truncate(directory: str) -> tuple[bool, str | None]:
    """(whether ``ftruncate`` can grow a new file in ``directory``, the error when not)."""
    path = os.path.join(directory, PROBE_NAME)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # as fio opens a file it lays out
    except OSError:
        return True, None  # cannot even create a file: fio will say why, in its own words
    try:
        os.ftruncate(fd, 64 * 1024)
        return True, None
    except OSError as exc:  # EIO, EOPNOTSUPP, EPERM, EINVAL, ENOSYS; through a struggling smbnetfs even ENOENT
        return False, os.strerror(exc.errno) if exc.errno else str(exc)
    finally:
        os.close(fd)
        remove_probe(path)


def remove_probe(path: str, tries: int = 10, pause_s: float = 0.2) -> bool:
    """Unlink ``path``, again a few times when a struggling FUSE share (smbnetfs beside other load)
    refuses it once (seen: the probe left on the share); whether it is gone."""
    import time

    for attempt in range(tries):
        try:
            os.unlink(path)
            return True
        except OSError:  # ENOENT too: through smbnetfs it is not always true
            if not os.path.lexists(path):
                return True
            if attempt + 1 < tries:
                time.sleep(pause_s)
    return False


def write_file(path: str, size_bytes: int, *, seed: int = 0) -> int:
    """Write ``size_bytes`` of incompressible data to ``path`` (creating it; keeping what is
    beyond), then fsync; the bytes written.  A file already that large is left alone."""
    try:
        if os.stat(path).st_size >= size_bytes:
            return 0
    except FileNotFoundError:
        pass
    rng = random.Random(seed)
    written = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while written < size_bytes:
            n = min(CHUNK_BYTES, size_bytes - written)
            buf = rng.randbytes(n)
            view = memoryview(buf)
            while view:
                done = os.write(fd, view)
                view = view[done:]
            written += n
        os.fsync(fd)
    finally:
        os.close(fd)
    return written


#: how long a share that just refused ftruncate may go on answering EIO
RECOVER_S = 20.0


def write_file_when_answering(path: str, size_bytes: int, *, timeout_s: float = RECOVER_S,
                              sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> int:
    """:func:`write_file`, retried while the filesystem answers EIO, for up to ``timeout_s``;
    the last OSError when it never recovers."""
    deadline = clock() + timeout_s
    while True:
        try:
            return write_file(path, size_bytes)
        except OSError as exc:
            if exc.errno != errno.EIO or clock() >= deadline:
                raise
            sleep(0.5)
