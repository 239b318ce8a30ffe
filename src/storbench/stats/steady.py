"""Pure: SNIA's steady-state rule, as a stop condition for repeated rounds.

The SNIA Solid State Storage Performance Test Specification (PTS, Enterprise and Client)
calls a device *steady* for a tracked figure (IOPS of the 4 KiB random write test, for
instance) when, over its **steady state measurement window of 5 consecutive rounds**:

* the **data excursion**, the range of the figure (max - min), is within **20 %** of the
  window's average, and
* the **slope excursion**, the rise of the least-squares line across the window (slope x
  (rounds - 1)), is within **10 %** of the window's average (in either direction),

and gives up after 25 rounds.

``storbench run --until steady`` runs rounds of the run's workloads (each workload once per
round) and stops a workload as soon as its last 5 rounds pass both tests; after
:data:`MAX_ROUNDS` it says the workload did not settle.  fio's own
``ss=`` option is a different rule (per job, on a running mean, during one run) and is not
used.

:func:`steady_state` judges one series; the report draws SNIA's chart from the same record
(the window's rounds, its average, the ±10 % and ±20 % bands, the fitted line).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["MAX_ROUNDS", "RANGE_SHARE", "SLOPE_SHARE", "WINDOW", "SteadyState", "fit_line", "steady_state"]

WINDOW = 5
MAX_ROUNDS = 25
RANGE_SHARE = 0.20
SLOPE_SHARE = 0.10


@dataclass(frozen=True)
class SteadyState:
    """The rule applied to the last :data:`WINDOW` values of a series."""

    settled: bool
    window: tuple[int, int] | None  # first and last round (0-based, inclusive) of the window; None: fewer than WINDOW rounds
    average: float | None
    range_share: float | None  # (max - min) / average
    slope_share: float | None  # |slope x (WINDOW - 1)| / average
    slope: float | None  # per round
    intercept: float | None  # of the fitted line at the window's first round
    reason: str


def fit_line(values: Sequence[float]) -> tuple[float, float]:
    """Least-squares line through (0, v0), (1, v1), ...: (slope, intercept at x = 0)."""
    n = len(values)
    if n < 2:
        return 0.0, float(values[0]) if values else 0.0
    xs = range(n)
    mx = (n - 1) / 2
    my = sum(values) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, values))
    slope = sxy / sxx
    return slope, my - slope * mx


def steady_state(series: Sequence[float], window: int = WINDOW) -> SteadyState:
    """SNIA's rule on the last ``window`` values of ``series`` (one per round, in order)."""
    n = len(series)
    if n < window:
        return SteadyState(False, None, None, None, None, None, None, f"{n} of the {window} rounds a window needs")
    values = [float(v) for v in series[-window:]]
    first = n - window
    avg = sum(values) / window
    if avg == 0:
        return SteadyState(False, (first, n - 1), 0.0, None, None, None, None, "the window's average is 0")
    rng = (max(values) - min(values)) / abs(avg)
    slope, intercept = fit_line(values)
    rise = abs(slope * (window - 1)) / abs(avg)
    ok_range, ok_slope = rng <= RANGE_SHARE, rise <= SLOPE_SHARE
    if ok_range and ok_slope:
        reason = f"steady over rounds {first + 1}-{n}: range {rng * 100:.1f}% (<= 20%), slope {rise * 100:.1f}% (<= 10%) of the average"
    else:
        parts = []
        if not ok_range:
            parts.append(f"range {rng * 100:.1f}% > 20%")
        if not ok_slope:
            parts.append(f"slope {rise * 100:.1f}% > 10%")
        reason = f"not steady over rounds {first + 1}-{n}: " + ", ".join(parts) + " of the average"
    return SteadyState(ok_range and ok_slope, (first, n - 1), avg, rng, rise, slope, intercept, reason)
