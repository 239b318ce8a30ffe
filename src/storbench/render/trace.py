"""A stored trace as a person reads it: its description and figures as lines (``storbench trace
show``, ``storbench capture``, the serve page) and its charts as plotly figures (requests per
second, request sizes).  Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..units import format_bytes

if TYPE_CHECKING:
    from ..jsontypes import JSONObject
    from ..trace.rows import TraceRow


def _n(v: float) -> str:
    return f"{v:,.0f}"


def format_trace(row: TraceRow) -> list[str]:
    """A stored trace's description and figures, as lines."""
    meta, fig = row.meta, row.figures
    head = f"trace {row.trace_id} {row.label!r}: {_n(row.events)} requests over {row.span_s:.2f} s, {meta.get('source')}"
    lines = [head + (f" on {row.device}" if row.device else "")]
    if meta.get("command"):
        lines.append(f"  while: {meta['command']}")
    for name, d in (fig.get("directions") or {}).items():
        if not d.get("ops"):
            continue
        text = f"  {name:5} {_n(d['ops'])} requests, {format_bytes(d['bytes'])}"
        if d.get("iops") is not None:
            text += f", {_n(d['iops'])} IOPS, {format_bytes(d['bw_bytes'])}/s"
        lat = d.get("lat_ns")
        if lat:
            text += f"; latency p50 {lat['50.0'] / 1000:,.0f} us, p99 {lat['99.0'] / 1000:,.0f} us"
        if d.get("sequential_pct") is not None:
            text += f"; {d['sequential_pct']:.0f} % sequential"
        lines.append(text)
    if fig.get("flushes"):
        lines.append(f"  flush {_n(fig['flushes'])}")
    depth = fig.get("depth")
    if depth:
        lines.append(f"  queue depth: max {depth['max']}, mean {depth['mean']:.2f}")
    sizes = fig.get("sizes") or {}
    if sizes:
        lines.append("  request sizes: " + ", ".join(f"<={format_bytes(int(k))} {_n(sum(v.values()))}" for k, v in sizes.items()))
    kernel = dict(meta.get("completed_kernel") or {})
    seen = dict(meta.get("completed_seen") or {})
    if kernel:
        pairs = ", ".join(f"{k} {_n(seen.get(k, 0))}/{_n(v)}" for k, v in kernel.items() if v or seen.get(k))
        lines.append(f"  completed, captured/kernel's counters: {pairs or 'none'}; lost events: {meta.get('lost_events')}")
    cost = meta.get("cost") or {}
    if cost.get("wall_s"):
        lines.append(f"  capture cost: {cost.get('cpu_s', 0):.2f} s CPU over {cost['wall_s']:.1f} s ({cost.get('cpu_s', 0) / cost['wall_s'] * 100:.1f} % of a CPU), {_n(cost.get('events_per_s', 0))} events/s")
    lines.append(f"  stored: {format_bytes(row.stored_bytes)} ({row.stored_bytes / max(row.events, 1):.1f} bytes a request)")
    for note in meta.get("notes") or ():
        lines.append(f"  note: {note}")
    return lines



def trace_charts(row: TraceRow) -> list[JSONObject]:
    """The trace's per-second requests (read, write, trim) and its request sizes, as plotly figures."""
    fig = row.figures
    per = fig.get("per_second") or {}
    seconds = per.get("t_s") or []
    out: list[JSONObject] = []
    lines = [{"type": "scatter", "mode": "lines", "name": f"{d} requests/s", "x": seconds, "y": per.get(f"{d}_iops") or []}
             for d in ("read", "write", "trim") if any(per.get(f"{d}_iops") or [])]  # fmt: skip
    if lines:
        out.append({"data": lines, "layout": {"title": {"text": "requests issued per second"}, "autosize": True, "legend": {"orientation": "h"},
                                              "xaxis": {"title": {"text": "second"}}, "yaxis": {"title": {"text": "requests/s"}, "rangemode": "tozero"},
                                              "margin": {"l": 50, "r": 10, "t": 40, "b": 40}}})  # fmt: skip
    sizes = fig.get("sizes") or {}
    if sizes:
        labels = [f"<={format_bytes(int(k))}" for k in sizes]
        bars = [{"type": "bar", "name": d, "x": labels, "y": [v.get(d, 0) for v in sizes.values()]}
                for d in ("read", "write", "trim") if any(v.get(d) for v in sizes.values())]  # fmt: skip
        out.append({"data": bars, "layout": {"title": {"text": "request sizes"}, "autosize": True, "barmode": "group", "legend": {"orientation": "h"},
                                             "yaxis": {"title": {"text": "requests"}}, "margin": {"l": 50, "r": 10, "t": 40, "b": 40}}})  # fmt: skip
    return out
