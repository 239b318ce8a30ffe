"""The trace record: one device's completed requests, columns of numpy arrays, and what is known of them.

Times are nanoseconds from the trace's first issue; ``complete_ns`` is ``-1`` where the completion
was not recorded (an iolog or a CSV without response times).  ``op`` holds :data:`OPS` indices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    from storbench.jsontypes import JSONMapping

#: the kinds of request a trace holds, by their index in ``Trace.op``
OPS: tuple[str, ...] = ("read", "write", "trim", "flush")
READ, WRITE, TRIM, FLUSH = 0, 1, 2, 3

#: where a trace came from (``TraceMeta.source``)
SOURCES: tuple[str, ...] = ("tracefs", "blktrace", "fio-iolog", "msr-cambridge", "alibaba")


@dataclass(frozen=True)
class TraceMeta:
    """What is known of a trace besides its events.

    ``completed_kernel``: the device's own completed-request counters (``/sys/block/DEV/stat``)
    over the capture, per direction, the reference a capture is checked against; ``completed_seen``:
    the completions the capture saw, counted the same way.  ``lost_events``: events the kernel's
    buffer dropped (``None``: not known, as for an import).
    """

    label: str
    source: str
    device: str | None = None
    #: what the device is beyond its name, which the kernel reuses (a loop device's backing file and
    #: inode, a disk's WWID or serial): a replay never runs on the device a trace came from
    identity: str | None = None
    device_bytes: int | None = None
    logical_block_bytes: int | None = None
    kernel: str | None = None
    command: str | None = None
    host: str | None = None
    created_at: str | None = None
    lost_events: int | None = None
    completed_kernel: tuple[tuple[str, int], ...] = ()
    completed_seen: tuple[tuple[str, int], ...] = ()
    #: the storage description of the source (:mod:`storbench.storage.codec`'s JSON), when captured
    storage: JSONMapping | None = None
    #: what the capture or import said about itself (one line each)
    notes: tuple[str, ...] = ()
    #: the capture's own cost: ``{"cpu_s": ..., "events_per_s": ...}``
    cost: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, eq=False)
class Trace:
    """The events, sorted by issue time, and their meta."""

    meta: TraceMeta
    issue_ns: npt.NDArray[np.int64]
    complete_ns: npt.NDArray[np.int64]
    op: npt.NDArray[np.uint8]
    offset_bytes: npt.NDArray[np.int64]
    length_bytes: npt.NDArray[np.int64]

    def __post_init__(self) -> None:
        n = len(self.issue_ns)
        for name in ("complete_ns", "op", "offset_bytes", "length_bytes"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"trace column {name} has {len(getattr(self, name))} values, not {n}")

    def __len__(self) -> int:
        return len(self.issue_ns)

    @property
    def span_ns(self) -> int:
        """From the first issue to the last issue or completion."""
        if not len(self):
            return 0
        last = int(self.issue_ns[-1])
        done = self.complete_ns[self.complete_ns >= 0]
        if len(done):
            last = max(last, int(done.max()))
        return last - int(self.issue_ns[0])

    @property
    def has_completions(self) -> bool:
        return bool((self.complete_ns >= 0).any())

    @property
    def extent_bytes(self) -> int:
        """The end of the furthest request: what a replay target must hold."""
        if not len(self):
            return 0
        return int((self.offset_bytes + self.length_bytes).max())

    def count(self, op: int) -> int:
        return int((self.op == op).sum())


def _buffer_of(values: npt.ArrayLike, typecode: str) -> bool:
    import array

    return isinstance(values, array.array) and values.typecode == typecode and len(values) > 0


def _int64(values: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """A column without a copy where the values are an ``array.array("q")`` of a reader."""
    if _buffer_of(values, "q"):
        return np.frombuffer(values, dtype=np.int64)  # type: ignore[arg-type]
    return np.asarray(values, dtype=np.int64)


def _uint8(values: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    if _buffer_of(values, "B"):
        return np.frombuffer(values, dtype=np.uint8)  # type: ignore[arg-type]
    return np.asarray(values, dtype=np.uint8)


def make_trace(
    meta: TraceMeta,
    issue_ns: npt.ArrayLike,
    complete_ns: npt.ArrayLike,
    op: npt.ArrayLike,
    offset_bytes: npt.ArrayLike,
    length_bytes: npt.ArrayLike,
) -> Trace:
    """A trace from columns in any order: sorted by issue time (stable), times from the first issue.
    Columns that are ``array.array`` buffers of the right type are taken without a copy (and
    changed in place): a million requests are not held twice."""
    issue = _int64(issue_ns)
    complete = _int64(complete_ns)
    ops = _uint8(op)
    offset = _int64(offset_bytes)
    length = _int64(length_bytes)
    if len(issue) > 1 and not bool((issue[1:] >= issue[:-1]).all()):
        order = np.argsort(issue, kind="stable")
        issue, complete, ops, offset, length = issue[order], complete[order], ops[order], offset[order], length[order]
    start = int(issue[0]) if len(issue) else 0
    if start:
        if issue.flags.writeable:
            issue -= start  # a reader's own buffer: shifted in place, not copied
        else:
            issue = issue - start
        done = complete >= 0
        if not complete.flags.writeable:
            complete = complete.copy()
        complete[done] -= start
    return Trace(meta=meta, issue_ns=issue, complete_ns=complete, op=ops, offset_bytes=offset, length_bytes=length)

