"""Reads from never-written (sparse) regions.

Check (id): ``sparse-read`` -- a workload reads a file most of which was never written
(made with ``truncate``, or extended by ``ftruncate``).  Reading a hole returns zeros
without touching the device, whatever ``direct`` says: a 256 MiB truncated file read
with ``direct=1`` gave 537k IOPS at 1.4 us (``p4_sparse_file_direct_read.json``).

The evidence is the file's allocated size (``st_blocks * 512``) before the run against
its size.  On ZFS, compression also makes the allocated size small, so there the
finding is a warning instead of invalid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding
from storbench.units import fmt_ns, format_bytes

from ._common import CheckInfo, MiB, finding, fmt_count, fmt_pct, io_bytes, jobs, reads, uses_kernel_io
from .compression import reduction

if TYPE_CHECKING:  # pragma: no cover
    from storbench.storage import StorageInfo

    from ._common import Options
    from .context import CheckContext, FileState

#: A file with less than this share of its size allocated is sparse enough to matter.
SPARSE_MAX_ALLOCATED_RATIO = 0.5
#: Files smaller than this are not judged (a small file's metadata blocks blur the ratio).
MIN_FILE_BYTES = 1 * MiB

INFO = {
    "sparse-read": CheckInfo(
        title="Reads of never-written data",
        explanation="Most of the file or export being read was never written, and a hole (or an extent an NBD server knows is zero) is answered without touching the device (even with direct=1), so the figure measures the kernel or the server, not the storage.",
        evidence="A read workload and, before the run, a test file whose allocated size (st_blocks x 512) is less than half its size (invalid; warning on storage that compresses, where compression also shrinks the allocation), an NBD export whose allocation map (nbdinfo --map) calls at least half of the area read holes or zeros, or an RBD image (rbd diff) or RADOS object (rados stat) of which at least half of the area read was never written, with what the OSDs served during the run (invalid).",
        fix="Write the whole area before reading it: --prefill, or a sequential fio write pass over it; never benchmark reads on a file made with truncate or on a fresh image.",
        severities=("warning", "invalid"),
    ),
}


#: An NBD export whose map calls at least this share of the area read unwritten: the reads measured nothing.
SPARSE_EXPORT_MIN_RATIO = 0.5


def sparse_files(ctx: CheckContext) -> list[FileState]:
    """The test files that were mostly holes before the last repetition."""
    return [
        f
        for f in ctx.files_before
        if f.apparent_bytes >= MIN_FILE_BYTES and f.allocated_bytes < SPARSE_MAX_ALLOCATED_RATIO * f.apparent_bytes
    ]


def _sparse_read(ctx: CheckContext) -> Finding | None:
    if not reads(ctx.options) or not uses_kernel_io(ctx.options):
        return None
    files = sparse_files(ctx)
    if not files:
        return None
    apparent = sum(f.apparent_bytes for f in files)
    allocated = sum(f.allocated_bytes for f in files)
    name = files[0].path if len(files) == 1 else f"{len(files)} test files"
    red = reduction(ctx.storage)
    compressing = red is not None and red.compresses and not red.btrfs  # btrfs's st_blocks ignores compression
    last = ctx.results[-1] if ctx.results else None
    evidence = ""
    if last is not None:
        read = [s for j in jobs(last) if (s := j.directions.get("read")) is not None]
        iops = sum(s.iops for s in read)
        lats = [s.clat_ns.mean_ns for s in read if s.clat_ns is not None]
        if iops:
            evidence = f"; fio read {format_bytes(io_bytes(last, 'read'))} at {fmt_count(iops)} IOPS"
            if lats:
                evidence += f", {fmt_ns(min(lats))} mean completion latency"
    where = "a file you gave" if not ctx.test_file_created else "the test file"
    message = (
        f"{where} ({name}) is {format_bytes(apparent)} but only {format_bytes(allocated)} of it was allocated before the "
        f"run ({fmt_pct(allocated, apparent)}): reads of never-written regions return zeros without touching the "
        f"device{evidence}"
    )
    if compressing:
        assert red is not None
        message += f" (or {red.what} shrank the data; the allocated size cannot tell them apart)"
    fix = (
        "fill the file before reading it (a sequential fio write pass over all of it, or dd from /dev/urandom); never read-benchmark a file made with truncate"
        if not ctx.test_file_created
        else "let fio lay the test file out in full (do not create it with truncate) before a read workload"
    )
    return finding("sparse-read", "warning" if compressing else "invalid", message, fix)


def _fio_read(ctx: CheckContext) -> str:
    """"; fio read 78.8 MiB at 20,129 IOPS" of the last repetition, or "" when it read nothing."""
    last = ctx.results[-1] if ctx.results else None
    if last is None:
        return ""
    iops = sum(s.iops for j in jobs(last) if (s := j.directions.get("read")) is not None)
    return f"; fio read {format_bytes(io_bytes(last, 'read'))} at {fmt_count(iops)} IOPS" if iops else ""


def _unwritten_export(ctx: CheckContext) -> Finding | None:
    nbd = ctx.backend.nbd if ctx.backend is not None else None
    if nbd is None or not reads(ctx.options) or nbd.unwritten_ratio is None or nbd.unwritten_ratio < SPARSE_EXPORT_MIN_RATIO:
        return None
    if nbd.unwritten_before_bytes is None or not nbd.area_bytes:  # the ratio is theirs: both are there
        return None
    evidence = _fio_read(ctx)
    return finding(
        "sparse-read",
        "invalid",
        f"the NBD export {nbd.uri} called {format_bytes(nbd.unwritten_before_bytes)} of the {format_bytes(nbd.area_bytes)} read area "
        f"({fmt_pct(nbd.unwritten_before_bytes, nbd.area_bytes)}) holes or zeros before the run (nbdinfo --map): the server "
        f"answers reads of never-written blocks without reading anything{evidence}",
        "write the area first: run with --prefill (a sequential write pass before the workloads), or write it with a fio write job",
    )


def _unwritten_ceph(ctx: CheckContext) -> Finding | None:
    c = ctx.backend.ceph if ctx.backend is not None else None
    if c is None or not reads(ctx.options) or c.unwritten_ratio is None or c.unwritten_ratio < SPARSE_EXPORT_MIN_RATIO:
        return None
    if c.unwritten_before_bytes is None or not c.area_bytes:  # the ratio is theirs: both are there
        return None
    evidence = _fio_read(ctx)
    if evidence and c.osd_read_ops is not None:
        evidence += f" while the OSDs served {fmt_count(c.osd_read_ops)} reads ({format_bytes(c.osd_read_bytes)})"
    if c.image is not None:
        what, how, answer = f"the RBD image {c.pool}/{c.image}", "rbd diff", "librbd answers reads of never-written objects from the object map without asking any OSD"
    else:
        what, how, answer = f"the RADOS object {c.pool}/{c.object}", "rados stat", "reads beyond an object's written size return nothing from the OSD"
    return finding(
        "sparse-read",
        "invalid",
        f"{what}: {format_bytes(c.unwritten_before_bytes)} of the {format_bytes(c.area_bytes)} read area "
        f"({fmt_pct(c.unwritten_before_bytes, c.area_bytes)}) was never written before the run ({how}): {answer}{evidence}",
        "write the area first: run with --prefill (a sequential write pass before the workloads), or write it with a fio write job",
    )


def preflight_workload(options: Options, storage: StorageInfo | None, mem_bytes: int | None) -> list[Finding]:
    """Before a run: a read workload on an RBD image of which less than half was ever written (``rbd du``)."""
    ceph = getattr(storage, "ceph", None)
    image = getattr(ceph, "image", None)
    if image is None or image.used_bytes is None or not image.size_bytes or not reads(options):
        return []
    if image.used_bytes >= SPARSE_EXPORT_MIN_RATIO * image.size_bytes:
        return []
    pool = ceph.pool.name if ceph is not None and ceph.pool is not None else "?"
    return [finding(
        "sparse-read",
        "warning",
        f"the RBD image {pool}/{image.name} has {format_bytes(image.used_bytes)} of its {format_bytes(image.size_bytes)} written (rbd du): "
        "librbd will answer reads of the rest from the object map without asking any OSD",
        "run with --prefill (a sequential write pass before the workloads), or write the image first",
    )]  # fmt: skip


def check(ctx: CheckContext) -> list[Finding]:
    found = [f for f in (_sparse_read(ctx), _unwritten_export(ctx), _unwritten_ceph(ctx)) if f is not None]
    return found[:1]
