"""What the devices really did during a run, measured by the kernel (like ``iostat -x 1``).

fio says what it asked for; ``/proc/diskstats`` says what reached the block device.
Comparing the two proves cache hits (fio read 8 GiB, the disk read 40 MiB) and
compression or deduplication (fio wrote 16 GiB, the disk took 1.1 GiB).

The module is pure; its edge is :mod:`storbench.run.devices`:

* **Pure**: :func:`parse_diskstats`, :func:`parse_proc_stat_cpu` (text -> counters),
  :func:`device_rates`, :func:`cpu_rates` (two readings -> one sample),
  :func:`accumulate_totals` / :func:`totals_from_counters` (readings -> exact totals),
  :func:`compare_bytes` (fio bytes vs device bytes), :func:`activity_to_dict` /
  :func:`activity_from_dict` (the versioned stored form).
* **Edge** (:mod:`storbench.run.devices`): :class:`~storbench.run.devices.ActivitySampler`, a context manager around the fio run whose
  background thread reads ``/proc/diskstats`` and ``/proc/stat`` once per interval.

Counters (kernel ``Documentation/admin-guide/iostats.rst``)
-----------------------------------------------------------
``/proc/diskstats`` lines have 3 leading fields (major, minor, name) and then

* 11 statistics (kernels before 4.18): 14 fields in all;
* 15 statistics (4.18+, adds discards): 18 fields;
* 17 statistics (5.5+, adds flushes): 20 fields.

Fields a layout lacks are ``None`` (not measured), never 0.  Lines longer than 20
fields (a future kernel appending statistics) are read for their first 20 fields.
The 7-field partition lines of kernels before 2.6.25 are refused.

Sector counts are always in 512-byte units, whatever the device's logical block size.

Wrapping and resets
-------------------
The time fields (``*_ms``) are ``unsigned int`` in the kernel -- 32 bits even on
64-bit machines -- and the counts (I/Os, merges, sectors) are ``unsigned long``
(32 or 64 bits: ``long_bits``).  A counter that went down between two readings is
taken as one wrap of its width when that gives a plausible delta (less than half the
width); otherwise the device was reset or replaced (a loop device detached and
attached again, a dm table recreated; a change of major:minor says the same), the
interval's deltas are unknown, its rates are ``None`` and the totals are marked
incomplete.  With 64-bit counts every decrease of a count is a reset.

Everything here is bytes, milliseconds and percent (0-100); see ``model.py``.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from storbench.errors import StorbenchError, StoreError
from storbench.jsontypes import JSONMapping, JSONObject, JSONValue

from .model import versions

#: /proc/diskstats counts sectors of 512 bytes regardless of the device's block size.
SECTOR_BYTES = 512

#: Version of the stored form of an :class:`ActivitySeries`.
ACTIVITY_FORMAT_VERSION = versions.ACTIVITY  # the history: storbench.model.versions

#: Width of the kernel's ``unsigned long`` counters on this machine (assumes user space
#: and kernel have the same word size).
NATIVE_LONG_BITS = 64 if sys.maxsize > 2**32 else 32

#: The time fields of /proc/diskstats are ``unsigned int`` everywhere.
_TIME_BITS = 32

#: The last, partial interval (between the last periodic reading and stop) becomes a
#: sample only when it is at least this fraction of the interval; shorter spans give
#: noisy rates.  Its I/O always counts in the totals.
MIN_FINAL_FRACTION = 0.25

#: At most this many notes are kept per sampler; later ones are counted in one last note.
MAX_NOTES = 50


class ProcParseError(StorbenchError):
    """Text that is not a /proc/diskstats or /proc/stat this module understands."""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class DiskCounters:
    """One line of /proc/diskstats: cumulative counters since boot (``in_flight`` is a gauge)."""

    major: int
    minor: int
    name: str  # kernel name: "vda", "vda1", "loop0", "dm-0", "nvme0n1"
    reads: int
    reads_merged: int
    read_sectors: int
    read_ms: int
    writes: int
    writes_merged: int
    write_sectors: int
    write_ms: int
    in_flight: int
    io_ms: int  # time with at least one I/O in flight ("io_ticks")
    weighted_io_ms: int  # time in queue weighted by I/Os in flight ("time_in_queue")
    discards: int | None = None  # None: kernel before 4.18 (14-field layout)
    discards_merged: int | None = None
    discard_sectors: int | None = None
    discard_ms: int | None = None
    flushes: int | None = None  # None: kernel before 5.5 (14- or 18-field layout)
    flush_ms: int | None = None

    @property
    def read_bytes(self) -> int:
        return self.read_sectors * SECTOR_BYTES

    @property
    def write_bytes(self) -> int:
        return self.write_sectors * SECTOR_BYTES

    @property
    def discard_bytes(self) -> int | None:
        return None if self.discard_sectors is None else self.discard_sectors * SECTOR_BYTES


@dataclass(frozen=True)
class CpuCounters:
    """The aggregate ``cpu`` line of /proc/stat, in USER_HZ ticks (guest time is inside user/nice)."""

    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int


@dataclass(frozen=True)
class DeviceSample:
    """What one device did during one interval, as rates (``iostat -x`` columns).

    ``t_s`` is the end of the interval in seconds since the sampler started;
    ``interval_s`` its measured length.  Every rate is ``None`` when the interval's
    counters are unknown (device reset); ``r_await_ms`` / ``w_await_ms`` are also
    ``None`` when no read / write completed in the interval, and
    ``discard_bytes_per_s`` when the kernel does not count discards.
    """

    t_s: float
    device: str
    interval_s: float
    reads_per_s: float | None
    writes_per_s: float | None
    read_bytes_per_s: float | None
    write_bytes_per_s: float | None
    discard_bytes_per_s: float | None
    avg_queue_size: float | None  # iostat aqu-sz: weighted_io_ms delta / interval ms
    r_await_ms: float | None  # read_ms delta / reads delta
    w_await_ms: float | None  # write_ms delta / writes delta
    util_pct: float | None  # io_ms delta / interval ms * 100, capped at 100


@dataclass(frozen=True)
class CpuSample:
    """Where the CPUs spent one interval, in percent of all CPU time (the five add up to 100).

    ``user_pct`` includes nice, ``system_pct`` includes hard and soft interrupts (as
    iostat's ``%system``).  All are ``None`` when no tick passed in the interval.
    """

    t_s: float
    interval_s: float
    user_pct: float | None
    system_pct: float | None
    iowait_pct: float | None
    steal_pct: float | None
    idle_pct: float | None


@dataclass(frozen=True)
class DeviceTotals:
    """What one device did over the whole sampled span, in exact integers.

    ``complete`` is False when some interval's counters were unknown (device reset);
    the totals then cover only the known intervals and are a lower bound.
    ``discard_bytes`` is ``None`` when the kernel does not count discards.
    """

    reads: int
    writes: int
    read_bytes: int
    write_bytes: int
    discard_bytes: int | None
    complete: bool = True


@dataclass(frozen=True)
class ActivitySeries:
    """Everything an :class:`ActivitySampler` saw during one run.

    ``devices`` are the requested devices that were present when sampling started
    (others are in ``notes``); ``samples`` hold all devices' samples in time order;
    ``totals`` maps each of ``devices`` to its :class:`DeviceTotals` from the first to
    the last reading (start to stop).  ``duration_s`` is that span; ``None`` if unknown.
    """

    interval_s: float
    devices: tuple[str, ...]
    samples: tuple[DeviceSample, ...]
    cpu: tuple[CpuSample, ...]
    totals: Mapping[str, DeviceTotals]
    duration_s: float | None = None
    notes: tuple[str, ...] = ()

    def samples_for(self, device: str) -> tuple[DeviceSample, ...]:
        """The samples of one device, in time order."""
        return tuple(s for s in self.samples if s.device == device)


@dataclass(frozen=True)
class BytesComparison:
    """fio's bytes against the device's bytes for one run.

    ``read_ratio`` / ``write_ratio`` are device bytes / fio bytes: about 1 when I/O
    went straight to the device, far below 1 for cache hits or compression, above 1
    for read-ahead or write amplification.  A ratio is ``None`` (cannot decide) when
    fio moved no bytes in that direction or the device totals are incomplete.
    """

    fio_read_bytes: int
    fio_write_bytes: int
    device_read_bytes: int
    device_write_bytes: int
    read_ratio: float | None
    write_ratio: float | None


# --------------------------------------------------------------------------- parsing

_STAT_LAYOUTS = (11, 15, 17)  # statistics after major, minor, name


def _uint(token: str, what: str) -> int:
    if not (token.isascii() and token.isdigit()):
        raise ProcParseError(f"{what}: {token!r} is not a non-negative integer")
    return int(token)


def parse_diskstats(text: str) -> dict[str, DiskCounters]:
    """Parse /proc/diskstats text into counters by kernel device name, in file order.

    Accepts the 14-, 18- and 20-field layouts (and longer lines, reading their first
    20 fields).  Raises :class:`ProcParseError` for any other line.
    """
    out: dict[str, DiskCounters] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if not tokens:
            continue
        n_stats = len(tokens) - 3
        if n_stats > 17:
            n_stats = 17
        if n_stats not in _STAT_LAYOUTS:
            raise ProcParseError(
                f"/proc/diskstats line {lineno}: {len(tokens)} fields, expected 14, 18 or 20: {line.strip()!r}"
            )
        where = f"/proc/diskstats line {lineno}"
        major = _uint(tokens[0], where)
        minor = _uint(tokens[1], where)
        name = tokens[2]
        v = [_uint(t, where) for t in tokens[3 : 3 + n_stats]]
        extra: dict[str, int] = {}
        if n_stats >= 15:
            extra.update(discards=v[11], discards_merged=v[12], discard_sectors=v[13], discard_ms=v[14])
        if n_stats >= 17:
            extra.update(flushes=v[15], flush_ms=v[16])
        out[name] = DiskCounters(
            major=major,
            minor=minor,
            name=name,
            reads=v[0],
            reads_merged=v[1],
            read_sectors=v[2],
            read_ms=v[3],
            writes=v[4],
            writes_merged=v[5],
            write_sectors=v[6],
            write_ms=v[7],
            in_flight=v[8],
            io_ms=v[9],
            weighted_io_ms=v[10],
            **extra,
        )
    return out


def parse_proc_stat_cpu(text: str) -> CpuCounters:
    """Parse the aggregate ``cpu`` line of /proc/stat (the first 8 columns; guest columns are ignored)."""
    for line in text.splitlines():
        tokens = line.split()
        if tokens and tokens[0] == "cpu":
            if len(tokens) < 9:
                raise ProcParseError(
                    f"/proc/stat: the cpu line has {len(tokens) - 1} columns, expected at least 8 "
                    f"(user nice system idle iowait irq softirq steal): {line.strip()!r}"
                )
            v = [_uint(t, "/proc/stat cpu line") for t in tokens[1:9]]
            return CpuCounters(*v)
    raise ProcParseError("/proc/stat: no aggregate 'cpu' line")


# --------------------------------------------------------------------------- deltas and rates


def _delta(prev: int, cur: int, bits: int) -> int | None:
    """``cur - prev`` for a counter ``bits`` wide, allowing one wrap; ``None`` when implausible."""
    if cur >= prev:
        return cur - prev
    width = 1 << bits
    if prev >= width:
        return None
    d = cur + width - prev
    return d if d < width // 2 else None


def _optional_delta(prev: int | None, cur: int | None, bits: int) -> tuple[bool, int | None]:
    """(ok, delta) for a field a layout may lack: (True, None) when either side lacks it."""
    if prev is None or cur is None:
        return True, None
    d = _delta(prev, cur, bits)
    return d is not None, d


_COUNT_FIELDS = ("reads", "reads_merged", "read_sectors", "writes", "writes_merged", "write_sectors")
_TIME_FIELDS = ("read_ms", "write_ms", "io_ms", "weighted_io_ms")
_OPTIONAL_FIELDS = (
    ("discards", False),
    ("discards_merged", False),
    ("discard_sectors", False),
    ("discard_ms", True),
    ("flushes", False),
    ("flush_ms", True),
)


def counter_deltas(prev: DiskCounters, cur: DiskCounters, *, long_bits: int = 64) -> DiskCounters | None:
    """Per-field increase from ``prev`` to ``cur`` as a :class:`DiskCounters` (``in_flight`` is ``cur``'s).

    ``None`` when the device was reset or replaced in between (see the module doc).
    """
    if (prev.major, prev.minor, prev.name) != (cur.major, cur.minor, cur.name):
        return None
    values: JSONObject = {}
    for name in _COUNT_FIELDS:
        d = _delta(getattr(prev, name), getattr(cur, name), long_bits)
        if d is None:
            return None
        values[name] = d
    for name in _TIME_FIELDS:
        d = _delta(getattr(prev, name), getattr(cur, name), _TIME_BITS)
        if d is None:
            return None
        values[name] = d
    for name, is_time in _OPTIONAL_FIELDS:
        ok, d = _optional_delta(getattr(prev, name), getattr(cur, name), _TIME_BITS if is_time else long_bits)
        if not ok:
            return None
        values[name] = d
    return DiskCounters(major=cur.major, minor=cur.minor, name=cur.name, in_flight=cur.in_flight, **values)


def device_rates(
    prev: DiskCounters,
    cur: DiskCounters,
    interval_s: float,
    *,
    t_s: float = 0.0,
    long_bits: int = 64,
) -> DeviceSample:
    """Rates of one device between two readings ``interval_s`` apart (iostat -x arithmetic)."""
    if not interval_s > 0:
        raise ValueError(f"interval_s must be positive, got {interval_s!r}")
    d = counter_deltas(prev, cur, long_bits=long_bits)
    if d is None:
        return DeviceSample(t_s, cur.name, interval_s, None, None, None, None, None, None, None, None, None)
    interval_ms = interval_s * 1000.0
    return DeviceSample(
        t_s=t_s,
        device=cur.name,
        interval_s=interval_s,
        reads_per_s=d.reads / interval_s,
        writes_per_s=d.writes / interval_s,
        read_bytes_per_s=d.read_bytes / interval_s,
        write_bytes_per_s=d.write_bytes / interval_s,
        discard_bytes_per_s=None if d.discard_bytes is None else d.discard_bytes / interval_s,
        avg_queue_size=d.weighted_io_ms / interval_ms,
        r_await_ms=d.read_ms / d.reads if d.reads else None,
        w_await_ms=d.write_ms / d.writes if d.writes else None,
        util_pct=min(100.0, d.io_ms / interval_ms * 100.0),
    )


def cpu_rates(prev: CpuCounters, cur: CpuCounters, *, t_s: float = 0.0, interval_s: float = 0.0) -> CpuSample:
    """CPU time shares between two /proc/stat readings.

    A column that went down (the kernel's iowait can, on tickless systems) counts as 0.
    """
    d = {f.name: max(0, getattr(cur, f.name) - getattr(prev, f.name)) for f in dataclasses.fields(CpuCounters)}
    total = sum(d.values())
    if total == 0:
        return CpuSample(t_s, interval_s, None, None, None, None, None)
    pct = 100.0 / total
    return CpuSample(
        t_s=t_s,
        interval_s=interval_s,
        user_pct=(d["user"] + d["nice"]) * pct,
        system_pct=(d["system"] + d["irq"] + d["softirq"]) * pct,
        iowait_pct=d["iowait"] * pct,
        steal_pct=d["steal"] * pct,
        idle_pct=d["idle"] * pct,
    )


# --------------------------------------------------------------------------- totals


def accumulate_totals(
    totals: DeviceTotals | None, prev: DiskCounters, cur: DiskCounters, *, long_bits: int = 64
) -> DeviceTotals:
    """``totals`` plus what the device did from ``prev`` to ``cur`` (exact integers, not rates).

    Start from ``None``.  Over readings without a reset the result equals the last
    reading minus the first (wraps undone); an unknown interval sets ``complete=False``.
    """
    if totals is None:
        discard0 = 0 if prev.discard_sectors is not None else None
        totals = DeviceTotals(0, 0, 0, 0, discard0, True)
    d = counter_deltas(prev, cur, long_bits=long_bits)
    if d is None:
        return dataclasses.replace(totals, complete=False)
    discard = None
    if totals.discard_bytes is not None and d.discard_bytes is not None:
        discard = totals.discard_bytes + d.discard_bytes
    return DeviceTotals(
        reads=totals.reads + d.reads,
        writes=totals.writes + d.writes,
        read_bytes=totals.read_bytes + d.read_bytes,
        write_bytes=totals.write_bytes + d.write_bytes,
        discard_bytes=discard,
        complete=totals.complete,
    )


def totals_from_counters(readings: Sequence[DiskCounters], *, long_bits: int = 64) -> DeviceTotals:
    """Totals over successive readings of one device (at least one)."""
    if not readings:
        raise ValueError("totals need at least one reading")
    totals: DeviceTotals | None = None
    if len(readings) == 1:
        return accumulate_totals(None, readings[0], readings[0], long_bits=long_bits)
    for prev, cur in itertools.pairwise(readings):
        totals = accumulate_totals(totals, prev, cur, long_bits=long_bits)
    assert totals is not None
    return totals


def compare_bytes(fio_read_bytes: int, fio_write_bytes: int, totals: DeviceTotals) -> BytesComparison:
    """Device bytes against fio bytes; see :class:`BytesComparison`."""
    if fio_read_bytes < 0 or fio_write_bytes < 0:
        raise ValueError("fio byte counts cannot be negative")

    def ratio(device: int, fio: int) -> float | None:
        if fio == 0 or not totals.complete:
            return None
        return device / fio

    return BytesComparison(
        fio_read_bytes=fio_read_bytes,
        fio_write_bytes=fio_write_bytes,
        device_read_bytes=totals.read_bytes,
        device_write_bytes=totals.write_bytes,
        read_ratio=ratio(totals.read_bytes, fio_read_bytes),
        write_ratio=ratio(totals.write_bytes, fio_write_bytes),
    )


# --------------------------------------------------------------------------- stored form


def _encode_flat(obj: Any) -> JSONObject:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


def _decode_flat(cls: type, data: JSONValue) -> Any:
    if not isinstance(data, Mapping):
        raise StoreError(
            f"stored activity is malformed: expected an object for {cls.__name__}, got {type(data).__name__}"
        )
    kwargs: JSONObject = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            kwargs[f.name] = data[f.name]
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise StoreError(f"stored activity is malformed: {cls.__name__} lacks {f.name!r}")
    return cls(**kwargs)


def activity_to_dict(series: ActivitySeries) -> JSONObject:
    """The stored, JSON-compatible form; :func:`activity_from_dict` inverts it exactly."""
    return {
        "format_version": ACTIVITY_FORMAT_VERSION,
        "interval_s": series.interval_s,
        "duration_s": series.duration_s,
        "devices": list(series.devices),
        "samples": [_encode_flat(s) for s in series.samples],
        "cpu": [_encode_flat(c) for c in series.cpu],
        "totals": {name: _encode_flat(t) for name, t in series.totals.items()},
        "notes": list(series.notes),
    }


def activity_from_dict(data: JSONMapping) -> ActivitySeries:
    """Rebuild an :class:`ActivitySeries`; raises :class:`StoreError` for a newer version or malformed data."""
    if not isinstance(data, Mapping):
        raise StoreError(f"stored activity is malformed: expected an object, got {type(data).__name__}")
    version = data.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise StoreError(f"stored activity is malformed: format_version is {version!r}, expected an integer")
    if version > ACTIVITY_FORMAT_VERSION:
        raise StoreError(
            f"stored activity has format version {version}, this storbench reads up to "
            f"{ACTIVITY_FORMAT_VERSION}; upgrade storbench"
        )
    try:
        return ActivitySeries(
            interval_s=data["interval_s"],
            devices=tuple(data["devices"]),
            samples=tuple(_decode_flat(DeviceSample, s) for s in data["samples"]),
            cpu=tuple(_decode_flat(CpuSample, c) for c in data["cpu"]),
            totals={name: _decode_flat(DeviceTotals, t) for name, t in data["totals"].items()},
            duration_s=data.get("duration_s"),
            notes=tuple(data.get("notes", ())),
        )
    except StoreError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StoreError(f"stored activity is malformed: {exc!r}") from exc
