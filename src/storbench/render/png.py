"""Raster line charts over time (pure: series in, PNG bytes out), drawn with Pillow.

Why not matplotlib, which draws the Markdown report's bar and percentile charts:
importing it takes 0.5-0.8 s on a 2-core machine, more than reading 5 million log
lines; Pillow's import takes ~35 ms and a three-panel chart ~20 ms to draw.

Nothing is thinned.  Each series is reduced per pixel column to its first, lowest,
highest and last point (the "M4" reduction: Jugel et al., VLDB 2014) and those are
joined in order, so the drawn line is the one a renderer drawing every point at this
width would draw: a spike one sample wide among a million still reaches its pixel.
Points that are not finite (and, on a log axis, not above zero) are left out and the
panel says how many.

:func:`line_chart_png` is the one entry point; :class:`Panel` and :class:`Series`
are its frozen inputs.  May import: numpy and Pillow only.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_LEFT_PX, _RIGHT_PX, _GAP_PX = 64, 14, 10
_TEXT, _AXIS, _GRID, _BACK = "#222222", "#888888", "#e4e4e4", "#ffffff"
_LINE_PX = 2
#: Series of at most this many points get a dot on each.
_MARKED_POINTS = 30
#: Characters Pillow's bundled font (Aileron) has no glyph for, and what is drawn instead.
_NO_GLYPH = str.maketrans({"µ": "u", "μ": "u", "≥": ">=", "≤": "<=", "—": "-", "–": "-", "×": "x"})


@dataclass(frozen=True, eq=False)
class Series:
    """One line: ``x`` and ``y`` of equal length (any order of x; sorted before drawing)."""

    name: str
    x: Sequence[float]
    y: Sequence[float]
    color: str  # "#rrggbb"
    in_legend: bool = True  # False for a repetition drawn in the colour of one already named


@dataclass(frozen=True, eq=False)
class Panel:
    """One plot area; every panel of a chart shares the x axis."""

    title: str
    y_label: str
    series: tuple[Series, ...]
    log_y: bool = False


@dataclass(frozen=True)
class _Reduced:
    px: np.ndarray  # pixel column of each kept point
    y: np.ndarray  # its value
    color: str
    points: int  # points drawn (before the reduction)
    dropped: int  # points not drawable (not finite; <= 0 on a log axis)


def m4(col: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per run of equal ``col`` (already in x order): its first, lowest, highest and last point.

    Returns the kept (column, value) pairs in drawing order; a column with one point
    keeps it four times (harmless to a polyline).
    """
    if col.size == 0:
        return col, y
    starts = np.concatenate(([0], np.flatnonzero(np.diff(col)) + 1))
    ends = np.concatenate((starts[1:], [col.size])) - 1
    lo = np.minimum.reduceat(y, starts)
    hi = np.maximum.reduceat(y, starts)
    cols = np.repeat(col[starts], 4)
    vals = np.column_stack((y[starts], lo, hi, y[ends])).ravel()
    return cols, vals


def _nice_step(span: float, target_ticks: int) -> float:
    raw = span / max(1, target_ticks)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def linear_ticks(lo: float, hi: float, target_ticks: int = 5) -> tuple[float, float, list[float]]:
    """An axis range widened to whole steps of 1, 2, 2.5 or 5 x 10^k, and its ticks."""
    if not hi > lo:
        lo, hi = (lo - 1, hi + 1) if lo == 0 else (lo - abs(lo) * 0.5, hi + abs(hi) * 0.5)
    step = _nice_step(hi - lo, target_ticks)
    start, stop = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
    n = round((stop - start) / step)
    return start, stop, [start + i * step for i in range(n + 1)]


def log_ticks(lo: float, hi: float) -> tuple[float, float, list[float]]:
    """Whole decades around ``lo``..``hi`` (> 0); within one decade, 1-2-5 ticks as well."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if b == a:
        b += 1
    ticks = [10.0**k for k in range(a, b + 1)]
    if b - a <= 2:
        ticks = sorted(t * m for t in ticks[:-1] for m in (1, 2, 5)) + [ticks[-1]]
    return 10.0**a, 10.0**b, ticks


def tick_label(value: float) -> str:
    """A tick's number, 3 significant digits, thousands and up with an SI prefix: 0, 0.25, 250, 1.5k, 20M."""
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor * 0.9995:
            return f"{value / factor:.3g}{prefix}"
    return f"{value:.3g}"


def _plain(text: str) -> str:
    """``text`` in the characters the font can draw (``µs`` becomes ``us``)."""
    return text.translate(_NO_GLYPH)


def _font(size: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def _reduce(series: Series, color: str, x0: float, x1: float, width: int, log_y: bool) -> _Reduced:
    x = np.asarray(series.x, dtype=float)
    y = np.asarray(series.y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"series {series.name!r}: {x.size} x values but {y.size} y values")
    ok = np.isfinite(x) & np.isfinite(y)
    if log_y:
        ok &= y > 0
    dropped = int(x.size - np.count_nonzero(ok))
    x, y = x[ok], y[ok]
    if x.size > 1 and np.any(np.diff(x) < 0):
        order = np.argsort(x, kind="stable")
        x, y = x[order], y[order]
    col = np.rint((x - x0) / (x1 - x0) * (width - 1)).astype(np.int64) if x1 > x0 else np.zeros(x.size, np.int64)
    px, vals = m4(np.clip(col, 0, width - 1), y)
    return _Reduced(px, vals, color, int(x.size), dropped)


def _legend_rows(draw, font, entries: Sequence[tuple[str, str]], width: int) -> list[list[tuple[str, str]]]:
    rows: list[list[tuple[str, str]]] = [[]]
    used = 0.0
    for name, color in entries:
        w = 18 + draw.textlength(name, font=font) + 12
        if rows[-1] and used + w > width:
            rows.append([])
            used = 0.0
        rows[-1].append((name, color))
        used += w
    return [r for r in rows if r]


def line_chart_png(
    panels: Sequence[Panel],
    *,
    title: str = "",
    x_label: str = "time (s)",
    width_px: int = 900,
    plot_height_px: int = 170,
) -> bytes:
    """The panels stacked over one shared x axis, as PNG bytes (no metadata, same input -> same bytes)."""
    from PIL import Image, ImageDraw

    if not panels:
        raise ValueError("a chart needs at least one panel")
    if width_px < 200 or plot_height_px < 60:
        raise ValueError(f"chart too small: {width_px} px wide, plots {plot_height_px} px high (at least 200 x 60)")
    small, normal = _font(11), _font(13)
    plot_w = width_px - _LEFT_PX - _RIGHT_PX
    xs = [np.asarray(s.x, dtype=float) for p in panels for s in p.series]
    finite = np.concatenate([v[np.isfinite(v)] for v in xs]) if xs else np.empty(0)
    x0, x1 = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    x0, x1, xticks = linear_ticks(min(x0, 0.0), x1, 8)

    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    prepared = []
    for p in panels:
        reduced = [_reduce(s, s.color, x0, x1, plot_w, p.log_y) for s in p.series]
        legend = [(_plain(s.name), r.color) for s, r in zip(p.series, reduced) if s.in_legend]
        rows = _legend_rows(measure, small, legend, plot_w)
        prepared.append((p, reduced, rows))

    title_h = 26 if title else 6
    head_h = [20 + 15 * len(rows) for _, _, rows in prepared]
    height = title_h + sum(h + plot_height_px + _GAP_PX for h in head_h) + 34
    img = Image.new("RGB", (width_px, height), _BACK)
    draw = ImageDraw.Draw(img)
    if title:
        draw.text((width_px / 2, 6), _plain(title), fill=_TEXT, font=normal, anchor="mt")

    top = title_h
    for (panel, reduced, rows), hh in zip(prepared, head_h):
        draw.text((_LEFT_PX, top + 2), _plain(panel.title), fill=_TEXT, font=normal)
        unit = _plain(panel.y_label)
        draw.text((_LEFT_PX - 6 - draw.textlength(unit, font=small), top + 4), unit, fill=_AXIS, font=small)
        for ri, row in enumerate(rows):
            lx = float(_LEFT_PX)
            ly = top + 20 + 15 * ri
            for name, color in row:
                draw.line([(lx, ly + 6), (lx + 14, ly + 6)], fill=color, width=3)
                draw.text((lx + 18, ly), name, fill=_TEXT, font=small)
                lx += 18 + draw.textlength(name, font=small) + 12
        py0 = top + hh
        py1 = py0 + plot_height_px - 1
        kept = [r.y for r in reduced if r.y.size]
        values = np.concatenate(kept) if kept else np.empty(0)
        if panel.log_y:
            lo, hi = (float(values.min()), float(values.max())) if values.size else (1.0, 10.0)
            y0, y1, yticks = log_ticks(lo, hi)
            tf = math.log10
        else:
            lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
            y0, y1, yticks = linear_ticks(min(lo, 0.0), max(hi, 0.0), 5)
            tf = float
        t0, t1 = tf(y0), tf(y1)

        def ypix(v, t0=t0, t1=t1, py0=py0, py1=py1, log=panel.log_y):
            t = np.log10(v) if log else v
            return py1 - (t - t0) / (t1 - t0) * (py1 - py0)

        for yt in yticks:
            yy = float(ypix(yt))
            draw.line([(_LEFT_PX, yy), (_LEFT_PX + plot_w - 1, yy)], fill=_GRID)
            draw.text((_LEFT_PX - 6, yy), tick_label(yt), fill=_TEXT, font=small, anchor="rm")
        for xt in xticks:
            xx = _LEFT_PX + (xt - x0) / (x1 - x0) * (plot_w - 1)
            draw.line([(xx, py0), (xx, py1)], fill=_GRID)
        draw.rectangle([(_LEFT_PX, py0), (_LEFT_PX + plot_w - 1, py1)], outline=_AXIS)
        for r in reduced:
            if r.px.size == 0:
                continue
            pts = [tuple(p) for p in np.column_stack((r.px + _LEFT_PX, ypix(r.y))).tolist()]
            if len(pts) > 4:
                draw.line(pts, fill=r.color, width=_LINE_PX)
            if r.points <= _MARKED_POINTS:  # few points: each one marked, as the HTML report does
                for x, y in pts[::4] + pts[3::4]:
                    draw.ellipse([(x - 2, y - 2), (x + 2, y + 2)], fill=r.color)
        notes = []
        if not values.size:
            notes.append("no data")
        dropped = sum(r.dropped for r in reduced)
        if dropped:
            what = "not finite or not above 0 (log axis)" if panel.log_y else "not finite"
            notes.append(f"{dropped:,} points left out: {what}")
        if notes:
            draw.text((_LEFT_PX + plot_w - 6, py0 + 4), "; ".join(notes), fill=_AXIS, font=small, anchor="ra")
        top = py1 + 1 + _GAP_PX
    for xt in xticks:
        xx = _LEFT_PX + (xt - x0) / (x1 - x0) * (plot_w - 1)
        draw.text((xx, top - _GAP_PX + 4), tick_label(xt), fill=_TEXT, font=small, anchor="mt")
    draw.text((_LEFT_PX + plot_w / 2, top + 8), _plain(x_label), fill=_TEXT, font=small, anchor="mt")
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=6)
    return buf.getvalue()
