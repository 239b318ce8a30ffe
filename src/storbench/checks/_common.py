"""What the check families share: reading fio options, summing fio results, choosing the
devices whose counters count, and writing numbers into messages.  Pure: no I/O.

Options are the effective job options as they stand in the job file: ``None`` is a
valueless flag (``time_based``), every other value is fio's text.  Nothing here raises on
an option fio would accept but storbench cannot read (``size=50%``): the reader returns
``None`` ("not known") and the check stays silent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storbench.errors import StorbenchError
from storbench.model import DirectionStats, Finding, FioResult, JobResult
from storbench.storage import MEMORY_FSTYPES, DeviceInfo, StorageInfo
from storbench.units import fio_bool, format_bytes, format_duration, parse_duration, parse_size

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from storbench.activity import ActivitySeries

Options = Mapping[str, "str | None"]

MiB = 1024**2
GiB = 1024**3


@dataclass(frozen=True)
class CheckInfo:
    """One check id in the registry (:data:`storbench.checks.CHECKS`).

    ``explanation`` says in one sentence what the finding means, ``evidence`` what
    triggers it, ``fix`` the usual remedy; ``severities`` are the severities it can
    have; ``preflight`` says whether :func:`storbench.checks.preflight` runs it too.
    """

    title: str
    explanation: str
    evidence: str
    fix: str = ""
    severities: tuple[str, ...] = ("warning",)
    preflight: bool = False


def fix_of(info: CheckInfo) -> str:
    """A check's usual fix as its findings say it, from the one place it is written (the family's
    ``INFO``): ``"Set randrepeat=0."`` -> ``"set randrepeat=0"``."""
    text = info.fix.strip().rstrip(".")
    return text[:1].lower() + text[1:]


def finding(check: str, severity: str, message: str, fix: str) -> Finding:
    return Finding(check=check, severity=severity, message=message, fix=fix)


# --------------------------------------------------------------------------- options



def has(options: Options, *keys: str) -> bool:
    return any(k in options for k in keys)


def text(options: Options, *keys: str) -> str | None:
    """The value of the first of ``keys`` present (aliases), stripped; None if absent or a bare flag."""
    for key in keys:
        if key in options:
            value = options[key]
            return None if value is None else str(value).strip()
    return None


def flag(options: Options, *keys: str, default: bool = False) -> bool:
    """A boolean option: a bare flag or ``1`` is on, ``0`` off; ``default`` when absent or unreadable."""
    for key in keys:
        if key in options:
            on = fio_bool(options[key])
            return default if on is None else on
    return default


def integer(options: Options, *keys: str, default: int | None = None) -> int | None:
    value = text(options, *keys)
    if value is None:
        return default
    for base in (10, 0):  # "32", then "0x20"
        try:
            return int(value, base)
        except ValueError:
            continue
    return default


def size(options: Options, *keys: str) -> int | None:
    """Bytes of a size option (the first of a ``r,w`` pair); None for ``50%`` or anything unreadable."""
    value = text(options, *keys)
    if not value:
        return None
    first = value.split(",")[0].split(":")[0].strip()
    try:
        return parse_size(first)
    except (StorbenchError, ValueError):
        return None


def seconds(options: Options, *keys: str) -> float | None:
    """Seconds of a time option (a bare number is seconds, as fio reads ``runtime``/``ramp_time``)."""
    value = text(options, *keys)
    if not value:
        return None
    try:
        return parse_duration(value)
    except (StorbenchError, ValueError):
        return None


# --------------------------------------------------------------------------- what a workload does

#: fio's ``rw`` modes that read / write / pick offsets at random.
READ_MODES = frozenset({"read", "randread", "rw", "readwrite", "randrw"})
WRITE_MODES = frozenset({"write", "randwrite", "rw", "readwrite", "randrw", "trimwrite", "randtrimwrite"})
RANDOM_MODES = frozenset({"randread", "randwrite", "randrw", "randtrim", "randtrimwrite"})

#: fio's default engine on Linux (fio 3.x).
DEFAULT_ENGINE = "psync"
#: Engines that move data through the kernel's file and block I/O paths, where the page
#: cache, O_DIRECT and the devices under the file matter.  ``null``, ``cpuio``, network
#: and RDMA engines, ``nbd``/``rbd``/``rados`` (the data lives elsewhere) are not among them.
FILE_ENGINES = frozenset(
    {
        "psync", "sync", "pvsync", "pvsync2", "vsync", "mmap", "splice",
        "libaio", "io_uring", "posixaio", "windowsaio", "solarisaio",
    }
)  # fmt: skip


def rw_mode(options: Options) -> str:
    value = text(options, "rw", "readwrite") or "read"
    return value.split(":")[0].strip().lower()


def reads(options: Options) -> bool:
    return rw_mode(options) in READ_MODES


def writes(options: Options) -> bool:
    return rw_mode(options) in WRITE_MODES


def is_random(options: Options) -> bool:
    if rw_mode(options) in RANDOM_MODES:
        return True
    return (integer(options, "percentage_random", default=0) or 0) > 0


def engine(options: Options) -> str:
    value = (text(options, "ioengine") or DEFAULT_ENGINE).lower()
    return value.split(":", 1)[1] if value.startswith("external:") else value


def uses_kernel_io(options: Options) -> bool:
    """True when the engine reads and writes through the kernel (page cache, O_DIRECT apply)."""
    return engine(options) in FILE_ENGINES


def is_direct(options: Options) -> bool:
    """O_DIRECT: ``direct=1`` (or ``buffered=0``); an explicit ``buffered=1`` means buffered."""
    if has(options, "buffered") and flag(options, "buffered"):
        return False
    if flag(options, "direct"):
        return True
    return has(options, "buffered") and not flag(options, "buffered")


def direct_text(options: Options) -> str:
    """How the options chose buffered I/O, for messages: ``direct=0``, ``buffered=1``, ``direct not set``."""
    if has(options, "buffered") and flag(options, "buffered"):
        return "buffered=1"
    if has(options, "direct"):
        return f"direct={text(options, 'direct') or '1'}"
    return "direct not set"


def sync_reasons(options: Options) -> list[str]:
    """The options that make writes wait for stable storage (O_SYNC, fsync, fdatasync, barriers)."""
    out: list[str] = []
    if has(options, "sync"):
        value = (text(options, "sync") or "1").lower()
        if value not in ("0", "none", "false", "no", "off"):
            out.append(f"sync={value}")
    for key in ("fsync", "fdatasync", "write_barrier"):
        n = integer(options, key, default=0) or 0
        if n > 0:
            out.append(f"{key}={n}")
    return out


def flush_reasons(options: Options) -> list[str]:
    """Everything that gets written data to the device before fio stops the clock."""
    out = sync_reasons(options)
    for key in ("end_fsync", "fsync_on_close"):
        if flag(options, key):
            out.append(f"{key}=1")
    return out


# --------------------------------------------------------------------------- fio results

COUNTED_DIRECTIONS = ("read", "write", "trim")


def jobs(result: FioResult) -> tuple[JobResult, ...]:
    """The jobs to add up: every job but a client/server run's "All clients" aggregate."""
    own = tuple(j for j in result.jobs if not j.is_aggregate)
    return own or result.jobs


def io_bytes(result: FioResult, direction: str) -> int:
    return sum(s.io_bytes for j in jobs(result) if (s := j.directions.get(direction)) is not None)


def _directions_of(job: JobResult) -> list[DirectionStats]:
    counted = [job.directions[d] for d in COUNTED_DIRECTIONS if d in job.directions]
    if not counted and "mixed" in job.directions:
        counted = [job.directions["mixed"]]
    return counted


def total_iops(result: FioResult) -> float:
    return math.fsum(s.iops for j in jobs(result) for s in _directions_of(j))


def total_bw(result: FioResult) -> float:
    """Bytes per second over all jobs and directions."""
    return math.fsum(s.bw_bytes for j in jobs(result) for s in _directions_of(j))


def mean_latency_ns(result: FioResult) -> float | None:
    """I/O-weighted mean total latency (completion latency where total was not kept); None if not measured."""
    weighted, count = [], 0
    for job in jobs(result):
        for s in _directions_of(job):
            lat = s.lat_ns or s.clat_ns
            if lat is None:
                if s.io_bytes:
                    return None
                continue
            n = s.total_ios or lat.samples or 0
            weighted.append(lat.mean_ns * n)
            count += n
    return math.fsum(weighted) / count if count else None


def runtime_s(result: FioResult) -> float | None:
    """The measured span of one fio run: the longest direction runtime of any job (job runtime as fallback)."""
    best: float | None = None
    for job in jobs(result):
        spans = [s.runtime_ms for s in job.directions.values() if s.runtime_ms]
        if not spans and job.job_runtime_ms:
            spans = [job.job_runtime_ms]
        for ms in spans:
            best = ms / 1000 if best is None else max(best, ms / 1000)
    return best


# --------------------------------------------------------------------------- devices

#: Kernel names of memory-backed block devices.
MEMORY_DEVICE_PREFIXES = ("zram", "ram", "brd")
#: Words in a device's model or vendor that mark it as virtual (its rotational flag is a guess).
VIRTUAL_WORDS = ("qemu", "vmware", "virtual", "vbox", "xen", "hyper-v", "msft")


def is_memory_fs(storage: StorageInfo | None) -> bool:
    return storage is not None and storage.filesystem is not None and storage.filesystem.fstype in MEMORY_FSTYPES


def top_devices(storage: StorageInfo) -> tuple[DeviceInfo, ...]:
    """Devices no other device of the chain is built on: what the filesystem (or target) sits on."""
    parents = {p for d in storage.devices for p in d.parents}
    return tuple(d for d in storage.devices if d.kname not in parents)


def leaf_devices(storage: StorageInfo) -> tuple[DeviceInfo, ...]:
    """The bottom of the chain: devices built on no other listed device (the physical disks)."""
    known = {d.kname for d in storage.devices}
    return tuple(d for d in storage.devices if not any(p in known for p in d.parents))


def is_virtual(dev: DeviceInfo) -> bool:
    if dev.transport == "virtio" or dev.kname.startswith(("vd", "xvd")):
        return True
    words = f"{dev.model or ''} {dev.vendor or ''}".lower()
    return any(w in words for w in VIRTUAL_WORDS)


def is_memory_device(dev: DeviceInfo) -> bool:
    return dev.kname.startswith(MEMORY_DEVICE_PREFIXES)


@dataclass(frozen=True)
class DeviceBytes:
    """What the devices under the target did during one run, from the activity sampler."""

    read_bytes: int
    write_bytes: int
    devices: tuple[str, ...]


def device_bytes(series: ActivitySeries | None, storage: StorageInfo | None) -> DeviceBytes | None:
    """Bytes the devices under the target moved during one run; None when not measured.

    With a storage description, the devices at the top of its chain (the ones the
    filesystem sits on; counting their parents too would count every byte twice), or its
    physical devices when the top was not sampled.  Without one, every sampled device
    (an upper bound: the checks that use it look for device bytes far *below* fio's).
    Incomplete totals (a device reset during the run) are a lower bound: None.
    """
    if series is None or not series.totals:
        return None
    if storage is not None and storage.devices:
        names = [d.kname for d in top_devices(storage) if d.kname in series.totals]
        if not names:
            names = [d.kname for d in leaf_devices(storage) if d.kname in series.totals]
    elif storage is not None:
        return None
    else:
        names = list(series.totals)
    if not names:
        return None
    totals = [series.totals[n] for n in names]
    if not all(t.complete for t in totals):
        return None
    return DeviceBytes(
        read_bytes=sum(t.read_bytes for t in totals),
        write_bytes=sum(t.write_bytes for t in totals),
        devices=tuple(names),
    )


def paired(results: Sequence[FioResult], activity: Sequence[ActivitySeries | None]) -> list[tuple[int, FioResult, ActivitySeries | None]]:
    """(repetition index, result, activity or None) for every repetition."""
    return [(i, r, activity[i] if i < len(activity) else None) for i, r in enumerate(results)]


# --------------------------------------------------------------------------- words and numbers


def fmt_pct(part: float, whole: float) -> str:
    """Share in percent: ``0%``, ``<0.1%``, ``3.1%``, ``100%``."""
    if whole <= 0:
        return "n/a"
    pct = 100.0 * part / whole
    if pct == 0:
        return "0%"
    if pct < 0.1:
        return "<0.1%"
    if pct >= 99.95 and pct < 100.05:
        return "100%"
    return f"{pct:.1f}%"


def fmt_count(x: float) -> str:
    return f"{x:,.0f}"


def fmt_rate(bytes_per_s: float) -> str:
    return f"{format_bytes(bytes_per_s)}/s"


def fmt_s(s: float) -> str:
    return format_duration(s)


def join(names: Iterable[str]) -> str:
    items = list(dict.fromkeys(names))
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def repetitions_text(indices: Sequence[int], total: int) -> str:
    """``""`` for a single run, else `` in repetition 2 of 3`` / `` in repetitions 2 and 3 of 3``."""
    if total <= 1:
        return ""
    numbers = [str(i + 1) for i in indices]
    word = "repetition" if len(numbers) == 1 else "repetitions"
    return f" in {word} {join(numbers)} of {total}"
