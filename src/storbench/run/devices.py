"""The edge of :mod:`storbench.activity`: :class:`ActivitySampler`, a context manager around a fio run
whose background thread reads ``/proc/diskstats`` and ``/proc/stat`` once per interval (the
kernel's own counters, like ``iostat -x 1``), and :func:`kernel_names` (the kernel's names of the
devices under paths)."""

from __future__ import annotations

import math
import os
import stat as stat_mod
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..activity import (
    MAX_NOTES,
    MIN_FINAL_FRACTION,
    NATIVE_LONG_BITS,
    ActivitySeries,
    CpuCounters,
    CpuSample,
    DeviceSample,
    DeviceTotals,
    DiskCounters,
    ProcParseError,
    accumulate_totals,
    counter_deltas,
    cpu_rates,
    device_rates,
    parse_diskstats,
    parse_proc_stat_cpu,
)


def _read_text(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


class ActivitySampler:
    """Samples /proc/diskstats and /proc/stat while a run goes on.

    Use it as a context manager entered right before fio starts and left right after
    it ends::

        with ActivitySampler(["nvme0n1"], interval_s=1.0) as sampler:
            run_fio(...)
        series = sampler.series()

    Counters are read once on entry, once per ``interval_s`` by a background thread
    (timed with :class:`threading.Event`, no drift, no subprocesses), and once on
    exit, so the totals cover the whole run even when it is shorter than one interval.
    Nothing raises once sampling has started: unreadable or unparsable files, devices
    missing at start or vanishing later, and resets become ``notes``.

    ``devices`` are kernel names as in /proc/diskstats ("vda", "vda1", "loop0",
    "dm-0", "md0"), not paths.  ``clock`` (monotonic seconds) can be swapped in tests.
    """

    def __init__(
        self,
        devices: Sequence[str],
        interval_s: float = 1.0,
        proc_root: str = "/proc",
        *,
        clock: Callable[[], float] = time.monotonic,
        long_bits: int = NATIVE_LONG_BITS,
    ) -> None:
        if isinstance(devices, str):
            raise TypeError("devices must be a sequence of kernel device names, not one string")
        if not (isinstance(interval_s, (int, float)) and math.isfinite(interval_s) and interval_s > 0):
            raise ValueError(f"interval_s must be a positive number of seconds, got {interval_s!r}")
        self._requested: tuple[str, ...] = tuple(dict.fromkeys(devices))
        self._interval_s = float(interval_s)
        self._diskstats_path = os.path.join(proc_root, "diskstats")
        self._stat_path = os.path.join(proc_root, "stat")
        self._clock = clock
        self._long_bits = long_bits

        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = False
        self._stopped = False
        self._t0 = 0.0
        self._t_last: float | None = None  # seconds since start of the latest reading

        self._devices: list[str] = []
        self._prev_disk: dict[str, tuple[float, DiskCounters]] = {}
        self._totals: dict[str, DeviceTotals] = {}
        self._prev_cpu: tuple[float, CpuCounters] | None = None
        self._samples: list[DeviceSample] = []
        self._cpu: list[CpuSample] = []
        self._notes: list[str] = []
        self._suppressed_notes = 0
        self._noted_once: set[str] = set()

    # -- lifecycle

    def __enter__(self) -> ActivitySampler:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        """Take the first reading and start the background thread."""
        if self._started:
            raise RuntimeError("an ActivitySampler can be started only once")
        self._started = True
        self._t0 = self._clock()
        self._safe_reading(initial=True, final=False)
        self._thread = threading.Thread(target=self._run, name="storbench-activity", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and take the last reading; calling it again does nothing."""
        if not self._started or self._stopped:
            return
        self._stopped = True
        self._stop_event.set()
        if self._thread is not None:
            self._thread.join()
        self._safe_reading(initial=False, final=True)

    def latest(self) -> tuple[DeviceSample, ...]:
        """The newest sample of each device (what the devices are doing now), in device order."""
        with self._lock:
            newest: dict[str, DeviceSample] = {}
            for sample in reversed(self._samples):
                if sample.device not in newest:
                    newest[sample.device] = sample
                if len(newest) == len(self._devices):
                    break
            return tuple(newest[d] for d in self._devices if d in newest)

    def series(self) -> ActivitySeries:
        """What was sampled so far (all of it once stopped)."""
        if not self._started:
            raise RuntimeError("the ActivitySampler has not been started")
        with self._lock:
            notes = list(self._notes)
            if self._suppressed_notes:
                notes.append(f"{self._suppressed_notes} further notes were left out")
            return ActivitySeries(
                interval_s=self._interval_s,
                devices=tuple(self._devices),
                samples=tuple(self._samples),
                cpu=tuple(self._cpu),
                totals={d: self._totals[d] for d in self._devices if d in self._totals},
                duration_s=self._t_last,
                notes=tuple(notes),
            )

    # -- the thread

    def _run(self) -> None:
        try:
            k = 1
            while True:
                deadline = self._t0 + k * self._interval_s
                if self._stop_event.wait(max(0.0, deadline - self._clock())):
                    return
                self._safe_reading(initial=False, final=False)
                # skip deadlines missed while the machine stalled instead of bursting
                behind = int((self._clock() - self._t0) / self._interval_s)
                k = max(k + 1, behind + 1)
        except BaseException as exc:  # never let the thread die with a traceback
            self._note(f"activity sampling stopped early: {exc!r}")

    # -- readings

    def _note(self, message: str, *, once_key: str | None = None) -> None:
        with self._lock:
            key = once_key if once_key is not None else message
            if key in self._noted_once:
                return
            self._noted_once.add(key)
            if len(self._notes) >= MAX_NOTES:
                self._suppressed_notes += 1
            else:
                self._notes.append(message)

    def _safe_reading(self, *, initial: bool, final: bool) -> None:
        try:
            self._reading(initial=initial, final=final)
        except Exception as exc:
            self._note(f"activity reading failed: {exc!r}", once_key=f"failed:{type(exc).__name__}")

    def _reading(self, *, initial: bool, final: bool) -> None:
        t = self._clock() - self._t0
        disks: dict[str, DiskCounters] | None = None
        cpu: CpuCounters | None = None
        try:
            disks = parse_diskstats(_read_text(self._diskstats_path))
        except (OSError, ProcParseError) as exc:
            self._note(f"cannot read {self._diskstats_path}: {exc}", once_key="diskstats")
        try:
            cpu = parse_proc_stat_cpu(_read_text(self._stat_path))
        except (OSError, ProcParseError) as exc:
            self._note(f"cannot read {self._stat_path}: {exc}", once_key="stat")

        if initial:
            self._first_reading(t, disks, cpu)
            return

        min_span = self._interval_s * MIN_FINAL_FRACTION if final else 0.0
        new_samples: list[DeviceSample] = []
        new_cpu: list[CpuSample] = []
        vanished: list[str] = []
        resets: list[str] = []
        with self._lock:
            self._t_last = t
            for dev in self._devices:
                prev = self._prev_disk.get(dev)
                cur = None if disks is None else disks.get(dev)
                if cur is None or prev is None:
                    if disks is not None and cur is None:
                        vanished.append(dev)
                    if cur is not None:
                        self._prev_disk[dev] = (t, cur)
                    continue
                t_prev, prev_counters = prev
                self._totals[dev] = accumulate_totals(
                    self._totals.get(dev), prev_counters, cur, long_bits=self._long_bits
                )
                span = t - t_prev
                if span > 0 and span >= min_span:
                    sample = device_rates(prev_counters, cur, span, t_s=t, long_bits=self._long_bits)
                    if sample.reads_per_s is None:
                        resets.append(dev)
                    new_samples.append(sample)
                elif counter_deltas(prev_counters, cur, long_bits=self._long_bits) is None:
                    resets.append(dev)
                self._prev_disk[dev] = (t, cur)
            if cpu is not None:
                if self._prev_cpu is not None:
                    t_prev, prev_cpu = self._prev_cpu
                    span = t - t_prev
                    if span > 0 and span >= min_span:
                        new_cpu.append(cpu_rates(prev_cpu, cpu, t_s=t, interval_s=span))
                self._prev_cpu = (t, cpu)
            self._samples.extend(new_samples)
            self._cpu.extend(new_cpu)
        for dev in vanished:
            self._note(f"device {dev!r} vanished from diskstats at {t:.2f} s", once_key=f"vanished:{dev}")
        for dev in resets:
            self._note(
                f"counters of {dev!r} went backwards at {t:.2f} s (device reset or replaced); "
                "its totals are incomplete",
                once_key=f"reset:{dev}",
            )

    def _first_reading(self, t: float, disks: Mapping[str, DiskCounters] | None, cpu: CpuCounters | None) -> None:
        missing: list[str] = []
        with self._lock:
            self._t_last = t
            if cpu is not None:
                self._prev_cpu = (t, cpu)
            if disks is None:
                return
            for dev in self._requested:
                counters = disks.get(dev)
                if counters is None:
                    missing.append(dev)
                    continue
                self._devices.append(dev)
                self._prev_disk[dev] = (t, counters)
                self._totals[dev] = accumulate_totals(None, counters, counters, long_bits=self._long_bits)
        for dev in missing:
            hint = " (give the kernel name, e.g. 'vda', not a path)" if "/" in dev else ""
            self._note(f"device {dev!r} is not in {self._diskstats_path}; not sampled{hint}")


def kernel_names(paths: Iterable[str]) -> tuple[str, ...]:
    """Kernel names of block device paths (``/dev/vda`` -> ``vda``, ``/dev/mapper/x`` -> ``dm-0``).

    Touches the file system (resolves symlinks); paths that are not block devices are left out.
    """
    out: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        try:
            if stat_mod.S_ISBLK(os.stat(real).st_mode):
                out.append(os.path.basename(real))
        except OSError:
            continue
    return tuple(out)
