"""The edge: the drives' SMART / health read just before and just after a fio run (smartctl).

A reading taken just after one workload is the reading just before the next: kept for
:data:`REUSE_S` seconds, so that back-to-back workloads cost one smartctl call per drive each.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..storage.health import DriveHealth
from ..storage.probe.base import CommandRunner, SubprocessRunner
from ..storage.probe.hardware import read_drives
from .hardware import HardwareActivity

if TYPE_CHECKING:
    from .activity import BackendActivity

#: a reading this recent (seconds) is taken as the next workload's "before"
REUSE_S = 5.0
_last: dict[str, tuple[float, DriveHealth]] = {}


class HardwareSampler:
    """Reads ``paths`` with smartctl on entry and on exit; :meth:`activity` gives both."""

    def __init__(self, paths: Sequence[str], runner: CommandRunner | None = None, clock=time.monotonic) -> None:
        self.paths = list(paths)
        self.runner = runner or SubprocessRunner(timeout_s=15.0)
        self.clock = clock
        self.problems: list[str] = []
        self.before: tuple[DriveHealth, ...] = ()
        self.after: tuple[DriveHealth, ...] = ()

    def _read(self, paths: Sequence[str]) -> tuple[DriveHealth, ...]:
        got = read_drives(self.runner, paths, self.problems)
        now = self.clock()
        for d in got:
            _last[d.device] = (now, d)
        return got

    def __enter__(self) -> HardwareSampler:
        now = self.clock()
        fresh = {p: _last[p][1] for p in self.paths if p in _last and now - _last[p][0] <= REUSE_S}
        stale = [p for p in self.paths if p not in fresh]
        got = {d.device: d for d in self._read(stale)} if stale else {}
        self.before = tuple(fresh.get(p) or got[p] for p in self.paths if p in fresh or p in got)
        return self

    def __exit__(self, *exc: object) -> None:
        self.after = self._read(self.paths)

    def activity(self) -> BackendActivity:
        from .activity import BackendActivity

        return BackendActivity(hardware=HardwareActivity(self.before, self.after, tuple(dict.fromkeys(self.problems))))
