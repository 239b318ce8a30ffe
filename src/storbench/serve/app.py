"""The web application (Starlette, ASGI): routes, parameters, the token, the store.

Read-only by construction: every route is GET (HEAD too) and the store is only read, except the
pages that start runs (:mod:`.starts`, only with ``serve --allow-run`` and a token), whose runs are
``storbench run`` children writing the store as any run does.  Parameters
are validated here (integers, bounded text, known names) and passed to the store as bound
values; a run or result that does not exist is a 404 page (or a JSON error under ``/api``).
"""

from __future__ import annotations

import functools
import json
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from storbench.jsontypes import JSONObject

from ..errors import StorbenchError, UsageError
from . import prometheus, views

if TYPE_CHECKING:
    from ..model import RunInfo
    from ..store.protocol import HistoryStore
    from ..trace.rows import TraceRow
    from .guard import Guard
    from .launch import Launcher

HERE = Path(__file__).parent
STATIC = HERE / "static"
PLOTLY = HERE.parent / "render" / "vendor" / "plotly-basic.min.js"
PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
MAX_COMPARE = 50
MAX_TEXT = 200
#: how long the live page of a study's setup waits for the next setup's run to appear (building a
#: filesystem or a pool on loop devices takes seconds)
STUDY_GAP_S = 120


@functools.lru_cache(maxsize=1)
def _templates() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)  # fmt: skip
    env.filters["tojson_compact"] = lambda v: json.dumps(v, allow_nan=False, separators=(",", ":"))
    return env


def _page(name: str, status: int = 200, **context: Any) -> HTMLResponse:  # type: ignore[explicit-any]  # a template's context: records, runs, figures
    return HTMLResponse(_templates().get_template(name).render(**context), status_code=status)


# --------------------------------------------------------------------------- parameters


def _text(request: Request, name: str) -> str | None:
    value = request.query_params.get(name)
    if value is None or value.strip() == "":
        return None
    if len(value) > MAX_TEXT or "\x00" in value:
        raise HTTPException(400, f"parameter {name!r} is too long or holds a NUL byte (at most {MAX_TEXT} characters)")
    return value.strip()


#: the largest id a run or result can have in either store (PostgreSQL's integer column)
MAX_ID = 2**31 - 1


def _digits(value: str) -> bool:
    """ASCII digits only (``str.isdigit`` also takes ``²`` and other digits ``int`` refuses), at most 12."""
    return value.isascii() and value.isdigit() and len(value) <= 12


def _int(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    value = request.query_params.get(name)
    if value is None or value == "":
        return default
    if not _digits(value) or not lo <= int(value) <= hi:
        raise HTTPException(400, f"parameter {name!r} must be a whole number from {lo} to {hi}, got {value[:40]!r}")
    return int(value)


def _path_id(request: Request, name: str) -> int:
    """A run or result id from the path (the route took ASCII digits); one no store can hold is a 404."""
    value = request.path_params[name]
    if not 1 <= value <= MAX_ID:
        what = "result" if name == "result_id" else "run"
        raise HTTPException(404, f"no {what} {str(value)[:40]} in this store")
    return int(value)


def _run_ids(request: Request) -> list[int]:
    values = request.query_params.getlist("run")
    if not all(_digits(v) and 1 <= int(v) <= MAX_ID for v in values):
        raise HTTPException(400, f"parameter 'run' must be run ids (whole numbers from 1 to {MAX_ID})")
    ids = list(dict.fromkeys(int(v) for v in values))
    if len(ids) > MAX_COMPARE:
        raise HTTPException(400, f"at most {MAX_COMPARE} runs at once, got {len(ids)}")
    return ids


_DATE_OK = set("0123456789-:TZ")


def _date(request: Request, name: str) -> str | None:
    """An ISO 8601 date or time (``2026-12-01``, ``2026-12-01T08:00``, with ``Z``): one that is
    no real day or time (``9999-99-99``, ``T99:99``) is a 400, never a filter of nothing."""
    from datetime import datetime

    value = _text(request, name)
    if value is None:
        return None
    ok = set(value) <= _DATE_OK and len(value) <= 20 and len(value) >= 10
    if ok:
        try:
            datetime.fromisoformat(value.removesuffix("Z"))
        except ValueError:
            ok = False
    if not ok:
        raise HTTPException(400, f"parameter {name!r} must be a date or time like 2026-12-01 or 2026-12-01T08:00, got {value[:40]!r}")
    return value


# --------------------------------------------------------------------------- the app


class Server:
    """The handlers, over one open store."""

    def __init__(self, store: HistoryStore, *, title: str) -> None:
        self.store = store
        self.title = title

    def _run(self, run_id: int):
        try:
            return self.store.get_run(run_id)
        except UsageError:
            raise HTTPException(404, f"no run {run_id} in this store") from None

    def _runs(self, run_ids: list[int]) -> dict:
        """Several runs in one query; a 404 naming the first that is not in the store."""
        try:
            return self.store.get_runs(run_ids)
        except UsageError:
            for rid in run_ids:
                self._run(rid)  # the 404 for the first missing run
            raise

    def _filters(self, request: Request) -> JSONObject:
        status = _text(request, "status")
        if status is not None and status not in ("running", "interrupted", "complete", "incomplete", "failed"):
            raise HTTPException(400, "parameter 'status' must be running, interrupted, complete, incomplete or failed")
        return {"label_prefix": _text(request, "label"), "target": _text(request, "target"), "suite": _text(request, "suite"),
                "host": _text(request, "host"), "since": _date(request, "since"), "until": _date(request, "until"),
                "check": _text(request, "finding"), "status": status}  # fmt: skip

    def _sort(self, request: Request) -> tuple[str, bool]:
        """``?sort=COLUMN`` (a column the store orders: run, label, status, started, finished,
        suite) and ``?order=asc|desc`` (default: desc)."""
        from ..store.database import RUN_SORTS

        sort = _text(request, "sort") or "run"
        if sort not in RUN_SORTS:
            raise HTTPException(400, f"parameter 'sort' must be one of {', '.join(RUN_SORTS)}, got {sort[:40]!r}")
        order = _text(request, "order") or "desc"
        if order not in ("asc", "desc"):
            raise HTTPException(400, f"parameter 'order' must be asc or desc, got {order[:40]!r}")
        return sort, order == "desc"

    def runs_data(self, request: Request) -> JSONObject:
        filters = self._filters(request)
        sort, descending = self._sort(request)
        per_page = _int(request, "per_page", PAGE_SIZE, 1, MAX_PAGE_SIZE)
        page = _int(request, "page", 1, 1, 10**7)
        infos, total = self.store.query_runs(**filters, sort=sort, descending=descending, offset=(page - 1) * per_page, limit=per_page)
        digests = self.store.run_digests([i.run_id for i in infos])
        rows = [views.run_row(i, digests.get(i.run_id, {})) for i in infos]
        return {"runs": rows, "total": total, "page": page, "per_page": per_page, "pages": max(1, math.ceil(total / per_page)),
                "filters": {k: v for k, v in filters.items() if v is not None}, "sort": sort, "order": "desc" if descending else "asc"}  # fmt: skip

    def runs_page(self, request: Request) -> Response:
        data = self.runs_data(request)
        query = {("label" if k == "label_prefix" else "finding" if k == "check" else k): v for k, v in data["filters"].items()}
        if data["per_page"] != PAGE_SIZE:  # kept in every link of the page (newer, older)
            query["per_page"] = str(data["per_page"])
        filters_only = dict(query)
        if (data["sort"], data["order"]) != ("run", "desc"):
            query.update(sort=data["sort"], order=data["order"])
        return _page("runs.html.j2", title=self.title, **data, query=query, filters_only=filters_only, wide=True)

    def runs_api(self, request: Request) -> Response:
        return JSONResponse(self.runs_data(request))

    def _records(self, run_id: int):
        return self.store.results(run_id)

    def run_page(self, request: Request) -> Response:
        run_id = _path_id(request, "run_id")
        info = self._run(run_id)
        records = self._records(run_id)
        meta = self.store.run_meta(run_id)
        from ..metrics import headlines_of
        from ..render.glance import glance
        from ..storage import format_storage

        heads = headlines_of(records)
        shown = glance(records, heads) if records else None
        storages, seen = [], set()
        for r in records:
            key = (r.target, r.host)
            if r.storage is not None and key not in seen:
                seen.add(key)
                storages.append({"target": r.target, "host": r.host, "lines": format_storage(r.storage)})
        jobs, seen_jobs = [], set()
        for r in records:
            if r.workload not in seen_jobs:
                seen_jobs.add(r.workload)
                jobs.append({"workload": r.workload, "job_text": r.job_text, "result_id": r.result_id})
        # a curve run: its curve (IOPS against p99, knee, SLA ceiling), not each step drawn as a workload
        curves = views.curve_items([(info, meta)]) if "curve_result" in meta else []
        charts = [] if curves else views.workload_charts(records, info, heads)
        from ..render.terminal import format_backend

        backend = format_backend(records)  # what the ZFS pool or Ceph cluster did, as storbench show says it
        live = self.store.live_states(run_id)
        # hundreds of hosts: the aggregate's rows and one summary line per workload; ?hosts=all for every row
        every_host = _text(request, "hosts")
        if every_host not in (None, "all"):
            raise HTTPException(400, "parameter 'hosts' takes only 'all' (a row for every host)")
        from ..model import EACH_HOST_UP_TO
        from ..run.perhost import format_host_lines

        host_count = len({r.host for r in records if r.host not in (None, "all")})
        summarised = host_count > EACH_HOST_UP_TO and every_host is None
        table = [r for r in records if r.host in (None, "all")] if summarised else records
        return _page("run.html.j2", title=f"run {run_id}" + (f" ({info.label})" if info.label else ""), info=info,
                     glance=shown, rows=views.result_rows(table), findings=views.findings_once(records),
                     storages=storages, jobs=jobs, charts=charts, backend=backend, argv=meta.get("argv"), started_by=meta.get("started_by"), wide=True,
                     curves=curves, curve_figure=views.curves_figure(curves) if curves else None,
                     host_lines=format_host_lines(records) if summarised else None, host_count=host_count,
                     live=bool(live), site=self.title)  # fmt: skip

    def run_api(self, request: Request) -> Response:
        from ..render.public import records_to_public

        run_id = _path_id(request, "run_id")
        info = self._run(run_id)
        return JSONResponse({"run": views.run_row(info, self.store.run_digests([run_id]).get(run_id, {})),
                             "results": records_to_public(self._records(run_id))})  # fmt: skip

    def result_raw(self, request: Request) -> Response:
        result_id = _path_id(request, "result_id")
        record = self.store.result(result_id)
        if record is None:
            raise HTTPException(404, f"no result {result_id} in this store")
        return PlainTextResponse(record.raw_output)

    def report(self, request: Request) -> Response:
        ids = [_path_id(request, "run_id")] if "run_id" in request.path_params else _run_ids(request)
        if not ids:
            raise HTTPException(400, "give the runs to report: ?run=1&run=2")
        from ..render.report import report_html

        runs = self._runs(ids)
        found = self.store.results_of(list(runs))
        records = [rec for rid in runs for rec in found[rid]]
        try:  # the one assembly storbench report and a run's own report use
            html = report_html(records, runs, self.store.run_metas(list(runs)))
        except StorbenchError as exc:
            raise HTTPException(400, str(exc)) from None
        return HTMLResponse(html)

    def compare_data(self, request: Request) -> JSONObject:
        from .. import compare as cmp_mod
        from ..metrics import headlines_of
        from ..render.compare import compare_to_json

        ids = _run_ids(request)
        label = _text(request, "label")
        if label and not ids:
            ids = [i.run_id for i in self.store.query_runs(label_prefix=label, limit=MAX_COMPARE)[0]][::-1]
        if len(ids) < 1:
            raise HTTPException(400, "give two or more runs to compare: ?run=1&run=2 (or ?label=PREFIX)")
        names, records = {}, []
        runs = self._runs(ids)
        found = self.store.results_of(list(runs))
        for rid, info in runs.items():
            names[rid] = info.label or f"run {rid}"
            records.extend(found[rid])
        groups = cmp_mod.configurations(records, names)
        if len(groups) < 2:
            raise HTTPException(400, f"compare needs at least two configurations (two runs, or a run with several targets), got {len(groups)}")
        baseline = _text(request, "baseline")
        keys = [c.key for c, _ in groups]
        if baseline is not None and baseline not in keys:
            raise HTTPException(400, f"parameter 'baseline' must be one of {', '.join(keys)}")
        cmp = cmp_mod.compare(groups, baseline)
        heads = headlines_of(records)
        by_config = {c.key: list(m) for c, m in groups}
        diffs = cmp_mod.config_differences(cmp, by_config)
        data = compare_to_json(cmp)
        for c in data["configs"]:
            c.pop("storage", None)
        data["summary"] = cmp_mod.summary_sentences(cmp, heads)
        data["verdicts"] = cmp_mod.verdict_lines(cmp, heads, cmp_mod.finding_caveats(by_config))
        data["differences"] = [{"field": d.field, "values": list(d.values), "variable": d.variable, "workload": d.workload} for d in diffs]
        data["run_ids"] = ids
        data["_cmp"] = cmp
        data["_heads"] = heads
        return data

    def compare_page(self, request: Request) -> Response:
        from ..compare import metric_label
        from ..render.compare import compact_cell

        data = self.compare_data(request)
        cmp = data.pop("_cmp")
        rows = []
        for row in cmp.rows:
            rows.append({"workload": row.workload,
                         "figure": row.metric if row.direction == "result" else f"{row.direction} {metric_label(row.metric)}",
                         "cells": [compact_cell(row, cell, row.versus[i]).split("\n") for i, cell in enumerate(row.cells)],
                         "verdicts": [v.verdict if v is not None else None for v in row.versus]})  # fmt: skip
        sections = views.compare_sections(cmp, data.pop("_heads"), data["verdicts"])
        return _page("compare.html.j2", title="compare " + " vs ".join(c.name for c in cmp.configs), data=data, rows=rows,
                     configs=cmp.configs, baseline=cmp.baseline, sections=sections, site=self.title, wide=True)  # fmt: skip

    def compare_api(self, request: Request) -> Response:
        data = self.compare_data(request)
        data.pop("_cmp")
        data.pop("_heads")
        return JSONResponse(data)

    def trend_data(self, request: Request) -> JSONObject:
        from ..metrics import headlines_of

        workload = _text(request, "workload")
        if workload is None:
            raise HTTPException(400, "give the workload to follow: ?workload=NAME (and &target=PATH or &label=PREFIX)")
        target, label = _text(request, "target"), _text(request, "label")
        limit = _int(request, "limit", 200, 2, 5000)
        records = [r for r in self.store.results_of_workload(workload, target, label, limit=limit * 10) if r.host in (None, "all")]
        run_ids = list(dict.fromkeys(r.run_id for r in records))[-limit:]
        records = [r for r in records if r.run_id in set(run_ids)]
        runs = self.store.get_runs(run_ids)
        headline = headlines_of(records[-1:]).get(workload, "iops")
        trend = views.trend_points(records, runs, headline)
        trend.update(workload=workload, target=target, label=label)
        return trend

    def trend_page(self, request: Request) -> Response:
        trend = self.trend_data(request)
        fig = views.trend_figure(trend, f"{trend['workload']}: {trend['metric_words']} per run") if trend["points"] else None
        return _page("trend.html.j2", title=f"trend of {trend['workload']}", trend=trend, figure=fig, site=self.title)

    def trend_api(self, request: Request) -> Response:
        return JSONResponse(self.trend_data(request))

    def _trace_row(self, trace_id: int) -> TraceRow:
        try:
            return self.store.find_trace(str(trace_id))
        except UsageError:
            raise HTTPException(404, f"no trace {trace_id} in this store") from None

    def traces_page(self, request: Request) -> Response:
        return _page("traces.html.j2", title="traces", traces=[views.trace_item(r) for r in self.store.list_traces()], site=self.title)

    def traces_api(self, request: Request) -> Response:
        return JSONResponse({"traces": [views.trace_item(r) for r in self.store.list_traces()]})

    def trace_page(self, request: Request) -> Response:
        from ..render.trace import format_trace, trace_charts

        row = self._trace_row(int(request.path_params["trace_id"]))
        return _page("trace.html.j2", title=f"trace {row.trace_id} {row.label}", trace=views.trace_item(row), lines=format_trace(row),
                     charts=trace_charts(row), site=self.title)  # fmt: skip

    def trace_api(self, request: Request) -> Response:
        row = self._trace_row(int(request.path_params["trace_id"]))
        return JSONResponse({**views.trace_item(row), "meta": row.meta, "figures": row.figures})

    def curves_data(self) -> list[JSONObject]:
        return views.curve_items(self.store.runs_with_meta_key("curve_result"))

    def curves_page(self, request: Request) -> Response:
        curves = self.curves_data()
        return _page("curves.html.j2", title="curves", curves=curves, figure=views.curves_figure(curves), site=self.title)

    def curves_api(self, request: Request) -> Response:
        return JSONResponse({"curves": self.curves_data()})

    def live_list(self) -> list[JSONObject]:
        out = []
        for run_id, updated_at, state in self.store.live_states():
            info = self.store.get_run(run_id)
            if info.status == "running":
                out.append({"run_id": run_id, "label": info.label, "updated_at": updated_at, "state": state, **views.live_text(state)})
        return out

    def live_index(self, request: Request) -> Response:
        return _page("live_index.html.j2", title="live runs", runs=self.live_list(), site=self.title)

    def live_api_list(self, request: Request) -> Response:
        return JSONResponse({"runs": self.live_list()})

    def live_data(self, run_id: int) -> JSONObject:
        info = self._run(run_id)
        states = self.store.live_states(run_id)
        state = states[0][2] if states and info.status == "running" else None
        out: JSONObject = {"run_id": run_id, "label": info.label, "status": info.status, "reason": info.reason,
                               "state": state, "server_time": time.time()}  # fmt: skip
        if state is not None:
            out.update(views.live_text(state))
        elif info.status != "running":
            out.update(self._after_the_run(info))
        return out

    def _after_the_run(self, info) -> JSONObject:
        """Where the live page goes when its run has ended: the run's page; for a setup of a matrix
        study, the next setup's live run, or (a moment) waiting for it to be built, and at the
        study's end the compare page of its runs."""
        meta = self.store.run_meta(info.run_id)
        study = meta.get("study") if isinstance(meta.get("study"), dict) else None
        if not study or not study.get("label"):
            return {"done_url": f"/runs/{info.run_id}"}
        prefix = f"{study['label']}/"
        runs = self.store.query_runs(label_prefix=prefix, limit=MAX_COMPARE)[0]
        running = [r for r in runs if r.status == "running"]
        if running:
            return {"done_url": f"/live/{running[0].run_id}", "study": study["label"]}
        newest: dict[str | None, RunInfo] = {}
        for r in sorted(runs, key=lambda r: r.run_id):
            newest[r.label] = r  # the newest run of each setup
        setups = [s.get("name") for s in study.get("setups", []) if isinstance(s, dict)]
        finished_at = views.epoch_s(info.finished_at)
        if len(newest) < len(setups) and finished_at is not None and time.time() - finished_at < STUDY_GAP_S:
            return {"waiting": f"setup {len(newest) + 1} of {len(setups)} of study {study['label']} is being built", "study": study["label"]}
        done = sorted(r.run_id for r in newest.values())
        if len(done) >= 2:
            return {"done_url": "/compare?" + "&".join(f"run={rid}" for rid in done), "study": study["label"]}
        return {"done_url": f"/runs/{info.run_id}", "study": study["label"]}

    def live_page(self, request: Request) -> Response:
        run_id = _path_id(request, "run_id")
        data = self.live_data(run_id)
        return _page("live.html.j2", title=f"live: run {run_id}", data=data, site=self.title)

    def live_api(self, request: Request) -> Response:
        return JSONResponse(self.live_data(_path_id(request, "run_id")))

    def metrics(self, request: Request) -> Response:
        from ..run.live import is_fresh

        last = self.store.last_results()
        run_ids = sorted({r["run_id"] for r in last})
        runs = self.store.get_runs(run_ids) if run_ids else {}
        figures = prometheus.result_figures(last, self.store.results_of(run_ids) if run_ids else {},
                                            {rid: views.epoch_s(info.finished_at) for rid, info in runs.items()})  # fmt: skip
        states = self.store.live_states()
        alive_runs = self.store.get_runs([rid for rid, _, _ in states]) if states else {}
        now = time.time()
        alive = [s for rid, _, s in states if rid in alive_runs and alive_runs[rid].status == "running" and is_fresh(s, now)]
        text = prometheus.format_metrics(figures, alive)
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")


def _static(request: Request) -> Response:
    name = request.path_params["name"]
    if name == "plotly.js":
        return FileResponse(PLOTLY, media_type="text/javascript", headers={"Cache-Control": "max-age=86400"})
    files = {p.name: p for p in STATIC.iterdir() if p.is_file()}
    if name not in files:  # only the files storbench ships: no path outside them is read
        raise HTTPException(404, f"no static file {name!r}")
    kind = "text/css" if name.endswith(".css") else "text/javascript" if name.endswith(".js") else "application/octet-stream"
    return FileResponse(files[name], media_type=kind)


def _start_routes(launcher: Launcher | None, title: str) -> list[Route]:
    """The pages that start runs (:mod:`.starts`), or a 404 saying how to turn them on."""
    from . import starts

    _templates().globals["can_start"] = launcher is not None
    if launcher is None:
        return [Route(p, starts.off, methods=["GET", "POST"]) for p in ("/start", "/launches", "/launches/{launch_id:int}",
                                                                        "/launches/{launch_id:int}/cancel")]  # fmt: skip
    h = starts.Starts(launcher, _page, title)
    return [
        Route("/start", h.start_page, methods=["GET"]),
        Route("/start", h.start, methods=["POST"]),
        Route("/launches", h.launches_page),
        Route("/launches/{launch_id:int}", h.launch_page),
        Route("/launches/{launch_id:int}/cancel", h.cancel, methods=["POST"]),
        Route("/api/launches", h.launches_api),
        Route("/api/launches/{launch_id:int}", h.launch_api),
    ]


def create_app(store: HistoryStore, *, token: str | None = None, title: str = "storbench",
               hosts: frozenset[str] | None = None, launcher: Launcher | None = None) -> Guard:  # fmt: skip
    """The ASGI application over an open store (read only), behind :class:`.guard.Guard`: only
    ``hosts`` (default: the loopback names) are answered; with ``token``, every request needs it.
    With a ``launcher`` (``serve --allow-run``, which needs a token), runs can be started from the
    page (:mod:`.starts`)."""
    from starlette.middleware.gzip import GZipMiddleware

    from .guard import Guard, allowed_hosts

    if launcher is not None and not token:
        raise ValueError("runs from the page need a token")
    s = Server(store, title=title)

    async def error_page(request: Request, exc: HTTPException) -> Response:
        headers = dict(exc.headers or {})  # a 405's Allow
        if request.url.path.startswith("/api/") or request.url.path == "/metrics":
            return JSONResponse({"error": exc.detail, "status": exc.status_code}, status_code=exc.status_code, headers=headers)
        page = _page("error.html.j2", status=exc.status_code, title=f"{exc.status_code}", message=exc.detail, site=title)
        page.headers.update(headers)
        return page

    async def server_error(request: Request, exc: Exception) -> Response:
        message = str(exc) if isinstance(exc, StorbenchError) else f"{type(exc).__name__}: the page could not be made ({exc})"
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message, "status": 500}, status_code=500)
        return _page("error.html.j2", status=500, title="500", message=message, site=title)

    routes = [
        Route("/", s.runs_page),
        Route("/runs/{run_id:int}", s.run_page),
        Route("/runs/{run_id:int}/report", s.report),
        Route("/results/{result_id:int}/raw", s.result_raw),
        Route("/report", s.report),
        Route("/compare", s.compare_page),
        Route("/trend", s.trend_page),
        Route("/curves", s.curves_page),
        Route("/traces", s.traces_page),
        Route("/traces/{trace_id:int}", s.trace_page),
        Route("/live", s.live_index),
        Route("/live/{run_id:int}", s.live_page),
        Route("/api/runs", s.runs_api),
        Route("/api/runs/{run_id:int}", s.run_api),
        Route("/api/compare", s.compare_api),
        Route("/api/trend", s.trend_api),
        Route("/api/curves", s.curves_api),
        Route("/api/traces", s.traces_api),
        Route("/api/traces/{trace_id:int}", s.trace_api),
        Route("/api/live", s.live_api_list),
        Route("/api/live/{run_id:int}", s.live_api),
        Route("/metrics", s.metrics),
        *_start_routes(launcher, title),
        Route("/static/{name}", _static),
        Route("/healthz", lambda request: PlainTextResponse("ok\n")),
        Route("/favicon.ico", lambda request: Response(status_code=204)),  # no icon; not a 404 in the console
    ]
    # starlette types each handler as taking Exception; error_page takes its HTTPException subclass
    handlers: dict[Any, Any] = {HTTPException: error_page, Exception: server_error}  # type: ignore[explicit-any]
    app = Starlette(routes=routes, exception_handlers=handlers)
    zipped = GZipMiddleware(app, minimum_size=1024)  # plotly.js (1.2 MB) and the pages, compressed for clients that take it
    return Guard(zipped, hosts=hosts if hosts is not None else allowed_hosts("127.0.0.1"), token=token or None)
