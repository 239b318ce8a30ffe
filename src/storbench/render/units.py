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


def fmt_interval(lo: float | None, hi: float | None, metric: str, n: int) -> str:
    """A 95% interval of a positive quantity (IOPS, bandwidth, latency), both ends in one unit:
    "n < 3: none" for one or two runs (Student's t with 1 degree of freedom is 12.7: an interval
    that wide says nothing), clipped at 0 where the t interval reaches below it (the runs are too
    few or too spread for it; said so)."""
    if n < 3 or lo is None or hi is None:
        return "none (n < 3)"
    clipped = lo < 0
    lo = max(lo, 0.0)
    if metric == "iops":
        unit, scale, digits = next(((u, s, d) for u, s, d in (("M", 1e6, 2), ("k", 1e3, 1)) if hi >= s * 10), ("", 1.0, 0))
        text = f"{lo / scale:.{digits}f} … {hi / scale:.{digits}f}{unit} IOPS"
    elif metric == "bw_bytes":
        unit, scale = next(((u, s) for u, s in (("GiB/s", 1 << 30), ("MiB/s", 1 << 20), ("KiB/s", 1 << 10)) if hi >= s), ("B/s", 1))
        text = f"{lo / scale:.1f} … {hi / scale:.1f} {unit}"
    else:  # nanoseconds, in the unit of the upper end
        unit, scale = next(((u, s) for u, s in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)) if hi >= s), ("ns", 1.0))
        digits = 2 if scale >= 1e6 else (1 if scale == 1e3 else 0)
        text = f"{lo / scale:.{digits}f} … {hi / scale:.{digits}f} {unit}"
    return text + (" (clipped at 0: too few or too spread runs)" if clipped else "")
