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
from typing import TYPE_CHECKING

import numpy as np

from storbench.errors import StoreError
from storbench.model import versions

from .events import Trace, TraceMeta

if TYPE_CHECKING:
    import numpy.typing as npt

    from storbench.jsontypes import JSONMapping, JSONObject

MAGIC = b"SBTR"
_HEAD = struct.Struct("<4sBQ")


def _shuffle(column: npt.NDArray[np.int64]) -> bytes:
    raw = np.ascontiguousarray(column, dtype="<i8").view(np.uint8).reshape(-1, 8)
    return raw.T.tobytes()


def _unshuffle(data: bytes, n: int) -> npt.NDArray[np.int64]:
    raw = np.frombuffer(data, dtype=np.uint8).reshape(8, n)
    return np.ascontiguousarray(raw.T).view("<i8").reshape(n).astype(np.int64)


def encode_events(trace: Trace) -> bytes:
    """The events of ``trace`` as the stored blob."""
    n = len(trace)
    gaps = np.diff(trace.issue_ns, prepend=np.int64(0))
    lat = np.where(trace.complete_ns >= 0, trace.complete_ns - trace.issue_ns, -1)
    ends = trace.offset_bytes + trace.length_bytes
    jumps = trace.offset_bytes - np.concatenate([np.zeros(1, dtype=np.int64), ends[:-1]]) if n else trace.offset_bytes
    body = b"".join([
        _shuffle(gaps), _shuffle(lat), _shuffle(jumps), _shuffle(trace.length_bytes),
        np.ascontiguousarray(trace.op, dtype=np.uint8).tobytes(),
    ])  # fmt: skip
    return _HEAD.pack(MAGIC, versions.TRACE_EVENTS, n) + zlib.compress(body, 6)


def decode_events(blob: bytes, meta: TraceMeta) -> Trace:
    """The trace a blob of :func:`encode_events` holds."""
    if len(blob) < _HEAD.size:
        raise StoreError("a stored trace's events are cut short (fewer bytes than their header)")
    magic, version, n = _HEAD.unpack_from(blob)
    if magic != MAGIC:
        raise StoreError("a stored trace's events are not storbench's (no SBTR header)")
    if version > versions.TRACE_EVENTS:
        raise StoreError(f"a stored trace's events are of version {version}, newer than this storbench reads ({versions.TRACE_EVENTS}): upgrade storbench")
    try:
        body = zlib.decompress(blob[_HEAD.size :])
    except zlib.error as exc:
        raise StoreError(f"a stored trace's events cannot be read: {exc}") from exc
    if len(body) != n * 33:
        raise StoreError(f"a stored trace's events hold {len(body)} bytes, not the {n * 33} of {n} events")
    cols = [_unshuffle(body[i * 8 * n : (i + 1) * 8 * n], n) for i in range(4)]
    gaps, lat, jumps, length = cols
    op = np.frombuffer(body[32 * n :], dtype=np.uint8).copy()
    issue = np.cumsum(gaps, dtype=np.int64)
    complete = np.where(lat >= 0, issue + lat, -1).astype(np.int64)
    offset = np.empty(n, dtype=np.int64)
    if n:
        # offset[i] = jumps[i] + end[i-1] = jumps[i] + offset[i-1] + length[i-1]
        offset = np.cumsum(jumps + np.concatenate([np.zeros(1, dtype=np.int64), length[:-1]]), dtype=np.int64)
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
