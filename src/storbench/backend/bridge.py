"""The userspace bridge's own work (iSCSI and NFS targets through qemu-nbd): how much CPU it used
while fio ran, beside fio's figures, so that a bridge that set the pace is said.

qemu-nbd serves the LUN or the NFS file for fio's nbd engine (:mod:`storbench.targets.bridge`); on
a small client its one main loop can take a whole core before the server is busy (../shared/
NFS-ISCSI.md: fio's own engines do 1.3-2.6x the bridge's IOPS here).  The sampler reads the
bridge's ``utime + stime`` from ``/proc/PID/stat`` before and after the run.

Pure: :class:`BridgeActivity`, :func:`cpu_ticks` (the clock ticks of a ``/proc/PID/stat`` line).
The edge: :class:`BridgeSampler` (reads ``/proc``, injectable).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class BridgeActivity:
    """The bridge's CPU during one fio run: ``cpu_s`` of ``wall_s`` (None: could not be read)."""

    pid: int | None
    cpu_s: float | None = None
    wall_s: float | None = None
    problems: tuple[str, ...] = ()

    @property
    def cpu_share(self) -> float | None:
        """The share of one CPU the bridge used (1.0: a whole core)."""
        if self.cpu_s is None or not self.wall_s:
            return None
        return self.cpu_s / self.wall_s


def cpu_ticks(stat_line: str) -> int:
    """``utime + stime`` (fields 14 and 15) of a ``/proc/PID/stat`` line, in clock ticks; the
    command name (field 2) may hold spaces and parentheses, so fields are counted after its
    last ``)``.  ValueError for a line that is not one.  Pure."""
    head, sep, rest = stat_line.rpartition(")")
    fields = rest.split()
    if not sep or not head or len(fields) < 13:
        raise ValueError(f"not a /proc/PID/stat line: {stat_line[:60]!r}")
    return int(fields[11]) + int(fields[12])  # fields 14, 15 counted from 1 with pid and comm before ')'


def _read_stat(pid: int) -> str:
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
        return fh.read()


class BridgeSampler:
    """The bridge's CPU ticks around one fio run (a context manager; ``activity()`` after it)."""

    def __init__(self, pid: int, *, read: Callable[[int], str] = _read_stat, clock: Callable[[], float] = time.monotonic,
                 ticks_per_s: float | None = None) -> None:  # fmt: skip
        self.pid = pid
        self.read = read
        self.clock = clock
        self.hz = ticks_per_s or float(os.sysconf("SC_CLK_TCK"))
        self._start: tuple[int, float] | None = None
        self._activity = BridgeActivity(pid=pid)

    def _sample(self) -> tuple[int, float] | None:
        try:
            return cpu_ticks(self.read(self.pid)), self.clock()
        except (OSError, ValueError) as exc:
            self._activity = BridgeActivity(pid=self.pid, problems=(f"the bridge's CPU could not be read: {exc}",))
            return None

    def __enter__(self) -> BridgeSampler:
        self._start = self._sample()
        return self

    def __exit__(self, *exc: object) -> None:
        end = self._sample() if self._start is not None else None
        if self._start is not None and end is not None:
            self._activity = BridgeActivity(pid=self.pid, cpu_s=(end[0] - self._start[0]) / self.hz, wall_s=end[1] - self._start[1])

    def activity(self):  # -> BackendActivity
        from . import BackendActivity

        return BackendActivity(bridge=self._activity)
