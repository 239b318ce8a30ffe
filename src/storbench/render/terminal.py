"""Terminal views (pure): ``format_*`` build rich renderables or lines; the CLI prints them."""

from __future__ import annotations

from typing import Iterable, Sequence

from rich.table import Table

from ..model import DIRECTIONS, DirectionStats, JobResult, ResultRecord, RunInfo, Suite
from ..metrics import iter_directions
from .units import fmt_bw, fmt_bytes, fmt_iops, fmt_ns


def _p99(d: DirectionStats) -> float | None:
    for lat in (d.clat_ns, d.lat_ns):
        if lat is not None and "99.0" in lat.percentiles:
            return lat.percentiles["99.0"]
    return None


def _mean_lat(d: DirectionStats) -> float | None:
    lat = d.lat_ns or d.clat_ns
    return lat.mean_ns if lat is not None else None


def direction_rows(record: ResultRecord) -> Iterable[tuple[JobResult, DirectionStats]]:
    return iter_directions(record.fio)


def format_results_table(records: Sequence[ResultRecord], title: str | None = None) -> Table:
    table = Table(title=title, show_lines=False, header_style="bold")
    for col, justify in (
        ("workload", "left"),
        ("target", "left"),
        ("job", "left"),
        ("dir", "left"),
        ("IOPS", "right"),
        ("bandwidth", "right"),
        ("mean lat", "right"),
        ("p99 clat", "right"),
        ("io", "right"),
    ):
        table.add_column(col, justify=justify, overflow="fold")
    for rec in records:
        rows = list(direction_rows(rec))
        if not rows:
            table.add_row(rec.workload, rec.target or rec.source or "-", "-", "-", "-", "-", "-", "-", "-")
        for job, d in rows:
            table.add_row(
                rec.workload,
                rec.target or rec.source or "-",
                job.hostname or job.name if job.hostname else job.name,
                d.direction,
                fmt_iops(d.iops),
                fmt_bw(d.bw_bytes),
                fmt_ns(_mean_lat(d)),
                fmt_ns(_p99(d)),
                fmt_bytes(d.io_bytes),
            )
    return table


def format_run_list(runs: Sequence[RunInfo]) -> Table:
    table = Table(header_style="bold")
    for col in ("run", "when (UTC)", "kind", "label", "suite", "results", "status"):
        table.add_column(col, justify="right" if col in ("run", "results") else "left")
    for r in runs:
        status = r.status if not r.reason else f"{r.status}: {r.reason}"
        table.add_row(
            str(r.run_id),
            r.created_at.replace("T", " ").replace("+00:00", ""),
            r.kind,
            r.label or "",
            r.suite or "",
            str(r.result_count),
            status,
        )
    return table


def format_run_header(run: RunInfo) -> list[str]:
    lines = [f"run {run.run_id}  {run.kind}  {run.status}  {run.created_at}"]
    if run.label:
        lines.append(f"label: {run.label}")
    if run.suite:
        lines.append(f"suite: {run.suite}")
    if run.reason:
        lines.append(f"reason: {run.reason}")
    return lines


def format_suites(suites: Sequence[Suite]) -> list[str]:
    """Every suite with every workload and every option, as plain lines."""
    lines: list[str] = []
    for suite in suites:
        origin = "" if suite.origin == "built-in" else f"  (from {suite.origin})"
        lines.append(f"{suite.name}{origin}: {suite.description}")
        for w in suite.workloads:
            opts = " ".join(k if v is None else f"{k}={v}" for k, v in w.options)
            lines.append(f"  {w.name} [{w.headline}]: {w.description}")
            lines.append(f"      {opts}")
        lines.append("")
    return lines
