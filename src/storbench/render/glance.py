"""Pure: a single run at a glance, in its preset's own layout.

* ``quick`` (CrystalDiskMark / KDiskMark's standard preset): the familiar grid, one row per
  test (SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1), read and write side by side, each in
  MB/s (decimal, as the preset prints), IOPS and mean latency;
* ``pts-fio`` (the Phoronix Test Suite pts/fio matrix): block size x pattern, MB/s and IOPS;
* ``ssd-journal``: the six journal tests with IOPS, mean and p99 latency;
* anything else: one row per workload with its headline figure (mean ± sd), n and p99.

A layout is chosen by the workload names a run has (so an import or a subset of the suite
gets it too): when every workload of the run belongs to a preset, that preset's layout.  The
figures are those of :func:`storbench.metrics.direction_figures`, averaged over repetitions;
a cell a run did not measure is ``-``.  :func:`format_glance` gives the rich table, the
Markdown and HTML reports render the same :class:`Glance`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..metrics import MEASURE_DIRECTION, P99_MEASURE, direction_figures, headline_metric
from ..record import ResultRecord
from ..stats.core import summarize
from ..units import fmt_bw, fmt_iops, fmt_measure, fmt_ns, formatter

__all__ = ["INVALID_MARK", "Glance", "format_glance", "glance", "host_count", "particular_findings", "target_line"]


@dataclass(frozen=True)
class Glance:
    title: str  # "CrystalDiskMark grid (quick)"
    columns: tuple[str, ...]  # the first one names the rows
    rows: tuple[tuple[str, ...], ...]
    note: str = ""  # how to read it


def _fmt_mb(bw_bytes: float | None) -> str:
    return "-" if bw_bytes is None else f"{bw_bytes / 1e6:,.1f}" if bw_bytes < 1e8 else f"{bw_bytes / 1e6:,.0f}"


def _mean(values: list[float | None]) -> float | None:
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]


def _figure(groups: dict[str, list[ResultRecord]], workload: str, direction: str, metric: str) -> float | None:
    recs = groups.get(workload)
    if not recs:
        return None
    return _mean([direction_figures(r.fio).get(direction, {}).get(metric) for r in recs])


def _groups(records: Sequence[ResultRecord]) -> dict[str, list[ResultRecord]]:
    """Each workload's repetitions; of a multi-host run only the aggregate (host ``all``): the
    hosts' own results are rows of their own in show, never averaged with their sum."""
    aggregated = {r.workload for r in records if r.host == "all"}
    out: dict[str, list[ResultRecord]] = {}
    for r in records:
        if r.workload in aggregated and r.host != "all":
            continue
        out.setdefault(r.workload, []).append(r)
    return out


def host_count(records: Sequence[ResultRecord]) -> int:
    """How many hosts a multi-host run's workloads ran on (0 for a run on this machine)."""
    return len({r.host for r in records if r.host not in (None, "all")})


#: appended to every figure of a workload with an ``invalid`` finding (its numbers do not
#: measure the target): the mark stays beside the figure wherever it appears
INVALID_MARK = " ✗"


def _invalid(groups: dict[str, list[ResultRecord]]) -> set[str]:
    return {w for w, recs in groups.items() if any(f.severity == "invalid" for f in recs[-1].findings)}


def _mark(text: str, workload: str, invalid: set[str]) -> str:
    return text + INVALID_MARK if workload in invalid and text != "-" else text


_CDM_ROWS = (("SEQ1M Q8T1", "seq1m-q8t1"), ("SEQ1M Q1T1", "seq1m-q1t1"), ("RND4K Q32T1", "rnd4k-q32t1"), ("RND4K Q1T1", "rnd4k-q1t1"))
_PTS = re.compile(r"(seq|rand)-(read|write)-(\d+[kmg])")
_JOURNAL = ("journal-sync", "journal-fsync", "parallel-sync", "parallel-fsync", "non-txn", "linear-write")


def _cdm(groups: dict[str, list[ResultRecord]]) -> Glance:
    rows = []
    for label, stem in _CDM_ROWS:
        cells = [label]
        for d in ("read", "write"):
            w = f"{stem}-{d}"
            bad = _invalid(groups)
            cells += [_mark(_fmt_mb(_figure(groups, w, d, "bw_bytes")), w, bad), _mark(fmt_iops(_figure(groups, w, d, "iops")), w, bad),
                      _mark(fmt_ns(_figure(groups, w, d, "lat_mean_ns")), w, bad) if w in groups else "-"]  # fmt: skip
        rows.append(tuple(cells))
    return Glance(
        "CrystalDiskMark grid (quick)",
        ("test", "read MB/s", "read IOPS", "read lat", "write MB/s", "write IOPS", "write lat"),
        tuple(rows),
        "MB/s = 10^6 bytes/s as CrystalDiskMark prints it; means over the repetitions",
    )


def _pts(groups: dict[str, list[ResultRecord]]) -> Glance:
    sizes: list[str] = []
    for w in groups:
        m = _PTS.fullmatch(w)
        if m and m.group(3) not in sizes:
            sizes.append(m.group(3))
    from ..units import parse_size

    sizes.sort(key=parse_size)
    patterns = (("seq", "read"), ("seq", "write"), ("rand", "read"), ("rand", "write"))
    rows = []
    for bs in sizes:
        cells = [bs]
        for kind, d in patterns:
            w = f"{kind}-{d}-{bs}"
            bw, iops = _figure(groups, w, d, "bw_bytes"), _figure(groups, w, d, "iops")
            cells.append("-" if bw is None else _mark(f"{_fmt_mb(bw)} MB/s, {fmt_iops(iops)} IOPS", w, _invalid(groups)))
        rows.append(tuple(cells))
    return Glance(
        "pts/fio matrix (pts-fio)",
        ("block size", "sequential read", "sequential write", "random read", "random write"),
        tuple(rows),
        "MB/s = 10^6 bytes/s; means over the repetitions",
    )


def _journal(groups: dict[str, list[ResultRecord]]) -> Glance:
    rows = []
    for w in _JOURNAL:
        if w not in groups:
            continue
        iops = _figure(groups, w, "write", "iops")
        rows.append((_mark(w, w, _invalid(groups)), fmt_iops(iops), fmt_bw(_figure(groups, w, "write", "bw_bytes")),
                     fmt_ns(_figure(groups, w, "write", "lat_mean_ns")), fmt_ns(_figure(groups, w, "write", "clat_p99_ns"))))  # fmt: skip
    return Glance("SSD journal tests (ssd-journal)", ("test", "IOPS", "bandwidth", "mean lat", "p99 lat"), tuple(rows),
                  "write figures; means over the repetitions")  # fmt: skip


def _generic(groups: dict[str, list[ResultRecord]], headlines: dict[str, str]) -> Glance:
    rows = []
    for w, recs in groups.items():
        figs = [direction_figures(r.fio) for r in recs]
        directions = [d for d in figs[0] if all(d in f for f in figs)] if figs else []
        metric = headline_metric(headlines.get(w, "iops"))
        for d in directions:
            m = metric if d != "result" else next(iter(figs[0][d]))
            values = [f[d].get(m) for f in figs]
            if d != MEASURE_DIRECTION:
                p99 = fmt_ns(_mean([f[d].get("clat_p99_ns") for f in figs]))
            else:  # an application load's own p99 where it measured one (pgbench with a per-transaction log)
                load_p99 = _mean([f[d].get(P99_MEASURE) for f in figs])
                p99 = "-" if load_p99 is None else f"{fmt_measure(load_p99)} ms"
            if any(v is None for v in values):
                rows.append((w, d, "-", str(len(recs)), p99))
                continue
            fmt = formatter(m)
            s = summarize([float(v) for v in values])  # type: ignore[arg-type]
            text = fmt(s.mean) + (f" ± {fmt(s.stddev)}" if s.stddev is not None else "")
            label = {"iops": "IOPS", "bw_bytes": "", "lat_mean_ns": "mean lat"}.get(m, m)
            rows.append((w, d, _mark(f"{text} {label}".strip(), w, _invalid(groups)), str(s.n), p99))
    return Glance("headline figures", ("workload", "dir", "headline (mean ± sd)", "n", "p99 lat"), tuple(rows))


def glance(records: Sequence[ResultRecord], headlines: dict[str, str] | None = None) -> Glance | None:
    """The run at a glance (see the module docstring), or None for no records."""
    groups = _groups(records)
    if not groups:
        return None
    names = set(groups)
    cdm = {f"{stem}-{d}" for _, stem in _CDM_ROWS for d in ("read", "write")}
    if names <= cdm:
        shown = _cdm(groups)
    elif all(_PTS.fullmatch(n) for n in names):
        shown = _pts(groups)
    elif names <= set(_JOURNAL):
        shown = _journal(groups)
    else:
        shown = _generic(groups, headlines or {})
    hosts = host_count(records)
    if hosts:  # a multi-host run: the grid is the aggregate's, said so
        said = f"all {hosts} hosts together (fio's aggregate); each host's own figures are in show's table"
        shown = replace(shown, title=f"{shown.title}, {hosts} hosts", note=f"{shown.note}; {said}" if shown.note else said)
    return shown


def target_line(records: Sequence[ResultRecord]) -> str | None:
    """``"target: /mnt/x"`` when every record has the same target (named once, above the table)."""
    targets = {r.target for r in records}
    if len(targets) == 1 and None not in targets:
        return f"target: {next(iter(targets))}"
    return None


def format_glance(g: Glance):
    """The rich table of a Glance."""
    from rich import box
    from rich.table import Table

    table = Table(title=g.title, caption=g.note or None, caption_justify="left", header_style="bold", box=box.SIMPLE_HEAD)
    for i, col in enumerate(g.columns):
        table.add_column(col, justify="left" if i == 0 else "right", overflow="fold")
    for row in g.rows:
        table.add_row(*(f"[red]{c}[/red]" if c.endswith(INVALID_MARK) else c.replace("[", "\\[") for c in row))
    return table


def particular_findings(records: Sequence[ResultRecord], skip: set[tuple[str, str]]) -> list[str]:
    """The findings of each workload that are not said for the whole run (``skip``), worst
    first, one line each with its fix: what the glance table cannot hold."""
    from ..model import SEVERITIES

    groups = _groups(records)
    found = [(f, w) for w, recs in groups.items() for f in recs[-1].findings
             if f.severity != "info" and (f.check, f.severity) not in skip]  # fmt: skip
    found.sort(key=lambda fw: -SEVERITIES.index(fw[0].severity))
    lines = []
    by_check: dict[tuple, list] = {}
    for i, (f, w) in enumerate(found):  # an invalid finding stays on its own line, beside its workload
        by_check.setdefault((f.check, f.severity) if f.severity != "invalid" else (f.check, f.severity, i), []).append((f, w))
    for (check, severity, *_), items in by_check.items():  # one check on several workloads: its fix once
        mark = INVALID_MARK.strip() + " " if severity == "invalid" else ""
        if len(items) == 1:
            lines.append(f"{mark}{severity} {items[0][1]} [{check}] {items[0][0].message}")
        else:
            lines.append(f"{mark}{severity} [{check}] in {len(items)} workloads:")
            lines.extend(f"  {w}: {f.message}" for f, w in items)
        lines.extend(f"  fix: {fix}" for fix in dict.fromkeys(f.fix for f, _ in items))
    return lines
