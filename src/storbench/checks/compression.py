"""Compressible or deduplicable data on storage that shrinks it.

Checks (ids):

* ``compressible-data`` -- fio's buffer options make the data compressible or
  deduplicable, and the storage compresses (btrfs ``compress``/``compress-force``, ZFS
  ``compression``) or deduplicates (ZFS ``dedup``).  The space the file took after the
  run, far below the bytes written, proves it.
* ``btrfs-prealloc-uncompressed`` -- on a compressing btrfs, fio's default
  ``fallocate=native`` preallocates the file and btrfs writes into preallocated extents
  without compressing: 128 MiB of zeros took 128 MiB with the default and 4 MiB with
  ``fallocate=none`` (FIO-FACTS, measured as the change in statvfs used space).

Which fio buffers are compressible (fio 3.33, checked by hashing the written file and
on btrfs; ``p3_*`` fixtures):

* ``zero_buffers=1``: all zeros.  ``buffer_compress_percentage=N``: each buffer N %
  compressible.  ``buffer_pattern=``: one pattern repeated.  ``dedupe_percentage=N``:
  N % of the blocks repeat earlier ones.
* ``scramble_buffers=0`` without ``refill_buffers``: fio fills one random buffer and
  writes it again and again -- every block identical (256 of 256 blocks the same), so
  fully deduplicable, and compressible wherever the compression unit (btrfs 128 KiB,
  ZFS recordsize) holds several blocks.
* fio's **default** (``refill_buffers`` off, ``scramble_buffers=1``) is *not* flagged:
  the buffer is random and scrambled on every submit; consecutive 4 KiB blocks still
  share all but ~80 of their 4096 bytes, but every block is unique and btrfs could not
  compress it (128 MiB took 128 MiB).  Only similarity-based reduction (some arrays)
  could exploit it, which no filesystem does.  ``refill_buffers=1`` makes every buffer
  fresh random data.

How the evidence is read: ``st_blocks`` shows compression on ZFS but not on btrfs
(FIO-FACTS: ``du`` said 128 MiB either way), so two measures are used, for the last
repetition: the filesystem's used-space change (statvfs) against the bytes the file
grew by and fio wrote, and the file's allocated size against its size once fio wrote
all of it.  Random writes with ``norandommap`` may leave holes and are not judged, nor
are buffered writes that were never flushed: btrfs counts their space only when it
commits (0 bytes right after the run, the full size after ``sync``; checked on a
btrfs loop device).  Even after ``end_fsync`` btrfs may show the used space of a
compressed file only after its next commit, so the measured change can be smaller than
the compressed size -- the conclusion (far below what was written) stands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from storbench.model import Finding
from storbench.storage import StorageInfo
from storbench.units import format_bytes

from ._common import (
    CheckInfo,
    MiB,
    Options,
    finding,
    flag,
    flush_reasons,
    fmt_pct,
    has,
    integer,
    io_bytes,
    is_direct,
    is_random,
    join,
    size,
    text,
    top_devices,
    writes,
)

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

#: Space taken below this share of the bytes written means the data was reduced.
REDUCED_SPACE_MAX_RATIO = 0.5
#: Evidence is judged only when at least this much was written into new space.
MIN_EVIDENCE_BYTES = 16 * MiB
#: btrfs compresses in chunks of this size.
BTRFS_COMPRESSION_UNIT_BYTES = 128 * 1024
#: ZFS compresses whole records; its default recordsize.
ZFS_DEFAULT_RECORDSIZE_BYTES = 128 * 1024
#: Compression settings that mean "off".
_OFF = frozenset({"", "off", "no", "none", "0"})

INFO = {
    "compressible-data": CheckInfo(
        title="Compressible or deduplicable data",
        explanation="fio's buffer options make the written data compressible or deduplicable, so on storage that compresses or deduplicates the device receives only a fraction of the bytes and the figure measures data reduction, not the device.",
        evidence="zero_buffers=1, buffer_compress_percentage, buffer_pattern, dedupe_percentage, or scramble_buffers=0 without refill_buffers, on btrfs with compress/compress-force or ZFS with compression/dedup (warning; info where the storage does not compress but a device or array might); invalid when the filesystem's used space or the file's allocated size grew by less than half the bytes written, or (ZFS) the dataset's compressratio after the run is 2x or more.",
        fix="Drop those options and set refill_buffers=1 to write incompressible data; keep them only to study compression on purpose.",
        severities=("info", "warning", "invalid"),
        preflight=True,
    ),
    "btrfs-prealloc-uncompressed": CheckInfo(
        title="btrfs does not compress preallocated files",
        explanation="fio preallocates the test file (fallocate=native, its default) and btrfs writes into preallocated extents without compressing, so on a compressing btrfs the figure measures uncompressed writes.",
        evidence="btrfs with compress or compress-force (or the compression property), a write workload on a test file fio laid out, and fallocate not none (warning for compressible data, else info).",
        fix="Set fallocate=none so that btrfs compresses as it does for ordinary files.",
        severities=("info", "warning"),
        preflight=True,
    ),
}


# --------------------------------------------------------------------------- what the data and the storage do


def data_reasons(options: Options) -> tuple[list[str], bool]:
    """(option texts that make the data reducible, whether any makes it *compressible*).

    scramble_buffers=0 without refill_buffers alone counts as deduplicable; the caller
    decides whether blocks are small enough to compress too.
    """
    reasons: list[str] = []
    compressible = False
    if flag(options, "zero_buffers"):
        reasons.append("zero_buffers=1 (all zeros)")
        compressible = True
    pct = integer(options, "buffer_compress_percentage", default=0) or 0
    if pct > 0:
        reasons.append(f"buffer_compress_percentage={pct}")
        compressible = True
    if has(options, "buffer_pattern") and text(options, "buffer_pattern"):
        said = ""
        if has(options, "buffer_compress_percentage") and pct == 0:
            said = " whatever buffer_compress_percentage=0 says"
        if flag(options, "refill_buffers"):
            said += (" and" if said else "") + " however often refill_buffers refills the buffers"
        reasons.append(
            f"buffer_pattern={text(options, 'buffer_pattern')} (one pattern repeated in every block: it makes the data compressible{said})"
        )
        compressible = True
    dedupe = integer(options, "dedupe_percentage", default=0) or 0
    if dedupe > 0:
        reasons.append(f"dedupe_percentage={dedupe}")
    if has(options, "scramble_buffers") and not flag(options, "scramble_buffers", default=True) and not flag(options, "refill_buffers"):
        reasons.append("scramble_buffers=0 without refill_buffers (every block the same)")
    return reasons, compressible


def _identical_blocks(options: Options) -> bool:
    return (
        has(options, "scramble_buffers")
        and not flag(options, "scramble_buffers", default=True)
        and not flag(options, "refill_buffers")
        and not flag(options, "zero_buffers")
    )


@dataclass(frozen=True)
class Reduction:
    """What the storage under the target does to data: compression and deduplication."""

    what: str | None  # "btrfs mounted with compress-force=zstd:3", "ZFS compression=lz4 on tank/x"
    compresses: bool
    dedupes: bool
    unit_bytes: int  # the compression unit (btrfs chunk, ZFS record); 0 if none
    btrfs: bool


def reduction(storage: StorageInfo | None) -> Reduction | None:
    """None when the storage is unknown; a Reduction (perhaps doing nothing) otherwise."""
    if storage is None:
        return None
    fs = storage.filesystem
    if fs is not None and fs.btrfs is not None:
        b = fs.btrfs
        if b.compression_property and b.compression_property.lower() not in _OFF:
            return Reduction(f"btrfs compression property {b.compression_property}", True, False, BTRFS_COMPRESSION_UNIT_BYTES, True)
        if b.compression and b.compression.lower() not in _OFF:
            opt = "compress-force" if b.compression_forced else "compress"
            return Reduction(f"btrfs mounted with {opt}={b.compression}", True, False, BTRFS_COMPRESSION_UNIT_BYTES, True)
        return Reduction(None, False, False, BTRFS_COMPRESSION_UNIT_BYTES, True)
    zfs = fs.zfs if fs is not None else next((d.zvol for d in top_devices(storage) if d.zvol is not None), None)
    if zfs is not None:
        comp = (zfs.compression or "off").lower() not in _OFF
        dedup = (zfs.dedup or "off").lower() not in _OFF
        parts = []
        if comp:
            parts.append(f"compression={zfs.compression}")
        if dedup:
            parts.append(f"dedup={zfs.dedup}")
        unit = zfs.recordsize_bytes or zfs.volblocksize_bytes or ZFS_DEFAULT_RECORDSIZE_BYTES
        what = f"ZFS {' and '.join(parts)} on {zfs.dataset}" if parts else None
        return Reduction(what, comp, dedup, unit, False)
    return Reduction(None, False, False, 0, False)


def _fallocate_none(options: Options) -> bool:
    return (text(options, "fallocate") or "native").lower() in ("none", "0")


# --------------------------------------------------------------------------- evidence


def _zfs_evidence(ctx: CheckContext) -> str | None:
    """The dataset's compressratio after the run and the test file's allocated vs apparent size
    (ZFS counts a file's compressed blocks once fio closed it, buffered or not)."""
    zfs = ctx.backend.zfs if ctx.backend is not None else None
    ratio = zfs.compressratio_after if zfs is not None else None
    shrunk = [f for f in ctx.files_after if f.apparent_bytes >= MIN_EVIDENCE_BYTES and f.allocated_bytes < REDUCED_SPACE_MAX_RATIO * f.apparent_bytes]
    if ratio is None or ratio < 1 / REDUCED_SPACE_MAX_RATIO:
        return None
    text_ = f"the dataset's compressratio is {ratio:.2f}x after the run"
    if shrunk:
        f = shrunk[0]
        text_ += (
            f" and the {format_bytes(f.apparent_bytes)} test file takes {format_bytes(f.allocated_bytes)} on disk "
            f"({fmt_pct(f.allocated_bytes, f.apparent_bytes)})"
        )
    return text_


def _evidence(ctx: CheckContext) -> str | None:
    """How the last repetition's space use shows data reduction, or None."""
    if not ctx.results:
        return None
    zfs_evidence = _zfs_evidence(ctx)
    if zfs_evidence:
        return zfs_evidence
    if is_random(ctx.options) and flag(ctx.options, "norandommap"):
        return None  # random writes without a random map leave holes
    if not (is_direct(ctx.options) or flush_reasons(ctx.options)):
        return None  # unflushed data is not allocated yet (btrfs and ZFS count space at commit)
    written = io_bytes(ctx.results[-1], "write")
    before = {f.path: f for f in ctx.files_before}
    grown = sum(max(0, f.apparent_bytes - (before[f.path].apparent_bytes if f.path in before else 0)) for f in ctx.files_after)
    logical = min(grown, written)
    if ctx.fs_used_before is not None and ctx.fs_used_after is not None and logical >= MIN_EVIDENCE_BYTES:
        used = ctx.fs_used_after - ctx.fs_used_before
        if used < REDUCED_SPACE_MAX_RATIO * logical:
            return (
                f"fio wrote {format_bytes(written)} and the file grew by {format_bytes(grown)}, but the filesystem's used "
                f"space grew by {format_bytes(max(used, 0))} ({fmt_pct(max(used, 0), logical)})"
            )
    for f in ctx.files_after:
        if f.apparent_bytes >= MIN_EVIDENCE_BYTES and written >= f.apparent_bytes:
            if f.allocated_bytes < REDUCED_SPACE_MAX_RATIO * f.apparent_bytes:
                return (
                    f"fio wrote {format_bytes(written)}, all of the {format_bytes(f.apparent_bytes)} test file, but it takes "
                    f"{format_bytes(f.allocated_bytes)} on disk ({fmt_pct(f.allocated_bytes, f.apparent_bytes)})"
                )
    return None


# --------------------------------------------------------------------------- the checks


def _judge(options: Options, storage: StorageInfo | None, created: bool, ctx: CheckContext | None) -> list[Finding]:
    out: list[Finding] = []
    reasons, compressible = data_reasons(options)
    red = reduction(storage)
    if red is not None and _identical_blocks(options):
        bs = size(options, "bs", "blocksize") or 4096
        if red.unit_bytes and bs < red.unit_bytes:
            compressible = True
    if not (writes(options) or created):
        return out
    opts = join(reasons)
    prealloc = (
        red is not None and red.btrfs and red.compresses and created and writes(options) and not _fallocate_none(options)
    )
    if prealloc:
        assert red is not None
        fallocate = text(options, "fallocate") or "native, fio's default"
        if compressible:
            out.append(
                finding(
                    "btrfs-prealloc-uncompressed",
                    "warning",
                    f"{opts} makes the data compressible and the target is on {red.what}, but fio preallocated the test "
                    f"file (fallocate={fallocate}) and btrfs writes into preallocated extents without compressing: "
                    "the figure measures uncompressed writes, neither the device under compressed data nor btrfs's compression",
                    "set fallocate=none to let btrfs compress, or refill_buffers=1 (random data) to measure the device",
                )
            )
        else:
            out.append(
                finding(
                    "btrfs-prealloc-uncompressed",
                    "info",
                    f"the target is on {red.what}, but fio preallocated the test file (fallocate={fallocate}) and btrfs "
                    "writes into preallocated extents without compressing: the figure measures uncompressed writes, "
                    "not the compression an ordinary file would get",
                    "set fallocate=none to measure writes as btrfs compresses them",
                )
            )
        return out
    if not reasons:
        return out
    reduces = red is not None and ((compressible and red.compresses) or red.dedupes)
    if reduces:
        assert red is not None
        evidence = _evidence(ctx) if ctx is not None else None
        if evidence:
            out.append(
                finding(
                    "compressible-data",
                    "invalid",
                    f"{opts} on {red.what}: {evidence}; the data shrank before it reached the disks, so the figure "
                    "measures compression, not the device",
                    "drop those options and set refill_buffers=1 (incompressible data), unless compression is what you study",
                )
            )
        else:
            out.append(
                finding(
                    "compressible-data",
                    "warning",
                    f"{opts} makes the data reducible and the target is on {red.what}: the disks receive only part of "
                    "the bytes, so the figure measures compression, not the device",
                    "drop those options and set refill_buffers=1 (incompressible data), unless compression is what you study",
                )
            )
        return out
    where = "the filesystem does not compress" if red is not None else "the storage is not known"
    out.append(
        finding(
            "compressible-data",
            "info",
            f"{opts} makes the data reducible; {where}, but a device or array under it may (SSD controllers, SANs, "
            "thin pools and VDO compress or deduplicate)",
            "set refill_buffers=1 and drop those options to write incompressible data",
        )
    )
    return out


def preflight_workload(options: Options, storage: StorageInfo | None, mem_bytes: int | None) -> list[Finding]:
    created = storage is not None and storage.target_kind == "dir"
    return _judge(options, storage, created, None)


def check(ctx: CheckContext) -> list[Finding]:
    return _judge(ctx.options, ctx.storage, ctx.test_file_created, ctx)
