"""Child process of benchmarks/logs.py: storbench ingests, summarises and charts a directory of fio logs.

    python benchmarks/_ingest_logs.py LOG_DIR OUT {--png | --html | --all}

Streams the per-I/O logs through :func:`storbench.fio.logs.summarize_io_logs`
(per-second IOPS and bandwidth, p50/p99 latency per second, all jobs aligned on
their timestamps), downsamples each series with the report's
:func:`storbench.render.chartdata.downsample`, and charts them:

* ``--png``: three panels drawn by :func:`storbench.render.png.line_chart_png` (Pillow;
  every point reduced to each pixel column's extremes, none averaged away), as the
  Markdown report draws its per-second chart;
* ``--html``: three plotly figures in a self-contained page (plotly.js inlined, the
  way ``storbench report`` writes its HTML), drawn by the browser;
* ``--all``: no chart; parse every line of every log instead (what reading them all
  would cost).

Prints one JSON line with what it did and how long each part took.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def _xy(points, scale: float = 1.0, column: int = 1, thin: bool = True):
    from storbench.render.chartdata import downsample

    pts = [(p[0], p[column] * scale) for p in points]
    if thin:
        pts = downsample(pts)
    return [p[0] for p in pts], [p[1] for p in pts]


def _panels(summary, thin: bool = True):
    """(title, y label, log axis, [(name, xs, ys)]) per chart; ``thin``: downsampled as the HTML report does."""
    iops = [(d, *_xy(pts, thin=thin)) for d, pts in summary.iops.items()]
    bw = [(d, *_xy(pts, 1 / 2**20, thin=thin)) for d, pts in summary.bw_bytes.items()]
    lat = [
        (f"{d} p{p:g}", *_xy(rows, 1 / 1000, column=i, thin=thin))
        for d, rows in summary.lat_ns.items()
        for i, p in enumerate(summary.percentiles, start=1)
    ]
    kind = summary.latency_kind or "lat"
    return [("IOPS per second", "IOPS", False, iops), ("bandwidth per second", "MiB/s", False, bw),
            (f"{kind} percentiles per second", f"{kind} (µs)", True, lat)]


def png(summary, out: Path) -> None:
    from storbench.render.chartdata import color
    from storbench.render.png import Panel, Series, line_chart_png

    panels = []
    for title, ylabel, log, traces in _panels(summary, thin=False):
        series = tuple(Series(name, xs, ys, color(i)) for i, (name, xs, ys) in enumerate(traces))
        panels.append(Panel(title, ylabel, series, log_y=log))
    out.write_bytes(line_chart_png(panels, title=f"{summary.jobs} jobs, {summary.ios:,} I/Os, per second"))


def html(summary, out: Path) -> None:
    from plotly.offline import get_plotlyjs

    divs, calls = [], []
    for i, (title, ylabel, log, traces) in enumerate(_panels(summary)):
        spec = {
            "data": [{"type": "scatter", "mode": "lines", "name": n, "x": xs, "y": ys} for n, xs, ys in traces],
            "layout": {"title": {"text": title}, "height": 320, "xaxis": {"title": {"text": "time (s)"}},
                       "yaxis": {"title": {"text": ylabel}, "type": "log" if log else "linear"}},
        }
        divs.append(f'<div id="c{i}"></div>')
        payload = json.dumps(spec).replace("</", "<\\/")
        calls.append(f"(function(s){{Plotly.newPlot('c{i}', s.data, s.layout)}})({payload});")
    out.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>fio logs</title>"
        f"<script>{get_plotlyjs()}</script></head><body>"
        f"<h1>{summary.jobs} jobs, {summary.ios:,} I/Os, per second</h1>{''.join(divs)}"
        f"<script>{''.join(calls)}</script></body></html>",
        encoding="utf-8",
    )


def main() -> int:
    t0 = time.perf_counter()
    log_dir, out, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    from storbench.fio.logs import file_blocks, io_log_summary_to_dict, iter_log_rows, summarize_io_logs

    paths = sorted(p for p in log_dir.iterdir() if p.name.endswith(".log"))
    handles = {p.name: p.open("rb") for p in paths}
    try:
        if mode == "--all":
            lines = sum(rows.shape[0] for fh in handles.values() for rows in iter_log_rows(file_blocks(fh)))
            print(json.dumps({"lines": lines, "bytes": sum(p.stat().st_size for p in paths),
                              "seconds": time.perf_counter() - t0}))
            return 0
        summary = summarize_io_logs({name: file_blocks(fh) for name, fh in handles.items()})
    finally:
        for fh in handles.values():
            fh.close()
    t_summary = time.perf_counter() - t0
    {"--png": png, "--html": html}[mode](summary, out)
    done = time.perf_counter() - t0
    print(json.dumps({
        "seconds": done,
        "summary_seconds": t_summary,
        "chart_seconds": done - t_summary,
        "chart_bytes": out.stat().st_size,
        "logs_read": list(summary.logs_read),
        "bytes_read": sum((log_dir / name).stat().st_size for name in summary.logs_read),
        "ios": summary.ios,
        "jobs": summary.jobs,
        "summary": io_log_summary_to_dict(summary),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
