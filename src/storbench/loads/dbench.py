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

from ..model import Measure

#: Debian's load file
CLIENT_TXT = "/usr/share/dbench/client.txt"

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


def argv(options: Mapping[str, str], directory: str) -> list[str]:
    """The command line: ``clients`` (default 1), ``runtime`` in seconds (default 10), ``loadfile``,
    ``sync`` (``open``: -s O_SYNC, ``dirs``: -S), ``fsync`` (1: -F)."""
    out = ["dbench", "-D", directory, "-t", str(int(options.get("runtime", "10"))), "-c", options.get("loadfile", CLIENT_TXT)]
    sync = options.get("sync", "")
    if sync == "open":
        out.append("-s")
    elif sync == "dirs":
        out.append("-S")
    if options.get("fsync") == "1":
        out.append("-F")
    return [*out, str(int(options.get("clients", "1")))]


def parse(text: str) -> DbenchResult:
    from . import LoadParseError

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
    return DbenchResult(version=version, throughput_mb_s=float(result.group(1)), clients=int(result.group(3)), procs=int(result.group(4)),
                        max_latency_ms=float(result.group(5)), sync=result.group(2), operations=tuple(ops), seconds=tuple(seconds))  # fmt: skip


def measures(r: DbenchResult) -> tuple[Measure, ...]:
    return (Measure("MB/s", r.throughput_mb_s, True), Measure("max latency ms", r.max_latency_ms, False))


def _tool():
    from . import LoadTool

    return LoadTool(name="dbench", program="dbench", package="dbench", argv=argv, parse=parse, measures=measures)


TOOL = _tool()
