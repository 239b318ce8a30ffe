"""Run-to-run variation of the headline metric.

Check (id): ``high-variation`` -- over two or more repetitions, the coefficient of
variation (sample standard deviation / mean, :func:`storbench.stats.core.summarize`) of the
headline metric is above :data:`MAX_CV`.  The headline of a repetition is the sum of
IOPS or bandwidth over its jobs and directions, or the I/O-weighted mean latency:
:func:`storbench.metrics.headline_value`, the number ``--until-rse`` repeats on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.metrics import headline_value
from storbench.model import Finding
from storbench.stats.core import summarize
from storbench.units import fmt_measure, fmt_ns

from ._common import CheckInfo, finding, fix_of, fmt_count, fmt_rate

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

#: Coefficient of variation above which repetitions disagree too much (5 %).
MAX_CV = 0.05
#: At most this many per-repetition values are listed in the message.
MAX_VALUES_SHOWN = 6

INFO = {
    "high-variation": CheckInfo(
        title="High run-to-run variation",
        explanation="The headline metric varied by more than 5% (coefficient of variation) between repetitions, so a single figure or a small difference between runs means little.",
        evidence="Two or more repetitions whose headline metric (IOPS, bandwidth or mean latency) has a coefficient of variation above 5%.",
        fix="Run more repetitions (--repeat 5, or --until-rse 2) and look for the noise source (other load, thermal throttling, SSD garbage collection).",
        severities=("warning",),
    ),
}


def _format(value: float, headline: str) -> str:
    if headline == "bw":
        return fmt_rate(value)
    if headline == "lat":
        return fmt_ns(value)
    return fmt_count(value)


def _variation(ctx: CheckContext) -> Finding | None:
    if len(ctx.results) < 2:
        return None
    measured = ctx.results[-1].measures  # an application load: judged by its first figure
    headline = ctx.headline if ctx.headline in ("iops", "bw", "lat") and not measured else "iops"
    values = [headline_value(r, headline) for r in ctx.results]
    if any(v is None for v in values):
        return None
    xs = [float(v) for v in values if v is not None]
    summary = summarize(xs)
    if summary.cv is None or summary.cv <= MAX_CV:
        return None
    name = measured[0].unit if measured else {"iops": "IOPS", "bw": "bandwidth", "lat": "mean latency"}[headline]
    fmt = (lambda v, _h: fmt_measure(v)) if measured else _format
    shown = " / ".join(fmt(v, headline) for v in xs[:MAX_VALUES_SHOWN]) + (" / ..." if len(xs) > MAX_VALUES_SHOWN else "")
    sd = summary.stddev or 0.0
    return finding(
        "high-variation",
        "warning",
        f"{name} varied by {summary.cv * 100:.1f}% (coefficient of variation) over {summary.n} repetitions: {shown} "
        f"(mean {fmt(summary.mean, headline)} ± {fmt(sd, headline)}), above the {MAX_CV * 100:.0f}% a stable setup shows",
        fix_of(INFO["high-variation"]),
    )


def check(ctx: CheckContext) -> list[Finding]:
    found = _variation(ctx)
    return [found] if found is not None else []
