"""The runs' rows: creating, finishing and reopening a run, its metadata, and every read of runs
(the list, the history page's query with its index, digests, lookups by id or label)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Connection

from storbench import __version__
from storbench.errors import StoreError, UsageError
from storbench.jsontypes import JSONMapping, JSONObject
from storbench.model import RunInfo
from storbench.store.rows import (
    gone_reason,
    max_run_id,
    owner_gone,
    storage_of_json,
)
from storbench.store.tables import RUN_KINDS, RUN_STATUSES, live_runs, results, run_index, runs

from .base import StoreBase, chunks, execute_statement, index_lines, inserted_id

if TYPE_CHECKING:

    pass


#: how a page of runs can be ordered (:meth:`Store.query_runs`): name -> the runs table's column
RUN_SORTS: dict[str, str] = {"run": "id", "label": "label", "status": "status", "started": "created_at",
                             "finished": "finished_at", "suite": "suite"}  # fmt: skip


class RunRows(StoreBase):
    """The runs of a store."""

    def create_run(
        self,
        label: str | None,
        kind: str,
        suite: str | None = None,
        meta: JSONMapping | None = None,
    ) -> int:
        """Record the start of a run (status ``running``); returns its id."""
        if kind not in RUN_KINDS:
            raise ValueError(f"run kind must be one of {RUN_KINDS}, not {kind!r}")
        from .owner import this_process

        try:
            meta_json = json.dumps({**dict(meta or {}), "owner": this_process()}, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"run metadata cannot be stored as JSON: {exc}") from exc
        values = {
            "label": self._enc(label),
            "kind": kind,
            "status": "running",
            "suite": self._enc(suite),
            "created_at": self._now(),
            "storbench_version": __version__,
            "meta_json": meta_json,
        }
        host = (meta or {}).get("host")
        hostname = host.get("hostname") if isinstance(host, Mapping) else None

        def insert(conn: Connection) -> int:
            run_id = inserted_id(conn.execute(runs.insert().values(**values)))
            conn.execute(run_index.insert().values(run_id=run_id, targets="", checks="",
                                                   hosts=index_lines([self._enc(hostname) or ""]) if isinstance(hostname, str) and hostname else ""))  # fmt: skip
            return run_id

        return self._write(insert)

    def reopen_run(self, run_id: int) -> None:
        """Mark an incomplete run as running again (``run --resume``)."""

        from .owner import this_process

        def work(conn: Connection) -> None:
            self._require_run(conn, run_id)
            meta = self._meta_of(conn.execute(select(runs.c.meta_json).where(runs.c.id == run_id)).scalar_one())
            meta["owner"] = this_process()  # the resuming process owns it now
            conn.execute(update(runs).where(runs.c.id == run_id).values(
                status="running", reason=None, finished_at=None, meta_json=json.dumps(meta, ensure_ascii=False)))

        self._write(work)

    def reconcile_dead_runs(self) -> list[int]:
        """Mark ``incomplete`` every run still ``running`` whose owner process on this host is
        gone (killed, crashed, its machine rebooted); the ids marked.  Other hosts' runs are
        left as they are (their owners cannot be checked from here)."""
        rows = self._read(lambda conn: conn.execute(select(runs.c.id, runs.c.meta_json).where(runs.c.status == "running")).all())
        dead = [(row.id, owner) for row in rows if owner_gone(owner := self._meta_of(row.meta_json).get("owner"))]
        for run_id, owner in dead:
            stmt = (update(runs).where(runs.c.id == run_id, runs.c.status == "running")
                    .values(status="incomplete", reason=self._enc(gone_reason(owner)), finished_at=self._now()))  # fmt: skip
            self._write(functools.partial(execute_statement, stmt))
        return [run_id for run_id, _ in dead]

    def finish_run(self, run_id: int, status: str, reason: str | None = None) -> None:
        """Mark a run ``complete``, ``incomplete`` or ``failed`` (with the reason) and stamp finished_at."""
        if status not in RUN_STATUSES or status == "running":
            raise ValueError(f"a finished run's status must be complete, incomplete or failed, not {status!r}")
        stmt = update(runs).where(runs.c.id == run_id).values(status=status, reason=self._enc(reason), finished_at=self._now())

        def work(conn: Connection) -> None:
            if conn.execute(stmt).rowcount == 0:
                raise self._not_found(conn, run_id)
            conn.execute(delete(live_runs).where(live_runs.c.run_id == run_id))  # its live state ends with it

        self._write(work)

    def list_runs(self, limit: int | None = None, label_prefix: str | None = None) -> list[RunInfo]:
        """Runs newest first (by id), with their result counts.

        ``label_prefix`` matches labels starting with it, case-sensitively.
        """
        query = self._run_query().order_by(runs.c.id.desc())
        if label_prefix is not None:
            # substr instead of LIKE: no wildcard escaping, case-sensitive in every backend
            prefix = self._enc(label_prefix) or ""
            query = query.where(func.substr(runs.c.label, 1, len(prefix)) == prefix)
        if limit is not None:
            query = query.limit(limit)
        return self._read(lambda conn: [self._run_info(r) for r in conn.execute(query)])

    def query_runs(
        self,
        *,
        label_prefix: str | None = None,
        target: str | None = None,
        suite: str | None = None,
        host: str | None = None,
        since: str | None = None,
        until: str | None = None,
        check: str | None = None,
        status: str | None = None,
        sort: str = "run",
        descending: bool = True,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[RunInfo], int]:
        """One page of runs, newest first (or by ``sort``, one of :data:`RUN_SORTS`, ascending when
        not ``descending``; ties newest first), and how many match in all (storbench serve's runs page).

        ``target``: a result's target contains it; ``host``: a result ran on it (host:port) or the
        run's host name contains it; ``since``/``until``: ISO dates or times (``2026-12-01``)
        compared with the run's start; ``check``: a result has a finding with that check id.
        Every value is a bound parameter: no SQL is built from the text."""
        conds = []
        if label_prefix:
            prefix = self._enc(label_prefix) or ""
            conds.append(func.substr(runs.c.label, 1, len(prefix)) == prefix)
        if suite:
            conds.append(runs.c.suite == self._enc(suite))
        if since:
            conds.append(runs.c.created_at >= since)
        if until:
            conds.append(runs.c.created_at < until + ("T99" if "T" not in until else ""))  # a date: the whole day
        #: ``interrupted`` is a ``running`` run whose process is gone, known only when its row is read:
        #: both are read whole (runs in progress are few) and told apart before the page is cut
        derived = status in ("running", "interrupted")
        if status:
            conds.append(runs.c.status == ("running" if derived else status))

        # the filters on what a run's results hold read its one row of run_index (0006), not its results
        indexed = []
        if target:
            indexed.append(self._position(run_index.c.targets, (self._enc(target) or "").replace("\n", " ")) > 0)
        if host:
            indexed.append(self._position(run_index.c.hosts, (self._enc(host) or "").replace("\n", " ")) > 0)
        if check:
            indexed.append(self._position(run_index.c.checks, "\n" + (self._enc(check) or "").replace("\n", " ") + "\n") > 0)
        if indexed:
            conds.append(runs.c.id.in_(select(run_index.c.run_id).where(*indexed)))
        if sort not in RUN_SORTS:
            raise UsageError(f"cannot sort runs by {sort!r} (choose from {', '.join(RUN_SORTS)})")
        column = getattr(runs.c, RUN_SORTS[sort])
        order = [column.desc() if descending else column.asc()] + ([runs.c.id.desc()] if sort != "run" else [])
        if derived:
            everything = self._run_query().where(*conds).order_by(*order)
            found = [i for i in self._read(lambda conn: [self._run_info(r) for r in conn.execute(everything)]) if i.status == status]
            return found[max(0, offset):max(0, offset) + max(1, limit)], len(found)
        base = self._run_query().where(*conds).order_by(*order).offset(max(0, offset)).limit(max(1, limit))
        counted = select(func.count()).select_from(runs).where(*conds)

        def work(conn: Connection) -> tuple[list[RunInfo], int]:
            return [self._run_info(r) for r in conn.execute(base)], int(conn.execute(counted).scalar_one())

        return self._read(work)

    def run_digests(self, run_ids: Sequence[int]) -> dict[int, JSONObject]:
        """For each run (a page of runs at once): its distinct ``targets`` and ``hosts``, its
        findings' ``checks`` by severity, its ``figures`` (one per result of the aggregate or a
        single host: workload, repetition, options, the headline columns), ``storage`` (the
        description of each target, from its first result; a description this storbench cannot
        read is left out) and ``machine`` (the host name the run ran on, from its metadata)."""
        if not run_ids:
            return {}
        c = results.c
        query = (select(c.id, c.run_id, c.target, c.host, c.findings_json, c.workload, c.repetition, c.options_json,
                        c.read_iops, c.write_iops, c.read_bw_bytes, c.write_bw_bytes)
                 .where(c.run_id.in_(list(run_ids))).order_by(c.id))  # fmt: skip
        first = select(func.min(c.id)).where(c.run_id.in_(list(run_ids))).group_by(c.run_id, c.target)
        described = select(c.run_id, c.target, c.storage_json).where(c.id.in_(first), c.storage_json.is_not(None))
        metas = select(runs.c.id, runs.c.meta_json).where(runs.c.id.in_(list(run_ids)))
        # an application load's result (no fio figure in the columns): its figures are in its JSON
        loads = (select(c.id, c.result_json).where(c.run_id.in_(list(run_ids)), c.read_iops.is_(None), c.write_iops.is_(None),
                                                   c.read_bw_bytes.is_(None), c.write_bw_bytes.is_(None)))  # fmt: skip
        out: dict[int, JSONObject] = {rid: {"targets": [], "hosts": [], "checks": {}, "figures": [], "storage": {}, "machine": None}
                                          for rid in run_ids}  # fmt: skip

        def work(conn: Connection) -> tuple[list[Any], list[Any], list[Any], dict[int, Any]]:
            return (list(conn.execute(query)), list(conn.execute(described)), list(conn.execute(metas)),
                    {r.id: r.result_json for r in conn.execute(loads)})  # fmt: skip

        rows, storages, machines, measured = self._read(work)
        for row in machines:  # the machine the run ran on (its metadata's host facts)
            try:
                host = json.loads(row.meta_json).get("host")
            except (ValueError, AttributeError):
                host = None
            if isinstance(host, dict) and isinstance(host.get("hostname"), str):
                out[row.id]["machine"] = host["hostname"]
        for row in rows:
            d = out[row.run_id]
            target, host = self._dec(row.target), self._dec(row.host)
            if target and target not in d["targets"]:
                d["targets"].append(target)
            if host and host != "all" and host not in d["hosts"]:
                d["hosts"].append(host)
            try:
                stored = json.loads(row.findings_json) if row.findings_json else {}
            except ValueError:
                stored = {}
            for f in stored.get("findings", []) if isinstance(stored, dict) else []:
                if isinstance(f, dict) and f.get("severity") in ("warning", "invalid"):
                    d["checks"].setdefault(f.get("check"), f.get("severity"))
            if host in (None, "all"):
                try:
                    options = json.loads(row.options_json) if row.options_json else {}
                except ValueError:
                    options = {}
                d["figures"].append({"workload": self._dec(row.workload), "repetition": row.repetition, "target": target,
                                     "options": options if isinstance(options, dict) else {},
                                     "read_iops": row.read_iops, "write_iops": row.write_iops,
                                     "read_bw_bytes": row.read_bw_bytes, "write_bw_bytes": row.write_bw_bytes,
                                     "measures": _measures_of(measured.get(row.id))})  # fmt: skip
        for row in storages:
            try:
                info = storage_of_json(row.storage_json)
            except (ValueError, StoreError):
                continue
            out[row.run_id]["storage"].setdefault(self._dec(row.target) or "", info)
        return out

    def runs_with_meta_key(self, key: str, limit: int = 200) -> list[tuple[RunInfo, JSONObject]]:
        """The newest runs whose metadata has ``key`` (a curve, a steady-state window), with their metadata."""
        query = self._run_query().where(self._position(runs.c.meta_json, json.dumps(key) + ":") > 0).order_by(runs.c.id.desc()).limit(limit)
        rows = self._read(lambda conn: list(conn.execute(query)))
        out = []
        for r in rows:
            meta = self._meta_of(r.meta_json)
            if key in meta:
                meta.pop("owner", None)
                out.append((self._run_info(r), meta))
        return out

    def get_run(self, run_id: int) -> RunInfo:
        """One run; :class:`UsageError` naming the valid range when there is no such run."""

        def work(conn: Connection) -> RunInfo:
            row = conn.execute(self._run_query().where(runs.c.id == run_id)).first()
            if row is None:
                raise self._not_found(conn, run_id)
            return self._run_info(row)

        return self._read(work)

    def get_runs(self, run_ids: Sequence[int]) -> dict[int, RunInfo]:
        """Several runs in one query, in the order given (a repeated id once); :class:`UsageError`
        naming the valid range for the first id that names no run."""
        wanted = list(dict.fromkeys(run_ids))

        def work(conn: Connection) -> dict[int, RunInfo]:
            found = {}
            for chunk in chunks(wanted):
                for row in conn.execute(self._run_query().where(runs.c.id.in_(chunk))):
                    found[row.id] = self._run_info(row)
            for rid in wanted:
                if rid not in found:
                    raise self._not_found(conn, rid)
            return {rid: found[rid] for rid in wanted}

        return self._read(work)

    def find_runs(self, ref: str) -> list[int]:
        """Run ids that ``ref`` names: a run id, else runs with exactly that label, newest first.

        A number names the run with that id when there is one (it wins over a label
        spelled the same way); otherwise it is tried as a label.  ``[]`` when nothing matches.
        """
        ref = ref.strip()

        def work(conn: Connection) -> list[int]:
            if re.fullmatch(r"[0-9]+", ref) and int(ref) <= max_run_id(self._engine.dialect.name == "postgresql"):
                found = conn.execute(select(runs.c.id).where(runs.c.id == int(ref))).first()
                if found is not None:
                    return [int(found[0])]
            rows = conn.execute(select(runs.c.id).where(runs.c.label == self._enc(ref)).order_by(runs.c.id.desc()))
            return [int(r[0]) for r in rows]

        return self._read(work)

    def run_meta(self, run_id: int) -> JSONObject:
        """The free JSON stored with a run (host facts, argv, targets); without its owner
        (:meth:`run_owner`), which is the store's own."""
        meta = self._full_meta(run_id)
        meta.pop("owner", None)
        return meta

    def run_metas(self, run_ids: Sequence[int]) -> dict[int, JSONObject]:
        """:meth:`run_meta` of several runs in one query, in the order given."""
        wanted = list(dict.fromkeys(run_ids))

        def work(conn: Connection) -> dict[int, JSONObject]:
            found = {}
            for chunk in chunks(wanted):
                for row in conn.execute(select(runs.c.id, runs.c.meta_json).where(runs.c.id.in_(chunk))):
                    meta = json.loads(row.meta_json)
                    meta.pop("owner", None)
                    found[row.id] = meta
            for rid in wanted:
                if rid not in found:
                    raise self._not_found(conn, rid)
            return {rid: found[rid] for rid in wanted}

        return self._read(work)

    def run_owner(self, run_id: int) -> JSONObject | None:
        """Who created (or last resumed) the run: host, pid, start time (:mod:`storbench.store.owner`)."""
        owner = self._full_meta(run_id).get("owner")
        return owner if isinstance(owner, dict) else None

    def update_run_meta(self, run_id: int, updates: JSONObject) -> None:
        """Add or replace top-level keys of a run's free JSON (a curve's points, knee and ceiling)."""

        def work(conn: Connection) -> None:
            row = conn.execute(select(runs.c.meta_json).where(runs.c.id == run_id)).first()
            if row is None:
                raise self._not_found(conn, run_id)
            meta = json.loads(row.meta_json)
            meta.update(updates)
            conn.execute(update(runs).where(runs.c.id == run_id).values(meta_json=json.dumps(meta, allow_nan=False, default=str)))

        self._write(work)


def _measures_of(result_json: str | None) -> list[JSONObject]:
    """An application load's figures from its stored result (``[{"unit", "value"}]`` in its
    order, the headline first), or [] for a result of fio's or one that cannot be read."""
    if not result_json:
        return []
    try:
        data = json.loads(result_json)
    except ValueError:
        return []
    out: list[JSONObject] = []
    for m in (data.get("measures") or []) if isinstance(data, dict) else []:
        if isinstance(m, dict) and isinstance(m.get("unit"), str) and isinstance(m.get("value"), (int, float)):
            out.append({"unit": m["unit"], "value": float(m["value"])})
    return out
