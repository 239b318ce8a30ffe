"""What the report's charts show, before any drawing: records per configuration and per workload,
the metrics charted and tabled, scales and units, downsampled series, latency percentile curves,
sweeps found among the configurations, and the devices' activity per configuration. Shared by the
HTML report's plotly figures (:mod:`.html_charts`), the Markdown report's matplotlib pictures and
serve's pages. Pure."""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from ..compare import Comparison, Config, Row
from ..errors import UsageError
from ..metrics import MEASURE_DIRECTION, summary_jobs
from ..model import DIRECTIONS
from ..record import ResultRecord
from ..units import fmt_bw, fmt_iops, fmt_ns, parse_size

#: At most this many points per time-series trace (longer series are averaged in buckets).


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


def activity_peak(records: Sequence[ResultRecord]) -> float:
    """The largest device read or write rate (bytes/s) sampled in these records."""
    rates = [
        max(s.read_bytes_per_s or 0.0, s.write_bytes_per_s or 0.0)
        for r in records
        if r.activity is not None
        for s in r.activity.samples
    ]
    return max(rates, default=0.0)


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
