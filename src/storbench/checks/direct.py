"""O_DIRECT refused or not honoured.

Checks (ids):

* ``direct-rejected`` -- fio stopped with EINVAL (error 22) under ``direct=1``: the
  filesystem refuses O_DIRECT (ramfs, tmpfs before Linux 6.6, some FUSE filesystems) or
  the block size does not suit the device (``bs=1000``).  fio prints
  ``first direct IO errored`` for the I/O and ``func=open(...)`` when opening failed.
* ``direct-ignored`` -- ``direct=1`` was accepted, yet the devices read far less than
  fio did: the filesystem serves O_DIRECT from a cache (ZFS before OpenZFS 2.3 treats
  O_DIRECT as buffered, through the ARC).  When the file is sparse, ``sparse-read`` says
  why instead (see :mod:`storbench.checks.sparse`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding

from ._common import CheckInfo, engine, finding, is_direct, repetitions_text, size, text, top_devices
from .cache import ARC_HIT_INVALID_RATIO, read_shortfalls, shortfall_text, zfs_of

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

#: errno EINVAL: what the kernel answers to an O_DIRECT open or I/O it will not do.
EINVAL = 22
#: O_DIRECT needs I/O sizes and offsets in multiples of the logical block size; 512 B
#: is the smallest there is, used when the device's own is not known.
DEFAULT_LOGICAL_BLOCK_BYTES = 512

INFO = {
    "direct-rejected": CheckInfo(
        title="O_DIRECT was refused",
        explanation="fio stopped with error 22 (Invalid argument) under direct=1: the filesystem does not support O_DIRECT, or the block size or alignment does not suit the device, so nothing was measured.",
        evidence="A job ended with error 22 while direct=1 (fio's notes say 'first direct IO errored' or name the failed open).",
        fix="Use a block size that is a multiple of the device's logical block size (4k works everywhere), or a filesystem that supports O_DIRECT; do not just set direct=0, which measures the page cache.",
        severities=("invalid",),
    ),
    "direct-ignored": CheckInfo(
        title="O_DIRECT was not honoured",
        explanation="direct=1 was accepted, but the devices under the file read far less than fio did, so a cache still answered (ZFS before OpenZFS 2.3 handles O_DIRECT as buffered I/O through the ARC).",
        evidence="direct=1, fio read at least 16 MiB and the devices under the filesystem read less than 10% of it (and the file is not sparse).",
        fix="Do not use the figure; on ZFS set primarycache=metadata for the benchmark (or use OpenZFS 2.3+ with direct=standard) and a test file larger than the RAM.",
        severities=("invalid",),
    ),
}


def _logical_block(ctx: CheckContext) -> int:
    if ctx.storage is not None:
        sizes = [d.logical_block_size_bytes for d in top_devices(ctx.storage) if d.logical_block_size_bytes]
        if sizes:
            return max(sizes)
    return DEFAULT_LOGICAL_BLOCK_BYTES


def _rejected(ctx: CheckContext) -> Finding | None:
    failed = [i for i, r in enumerate(ctx.results) if any(j.error == EINVAL for j in r.jobs)]
    if not failed:
        return None
    notes = [n for i in failed for n in ctx.results[i].notes]
    lower = [n.lower() for n in notes]
    if not (is_direct(ctx.options) or any("direct" in n for n in lower)):
        return None
    reps = repetitions_text(failed, len(ctx.results))
    bs = size(ctx.options, "bs", "blocksize")
    lbs = _logical_block(ctx)
    fstype = ctx.storage.filesystem.fstype if ctx.storage is not None and ctx.storage.filesystem else None
    if bs is not None and bs % lbs:
        return finding(
            "direct-rejected",
            "invalid",
            f"fio stopped with error 22 (Invalid argument){reps} at the first O_DIRECT I/O: "
            f"bs={text(ctx.options, 'bs', 'blocksize')} is not a multiple of the device's logical block size "
            f"({lbs} B), which O_DIRECT requires; nothing was measured",
            f"use a block size that is a multiple of {lbs} B (4k works everywhere)",
        )
    if any("func=open(" in n for n in lower) or any("does not support" in n for n in lower):
        on = f"the {fstype} filesystem" if fstype else "the filesystem"
        return finding(
            "direct-rejected",
            "invalid",
            f"fio could not open the test file with O_DIRECT (error 22, Invalid argument){reps}: "
            f"{on} does not support O_DIRECT; nothing was measured",
            "test on a filesystem that supports O_DIRECT; with direct=0 instead the result would measure the page cache",
        )
    return finding(
        "direct-rejected",
        "invalid",
        f"the first O_DIRECT I/O failed with error 22 (Invalid argument){reps}: the filesystem does not support "
        "O_DIRECT, or the block size, offset or buffer alignment (iomem_align) does not suit the device; nothing was measured",
        "use block sizes and offsets that are multiples of the device's logical block size (4k), or a filesystem that supports O_DIRECT",
    )


def _ignored(ctx: CheckContext) -> Finding | None:
    if not is_direct(ctx.options) or engine(ctx.options) == "mmap":
        return None
    found = read_shortfalls(ctx)
    if not found:
        return None
    reps = repetitions_text([s.index for s in found], len(ctx.results))
    zfs = zfs_of(ctx.storage)
    measured = ctx.backend.zfs if ctx.backend is not None else None
    if zfs is not None and measured is not None and (measured.arc_hit_ratio or 0) >= ARC_HIT_INVALID_RATIO:
        return None  # zfs-arc says it is invalid too, and names the cause with the ARC's own counts
    if zfs is not None:
        why = (
            f"ZFS ({zfs.dataset}) accepts direct=1 but, before OpenZFS 2.3, serves it like buffered I/O "
            "through the ARC"
        )
        fix = (
            f"do not use the figure; zfs set primarycache=metadata {zfs.dataset} for the benchmark "
            "(or OpenZFS 2.3+ with direct=standard) and a test file larger than the RAM"
        )
    else:
        why = (
            "O_DIRECT was not honoured, or the data was never written (holes and preallocated, unwritten "
            "extents are read as zeros without touching the device)"
        )
        fix = "do not use the figure; write the whole test file before reading it, on a filesystem that honours O_DIRECT"
    return finding(
        "direct-ignored",
        "invalid",
        f"direct=1, yet {shortfall_text(found[0], reps)}: {why}",
        fix,
    )


def check(ctx: CheckContext) -> list[Finding]:
    return [f for f in (_rejected(ctx), _ignored(ctx)) if f is not None]
