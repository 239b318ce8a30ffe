"""The rows beside runs and results: a running run's live state (rewritten as it runs, not
flushed on its own) and the network ceilings ``storbench net`` measured."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from storbench.jsontypes import JSONMapping, JSONObject
from storbench.store.tables import live_runs

from .base import StoreBase, inserted_id

if TYPE_CHECKING:

    from storbench.net import NetCeiling




class LiveRows(StoreBase):
    """The live states and network ceilings of a store."""

    def publish_live(self, run_id: int, state: JSONMapping) -> None:
        """Replace the live state of run ``run_id`` (a JSON-compatible dict, :mod:`storbench.run.live`).

        Not flushed on its own in a SQLite file (a view of the run, rewritten three times a
        workload; 4 ms a flush here): a power loss may take the newest state, never a result."""
        text = json.dumps(state, allow_nan=False, separators=(",", ":"))
        now = self._now()

        def work(conn: Connection) -> None:
            done = conn.execute(update(live_runs).where(live_runs.c.run_id == run_id).values(updated_at=now, state_json=text)).rowcount
            if not done:
                conn.execute(insert(live_runs).values(run_id=run_id, updated_at=now, state_json=text))

        self._write(work, durable=False)  # a view of the run while it runs: three writes a workload, no flush each

    def live_states(self, run_id: int | None = None) -> list[tuple[int, str, JSONObject]]:
        """(run id, updated at, state) of the runs publishing a live state (or of ``run_id``), newest first."""
        query = select(live_runs).order_by(live_runs.c.run_id.desc())
        if run_id is not None:
            query = query.where(live_runs.c.run_id == run_id)
        rows = self._read(lambda conn: list(conn.execute(query)))
        out = []
        for row in rows:
            try:
                out.append((row.run_id, row.updated_at, json.loads(row.state_json)))
            except ValueError:
                continue  # a state cut by a crash: the run shows as running, without its live figures
        return out

    def add_net_ceiling(
        self,
        server: str,
        streams: int,
        direction: str,
        bits_per_second: float,
        raw_json: str,
        created_at: str | None = None,
    ) -> int:
        """Store one ``storbench net`` measurement (commits); returns its id.  The rows of
        one invocation share ``created_at`` (pass the same value)."""
        from storbench.store.tables import NET_DIRECTIONS, net_ceilings

        if direction not in NET_DIRECTIONS:
            raise ValueError(f"direction must be one of {NET_DIRECTIONS}, not {direction!r}")
        values = {
            "server": self._enc(server.strip().lower()),
            "created_at": created_at or self._now(),
            "streams": int(streams),
            "direction": direction,
            "bits_per_second": float(bits_per_second),
            "raw_json": self._enc(raw_json),
        }
        return self._write(lambda conn: inserted_id(conn.execute(net_ceilings.insert().values(**values))))

    def last_net_ceiling(self, server: str) -> NetCeiling | None:
        """The measurements of the latest ``storbench net`` run against ``server``
        (a :class:`storbench.net.NetCeiling`), or None when there is none."""
        from storbench.net import NetCeiling, NetMeasurement
        from storbench.store.tables import net_ceilings

        key = self._enc(server.strip().lower())

        def work(conn: Connection):
            newest = conn.execute(
                select(net_ceilings.c.created_at).where(net_ceilings.c.server == key).order_by(net_ceilings.c.id.desc()).limit(1)
            ).first()
            if newest is None:
                return None
            rows = conn.execute(
                select(net_ceilings)
                .where(net_ceilings.c.server == key, net_ceilings.c.created_at == newest.created_at)
                .order_by(net_ceilings.c.id)
            ).all()
            name = self._dec(key) or ""
            return NetCeiling(
                server=name,
                created_at=newest.created_at,
                measurements=tuple(
                    NetMeasurement(server=name, port=None, streams=r.streams, direction=r.direction, bits_per_second=r.bits_per_second)
                    for r in rows
                ),
            )

        return self._read(work)
