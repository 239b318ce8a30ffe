"""Recording a device's block requests through the kernel's tracefs block events.

What it does to the machine, and undoes: mounts tracefs at ``/sys/kernel/tracing`` if no tracefs
is mounted (unmounted after); sets the ``block_rq_issue`` and ``block_rq_complete`` events'
filters to the one device (``dev == major << 20 | minor``: the kernel takes a plain number, not an
expression), enables them, grows the per-CPU buffer if asked; afterwards the events are disabled
and the filters, buffer size and ``tracing_on`` are what they were.  Events already enabled by
someone else are left alone: the capture is refused, in one line.  One capture at a time on a
machine (a lock file): the tracing state is global.

Lost events are counted from each CPU's ``stats`` (``overrun``, ``dropped events``) and from
``trace_pipe``'s ``[LOST N EVENTS]`` lines.  What ``trace_pipe`` gives is spooled unread into a
temporary file (on another device than the traced one) and read after the recording.  A stop (Ctrl-C, SIGTERM) ends the recording and keeps
what was read; the events still in the buffer are drained first.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import platform
import re
import resource
import select
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from storbench.errors import StorbenchError, UsageError
from storbench.process import proc, signals
from storbench.trace.events import Trace, TraceMeta
from storbench.trace.tracefs import TracefsReader

from .device import TracedDevice

MOUNTS: tuple[Path, ...] = (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing"))
EVENTS: tuple[str, ...] = ("block_rq_issue", "block_rq_complete")
LOCK_PATH = Path("/run/storbench-capture.lock")
READ_BYTES = 1 << 20
#: how often the kernel's buffer is emptied while recording (it holds about 20,000 events a CPU
#: at its default size: at 10,000 events a second, a tenth of a second is 1,000)
PUMP_S = 0.1
_STAT = re.compile(r"^(overrun|dropped events):\s*(\d+)", re.MULTILINE)


class CaptureError(StorbenchError):
    """The kernel's tracing cannot be used here (one line: what, and why)."""


@dataclass(frozen=True)
class Captured:
    trace: Trace
    stopped_by: str  # "time", "command", "Ctrl-C", "SIGTERM"
    command_status: int | None


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _lost_counters(root: Path) -> int:
    total = 0
    for stats in sorted((root / "per_cpu").glob("cpu*/stats")):
        with contextlib.suppress(OSError):
            total += sum(int(n) for _, n in _STAT.findall(stats.read_text()))
    return total


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise CaptureError("capture: another storbench capture is tracing on this machine (the kernel's tracing is one for all); wait for it to end") from exc
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def tracefs_root() -> Iterator[Path]:
    """A tracefs with block events: the mounted one, else one storbench mounts (and unmounts)."""
    for root in MOUNTS:
        if (root / "events" / "block" / EVENTS[0]).exists():
            yield root
            return
    root = MOUNTS[0]
    if not root.is_dir():
        raise CaptureError(f"capture: this kernel has no {root} to mount tracefs on (it was built without tracing)")
    done = proc.run(["mount", "-t", "tracefs", "nodev", str(root)], timeout_s=10)
    if done.returncode != 0:
        raise CaptureError(f"capture: cannot mount tracefs on {root}: {proc.last_line(done.stderr)} (run as root)")
    try:
        if not (root / "events" / "block" / EVENTS[0]).exists():
            raise CaptureError("capture: this kernel's tracefs has no block_rq_issue event (CONFIG_BLK_DEV_IO_TRACE is off)")
        yield root
    finally:
        with signals.held():
            proc.run(["umount", str(root)], timeout_s=10)


@contextlib.contextmanager
def _events_on(root: Path, dev: TracedDevice, buffer_kb: int | None) -> Iterator[None]:
    block = root / "events" / "block"
    saved: list[tuple[Path, str]] = []
    for event in EVENTS:
        if (block / event / "enable").read_text().strip() != "0":
            raise CaptureError(f"capture: the kernel's {event} event is already enabled by something else; storbench leaves it alone (disable it, or wait)")
    try:
        for path in (*(block / e / "filter" for e in EVENTS), root / "buffer_size_kb", root / "tracing_on"):
            text = path.read_text().strip()
            saved.append((path, "0" if path.name == "filter" and text == "none" else text))
        if buffer_kb is not None:
            _write(root / "buffer_size_kb", str(buffer_kb))
        for event in EVENTS:
            _write(block / event / "filter", f"dev == {dev.tracefs_dev}")
            if str(dev.tracefs_dev) not in (block / event / "filter").read_text():
                raise CaptureError(f"capture: the kernel did not take the device filter of {event}")
        for event in EVENTS:
            _write(block / event / "enable", "1")
        _write(root / "tracing_on", "1")
        yield
    finally:
        with signals.held():
            for event in EVENTS:
                with contextlib.suppress(OSError):
                    _write(block / event / "enable", "0")
            for path, text in saved:
                with contextlib.suppress(OSError):
                    _write(path, text)


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def capture(
    dev: TracedDevice,
    *,
    label: str,
    seconds: float | None,
    command: Sequence[str] = (),
    buffer_kb: int | None = None,
    storage: dict[str, object] | None = None,
    clock: Callable[[], str] | None = None,
    on_start: Callable[[], None] | None = None,
    spool_dir: str | None = None,
) -> Captured:
    """Record ``dev``'s requests for ``seconds``, or while ``command`` runs (whichever ends
    first), or until a stop.  Raises :class:`CaptureError` where the kernel's tracing cannot be used.

    While the application runs, the kernel's text is only copied, unread, into a spool file in
    ``spool_dir`` (on another device than the traced one: the caller checks), and read into the
    trace afterwards: the capture takes little CPU from the application it records."""
    if os.geteuid() != 0:
        raise CaptureError("capture: the kernel's block tracing needs root")
    if seconds is None and not command:
        raise UsageError("capture: give --seconds N, a command to run (after --), or both")
    reader = TracefsReader(device=(dev.major, dev.minor))
    with tempfile.TemporaryFile(prefix="storbench-capture-", dir=spool_dir) as spool:
        return _record(dev, reader, spool, label, seconds, command, buffer_kb, storage, clock, on_start)


def _record(dev: TracedDevice, reader: TracefsReader, spool: IO[bytes], label: str, seconds: float | None,
            command: Sequence[str], buffer_kb: int | None, storage: dict[str, object] | None,
            clock: Callable[[], str] | None, on_start: Callable[[], None] | None) -> Captured:  # fmt: skip
    stopped_by = "time"
    status: int | None = None
    with _locked(), tracefs_root() as root, signals.as_interrupt():
        lost_before = _lost_counters(root)
        with _events_on(root, dev, buffer_kb):
            fd = os.open(root / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
            try:
                before = dev.stat_counts()
                cpu0, t0 = _cpu_s(), time.monotonic()
                child: subprocess.Popen[bytes] | None = None

                def pump(wait_s: float) -> bool:
                    ready, _, _ = select.select([fd], [], [], wait_s)
                    if not ready:
                        return False
                    try:
                        chunk = os.read(fd, READ_BYTES)
                    except BlockingIOError:
                        return False
                    if not chunk:
                        return False
                    spool.write(chunk)
                    return True

                try:
                    if command:
                        child, noted = proc.spawn(list(command))
                        signals.raise_noted(noted)
                    if on_start is not None:
                        on_start()
                    deadline = t0 + seconds if seconds is not None else None
                    while True:
                        if deadline is not None and time.monotonic() >= deadline:
                            break
                        if child is not None and child.poll() is not None:
                            status, stopped_by = child.returncode, "command"
                            break
                        # a batch every PUMP_S, not a wakeup per event: the kernel's buffer holds them meanwhile
                        time.sleep(PUMP_S)
                        while pump(0):
                            pass
                except KeyboardInterrupt as exc:
                    stopped_by = signals.how(exc)
                finally:
                    with signals.held():
                        if child is not None and child.poll() is None:
                            proc.stop_group(child)
                            status = child.returncode
                        after = dev.stat_counts()
                        # what completed before the events were turned off is in the buffer: drain it
                        for event in EVENTS:
                            _write(root / "events" / "block" / event / "enable", "0")
                        quiet = 0
                        while quiet < 3:
                            quiet = 0 if pump(0.05) else quiet + 1
                cpu_s, wall_s = _cpu_s() - cpu0, time.monotonic() - t0
            finally:
                os.close(fd)
        lost_counted = _lost_counters(root) - lost_before
    spool.seek(0)
    reader.feed(line.decode("utf-8", "replace") for line in spool)
    lost = lost_counted + reader.lost
    events = len(reader.issue_ns) + sum(reader.seen.values())
    meta = TraceMeta(
        label=label, source="tracefs", device=dev.path, identity=dev.identity, device_bytes=dev.size_bytes,
        logical_block_bytes=dev.logical_block_bytes, kernel=platform.release(), command=" ".join(command) or None,
        host=socket.gethostname(), created_at=clock() if clock else None, lost_events=max(0, lost),
        completed_kernel=tuple(sorted((k, after[k] - before.get(k, 0)) for k in after)),
        storage=storage,
        cost=(("cpu_s", round(cpu_s, 3)), ("wall_s", round(wall_s, 3)), ("events_per_s", round(events / wall_s, 1) if wall_s > 0 else 0.0)),
    )  # fmt: skip
    trace = reader.trace(meta)
    if stopped_by in ("Ctrl-C", "SIGTERM"):
        trace = replace(trace, meta=replace(trace.meta, notes=trace.meta.notes + (f"stopped by {stopped_by} after {wall_s:.1f} s: the events read until then are kept",)))
    return Captured(trace=trace, stopped_by=stopped_by, command_status=status)
