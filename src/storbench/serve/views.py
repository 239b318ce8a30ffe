"""Pure: what each page of ``storbench serve`` shows, built from stored records.

Every function takes records (:class:`~storbench.model.ResultRecord`, :class:`~storbench.model.RunInfo`,
run metadata) and returns plain dicts and lists for the templates and the JSON API; nothing here
touches the store, the network or the clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONMapping, JSONObject

from ..compare import lead_pct
from ..metrics import (
    HIGHER_IS_BETTER,
    MEASURE_DIRECTION,
    P99_MEASURE,
    direction_figures,
    headline_metric,
    repetition_stats,
)
from ..model import SEVERITIES, RunInfo
from ..record import ResultRecord
from ..stats.core import VERDICT_WORSE, compare_samples, summarize
from ..units import fmt_bw, fmt_interval, fmt_iops, fmt_measure, fmt_ns, format_duration, formatter

if TYPE_CHECKING:
    from ..compare import Comparison
    from ..trace.rows import TraceRow

#: the metrics a person reads first, per headline
METRIC_WORDS = {"iops": "IOPS", "bw_bytes": "bandwidth", "lat_mean_ns": "mean latency", "clat_p99_ns": "p99 latency"}


def run_row(info: RunInfo, digest: JSONMapping) -> JSONObject:
    """One line of the runs page: the run, its headline figures (:func:`headline_figures`), where
    it ran (each target with what is under it, the hosts), how long it took, and its findings'
    checks by severity with their counts."""
    from ..storage import storage_brief

    checks = digest.get("checks", {})
    storage = digest.get("storage", {})
    invalid = sorted(c for c, s in checks.items() if s == "invalid")
    warnings = sorted(c for c, s in checks.items() if s == "warning")
    return {
        "id": info.run_id,
        "label": info.label,
        "kind": info.kind,
        "suite": info.suite,
        "status": info.status,
        "reason": info.reason,
        "created_at": info.created_at,
        "finished_at": info.finished_at,
        "duration_s": (took := duration_s(info.created_at, info.finished_at)),
        "duration": format_duration(took) if took is not None else "",
        "results": info.result_count,
        "targets": digest.get("targets", []),
        "where": [{"target": t, "storage": storage_brief(storage[t]) if t in storage else None} for t in digest.get("targets", [])],
        "hosts": digest.get("hosts", []),
        "machine": digest.get("machine"),
        "figures": headline_figures(digest.get("figures", [])),
        "invalid": invalid,
        "warnings": warnings,
        "finding_counts": {"invalid": len(invalid), "warning": len(warnings)},
    }


def epoch_s(iso: str | None) -> float | None:
    """Seconds since the epoch of an ISO 8601 time as the store keeps it (``2026-12-05T07:08:50Z``), or None."""
    from datetime import datetime

    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def duration_s(started: str | None, finished: str | None) -> float | None:
    """Seconds from a run's start to its end (ISO 8601 times), or None without an end."""
    a, b = epoch_s(started), epoch_s(finished)
    return None if a is None or b is None else max(0.0, b - a)


#: at most this many figures a run shows in the list
LIST_FIGURES = 2


def headline_figures(figures: Sequence[JSONMapping], limit: int = LIST_FIGURES) -> list[JSONObject]:
    """A run's figures for the list of runs: its first workload judged by bandwidth (a sequential
    one: MiB/s) and its first judged by IOPS or latency (shown as IOPS: the list keeps only the
    headline columns), as in CrystalDiskMark's SEQ1M Q8T1 read and RND4K Q1T1 read; failing
    one kind, the next workloads, an application load among them (its headline figure, pgbench's
    tps, and its p99 latency where it measured one).  Each is the mean over the workload's
    repetitions on its first target, of the direction that did I/O (read, write, or read+write
    for a mix); ``targets`` says how many targets the run had (the figure is the first's)."""
    from ..metrics import default_headline

    by_workload: dict[str, list[JSONMapping]] = {}
    targets: list[object] = []
    for f in figures:
        if f.get("workload") is None:
            continue
        if f.get("target") not in targets:
            targets.append(f.get("target"))
        first = by_workload.setdefault(f["workload"], [])
        if not first or first[0].get("target") == f.get("target"):
            first.append(f)
    kinds: dict[str, str] = {}
    for workload, rows in by_workload.items():
        if any(r.get("measures") for r in rows):
            kinds[workload] = MEASURED
            continue
        options = rows[0].get("options") or {}
        kinds[workload] = "bw_bytes" if default_headline(tuple((str(k), None if v is None else str(v)) for k, v in options.items())) == "bw" else "iops"
    chosen: list[str] = []
    for kind in ("bw_bytes", "iops"):
        chosen.extend([w for w in by_workload if kinds[w] == kind][:1])
    chosen.extend(w for w in by_workload if w not in chosen)
    out = []
    for workload in sorted(chosen[:limit], key=list(by_workload).index):
        metric = kinds[workload]
        rows = by_workload[workload]
        shown = _measured_figure(rows) if metric == MEASURED else _fio_figure(rows, metric)
        if shown is not None:
            out.append({"workload": workload, **shown, "targets": len(targets)})
    return out


#: the kind of a workload whose figures are another benchmark's (an application load's)
MEASURED = "measured"


def _fio_figure(rows: Sequence[JSONMapping], metric: str) -> JSONObject | None:
    directions = [d for d in ("read", "write") if any(r.get(f"{d}_{metric}") is not None for r in rows)]
    values = [sum(r.get(f"{d}_{metric}") or 0.0 for d in directions) for r in rows if directions]
    if not values:
        return None
    mean = sum(values) / len(values)
    text = fmt_bw(mean) if metric == "bw_bytes" else f"{fmt_iops(mean)} IOPS"
    return {"metric": metric, "direction": "+".join(directions), "value": mean, "n": len(values), "text": text}


def _measured_figure(rows: Sequence[JSONMapping]) -> JSONObject | None:
    """An application load's headline figure (its first: pgbench's tps, dbench's MB/s) over its
    repetitions, and its p99 latency where every repetition measured one."""
    heads = [r["measures"][0] for r in rows if r.get("measures")]
    if not heads:
        return None
    unit = heads[0]["unit"]
    values = [h["value"] for h in heads if h["unit"] == unit]
    mean = sum(values) / len(values)
    text = f"{fmt_measure(mean)} {unit}"
    p99s = [m["value"] for r in rows for m in r.get("measures") or () if m["unit"] == P99_MEASURE]
    if p99s and len(p99s) == len(heads):
        text += f", p99 {fmt_measure(sum(p99s) / len(p99s))} ms"
    return {"metric": unit, "direction": MEASURE_DIRECTION, "value": mean, "n": len(values), "text": text}


def _headline(record: ResultRecord, headlines: Mapping[str, str]) -> str:
    return headline_metric(headlines.get(record.workload, "iops"))


def figure_text(metric: str, value: float | None) -> str:
    return formatter(metric)(value) if value is not None else "-"


def result_rows(records: Sequence[ResultRecord]) -> list[JSONObject]:
    """The run page's table: one row per workload, target, host and direction, over repetitions
    (mean ± sd, n, the 95% interval), with the findings of the last repetition."""
    groups: dict[tuple[str, str, str], list[ResultRecord]] = {}
    for r in records:
        groups.setdefault((r.workload, r.target or "", r.host or ""), []).append(r)
    rows = []
    for (workload, target, host), recs in groups.items():
        by_dir = repetition_stats([r.fio for r in recs])
        for direction, metrics in by_dir.items():
            cells = {}
            for metric, summary in metrics.items():
                fmt = formatter(metric) if metric in HIGHER_IS_BETTER else fmt_measure
                lo, hi = summary.ci95 if summary.ci95 else (None, None)
                ci = fmt_interval(lo, hi, metric, summary.n, None if metric in HIGHER_IS_BETTER else fmt_measure)
                cells[metric] = {
                    "mean": summary.mean, "n": summary.n, "text": fmt(summary.mean),
                    "sd": fmt(summary.stddev) if summary.stddev is not None else None, "ci": ci,
                }  # fmt: skip
            rows.append({
                "workload": workload, "target": target, "host": host, "direction": direction, "runs": len(recs),
                "cells": cells, "result_ids": [r.result_id for r in recs],
                # an application load's: the tool and how it ran (pgbench: the server's durability settings)
                "tool": recs[-1].fio.format if not recs[-1].fio.jobs else None,
                "settings": dict(recs[-1].fio.global_options) if not recs[-1].fio.jobs else {},
                "findings": [{"check": f.check, "severity": f.severity} for f in recs[-1].findings if f.severity != "info"],
            })  # fmt: skip
    return rows


def findings_once(records: Sequence[ResultRecord]) -> list[JSONObject]:
    """Every finding of the run said once: check, severity, the workloads it concerns, and as
    evidence the message and fix of the first such workload's last repetition that has it, the
    final judgement over all its repetitions (the one ``storbench show`` prints; an earlier
    repetition's says "over 2 repetitions" of a workload that had 3); worst first."""
    from ..render.terminal import group_records

    out: dict[tuple[str, str], JSONObject] = {}
    for group in group_records(records):
        for r in sorted(group, key=lambda r: r.repetition):
            for f in r.findings:
                item = out.setdefault((f.check, f.severity), {"check": f.check, "severity": f.severity, "workloads": [],
                                                              "message": f.message, "fix": f.fix, "_from": r.workload})  # fmt: skip
                if r.workload not in item["workloads"]:
                    item["workloads"].append(r.workload)
                if item["_from"] == r.workload:  # a later repetition of the same workload: its final words
                    item["message"], item["fix"] = f.message, f.fix
    for item in out.values():
        del item["_from"]
    return sorted(out.values(), key=lambda f: (-SEVERITIES.index(f["severity"]), f["check"]))


#: the run page draws the charts of at most this many workloads (the report has every one)
CHARTED_WORKLOADS = 16


def workload_charts(records: Sequence[ResultRecord], info: RunInfo, headlines: Mapping[str, str]) -> list[JSONObject]:
    """The run page's charts, one section per workload (at most :data:`CHARTED_WORKLOADS`, in the
    run's order): its headline's rate per second in every repetition (IOPS, or bandwidth for a
    workload judged by it), its latency percentiles and the devices' activity per configuration:
    the report's chart builders (:mod:`storbench.render.html_charts`) over the results the
    report compares (a multi-host run's hosts side by side, or beyond a few its aggregate)."""
    from ..compare import comparable
    from ..render import chartdata
    from ..render import html_charts as charts
    from ..render.report import comparison_of

    shown = comparable(records)  # a multi-host run's hosts side by side, or beyond a few its aggregate
    if not shown:
        return []
    cmp = comparison_of(shown, {info.run_id: info})
    by_config = chartdata.records_by_config(cmp, shown)
    out = []
    for workload in chartdata.workloads(cmp)[:CHARTED_WORKLOADS]:
        mine = [r for r in shown if r.workload == workload]
        kind = "bw_bytes" if headlines.get(workload) == "bw" else "iops"
        figures = [per_second_figure(mine, kind), charts.percentile_figure(cmp, by_config, workload)]
        if len(cmp.configs) <= chartdata.ACTIVITY_CHARTS_MAX:
            peak = chartdata.activity_peak(mine)
            figures.extend(charts.activity_figure(c, [r for r in by_config[c.key] if r.workload == workload], peak) for c in cmp.configs)
        drawn = [f for f in figures if f is not None]
        if drawn:
            out.append({"workload": workload, "figures": drawn})
    return out


def per_second_figure(records: Sequence[ResultRecord], kind: str = "iops") -> JSONObject | None:
    """One workload's rate per second (fio's interval logs; ``kind`` ``iops`` or ``bw_bytes``):
    a line per repetition, place (target, host) and direction, each repetition of each place in
    its own colour (repetitions side by side, never joined); None without two seconds of any."""
    from ..render.chartdata import color, downsample, scale_for

    def place(r: ResultRecord) -> tuple[str, str]:
        return (r.target or "", r.host or "")

    places = list(dict.fromkeys(place(r) for r in records))
    lines = []
    for r in sorted(records, key=lambda r: (places.index(place(r)), r.repetition)):
        series = (r.series or {}).get(kind)
        for direction, points in (series or {}).items() if isinstance(series, Mapping) else ():
            if points and len(points) >= 2:
                lines.append((r, direction, downsample(points)))
    if not lines:
        return None
    div, unit = scale_for(kind, max(p[1] for *_, pts in lines for p in pts))
    colours = list(dict.fromkeys((place(r), r.repetition) for r, _, _ in lines))
    several_targets, several_hosts = len({p[0] for p in places}) > 1, len({p[1] for p in places}) > 1
    data = []
    for r, direction, pts in lines:
        where = " ".join(x for x in ((r.target or "") if several_targets else "", (r.host or "") if several_hosts else "") if x)
        data.append({"type": "scatter", "mode": "lines+markers" if len(pts) < 20 else "lines",
                     "name": f"{where + ' ' if where else ''}#{r.repetition + 1} {direction}", "x": [p[0] for p in pts],
                     "y": [p[1] / div for p in pts],
                     "line": {"color": color(colours.index((place(r), r.repetition))), "dash": "dot" if direction == "write" else "solid"}})  # fmt: skip
    what = "bandwidth" if kind == "bw_bytes" else "IOPS"
    return {"data": data, "layout": {"title": {"text": f"{records[0].workload}: {what} per second, every repetition"},
                                     "xaxis": {"title": {"text": "s"}, "rangemode": "tozero"},
                                     "yaxis": {"title": {"text": unit}, "rangemode": "tozero"}, "autosize": True, "height": 320,
                                     "legend": {"orientation": "h"}, "margin": {"l": 50, "r": 10, "t": 40, "b": 40}}}  # fmt: skip


#: the compare page draws the bars of at most this many workloads
COMPARED_WORKLOADS = 24
_HEADLINE_METRIC = {"iops": "iops", "bw": "bw_bytes", "lat": "lat_mean_ns"}


def compare_sections(cmp: Comparison, headlines: Mapping[str, str], verdicts: Sequence[str]) -> list[JSONObject]:
    """The compare page per workload (at most :data:`COMPARED_WORKLOADS`): a bar per
    configuration of the figure the workload is judged by, ± its standard deviation (the report's
    :func:`~storbench.render.html_charts.bar_figure`), and beside it the verdict lines that speak
    of that workload (the ones ``compare`` prints)."""
    from ..render import chartdata
    from ..render import html_charts as charts

    out = []
    for workload in chartdata.workloads(cmp)[:COMPARED_WORKLOADS]:
        metrics = chartdata.chart_metrics(cmp, workload)
        wanted = _HEADLINE_METRIC.get(headlines.get(workload, "iops"), "iops")
        metric = wanted if wanted in metrics and chartdata.rows_of(cmp, workload, wanted) else next(
            (m for m in metrics if chartdata.rows_of(cmp, workload, m)), None)
        figure = charts.bar_figure(cmp, workload, metric) if metric is not None else None
        said = [v for v in verdicts if v.startswith(workload + " ") or v.startswith(workload + ":")]
        out.append({"workload": workload, "metric": metric, "figure": figure, "verdicts": said})
    return out


def trend_points(records: Sequence[ResultRecord], runs: Mapping[int, RunInfo], headline: str, alpha: float = 0.05) -> JSONObject:
    """One workload over time, per target (runs on two targets are two lines, never one): per run,
    the headline figure's mean over its repetitions with its 95% interval, and whether it is
    significantly worse than the run on the same target before it (Welch's t-test, as
    ``compare --fail-if-worse`` judges; never with a single run on either side).  ``points`` are
    every target's, each naming its ``target``; ``targets`` lists them, newest run's first."""
    metric = headline_metric(headline)
    by_target: dict[str, list[ResultRecord]] = {}
    for r in records:
        by_target.setdefault(r.target or "", []).append(r)
    order = sorted(by_target, key=lambda t: max((runs[r.run_id].created_at if r.run_id in runs else "", r.run_id) for r in by_target[t]),
                   reverse=True)  # fmt: skip
    points: list[JSONObject] = []
    direction = None
    for target in order:
        found, direction = _trend_of_target(by_target[target], runs, metric, direction, alpha)
        points.extend({**p, "target": target} for p in found)
    unit = scale_unit(metric, [p["mean"] for p in points])
    return {"metric": metric, "metric_words": METRIC_WORDS[metric], "direction": direction, "points": points, "targets": order,
            "unit": unit[1], "divisor": unit[0]}  # fmt: skip


def scale_unit(metric: str, values: Sequence[float]) -> tuple[float, str]:
    """(divisor, unit) for an axis of ``metric`` values: ``IOPS``, ``MiB/s``, ``ms`` ... (the report's choice)."""
    from ..render.chartdata import scale_for

    return scale_for(metric, max(values, default=0.0))


def _trend_of_target(records: Sequence[ResultRecord], runs: Mapping[int, RunInfo], metric: str, direction: str | None,
                     alpha: float) -> tuple[list[JSONObject], str | None]:  # fmt: skip
    by_run: dict[int, list[ResultRecord]] = {}
    for r in records:
        by_run.setdefault(r.run_id, []).append(r)
    points: list[JSONObject] = []
    previous: list[float] | None = None
    for run_id in sorted(by_run, key=lambda rid: (runs[rid].created_at if rid in runs else "", rid)):
        recs = by_run[run_id]
        figures = [direction_figures(r.fio) for r in recs]
        if direction is None:  # the direction that carries the workload (the first with the metric)
            direction = next((d for f in figures for d, v in f.items() if v.get(metric) is not None), None)
        values = [x for f in figures if direction in f and (x := f[direction].get(metric)) is not None]
        if not values:
            continue
        s = summarize(values)
        lo, hi = s.ci95 if s.ci95 else (None, None)
        point: JSONObject = {
            "run_id": run_id, "label": runs[run_id].label if run_id in runs else None,
            "created_at": runs[run_id].created_at if run_id in runs else recs[0].created_at,
            "mean": s.mean, "n": s.n, "ci95": list(s.reported_ci95) if s.reported_ci95 else None,
            "text": figure_text(metric, s.mean), "ci_text": fmt_interval(lo, hi, metric, s.n), "regression": None,
        }  # fmt: skip
        if previous is not None:
            v = compare_samples(previous, values, higher_is_better=HIGHER_IS_BETTER[metric], alpha=alpha)
            if v.verdict == VERDICT_WORSE:
                point["regression"] = {"rel_diff_pct": v.rel_diff_pct, "lead_pct": lead_pct(v.ratio, v.higher_is_better),
                                       "p_value": v.p_value}  # fmt: skip
        points.append(point)
        previous = values
    return points, direction


def trend_figure(trend: JSONMapping, title: str) -> JSONObject:
    """One line per target (a point per run at its time, with its interval), the worse runs marked,
    the y axis in the figure's unit (``MiB/s``, not plotly's ``1.5B``), dates on the x axis."""
    div = trend.get("divisor") or 1.0
    data = []
    for target in trend.get("targets") or [""]:
        pts = [p for p in trend["points"] if p.get("target", "") == target]
        if not pts:
            continue
        error = {"type": "data", "symmetric": False,
                 "array": [((p["ci95"][1] - p["mean"]) / div) if p["ci95"] else 0 for p in pts],
                 "arrayminus": [((p["mean"] - p["ci95"][0]) / div) if p["ci95"] else 0 for p in pts]}  # fmt: skip
        data.append({"type": "scatter", "mode": "lines+markers", "name": target or trend["metric_words"],
                     "x": [p["created_at"] for p in pts], "y": [p["mean"] / div for p in pts], "error_y": error,
                     "text": [f"run {p['run_id']}: {p['text']}" for p in pts], "hoverinfo": "text+x"})  # fmt: skip
    bad = [p for p in trend["points"] if p["regression"]]
    if bad:
        data.append({"type": "scatter", "mode": "markers", "name": "significantly worse than the run before",
                     "x": [p["created_at"] for p in bad], "y": [p["mean"] / div for p in bad],
                     "marker": {"color": "#c0392b", "size": 12, "symbol": "x"}})  # fmt: skip
    unit = trend.get("unit") or ""
    return {"data": data, "layout": {"title": {"text": title}, "autosize": True, "showlegend": True, "legend": {"orientation": "h"},
                                     "xaxis": {"type": "date", "title": {"text": "run started"}},
                                     "yaxis": {"title": {"text": f"{trend['metric_words']} ({unit})" if unit and unit not in trend["metric_words"] else trend["metric_words"]},
                                               "rangemode": "tozero", "ticksuffix": ""},
                                     "margin": {"l": 60, "r": 10, "t": 40, "b": 40}}}  # fmt: skip


def curve_items(runs_meta: Sequence[tuple[RunInfo, JSONMapping]]) -> list[JSONObject]:
    """Every stored curve (``curve_result`` of a run's metadata): its run, workload, target,
    knee, SLA ceiling, the lines storbench printed for it, and its steps."""
    out = []
    for info, meta in runs_meta:
        result = meta.get("curve_result") or {}
        for curve in result.get("curves", []):
            points = [p for p in curve.get("points", []) if isinstance(p, Mapping)]
            knee, ceiling = curve.get("knee"), curve.get("sla_ceiling")
            out.append({
                "run_id": info.run_id, "label": info.label, "created_at": info.created_at,
                "workload": result.get("workload"), "target": curve.get("target"), "setup": curve.get("setup"),
                "knee_iops": knee.get("iops") if isinstance(knee, Mapping) else None,
                "ceiling_iops": ceiling.get("iops") if isinstance(ceiling, Mapping) else None,
                "ceiling_open_ended": bool(ceiling.get("open_ended")) if isinstance(ceiling, Mapping) else False,
                "lines": [str(x) for x in curve.get("lines", [])],
                "steps": [{"iops": p.get("iops"), "p99_ns": p.get("p99_ns"), "step": p.get("step")} for p in points],
            })  # fmt: skip
    return out


def trace_item(row: TraceRow) -> JSONObject:
    """One stored trace as the traces page and its API list it."""
    return {"trace_id": row.trace_id, "label": row.label, "created_at": row.created_at, "source": row.source, "device": row.device,
            "events": row.events, "span_s": row.span_s, "stored_bytes": row.stored_bytes,
            "command": row.meta.get("command"), "lost_events": row.meta.get("lost_events")}  # fmt: skip


def curves_figure(curves: Sequence[JSONMapping]) -> JSONObject | None:
    """Several curves overlaid: IOPS against p99 latency, one line per curve."""
    data = []
    for c in curves:
        pts = [s for s in c["steps"] if s["iops"] is not None and s["p99_ns"] is not None]
        if pts:
            data.append({"type": "scatter", "mode": "lines+markers", "name": f"run {c['run_id']} {c['label'] or c['setup'] or c['target'] or ''}".strip(),
                         "x": [s["iops"] for s in pts], "y": [s["p99_ns"] / 1e3 for s in pts]})  # fmt: skip
    if not data:
        return None
    return {"data": data, "layout": {"title": {"text": "p99 latency against IOPS"}, "autosize": True, "legend": {"orientation": "h"},
                                     "xaxis": {"title": {"text": "IOPS"}, "rangemode": "tozero"},
                                     "yaxis": {"title": {"text": "p99 (µs)"}, "rangemode": "tozero"},
                                     "margin": {"l": 50, "r": 10, "t": 40, "b": 40}}}  # fmt: skip


def device_text(d: JSONMapping) -> str:
    """A device now, as the live page says it: ``vda: 87% busy, queue 3.2, read 120.0 MiB/s, write 0 B/s``."""
    util, queue = d.get("util_pct"), d.get("queue")
    return (f"{d.get('device')}: {'-' if util is None else f'{util:.0f}%'} busy, queue {'-' if queue is None else f'{queue:.1f}'}, "
            f"read {fmt_bw(d.get('read_bytes_per_s'))}, write {fmt_bw(d.get('write_bytes_per_s'))}")


def live_text(state: JSONMapping) -> JSONObject:
    """The live state with its figures as a person reads them (the page and the API give both):
    the newest rate fio printed, held until the next (``rate_of`` says which workload and
    repetition it is of: the one running, or the one before while the next lays out its file),
    the devices now, and each result stored so far."""
    last = state.get("last") or {}
    current = state.get("current") or {}
    names = state.get("names") or {}
    index, repetition = last.get("index"), last.get("repetition") or 0
    now = current.get("index") == index and (current.get("repetition") or 0) == repetition
    of = names.get(str(index), "").split(" on ")[0] if index is not None else ""
    return {
        "iops": fmt_iops(last.get("iops")) if last.get("iops") is not None else "-",
        "bw": fmt_bw(last.get("bw_bytes")) if last.get("bw_bytes") is not None else "-",
        "rate_of": (f"{of}{f' #{repetition + 1}' if repetition else ''}" + ("" if now else " (the one before)")) if last else "",
        "devices": [{**d, "text": device_text(d)} for d in state.get("devices") or []],
        "results": [
            {**r, "text": "; ".join(
                f"{d} {fmt_iops(f.get('iops'))} IOPS {fmt_bw(f.get('bw_bytes'))} lat {fmt_ns(f.get('lat_mean_ns'))}"
                for d, f in (r.get("figures") or {}).items() if d != "result")}
            for r in state.get("results", [])
        ],
    }  # fmt: skip
