"""The edge of :mod:`.bridge`: the bridge's CPU ticks read from ``/proc/PID/stat`` around one fio
run (injectable reader and clock)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from .activity import BackendActivity
from .bridge import BridgeActivity, cpu_ticks


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

    def activity(self) -> BackendActivity:
        return BackendActivity(bridge=self._activity)
