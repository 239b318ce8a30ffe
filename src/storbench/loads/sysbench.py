"""sysbench fileio (Debian's ``sysbench`` 1.0.20): random or sequential file I/O with fsync.

``sysbench fileio --file-total-size=S --file-test-mode=MODE ... prepare|run|cleanup``: ``run``
prints the operations per second (reads, writes, fsyncs), the throughput read and written
(MiB/s), the events and total time, and the latency of each event (min, avg, max and the
percentile asked for, ms).  Reads, writes and fsyncs per second are kept apart (sysbench's
users asked for exactly that, sysbench #208).

Published outputs of the versions before and after are read too (``storbench import``): 0.4's
"Operations performed: R Read, W Write, O Other" over its "total time" (the rates computed from
those counts, the latency's "approx. 95 percentile" in ms) and 1.1's "read: IOPS=N X MiB/s" lines
(sysbench's src/tests/fileio/sb_fileio.c at tag 0.4.12 and on master).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Measure

from .base import LoadOption, LoadParseError, LoadSteps, LoadTool, Pasted, size_bytes

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


_OPS_04 = re.compile(r"^\s*Operations performed:\s+(\d+) Read, (\d+) Write, (\d+) Other = \d+ Total")
_BYTES_04 = re.compile(r"^\s*Read ([\d.]+)([KMGTPE]?)b\s+Written ([\d.]+)([KMGTPE]?)b\s+Total transferred")
_MS_04 = re.compile(r"^\s*(min|avg|max|approx\.\s+(\d+) percentile):\s+([\d.]+)ms\s*$")
_IOPS_11 = re.compile(r"^\s*(read|write):\s+IOPS=([\d.]+)\s+([\d.]+) MiB/s")
_FSYNC_11 = re.compile(r"^\s*fsync:\s+IOPS=([\d.]+)")
_MODE = re.compile(r"^\s*Doing (.+) test\s*$")
#: sysbench's words for its test modes ("Doing random r/w test")
MODE_WORDS = {"sequential write (creation)": "seqwr", "sequential rewrite": "seqrewr", "sequential read": "seqrd", "random read": "rndrd",
              "random write": "rndwr", "random r/w": "rndrw"}  # fmt: skip


def parse(text: str, logs: Mapping[str, str] | None = None) -> SysbenchFileio:
    version = None
    fields: dict[str, float] = {}
    ops_04: tuple[int, int, int] | None = None
    bytes_04: tuple[float, float] | None = None
    for line in text.splitlines():
        line = line.removeprefix("> ")
        if version is None and (m := _VERSION.match(line)):
            version = m.group(1).rstrip(":")
        elif m := _OPS_04.match(line):
            ops_04 = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif m := _BYTES_04.match(line):
            bytes_04 = (_size_04(m.group(1), m.group(2)), _size_04(m.group(3), m.group(4)))
        elif m := _MS_04.match(line):
            key = f"{m.group(2)}th percentile" if m.group(2) else m.group(1)
            fields.setdefault(key, float(m.group(3)))
        elif m := _IOPS_11.match(line):
            fields.setdefault(f"{m.group(1)}s/s", float(m.group(2)))
            fields.setdefault("read, MiB/s" if m.group(1) == "read" else "written, MiB/s", float(m.group(3)))
        elif m := _FSYNC_11.match(line):
            fields.setdefault("fsyncs/s", float(m.group(1)))
        elif m := _FIELD.match(line):
            fields.setdefault(m.group(1).strip(), float(m.group(2)))
    total = fields.get("total time", fields.get("time elapsed"))
    if ops_04 is not None and total:  # 0.4: counts over the run's time
        for key, count in zip(("reads/s", "writes/s", "fsyncs/s"), ops_04):
            fields.setdefault(key, count / total)
        if bytes_04 is not None:
            fields.setdefault("read, MiB/s", bytes_04[0] / 2**20 / total)
            fields.setdefault("written, MiB/s", bytes_04[1] / 2**20 / total)
    needed = ("reads/s", "writes/s", "fsyncs/s", "read, MiB/s", "written, MiB/s")
    missing = [k for k in needed if k not in fields]
    if missing:
        what = "not sysbench fileio output" if len(missing) == len(needed) else "sysbench fileio output cut short"
        raise LoadParseError(f"{what}: no {missing[0]!r} line (sysbench 0.4's 'Operations performed', 1.0's 'reads/s' "
                             "or 1.1's 'read: IOPS=')")  # fmt: skip
    pct = next(((float(k.split("th")[0]), v) for k, v in fields.items() if k.endswith("th percentile")), None)
    events = fields.get("total number of events")
    return SysbenchFileio(
        version=version, reads_per_s=fields["reads/s"], writes_per_s=fields["writes/s"], fsyncs_per_s=fields["fsyncs/s"],
        read_mib_s=fields["read, MiB/s"], written_mib_s=fields["written, MiB/s"], total_time_s=total,
        events=int(events) if events is not None else None, lat_min_ms=fields.get("min"), lat_avg_ms=fields.get("avg"),
        lat_max_ms=fields.get("max"), lat_percentile=pct,
    )  # fmt: skip


def _size_04(number: str, unit: str) -> float:
    """sysbench 0.4's sizes (``1.1719Gb``: powers of 1024, its ``b`` meaning bytes)."""
    return float(number) * 1024 ** (" KMGTPE".index(unit or " "))


def pasted(text: str) -> Pasted:
    """sysbench fileio's output as published (0.4, 1.0 or 1.1): the same figures a run of
    storbench's has, its latency percentile the one that run asked for (95 by default); the
    workload named by its test mode (``sysbench-fileio-rndrw``, from "Doing random r/w test",
    else ``sysbench-fileio``)."""
    r = parse(text)
    mode = next((MODE_WORDS.get(m.group(1).strip(), "") for line in text.splitlines() if (m := _MODE.match(line.removeprefix("> ")))), "")
    out = dict(settings(r))
    if mode:
        out["mode"] = mode
    if r.total_time_s is not None:
        out["total_time_s"] = f"{r.total_time_s:g}"
    absent = () if r.lat_avg_ms is not None else ("the latency of each request (the output holds no latency lines)",)
    return Pasted(workload="sysbench-fileio" + (f"-{mode}" if mode else ""), measures=measures(r), settings=out, absent=absent)


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
                    measures=measures, runtime_s=lambda o: float(o.get("runtime", "10")), settings=settings, clients="threads", pasted=pasted,
                    description="sysbench 1.0 fileio: sequential or random reads and writes with fsync; reads, writes and fsyncs per second apart")  # fmt: skip


TOOL = _tool()
