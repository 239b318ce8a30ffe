"""A trace as stored: its meta as versioned JSON, its events as one compressed blob.

The blob is ``b"SBTR"``, a version byte, the event count (8 bytes, little-endian), then zlib of the
columns, each delta-encoded where that makes it small (issue times as gaps, completions as
latencies, offsets as jumps from the previous request's end) and byte-shuffled (the k-th byte of
every value together), so that the many small numbers of a real trace compress to a few bytes an
event.  :func:`decode_events` refuses a blob of another kind or a newer version in one line.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from storbench.errors import StoreError
from storbench.model import versions

from .events import Trace, TraceMeta

if TYPE_CHECKING:
    import numpy.typing as npt

    from storbench.jsontypes import JSONMapping, JSONObject

MAGIC = b"SBTR"


@dataclass(frozen=True)
class EncodedTrace:
    """A trace as it is stored: its meta, its count, span and the blob of its events (the events
    themselves can be let go before the store is opened)."""

    meta: TraceMeta
    events: int
    span_s: float
    blob: bytes


def encode_trace(trace: Trace) -> EncodedTrace:
    return EncodedTrace(meta=trace.meta, events=len(trace), span_s=trace.span_ns / 1e9, blob=encode_events(trace))
_HEAD = struct.Struct("<4sBQ")


#: events a column is shuffled and compressed (or read back) at a time: a million-event trace's
#: columns are never copied whole
CHUNK = 1 << 17


def _shuffled(column: npt.NDArray[np.int64]) -> Iterator[bytes]:
    """The column's bytes, byte-shuffled (every value's k-th byte together) per chunk."""
    for start in range(0, len(column), CHUNK):
        raw = np.ascontiguousarray(column[start : start + CHUNK], dtype="<i8").view(np.uint8).reshape(-1, 8)
        yield raw.T.tobytes()


def _unshuffle_into(out: npt.NDArray[np.int64], take: Callable[[int], bytes]) -> None:
    """Read a shuffled column, chunk by chunk, into ``out``."""
    n = len(out)
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        raw = np.frombuffer(take(8 * m), dtype=np.uint8).reshape(8, m)
        out[start : start + m] = np.ascontiguousarray(raw.T).view("<i8").reshape(m)


def encode_events(trace: Trace) -> bytes:
    """The events of ``trace`` as the stored blob (compressed chunk by chunk: a million events
    never make one uncompressed body, nor a copy of a column)."""
    n = len(trace)
    z = zlib.compressobj(6)
    parts = [_HEAD.pack(MAGIC, versions.TRACE_EVENTS, n)]

    def column(values: Callable[[int, int], npt.NDArray[np.int64]]) -> None:
        for start in range(0, n, CHUNK):
            for chunk in _shuffled(values(start, min(n, start + CHUNK))):
                parts.append(z.compress(chunk))

    issue, complete, offset, length = trace.issue_ns, trace.complete_ns, trace.offset_bytes, trace.length_bytes
    def gaps(a: int, b: int) -> npt.NDArray[np.int64]:
        out = issue[a:b].copy()
        out[1:] -= issue[a : b - 1]
        if a:
            out[0] -= issue[a - 1]
        return out

    column(gaps)
    column(lambda a, b: np.where(complete[a:b] >= 0, complete[a:b] - issue[a:b], -1))

    def jumps(a: int, b: int) -> npt.NDArray[np.int64]:
        out = offset[a:b].copy()
        prev_end = offset[max(a - 1, 0) : b - 1] + length[max(a - 1, 0) : b - 1]
        if a == 0:
            out[1:] -= prev_end
        else:
            out -= prev_end
        return out

    column(jumps)
    column(lambda a, b: length[a:b])
    for start in range(0, n, CHUNK):
        parts.append(z.compress(np.ascontiguousarray(trace.op[start : start + CHUNK], dtype=np.uint8).tobytes()))
    parts.append(z.flush())
    return b"".join(parts)


def decode_events(blob: bytes, meta: TraceMeta) -> Trace:
    """The trace a blob of :func:`encode_events` holds (read chunk by chunk into its columns)."""
    if len(blob) < _HEAD.size:
        raise StoreError("a stored trace's events are cut short (fewer bytes than their header)")
    magic, version, n = _HEAD.unpack_from(blob)
    if magic != MAGIC:
        raise StoreError("a stored trace's events are not storbench's (no SBTR header)")
    if version > versions.TRACE_EVENTS:
        raise StoreError(f"a stored trace's events are of version {version}, newer than this storbench reads ({versions.TRACE_EVENTS}): upgrade storbench")
    z = zlib.decompressobj()
    pending = memoryview(blob)[_HEAD.size :]

    def take(size: int) -> bytes:
        nonlocal pending
        out = bytearray()
        try:
            while len(out) < size:
                chunk = z.decompress(pending, size - len(out))
                pending = memoryview(z.unconsumed_tail)
                if not chunk:
                    break
                out += chunk
        except zlib.error as exc:
            raise StoreError(f"a stored trace's events cannot be read: {exc}") from exc
        if len(out) != size:
            raise StoreError(f"a stored trace's events hold fewer bytes than the {n * 33} of {n} events")
        return bytes(out)

    issue = np.empty(n, dtype=np.int64)
    complete = np.empty(n, dtype=np.int64)
    offset = np.empty(n, dtype=np.int64)
    length = np.empty(n, dtype=np.int64)
    _unshuffle_into(issue, take)
    np.cumsum(issue, out=issue)
    _unshuffle_into(complete, take)  # latencies, -1 unknown
    np.add(complete, issue, out=complete, where=complete >= 0)
    _unshuffle_into(offset, take)  # jumps from the previous request's end
    _unshuffle_into(length, take)
    if n:
        offset[1:] += length[:-1]
        np.cumsum(offset, out=offset)
    op = np.empty(n, dtype=np.uint8)
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        op[start : start + m] = np.frombuffer(take(m), dtype=np.uint8)
    return Trace(meta=meta, issue_ns=issue, complete_ns=complete, op=op, offset_bytes=offset, length_bytes=length)


def meta_to_dict(meta: TraceMeta) -> JSONObject:
    return {
        "version": versions.TRACE,
        "label": meta.label, "source": meta.source, "device": meta.device, "identity": meta.identity, "device_bytes": meta.device_bytes,
        "logical_block_bytes": meta.logical_block_bytes, "kernel": meta.kernel, "command": meta.command, "host": meta.host,
        "created_at": meta.created_at, "lost_events": meta.lost_events,
        "completed_kernel": dict(meta.completed_kernel), "completed_seen": dict(meta.completed_seen),
        "storage": dict(meta.storage) if meta.storage is not None else None,
        "notes": list(meta.notes), "cost": dict(meta.cost),
    }  # fmt: skip


def _opt_int(d: JSONMapping, key: str) -> int | None:
    v = d.get(key)
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else None


def _opt_str(d: JSONMapping, key: str) -> str | None:
    v = d.get(key)
    return v if isinstance(v, str) else None


def meta_from_dict(d: JSONMapping) -> TraceMeta:
    version = d.get("version")
    if not isinstance(version, int) or version > versions.TRACE:
        raise StoreError(f"a stored trace's description is of version {version!r}, which this storbench does not read (it reads up to {versions.TRACE}): upgrade storbench")
    def counts(key: str) -> tuple[tuple[str, int], ...]:
        return tuple((str(k), int(v)) for k, v in (d.get(key) or {}).items() if isinstance(v, int))

    storage = d.get("storage")
    return TraceMeta(
        label=str(d.get("label") or ""), source=str(d.get("source") or ""), device=_opt_str(d, "device"), identity=_opt_str(d, "identity"),
        device_bytes=_opt_int(d, "device_bytes"), logical_block_bytes=_opt_int(d, "logical_block_bytes"),
        kernel=_opt_str(d, "kernel"), command=_opt_str(d, "command"), host=_opt_str(d, "host"),
        created_at=_opt_str(d, "created_at"), lost_events=_opt_int(d, "lost_events"),
        completed_kernel=counts("completed_kernel"), completed_seen=counts("completed_seen"),
        storage=storage if isinstance(storage, dict) else None,
        notes=tuple(str(n) for n in d.get("notes") or ()),
        cost=tuple((str(k), float(v)) for k, v in (d.get("cost") or {}).items() if isinstance(v, (int, float))),
    )  # fmt: skip
