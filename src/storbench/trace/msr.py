"""The MSR Cambridge block traces of the SNIA IOTTA repository (CSV), read into a trace (pure).

Each line (no header) is ``Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime``:
the issue time and the response time in Windows filetime units (100 ns), ``Read`` or ``Write``,
offset and size in bytes (Narayanan, Donnelly, Rowstron, "Write off-loading", FAST'08; SNIA IOTTA
trace set 388).  A file holds one volume (``hm_0.csv``); one that holds several is read for the
volume named (``disk="hm,0"``), else refused in one line naming them.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

from storbench.errors import UsageError

from .events import READ, WRITE, Trace, TraceMeta, make_trace

TICK_NS = 100
_TYPES = {"read": READ, "write": WRITE}


def looks_like_msr(first_line: str) -> bool:
    parts = first_line.strip().split(",")
    return len(parts) == 7 and parts[0].isdigit() and parts[3].strip().lower() in _TYPES


def read_msr(lines: Iterable[str], meta: TraceMeta, *, where: str = "csv", disk: str | None = None) -> Trace:
    issue, complete, op, offset, length = array("q"), array("q"), array("B"), array("q"), array("q")
    volumes: dict[str, int] = {}
    first_tick: int | None = None
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        parts = line.split(",")
        if number == 1 and parts[0].strip().lower() == "timestamp":
            continue  # a header some copies add
        if len(parts) != 7:
            raise UsageError(f"{where}: line {number} has {len(parts)} fields, not the MSR Cambridge 7 (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime)")
        ts, host, number_s, kind_s, off_s, size_s, resp_s = (p.strip() for p in parts)
        volume = f"{host},{number_s}"
        volumes[volume] = volumes.get(volume, 0) + 1
        if disk is not None and volume != disk:
            continue
        kind = _TYPES.get(kind_s.lower())
        if kind is None:
            raise UsageError(f"{where}: line {number} has type {kind_s!r}: MSR Cambridge's are Read and Write")
        if not (ts.isdigit() and off_s.isdigit() and size_s.isdigit() and resp_s.isdigit()):
            raise UsageError(f"{where}: line {number}: timestamp, offset, size and response time must be whole numbers: {line[:80]!r}")
        if first_tick is None:
            first_tick = int(ts)
        t = (int(ts) - first_tick) * TICK_NS  # filetimes from 1601: in ns they overflow 64 bits
        issue.append(t)
        complete.append(t + int(resp_s) * TICK_NS)
        op.append(kind)
        offset.append(int(off_s))
        length.append(int(size_s))
    if disk is None and len(volumes) > 1:
        names = ", ".join(f"{v} ({n} requests)" for v, n in sorted(volumes.items()))
        raise UsageError(f"{where}: holds {len(volumes)} volumes ({names}): name one with --disk HOST,NUMBER")
    if disk is not None and disk not in volumes:
        raise UsageError(f"{where}: holds no volume {disk!r} (it holds {', '.join(sorted(volumes)) or 'none'})")
    if not issue:
        raise UsageError(f"{where}: no request in the file: nothing to store")
    return make_trace(meta, issue, complete, op, offset, length)
