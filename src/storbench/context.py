"""The injected environment: streams, process environment, working directory, clock.

Commands receive an :class:`Env`; tests build one with ``io.StringIO`` streams and a
temporary database so nothing touches the real terminal or the user's data.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from dataclasses import dataclass, field
from typing import Callable, Mapping, TextIO


def utc_now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Env:
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    cwd: str = field(default_factory=os.getcwd)
    clock: Callable[[], str] = utc_now_iso
    #: show live progress bars (only on a terminal unless forced)
    progress: bool | None = None

    @property
    def stdout_isatty(self) -> bool:
        isatty = getattr(self.stdout, "isatty", None)
        return bool(isatty and isatty())

    @property
    def show_progress(self) -> bool:
        if self.progress is not None:
            return self.progress
        isatty = getattr(self.stderr, "isatty", None)
        return bool(isatty and isatty())

    @property
    def fio_path(self) -> str:
        return self.environ.get("STORBENCH_FIO", "fio")
