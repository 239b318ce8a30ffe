"""The edge: the drives' SMART / health read just before and just after a fio run (smartctl)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..storage.probe.base import CommandRunner, SubprocessRunner
from ..storage.probe.hardware import read_drives
from .hardware import HardwareActivity


class HardwareSampler:
    """Reads ``paths`` with smartctl on entry and on exit; :meth:`activity` gives both."""

    def __init__(self, paths: Sequence[str], runner: CommandRunner | None = None) -> None:
        self.paths = list(paths)
        self.runner = runner or SubprocessRunner(timeout_s=15.0)
        self.problems: list[str] = []
        self.before: tuple = ()
        self.after: tuple = ()

    def __enter__(self) -> HardwareSampler:
        self.before = read_drives(self.runner, self.paths, self.problems)
        return self

    def __exit__(self, *exc: object) -> None:
        self.after = read_drives(self.runner, self.paths, self.problems)

    def activity(self) -> Any:
        from . import BackendActivity

        return BackendActivity(hardware=HardwareActivity(self.before, self.after, tuple(dict.fromkeys(self.problems))))
