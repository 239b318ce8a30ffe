"""fio's text iologs: the v3 log storbench writes for fio to replay, and v2/v3 logs read as traces (pure).

A v3 log (``fio version 3 iolog``) starts every line with a time in microseconds from zero;
a file is ``add``-ed and ``open``-ed before use (fio 3.34 crashes without, fio #1567), so the log
storbench writes opens its one file first and closes it last.  Its name is a placeholder:
every replay names its target with ``replay_redirect``.  A flush is fio's ``sync``.  fio up to
3.33 ignores trims in a text iolog (fio #769, fixed in 3.34), printing ``bad ddir``: the writer
leaves them out for such a fio and the run says so.

A v2 log (``fio version 2 iolog``) has no times: read as a trace, every request is issued at 0
(a replay of it runs as fast as fio can), and its ``wait`` lines (a pause in microseconds) add up
to the issue times.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import replace

from storbench.errors import UsageError

from .events import FLUSH, OPS, READ, TRIM, WRITE, Trace, TraceMeta, make_trace

#: the name the written log gives its one file; ``replay_redirect`` sends its I/O to the target
PLACEHOLDER = "trace"
_ACTIONS = {"read": READ, "write": WRITE, "trim": TRIM, "sync": FLUSH, "datasync": FLUSH}
_FILE_ACTIONS = frozenset({"add", "open", "close"})
CHUNK_EVENTS = 16384


def write_iolog_v3(trace: Trace, *, kinds: Iterable[int] = (READ, WRITE, TRIM, FLUSH)) -> Iterator[str]:
    """The v3 iolog of ``trace``'s requests of ``kinds``, in text chunks (a million events are
    never one string).  Times are the trace's issue times in whole microseconds."""
    wanted = sorted(set(kinds))
    yield f"fio version 3 iolog\n0 {PLACEHOLDER} add\n0 {PLACEHOLDER} open\n"
    n = len(trace)
    last_us = 0
    for start in range(0, n, CHUNK_EVENTS):
        stop = min(n, start + CHUNK_EVENTS)
        times = (trace.issue_ns[start:stop] // 1000).tolist()
        ops = trace.op[start:stop].tolist()
        offs = trace.offset_bytes[start:stop].tolist()
        lens = trace.length_bytes[start:stop].tolist()
        lines = []
        for t, op, off, ln in zip(times, ops, offs, lens, strict=True):
            if op not in wanted:
                continue
            if op == FLUSH:
                lines.append(f"{t} {PLACEHOLDER} sync 0 0\n")
            else:
                lines.append(f"{t} {PLACEHOLDER} {OPS[op]} {off} {ln}\n")
        if times:
            last_us = times[-1]
        yield "".join(lines)
    yield f"{last_us} {PLACEHOLDER} close\n"


def read_iolog(lines: Iterable[str], meta: TraceMeta, *, where: str = "iolog") -> Trace:
    """A trace of a fio v2 or v3 text iolog.  One :class:`UsageError` line, naming the line, for
    what is not one."""
    it = iter(lines)
    header = next(it, "").strip()
    if header == "fio version 3 iolog":
        version = 3
    elif header == "fio version 2 iolog":
        version = 2
    else:
        raise UsageError(f"{where}: line 1 is {header[:60]!r}, not a fio iolog header ('fio version 2 iolog' or 'fio version 3 iolog')")
    issue, op, offset, length = array("q"), array("B"), array("q"), array("q")
    clock_us = 0
    for number, raw in enumerate(it, start=2):
        parts = raw.split()
        if not parts:
            continue
        if version == 3:
            if len(parts) < 3 or not parts[0].isdigit():
                raise UsageError(f"{where}: line {number} is not 'TIME FILE ACTION [OFFSET LENGTH]': {raw.strip()[:80]!r}")
            clock_us, parts = int(parts[0]), parts[1:]
        action = parts[1] if len(parts) > 1 else ""
        if action in _FILE_ACTIONS:
            continue
        if version == 2 and action == "wait" and len(parts) >= 3 and parts[2].isdigit():
            clock_us += int(parts[2])
            continue
        kind = _ACTIONS.get(action)
        if kind is None:
            raise UsageError(f"{where}: line {number} has action {action!r}: a fio iolog's are read, write, trim, sync, datasync, wait, add, open, close")
        if kind == FLUSH:
            off, ln = 0, 0
        else:
            if len(parts) < 4 or not parts[2].isdigit() or not parts[3].isdigit():
                raise UsageError(f"{where}: line {number}: a {action} needs an offset and a length in bytes: {raw.strip()[:80]!r}")
            off, ln = int(parts[2]), int(parts[3])
        issue.append(clock_us * 1000)
        op.append(kind)
        offset.append(off)
        length.append(ln)
    if not issue:
        raise UsageError(f"{where}: the iolog holds no read, write, trim or sync: nothing to store")
    notes = meta.notes
    if version == 2:
        notes += ("a v2 iolog has no issue times: its requests are as fast as they go, only its waits timed",)
    notes += ("an iolog holds no completions: no latency, no queue depth of the source",)
    return make_trace(replace(meta, notes=notes), issue, array("q", [-1]) * len(issue), op, offset, length)
