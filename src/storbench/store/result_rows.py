"""The results' rows: storing a result (committed at once) or an import's results (all or none),
the run index it feeds (targets, hosts, findings), and every read of results."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, update
from sqlalchemy.engine import Connection

from storbench.errors import StoreError
from storbench.jsontypes import JSONObject
from storbench.model import FioResult, versions
from storbench.record import ResultRecord
from storbench.serialize import fio_result_to_dict
from storbench.store.tables import results, run_index, runs

from .base import StoreBase, chunks, index_lines, index_unlines, inserted_id

if TYPE_CHECKING:

    pass


def headline_columns(fio: FioResult) -> dict[str, float | None]:
    """Denormalised totals for listing (see tables.py).

    From the aggregate job ("All clients") when there is one, else summed over every
    job that did I/O in that direction; ``None`` when no job did (for example only
    ``mixed`` under unified_rw_reporting).
    """
    aggregate = [j for j in fio.jobs if j.is_aggregate]
    jobs = aggregate[:1] or list(fio.jobs)
    out: dict[str, float | None] = {}
    for direction in ("read", "write"):
        stats = [j.directions[direction] for j in jobs if direction in j.directions]
        out[f"{direction}_iops"] = sum(float(s.iops) for s in stats) if stats else None
        out[f"{direction}_bw_bytes"] = sum(float(s.bw_bytes) for s in stats) if stats else None
    return out


def extras_to_json(record: ResultRecord) -> dict[str, str | None]:
    """The 0002 columns: storage, activity, findings, space as versioned JSON (None stays NULL)."""
    from ..activity import activity_to_dict
    from ..backend import backend_to_dict
    from ..storage import storage_to_dict

    def dump(value: Any) -> str | None:
        return None if value is None else json.dumps(value, ensure_ascii=False, allow_nan=False)

    return {
        "storage_json": dump(storage_to_dict(record.storage) if record.storage is not None else None),
        "activity_json": dump(activity_to_dict(record.activity) if record.activity is not None else None),
        "findings_json": dump(
            {"format_version": versions.FINDINGS, "findings": [dataclasses.asdict(f) for f in record.findings]}
            if record.findings
            else None
        ),
        "space_json": dump(dict(record.space) if record.space is not None else None),
        "series_json": dump(dict(record.series) if record.series is not None else None),
        "backend_json": dump(backend_to_dict(record.backend) if record.backend is not None else None),
    }


class ResultRows(StoreBase):
    """The results of a store."""

    def _index(self, conn: Connection, records: Sequence[ResultRecord]) -> None:
        """Add the records' targets, hosts and finding checks to their runs' rows of ``run_index``
        (what the runs page filters on), in the transaction that stores them."""
        for run_id in dict.fromkeys(r.run_id for r in records):
            row = conn.execute(select(run_index).where(run_index.c.run_id == run_id)).first()
            have = {k: index_unlines(getattr(row, k)) if row is not None else [] for k in ("targets", "hosts", "checks")}
            new = {k: list(v) for k, v in have.items()}
            for r in records:
                if r.run_id != run_id:
                    continue
                for key, value in (("targets", self._enc(r.target)), ("hosts", self._enc(r.host) if r.host != "all" else None)):
                    if value and value not in new[key]:
                        new[key].append(value)
                for f in r.findings:
                    if f.check not in new["checks"]:
                        new["checks"].append(f.check)
            if new == have:
                continue
            values = {k: index_lines(v) for k, v in new.items()}
            if row is None:
                conn.execute(run_index.insert().values(run_id=run_id, **values))
            else:
                conn.execute(update(run_index).where(run_index.c.run_id == run_id).values(**values))

    def add_result(self, record: ResultRecord) -> int:
        """Store one result and COMMIT at once; returns the result id.

        ``record.result_id`` is ignored; ``record.created_at`` defaults to now.
        """
        values = self._result_values(record)

        def insert(conn: Connection) -> int:
            self._require_run(conn, record.run_id)
            result_id = inserted_id(conn.execute(results.insert().values(**values)))
            self._index(conn, [record])
            return result_id

        return self._write(insert)

    def add_results(self, records: Sequence[ResultRecord]) -> list[int]:
        """Store several results of one run in ONE transaction (an import: all or none); their ids."""
        rows = [self._result_values(r) for r in records]

        def insert(conn: Connection) -> list[int]:
            for run_id in {r.run_id for r in records}:
                self._require_run(conn, run_id)
            # one statement for all (SQLAlchemy's insertmanyvalues), ids in the order given
            done = conn.execute(results.insert().returning(results.c.id, sort_by_parameter_order=True), rows)
            ids = list(map(int, done.scalars().all()))
            self._index(conn, records)
            return ids

        return self._write(insert) if rows else []

    def _result_values(self, record: ResultRecord) -> dict:
        try:
            result_json = json.dumps(fio_result_to_dict(record.fio), ensure_ascii=False)
            options_json = json.dumps(dict(record.options), ensure_ascii=False)
            extras = extras_to_json(record)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"result of workload {record.workload!r} cannot be stored as JSON: {exc}") from exc
        values = {
            "run_id": record.run_id,
            "workload": self._enc(record.workload),
            "target": self._enc(record.target),
            "label": self._enc(record.label),
            "source": self._enc(record.source),
            "repetition": record.repetition,
            # a listing column (String(64)); the full version is in result_json
            "fio_version": self._enc(record.fio.fio_version[:64]) if record.fio.fio_version else record.fio.fio_version,
            "options_json": options_json,
            "job_text": self._enc(record.job_text),
            "result_json": result_json,
            "raw_output": self._enc(record.raw_output),
            "created_at": record.created_at or self._now(),
            "host": self._enc(record.host),
            **headline_columns(record.fio),
            **extras,
        }
        return values

    def results_of_workload(self, workload: str, target: str | None = None, label_prefix: str | None = None,
                            limit: int = 500) -> list[ResultRecord]:  # fmt: skip
        """The newest ``limit`` results of one workload (on one target, in runs whose label starts
        with ``label_prefix``), oldest first: a trend over time."""
        query = select(results).where(results.c.workload == self._enc(workload))
        if target:
            query = query.where(results.c.target == self._enc(target))
        if label_prefix:
            prefix = self._enc(label_prefix) or ""
            query = query.where(results.c.run_id.in_(select(runs.c.id).where(func.substr(runs.c.label, 1, len(prefix)) == prefix)))
        query = query.order_by(results.c.id.desc()).limit(limit)
        rows = self._read(lambda conn: list(conn.execute(query)))
        return [self._record(r) for r in reversed(rows)]

    def result(self, result_id: int) -> ResultRecord | None:
        """One result by its id, or None."""
        row = self._read(lambda conn: conn.execute(select(results).where(results.c.id == result_id)).first())
        return None if row is None else self._record(row)

    def last_results(self, limit: int = 1000) -> list[JSONObject]:
        """The newest result of each (workload, target, host) among the newest results of complete
        runs (at most ``limit`` of them; a run still going, stopped or killed is not a result yet):
        the headline columns only, not the whole record (``/metrics``)."""
        complete = select(runs.c.id).where(runs.c.status == "complete")
        newest = (select(func.max(results.c.id).label("id")).where(results.c.run_id.in_(complete))
                  .group_by(results.c.workload, results.c.target, results.c.host)
                  .order_by(func.max(results.c.id).desc()).limit(limit).subquery())  # fmt: skip
        query = select(results.c.id, results.c.run_id, results.c.workload, results.c.target, results.c.host, results.c.created_at,
                       results.c.read_iops, results.c.write_iops, results.c.read_bw_bytes, results.c.write_bw_bytes,
                       runs.c.label).join(newest, newest.c.id == results.c.id).join(runs, runs.c.id == results.c.run_id)  # fmt: skip
        rows = self._read(lambda conn: list(conn.execute(query.order_by(results.c.id))))
        return [{"result_id": r.id, "run_id": r.run_id, "workload": self._dec(r.workload), "target": self._dec(r.target),
                 "host": self._dec(r.host), "label": self._dec(r.label), "created_at": r.created_at,
                 "read_iops": r.read_iops, "write_iops": r.write_iops, "read_bw_bytes": r.read_bw_bytes,
                 "write_bw_bytes": r.write_bw_bytes} for r in rows]  # fmt: skip

    def results(self, run_id: int) -> list[ResultRecord]:
        """Every result of a run in insertion order, fully reconstructed."""

        def work(conn: Connection) -> list[ResultRecord]:
            self._require_run(conn, run_id)
            rows = conn.execute(select(results).where(results.c.run_id == run_id).order_by(results.c.id))
            return [self._record(row) for row in rows]

        return self._read(work)

    def results_of(self, run_ids: Sequence[int]) -> dict[int, list[ResultRecord]]:
        """The results of several runs in one query (no round trip per run): per run, in the
        order given, its results in insertion order (``[]`` for a run without any);
        :class:`UsageError` for an id that names no run."""
        wanted = list(dict.fromkeys(run_ids))

        def work(conn: Connection) -> dict[int, list[ResultRecord]]:
            out: dict[int, list[ResultRecord]] = {}
            for chunk in chunks(wanted):
                known = {int(r[0]) for r in conn.execute(select(runs.c.id).where(runs.c.id.in_(chunk)))}
                for rid in chunk:
                    if rid not in known:
                        raise self._not_found(conn, rid)
                    out[rid] = []
                rows = conn.execute(select(results).where(results.c.run_id.in_(chunk)).order_by(results.c.id))
                for row in rows:
                    out[row.run_id].append(self._record(row))
            return {rid: out[rid] for rid in wanted}

        return self._read(work)
