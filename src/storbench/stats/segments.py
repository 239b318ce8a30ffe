"""Segments (pure): a workload's fastest, median and slowest whole second, as MinIO's warp reports
an object store's run (its "segmented" view), from fio's per-second logs.

Each repetition's series is fio's per-second rate of one direction (``series["iops"][direction]``,
``[[t_s, value], ...]``; bandwidth beside it).  The first and the last second of a repetition are
left out: fio's logs cut them short (the job starts and ends inside them), so that a run of N
seconds gives N - 2 whole ones; the seconds of every repetition are then pooled.  Fastest and
slowest are the largest and smallest rate; the median is the middle one (the mean of the two
middle ones for an even count).  Bandwidth is ranked on its own (the fastest second by bytes need
not be the fastest by requests).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from storbench.jsontypes import JSONMapping

#: the fewest whole seconds a segment view is given for
MIN_SECONDS = 3


@dataclass(frozen=True)
class Segments:
    """One direction's whole seconds over every repetition: (fastest, median, slowest) each."""

    direction: str
    seconds: int
    per_s: tuple[float, float, float]  #: requests (I/Os, objects) per second
    bytes_per_s: tuple[float, float, float] | None


def whole_seconds(series: JSONMapping | None, metric: str, direction: str) -> list[float]:
    """One repetition's rates of ``direction`` (``metric``: ``iops`` or ``bw_bytes``), its first
    and last second left out."""
    if not isinstance(series, Mapping):
        return []
    by_direction = series.get(metric)
    rows = by_direction.get(direction) if isinstance(by_direction, Mapping) else None
    if not isinstance(rows, Sequence):
        return []
    values = [float(r[1]) for r in rows if isinstance(r, Sequence) and len(r) >= 2]
    return values[1:-1]


def _three(values: Sequence[float]) -> tuple[float, float, float]:
    xs = sorted(values)
    n = len(xs)
    median = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    return xs[-1], median, xs[0]


def segments(series: Sequence[JSONMapping | None], direction: str) -> Segments | None:
    """``direction``'s segments over the repetitions' ``series``; None under :data:`MIN_SECONDS`."""
    ops = [v for s in series for v in whole_seconds(s, "iops", direction)]
    if len(ops) < MIN_SECONDS:
        return None
    moved = [v for s in series for v in whole_seconds(s, "bw_bytes", direction)]
    return Segments(direction=direction, seconds=len(ops), per_s=_three(ops), bytes_per_s=_three(moved) if len(moved) >= MIN_SECONDS else None)
