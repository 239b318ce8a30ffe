"""Terminal views (pure): ``format_*`` build rich renderables or lines; the CLI prints them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.table import Table

from ..metrics import (
    MEASURE_DIRECTION,
    direction_figures,
    iter_directions,
    repetition_stats,
)
from ..model import DIRECTIONS, SEVERITIES, DirectionStats, JobResult, RunInfo, Suite
from ..record import ResultRecord
from ..stats.core import summarize
from ..units import fmt_bw, fmt_interval, fmt_iops, fmt_ns, fmt_number

if TYPE_CHECKING:
    from ..backend import BackendActivity
    from ..model import Finding


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


def group_records(records: Sequence[ResultRecord]) -> list[list[ResultRecord]]:
    """Repetitions of the same workload on the same target (and host), in first-seen order."""
    groups: dict[tuple, list[ResultRecord]] = {}
    for rec in records:
        groups.setdefault((rec.workload, rec.target or rec.source or "", rec.host or ""), []).append(rec)
    return list(groups.values())


def _cell(values: list[float | None], fmt) -> str:
    """One figure, or ``mean ± sd`` over repetitions with ``range min … max`` below it (named: two
    ends under a mean read as an interval otherwise)."""
    if not values or any(v is None for v in values):
        return fmt(None)
    if len(values) == 1:
        return fmt(values[0])
    s = summarize(values)  # type: ignore[arg-type]
    return f"{fmt(s.mean)} ± {fmt(s.stddev)}\nrange {fmt(s.min)} … {fmt(s.max)}"


def run_wide_checks(records: Sequence[ResultRecord]) -> dict[tuple[str, str], list[str]]:
    """The findings every workload of a run shares (pure): ``(check, severity)`` -> the workloads.

    A warning or note that holds for every workload (several of them) is about the run (the
    preset's short runtime, the target's cache or filesystem), and is said once for the run;
    what is particular to a workload stays beside it.  An ``invalid`` finding is never
    folded: it stays beside its figure wherever the figure appears.
    """
    groups = [g[-1] for g in group_records(records)]
    if len(groups) < 2:
        return {}
    seen: dict[tuple[str, str], list[str]] = {}
    for rec in groups:
        for key in {(f.check, f.severity) for f in rec.findings if f.severity != "invalid"}:
            seen.setdefault(key, []).append(rec.workload)
    return {k: v for k, v in seen.items() if len(v) == len(groups)}


def format_run_wide(records: Sequence[ResultRecord], *, notes: bool = False) -> list[str]:
    """The run-wide findings, once each: "for every workload (8): warning [short-run] ...", and
    the fix; ``notes``: the ``info`` ones too."""
    wide = run_wide_checks(records)
    lines = []
    for (check, severity), workloads in sorted(wide.items(), key=lambda kv: -SEVERITIES.index(kv[0][1])):
        if severity == "info" and not notes:
            continue
        said = _latest_of(records, check, severity)
        head = f"for every workload ({len(workloads)}): {severity} [{check}]"
        lines.extend(_said_once(head, said, "  "))
    return lines


def _latest_of(records: Sequence[ResultRecord], check: str, severity: str) -> list[tuple[str, Finding]]:
    """(workload, finding) of the last repetition of each workload that has the check."""
    out = []
    for group in group_records(records):
        f = next((f for f in group[-1].findings if (f.check, f.severity) == (check, severity)), None)
        if f is not None:
            out.append((group[-1].workload, f))
    return out


def _said_once(head: str, said: list, indent: str) -> list[str]:
    """One line when every workload says the same words; else the head, then each workload's
    own words (its figures), and the fix once."""
    messages = list(dict.fromkeys(f.message for _, f in said))
    if len(messages) == 1:
        lines = [f"{head} {messages[0]}"]
    else:
        lines = [f"{head}:"] + [f"{indent}{w}: {f.message}" for w, f in said]
    return lines + [f"{indent}fix: {fix}" for fix in dict.fromkeys(f.fix for _, f in said)]


def format_results_table(records: Sequence[ResultRecord], title: str | None = None) -> Table:
    """One row per workload, target and direction; repetitions shown as mean ± σ, range min … max.
    The findings column names what is particular to each workload; what holds for every
    workload is said once (:func:`format_run_wide`)."""
    wide = set(run_wide_checks(records))
    # results of another benchmark (a PTS test) have their own figure, in a column of its own
    measured = any(r.fio.measures for r in records)
    fio_figures = not measured or any(r.fio.jobs for r in records)  # an import of other benchmarks only: no fio columns
    fio_columns = (("dir", "left"), ("IOPS", "right"), ("bandwidth", "right"), ("mean lat", "right"), ("p99 clat", "right"))
    # a multi-host run: each row says whose it is (the aggregate "all (N hosts)", else host:port)
    hosts = sorted({r.host for r in records if r.host is not None and r.host != "all"})
    table = Table(title=title, show_lines=False, header_style="bold")
    for col, justify in (
        ("workload", "left"),
        ("target", "left"),
        *((("host", "left"),) if hosts else ()),
        *(fio_columns if fio_figures else ()),
        *((("figure", "right"),) if measured else ()),
        ("runs", "right"),
        ("findings", "left"),
    ):
        table.add_column(col, justify=justify, overflow="fold")
    for group in group_records(records):
        first = group[0]
        figures = [direction_figures(r.fio) for r in group]
        directions = [d for d in DIRECTIONS if any(d in f for f in figures)]
        units = list(dict.fromkeys(m.unit for r in group for m in r.fio.measures))
        flagged = _finding_summary(group, skip=wide)
        lines = [(d, None) for d in directions] + [(MEASURE_DIRECTION, u) for u in units]
        who = ((f"all ({len(hosts)} hosts)" if first.host == "all" else (first.host or "-")),) if hosts else ()
        if not lines:
            table.add_row(first.workload, first.target or first.source or "-", *who, *(("-",) * 5 if fio_figures else ()),
                          *(("-",) if measured else ()), str(len(group)), flagged)  # fmt: skip
        for i, (d, unit) in enumerate(lines):
            def values(m, d=d, figures=figures):
                return [f.get(d, {}).get(m) for f in figures]
            if unit is not None:
                first_line, _, rest = _cell(values(unit), fmt_number).partition("\n")
                shown = f"{first_line} {unit}" + (f"\n{rest}" if rest else "")
                cells = [*(("-",) * 5 if fio_figures else ()), shown]
            else:
                cells = [d, _cell(values("iops"), fmt_iops), _cell(values("bw_bytes"), fmt_bw),
                         _cell(values("lat_mean_ns"), fmt_ns), _cell(values("clat_p99_ns"), fmt_ns),
                         *(("-",) if measured else ())]  # fmt: skip
            table.add_row(
                first.workload if i == 0 else "",
                (first.target or first.source or "-") if i == 0 else "",
                *(who if i == 0 else (("",) if who else ())),
                *cells,
                str(len(group)),
                flagged if i == 0 else "",
            )
    return table


def _finding_summary(group: Sequence[ResultRecord], skip: set[tuple[str, str]] = frozenset()) -> str:  # type: ignore[assignment]
    """The worst findings of a group, by check id ("invalid: page-cache"), but those in ``skip``."""
    seen: dict[str, str] = {}
    for rec in group:
        for f in rec.findings:
            if f.severity == "info" or (f.check, f.severity) in skip:
                continue
            if SEVERITIES.index(f.severity) > SEVERITIES.index(seen.get(f.check, "info")):
                seen[f.check] = f.severity
    return ", ".join(f"{sev}: {check}" for check, sev in seen.items())


def format_findings(records: Sequence[ResultRecord]) -> list[str]:
    """The findings of every workload, worst first, with their fix.

    Checks run after every repetition over all repetitions so far, so the last
    repetition's findings speak for the workload; earlier ones are not repeated.
    """
    latest = [group[-1] for group in group_records(records)]
    wide = run_wide_checks(records)
    found = [(f, rec) for rec in latest for f in rec.findings if (f.check, f.severity) not in wide]
    found.sort(key=lambda fr: -SEVERITIES.index(fr[0].severity))
    lines = []
    for (check, severity), workloads in sorted(wide.items(), key=lambda kv: -SEVERITIES.index(kv[0][1])):
        lines.extend(_said_once(f"{severity.upper():8} every workload ({len(workloads)}) [{check}]",
                                _latest_of(records, check, severity), " " * 9))  # fmt: skip
    # the same check on several workloads: each says its own figures, the fix is said once
    by_check: dict[tuple, list] = {}
    for i, (f, rec) in enumerate(found):  # an invalid finding stays on its own line, beside its workload
        by_check.setdefault((f.check, f.severity) if f.severity != "invalid" else (f.check, f.severity, i), []).append((f, rec))
    for (check, severity, *_), items in by_check.items():
        if len(items) == 1:
            f, rec = items[0]
            lines.append(f"{severity.upper():8} {f.workload or rec.workload} [{check}] {f.message}")
        else:
            lines.append(f"{severity.upper():8} {len(items)} workloads [{check}]:")
            lines.extend(f"         {f.workload or rec.workload}: {f.message}" for f, rec in items)
        fixes = list(dict.fromkeys(f.fix for f, _ in items))
        lines.extend(f"         fix: {fix}" for fix in fixes)
    return lines


def format_stats(records: Sequence[ResultRecord]) -> list[str]:
    """n, mean, median, stddev, stderr, 95% CI and cv of every metric of repeated workloads."""
    lines = []
    for group in group_records(records):
        if len(group) < 2:
            continue
        stats = repetition_stats([r.fio for r in group])
        lines.append(f"{group[0].workload} on {group[0].target or group[0].source}: {len(group)} runs")
        for direction, metrics in stats.items():
            for metric, s in metrics.items():
                fmt = {"iops": fmt_iops, "bw_bytes": fmt_bw}.get(metric, fmt_ns)
                if direction == MEASURE_DIRECTION:
                    def fmt(v, u=metric):
                        return fmt_number(v, u)
                lo, hi = s.ci95 if s.ci95 else (None, None)
                ci = fmt_interval(lo, hi, metric, s.n, fmt if direction == MEASURE_DIRECTION else None)
                outl = f", outliers: runs {', '.join(str(i + 1) for i in s.outliers)}" if s.outliers else ""
                lines.append(
                    f"  {direction:5} {metric:12} mean {fmt(s.mean)} ± {fmt(s.stddev)}  median {fmt(s.median)}  "
                    f"se {fmt(s.stderr)}  95% CI {ci}  cv {_pct(s.cv)}{outl}"
                )
    return lines


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v * 100:.1f}%"


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
            opts = ("" if w.is_fio else f"{w.tool}: ") + " ".join(k if v is None else f"{k}={v}" for k, v in w.options)
            lines.append(f"  {w.name} [{w.headline}]: {w.description}")
            if w.sections:  # a job file's jobs fio runs together: each section's own options
                lines.extend(f"      [{name}] " + " ".join(k if v is None else f"{k}={v}" for k, v in options)
                             for name, options in w.sections)  # fmt: skip
            else:
                lines.append(f"      {opts}")
        lines.append("")
    return lines


def format_load_operations(records: Sequence[ResultRecord]) -> list[str]:
    """dbench's per-operation table of each dbench workload's last repetition (read again from
    its stored output): count, mean and max latency per operation, the slowest first::

        dbench-4: Flush 1352 ops, mean 4.125 ms, max 287.156 ms; WriteX 2712 ops, mean ...

    A stored output dbench's parser cannot read is named, not skipped."""
    from ..loads import LoadParseError, dbench

    out: list[str] = []
    for group in group_records(records):
        last = group[-1]
        if last.fio.format != "dbench":
            continue
        try:
            ops = dbench.parse(last.raw_output).operations
        except LoadParseError as exc:
            out.append(f"  {last.workload}: its stored output could not be read again ({exc})")
            continue
        ranked = sorted(ops, key=lambda o: -o.max_lat_ms)
        out.append(f"  {last.workload}: " + "; ".join(f"{o.name} {o.count} ops, mean {o.mean_lat_ms:g} ms, max {o.max_lat_ms:g} ms"
                                                   for o in ranked))  # fmt: skip
    return out


#: what a request is called on an object store's target (fio's directions there: PUT, GET, DELETE)
OBJECT_REQUESTS = {"read": "GET", "write": "PUT", "trim": "DELETE"}


def format_segments(records: Sequence[ResultRecord]) -> list[str]:
    """Each workload's fastest, median and slowest whole second over its repetitions (warp's
    segments: :mod:`storbench.stats.segments`), one line a direction that had at least 3 whole
    seconds; on an object store (``s3://``) named by its requests::

        get-1m-t4 GET: fastest 498 objects/s (498.0 MiB/s), median 471 (471.2 MiB/s), slowest 402 (401.9 MiB/s); 12 whole seconds
    """
    from ..stats.segments import segments

    out: list[str] = []
    for group in group_records(records):
        objects = (group[0].target or "").startswith("s3://")
        for direction in DIRECTIONS:
            seg = segments([r.series for r in group], direction)
            if seg is None:
                continue
            unit = "objects/s" if objects else "IOPS"
            parts = []
            for i, word in enumerate(("fastest", "median", "slowest")):
                rate = fmt_iops(seg.per_s[i]) + (f" {unit}" if i == 0 else "")
                moved = f" ({fmt_bw(seg.bytes_per_s[i])})" if seg.bytes_per_s is not None else ""
                parts.append(f"{word} {rate}{moved}")
            name = OBJECT_REQUESTS.get(direction, direction) if objects else direction
            out.append(f"  {group[0].workload} {name}: {', '.join(parts)}; {seg.seconds} whole seconds")
    return out


def format_backend(records: Sequence[ResultRecord]) -> list[str]:
    """What the back-end under each target (a ZFS pool, a Ceph cluster, an nfs-ganesha export) did, per workload (its last repetition)."""
    from ..backend.ceph import format_ceph_activity
    from ..backend.zfs import format_zfs_activity

    last: dict[tuple[str | None, str], BackendActivity] = {}
    for rec in records:
        if rec.backend is not None and rec.host in (None, "all"):
            last[(rec.target, rec.workload)] = rec.backend
    lines: list[str] = []
    for (_target, workload), backend in last.items():
        body = format_zfs_activity(backend.zfs) if backend.zfs is not None else []
        if backend.ceph is not None:
            body += format_ceph_activity(backend.ceph)
        if backend.nfs_server is not None:
            from ..backend.nfs_server import format_nfs_server_activity

            body += format_nfs_server_activity(backend.nfs_server)
        if backend.rgw is not None:
            from ..backend.rgw import format_rgw_activity

            body += format_rgw_activity(backend.rgw)
        if backend.bucket is not None:
            from ..backend.bucket import format_bucket_activity

            body += format_bucket_activity(backend.bucket)
        if body:
            lines.append(f"{workload}:")
            lines.extend(f"  {line}" for line in body)
    return lines


def format_pts_files(pts_files: Sequence[dict]) -> list[str]:
    """What a Phoronix Test Suite result file said of itself and of each system (the run
    meta ``pts`` that ``storbench import`` keeps): title, writer, and per system its
    hardware and software as PTS described them."""
    lines: list[str] = []
    for f in pts_files:
        lines.append(f"Phoronix Test Suite result {f.get('title') or '(untitled)'!r} ({f.get('test_client') or 'PTS'}, saved {f.get('last_modified') or '?'})")
        if f.get("description"):
            lines.append(f"  {f['description']}")
        for s in f.get("systems", []):
            when = f", run {s['timestamp']}" if s.get("timestamp") else ""
            client = f" with PTS {s['client_version']}" if s.get("client_version") else ""
            lines.append(f"  system {s['identifier']!r}{when}{client}")
            for part in ("hardware", "software"):
                fields = s.get(part) or {}
                if fields:
                    lines.append(f"    {part}: " + ", ".join(f"{k}: {v}" if k else v for k, v in fields.items()))
            for key in ("disk-scheduler", "disk-mount-options", "disk-details"):
                if (s.get("attributes") or {}).get(key):
                    lines.append(f"    {key}: {s['attributes'][key]}")
    return lines


def format_system_differences(systems: Sequence[tuple[str, dict]]) -> list[str]:
    """The hardware and software fields in which the compared PTS systems differ, one line
    each ("File-System: ext4 (a) / xfs (b)"); nothing when they are alike or fewer than two."""
    if len(systems) < 2:
        return []
    lines: list[str] = []
    for part in ("hardware", "software"):
        keys = list(dict.fromkeys(k for _, s in systems for k in (s.get(part) or {})))
        for key in keys:
            values = [(name, (s.get(part) or {}).get(key, "-")) for name, s in systems]
            if len({v for _, v in values}) > 1:
                lines.append(f"  {key or part}: " + " / ".join(f"{v} ({name})" for name, v in values))
    return (["the systems differ in:"] + lines) if lines else []
