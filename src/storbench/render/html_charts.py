"""Pure: the data behind the report charts, and the charts as plotly figure specs.

The figure builders return plain ``{"data": [...], "layout": {...}}`` dicts that
``Plotly.newPlot`` takes as they are (the HTML report embeds them as JSON); the data
helpers (records per configuration, percentile curves, sweeps, downsampling) are
shared with the Markdown report, which draws the same pictures with matplotlib.

Every text that came from a user (configuration names, workload names, option
values) is HTML-escaped before it goes into a figure: plotly renders a small HTML
subset inside SVG text, so ``<a href=...>`` in a label would otherwise become a link.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from storbench.jsontypes import JSONMapping, JSONObject, JSONValue

from ..compare import Comparison, Config, Row, metric_label
from ..errors import UsageError
from ..metrics import HIGHER_IS_BETTER, MEASURE_DIRECTION, summary_jobs
from ..model import DIRECTIONS
from ..record import ResultRecord
from ..units import fmt_bw, fmt_iops, fmt_ns, formatter, parse_size

#: At most this many points per time-series trace (longer series are averaged in buckets).
MAX_POINTS = 500

#: Colours per configuration (plotly's default qualitative palette), in config order.
PALETTE = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692", "#b6e880", "#ff97ff", "#fecb52")
#: Line styles per direction.
DASH = {"read": "solid", "write": "dash", "trim": "dot", "mixed": "dashdot"}

#: The metrics drawn as bar charts and sweep lines (p99 is in the percentile curves).
CHART_METRICS = ("iops", "bw_bytes", "lat_mean_ns")
#: the table's metrics for fio results (the report modules' TABLE_METRICS)
FIO_TABLE_METRICS = ("iops", "bw_bytes", "lat_mean_ns", "clat_p99_ns")


def measure_units(cmp: Comparison, workload: str) -> list[str]:
    """The units of another benchmark's figures (Measures) this workload has, in row order."""
    return list(dict.fromkeys(r.metric for r in cmp.rows if r.workload == workload and r.direction == MEASURE_DIRECTION))


def chart_metrics(cmp: Comparison, workload: str) -> tuple[str, ...]:
    """What a workload's bar charts show: fio's figures, then each Measure's unit."""
    units = measure_units(cmp, workload)
    fio = any(r.workload == workload and r.direction != MEASURE_DIRECTION for r in cmp.rows)
    return (CHART_METRICS if fio or not units else ()) + tuple(units)


def table_metrics(cmp: Comparison, workload: str) -> tuple[str, ...]:
    """A workload's table columns: fio's four figures, or (another benchmark's result) its units."""
    units = measure_units(cmp, workload)
    fio = any(r.workload == workload and r.direction != MEASURE_DIRECTION for r in cmp.rows)
    return (FIO_TABLE_METRICS if fio or not units else ()) + tuple(units)


#: directions a report's tables walk: fio's, then the one of other benchmarks' figures
TABLE_DIRECTIONS = (*DIRECTIONS, MEASURE_DIRECTION)
FORMATTERS: Mapping[str, Callable[[float | None], str]] = {
    "iops": fmt_iops,
    "bw_bytes": fmt_bw,
    "lat_mean_ns": fmt_ns,
    "clat_p99_ns": fmt_ns,
}

#: fio options that name files or logs, not the workload: never a sweep parameter.
IGNORED_OPTIONS = frozenset(
    {
        "filename", "directory", "filename_format", "name", "description", "opendir",
        "write_bw_log", "write_iops_log", "write_lat_log", "write_hist_log", "log_avg_msec",
        "log_hist_msec", "log_max_value", "per_job_logs", "log_offset", "log_prio",
        "log_compression", "log_unix_epoch", "output", "output-format", "stats",
    }
)  # fmt: skip

#: Percentiles that get a tick on the "nines" axis.
PCT_TICKS = (50.0, 90.0, 99.0, 99.9, 99.99)

#: With more configurations than this, a workload's percentile and per-second charts draw
#: this many (:func:`charted_configs`); the tables keep every configuration.
CHARTED_CONFIGS_MAX = 8
#: With more configurations than this, device activity is one table of averages per
#: workload (:func:`activity_rows`) instead of one chart per configuration.
ACTIVITY_CHARTS_MAX = 6
#: Significant digits kept of the many-point traces' values (per-second, percentiles, activity).
TRACE_DIGITS = 4


def sig(value: float, digits: int = TRACE_DIGITS) -> float:
    """``value`` rounded to ``digits`` significant digits (what a chart can show; a smaller page)."""
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def esc(text: object) -> str:
    """A user-given text made safe for plotly's HTML-like SVG text."""
    return html.escape(str(text), quote=False)


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


# --------------------------------------------------------------------------- records and units


def records_by_config(cmp: Comparison, records: Sequence[ResultRecord]) -> dict[str, list[ResultRecord]]:
    """The records behind each configuration (by ``Config.key``), matched the way
    :func:`compare.configurations` groups them (run, target when set, host)."""
    out: dict[str, list[ResultRecord]] = {c.key: [] for c in cmp.configs}
    for rec in records:
        for c in cmp.configs:
            if rec.run_id in c.run_ids and (c.target is None or rec.target == c.target) and rec.host == c.host:
                out[c.key].append(rec)
                break
    return out


def by_workload(records: Sequence[ResultRecord]) -> dict[str, list[ResultRecord]]:
    out: dict[str, list[ResultRecord]] = {}
    for rec in records:
        out.setdefault(rec.workload, []).append(rec)
    return out


def workloads(cmp: Comparison) -> list[str]:
    seen: list[str] = []
    for row in cmp.rows:
        if row.workload not in seen:
            seen.append(row.workload)
    return seen


def rows_of(cmp: Comparison, workload: str, metric: str | None = None) -> list[Row]:
    return [r for r in cmp.rows if r.workload == workload and (metric is None or r.metric == metric)]


def charted_configs(cmp: Comparison, workload: str, headline: str = "iops", limit: int = CHARTED_CONFIGS_MAX) -> list[Config]:
    """The configurations a workload's percentile and per-second charts draw.

    All of them when there are at most ``limit``; else the baseline and, of the others with
    a figure for ``headline`` (first direction that has it), the best, the worst, the second
    best, the second worst, ... until ``limit``, in the comparison's order.  A chart of fifty
    curves shows none of them; the extremes and the baseline say where the field lies.
    """
    if len(cmp.configs) <= limit:
        return list(cmp.configs)
    row = next((r for r in rows_of(cmp, workload, headline)), None) or next(iter(rows_of(cmp, workload)), None)
    ranked: list[str] = []
    if row is not None:
        scored = [(cell.summary.mean, cell.config) for cell in row.cells if cell is not None and cell.config != cmp.baseline]
        scored.sort(key=lambda t: t[0], reverse=row.higher_is_better)
        best, worst = [k for _, k in scored], [k for _, k in reversed(scored)]
        for pair in zip(best, worst):
            for key in pair:
                if key not in ranked:
                    ranked.append(key)
    chosen = {cmp.baseline, *ranked[: limit - 1]}
    return [c for c in cmp.configs if c.key in chosen]


def scale_for(metric: str, largest: float) -> tuple[float, str]:
    """(divisor, unit) that keep a chart axis readable."""
    if metric == "iops":
        return 1.0, "IOPS"
    if metric == "bw_bytes":
        for unit, div in (("GiB/s", 1 << 30), ("MiB/s", 1 << 20), ("KiB/s", 1 << 10)):
            if largest >= div:
                return float(div), unit
        return 1.0, "B/s"
    if not metric.endswith("_ns"):  # another benchmark's figure, in its own unit
        return 1.0, metric
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if largest >= scale:
            return scale, unit
    return 1.0, "ns"


def downsample(points: Sequence[Sequence[float]], max_points: int = MAX_POINTS) -> list[tuple[float, float]]:
    """At most ``max_points`` (t, value) pairs: consecutive points averaged in equal buckets."""
    pts = [(float(p[0]), float(p[1])) for p in points]
    if len(pts) <= max_points:
        return pts
    out = []
    for i in range(max_points):
        lo, hi = i * len(pts) // max_points, (i + 1) * len(pts) // max_points
        chunk = pts[lo:hi]
        out.append((sum(p[0] for p in chunk) / len(chunk), sum(p[1] for p in chunk) / len(chunk)))
    return out


def option_sort_key(value: str | None) -> tuple[int, float, str]:
    """Sort option values by what they mean: sizes with units (4k < 64k < 1m), numbers, then text."""
    if value is None:
        return (2, 0.0, "")
    try:
        return (0, float(parse_size(value.strip())), value)
    except (UsageError, ValueError, AttributeError):
        pass
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


# --------------------------------------------------------------------------- latency percentiles


@dataclass(frozen=True)
class PercentileCurve:
    """One configuration's latency percentiles for one workload and direction, over its repetitions."""

    source: str  # "completion" (clat_ns) or "total" (lat_ns)
    n: int  # repetitions
    points: tuple[tuple[float, float, float, float], ...]  # (percentile, mean ns, min ns, max ns)


def _record_percentiles(rec: ResultRecord) -> dict[str, tuple[str, dict[float, float]]]:
    """Per direction: (source, {percentile: ns}); several jobs are averaged weighted by their I/Os."""
    out: dict[str, tuple[str, dict[float, float]]] = {}
    jobs = summary_jobs(rec.fio)
    for direction in DIRECTIONS:
        dirs = [j.directions[direction] for j in jobs if direction in j.directions]
        for attr, source in (("clat_ns", "completion"), ("lat_ns", "total")):
            lats = [getattr(d, attr) for d in dirs]
            if not dirs or any(lat is None or not lat.percentiles for lat in lats):
                continue
            keys = set(lats[0].percentiles)
            for lat in lats[1:]:
                keys &= set(lat.percentiles)
            weights = [float(d.total_ios if d.total_ios is not None else d.io_bytes) or 1.0 for d in dirs]
            total = sum(weights)
            curve = {
                float(k): sum(lat.percentiles[k] * w for lat, w in zip(lats, weights)) / total
                for k in keys
                if float(k) < 100.0
            }
            if curve:
                out[direction] = (source, curve)
            break
    return out


def percentile_curves(records: Sequence[ResultRecord]) -> dict[str, PercentileCurve]:
    """Per direction, the percentiles every repetition reported (same source), averaged."""
    per = [_record_percentiles(r) for r in records]
    out: dict[str, PercentileCurve] = {}
    for direction in DIRECTIONS:
        curves = [p.get(direction) for p in per]
        if not curves or any(c is None for c in curves) or len({c[0] for c in curves}) != 1:  # type: ignore[index]
            continue
        keys = set(curves[0][1])  # type: ignore[index]
        for c in curves[1:]:
            keys &= set(c[1])  # type: ignore[index]
        points = []
        for k in sorted(keys):
            vals = [c[1][k] for c in curves]  # type: ignore[index]
            points.append((k, sum(vals) / len(vals), min(vals), max(vals)))
        if points:
            out[direction] = PercentileCurve(source=curves[0][0], n=len(curves), points=tuple(points))  # type: ignore[index]
    return out


def nines(percentile: float) -> float:
    """The "nines" position of a percentile: p90 -> 1, p99 -> 2, p99.9 -> 3."""
    return -math.log10(1.0 - percentile / 100.0)


# --------------------------------------------------------------------------- sweeps


@dataclass(frozen=True)
class SweepPoint:
    config: str  # Config.key
    workload: str
    x: str | None  # value of the first swept option
    y: str | None = None  # value of the second (two-parameter sweeps)


@dataclass(frozen=True)
class Sweep:
    """Workloads (or configurations) whose fio options differ in exactly one or two options."""

    keys: tuple[str, ...]  # the swept option(s)
    fixed: tuple[tuple[str, str | None], ...]  # the options every point shares
    points: tuple[SweepPoint, ...]

    def values(self, axis: int = 0) -> list[str | None]:
        vals = {p.x if axis == 0 else p.y for p in self.points}
        return sorted(vals, key=option_sort_key)


def _options(records: Sequence[ResultRecord]) -> dict[str, str | None]:
    return {k: v for k, v in records[0].options.items() if k not in IGNORED_OPTIONS}


def find_sweeps(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]], min_values: int = 2) -> list[Sweep]:
    """Sweeps among the (configuration, workload) results of a comparison.

    A sweep is one workload at several values of its options: the points of ``--sweep``
    (``rnd4k-q1t1-read@bs=4k,iodepth=1``: the name before ``@`` is the workload), or one
    workload run in several configurations with an option changed.  A suite's different
    workloads are never a sweep, however their options differ (quick's bs x rw variety).
    A one-parameter sweep: results whose options are the same except one, which takes at
    least ``min_values`` values.  A two-parameter sweep (a grid): the same except two, with
    at least 2 values each, ``min_values`` for one of them, and at least half of the grid
    measured.  One-parameter sweeps that lie inside a grid are left out.
    """
    names = set(workloads(cmp))
    units: list[tuple[str, str, dict[str, str | None]]] = []
    for c in cmp.configs:
        for workload, recs in by_workload(by_config.get(c.key, ())).items():
            if workload in names:
                units.append((c.key, workload, _options(recs)))
    all_keys = sorted({k for _, _, o in units for k in o})
    missing = object()
    varying = [k for k in all_keys if len({str(o.get(k, missing)) for _, _, o in units}) > 1]

    # units with the same options (one workload in many configurations) are grouped once:
    # the pairs of options below are tried on the distinct option sets, not on every unit
    by_options: dict[tuple, list[int]] = {}
    for i, (_c, w, o) in enumerate(units):
        by_options.setdefault((w.split("@", 1)[0], tuple(sorted(o.items(), key=lambda kv: kv[0]))), []).append(i)

    def groups(swept: tuple[str, ...]) -> list[list[tuple[str, str, dict]]]:
        out: dict[tuple, list[int]] = {}
        for (base, options), members in by_options.items():
            rest = (base, *(kv for kv in options if kv[0] not in swept))  # one workload's points only
            out.setdefault(rest, []).extend(members)
        return [[units[i] for i in sorted(g)] for g in out.values() if len(g) >= 2]

    def dedupe(points: list[SweepPoint]) -> tuple[SweepPoint, ...]:
        seen, out = set(), []
        for p in points:
            if (p.config, p.x, p.y) not in seen:
                seen.add((p.config, p.x, p.y))
                out.append(p)
        return tuple(out)

    sweeps: list[Sweep] = []
    covered: set[tuple[str, str]] = set()
    for k1, k2 in combinations(varying, 2):
        for g in groups((k1, k2)):
            pts = dedupe([SweepPoint(c, w, o.get(k1), o.get(k2)) for c, w, o in g])
            xs, ys = {p.x for p in pts}, {p.y for p in pts}
            cells = {(p.x, p.y) for p in pts}
            if min(len(xs), len(ys)) >= 2 and max(len(xs), len(ys)) >= min_values and 2 * len(cells) >= len(xs) * len(ys):
                fixed = tuple(sorted((k, v) for k, v in g[0][2].items() if k not in (k1, k2)))
                sweeps.append(Sweep(keys=(k1, k2), fixed=fixed, points=pts))
                covered |= {(p.config, p.workload) for p in pts}
    for k in varying:
        for g in groups((k,)):
            pts = dedupe([SweepPoint(c, w, o.get(k)) for c, w, o in g])
            if len({p.x for p in pts}) < min_values or all((p.config, p.workload) in covered for p in pts):
                continue
            fixed = tuple(sorted((kk, v) for kk, v in g[0][2].items() if kk != k))
            sweeps.append(Sweep(keys=(k,), fixed=fixed, points=pts))
    return sweeps


def sweep_lines(cmp: Comparison, sweep: Sweep, metric: str) -> list[tuple[str, str, list[SweepPoint]]]:
    """The lines of a one-parameter sweep: (config key or "", direction, points sorted by x).

    One line per configuration when some configuration has several points; one line
    across configurations (config key "") when each has at most one.
    """
    per_config: dict[str, list[SweepPoint]] = {}
    for p in sweep.points:
        per_config.setdefault(p.config, []).append(p)
    directions = [d for d in DIRECTIONS if any(r.direction == d for p in sweep.points for r in rows_of(cmp, p.workload, metric))]
    lines_of = per_config if any(len(v) > 1 for v in per_config.values()) else {"": list(sweep.points)}
    out = []
    for key, pts in lines_of.items():
        for d in directions:
            out.append((key, d, sorted(pts, key=lambda p: option_sort_key(p.x))))
    return out


def cell_of(cmp: Comparison, config: str, workload: str, direction: str, metric: str):
    """The :class:`compare.Cell` of one configuration, or None."""
    idx = [c.key for c in cmp.configs].index(config)
    for row in cmp.rows:
        if row.workload == workload and row.direction == direction and row.metric == metric:
            return row.cells[idx]
    return None


# --------------------------------------------------------------------------- plotly figures


def _layout(title: str, height: int, **extra: JSONValue) -> JSONObject:
    layout: JSONObject = {
        "title": {"text": title, "font": {"size": 14}, "x": 0, "xanchor": "left"},
        "height": height,
        "autosize": True,
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.18, "x": 0},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#fafafa",
        "hoverlabel": {"namelength": -1},
    }
    layout.update(extra)
    return layout


def bar_figure(cmp: Comparison, workload: str, metric: str) -> JSONObject | None:
    """Horizontal bars per configuration (one colour per direction), error bars = standard error."""
    rows = rows_of(cmp, workload, metric)
    cells = [c for r in rows for c in r.cells if c is not None]
    if not cells:
        return None
    div, unit = scale_for(metric, max(c.summary.mean for c in cells))
    fmt = formatter(metric)
    names = []
    for i, c in enumerate(cmp.configs):
        ns = sorted({cell.summary.n for r in rows if (cell := r.cells[i]) is not None})
        names.append(f"{esc(c.name)} · n={'/'.join(str(n) for n in ns) or '-'}")
    traces = []
    for di, row in enumerate(rows):
        y, x, err, text, custom = [], [], [], [], []
        for name, cell in zip(names, row.cells):
            if cell is None:
                continue
            s = cell.summary
            y.append(name)
            x.append(s.mean / div)
            err.append((s.stderr or 0.0) / div)
            text.append(fmt(s.mean))
            custom.append([fmt(s.stddev) if s.stddev is not None else "-", fmt(s.stderr) if s.stderr is not None else "-", s.n])
        traces.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": row.direction,
                "x": x,
                "y": y,
                "text": text,
                "textposition": "inside",
                "insidetextanchor": "start",
                "marker": {"color": color(di)},
                "error_x": {"type": "data", "array": err, "visible": True, "color": "#333"},
                "customdata": custom,
                "hovertemplate": "%{y}<br>mean %{text}<br>sd %{customdata[0]}, se %{customdata[1]}, n=%{customdata[2]}<extra>"
                + row.direction
                + "</extra>",
            }
        )
    bars = sum(len(t["x"]) for t in traces)
    better = "higher is better" if rows[0].higher_is_better else "lower is better"
    return {
        "data": traces,
        "layout": _layout(
            f"{metric_label(metric)}, {unit} ({better})" if unit not in ("IOPS", metric) else f"{unit} ({better})",
            110 + 30 * bars + (30 if len(traces) > 1 else 0),
            barmode="group",
            uniformtext={"mode": "hide", "minsize": 10},
            showlegend=len(traces) > 1,
            xaxis={"rangemode": "tozero", "automargin": True},
            yaxis={"autorange": "reversed", "automargin": True, "categoryorder": "array", "categoryarray": names},
        ),
    }


def percentile_figure(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]], workload: str,
                      configs: Sequence[Config] | None = None) -> JSONObject | None:  # fmt: skip
    """Latency percentile curves per configuration (``configs``, by default all) and direction,
    x on a "nines" scale, y log."""
    traces = []
    largest = 0.0
    sources = set()
    drawn = {c.key for c in (cmp.configs if configs is None else configs)}
    for ci, c in enumerate(cmp.configs):
        if c.key not in drawn:
            continue
        recs = [r for r in by_config.get(c.key, ()) if r.workload == workload]
        for direction, curve in percentile_curves(recs).items():
            sources.add(curve.source)
            largest = max(largest, max(p[1] for p in curve.points))
            traces.append((ci, c, direction, curve))
    if not traces:
        return None
    div, unit = scale_for("lat_mean_ns", largest)
    data = []
    for ci, c, direction, curve in traces:
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"{esc(c.name)} {direction}",
                "x": [sig(nines(p[0])) for p in curve.points],
                "y": [sig(p[1] / div) for p in curve.points],
                "line": {"color": color(ci), "dash": DASH.get(direction, "solid")},
                "marker": {"size": 5},
                "customdata": [[f"p{p[0]:g}", fmt_ns(p[1]), fmt_ns(p[2]), fmt_ns(p[3])] for p in curve.points],
                "hovertemplate": "%{customdata[0]}: %{customdata[1]}<br>range %{customdata[2]} … %{customdata[3]} over "
                + f"{curve.n} run{'s' if curve.n != 1 else ''}<extra>{esc(c.name)} {direction}</extra>",
            }
        )
    which = " / ".join(sorted(sources))
    shown = "" if len(drawn) == len(cmp.configs) else f", {len(drawn)} of {len(cmp.configs)} configurations"
    return {
        "data": data,
        "layout": _layout(
            f"Latency percentiles ({which} latency{shown})",
            380,
            xaxis={
                "tickvals": [nines(p) for p in PCT_TICKS],
                "ticktext": [f"p{p:g}" for p in PCT_TICKS],
                "zeroline": False,
                "automargin": True,
            },
            yaxis={"title": {"text": unit}, "type": "log", "automargin": True},
        ),
    }


def per_second_series(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]], workload: str, kind: str,
                      drawn: set[str]) -> list[tuple[int, Config, int, str, Sequence[Sequence[float]]]]:  # fmt: skip
    """(configuration index, configuration, repetition, direction, points) of every stored
    per-second series of ``kind`` ("iops" or "bw_bytes") of ``workload``, for the configurations
    whose keys are in ``drawn``, in the comparison's order: what both reports' per-second charts draw."""
    found = []
    for ci, c in enumerate(cmp.configs):
        if c.key not in drawn:
            continue
        for rec in by_config.get(c.key, ()):
            if rec.workload != workload or not rec.series:
                continue
            for direction, points in (rec.series.get(kind) or {}).items():
                if points:
                    found.append((ci, c, rec.repetition, direction, points))
    return found


def series_figure(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]], workload: str, kind: str,
                  configs: Sequence[Config] | None = None) -> JSONObject | None:  # fmt: skip
    """IOPS (``kind`` "iops") or bandwidth ("bw_bytes") per second of every repetition of
    ``configs`` (by default all)."""
    drawn = {c.key for c in (cmp.configs if configs is None else configs)}
    found = [(ci, c, rep, d, downsample(pts)) for ci, c, rep, d, pts in per_second_series(cmp, by_config, workload, kind, drawn)]
    if not found:
        return None
    div, unit = scale_for(kind, max(v for *_, pts in found for _, v in pts))
    data, shown = [], set()
    for ci, c, rep, direction, pts in found:
        group = f"{c.key} {direction}"
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers" if len(pts) < 30 else "lines",
                "name": f"{esc(c.name)} {direction}",
                "legendgroup": group,
                "showlegend": group not in shown,
                "x": [sig(p[0]) for p in pts],
                "y": [sig(p[1] / div) for p in pts],
                "line": {"color": color(ci), "dash": DASH.get(direction, "solid"), "width": 1.5},
                "hovertemplate": f"t=%{{x}} s: %{{y:.4~s}} {unit}<extra>{esc(c.name)} {direction} #{rep + 1}</extra>",
            }
        )
        shown.add(group)
    title = "IOPS over time" if kind == "iops" else "Bandwidth over time"
    which = "" if len(drawn) == len(cmp.configs) else f"; {len(drawn)} of {len(cmp.configs)} configurations"
    return {
        "data": data,
        "layout": _layout(
            f"{title} (per second, every run{which})",
            320,
            xaxis={"ticksuffix": " s", "rangemode": "tozero", "automargin": True},
            yaxis={"title": {"text": unit}, "rangemode": "tozero", "automargin": True},
        ),
    }


def activity_peak(records: Sequence[ResultRecord]) -> float:
    """The largest device read or write rate (bytes/s) sampled in these records."""
    rates = [
        max(s.read_bytes_per_s or 0.0, s.write_bytes_per_s or 0.0)
        for r in records
        if r.activity is not None
        for s in r.activity.samples
    ]
    return max(rates, default=0.0)


def activity_figure(config: Config, records: Sequence[ResultRecord], peak: float | None = None) -> JSONObject | None:
    """Device throughput, device utilisation and CPU per second, stacked, for one configuration.

    Repetitions are told apart by line style (solid #1, dotted #2, ...); ``peak`` (bytes/s)
    picks the throughput unit, so that charts of several configurations share it.
    """
    recs = [r for r in records if r.activity is not None and (r.activity.samples or r.activity.cpu)]
    if not recs:
        return None
    div, unit = scale_for("bw_bytes", activity_peak(recs) if peak is None else peak)
    data = []
    panel_colors = {"read": "#1f77b4", "write": "#d62728", "util": "#2ca02c", "user": "#17becf", "system": "#ff7f0e", "iowait": "#9467bd"}
    dashes = ("solid", "dot", "dash", "longdash", "dashdot")
    shown: set[str] = set()

    def add(name: str, pts: list, axis: str, hue: str, rep: int, fmt: str) -> None:
        pts = downsample([p for p in pts if p[1] is not None])
        if not pts:
            return
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": name,
                "legendgroup": name,
                "showlegend": name not in shown,
                "x": [sig(p[0]) for p in pts],
                "y": [sig(p[1]) for p in pts],
                "yaxis": axis,
                "line": {"color": panel_colors[hue], "dash": dashes[rep % len(dashes)], "width": 1.5},
                "hovertemplate": f"t=%{{x:.0f}} s: %{{y:{fmt}}}<extra>{name} #{rep + 1}</extra>",
            }
        )
        shown.add(name)

    for rec in recs:
        act = rec.activity
        if act is None:  # not among recs (above)
            continue
        for dev in act.devices:
            samples = [s for s in act.samples if s.device == dev]
            d = esc(dev)
            add(f"{d} read", [(s.t_s, None if s.read_bytes_per_s is None else s.read_bytes_per_s / div) for s in samples], "y", "read", rec.repetition, ".3~s")
            add(f"{d} write", [(s.t_s, None if s.write_bytes_per_s is None else s.write_bytes_per_s / div) for s in samples], "y", "write", rec.repetition, ".3~s")
            add(f"{d} util %", [(s.t_s, s.util_pct) for s in samples], "y2", "util", rec.repetition, ".1f")
        for attr, hue in (("user_pct", "user"), ("system_pct", "system"), ("iowait_pct", "iowait")):
            add(f"CPU {hue} %", [(s.t_s, getattr(s, attr)) for s in act.cpu], "y3", hue, rec.repetition, ".1f")
    if not data:
        return None
    # only the panels that have lines, stacked top to bottom, sharing the time axis
    panels = [(a, t) for a, t in (("y", unit), ("y2", "util %"), ("y3", "CPU %")) if any(d["yaxis"] == a for d in data)]
    gap = 0.07
    height = (1.0 - gap * (len(panels) - 1)) / len(panels)
    axes: JSONObject = {}
    for i, (axis, title) in enumerate(panels):
        top = 1.0 - i * (height + gap)
        name = "yaxis" if axis == "y" else f"yaxis{axis[1:]}"
        axes[name] = {"domain": [max(0.0, top - height), top], "title": {"text": title}, "rangemode": "tozero", "anchor": "x", "automargin": True}
        if axis == "y2":
            axes[name]["range"] = [0, 105]
    what = "Device and CPU activity" if any(d["yaxis"] != "y3" for d in data) else "CPU activity (no block device)"
    return {
        "data": data,
        "layout": _layout(
            f"{what}: {esc(config.name)}",
            160 + 130 * len(panels),
            xaxis={"ticksuffix": " s", "anchor": panels[-1][0], "rangemode": "tozero", "automargin": True},
            **axes,
        ),
    }


@dataclass(frozen=True)
class ActivityRow:
    """One device of one configuration over a workload's repetitions: the means of its
    per-second samples (bytes/s, %) and the busiest second's utilisation; the CPU means
    (``None`` when not sampled) are the configuration's, on its first device's row."""

    config: str  # Config.name
    device: str
    samples: int
    read_bytes_per_s: float | None
    write_bytes_per_s: float | None
    util_pct: float | None
    util_max_pct: float | None
    cpu_user_pct: float | None = None
    cpu_system_pct: float | None = None
    cpu_iowait_pct: float | None = None


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def activity_rows(config: Config, records: Sequence[ResultRecord]) -> list[ActivityRow]:
    """What the devices and CPUs of one configuration did while a workload ran, averaged over
    every sampled second of its repetitions: the table that replaces the per-configuration
    charts when a report has many configurations (more than :data:`ACTIVITY_CHARTS_MAX`)."""
    acts = [r.activity for r in records if r.activity is not None]
    devices = list(dict.fromkeys(d for a in acts for d in a.devices))
    cpu = [s for a in acts for s in a.cpu]
    rows = []
    for i, dev in enumerate(devices or ([None] if cpu else [])):
        samples = [s for a in acts for s in a.samples if s.device == dev]
        utils = [s.util_pct for s in samples if s.util_pct is not None]
        first = i == 0
        rows.append(ActivityRow(
            config=config.name, device=dev or "(no block device)", samples=len(samples),
            read_bytes_per_s=_mean([s.read_bytes_per_s for s in samples]),
            write_bytes_per_s=_mean([s.write_bytes_per_s for s in samples]),
            util_pct=_mean(utils), util_max_pct=max(utils, default=None),
            cpu_user_pct=_mean([s.user_pct for s in cpu]) if first else None,
            cpu_system_pct=_mean([s.system_pct for s in cpu]) if first else None,
            cpu_iowait_pct=_mean([s.iowait_pct for s in cpu]) if first else None,
        ))  # fmt: skip
    return rows


def _axis_values(values: Sequence[str | None]) -> list[str]:
    return [esc("(unset)" if v is None else v) for v in values]


def sweep_figure(cmp: Comparison, sweep: Sweep, metric: str) -> JSONObject | None:
    """A one-parameter sweep as lines over the option's values (sorted by meaning), error bars = se."""
    names = {c.key: c.name for c in cmp.configs}
    index = {c.key: i for i, c in enumerate(cmp.configs)}
    lines = []
    largest = 0.0
    for key, direction, pts in sweep_lines(cmp, sweep, metric):
        xs, cells, labels = [], [], []
        for p in pts:
            cell = cell_of(cmp, p.config, p.workload, direction, metric)
            if cell is not None:
                xs.append(p.x)
                cells.append(cell)
                labels.append(f"{esc(names[p.config])}: {esc(p.workload)}")
                largest = max(largest, cell.summary.mean)
        if cells:
            lines.append((key, direction, xs, cells, labels))
    if not lines:
        return None
    div, unit = scale_for(metric, largest)
    fmt = formatter(metric)
    data = []
    for i, (key, direction, xs, cells, labels) in enumerate(lines):
        name = (esc(names[key]) + " " if key else "") + direction
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": _axis_values(xs),
                "y": [c.summary.mean / div for c in cells],
                "error_y": {"type": "data", "array": [(c.summary.stderr or 0.0) / div for c in cells], "visible": True},
                "line": {"color": color(index[key] if key else i), "dash": DASH.get(direction, "solid")},
                "customdata": [[lab, fmt(c.summary.mean), c.summary.n] for lab, c in zip(labels, cells)],
                "hovertemplate": "%{customdata[0]}<br>%{customdata[1]} (n=%{customdata[2]})<extra>" + name + "</extra>",
            }
        )
    return {
        "data": data,
        "layout": _layout(
            f"{metric_label(metric)} over {esc(sweep.keys[0])}" + (f", {unit}" if unit != "IOPS" else ""),
            340,
            showlegend=len(data) > 1,
            xaxis={"type": "category", "categoryorder": "array", "categoryarray": _axis_values(sweep.values(0)), "automargin": True},
            yaxis={"rangemode": "tozero", "automargin": True},
        ),
    }


def heatmap_figure(cmp: Comparison, sweep: Sweep, config: str, direction: str, metric: str) -> JSONObject | None:
    """A two-parameter sweep of one configuration as a grid of the mean (square markers
    coloured by value, labelled with the figure)."""
    xs, ys = sweep.values(0), sweep.values(1)
    z: list[list[float | None]] = [[None for _ in xs] for _ in ys]
    text = [["" for _ in xs] for _ in ys]
    found = False
    fmt = formatter(metric)
    for p in sweep.points:
        if p.config != config:
            continue
        cell = cell_of(cmp, config, p.workload, direction, metric)
        if cell is None:
            continue
        yi, xi = ys.index(p.y), xs.index(p.x)
        z[yi][xi] = cell.summary.mean
        text[yi][xi] = f"{fmt(cell.summary.mean)} (n={cell.summary.n})"
        found = True
    if not found:
        return None
    name = esc(cmp.config(config).name)
    # drawn as a grid of square markers coloured by the mean (the report's plotly bundle has
    # no heatmap trace; a marker grid reads the same and keeps the bundle small)
    px: list[str] = []
    py: list[str] = []
    pz: list[float] = []
    pt: list[str] = []
    for yi, y in enumerate(_axis_values(ys)):
        for xi, x in enumerate(_axis_values(xs)):
            if (value := z[yi][xi]) is not None:
                px.append(x)
                py.append(y)
                pz.append(value)
                pt.append(text[yi][xi])
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "markers+text",
                "x": px,
                "y": py,
                "text": pt,
                "textposition": "middle center",
                "textfont": {"color": "#fff", "size": 11},
                "marker": {"symbol": "square", "size": 46, "color": pz, "colorscale": "Viridis",
                           "reversescale": not HIGHER_IS_BETTER[metric], "showscale": False},
                "hovertemplate": f"{esc(sweep.keys[0])}=%{{x}}, {esc(sweep.keys[1])}=%{{y}}: %{{text}}<extra></extra>",
            }
        ],
        "layout": _layout(
            f"{metric_label(metric)}, {direction}: {name}",
            120 + 40 * len(ys),
            xaxis={"title": {"text": esc(sweep.keys[0])}, "type": "category", "automargin": True,
                   "categoryorder": "array", "categoryarray": _axis_values(xs)},
            yaxis={"title": {"text": esc(sweep.keys[1])}, "type": "category", "automargin": True,
                   "categoryorder": "array", "categoryarray": _axis_values(ys)},
        ),
    }



# --------------------------------------------------------------------------- curves and steady state


def curve_figure(curves: Sequence[JSONMapping], name: str = "") -> JSONObject | None:
    """Latency against throughput, one line per target (``storbench curve``): p99 over IOPS,
    each step a marker labelled with its load; the knee ringed; the SLA limit a dashed line."""
    traces: list[JSONObject] = []
    limit_ns = None
    for i, c in enumerate(curves):
        pts = [p for p in c.get("points", []) if p.get("p99_ns") is not None]
        if not pts:
            continue
        labels = [",".join(f"{k}={v}" for k, v in p["step"].items()) for p in pts]
        name = c.get("setup") or c.get("target") or f"curve {i + 1}"  # a study's curve is named by its setup
        traces.append({
            "type": "scatter", "mode": "lines+markers", "name": esc(name),
            "x": [p["iops"] for p in pts], "y": [p["p99_ns"] / 1e6 for p in pts], "text": [esc(t) for t in labels],
            "marker": {"color": color(i), "size": 8}, "line": {"color": color(i)},
            "hovertemplate": "%{text}: %{x:.0f} IOPS, p99 %{y:.3f} ms<extra>" + esc(name) + "</extra>",
        })  # fmt: skip
        knee = c.get("knee")
        if knee and knee.get("p99_ns") is not None:
            traces.append({"type": "scatter", "mode": "markers", "name": f"knee ({esc(name)})",
                           "x": [knee["iops"]], "y": [knee["p99_ns"] / 1e6],
                           "marker": {"symbol": "circle-open", "size": 18, "color": color(i), "line": {"width": 2}}})  # fmt: skip
        ceiling = c.get("sla_ceiling")
        if ceiling:
            limit_ns = ceiling.get("limit_ns")
    if not traces:
        return None
    shapes = []
    if limit_ns is not None:
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": limit_ns / 1e6, "y1": limit_ns / 1e6,
                       "line": {"dash": "dash", "color": "#b00020", "width": 1}})  # fmt: skip
    return {
        "data": traces,
        "layout": _layout(f"p99 latency against IOPS{': ' + esc(name) if name else ''} (each point a load step)", 380,
                          xaxis={"title": {"text": "IOPS"}, "rangemode": "tozero", "automargin": True},
                          yaxis={"title": {"text": "p99 latency, ms"}, "rangemode": "tozero", "automargin": True},
                          shapes=shapes),
    }


def steady_figure(name: str, verdict: JSONMapping) -> JSONObject | None:
    """SNIA's steady-state chart: the tracked figure per round, the measurement window's
    average with its ±10 % and ±20 % bands, and the least-squares line over the window."""
    series = list(verdict.get("series") or [])
    if not series:
        return None
    rounds = list(range(1, len(series) + 1))
    traces: list[JSONObject] = [{"type": "scatter", "mode": "lines+markers", "name": "each round", "x": rounds, "y": series,
                                     "marker": {"color": color(0)}, "line": {"color": color(0)}}]  # fmt: skip
    window = verdict.get("window")
    avg = verdict.get("average")
    if window and avg:
        w0, w1 = window[0] + 1, window[1] + 1
        xs = [w0, w1]
        for share, dash, label in ((0.0, "solid", "window average"), (0.10, "dot", "±10%"), (0.20, "dash", "±20%")):
            for sign in ((1,) if share == 0 else (1, -1)):
                traces.append({"type": "scatter", "mode": "lines", "x": xs, "y": [avg * (1 + sign * share)] * 2,
                               "name": label, "showlegend": sign == 1, "line": {"color": "#555", "dash": dash, "width": 1}})  # fmt: skip
        if verdict.get("slope") is not None and verdict.get("intercept") is not None:
            b, a = verdict["slope"], verdict["intercept"]
            traces.append({"type": "scatter", "mode": "lines", "name": "least-squares line", "x": xs,
                           "y": [a, a + b * (w1 - w0)], "line": {"color": "#b00020", "width": 2}})  # fmt: skip
    state = "steady" if verdict.get("settled") else "not steady"
    unit = {"iops": "IOPS", "bw": "bytes/s", "lat": "mean latency, ns"}.get(verdict.get("headline", "iops"), "")
    return {
        "data": traces,
        "layout": _layout(f"{esc(name)}: {state} (SNIA: range <= 20%, slope <= 10% of the 5-round window's average)", 340,
                          xaxis={"title": {"text": "round"}, "dtick": 1, "automargin": True},
                          yaxis={"title": {"text": unit}, "rangemode": "tozero", "automargin": True}),
    }
