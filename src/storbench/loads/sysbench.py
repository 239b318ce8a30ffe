"""sysbench fileio (Debian's ``sysbench`` 1.0.20): random or sequential file I/O with fsync.

``sysbench fileio --file-total-size=S --file-test-mode=MODE ... prepare|run|cleanup``: ``run``
prints the operations per second (reads, writes, fsyncs), the throughput read and written
(MiB/s), the events and total time, and the latency of each event (min, avg, max and the
percentile asked for, ms).  Reads, writes and fsyncs per second are kept apart (sysbench's
users asked for exactly that, sysbench #208).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Measure

from .base import LoadOption, LoadParseError, LoadSteps, LoadTool, size_bytes

MODES = ("seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw")
_VERSION = re.compile(r"^sysbench (\S+)")
_FIELD = re.compile(r"^\s*([A-Za-z][A-Za-z ,/()%]*?|\d+(?:\.\d+)?th percentile):\s+([\d.]+)(s?)\s*$")


@dataclass(frozen=True)
class SysbenchFileio:
    version: str | None
    reads_per_s: float
    writes_per_s: float
    fsyncs_per_s: float
    read_mib_s: float
    written_mib_s: float
    total_time_s: float | None
    events: int | None
    lat_min_ms: float | None
    lat_avg_ms: float | None
    lat_max_ms: float | None
    #: the percentile asked for (``--percentile``, 95 by default) and its latency (ms)
    lat_percentile: tuple[float, float] | None


OPTIONS = (
    LoadOption("mode", "choice", "rndrw", "sysbench's --file-test-mode", choices=MODES),
    LoadOption("size", "size", "64M", "the files' total size (--file-total-size)"),
    LoadOption("files", "count", "4", "how many files (--file-num)"),
    LoadOption("block", "size", "16K", "the size of each read and write (--file-block-size)"),
    LoadOption("runtime", "seconds", "10", "seconds of the measured run (--time)"),
    LoadOption("threads", "count", "1", "threads (--threads)"),
    LoadOption("fsync_freq", "count", "100", "an fsync after this many writes to a file; 0: none (--file-fsync-freq)", minimum=0),
    LoadOption("direct", "bool", "0", "open the files O_DIRECT (--file-extra-flags=direct), past the page cache"),
)


def argv(options: Mapping[str, str], directory: str, phase: str = "run") -> list[str]:
    """One phase's command line (``prepare``, ``run`` or ``cleanup``, run in ``directory``; see
    :data:`OPTIONS`); the latency's 99th percentile is asked for."""
    mode = options.get("mode", "rndrw")
    if mode not in MODES:
        raise LoadParseError(f"sysbench fileio mode={mode!r}: give one of {', '.join(MODES)}")
    base = ["sysbench", "fileio", f"--file-total-size={options.get('size', '64M')}", f"--file-num={int(options.get('files', '4'))}",
            f"--file-block-size={size_bytes(options.get('block', '16K'))}"]  # fmt: skip
    if options.get("direct") == "1":
        base.append("--file-extra-flags=direct")
    if phase != "run":
        return [*base, phase]
    return [*base, f"--file-test-mode={mode}", f"--time={int(options.get('runtime', '10'))}", f"--threads={int(options.get('threads', '1'))}",
            f"--file-fsync-freq={int(options.get('fsync_freq', '100'))}", "--percentile=99", "--histogram=off", "run"]  # fmt: skip


def steps(options: Mapping[str, str], directory: str) -> LoadSteps:
    return LoadSteps(prepare=(tuple(argv(options, directory, "prepare")),), measure=tuple(argv(options, directory)),
                     cleanup=(tuple(argv(options, directory, "cleanup")),),
                     creates=f"{options.get('files', '4')} test_file.N files of {options.get('size', '64M')} in all (sysbench's prepare; removed by its cleanup)")  # fmt: skip


def parse(text: str, logs: Mapping[str, str] | None = None) -> SysbenchFileio:
    version = None
    fields: dict[str, float] = {}
    for line in text.splitlines():
        if version is None and (m := _VERSION.match(line)):
            version = m.group(1)
        elif m := _FIELD.match(line):
            fields.setdefault(m.group(1).strip(), float(m.group(2)))
    needed = ("reads/s", "writes/s", "fsyncs/s", "read, MiB/s", "written, MiB/s")
    missing = [k for k in needed if k not in fields]
    if missing:
        what = "not sysbench fileio output" if len(missing) == len(needed) else "sysbench fileio output cut short"
        raise LoadParseError(f"{what}: no {missing[0]!r} line")
    pct = next(((float(k.split("th")[0]), v) for k, v in fields.items() if k.endswith("th percentile")), None)
    events = fields.get("total number of events")
    return SysbenchFileio(
        version=version, reads_per_s=fields["reads/s"], writes_per_s=fields["writes/s"], fsyncs_per_s=fields["fsyncs/s"],
        read_mib_s=fields["read, MiB/s"], written_mib_s=fields["written, MiB/s"], total_time_s=fields.get("total time"),
        events=int(events) if events is not None else None, lat_min_ms=fields.get("min"), lat_avg_ms=fields.get("avg"),
        lat_max_ms=fields.get("max"), lat_percentile=pct,
    )  # fmt: skip


def measures(r: SysbenchFileio) -> tuple[Measure, ...]:
    from ..model import Measure  # the result records load once a run has measured (tests/run/test_startup.py)

    out = [Measure("I/O/s", r.reads_per_s + r.writes_per_s, True), Measure("reads/s", r.reads_per_s, True), Measure("writes/s", r.writes_per_s, True), Measure("fsyncs/s", r.fsyncs_per_s, True)]
    if r.lat_avg_ms is not None:
        out.append(Measure("latency avg ms", r.lat_avg_ms, False))
    if r.lat_percentile is not None:
        out.append(Measure(f"latency p{r.lat_percentile[0]:g} ms", r.lat_percentile[1], False))
    return tuple(out)


def settings(r: SysbenchFileio) -> dict[str, str]:
    return {"sysbench_version": r.version or "unknown"}


def _tool() -> LoadTool:
    return LoadTool(name="sysbench-fileio", program="sysbench", package="sysbench", headline="I/O/s", options=OPTIONS, steps=steps, parse=parse,
                    measures=measures, runtime_s=lambda o: float(o.get("runtime", "10")), settings=settings, clients="threads",
                    description="sysbench 1.0 fileio: sequential or random reads and writes with fsync; reads, writes and fsyncs per second apart")  # fmt: skip


TOOL = _tool()
