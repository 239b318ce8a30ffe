"""dbench (Debian's ``dbench`` 4.0): the file-server load of seed 002's client ladder.

``dbench -D DIR -t SECONDS -c LOADFILE CLIENTS`` replays an SMB trace (``client.txt``) by every
client in ``DIR``; it prints one line a second while it runs (clients, operations, MB/sec, the
phase: ``warmup``, ``execute`` or ``cleanup``, the second, the latency of the slowest operation
that second), then the table of operations (count, mean and maximum latency in ms) and one
``Throughput N MB/sec [(sync open)] C clients P procs max_latency=L ms`` line: its result, over
the execute phase only (dbench leaves its warm-up out itself).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Measure

from .base import LoadOption, LoadParseError, LoadSteps, LoadTool, Pasted

#: Debian's load file
CLIENT_TXT = "/usr/share/dbench/client.txt"
#: dbench 4.0's warm-up before the measured phase, as a share of ``-t`` (its ``warmup`` lines: a
#: fifth of the time limit; its result leaves them out)
WARMUP_SHARE = 0.2

_VERSION = re.compile(r"^dbench version (\S+)")
_SECOND = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+) MB/sec\s+(warmup|execute)\s+(\d+) sec\s+latency ([\d.]+) ms\s*$")
_OP = re.compile(r"^\s*(?:\*\*\s*)?([A-Za-z]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s*$")
_THROUGHPUT = re.compile(
    r"^\s*Throughput ([\d.]+) MB/sec(?: \(([^)]*)\))?\s+(\d+) clients\s+(\d+) procs\s+max_latency=([\d.]+) ms\s*$"
)


@dataclass(frozen=True)
class DbenchOperation:
    name: str
    count: int
    mean_lat_ms: float
    max_lat_ms: float


@dataclass(frozen=True)
class DbenchResult:
    """One dbench run: its result line, the table of operations and the per-second lines."""

    version: str | None
    throughput_mb_s: float  # dbench's MB/sec over the execute phase
    clients: int
    procs: int
    max_latency_ms: float
    sync: str | None  # "sync open" with -s, "sync dirs" with -S, ...
    operations: tuple[DbenchOperation, ...]
    #: (second, MB/sec, that second's maximum latency in ms) of the execute phase
    seconds: tuple[tuple[int, float, float], ...]


OPTIONS = (
    LoadOption("clients", "count", "1", "how many clients replay the load at once (seed 002's ladder: 1, 6, 12, 48, 128, 256)"),
    LoadOption("runtime", "seconds", "10", "seconds of dbench's run (-t; its first fifth is a warm-up it leaves out; -t 1 measures nothing)",
               minimum=2),
    LoadOption("sync", "choice", "none", "none; open: every file opened O_SYNC (-s); dirs: directory changes synced (-S)",
               choices=("none", "open", "dirs")),
    LoadOption("fsync", "bool", "0", "fsync after every write (-F)"),
)


def argv(options: Mapping[str, str], directory: str) -> list[str]:
    """The command line (see :data:`OPTIONS`); the load file is Debian's ``client.txt``."""
    out = ["dbench", "-D", directory, "-t", str(int(options.get("runtime", "10"))), "-c", options.get("loadfile", CLIENT_TXT)]
    sync = options.get("sync", "none")
    if sync == "open":
        out.append("-s")
    elif sync == "dirs":
        out.append("-S")
    if options.get("fsync") == "1":
        out.append("-F")
    return [*out, str(int(options.get("clients", "1")))]


def steps(options: Mapping[str, str], directory: str) -> LoadSteps:
    return LoadSteps(measure=tuple(argv(options, directory)),
                     creates=f"dbench's clients/clientN trees ({options.get('clients', '1')} client(s)), removed by dbench's cleanup phase")  # fmt: skip


def parse(text: str, logs: Mapping[str, str] | None = None) -> DbenchResult:
    version = None
    ops: list[DbenchOperation] = []
    seconds: list[tuple[int, float, float]] = []
    result = None
    in_table = False
    for line in text.splitlines():
        line = line.rstrip("\r").removeprefix("> ")
        if m := _VERSION.match(line):
            version = m.group(1)
        elif m := _SECOND.match(line):
            if m.group(4) == "execute":
                seconds.append((int(m.group(5)), float(m.group(3)), float(m.group(6))))
        elif line.strip().startswith("Operation") and "AvgLat" in line:
            in_table = True
        elif in_table and (m := _OP.match(line)):
            ops.append(DbenchOperation(m.group(1), int(m.group(2)), float(m.group(3)), float(m.group(4))))
        elif m := _THROUGHPUT.match(line):
            result = m
            in_table = False
    if result is None:
        cut = "the table of operations but no 'Throughput' line (cut short?)" if ops else "no 'Throughput N MB/sec' line"
        raise LoadParseError(f"not dbench output: {cut}")
    if float(result.group(1)) == 0 and not seconds:
        raise LoadParseError("dbench measured nothing: its run ended inside its warm-up (no 'execute' second); give a longer runtime")
    return DbenchResult(version=version, throughput_mb_s=float(result.group(1)), clients=int(result.group(3)), procs=int(result.group(4)),
                        max_latency_ms=float(result.group(5)), sync=result.group(2), operations=tuple(ops), seconds=tuple(seconds))  # fmt: skip


def measures(r: DbenchResult) -> tuple[Measure, ...]:
    from ..model import Measure  # the result records load once a run has measured (tests/run/test_startup.py)

    return (Measure("MB/s", r.throughput_mb_s, True), Measure("max latency ms", r.max_latency_ms, False))


def settings(r: DbenchResult) -> dict[str, str]:
    out = {"dbench_version": r.version or "unknown", "procs": str(r.procs)}
    if r.sync:
        out["sync"] = r.sync
    return out


def pasted(text: str) -> Pasted:
    """dbench's output as published: every figure a run of storbench's has (its Throughput line
    says MB/s, clients and the slowest operation); the workload named as the built-in suites name
    dbench at that many clients (``dbench-4``)."""
    r = parse(text)
    return Pasted(workload=f"dbench-{r.clients}", measures=measures(r), settings={**settings(r), "clients": str(r.clients)})


def _tool() -> LoadTool:
    return LoadTool(name="dbench", program="dbench", package="dbench", headline="MB/s", options=OPTIONS, steps=steps, parse=parse,
                    measures=measures, runtime_s=lambda o: float(o.get("runtime", "10")) * (1 + WARMUP_SHARE), settings=settings,
                    clients="clients", pasted=pasted,
                    description="dbench 4.0: clients replaying an SMB file-server trace (client.txt); MB/s and the slowest operation")  # fmt: skip


TOOL = _tool()
