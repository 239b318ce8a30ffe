"""The kernel's block events as ``trace_pipe`` prints them, read into a trace (pure).

A line (kernel 6.x; older kernels print no ``be,0,4`` priority)::

    dd-14660 [000] ..... 21722.246425: block_rq_issue: 7,0 WS 4096 () 0 + 8 be,0,4 [dd]
    ksoftirqd/1-24 [001] ..s.. 21722.247605: block_rq_complete: 7,0 WS () 0 + 8 be,0,4 [0]

The request's kind is the first letter of its rwbs flags after a leading ``F`` (a preflush): ``R``
read, ``W`` write, ``D`` discard (a trim), ``F`` a flush.  A completion is matched to the oldest
issue of the same device, kind, sector and length (a flush completes at sector 2^64 - 1, so
flushes match in order); a completion with no issue seen (a request issued before the capture) is
counted, not an event.

A write the kernel carries out as a flush sequence (``REQ_PREFLUSH``/``REQ_FUA`` on a device
without them: a journal's commit block) completes twice: its data (``WSM 32914 + 8``), then the
request itself with no sectors left (``WSM 32914 + 0``); the kernel's ``stat`` counts it once, so
the second is not counted.  An empty flush (``fsync``'s) is a ``FF`` request and then a write of
no sectors at sector 0 completing (``WS 0 + 0``), which ``stat`` counts as a write: counted.  (Measured on
Linux 6.18 under dbench on ext4: 6,503 data writes, 318 empty flushes, 1,960 second completions;
the kernel counted 6,821 writes.)  A
``CPU:N [LOST K EVENTS]`` line adds K to the lost events.
"""

from __future__ import annotations

import re
from array import array
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from .events import FLUSH, READ, TRIM, WRITE, Trace, TraceMeta, make_trace

_LINE = re.compile(
    r"^\s*(?P<task>.*?)-(?P<pid>\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(?P<cpu>\d+)\]\s+(?:\S+\s+)?(?P<sec>\d+)\.(?P<frac>\d+):\s+"
    r"(?P<event>block_rq_issue|block_rq_complete):\s+(?P<major>\d+),(?P<minor>\d+)\s+(?P<rwbs>[A-Z]+)\s+(?P<rest>.*)$"
)
_ISSUE_REST = re.compile(r"^(?P<bytes>\d+)\s+\(.*?\)\s+(?P<sector>\d+)\s+\+\s+(?P<nr>\d+)\b")
_COMPLETE_REST = re.compile(r"^\(.*?\)\s+(?P<sector>\d+)\s+\+\s+(?P<nr>\d+)\b.*\[(?P<error>-?\d+)\]\s*$")
_LOST = re.compile(r"^\s*CPU:\s*\d+\s+\[LOST\s+(?P<n>\d+)\s+EVENTS\]")
_KIND = {"R": READ, "W": WRITE, "D": TRIM, "F": FLUSH}
#: the kernel's names of the directions its ``stat`` file counts (fields 1, 5, 12, 16)
STAT_NAMES = {READ: "read", WRITE: "write", TRIM: "discard", FLUSH: "flush"}
SECTOR_BYTES = 512
#: how many written sectors are remembered for their flush sequence's second completion
WRITTEN_KEPT = 65536


def request_kind(rwbs: str) -> int | None:
    """The kind of request an rwbs flag string names, or None (``N``: no data, ``E``: secure erase)."""
    letter = rwbs[1] if len(rwbs) > 1 and rwbs[0] == "F" and rwbs[1] in "RWDFEN" else rwbs[0]
    return _KIND.get(letter)


@dataclass
class TracefsReader:
    """Reads trace_pipe's lines as they come (:meth:`feed`), then :meth:`trace` makes the record.

    ``device``: ``(major, minor)`` of the traced device (other devices' lines are skipped and
    counted: a filter the kernel did not take)."""

    device: tuple[int, int] | None = None
    issue_ns: array[int] = field(default_factory=lambda: array("q"))
    complete_ns: array[int] = field(default_factory=lambda: array("q"))
    op: array[int] = field(default_factory=lambda: array("B"))
    offset: array[int] = field(default_factory=lambda: array("q"))
    length: array[int] = field(default_factory=lambda: array("q"))
    lost: int = 0
    other_device: int = 0
    unmatched_complete: int = 0
    failed: int = 0
    unreadable: int = 0
    seen: dict[str, int] = field(default_factory=dict)
    _open: dict[tuple[int, int, int], deque[int]] = field(default_factory=dict)
    _devices: set[tuple[int, int]] = field(default_factory=set)
    #: sectors whose data write completed, awaiting a flush sequence's second completion (bounded)
    _written: dict[int, int] = field(default_factory=dict)

    def devices(self) -> set[tuple[int, int]]:
        """The devices whose events were read (with no device named, every one's)."""
        return set(self._devices)

    def feed(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.feed_line(line)

    def feed_line(self, line: str) -> None:
        m = _LINE.match(line)
        if m is None:
            lost = _LOST.match(line)
            if lost is not None:
                self.lost += int(lost["n"])
            elif line.strip() and "block_" in line:
                self.unreadable += 1
            return
        dev = (int(m["major"]), int(m["minor"]))
        if self.device is not None and dev != self.device:
            self.other_device += 1
            return
        self._devices.add(dev)
        kind = request_kind(m["rwbs"])
        if kind is None:
            return
        t_ns = int(m["sec"]) * 1_000_000_000 + int((m["frac"] + "000000000")[:9])
        if m["event"] == "block_rq_issue":
            rest = _ISSUE_REST.match(m["rest"])
            if rest is None:
                self.unreadable += 1
                return
            sector, nr = int(rest["sector"]), int(rest["nr"])
            key = (kind, -1 if kind == FLUSH else sector, -1 if kind == FLUSH else nr)
            self._open.setdefault(key, deque()).append(len(self.issue_ns))
            self.issue_ns.append(t_ns)
            self.complete_ns.append(-1)
            self.op.append(kind)
            self.offset.append(0 if kind == FLUSH else sector * SECTOR_BYTES)
            self.length.append(0 if kind == FLUSH else int(rest["bytes"]) or nr * SECTOR_BYTES)
            return
        rest = _COMPLETE_REST.match(m["rest"])
        if rest is None:
            self.unreadable += 1
            return
        sector, nr = int(rest["sector"]), int(rest["nr"])
        if kind == WRITE:
            if nr > 0:
                self._written[sector] = self._written.get(sector, 0) + 1
                if len(self._written) > WRITTEN_KEPT:
                    del self._written[next(iter(self._written))]
            elif sector and self._written.get(sector):  # an empty flush's write has no sector: 0
                self._written[sector] -= 1  # the second completion of a flush sequence: counted once
                if not self._written[sector]:
                    del self._written[sector]
                return
        name = STAT_NAMES[kind]
        self.seen[name] = self.seen.get(name, 0) + 1
        if int(rest["error"]) != 0:
            self.failed += 1
        key = (kind, -1 if kind == FLUSH else sector, -1 if kind == FLUSH else nr)
        waiting = self._open.get(key)
        if not waiting:
            self.unmatched_complete += 1
            return
        self.complete_ns[waiting.popleft()] = t_ns

    def notes(self) -> tuple[str, ...]:
        out = []
        pending = self.complete_ns.tolist().count(-1) if len(self.complete_ns) < 5_000_000 else 0
        if pending:
            out.append(f"{pending} request(s) issued had not completed when the capture ended: kept without a latency")
        if self.unmatched_complete:
            out.append(f"{self.unmatched_complete} completion(s) with no issue seen (issued before the capture, or the write of an empty flush): counted, not events")
        if self.failed:
            out.append(f"{self.failed} request(s) completed with an error")
        if self.other_device:
            out.append(f"{self.other_device} event(s) of other devices skipped (the kernel's filter did not hold)")
        if self.unreadable:
            out.append(f"{self.unreadable} block event line(s) could not be read")
        return tuple(out)

    def trace(self, meta: TraceMeta) -> Trace:
        from dataclasses import replace

        meta = replace(meta, notes=meta.notes + self.notes(), completed_seen=tuple(sorted(self.seen.items())))
        return make_trace(meta, self.issue_ns, self.complete_ns, self.op, self.offset, self.length)


def read_tracefs(lines: Iterable[str], meta: TraceMeta, device: tuple[int, int] | None = None) -> Trace:
    """A trace of trace_pipe's text (a recorded file of it: an import)."""
    reader = TracefsReader(device=device)
    reader.feed(lines)
    return reader.trace(meta)
