"""A cache, not the device, was measured: the page cache, the ZFS ARC, RAM itself, or a
result no device of that class can produce.

Checks (ids):

* ``memory-filesystem`` -- the target is on tmpfs/ramfs (or a memory block device).
* ``cache-small-file`` -- buffered I/O on a test file the page cache can hold.
* ``page-cache`` -- fio read far more than the devices under the file did (buffered I/O).
* ``zfs-arc`` -- ZFS caches data in the ARC and the file fits in RAM.
* ``server-cache`` -- a share's server (this machine) caches the shared dataset in its ARC.
* ``faster-than-device`` -- more IOPS or bandwidth than the device class can deliver.

The first, second and fourth need no measurement and also run before a run
(:func:`preflight_workload`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storbench.model import Finding
from storbench.storage import DeviceInfo, StorageInfo, ZfsInfo
from storbench.units import format_bytes

from ._common import (
    CheckInfo,
    GiB,
    MiB,
    Options,
    device_bytes,
    direct_text,
    engine,
    finding,
    fix_of,
    flag,
    fmt_count,
    fmt_pct,
    fmt_rate,
    integer,
    io_bytes,
    is_direct,
    is_memory_device,
    is_memory_fs,
    is_random,
    is_virtual,
    join,
    leaf_devices,
    paired,
    reads,
    repetitions_text,
    size,
    sync_reasons,
    text,
    top_devices,
    total_bw,
    total_iops,
    uses_kernel_io,
    writes,
)

if TYPE_CHECKING:  # pragma: no cover
    from storbench.backend import BackendActivity

    from .context import CheckContext, FileState

#: Buffered I/O is suspect on a test file smaller than this many times the RAM.  Linux
#: gives the page cache whatever memory is free, so a file below the RAM size can be
#: cached whole, and one below twice the RAM mostly; twice the RAM is the common rule of
#: benchmarking guides for buffered tests.
CACHE_SIZE_FACTOR = 2.0

#: The devices under the file read less than this share of what fio read: a cache answered.
#: Read-ahead and metadata make device reads exceed fio's on a cold cache, never fall to 10 %.
DEVICE_READ_MAX_RATIO = 0.10
#: ... judged only when fio read at least this much (below it, noise and metadata dominate).
DEVICE_READ_MIN_FIO_BYTES = 16 * MiB

#: Share of the RAM the ZFS ARC may grow to when its own maximum (``c_max``) is unknown.
#: OpenZFS 2.3 lets it take nearly all RAM on Linux (older versions half); taking all of
#: it errs towards warning.
ZFS_ARC_RAM_FRACTION = 1.0
#: Measured during the run (ARC data hits / lookups): at or above this the ARC answered
#: the reads and the figure is memory's (invalid); at or above the lower one, part of them.
ARC_HIT_INVALID_RATIO = 0.5
ARC_HIT_WARN_RATIO = 0.1

#: What one device of a class can deliver at most, generously (per device; several
#: devices under one target add up).  Beyond these, a cache answered or the kernel's
#: description of the device is wrong.
#: A rotational disk: ~75-200 random IOPS per spindle (15k rpm: ~250 with deep queues);
#: 1000 leaves room for short stroking and the drive's own cache.
HDD_MAX_RANDOM_IOPS = 1000
#: The fastest 3.5" disks stream ~300 MB/s on their outer tracks.
HDD_MAX_BW_BYTES = 400 * MiB
#: A SATA III link carries 6 Gb/s with 8b/10b coding: 600 MB/s before protocol overhead.
SATA_MAX_BW_BYTES = 600 * MiB
#: Any single block device: the fastest PCIe 5.0 x4 NVMe drives reach ~2.5-3 M random
#: 4k IOPS and ~14 GiB/s (the link's limit is 15.75 GB/s = 14.7 GiB/s).
ANY_DEVICE_MAX_RANDOM_IOPS = 3_000_000
ANY_DEVICE_MAX_BW_BYTES = 16 * GiB

INFO: dict[str, CheckInfo] = {
    "memory-filesystem": CheckInfo(
        title="The target is in memory",
        explanation="The test file lives on tmpfs or ramfs (or a memory-backed block device such as zram), so the result measures RAM, not a disk.",
        evidence="The filesystem type under the target is tmpfs, ramfs, devtmpfs or hugetlbfs, or every device under it is a zram/ram device.",
        fix="Point --target at a directory on a disk-backed filesystem.",
        severities=("invalid",),
        preflight=True,
    ),
    "cache-small-file": CheckInfo(
        title="Buffered I/O on a file the page cache can hold",
        explanation="Buffered I/O (direct not 1, or buffered=1) on a test file smaller than twice the RAM can be served from and absorbed by the page cache, so the result can be memory speed.",
        evidence="direct is not 1 (or buffered=1, or the mmap engine) and the test file (size=, or the file's size) is smaller than twice the machine's RAM.",
        fix="Set direct=1, or make the test file at least twice the RAM.",
        severities=("warning",),
        preflight=True,
    ),
    "page-cache": CheckInfo(
        title="The page cache answered the reads",
        explanation="fio read far more than the devices under the file did during the run, so most reads came from memory and the figure is not the device's.",
        evidence="Buffered I/O, fio read at least 16 MiB, and the devices under the filesystem read less than 10% of that (device activity), or fio's own disk statistics count no reads at all.",
        fix="Set direct=1 (or drop the caches before each run and use a test file larger than twice the RAM); do not use this figure as the device's.",
        severities=("invalid",),
    ),
    "zfs-arc": CheckInfo(
        title="ZFS answered (or can answer) from the ARC",
        explanation="ZFS caches file data in its ARC (primarycache=all, the default) and the test file fits in RAM, so reads and buffered I/O can be served from memory; O_DIRECT does not bypass the ARC before OpenZFS 2.3.",
        evidence="The target is a ZFS dataset or zvol with primarycache=all and the workload reads or uses buffered I/O; measured: at least 50% of the ARC's data lookups during the run were hits (invalid; 10%: warning); not measured: the test file is smaller than the ARC's maximum (c_max), or the RAM when that is unknown.",
        fix="zfs set primarycache=metadata on the dataset for the benchmark (and set it back), or use a test file larger than the RAM.",
        severities=("warning", "invalid"),
        preflight=True,
    ),
    "server-cache": CheckInfo(
        title="The share's server answered from its cache",
        explanation="The share's server keeps the shared files in a cache (a ZFS ARC with primarycache=all), so reads over the share can be answered from the server's memory: the figure is the network and the server's RAM, not its disks.",
        evidence="A read workload on a share whose server is this machine and whose shared directory is a ZFS dataset with primarycache=all; measured: at least 50% of the ARC's data lookups during the run were hits (invalid; 10%: warning); not measured: the test file is smaller than the server's ARC maximum.",
        fix="On the server, zfs set primarycache=metadata on the shared dataset for the benchmark (set it back afterwards), or use a test file larger than the server's RAM.",
        severities=("warning", "invalid"),
        preflight=True,
    ),
    "faster-than-device": CheckInfo(
        title="Faster than the device can be",
        explanation="The result exceeds what the devices under the target can deliver (a rotational disk does about 1000 random IOPS and 400 MiB/s at most, a SATA SSD 600 MiB/s, any single device 3 M random IOPS and 16 GiB/s), so a cache answered or the kernel describes the device wrongly.",
        evidence="Random-I/O IOPS or bandwidth of a repetition above the sum of the per-device limits of the physical devices under the target (by the kernel's rotational flag and transport).",
        fix="Use direct=1 and a test file larger than every cache; if the device is faster than the kernel says (an SSD reported as rotational), the limit does not apply.",
        severities=("warning",),
    ),
}


# --------------------------------------------------------------------------- shared facts


def buffered(options: Options) -> bool:
    """Does the page cache sit between fio and the file?  (mmap always goes through it.)"""
    return uses_kernel_io(options) and (engine(options) == "mmap" or not is_direct(options))


def working_set(options: Options, storage: StorageInfo | None, files: Sequence[FileState] = ()) -> tuple[int, str] | None:
    """(bytes, where the figure comes from) of the region the workload uses; None if unknown.

    ``size=`` (per job: times numjobs when the jobs do not share one filename), else
    ``filesize=``, else the test files' sizes, else a block target's size.
    """
    shared = any(k in options for k in ("filename", "filename_format"))
    numjobs = 1 if shared else max(1, integer(options, "numjobs", default=1) or 1)
    for key in ("size", "filesize"):
        n = size(options, key)
        if n:
            where = f"{key}={text(options, key)}" + (f" x numjobs={numjobs}" if numjobs > 1 else "")
            return n * numjobs, where
    total = sum(f.apparent_bytes for f in files)
    if total > 0:
        return total, "the size of the test file"
    if storage is not None and storage.target_kind == "block":
        sizes = [d.size_bytes for d in top_devices(storage) if d.size_bytes]
        if sizes:
            return sum(sizes), "the size of the device"
    return None


def zfs_of(storage: StorageInfo | None) -> ZfsInfo | None:
    """The ZFS dataset under the target (a filesystem, or the zvol of a block target)."""
    return storage.zfs if storage is not None else None


def _round_up_size(n: float) -> str:
    """A fio size at least ``n`` bytes, in whole GiB (or MiB below 1 GiB)."""
    if n >= GiB:
        return f"{math.ceil(n / GiB)}g"
    return f"{max(1, math.ceil(n / MiB))}m"


# --------------------------------------------------------------------------- memory-filesystem


def _memory_target(options: Options, storage: StorageInfo | None) -> Finding | None:
    if storage is None or not uses_kernel_io(options):
        return None
    direct_note = ""
    if is_direct(options):
        direct_note = "; direct=1 does not change that: tmpfs accepts O_DIRECT since Linux 6.6 and still copies from memory"
    if is_memory_fs(storage):
        fs = storage.filesystem
        assert fs is not None
        return finding(
            "memory-filesystem",
            "invalid",
            f"the target {storage.target} is on {fs.fstype} ({fs.mountpoint}): the test file lives in RAM, "
            f"so the result measures memory, not a disk{direct_note}",
            fix_of(INFO["memory-filesystem"]),
        )
    leaves = leaf_devices(storage)
    if leaves and all(is_memory_device(d) for d in leaves):
        names = join(d.kname for d in leaves)
        return finding(
            "memory-filesystem",
            "invalid",
            f"every device under {storage.target} is memory-backed ({names}): the result measures RAM, not a disk",
            "point --target at a disk-backed device or filesystem",
        )
    return None


# --------------------------------------------------------------------------- cache-small-file


def _small_file(options: Options, storage: StorageInfo | None, mem_bytes: int | None, files: Sequence[FileState] = ()) -> Finding | None:
    if mem_bytes is None or mem_bytes <= 0 or not buffered(options):
        return None
    if is_memory_fs(storage) or zfs_of(storage) is not None:
        return None  # memory-filesystem / zfs-arc say it better
    ws = working_set(options, storage, files)
    if ws is None:
        return None
    nbytes, where = ws
    if nbytes >= CACHE_SIZE_FACTOR * mem_bytes:
        return None
    how = "the mmap engine" if engine(options) == "mmap" else direct_text(options)
    # writes made durable one by one (O_SYNC, fsync=N) cannot gather in the page cache
    r, w = reads(options), writes(options) and not sync_reasons(options)
    if not (r or w):
        return None
    what = (
        "reads can be answered and writes absorbed by memory"
        if r and w
        else "writes can be absorbed by memory"
        if w
        else "reads can be answered from memory"
    )
    return finding(
        "cache-small-file",
        "warning",
        f"buffered I/O ({how}) on {format_bytes(nbytes)} of test data ({where}), less than twice the RAM "
        f"({format_bytes(mem_bytes)}): the page cache can hold it, so {what} instead of the device",
        f"set direct=1, or make the test file at least twice the RAM (size={_round_up_size(CACHE_SIZE_FACTOR * mem_bytes)})",
    )


# --------------------------------------------------------------------------- page-cache


@dataclass(frozen=True)
class ReadShortfall:
    """One repetition whose devices read far less than fio did."""

    index: int
    fio_read_bytes: int
    device_read_bytes: int
    devices: tuple[str, ...]
    source: str  # "activity" (sampled device bytes) or "disk_util" (fio's own read count: 0)


def read_shortfalls(ctx: CheckContext) -> list[ReadShortfall]:
    """Repetitions where the devices under the file read < 10% of fio's reads (fio read >= 16 MiB).

    Device activity decides where it was sampled; otherwise fio's own ``disk_util``
    decides, but only when it counts no reads at all (it holds I/O counts, not bytes).
    """
    if is_memory_fs(ctx.storage) or not uses_kernel_io(ctx.options):
        return []
    out: list[ReadShortfall] = []
    for i, result, series in paired(ctx.results, ctx.activity):
        fio_read = io_bytes(result, "read")
        if fio_read < DEVICE_READ_MIN_FIO_BYTES:
            continue
        dev = device_bytes(series, ctx.storage)
        if dev is not None:
            if dev.read_bytes < DEVICE_READ_MAX_RATIO * fio_read:
                out.append(ReadShortfall(i, fio_read, dev.read_bytes, dev.devices, "activity"))
            continue
        disks = [d for d in result.disk_util if not d.aggregate]
        if disks and sum(d.read_ios for d in disks) == 0:
            out.append(ReadShortfall(i, fio_read, 0, tuple(d.name for d in disks), "disk_util"))
    return out


def shortfall_text(s: ReadShortfall, reps: str) -> str:
    """``fio read 64.0 MiB but the devices under the file (vda) read 0 B (0%)``."""
    if s.source == "disk_util":
        return (
            f"fio read {format_bytes(s.fio_read_bytes)}{reps} but fio's own disk statistics count "
            f"0 reads on {join(s.devices)}"
        )
    word = "device" if len(s.devices) == 1 else "devices"
    return (
        f"fio read {format_bytes(s.fio_read_bytes)}{reps} but the {word} under the file ({join(s.devices)}) read "
        f"{format_bytes(s.device_read_bytes)} ({fmt_pct(s.device_read_bytes, s.fio_read_bytes)})"
    )


def _page_cache(ctx: CheckContext) -> Finding | None:
    if not buffered(ctx.options):
        return None
    found = read_shortfalls(ctx)
    if not found:
        return None
    reps = repetitions_text([s.index for s in found], len(ctx.results))
    cache = "the ARC (ZFS's cache)" if zfs_of(ctx.storage) is not None else "the page cache"
    hints = []
    if has_false(ctx.options, "invalidate"):
        hints.append("invalidate=0 kept the file's pages cached from before")
    if flag(ctx.options, "pre_read"):
        hints.append("pre_read=1 read the file into memory first")
    hint = f" ({'; '.join(hints)})" if hints else ""
    return finding(
        "page-cache",
        "invalid",
        f"{shortfall_text(found[0], reps)}: {cache} answered, not the device{hint}",
        "set direct=1 (or drop caches before each run and use a test file over twice the RAM); do not use this figure as the device's",
    )


def has_false(options: Options, key: str) -> bool:
    return key in options and not flag(options, key, default=True)


# --------------------------------------------------------------------------- zfs-arc


def _zfs_arc(
    options: Options, storage: StorageInfo | None, mem_bytes: int | None, files: Sequence[FileState] = (), backend: BackendActivity | None = None
) -> Finding | None:
    zfs = zfs_of(storage)
    if zfs is None or not uses_kernel_io(options):
        return None
    cache = (zfs.primarycache or "all").lower()
    if cache != "all":
        return None
    if not (buffered(options) or reads(options)):
        return None
    measured = backend.zfs if backend is not None else None
    ratio = measured.arc_hit_ratio if measured is not None else None
    arc_max = (measured.arc_max_bytes if measured is not None else None) or (zfs.arc.max_bytes if zfs.arc is not None else None)
    limit = arc_max or (ZFS_ARC_RAM_FRACTION * mem_bytes if mem_bytes else None)
    limit_text = f"the ARC's maximum ({format_bytes(arc_max)})" if arc_max else f"the RAM ({format_bytes(mem_bytes)})"
    ws = working_set(options, storage, files)
    fits = ws is not None and limit is not None and ws[0] < limit
    shown = f"primarycache={zfs.primarycache}" if zfs.primarycache else "primarycache unknown, ZFS's default is all"
    fix = (
        f"zfs set primarycache=metadata {zfs.dataset} for the benchmark (set it back afterwards), "
        f"or make the test file larger than {'the ARC' if arc_max else 'the RAM'} "
        f"(size={_round_up_size((limit or mem_bytes or 0) * 1.25)})"
    )
    if ratio is not None and measured is not None and reads(options) and measured.arc_hits is not None:
        hits_text = f"{ratio * 100:.1f}% of the data lookups during the run were ARC hits ({measured.arc_hits} hits, {measured.arc_misses} misses)"
        if ratio >= ARC_HIT_INVALID_RATIO:
            return finding(
                "zfs-arc",
                "invalid",
                f"ZFS dataset {zfs.dataset} ({shown}) answered the reads from memory: {hits_text}; the figure is the ARC's, not the pool's",
                fix,
            )
        if ratio >= ARC_HIT_WARN_RATIO:
            return finding(
                "zfs-arc",
                "warning",
                f"ZFS dataset {zfs.dataset} ({shown}) served part of the reads from memory: {hits_text}",
                fix,
            )
        return None  # measured: the ARC did not answer the reads
    if not fits:
        return None
    assert ws is not None
    parts = []
    if reads(options):
        parts.append("reads can come from the ARC instead of the disks")
    if buffered(options) and writes(options):
        parts.append("buffered writes gather in memory")
    direct_note = "; direct=1 does not bypass the ARC before OpenZFS 2.3" if is_direct(options) and reads(options) else ""
    return finding(
        "zfs-arc",
        "warning",
        f"ZFS dataset {zfs.dataset} caches file data in the ARC ({shown}) and the {format_bytes(ws[0])} test file "
        f"({ws[1]}) fits in {limit_text}: {' and '.join(parts)}{direct_note}",
        fix,
    )


# --------------------------------------------------------------------------- server-cache


def _server_side(storage: StorageInfo | None) -> tuple[str, ZfsInfo] | None:
    """(what the target is, as the finding says it, its server's ZFS dataset) of a share, NFS
    export or iSCSI LUN whose server is this machine and stores it on ZFS; else None."""
    if storage is None:
        return None
    fs = storage.filesystem
    net = fs.network if fs is not None else None
    if fs is not None and net is not None and net.server_zfs is not None:
        return f"{fs.fstype} share of {net.share} from {net.server}", net.server_zfs
    e = storage.export
    if e is not None and e.server_zfs is not None:
        held = "LUN" if e.protocol == "iscsi" else "export"
        return f"{e.protocol} {held} {e.uri} (stored in {e.server_path})", e.server_zfs
    return None


def _server_cache(options: Options, storage: StorageInfo | None, files: Sequence[FileState] = (), backend: BackendActivity | None = None) -> Finding | None:
    side = _server_side(storage)
    if side is None or not reads(options) or (side[1].primarycache or "all").lower() != "all":
        return None
    what, zfs = side
    measured = backend.zfs if backend is not None else None
    where = f"{what}: on the server it is ZFS {'volume' if zfs.dataset_type == 'volume' else 'dataset'} {zfs.dataset} (primarycache=all)"
    fix = f"on the server, zfs set primarycache=metadata {zfs.dataset} for the benchmark (set it back afterwards), or use a test file larger than the server's RAM"
    if measured is not None and measured.arc_hit_ratio is not None and measured.arc_hits is not None:
        said = f"{measured.arc_hit_ratio * 100:.1f}% of the server's ARC data lookups during the run were hits ({measured.arc_hits} hits, {measured.arc_misses} misses)"
        if measured.arc_hit_ratio >= ARC_HIT_INVALID_RATIO:
            return finding("server-cache", "invalid", f"{where}; {said}: the server answered from memory, the figure is not its disks'", fix)
        if measured.arc_hit_ratio >= ARC_HIT_WARN_RATIO:
            return finding("server-cache", "warning", f"{where}; {said}: part of the reads came from the server's memory", fix)
        return None
    arc_max = zfs.arc.max_bytes if zfs.arc is not None else None
    ws = working_set(options, storage, files)
    if arc_max and ws is not None and ws[0] < arc_max:
        return finding(
            "server-cache", "warning",
            f"{where}, and the {format_bytes(ws[0])} test file fits its ARC (at most {format_bytes(arc_max)}): reads can come from the server's memory",
            fix,
        )  # fmt: skip
    return None


# --------------------------------------------------------------------------- faster-than-device


@dataclass(frozen=True)
class DeviceClass:
    label: str  # singular, e.g. "rotational disk"
    max_random_iops: float
    max_bw_bytes: float


HDD = DeviceClass("rotational disk", HDD_MAX_RANDOM_IOPS, HDD_MAX_BW_BYTES)
SATA_SSD = DeviceClass("SATA SSD", ANY_DEVICE_MAX_RANDOM_IOPS, SATA_MAX_BW_BYTES)
ANY_DEVICE = DeviceClass("block device", ANY_DEVICE_MAX_RANDOM_IOPS, ANY_DEVICE_MAX_BW_BYTES)


def device_class(dev: DeviceInfo) -> DeviceClass | None:
    """The class whose limits apply; None for loop and memory devices (no limit known).

    A virtual disk's rotational flag and transport are guesses of the hypervisor, so
    only the limits of any device apply to it.
    """
    if dev.type == "loop" or dev.kname.startswith("loop") or is_memory_device(dev):
        return None
    if is_virtual(dev):
        return ANY_DEVICE
    if dev.rotational is True:
        return HDD
    if dev.rotational is False and (dev.transport or "").lower() in ("sata", "ata"):
        return SATA_SSD
    return ANY_DEVICE


def _describe_devices(devices: Sequence[tuple[DeviceInfo, DeviceClass]]) -> str:
    groups: dict[str, list[str]] = {}
    for dev, cls in devices:
        groups.setdefault(cls.label, []).append(dev.kname)
    parts = []
    for label, names in groups.items():
        count = "one" if len(names) == 1 else str(len(names))
        plural = "" if len(names) == 1 else "s"
        parts.append(f"{count} {label}{plural} ({', '.join(names)})")
    return join(parts)


def _faster_than_device(ctx: CheckContext) -> Finding | None:
    storage = ctx.storage
    if storage is None or not storage.devices or not uses_kernel_io(ctx.options) or is_memory_fs(storage):
        return None
    leaves = leaf_devices(storage)
    classes = [(d, device_class(d)) for d in leaves]
    if not classes or any(c is None for _, c in classes):
        return None
    known = [(d, c) for d, c in classes if c is not None]
    max_iops = sum(c.max_random_iops for _, c in known)
    max_bw = sum(c.max_bw_bytes for _, c in known)
    where = _describe_devices(known)
    rnd = is_random(ctx.options)
    worst_iops = max(((total_iops(r), i) for i, r in enumerate(ctx.results)), default=(0.0, 0))
    worst_bw = max(((total_bw(r), i) for i, r in enumerate(ctx.results)), default=(0.0, 0))
    n = len(ctx.results)
    if rnd and worst_iops[0] > max_iops:
        measured = f"{fmt_count(worst_iops[0])} IOPS of random I/O{repetitions_text([worst_iops[1]], n)}"
        limit = f"about {fmt_count(max_iops)} IOPS"
    elif worst_bw[0] > max_bw:
        measured = f"{fmt_rate(worst_bw[0])}{repetitions_text([worst_bw[1]], n)}"
        limit = f"about {fmt_rate(max_bw)}"
    else:
        return None
    return finding(
        "faster-than-device",
        "warning",
        f"fio measured {measured}, but the target sits on {where}, which cannot deliver more than {limit}: "
        "a cache answered (page cache, controller or drive cache), or the kernel describes the device wrongly",
        "use direct=1 and a test file larger than every cache; if the device is faster than the kernel says (an SSD reported as rotational), ignore this",
    )


# --------------------------------------------------------------------------- entry points


def preflight_workload(options: Options, storage: StorageInfo | None, mem_bytes: int | None) -> list[Finding]:
    found = [_memory_target(options, storage), _small_file(options, storage, mem_bytes), _zfs_arc(options, storage, mem_bytes),
             _server_cache(options, storage)]  # fmt: skip
    return [f for f in found if f is not None]


def check(ctx: CheckContext) -> list[Finding]:
    files = ctx.files_after or ctx.files_before
    found = [
        _memory_target(ctx.options, ctx.storage),
        _small_file(ctx.options, ctx.storage, ctx.mem_bytes, files),
        _page_cache(ctx),
        _zfs_arc(ctx.options, ctx.storage, ctx.mem_bytes, files, ctx.backend),
        _server_cache(ctx.options, ctx.storage, files, ctx.backend),
        _faster_than_device(ctx),
    ]
    return [f for f in found if f is not None]
