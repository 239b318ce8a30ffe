"""Latency that was not measured.

Check (id): ``latency-not-measured`` -- ``gtod_reduce=1`` or ``disable_lat``/
``disable_clat`` switch fio's latency clocks off; fio then prints zeros (``N`` = 0, no
percentiles; ``p7_*.json``).  storbench reads them as "not measured" and shows them so,
never as zero.  Info, or a warning when latency is the workload's headline metric.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding

from ._common import COUNTED_DIRECTIONS, CheckInfo, finding, flag, jobs, join

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

#: Options that switch latency measurement off.
LATENCY_OFF_OPTIONS = ("gtod_reduce", "disable_lat", "disable_clat", "disable_slat")

INFO = {
    "latency-not-measured": CheckInfo(
        title="Latency not measured",
        explanation="gtod_reduce or disable_lat/disable_clat switched fio's latency clocks off, so fio's zeros mean 'not measured'; storbench shows them as not measured, never as zero.",
        evidence="gtod_reduce=1, disable_lat=1 or disable_clat=1, or a direction that did I/O with neither total nor completion latency in fio's output (warning when latency is the headline metric).",
        fix="Remove gtod_reduce/disable_lat/disable_clat to measure latency (they save little CPU on modern machines).",
        severities=("info", "warning"),
    ),
}


def _latency_off(ctx: CheckContext) -> Finding | None:
    options = [f"{k}=1" for k in LATENCY_OFF_OPTIONS if flag(ctx.options, k)]
    missing: dict[str, None] = {}
    headline_missing = False
    for result in ctx.results:
        for job in jobs(result):
            for name in COUNTED_DIRECTIONS + ("mixed",):
                s = job.directions.get(name)
                if s is None or not s.io_bytes:
                    continue
                if s.lat_ns is None and s.clat_ns is None:
                    missing[f"{name} latency"] = None
                    headline_missing = True
                elif s.lat_ns is None:
                    missing[f"{name} total latency"] = None
    if not missing and not [o for o in options if o != "disable_slat=1"]:
        return None
    what = join(missing) if missing else "latency"
    why = f" ({join(options)})" if options else ""
    lat_headline = ctx.headline == "lat" and (headline_missing or (not missing and bool(options)))
    tail = ": latency is this workload's headline metric, so it has no result" if lat_headline else ""
    return finding(
        "latency-not-measured",
        "warning" if lat_headline else "info",
        f"{what} not measured{why}: fio prints zeros, storbench shows it as not measured, never zero{tail}",
        "remove gtod_reduce/disable_lat/disable_clat to measure latency",
    )


def check(ctx: CheckContext) -> list[Finding]:
    found = _latency_off(ctx)
    return [found] if found is not None else []
