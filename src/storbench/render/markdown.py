"""The Markdown report (pure): for wikis, forums and pull requests.

:func:`format_markdown_report` returns the text and the PNG charts it links to
(name -> bytes); the caller writes both.  The bar and percentile charts are drawn
with matplotlib's Agg canvas directly (no pyplot, no display, no global state); the
per-second chart by :mod:`storbench.render.png` (Pillow), which keeps every second.  Every text from the
records is escaped for Markdown, and ``<``/``>`` become entities, so a label cannot
open an HTML tag in renderers that allow inline HTML.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONMapping, JSONObject

from ..compare import Comparison, metric_label
from ..metrics import headlines_of
from ..record import ResultRecord
from . import chartdata
from .compare import LEADER_BEST_MEAN, LEADER_SIGNIFICANT
from .html import (
    configuration_facts,
    figure_cell,
    finding_digest,
    invalid_workloads,
    job_files,
    pool_activity,
)

if TYPE_CHECKING:
    from .png import Panel

_MD_SPECIAL = "\\`*_[]|#"


def md(text: object) -> str:
    """Inline text made literal: HTML entities for ``& < >``, backslashes before Markdown marks."""
    s = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for ch in _MD_SPECIAL:
        s = s.replace(ch, "\\" + ch)
    return " ".join(s.split())


def _fence(text: str) -> str:
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _mpl(text: object) -> str:
    """A label for matplotlib: ``$`` would start mathtext."""
    return str(text).replace("$", r"\$")


# --------------------------------------------------------------------------- charts


def _png(fig) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None}, bbox_inches="tight")
    return buf.getvalue()


def bar_chart_png(cmp: Comparison, workload: str) -> bytes | None:
    """IOPS, bandwidth and mean latency side by side: bars per configuration, error bars ± sd (the tables' spread)."""
    from matplotlib.figure import Figure

    panels = [(m, chartdata.rows_of(cmp, workload, m)) for m in chartdata.chart_metrics(cmp, workload)]
    panels = [(m, rows) for m, rows in panels if any(c is not None for r in rows for c in r.cells)]
    if not panels:
        return None
    n_bars = max(sum(c is not None for r in rows for c in r.cells) for _, rows in panels)
    from matplotlib.ticker import EngFormatter

    fig = Figure(figsize=(4.2 * len(panels), 1.4 + 0.42 * n_bars), layout="constrained")
    for pi, (metric, rows) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), pi + 1)
        div, unit = chartdata.scale_for(metric, max(c.summary.mean for r in rows for c in r.cells if c is not None))
        labels: list[str] = []
        labelled: set[str] = set()
        height = 0.8 / max(1, len(rows))
        for ci, config in enumerate(cmp.configs):
            ns = sorted({cell.summary.n for r in rows if (cell := r.cells[ci]) is not None})
            labels.append(f"{_mpl(config.name)} (n={'/'.join(map(str, ns)) or '-'})")
            for di, row in enumerate(rows):
                cell = row.cells[ci]
                if cell is None:
                    continue
                s = cell.summary
                y = ci + (di - (len(rows) - 1) / 2) * height
                first = row.direction not in labelled
                labelled.add(row.direction)
                ax.barh(y, s.mean / div, height=height, xerr=(s.stddev or 0.0) / div, color=chartdata.color(di),
                        capsize=3, label=row.direction if first else None)  # fmt: skip
        ax.set_yticks(range(len(cmp.configs)))
        ax.set_yticklabels(labels if pi == 0 else [""] * len(labels), fontsize=8)
        ax.invert_yaxis()
        better = "higher" if rows[0].higher_is_better else "lower"
        ax.set_title(f"{metric_label(metric)} ({better} is better)", fontsize=9)
        ax.set_xlabel(unit, fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.grid(axis="x", alpha=0.3)
        if len(rows) > 1 and pi == 0:
            fig.legend(loc="outside lower center", ncols=len(rows), fontsize=8)
    fig.suptitle(_mpl(workload), fontsize=10)
    return _png(fig)


def percentile_chart_png(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]], workload: str) -> bytes | None:
    """Latency percentile curves per configuration and direction ("nines" x axis, log y)."""
    from matplotlib.figure import Figure

    curves = []
    for ci, c in enumerate(cmp.configs):
        recs = [r for r in by_config.get(c.key, ()) if r.workload == workload]
        for direction, curve in chartdata.percentile_curves(recs).items():
            curves.append((ci, c, direction, curve))
    if not curves:
        return None
    div, unit = chartdata.scale_for("lat_mean_ns", max(p[1] for *_, cv in curves for p in cv.points))
    fig = Figure(figsize=(8, 3.6), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    styles = {"solid": "-", "dash": "--", "dot": ":", "dashdot": "-."}
    for ci, c, direction, curve in curves:
        ax.plot(
            [chartdata.nines(p[0]) for p in curve.points],
            [p[1] / div for p in curve.points],
            styles[chartdata.DASH.get(direction, "solid")],
            marker=".",
            color=chartdata.color(ci),
            label=f"{_mpl(c.name)} {direction} (n={curve.n})",
        )
    ax.set_yscale("log")
    ax.set_xticks([chartdata.nines(p) for p in chartdata.PCT_TICKS])
    ax.set_xticklabels([f"p{p:g}" for p in chartdata.PCT_TICKS], fontsize=8)
    ax.set_ylabel(unit, fontsize=8)
    ax.tick_params(axis="y", labelsize=8)
    ax.grid(alpha=0.3, which="both")
    sources = " / ".join(sorted({cv.source for *_, cv in curves}))
    ax.set_title(f"{_mpl(workload)}: latency percentiles ({sources} latency)", fontsize=9)
    ax.legend(fontsize=7)
    return _png(fig)


def series_chart_panels(
    cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]], workload: str
) -> tuple[str, tuple[Panel, ...]] | None:
    """What the per-second chart of ``workload`` draws (pure): its title and panels, IOPS and
    bandwidth per second of every repetition (fio's interval logs), each series the stored
    points scaled to the panel's unit; ``None`` where no record has a series."""
    from .png import Panel, Series

    drawn = {c.key for c in chartdata.charted_configs(cmp, workload)}
    groups: dict[tuple[int, str], int] = {}
    found: dict[str, list[tuple[tuple[int, str], str, Sequence[Sequence[float]]]]] = {}
    for kind in ("iops", "bw_bytes"):
        found[kind] = [((ci, direction), f"{c.name} {direction}", points)
                       for ci, c, _rep, direction, points in chartdata.per_second_series(cmp, by_config, workload, kind, drawn)]  # fmt: skip
    for rows in found.values():  # a colour per configuration and direction, in the order they are met
        for group, _name, _points in rows:
            groups.setdefault(group, len(groups))
    panels = []
    for kind, rows in found.items():
        if not rows:
            continue
        div, unit = chartdata.scale_for(kind, max(p[1] for *_, pts in rows for p in pts))
        named: set[tuple[int, str]] = set()
        series = []
        for group, name, pts in rows:
            series.append(Series(name, [p[0] for p in pts], [p[1] / div for p in pts], chartdata.color(groups[group]),
                                 in_legend=group not in named))  # fmt: skip
            named.add(group)
        title = "IOPS per second" if kind == "iops" else "bandwidth per second"
        panels.append(Panel(f"{title} (every run)", unit, tuple(series)))
    if not panels:
        return None
    shown = "" if len(drawn) == len(cmp.configs) else f" ({len(drawn)} of {len(cmp.configs)} configurations)"
    return f"{workload}: over time{shown}", tuple(panels)


def series_chart_png(cmp: Comparison, by_config: Mapping[str, Sequence[ResultRecord]], workload: str) -> bytes | None:
    """The per-second chart of :func:`series_chart_panels`, drawn by :mod:`storbench.render.png`:
    every second is drawn (each pixel column keeps its extremes)."""
    from .png import line_chart_png

    chart = series_chart_panels(cmp, by_config, workload)
    if chart is None:
        return None
    title, panels = chart
    return line_chart_png(panels, title=title, plot_height_px=150)


# --------------------------------------------------------------------------- text


def _cell_text(cell: JSONObject | None) -> str:
    if cell is None:
        return "-"
    text = cell["mean"] + (f" ± {cell['sd']}" if cell["sd"] else "")
    if cell["mark"]:
        text += " " + cell["mark"]
    vs = ", ".join(x for x in (cell["rel"], cell["verdict"]) if x)
    return md(text) + (f" — {md(vs)}" if vs else "")


def _workload_table(cmp: Comparison, workload: str) -> list[str]:
    columns = chartdata.table_metrics(cmp, workload)
    cols = ["configuration", "dir", "n", *(metric_label(m) for m in columns)]
    lines = ["| " + " | ".join(cols) + " |", "|---|---|--:|" + "--:|" * len(columns)]
    rows = chartdata.rows_of(cmp, workload)
    for direction in chartdata.TABLE_DIRECTIONS:
        metrics = {r.metric: r for r in rows if r.direction == direction}
        if not metrics:
            continue
        for i, c in enumerate(cmp.configs):
            cells = [figure_cell(cmp, metrics[m], i) if m in metrics else None for m in columns]
            if all(x is None for x in cells):
                continue
            n = max(x["n"] for x in cells if x)
            name = md(c.name) + (" (baseline)" if c.key == cmp.baseline else "")
            lines.append(f"| {name} | {direction} | {n} | " + " | ".join(_cell_text(x) for x in cells) + " |")
    return lines


def format_markdown_report(
    records: Sequence[ResultRecord],
    cmp: Comparison,
    chart_dir: Path | None,
    *,
    chart_stem: str = "report",
    title: str | None = None,
    generated_at: str | None = None,
    headlines: Mapping[str, str] | None = None,
    metas: Mapping[int, JSONMapping] | None = None,
) -> tuple[str, dict[str, bytes]]:
    """The report as Markdown, and its charts as ``{relative path: PNG bytes}``.

    ``chart_dir`` is where the charts go, relative to the Markdown file (``Path(".")``
    for beside it); the links and the returned names are ``chart_dir/<chart_stem>_chartN.png``
    in POSIX form.  ``None`` makes a text-only report (no charts, empty dict).
    """
    by_config = chartdata.records_by_config(cmp, records)
    heads = dict(headlines_of(records))
    heads.update(headlines or {})
    pngs: dict[str, bytes] = {}

    def chart(data: bytes | None, alt: str) -> list[str]:
        if data is None or chart_dir is None:
            return []
        name = PurePosixPath(*Path(chart_dir).parts, f"{chart_stem}_chart{len(pngs) + 1}.png").as_posix()
        pngs[name] = data
        return [f"![{md(alt)}]({name.replace(' ', '%20')})", ""]

    names = [c.name for c in cmp.configs]
    out = [f"# {md(title or 'storbench report: ' + ' vs '.join(names))}", ""]
    if generated_at:
        out += [f"_generated {md(generated_at)}_", ""]
    invalid = invalid_workloads(cmp, by_config)
    if invalid:
        out.append("> **⚠ Invalid results** — these numbers do not measure the target (see Findings):")
        for i in invalid:
            out.append(f"> - **{md(i['workload'])}** in {md(', '.join(i['configs']))}: {md(', '.join(i['checks']))}")
        out.append("")
    out += ["## Summary", ""]
    from .html import summary_html

    summary = summary_html(cmp, heads, records, by_config)
    g = summary["glance"]
    if g is not None:
        out += [f"**{md(g['title'])}**", "", "| " + " | ".join(md(c) for c in g["columns"]) + " |",
                "|---|" + "--:|" * (len(g["columns"]) - 1)]  # fmt: skip
        out += ["| " + " | ".join(md(c) for c in row) + " |" for row in g["rows"]]
        out += ["", f"_{md(g['note'])}_"] if g["note"] else []
    else:
        out += [f"- **{md(v)}**" for v in summary["verdicts"]] or ["No figures to compare."]
        if summary["variables"]:
            out += ["", "The configurations differ in (the study's variable): " + md("; ".join(summary["variables"]))]
        out += [f"- ⚠ not like for like: {md(u)}" for u in summary["unlike"]]
    base = cmp.config(cmp.baseline).name
    if len(cmp.configs) > 1:
        out += ["", f"_{md(cmp.test)} at α = {cmp.alpha:g} against the baseline {md(base)}; "
                "“within noise” means the runs cannot tell the configurations apart._"]  # fmt: skip
    out += [""]

    for workload in chartdata.workloads(cmp):
        out += [f"## {md(workload)}", ""]
        out += chart(bar_chart_png(cmp, workload), f"{workload}: IOPS, bandwidth and latency per configuration")
        out += _workload_table(cmp, workload)
        out += ["", f"mean ± sd over runs — the difference to the baseline and the verdict. "
                f"{LEADER_SIGNIFICANT} best and significantly ahead of all; {LEADER_BEST_MEAN} best mean only.", ""]  # fmt: skip
        out += chart(percentile_chart_png(cmp, by_config, workload), f"{workload}: latency percentiles")
        out += chart(series_chart_png(cmp, by_config, workload), f"{workload}: IOPS and bandwidth per second")
        mine = {c.key: [r for r in by_config.get(c.key, []) if r.workload == workload] for c in cmp.configs}
        for p in pool_activity(cmp, mine):
            extra = "".join(f"; {x}" for x in (p["arc"], p["compressratio"] and f"compressratio {p['compressratio']}") if x)
            extra += "".join(f"; **{md(s)}**" for s in p["state"])
            out += [f"ZFS pool activity of {md(p['config'])} (pool {md(p['pool'])}, {p['seconds']} s of zpool iostat -v{md(extra)}):", "",
                    "| vdev / device | read | write |", "|---|---:|---:|"]  # fmt: skip
            for r in p["rows"]:
                indent = {"pool": "", "vdev": "&nbsp;&nbsp;", "device": "&nbsp;&nbsp;&nbsp;&nbsp;"}[r["role"]]
                out.append(f"| {indent}{md(r['name'])} | {r['read']} | {r['write']} |")
            out.append("")

    from .html import curve_sections, steady_sections

    curves = curve_sections(metas or {}, None)
    if curves:
        out += ["## Curves", ""]
        for c in curves:
            out += [f"**{md(c['workload'])}** ({c['run']})", ""]
            for curve in c["curves"]:
                out += [f"- {md(line.strip())}" for line in curve.get("lines", [])]
            if c["iso"]:
                out.append(f"- {md(c['iso'])}")
            out.append("")
    steady = steady_sections(metas or {}, None)
    if steady:
        out += ["## Steady state", ""]
        out += [f"- **{md(s['workload'])}** (run {s['run']}): {md(s['reason'])} ({s['rounds']} rounds)" for s in steady]
        out.append("")
    out += ["## Findings", ""]
    findings = finding_digest(cmp, by_config)
    for f in findings:
        out.append(
            f"- **{md(f['severity'])}** `{f['check']}` — {md(f['workload'])} on {md(f['config'])} "
            f"({f['count']} of {f['of']} runs): {md(f['message'])} Fix: {md(f['fix'])}"
        )
    if not findings:
        out.append("No findings: none of storbench's checks flagged these results.")
    out.append("")

    facts = configuration_facts(cmp, by_config)
    out += ["## Configurations", "", "| | " + " | ".join(md(n) for n in facts["names"]) + " |", "|---|" + "---|" * len(facts["names"])]
    for row in facts["rows"]:
        label = f"**{md(row['label'])}** ≠" if row["differs"] else md(row["label"])
        out.append(f"| {label} | " + " | ".join(md(v) for v in row["cells"]) + " |")
    out.append("")
    if facts["differences"]:
        out += [f"Settings that differ (compared with {md(facts['reference'])}):", ""]
        out += ["| setting | " + " | ".join(md(n) for n in facts["names"]) + " |", "|---|" + "---|" * len(facts["names"])]
        for d in facts["differences"]:
            cells = [f"**{md(c['text'])}**" if c["differs"] else md(c["text"]) for c in d["cells"]]
            out.append(f"| `{d['field']}` | " + " | ".join(cells) + " |")
        out.append("")
    for name, lines in zip(facts["names"], facts["storage"]):
        if lines:
            out += [f"Storage of {md(name)}:", "", *(f"- {md(line)}" for line in lines), ""]

    out += ["## fio job files", ""]
    for job in job_files(cmp, by_config):
        for t in job["texts"]:
            fence = _fence(t["text"])
            out += [f"**{md(job['workload'])}** ({md(', '.join(t['configs']))}; {md(', '.join(t['fio']) or 'fio version unknown')}):", "",
                    f"{fence}ini", t["text"].rstrip("\n"), fence, ""]  # fmt: skip
    return "\n".join(out).rstrip("\n") + "\n", pngs
