"""The traces of a store: one row each, its events one compressed blob (:mod:`storbench.trace.codec`).
Adding and removing here; the reads are :mod:`.trace_reads`'s, shared with the reader."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, text

from .base import StoreBase, inserted_id
from .trace_reads import TraceReads, TraceRow

if TYPE_CHECKING:
    from storbench.jsontypes import JSONObject
    from storbench.trace.codec import EncodedTrace

__all__ = ["TraceRow", "TraceRows"]


class TraceRows(StoreBase, TraceReads):
    """Add, list, find, load and delete traces."""

    def _trace_sql(self, sql: str, *params: Any) -> list[Any]:
        names = iter(range(len(params)))
        statement = text(re.sub(r"\?", lambda _m: f":p{next(names)}", sql))
        bound = {f"p{i}": v for i, v in enumerate(params)}
        return self._read(lambda conn: list(conn.execute(statement, bound)))

    def add_trace(self, encoded: EncodedTrace, figures: JSONObject) -> int:
        """Store an encoded trace with its figures (one committed transaction); returns its id."""
        from storbench.store.tables import traces
        from storbench.trace.codec import meta_to_dict

        meta = encoded.meta
        values = {
            "label": self._enc(meta.label), "created_at": meta.created_at or self._now(),
            "source": meta.source, "device": self._enc(meta.device) if meta.device else None,
            "events_count": encoded.events, "span_s": encoded.span_s,
            "meta_json": self._enc(json.dumps(meta_to_dict(meta), allow_nan=False)), "figures_json": json.dumps(figures, allow_nan=False),
            "events": encoded.blob,
        }  # fmt: skip
        return self._write(lambda conn: inserted_id(conn.execute(traces.insert().values(**values))))

    def delete_trace(self, trace_id: int) -> bool:
        from storbench.store.tables import traces

        return bool(self._write(lambda conn: conn.execute(delete(traces).where(traces.c.id == trace_id)).rowcount))
