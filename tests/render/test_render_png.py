"""storbench.render.png: every point's extremes reach the picture, the axes, bad input.

The PNGs are decoded with Pillow and read pixel by pixel: a series is drawn in one
exact colour (no anti-aliasing), so its pixels can be found.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from storbench.render.png import Panel, Series, line_chart_png, linear_ticks, log_ticks, m4, tick_label

BLUE, RED = "#636efa", "#ef553b"


def _pixels(png: bytes, color: str) -> np.ndarray:
    """Bool (rows, columns): where the picture is exactly ``color``."""
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    rgb = [int(color[i : i + 2], 16) for i in (1, 3, 5)]
    return np.all(img == rgb, axis=2)


def _extent(mask: np.ndarray) -> dict[int, tuple[int, int]]:
    """Per column that has the colour: (top row, bottom row)."""
    out = {}
    for col in np.flatnonzero(mask.any(axis=0)):
        rows = np.flatnonzero(mask[:, col])
        out[int(col)] = (int(rows[0]), int(rows[-1]))
    return out


def test_a_one_sample_spike_and_dip_among_a_million_points_are_drawn():
    n = 1_000_000
    x = np.arange(n, dtype=float)
    y = np.full(n, 2500.0)
    y[654_321] = 5000.0  # one sample up
    y[200_000] = 0.0  # one sample down
    png = line_chart_png([Panel("IOPS", "IOPS", (Series("s", x, y, BLUE, in_legend=False),))], width_px=400)
    ext = _extent(_pixels(png, BLUE))
    cols = sorted(ext)
    tall = [c for c in cols if ext[c][1] - ext[c][0] > 40]
    # the spike's and the dip's columns, each 2-3 px wide (a 2 px line), nothing else
    groups = np.split(np.array(tall), np.flatnonzero(np.diff(tall) > 1) + 1)
    assert len(groups) == 2 and all(len(g) <= 3 for g in groups), tall
    top = min(r for r, _ in ext.values())
    bottom = max(r for _, r in ext.values())
    (spike,) = [g.mean() for g in groups if min(ext[c][0] for c in g) == top]
    (dip,) = [g.mean() for g in groups if max(ext[c][1] for c in g) == bottom]
    base_rows = [ext[c] for c in cols if c not in tall]
    base = np.median([r for r, _ in base_rows])
    assert bottom - base > 60 and base - top > 60  # 0 and 5000 are far from 2500, either side
    # where: 65.4% and 20% of the way along the drawn line (x from 0 to 999,999 on an axis to 1,000,000)
    span = cols[-1] - cols[0]
    assert abs((spike - cols[0]) / span - 0.654) < 0.01
    assert abs((dip - cols[0]) / span - 0.200) < 0.01


def test_m4_keeps_first_lowest_highest_last_of_each_column():
    cols, vals = m4(np.array([0, 0, 0, 1, 1, 2]), np.array([5.0, 1.0, 9.0, 3.0, 4.0, 7.0]))
    assert cols.tolist() == [0] * 4 + [1] * 4 + [2] * 4
    assert vals.tolist() == [5, 1, 9, 9, 3, 3, 4, 4, 7, 7, 7, 7]
    empty_cols, empty_vals = m4(np.array([], dtype=np.int64), np.array([]))
    assert empty_cols.size == 0 and empty_vals.size == 0


def test_axis_ticks_and_labels():
    assert linear_ticks(0, 87) == (0, 100, [0, 20, 40, 60, 80, 100])
    lo, hi, ticks = linear_ticks(0, 999_999, 8)
    assert (lo, hi) == (0, 1_000_000) and ticks[1] == 200_000
    assert linear_ticks(5, 5)[:2] == (2.0, 8.0)  # one value: widened around it
    assert linear_ticks(0, 0)[:2] == (-1.0, 1.0)
    assert log_ticks(3, 4000) == (1.0, 10000.0, [1.0, 10.0, 100.0, 1000.0, 10000.0])
    lo, hi, ticks = log_ticks(120, 480)  # within one decade: 1-2-5 as well
    assert (lo, hi) == (100.0, 1000.0) and ticks == [100.0, 200.0, 500.0, 1000.0]
    assert [tick_label(v) for v in (0, 0.25, 250, 1500, 2e6, 3.5e9, 0.0005, -4000)] == [
        "0", "0.25", "250", "1.5k", "2M", "3.5G", "0.0005", "-4k"]  # fmt: skip


def test_log_axis_leaves_out_what_it_cannot_draw_and_the_chart_is_repeatable():
    x = [0, 1, 2, 3, 4, 5]
    good = Series("p99", x, [100, 200, 0, float("nan"), 400, float("inf")], BLUE)
    none = Series("empty", x, [0, -1, 0, 0, 0, 0], RED, in_legend=False)
    panels = [Panel("latency", "us", (good,), log_y=True), Panel("nothing drawable", "us", (none,), log_y=True)]
    png = line_chart_png(panels, title="t")
    assert png == line_chart_png(panels, title="t")  # same input, same bytes (no time stamp)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert _pixels(png, BLUE).sum() > 50
    assert not _pixels(png, RED).any()  # nothing above 0 on a log axis: no line at all


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="series 'b': 3 x values but 2 y values"):
        line_chart_png([Panel("p", "u", (Series("b", [1, 2, 3], [1, 2], BLUE),))])
    with pytest.raises(ValueError, match="at least one panel"):
        line_chart_png([])
    with pytest.raises(ValueError, match="too small"):
        line_chart_png([Panel("p", "u", ())], width_px=50)
