"""fs_mark (Debian's ``fsmark`` 3.3): many small files, each written (and fsynced or not) and closed.

``fs_mark -d DIR -n FILES -s SIZE -t THREADS -S SYNC -L LOOPS`` prints its settings as ``#``
lines, then one row per loop: the filesystem's use (%), the files made so far, their size, the
files per second of that loop and the application's own overhead (µs).  Its figure is files per
second, the mean over the loops.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Measure

from .base import LoadOption, LoadParseError, LoadSteps, LoadTool, Pasted, size_bytes

_VERSION = re.compile(r"^#\s*Version ([\d.]+), (\d+) thread\(s\)")
_SYNC = re.compile(r"^#\s*Sync method: (.*?)\s*$")
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+(\d+)\s*$")

#: fs_mark -S: 0 no sync, 1 fsync() of each file as written (its default), 2 sync() before close ...
SYNC_METHODS = {"0": "none", "1": "fsync each file", "2": "post-reverse fsync", "3": "reverse fsync", "4": "post fsync",
                "5": "fsync of the directory", "6": "sync() before close"}  # fmt: skip


@dataclass(frozen=True)
class FsMarkLoop:
    fs_use_pct: int
    files: int
    file_size_bytes: int
    files_per_s: float
    app_overhead_us: int


@dataclass(frozen=True)
class FsMarkResult:
    version: str | None
    threads: int | None
    sync_method: str | None  # fs_mark's own words ("INBAND FSYNC: fsync() per file in write loop.")
    loops: tuple[FsMarkLoop, ...]

    @property
    def files_per_s(self) -> float:
        return sum(loop.files_per_s for loop in self.loops) / len(self.loops)


OPTIONS = (
    LoadOption("files", "count", "1000", "files each thread writes in each loop (-n)"),
    LoadOption("file_size", "size", "4K", "the size of each file (-s)"),
    LoadOption("threads", "count", "1", "threads, each in a directory of its own (-t)"),
    LoadOption("sync", "choice", "1", "fs_mark's -S: " + "; ".join(f"{k} {v}" for k, v in SYNC_METHODS.items()),
               choices=tuple(SYNC_METHODS)),
    LoadOption("loops", "count", "1", "loops (-L): each writes its files anew; files/s is their mean"),
)


def argv(options: Mapping[str, str], directory: str) -> list[str]:
    """The command line, run with ``directory`` as the working directory (fs_mark 3.3 refuses a
    ``-d`` path of 40 bytes or more: "directory pathname too long", so it is given ``-d .``)."""
    sync = options.get("sync", "1")
    if sync not in SYNC_METHODS:
        raise LoadParseError(f"fs_mark sync={sync!r}: give one of {', '.join(SYNC_METHODS)} ({'; '.join(f'{k}: {v}' for k, v in SYNC_METHODS.items())})")
    return ["fs_mark", "-d", ".", "-n", str(int(options.get("files", "1000"))), "-s", str(size_bytes(options.get("file_size", "4K"))),
            "-t", str(int(options.get("threads", "1"))), "-S", sync, "-L", str(int(options.get("loops", "1")))]  # fmt: skip


def steps(options: Mapping[str, str], directory: str) -> LoadSteps:
    n = int(options.get("files", "1000")) * int(options.get("threads", "1"))
    return LoadSteps(measure=tuple(argv(options, directory)),
                     creates=f"{n} file(s) of {options.get('file_size', '4K')} a loop in fs_mark's directories (removed by fs_mark after each loop)")  # fmt: skip


#: files a second assumed for the plan's estimate (fs_mark's run is as long as its files take)
_PLANNED_FILES_PER_S = 1000.0


def runtime_s(options: Mapping[str, str]) -> float:
    n = int(options.get("files", "1000")) * int(options.get("threads", "1")) * int(options.get("loops", "1"))
    return max(1.0, n / _PLANNED_FILES_PER_S)


def parse(text: str, logs: Mapping[str, str] | None = None) -> FsMarkResult:
    version, threads, sync = None, None, None
    loops: list[FsMarkLoop] = []
    for line in text.splitlines():
        if m := _VERSION.match(line):
            version, threads = m.group(1), int(m.group(2))
        elif m := _SYNC.match(line):
            sync = m.group(1)
        elif m := _ROW.match(line):
            loops.append(FsMarkLoop(int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4)), int(m.group(5))))
    if not loops:
        raise LoadParseError("not fs_mark output: no 'FSUse% Count Size Files/sec App Overhead' row")
    return FsMarkResult(version=version, threads=threads, sync_method=sync, loops=tuple(loops))


def measures(r: FsMarkResult) -> tuple[Measure, ...]:
    from ..model import Measure  # the result records load once a run has measured (tests/run/test_startup.py)

    return (Measure("files/s", r.files_per_s, True),)


def settings(r: FsMarkResult) -> dict[str, str]:
    return {"fs_mark_version": r.version or "unknown", "sync_method": r.sync_method or "unknown"}


def pasted(text: str) -> Pasted:
    """fs_mark's output as published: its files/s over the loops printed; the workload named as
    the smallfiles suite names it (``fsmark-4k-fsync``: the files' size and whether each was
    synced, from fs_mark's own "Sync method" line)."""
    r = parse(text)
    size = r.loops[0].file_size_bytes
    size_text = f"{size // 1024}k" if size % 1024 == 0 and size else f"{size}b"
    method = (r.sync_method or "").upper()
    sync = "nosync" if method.startswith("NO SYNC") else ("fsync" if "FSYNC" in method else re.sub(r"[^a-z0-9]+", "-", method.lower()).strip("-") or "unknown")
    out = {**settings(r), "loops": str(len(r.loops)), "file_size": str(size), "files_made": str(r.loops[-1].files)}
    if r.threads is not None:
        out["threads"] = str(r.threads)
    return Pasted(workload=f"fsmark-{size_text}-{sync}", measures=measures(r), settings=out)


def _tool() -> LoadTool:
    return LoadTool(name="fs_mark", program="fs_mark", package="fsmark", headline="files/s", options=OPTIONS, steps=steps, parse=parse,
                    measures=measures, runtime_s=runtime_s, settings=settings, clients="threads", pasted=pasted,
                    description="fs_mark 3.3: many small files written, fsynced (or not) and closed; files/s")  # fmt: skip


TOOL = _tool()
