"""The ZFS sampler (edge): reads the pool around a fio run and runs ``zpool iostat -v POOL 1`` during it.

Before fio starts: ``zpool status`` (state, scan), the ARC's counters, the dataset's
``compressratio``; ``zpool iostat -v POOL 1`` then runs in the background, writing into a
temporary file; after fio ends it is stopped (by its PID) and the same readings are taken
again.  Nothing here raises: what cannot be read becomes a phrase in
:attr:`ZfsActivity.problems` (a ZFS daemon that died during the run shows up here first).
Commands are argument lists with a timeout, never a shell.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

from ..process import proc as processes
from ..storage.probe.base import SubprocessRunner
from ..storage.probe.zfs import read_arcstats
from ..storage.zfs import ZfsInfo, ZpoolStatus, parse_ratio, parse_zpool_iostat, parse_zpool_status
from .activity import BackendActivity
from .zfs import zfs_activity

if TYPE_CHECKING:
    from ..storage.zfs import ArcStats

COMMAND_TIMEOUT_S = 10.0
#: After fio ends, wait for zpool iostat's next report plus this margin (at most one interval more).
TRAILING_MARGIN_S = 0.25


def _run(argv: list[str]) -> tuple[int, str, str]:
    return SubprocessRunner(COMMAND_TIMEOUT_S).run(argv)


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


class ZfsSampler:
    """Context manager around one fio run; :meth:`activity` gives the :class:`BackendActivity`."""

    def __init__(self, zfs: ZfsInfo, *, run: Callable[[list[str]], tuple[int, str, str]] = _run, interval_s: int = 1) -> None:
        self.zfs = zfs
        self.run = run
        self.interval_s = interval_s
        self.problems: list[str] = []
        self._proc: subprocess.Popen | None = None
        self._out: IO[str] | None = None
        self._before: tuple[ZpoolStatus | None, ArcStats | None, float | None] = (None, None, None)
        self._after: tuple[ZpoolStatus | None, ArcStats | None, float | None] = (None, None, None)
        self._iostat_text = ""
        self._started = 0.0

    # ----------------------------------------------------------------- readings

    def _status(self, when: str) -> ZpoolStatus | None:
        pool = self.zfs.pool
        for argv in (["zpool", "status", "-P", pool], ["zpool", "status", pool]):
            rc, out, err = self.run(argv)
            if rc == 0:
                pools = [p for p in parse_zpool_status(out) if p.pool == pool]
                if pools:
                    return pools[0]
            last = f"zpool status {pool} failed {when} the run: {_first_line(err) or f'exit status {rc}'}"
        self.problems.append(last + self._daemon_hint(err))
        return None

    def _daemon_hint(self, err: str) -> str:
        if "connect" in err.lower() or "socket" in err.lower() or "refused" in err.lower():
            return " (the ZFS daemon, zfs-fuse, is not answering)" if self.zfs.implementation == "zfs-fuse" else " (ZFS is not answering)"
        return ""

    def _compressratio(self) -> float | None:
        rc, out, _ = self.run(["zfs", "get", "-Hp", "-o", "value", "compressratio", self.zfs.dataset])
        return parse_ratio(out.strip()) if rc == 0 else None

    def _reading(self, when: str) -> tuple[ZpoolStatus | None, ArcStats | None, float | None]:
        status = self._status(when)
        if status is None:
            return None, read_arcstats(), None
        return status, read_arcstats(), self._compressratio()

    # ----------------------------------------------------------------- the run

    def __enter__(self) -> ZfsSampler:
        self._before = self._reading("before")
        if self._before[0] is None:
            return self
        self._out = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self._started = time.monotonic()
        try:
            self._proc, noted = processes.spawn(["zpool", "iostat", "-v", self.zfs.pool, str(self.interval_s)],
                                                stdout=self._out, stderr=subprocess.DEVNULL, c_locale=True)  # fmt: skip
            if noted:  # a stop request while it was forked: stopped again at once, then acted on
                self._stop_iostat()
                raise KeyboardInterrupt(noted[0])
        except OSError as exc:
            self.problems.append(f"zpool iostat could not start: {exc}")
            self._proc = None
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop_iostat()
        self._after = self._reading("after")

    def _stop_iostat(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            # let the report that covers the run's last second (and the pool's write-back of it) come out
            elapsed = time.monotonic() - self._started
            next_report = (int(elapsed // self.interval_s) + 1) * self.interval_s
            with contextlib.suppress(KeyboardInterrupt):
                time.sleep(min(next_report - elapsed + TRAILING_MARGIN_S, self.interval_s + TRAILING_MARGIN_S))
        if proc is not None:
            processes.stop_group(proc, ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)), group=False)
            self._proc = None
        if self._out is not None:
            self._out.seek(0)
            self._iostat_text = self._out.read()
            self._out.close()
            self._out = None

    def activity(self) -> BackendActivity:
        sb, ab, cb = self._before
        sa, aa, ca = self._after
        try:
            reports = parse_zpool_iostat(self._iostat_text)
        except ValueError:
            reports = ()
            self.problems.append("zpool iostat output not understood")
        return BackendActivity(
            zfs=zfs_activity(
                self.zfs.pool, self.zfs.dataset, status_before=sb, status_after=sa, iostat=reports,
                arc_before=ab, arc_after=aa, compressratio_before=cb, compressratio_after=ca, problems=self.problems,
            )
        )


__all__ = ["ZfsSampler"]
