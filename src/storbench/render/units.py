"""Human forms of measured numbers (pure)."""

from __future__ import annotations


def fmt_iops(iops: float | None) -> str:
    if iops is None:
        return "-"
    if iops >= 1e6:
        return f"{iops / 1e6:.2f}M"
    if iops >= 1e4:
        return f"{iops / 1e3:.1f}k"
    if iops >= 100:
        return f"{iops:.0f}"
    return f"{iops:.1f}"


def fmt_bw(bw_bytes: float | None) -> str:
    """Bytes per second in binary units, as fio prints them."""
    if bw_bytes is None:
        return "-"
    for unit, scale in (("GiB/s", 1 << 30), ("MiB/s", 1 << 20), ("KiB/s", 1 << 10)):
        if bw_bytes >= scale:
            return f"{bw_bytes / scale:.1f} {unit}"
    return f"{bw_bytes:.0f} B/s"


def fmt_ns(ns: float | None) -> str:
    """A latency in the unit that keeps 3-4 significant digits."""
    if ns is None:
        return "n/m"  # not measured
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def fmt_number(value: float | None, unit: str = "") -> str:
    """Another benchmark's figure in its own unit, with 4 significant digits ("1,631,249
    Final Score", "2.05 MB/s", "264 Seconds")."""
    if value is None:
        return "-"
    if abs(value) >= 1e4:
        text = f"{value:,.0f}"
    else:
        text = f"{value:.4g}"
    return f"{text} {unit}".rstrip()


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, scale in (
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def formatter(metric: str):
    """The human form of a comparison metric: fio's by its kind, another benchmark's figure
    (a Measure, whose metric is its unit) as a number with that unit."""
    if metric == "iops":
        return fmt_iops
    if metric == "bw_bytes":
        return fmt_bw
    if metric.endswith("_ns"):
        return fmt_ns
    return fmt_number  # the unit is the metric's name, shown beside it
