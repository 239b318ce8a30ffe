"""The reads of stored traces, written once for both ways a store is read: the store itself
(SQLAlchemy) and the reader (the DB-API driver alone, :mod:`.reader`), so that ``trace show``,
``trace list`` and a replay's loading of a trace import no SQLAlchemy and hold one trace's
events at a time.  Plain SQL with ``?`` parameters, the same on SQLite and PostgreSQL.

May import: the trace records and codec, errors; never SQLAlchemy.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from storbench.errors import UsageError
from storbench.trace.rows import TraceRow

if TYPE_CHECKING:
    from collections.abc import Callable

    from storbench.trace.events import Trace

__all__ = ["TraceReads", "TraceRow"]

_COLUMNS = "SELECT id, label, created_at, source, device, events_count, span_s, meta_json, figures_json, length(events) AS stored_bytes FROM traces"


class TraceReads:
    """Find, list and load traces; the class it is mixed into gives :meth:`_trace_sql` (rows with
    columns by name), ``display`` and ``_dec``."""

    display: str
    _dec: Callable[[str | None], str | None]
    _enc: Callable[[str | None], str | None]

    def _trace_sql(self, sql: str, *params: Any) -> list[Any]:  # pragma: no cover - each store gives its own
        raise NotImplementedError

    def _trace_row(self, r: Any) -> TraceRow:
        return TraceRow(
            trace_id=int(r.id), label=self._dec(r.label) or "", created_at=str(r.created_at), source=str(r.source),
            device=self._dec(r.device), events=int(r.events_count), span_s=float(r.span_s),
            meta=json.loads(self._dec(r.meta_json) or "{}"), figures=json.loads(str(r.figures_json)),
            stored_bytes=int(r.stored_bytes),
        )  # fmt: skip

    def list_traces(self, limit: int | None = None) -> list[TraceRow]:
        sql = _COLUMNS + " ORDER BY id DESC" + (f" LIMIT {int(limit)}" if limit else "")
        return [self._trace_row(r) for r in self._trace_sql(sql)]

    def find_trace(self, ref: str) -> TraceRow:
        """A trace by id, label (the newest of that label) or ``last``; one line when there is none."""
        if ref == "last":
            rows = self._trace_sql(_COLUMNS + " ORDER BY id DESC LIMIT 1")
        elif ref.isdigit() and len(ref) < 10:
            rows = self._trace_sql(_COLUMNS + " WHERE id = ?", int(ref))
        else:
            rows = self._trace_sql(_COLUMNS + " WHERE label = ? ORDER BY id DESC LIMIT 1", self._enc(ref))
        if not rows:
            raise UsageError(f"no trace {ref!r} in {self.display} (storbench trace list shows them)")
        return self._trace_row(rows[0])

    def load_trace(self, trace_id: int) -> Trace:
        """A stored trace with its events."""
        from storbench.trace.codec import decode_events, meta_from_dict

        rows = self._trace_sql("SELECT meta_json, events FROM traces WHERE id = ?", trace_id)
        if not rows:
            raise UsageError(f"no trace {trace_id} in {self.display}")
        meta = meta_from_dict(json.loads(self._dec(rows[0].meta_json) or "{}"))
        blob = rows[0].events
        del rows
        return decode_events(bytes(blob), meta)
