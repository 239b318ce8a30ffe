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

from collections.abc import Mapping, Sequence

from storbench.jsontypes import JSONMapping, JSONObject, JSONValue

from ..compare import Comparison, Config, metric_label
from ..metrics import HIGHER_IS_BETTER
from ..record import ResultRecord
from ..units import fmt_ns, formatter
from .chartdata import (
    DASH,
    PCT_TICKS,
    Sweep,
    activity_peak,
    cell_of,
    color,
    downsample,
    esc,
    nines,
    per_second_series,
    percentile_curves,
    rows_of,
    scale_for,
    sig,
    sweep_lines,
)

# --------------------------------------------------------------------------- records and units


# --------------------------------------------------------------------------- latency percentiles


# --------------------------------------------------------------------------- sweeps


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
    """Horizontal bars per configuration (one colour per direction), error bars ± one standard
    deviation over the runs (the spread the tables beside them give as ± sd)."""
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
            err.append((s.stddev or 0.0) / div)
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


def _axis_values(values: Sequence[str | None]) -> list[str]:
    return [esc("(unset)" if v is None else v) for v in values]


def sweep_figure(cmp: Comparison, sweep: Sweep, metric: str) -> JSONObject | None:
    """A one-parameter sweep as lines over the option's values (sorted by meaning), error bars ± sd."""
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
                "error_y": {"type": "data", "array": [(c.summary.stddev or 0.0) / div for c in cells], "visible": True},
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
