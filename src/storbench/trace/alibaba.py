"""The Alibaba Cloud block traces of the SNIA IOTTA repository (CSV), read into a trace (pure).

Each line (no header) is ``device_id,opcode,offset,length,timestamp``: the virtual disk, ``R`` or
``W``, offset and length in bytes, the issue time in microseconds (Li et al., "An In-Depth Analysis
of Cloud Block Storage Workloads in Large-Scale Production", IISWC 2020; SNIA IOTTA trace set
27).  No response times: no latency, no depth of the source.  A file holds a thousand disks; the
one to read is named (``disk="3"``), else a file of one disk is read and one of several refused in
one line naming them.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import replace

from storbench.errors import UsageError

from .events import READ, WRITE, Trace, TraceMeta, make_trace

_OPS = {"R": READ, "W": WRITE}


def looks_like_alibaba(first_line: str) -> bool:
    parts = first_line.strip().split(",")
    return len(parts) == 5 and parts[1].strip() in _OPS and all(p.strip().isdigit() for p in (parts[0], *parts[2:]))


def read_alibaba(lines: Iterable[str], meta: TraceMeta, *, where: str = "csv", disk: str | None = None) -> Trace:
    issue, op, offset, length = array("q"), array("B"), array("q"), array("q")
    disks: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 5:
            raise UsageError(f"{where}: line {number} has {len(parts)} fields, not the Alibaba block trace's 5 (device_id,opcode,offset,length,timestamp)")
        device, code, off_s, len_s, ts = parts
        disks[device] = disks.get(device, 0) + 1
        if disk is not None and device != disk:
            continue
        kind = _OPS.get(code)
        if kind is None:
            raise UsageError(f"{where}: line {number} has opcode {code!r}: the Alibaba block traces' are R and W")
        if not (off_s.isdigit() and len_s.isdigit() and ts.isdigit()):
            raise UsageError(f"{where}: line {number}: offset, length and timestamp must be whole numbers: {line[:80]!r}")
        issue.append(int(ts) * 1000)
        op.append(kind)
        offset.append(int(off_s))
        length.append(int(len_s))
    if disk is None and len(disks) > 1:
        names = ", ".join(f"{d} ({n} requests)" for d, n in sorted(disks.items(), key=lambda kv: int(kv[0]))[:10])
        raise UsageError(f"{where}: holds {len(disks)} disks ({names}{', ...' if len(disks) > 10 else ''}): name one with --disk DEVICE_ID")
    if disk is not None and disk not in disks:
        raise UsageError(f"{where}: holds no disk {disk!r}")
    if not len(issue):
        raise UsageError(f"{where}: no request in the file: nothing to store")
    notes = meta.notes + ("an Alibaba block trace holds no completions: no latency, no queue depth of the source",)
    return make_trace(replace(meta, notes=notes), issue, array("q", [-1]) * len(issue), op, offset, length)
