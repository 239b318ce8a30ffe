"""A cliff mid-run: the throughput changed for good within one repetition.

Check (id): ``throughput-cliff`` -- in the per-second series of the last repetition (fio's
interval logs, ``log_avg_msec=1000``), the headline series (bandwidth for a bandwidth
workload, else IOPS) of each direction is split at the one point that best explains it as
two levels: least squares, the classic single change point (the split that minimises the
summed squared deviations of both parts from their own means).  It is a cliff when all of
these hold, so that a steady run with ordinary noise never is one:

* each side has at least :data:`MIN_SIDE_S` seconds (the first and last second, partial, are
  left out);
* the two levels differ by at least :data:`MIN_CHANGE` of the higher one (a drive whose SLC
  cache fills writes at a fraction of its burst speed: far more than noise);
* the change is sustained: at least :data:`SUSTAINED_SHARE` of the seconds on each side lie
  on their own side of the midpoint between the levels (a single dip or a spike is not);
* Welch's t-test between the two sides gives p below :data:`MAX_P`.

Severity: ``warning`` when the run's mean differs from the level before the change by more
than :data:`WARN_MEAN_SHIFT` (the mean then describes neither level), else ``info``.  Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONMapping
from storbench.model import Finding

from ._common import CheckInfo, finding, fmt_count, fmt_rate

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

MIN_SIDE_S = 3
MIN_CHANGE = 0.30
SUSTAINED_SHARE = 0.8
MAX_P = 0.01
WARN_MEAN_SHIFT = 0.10

INFO = {
    "throughput-cliff": CheckInfo(
        title="Throughput changed for good mid-run",
        explanation=(
            "Within one repetition the throughput moved from one sustained level to another (an SSD's SLC write "
            "cache filling, thermal throttling, a background job starting, a server throttled): the run's mean "
            "describes neither level."
        ),
        evidence=(
            "The per-second series splits into two levels at least 30% apart, each at least 3 s long, with 80% of "
            "each side's seconds on its own side of the midpoint and Welch's p < 0.01 between them."
        ),
        fix=(
            "Report both levels and when the change came (after how many bytes); for a drive, precondition it "
            "(--precondition) and run past the cliff (--runtime long enough, or --until steady) to measure the "
            "sustained level."
        ),
        severities=("info", "warning"),
    ),
}


@dataclass(frozen=True)
class Cliff:
    """One sustained change in a per-second series."""

    direction: str
    metric: str  # "bw_bytes" or "iops"
    at_s: float  # the first second of the new level (seconds from the series' start)
    before: float  # the mean level before
    after: float  # the mean level after
    run_mean: float
    bytes_before: float | None  # bytes moved before the change (bandwidth series only)
    p_value: float


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def find_cliff(points: Sequence[Sequence[float]], *, direction: str = "", metric: str = "iops") -> Cliff | None:
    """The cliff in ``points`` (``[[t_s, value], ...]``, one per second), or None (see the module doc)."""
    rows = sorted((float(t), float(v)) for t, v in points)[1:-1]  # the first and the last second are partial
    if len(rows) < 2 * MIN_SIDE_S:
        return None
    values = [v for _, v in rows]
    best: tuple[float, int] | None = None
    for k in range(MIN_SIDE_S, len(values) - MIN_SIDE_S + 1):
        left, right = values[:k], values[k:]
        ml, mr = _mean(left), _mean(right)
        sse = sum((x - ml) ** 2 for x in left) + sum((x - mr) ** 2 for x in right)
        if best is None or sse < best[0]:
            best = (sse, k)
    if best is None:
        return None
    k = best[1]
    left, right = values[:k], values[k:]
    before, after = _mean(left), _mean(right)
    high = max(before, after)
    if high <= 0 or abs(before - after) < MIN_CHANGE * high:
        return None
    mid = (before + after) / 2
    near = [x for x in left if (x > mid) == (before > mid)]
    far = [x for x in right if (x > mid) == (after > mid)]
    if len(near) < SUSTAINED_SHARE * len(left) or len(far) < SUSTAINED_SHARE * len(right):
        return None
    if min(len(set(left)), len(set(right))) < 2:  # constant sides: the change is as certain as it gets
        p = 0.0
    else:
        from scipy import stats as sp  # here, not above: scipy.stats takes ~0.8 s to import, most series never get here

        p = float(sp.ttest_ind(left, right, equal_var=False).pvalue)
    if not p < MAX_P:
        return None
    moved = sum(left) if metric == "bw_bytes" else None  # one value per second: bytes per second x 1 s
    return Cliff(direction=direction, metric=metric, at_s=rows[k][0], before=before, after=after,
                 run_mean=_mean(values), bytes_before=moved, p_value=p)  # fmt: skip


def _series_of(series: JSONMapping | None, metric: str) -> Mapping[str, Sequence[Sequence[float]]]:
    if not isinstance(series, Mapping):
        return {}
    got = series.get(metric)
    return got if isinstance(got, Mapping) else {}


def describe(c: Cliff) -> str:
    fmt = fmt_rate if c.metric == "bw_bytes" else (lambda v: f"{fmt_count(v)} IOPS")
    what = "bandwidth" if c.metric == "bw_bytes" else "IOPS"
    verb = "fell" if c.after < c.before else "rose"
    after_bytes = ""
    if c.bytes_before is not None:
        from storbench.units import format_bytes

        after_bytes = f", after {format_bytes(int(c.bytes_before))} {'written' if c.direction == 'write' else 'moved'}"
    return (f"{c.direction} {what} {verb} from {fmt(c.before)} to {fmt(c.after)} at {c.at_s:.0f} s{after_bytes}, "
            f"and stayed there (mean over the run {fmt(c.run_mean)}; Welch p = {c.p_value:.2g})")  # fmt: skip


def check(ctx: CheckContext) -> list[Finding]:
    series = ctx.series[-1] if ctx.series else None
    metric = "bw_bytes" if ctx.headline == "bw" else "iops"
    cliffs = [c for direction, points in _series_of(series, metric).items()
              if (c := find_cliff(points, direction=direction, metric=metric)) is not None]  # fmt: skip
    if not cliffs:
        return []
    worst = max(cliffs, key=lambda c: abs(c.before - c.after) / max(c.before, c.after))
    shift = abs(worst.run_mean - worst.before) / worst.before if worst.before > 0 else 1.0
    severity = "warning" if shift > WARN_MEAN_SHIFT else "info"
    return [finding("throughput-cliff", severity, describe(worst), INFO["throughput-cliff"].fix)]
