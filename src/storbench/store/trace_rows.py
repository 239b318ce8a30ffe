"""The traces of a store: one row each, its events one compressed blob (:mod:`storbench.trace.codec`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select

from storbench.errors import UsageError

from .base import StoreBase, inserted_id

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from storbench.jsontypes import JSONObject
    from storbench.trace.events import Trace


@dataclass(frozen=True)
class TraceRow:
    """A stored trace without its events: what ``list`` and ``show`` need."""

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


class TraceRows(StoreBase):
    """Add, list, find and load traces."""

    def add_trace(self, trace: Trace, figures: JSONObject) -> int:
        """Store a trace with its figures (one committed transaction); returns its id."""
        from storbench.store.tables import traces
        from storbench.trace.codec import encode_events, meta_to_dict

        meta = meta_to_dict(trace.meta)
        values = {
            "label": self._enc(trace.meta.label), "created_at": trace.meta.created_at or self._now(),
            "source": trace.meta.source, "device": self._enc(trace.meta.device) if trace.meta.device else None,
            "events_count": len(trace), "span_s": trace.span_ns / 1e9,
            "meta_json": self._enc(json.dumps(meta, allow_nan=False)), "figures_json": json.dumps(figures, allow_nan=False),
            "events": encode_events(trace),
        }  # fmt: skip
        return self._write(lambda conn: inserted_id(conn.execute(traces.insert().values(**values))))

    def _row(self, r: Any) -> TraceRow:
        return TraceRow(
            trace_id=int(r.id), label=self._dec(r.label) or "", created_at=str(r.created_at), source=str(r.source),
            device=self._dec(r.device), events=int(r.events_count), span_s=float(r.span_s),
            meta=json.loads(self._dec(r.meta_json) or "{}"), figures=json.loads(str(r.figures_json)),
            stored_bytes=int(r.stored_bytes),
        )  # fmt: skip

    def _columns(self) -> list[Any]:
        from sqlalchemy import func

        from storbench.store.tables import traces

        return [traces.c.id, traces.c.label, traces.c.created_at, traces.c.source, traces.c.device, traces.c.events_count,
                traces.c.span_s, traces.c.meta_json, traces.c.figures_json, func.length(traces.c.events).label("stored_bytes")]  # fmt: skip

    def list_traces(self, limit: int | None = None) -> list[TraceRow]:
        from storbench.store.tables import traces

        query = select(*self._columns()).order_by(traces.c.id.desc())
        if limit:
            query = query.limit(limit)
        return [self._row(r) for r in self._read(lambda conn: list(conn.execute(query)))]

    def find_trace(self, ref: str) -> TraceRow:
        """A trace by id, label (the newest of that label) or ``last``; one line when there is none."""
        from storbench.store.tables import traces

        query = select(*self._columns())
        if ref == "last":
            query = query.order_by(traces.c.id.desc()).limit(1)
        elif ref.isdigit():
            query = query.where(traces.c.id == int(ref))
        else:
            query = query.where(traces.c.label == self._enc(ref)).order_by(traces.c.id.desc()).limit(1)
        row = self._read(lambda conn: conn.execute(query).first())
        if row is None:
            raise UsageError(f"no trace {ref!r} in {self.display} (storbench trace list shows them)")
        return self._row(row)

    def load_trace(self, trace_id: int) -> Trace:
        """A stored trace with its events."""
        from storbench.store.tables import traces
        from storbench.trace.codec import decode_events, meta_from_dict

        def work(conn: Connection) -> tuple[str, bytes] | None:
            row = conn.execute(select(traces.c.meta_json, traces.c.events).where(traces.c.id == trace_id)).first()
            return None if row is None else (self._dec(row.meta_json) or "{}", bytes(row.events))

        got = self._read(work)
        if got is None:
            raise UsageError(f"no trace {trace_id} in {self.display}")
        return decode_events(got[1], meta_from_dict(json.loads(got[0])))

    def delete_trace(self, trace_id: int) -> bool:
        from storbench.store.tables import traces

        return bool(self._write(lambda conn: conn.execute(delete(traces).where(traces.c.id == trace_id)).rowcount))
