"""A stored trace as the store lists it, without its events (no numpy: ``storbench trace list``
and ``show`` read it without loading the events' arrays)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from storbench.jsontypes import JSONObject


@dataclass(frozen=True)
class TraceRow:
    """A stored trace without its events: what ``list``, ``show`` and ``serve`` need (the store's
    rows, :mod:`storbench.store.trace_reads`)."""

    trace_id: int
    label: str
    created_at: str
    source: str
    device: str | None
    events: int
    span_s: float
    meta: JSONObject
    figures: JSONObject
    stored_bytes: int
