"""The HTML report (pure): records and a comparison in, one self-contained HTML page out.

The page works offline and alone: plotly.js is embedded once, the figures follow as
JSON (drawn by a few lines of script), the CSS is inline, and nothing is fetched.
Every text from the records (labels, paths, messages, job files) goes through
Jinja2's autoescaping, and JSON inside ``<script>`` has ``<``, ``>`` and ``&``
escaped, so a label such as ``<script>alert(1)</script>`` shows as text.

Sections, each built by one function below: header (runs), invalid-results banner,
summary in words, configurations side by side with their differences, each
workload (bar charts, figures table, latency percentiles, per-second series, device
activity), sweeps, findings, fio job files.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import jinja2
from markupsafe import Markup

from storbench.jsontypes import JSONMapping, JSONObject, JSONValue

from ..compare import Comparison, Config, Row, metric_label, summary_sentences
from ..metrics import METRICS, headlines_of
from ..model import DIRECTIONS, SEVERITIES, RunInfo
from ..record import ResultRecord
from ..stats.core import VERDICT_BETTER, VERDICT_NOISE, VERDICT_WORSE
from ..units import format_bytes
from . import chartdata
from . import html_charts as charts
from .compare import (
    LEADER_BEST_MEAN,
    LEADER_SIGNIFICANT,
    compare_to_json,
    format_rel_diff,
    format_verdict,
)

TEMPLATES = Path(__file__).parent / "templates"

#: Table columns: every metric of a row, in metrics.METRICS order.
TABLE_METRICS = tuple(m for m, _ in METRICS)


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


#: plotly.js's partial bundle with the trace types the report uses (bar, scatter): 1.19 MB
#: instead of the full bundle's 4.8 MB; see render/vendor/README.md
PLOTLY_BUNDLE = Path(__file__).parent / "vendor" / "plotly-basic.min.js"
#: the trace types the bundle draws; html_charts makes no other
PLOTLY_TRACE_TYPES = frozenset({"bar", "scatter", "pie"})


#: How the page's three large parts (plotly.js, the figures, the data) are embedded: gzip,
#: then base64, each in a ``<script type="application/gzip">`` that names what it holds in
#: ``data-content``; the page inflates them with the browser's DecompressionStream (Chrome
#: and Edge 80, Firefox 113, Safari 16.4).  A 50-run report is about a fifth of its plain size.
PACKED_TYPE = "application/gzip"


def pack(text: str) -> Markup:
    """``text`` gzip-compressed (no timestamp: the same page twice is the same bytes) and
    base64-encoded: nothing in it can end a ``<script>`` element."""
    data = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
    return Markup(base64.b64encode(data).decode("ascii"))


def embedded(page: str, element_id: str) -> JSONValue:
    """What a report page embeds under ``element_id`` ("storbench-data", "storbench-figures":
    JSON, decoded; "storbench-plotly": the script's text), unpacked as the page does it.

    Raises ``ValueError`` naming the element when the page has no such part.
    """
    m = re.search(rf'<script type="{PACKED_TYPE}" id="{re.escape(element_id)}" data-content="([^"]+)">(.*?)</script>', page, re.DOTALL)
    if m is None:
        raise ValueError(f"the page has no packed part {element_id!r} (not a storbench report, or an older one)")
    text = gzip.decompress(base64.b64decode(m.group(2))).decode("utf-8")
    return json.loads(text) if m.group(1) == "application/json" else text


@functools.lru_cache(maxsize=1)
def _plotly_js() -> Markup:
    return pack(PLOTLY_BUNDLE.read_text(encoding="utf-8"))


def script_json(data: JSONValue) -> Markup:
    """``data`` as JSON, packed (:func:`pack`) for a ``<script type="application/gzip">``."""
    return pack(json.dumps(data, allow_nan=False, separators=(",", ":"), ensure_ascii=False))


class Figures:
    """The page's figures, in order; a chart div names its figure by index."""

    def __init__(self) -> None:
        self.specs: list[JSONObject] = []

    def add(self, spec: JSONObject | None) -> int | None:
        if spec is None:
            return None
        self.specs.append(spec)
        return len(self.specs) - 1


# --------------------------------------------------------------------------- sections


def _header(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]], runs: Mapping[int, RunInfo]) -> list[JSONObject]:
    """One entry per configuration: its runs, when, status, how many results."""
    out = []
    for c in cmp.configs:
        recs = by_config.get(c.key, [])
        infos = [runs[r] for r in c.run_ids if r in runs]
        out.append(
            {
                "name": c.name,
                "baseline": c.key == cmp.baseline,
                "runs": ", ".join(f"run {r}" for r in c.run_ids),
                "when": ", ".join(i.created_at for i in infos) or (recs[0].created_at if recs and recs[0].created_at else "-"),
                "status": ", ".join(f"{i.status}" + (f" ({i.reason})" if i.reason else "") for i in infos) or "-",
                "suite": ", ".join(i.suite for i in infos if i.suite) or "-",
                "target": c.target or "-",
                "results": len(recs),
                "workloads": len({r.workload for r in recs}),
            }
        )
    return out


def invalid_workloads(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]]) -> list[JSONObject]:
    """The workloads whose numbers are invalid (a finding of severity "invalid"), with where and why."""
    found: dict[str, JSONObject] = {}
    for c in cmp.configs:
        for rec in by_config.get(c.key, []):
            for f in rec.findings:
                if f.severity == "invalid":
                    entry = found.setdefault(f.workload or rec.workload, {"configs": [], "checks": []})
                    if c.name not in entry["configs"]:
                        entry["configs"].append(c.name)
                    if f.check not in entry["checks"]:
                        entry["checks"].append(f.check)
    return [{"workload": w, **v} for w, v in found.items()]


def summary_html(cmp: Comparison, headlines: Mapping[str, str], records: Sequence[ResultRecord] = (),
             by_config: Mapping[str, Sequence[ResultRecord]] | None = None) -> JSONObject:  # fmt: skip
    """What the report opens with: for a study, one verdict line per workload and what makes
    the comparison not like for like; for a single configuration, its figures at a glance in
    the preset's layout (:mod:`storbench.render.glance`)."""
    from ..compare import config_differences, finding_caveats, verdict_lines
    from .glance import glance

    base = cmp.config(cmp.baseline).name
    single = len(cmp.configs) == 1
    g = glance(records, dict(headlines)) if single and records else None
    diffs = config_differences(cmp, by_config or {}) if not single else ()
    names = [c.name for c in cmp.configs]

    def values(d) -> str:
        return " / ".join(f"{v} ({n})" for v, n in zip(d.values, names))

    return {
        "sentences": summary_sentences(cmp, headlines) if not single else [],
        "verdicts": verdict_lines(cmp, headlines, finding_caveats(by_config or {})) if not single else [],
        "glance": None if g is None else {"title": g.title, "columns": list(g.columns), "rows": [list(r) for r in g.rows], "note": g.note},
        "variables": _variables([d for d in diffs if d.variable], values),
        "unlike": [f"{d.field}" + (f" of {d.workload}" if d.workload else "") + f": {values(d)}" for d in diffs if not d.variable],
        "method": "" if single else f"Differences are judged with {cmp.test} at α = {cmp.alpha:g} against the baseline {base}. "
        "“Within noise” means the runs cannot tell the configurations apart, not that they are equal; "
        "with a single run no difference can be claimed.",
    }


def _variables(variables, values) -> list[str]:
    """The study's own differences, the fields every configuration has first, at most three,
    then how many more (the configurations table shows them all)."""
    shown = [d for d in variables if all(v != "-" for v in d.values)][:3] or variables[:3]
    out = [f"{d.field}: {values(d)}" for d in shown]
    if len(variables) > len(shown):
        out.append(f"and {len(variables) - len(shown)} more setting(s) (see Configurations)")
    return out


def _host_facts(c: Config, recs: Sequence[ResultRecord]) -> dict[str, str]:
    st = c.storage
    h = st.host if st is not None else None
    fio_versions = sorted({r.fio.fio_version for r in recs if r.fio.fio_version})
    facts = {
        "Runs": ", ".join(f"run {r}" for r in c.run_ids),
        "Target": c.target or (st.target if st is not None else "-"),
        "Hostname": (h.hostname if h else None) or c.host or "-",
        "OS": (h.distribution if h else None) or "-",
        "Kernel": (h.kernel if h else None) or "-",
        "CPU": f"{h.cpu_count or '?'} × {h.cpu_model or 'CPU'}" if h and (h.cpu_model or h.cpu_count) else "-",
        "RAM": format_bytes(h.mem_bytes) if h and h.mem_bytes is not None else "-",
        "fio": (h.fio_version if h and h.fio_version else None) or ", ".join(fio_versions) or "-",
    }
    fs = st.filesystem if st is not None else None
    facts["Filesystem"] = f"{fs.fstype} at {fs.mountpoint} ({fs.source})" if fs else "-"
    facts["Mount options"] = ",".join(fs.options) if fs and fs.options else "-"
    devices = st.devices if st is not None else ()
    if devices:
        from ..storage import format_chain

        facts["Devices"] = format_chain(devices)
    for label, attr in (
        ("I/O scheduler", "scheduler"),
        ("Write cache", "write_cache"),
        ("Rotational", "rotational"),
        ("Read-ahead (KiB)", "read_ahead_kb"),
        ("Queue (nr_requests)", "nr_requests"),
    ):
        vals = [f"{d.name}: {_text(getattr(d, attr))}" for d in devices if getattr(d, attr) is not None]
        facts[label] = "; ".join(vals) or "-"
    return facts


#: Facts that name a configuration rather than describe it: never highlighted as a difference.
_IDENTITIES = frozenset({"Runs"})


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def configuration_facts(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]]) -> JSONObject:
    """Facts side by side (rows that differ flagged), storage descriptions, and setting differences."""
    from ..storage import differences, format_storage

    facts = [_host_facts(c, by_config.get(c.key, [])) for c in cmp.configs]
    labels: list[str] = []
    for f in facts:
        labels.extend(k for k in f if k not in labels)
    rows = []
    for label in labels:
        values = [f.get(label, "-") for f in facts]
        if all(v == "-" for v in values):
            continue  # nothing known about it anywhere (imports): leave the row out
        differs = label not in _IDENTITIES and len(cmp.configs) > 1 and len(set(values)) > 1
        rows.append({"label": label, "cells": values, "differs": differs})
    storage = [format_storage(c.storage) if c.storage is not None else [] for c in cmp.configs]

    described = [c for c in cmp.configs if c.storage is not None]
    ref = cmp.config(cmp.baseline) if cmp.config(cmp.baseline).storage is not None else (described[0] if described else None)
    diff_rows: list[JSONObject] = []
    if ref is not None and len(described) > 1:
        table: dict[str, dict[str, str]] = {}
        for c in described:
            if c.key == ref.key:
                continue
            for field, va, vb in differences(ref.storage, c.storage):
                table.setdefault(field, {ref.key: va})[c.key] = vb
        for field, texts in table.items():
            cells = []
            for c in cmp.configs:
                if c.storage is None:
                    cells.append({"text": "not described", "differs": False})
                else:
                    v = texts.get(c.key, texts[ref.key])
                    cells.append({"text": v, "differs": v != texts[ref.key]})
            diff_rows.append({"field": field, "cells": cells})
    return {
        "names": [c.name for c in cmp.configs],
        "baseline": cmp.baseline_index,
        "rows": rows,
        "storage": storage,
        "differences": diff_rows,
        "described": len(described),
        "reference": ref.name if ref is not None else None,
    }


def _verdict_class(verdict: str | None) -> str:
    return {VERDICT_BETTER: "better", VERDICT_WORSE: "worse", VERDICT_NOISE: "noise"}.get(verdict or "", "inconclusive")


def figure_cell(cmp: Comparison, row: Row, index: int) -> JSONObject | None:
    cell = row.cells[index]
    if cell is None:
        return None
    fmt = charts.formatter(row.metric)
    s = cell.summary
    v = row.versus[index]
    mark = ""
    if row.leader == cell.config:
        mark = LEADER_SIGNIFICANT if row.leader_significant else LEADER_BEST_MEAN
    return {
        "mean": fmt(s.mean),
        "sd": fmt(s.stddev) if s.stddev is not None else None,
        "mean_repr": repr(s.mean),
        "n": s.n,
        "mark": mark,
        "rel": format_rel_diff(v),
        "verdict": format_verdict(v),
        "verdict_class": _verdict_class(v.verdict if v else None),
    }


def _table(cmp: Comparison, workload: str, headline: str) -> JSONObject:
    """Rows of (direction, configuration) with every metric's cell."""
    rows = chartdata.rows_of(cmp, workload)
    by_dir: dict[str, dict[str, Row]] = {}
    for r in rows:
        by_dir.setdefault(r.direction, {})[r.metric] = r
    body = []
    columns = chartdata.table_metrics(cmp, workload)
    for direction in chartdata.TABLE_DIRECTIONS:
        metrics = by_dir.get(direction)
        if not metrics:
            continue
        for i, c in enumerate(cmp.configs):
            cells = {m: figure_cell(cmp, metrics[m], i) if m in metrics else None for m in columns}
            if all(v is None for v in cells.values()):
                continue
            n = max((v["n"] for v in cells.values() if v), default=0)
            body.append(
                {"direction": direction, "config": c.name, "key": c.key, "baseline": c.key == cmp.baseline, "n": n, "cells": cells}
            )
    return {
        "columns": [{"metric": m, "label": metric_label(m), "headline": m == headline} for m in columns],
        "rows": body,
    }


def _workloads(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]], figs: Figures, headlines: Mapping[str, str]) -> list[JSONObject]:
    out = []
    for i, workload in enumerate(chartdata.workloads(cmp)):
        headline = {"iops": "iops", "bw": "bw_bytes", "lat": "lat_mean_ns"}.get(headlines.get(workload, ""), "iops")
        bars = [figs.add(charts.bar_figure(cmp, workload, m)) for m in chartdata.chart_metrics(cmp, workload)]
        drawn = chartdata.charted_configs(cmp, workload, headline)
        series = [figs.add(charts.series_figure(cmp, by_config, workload, k, drawn)) for k in ("iops", "bw_bytes")]
        activity, activity_table = [], []
        mine = {c.key: [r for r in by_config.get(c.key, []) if r.workload == workload] for c in cmp.configs}
        if len(cmp.configs) <= chartdata.ACTIVITY_CHARTS_MAX:
            peak = chartdata.activity_peak([r for recs in mine.values() for r in recs])
            for c in cmp.configs:
                fig = figs.add(charts.activity_figure(c, mine[c.key], peak))
                if fig is not None:
                    activity.append(fig)
        else:
            activity_table = [_activity_cells(row) for c in cmp.configs for row in chartdata.activity_rows(c, mine[c.key])]
        out.append(
            {
                "pools": pool_activity(cmp, mine),
                "name": workload,
                "anchor": f"w{i}",
                "headline": metric_label(headline),
                "bars": [b for b in bars if b is not None],
                "table": _table(cmp, workload, headline),
                "percentiles": figs.add(charts.percentile_figure(cmp, by_config, workload, drawn)),
                "series": [s for s in series if s is not None],
                "charted": None if len(drawn) == len(cmp.configs) else [c.name for c in drawn],
                "activity": activity,
                "activity_table": activity_table,
            }
        )
    return out


def _activity_cells(row: chartdata.ActivityRow) -> JSONObject:
    from ..units import format_bytes

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f}"

    def rate(v: float | None) -> str:
        return "-" if v is None else f"{format_bytes(v)}/s"

    return {"config": row.config, "device": row.device, "samples": row.samples,
            "read": rate(row.read_bytes_per_s), "write": rate(row.write_bytes_per_s),
            "util": pct(row.util_pct), "util_max": pct(row.util_max_pct),
            "cpu": "" if row.cpu_user_pct is None else f"{pct(row.cpu_user_pct)} / {pct(row.cpu_system_pct)} / {pct(row.cpu_iowait_pct)}"}  # fmt: skip


def pool_activity(cmp: Comparison, mine: Mapping[str, Sequence[ResultRecord]]) -> list[JSONObject]:
    """Per configuration (its last repetition of the workload): what each vdev and member of its
    ZFS pool did (zpool iostat -v), the ARC's hit ratio and the pool's state."""
    from ..units import format_bytes

    out = []
    for c in cmp.configs:
        pools = [r.backend.zfs for r in mine.get(c.key, []) if r.backend is not None and r.backend.zfs is not None]
        if not pools:
            continue
        z = pools[-1]
        rows = [
            {
                "name": v.name, "role": v.role,
                "read": f"{v.read_ops:,.0f} ops, {format_bytes(v.read_bytes)}", "write": f"{v.write_ops:,.0f} ops, {format_bytes(v.write_bytes)}",
            }
            for v in z.vdevs
        ]  # fmt: skip
        state = []
        for when, st in (("before", z.before), ("after", z.after)):
            if st is not None and not st.healthy:
                state.append(f"{when} the run: {st.state}" + (f", {st.scan_active} in progress" if st.scan_active else "")
                             + "".join(f", {n} {s}" for n, s in st.vdev_states))  # fmt: skip
        arc = None
        if z.arc_hit_ratio is not None:
            arc = f"{z.arc_hit_ratio * 100:.1f}% ARC hits ({z.arc_hits:,} hits, {z.arc_misses:,} misses)"
        out.append({"config": c.name, "pool": z.pool, "seconds": z.seconds, "rows": rows, "arc": arc, "state": state,
                    "compressratio": f"{z.compressratio_after:.2f}x" if z.compressratio_after is not None else None})  # fmt: skip
    return out


def _sweeps(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]], figs: Figures) -> list[JSONObject]:
    out = []
    for sweep in chartdata.find_sweeps(cmp, by_config):
        fixed = ", ".join(f"{k}={v}" if v is not None else k for k, v in sweep.fixed)
        if len(sweep.keys) == 1:
            ids = [figs.add(charts.sweep_figure(cmp, sweep, m)) for m in chartdata.CHART_METRICS]
            title = f"Sweep over {sweep.keys[0]}: " + ", ".join(str(v) for v in sweep.values(0))
        else:
            ids = []
            for c in cmp.configs:
                for d in DIRECTIONS:
                    for m in chartdata.CHART_METRICS:
                        ids.append(figs.add(charts.heatmap_figure(cmp, sweep, c.key, d, m)))
            title = f"Sweep over {sweep.keys[0]} × {sweep.keys[1]}"
        ids = [i for i in ids if i is not None]
        if ids:
            workloads = sorted({p.workload for p in sweep.points}, key=lambda w: chartdata.workloads(cmp).index(w))
            out.append({"title": title, "fixed": fixed, "workloads": workloads, "figures": ids})
    return out


def curve_sections(metas: Mapping[int, JSONMapping], figs: Figures | None) -> list[JSONObject]:
    """One section per curved workload: every curve of it (each target of a ``storbench
    curve`` run, each setup of a ``matrix --curve`` study) on one chart, the knee and SLA
    lines of each, and the line comparing them at the same latency."""
    from ..curve.model import side_by_side

    groups: dict[str, JSONObject] = {}
    for rid, meta in metas.items():
        result = meta.get("curve_result")
        if not result or not result.get("curves"):
            continue
        group = groups.setdefault(result.get("workload", ""), {"runs": [], "curves": []})
        group["runs"].append(rid)
        group["curves"].extend(result["curves"])
    out = []
    for workload, group in groups.items():
        curves = group["curves"]
        fig = figs.add(charts.curve_figure(curves, workload)) if figs is not None else None
        runs = group["runs"]
        iso = side_by_side(curves)
        out.append({"run": (f"run {runs[0]}" if len(runs) == 1 else "runs " + ", ".join(str(r) for r in runs)),
                    "workload": workload, "figure": fig, "curves": curves, "iso": iso,
                    "lines": [line for c in curves for line in c.get("lines", []) if not line.startswith("  ")] + ([iso] if iso else [])})  # fmt: skip
    return out


def steady_sections(metas: Mapping[int, JSONMapping], figs: Figures | None) -> list[JSONObject]:
    """Each workload of a ``--until steady`` run: SNIA's chart and the rule's verdict."""
    out = []
    for rid, meta in metas.items():
        for name, verdict in (meta.get("steady") or {}).items():
            fig = figs.add(charts.steady_figure(name, verdict)) if figs is not None else None
            out.append({"run": rid, "workload": name, "figure": fig, "reason": verdict.get("reason", ""),
                        "settled": verdict.get("settled", False), "rounds": len(verdict.get("series") or [])})  # fmt: skip
    return out


def finding_digest(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]]) -> list[JSONObject]:
    """One entry per configuration, workload, check and severity, worst first.

    Checks run after every repetition over the repetitions so far, so the finding of
    the last repetition that has it says the most; ``count`` says in how many of the
    workload's results the check fired.
    """
    found: dict[tuple, JSONObject] = {}
    for c in cmp.configs:
        recs = by_config.get(c.key, [])
        for rec in sorted(recs, key=lambda r: r.repetition):
            for f in rec.findings:
                workload = f.workload or rec.workload
                entry = found.setdefault(
                    (c.key, workload, f.check, f.severity),
                    {"config": c.name, "workload": workload, "severity": f.severity, "check": f.check, "count": 0,
                     "of": sum(1 for r in recs if r.workload == workload)},
                )  # fmt: skip
                entry.update(message=f.message, fix=f.fix)
                entry["count"] += 1
    # a warning or note every workload of a configuration has, in the same words, is said once for all
    for c in cmp.configs:
        workloads = {r.workload for r in by_config.get(c.key, [])}
        if len(workloads) < 2:
            continue
        keys = [k for k in found if k[0] == c.key]
        for check, severity in {(k[2], k[3]) for k in keys if k[3] != "invalid"}:
            mine = [k for k in keys if (k[2], k[3]) == (check, severity)]
            if {k[1] for k in mine} != workloads or len({found[k]["message"] for k in mine}) > 1:
                continue  # not every workload, or each says its own figures: kept beside each
            first = found[mine[0]]
            merged = {**first, "workload": f"every workload ({len(workloads)})",
                      "count": sum(found[k]["count"] for k in mine), "of": sum(found[k]["of"] for k in mine)}  # fmt: skip
            for k in mine:
                del found[k]
            found[(c.key, "*", check, severity)] = merged
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(found.values(), key=lambda e: -rank.get(e["severity"], 0))


def job_files(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]]) -> list[JSONObject]:
    """Each workload's distinct fio job files, with the configurations that ran each."""
    out = []
    for workload in chartdata.workloads(cmp):
        texts: dict[str, JSONObject] = {}
        for c in cmp.configs:
            for rec in by_config.get(c.key, []):
                if rec.workload != workload:
                    continue
                entry = texts.setdefault(rec.job_text or "(job file not stored)", {"configs": [], "fio": []})
                if c.name not in entry["configs"]:
                    entry["configs"].append(c.name)
                if rec.fio.fio_version and rec.fio.fio_version not in entry["fio"]:
                    entry["fio"].append(rec.fio.fio_version)
        out.append({"workload": workload, "texts": [{"text": t, **v} for t, v in texts.items()]})
    return out


# --------------------------------------------------------------------------- the page


def format_html_report(
    records: Sequence[ResultRecord],
    cmp: Comparison,
    *,
    title: str | None = None,
    generated_at: str | None = None,
    runs: Mapping[int, RunInfo] | None = None,
    headlines: Mapping[str, str] | None = None,
    metas: Mapping[int, JSONMapping] | None = None,
) -> str:
    """The whole report as one HTML string.

    ``records`` are the results behind ``cmp`` (matched to its configurations by run,
    target and host); ``runs`` adds each run's date and status to the header;
    ``headlines`` maps a workload to the metric it is judged by ("iops", "bw",
    "lat"), by default :func:`metrics.default_headline` of its options.
    ``generated_at`` is shown as given (the caller owns the clock).
    """
    by_config = chartdata.records_by_config(cmp, records)
    heads = dict(headlines_of(records))
    heads.update(headlines or {})
    figs = Figures()
    names = [c.name for c in cmp.configs]
    context = {
        "title": title or "storbench report: " + " vs ".join(names),
        "generated_at": generated_at,
        "header": _header(cmp, by_config, runs or {}),
        "invalid": invalid_workloads(cmp, by_config),
        "summary": summary_html(cmp, heads, records, by_config),
        "configs": configuration_facts(cmp, by_config),
        "workloads": _workloads(cmp, by_config, figs, heads),
        "sweeps": _sweeps(cmp, by_config, figs),
        "curves": curve_sections(metas or {}, figs),
        "steady": steady_sections(metas or {}, figs),
        "findings": finding_digest(cmp, by_config),
        "jobs": job_files(cmp, by_config),
        "legend": f"{LEADER_SIGNIFICANT} best and significantly ahead of every other configuration; "
        f"{LEADER_BEST_MEAN} best mean, not significantly ahead.",
    }
    context["figures_json"] = script_json(figs.specs)
    data = compare_to_json(cmp)
    for config in data["configs"]:  # the page shows the storage as text; serial numbers stay out
        config.pop("storage", None)
    context["data_json"] = script_json(data)
    context["plotly_js"] = _plotly_js()
    return _environment().get_template("report.html.j2").render(**context)
