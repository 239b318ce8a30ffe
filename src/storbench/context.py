"""The injected environment: streams, process environment, working directory, clock.

Commands receive an :class:`Env`; tests build one with ``io.StringIO`` streams and a
temporary database so nothing touches the real terminal or the user's data.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO


def default_db_url(env: Mapping[str, str]) -> str:
    """Where results go: ``$STORBENCH_DB``, else ``$XDG_DATA_HOME/storbench/results.sqlite``.

    ``STORBENCH_DB`` containing ``://`` is a SQLAlchemy URL used as is; anything else
    is a file path (``~`` expanded with ``$HOME``).  ``XDG_DATA_HOME`` defaults to
    ``~/.local/share``; an empty or relative value is ignored, as the XDG spec says.
    """
    home = env.get("HOME") or str(Path.home())

    def expand(p: str) -> str:
        if p == "~" or p.startswith("~/"):
            return home + p[1:]
        return p

    configured = env.get("STORBENCH_DB", "")
    if configured:
        if "://" in configured:
            return configured
        return "sqlite:///" + expand(configured)
    data_home = env.get("XDG_DATA_HOME", "")
    if not data_home or not Path(data_home).is_absolute():
        data_home = home + "/.local/share"
    return "sqlite:///" + str(Path(data_home) / "storbench" / "results.sqlite")


def utc_now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


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
